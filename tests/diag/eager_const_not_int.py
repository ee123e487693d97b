# An eager T.const dimension bound to a float.
# tilescale-test: -k add -D M=256 -D N=1.5
import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, block_M=64, dtype=T.float16):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        for i, j in T.Parallel(block_M, N):
            C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]
    return C
