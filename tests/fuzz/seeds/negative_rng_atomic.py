import tilelang
import tilelang.language as T
from tilelang.layout import Layout


def negative(N=64):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((4, 4), "float32")):
        with T.Kernel(1, threads=1):
            for t in T.serial(4):
                B[t, T.Ramp(0, 1, 4)] = A[T.Ramp(t - 2, 1, 4)]
            B[-1, -2] = A[-N]

    return main


def dists(N=128, seed=5):

    @T.prim_func
    def main(D: T.Tensor((N,), "float64"), F: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            tx = T.get_thread_binding()
            T.rng_init(seed, 0, tx * 8)
            D[tx] = T.rng_rand_float(bit=64, dist="normal")
            F[tx] = T.rng_rand_float(dist="normal")

    return main


def ordered(N=256, order="acq_rel"):

    @T.prim_func
    def main(X: T.Tensor((N,), "float16"), Out: T.Tensor((N,), "float16"), Cnt: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=64):
            T.atomic_add(Out[0:N], X[0:N], memory_order=order)
            p = T.atomic_add(Cnt[0], 1, memory_order=order, return_prev=True)
            T.print(p, msg="prev")
            T.print(msg="done")

    return main


def shared_map(N=128):

    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Out: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=N):
            s = T.alloc_shared((N,), "int32")
            T.annotate_layout({s: Layout((N,), lambda i: (i ^ 3) + 7)})
            for i in T.Parallel(N):
                s[i] = A[i]
            for i in T.Parallel(N):
                Out[i] = s[i]

    return main
