# A constant index past the end of a (4, 4) fragment.
# tilescale-test: -k tile_scale -D M=256 -D N=4
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def tile_scale(M, N):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 4), threads=128) as bx:
            acc = T.alloc_fragment((4, 4), "float32")
            T.copy(A[bx * 4, 0], acc)
            acc[5, 0] = 1.0
            T.copy(acc, B[bx * 4, 0])

    return main
