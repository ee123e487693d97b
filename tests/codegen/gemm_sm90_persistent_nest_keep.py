# A persistent tile loop whose condition reads memory (a tile mask in a tensor) is not one
# the producer may repeat on its own (warp_specialize_nest.c accepts only uniform scalar
# conditions), so the kernel keeps inject_pipeline's cp.async path: no producer, no TMA.
# tilescale-test: -k masked_gemm -D M=256 -D N=256 -D K=128 -D sms=2
# tilescale-dump: warp_specialize

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def masked_gemm(M, N, K, sms, bm=128, bn=128, bk=64, dtype="float16", acc="float32"):
    tiles = T.ceildiv(M, bm) * T.ceildiv(N, bn)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), mask: T.Tensor((tiles,), "int32"),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(sms, threads=128) as (pid):
            a_s = T.alloc_shared((bm, bk), dtype)
            b_s = T.alloc_shared((bk, bn), dtype)
            c_f = T.alloc_fragment((bm, bn), acc)
            for w in T.serial(T.ceildiv(tiles, sms)):
                t = w * sms + pid
                r = t // T.ceildiv(N, bn)
                q = t % T.ceildiv(N, bn)
                if t < tiles and mask[t] != 0:
                    T.clear(c_f)
                    for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                        T.copy(A[r * bm, k * bk], a_s)
                        T.copy(B[k * bk, q * bn], b_s)
                        T.gemm(a_s, b_s, c_f)
                    T.copy(c_f, C[r * bm, q * bn])

    return main
