# T.Fragment misuse, each reported at its T.annotate_layout: on a shared buffer, made for
# another shape, on threads from an offset (TileLang's tx in [32, 96) reduce test), naming
# threads past the block, with gaps between its threads; T.Fragment without a map; and a
# T.Parallel loop_layout that is no T.Fragment or made for another shape.
# tilescale-test: -k fragment_bad --arch sm_90a
import tilelang.language as T


def fragment_bad():

    @T.prim_func
    def main(x: T.Tensor((4, 64), "float32")):
        with T.Kernel(1, threads=64):
            s = T.alloc_shared((4, 64), "float32")
            f = T.alloc_fragment((4, 64), "float32")
            g = T.alloc_fragment((64,), "float32")
            T.annotate_layout({s: T.Fragment((4, 64), forward_fn=lambda i, j: (j, i))})
            T.annotate_layout({f: T.Fragment((4, 32), forward_fn=lambda i, j: (j, i))})
            T.annotate_layout({f: T.Fragment((4, 64), forward_fn=lambda i, j: (32 + j // 2, i * 2 + j % 2))})
            T.annotate_layout({g: T.Fragment((64,), forward_thread_fn=lambda j: j * 2)})
            T.annotate_layout({g: T.Fragment((64,), forward_thread_fn=lambda j: j // 2 * 2)})
            T.Fragment((64,))
            for j in T.Parallel(64, loop_layout="rows"):
                g[j] = 0.0
            for j in T.Parallel(64, loop_layout=T.Fragment((32,), forward_thread_fn=lambda j: j)):
                g[j] = 1.0
            T.copy(x, f)

    return main
