"""bench_vs_tilelang.py — TileLang's own example kernels, built by TileLang itself and by this
project from the same file with the file's own configuration, on the same random inputs, both
checked against torch, timed the same way, alternating between the two systems.

    python3 bench/tilelang/bench_vs_tilelang.py CORPUS_EXAMPLES_DIR --peer /tmp/peer [--rounds 2]
                                                [--only NAME[,NAME...]]

Both systems are imported as `tilelang`, so each measurement runs in its own worker process
(--worker CASE SYSTEM): PYTHONPATH=python for ours, PYTHONPATH=PEER for TileLang 0.1.15
(../shared/peer/README.md installs it).  A worker builds the kernel from the corpus file, runs
it on inputs from a fixed seed, compares with the torch reference, then times the kernel call
with CUDA events: 10 warm-up runs, then the median of 50, each after flushing L2 (a 256 MB
write).  The driver alternates peer and ours `--rounds` times per case and keeps each
system's best median; it prints TFLOP/s (or GB/s) for torch, TileLang and ours, and ours /
TileLang.  A wrong result is reported as such and never timed."""
import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(corpus, rel):
    spec = importlib.util.spec_from_file_location("case_" + os.path.basename(rel)[:-3], os.path.join(corpus, rel))
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.join(corpus, rel)))
    spec.loader.exec_module(mod)
    return mod


# ---- cases: each returns (run, ref, work, unit) where run() launches the kernel and returns
# its output, ref() the torch result, work the flop or byte count, unit "TFLOP/s" or "GB/s".
def case_gemm(corpus):
    import torch
    m = load(corpus, "gemm/example_gemm.py")
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    k = m.matmul.compile(M=M, N=N, K=K, block_M=128, block_N=128, block_K=32)
    return (lambda: k(a, b)), (lambda: a @ b), 2.0 * M * N * K, "TFLOP/s"


def case_mha_bhsd(corpus):
    import torch
    m = load(corpus, "flash_attention/example_mha_fwd_bhsd.py")
    B, H, S, D = 8, 32, 4096, 128
    q, kk, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
    k = m.flashattn(B, H, S, S, D, False, block_M=128, block_N=128, num_stages=2, threads=256)
    ref = lambda: torch.nn.functional.scaled_dot_product_attention(q, kk, v)  # noqa: E731
    return (lambda: k(q, kk, v)), ref, 4.0 * B * H * S * S * D, "TFLOP/s"


def case_mha_bhsd_causal(corpus):
    import torch
    m = load(corpus, "flash_attention/example_mha_fwd_bhsd.py")
    B, H, S, D = 8, 32, 4096, 128
    q, kk, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
    k = m.flashattn(B, H, S, S, D, True, block_M=128, block_N=128, num_stages=2, threads=256)
    ref = lambda: torch.nn.functional.scaled_dot_product_attention(q, kk, v, is_causal=True)  # noqa: E731
    return (lambda: k(q, kk, v)), ref, 2.0 * B * H * S * S * D, "TFLOP/s"


def case_mla_decode(corpus):
    import torch
    m = load(corpus, "deepseek_mla/example_mla_decode.py")
    B, H, S, D, P = 64, 128, 8192, 512, 64
    q = torch.randn(B, H, D, device="cuda", dtype=torch.float16)
    q_pe = torch.randn(B, H, P, device="cuda", dtype=torch.float16)
    kv = torch.randn(B, S, 1, D, device="cuda", dtype=torch.float16)
    k_pe = torch.randn(B, S, 1, P, device="cuda", dtype=torch.float16)
    k = m.flashattn(B, H, 1, S, D, P, 64, 64, 1, (D + P) ** -0.5)

    def ref():
        query = torch.cat([q, q_pe], -1).float()
        key = torch.cat([kv, k_pe], -1)[:, :, 0].float()
        p = torch.softmax(query @ key.transpose(1, 2) * (D + P) ** -0.5, -1)
        return (p @ kv[:, :, 0].float()).half()
    return (lambda: k(q, q_pe, kv, k_pe)), ref, 2.0 * B * H * S * (2 * D + P), "TFLOP/s"


def case_rms_norm(corpus):
    import torch
    m = load(corpus, "norm/rms_norm.py")
    M = N = 8192
    a = torch.randn(M, N, device="cuda", dtype=torch.float32)
    k = m.rms_norm.compile(M=M, N=N, blk_m=1)
    return (lambda: k(a)), (lambda: m.ref_program(a)), 2.0 * M * N * 4, "GB/s"


