# Conversions of contiguous elements: T.copy between tensors of different element types, and a
# T.Parallel copy between fragments, both lowered to ts::copy_vec, which converts element pairs
# with CUDA's packed instructions (PairConv in common.cuh: fp8 <-> float/half/bfloat16 in one
# F2FP per pair).  regress_gpu.py runs every pair of float32, float16, bfloat16, float8_e4m3
# and float8_e5m2 on special values (NaN, infinities, signed zeros, out-of-range magnitudes).
# tilescale-test: -k vector_cast -D M=1024 -D src=float32 -D dst=float8_e4m3
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def vector_cast(M, src, dst, through_fragments=False):

    @T.prim_func
    def main(A: T.Tensor((M,), src), B: T.Tensor((M,), dst)):
        with T.Kernel(1, threads=128):
            if through_fragments:
                a = T.alloc_fragment((M,), src)
                b = T.alloc_fragment((M,), dst)
                T.copy(A, a)
                for i in T.Parallel(M):
                    b[i] = a[i]
                T.copy(b, B)
            else:
                T.copy(A, B)

    return main
