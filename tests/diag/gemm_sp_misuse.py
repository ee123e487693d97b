# T.gemm_sp misuse, each reported at its call: an int8 sparse GEMM with
# B stored [K, N] (8-bit operands need [N, K]), a metadata tile of the wrong width (E must be [M, K/e_factor]: 16 int16
# columns for K = 256), a float metadata tile, and a swizzled one (gemm_sp.cuh reads E
# row-major); gemm_sp_transpose.py: transposed tiles of the wrong shape.
# tilescale-test: -k gemm_sp_bad --arch sm_90a
import tilelang.language as T
from tilelang.layout import make_swizzled_layout


def gemm_sp_bad(M=64, N=64, K=256):

    @T.prim_func
    def main(A: T.Tensor((M, K // 2), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K // 2), T.float16)
            A8 = T.alloc_shared((M, K // 2), T.int8)
            B8 = T.alloc_shared((K, N), T.int8)
            C8 = T.alloc_fragment((M, N), T.int32)
            E_s = T.alloc_shared((M, K // 16), T.int16)
            E_wide = T.alloc_shared((M, K // 8), T.int16)
            E_f = T.alloc_shared((M, K // 16), T.float16)
            E_sw = T.alloc_shared((M, K // 16), T.int16)
            B_s = T.alloc_shared((K, N), T.float16)
            C_l = T.alloc_fragment((M, N), T.float32)
            T.annotate_layout({E_sw: make_swizzled_layout(E_sw)})
            T.copy(A, A_s)
            T.gemm_sp(A8, E_s, B8, C8)
            T.gemm_sp(A_s, E_wide, B_s, C_l)
            T.gemm_sp(A_s, E_f, B_s, C_l)
            T.gemm_sp(A_s, E_sw, B_s, C_l)
            T.copy(C_l, C)

    return main
