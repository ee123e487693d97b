# T.alloc_local(0, ...) (TVM allows an empty buffer; BitBLAS kernels keep one for a reduction
# they only trace on some configurations) has no storage: reading or writing it is refused.
# tilescale-test: -k empty
import tilelang.language as T


@T.prim_func
def empty(A: T.Tensor((32,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        acc = T.alloc_local(0, T.float32)
        acc[0] = A[0]
        A[1] = acc[0]
