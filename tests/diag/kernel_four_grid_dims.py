# T.Kernel takes at most three grid dimensions.
# tilescale-test: -k rowwise -D M=256 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowwise(M, N, block_M=32, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), 1, 1, 1, threads=128) as (bx, by, bz, bw):
            for i, j in T.Parallel(block_M, N):
                B[bx * block_M + i, j] = A[bx * block_M + i, j]

    return main
