# T.print of a scalar with a message, guarded to one thread.
# tilescale-test: -k dbg -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def dbg(N):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            if tx == 0:
                T.print(A[bx * 128], msg="first element")
                T.print(bx)
            B[bx * 128 + tx] = A[bx * 128 + tx]

    return main
