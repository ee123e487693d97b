# `while` with an IR condition on a T.alloc_var counter becomes an IR while loop.
# tilescale-test: -k collatz -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def collatz(N):

    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Steps: T.Tensor((N,), "int32")):
        with T.Kernel(N // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            x = T.alloc_var("int32", init=A[bx * 128 + tx])
            n = T.alloc_var("int32", init=0)
            while x != 1 and n < 1000:
                x = T.if_then_else(x % 2 == 0, x // 2, 3 * x + 1)
                n += 1
            Steps[bx * 128 + tx] = n

    return main
