import tilelang
import tilelang.language as T


def loop_layout_copy(M=128, N=32):

    def loop_layout_fn(i, j):
        elems = i * 32 + j
        return (elems // 4) % 128, elems % 4 + (elems // 512) * 4

    loop_layout = T.Fragment((M, N), forward_fn=loop_layout_fn)

    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128):
            for i, j in T.Parallel(M, N, loop_layout=loop_layout):
                B[i, j] = A[i, j]

    return main
