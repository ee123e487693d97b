# T.thread_return(): the warps past `active` leave the kernel (DeepEP's combine kernels).  A
# shared-memory exchange before the return keeps its barrier; the per-thread work after it
# needs none, and an `if` whose other branch syncs is not "after" the return.
# tilescale-test: -k early_exit -D N=1024
# tilescale-dump: thread_return_barriers
import tilelang
import tilelang.language as T


@tilelang.jit
def early_exit(N, active=64):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), flag: T.Tensor((1,), "int32")):
        with T.Kernel(N // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_shared((128,), "float32")
            T.copy(A[bx * 128], s)
            acc = T.alloc_var("float32")
            acc = 0
            for k in T.serial(4):
                acc += s[(tx + k) % 128]
            if flag[0] == 1:
                T.sync_threads()
            else:
                if tx >= active:
                    T.thread_return()
            for k in T.serial(4):
                acc += A[bx * 128 + (tx + k) % 128]
            B[bx * 128 + tx] = acc

    return main
