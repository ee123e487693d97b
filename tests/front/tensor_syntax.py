# Parameter annotations in all spellings: T.Tensor(...), T.Tensor[...], T.Buffer(...), a shape list.
# tilescale-test: -k spellings -D M=64 -D N=32
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def spellings(M, N, dtype="float32"):
    shape = [M, N]

    @T.prim_func
    def main(A: T.Tensor(shape, dtype), B: T.Tensor[(M, N), dtype], C: T.Buffer((M, N), "float32"),
             D: T.Tensor((M, N), T.float32)):
        with T.Kernel(M, threads=32) as bx:
            for j in T.Parallel(N):
                D[bx, j] = A[bx, j] + B[bx, j] + C[bx, j]

    return main
