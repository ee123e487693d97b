# Barriers reused many times (make check-dist, host program dist_prims.c).
#
# barrier_reuse: `iters` rounds in one kernel; per round every rank writes base + it into slot
# [rank] of every rank's Slots, crosses T.barrier_blocks (fence=True: weak stores, the barrier
# fences) or T.sync_blocks (fence=False: release stores, no fence), then every rank checks all
# its slots (a stale one counts in Bad[0]) and crosses the barrier again before the next round
# overwrites them.  The host launches it several times: the barrier buffer must end at zero.
#
# shmem_barriers: the argument-less NVSHMEM-family barriers (on the nvshmem backend with the
# debug timeout compiled in, as make check-dist does, these are ours, not NVSHMEM's), `iters`
# rounds like barrier_reuse; form 0: T.int_p + barrier_all_block, 1: T.int_p + barrier_all
# from one thread, 2: release stores + sync_all_block, 3: T.int_p + barrier_all_warp.
#
# collectives: T.fcollect_block of 4 int32 per pe into Gath, T.broadcast_block of 4 int32
# from pe `root` into Bcast (the host checks both).
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


@tilelang.jit
def shmem_barriers(iters=32, form=0):

    @T.prim_func
    def main(Slots: T.Tensor((MAXR,), "int32"), Bad: T.Tensor((2,), "int32"), base: T.int32):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            pe = T.get_pe()
            npes = T.get_pe_num()
            for it in T.serial(iters):
                if tx < npes:
                    if form == 2:
                        T.st(Slots[pe], base + it, sem="release", scope="sys", dst_pe=tx)
                    else:
                        T.int_p(T.address_of(Slots[pe]), base + it, tx)
                for k in T.serial(2):  # cross, check, cross again before the next round's writes
                    if form == 0:
                        T.barrier_all_block()
                    elif form == 1:
                        T.sync_threads()
                        if tx == 0:
                            T.barrier_all()
                        T.sync_threads()
                    elif form == 2:
                        T.sync_all_block()
                    else:
                        T.sync_threads()
                        if tx < 32:
                            T.barrier_all_warp()
                        T.sync_threads()
                    if k == 0 and tx < npes:
                        if Slots[tx] != base + it:
                            T.atom_add(Bad[0], 1)

    return main


@tilelang.jit
def collectives(root=0):

    @T.prim_func
    def main(Src: T.Tensor((4,), "int32"), Gath: T.Tensor((4 * MAXR,), "int32"), Bcast: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            T.fcollect_block(T.Team.WORLD, Gath, Src, 4)
            T.broadcast_block(T.Team.WORLD, Bcast, Src, 4, root)

    return main
