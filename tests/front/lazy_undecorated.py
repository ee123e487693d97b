# An undecorated factory (called by a host-side jit wrapper elsewhere) with keyword defaults.
# tilescale-test: -k make_negate -D N=1000 -D dtype=T.bfloat16
import tilelang.language as T


def make_negate(N, dtype="float16", block=128, threads=128):

    @T.prim_func
    def negate(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    B[bx * block + i] = -A[bx * block + i]

    return negate
