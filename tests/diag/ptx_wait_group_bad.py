# T.ptx_wait_group(n) waits until at most n cp.async groups are pending: n is a constant >= 0.
# tilescale-test: -k wait_bad --arch sm_90a
import tilelang.language as T


def wait_bad():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.ptx_commit_group()
            T.ptx_wait_group(-1)

    return main
