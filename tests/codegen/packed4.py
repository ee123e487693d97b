# 4-bit dtypes (T.int4, T.uint4, T.float4_e2m1fn): two elements a byte in global and shared
# memory (declared as their bytes, read with ts::ld4 and written with ts::st4, element by
# element: no vectors, cp.async or TMA), one a byte in registers (ts::int4_t ...); stores to
# a float4_e2m1fn buffer convert (round to nearest even, saturating at +-6).  A T.copy of
# whole bytes between two 4-bit tensors in memory (A -> A_s) copies uint8 views of them
# (legalize), vectorized.  Shared bytes: 64 x 64 int4 take 2048 bytes.
# tilescale-test: -k int4_copy
# tilescale-dump: merge_shared_memory
import tilelang
import tilelang.language as T


def int4_copy(M=64, N=64):

    @T.prim_func
    def main(A: T.Tensor((M, N), T.int4), B: T.Tensor((M, N), T.int4), C: T.Tensor((M, N), T.int32)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, N), T.int4)
            A_f = T.alloc_fragment((M, N), T.int4)
            T.copy(A, A_s)
            T.copy(A_s, A_f)
            for i, j in T.Parallel(M, N):
                C[i, j] = A_f[i, j] * 2
                B[i, j] = A_f[i, j] + 1

    return main


def fp4_convert(M=32, N=64):

    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float4_e2m1fn), Z: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            Y_f = T.alloc_fragment((M, N), T.float4_e2m1fn)
            Y_s = T.alloc_shared((M, N), T.float4_e2m1fn)
            for i, j in T.Parallel(M, N):
                Y_f[i, j] = X[i, j]
            T.copy(Y_f, Y_s)
            T.copy(Y_s, Y)
            for i, j in T.Parallel(M, N):
                Z[i, j] = Y_s[i, j]

    return main


def uint4_sum(M=16, N=32):

    @T.prim_func
    def main(A: T.Tensor((M, N), T.uint4), S: T.Tensor((M,), T.int32)):
        with T.Kernel(1, threads=32) as bx:
            tx = T.get_thread_binding()
            if tx < M:
                acc = T.alloc_var(T.int32)
                acc = 0
                for j in T.serial(N):
                    acc += A[tx, j]
                S[tx] = acc

    return main
