# Element-wise addition C = A + B of two [M, N] tensors.
#
# Each thread block owns a block_M x block_N tile: both operands are copied from global
# memory into register fragments, added in a T.Parallel loop (the compiler spreads the
# tile over the block's threads and vectorizes the accesses), and the sum is copied back.
# Shapes that do not divide the tile are fine: the tile copies are bounds-guarded.
#
# tilescale-test: -k elementwise_add -D M=1024 -D N=1024
#
# Run with TileScale:  tilescale run examples/elementwise_add.py -D M=8192 -D N=8192
# The torch harness below is what a TileLang user would run; TileScale parses it but
# never executes it.

import argparse

import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def elementwise_add(M, N, block_M=128, block_N=128, threads=256, dtype="float16"):

    @T.prim_func
    def main(
            A: T.Tensor((M, N), dtype),
            B: T.Tensor((M, N), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_frag = T.alloc_fragment((block_M, block_N), dtype)
            B_frag = T.alloc_fragment((block_M, block_N), dtype)
            C_frag = T.alloc_fragment((block_M, block_N), dtype)

            T.copy(A[by * block_M, bx * block_N], A_frag)
            T.copy(B[by * block_M, bx * block_N], B_frag)
            for i, j in T.Parallel(block_M, block_N):
                C_frag[i, j] = A_frag[i, j] + B_frag[i, j]
            T.copy(C_frag, C[by * block_M, bx * block_N])

    return main


def ref_program(a, b):
    return a + b


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    args = parser.parse_args()

    a = torch.randn(args.m, args.n, dtype=torch.float16, device="cuda")
    b = torch.randn(args.m, args.n, dtype=torch.float16, device="cuda")
    kernel = elementwise_add(args.m, args.n)
    c = kernel(a, b)
    torch.testing.assert_close(c, ref_program(a, b), rtol=1e-2, atol=1e-2)
    print("All checks passed.")
