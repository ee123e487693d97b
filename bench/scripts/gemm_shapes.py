"""gemm_shapes.py — the corpus GEMM kernels that matter to issue 14 (the overlapped AG-GEMM
example's GEMM, signals set) and to issue 18 (example_gemm_persistent.py's persistent and
non-persistent kernels), all 128x256x64 / 3 stages / 256 threads, against torch.matmul
(cuBLAS) on one GPU at the shapes given: kernel time from CUDA events around 10 back-to-back
launches, median of 11 trials, ours and cuBLAS alternating, each result checked against
torch.  --once launches each kernel three times and stops (for ncu: -k regex:"gemm_kernel_kernel|
matmul_persistent_kernel|matmul_non_persistent_kernel" --launch-skip 2 --launch-count 3).

Run on the GPU machine (carry [".corpus"]):
  TILESCALE_LIB=$PWD/build/libtilescale.so PYTHONPATH=$PWD/python:$PWD/python/compat \\
    python3 bench/scripts/gemm_shapes.py .corpus/corpus --shapes 16384x6144x4096,8192x8192x8192
TILESCALE_PASS_CONFIGS=key=value picks a variant of ours.

Measured on an H200 (2026-11-29, at 2da2daa..): ours / cuBLAS at 16384 x 6144 x 4096 is 0.92 for
the AG-GEMM kernel, 0.95 non-persistent, 1.00 persistent; at 8192^3 0.94 / 0.98 / 1.03.  After the
consumers' flag wait went (d5d0952) and the release's stage became a let of its own (2026-11-30):
0.99 / 1.01 / 1.00 and 1.04 / 1.04 / 1.03."""
import argparse
import importlib.util
import os
import statistics
import sys

torch = None  # imported by main(): --help works without it

KERNELS = ("ag", "np", "p")


def load(corpus, rel, name):
    folder = os.path.join(corpus, os.path.dirname(rel))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, os.path.join(corpus, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def timed(fn, calls=10):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def launcher(kind, mods, M, N, K, A, B, C):
    """A no-argument call of kernel `kind` on A, B -> C."""
    cfg = dict(block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    if kind == "ag":
        sig = torch.ones(1, dtype=torch.uint32, device="cuda")
        k = mods["ag"].gemm_kernel(M, N, K, 0, 1, 128, 256, 64, 256, False)
        return lambda: k(A, B, sig, C)
    factory = mods["gp"].matmul_persistent if kind == "p" else mods["gp"].matmul_non_persistent
    k = factory.compile(M=M, N=N, K=K, **cfg)
    return lambda: k(A, B, C)


def measure(name, fn, A, B, C, flops):
    fn()
    ref = A @ B
    err = ((C.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
    ours, cublas = [], []
    for _ in range(3):
        timed(fn), timed(lambda: torch.matmul(A, B))
    for _ in range(11):
        ours.append(timed(fn))
        cublas.append(timed(lambda: torch.matmul(A, B)))
    o, c = statistics.median(ours), statistics.median(cublas)
    print("%-30s ours %.3f ms (%.0f TFLOP/s)  cuBLAS %.3f ms (%.0f)  ours/cuBLAS %.3f  rel err %.0e"
          % (name, o, flops / o / 1e9, c, flops / c / 1e9, c / o, err), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", help="the corpus folder (.corpus/corpus)")
    ap.add_argument("--shapes", default="16384x6144x4096,8192x8192x8192", help="MxNxK,... (fp16)")
    ap.add_argument("--kernels", default=",".join(KERNELS),
                    help="ag (AG-GEMM example's GEMM), np (non-persistent), p (persistent)")
    ap.add_argument("--once", action="store_true", help="three launches of each, no timing (for ncu)")
    args = ap.parse_args()
    global torch
    import torch as torch_module
    torch = torch_module
    kinds = [k for k in args.kernels.split(",") if k]
    bad = [k for k in kinds if k not in KERNELS]
    if bad:
        ap.error("unknown kernel %s (choose from %s)" % (", ".join(bad), ", ".join(KERNELS)))
    mods = {"ag": load(args.corpus, "tilescale/examples/distributed/example_allgather_gemm_overlapped.py", "ag"),
            "gp": load(args.corpus, "tilelang/examples/gemm/example_gemm_persistent.py", "gp")}
    print("pass configs:", os.environ.get("TILESCALE_PASS_CONFIGS") or "(none)")
    for shape in args.shapes.split(","):
        try:
            M, N, K = (int(x) for x in shape.lower().split("x"))
        except ValueError:
            ap.error("--shapes: %r is not MxNxK" % shape)
        A = torch.randn(M, K, dtype=torch.float16, device="cuda")
        B = torch.randn(K, N, dtype=torch.float16, device="cuda")
        C = torch.empty(M, N, dtype=torch.float16, device="cuda")
        for kind in kinds:
            fn = launcher(kind, mods, M, N, K, A, B, C)
            if args.once:
                for _ in range(3):
                    fn()
                torch.cuda.synchronize()
            else:
                measure("%s %dx%dx%d" % (kind, M, N, K), fn, A, B, C, 2.0 * M * N * K)


if __name__ == "__main__":
    main()
