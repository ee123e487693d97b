# Unbounded recursion at compile time: stopped by the evaluator's depth limit (200 calls
# by default) at the recursive call, instead of overflowing the C stack.
# tilescale-test: -k kernel -D N=64
import tilelang.language as T


def tile_size(n):
    return tile_size(n // 2) * 2


def kernel(N):
    block = tile_size(N)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(N, threads=32) as bx:
            A[bx] = block

    return main
