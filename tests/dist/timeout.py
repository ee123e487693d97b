# Kernels that can never finish, for the wait-timeout trap test (wait_timeout.c, run by
# check_wait_timeout.sh under `tilescale launch` with TILESCALE_WAIT_TIMEOUT_MS=200).
#   mode=0: wait_eq on a 64-bit flag that nobody sets
#   mode=1: barrier_blocks that the other rank never enters
#   mode=2: barrier_all_block (NVSHMEM family) that the other pe never enters
#   mode=3: sync_all from one thread, likewise
#   mode=4: signal_wait_until(EQ) on a signal word nobody signals
# On the nvshmem backend modes 2-4 would otherwise spin inside NVSHMEM's device library.
import tilelang
import tilelang.language as T


@tilelang.jit
def stuck(mode=0):

    @T.prim_func
    def main(flag: T.Tensor((2,), "uint64"), bar: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            tx = T.get_thread_binding()
            if mode == 0:
                T.wait_eq(flag[1], 1)
            elif mode == 1:
                T.barrier_blocks(bar[0])
            elif mode == 2:
                T.barrier_all_block()
            elif mode == 3:
                if tx == 0:
                    T.sync_all()
            else:
                T.signal_wait_until(T.address_of(flag[1]), T.CmpType.EQ, 1)

    return main
