# Two T.gemm calls read column windows of one shared tile (Q[:, :128] and Q[:, 128:], as
# sparse MLA splits its query into the main and the rotary part): the buffer takes the
# windows' 128-byte swizzle over all its columns (layout_widen), whose atoms of 64 columns
# are stored one after another, so each window of whole atoms is a tile of its own and the
# second GEMM starts at atom 2 (element 2 * 64 * 64 = 8192).
# tilescale-test: -k qk_split --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def qk_split(D=128, D_tail=64, H=64, N=64):

    @T.prim_func
    def main(Q: T.Tensor((H, D + D_tail), "bfloat16"), K: T.Tensor((N, D), "bfloat16"),
             K_tail: T.Tensor((N, D_tail), "bfloat16"), S: T.Tensor((H, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            Q_shared = T.alloc_shared((H, D + D_tail), "bfloat16")
            K_shared = T.alloc_shared((N, D), "bfloat16")
            K_tail_shared = T.alloc_shared((N, D_tail), "bfloat16")
            acc = T.alloc_fragment((H, N), "float32")
            T.copy(Q, Q_shared)
            T.copy(K, K_shared)
            T.copy(K_tail, K_tail_shared)
            T.gemm(Q_shared[:, :D], K_shared, acc, transpose_B=True, clear_accum=True)
            T.gemm(Q_shared[:, D:], K_tail_shared, acc, transpose_B=True)
            T.copy(acc, S)

    return main
