# Fuzz seed: the constructs session 26 taught the compiler (T.empty with its dims one by one,
# a T.Persistent domain of three dimensions, T.infinity of float8_e5m2, bfloat16 T.ieee_fmaf,
# a factory argument that is a dict, a tensor parameter the kernel never touches).
# tilescale-test: -D M=64 -D N=32
import tilelang
import tilelang.language as T


@tilelang.jit
def features(A, Unused, M, N, cfg={"scale": 2.0}):
    A: T.Tensor((M, N), "bfloat16")
    Unused: T.Tensor((N,), "float32")
    B = T.empty(M, N, dtype="bfloat16")
    C = T.empty(4, 8, 2, T.float8_e5m2)
    with T.Kernel(8, threads=32) as bx:
        for i, j, k in T.Persistent([4, 8, 2], 8, bx):
            C[i, j, k] = T.infinity(T.float8_e5m2)
        for i, j in T.Parallel(M, N):
            B[i, j] = T.ieee_fmaf(A[i, j], A[i, j], T.cast(cfg["scale"], "bfloat16"), "rn")
    return B, C
