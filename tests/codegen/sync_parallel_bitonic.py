# A bitonic sort in shared memory, one compare-and-swap step per T.Parallel loop: iteration i
# swaps elements i and j = i ^ stride under a condition on the thread's own data.  By
# T.Parallel's contract an iteration's accesses do not conflict with the loop's other
# iterations (the pair (i, j) belongs to iteration min(i, j)), so the swap branch, which differs
# between threads and could hold no barrier, needs none (thread_sync once refused it).  Barriers
# go between consecutive steps (the top of the `jj` loop), around the loops that fill and read
# the buffers, and (the analysis of uniform code, which does not use the contract) before each
# of a thread's two repetitions of the step (the unrolled o1 loop).
# tilescale-test: -k bitonic --arch sm_80
# tilescale-dump: thread_sync

import math

import tilelang
import tilelang.language as T


@tilelang.jit
def bitonic(N=256, threads=128):
    LOG = int(round(math.log2(N)))

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), I: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            V = T.alloc_shared((N,), "float32")
            X = T.alloc_shared((N,), "int32")
            for i in T.Parallel(N):
                V[i] = A[i]
                X[i] = i
            for k in T.serial(LOG):
                for jj in T.serial(k + 1):
                    for i in T.Parallel(N):
                        j = i ^ (1 << (k - jj))
                        up = (i & (2 << k)) == 0
                        if i < j and ((up and V[i] > V[j]) or (not up and V[i] < V[j])):
                            v = V[i]
                            V[i] = V[j]
                            V[j] = v
                            x = X[i]
                            X[i] = X[j]
                            X[j] = x
            for i in T.Parallel(N):
                B[i] = V[i]
                I[i] = X[i]

    return main
