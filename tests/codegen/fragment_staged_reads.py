# Column strips of a wgmma accumulator read at a serial loop's offset that is not a multiple of
# the columns' period (jj * 4; the lane pairs repeat every 8): strips at odd multiples of 4 belong
# to other lanes than at even ones, so no loop layout serves every jj.  The accumulator is copied
# once into shared memory in its own layout before the jj loop (stage_fragment.c; nothing in the
# loop writes it) and the strips are read from there (mhc_pre's x_frag[i, jj * 4 + j]).
# tilescale-test: -k strips4 --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def strips4(M=64, N=64, K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), R: T.Tensor((M, 4), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            part = T.alloc_fragment((M, 4), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True)
            T.clear(part)
            for jj in T.serial(N // 4):
                for i, j in T.Parallel(M, 4):
                    part[i, j] += acc[i, jj * 4 + j]
            T.copy(part, R)

    return main
