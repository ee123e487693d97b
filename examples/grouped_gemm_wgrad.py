# Grouped GEMM weight gradient (the backward of a grouped GEMM over variable-size groups):
#     dW[g*M + m, n] = sum over the rows r of group g of  X[r, m] * dY[r, n]
# Group g owns rows offsets[g] .. offsets[g] + sizes[g] - 1 of X (batch_sum x M) and dY
# (batch_sum x N); both tables are kernel inputs, so the K loop's trip count,
# ceildiv(sizes[g], block_K), is only known on the device.
#
# The operand tiles are staged with element-wise stores (masked at the group's end), and
# the tensor cores read them from shared memory.  The loop bound is loaded from global
# memory at an index that is the same in every thread, so it is uniform across the block
# and the barriers that order the stores before the GEMM (and the GEMM before the next
# tile's stores) go inside the loop — a regression test: they once went around it, and
# the GEMM read half-written tiles.
#
# tilescale-test: -k grouped_gemm_wgrad -D batch_sum=384 -D batch_count=3 -D M=256 -D N=256
#
# Run with TileScale:  tilescale run examples/grouped_gemm_wgrad.py -D batch_sum=384 ...

import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def grouped_gemm_wgrad(batch_sum, batch_count, M, N, block_M=64, block_N=128, block_K=64, num_stages=2,
                       threads=256, dtype="float16"):
    accum_dtype = "float32"

    @T.prim_func
    def main(
            X: T.Tensor((batch_sum, M), dtype),
            dY: T.Tensor((batch_sum, N), dtype),
            sizes: T.Tensor((batch_count,), "int32"),
            offsets: T.Tensor((batch_count,), "int32"),
            dW: T.Tensor((batch_count * M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), batch_count, threads=threads) as (bx, by, g):
            X_shared = T.alloc_shared((block_K, block_M), dtype)
            dY_shared = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(sizes[g], block_K), num_stages=num_stages):
                for i, j in T.Parallel(block_K, block_M):
                    X_shared[i, j] = T.if_then_else(k * block_K + i < sizes[g],
                                                    X[offsets[g] + k * block_K + i, bx * block_M + j], 0)
                for i, j in T.Parallel(block_K, block_N):
                    dY_shared[i, j] = T.if_then_else(k * block_K + i < sizes[g],
                                                     dY[offsets[g] + k * block_K + i, by * block_N + j], 0)
                T.gemm(X_shared, dY_shared, acc, transpose_A=True)
            T.copy(acc, dW[g * M + bx * block_M, by * block_N])

    return main


def ref_program(x, dy, sizes):
    out, start = [], 0
    for s in sizes.tolist():
        out.append(x[start:start + s].float().T @ dy[start:start + s].float())
        start += s
    return torch.cat(out).to(x.dtype)


if __name__ == "__main__":
    sizes = torch.tensor([64, 200, 120], dtype=torch.int32, device="cuda")
    offsets = torch.cumsum(sizes, 0, dtype=torch.int32) - sizes
    M = N = 256
    x = torch.randn(int(sizes.sum()), M, dtype=torch.float16, device="cuda")
    dy = torch.randn(int(sizes.sum()), N, dtype=torch.float16, device="cuda")
    dw = grouped_gemm_wgrad(int(sizes.sum()), len(sizes), M, N)(x, dy, sizes, offsets)
    torch.testing.assert_close(dw, ref_program(x, dy, sizes), rtol=1e-2, atol=1e-1)
    print("All checks passed.")
