# A T.alloc_local array of 8192 floats per thread (32 KB, 32 register files' worth).
# tilescale-test: -k scale -D M=1024
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale(M, per_thread=8192):

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 128), threads=128) as bx:
            acc = T.alloc_local((per_thread,), "float32")
            for k in T.serial(per_thread):
                acc[k] = A[bx * 128] * k
            B[bx * 128] = acc[per_thread - 1]

    return main
