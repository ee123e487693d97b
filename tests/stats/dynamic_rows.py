# --emit stats where the grid depends on a T.dynamic size: FLOPs and bytes are unknown
# (null, with a note naming the grid dimension), never a guess.
# tilescale-test: -k matmul_dyn -D N=256 -D K=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_dyn(N, K, block_M=64, block_N=64, block_K=32, dtype="float16"):
    M = T.dynamic("M")

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
