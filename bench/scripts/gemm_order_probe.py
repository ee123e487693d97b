"""gemm_order_probe.py — does the order in which a persistent GEMM visits its tiles explain
the gap between the corpus's non-persistent GEMM (example_gemm_persistent.py's
matmul_non_persistent, T.use_swizzle(10)) and its T.Persistent kernel at the same
configuration (128x256x64, 3 stages, 256 threads)?  One kernel, written here, compiled with
T.use_swizzle(panel, order) for each panel given (0: enable=False), against torch.matmul
(cuBLAS), same timing as gemm_shapes.py (CUDA events around 10 launches, median of 11).

Run on the GPU machine:  TILESCALE_LIB=$PWD/build/libtilescale.so PYTHONPATH=$PWD/python \\
  python3 bench/scripts/gemm_order_probe.py --panels 0,2,4,8,10,16,32 --shapes 16384x6144x4096

Answer (H200, 2026-11-30): no.  Every panel and order gave 0.93-0.97 of cuBLAS, T.Persistent 1.00
with any group size, and the same tile order both ways (column panels of 8, T.Persistent groups
of 8) still differed by 5%.  The difference was in the K loop: ptxas computed the stage the
consumers release inside its `if`, predicated per-thread arithmetic between the wgmma issues;
with that stage a let of its own, every panel gives 1.00 (warp_specialize.c consumer_k_loop)."""
import argparse
import statistics

import tilelang
import tilelang.language as T
import torch

import gemm_shapes  # (this folder) the timing both probes share

gemm_shapes.torch = torch


@tilelang.jit
def gemm_swizzled(M, N, K, panel, order="row", bM=128, bN=256, bK=64, stages=3, threads=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(M, bM), T.ceildiv(N, bN), threads=threads) as (bx, by):
            As = T.alloc_shared((bM, bK), T.float16)
            Bs = T.alloc_shared((bK, bN), T.float16)
            acc = T.alloc_fragment((bM, bN), T.float32)
            Cs = T.alloc_shared((bM, bN), T.float16)
            T.use_swizzle(max(panel, 1), order=order, enable=panel > 0)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A[bx * bM, k * bK], As)
                T.copy(B[k * bK, by * bN], Bs)
                T.gemm(As, Bs, acc)
            T.copy(acc, Cs)
            T.copy(Cs, C[bx * bM, by * bN])

    return main


@tilelang.jit
def gemm_persistent_grouped(M, N, K, group, sms, bM=128, bN=256, bK=64, stages=3, threads=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(sms, threads=threads) as (bid):
            As = T.alloc_shared((bM, bK), T.float16)
            Bs = T.alloc_shared((bK, bN), T.float16)
            acc = T.alloc_fragment((bM, bN), T.float32)
            Cs = T.alloc_shared((bM, bN), T.float16)
            for bx, by in T.Persistent([T.ceildiv(M, bM), T.ceildiv(N, bN)], sms, bid, group):
                T.clear(acc)
                for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                    T.copy(A[bx * bM, k * bK], As)
                    T.copy(B[k * bK, by * bN], Bs)
                    T.gemm(As, Bs, acc)
                T.copy(acc, Cs)
                T.copy(Cs, C[bx * bM, by * bN])

    return main


AHEAD = False


def timed(fn):
    """gemm_shapes.timed (10 launches between CUDA events), queued behind a sleep with --ahead."""
    if AHEAD:  # the GPU busy meanwhile: every launch is queued before the first starts (no host gaps)
        torch.cuda._sleep(20_000_000)
    return gemm_shapes.timed(fn)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--panels", default="0,4,8,10,16")
    ap.add_argument("--orders", default="row")
    ap.add_argument("--groups", default="8", help="T.Persistent group_size values (tiles along M per group)")
    ap.add_argument("--shapes", default="16384x6144x4096,8192x8192x8192")
    ap.add_argument("--once", action="store_true", help="three launches of each, no timing (for ncu)")
    ap.add_argument("--ahead", action="store_true", help="queue the timed launches behind a sleep kernel")
    args = ap.parse_args()
    global AHEAD
    AHEAD = args.ahead
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        A = torch.randn(M, K, dtype=torch.float16, device="cuda")
        B = torch.randn(K, N, dtype=torch.float16, device="cuda")
        C = torch.empty(M, N, dtype=torch.float16, device="cuda")
        ref = A @ B
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        runs = [("%-6s panel %-3d" % (o, int(p)), lambda o=o, p=int(p): gemm_swizzled(M, N, K, p, o))
                for o in args.orders.split(",") for p in args.panels.split(",") if p]
        runs += [("Persistent group %-3d" % int(g), lambda g=int(g): gemm_persistent_grouped(M, N, K, g, sms))
                 for g in args.groups.split(",") if g]
        for name, make in runs:
            k = make()
            k(A, B, C)
            if args.once:
                k(A, B, C), k(A, B, C)
                torch.cuda.synchronize()
                continue
            err = ((C.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
            ours, cublas = [], []
            for _ in range(3):
                timed(lambda: k(A, B, C)), timed(lambda: torch.matmul(A, B))
            for _ in range(11):
                ours.append(timed(lambda: k(A, B, C)))
                cublas.append(timed(lambda: torch.matmul(A, B)))
            o, c = statistics.median(ours), statistics.median(cublas)
            print("%-18s %-20s ours %.3f ms (%.0f TFLOP/s)  cuBLAS %.3f  ours/cuBLAS %.3f  err %.0e"
                  % (shape, name, o, 2.0 * M * N * K / o / 1e9, c, c / o, err), flush=True)


if __name__ == "__main__":
    main()
