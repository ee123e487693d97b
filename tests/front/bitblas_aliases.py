# BitBLAS's spellings of TileLang (the bitnet kernel benchmarks): `import tvm.tl.language as T`
# is tilelang.language, `from tvm import tl` is tilelang, bitblas.tl.utils / .mma_macro_generator
# are TileLang's MMA helpers (whose ldmatrix / stmatrix take the thread index as
# thread_bindings=, BitBLAS's per-call form), bitblas.base's simplify_prim_func decorates.
# tilescale-test: -k tl_mma -D in_dtype=int8
from bitblas import tvm as tvm
from tvm import DataType
from tvm import tl as TL
import tvm.tl.language as T
from bitblas.tl.utils import get_swizzle_layout
from bitblas.tl.mma_macro_generator import TensorCoreIntrinEmitter
from bitblas.base import simplify_prim_func


@simplify_prim_func
def tl_mma(in_dtype):
    assert in_dtype in [T.float16, T.int8], "Currently only float16 and int8 are supported"
    assert DataType(in_dtype).bits == 8 and TL.cdiv(7, 2) == 4
    emitter = TensorCoreIntrinEmitter(a_dtype=in_dtype, b_dtype=in_dtype, accum_dtype=T.int32, a_transposed=False,
                                      b_transposed=True, block_row_warps=1, block_col_warps=1, warp_row_tiles=16,
                                      warp_col_tiles=16, chunk=32)

    @T.prim_func
    def main(A: T.Buffer((16, 32), in_dtype), B: T.Buffer((16, 32), in_dtype), C: T.Buffer((16, 16), T.int32)):
        with T.Kernel(1, threads=32) as bx:
            A_s = T.alloc_shared((16, 32), in_dtype)
            B_s = T.alloc_shared((16, 32), in_dtype)
            A_l = T.alloc_local((16,), in_dtype)
            B_l = T.alloc_local((16,), in_dtype)
            C_l = T.alloc_local((8,), T.int32)
            tx = T.thread_binding(0, 32, "threadIdx.x")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(C_l)
            emitter.ldmatrix_a(A_l, A_s, 0, thread_bindings=tx)
            emitter.ldmatrix_b(B_l, B_s, 0, thread_bindings=tx)
            emitter.mma(A_l, B_l, C_l)
            emitter.stmatrix(C_l, C, pid_m=0, pid_n=0, thread_bindings=tx)

    return main
