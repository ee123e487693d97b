"""bench_overlap.py — TileScale's overlapped kernels, built from TileScale's own example files,
against the serial torch path (cuBLAS + NCCL), in the same run, on every GPU of the group:

    tilescale launch -n NDEV python3 bench/dist/bench_overlap.py [--corpus DIR] [--small]
                     [--only ag_gemm,gemm_rs,sp_attn,sp_attn_causal] [--trials 30] [--warmup 5]

(`make bench-dist` runs it after bench_dist; one process per GPU, as `tilescale launch`,
torchrun, srun or mpirun start them.)

    ag_gemm   example_allgather_gemm_overlapped.py: copy-engine pulls of the peers' A slices,
              each followed by a stream write of a signal word, while its GEMM kernel waits
              per row block for the slice's signal.  Against all_gather_into_tensor + matmul.
    gemm_rs   example_gemm_rs_overlapped.py + reduce_scatter.py: the GEMM kernel counts finished
              tiles per rank slice and releases a signal; the slice is copied to its owner as
              soon as it is signalled, then a ring-reduce kernel sums the received slices.
              Against matmul + reduce_scatter_tensor.
    sp_attn   example_sp_ag_attention_intra_node.py: copy-engine all-gather of K/V, then the
              zig-zag flash-attention kernel, against the file's own TorchSequenceParallelAttn
              (all_gather_into_tensor of K/V + scaled_dot_product_attention); non-causal (the
              file's default) and causal rows.
    cannon    example_cannon.py's kernel (its factory alone: the file runs its benchmark at
              import) on a square mesh of ranks, M = N = K = 16896 on 2x2 (the nearest size to
              the file's default 16384 at which its puts stay inside their buffers: at 16384 the
              last put overruns by 1 MB; 4096 with --small), signals reset before each call (untimed, before the ranks are
              settled: the file's own loop resets them with no barrier and can hang), against one cuBLAS GEMM of the
              whole problem on one GPU divided by the number of GPUs (perfect scaling).  Checked
              against tests/dist/mesh_gemm_model.py's model of the program (the file's own check
              cannot pass on a mesh: C is kept in fp16 between steps).  Skipped on a number of
              ranks that is not a square over 1.  (SUMMA's kernel does not compute A·Bᵀ on a
              mesh, see mesh_gemm_model.py, so it is not benchmarked.)
    deepep_dispatch, deepep_combine
              deepseek_deepep/'s EPBuffer (intranode dispatch and combine kernels), the file's
              default sizes (4096 tokens, hidden 7168, top-8 of 32 experts; 256 / 1024 / 4 / 8
              with --small), against the all-to-all they replace: the tokens packed per
              destination (index_select) + all_to_all_single, and back + the sum per token
              (index_add_).  Checked exactly against tests/dist/deepep_model.py's reference of
              DeepEP's semantics before and after timing (the file's own reference is deep_ep).

The kernels and host flows are the example files' own functions (the files are imported from
the corpus, not copied here); shapes follow TileScale's benchmarks: M 8192 per rank,
N 12288, K 4096, fp16 (AG-GEMM: A is M/rank x K, B is K x N/ranks; GEMM-RS: A is M x K/ranks,
B is K/ranks x N), and the SP example's defaults.  --small: quick shapes.

Every benchmark is checked before timing (the buffers the overlapped path fills are poisoned
with NaN first, so a missing copy or a race shows as a wrong result) and once more on the output
of its last timed call.  One trial = every GPU synchronised, a host barrier, a one-element NCCL
all-reduce on the current stream (so the GPUs start together and host skew is not timed), a
start event, one call, an end event.  Ours and torch alternate (ours first in even trials);
a trial's time is the slowest rank's; the table shows medians (and p25/p75) over the trials.
ratio = torch ms / ours ms (above 1: ours is faster).

Exit status: 0 when every benchmark ran and was verified, 1 otherwise, 2 on a usage error (the
corpus missing, shapes that do not divide)."""
import argparse
import gc
import importlib.util
import os
import statistics
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join("tilescale", "examples", "distributed")
BENCHES = ("ag_gemm", "gemm_rs", "sp_attn", "sp_attn_causal", "cannon", "deepep_dispatch", "deepep_combine")

# What the bench calls in each example file (checked when the files are loaded, so a corpus
# whose examples changed says which name it lacks instead of failing mid-run).
NEEDS = {
    "example_allgather_gemm_overlapped.py": ("gemm_kernel", "set_signal_kernel", "ag_gemm_op",
                                             "torch_ag_gemm",
                                             "cp_engine_producer_all_gather_full_mesh_pull"),
    "example_gemm_rs_overlapped.py": ("gemm_kernel", "gemm_rs_op", "torch_gemm_rs",
                                      "create_reduce_scater_2d_ctx"),
    "example_sp_ag_attention_intra_node.py": ("FusedSequenceParallelAttn",
                                              "TorchSequenceParallelAttn"),
}
FILE_OF = {"ag_gemm": "example_allgather_gemm_overlapped.py",
           "gemm_rs": "example_gemm_rs_overlapped.py",
           "sp_attn": "example_sp_ag_attention_intra_node.py",
           "sp_attn_causal": "example_sp_ag_attention_intra_node.py",
           "cannon": None,  # example_cannon.py runs code at import: its factory is taken alone
           "deepep_dispatch": None, "deepep_combine": None}  # deepseek_deepep/'s modules, imported by name

# The examples' tile configuration (their main()s): GEMMs of 128 x 256 x 64 tiles, 256 threads.
BLOCK_M, BLOCK_N, BLOCK_K, THREADS = 128, 256, 64, 256


class UsageError(Exception):
    pass


