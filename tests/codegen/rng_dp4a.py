# T.rng_init / T.rng_rand / T.rng_rand_float: each thread's Philox-4x32-10 stream starts at
# output row * 5 (the state is a per-thread uint32[16] declared at the kernel's start; each
# draw is a LET so the state advances once per call, in program order).  T.dp4a accumulates
# two groups of four int8 products into an int32 local.
# tilescale-test: -k rng_dp4a -D N=256
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def rng_dp4a(N, seed=1234):

    @T.prim_func
    def main(R: T.Tensor((N, 4), "uint32"), U: T.Tensor((N,), "float32"), A: T.Tensor((N, 8), "int8"),
             B: T.Tensor((N, 8), "int8"), D: T.Tensor((N,), "int32")):
        with T.Kernel(N // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            row = bx * 128 + tx
            T.rng_init(seed, 0, row * 5)
            for k in T.serial(4):
                R[row, k] = T.rng_rand()
            U[row] = T.rng_rand_float()
            a = T.alloc_local((8,), "int8")
            b = T.alloc_local((8,), "int8")
            c = T.alloc_local((1,), "int32")
            for v in T.vectorized(8):
                a[v] = A[row, v]
                b[v] = B[row, v]
            T.clear(c)
            for k in T.serial(2):
                T.dp4a(a[k * 4], b[k * 4], c[0])
            D[row] = c[0]

    return main
