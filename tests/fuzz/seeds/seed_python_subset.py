# tilescale-test: -k kern -D M=128 -D N=64
import tilelang
import tilelang.language as T


def helper(x, y=2, *args, scale=1, **kw):
    total = x * y + sum_list([a for a in args if a > 0]) * scale
    return total + len(kw)


def sum_list(xs):
    s = 0
    for v in xs:
        if v % 2 == 0:
            continue
        s += v
        if s > 100:
            break
    else:
        s -= 1
    return s


@tilelang.jit(out_idx=[-1], pass_configs={"tl.disable_tma_lower": True})
def kern(M, N, block=32, dtype="float16"):
    cfg = {"a": 1, "b": [1, 2, 3]}
    names = ", ".join(f"{k}={v!r}" for k, v in cfg.items())
    sq = {i: i * i for i in range(4)}
    t = (M, N)
    m, n = t
    assert M % block == 0, f"M={M} must divide {block}"
    f = lambda q: q // 2 + 1
    depth = helper(3, 4, 5, 6, scale=f(4), extra=True)
    acc = "float32" if dtype.startswith("float") else "int32"
    i = 0
    while i < 3:
        i += 1

    @T.macro
    def twice(buf, r, c):
        buf[r, c] = buf[r, c] * 2

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            s = T.alloc_shared((block, N), dtype)
            fr = T.alloc_fragment((block, N), acc)
            v = T.alloc_var("int32")
            v = 0
            T.copy(A[bx * block, 0], s)
            T.copy(s, fr)
            for r, c in T.Parallel(block, N):
                twice(fr, r, c)
                fr[r, c] = T.if_then_else(fr[r, c] > 0, fr[r, c], -fr[r, c])
            for k in T.serial(4):
                if bx > k:
                    v += k
                else:
                    v -= 1
            T.copy(fr, B[bx * block, 0])

    return main
