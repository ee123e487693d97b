# T.ws misuse: a warp group past the kernel's threads, split ranges, nesting, T.ws outside a
# kernel, and a fragment used by warpgroups of different sizes.
# tilescale-test: -k bad_ws --arch sm_90a
import tilelang.language as T


def bad_ws():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            with T.ws(2):
                A[0] = 1.0
            with T.ws(0, 3):
                A[1] = 1.0
            with T.ws(0):
                with T.ws(0):
                    A[2] = 1.0
            with T.ws():
                A[3] = 1.0

    return main
