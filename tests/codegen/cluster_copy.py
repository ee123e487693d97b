# Distributed shared memory: T.copy_cluster copies block 0's shared tile into block 1's, and
# T.tma_copy(..., cluster_mask=) multicasts a TMA load into every block of the mask.
#  - with remote_barrier, a row-major contiguous run of a multiple of 16 bytes is one bulk copy
#    (ts::dsmem_bulk_copy: thread 0 arrives on block 1's barrier announcing the bytes and issues
#    cp.async.bulk into block 1), and the kernel ends with a cluster barrier;
#  - any other region (here columns 0:N_tile of N_full) is stored element by element through
#    mapa'd addresses (ts::dsmem_store), then a block barrier and one release arrival of thread
#    0 on block 1's barrier (ts::mbar_arrive_remote);
#  - without remote_barrier, the user's T.cluster_sync orders the stores.
# A T.alloc_cluster_barrier is initialised before a cluster barrier, and waits on it acquire
# at cluster scope (ts::mbar_wait_cluster).  regress_gpu.py runs every form.
# tilescale-test: -k cluster_copy -D M=8 -D N_full=64 -D N_tile=32
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def cluster_copy(M, N_full, N_tile, barrier=True, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((M, N_tile), dtype), B: T.Tensor((M, N_tile), dtype)):
        with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)) as pid:
            s_src = T.alloc_shared((M, N_full), dtype)
            s_dst = T.alloc_shared((M, N_full), dtype)
            s_barrier = T.alloc_cluster_barrier([1])
            T.fill(s_src, 0)
            T.fill(s_dst, 0)
            T.cluster_sync()
            if pid == 0:
                for i, j in T.Parallel(M, N_tile):
                    s_src[i, j] = A[i, j]
                if barrier:
                    T.copy_cluster(s_src[0:M, 0:N_tile], s_dst[0:M, 0:N_tile], dst_block=1,
                                   remote_barrier=s_barrier[0])
                else:
                    T.copy_cluster(s_src[0:M, 0:N_tile], s_dst[0:M, 0:N_tile], dst_block=1)
            if not barrier:
                T.cluster_sync()
            if pid == 1:
                if barrier:
                    T.mbarrier_wait_parity(s_barrier[0], 0)
                for i, j in T.Parallel(M, N_tile):
                    B[i, j] = s_dst[i, j]

    return main


@tilelang.jit
def multicast(iters, slots, tile=64):

    @T.prim_func
    def main(A: T.Tensor((iters, tile, tile), "float32"), B: T.Tensor((2, iters, tile, tile), "float32")):
        with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)) as pid:
            a_shared = T.alloc_shared((slots, tile, tile), "float32")
            mbars = T.alloc_barrier([128] * slots)
            for k in T.serial(iters):
                slot = k % slots
                T.tma_copy(A[k, :, :], a_shared[slot, :, :], barrier=mbars[slot], cluster_mask=0b11)
                T.mbarrier_arrive(mbars[slot])
                T.mbarrier_wait_parity(mbars[slot], (k // slots) % 2)
                T.copy(a_shared[slot, :, :], B[pid, k, :, :])
                # both blocks are done with the slot before either refills it (the partner's
                # multicast writes this block's copy)
                T.cluster_sync()

    return main


@tilelang.jit
def multicast_sync(M, N, block_M, block_N, cluster_mask):
    """T.copy_cluster(global, shared, cluster_mask=m): the mask's lowest rank multicasts its own
    tile to the mask's ranks (complete when the call returns); ranks outside load their own."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.ClusterKernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128, cluster_dims=(4, 1, 1)) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), "float16")
            T.copy_cluster(A[by * block_M, bx * block_N], A_shared, cluster_mask=cluster_mask)
            T.copy(A_shared, B[by * block_M, bx * block_N])

    return main
