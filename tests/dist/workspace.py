# T.alloc_global workspaces and the one-shot GPU barrier set (make check-dist, host program
# dist_prims.c; each rank runs them on its own GPU).  The runtime zeroes every workspace a
# kernel reads or counts in (atomics, GPU barriers) before each launch, so the host launches
# each kernel 3 times: a workspace left over from the previous launch would hang the barrier
# (the debug timeout traps) or double the sums.
#
# gpu_barrier: every block writes A[bx], crosses init/arrive/wait_barrier_gpu on a
# T.alloc_barrier_gpu word, reads its neighbour's entry (stale: Bad[0]) and the barrier word,
# which must hold exactly 0x80000000 once all nb blocks arrived (Bad[1]); then the same with
# sync_barrier_gpu on a second word and B (Bad[2]).
#
# scratch_sum: every thread atomically adds its X element into part[0, bx] and 1 into
# part[1, bx] (a 2-D workspace) and into acc[0]; after a GPU barrier block 0 sums part into
# Out[0] (values) and Out[1] (count), and copies acc[0] into Out[2].
import tilelang
import tilelang.language as T

TOP = 2147483648  # bit 31 of the barrier word: set once every expected block arrived


@tilelang.jit
def gpu_barrier(nb=256, threads=128):

    @T.prim_func
    def main(A: T.Tensor((nb,), "int32"), B: T.Tensor((nb,), "int32"), Bad: T.Tensor((4,), "int32"),
             base: T.int32):
        with T.Kernel(nb, threads=threads) as bx:
            tx = T.get_thread_binding()
            bar = T.alloc_barrier_gpu()
            bar2 = T.alloc_barrier_gpu()
            word = T.alloc_var("uint32")
            if tx == 0:
                A[bx] = base + bx
            T.init_barrier_gpu(bar[0], nb)
            T.arrive_barrier_gpu(bar[0])
            T.wait_barrier_gpu(bar[0])
            if tx == 0:
                if A[(bx + 1) % nb] != base + (bx + 1) % nb:
                    T.atom_add(Bad[0], 1)
                T.ld(bar[0], word, sem="relaxed", scope="gpu")
                if word != T.uint32(TOP):
                    T.atom_add(Bad[1], 1)
                B[bx] = base * 2 + bx
            T.init_barrier_gpu(bar2[0], nb)
            T.sync_barrier_gpu(bar2[0])
            if tx == 0:
                if B[(bx + 7) % nb] != base * 2 + (bx + 7) % nb:
                    T.atom_add(Bad[2], 1)

    return main


@tilelang.jit
def scratch_sum(nb=96, threads=128):

    @T.prim_func
    def main(X: T.Tensor((nb * threads,), "int32"), Out: T.Tensor((3,), "int32")):
        with T.Kernel(nb, threads=threads) as bx:
            tx = T.get_thread_binding()
            part = T.alloc_global((2, nb), "int32")
            acc = T.alloc_global((1,), "int32")
            bar = T.alloc_barrier_gpu()
            total = T.alloc_var("int32")
            count = T.alloc_var("int32")
            T.atomic_add(part[0, bx], X[bx * threads + tx])
            T.atomic_add(part[1, bx], 1)
            T.atomic_add(acc[0], X[bx * threads + tx])
            T.init_barrier_gpu(bar[0], nb)
            T.sync_barrier_gpu(bar[0])
            if bx == 0 and tx == 0:
                total = 0
                count = 0
                for i in T.serial(nb):
                    total = total + part[0, i]
                    count = count + part[1, i]
                Out[0] = total
                Out[1] = count
                Out[2] = acc[0]

    return main
