# A loop whose trip count depends on the thread index, with a shared-memory exchange between
# threads inside it: no __syncthreads can be placed in code that only some threads run, so
# the compiler refuses it instead of emitting a race.
# tilescale-test: -k shift -D N=128

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def shift(N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=N) as bx:
            S = T.alloc_shared((N,), dtype)
            v = T.alloc_var(dtype)
            tx = T.get_thread_binding()
            v = A[tx]
            for k in T.serial(tx % 4):
                S[tx] = v
                v = S[(tx + 1) % N]
            B[tx] = v

    return main
