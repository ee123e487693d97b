# A T.alloc_global workspace exists only on its own GPU: no other rank may address it
# (remote puts/gets, remote ld/st/waits, cross-rank barriers, NVSHMEM signals).
# Local use is fine.
# tilescale-test: -k ws
import tilelang.language as T


@T.prim_func
def ws(A: T.Tensor((64,), "int32"), S: T.Tensor((4,), "uint64")):
    with T.Kernel(1, threads=32) as bx:
        w = T.alloc_global((64,), "int32")
        sig = T.alloc_global((4,), "uint64")
        T.put_block(T.address_of(A[0]), T.address_of(w[0]), 64, dst_pe=1)
        T.get_warp(T.address_of(w[0]), T.address_of(A[0]), 64, src_pe=1)
        T.st(w[0], 1, dst_pe=1)
        T.wait_eq(w[1], 1, peer=0)
        T.barrier_blocks(w[0])
        T.signal_op(T.address_of(sig[0]), 1, T.Amo.SIGNAL_SET, 1)
        T.signal_wait_until(T.address_of(sig[0]), T.CmpType.EQ, 1)
        T.putmem_signal_block(T.address_of(A[0]), T.address_of(w[0]), 256, T.address_of(sig[1]), 1,
                              T.Amo.SIGNAL_SET, 1)
        T.put_block(T.address_of(w[0]), T.address_of(A[0]), 64, dst_pe=1)
        T.st(w[2], 5)
        T.wait_eq(w[2], 5)
        T.atom_add(w[3], 1)
