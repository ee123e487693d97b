# T.unroll (with unroll_factor) and T.vectorized loops over a per-thread local array.
# tilescale-test: -k local_ops -D N=4096
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def local_ops(N, threads=128, dtype="float32"):
    per = 4

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(N // (threads * per), threads=threads) as bx:
            tx = T.get_thread_binding()
            buf = T.alloc_local((per,), dtype)
            base = (bx * threads + tx) * per
            for v in T.vectorized(per):
                buf[v] = A[base + v]
            for u in T.unroll(per):
                buf[u] = buf[u] * 2
            for u in T.unroll(0, per, unroll_factor=2):
                B[base + u] = buf[u]

    return main
