# T.ptx_commit_group / T.ptx_wait_group around hand-issued T.ptx_cp_async copies (minference's
# prefetch, double-buffered): thread_sync counts each copy as a write of its stage when issued
# (the barrier at the loop top: the previous iteration's reads of that stage are done) and
# every wait as the point where the copies land (the barrier after the wait, before a thread
# reads its neighbour's row); __syncthreads before the wait would not order copies in flight.
# tilescale-test: -k rows_groups -D N=512
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit
def rows_groups(N):
    tiles = N // 128

    @T.prim_func
    def main(A: T.Tensor((N, 64), "float16"), B: T.Tensor((128, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_shared((2, 128, 64), "float16")
            acc = T.alloc_local((64,), "float32")
            for j in T.serial(64):
                acc[j] = 0
            for c in T.serial(8):
                T.ptx_cp_async(T.access_ptr(s[0, tx, c * 8], "w", 8), T.access_ptr(A[tx, c * 8], "r", 8), 8)
            T.ptx_commit_group()
            for t in T.serial(tiles):
                if t + 1 < tiles:
                    for c in T.serial(8):
                        T.ptx_cp_async(T.access_ptr(s[(t + 1) % 2, tx, c * 8], "w", 8),
                                       T.access_ptr(A[(t + 1) * 128 + tx, c * 8], "r", 8), 8)
                T.ptx_commit_group()
                T.ptx_wait_group(1)
                for j in T.serial(64):
                    acc[j] += s[t % 2, (tx + 1) % 128, j]
            for j in T.serial(64):
                B[tx, j] = acc[j]

    return main
