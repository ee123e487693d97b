# T.gemm_sp on float8 operands without ts.gemm_sp_8bit=True: the 8-bit mma.sp path has not run
# on a GPU yet, so it is refused with the way to opt in.
# tilescale-test: -k sp8 --arch sm_90a
import tilelang.language as T


def sp8(M=64, N=64, K=128):

    @T.prim_func
    def main(A: T.Tensor((M, K // 2), T.float8_e4m3fn), E: T.Tensor((M, K // 16), T.int16),
             B: T.Tensor((N, K), T.float8_e4m3fn), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K // 2), T.float8_e4m3fn)
            E_s = T.alloc_shared((M, K // 16), T.int16)
            B_s = T.alloc_shared((N, K), T.float8_e4m3fn)
            C_l = T.alloc_fragment((M, N), T.float32)
            T.copy(A, A_s)
            T.copy(E, E_s)
            T.copy(B, B_s)
            T.gemm_sp(A_s, E_s, B_s, C_l, transpose_B=True, clear_accum=True)
            T.copy(C_l, C)

    return main
