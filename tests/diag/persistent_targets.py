# T.Persistent: a 2-D tile domain iterated with one loop target, and a 9-D domain (at most 8).
# tilescale-test: -k copy2d -D M=256 -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy2d(M, N, block=64, sm_num=8):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(sm_num, threads=128) as (block_id):
            for t in T.Persistent([T.ceildiv(M, block), T.ceildiv(N, block)], sm_num, block_id):
                T.copy(A[t * block, 0], B[t * block, 0])
            for a, b, c, d, e, f, g, h, i in T.Persistent([2, 2, 2, 2, 2, 2, 2, 2, 2], sm_num, block_id):
                T.copy(A[a, b], B[c, i])

    return main
