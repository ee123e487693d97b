import tilelang.language as T


def k(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.unroll(N):
                A[i] = 1.0
            s = T.alloc_shared((N,), "float32")
            f = T.alloc_fragment((N,), "float32")
            T.fill(f, 0)
            for i in T.Parallel(N):
                f[i] = A[i]
            T.copy(f, s)
            T.copy(s, A)
            for i in range(N):
                A[i] = A[i] + 1

    return main
