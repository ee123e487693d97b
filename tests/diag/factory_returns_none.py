# A factory that forgets to return its prim_func.
# tilescale-test: -k rowwise -D M=256 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowwise(M, N, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128) as bx:
            B[0, 0] = A[0, 0]
