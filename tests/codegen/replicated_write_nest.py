# A fragment written with indices that are not the T.Parallel loop's variables (here
# reversed) is held whole by every thread (replicated), so the loop writing it runs every
# iteration in every thread; before, the loop was spread over the threads and each thread's
# copy got only its own iterations' elements (the read in the second loop saw stale registers).
# tilescale-test: -k reverse_rows
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def reverse_rows(n=64):

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            f = T.alloc_fragment((n,), "float32")
            for i in T.Parallel(n):
                f[n - 1 - i] = A[i]
            for i in T.Parallel(n):
                B[i] = f[i] * 2.0

    return main