# ---- arguments (no torch, no GPU: --help works anywhere) -------------------------------------
def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench_overlap.py", description=__doc__.split("\n\n")[0],
        epilog="Run one process per GPU: tilescale launch -n NDEV python3 bench/dist/bench_overlap.py")
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared", "corpus"),
                    help="the corpus folder holding tilescale/examples/distributed "
                         "(default: ../shared/corpus beside the checkout)")
    ap.add_argument("--only", default=",".join(BENCHES),
                    help="comma-separated benchmarks (default: all of %s)" % ",".join(BENCHES))
    ap.add_argument("--small", action="store_true",
                    help="quick shapes (M 1024/rank, N 4096, K 2048; short sequences)")
    ap.add_argument("--m-per-rank", type=int, default=None, help="GEMM rows per rank (8192)")
    ap.add_argument("--n", type=int, default=None, help="GEMM N, whole (12288)")
    ap.add_argument("--k", type=int, default=None, help="GEMM K, whole (4096)")
    ap.add_argument("--persistent", action="store_true",
                    help="AG-GEMM: the example's persistent kernel (one block per SM)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed calls of each side (5)")
    ap.add_argument("--trials", type=int, default=30, help="timed calls of each side (30)")
    ap.add_argument("--calls", type=int, default=1,
                    help="back-to-back calls per timed trial, time per call reported (1: each "
                         "call alone after the GPUs idle; more: the host enqueues ahead, as in "
                         "a model's layers; Cannon/SUMMA stay at 1)")
    ap.add_argument("--breakdown", action="store_true",
                    help="ag_gemm: also time its parts alone (the GEMM kernel on signals already "
                         "set, the copy-engine gather, torch's matmul and all_gather) and print them; "
                         "deepep_*: each side's kernels under torch.profiler, and its wall time")
    ap.add_argument("--rechecks", type=int, default=1,
                    help="checked calls after the timed ones (1); the row says how many were wrong")
    ap.add_argument("--rs-barrier", action="store_true",
                    help="gemm_rs: every rank waits for all ranks' scatter copies before its ring "
                         "reduce (the cross-rank barrier the example's reduce_scatter.py leaves "
                         "commented out), to tell a race in the example's flow from one of ours")
    ap.add_argument("--tol", type=float, default=1e-2,
                    help="GEMMs: max |ours - torch| allowed, relative to max |torch| (1e-2)")
    args = ap.parse_args(argv)
    args.only = [b.strip() for b in args.only.split(",") if b.strip()]
    for b in args.only:
        if b not in BENCHES:
            ap.error("--only: unknown benchmark %r (known: %s)" % (b, ", ".join(BENCHES)))
    small = args.small
    args.m_per_rank = args.m_per_rank or (1024 if small else 8192)
    args.n = args.n or (4096 if small else 12288)
    args.k = args.k or (2048 if small else 4096)
    # The SP example's defaults (its argparse), or run_corpus_dist's quick ones.
    args.sp = dict(batch_size=2, q_head=8 if small else 32, kv_head=2 if small else 8,
                   max_seqlen_q=1024 if small else 8192, max_seqlen_k=1024 if small else 12288,
                   head_dim=128, seqlens_q=[512, 1024] if small else [4096, 8192],
                   seqlens_k=[1024, 1024] if small else [6144, 12288])
    if args.trials < 1 or args.warmup < 0 or args.calls < 1:
        ap.error("--trials and --calls must be >= 1 and --warmup >= 0")
    return args


def check_shapes(args, world):
    """The examples' kernels assume whole tiles per rank slice: say which size does not fit."""
    m, n, k = args.m_per_rank, args.n, args.k
    bad = []
    if m % BLOCK_M:
        bad.append("M per rank %d is not a multiple of %d" % (m, BLOCK_M))
    if n % (world * BLOCK_N):
        bad.append("N %d is not a multiple of %d ranks x %d" % (n, world, BLOCK_N))
    if k % (world * BLOCK_K):
        bad.append("K %d is not a multiple of %d ranks x %d" % (k, world, BLOCK_K))
    sp = args.sp
    for s in sp["seqlens_q"] + sp["seqlens_k"]:
        if s % (2 * world):
            bad.append("sequence length %d is not a multiple of 2 x %d ranks (zig-zag halves)"
                       % (s, world))
    if bad:
        raise UsageError("; ".join(bad))


