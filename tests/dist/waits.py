# Waits and signals between ranks (make check-dist, host program dist_prims.c).
#
# waits: T.wait_eq/ne/ge/le/gt/lt on 32- or 64-bit flags.  Block 0 of rank w is the writer for
# the next rank: per relation i it stores a value that does NOT satisfy the wait (V[i, 1]),
# spins a while, stores data, then the satisfying value (V[i, 2]) with a release store.  Block
# 1 of the next rank waits (relation i, expected V[i, 3]) and must then see the data, and the
# flag holding the final value.  The host table V[i] = {init, wrong, target, expected, data}
# is chosen so that a signed/unsigned mix-up or a lost upper word satisfies the wait early
# (and then the data check fails).  remote_wait=True: flags and data stay on the writer and
# the waiter polls them remotely (the peer argument).  Seen[i]: data; Seen[6 + i]: flag.
#
# signals: the NVSHMEM family (ts::shmem; real NVSHMEM on the nvshmem backend).  Thread 0 of
# block 0 puts Src into the next pe's Dst, fences, and raises Sig[0] = rnd (SIGNAL_SET); it
# adds 1 to Sig[1] on every pe K times (SIGNAL_ADD, so each pe gets npes * K per round); and
# sets Sig[2..5] on the next pe.  Block 1 waits with every CmpType (EQ, GE, GT, LE, LT, NE),
# copies Dst to Out after the EQ wait, and records what each wait returned in Seen.
import tilelang
import tilelang.language as T


@tilelang.jit
def waits(dtype="int32", remote_wait=False, delay=2000):
    STRIDE = 32 if dtype == "int32" else 16

    @T.prim_func
    def main(F: T.Tensor((6 * STRIDE,), dtype), D: T.Tensor((6 * STRIDE,), dtype), V: T.Tensor((6, 5), dtype),
             Seen: T.Tensor((12,), dtype), Dly: T.Tensor((4,), "int32")):
        with T.Kernel(2, threads=32) as bx:
            tx = T.get_thread_binding()
            rank = T.get_rank()
            nr = T.get_num_ranks()
            right = (rank + 1) % nr
            left = (rank + nr - 1) % nr
            wpe = -1 if remote_wait else right  # where the writer stores
            rpe = left if remote_wait else -1  # where the waiter polls
            d = T.alloc_var("int32")
            if bx == 0:
                if tx == 0:
                    for i in T.serial(6):
                        T.st(F[i * STRIDE], V[i, 1], sem="relaxed", scope="sys", dst_pe=wpe)
                        for k in T.serial(delay):
                            T.ld(Dly[k % 4], d, sem="volatile")
                        T.st(D[i * STRIDE], V[i, 4] + T.cast(rank, dtype), dst_pe=wpe)
                        T.st(F[i * STRIDE], V[i, 2], sem="release", scope="sys", dst_pe=wpe)
            else:
                if tx == 0:
                    T.wait_eq(F[0 * STRIDE], V[0, 3], rpe)
                    T.ld(D[0 * STRIDE], Seen[0], src_pe=rpe)
                    T.ld(F[0 * STRIDE], Seen[6], sem="relaxed", scope="sys", src_pe=rpe)
                    T.wait_ne(F[1 * STRIDE], V[1, 3], rpe)
                    T.ld(D[1 * STRIDE], Seen[1], src_pe=rpe)
                    T.ld(F[1 * STRIDE], Seen[7], sem="relaxed", scope="sys", src_pe=rpe)
                    T.wait_ge(F[2 * STRIDE], V[2, 3], rpe)
                    T.ld(D[2 * STRIDE], Seen[2], src_pe=rpe)
                    T.ld(F[2 * STRIDE], Seen[8], sem="relaxed", scope="sys", src_pe=rpe)
                    T.wait_le(F[3 * STRIDE], V[3, 3], rpe)
                    T.ld(D[3 * STRIDE], Seen[3], src_pe=rpe)
                    T.ld(F[3 * STRIDE], Seen[9], sem="relaxed", scope="sys", src_pe=rpe)
                    T.wait_gt(F[4 * STRIDE], V[4, 3], rpe)
                    T.ld(D[4 * STRIDE], Seen[4], src_pe=rpe)
                    T.ld(F[4 * STRIDE], Seen[10], sem="relaxed", scope="sys", src_pe=rpe)
                    T.wait_lt(F[5 * STRIDE], V[5, 3], rpe)
                    T.ld(D[5 * STRIDE], Seen[5], src_pe=rpe)
                    T.ld(F[5 * STRIDE], Seen[11], sem="relaxed", scope="sys", src_pe=rpe)

    return main


@tilelang.jit
def signals(N=1000):

    @T.prim_func
    def main(Src: T.Tensor((N,), "float16"), Dst: T.Tensor((N,), "float16"), Out: T.Tensor((N,), "float16"),
             Sig: T.Tensor((8,), "uint64"), Seen: T.Tensor((8,), "uint64"), K: T.int32, rnd: T.int32):
        with T.Kernel(2, threads=32) as bx:
            tx = T.get_thread_binding()
            pe = T.get_pe()
            npes = T.get_pe_num()
            right = (pe + 1) % npes
            if bx == 0:
                if tx == 0:
                    T.putmem(T.address_of(Dst[0]), T.address_of(Src[0]), N * 2, right)
                    T.fence()
                    T.signal_op(T.address_of(Sig[0]), rnd, T.Amo.SIGNAL_SET, right)
                    for p in T.serial(npes):
                        for k in T.serial(K):
                            T.signal_op(T.address_of(Sig[1]), 1, T.Amo.SIGNAL_ADD, p)
                    T.signal_op(T.address_of(Sig[2]), rnd * 4, T.Amo.SIGNAL_SET, right)
                    T.signal_op(T.address_of(Sig[3]), rnd, T.Amo.SIGNAL_SET, right)
                    T.signal_op(T.address_of(Sig[4]), rnd, T.Amo.SIGNAL_SET, right)
                    T.signal_op(T.address_of(Sig[5]), rnd, T.Amo.SIGNAL_SET, right)
            else:
                if tx == 0:
                    Seen[0] = T.signal_wait_until(T.address_of(Sig[0]), T.CmpType.EQ, rnd)
                    for i in T.serial(N):
                        Out[i] = Dst[i]
                    Seen[1] = T.signal_wait_until(T.address_of(Sig[1]), T.CmpType.GE, rnd * npes * K)
                    Seen[2] = T.signal_wait_until(T.address_of(Sig[2]), T.CmpType.GT, rnd * 4 - 1)
                    Seen[3] = T.signal_wait_until(T.address_of(Sig[3]), T.CmpType.LE, rnd)
                    Seen[4] = T.signal_wait_until(T.address_of(Sig[4]), T.CmpType.LT, rnd + 1)
                    Seen[5] = T.signal_wait_until(T.address_of(Sig[5]), T.CmpType.NE, 1000000)

    return main
