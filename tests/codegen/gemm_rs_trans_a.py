# T.gemm with A in registers stored [K, M] (transpose_A=True, as indexer_bwd's dQ = dL^T K):
# A's fragment is the [M, K] operand fragment with its dims swapped — every element stays
# in the thread the instruction wants it in, the registers run row-major over [K, M], and
# gemm.cuh (rs_a_reg / rs_a_word) reads them in that order.  16 rows over 4 warps: one
# warp along M, four along N, A replicated over them.
# tilescale-test: -k rs_trans_a --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def rs_trans_a(M=16, N=128, K=32):

    @T.prim_func
    def main(A: T.Tensor((K, M), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a_s = T.alloc_shared((K, M), "float32")
            b_s = T.alloc_shared((K, N), "bfloat16")
            a_r = T.alloc_fragment((K, M), "bfloat16")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.copy(a_s, a_r)
            T.gemm(a_r, b_s, acc, transpose_A=True, clear_accum=True)
            T.copy(acc, C)

    return main
