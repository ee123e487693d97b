# T.gemm on 4-bit integers: int4 (or uint4) shared tiles, two elements a byte, row-major (no
# swizzle: their copies write nibbles at plain offsets), multiplied by mma.sync m16n8k64 .s4
# (.u4) into int32 — ts::gemm_ss_mma4 on the tiles' bytes (ldmatrix on rows of K/2 bytes),
# each tile's address the byte of its first element; wgmma has no 4-bit type, so sm_90a takes
# mma.sync too.
# tilescale-test: -k gemm_int4 -D M=256 -D N=128 -D K=256 -D dtype="int4" --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def gemm_int4(M, N, K, dtype, block_M=128, block_N=64, block_K=128, threads=128):

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_N, block_K), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "int32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_s)
                T.copy(B[bx * block_N, ko * block_K], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
