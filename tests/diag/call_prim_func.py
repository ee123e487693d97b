# A prim_func called from kernel code like a helper.
# tilescale-test: -k rowwise -D M=256 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowwise(M, N, dtype="float16"):

    @T.prim_func
    def helper(X: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128) as bx:
            X[0, 0] = 0

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128) as bx:
            helper(A)

    return main
