# T.cumsum of a fragment along its rows: staged through two shared scratch buffers (the scan
# reads one and writes the other), then copied back into the fragment.
# tilescale-test: -k rowwise -D M=256 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowwise(M, N, block_M=32, dtype="float16", accum_dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), accum_dtype)
            T.copy(A[bx * block_M, 0], tile)
            T.cumsum(tile, dim=1)
            T.copy(tile, B[bx * block_M, 0])

    return main
