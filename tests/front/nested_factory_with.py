# A factory whose @T.prim_func is built by a nested helper (`return kernel_func(...)`, the
# block-sparse attention style) is a lazy factory: out_idx counts the prim_func's parameters.
# `with A, B:` is `with A: with B:` (one context manager that does nothing: IKET markers),
# and TVMScript's lowercase T.parallel nests like T.Parallel.
# tilescale-test: -k scale_rows -D M=256 -D N=64
import tilelang
import tilelang.language as T
from contextlib import nullcontext
from tilelang.tools.cuda import iket


@tilelang.jit(out_idx=[1])
def scale_rows(M, N, dtype="float32"):
    def kernel_func(block_M, threads):
        @T.prim_func
        def scale_rows(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx, nullcontext(7) as seven, iket.range("all"):
                iket.mark("enter", payload=iket.payload(bx, dtype="int32"))
                for i in T.parallel(block_M):
                    for j in T.parallel(N):
                        B[bx * block_M + i, j] = A[bx * block_M + i, j] * seven

        return scale_rows

    return kernel_func(32, 128)
