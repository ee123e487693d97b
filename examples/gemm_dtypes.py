# GEMM over every tensor-core type: C[M, N] = A[M, K] @ B[N, K]^T with A and B in
# in_dtype and C in out_dtype (default accum_dtype: the accumulator is written out as is;
# e.g. out_dtype="bfloat16" for an fp8 GEMM with a bf16 result).
#
#   float16  -> float32 | float16      bfloat16 -> float32
#   float32  -> float32 (tf32)         int8 / uint8 -> int32
#   float8_e4m3 / float8_e5m2 -> float32 (float16 on sm_90a)
#
# 8-bit types are only K-major on the tensor cores (A [M, K], B [N, K]), hence B [N, K] here;
# trans_B=False is for the 16-bit types and float32 (tf32 B [K, N]: mma.sync, not wgmma).
#
# tilescale-test: -k matmul -D M=256 -D N=256 -D K=256 -D in_dtype=int8 -D accum_dtype=int32
#
# Run with TileScale:  tilescale run examples/gemm_dtypes.py -k matmul -D M=4096 -D N=4096 -D K=4096 -D in_dtype=float8_e4m3

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3, threads=128, trans_B=True,
           in_dtype="float16", accum_dtype="float32", out_dtype=None):
    out_dtype = out_dtype or accum_dtype
    B_shape = (N, K) if trans_B else (K, N)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(
            A: T.Tensor((M, K), in_dtype),
            B: T.Tensor(B_shape, in_dtype),
            C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), in_dtype)
            B_shared = T.alloc_shared(B_tile, in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=trans_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
