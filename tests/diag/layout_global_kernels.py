# A T.Layout on a global tensor is pinned per kernel (TileLang's layout map is an attribute
# of the kernel's block): a second kernel of the same function that accesses the tensor
# without annotating it, and a view of the tensor (which would bypass the map), are refused
# by pass remap_global.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64, 8), "float32"), B: T.Tensor((64, 8), "float32")):
    with T.Kernel(1, threads=64) as bx:
        T.annotate_layout({A: T.Layout(A.shape, lambda i, j: [j, i])})
        T.copy(A, B)
    with T.Kernel(1, threads=64) as bx:
        T.copy(B, A)
        V = T.view(A, (512,))
        for i in T.Parallel(512):
            V[i] = 0.0
