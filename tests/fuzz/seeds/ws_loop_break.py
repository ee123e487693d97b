# tilescale-test: -k brk -D M=64 -D N=64 -D K=256 -D BM=64 -D BN=64 -D BK=64
# Fuzz seed: a pipelined GEMM loop left by break (no warp specialization: pass_leaves_loop).
import tilelang
import tilelang.language as T

@tilelang.jit
def brk(M, N, K, BM, BN, BK):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):
            A_s = T.alloc_shared((BM, BK), T.float16)
            B_s = T.alloc_shared((BN, BK), T.float16)
            acc = T.alloc_fragment((BM, BN), T.float32)
            tot = T.alloc_fragment((BM, BN), T.float32)
            T.clear(tot)
            for k in T.Pipelined(K // BK, num_stages=2):
                T.copy(A[by * BM, k * BK], A_s)
                T.copy(B[bx * BN, k * BK], B_s)
                T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=True)
                for i, j in T.Parallel(BM, BN):
                    tot[i, j] += acc[i, j]
                if k == 1:
                    break
            T.copy(tot, C[by * BM, bx * BN])

    return main
