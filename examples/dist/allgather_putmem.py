# All-gather (NVSHMEM style): rank r's A [M_per_rank, N] lands in B[r * M_per_rank : ...] on
# every rank.  Block (bx, k) pushes rows [bx * block_M, +block_M) of A to rank
# (r + k) % P with putmem_nbi_block; k = 0 is the local copy.  Host program: allgather.c.
import tilelang
import tilelang.language as T


@tilelang.jit
def allgather_putmem(M_per_rank=1024, N=1024, P=2, block_M=32, threads=256, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M_per_rank, N), dtype), B: T.Tensor((M_per_rank * P, N), dtype)):
        with T.Kernel(T.ceildiv(M_per_rank, block_M), P, threads=threads) as (bx, by):
            pe = T.get_pe()
            peer = (pe + by) % P
            T.putmem_nbi_block(T.address_of(B[pe * M_per_rank + bx * block_M, 0]),
                               T.address_of(A[bx * block_M, 0]), block_M * N * 2, peer)
            T.quiet()

    return main
