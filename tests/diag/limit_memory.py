# A factory that asks for a billion-element list at compile time: the evaluator's memory
# limit (1 GB of arena by default) stops it with a diagnostic before anything is built.
# tilescale-test: -k table -D N=64
import tilelang.language as T


def table(N):
    zeros = [0] * 10**9

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[bx] = zeros[0]

    return main
