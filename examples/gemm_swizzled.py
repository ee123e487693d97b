# Tiled GEMM on a 1-D grid that computes its own tile order from the block index (grouped
# "swizzle": `group` row tiles per column sweep, as TileScale's AG-GEMM and GEMM-RS kernels
# and Triton's GEMMs write it), with the epilogue through a shared tile.
#
# On sm_90a the warp-specialized kernel is made persistent like a 2-D one: blocks walk the
# tiles in the kernel's own order (tile = blockIdx.x + t * gridDim.x), and the epilogue of one
# tile overlaps the next tile's K loop; the store's row and column are lets of the block
# index, written out so the previous tile is stored at its own coordinates.
#
# tilescale-test: -k matmul -D M=256 -D N=256 -D K=256
#
# Run with TileScale:  tilescale run examples/gemm_swizzled.py -k matmul -D M=8192 -D N=8192 -D K=8192

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3, threads=128, group=4, dtype="float16",
           accum_dtype="float32"):
    num_pid_m = T.ceildiv(M, block_M)
    num_pid_n = T.ceildiv(N, block_N)

    @T.prim_func
    def main(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(num_pid_m * num_pid_n, threads=threads) as bid:
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            per_group = group * num_pid_n
            first_m = bid // per_group * group
            rows = T.min(num_pid_m - first_m, group)
            pid_m = first_m + bid % per_group % rows
            pid_n = bid % per_group // rows
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[pid_m * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, pid_n * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[pid_m * block_M, pid_n * block_N])

    return main
