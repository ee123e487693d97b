# Column strips of a wgmma accumulator at a serial loop's offset (`acc[i, jj * 8 + j]`): the
# accumulator's columns repeat every 8 (pairs of 4 lanes), so a strip at a multiple of 8 is held
# by the loop's own threads (fragment_shift_period) and is 2 registers further on per strip.
# tilescale-test: -k acc_strips --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def acc_strips(M=64, N=64, K=64, width=8):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32"),
             R: T.Tensor((M, width), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            part = T.alloc_fragment((M, width), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True)
            T.clear(part)
            for jj in T.serial(N // width):
                for i, j in T.Parallel(M, width):
                    part[i, j] += acc[i, jj * width + j] * acc[i, jj * width + j]
                    acc[i, jj * width + j] = acc[i, jj * width + j] * (jj + 1)
            T.copy(acc, C)
            T.copy(part, R)

    return main
