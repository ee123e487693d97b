# An @autotune factory compiled without values for its tuned parameters (they default to None,
# as in gemv's get_autotuned_kernel): they take the first config's values (block=256,
# threads=64), what the tuner builds first; a parameter with another default keeps it.
# tilescale-test: -k tuned -D N=4096
import itertools

import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


def get_configs():
    space = dict(block=[256, 512], threads=[64, 128], scale=[3, 4])
    return [dict(zip(space, values)) for values in itertools.product(*space.values())]


@autotune(configs=get_configs(), warmup=10, rep=10)
@tilelang.jit(out_idx=[1])
def tuned(N, block=None, threads=None, scale=2):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=threads) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * scale

    return main
