# tilescale-test: -k k -D N=64 -D dtype=float16 -D shape=(4,8)
import math
import tilelang
import tilelang.language as T


def k(N, dtype, shape):
    xs = [3, 1, 2]
    a = min(xs), max(xs), min(4, 2, 9), max([]) if False else 0
    b = abs(-3), int("12"), int(3.9), float("1.5"), bool(0), str(12), len("abc"), round(2.5), sum(xs)
    c = [i * v for i, v in enumerate(xs)] + [p + q for p, q in zip(xs, xs)]
    d = tuple(xs), list((1, 2)), dict(a=1), {"k": 1}.get("z", 4), list({"k": 2}.items())
    e = "a,b".split(","), "-".join(["x", "y"]), "abc".replace("b", "B"), " s ".strip(), "X".lower()
    f = "float16".startswith("float"), "f16".endswith("16"), "12".isdigit()
    g = math.sqrt(16), math.log2(8), math.ceil(2.1), math.floor(-2.1), math.pow(2, 3), math.exp(0)
    h = xs[-1], xs[::-1], xs[1:], xs[:10], xs[5:2], "abc"[1], (1, 2, 3)[-3]
    (q, r), s = (1, 2), 3
    isinstance(N, int) and isinstance(dtype, (str, int))
    xs[0] = 5
    del xs[0]
    m, n = shape

    @T.prim_func
    def main(A: T.Tensor((N, m, n), dtype), B: T.Tensor((N,), "float32")):
        with T.Kernel(N, threads=(32, 2)) as bx:
            tx = T.get_thread_binding(0)
            acc = T.alloc_local((2,), "float32")
            acc[0] = T.clamp(T.cast(A[bx, 0, 0], "float32"), -1.0, 1.0)
            acc[1] = T.max_value("float32") if N > 1 else T.min_value("float32")
            B[bx] = T.floordiv(bx, 2) + T.floormod(bx, 3) + T.truncdiv(bx, 2) + acc[0] * acc[1]
            T.atomic_max(B[0], acc[0])
            T.sync_threads()

    return main
