# T.ptx_cp_async: each thread issues one 16-byte cp.async of its row (8 float16) through
# T.access_ptr element pointers, and a predicated 8-byte one that zero-fills past the end;
# T.cp_async_barrier_noinc makes the mbarrier phase complete when every thread's copies have
# landed, so after T.barrier_wait a thread may read another thread's row with no
# __syncthreads (thread_sync places none: the user's mbarrier orders the copy).
# tilescale-test: -k cp_rows -D N=256
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit
def cp_rows(N):

    @T.prim_func
    def main(A: T.Tensor((N, 8), "float16"), L: T.Tensor((N + 2, 4), "float16"), B: T.Tensor((N, 12), "float16")):
        with T.Kernel(N // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_shared((128, 16), "float16")
            bar = T.alloc_barrier(arrive_count=128)
            row = bx * 128 + tx
            T.ptx_cp_async(T.access_ptr(s[tx, 0], "w", 8), T.access_ptr(A[row, 0], "r", 8), 8)
            T.ptx_cp_async(T.access_ptr(s[tx, 8], "w", 4), T.access_ptr(L[row + 2, 0], "r", 4), 4,
                           predicate=row + 2 < N)
            T.cp_async_barrier_noinc(bar[0])
            T.barrier_wait(bar[0], 0)
            for j in T.serial(12):
                B[row, j] = s[(tx + 1) % 128, j]

    return main
