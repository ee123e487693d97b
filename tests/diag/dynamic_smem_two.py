# Shared memory sized at run time: one buffer a kernel (placed after the others, its bytes
# added at launch); a second one is refused.
# tilescale-test: -k bad
import tilelang.language as T

n = T.symbolic("n")


@T.prim_func
def bad(G: T.Tensor[(n,), "int32"]):
    with T.Kernel(1, threads=32):
        a = T.alloc_shared((n,), "int32")
        b = T.alloc_shared((n,), "int32")
        T.copy(G[0:n], a[0:n])
        T.copy(a[0:n], b[0:n])
        T.copy(b[0:n], G[0:n])
