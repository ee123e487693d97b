# T.reduce_bitand/bitor/bitxor take integer or bool buffers: a float buffer is an error at the call.
# tilescale-test: -k rowand -D M=64 -D N=64
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowand(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            f = T.alloc_fragment((M, N), "float32")
            o = T.alloc_fragment((M,), "float32")
            T.copy(A, f)
            T.reduce_bitand(f, o, dim=1)
            T.copy(o, B)

    return main
