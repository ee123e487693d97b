# A T.ptx_wait_group followed by the kernel's own T.sync_threads(): that barrier already makes
# the landed copies visible to every thread, so thread_sync adds none after the wait (one
# barrier in all, between the wait and the neighbour's read).
# tilescale-test: -k synced
# tilescale-dump: thread_sync
import tilelang.language as T


@T.prim_func
def synced(A: T.Tensor((128, 8), "float16"), B: T.Tensor((128, 8), "float16")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128, 8), "float16")
        T.ptx_cp_async(T.access_ptr(s[tx, 0], "w", 8), T.access_ptr(A[tx, 0], "r", 8), 8)
        T.ptx_commit_group()
        T.ptx_wait_group(0)
        T.sync_threads()
        for j in T.serial(8):
            B[tx, j] = s[(tx + 1) % 128, j]
