# TensorCoreIntrinEmitterWithLadderTransform: only an untransformed A with B of kind 0 or 3
# (LDMatrixTransform) is provided; kind 1 or 2 (tiled B, tiled with an in-tile ldmatrix
# permutation) is refused where the emitter is built.
# tilescale-test: -k kind2
import tilelang.language as T
from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitterWithLadderTransform


def kind2():
    emitter = TensorCoreIntrinEmitterWithLadderTransform(
        a_dtype=T.float16, b_dtype=T.float16, accum_dtype=T.float16, a_transposed=False, b_transposed=True,
        block_row_warps=1, block_col_warps=1, warp_row_tiles=16, warp_col_tiles=16, chunk=16, transform_kind_b=2)

    @T.prim_func
    def main(A: T.Tensor((16, 16), T.float16)):
        with T.Kernel(1, threads=32) as bx:
            A_s = T.alloc_shared((16, 16), T.float16)
            T.copy(A, A_s)

    return main
