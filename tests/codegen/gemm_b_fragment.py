# T.gemm with B in registers (a fragment a T.Parallel loop writes, as KDA's chunk_bwd_intra
# computes k * exp2(gn - g) in registers and multiplies it as B).  Neither tensor-core path
# takes B from registers, so plan_gemm stages it (stage_fragment.c pass_stage_gemm_b): a
# shared tile `b_f_staged` of the operand's shape, filled by a copy nest right before the
# GEMM, which then reads it like any shared B (here swizzled, mma.sync with per-thread tf32
# loads for float32).  thread_sync orders the copy and the GEMM.  The second GEMM right
# after it multiplies the same fragment (as KDA's dq and dk GEMMs do): it reads the same
# copy, C = 2 A (2 B).
# tilescale-test: -k b_fragment --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def b_fragment(M=16, N=64, K=16, threads=128, dtype="float32", trans_B=False, a_frag=False):
    b_shape = (N, K) if trans_B else (K, N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            a_s = T.alloc_shared((M, K), dtype)
            b_s = T.alloc_shared(b_shape, dtype)
            b_f = T.alloc_fragment(b_shape, dtype)
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            for i, j in T.Parallel(b_shape[0], b_shape[1]):
                b_f[i, j] = b_s[i, j] * 2.0
            if a_frag:
                a_f = T.alloc_fragment((M, K), dtype)
                T.copy(a_s, a_f)
                T.gemm(a_f, b_f, acc, transpose_B=trans_B, clear_accum=True)
                T.gemm(a_f, b_f, acc, transpose_B=trans_B)
            else:
                T.gemm(a_s, b_f, acc, transpose_B=trans_B, clear_accum=True)
                T.gemm(a_s, b_f, acc, transpose_B=trans_B)
            T.copy(acc, C)

    return main
