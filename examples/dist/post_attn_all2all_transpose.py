# Post-attention all-to-all with transpose (head parallel -> sequence parallel): each rank
# holds In [B, H/P, S, D] and receives Out [B, S/P, H, D].  Block (b, p, t) stages a tile of
# block_S sequence rows of every local head, transposed to [s, h, d] in shared memory, then
# pushes each row (H/P heads x D, contiguous in Out) to rank p at Out[b, s, rank * H/P, :].
# Host program: attn_all2all.c.
import tilelang
import tilelang.language as T


@tilelang.jit
def post_attn_all2all_transpose(B=2, H=16, S=256, D=64, P=2, block_S=16, threads=128, dtype="float16"):
    HP = H // P
    SP = S // P

    @T.prim_func
    def main(In: T.Tensor((B, HP, S, D), dtype), Out: T.Tensor((B, SP, H, D), dtype)):
        with T.Kernel(B, P, T.ceildiv(SP, block_S), threads=threads) as (b, p, t):
            pe = T.get_pe()
            tile = T.alloc_shared((block_S, HP, D), dtype)
            for s, hh, d in T.Parallel(block_S, HP, D):
                tile[s, hh, d] = In[b, hh, p * SP + t * block_S + s, d]
            for s in T.serial(block_S):
                T.putmem_nbi_block(T.address_of(Out[b, t * block_S + s, pe * HP, 0]), T.address_of(tile[s, 0, 0]),
                                   HP * D * 2, p)
            T.quiet()

    return main
