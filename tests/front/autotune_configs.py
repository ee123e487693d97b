# @autotune(configs=...) with a get_configs() built from itertools.product: the config list is
# evaluated and recorded for the runtime; -D picks one point of the space.
# tilescale-test: -k tuned -D N=4096 -D block=256 -D threads=128
import itertools

import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


def get_configs():
    space = dict(block=[128, 256, 512], threads=[128, 256])
    return [dict(zip(space, values)) for values in itertools.product(*space.values())]


@autotune(configs=get_configs(), warmup=10, rep=10)
@tilelang.jit(out_idx=[1])
def tuned(N, block=128, threads=128):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=threads) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1

    return main
