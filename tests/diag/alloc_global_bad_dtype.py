# Workspace element types: numbers only; an unknown dtype names the valid ones.
# tilescale-test: -k ws
import tilelang.language as T


@T.prim_func
def ws(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        w0 = T.alloc_global((16,), "bool")
        w1 = T.alloc_global((16,), "floatx")
        w2 = T.alloc_global((16,))
        w3 = T.alloc_barrier_gpu(1)
        bar = T.alloc_barrier_gpu()
        T.init_barrier_gpu(bar[0], 1)
        T.sync_barrier_gpu(bar[0])
