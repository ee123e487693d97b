# A negative constant index past the start of a shared tile: -1 .. -size count from the end, as in
# Python (TileLang's LegalizeNegativeIndex), -5 into 4 elements is out of range.
# tilescale-test: -k tile_scale -D M=256 -D N=4
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def tile_scale(M, N):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 4), threads=128) as bx:
            s = T.alloc_shared((4, 4), "float32")
            T.copy(A[bx * 4, 0], s)
            B[bx * 4, 0] = s[0, -1] + s[0, -5]

    return main
