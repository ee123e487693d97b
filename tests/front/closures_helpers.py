# Nested plain defs with closures, default and keyword arguments, *args/**kwargs, and helper
# functions that build IR expressions from IR arguments (like dequant helpers).
# tilescale-test: -k dequant -D N=256
import tilelang
import tilelang.language as T


def make_unpacker(nbit, dtype="float16"):
    mask = (1 << nbit) - 1

    def unpack(val, pos, scale=1.0):
        return ((val >> (pos * nbit)) & mask).astype(dtype) * scale

    return unpack


def total(*xs, **opts):
    return sum(xs) + opts.get("bias", 0)


@tilelang.jit(out_idx=[1])
def dequant(N, nbit=4, dtype="float16"):
    per_byte = 8 // nbit
    unpack = make_unpacker(nbit, dtype=dtype)
    width = total(per_byte, 0, bias=0)

    @T.prim_func
    def main(Q: T.Tensor((N,), "uint8"), W: T.Tensor((N * width,), dtype)):
        with T.Kernel(N // 128, threads=128) as bx:
            for i, p in T.Parallel(128, width):
                W[(bx * 128 + i) * width + p] = unpack(Q[bx * 128 + i], p, scale=2.0)

    return main
