# A region of a local buffer that runs past its end.
# tilescale-test: -k tile_scale -D M=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def tile_scale(M):

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 8), threads=128) as bx:
            loc = T.alloc_local((8,), "float32")
            T.fill(loc[4:12], 0.0)
            B[bx * 8] = loc[0]

    return main
