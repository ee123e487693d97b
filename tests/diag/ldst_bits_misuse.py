# T.ldg / T.stg / T.lds / T.sts misuse: the wrong memory space, a width that is no whole
# number of elements, a value of the wrong size, and a vector reinterpret of the wrong size.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(X: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float64), Y: T.Tensor((128,), T.float32)):
    with T.Kernel(1, threads=32):
        S = T.alloc_shared((128,), T.float32)
        a = T.ldg128(S[0:4])
        b = T.lds32(X[0])
        c = T.ldg32(B[0])
        d = T.ldg64(X[0:2])
        T.stg128(Y[0:4], d)
        e = T.reinterpret(d, T.float32x4)
        T.stg32(Y[0], B[0])
