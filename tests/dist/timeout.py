# Kernels that can never finish, for the wait-timeout trap test (wait_timeout.c, run by
# check_wait_timeout.sh under `tilescale launch` with TILESCALE_WAIT_TIMEOUT_MS=200).
#   mode=0: wait_eq on a 64-bit flag that nobody sets
#   mode=1: barrier_blocks that the other rank never enters
import tilelang
import tilelang.language as T


@tilelang.jit
def stuck(mode=0):

    @T.prim_func
    def main(flag: T.Tensor((2,), "uint64"), bar: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            if mode == 0:
                T.wait_eq(flag[1], 1)
            else:
                T.barrier_blocks(bar[0])

    return main