def case_layernorm(corpus):
    import torch
    m = load(corpus, "norm/layernorm.py")
    N, D = 4096, 8192
    x = torch.randn(N, D, device="cuda", dtype=torch.bfloat16)
    g = torch.randn(D, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(D, device="cuda", dtype=torch.bfloat16)
    k = m._layernorm_fwd(N, D)
    ref = lambda: torch.nn.functional.layer_norm(x.float(), (D,), g.float(), b.float(), 1e-5).to(x.dtype)  # noqa
    return (lambda: k(x, g, b)[0]), ref, 2.0 * N * D * 2, "GB/s"


def case_gemm_persistent(corpus, persistent):
    import torch
    m = load(corpus, "gemm/example_gemm_persistent.py")
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    f = m.matmul_persistent if persistent else m.matmul_non_persistent
    k = f.compile(M=M, N=N, K=K, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    return (lambda: k(a, b)), (lambda: a @ b), 2.0 * M * N * K, "TFLOP/s"


def case_gemm_autotune_heuristic(corpus):
    """example_gemm_autotune.py without --use_autotune: its sm_90 heuristic config, which both
    autotuners also choose at 4096^3."""
    import torch
    m = load(corpus, "gemm/example_gemm_autotune.py")
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16)
    k = m.matmul(M, N, K, 128, 256, 64, 3, 256, True)
    return (lambda: k(a, b)), (lambda: a @ b.T), 2.0 * M * N * K, "TFLOP/s"


def case_mha_bshd(corpus, causal):
    import torch
    m = load(corpus, "flash_attention/example_mha_fwd_bshd.py")
    B, H, S, D = 8, 32, 4096, 128
    q, kk, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    k = m.flashattn(B, H, S, D, causal, block_M=128, block_N=128, num_stages=1, threads=128)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    ref = lambda: sdpa(q.transpose(1, 2), kk.transpose(1, 2), v.transpose(1, 2), is_causal=causal).transpose(1, 2)  # noqa
    return (lambda: k(q, kk, v)), ref, (2.0 if causal else 4.0) * B * H * S * S * D, "TFLOP/s"


def case_gqa_bshd(corpus):
    import torch
    m = load(corpus, "flash_attention/example_gqa_fwd_bshd.py")
    B, H, S, D, G = 1, 64, 4096, 128, 16
    q = torch.randn(B, S, H, D, device="cuda", dtype=torch.float16)
    kk, v = (torch.randn(B, S, H // G, D, device="cuda", dtype=torch.float16) for _ in range(2))
    k = m.flashattn(B, H, S, D, False, groups=G, block_M=64, block_N=64, num_stages=2, threads=128)
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def ref():
        kr, vr = (t.repeat_interleave(G, dim=2).transpose(1, 2) for t in (kk, v))
        return sdpa(q.transpose(1, 2), kr, vr).transpose(1, 2)
    return (lambda: k(q, kk, v)), ref, 4.0 * B * H * S * S * D, "TFLOP/s"


def case_gemm_fp8(corpus):
    import torch
    m = load(corpus, "gemm_fp8/example_tilelang_gemm_fp8.py")
    T_E4M3 = m.determine_fp8_type()
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16).to(torch.float8_e4m3fn)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16).to(torch.float8_e4m3fn)
    run = lambda: m.matmul(a, b, 128, 128, 64, T_E4M3)  # noqa: E731 (the file's eager call)
    return run, (lambda: a.half() @ b.half().T), 2.0 * M * N * K, "TFLOP/s"  # fp8 C: within half an ulp


def case_elementwise_add(corpus):
    import torch
    m = load(corpus, "elementwise/example_elementwise_add.py")
    M = N = 8192
    a, b = (torch.randn(M, N, device="cuda", dtype=torch.float32) for _ in range(2))
    run = lambda: m.elementwise_add(a, b, block_M=32, block_N=32, threads=128, in_dtype="float32", out_dtype="float32")  # noqa
    return run, (lambda: a + b), 3.0 * M * N * 4, "GB/s"


CASES = {"gemm 8192^3 fp16 (128x128x32, 3 st, 128 thr)": case_gemm,
         "gemm_persistent non-persistent 8192^3 (128x256x64, 3, 256)": lambda c: case_gemm_persistent(c, False),
         "gemm_persistent persistent 8192^3 (128x256x64, 3, 256)": lambda c: case_gemm_persistent(c, True),
         "gemm_autotune heuristic 4096^3 (128x256x64, 3, 256, raster)": case_gemm_autotune_heuristic,
         "gemm_fp8 e4m3 4096^3 (128x128x64)": case_gemm_fp8,
         "mha_fwd_bshd B8 H32 S4096 D128 (128x128, 1 st, 128 thr)": lambda c: case_mha_bshd(c, False),
         "mha_fwd_bshd causal B8 H32 S4096 D128 (128x128, 1, 128)": lambda c: case_mha_bshd(c, True),
         "gqa_fwd_bshd b1 h64 g16 S4096 D128 (64x64, 2, 128)": case_gqa_bshd,
         "elementwise add 8192^2 fp32 (32x32, 128 thr)": case_elementwise_add,
         "mha_fwd_bhsd B8 H32 S4096 D128 (128x128, 2 st, 256 thr)": case_mha_bhsd,
         "mha_fwd_bhsd causal B8 H32 S4096 D128 (128x128, 2 st, 256 thr)": case_mha_bhsd_causal,
         "mla_decode b64 h128 kv8192 (64x64)": case_mla_decode,
         "rms_norm 8192^2 fp32": case_rms_norm,
         "layernorm fwd 4096x8192 bf16": case_layernorm}


def time_call(run, reps=50, warmup=10):
    import torch
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        run()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def worker(corpus, name, system):
    import torch
    torch.manual_seed(0)
    out = {"case": name, "system": system}
    try:
        run, ref, work, unit = CASES[name](corpus)
        got, want = run(), ref()
        got = got if isinstance(got, torch.Tensor) else got[0]
        err = (got.float() - want.float()).abs().max().item()
        scale = want.float().abs().max().item()
        out.update(unit=unit, work=work, max_err=err, ref_max=scale)
        if not math.isfinite(err) or err > 5e-2 * max(1.0, scale):
            out["wrong"] = True
        else:
            out["ms"] = time_call(run)
            if system == "ours":
                out["torch_ms"] = time_call(ref)
    except Exception as e:  # noqa: BLE001 (report, never crash the driver)
        out["error"] = ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200]
    print(json.dumps(out))


