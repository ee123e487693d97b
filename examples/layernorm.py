# LayerNorm forward with the row statistics written out (as in TileLang's norm example):
#     Mean[i] = mean_j X[i, j],  Rstd[i] = rsqrt(mean_j X[i, j]^2 - Mean[i]^2 + eps)
#     Y[i, j] = (X[i, j] - Mean[i]) * Rstd[i] * gamma[j] + beta[j]
#
# A block handles block_M whole rows.  The per-row statistics live in fragments that every
# thread of the row holds a copy of (they come out of T.reduce_sum replicated); the
# `T.Parallel(block_M)` loop that computes them also stores them to global memory.  Every
# replica must compute its own copy (the next loop reads it in every thread) while only
# one thread stores: the lowering guards the stores, not the loop (a regression test: it
# once ran the whole loop in thread 0 only and Y came out wrong past the first 4 columns).
#
# tilescale-test: -k layernorm_fwd -D M=64 -D N=1024
#
# Run with TileScale:  tilescale run examples/layernorm.py -D M=4096 -D N=8192

import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-3, -2, -1])
def layernorm_fwd(M, N, block_M=1, threads=256, eps=1e-5, dtype="bfloat16"):
    accum_dtype = "float32"

    @T.prim_func
    def main(
            X: T.Tensor((M, N), dtype),
            gamma: T.Tensor((N,), dtype),
            beta: T.Tensor((N,), dtype),
            Y: T.Tensor((M, N), dtype),
            Mean: T.Tensor((M,), accum_dtype),
            Rstd: T.Tensor((M,), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            X_shared = T.alloc_shared((block_M, N), dtype)
            x = T.alloc_fragment((block_M, N), accum_dtype)
            sq = T.alloc_fragment((block_M, N), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)
            row_sumsq = T.alloc_fragment((block_M,), accum_dtype)
            mean = T.alloc_fragment((block_M,), accum_dtype)
            rstd = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M, 0], X_shared)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.Cast(accum_dtype, X_shared[i, j])
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(x, row_sum, dim=1)
            T.reduce_sum(sq, row_sumsq, dim=1)
            for i in T.Parallel(block_M):
                mean[i] = row_sum[i] / N
                rstd[i] = T.rsqrt(row_sumsq[i] / N - mean[i] * mean[i] + eps)
                Mean[bx * block_M + i] = mean[i]
                Rstd[bx * block_M + i] = rstd[i]
            for i, j in T.Parallel(block_M, N):
                X_shared[i, j] = T.Cast(dtype, (x[i, j] - mean[i]) * rstd[i] * gamma[j] + beta[j])
            T.copy(X_shared, Y[bx * block_M, 0])

    return main


def ref_program(x, gamma, beta, eps=1e-5):
    xf = x.float()
    mean = xf.mean(-1)
    rstd = torch.rsqrt(xf.var(-1, unbiased=False) + eps)
    y = torch.nn.functional.layer_norm(xf, (x.shape[-1],), gamma.float(), beta.float(), eps)
    return y.to(x.dtype), mean, rstd


if __name__ == "__main__":
    M, N = 4096, 8192
    x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
    g = torch.randn(N, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(N, dtype=torch.bfloat16, device="cuda")
    y, mean, rstd = layernorm_fwd(M, N)(x, g, b)
    ry, rmean, rrstd = ref_program(x, g, b)
    torch.testing.assert_close(y, ry, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(mean, rmean, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(rstd, rrstd, rtol=1e-3, atol=1e-3)
    print("All checks passed.")
