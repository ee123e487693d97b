# Elements of a 4-bit tensor share bytes: atomics on them are refused.
# tilescale-test: -k packed4_atomic
import tilelang.language as T


def packed4_atomic(N=64):

    @T.prim_func
    def main(A: T.Tensor((N,), T.uint4)):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            T.atomic_add(A[tx], 1)

    return main
