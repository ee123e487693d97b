# The distributions of T.rng_rand_float beyond float32 uniform, as cuRAND computes them for
# Philox-4x32-10 (rng.cuh): bit=64 is a double from one output, dist="normal" a Box-Muller pair
# of floats from two outputs (the second result kept in the state for the next call), and
# bit=64 with dist="normal" a pair of doubles from four.  Each thread draws 7 outputs from
# output row * 8; regress_gpu.py checks them against a Python Philox.
# tilescale-test: -k rng_dists -D N=256
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def rng_dists(N, seed=77):

    @T.prim_func
    def main(D: T.Tensor((N,), "float64"), F: T.Tensor((N, 2), "float32"), G: T.Tensor((N, 2), "float64")):
        with T.Kernel(N // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            row = bx * 128 + tx
            T.rng_init(seed, 0, row * 8)
            D[row] = T.rng_rand_float(bit=64)
            F[row, 0] = T.rng_rand_float(dist="normal")
            F[row, 1] = T.rng_rand_float(dist="normal")
            G[row, 0] = T.rng_rand_float(bit=64, dist="normal")
            G[row, 1] = T.rng_rand_float(bit=64, dist="normal")

    return main
