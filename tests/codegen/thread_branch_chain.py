# An if/elif chain on warp-sized thread ranges of a 96-thread block (as deepseek_mhc's
# `if T.get_thread_binding() < 32:` writes it), in the three spellings of a range: `tx < 32`,
# `32 <= tx < 64` and `tx >= 64 and tx < 96`.  Each branch is a T.ws body over its warp: the
# reduction's fragment is laid out over the 32 threads of warp 0 (one shuffle butterfly, no
# shared scratch); warp 1 stages a tile through shared memory, ordered by a named barrier over
# its own 32 threads (bar.sync 3, 32), never __syncthreads; warp 2's T.Parallel runs with the
# thread index tx - 64.  regress_gpu.py runs it on the GPU.
# tilescale-test: -k tb_chain -D M=64 --arch sm_90a
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


def tb_chain(M, N=64, rows=4):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32"), B: T.Tensor((M, N), "float32"),
             D: T.Tensor((M, N), "float32")):
        with T.Kernel(M // rows, threads=96) as bx:
            A_frag = T.alloc_fragment((rows, N), "float32")
            s_frag = T.alloc_fragment((rows,), "float32")
            A_shared = T.alloc_shared((rows, N), "float32")
            tx = T.get_thread_binding()
            if tx < 32:
                T.copy(A[bx * rows, 0], A_frag)
                T.reduce_sum(A_frag, s_frag, dim=1)
                T.copy(s_frag, S[bx * rows])
            elif 32 <= tx < 64:
                T.copy(A[bx * rows, 0], A_shared)
                for i, j in T.Parallel(rows, N):
                    B[bx * rows + i, j] = A_shared[i, N - 1 - j]
            elif tx >= 64 and tx < 96:
                for i, j in T.Parallel(rows, N):
                    D[bx * rows + i, j] = A[bx * rows + i, j] * 2.0

    return main
