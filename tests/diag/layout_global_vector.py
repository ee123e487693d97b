# A tensor with a T.Layout has its neighbouring logical elements elsewhere in memory:
# T.atomic_addx2 (two consecutive elements through one address) on it is refused by pass
# remap_global instead of adding into the wrong element.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64, 8), "float32"), B: T.Tensor((64, 8), "float32")):
    with T.Kernel(1, threads=64) as bx:
        T.annotate_layout({A: T.Layout(A.shape, lambda i, j: [j, i])})
        tx = T.get_thread_binding()
        T.atomic_addx2(A[tx, 0], B[tx, 0])
