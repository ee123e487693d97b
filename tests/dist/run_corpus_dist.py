"""run_corpus_dist.py — runs TileScale's own distributed example scripts unchanged with this
project's packages, through `tilescale launch`, on a machine with 2 or more GPUs.

    python3 tests/dist/run_corpus_dist.py [CORPUS] [-n 2] [--timeout 300] [--only SUBSTR,...]
            [--backend ipc|nvshmem] [--cli build/tilescale] [--lines 15] [--launcher tilescale|torchrun]

CORPUS is the corpus folder (default ../shared/corpus beside the checkout; a copy such as
.corpus/ works).  Each script runs in its own folder (its sibling imports) as
`tilescale launch -n N python3 FILE ARGS` (or `torchrun --standalone --nproc_per_node N FILE
ARGS` with --launcher torchrun), with small sizes through the script's own flags,
NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TILELANG_USE_DISTRIBUTED=1, the packages of this
checkout on PYTHONPATH and its build/libtilescale.so; where cuda-python is not installed, also
python/compat, the stand-in for the few cuda-python calls the examples make.  Scripts that
spawn their GPU processes themselves (torch.multiprocessing.spawn + init_dist, TileScale's IPC examples and their
test_*.py) are launched with -n 1: one process per node, as TileScale runs them.  Cannon and
SUMMA need a square number of ranks: -n 1 when N is not a square.

tests/dist/host_api.py (the host API piece by piece) runs first.

One line per script: PASS (exit 0 and no failure printed), FAIL (exit 0 but the script printed
a failed check), ERROR (non-zero exit or time-out; the last lines of output follow, and a note
when the script's own check had passed before it), MISSING
(a third-party module such as deep_ep or tvm_ffi is not installed; not counted as failed),
SKIP (cannot run here, with the reason), KNOWN (a defect of the example file itself, shown by
tests/dist/mesh_gemm_model.py passing first; not counted as failed).  Then "N passed, N failed".  Exits 1 unless every script
that ran passed."""
import argparse
import math
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (path under examples/distributed, arguments, how it is launched): "ranks" = one process per
# GPU; "spawn" = the script spawns its processes (-n 1, its own count flag gets N); "square" =
# a square number of ranks.  {n} in arguments is the rank count.
SCRIPTS = [
    ("@tests/dist/host_api.py", "", "ranks"),  # "@": a file of this checkout, not the corpus
    ("example_allgather.py", "--M 1024 --N 1024 --warmup 1 --repeat 2", "ranks"),
    ("example_all_to_all.py", "", "ranks"),
    ("example_simple_shift.py", "", "ranks"),
    ("example_nvshmem.py", "", "ranks"),
    ("example_pre_attn_all2all.py", "--warmup 1 --repeat 2", "ranks"),
    ("example_pre_attn_all2all_transpose.py", "--warmup 1 --repeat 2", "ranks"),
    ("example_post_attn_all2all_transpose.py", "--warmup 1 --repeat 2", "ranks"),
    ("example_allgather_gemm.py", "", "ranks"),
    ("reduce_scatter.py", "", "ranks"),  # a library of gemm_rs: importing it must work
    # Cannon and SUMMA: first their kernels against a model of each program (see KNOWN)
    ("@tests/dist/mesh_gemm_model.py", "--example cannon --corpus {corpus}", "square"),
    ("@tests/dist/mesh_gemm_model.py", "--example summa --corpus {corpus}", "square"),
    ("example_cannon.py", "--M 2048 --N 2048 --K 2048 --warmup 1 --iters 2", "square"),
    ("example_summa.py", "--M 2048 --N 2048 --K 2048 --warmup 1 --iters 2", "square"),
    ("example_allgather_gemm_overlapped.py", "--num-processes {n} --M 2048 --N 2048 --K 1024", "spawn"),
    ("example_gemm_rs_overlapped.py", "--num-processes {n} --M 2048 --N 2048 --K 2048", "spawn"),
    ("example_sp_ag_attention_intra_node.py",
     "--num-processes {n} --batch_size 2 --q_head 8 --kv_head 2 --max_seqlen_q 1024 "
     "--max_seqlen_k 1024 --head_dim 128 --seqlens_q 512 1024 --seqlens_k 1024 1024", "spawn"),
    ("primitives/example_put_warp.py", "--num-processes 2", "spawn"),
    ("primitives/example_get_warp.py", "--num-processes 2", "spawn"),
    ("primitives/example_put_block.py", "--num-processes 2", "spawn"),
    ("primitives/example_get_block.py", "--num-processes 2", "spawn"),
    ("primitives/example_remote_st.py", "--num-processes 2", "spawn"),
    ("primitives/example_sync.py", "--num-processes 2", "spawn"),
    ("primitives/test_put_warp.py", "", "spawn"),
    ("primitives/test_get_warp.py", "", "spawn"),
    ("primitives/test_put_block.py", "", "spawn"),
    ("primitives/test_get_block.py", "", "spawn"),
    # DeepEP intranode against an independent reference (the example's own needs deep_ep)
    ("@tests/dist/deepep_model.py", "--num_ranks {n} --corpus {corpus}", "spawn"),
    ("@tests/dist/deepep_model.py", "--num_ranks {n} --corpus {corpus} --cached", "spawn"),
    ("@tests/dist/deepep_model.py", "--num_ranks {n} --corpus {corpus} --buffers 2 --rounds 2", "spawn"),
    # the example's own main size: each channel's ring (256 slots) wraps several times
    ("@tests/dist/deepep_model.py", "--num_ranks {n} --corpus {corpus} --num_tokens 4096 --hidden 7168 "
     "--num_topk 8 --num_experts 32", "spawn"),
    ("deepseek_deepep/intranode/example_intranode.py",
     "--num_ranks {n} --num_tokens 256 --hidden 1024 --num_topk 4 --num_experts 8", "spawn"),
]

