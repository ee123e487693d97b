# A GEMM under `if tx >= 64 and tx < 192:` is planned over those 128 threads as wgmma, which
# whole warpgroups issue (warps 4w .. 4w+3): threads [64, 192) straddle two, so it is refused.
# tilescale-test: -k unaligned --arch sm_90a
import tilelang
import tilelang.language as T


def unaligned():
    @T.prim_func
    def main(A: T.Tensor((128, 64), "float16"), B: T.Tensor((64, 128), "float16"), C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_l = T.alloc_fragment((128, 128), "float32")
            tx = T.get_thread_binding()
            if tx >= 64 and tx < 192:
                T.copy(A, A_s)
                T.copy(B, B_s)
                T.gemm(A_s, B_s, C_l, clear_accum=True)
                T.copy(C_l, C)

    return main
