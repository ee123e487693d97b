# Eager style: T.const dims bound by -D, annotation-declared tensors, T.empty output, return.
# tilescale-test: -k add -D M=512 -D N=256 -D block_M=64 -D block_N=64
import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, block_M, block_N, dtype=T.float16):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        for i, j in T.Parallel(block_M, block_N):
            C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + B[by * block_M + i, bx * block_N + j]
    return C
