# T.annotate_layout({dQ: T.Layout(dQ.shape, fn)}) on a global tensor (FlashAttention
# backward's dQ layout): every access of dQ goes to the row-major position of fn's output
# tuple in its box [B, L/8, H, D/8, 2, 32] (pass remap_global).  The element atomics of the
# first kernel and the copy of the second (the postprocess reading dQ back) both use it;
# neither is vectorized (dQ's neighbouring elements are not neighbours in memory), while
# the plain output Out keeps its row-major index.
# tilescale-test: -k dq_layout -D B=2 -D L=64 -D H=2 -D D=32
# tilescale-dump: remap_global
import tilelang
import tilelang.language as T


def make_dq_layout(dQ):
    return T.Layout(dQ.shape, lambda b, l, h, d: [b, l // 8, h, d // 8, (d % 2), 4 * (l % 8) + (d % 8) // 2])


@tilelang.jit
def dq_layout(B, L, H, D, blk=32):

    @T.prim_func
    def main(G: T.Tensor((B, L, H, D), "float32"), dQ: T.Tensor((B, L, H, D), "float32"),
             Out: T.Tensor((B, L, H, D), "float16")):
        with T.Kernel(L // blk, H, B, threads=128) as (bx, by, bz):
            T.annotate_layout({dQ: make_dq_layout(dQ)})
            acc = T.alloc_fragment((blk, D), "float32")
            T.copy(G[bz, bx * blk:(bx + 1) * blk, by, :], acc)
            for i, j in T.Parallel(blk, D):
                T.atomic_add(dQ[bz, bx * blk + i, by, j], acc[i, j])
        with T.Kernel(L // blk, H, B, threads=128) as (bx, by, bz):
            T.annotate_layout({dQ: make_dq_layout(dQ)})
            T.copy(dQ[bz, bx * blk:(bx + 1) * blk, by, :], Out[bz, bx * blk:(bx + 1) * blk, by, :])

    return main
