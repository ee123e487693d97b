# A view of a GEMM accumulator that regroups its dims (T.reshape to [M, N // 8, 8]): the view
# shares the accumulator's registers, whose layout only survives adding or removing unit dims,
# so it is refused instead of given a layout of its own over the same registers.
# tilescale-test: -k regroup --arch sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit
def regroup(M=64, N=64, K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N // 8, 8), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            acc3 = T.reshape(acc, (M, N // 8, 8))
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True)
            T.copy(acc3, C)

    return main
