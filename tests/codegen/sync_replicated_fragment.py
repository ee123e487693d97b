# A block-sparse mask copied into a small fragment and read at a serial loop index (the
# block-sparse attention pattern): the fragment is replicated whole in every thread (one
# register per element), so `if mask[k] != 0` is uniform across the block and the barriers
# that order the shared tile go inside the branch.  A replicated fragment whose address a
# device call takes could hold anything, so it would not count as uniform.
# tilescale-test: -k masked_copy --arch sm_80
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def masked_copy(nblk=4, blk=64):
    @T.prim_func
    def main(Mask: T.Tensor((nblk,), "int32"), A: T.Tensor((nblk * blk,), "float32"),
             B: T.Tensor((nblk * blk,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            mask = T.alloc_fragment([nblk], "int32")
            tile = T.alloc_shared([blk], "float32")
            T.copy(Mask[0:nblk], mask)
            for k in T.serial(nblk):
                if mask[k] != 0:
                    T.copy(A[k * blk:(k + 1) * blk], tile)
                    T.copy(tile, B[k * blk:(k + 1) * blk])

    return main
