# Barriers reused many times (make check-dist, host program dist_prims.c).
#
# barrier_reuse: `iters` rounds in one kernel; per round every rank writes base + it into slot
# [rank] of every rank's Slots, crosses T.barrier_blocks (fence=True: weak stores, the barrier
# fences) or T.sync_blocks (fence=False: release stores, no fence), then every rank checks all
# its slots (a stale one counts in Bad[0]) and crosses the barrier again before the next round
# overwrites them.  The host launches it several times: the barrier buffer must end at zero.
#
# grid_sync: T.sync_grid (cooperative launch, done by the runtime) between a phase where each
# block writes A[bx] and one where it reads another block's entry, `iters` times; a wrong
# read counts in Bad[0].  With nb larger than what fits on the GPU at once the launch must be
# refused with the runtime's occupancy error (not hang).
import tilelang
import tilelang.language as T

MAXR = 64


@tilelang.jit
def barrier_reuse(iters=64, fence=True):

    @T.prim_func
    def main(bar: T.Tensor((MAXR,), "int32"), Slots: T.Tensor((MAXR,), "int32"), Bad: T.Tensor((2,), "int32"),
             base: T.int32):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            rank = T.get_rank()
            nr = T.get_num_ranks()
            for it in T.serial(iters):
                if tx < nr:
                    if fence:
                        T.st(Slots[rank], base + it, dst_pe=tx)
                    else:
                        T.st(Slots[rank], base + it, sem="release", scope="sys", dst_pe=tx)
                if fence:
                    T.barrier_blocks(bar[0])
                else:
                    T.sync_blocks(bar[0])
                if tx < nr:
                    if Slots[tx] != base + it:
                        T.atom_add(Bad[0], 1)
                if fence:
                    T.barrier_blocks(bar[0])
                else:
                    T.sync_blocks(bar[0])

    return main


@tilelang.jit
def grid_sync(nb=64, iters=16, threads=256):

    @T.prim_func
    def main(A: T.Tensor((nb,), "int32"), Bad: T.Tensor((2,), "int32"), base: T.int32):
        with T.Kernel(nb, threads=threads) as bx:
            tx = T.get_thread_binding()
            for it in T.serial(iters):
                if tx == 0:
                    A[bx] = base + it * nb + bx
                T.sync_grid()
                if tx == 0:
                    if A[(bx + it + 1) % nb] != base + it * nb + (bx + it + 1) % nb:
                        T.atom_add(Bad[0], 1)
                T.sync_grid()

    return main
