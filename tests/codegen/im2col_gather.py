# T.im2col is a gather: a T.Parallel store of an image element, zero where the filter window
# leaves the image.  Its row, filter and padding terms divide the column index by the channel
# count, so with 16 channels they are the same over 8 neighbouring columns and the gather
# moves 8 halves at a time (layout_inference, lower_tile_ops: `if (inside) cp.async else 8
# zeros`); inject_pipeline then runs it 2 stages ahead like a T.copy (warp_specialize leaves
# the loop alone: its producer could not issue the gather, which would then stall the
# consumers).  The second image
# has 6 channels: only pairs of columns share their terms, so that gather uses 2-lane
# vectors, outside any pipeline.
# tilescale-test: -k conv -D N=2 -D H=8 -D W=8
# tilescale-dump: lower_tile_ops

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def conv(N, H, W, C=16, C2=6, F=64, K=3, S=1, D=1, P=1, block_M=64, block_N=64, block_K=32):
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    dtype = "float16"

    @T.prim_func
    def main(data: T.Tensor((N, H, W, C), dtype), data2: T.Tensor((N, H, W, C2), dtype),
             kernel: T.Tensor((K * K * C, F), dtype), out: T.Tensor((N * OH * OW, F), dtype)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=128) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), dtype)
            data2_shared = T.alloc_shared((block_M, 2 * C2), dtype)
            kernel_shared = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float")
            T.clear(acc)
            for k_iter in T.Pipelined(T.ceildiv(K * K * C, block_K), num_stages=3):
                T.im2col(data, data_shared, by, k_iter, K, S, D, P)
                T.copy(kernel[k_iter * block_K, bx * block_N], kernel_shared)
                T.gemm(data_shared, kernel_shared, acc)
            T.im2col(data2, data2_shared, by, 0, K, S, D, P)
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] += data2_shared[i, j % (2 * C2)]
            T.copy(acc, out[by * block_M, bx * block_N])

    return main
