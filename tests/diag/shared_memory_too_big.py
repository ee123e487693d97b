# A pipelined tile copy whose stages need more shared memory than one sm_90 block may have.
# tilescale-test: -k big --arch sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def big(M=4096, N=4096, block=256, stages=4):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=128) as (bx):
            S = T.alloc_shared((block, 64), "float32")
            for k in T.Pipelined(T.ceildiv(N, 64), num_stages=stages):
                T.copy(A[bx * block, k * 64], S)
                T.copy(S, B[bx * block, k * 64])

    return main
