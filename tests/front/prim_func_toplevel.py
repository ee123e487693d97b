# A top-level @T.prim_func reading module-level constants (overridable with -D).
# tilescale-test: -k transpose_tile -D M=256
import tilelang.language as T

M = 128
N = 64
BLOCK = 32
dtype = "float32"


@T.prim_func
def transpose_tile(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
    with T.Kernel(N // BLOCK, M // BLOCK, threads=128) as (bx, by):
        tile = T.alloc_shared((BLOCK, BLOCK), dtype)
        T.copy(A[by * BLOCK, bx * BLOCK], tile)
        for i, j in T.Parallel(BLOCK, BLOCK):
            B[bx * BLOCK + i, by * BLOCK + j] = tile[j, i]
