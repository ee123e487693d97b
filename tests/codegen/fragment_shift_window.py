# Windows of a GEMM accumulator at offsets that change in an enclosing serial loop
# (`acc[i + s * 16, j]`, DeepSeek's sparse MLA backward storing dKV in two halves): when an
# offset is a multiple of the accumulator's period along that dim (fragment_shift_period: 8 rows
# for one warp row of mma tiles), the loop takes the accumulator's layout and element i + offset
# sits in the same thread as i, offset / (threads of that dim) registers further on; the serial
# loop is unrolled so that those register indices are constants
# (fragment_shift_strips.py: column strips).
# tilescale-test: -k acc_halves --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def acc_halves(M=32, N=128, K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32"),
             D: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            half = T.alloc_shared((M // 2, N), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            for s in T.serial(2):
                for i, j in T.Parallel(M, N):
                    if i < M // 2:
                        half[i, j] = acc[i + s * (M // 2), j]
                T.copy(half, C[s * (M // 2):(s + 1) * (M // 2), :])
            for s in T.serial(2):
                for i, j in T.Parallel(M // 2, N):
                    acc[i + s * (M // 2), j] = acc[i + s * (M // 2), j] + s
            T.copy(acc, D)

    return main
