# A linear layout made for a 1-D tile (one row of 256) given to a 16x16 tile.
# tilescale-test: -k k
import tilelang
import tilelang.language as T
from tilelang.layout import make_linear_layout


@tilelang.jit
def k(n=1024):

    @T.prim_func
    def main(b: T.Tensor((n,), T.float32)):
        with T.Kernel(4, threads=128) as bx:
            s1 = T.alloc_shared((256,), T.float32)
            s2 = T.alloc_shared((16, 16), T.float32)
            T.annotate_layout({s2: make_linear_layout(s1)})
            for i in T.Parallel(256):
                s1[i] = T.cast(bx * 256 + i, T.float32)
            T.copy(s1, b[bx * 256])

    return main
