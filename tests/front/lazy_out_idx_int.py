# Lazy factory with an integer out_idx (negative: counted from the end).
# tilescale-test: -k copy_kernel -D N=4096
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def copy_kernel(N, block=256, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i]

    return main
