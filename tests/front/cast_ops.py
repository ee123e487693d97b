# Conversions: T.cast, T.Cast, .astype, dtype objects as constructors, T.reinterpret.
# tilescale-test: -k casts -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def casts(N):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), H: T.Tensor((N,), "float16"), Bits: T.Tensor((N,), "int32")):
        with T.Kernel(N // 128, threads=128) as bx:
            for i in T.Parallel(128):
                x = A[bx * 128 + i]
                H[bx * 128 + i] = T.cast(x, "float16") + T.Cast("float16", 1) + x.astype(T.float16) + T.float16(0.5)
                Bits[bx * 128 + i] = T.reinterpret(x, "int32") + T.int32(7) + T.cast(i, T.int32)

    return main
