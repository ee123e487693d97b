# An identifier with a byte that is not UTF-8 (a Latin-1 file): CPython refuses the file.
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
            scalé = 2
            T.copy(tile, B[bx * block_M, 0])

    return main
