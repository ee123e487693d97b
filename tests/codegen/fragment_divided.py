# Packed 4-bit weights read from a fragment with a divided index, as TileLang's dequantize
# GEMMs do: `B_local[i, j // 2]` inside T.Parallel(i, j).  B_local takes the layout of the
# nest divided by 2 (fragment_derive_div): the nest follows the wgmma A-operand layout of
# B_dequant (2 adjacent columns per lane), so each lane holds the byte of its column pair:
# B_local is 16 registers per thread, not all 64 x 32 (the old fully replicated layout,
# whose unrolled copy took NVRTC minutes), and the copy that fills it follows that layout.
# unpack4 (no GEMM; the nest's free layout gets pairs so the division holds) is a GPU case
# of tests/corpus/regress_gpu.py, as is dequant_gemm.
# (ts.pipeline_serial_loops off: the serial loop is what this test is about.)
# tilescale-test: -k dequant_gemm --arch sm_90a --pass-config ts.pipeline_serial_loops=False
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def dequant_gemm(M=64, N=64, K=128, block_K=64):
    # Ct[n, m] = sum_k (nibble(B, n, k) - 8) * A[m, k]: B holds two 4-bit values a byte, the
    # low nibble first

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K // 2), "uint8"), Ct: T.Tensor((N, M), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, block_K), "float16")
            B_shared = T.alloc_shared((N, block_K // 2), "uint8")
            B_local = T.alloc_fragment((N, block_K // 2), "uint8")
            B_dequant = T.alloc_fragment((N, block_K), "float16")
            Ct_local = T.alloc_fragment((N, M), "float32")
            T.clear(Ct_local)
            for k in T.serial(K // block_K):
                T.copy(A[0, k * block_K], A_shared)
                T.copy(B[0, k * block_K // 2], B_shared)
                T.copy(B_shared, B_local)
                for i, j in T.Parallel(N, block_K):
                    B_dequant[i, j] = T.Cast("float16", ((B_local[i, j // 2] >> (4 * (j % 2))) & 15).astype("int32") - 8)
                T.gemm(B_dequant, A_shared, Ct_local, transpose_B=True)
            T.copy(Ct_local, Ct)

    return main


@tilelang.jit
def unpack4(N=64, K=128):
    # C[i, j] = nibble j % 2 of B[i, j // 2]

    @T.prim_func
    def main(B: T.Tensor((N, K // 2), "uint8"), C: T.Tensor((N, K), "int32")):
        with T.Kernel(1, threads=128) as bx:
            B_shared = T.alloc_shared((N, K // 2), "uint8")
            B_local = T.alloc_fragment((N, K // 2), "uint8")
            C_local = T.alloc_fragment((N, K), "int32")
            T.copy(B, B_shared)
            T.copy(B_shared, B_local)
            for i, j in T.Parallel(N, K):
                C_local[i, j] = ((B_local[i, j // 2] >> (4 * (j % 2))) & 15).astype("int32")
            T.copy(C_local, C)

    return main
