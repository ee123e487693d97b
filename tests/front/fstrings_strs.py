# str methods used on dtype names (isdigit, join, startswith, replace, split) and f-strings.
# tilescale-test: -k strs -D N=128 -D storage="uint8"
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def strs(N, storage="int8", out_dtype="float16"):
    bits = int("".join(c for c in storage if c.isdigit()))
    signed = not storage.startswith("u")
    acc = out_dtype.replace("16", "32")
    name = f"{storage}_to_{acc}_{bits}b"
    parts = name.split("_")
    assert parts[0] == storage and len(parts) == 4, f"bad name {name!r}"

    @T.prim_func
    def main(A: T.Tensor((N,), storage), B: T.Tensor((N,), acc)):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(N):
                B[i] = T.cast(A[i], acc) * (bits if signed else -bits)

    return main
