# Tuple assignment to buffer elements in a kernel follows Python: every value is read before
# the first store, so `a[0], a[1] = a[1], a[0]` swaps (each read is bound to a LET first)
# instead of copying a[1] into both; T.alloc_var targets likewise.  Plain constants need no
# LET, nor do targets that are all plain names (they bind values, nothing is stored).
# tilescale-test: -k swap -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def swap(N):

    @T.prim_func
    def main(A: T.Tensor((N, 2), "int32"), B: T.Tensor((N, 2), "int32")):
        with T.Kernel(1, threads=N) as bx:
            tx = T.get_thread_binding(0)
            pair = T.alloc_local([2], "int32")
            pair[0] = A[tx, 0]
            pair[1] = A[tx, 1]
            pair[0], pair[1] = pair[1], pair[0]
            B[tx, 0], B[tx, 1] = pair[0], 7
            x = T.alloc_var("int32")
            y = T.alloc_var("int32")
            x = A[tx, 0]
            y = tx
            x, y = y, x
            u, v = x + 1, y * 2
            B[tx, 0] += u + v
    return main
