# Two dynamic dimensions declared in one T.dynamic("m, n") call, used in the grid.
# tilescale-test: -k fill_ones
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def fill_ones(block=32, dtype="float32"):
    m, n = T.dynamic("m, n")

    @T.prim_func
    def main(Out: T.Tensor((m, n), dtype)):
        with T.Kernel(T.ceildiv(n, block), T.ceildiv(m, block), threads=128) as (bx, by):
            for i, j in T.Parallel(block, block):
                if by * block + i < m and bx * block + j < n:
                    Out[by * block + i, bx * block + j] = 1.0

    return main
