# T.alloc_reducer / T.finalize_reducer: per-thread partial row sums (a whole local copy per
# thread, cleared by every thread) accumulated by a T.Parallel nest, then combined across the
# block: a warp butterfly, one shared [warps, rows] scratch, a barrier, the warps in order.
# The small nest (4 x 8 iterations on 128 threads) is replicated: only replica 0 adds, so each
# iteration counts once.  A max reducer starts from -inf.
# tilescale-test: -k row_sums -D M=64 -D N=64
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit
def row_sums(M, N, block_M=4, block_N=8):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32"), X: T.Tensor((M,), "float32")):
        with T.Kernel(M // block_M, threads=128) as bx:
            acc = T.alloc_reducer((block_M,), "float32", replication="all")
            mx = T.alloc_reducer((block_M,), "float32", op="max")
            T.clear(acc)
            T.fill(mx, -T.infinity("float32"))
            for k in T.serial(N // block_N):
                for i, j in T.Parallel(block_M, block_N):
                    acc[i] += A[bx * block_M + i, k * block_N + j]
                    mx[i] = T.max(mx[i], A[bx * block_M + i, k * block_N + j])
            T.finalize_reducer(acc)
            T.finalize_reducer(mx)
            T.copy(acc, S[bx * block_M])
            T.copy(mx, X[bx * block_M])

    return main
