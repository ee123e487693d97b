# All-to-all with signals: Send[d] (C elements) goes to Recv[r] on rank d.  Block (d, j) pushes
# chunk j of Send[d] with putmem_signal_nbi_block, adding 1 to Sig[r] on rank d; then block
# (s, j) waits until Sig[s] shows all NB chunks of this round (epoch) from rank s and copies
# chunk j of Recv[s] into Out[s].  Signals only grow, so rounds need no reset: round e waits
# for e * NB.  Host program: all_to_all_signal.c.
import tilelang
import tilelang.language as T


@tilelang.jit
def all_to_all_signal(P=2, C=65536, NB=8, threads=256, dtype="float16"):
    chunk = C // NB

    @T.prim_func
    def main(Send: T.Tensor((P, C), dtype), Recv: T.Tensor((P, C), dtype), Out: T.Tensor((P, C), dtype),
             Sig: T.Tensor((P,), "uint64"), epoch: T.int32):
        with T.Kernel(P, NB, threads=threads) as (d, j):
            pe = T.get_pe()
            T.putmem_signal_nbi_block(T.address_of(Recv[pe, j * chunk]), T.address_of(Send[d, j * chunk]), chunk * 2,
                                      T.address_of(Sig[pe]), 1, T.Amo.SIGNAL_ADD, d)
            T.signal_wait_until(T.address_of(Sig[d]), T.CmpType.GE, epoch * NB)
            for i in T.Parallel(chunk):
                Out[d, j * chunk + i] = Recv[d, j * chunk + i]

    return main
