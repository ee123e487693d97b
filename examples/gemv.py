# GEMV: y[N] = A[N, K] @ x[K] (memory bound: no tensor cores).
#
# Each block owns block_N rows; its threads sweep K in block_K chunks, multiply the rows
# by the matching slice of x in registers, and a T.reduce_sum over the K axis of the
# chunk folds the products into per-row partial sums kept across the loop.
#
# tilescale-test: -k gemv -D N=1024 -D K=1024
#
# Run with TileScale:  tilescale run examples/gemv.py -D N=16384 -D K=16384

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemv(N, K, block_N=8, block_K=256, threads=256, dtype="float16", accum_dtype="float32"):

    @T.prim_func
    def main(
            A: T.Tensor((N, K), dtype),
            x: T.Tensor((K,), dtype),
            y: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bx:
            a_local = T.alloc_fragment((block_N, block_K), accum_dtype)
            partial = T.alloc_fragment((block_N,), accum_dtype)
            acc = T.alloc_fragment((block_N,), accum_dtype)
            T.clear(acc)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[bx * block_N, k * block_K], a_local)
                for i, j in T.Parallel(block_N, block_K):
                    a_local[i, j] = a_local[i, j] * x[k * block_K + j]
                T.reduce_sum(a_local, partial, dim=1)
                for i in T.Parallel(block_N):
                    acc[i] += partial[i]
            T.copy(acc, y[bx * block_N])

    return main
