# GEMM with a fused epilogue: C = relu(A @ B + bias), bias broadcast along rows.
#
# The accumulator tile stays in registers after the K loop; the epilogue is a T.Parallel
# loop over it, which layout inference maps onto the accumulator's tensor-core layout
# (each thread updates the elements it already holds), reading the bias slice the block
# needs from shared memory.
#
# tilescale-test: -k matmul_bias_relu -D M=256 -D N=256 -D K=256
#
# Run with TileScale:  tilescale run examples/gemm_bias_relu.py -D M=4096 -D N=4096 -D K=4096

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_bias_relu(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3, threads=256, dtype="float16",
                     accum_dtype="float32"):

    @T.prim_func
    def main(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            Bias: T.Tensor((N,), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            bias_shared = T.alloc_shared((block_N,), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(Bias[bx * block_N], bias_shared)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j] + bias_shared[j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
