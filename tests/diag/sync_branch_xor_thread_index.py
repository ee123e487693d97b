# Inside a branch that differs between threads, each thread reads S[tx] and then writes
# S[tx ^ 1], its neighbour's element: thread 1 reads S[1] while thread 0 writes it.  The two
# indices differ only by a constant from the same expression, but that expression (the thread
# index) differs between the threads, so they are not disjoint: the race needs a barrier that
# cannot be placed there, and the compiler refuses it.
# tilescale-test: -k swap_pairs -D N=128

import tilelang
import tilelang.language as T


@tilelang.jit
def swap_pairs(N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), n: T.Tensor((1,), "int32"), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=N) as bx:
            S = T.alloc_shared((N,), dtype)
            tx = T.get_thread_binding()
            S[tx] = A[tx]
            if tx < n[0]:
                v = S[tx]
                S[tx ^ 1] = v * 2
            B[tx] = S[tx]

    return main
