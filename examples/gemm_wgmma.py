# Tiled GEMM with the asynchronous Hopper instructions written out: C = A @ B.
#
# T.wgmma_gemm issues the tile product as wgmma without waiting for it; T.wait_wgmma(n)
# waits until at most n wgmma groups are still running (0: the accumulator is ready).
# The shared tiles are pinned to a chosen swizzle with T.annotate_layout (swizzle = -1: the
# widest that fits; 128, 64, 32: the full/half/quarter-bank swizzles; 0: linear, none),
# and the GEMM, the copies and the TMA loads all follow the pinned layout.  With
# async_wgmma=False the kernel uses the synchronous T.gemm instead, which also accepts a
# linear layout (it then runs on mma.sync) and any target.
#
# tilescale-test: -k matmul -D M=256 -D N=256 -D K=256 -D swizzle=64 -D async_wgmma=False
#
# Run with TileScale:  tilescale run examples/gemm_wgmma.py -k matmul -D M=4096 -D N=4096 -D K=4096

import tilelang
import tilelang.language as T
from tilelang.layout import (make_full_bank_swizzled_layout, make_half_bank_swizzled_layout, make_linear_layout,
                             make_quarter_bank_swizzled_layout, make_swizzled_layout)


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3, threads=128, swizzle=-1,
           async_wgmma=True, dtype="float16", accum_dtype="float32"):
    make_layout = {
        -1: make_swizzled_layout,
        128: make_full_bank_swizzled_layout,
        64: make_half_bank_swizzled_layout,
        32: make_quarter_bank_swizzled_layout,
        0: make_linear_layout,
    }[swizzle]

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.annotate_layout({A_shared: make_layout(A_shared), B_shared: make_layout(B_shared)})
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                if async_wgmma:
                    T.wgmma_gemm(A_shared, B_shared, C_local)
                    T.wait_wgmma(0)
                else:
                    T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
