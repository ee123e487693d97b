# tilescale-test: -k k -D N=64
# Names ending in '_' used twice in one kernel: codegen's fresh-name loop must terminate.
import tilelang.language as T


def k(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B_: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i_ in T.serial(N):
                A[i_] = B_[i_]
            for i_ in T.serial(N):
                B_[i_] = A[i_]
            x_ = T.alloc_local((1,), "float32")
            x_[0] = A[0]
            A[1] = x_[0]

    return main
