# Every reduction: sum/max/min/absmax/abssum, dim 0 and 1 (negative too), clear=False, keepdim.
# tilescale-test: -k reductions -D M=64 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def reductions(M, N, dtype="float32"):

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), R: T.Tensor((M,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=256):
            x = T.alloc_fragment((M, N), dtype)
            r = T.alloc_fragment((M,), dtype)
            r2 = T.alloc_fragment((M, 1), dtype)
            c = T.alloc_fragment((N,), dtype)
            T.copy(X, x)
            T.reduce_max(x, r, dim=1)
            T.reduce_sum(x, r, dim=-1, clear=False)
            T.reduce_absmax(x, r2, dim=1)
            T.reduce_abssum(x, c, dim=0)
            T.reduce_min(x, c, dim=0, clear=False)
            for i in T.Parallel(M):
                r[i] = r[i] + r2[i, 0]
            T.copy(r, R)
            T.copy(c, C)

    return main
