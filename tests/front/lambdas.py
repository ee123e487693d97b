# Lambdas as small helpers (index maps, combiners), stored in dicts and passed around.
# tilescale-test: -k lam -D M=64 -D N=64
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def lam(M, N, op="add"):
    index = lambda i, j: (j, i)
    ops = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}
    combine = ops[op]
    twice = lambda f: lambda x: f(f(x))
    inc = twice(lambda x: x + 1)

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((N, M), "float32")):
        with T.Kernel(1, threads=128):
            for i, j in T.Parallel(M, N):
                B[index(i, j)] = combine(A[i, j], inc(0))

    return main
