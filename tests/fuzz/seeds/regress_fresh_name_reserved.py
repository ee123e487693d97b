import tilelang
import tilelang.language as T
import math

@tilelang.jit
def ÿÿÿÿÿÿÿÿÿÿÿÿÿÿBLOCKÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿk(N=64):
    x = 0

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[bx] = int(float("nan"))

    return main
