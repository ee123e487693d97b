# T.gemm with an 8-bit A in registers (a fragment written by a T.Parallel loop, as the w4a8
# dequantize GEMM's int4 -> int8 conversion writes it) and K-major B in shared memory,
# accumulating int32.  mma.sync m16n8k32 (wgmma is not used for 8-bit register A even where
# the tile fits it): A keeps the accumulator-shaped fragment with K as its columns and
# gemm.cuh gemm_rs_8 permutes K in both operands, so the loop writes A pairs of columns per
# thread and the GEMM reads 32-bit words of 4 of them.  32 rows over 4 warps: 2 along M,
# 2 along N with A replicated over them.  float8 (dtype, accum float32) takes the same path.
# tilescale-test: -k rs_int8 --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def rs_int8(M=32, N=32, K=128, threads=128, dtype="int8", accum="int32"):
    integer = dtype in ("int8", "uint8")

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), accum)):
        with T.Kernel(1, threads=threads) as bx:
            a_s = T.alloc_shared((M, K), dtype)
            b_s = T.alloc_shared((N, K), dtype)
            a_l = T.alloc_fragment((M, K), dtype)
            a_r = T.alloc_fragment((M, K), dtype)
            acc = T.alloc_fragment((M, N), accum)
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.copy(a_s, a_l)
            for i, j in T.Parallel(M, K):
                if integer:
                    a_r[i, j] = a_l[i, j] >> 1
                else:
                    a_r[i, j] = a_l[i, j]
            T.gemm(a_r, b_s, acc, transpose_B=True, clear_accum=True)
            T.copy(acc, C)

    return main
