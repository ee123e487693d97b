# -D on a top-level prim_func must name a module constant.
# tilescale-test: -k copy_rows -D K=3
import tilelang
import tilelang.language as T


M = 128
N = 64


@T.prim_func
def copy_rows(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
    with T.Kernel(M // 32, threads=128) as bx:
        for i, j in T.Parallel(32, N):
            B[bx * 32 + i, j] = A[bx * 32 + i, j]
