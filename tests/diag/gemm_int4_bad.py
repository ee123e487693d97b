# T.gemm on 4-bit operands with K not a multiple of the 64 elements of one m16n8k64
# instruction.  (B not K-major, int4 with int8 and float4_e2m1fn operands, which no tensor-core
# instruction takes, are computed with FMA instead: front/gemm_fma.c.)
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((128, 128), "int4"), C: T.Tensor((128, 128), "int32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((128, 128), "int4")
        Bt_s = T.alloc_shared((128, 128), "int4")
        B8_s = T.alloc_shared((128, 128), "int8")
        F_s = T.alloc_shared((128, 128), "float4_e2m1fn")
        K32_s = T.alloc_shared((128, 32), "int4")
        C_l = T.alloc_fragment((128, 128), "int32")
        F_l = T.alloc_fragment((128, 128), "float32")
        T.copy(A, A_s)
        T.gemm(A_s, Bt_s, C_l)  # FMA
        T.gemm(A_s, B8_s, C_l, transpose_B=True)  # FMA
        T.gemm(F_s, F_s, F_l, transpose_B=True)  # FMA
        T.gemm(K32_s, K32_s, C_l, transpose_B=True)
        T.copy(C_l, C)
