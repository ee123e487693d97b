# GEMM over sizes known only at launch: C[M, N] = A[M, K] @ B[K, N] with M, N, K from
# T.dynamic (bound from the tensors' shapes when the kernel is launched).
#
# One compiled kernel serves every shape.  Dynamic sizes reach the kernel as int64_t
# parameters while T.dynamic's IR type is int32, so expressions over them are 64-bit in C;
# codegen spells the template helpers they feed (ts::floordiv, ts::min, ...) with an
# explicit type for that reason (a regression test: the persistent tile schedule of the
# warp-specialized GEMM once failed to compile with "more than one instance of overloaded
# function ts::floordiv").
#
# tilescale-test: -k matmul_dynamic
#
# Run with TileScale:  tilescale run examples/gemm_dynamic.py -k matmul_dynamic

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_dynamic(block_M=128, block_N=128, block_K=64, num_stages=3, threads=256, dtype="float16",
                   accum_dtype="float32"):
    M, N, K = T.dynamic("M, N, K")

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
