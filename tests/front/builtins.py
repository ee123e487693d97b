# Python builtins at factory level and in kernels: min max int float abs len range isinstance,
# round, sum, enumerate, bool, str, tuple, list.
# tilescale-test: -k bi -D N=256 -D heads=6
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def bi(N, heads, group=4, scale=0.125):
    valid = min(group, heads)
    rounds = int(float(N) / 64)
    width = max(len(range(valid)), 1)
    total = sum(k for k, _ in enumerate([0] * 3))
    is_int = isinstance(heads, int) and not isinstance(scale, (int, str))
    label = str(valid) + str(round(2.6))
    sizes = list(tuple([1, 2]))

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // 64, threads=64) as bx:
            for i in T.Parallel(64):
                x = A[bx * 64 + i]
                B[bx * 64 + i] = (T.max(x, 0.0) + min(x, 1.0) + abs(x) + float(rounds) + width + total
                                  + (1 if is_int and bool(label) else 0) + len(sizes) + abs(-3))

    return main
