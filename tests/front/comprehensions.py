# Factory-level Python data: list/dict comprehensions, generator expressions, tuple unpacking,
# dict and list literals and indexing, slicing, starred unpacking.
# tilescale-test: -k comp -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def comp(N, sizes=(32, 64, 128)):
    by_name = {f"b{s}": s for s in sizes}
    squares = [s * s for s in sizes if s < 128]
    block, *rest = sizes
    first, second = squares[0], squares[-1]
    lo, hi = min(x for x in sizes), max(sizes)
    table = [[0, 1], [2, 3]]
    weights = dict(zip(["w0", "w1"], [0.25, 0.75]))
    picked = sizes[1:][0]

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = (A[bx * block + i] * weights["w0"] + by_name["b64"] + len(rest) + first
                                     + second * 0 + lo + hi + table[1][0] + picked)

    return main
