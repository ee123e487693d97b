# Warp-specialized GEMMs and pipelined loops of 1 to 4 consumer warpgroups (tests/unit/test_api.c
# api_ws_register_pool): setmaxnreg.inc may only take what the producer's setmaxnreg.dec
# releases from the block's launch registers (TileLang issue 2522's 512-thread GEMM hung).
import tilelang
import tilelang.language as T


@tilelang.jit
def gemm(block_M, block_N, threads, policy=T.GemmWarpPolicy.FullRow):
    M, N, K, block_K = block_M, block_N, 64, 32

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_frag = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_frag)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_frag, policy=policy)
            T.copy(C_frag, C[by * block_M, bx * block_N])

    return main


@tilelang.jit
def scaled_rows(threads):
    N, block = 4096, 64

    @T.prim_func
    def main(A: T.Tensor((N, 128), "float16"), B: T.Tensor((128, 128), "float16"), C: T.Tensor((N, 128), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            A_shared = T.alloc_shared((block, 128), "float16")
            B_shared = T.alloc_shared((128, 128), "float16")
            acc = T.alloc_fragment((block, 128), "float32")
            out = T.alloc_fragment((block, 128), "float32")
            T.clear(out)
            T.copy(B, B_shared)
            for k in T.Pipelined(N // block, num_stages=2):
                T.copy(A[k * block, 0], A_shared)
                T.gemm(A_shared, B_shared, acc, clear_accum=True)
                for i, j in T.Parallel(block, 128):
                    out[i, j] += acc[i, j] * 0.5
            T.copy(out, C[0, 0])

    return main
