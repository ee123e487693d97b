# A T.Parallel loop over a fragment that every thread holds a copy of (row statistics out of
# T.reduce_sum) which also stores to global memory: every replica computes its own copy of
# mean/rstd (the next loop reads them in all threads) and only the global stores are
# guarded to one replica.  (The whole loop was once guarded, so only thread 0 had the
# statistics and the normalized output was wrong past its own columns.)
# tilescale-test: -k stats -D M=8 -D N=256
# tilescale-dump: lower_tile_ops

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-2, -1])
def stats(M, N, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype), Mean: T.Tensor((M,), dtype)):
        with T.Kernel(M, threads=64) as bx:
            x = T.alloc_fragment((1, N), dtype)
            s = T.alloc_fragment((1,), dtype)
            mean = T.alloc_fragment((1,), dtype)
            T.copy(X[bx, 0], x)
            T.reduce_sum(x, s, dim=1)
            for i in T.Parallel(1):
                mean[i] = s[i] / N
                Mean[bx + i] = mean[i]
            for i, j in T.Parallel(1, N):
                Y[bx + i, j] = x[i, j] - mean[i]

    return main
