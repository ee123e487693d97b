"""schedule_diff.py — for every `hopper` row of tests/corpus/manifest.tsv, the schedule features of
TileLang 0.1.15's CUDA (peer_source.py, no GPU) beside ours (`tilescale compile --emit cuda`), and
the rows where TileLang uses a mechanism ours does not: a list of kernels to look at first when
hunting for rows slower than TileLang, without device time.  Text features only; a flag is a
lead to profile, never a verdict.

Set-up as in peer_source.py's docstring (TileLang's wheels in /tmp/peer, Python 3.12 deps in
/tmp/py312dep).  Run from the project root:
    python3 bench/tilelang/schedule_diff.py [--corpus .corpus/corpus] [--only SUBSTR] [-j 2]
        [--python312 PATH] [--json OUT]"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

# feature -> (pattern in ours, pattern in TileLang's)
FEATURES = {
    "tma": (r"ts::tma_load", r"tl::tma_load"),
    "tma_store": (r"ts::tma_store_\d", r"tl::tma_store\b"),
    "ws": (r"setmaxnreg_dec", r"warpgroup_reg_dealloc"),
    "wgmma": (r"wgmma", r"wgmma"),
    "mma": (r"mma_sync|_mma\b|gemm_\w*mma\b", r"mma_sync|tl::gemm_ss<|tl::gemm_rs<|tl::gemm_sr<"),
    "cp_async": (r"cp_async", r"cp_async"),
    "vec128": (r"\b(uint4|float4|int4|longlong2|double2)\b", r"\b(uint4|float4|int4|longlong2|double2)\b"),
    "ldmatrix": (r"ldmatrix", r"ldmatrix"),
    "stmatrix": (r"stmatrix", r"stmatrix"),
}


def manifest_rows(path, only):
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        family, file, func, params, status, _ = (line.rstrip("\n").split("\t") + [""] * 6)[:6]
        if status == "hopper" and (not only or any(o in file + ":" + func for o in only)):
            yield family, file, func, [] if params == "-" else params.split()


def features(text, side):
    out = {k: len(re.findall(p[side], text)) for k, p in FEATURES.items()}
    threads = re.findall(r"__launch_bounds__\((\d+)", text)
    out["threads"] = ",".join(threads)
    out["kernels"] = len(re.findall(r"__global__", text))
    return out


def ours(args, file, func, params):
    cmd = [args.cli, "compile", os.path.join(args.corpus, file), "-k", func, "--emit", "cuda", "--arch", "sm_90a"]
    for p in params:
        cmd += ["-D", p]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return r.stdout if r.returncode == 0 else None


def peer(args, file, func, params):
    env = dict(os.environ, PYTHONPATH="/tmp/peer:bench/tilelang/cpu_stubs:/tmp/py312dep")
    cmd = [args.python312, "bench/tilelang/peer_source.py", os.path.join(args.corpus, file), func] + params
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if r.returncode != 0 or "__global__" not in r.stdout:
        last = [l for l in r.stderr.strip().split("\n") if l.strip()]
        return None, (last[-1] if last else "no kernel")[:100]
    return r.stdout, ""


def leads(o, t):
    """What TileLang's kernel has and ours lacks (or a different thread count)."""
    out = [k for k in ("tma", "tma_store", "ws", "wgmma", "cp_async", "vec128", "ldmatrix", "stmatrix")
           if t[k] and not o[k] and not (k == "cp_async" and o["tma"]) and not (k == "ldmatrix" and o["wgmma"])]
    if o["threads"] != t["threads"]:
        out.append("threads %s vs %s" % (o["threads"], t["threads"]))
    return out


def one(args, row):
    family, file, func, params = row
    o = ours(args, file, func, params)
    t, why = peer(args, file, func, params)
    rec = {"file": file, "func": func, "params": " ".join(params)}
    if o is None or t is None:
        rec["skip"] = "ours failed" if o is None else "TileLang: " + why
        return rec
    rec["ours"], rec["tl"] = features(o, 0), features(t, 1)
    rec["leads"] = leads(rec["ours"], rec["tl"])
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=".corpus/corpus")
    ap.add_argument("--cli", default="build/tilescale")
    ap.add_argument("--only", action="append")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--python312", default=os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python3.12"))
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = list(manifest_rows("tests/corpus/manifest.tsv", args.only))
    recs = []
    with concurrent.futures.ThreadPoolExecutor(args.j) as ex:
        for i, rec in enumerate(ex.map(lambda r: one(args, r), rows)):
            recs.append(rec)
            name = "%s:%s" % (rec["file"].split("examples/")[-1], rec["func"])
            if "skip" in rec:
                print("[%3d/%d] %-70s SKIP %s" % (i + 1, len(rows), name, rec["skip"]), flush=True)
            else:
                print("[%3d/%d] %-70s %s" % (i + 1, len(rows), name, "; ".join(rec["leads"]) or "same"), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            for rec in recs:
                f.write(json.dumps(rec) + "\n")
    flagged = [r for r in recs if r.get("leads")]
    print("schedule_diff: %d rows, %d compared, %d with leads" %
          (len(recs), sum("skip" not in r for r in recs), len(flagged)))


if __name__ == "__main__":
    sys.exit(main())
