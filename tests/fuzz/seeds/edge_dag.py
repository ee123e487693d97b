import tilelang.language as T


def k(N):
    a = [1]
    b = [1]
    for i in range(60):
        a = [a, a]
        b = [b, b]
    s = str(a)
    same = a == b
    f = f"{b}"
    c = a in [b, b]

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[bx] = len(s) + 0.0

    return main
