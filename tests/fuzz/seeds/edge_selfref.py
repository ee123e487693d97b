import tilelang.language as T


def k(N):
    a = []
    a.append(a)
    b = []
    b.append(b)
    same = a == b
    s = f"{a}"
    d = {}
    d["x"] = d
    t = str(d)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[bx] = 1.0

    return main
