# T.gemm with a float8 A in registers takes mma.sync m16n8k32, which accumulates float8 in
# float32 only: a float16 accumulator (which wgmma has for shared operands) is refused at the
# T.gemm line instead of generating an mma.sync it cannot issue.
# tilescale-test: -k gemm_rs_fp8_f16acc --arch sm_90a
import tilelang.language as T


def gemm_rs_fp8_f16acc(M=64, N=64, K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float8_e4m3), B: T.Tensor((N, K), T.float8_e4m3), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), T.float8_e4m3)
            A_l = T.alloc_fragment((M, K), T.float8_e4m3)
            B_s = T.alloc_shared((N, K), T.float8_e4m3)
            C_l = T.alloc_fragment((M, N), T.float16)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(A_s, A_l)
            T.gemm(A_l, B_s, C_l, transpose_B=True, clear_accum=True)
            T.copy(C_l, C)

    return main
