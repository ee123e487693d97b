# Lazy factory with two outputs given as a list mixing positive and negative indices.
# tilescale-test: -k split_kernel -D M=256 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, -1])
def split_kernel(M, N, block_M=32, dtype="float32"):

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Pos: T.Tensor((M, N), dtype), Neg: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                v = X[bx * block_M + i, j]
                Pos[bx * block_M + i, j] = T.max(v, 0)
                Neg[bx * block_M + i, j] = T.min(v, 0)

    return main
