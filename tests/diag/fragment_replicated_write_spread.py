# A fragment written with reversed indices is held whole by every thread, but the loop that
# writes it reads row sums laid out across the threads (a reduction's result), which spreads
# the loop over the threads: each thread would fill only its own rows of its copy.
# tilescale-test: -k mixed
import tilelang
import tilelang.language as T


@tilelang.jit
def mixed(n=64):

    @T.prim_func
    def main(A: T.Tensor((n, 16), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_fragment((n, 16), "float32")
            g = T.alloc_fragment((n,), "float32")
            f = T.alloc_fragment((n,), "float32")
            T.copy(A, s)
            T.reduce_sum(s, g, dim=1)
            for i in T.Parallel(n):
                f[n - 1 - i] = g[i]
            for i in T.Parallel(n):
                B[i] = f[i]

    return main
