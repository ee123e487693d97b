# A user-written persistent GEMM (T.Persistent tile loop around the pipelined K loop) after
# thread_sync on sm_90a: the producer thread and the consumers both run the tile loop and
# its uniform lets / condition; the stage counter pipe_iter runs on across tiles; the
# epilogue's shared tile goes out by TMA store between named barriers of the consumers.
# tilescale-test: -k persistent_gemm -D M=384 -D N=512 -D K=256 -D sms=4
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def persistent_gemm(M, N, K, sms, bm=128, bn=256, bk=64, stages=3, dtype="float16", acc="float32"):

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(sms, threads=256) as (pid):
            a_s = T.alloc_shared((bm, bk), dtype)
            b_s = T.alloc_shared((bk, bn), dtype)
            c_f = T.alloc_fragment((bm, bn), acc)
            c_s = T.alloc_shared((bm, bn), dtype)
            for row, col in T.Persistent([T.ceildiv(M, bm), T.ceildiv(N, bn)], sms, pid):
                T.clear(c_f)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                    T.copy(A[row * bm, k * bk], a_s)
                    T.copy(B[k * bk, col * bn], b_s)
                    T.gemm(a_s, b_s, c_f)
                T.copy(c_f, c_s)
                T.copy(c_s, C[row * bm, col * bn])

    return main