# Defects of the example files themselves, on a mesh of more than one rank (tests/dist/
# mesh_gemm_model.py says why): a failure of the unchanged script is reported as KNOWN, not
# counted as failed, only when the model check named here passed earlier in the same run.
KNOWN = {
    "example_cannon.py": ("--example cannon",
                          "its check compares a C kept in fp16 between mesh steps with allclose 1e-2, "
                          "and its benchmark loop resets the signals with no barrier between calls "
                          "(a peer's late signal is lost: a hang)"),
    "example_summa.py": ("--example summa",
                         "its kernel broadcasts B along the mesh row and computes step 0 on the local "
                         "tiles: not A·Bᵀ on a mesh over 1×1"),
}

# a third-party package the environment lacks: a module, an installed distribution looked up by
# name (importlib.metadata.version("cuda-python")), or cuda-python's cudart under a bare `cuda`
MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '(?!tilelang|tilescale|pynvshmem|tvm')"
                            r"|PackageNotFoundError: No package metadata was found for"
                            r"|ImportError: cannot import name '\w+' from 'cuda' \(unknown location\)"
                            # the script's own message for its missing reference (DeepEP's example)
                            r"|ModuleNotFoundError: Please install (?!TileLang|TileScale)\w+")
# what the scripts print when their own check passed (a later hang is in their benchmark loop)
CHECK_PASSED = re.compile(r"✅|check passed|Verification PASSED", re.I)
FAILED_CHECK = re.compile(r"check failed|❌|Test failed|AssertionError|Mismatch|not close", re.I)


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60).stdout
        return sum(1 for ln in out.splitlines() if ln.startswith("GPU"))
    except (OSError, subprocess.SubprocessError):
        return 0


def has_module(name, env):
    """Whether the python that runs the scripts can import `name` (a real third-party module)."""
    return subprocess.run([sys.executable, "-c", "import %s" % name], env=env, capture_output=True).returncode == 0


def has_cuda_python(env):
    """Whether cuda-python itself is there: its cudart module and its distribution metadata.  A
    bare `import cuda` is not enough: other NVIDIA wheels leave a `cuda` namespace package
    without cudart (seen on the H200 machines), where the examples then fail to import."""
    probe = "from cuda import cudart; import importlib.metadata as m; m.version('cuda-python')"
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True).returncode == 0


def ranks_for(kind, n):
    if kind == "spawn":
        return 1
    if kind == "square":
        return n if math.isqrt(n) ** 2 == n else 1
    return n


def environment(args):
    env = dict(os.environ)
    py = os.path.join(ROOT, "python")
    env["PYTHONPATH"] = py + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # cuda-python or apache-tvm-ffi absent: the stand-ins of python/compat (its README), each
    # on the path only where the real module is missing (PYTHONPATH comes before site-packages)
    if not has_cuda_python(env):
        env["PYTHONPATH"] += os.pathsep + os.path.join(py, "compat")
    if not has_module("tvm_ffi", env):
        env["PYTHONPATH"] += os.pathsep + os.path.join(py, "compat", "tvm_ffi_shim")
    env.setdefault("TILESCALE_LIB", os.path.join(os.path.dirname(os.path.abspath(args.cli)),
                                                 "libtilescale.so"))
    env.update(NVSHMEM_DISABLE_NVLS="1", NCCL_NVLS_ENABLE="0", TILELANG_USE_DISTRIBUTED="1",
               PYTHONUNBUFFERED="1")
    env.setdefault("NCCL_DEBUG", "WARN")
    if args.backend:
        env["TILESCALE_DIST_BACKEND"] = args.backend
    return env


def _text(x):
    return x.decode(errors="replace") if isinstance(x, bytes) else (x or "")


