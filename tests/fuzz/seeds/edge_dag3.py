import tilelang.language as T
def dbl(e, n):
    return e if n == 0 else dbl(e + e, n - 1)
def k(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[bx] = dbl(A[0], 60)
    return main
