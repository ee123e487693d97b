# T.Parallel over 1, 2 and 3 dimensions with tuple targets.
# tilescale-test: -k par -D D0=4 -D D1=16 -D D2=32
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def par(D0, D1, D2, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((D0, D1, D2), dtype), B: T.Tensor((D0, D1, D2), dtype)):
        with T.Kernel(1, threads=256):
            t3 = T.alloc_fragment((D0, D1, D2), dtype)
            for i, j, k in T.Parallel(D0, D1, D2):
                t3[i, j, k] = A[i, j, k]
            for j, k in T.Parallel(D1, D2):
                t3[0, j, k] = t3[0, j, k] + 1
            for k in T.Parallel(D2):
                t3[1, 0, k] = 0
            T.copy(t3, B)

    return main
