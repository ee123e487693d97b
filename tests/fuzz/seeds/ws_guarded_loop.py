# tilescale-test: -k sparse_attn -D S=256 -D D=64 -D NB=4
# Fuzz seed: a pipelined loop guarded by a mask fragment copied from a tensor before it (the
# producer reads the tensor), with lets before the guard (ws_guard.c), and a T.alloc_var
# prelude the producer repeats (ws_prelude.c).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[4])
def sparse_attn(S, D, NB):
    @T.prim_func
    def main(Q: T.Tensor((S, D), T.float16), K: T.Tensor((S, D), T.float16), V: T.Tensor((S, D), T.float16),
             Mask: T.Tensor((S // 64, NB), T.bool), O: T.Tensor((S, D), T.float16)):
        with T.Kernel(S // 64, threads=128) as bx:
            Q_s = T.alloc_shared((64, D), T.float16)
            K_s = T.alloc_shared((64, D), T.float16)
            V_s = T.alloc_shared((64, D), T.float16)
            s = T.alloc_fragment((64, 64), T.float32)
            p = T.alloc_fragment((64, 64), T.float16)
            o = T.alloc_fragment((64, D), T.float32)
            m = T.alloc_fragment((NB,), T.bool)
            first = T.alloc_var(T.int32)
            first = NB
            for i in T.serial(NB):
                first = T.min(first, T.if_then_else(Mask[bx, i], i, NB))
            T.copy(Q[bx * 64, 0], Q_s)
            T.copy(Mask[bx, 0], m)
            T.clear(o)
            for k in T.Pipelined(NB, num_stages=2):
                kb = (k + first) % NB
                if m[kb] and kb <= bx:
                    T.copy(K[kb * 64, 0], K_s)
                    T.gemm(Q_s, K_s, s, transpose_B=True, clear_accum=True)
                    T.copy(s, p)
                    T.copy(V[kb * 64, 0], V_s)
                    T.gemm(p, V_s, o)
            T.copy(o, O[bx * 64, 0])

    return main
