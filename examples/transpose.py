# Shared-memory tiled transpose: B[N, M] = A[M, N]^T.
#
# Reading A row by row and writing B column by column would make one of the two global
# accesses strided.  Instead each block copies a block_M x block_N tile of A into shared
# memory with coalesced loads, transposes it inside shared memory with a T.Parallel loop
# (threads walk the destination tile in row order, so the strided side is the cheap
# shared-memory read), and copies the transposed tile to B with coalesced stores.  The
# compiler inserts the __syncthreads between the shared-memory producer and consumers.
#
# The source tile's rows are padded by `pad` elements: without padding a 64-element fp16
# row is 128 bytes, so the column read hits one shared-memory bank 32 times over (~3x
# slower on H100).  8 elements (16 bytes) keeps every row 16-byte aligned, so the global
# loads into the tile stay vectorized, and spreads a column over 8 banks.
#
# tilescale-test: -k transpose -D M=1024 -D N=512
#
# Run with TileScale:  tilescale run examples/transpose.py -D M=8192 -D N=8192

import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def transpose(M, N, block_M=64, block_N=64, pad=8, threads=256, dtype="float16"):

    @T.prim_func
    def main(
            A: T.Tensor((M, N), dtype),
            B: T.Tensor((N, M), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            tile = T.alloc_shared((block_M, block_N + pad), dtype)
            tile_t = T.alloc_shared((block_N, block_M), dtype)

            T.copy(A[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N],
                   tile[0:block_M, 0:block_N])
            for j, i in T.Parallel(block_N, block_M):
                tile_t[j, i] = tile[i, j]
            T.copy(tile_t, B[bx * block_N, by * block_M])

    return main


if __name__ == "__main__":
    M, N = 1024, 512
    a = torch.randn(M, N, dtype=torch.float16, device="cuda")
    kernel = transpose(M, N)
    b = kernel(a)
    torch.testing.assert_close(b, a.t().contiguous(), rtol=0, atol=0)
    print("All checks passed.")
