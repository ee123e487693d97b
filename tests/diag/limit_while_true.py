# An infinite compile-time loop: the evaluator's step limit (10 million loop iterations and
# calls by default) ends it with a diagnostic at the loop.
# tilescale-test: -k kernel -D N=64
import tilelang.language as T


def kernel(N):
    block = 1
    while True:
        block = block

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=32) as bx:
            A[bx] = 1.0

    return main
