# Several T.Kernel blocks in one prim_func are launched in order (split + combine).
# tilescale-test: -k two_phase -D N=1024
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def two_phase(N, block=256):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Tmp: T.Tensor((N,), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=128) as bx:
            for i in T.Parallel(block):
                Tmp[bx * block + i] = A[bx * block + i] * A[bx * block + i]
        with T.Kernel(N // block, threads=128) as bx:
            for i in T.Parallel(block):
                Out[bx * block + i] = T.sqrt(Tmp[bx * block + i])

    return main
