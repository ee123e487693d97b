# T.wgmma_gemm + T.wait_wgmma with shared tiles pinned to the 32-byte swizzle by
# T.annotate_layout, after lower_tile_ops: the GEMM is ts::gemm_ss_wgmma_issue with
# swizzle 32 for both operands, each wait is ts::gemm_wgmma_wait<regs, n>, and the plain
# T.copy into the tiles writes through the 32-byte swizzle (16-element atoms).
# (ts.pipeline_serial_loops off: the serial loop is what this test is about.)
# tilescale-test: -k async_gemm -D M=128 -D N=128 -D K=128 --pass-config ts.pipeline_serial_loops=False
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T
from tilelang.layout import make_quarter_bank_swizzled_layout


@tilelang.jit(out_idx=[-1])
def async_gemm(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_N, block_K), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.annotate_layout({A_s: make_quarter_bank_swizzled_layout(A_s),
                               B_s: make_quarter_bank_swizzled_layout(B_s)})
            T.clear(C_l)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.wgmma_gemm(A_s, B_s, C_l, transpose_B=True)
                T.wait_wgmma(1)
                T.wait_wgmma(0)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
