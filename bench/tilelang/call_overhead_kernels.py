# The tiny kernels of bench/tilelang/call_overhead.py: C = A + B on [M, N] fp32 tensors, in the
# three ways a TileLang script calls a kernel.  The same file is compiled by TileLang 0.1.15 and
# by this project, so the host time per call is compared on the same kernel source.

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add(M, N, block_M=32, block_N=256, threads=256, dtype="float32"):
    """Lazy, with out_idx: kernel(a, b) allocates C and returns it."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + \
                    B[by * block_M + i, bx * block_N + j]

    return main


@tilelang.jit
def add_into(M, N, block_M=32, block_N=256, threads=256, dtype="float32"):
    """Lazy, no out_idx: kernel(a, b, c) writes the caller's C."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + \
                    B[by * block_M + i, bx * block_N + j]

    return main


@tilelang.jit
def add_eager(A, B, block_M=32, block_N=256, threads=256, dtype=T.float32):
    """Eager: the sizes come from A and B, C is a T.empty output."""
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        for i, j in T.Parallel(block_M, block_N):
            C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + \
                B[by * block_M + i, bx * block_N + j]
    return C
