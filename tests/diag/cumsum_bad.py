# T.cumsum misuse: a global or local operand, a dim out of range (of a buffer and of a region), shapes that differ,
# and a call outside T.Kernel.
# tilescale-test: -k scans
import tilelang.language as T


@T.prim_func
def scans(A: T.Tensor((8, 64), "float32")):
    T.cumsum(A)
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_shared((8, 64), "float32")
        u = T.alloc_shared((8, 32), "float32")
        w = T.alloc_shared((1, 8, 64), "float32")
        l = T.alloc_local((8,), "float32")
        T.cumsum(A, s)
        T.cumsum(l)
        T.cumsum(s[0:4, :], dim=5)
        T.cumsum(s, dim=2)
        T.cumsum(s, u, dim=1)
        T.cumsum(s, w)
        T.cummax(s, dim=-3)
