# A loop that reads a reduction's result by row only (`row_max[h]` in T.Parallel(h, k)) and lays
# out nothing else takes that result's layout on the rows (fragment_from_read): a fresh block
# layout would spread the rows over other threads than the GEMM accumulator's, which hold the
# maxima.  The quad of lanes that holds each row (the result's copies) splits the k loop instead
# of repeating it.  The second loop writes a fragment the same way (its layout follows the loop).
# tilescale-test: -k row_reads --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def row_reads(M=64, N=64, K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), S: T.Tensor((M, N), "float32"),
             P: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            S_shared = T.alloc_shared((M, N), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            row_max = T.alloc_fragment((M,), "float32")
            p = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True)
            T.copy(acc, S_shared)
            T.reduce_max(acc, row_max, dim=1)
            for h, k in T.Parallel(M, N):
                S_shared[h, k] = S_shared[h, k] - row_max[h]
            for i, j in T.Parallel(M, N):
                p[i, j] = row_max[i] * 2.0 + j
            T.copy(S_shared, S)
            T.copy(p, P)

    return main
