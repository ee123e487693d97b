# T.ClusterKernel: clusters of 1 to 16 blocks along x only, and a grid x that the cluster
# divides.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((128,), "int32")):
    with T.ClusterKernel(128, threads=32, cluster_dims=(2, 2, 1)) as bx:
        A[bx] = T.block_rank_in_cluster()
    with T.ClusterKernel(6, threads=32, cluster_dims=(4, 1, 1)) as bx:
        A[bx] = T.block_rank_in_cluster()
