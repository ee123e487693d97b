# A T.Layout on a shared tile must be injective: two logical elements in one physical place
# would alias (TileLang's issue 2632).  Each map is checked element by element; the diagnostic
# names two indices that collide.  Injective maps that grow the box (i * 2, i + 10, i ^ 1) are
# accepted, and tilelang.layout.Layout is T.Layout.
# tilescale-test: -k alias --arch sm_90a
import tilelang
import tilelang.language as T
from tilelang.layout import Layout

N = 128


def alias():
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Out: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=N):
            s = T.alloc_shared((N,), "int32")
            t = T.alloc_shared((N,), "int32")
            u = T.alloc_shared((N,), "int32")
            w = T.alloc_shared((16, 8), "int32")
            T.annotate_layout({s: Layout((N,), lambda i: i % 64)})
            T.annotate_layout({t: T.Layout((N,), lambda i: i * 0)})
            T.annotate_layout({u: Layout((N,), lambda i: i ^ 1)})
            T.annotate_layout({w: T.Layout((16, 8), lambda i, j: [j, i // 2])})
            for i in T.Parallel(N):
                s[i] = A[i]
                t[i] = s[i]
                u[i] = t[i]
                w[i // 8, i % 8] = u[i]
            for i in T.Parallel(N):
                Out[i] = w[i // 8, i % 8]

    return main
