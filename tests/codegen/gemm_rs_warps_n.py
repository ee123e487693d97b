# T.gemm with A in registers on a tile too short for every warp along M: 32 rows over 4
# warps.  mma.sync puts M/16 = 2 warps along M and the other 2 along N; each warp column
# multiplies the whole rows of A, so A's fragment is replicated over the warp columns (a
# replicate field at thread stride 64, the stride of C's warp columns) and the loop that
# writes A (a cast of a copy from shared memory) runs in both copies.  trans_A stores A as
# [K, M]: the same fragment with its dims swapped (registers row-major over [K, M]).
# tilescale-test: -k rs_warps_n --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def rs_warps_n(M=32, N=64, K=64, threads=128, dtype="float16", trans_A=False, trans_B=False):
    a_shape = (K, M) if trans_A else (M, K)
    b_shape = (N, K) if trans_B else (K, N)

    @T.prim_func
    def main(A: T.Tensor(a_shape, dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            a_s = T.alloc_shared(a_shape, dtype)
            b_s = T.alloc_shared(b_shape, dtype)
            a_f = T.alloc_fragment(a_shape, "float32")
            a_r = T.alloc_fragment(a_shape, dtype)
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.copy(a_s, a_f)
            for i, j in T.Parallel(a_shape[0], a_shape[1]):
                a_r[i, j] = a_f[i, j] * 2.0
            T.gemm(a_r, b_s, acc, transpose_A=trans_A, transpose_B=trans_B, clear_accum=True)
            T.copy(acc, C)

    return main
