# Scale and cast: B = cast(A * scale, float16) for an fp32 [M, N] input.
#
# `scale` is an ordinary Python float parameter of the factory: it is folded into the
# kernel as a constant (compile with -D scale=0.25).  The fp32 tile is loaded into a
# fragment, multiplied and converted element by element in a T.Parallel loop, and the
# fp16 tile is stored back.  Non-dividing shapes are handled by the guarded tile copies.
#
# tilescale-test: -k scale_cast -D M=1024 -D N=1024 -D scale=0.5
#
# Run with TileScale:  tilescale run examples/scale_cast.py -D M=8192 -D N=8192 -D scale=0.125

import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale_cast(M, N, scale=1.0, block_M=64, block_N=128, threads=128,
               in_dtype="float32", out_dtype="float16"):

    @T.prim_func
    def main(
            A: T.Tensor((M, N), in_dtype),
            B: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_frag = T.alloc_fragment((block_M, block_N), in_dtype)
            B_frag = T.alloc_fragment((block_M, block_N), out_dtype)

            T.copy(A[by * block_M, bx * block_N], A_frag)
            for i, j in T.Parallel(block_M, block_N):
                B_frag[i, j] = T.cast(A_frag[i, j] * scale, out_dtype)
            T.copy(B_frag, B[by * block_M, bx * block_N])

    return main


def ref_program(a, scale):
    return (a * scale).to(torch.float16)


if __name__ == "__main__":
    M, N, scale = 1024, 1024, 0.5
    a = torch.randn(M, N, dtype=torch.float32, device="cuda")
    kernel = scale_cast(M, N, scale)
    b = kernel(a)
    torch.testing.assert_close(b, ref_program(a, scale), rtol=1e-2, atol=1e-2)
    print("All checks passed.")
