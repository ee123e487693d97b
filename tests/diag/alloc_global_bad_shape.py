# T.alloc_global workspaces are static storage of the module: every extent must be a
# positive compile-time integer, in a kernel or in the prim_func outside its kernels.
# tilescale-test: -k ws
import tilelang.language as T

N = T.dynamic("N")


@T.prim_func
def ws(A: T.Tensor((N,), "float32"), n: T.int32):
    w0 = T.alloc_global((N,), "float32")
    with T.Kernel(1, threads=32) as bx:
        w1 = T.alloc_global((N, 4), "float32")
        w2 = T.alloc_global((n,), "int32")
        w3 = T.alloc_global((4, 0), "int32")
        w4 = T.alloc_global((-2,), "int32")
        w5 = T.alloc_global((1 << 20, 1 << 20), "uint8")
        w6 = T.alloc_global((), "int32")
        ok = T.alloc_global((8, 4), "float32")
        ok[0, 0] = A[0]
