# The math functions beyond exp/log/sin (T.sinh ... T.nearbyint, the two-operand ones) and the
# fast-math forms (T.__exp ...: CUDA's __expf for float32, the plain function for other types;
# T.fast_rcp: rcp.approx),
# one row of `out` each.  regress_gpu.py runs it in float32 and float16 against torch.
# tilescale-test: -k math_functions -D N=256
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def math_functions(N, dtype="float32"):

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), Out: T.Tensor((23, N), dtype)):
        with T.Kernel(N // 128, threads=128) as bx:
            i = bx * 128 + T.get_thread_binding(0)
            a = X[i]
            b = Y[i]
            Out[0, i] = T.sinh(a)
            Out[1, i] = T.cosh(a)
            Out[2, i] = T.asin(a)
            Out[3, i] = T.acos(a)
            Out[4, i] = T.atan(a)
            Out[5, i] = T.asinh(a)
            Out[6, i] = T.acosh(a + 1.0)
            Out[7, i] = T.atanh(a)
            Out[8, i] = T.atan2(a, b)
            Out[9, i] = T.hypot(a, b)
            Out[10, i] = T.copysign(a, b)
            Out[11, i] = T.ldexp(a, 3)
            Out[12, i] = T.nearbyint(a * 8.0)
            Out[13, i] = T.nextafter(a, b)
            Out[14, i] = T.__exp(a)
            Out[15, i] = T.__exp10(a)
            Out[16, i] = T.__log(a)
            Out[17, i] = T.__log2(a)
            Out[18, i] = T.__log10(a)
            Out[19, i] = T.__tan(a)
            Out[20, i] = T.__cos(a)
            Out[21, i] = T.__sin(a)
            Out[22, i] = T.fast_rcp(a + 0.5)

    return main
