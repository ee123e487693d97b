# T.gemm's tensor-core path uses sm_80's mma.sync shapes: on an sm_75 target a GEMM with A in
# registers is refused at the T.gemm line (it was a ptxas failure: ".tf32 requires .target sm_80
# or higher"); with A and B in shared memory it is computed with FMA (front/gemm_fma.c).
# tilescale-test: -k mm --arch sm_75
import tilelang
import tilelang.language as T


@tilelang.jit
def mm():
    @T.prim_func
    def main(A: T.Tensor((64, 32), "float32"), B: T.Tensor((32, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((64, 32), "float32")
            b = T.alloc_shared((32, 64), "float32")
            c = T.alloc_fragment((64, 64), "float32")
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, c, clear_accum=True)  # FMA
            a_r = T.alloc_fragment((64, 32), "float32")
            T.copy(a, a_r)
            T.gemm(a_r, b, c)
            T.copy(c, C)

    return main
