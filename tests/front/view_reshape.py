# T.view / T.reshape: a buffer aliasing another's memory with a new shape (same bit size).
# tilescale-test: -k views -D N=64
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def views(N, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((N, N), dtype), B: T.Tensor((N * N,), dtype)):
        with T.Kernel(1, threads=128):
            flat_a = T.reshape(A, (N * N,))
            for i in T.Parallel(N * N):
                B[i] = flat_a[i] * 2

    return main
