# The factory picks one of two nested prim_funcs with a Python `if` (like MLA split/no-split).
# tilescale-test: -k rowwise -D M=64 -D N=256 -D split=2
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowwise(M, N, split=1, dtype="float32"):

    @T.prim_func
    def main_no_split(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=128) as bx:
            for j in T.Parallel(N):
                B[bx, j] = A[bx, j] * 2

    @T.prim_func
    def main_split(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(M, split, threads=128) as (bx, by):
            for j in T.Parallel(N // split):
                B[bx, by * (N // split) + j] = A[bx, by * (N // split) + j] * 2

    if split > 1:
        return main_split
    return main_no_split
