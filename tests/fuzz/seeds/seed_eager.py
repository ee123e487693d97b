# tilescale-test: -k add -D M=256 -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, block_M: int = 64, block_N: int = 64):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B: T.Tensor((M, N), T.float32)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        for i, j in T.Parallel(block_M, block_N):
            y = by * block_M + i
            x = bx * block_N + j
            if y < M and x < N:
                C[y, x] = T.max(A[y, x], B[y, x]) + T.sqrt(T.abs(A[y, x]))
    return C
