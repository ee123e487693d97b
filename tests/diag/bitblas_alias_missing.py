# A name the aliased module lacks: `bitblas.tl.utils` is tilelang.intrinsics here, and the
# error names the module it was looked up in.
# tilescale-test: -k f
import tvm.tl.language as T
from bitblas.tl.utils import make_ladder_layout


def f():
    @T.prim_func
    def main(A: T.Tensor((16,), "int8")):
        with T.Kernel(1, threads=32) as bx:
            T.annotate_layout({A: make_ladder_layout(A)})

    return main
