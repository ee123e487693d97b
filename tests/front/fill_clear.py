# T.fill on whole buffers and on a region, T.clear (= fill 0).
# tilescale-test: -k fills -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[0])
def fills(N, block=64, dtype="float32"):

    @T.prim_func
    def main(Out: T.Tensor((N, block), dtype)):
        with T.Kernel(N // block, threads=128) as bx:
            f = T.alloc_fragment((block, block), dtype)
            s = T.alloc_shared((block, block), dtype)
            T.clear(f)
            T.fill(s, -1)
            T.fill(f[0:8, :], 2.5)
            for i, j in T.Parallel(block, block):
                f[i, j] = f[i, j] + s[i, j]
            T.copy(f, Out[bx * block, 0])

    return main
