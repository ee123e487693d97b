# T.gemm on an sm_75 target: the tensor-core path uses sm_80's mma.sync shapes (ptxas refused
# them before: ".tf32 requires .target sm_80 or higher"), so a float32 GEMM there is computed
# with FMA (front/gemm_fma.c), with A in shared memory and with A in registers, where layout
# inference keeps each thread's rows of A for the elements of C it computes.
# tilescale-test: -k mm --arch sm_75
# tilescale-dump: lower_tile_ops
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
            a_r = T.alloc_fragment((64, 32), "float32")
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, c, clear_accum=True)
            T.copy(a, a_r)
            T.gemm(a_r, b, c)
            T.copy(c, C)

    return main
