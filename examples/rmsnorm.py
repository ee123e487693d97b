# RMSNorm without a weight (as in TileLang's rms_norm example):
#     Y[i, j] = X[i, j] * rsqrt(mean_j(X[i, j]^2) + eps)
# and, with -D with_weight=True, multiplied by a per-column weight W[j].
#
# A block handles block_M whole rows.  The rows are staged through shared memory with a
# slice copy, squared into a second fragment, reduced along the row with T.reduce_sum,
# turned into one reciprocal RMS per row, and applied element-wise.  `with_weight` is a
# Python bool, so the `if` is folded at compile time and only one variant is generated.
#
# tilescale-test: -k rms_norm -D M=256 -D N=1024
#
# Run with TileScale:  tilescale run examples/rmsnorm.py -D M=8192 -D N=8192

import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rms_norm(M, N, block_M=2, threads=128, eps=1e-6, with_weight=False, dtype="float32"):
    accum_dtype = "float32"

    if with_weight:

        @T.prim_func
        def main_weighted(
                X: T.Tensor((M, N), dtype),
                W: T.Tensor((N,), dtype),
                Y: T.Tensor((M, N), dtype),
        ):
            with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
                X_shared = T.alloc_shared((block_M, N), dtype)
                x = T.alloc_fragment((block_M, N), accum_dtype)
                sq = T.alloc_fragment((block_M, N), accum_dtype)
                sumsq = T.alloc_fragment((block_M,), accum_dtype)

                T.copy(X[bx * block_M:(bx + 1) * block_M, :], X_shared)
                T.copy(X_shared, x)
                for i, j in T.Parallel(block_M, N):
                    sq[i, j] = x[i, j] * x[i, j]
                T.reduce_sum(sq, sumsq, dim=1)
                for i in T.Parallel(block_M):
                    sumsq[i] = T.rsqrt(sumsq[i] / N + eps)
                for i, j in T.Parallel(block_M, N):
                    x[i, j] = x[i, j] * sumsq[i] * W[j]
                T.copy(x, Y[bx * block_M:(bx + 1) * block_M, :])

        return main_weighted

    @T.prim_func
    def main(
            X: T.Tensor((M, N), dtype),
            Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            X_shared = T.alloc_shared((block_M, N), dtype)
            x = T.alloc_fragment((block_M, N), accum_dtype)
            sq = T.alloc_fragment((block_M, N), accum_dtype)
            sumsq = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M:(bx + 1) * block_M, :], X_shared)
            T.copy(X_shared, x)
            for i, j in T.Parallel(block_M, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, sumsq, dim=1)
            for i in T.Parallel(block_M):
                sumsq[i] = T.rsqrt(sumsq[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] *= sumsq[i]
            T.copy(x, Y[bx * block_M:(bx + 1) * block_M, :])

    return main


def ref_program(x, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


if __name__ == "__main__":
    M, N = 256, 1024
    x = torch.randn(M, N, dtype=torch.float32, device="cuda")
    kernel = rms_norm(M, N)
    y = kernel(x)
    torch.testing.assert_close(y, ref_program(x), rtol=1e-5, atol=1e-5)
    print("All checks passed.")
