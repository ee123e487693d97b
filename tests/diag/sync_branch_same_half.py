# The double-buffer pattern of tests/codegen/sync_xor_double_buffer.py with the write going to
# the half being read (buf[cur, p] instead of buf[cur ^ 1, p]): one thread's append overwrites
# an element another thread of the branch is about to read.  No barrier can go in the branch,
# so the compiler refuses it.
# tilescale-test: -k compact_bad -D N=256

import tilelang
import tilelang.language as T


@tilelang.jit
def compact_bad(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Out: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=N) as bx:
            tx = T.get_thread_binding()
            buf = T.alloc_shared((2, N), "int32")
            num = T.alloc_shared((2,), "int32")
            buf[0, tx] = A[tx]
            if tx == 0:
                num[0] = N
            for r in T.serial(2):
                cur = r % 2
                if tx == 0:
                    num[cur ^ 1] = 0
                n = num[cur]
                if tx < n:
                    v = buf[cur, tx]
                    if v % 2 != 0:
                        p = T.atomic_add(num[cur ^ 1], 1, return_prev=True)
                        buf[cur, p] = v
            Out[tx] = buf[0, tx]

    return main
