# T.StridedTensor: a parameter with explicit strides (here a view of every other row).
# tilescale-test: -k strided_copy -D M=128 -D N=64
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def strided_copy(M, N, dtype="float32"):

    @T.prim_func
    def main(A: T.StridedTensor((M, N), (2 * N, 1), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(M // 32, threads=128) as bx:
            for i, j in T.Parallel(32, N):
                B[bx * 32 + i, j] = A[bx * 32 + i, j]

    return main
