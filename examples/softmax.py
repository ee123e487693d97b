# Row softmax: Y[i, :] = exp(X[i, :] - max_j X[i, j]) / sum_j exp(X[i, j] - max_j X[i, j]).
#
# One block handles block_M whole rows (N is a compile-time parameter, so a row lives in
# registers): the rows are copied into an fp32 fragment (converting from the input dtype),
# T.reduce_max finds each row's maximum, the exponentials are computed with exp2 after
# scaling by log2(e) (exp2 is the hardware instruction; exp(x) = exp2(x * log2(e))),
# T.reduce_sum adds them, and the normalised rows are converted back and stored.
# Rows past M (when M does not divide block_M) are loaded as zeros and never stored.
#
# tilescale-test: -k softmax -D M=256 -D N=1024
#
# Run with TileScale:  tilescale run examples/softmax.py -D M=8192 -D N=8192

import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def softmax(M, N, block_M=1, threads=128, dtype="float16", accum_dtype="float32"):
    log2e = 1.44269504088896

    @T.prim_func
    def main(
            X: T.Tensor((M, N), dtype),
            Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1, clear=True)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2(x[i, j] * log2e - row_max[i] * log2e)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return main


if __name__ == "__main__":
    M, N = 256, 1024
    x = torch.randn(M, N, dtype=torch.float16, device="cuda")
    kernel = softmax(M, N)
    y = kernel(x)
    torch.testing.assert_close(y, torch.softmax(x.float(), dim=-1).half(), rtol=1e-2, atol=1e-2)
    print("All checks passed.")
