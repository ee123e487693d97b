# T.alloc_reducer / T.finalize_reducer misuse: an unknown op or replication, a symbolic shape,
# finalizing a buffer that is not a reducer, and a kernel whose threads are not whole warps.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64,), "float32"), n: T.int32):
    with T.Kernel(1, threads=128) as bx:
        r0 = T.alloc_reducer((4,), "float32", op="prod")
        r1 = T.alloc_reducer((4,), "float32", replication="some")
        r2 = T.alloc_reducer((n,), "float32")
        s = T.alloc_fragment((4,), "float32")
        T.finalize_reducer(s)
    with T.Kernel(1, threads=48) as bx:
        r = T.alloc_reducer((4,), "float32")
        T.clear(r)
        T.finalize_reducer(r)
