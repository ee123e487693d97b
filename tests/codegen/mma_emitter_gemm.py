# TileLang's TensorCoreIntrinEmitter (the prelude's tilelang/cuda/intrinsics/macro/
# mma_macro_generator.py) on a 64 x 64 block of 2 x 2 warps: each warp loads its 32 x 32
# piece of A and B with T.ptx_ldmatrix (x4; .trans for A stored [K, M] and B stored [K, N]),
# multiplies with two T.ptx_mma m16n8k16 per 16 x 16 tile, and stores its accumulators with
# plain per-thread stores into a [M/16, N/16, 16, 16] shared tile.  thread_sync orders the
# ldmatrix reads (an address of a shared element taken by a device call: a read of the
# buffer) after the tile loads and before the next iteration's writes.  The shared tiles
# carry a T.Layout built from get_swizzle_layout, which pins our 64-byte swizzle.
# (ts.pipeline_serial_loops off: the serial loop is what this test is about.)
# tilescale-test: -k mma_emitter_gemm -D M=128 -D N=128 -D K=64 -D a_transposed=True -D b_transposed=False --pass-config ts.pipeline_serial_loops=False
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics import get_swizzle_layout
from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter


def swizzled(buf):
    return T.Layout(buf.shape, lambda i, j: list(get_swizzle_layout(i, j, buf.shape[-1], buf.dtype)))


@tilelang.jit
def mma_emitter_gemm(M, N, K, a_transposed=False, b_transposed=True, dtype="float16", accum_dtype="float32"):
    block_M, block_N, block_K = 64, 64, 32
    emitter = TensorCoreIntrinEmitter(a_dtype=dtype, b_dtype=dtype, accum_dtype=accum_dtype, a_transposed=a_transposed,
                                      b_transposed=b_transposed, block_row_warps=2, block_col_warps=2,
                                      warp_row_tiles=32, warp_col_tiles=32, chunk=block_K)
    A_shape = (K, M) if a_transposed else (M, K)
    B_shape = (N, K) if b_transposed else (K, N)
    A_tile = (block_K, block_M) if a_transposed else (block_M, block_K)
    B_tile = (block_N, block_K) if b_transposed else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared(A_tile, dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_shared = T.alloc_shared((block_M // 16, block_N // 16, 16, 16), accum_dtype)
            A_local = T.alloc_local((emitter.warp_rows * emitter.local_size_a), dtype)
            B_local = T.alloc_local((emitter.warp_cols * emitter.local_size_b), dtype)
            C_local = T.alloc_local((emitter.warp_rows * emitter.warp_cols * emitter.local_size_out), accum_dtype)
            T.annotate_layout({A_shared: swizzled(A_shared), B_shared: swizzled(B_shared)})
            T.clear(C_local)
            for ko in T.serial(K // block_K):
                if a_transposed:
                    T.copy(A[ko * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                if b_transposed:
                    T.copy(B[bx * block_N, ko * block_K], B_shared)
                else:
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                for ki in T.serial(block_K // emitter.micro_size_k):
                    emitter.ldmatrix_a(A_local, A_shared, ki)
                    emitter.ldmatrix_b(B_local, B_shared, ki)
                    emitter.mma(A_local, B_local, C_local)
            emitter.stmatrix(C_local, C_shared)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = C_shared[i // 16, j // 16, i % 16, j % 16]

    return main
