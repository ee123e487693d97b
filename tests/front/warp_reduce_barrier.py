# T.warp_reduce_sum/max over the 32 lanes (a butterfly of shuffles, each step bound once),
# and TileScale's T.sync_blocks / T.barrier_blocks given the whole barrier buffer (they take
# its address: the first element), as DeepEP's notify kernels write them.
# tilescale-test: -k warp_red -D num_ranks=4
import tilelang
import tilelang.language as T


@tilelang.jit
def warp_red(num_ranks):

    @T.prim_func
    def main(A: T.Tensor((32,), "int32"), Out: T.Tensor((2,), "float32"), barrier: T.Tensor((num_ranks,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            tx = T.get_thread_binding()
            T.sync_blocks(barrier)
            s = T.warp_reduce_sum(A[tx])
            m = T.warp_reduce_max(T.cast(A[tx], "float32"))
            if tx == 0:
                Out[0] = T.cast(s, "float32")
                Out[1] = m
            T.barrier_blocks(barrier)

    return main
