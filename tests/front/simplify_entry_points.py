# TileLang's TIR simplifier entry points (tilelang.transform.simplify: apply_simplify on a
# prim_func, simplify_prim_func as a factory decorator, also by BitBLAS's bitblas.base name):
# the compiler simplifies while it lowers, so they give back what they are given.
# tilescale-test: -k scaled -D n=64
import tilelang
import tilelang.language as T
from tilelang.transform.simplify import apply_simplify
from tilelang.transform import simplify_prim_func
from bitblas.base import simplify_prim_func as bitblas_simplify


@simplify_prim_func
@bitblas_simplify
def scaled(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n) as bx:
            for i in T.Parallel(n):
                A[i] = A[i] * 2.0
    return apply_simplify(main)