def heap_bytes_needed(args, world, benches):
    """Symmetric-heap bytes every benchmark allocates (fp16 = 2 bytes), summed (a finished
    benchmark's blocks are freed lazily), plus slack for alignment and signal words."""
    m, n, k = args.m_per_rank, args.n, args.k
    M = m * world
    total = 0
    if "ag_gemm" in benches:  # B, C, the gathered A
        total += 2 * (k * (n // world) + M * (n // world) + M * k)
    if "gemm_rs" in benches:  # A, B, C, output, scatter, per-node and p2p buffers
        total += 2 * (M * (k // world) + (k // world) * n + M * n + m * n + M * n + 2 * m * n)
    sp = args.sp
    for b in ("sp_attn", "sp_attn_causal"):
        if b in benches:  # gathered K and V, the shards, q
            kv = sp["batch_size"] * sp["max_seqlen_k"] * sp["kv_head"] * sp["head_dim"]
            total += 2 * (2 * kv + 2 * sum(sp["seqlens_k"]) // world * sp["kv_head"] * sp["head_dim"]
                          + sum(sp["seqlens_q"]) // world * sp["q_head"] * sp["head_dim"])
    if "cannon" in benches:  # A and B double-buffered, C: tiles of (size / mesh)^2 (2x2 mesh at most)
        size = cannon_size(args, 2)
        total += 2 * 5 * (size // 2) ** 2
    need = int(total * 1.25) + (256 << 20)
    # Each benchmark's allocator (as the examples make it) takes 1 GiB of the heap; the last
    # one's blocks may still be held when the next starts (freed at the next barrier).
    return max(need, (2 << 30) + (256 << 20))


# ---- finding the examples and this checkout's packages -------------------------------------
def example_dir_of(corpus):
    d = os.path.join(corpus, EXAMPLES)
    if not os.path.isdir(d):
        raise UsageError("no TileScale examples at %s (pass --corpus DIR)" % d)
    return d


def has_cuda_python():
    """cuda-python itself (cudart and its metadata), asked of a child python: a bare `cuda`
    namespace left by other NVIDIA wheels is not enough (tests/dist/run_corpus_dist.py)."""
    probe = "from cuda import cudart; import importlib.metadata as m; m.version('cuda-python')"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def setup_paths(example_dir, cuda_python=None):
    """This checkout's packages first; python/compat (the stand-in for the few cuda-python calls
    the examples make) only where cuda-python is missing; the examples' folder for their
    sibling imports (reduce_scatter, sp_ag_attention_intra_node)."""
    py = os.path.join(ROOT, "python")
    if py not in sys.path:
        sys.path.insert(0, py)
    if not (has_cuda_python() if cuda_python is None else cuda_python):
        sys.path.insert(sys.path.index(py) + 1, os.path.join(py, "compat"))  # before site-packages
    if example_dir not in sys.path:
        sys.path.append(example_dir)


def load_examples(example_dir, benches):
    """{file name: module} for the files `benches` use, each checked for the names we call."""
    mods = {}
    for b in benches:
        name = FILE_OF[b]
        if name is None or name in mods:
            continue
        path = os.path.join(example_dir, name)
        if not os.path.exists(path):
            raise UsageError("%s is not in %s" % (name, example_dir))
        spec = importlib.util.spec_from_file_location(name[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name[:-3]] = mod
        spec.loader.exec_module(mod)
        missing = [f for f in NEEDS[name] if not hasattr(mod, f)]
        if missing:
            raise UsageError("%s lacks %s (the corpus changed?)" % (name, ", ".join(missing)))
        mods[name] = mod
    return mods


# ---- measuring -------------------------------------------------------------------------------
class Group:
    """This process's place in the group, and the collective helpers the timing uses."""

    def __init__(self, world, rank, local_rank, pg):
        import torch
        self.world, self.rank, self.local_rank, self.pg = world, rank, local_rank, pg
        self.align_word = torch.zeros(1, device="cuda")

    def settle(self):
        """Every GPU idle, every rank here, then the GPUs released together: a one-element
        all-reduce on the current stream ends at (nearly) the same moment on every GPU."""
        import torch
        import torch.distributed as dist
        import tilelang.distributed as td
        torch.cuda.synchronize()
        td.barrier()
        dist.all_reduce(self.align_word, group=self.pg)

    def slowest(self, values):
        """Element-wise maximum over the ranks of a list of floats."""
        import torch
        import torch.distributed as dist
        t = torch.tensor(values, dtype=torch.float64, device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.pg)
        return t.tolist()


def time_once(g, fn, prepare=None, calls=1):
    """One trial of fn (ms per call of `calls` back-to-back calls); prepare() runs first,
    untimed, before the ranks are settled."""
    import torch
    if prepare:
        prepare()
    g.settle()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def measure(g, ours, torch_fn, warmup, trials, prepare=None, calls=1):
    """(ours ms list, torch ms list), one entry per trial, each the slowest rank's; prepare():
    untimed, before each call of ours, ahead of the settling (every rank done with it before
    any rank starts).  calls > 1: each trial times that many back-to-back calls (the host
    enqueues ahead of the GPU, as in a model's layers) and gives the time per call."""
    for _ in range(warmup):
        for fn in (ours, torch_fn):
            if fn is ours and prepare:
                prepare()
            g.settle()
            fn()
    mine, theirs = [], []
    for t in range(trials):
        if t % 2 == 0:
            mine.append(time_once(g, ours, prepare, calls))
            theirs.append(time_once(g, torch_fn, None, calls))
        else:
            theirs.append(time_once(g, torch_fn, None, calls))
            mine.append(time_once(g, ours, prepare, calls))
    both = g.slowest(mine + theirs)
    return both[:trials], both[trials:]


def quantiles(xs):
    s = sorted(xs)
    q = statistics.quantiles(s, n=4) if len(s) > 1 else [s[0]] * 3
    return statistics.median(s), q[0], q[2]


def compare(g, out, ref, tol, rel=True):
    """(ok on every rank, the largest error over the ranks).  rel: max |out - ref| against
    tol * max |ref| (GEMMs, fp32 accumulation in both); else allclose(atol=rtol=tol)."""
    import torch
    o, r = out.float(), ref.float()
    err = (o - r).abs().max().item() if o.numel() else 0.0
    if rel:
        ok = bool(torch.isfinite(o).all().item()) and err <= tol * max(r.abs().max().item(), 1e-6)
    else:
        ok = bool(torch.isfinite(o).all().item()) and bool(torch.allclose(o, r, atol=tol, rtol=tol))
    if err != err:  # NaN: a poisoned element survived
        err = float("inf")
    worst = g.slowest([0.0 if ok else 1.0, err])
    return worst[0] == 0.0, worst[1]


class Row:
    def __init__(self, name, shape, flops=None):
        self.name, self.shape, self.flops = name, shape, flops
        self.ours = self.theirs = None
        self.check = "not run"
        self.ok = False
        self.breakdown = []  # --breakdown: (part, ms)


# ---- the benchmarks --------------------------------------------------------------------------
def bench_ag_gemm(g, args, ex):
    """AG-GEMM as example_allgather_gemm_overlapped.main builds it, per rank: C (M x N/P) =
    all-gathered A (M x K) @ B (K x N/P)."""
    import torch
    import tilelang
    W, lr = g.world, g.local_rank
    m, N, K = args.m_per_rank, args.n, args.k
    M = m * W
    row = Row("ag_gemm", "M %dx%d N %d K %d" % (m, W, N, K), 2.0 * M * (N // W) * K)
    dtype = torch.float16
    allocator = tilelang.get_allocator(size=2**30, device="cuda", is_distributed=True,
                                       local_rank=lr, num_local_ranks=W, group=g.pg)
    gemm = ex.gemm_kernel(M, N, K, lr, W, BLOCK_M, BLOCK_N, BLOCK_K, THREADS, args.persistent)
    set_signal = ex.set_signal_kernel(local_rank=lr, num_local_ranks=W, threads=32)
    gemm.initialize(allocator=allocator)
    set_signal.initialize(allocator=allocator)
    B = tilelang.tensor((K, N // W), dtype, allocator=allocator).normal_()
    C = tilelang.tensor((M, N // W), dtype, allocator=allocator)
    ag_buffer = tilelang.tensor((M, K), dtype, allocator=allocator, return_peers=True)
    A = ag_buffer[lr][m * lr:m * (lr + 1), :].normal_()
    signal = tilelang.tensor((W,), torch.uint32, allocator=allocator, return_peers=True)
    gemm_stream = torch.cuda.current_stream()
    ag_stream = torch.cuda.Stream(priority=-1)
    torch_ag = torch.empty((M, K), dtype=dtype, device="cuda")

    def ours(kernel=gemm, setter=set_signal):
        return ex.ag_gemm_op(A, B, C, ag_buffer, signal, m, K, 1, lr, W, setter, kernel,
                             gemm_stream, ag_stream)

    def serial():
        return ex.torch_ag_gemm(g.pg, A, B, torch_ag)

    def poison():  # what the overlapped path fills: the peers' slices of our gathered A, and C
        for s in range(W):
            if s != lr:
                ag_buffer[lr][m * s:m * (s + 1)].fill_(float("nan"))
        C.fill_(float("nan"))

    row = run_checked(g, args, row, ours, serial, poison, rel=True, tol=args.tol)
    if args.breakdown and row.ok:
        gather = lambda: ex.cp_engine_producer_all_gather_full_mesh_pull(  # noqa: E731
            ag_buffer, signal, m, 1, lr, W, gemm_stream)
        parts = {"gemm alone (signals set)": lambda: gemm(ag_buffer[lr], B, signal[lr], C),
                 "copy-engine gather alone": gather,
                 "torch matmul alone": lambda: torch.matmul(torch_ag, B),
                 "torch all_gather alone": lambda: torch.distributed.all_gather_into_tensor(
                     torch_ag, A, g.pg)}
        dst, src = ag_buffer[lr][:m], ag_buffer[(lr + 1) % W][:m]
        # (in this order: the GEMM waits on the signals set_signal clears; the whole call sets them)
        host = {"host: gemm call": lambda: gemm(ag_buffer[lr], B, signal[lr], C),
                "host: torch copy_ of a slice": lambda: dst.copy_(src),
                "host: cuStreamWriteValue32": lambda: ex.cuda.cuStreamWriteValue32(
                    ag_stream.cuda_stream, signal[lr][0].data_ptr(), 1,
                    ex.cuda.CUstreamWriteValue_flags.CU_STREAM_WRITE_VALUE_DEFAULT),
                "host: the example's gather": lambda: ex.cp_engine_producer_all_gather_full_mesh_pull(
                    ag_buffer, signal, m, 1, lr, W, ag_stream),
                "host: copy_ on ag_stream": lambda: on_stream(ag_stream, lambda: dst.copy_(src)),
                "host: wait_stream": lambda: ag_stream.wait_stream(gemm_stream),
                "host: wait_stream + copy_": lambda: (ag_stream.wait_stream(gemm_stream),
                                                      on_stream(ag_stream, lambda: dst.copy_(src))),
                "host: set_signal call": lambda: set_signal(signal[lr]),
                "host: the whole overlapped call": ours}
        row.breakdown = (breakdown(g, parts, args.trials) + overlap_spans(g, ex, ours, gemm, set_signal, args.trials)
                         + host_costs(g, host))
    return row


def on_stream(stream, fn):
    import torch
    with torch.cuda.stream(stream):
        return fn()


def host_costs(g, parts, calls=20):
    """[(name, median ms of host time per call, slowest rank)]: each callable called `calls`
    times back to back after the GPU is idle (the host cost of enqueueing, not the GPU's)."""
    import torch
    out = []
    for name, fn in parts.items():
        fn()
        per = []
        for _ in range(5):
            g.settle()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            per.append(1e3 * (time.perf_counter() - t0) / calls)
            torch.cuda.synchronize()
        out.append((name, statistics.median(g.slowest(per))))
    return out


def overlap_spans(g, ex, ours, gemm, set_signal, trials):
    """Inside the overlapped call: when the GEMM kernel starts after the call's start, how long
    it runs, and how long the copy-engine gather runs beside it (medians, slowest rank), from
    events around the example's own steps (its gather function and GEMM kernel, wrapped)."""
    import torch
    ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
    marks = {}
    gather = ex.cp_engine_producer_all_gather_full_mesh_pull

    def timed_gather(*a):
        stream = a[-1]
        marks["g0"], marks["g1"] = ev(), ev()
        marks["g0"].record(stream)
        marks["hg0"] = time.perf_counter()
        gather(*a)
        marks["hg1"] = time.perf_counter()
        marks["g1"].record(stream)

    def timed_set_signal(*a):
        marks["hs0"] = time.perf_counter()
        set_signal(*a)
        marks["hs1"] = time.perf_counter()

    class TimedGemm:
        def __call__(self, *a):
            marks["k0"], marks["k1"] = ev(), ev()
            marks["k0"].record()
            marks["hk0"] = time.perf_counter()
            gemm(*a)
            marks["k1"].record()

    spans = []
    ex.cp_engine_producer_all_gather_full_mesh_pull = timed_gather
    try:
        for _ in range(trials):
            g.settle()
            start = ev()
            start.record()
            h0 = time.perf_counter()
            ours(TimedGemm(), timed_set_signal)
            torch.cuda.synchronize()
            spans.append([start.elapsed_time(marks["k0"]), marks["k0"].elapsed_time(marks["k1"]),
                          marks["g0"].elapsed_time(marks["g1"]), 1e3 * (marks["hk0"] - h0),
                          1e3 * (marks["hg1"] - marks["hg0"]), 1e3 * (marks["hs0"] - h0),
                          1e3 * (marks["hs1"] - marks["hs0"]), 1e3 * (marks["hg0"] - marks["hs1"]),
                          1e3 * (marks["hk0"] - marks["hg1"])])
    finally:
        ex.cp_engine_producer_all_gather_full_mesh_pull = gather
    cols = list(zip(*spans))
    names = ("overlapped: GEMM starts after", "overlapped: GEMM runs", "overlapped: gather runs",
             "overlapped: host until GEMM launch", "overlapped: host in the gather",
             "overlapped: host before set_signal", "overlapped: host in set_signal",
             "overlapped: host set_signal to gather", "overlapped: host gather to GEMM")
    return [(n, statistics.median(g.slowest(list(c)))) for n, c in zip(names, cols)]


def kernel_profile(g, fn, label, calls=10, top=6):
    """[(name, ms per call)] of fn under torch.profiler on this rank (rank 0's is printed):
    the wall time per call, the GPU time of its kernels and copies summed, and the `top`
    kernels by GPU time; the difference between the wall and the GPU time is host time
    and waiting (the DeepEP rows: where their time goes)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    g.settle()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - start) * 1e3 / calls
    gpu = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            gpu[e.name] = gpu.get(e.name, 0.0) + e.time_range.elapsed_us() / 1e3 / calls
    out = [("%s: wall per call" % label, wall), ("%s: GPU time per call (summed)" % label, sum(gpu.values()))]
    for name, ms in sorted(gpu.items(), key=lambda kv: -kv[1])[:top]:
        out.append(("%s:   %s" % (label, name[:60]), ms))
    return out


def breakdown(g, parts, trials):
    """[(name, median ms of the slowest rank)] of each callable timed alone on the current stream."""
    out = []
    for name, fn in parts.items():
        for _ in range(3):
            g.settle()
            fn()
        out.append((name, statistics.median(g.slowest([time_once(g, fn) for _ in range(trials)]))))
    return out


def bench_gemm_rs(g, args, ex):
    """GEMM-RS as example_gemm_rs_overlapped.main builds it, per rank: out (M/P x N) = the sum
    over ranks of A (M x K/P) @ B (K/P x N), this rank's row slice."""
    import torch
    import tilelang
    W, lr = g.world, g.local_rank
    m, N, K = args.m_per_rank, args.n, args.k
    M = m * W
    row = Row("gemm_rs", "M %dx%d N %d K %d" % (m, W, N, K), 2.0 * M * N * (K // W))
    dtype = torch.float16
    allocator = tilelang.get_allocator(size=2**30, device="cuda", is_distributed=True,
                                       local_rank=lr, num_local_ranks=W, group=g.pg)
    gemm = ex.gemm_kernel(M, N, K, lr, W, BLOCK_M, BLOCK_N, BLOCK_K, THREADS, False)
    gemm.initialize(allocator=allocator)
    A = tilelang.tensor((M, K // W), dtype, allocator=allocator).normal_() / 10
    B = tilelang.tensor((K // W, N), dtype, allocator=allocator).normal_() / 10
    C = tilelang.tensor((M, N), dtype, allocator=allocator)
    output = tilelang.tensor((m, N), dtype, allocator=allocator)
    gemm_stream = torch.cuda.Stream()
    rs_stream = torch.cuda.Stream(priority=-1)
    ctx = ex.create_reduce_scater_2d_ctx(M, N, lr, W, W, dtype, allocator, overlap_with_gemm=True,
                                         num_reduction_sms=15)

    if args.rs_barrier:
        barrier_before_ring_reduce(g, ex)
    # a wrong check is retried with that barrier: right then means the race is the example's
    diagnose = None if args.rs_barrier else (
        lambda: barrier_before_ring_reduce(g, ex),
        "the example's reduce-scatter race (its ring reduce does not wait for the peers' copies)")

    def ours():
        # the example's GEMM stream does not wait for the caller's: make it, so the start event
        # (on the current stream) comes before the GEMM
        gemm_stream.wait_stream(torch.cuda.current_stream())
        return ex.gemm_rs_op(A, B, C, output, ctx, gemm, gemm_stream, rs_stream, lr)

    def serial():
        return ex.torch_gemm_rs(g.pg, A, B, None, W)

    def poison():  # the slices the peers send us, the partial products, the result
        ctx.scatter_bufs[lr].fill_(float("nan"))
        C.fill_(float("nan"))
        output.fill_(float("nan"))

    return run_checked(g, args, row, ours, serial, poison, rel=True, tol=args.tol, diagnose=diagnose)


def barrier_before_ring_reduce(g, ex):
    """--rs-barrier: the example's reduce_scatter module calls ring_reduce on its reduction
    stream right after this rank's scatter copies, with no wait for the peers' copies into this
    rank's buffer.  Wrap it: this rank's copies done, then every rank's, then the reduce."""
    import torch
    import torch.distributed as dist
    mod = sys.modules[ex.reduce_scatter_2d_op.__module__]
    ring_reduce = mod.ring_reduce

    def after_peers(*a, **kw):
        torch.cuda.current_stream().synchronize()  # it waited for the scatter stream
        dist.barrier(group=g.pg)
        torch.cuda.synchronize()
        return ring_reduce(*a, **kw)
    mod.ring_reduce = after_peers


def bench_cannon(g, args, example_dir):
    """Cannon's kernel on a sqrt(P) x sqrt(P) mesh against one GPU's cuBLAS GEMM / P."""
    import math
    import torch
    use_tests_dist()
    import mesh_gemm_model as mm
    W = g.world
    mesh = math.isqrt(W)
    size = cannon_size(args, max(mesh, 1))
    row = Row("cannon", "M=N=K %d on %dx%d" % (size, mesh, mesh), 2.0 * size ** 3)
    if W == 1 or mesh * mesh != W or mesh % 2:
        row.ok, row.check = True, "skipped: needs an even square mesh (4, 16 ranks)"
        return row
    # an even mesh: after the sqrt(P) shifts of a call each rank's tiles are back in buffer 0
    run = mm.MeshGemm(os.path.join(example_dir, "example_cannon.py"), "cannon", mesh, g.rank, size, size, size)

    def serial():
        return torch.matmul(run.A, run.B.T)

    def check():
        run.C.zero_()
        run.reset()
        g.settle()
        run.run()
        torch.cuda.synchronize()
        return g.slowest([run.off_model()[0]])[0] == 0.0

    if not check():
        row.check = "WRONG (off the program's model)"
        return row
    # the signals reset untimed, before the ranks settle: every rank's are zero before any
    # rank's kernel can signal it
    mine, theirs = measure(g, run.run, serial, args.warmup, args.trials, prepare=run.reset)
    row.ours, row.theirs = quantiles(mine), quantiles([t / W for t in theirs])
    row.ok = check()
    row.check = "ok (the model of the program); torch = one GPU's GEMM / %d" % W if row.ok else "WRONG after timing"
    return row


def cannon_size(args, mesh):
    """M = N = K near 4096 (--small) or 16384 on which the example's kernel stays inside its
    buffers (mesh_gemm_model.put_overrun: at 16384 on 2x2 its last put overruns by 1 MB)."""
    use_tests_dist()
    import mesh_gemm_model as mm
    return mm.in_bounds_size(4096 if args.small else 16384, mesh, mm.MeshGemm.BLOCKS)


def use_tests_dist():
    """tests/dist (the model checks bench_cannon and bench_deepep share) on the import path."""
    d = os.path.join(ROOT, "tests", "dist")
    if d not in sys.path:
        sys.path.insert(0, d)


def bench_deepep(g, args, example_dir, which):
    """DeepEP intranode dispatch or combine against pack + all_to_all_single (+ unpack)."""
    import torch
    import torch.distributed as dist
    folder = os.path.join(example_dir, "deepseek_deepep")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    use_tests_dist()
    if importlib.util.find_spec("tvm_ffi") is None:  # the stand-in its kernels' launch uses
        sys.path.append(os.path.join(ROOT, "python", "compat", "tvm_ffi_shim"))
    from buffer import EPBuffer
    from deepep_utils import gen_inputs
    import deepep_model as ref
    W, r = g.world, g.rank
    T, H, K, E = (256, 1024, 4, 8) if args.small else (4096, 7168, 8, 32)
    row = Row("deepep_" + which, "tokens %d hidden %d top-%d of %d experts" % (T, H, K, E))
    if E % W or W > 8:
        row.ok, row.check = True, "skipped: %d ranks (intranode, experts divisible by ranks)" % W
        return row
    inputs = ref.draw_inputs(gen_inputs, T, H, K, E, W)
    x, topk_idx, topk_w = inputs[r]
    buf = EPBuffer(g.pg, 2**30, K, E, H)
    per_rank, per_expert, in_rank = buf.get_dispatch_layout(topk_idx)
    got = {}

    def dispatch():
        got["d"] = buf.dispatch(x, None, per_rank, in_rank, per_expert, topk_idx, topk_w, 1)
        # EPBuffer.dispatch returns with its last kernel still queued on buf.comm_stream (its
        # combine waits for that stream itself): order the caller's stream after it, as a user
        # must before reading recv_x, so the checks read finished rows and the timing events on
        # this stream cover the whole dispatch
        torch.cuda.current_stream().wait_stream(buf.comm_stream)
        return got["d"]

    def combine():
        recv_x, _, recv_w, _, handle = got["d"]
        got["c"] = buf.combine(recv_x, handle, recv_w)
        return got["c"]

    # the all-to-all it replaces: rows packed by destination, split sizes exchanged once
    send_idx = torch.cat([in_rank[:, q].nonzero().flatten() for q in range(W)])
    send_n = in_rank.sum(dim=0).to(torch.int64)
    recv_n = torch.empty_like(send_n)
    dist.all_to_all_single(recv_n, send_n, group=g.pg)
    send_l, recv_l = send_n.tolist(), recv_n.tolist()
    recv = torch.empty(sum(recv_l), H, dtype=x.dtype, device="cuda")
    back = torch.empty(len(send_idx), H, dtype=x.dtype, device="cuda")

    def serial_dispatch():
        dist.all_to_all_single(recv, x.index_select(0, send_idx), recv_l, send_l, group=g.pg)

    def serial_combine():
        dist.all_to_all_single(back, recv, send_l, recv_l, group=g.pg)
        out = torch.zeros(T, H, dtype=torch.float32, device="cuda")
        return out.index_add_(0, send_idx, back.float()).to(x.dtype)

    want_x = ref.dispatch_ref(inputs, r, E, W, 1)[0]
    want_c = ref.combine_ref(x, topk_idx, E, W)

    why = []

    def check():
        g.settle()
        d = dispatch()
        ok = ref.same(d[0], want_x)
        if not ok:
            order = " (the same rows, in another order)" if ref.same_rows_any_order(d[0], want_x) else ""
            why.append(": its dispatch differs%s" % order)
            print("bench-overlap: deepep_%s WRONG on rank %d%s" % (which, r, why[-1]), flush=True)
        if which == "combine" and ok:
            c = combine()[0]
            ok = ref.same(c, want_c)
            if not ok:
                why.append(ref.combine_diagnosis(c, x, topk_idx, E, W, buf.num_channels))
                print("bench-overlap: deepep_combine WRONG on rank %d%s" % (r, why[-1]), flush=True)
        torch.cuda.synchronize()
        return g.slowest([0.0 if ok else 1.0])[0] == 0.0

    if not check():
        row.check = "WRONG (against the reference of DeepEP's semantics)" + (" on rank %d%s" % (r, why[0]) if why else "")
        return row
    ours = dispatch if which == "dispatch" else combine
    serial = serial_dispatch if which == "dispatch" else serial_combine
    mine, theirs = measure(g, ours, serial, args.warmup, args.trials, calls=args.calls)
    row.ours, row.theirs = quantiles(mine), quantiles(theirs)
    if args.breakdown:
        row.breakdown = kernel_profile(g, ours, "ours") + kernel_profile(g, serial, "torch")
    row.ok = check()
    row.check = "ok (exact); torch = pack + all_to_all_single%s" % ("" if which == "dispatch" else " + index_add_") \
        if row.ok else "WRONG after timing"
    row.shape += ", %d rows received" % want_x.shape[0]
    return row


def bench_sp_attn(g, args, ex, causal):
    """Sequence-parallel all-gather attention as example_sp_ag_attention_intra_node.main builds
    it (zig-zag on, the file's default), against the file's torch module."""
    import torch
    import tilelang
    from itertools import accumulate
    W, lr = g.world, g.local_rank
    sp = args.sp
    name = "sp_attn_causal" if causal else "sp_attn"
    shape = "B %d Hq %d Hkv %d D %d q %s k %s" % (
        sp["batch_size"], sp["q_head"], sp["kv_head"], sp["head_dim"],
        "/".join(map(str, sp["seqlens_q"])), "/".join(map(str, sp["seqlens_k"])))
    row = Row(name, shape)
    dtype, device = torch.float16, "cuda"
    allocator = tilelang.get_allocator(size=2**30, device=device, is_distributed=True,
                                       local_rank=lr, num_local_ranks=W, group=g.pg)
    cu_q = [c // W for c in [0] + list(accumulate(sp["seqlens_q"]))]
    cu_k = [0] + list(accumulate(sp["seqlens_k"]))
    cu_seqlens_q = torch.tensor(cu_q, dtype=torch.int32, device=device)
    cu_seqlens_k = torch.tensor(cu_k, dtype=torch.int32, device=device)
    H, Hkv, D = sp["q_head"], sp["kv_head"], sp["head_dim"]
    q_shard = tilelang.tensor((cu_q[-1], H, D), dtype=dtype, allocator=allocator)
    q_shard.normal_(mean=0.0, std=0.5)
    k_shards = tilelang.tensor((cu_k[-1] // W, Hkv, D), dtype=dtype, allocator=allocator,
                               return_peers=True)
    v_shards = tilelang.tensor((cu_k[-1] // W, Hkv, D), dtype=dtype, allocator=allocator,
                               return_peers=True)
    k_shards[lr].normal_(mean=0.0, std=0.5)
    v_shards[lr].normal_(mean=0.0, std=0.5)
    common = dict(batch_size=sp["batch_size"], q_head=H, kv_head=Hkv,
                  max_seqlen_q=sp["max_seqlen_q"], max_seqlen_k=sp["max_seqlen_k"], head_dim=D,
                  input_dtype=dtype, output_dtype=dtype, device=device, is_causal=causal,
                  enable_zig_zag=True)
    fused = ex.FusedSequenceParallelAttn(g.pg, enable_specialized=False, allocator=allocator,
                                         **common)
    serial_mod = ex.TorchSequenceParallelAttn(g.pg, **common)

    def ours():
        return fused(q_shard, k_shards, v_shards, cu_seqlens_q, cu_seqlens_k)

    def serial():
        return serial_mod(q_shard, k_shards[lr], v_shards[lr], cu_seqlens_q, cu_seqlens_k)

    def poison():  # the tokens the copy engines gather (the rest is never written), the output
        fused.ctx.ag_k_buffers[lr][:cu_k[-1]].fill_(float("nan"))
        fused.ctx.ag_v_buffers[lr][:cu_k[-1]].fill_(float("nan"))
        fused.ctx.attn_output_buffer.fill_(float("nan"))

    # the example's own check: allclose(atol=rtol=1e-2)
    return run_checked(g, args, row, ours, serial, poison, rel=False, tol=1e-2)


def checked_call(g, ours, serial, poison, rel, tol):
    """One call of ours on poisoned buffers (a copy that never arrived, or arrived after it
    was read, leaves a NaN), compared with torch's."""
    poison()
    g.settle()
    out = ours()
    return compare(g, out, serial(), tol, rel)


def run_checked(g, args, row, ours, serial, poison, rel, tol, diagnose=None):
    """Check, time, check again after the timed calls (buffers warm, clocks up; --rechecks
    times).  diagnose: (install, what) for a race known in the example's own host flow: when a
    check is wrong, `install()` adds the synchronization the example leaves out and the checks
    run again; if all are right then, the row says so and is not counted as ours."""
    ok, err = checked_call(g, ours, serial, poison, rel, tol)
    if not ok:
        row.check = "WRONG (max err %.3g)" % err
        return diagnosed(g, row, ours, serial, poison, rel, tol, diagnose, 1, args.rechecks)
    mine, theirs = measure(g, ours, serial, args.warmup, args.trials, calls=args.calls)
    row.ours, row.theirs = quantiles(mine), quantiles(theirs)
    n = max(args.rechecks, 1)
    after = [checked_call(g, ours, serial, poison, rel, tol) for _ in range(n)]
    wrong = [e for ok2, e in after if not ok2]
    row.ok = not wrong
    if not wrong:
        row.check = "ok (max err %.3g)" % max([err] + [e for _, e in after])
        return row
    row.check = "WRONG after timing in %d of %d checks (max err %.3g)" % (len(wrong), n, max(wrong))
    return diagnosed(g, row, ours, serial, poison, rel, tol, diagnose, len(wrong), n)


def diagnosed(g, row, ours, serial, poison, rel, tol, diagnose, wrong, n):
    """The row after `diagnose` (see run_checked): unchanged when there is none or when the
    checks are still wrong with the example's missing synchronization added."""
    if not diagnose:
        return row
    diagnose[0]()
    again = [checked_call(g, ours, serial, poison, rel, tol) for _ in range(max(n, 10))]
    if all(ok for ok, _ in again):
        row.ok = True
        row.check = "%s: WRONG in %d of %d checks as written, right in %d of %d with the barrier " \
                    "it leaves out (max err %.3g)" % (diagnose[1], wrong, n, len(again), len(again),
                                                      max(e for _, e in again))
    return row


# ---- the table ----------------------------------------------------------------------------
def print_table(g, rows, args, device_name):
    print("\nbench-overlap: %d GPUs (%s), fp16; medians of %d trials [p25 p75]%s, ours and torch "
          "alternating, slowest rank per trial; ratio = torch / ours" % (
              g.world, device_name, args.trials,
              ", each %d back-to-back calls, ms per call" % args.calls if args.calls > 1 else ""))
    print("%-15s %-46s %22s %22s %7s %9s  %s" % ("benchmark", "shape", "ours ms", "torch ms",
                                                 "ratio", "TFLOP/s", "check"))
    for r in rows:
        if r.ours is None:
            print("%-15s %-46s %22s %22s %7s %9s  %s" % (r.name, r.shape, "-", "-", "-", "-", r.check))
            continue
        tf = "%9.1f" % (r.flops / (r.ours[0] * 1e-3) / 1e12) if r.flops else "%9s" % "-"
        print("%-15s %-46s %8.3f [%5.3f %5.3f] %8.3f [%5.3f %5.3f] %6.2fx %s  %s" % (
            r.name, r.shape, r.ours[0], r.ours[1], r.ours[2], r.theirs[0], r.theirs[1],
            r.theirs[2], r.theirs[0] / r.ours[0], tf, r.check))
    for r in rows:
        for name, ms in r.breakdown:
            print("  %-13s %-40s %8.3f ms" % (r.name, name, ms))
    goal_gemm = 1.15 if g.world >= 4 else 1.1
    goals = []
    for r in rows:
        if r.ours is not None and r.ok and r.name in ("ag_gemm", "gemm_rs", "sp_attn", "sp_attn_causal"):
            want = goal_gemm if r.name in ("ag_gemm", "gemm_rs") else 1.1
            got = r.theirs[0] / r.ours[0]
            goals.append("%s %.2fx %s %.2fx" % (r.name, got, ">=" if got >= want else "<", want))
    if goals:
        print("goals (issue 14): " + "; ".join(goals))


def run(args):
    example_dir = example_dir_of(args.corpus)
    setup_paths(example_dir)
    import torch
    import tilescale
    env = tilescale.dist_env()
    torch.cuda.set_device(env.local_rank)  # before the examples' import-time device queries
    world = env.world_size
    if env.local_world_size != world:
        raise UsageError("one node only, as the examples (%d ranks, %d on this node)"
                         % (world, env.local_world_size))
    check_shapes(args, world)
    need = heap_bytes_needed(args, world, args.only)
    os.environ.setdefault("TILESCALE_DIST_HEAP_BYTES", str(need))
    mods = load_examples(example_dir, args.only)
    from tilelang.distributed import init_distributed, context
    world, rank, local_rank, pg = init_distributed(return_tp_group=True)
    if context().heap_size < need and rank == 0:
        print("bench-overlap: warning: the symmetric heap (%d bytes, TILESCALE_DIST_HEAP_BYTES) is "
              "smaller than the %d bytes these shapes need" % (context().heap_size, need), flush=True)
    g = Group(world, rank, local_rank, pg)
    if rank == 0:
        print("bench-overlap: %d ranks, examples %s, heap %d MiB" % (
            world, example_dir, context().heap_size >> 20), flush=True)
    rows = []
    for b in args.only:
        ex = mods.get(FILE_OF[b])
        try:
            if b == "cannon":
                row = bench_cannon(g, args, example_dir)
            elif b.startswith("deepep_"):
                row = bench_deepep(g, args, example_dir, b[len("deepep_"):])
            elif b == "ag_gemm":
                row = bench_ag_gemm(g, args, ex)
            elif b == "gemm_rs":
                row = bench_gemm_rs(g, args, ex)
            else:
                row = bench_sp_attn(g, args, ex, causal=(b == "sp_attn_causal"))
        except Exception as e:  # noqa: BLE001 (every rank takes the same path: report, go on)
            traceback.print_exc()
            row = Row(b, "-")
            row.check = "ERROR: %s" % str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        rows.append(row)
        if rank == 0:  # the times too, so a later benchmark that hangs loses nothing
            times = " (ours %.3f ms, torch %.3f ms, %.2fx)" % (row.ours[0], row.theirs[0], row.theirs[0] / row.ours[0]) \
                if row.ours is not None else ""
            print("bench-overlap: %s done%s: %s" % (b, times, row.check), flush=True)
        gc.collect()  # the benchmark's symmetric tensors go back to the heap at the next barrier
        torch.cuda.empty_cache()
    if rank == 0:
        print_table(g, rows, args, torch.cuda.get_device_name())
        bad = [r.name for r in rows if not r.ok]
        print("bench-overlap: %s" % ("WRONG or failed: " + ", ".join(bad) if bad else "results verified"))
    import torch.distributed as dist
    import tilelang.distributed as td
    failed = g.slowest([0.0 if all(r.ok for r in rows) else 1.0])[0]
    td.barrier()
    dist.destroy_process_group()
    return 0 if failed == 0.0 else 1


def main(argv=None):
    args = parse_args(argv)
    try:
        return run(args)
    except UsageError as e:
        print("bench-overlap: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
