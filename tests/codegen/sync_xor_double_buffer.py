# Stream compaction through the two halves of a double buffer (the shape of DeepSeek-V3.2's
# top-k selector): each round, the threads holding a surviving value of half `cur` append it
# to half `cur ^ 1` at a position taken from an atomic counter.  The read of buf[cur, tx] and
# the write of buf[cur ^ 1, p] sit in a branch that differs between threads, where no barrier
# can go; they never touch the same element (the halves differ: x against x ^ 1 with x the same
# in every thread), so none is needed there.  Between rounds `cur` changes, so the previous
# round's write of buf[cur ^ 1, ...] does conflict with this round's read: a barrier goes at the
# top of the round loop, and the counters' reset is ordered before the atomics.
# tilescale-test: -k compact --arch sm_80
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


@tilelang.jit
def compact(N=256, rounds=4):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Out: T.Tensor((N,), "int32"), Cnt: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=N) as bx:
            tx = T.get_thread_binding()
            buf = T.alloc_shared((2, N), "int32")
            num = T.alloc_shared((2,), "int32")
            buf[0, tx] = A[tx]
            if tx == 0:
                num[0] = N
            for r in T.serial(rounds):
                cur = r % 2
                if tx == 0:
                    num[cur ^ 1] = 0
                n = num[cur]
                if tx < n:
                    v = buf[cur, tx]
                    if v % (r + 2) != 0:
                        p = T.atomic_add(num[cur ^ 1], 1, return_prev=True)
                        buf[cur ^ 1, p] = v
            last = rounds % 2
            if tx < num[last]:
                Out[tx] = buf[last, tx]
            else:
                Out[tx] = -1
            if tx == 0:
                Cnt[0] = num[last]

    return main