def run_one(path, extra, kind, args, env):
    nranks = ranks_for(kind, args.n)
    script = [os.path.basename(path)] + shlex.split(extra.format(n=args.n, corpus=os.path.abspath(args.corpus)))
    if args.launcher == "torchrun":  # torch's own launcher (its env:// variables); coreutils' limit
        cmd = ["timeout", "-k", "10", str(args.timeout), sys.executable, "-m", "torch.distributed.run",
               "--standalone", "--nproc_per_node", str(nranks)] + script
    else:
        cmd = [os.path.abspath(args.cli), "launch", "--timeout", str(args.timeout), "-n", str(nranks),
               sys.executable] + script
    t0 = time.time()
    try:
        r = subprocess.run(cmd, cwd=os.path.dirname(path), env=env, capture_output=True, text=True,
                           timeout=args.timeout + 60)
        rc, out = r.returncode, (r.stdout or "") + (r.stderr or "")
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        out = _text(e.stdout) + _text(e.stderr)
    dt = time.time() - t0
    if rc != 0 and MISSING_MODULE.search(out):
        status = "MISSING"  # the environment lacks a third-party module (deep_ep, tvm_ffi ...)
    elif rc != 0:
        status = "ERROR"
    elif FAILED_CHECK.search(out):
        status = "FAIL"
    else:
        status = "PASS"
    return status, rc, dt, out, " ".join(shlex.quote(c) for c in cmd[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", default=os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
    ap.add_argument("-n", type=int, default=2, help="ranks (GPUs) per script (default 2)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per script (default 300)")
    ap.add_argument("--only", default="", help="comma-separated substrings of script paths")
    ap.add_argument("--backend", choices=("ipc", "nvshmem"), default=None)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "tilescale"))
    ap.add_argument("--lines", type=int, default=15, help="output lines shown for a failure")
    ap.add_argument("--launcher", choices=("tilescale", "torchrun"), default="tilescale",
                    help="start the ranks with `tilescale launch` (default) or torchrun --standalone")
    args = ap.parse_args()

    base = os.path.join(args.corpus, "tilescale", "examples", "distributed")
    if not os.path.isdir(base):
        sys.exit("run_corpus_dist: no TileScale examples at %s (pass the corpus folder)" % base)
    if not os.access(args.cli, os.X_OK):
        sys.exit("run_corpus_dist: %s is not built (make)" % args.cli)
    gpus = gpu_count()
    env = environment(args)
    print("run_corpus_dist: %d GPUs, -n %d, backend %s, launcher %s, corpus %s" % (
        gpus, args.n, args.backend or env.get("TILESCALE_DIST_BACKEND") or "default", args.launcher, base), flush=True)
    passed = failed = skipped = missing = known = 0
    models_passed = set()  # the model checks (their arguments) that passed in this run
    for rel, extra, kind in SCRIPTS:
        if args.only and not any(o in rel for o in args.only.split(",")):
            continue
        path = os.path.join(ROOT, rel[1:]) if rel.startswith("@") else os.path.join(base, rel)
        need = args.n if kind == "spawn" else ranks_for(kind, args.n)
        if not os.path.exists(path):
            print("SKIP  %-50s not in the corpus" % rel)
            skipped += 1
            continue
        if gpus and need > gpus:
            print("SKIP  %-50s needs %d GPUs" % (rel, need))
            skipped += 1
            continue
        status, rc, dt, out, cmd = run_one(path, extra, kind, args, env)
        why = KNOWN.get(rel)
        if status in ("FAIL", "ERROR") and why and ranks_for(kind, args.n) > 1 and \
                any(why[0] in m for m in models_passed):
            status = "KNOWN"
        print("%-5s %-50s %6.1fs  (%s)" % (status, rel, dt, cmd), flush=True)
        if status == "PASS":
            passed += 1
            if rel.endswith("mesh_gemm_model.py"):
                models_passed.add(extra)
            continue
        if status == "KNOWN":
            known += 1
            print("      the example's own defect on a mesh (its kernel matched the model above): " + why[1])
            continue
        if status == "MISSING":
            missing += 1
        else:
            failed += 1
        if rc != 0:
            print("      exit %s" % rc)
        if status == "ERROR" and CHECK_PASSED.search(out) and not FAILED_CHECK.search(out):
            said = sum(1 for ln in out.splitlines() if CHECK_PASSED.search(ln))
            print("      note: the script's own check passed before this (%d lines said so); the failure "
                  "came after it, e.g. in its benchmark loop" % said)
        for ln in out.rstrip().splitlines()[-args.lines:]:
            print("      | " + ln)
    print("%d passed, %d failed%s%s%s" % (passed, failed, ", %d skipped" % skipped if skipped else "",
                                        ", %d missing a module" % missing if missing else "",
                                        ", %d known example defects" % known if known else ""))
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
