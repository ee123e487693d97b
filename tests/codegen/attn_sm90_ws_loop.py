# FlashAttention forward after warp_specialize on sm_90a (warp_specialize_loop.c): the loop is
# not a plain GEMM loop (softmax between two GEMMs, V loaded after it), yet every load is a
# TMA box: Q before the loop on a barrier of its own, K and V each in a 2-stage ring with
# full/empty barriers, waited for right before their GEMM and released right after it.
# tilescale-test: -k flashattn -D seq_len=512 -D dim=64
# tilescale-dump: warp_specialize

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def flashattn(seq_len, dim, block_M=64, block_N=64, num_stages=2, threads=128):
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [seq_len, dim]

    @T.prim_func
    def main(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"), V: T.Tensor(shape, "float16"),
             Output: T.Tensor(shape, "float16")):
        with T.Kernel(T.ceildiv(seq_len, block_M), threads=threads) as bx:
            Q_shared = T.alloc_shared([block_M, dim], "float16")
            K_shared = T.alloc_shared([block_N, dim], "float16")
            V_shared = T.alloc_shared([block_N, dim], "float16")
            acc_s = T.alloc_fragment([block_M, block_N], "float32")
            acc_s_cast = T.alloc_fragment([block_M, block_N], "float16")
            acc_o = T.alloc_fragment([block_M, dim], "float32")
            m = T.alloc_fragment([block_M], "float32")
            m_prev = T.alloc_fragment([block_M], "float32")
            l = T.alloc_fragment([block_M], "float32")
            s = T.alloc_fragment([block_M], "float32")
            T.copy(Q[bx * block_M:(bx + 1) * block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(l, 0)
            T.fill(m, -T.infinity("float32"))
            for k in T.Pipelined(T.ceildiv(seq_len, block_N), num_stages=num_stages):
                T.copy(K[k * block_N:(k + 1) * block_N, :], K_shared)
                T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True)
                T.copy(m, m_prev)
                T.reduce_max(acc_s, m, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - m[i] * scale)
                T.reduce_sum(acc_s, s, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * T.exp2(m_prev[i] * scale - m[i] * scale) + s[i]
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= T.exp2(m_prev[i] * scale - m[i] * scale)
                T.copy(acc_s, acc_s_cast)
                T.copy(V[k * block_N:(k + 1) * block_N, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= l[i]
            T.copy(acc_o, Output[bx * block_M:(bx + 1) * block_M, :])

    return main
