# tilescale-test: -k k -D N=4 -D R=5000
import tilelang.language as T


def k(N, R):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[bx] = sum([A[i % 4] for i in range(R)])

    return main
