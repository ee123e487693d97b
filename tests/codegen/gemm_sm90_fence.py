# A wgmma GEMM fed by ordinary shared-memory stores (no T.Pipelined, so no TMA producer):
# on sm_90a every barrier thread_sync inserts is preceded by fence.proxy.async, which makes
# the generic-proxy writes visible to wgmma's async-proxy operand reads.
# (ts.pipeline_serial_loops off: the serial loop is what this test is about.)
# tilescale-test: -k mm_plain -D M=256 -D N=256 -D K=128 --arch sm_90a --pass-config ts.pipeline_serial_loops=False
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def mm_plain(M, N, K, bM=128, bN=128, bK=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128) as (bx, by):
            As = T.alloc_shared((bM, bK), dtype)
            Bs = T.alloc_shared((bK, bN), dtype)
            Cl = T.alloc_fragment((bM, bN), "float32")
            T.clear(Cl)
            for k in T.serial(T.ceildiv(K, bK)):
                T.copy(A[by * bM, k * bK], As)
                T.copy(B[k * bK, bx * bN], Bs)
                T.gemm(As, Bs, Cl)
            T.copy(Cl, C[by * bM, bx * bN])
    return main
