# tests/codegen/sync_parity_branch.py with the write two elements on (s[tx + 2]): thread 0
# writes the element thread 2 reads, both in the branch of the even threads, where no barrier
# can go.  Refused.
# tilescale-test: -k parity_bad

import tilelang
from tilelang import language as T


@tilelang.jit
def parity_bad():
    @T.prim_func
    def main(Out: T.Tensor((34,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            s = T.alloc_shared((34,), "float32", scope="shared")
            if tx % 2 == 0:
                a = s[tx]
                s[tx + 2] = a
            Out[tx] = s[tx]

    return main
