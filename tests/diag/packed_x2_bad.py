# TileLang's packed x2 arithmetic misused: operands of two dtypes (float16 and bfloat16, which
# TileLang refuses too), and a packed value stored through an index of another lane count.
# tilescale-test: -k packed_bad --arch sm_90a
import tilelang.language as T


def packed_bad(M=128):

    @T.prim_func
    def main(A: T.Tensor((M * 2,), "float16"), B: T.Tensor((M * 2,), "bfloat16"), C: T.Tensor((M * 4,), "float16")):
        with T.Kernel(1, threads=M):
            tid = T.get_thread_binding()
            idx = T.Ramp(tid * 2, 1, 2)
            C[idx] = T.add2(A[idx], B[idx])
            wide = T.Ramp(tid * 4, 1, 4)
            C[wide] = T.mul2(A[idx], A[idx])

    return main
