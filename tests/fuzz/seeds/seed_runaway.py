# tilescale-test: -k k -D N=64
import tilelang.language as T


def rec(n):
    return rec(n + 1) if n >= 0 else 0


def k(N):
    big = [0] * 10**9
    s = "ab" * 10**9
    x = 0
    while True:
        x += 1
    for i in range(10**12):
        x += i
    rec(0)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[bx] = 1.0

    return main
