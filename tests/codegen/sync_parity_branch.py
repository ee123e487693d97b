# TileLang issue 1026: in a branch only the even threads run, each reads its own element and
# writes its odd neighbour's.  Read elements (even) and written ones (odd) never meet, which the
# branch's condition shows (evaluated for every thread with the accesses): no barrier is needed,
# and none can go there.  The else branch (odd threads, on another buffer) likewise.
# tests/diag/sync_parity_branch_conflict.py is the same shape with a real conflict.
# tilescale-test: -k parity --arch sm_90a
# tilescale-dump: thread_sync

import tilelang
from tilelang import language as T


@tilelang.jit
def parity():
    @T.prim_func
    def main(Out: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            s = T.alloc_shared((32,), "float32", scope="shared")
            t = T.alloc_shared((32,), "float32", scope="shared")
            if tx % 2 == 0:
                a = s[tx]
                s[tx ^ 1] = a
            else:
                b = t[tx]
                t[tx ^ 1] = b + 1.0
            Out[tx] = s[tx] + t[tx]

    return main
