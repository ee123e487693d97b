# A copy of the first rows of a GEMM accumulator (T.copy(acc[:valid, :], ...), as the GQA
# decoder stores only its valid heads) reads a window that does not line up with the
# accumulator's 16-row warp strips: the copy nest takes the accumulator's own layout with a
# smaller extent (fragment_restrict), so each element stays with the thread that holds it, and
# the rows past `valid` are guarded.
# tilescale-test: -k acc_prefix --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def acc_prefix(M=64, N=64, K=64, valid=4):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), O: T.Tensor((valid, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            O_shared = T.alloc_shared((valid, N), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True)
            T.copy(acc[:valid, :], O_shared)
            T.copy(O_shared, O)

    return main
