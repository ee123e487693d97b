# T.gemm_sp with A and E stored transposed ([K/2, M] and [K/16, M], TileLang's transpose_A /
# transpose_E) or A in registers: the sparse tensor-core path reads both row-major from shared
# memory, so the front end copies them into staged shared tiles first (a T.Parallel nest each,
# transposing), ordered before the GEMM by thread_sync.  tests/corpus/regress_gpu.py runs the
# forms against the float64 product.
# tilescale-test: -k gemm_sp_staged -D M=128 -D N=128 -D K=256 --arch sm_90a
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_sp_staged(M, N, K, block_M=64, block_N=64, block_K=64, trans_A=True, a_frag=False, dtype=T.float16):
    A_shape, A_tile = ((K // 2, M), (block_K // 2, block_M)) if trans_A else ((M, K // 2), (block_M, block_K // 2))
    E_shape, E_tile = ((K // 16, M), (block_K // 16, block_M)) if trans_A else ((M, K // 16), (block_M, block_K // 16))

    @T.prim_func
    def main(A_sparse: T.Tensor(A_shape, dtype), E: T.Tensor(E_shape, T.int16), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared(A_tile, dtype)
            A_r = T.alloc_fragment(A_tile, dtype)
            E_s = T.alloc_shared(E_tile, T.int16)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                if trans_A:
                    T.copy(A_sparse[k * block_K // 2, by * block_M], A_s)
                    T.copy(E[k * block_K // 16, by * block_M], E_s)
                else:
                    T.copy(A_sparse[by * block_M, k * block_K // 2], A_s)
                    T.copy(E[by * block_M, k * block_K // 16], E_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                if a_frag:
                    T.copy(A_s, A_r)
                    T.gemm_sp(A_r, E_s, B_s, C_l, transpose_A=trans_A, transpose_E=trans_A)
                else:
                    T.gemm_sp(A_s, E_s, B_s, C_l, transpose_A=trans_A, transpose_E=trans_A)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
