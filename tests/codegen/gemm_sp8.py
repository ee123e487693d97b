# T.gemm_sp on 8-bit operands: int8 (mma.sp m16n8k64 .s8, int32 accumulators) and float8
# e4m3 / e5m2 (float32), B stored [N, K] as the 8-bit tensor cores read it;
# A's and B's tiles get byte swizzles, E stays row-major.  tests/corpus/regress_gpu.py runs the
# three types against the float64 product.  (GPU: right for all three, and TileLang's gemm_sp tests.)
# tilescale-test: -k gemm_sp8 -D M=128 -D N=128 -D K=256 --arch sm_90a
# tilescale-dump: lower_tile_ops

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_sp8(M, N, K, block_M=64, block_N=64, block_K=128, dtype=T.int8, accum=T.int32, e_dtype=T.int32):
    e_factor = 32 if e_dtype == T.int32 else 16 if e_dtype == T.int16 else 8

    @T.prim_func
    def main(A_sparse: T.Tensor((M, K // 2), dtype), E: T.Tensor((M, K // e_factor), e_dtype),
             B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), accum)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K // 2), dtype)
            E_s = T.alloc_shared((block_M, block_K // e_factor), e_dtype)
            B_s = T.alloc_shared((block_N, block_K), dtype)
            C_l = T.alloc_fragment((block_M, block_N), accum)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A_sparse[by * block_M, k * block_K // 2], A_s)
                T.copy(E[by * block_M, k * block_K // e_factor], E_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.gemm_sp(A_s, E_s, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
