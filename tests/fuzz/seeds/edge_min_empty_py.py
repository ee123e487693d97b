import tilelang
import tilelang.language as T
import math

@tilelang.jit
def k(N=64):
    x = min([])

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[bx] = 1.0

    return main
