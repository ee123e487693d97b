# -D M=-1 used as a tensor dimension: one diagnostic at the first tensor (not one per tensor, nor the grid computed from it).
# tilescale-test: -k tile_scale -D M=-1 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def tile_scale(M, N, block_M=32):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), "float32")
            T.copy(A[bx * block_M, 0], tile)
            for i, j in T.Parallel(block_M, N):
                tile[i, j] = tile[i, j] * 2
            T.copy(tile, B[bx * block_M, 0])

    return main
