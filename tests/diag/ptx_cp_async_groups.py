# T.ptx_commit_group / T.ptx_wait_group (minference's prefetch): refused, since thread_sync
# cannot place the barrier that makes user-managed cp.async groups visible to other threads.
# tilescale-test: -k groups
import tilelang.language as T


@T.prim_func
def groups(A: T.Tensor((128, 64), "float16"), B: T.Tensor((128, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128, 64), "float16")
        for i, j in T.Parallel(128, 64, prefer_async=True):
            S[i, j] = A[i, j]
        T.ptx_commit_group()
        T.ptx_wait_group(0)
        T.copy(S, B)
