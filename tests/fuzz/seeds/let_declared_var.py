import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "int32")):
    with T.Kernel(2, threads=32) as bx:
        off = T.int32()
        T.let(off, bx * 32)
        tx = T.get_thread_binding()
        B[off + tx] = A[off + tx] + off
