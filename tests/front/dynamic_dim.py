# T.dynamic: a runtime dimension, appended to the kernel arguments and bound at launch.
# tilescale-test: -k rows_scale -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def rows_scale(N, block_M=64, dtype="float16"):
    M = T.dynamic("M")

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                if bx * block_M + i < M:
                    B[bx * block_M + i, j] = A[bx * block_M + i, j] * 3

    return main
