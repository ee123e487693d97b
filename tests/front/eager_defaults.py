# Eager style where a keyword default is overridden by -D and a dtype comes from a string.
# tilescale-test: -k axpy -D N=4096 -D alpha=0.5 -D dtype=float32
import tilelang
import tilelang.language as T


@tilelang.jit
def axpy(X, Y, alpha=2.0, block=512, dtype="float16"):
    N = T.const("N")
    X: T.Tensor((N,), dtype)
    Y: T.Tensor((N,), dtype)
    Z = T.empty((N,), dtype)
    with T.Kernel(T.ceildiv(N, block), threads=256) as bx:
        for i in T.Parallel(block):
            Z[bx * block + i] = X[bx * block + i] * alpha + Y[bx * block + i]
    return Z
