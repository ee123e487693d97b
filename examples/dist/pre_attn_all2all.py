# Pre-attention all-to-all (sequence parallel -> head parallel): each rank holds
# In [B, H, S/P, D] (its sequence chunk, all heads) and receives Out [B, H/P, S, D] (its heads,
# the whole sequence).  Block (b, h) sends In[b, h] (S/P rows, contiguous) to rank h // (H/P),
# at Out[b, h % (H/P), rank * S/P].  Host program: attn_all2all.c.
import tilelang
import tilelang.language as T


@tilelang.jit
def pre_attn_all2all(B=2, H=16, S=256, D=64, P=2, threads=128, dtype="float16"):
    HP = H // P
    SP = S // P

    @T.prim_func
    def main(In: T.Tensor((B, H, SP, D), dtype), Out: T.Tensor((B, HP, S, D), dtype)):
        with T.Kernel(B, H, threads=threads) as (b, h):
            pe = T.get_pe()
            T.putmem_nbi_block(T.address_of(Out[b, h % HP, pe * SP, 0]), T.address_of(In[b, h, 0, 0]), SP * D * 2,
                               h // HP)
            T.quiet()

    return main
