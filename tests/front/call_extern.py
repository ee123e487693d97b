# T.call_extern calls a device function by name (here CUDA's __float2int_rn) with a result dtype.
# tilescale-test: -k ext -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def ext(N):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(N // 128, threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = T.call_extern("__float2int_rn", A[bx * 128 + i], dtype="int32")

    return main
