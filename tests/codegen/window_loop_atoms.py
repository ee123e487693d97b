# Column windows of a swizzled shared tile picked by a loop variable (flashmla's
# `KV_shared[:, j * k_tile : (j + 1) * k_tile]` in a T.unroll over j): the window starts at
# j * 64, a multiple of the 128-byte swizzle's 64-column atom for every j, so each T.tma_copy
# writes its atom at &Q_shared[j * 4096] (atoms are stored one after another) and each GEMM
# reads its window from there, as for a constant window (gemm_window_atoms.py).
# tilescale-test: -k qk_loop --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def qk_loop(D=256, H=64, N=64, k_tile=64):

    @T.prim_func
    def main(Q: T.Tensor((H, D), "bfloat16"), K: T.Tensor((N, D), "bfloat16"), S: T.Tensor((H, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            Q_shared = T.alloc_shared((H, D), "bfloat16")
            K_shared = T.alloc_shared((N, D), "bfloat16")
            acc = T.alloc_fragment((H, N), "float32")
            ready = T.alloc_barrier(arrive_count=[128] * (D // k_tile))
            for j in T.unroll(D // k_tile):
                T.tma_copy(Q[:, j * k_tile : (j + 1) * k_tile], Q_shared[:, j * k_tile : (j + 1) * k_tile], barrier=ready[j])
                T.barrier_arrive(ready[j])
            T.copy(K, K_shared)
            T.clear(acc)
            for j in T.unroll(D // k_tile):
                T.barrier_wait(ready[j], 0)
                T.gemm(Q_shared[:, j * k_tile : (j + 1) * k_tile], K_shared[:, j * k_tile : (j + 1) * k_tile], acc,
                       transpose_B=True)
            T.copy(acc, S)

    return main
