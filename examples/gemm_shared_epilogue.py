# Tiled GEMM whose epilogue goes through shared memory, as TileLang's GEMM examples write
# it: the accumulator tile is copied into a shared tile C_shared, then C_shared into C.
#
# On sm_90a the warp-specialized kernel turns this into a TMA store: the consumer warps
# write C_shared in a swizzled layout (free of bank conflicts), fence it for the async
# proxy, meet on a named barrier (the producer warpgroup is not part of it), and one thread
# stores the tile with cp.async.bulk.tensor, one box per 128-byte column atom; edge tiles
# are clipped by the hardware.  (examples/gemm.py, which copies the fragment to C directly,
# gets the same epilogue when the extra tile fits in shared memory.)
#
# tilescale-test: -k matmul -D M=256 -D N=256 -D K=256 --dump-after warp_specialize
#
# Run with TileScale:  tilescale run examples/gemm_shared_epilogue.py -k matmul -D M=8192 -D N=8192 -D K=8192

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3, threads=128, dtype="float16",
           accum_dtype="float32"):

    @T.prim_func
    def main(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main
