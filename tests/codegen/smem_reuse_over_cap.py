# Three 80 KB shared tiles, each used in its own phase: stacked they need 240 KB, more than
# an sm_90 block may have, so merge_shared_memory lets tiles whose lifetimes do not overlap
# share bytes (Y and Z take X's) and puts a __syncthreads in front of each phase whose tile
# reuses bytes another thread may still be reading (thread_sync saw different buffers and
# did not order them).  The generated CUDA shows the offsets; this golden the barriers.
# tilescale-test: -k phases --arch sm_90a
# tilescale-dump: merge_shared_memory

import tilelang
import tilelang.language as T


@tilelang.jit
def phases(N=40960, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=256) as bx:
            X = T.alloc_shared((N,), dtype)
            Y = T.alloc_shared((N,), dtype)
            Z = T.alloc_shared((N,), dtype)
            T.copy(A, X)
            for i in T.Parallel(N):
                A[i] = X[N - 1 - i]
            T.copy(B, Y)
            for i in T.Parallel(N):
                B[i] = Y[N - 1 - i]
            T.copy(C, Z)
            for i in T.Parallel(N):
                C[i] = Z[N - 1 - i]

    return main
