# A misspelt --emit kind is a usage error that lists the kinds (stats among them).
# tilescale-test: -k copy_rows --emit stat
# tilescale-exit: 2
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_rows(M=256, N=128, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(M // 64, threads=128) as bx:
            T.copy(A[bx * 64:(bx + 1) * 64, :], B[bx * 64:(bx + 1) * 64, :])

    return main
