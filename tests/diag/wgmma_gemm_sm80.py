# T.wgmma_gemm asks for wgmma, but the target is sm_80 (no wgmma): refused by the GEMM
# planning pass (plan_gemm) at the call.
# tilescale-test: -k mm -D M=128 -D N=128 -D K=128 --arch sm_80

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def mm(M, N, K, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            As = T.alloc_shared((64, 64), dtype)
            Bs = T.alloc_shared((64, 64), dtype)
            Cl = T.alloc_fragment((64, 64), "float32")
            T.clear(Cl)
            for k in T.serial(T.ceildiv(K, 64)):
                T.copy(A[by * 64, k * 64], As)
                T.copy(B[k * 64, bx * 64], Bs)
                T.wgmma_gemm(As, Bs, Cl)
                T.wait_wgmma(0)
            T.copy(Cl, C[by * 64, bx * 64])

    return main
