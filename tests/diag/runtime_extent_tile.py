# T.fill / T.copy with extents known only at run time run over the block's threads for global
# and shared buffers; a fragment (no layout can split a run-time extent) is an error.  (A copy
# whose two sizes the compiler cannot show equal, the second call, checks them when it runs.)
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(R: T.Tensor((2,), "int32"), X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32):
        n = R[0]
        f = T.alloc_fragment((64,), "float32")
        T.fill(f[0:n], 0.0)
        T.copy(X[0:n + 1], X[n:n + n])
