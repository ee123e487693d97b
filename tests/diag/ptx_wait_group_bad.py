# T.ptx_wait_group misuse: a count known only at run time (cp.async.wait_group takes an
# immediate) and a negative count.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((128, 8), "float16"), B: T.Tensor((128, 8), "float16"), n: T.int32):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128, 8), "float16")
        T.ptx_cp_async(T.access_ptr(s[tx, 0], "w", 8), T.access_ptr(A[tx, 0], "r", 8), 8)
        T.ptx_commit_group()
        T.ptx_wait_group(n)
        T.ptx_wait_group(-1)
