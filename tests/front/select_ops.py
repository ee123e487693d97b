# Selects: T.if_then_else, `a if c else b` on IR, `and`/`or`/`not` on IR, T.clamp, T.max/min,
# chained comparisons.
# tilescale-test: -k selects -D N=512
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def selects(N, lo=-1.0, hi=1.0):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N, 4), "float32")):
        with T.Kernel(N // 128, threads=128) as bx:
            for i in T.Parallel(128):
                x = A[bx * 128 + i]
                B[bx * 128 + i, 0] = T.if_then_else(x > 0, x, 0)
                B[bx * 128 + i, 1] = x if i < 64 and not x < 0 else -x
                B[bx * 128 + i, 2] = T.clamp(x, lo, hi)
                B[bx * 128 + i, 3] = T.max(T.min(x, hi), lo) if 0 <= i < 100 or i == 127 else 0.0

    return main
