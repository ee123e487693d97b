# Misuse of explicit mbarriers and T.tma_copy, each reported at its call: a wait on a buffer that
# is not a barrier, a parity other than 0/1, a constant barrier index past the end, a
# T.tma_copy without barrier= (a load needs one: its bytes complete a phase of it), a
# T.tma_copy into a fragment, an arrival on another block's barrier (cta_id), and a zero
# arrive count.
# tilescale-test: -k misuse -D M=256 -D N=256 -D K=256 --arch sm_90a
import tilelang
import tilelang.language as T


def misuse(M, N, K, block_M=128, block_K=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), C: T.Tensor((M, K), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            A_s = T.alloc_shared((block_M, block_K), dtype)
            A_f = T.alloc_fragment((block_M, block_K), dtype)
            bars = T.alloc_barrier([128, 128])
            T.barrier_wait(A_s, 0)
            T.barrier_wait(bars[0], 2)
            T.barrier_arrive(bars[2])
            T.tma_copy(A[bx * block_M, 0], A_s)
            T.tma_copy(A[bx * block_M, 0], A_f, barrier=bars[0])
            T.mbarrier_arrive(bars[1], cta_id=1)
            zero = T.alloc_barrier(arrive_count=0)
            T.copy(A_s, C[bx * block_M, 0])

    return main
