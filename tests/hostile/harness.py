"""harness.py — runs hostile-input cases with bounded time and memory (tests/hostile/*.py).

Each case runs one command in its own process group with a wall-clock limit and an
peak-RSS measurement (wait4's ru_maxrss of the child: that process alone, not its children), and asserts:
  - it finished within `max_s` seconds (else the whole group is killed: FAIL),
  - its peak RSS stayed under `max_rss_mb`,
  - its exit status is `rc` (an int, or a collection of allowed ints; never a signal),
  - stderr+stdout match every regex in `expect` and none in `reject`,
  - no process of its group is left behind.
A suite script builds cases with `case(...)`, then calls `finish(area)`, which prints one
line per case and "hostile AREA: N passed, N failed" (tests/run.sh adds the counts) and
records the largest RSS and time seen."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TS_BUILD", os.path.join(ROOT, "build"))
TS = os.path.join(BUILD, "tilescale")

_results = []


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def run(cmd, max_s=10.0, stdin=None, env=None, cwd=None):
    """Runs cmd (a list) in a new process group; returns (rc, output, seconds, rss_mb, leftover).
    rc is -signal when killed by a signal, None when it ran past max_s.  Output goes to a
    temporary file (a case may print without bound); the first 1 MB is returned."""
    e = dict(os.environ)
    if env:
        e.update(env)
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as in_f:
        if stdin is not None:
            in_f.write(stdin)
            in_f.seek(0)
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=in_f if stdin is not None else subprocess.DEVNULL, stdout=out_f,
                             stderr=subprocess.STDOUT, env=e, cwd=cwd, start_new_session=True)
        status, rusage, timed_out = None, None, False
        while status is None:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                status, rusage = st, ru
            elif time.monotonic() - t0 > max_s:
                timed_out = True
                os.killpg(p.pid, signal.SIGKILL)
                _, status, rusage = os.wait4(p.pid, 0)
            else:
                time.sleep(0.005)
        p.returncode = 0  # reaped here; keep Popen from waiting again
        secs = time.monotonic() - t0
        leftover = _group_alive(p.pid)
        if leftover:
            os.killpg(p.pid, signal.SIGKILL)
        out_f.seek(0)
        out = out_f.read(1 << 20)
    rc = None if timed_out else (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
    return rc, out.decode("utf-8", "replace"), secs, rusage.ru_maxrss / 1024.0, leftover


def case(name, cmd, rc=1, expect=(), reject=(), max_s=10.0, max_rss_mb=512, stdin=None, env=None,
         cwd=None, check=None):
    """Runs one case and records pass/fail.  check(output) may return an error string."""
    got, out, secs, rss, leftover = run(cmd, max_s=max_s, stdin=stdin, env=env, cwd=cwd)
    errs = []
    allowed = rc if isinstance(rc, (tuple, list, set, frozenset)) else (rc,)
    if got is None:
        errs.append("ran past %.1f s" % max_s)
    elif got < 0:
        errs.append("killed by signal %d" % -got)
    elif rc is not None and got not in allowed:
        errs.append("exit %s, expected %s" % (got, rc))
    if rss > max_rss_mb:
        errs.append("RSS %.0f MB > %d MB" % (rss, max_rss_mb))
    for pat in expect:
        if not re.search(pat, out, re.M):
            errs.append("output lacks /%s/" % pat)
    for pat in reject:
        if re.search(pat, out, re.M):
            errs.append("output has /%s/" % pat)
    if leftover:
        errs.append("left processes behind")
    if check and not errs:
        msg = check(out)
        if msg:
            errs.append(msg)
    _results.append((name, errs, secs, rss, out))
    return out


def finish(area):
    failed = 0
    for name, errs, secs, rss, out in _results:
        if errs:
            failed += 1
            print("FAIL %s: %s (%.2f s, %.0f MB)" % (name, "; ".join(errs), secs, rss))
            for line in out.splitlines()[:8]:
                print("    " + line[:200])
        elif os.environ.get("VERBOSE"):
            print("ok   %s (%.2f s, %.0f MB)" % (name, secs, rss))
    n = len(_results)
    max_s = max((r[2] for r in _results), default=0)
    max_rss = max((r[3] for r in _results), default=0)
    print("hostile %s: %d passed, %d failed (largest: %.2f s, %.0f MB RSS)" % (area, n - failed, failed, max_s, max_rss))
    sys.exit(1 if failed else 0)
