# T.gemm_sp on sm_90a: a 2:4-sparse A ([M, K/2] compressed, metadata E [M, K/16] of int16)
# lowers to one ts::gemm_sp_ss_mma call per pipelined iteration (mma.sp m16n8k32): A and B
# get 128-byte swizzles, E stays row-major, the accumulator is the mma.sync C fragment
# (2 x 2 warps of 32 x 32 here), and the pipeline's wait half of the GEMM is dropped (mma.sp
# is synchronous).  tests/corpus/regress_gpu.py runs it with bfloat16 and B stored [N, K].
# tilescale-test: -k gemm_sp_kernel -D M=128 -D N=128 -D K=256 --arch sm_90a
# tilescale-dump: lower_tile_ops

import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics.sparse_layout import get_e_factor


@tilelang.jit(out_idx=[-1])
def gemm_sp_kernel(M, N, K, block_M=64, block_N=64, block_K=128, e_dtype=T.int16, dtype=T.float16, trans_B=False):
    e_factor = get_e_factor(dtype, e_dtype)
    B_shape = (N, K) if trans_B else (K, N)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(A_sparse: T.Tensor((M, K // 2), dtype), E: T.Tensor((M, K // e_factor), e_dtype),
             B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K // 2), dtype)
            E_s = T.alloc_shared((block_M, block_K // e_factor), e_dtype)
            B_s = T.alloc_shared(B_tile, dtype)
            C_l = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A_sparse[by * block_M, k * block_K // 2], A_s)
                T.copy(E[by * block_M, k * block_K // e_factor], E_s)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm_sp(A_s, E_s, B_s, C_l, transpose_B=trans_B)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
