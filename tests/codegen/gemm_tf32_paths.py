# float32 (tf32) GEMMs that wgmma cannot take on sm_90a: A stored [K, M] (transpose_A=True)
# and A in registers.  Both plan mma.sync: the transposed operand is loaded element by
# element into the m16n8k8 fragment, and the register A keeps its accumulator shape with K
# permuted (gemm.cuh gemm_rs_tf32).  T.tfloat32 names float32 storage.
# tilescale-test: -k tf32_paths --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def tf32_paths():

    @T.prim_func
    def main(A: T.Tensor((32, 64), T.tfloat32), B: T.Tensor((32, 64), "float32"), C: T.Tensor((64, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a_s = T.alloc_shared((32, 64), T.tfloat32)
            b_s = T.alloc_shared((32, 64), "float32")
            acc = T.alloc_fragment((64, 64), "float32")
            acc2 = T.alloc_fragment((64, 32), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.gemm(a_s, b_s, acc, transpose_A=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.gemm(acc, b_s, acc2, transpose_B=True, clear_accum=True)
            T.copy(acc2, C)

    return main
