# A runtime clear_accum=(k == 0) makes two GEMM instances (an IF); T.wgmma_gemm's checks still
# see both: no wgmma on sm_80, reported once per instance.
# tilescale-test: -k bad --arch sm_80
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a)
        for k in T.serial(2):
            T.wgmma_gemm(a, a, c, clear_accum=(k == 0))
            T.wait_wgmma(0)
        T.copy(c, C)
