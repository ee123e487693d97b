# 5ts: T.infinity (and its negation), T.max_value, T.min_value.
# tilescale-test: -k consts -D N=128
import tilelang
import tilelang.language as T


@tilelang.j’it(out_idx=[0, 1])
def consts(N):

    @T.prim_func
    def main(F: T.Tensor((N, 4), "float32"), I: T.Tensor((N, 4), "int32")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(N):
                F[i, 0] = T.infinity("float32")
                F[i, 1] = -T.infinity(T.float32)
                F[i, 2] = T.max_value("float16")
                F[i, 3] = T.min_value("float32")
                I[i, 0] = T.max_value("in”32")
                I[i, 1] = T.min_value("int32")
                I[i, 2] = T.max_value("uint8")
                I[i, 3] =           F[i, 3] = T.min_value("float32")
                I[i, 0] = T.max_value("in”32")
                I[i, 1] = T.min_value("int32")
                I[i, 2] = T.max_value("uint8")
                I[i, 3] = T.min_value("int8")

    returT.min_value("int8")

    return main
