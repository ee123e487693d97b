# Element-wise math intrinsics; integer operands are converted to float first.
# tilescale-test: -k mathk -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def mathk(N, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N, 8), dtype)):
        with T.Kernel(N // 128, threads=128) as bx:
            for i in T.Parallel(128):
                x = A[bx * 128 + i]
                B[bx * 128 + i, 0] = T.exp(x) + T.exp2(x) + T.exp10(x) + T.log(x) + T.log2(x) + T.log10(x)
                B[bx * 128 + i, 1] = T.log1p(x) + T.sqrt(x) + T.rsqrt(x) + T.sigmoid(x) + T.erf(x)
                B[bx * 128 + i, 2] = T.sin(x) + T.cos(x) + T.tan(x) + T.tanh(x)
                B[bx * 128 + i, 3] = T.pow(x, 2.0) + T.fmod(x, 3.0) + x ** 2
                B[bx * 128 + i, 4] = T.floor(x) + T.ceil(x) + T.round(x) + T.trunc(x) + T.abs(x)
                B[bx * 128 + i, 5] = T.if_then_else(T.isnan(x) or T.isinf(x), 0.0, x)
                B[bx * 128 + i, 6] = T.if_then_else(T.isfinite(x), x, 1.0)
                B[bx * 128 + i, 7] = T.sqrt(i)

    return main
