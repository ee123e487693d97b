import tilelang
import tilelang.language as T


def copy_to_block(M=8, N=64, W=32):

    @T.prim_func
    def main(A: T.Tensor((M, W), "float32"), B: T.Tensor((M, W), "float32")):
        with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)) as pid:
            s = T.alloc_shared((M, N), "float32")
            d = T.alloc_shared((M, N), "float32")
            bar = T.alloc_cluster_barrier([1])
            T.cluster_sync()
            if pid == 0:
                T.copy_cluster(s[0:M, 0:W], d[0:M, 0:W], dst_block=1, remote_barrier=bar[0])
            if pid == 1:
                T.mbarrier_wait_parity(bar[0], 0)
                T.mbarrier_arrive(bar[0], cta_id=0)
                for i, j in T.Parallel(M, W):
                    B[i, j] = d[i, j]

    return main


def multicast(M=256, N=256, bm=64, bn=64, mask=3):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.ClusterKernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128, cluster_dims=(4, 1, 1)) as (bx, by):
            s = T.alloc_shared((bm, bn), "float16")
            bars = T.alloc_barrier([128])
            T.copy_cluster(A[by * bm, bx * bn], s, cluster_mask=mask)
            T.tma_copy(A[by * bm, bx * bn], s, barrier=bars[0], cluster_mask=mask)
            T.copy(s, B[by * bm, bx * bn])

    return main


SRC = """
extern "C" __global__ void __launch_bounds__(64) k(float* A, float* B, long long n) { B[0] = A[0]; }
"""


def source(entry="k", src=SRC):
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        T.CUDASourceCodeKernel(T.ceildiv(N, 64), threads=64, source_code_or_path=src, entry_name=entry)

    return main


def fma_gemm(M=32, N=32, K=16, dtype="float64"):

    @T.prim_func
    def main(A: T.Tensor((K, M), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=64):
            a = T.alloc_shared((K, M), dtype)
            b = T.alloc_shared((N, K), dtype)
            c = T.alloc_fragment((M, N), dtype)
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, c, transpose_A=True, transpose_B=True, clear_accum=True)
            T.copy(c, C)

    return main
