# Persistent GEMM with T.Persistent: the grid is one block per SM (sm_num), and each block
# walks the C tiles block_id, block_id + sm_num, ... of the [ceil(M/block_M), ceil(N/block_N)]
# tile domain, visited in panels of group_size tile rows so that blocks running at the same
# time share A and B tiles in L2.  Tiles past the end are skipped.
#
# (On sm_90a, examples/gemm.py gets a persistent schedule from the compiler without this;
# here the user writes it.  The kernel body per tile is the plain pipelined GEMM, which runs
# on the cp.async + wgmma path: warp specialization applies to a top-level K loop only.)
#
# tilescale-test: -k matmul -D M=512 -D N=384 -D K=128 -D sm_num=4
#
# Run with TileScale:  tilescale run examples/gemm_persistent.py -k matmul -D M=4096 -D N=4096 -D K=4096

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3, threads=128, sm_num=132, group_size=8,
           dtype="float16", accum_dtype="float32"):

    @T.prim_func
    def main(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(sm_num, threads=threads) as (block_id):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            for bx, by in T.Persistent([T.ceildiv(M, block_M), T.ceildiv(N, block_N)], sm_num, block_id, group_size):
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    T.copy(A[bx * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, by * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C_shared)
                T.copy(C_shared, C[bx * block_M, by * block_N])

    return main
