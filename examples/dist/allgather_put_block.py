# All-gather (IPC style): the same data movement as allgather_putmem.py, with the TileScale
# IPC primitive put_block (element counts, pe -1 would mean local).  Host program: allgather.c.
import tilelang
import tilelang.language as T


@tilelang.jit
def allgather_put_block(M_per_rank=1024, N=1024, P=2, block_M=32, threads=256, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M_per_rank, N), dtype), B: T.Tensor((M_per_rank * P, N), dtype)):
        with T.Kernel(T.ceildiv(M_per_rank, block_M), P, threads=threads) as (bx, by):
            rank = T.get_rank()
            peer = (rank + by) % P
            T.put_block(T.address_of(A[bx * block_M, 0]), T.address_of(B[rank * M_per_rank + bx * block_M, 0]),
                        block_M * N, dst_pe=peer)
            T.fence_sys()

    return main
