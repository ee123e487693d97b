# TensorCoreIntrinEmitterWithLadderTransform with transform_kind_b=3: B as a [N/16, K/16, 16, 8]
# int8 tile of 4-bit weights in the Ladder layout, read with plain per-lane loads (lane l: bytes
# 4l .. 4l+3 of its 16 x 16 tile), decoded in registers by bitblas.gpu.intrin.lop3's
# decode_i4u_to_f16 (the kernel prelude) into the mma B registers; A through ldmatrix as usual.
# An empty T.alloc_local(0, ...) that is never touched is allowed.
# tilescale-test: -k ladder
import tilelang.language as T
from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitterWithLadderTransform
from bitblas.gpu.intrin.lop3 import decode_i4_to_f16


def ladder():
    emitter = TensorCoreIntrinEmitterWithLadderTransform(
        a_dtype=T.float16, b_dtype=T.float16, accum_dtype=T.float16, a_transposed=False, b_transposed=True,
        block_row_warps=1, block_col_warps=1, warp_row_tiles=16, warp_col_tiles=16, chunk=16,
        transform_kind_b=3, num_elems_per_byte=2)

    @T.prim_func
    def main(A: T.Tensor((16, 16), T.float16), B: T.Tensor((1, 1, 16, 8), T.int8), C: T.Tensor((16, 16), T.float16)):
        with T.Kernel(1, threads=32, prelude=decode_i4_to_f16) as bx:
            A_s = T.alloc_shared((16, 16), T.float16)
            B_s = T.alloc_shared((1, 1, 16, 8), T.int8)
            A_l = T.alloc_local((8,), T.float16)
            B_l = T.alloc_local((4,), T.int8)
            B_d = T.alloc_local((8,), T.float16)
            C_l = T.alloc_local((8,), T.float16)
            unused = T.alloc_local(0, T.float16)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(C_l)
            emitter.ldmatrix_a(A_l, A_s, 0)
            emitter.ldmatrix_b(B_l, B_s, 0)
            T.call_extern("handle", "decode_i4u_to_f16", T.access_ptr(B_l[0], "r", 4), T.access_ptr(B_d[0], "w", 8), 8)
            emitter.mma(A_l, B_d, C_l)
            emitter.stmatrix(C_l, C, pid_m=0, pid_n=0)

    return main
