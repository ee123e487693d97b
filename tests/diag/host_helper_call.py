# A factory's host code calls a function of a module that is neither beside the kernel file
# nor in the prelude.  The `tilelang` package hands such a call to CPython (host calls); the
# CLI has no host, so the call is the stub's diagnostic at its line.
# tilescale-test: -k scaled -D M=1024
import tilelang
import tilelang.language as T
from my_block_helpers import pick_block


@tilelang.jit(out_idx=[1])
def scaled(M, dtype="float16"):
    block = pick_block(M)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i]

    return main
