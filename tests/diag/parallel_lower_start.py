# TVMScript's T.parallel(start, stop): parallel nests start at 0 here.
# tilescale-test: -k shifted -D N=64
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def shifted(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.parallel(1, N):
                B[i] = A[i]

    return main
