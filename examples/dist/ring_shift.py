# Ring shift (NVSHMEM style): every rank pushes its tile A to the next rank's B, so each rank
# ends up with the tile of the rank before it.  One putmem_nbi_block per block of rows.
# Host program: ring_shift.c.
import tilelang
import tilelang.language as T


@tilelang.jit
def ring_shift(M=128, N=128, block_M=16, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            pe = T.get_pe()
            npes = T.get_pe_num()
            T.putmem_nbi_block(T.address_of(B[bx * block_M, 0]), T.address_of(A[bx * block_M, 0]),
                               block_M * N * 2, (pe + 1) % npes)
            T.quiet()

    return main
