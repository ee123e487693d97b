# tilescale-test: -k masked -D GX=4 -D BM=16
import tilelang
import tilelang.language as T


@tilelang.jit
def masked(GX, BM):
    @T.prim_func
    def main(out: T.Tensor((GX * BM, GX * BM), "float32"), lim: T.Tensor((GX,), "int32")):
        with T.Kernel(GX, threads=64) as bx:
            acc = T.alloc_fragment((BM, BM), "float32")
            for k in T.serial(T.min(bx + 1, GX)):
                for i, j in T.Parallel(BM, BM):
                    q = bx * BM + i
                    acc[i, j] = T.if_then_else(q >= k * BM + j - 2 * i % 3, 1.0, -T.infinity("float32"))
                for i, j in T.Parallel(BM, BM):
                    acc[i, j] = T.if_then_else(k * BM + j < lim[bx], acc[i, j], 0.0)
                T.copy(acc, out[bx * BM : (bx + 1) * BM, k * BM : (k + 1) * BM])

    return main
