# Block sum reduction: Out[i] = sum_j A[i, j] for an [M, N] input (row sums, fp32 output).
#
# The grid tiles both dimensions, so several blocks contribute to the same row: each block
# reduces its block_M x block_N tile along the row with T.reduce_sum (per-thread partial
# sums, then warp shuffles and shared memory across threads), stages the block_M partial
# sums in shared memory, and one thread per row adds its partial into Out with a scalar
# T.atomic_add.  Out therefore accumulates: it must be zeroed before the launch (the torch
# harness and the GPU tests do so).  Loads past the edge of A read zeros, and the explicit
# `if` keeps the atomics of rows past M out of bounds.
#
# tilescale-test: -k reduce_sum -D M=1024 -D N=1024
#
# Run with TileScale:  tilescale run examples/reduce_sum.py -D M=8192 -D N=8192 --zero Out

import torch

import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_sum(M, N, block_M=32, block_N=256, threads=128, dtype="float32", accum_dtype="float32"):

    @T.prim_func
    def main(
            A: T.Tensor((M, N), dtype),
            Out: T.Tensor((M,), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            tile = T.alloc_fragment((block_M, block_N), accum_dtype)
            partial = T.alloc_fragment((block_M,), accum_dtype)
            partial_shared = T.alloc_shared((block_M,), accum_dtype)

            T.copy(A[by * block_M, bx * block_N], tile)
            T.reduce_sum(tile, partial, dim=1, clear=True)
            T.copy(partial, partial_shared)
            for i in T.Parallel(block_M):
                if by * block_M + i < M:
                    T.atomic_add(Out[by * block_M + i], partial_shared[i])

    return main


if __name__ == "__main__":
    M, N = 1024, 1024
    a = torch.randn(M, N, dtype=torch.float32, device="cuda")
    out = torch.zeros(M, dtype=torch.float32, device="cuda")
    kernel = reduce_sum(M, N)
    kernel(a, out)
    torch.testing.assert_close(out, a.sum(dim=1), rtol=1e-4, atol=1e-4)
    print("All checks passed.")
