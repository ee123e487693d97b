# Misuse of explicit mbarriers and T.tma_copy, each reported at its call: a wait on a buffer that
# is not a barrier, a parity other than 0/1, a constant barrier index past the end, a
# T.tma_copy without barrier= (a load needs one: its bytes complete a phase of it), a
# T.tma_copy into a fragment, a cta_id that is not an integer, a zero arrive count, a multicast
# mask of no rank, and T.copy_cluster from global memory, with remote_barrier but no dst_block,
# with a cluster_mask past the cluster, on single elements, and to a block past the cluster.
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
            T.mbarrier_arrive(bars[1], cta_id=1.5)
            zero = T.alloc_barrier(arrive_count=0)
            T.tma_copy(A[bx * block_M, 0], A_s, barrier=bars[0], cluster_mask=0)
            T.copy_cluster(A[bx * block_M, 0], A_s, dst_block=1)
            T.copy_cluster(A_s, A_s, remote_barrier=bars[0])
            T.copy_cluster(A[bx * block_M, 0], A_s, cluster_mask=3)
            T.copy_cluster(A_s[0, 0], A_s[1, 0], dst_block=1)
            T.copy_cluster(A_s, A_s, dst_block=2)
            T.copy(A_s, C[bx * block_M, 0])

    return main
