# T.import_source takes the device source as a string (None imports nothing); T.access_ptr
# takes a buffer.
# tilescale-test: -k ext
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def ext(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.import_source(["__device__ int f();"])
            T.call_extern("f", T.access_ptr(A[0], "r"))

    return main
