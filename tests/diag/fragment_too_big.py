# Tiles of 65536 x 65536 over 256 threads: 16M register elements per thread per fragment
# (NVRTC ran for minutes); refused after lowering with the per-thread size and the limit.
# tilescale-test: -k elementwise_add -D M=1024 -D N=1024 -D block_M=65536 -D block_N=65536
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def elementwise_add(M, N, block_M=128, block_N=128, threads=256, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_frag = T.alloc_fragment((block_M, block_N), dtype)
            B_frag = T.alloc_fragment((block_M, block_N), dtype)
            C_frag = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_frag)
            T.copy(B[by * block_M, bx * block_N], B_frag)
            for i, j in T.Parallel(block_M, block_N):
                C_frag[i, j] = A_frag[i, j] + B_frag[i, j]
            T.copy(C_frag, C[by * block_M, bx * block_N])

    return main
