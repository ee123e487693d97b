# A view of a GEMM accumulator as another dtype (T.view(acc, dtype="int32")): each thread's registers
# hold the accumulator's elements in its tensor-core layout, which the view cannot follow, so it
# is refused instead of given a layout of its own over the same registers.
# tilescale-test: -k retype --arch sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit
def retype(M=64, N=64, K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N * 2), "float16"), D: T.Tensor((M, N), "int32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            halves = T.view(acc, dtype="float16")
            bits = T.view(acc, dtype="int32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True)
            T.copy(halves, C)
            T.copy(bits, D)

    return main
