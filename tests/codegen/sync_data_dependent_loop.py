# A loop whose trip count is loaded from global memory at a block-uniform index (a group's
# row count, a sequence length): every thread runs it the same number of times, so the
# barriers that order the element-wise shared stores before the GEMM, and the GEMM before
# the next iteration's stores, go INSIDE the loop.  (They once went around it, because any
# load in a loop bound counted as thread-dependent: the GEMM read half-written tiles.)
# The tail loop's bound reads `count` from shared memory written by thread 0's branch,
# so a barrier precedes that loop too.
# tilescale-test: -k grouped --arch sm_80
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


@tilelang.jit
def grouped(G=2, R=256, M=64, N=64, bK=32, dtype="float16"):
    @T.prim_func
    def main(X: T.Tensor((R, M), dtype), Y: T.Tensor((R, N), dtype), sizes: T.Tensor((G,), "int32"),
             W: T.Tensor((G * M, N), dtype)):
        with T.Kernel(G, threads=128) as g:
            Xs = T.alloc_shared((bK, M), dtype)
            Ys = T.alloc_shared((bK, N), dtype)
            count = T.alloc_shared((1,), "int32")
            acc = T.alloc_fragment((M, N), "float32")
            T.clear(acc)
            for k in T.serial(T.ceildiv(sizes[g], bK)):
                for i, j in T.Parallel(bK, M):
                    Xs[i, j] = X[k * bK + i, j]
                for i, j in T.Parallel(bK, N):
                    Ys[i, j] = Y[k * bK + i, j]
                T.gemm(Xs, Ys, acc, transpose_A=True)
            tx = T.get_thread_binding()
            if tx == 0:
                count[0] = sizes[g] // 2
            T.copy(acc, W[g * M, 0])
            for k in T.serial(count[0]):
                W[g * M, k % N] = X[k, 0]

    return main
