# @T.macro helpers are inlined; they may take buffers, emit IR and return a value; a macro
# may call another macro.
# tilescale-test: -k with_macros -D M=64 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def with_macros(M, N, dtype="float32"):

    @T.macro
    def row_max(src, dst):
        T.reduce_max(src, dst, dim=1)

    @T.macro
    def scaled(x, s):
        return x * s

    @T.macro
    def normalize(buf, m):
        row_max(buf, m)
        for i, j in T.Parallel(M, N):
            buf[i, j] = scaled(buf[i, j] - m[i], 0.5)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128):
            x = T.alloc_fragment((M, N), dtype)
            m = T.alloc_fragment((M,), dtype)
            T.copy(X, x)
            normalize(x, m)
            T.copy(x, Y)

    return main
