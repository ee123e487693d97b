# make_linear_layout on a 1-D shared tile (TileLang's issue 2529): the row-major it already has,
# so annotating it changes nothing and the TMA-able store still follows.
# tilescale-test: -k store_1d -D n=1000
import tilelang
import tilelang.language as T
from tilelang.layout import make_linear_layout


@tilelang.jit
def store_1d(n, block=256):

    @T.prim_func
    def main(b: T.Tensor((n,), T.float32)):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            shared = T.alloc_shared((block,), T.float32)
            T.annotate_layout({shared: make_linear_layout(shared)})
            for i in T.Parallel(block):
                shared[i] = T.cast(bx * block + i, T.float32)
            T.copy(shared, b[bx * block])

    return main
