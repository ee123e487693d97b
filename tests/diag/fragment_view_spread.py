# A view of a GEMM accumulator that merges its dims (T.reshape to [M * N]): the view shares the
# accumulator's registers, whose layout survives adding or removing unit dims and splitting a
# dim at the boundary of its lanes, threads and registers, but not merging rows spread over
# threads with columns; so it is refused instead of given a layout of its own over the same
# registers.
# tilescale-test: -k regroup --arch sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit
def regroup(M=64, N=64, K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M * N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            flat = T.reshape(acc, (M * N,))
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True)
            T.copy(flat, C)

    return main
