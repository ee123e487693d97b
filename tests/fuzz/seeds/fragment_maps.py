import tilelang
import tilelang.language as T


def partial_reduce(block_threads=128, fragment_threads=64, rows=4, width=512, vector_size=8):

    def x_layout(i, j):
        return j // vector_size, i * vector_size + j % vector_size

    @T.prim_func
    def fragment_reduce(x: T.Tensor((rows, width), "float32"), out: T.Tensor((rows, width), "float32")):
        with T.Kernel(1, threads=block_threads):
            x_frag = T.alloc_fragment((rows, width), "float32")
            sum_frag = T.alloc_fragment((rows,), "float32")
            T.annotate_layout({
                x_frag: T.Fragment(x_frag.shape, forward_fn=x_layout),
                sum_frag: T.Fragment(sum_frag.shape, forward_fn=lambda i, rep: (rep, i), replicate=fragment_threads),
            })
            for i, j in T.Parallel(rows, width):
                x_frag[i, j] = x[i, j]
            T.reduce_sum(x_frag, sum_frag, dim=1)
            for i, j in T.Parallel(rows, width):
                out[i, j] = x_frag[i, j] / sum_frag[i]

    return fragment_reduce


def two_group(block_threads=128, group_stride=64):

    def x_layout(i, j):
        return i * group_stride + j // 8, j % 8

    @T.prim_func
    def two_group_reduce(x: T.Tensor((2, 512), "float32"), out: T.Tensor((2,), "float32")):
        with T.Kernel(1, threads=block_threads):
            x_frag = T.alloc_fragment((2, 512), "float32")
            out_frag = T.alloc_fragment((2,), "float32")
            T.annotate_layout({
                x_frag: T.Fragment(x_frag.shape, forward_fn=x_layout),
                out_frag: T.Fragment(out_frag.shape, forward_fn=lambda i, rep: (i * group_stride + rep, 0), replicate=64),
            })
            for i, j in T.Parallel(2, 512):
                x_frag[i, j] = x[i, j]
            T.reduce_sum(x_frag, out_frag, dim=1)
            for i in T.Parallel(2):
                out[i] = out_frag[i]

    return two_group_reduce
