# A 4-bit tensor (two elements a byte) is not copied by TMA: T.tma_copy says so.
# tilescale-test: -k packed4_tma --arch sm_90a
import tilelang.language as T


def packed4_tma(N=64):

    @T.prim_func
    def main(B: T.Tensor((N, N), T.float4_e2m1fn)):
        with T.Kernel(1, threads=64) as bx:
            B_s = T.alloc_shared((N, N), T.float4_e2m1fn)
            bar = T.alloc_barrier(1)
            T.tma_copy(B, B_s, barrier=bar[0])

    return main
