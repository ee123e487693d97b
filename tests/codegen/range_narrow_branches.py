# Each branch of an IF knows its test: the then branch its conjuncts, the else branch the
# failed comparison (pass_range_narrow).  With 64 threads, tx - 32 is inside A in the branch
# `tx >= 32` and tx + 32 in its else branch (tx < 32), so safe_memory guards neither access,
# and simplify folds `tx < 48` in the else branch to true.  The last store, outside the IF,
# knows nothing more and keeps its guard.
# tilescale-test: -k narrow -D N=64
# tilescale-dump: safe_memory

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def narrow(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N + 8,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            if tx >= 32:
                B[tx - 32] = A[tx - 32]
            else:
                if tx < 48:
                    B[tx + 32] = A[tx + 32] * 2.0
            B[tx + 8] = A[tx + 8]

    return main
