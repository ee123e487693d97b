# A T.Pipelined loop whose body commits cp.async groups itself (T.ptx_commit_group) stays a
# serial loop: the pipeline's own commits would interleave with the user's and its
# "wait_group D-1" would no longer mean "stage k has landed".  Its copies stay synchronous
# and thread_sync orders them; the user's wait lands the hand-issued copy.
# tilescale-test: -k committed
# tilescale-dump: inject_pipeline
import tilelang.language as T


@T.prim_func
def committed(A: T.Tensor((512, 64), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128, 64), "float16")
        t = T.alloc_shared((128, 8), "float16")
        acc = T.alloc_fragment((128, 64), "float32")
        T.clear(acc)
        for ko in T.Pipelined(4, num_stages=2):
            T.copy(A[ko * 128, 0], s)
            T.ptx_cp_async(T.access_ptr(t[tx, 0], "w", 8), T.access_ptr(B[tx, 0], "r", 8), 8)
            T.ptx_commit_group()
            T.ptx_wait_group(0)
            for i, j in T.Parallel(128, 64):
                acc[i, j] += s[i, j] * t[(i + 1) % 128, j % 8]
        T.copy(acc, C)
