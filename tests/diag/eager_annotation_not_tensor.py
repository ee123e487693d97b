# An eager parameter annotated with something other than T.Tensor.
# tilescale-test: -k add -D M=256 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, block_M=64, dtype=T.float16):
    M, N = T.const("M, N")
    A: (M, N)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        for i, j in T.Parallel(block_M, N):
            C[bx * block_M + i, j] = A[bx * block_M + i, j] * 2
    return C
