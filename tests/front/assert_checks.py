# Static asserts (checked now, with an f-string message), IR asserts and T.device_assert
# (runtime checks in the kernel).
# tilescale-test: -k checked -D N=512
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def checked(N, block=128):
    assert N % block == 0, f"N={N} must be a multiple of {block}"
    assert block <= 1024

    @T.prim_func
    def main(Idx: T.Tensor((N,), "int32"), Out: T.Tensor((N,), "int32")):
        with T.Kernel(N // block, threads=block) as bx:
            tx = T.get_thread_binding()
            k = Idx[bx * block + tx]
            assert k >= 0, "index must be non-negative"
            T.device_assert(k < N, "index out of range")
            Out[bx * block + tx] = k

    return main
