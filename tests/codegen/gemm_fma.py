# T.gemm on types the tensor cores do not take (here float64, and int8 with A stored [K, M],
# which mma.sync cannot read) is computed with FMA: a T.Parallel nest over C with a serial K
# loop (front/gemm_fma.c), inside a pipelined K loop like any T.gemm; a_in_regs takes A through
# a fragment.  regress_gpu.py checks
# it against torch, and an interpreter test against a host product.
# tilescale-test: -k gemm_fma -D M=64 -D N=64 -D K=64
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def gemm_fma(M=64, N=64, K=64, block_M=32, block_N=32, block_K=16, dtype="float64", accum="float64", trans_A=False,
             trans_B=False, stages=2, a_in_regs=False):

    @T.prim_func
    def main(A: T.Tensor((K, M) if trans_A else (M, K), dtype), B: T.Tensor((N, K) if trans_B else (K, N), dtype),
             C: T.Tensor((M, N), accum)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_K, block_M) if trans_A else (block_M, block_K), dtype)
            B_s = T.alloc_shared((block_N, block_K) if trans_B else (block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), accum)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_s)
                else:
                    T.copy(A[by * block_M, k * block_K], A_s)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_s)
                if a_in_regs:  # A through a fragment: each thread holds the rows its C elements need
                    A_r = T.alloc_fragment((block_K, block_M) if trans_A else (block_M, block_K), dtype)
                    T.copy(A_s, A_r)
                    T.gemm(A_r, B_s, C_l, transpose_A=trans_A, transpose_B=trans_B)
                else:
                    T.gemm(A_s, B_s, C_l, transpose_A=trans_A, transpose_B=trans_B)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
