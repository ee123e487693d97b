# T.reshape of a fragment shares its registers (codegen: a pointer into the base's array), so
# the view takes the base's layout with the unit dim added (fragment_reshape): here the wgmma
# accumulator seen as [M, 1, N], as DeepSeek's block-sparse MQA indexer reshapes its scores.  A
# loop indexing the reduction's [M, 1] result as `logits[i, 0]` takes that result's layout.
# tilescale-test: -k view_rows --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def view_rows(M=64, N=64, K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), W: T.Tensor((N,), "float32"),
             R: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((N, K), "float16")
            w = T.alloc_fragment((1, N), "float32")
            s = T.alloc_fragment((M, N), "float32")
            s3 = T.reshape(s, (M, 1, N))
            logits = T.alloc_fragment((M, 1), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.copy(W, w[0, :])
            T.gemm(A_shared, B_shared, s, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            for i, o, j in T.Parallel(M, 1, N):
                s3[i, o, j] = T.max(s3[i, o, j], 0) * w[o, j]
            T.reduce_sum(s3, logits, dim=-1, clear=True)
            for i in T.Parallel(M):
                if i % 3 == 0:
                    logits[i, 0] = -1.0
            for i in T.Parallel(M):
                R[i] = logits[i, 0]

    return main