def rate(work, ms, unit):
    return work / (ms * 1e-3) / (1e12 if unit == "TFLOP/s" else 1e9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--peer", default="/tmp/peer")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="", help="run only the cases whose name contains one of these comma-separated substrings")
    ap.add_argument("--worker", nargs=2, metavar=("CASE", "SYSTEM"))
    a = ap.parse_args()
    if a.worker:
        return worker(a.corpus, a.worker[0], a.worker[1])
    envs = {"ours": dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
            "peer": dict(os.environ, PYTHONPATH=a.peer, TILELANG_CACHE_DIR=os.environ.get("TILELANG_CACHE_DIR", "/tmp/tlcache"))}
    envs["ours"].setdefault("TILESCALE_LIB", os.path.join(ROOT, "build", "libtilescale.so"))
    print("%-58s %9s %9s %9s %8s  %s" % ("example (own configuration)", "torch", "TileLang", "ours", "ours/TL", "unit"))
    ratios = []
    for name in CASES:
        if a.only and not any(part and part in name for part in a.only.split(",")):
            continue
        best = {}
        info = {}
        for _ in range(a.rounds):
            for system in ("peer", "ours"):
                p = subprocess.run([sys.executable, __file__, a.corpus, "--worker", name, system], env=envs[system],
                                   capture_output=True, text=True, timeout=600)
                lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
                r = json.loads(lines[-1]) if lines else {"error": (p.stderr or p.stdout).strip().splitlines()[-1:]}
                info[system] = r
                if "ms" in r:
                    best[system] = min(best.get(system, 1e30), r["ms"])
                if "torch_ms" in r:
                    best["torch"] = min(best.get("torch", 1e30), r["torch_ms"])
        unit = next((r.get("unit") for r in info.values() if r.get("unit")), "")
        work = next((r.get("work") for r in info.values() if r.get("work")), 0)
        cols = []
        for s in ("torch", "peer", "ours"):
            if s in best:
                cols.append("%9.1f" % rate(work, best[s], unit))
            else:
                r = info.get(s, {})
                cols.append("%9s" % ("WRONG" if r.get("wrong") else "error" if s != "torch" else "-"))
        ratio = best["peer"] / best["ours"] if "peer" in best and "ours" in best else None
        if ratio:
            ratios.append(ratio)
        print("%-58s %s %8s  %s" % (name, " ".join(cols), "%.2f" % ratio if ratio else "-", unit))
        for s in ("peer", "ours"):
            if "error" in info.get(s, {}):
                print("    %s: %s" % (s, info[s]["error"]))
    if ratios:
        print("geomean ours/TileLang over %d rows: %.2f" % (len(ratios), math.exp(sum(map(math.log, ratios)) / len(ratios))))


if __name__ == "__main__":
    main()
