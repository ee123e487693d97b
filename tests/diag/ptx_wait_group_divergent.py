# A T.ptx_wait_group inside a branch only some threads take, whose landed copies other
# threads' rows are then read there: the barrier the read needs cannot follow the wait inside
# the branch (the wait orders only this thread's copies), so the kernel is refused.
# tilescale-test: -k divergent
import tilelang.language as T


@T.prim_func
def divergent(A: T.Tensor((128, 8), "float16"), B: T.Tensor((128, 8), "float16")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128, 8), "float16")
        T.ptx_cp_async(T.access_ptr(s[tx, 0], "w", 8), T.access_ptr(A[tx, 0], "r", 8), 8)
        T.ptx_commit_group()
        if tx < 64:
            T.ptx_wait_group(0)
            for j in T.serial(8):
                B[tx, j] = s[tx + 64, j]
