# Tiled GEMM in the eager style: C[M, N] = A[M, K] @ B[K, N] (fp16/bf16 in, fp32 accumulate).
#
# The @tilelang.jit body is the kernel itself: the dimensions are T.const symbols bound when
# the kernel is compiled (-D M=... or the C API's parameter list), A and B are declared by
# annotation, the output C is created with T.empty and returned.  The kernel is the same
# software-pipelined tensor-core GEMM as examples/gemm.py (TMA + wgmma with warp
# specialization on H100, cp.async + mma.sync elsewhere); the shared tiles are pinned to
# the 128-byte swizzle with T.annotate_layout, as TileLang GEMMs often do.
#
# tilescale-test: -k matmul -D M=256 -D N=256 -D K=256
#
# Run with TileScale:  tilescale run examples/gemm_eager.py -k matmul -D M=8192 -D N=8192 -D K=8192

import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout


@tilelang.jit
def matmul(A, B, block_M=128, block_N=128, block_K=64, num_stages=3, threads=128, dtype=T.float16,
           accum_dtype=T.float32):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.annotate_layout({A_shared: make_swizzled_layout(A_shared), B_shared: make_swizzled_layout(B_shared)})
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C
