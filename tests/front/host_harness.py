# A realistic file: torch/argparse harness at module level (parsed, never run), imports inside
# functions (tolerated when unused), a module-level helper called from the factory.
# tilescale-test: -k relu -D N=2048
import argparse

import torch

import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


def ref_program(x):
    return torch.relu(x)


def choose_threads(n):
    import math
    return 256 if n >= 2048 else 128


@tilelang.jit(out_idx=[-1], target="cuda", execution_backend="cython")
def relu(N, dtype="float16"):
    from tilelang.profiler import do_bench  # noqa: F401 (unused: tolerated)
    threads = choose_threads(N)

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, threads), threads=threads) as bx:
            for i in T.Parallel(threads):
                Y[bx * threads + i] = T.max(X[bx * threads + i], 0)

    return main


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2048)
    args = parser.parse_args()
    x = torch.randn(args.n, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(relu(args.n)(x), ref_program(x))
