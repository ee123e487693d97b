# A fragment cleared by all 256 threads but accumulated by warpgroup 0 alone: its registers
# would belong to threads that do not run the GEMM.
# tilescale-test: -k frag_ws --arch sm_90a
import tilelang.language as T


def frag_ws():
    @T.prim_func
    def main(A: T.Tensor((128, 64), "float16"), B: T.Tensor((64, 128), "float16"), C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_l = T.alloc_fragment((128, 128), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            with T.ws(0):
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C)

    return main
