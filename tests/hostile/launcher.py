"""launcher.py — `tilescale launch` (cli/launch*.c) under hostile conditions: the launcher
killed with SIGKILL, its output pipe closed under it, a rank whose own children outlive it,
an interrupt from the terminal, and control-port peers that say nothing or send garbage.

Ranks run in process groups of their own, so the harness's check of its case's group does
not see them.  Each case therefore runs this file as a wrapper ("scenario NAME"): the
wrapper starts the launcher, has every rank (and every child of a rank) append its pid to a
file, provokes the condition, and then checks that each of those pids is gone within a
second or two, printing what survived (and killing it, so nothing outlives the test).  The
wrapper makes itself a child subreaper, so orphaned ranks come back to it and are reaped
rather than lingering as zombies of some other process."""
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import TS, case, finish  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36


# ---- the wrapper's tools ----------------------------------------------------------------------
def reap():
    """Reaps every exited child (orphans included: we are their subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def reap_all(limit):
    """Waits (at most `limit` s) until no child is left: the orphans we adopted include the
    launcher's guard, which outlives a SIGKILLed launcher just long enough to kill its ranks'
    groups.  Returning earlier would leave it running in the case's process group."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.01)
    print("a child process still runs %.1f s after the scenario ended" % limit)


def alive(pid):
    """True while pid runs (a zombie counts as gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def read_pids(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def wait_pids(path, n, limit=5.0):
    """Waits until the ranks wrote n pids; returns them."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        pids = read_pids(path)
        if len(pids) >= n:
            return pids
        time.sleep(0.02)
    print("only %d of %d pids written within %.0f s" % (len(read_pids(path)), n, limit))
    return read_pids(path)


def check_gone(pids, within):
    """Every pid gone within `within` seconds; prints the verdict and returns it.  Survivors
    are killed so that a failing case leaves nothing behind."""
    t0 = time.monotonic()
    while True:
        reap()
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() - t0 > within:
            break
        time.sleep(0.02)
    if left:
        print("SURVIVORS: %s still running %.1f s later" % (" ".join(map(str, left)), within))
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap()
        return False
    print("all %d rank processes gone after %.2f s" % (len(pids), time.monotonic() - t0))
    return True


def start(args, tmp, **kw):
    """Starts `tilescale launch ARGS` with its output in tmp/out."""
    out = open(os.path.join(tmp, "out"), "wb")
    return subprocess.Popen([TS, "launch"] + args, stdout=out, stderr=subprocess.STDOUT, **kw)


def finish_launcher(p, tmp, limit):
    """Waits (at most `limit` s) for launcher p, prints its exit status and output; returns rc
    (None if it had to be killed)."""
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        print("launcher still running after %.1f s: killing it" % limit)
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=3)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        rc = None
    with open(os.path.join(tmp, "out"), errors="replace") as f:
        sys.stdout.write(f.read())
    print("launcher rc=%s" % rc)
    return rc


# ---- scenarios ----------------------------------------------------------------------------------
def kill9(tmp, children):
    """SIGKILL the launcher while its ranks sleep: every rank (and, with children, what each
    rank started) must die with it."""
    pids = os.path.join(tmp, "pids")
    if children:
        prog = 'echo $$ >> %s; sleep 30 & echo $! >> %s; wait' % (pids, pids)
    else:
        prog = 'echo $$ >> %s; exec sleep 30' % pids
    p = start(["-n", "2", "sh", "-c", prog], tmp)
    want = 4 if children else 2
    got = wait_pids(pids, want)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    ok = check_gone(got, 2.0)
    return 0 if ok and len(got) == want else 1


def pipe_closed(tmp):
    """`launch ... | head -1`: rank 0 prints a line every 50 ms, rank 1 sleeps quietly.  Once
    head has gone, the launcher must stop both ranks and say why (not die of SIGPIPE and
    leave rank 1 behind)."""
    pids = os.path.join(tmp, "pids")
    # Rank 0 ticks only once both pids are written: stopping must not race the bookkeeping.
    prog = ('echo $$ >> %s; if [ $RANK = 0 ]; then while [ $(wc -l < %s) -lt 2 ]; do sleep 0.01; done; '
            'while :; do echo tick; sleep 0.05; done; fi; exec sleep 30' % (pids, pids))
    cmd = "set -o pipefail; '%s' launch -n 2 --grace 1 sh -c '%s' 2>%s/err | head -1; echo \"pipeline rc=$?\"" % (
        TS, prog, tmp)
    p = subprocess.Popen(["bash", "-c", cmd])
    got = wait_pids(pids, 2)
    try:
        p.wait(timeout=6)
    except subprocess.TimeoutExpired:
        print("pipeline still running after 6 s")
        p.kill()
        p.wait()
    with open(os.path.join(tmp, "err"), errors="replace") as f:
        sys.stdout.write(f.read())
    ok = check_gone(got, 1.0)
    return 0 if ok and len(got) == 2 else 1


def rank_child(tmp, failing):
    """Rank 1 starts a child and then fails (or succeeds); rank 0 sleeps.  That child is in
    rank 1's process group and must not outlive the launcher."""
    pids = os.path.join(tmp, "pids")
    # Rank 1 fails only once every pid is written: stopping must not race the bookkeeping.
    end = ("while [ $(wc -l < %s) -lt 3 ]; do sleep 0.01; done; exit 3" % pids) if failing else "exit 0"
    prog = ('if [ $RANK = 1 ]; then sleep 30 & echo $! >> %s; echo $$ >> %s; %s; fi; echo $$ >> %s; %s'
            % (pids, pids, end, pids, "exec sleep 30" if failing else "exit 0"))
    p = start(["-n", "2", "--grace", "1", "sh", "-c", prog], tmp)
    got = wait_pids(pids, 3)
    rc = finish_launcher(p, tmp, 6)
    ok = check_gone(got, 1.0)
    return 0 if ok and rc == (3 if failing else 0) and len(got) == 3 else 1


def interrupt(tmp):
    """Ctrl-C: the terminal sends SIGINT to the launcher's process group (the ranks are in
    groups of their own).  The launcher passes SIGINT on to every rank's group and exits 130."""
    pids = os.path.join(tmp, "pids")
    # Short foreground sleeps: the signal reaches the whole group, ends the one running, and
    # the shell runs its trap.  The background sleep ignores SIGINT (as background jobs of a
    # non-interactive shell do): SIGKILL after --grace ends it.
    prog = ('trap "echo got INT; exit 7" INT; trap "echo got TERM; exit 8" TERM; echo $$ >> %s; '
            'sleep 30 & echo $! >> %s; while :; do sleep 0.05; done' % (pids, pids))
    p = start(["-n", "2", "--grace", "1", "sh", "-c", prog], tmp, process_group=0)
    got = wait_pids(pids, 4)
    os.killpg(p.pid, signal.SIGINT)
    rc = finish_launcher(p, tmp, 5)
    ok = check_gone(got, 1.0)
    try:
        os.killpg(p.pid, 0)
        print("the launcher's process group still has members")
        os.killpg(p.pid, signal.SIGKILL)
        ok = False
    except ProcessLookupError:
        pass
    return 0 if ok and rc == 130 else 1


def fake_node0(reply):
    """A TCP server on 127.0.0.1 that accepts and then sends `reply` and keeps the connection
    open (None: says nothing; b"": hangs up at once).  Returns its port."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns = []

    def serve():
        while True:
            c, _ = srv.accept()
            conns.append(c)
            if reply == b"":
                c.close()
            elif reply is not None:
                c.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return srv.getsockname()[1]


def bad_peer(tmp, reply):
    """Node 1's launcher joining a "node 0" that says nothing or garbage: it must give up
    within the join timeout (1 s) plus a margin, name the peer, and start no rank."""
    port = fake_node0(reply)
    pids = os.path.join(tmp, "pids")
    p = start(["-n", "1", "--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1", "--master-port", "1",
               "--control-port", str(port), "--join-timeout", "1", "sh", "-c", "echo $$ >> %s; exec sleep 30" % pids],
              tmp)
    t0 = time.monotonic()
    rc = finish_launcher(p, tmp, 4)
    print("took %.2f s; control port %d" % (time.monotonic() - t0, port))
    got = read_pids(pids)
    if got:
        print("a rank was started before the handshake")
    return 0 if rc not in (None, 0) and check_gone(got, 1.0) and not got else 1


def node0_ignores_garbage(tmp):
    """Junk on node 0's control port (a port scanner, a stray client) is dropped with a
    warning; the real node 1 still joins and the job succeeds."""
    import random
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    ctl = s.getsockname()[1]
    s.close()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    fake_port = s.getsockname()[1]
    s.close()
    common = ["-n", "1", "--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", str(fake_port),
              "--control-port", str(ctl), "--join-timeout", "5", "sh", "-c", "echo rank $RANK ok"]
    p0 = start(["--node-rank", "0"] + common, tmp)
    junk = None
    for _ in range(100):
        try:
            junk = socket.create_connection(("127.0.0.1", ctl))
            break
        except OSError:
            time.sleep(0.02)
    if junk is None:
        print("node 0 never listened")
        return 1
    rng = random.Random(1)
    junk.sendall(bytes(rng.getrandbits(8) for _ in range(64)) + b"\n")
    time.sleep(0.2)
    with open(os.path.join(tmp, "out1"), "wb") as out1:
        p1 = subprocess.Popen([TS, "launch", "--node-rank", "1"] + common, stdout=out1, stderr=subprocess.STDOUT)
        rc1 = p1.wait(timeout=8)
    rc0 = finish_launcher(p0, tmp, 8)
    junk.close()
    with open(os.path.join(tmp, "out1"), errors="replace") as f:
        sys.stdout.write(f.read())
    print("node 1 rc=%s" % rc1)
    return 0 if rc0 == 0 and rc1 == 0 else 1


SCENARIOS = {
    "kill9": lambda tmp: kill9(tmp, False),
    "kill9_children": lambda tmp: kill9(tmp, True),
    "pipe_closed": pipe_closed,
    "rank_child_fails": lambda tmp: rank_child(tmp, True),
    "rank_child_succeeds": lambda tmp: rank_child(tmp, False),
    "interrupt": interrupt,
    "silent_peer": lambda tmp: bad_peer(tmp, None),
    "garbage_peer": lambda tmp: bad_peer(tmp, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 junk\n"),
    "http_peer": lambda tmp: bad_peer(tmp, b"HTTP/1.1 400 Bad Request\r\n\r\n"),
    "version_peer": lambda tmp: bad_peer(tmp, b"TSLAUNCH 99 WELCOME 2\n"),
    "closing_peer": lambda tmp: bad_peer(tmp, b""),
    "node0_ignores_garbage": node0_ignores_garbage,
}


def scenario(name):
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # Started as a background job, we would pass an ignored SIGINT on to the ranks (exec keeps
    # SIG_IGN), and a shell cannot trap a signal ignored on entry.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with tempfile.TemporaryDirectory() as tmp:
        rc = SCENARIOS[name](tmp)
    reap_all(3.0)
    sys.stdout.flush()
    os._exit(rc)


def run_case(name, title, expect=(), reject=(), max_s=8.0):
    case(title, [sys.executable, os.path.abspath(__file__), "scenario", name], rc=0, expect=expect, reject=reject,
         max_s=max_s, max_rss_mb=256)


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "scenario":
    scenario(sys.argv[2])

if __name__ == "__main__":
    gone = r"^all \d+ rank processes gone"
    peer = r"127\.0\.0\.1:\d+"
    run_case("kill9", "SIGKILL of the launcher kills its ranks", [gone])
    run_case("kill9_children", "SIGKILL of the launcher kills what its ranks started", [gone])
    run_case("pipe_closed", "launch | head -1 stops the ranks", [gone, r"standard output .*closed", r"pipeline rc=141"])
    run_case("rank_child_fails", "a failing rank's own child is stopped",
             [gone, r"failed: rank 1 exited with code 3", r"launcher rc=3"])
    run_case("rank_child_succeeds", "a successful rank's leftover child is stopped",
             [gone, r"rank 1 left .*behind", r"launcher rc=0"])
    run_case("interrupt", "Ctrl-C reaches every rank as SIGINT",
             [gone, r"\[rank 0\] got INT", r"\[rank 1\] got INT", r"launcher rc=130"], [r"got TERM"])
    run_case("silent_peer", "a silent node 0 times out the join",
             [r"launcher rc=1\b", r"failed: node 1: .*" + peer + r".*timed out"])
    run_case("garbage_peer", "a garbage node 0 is refused",
             [r"launcher rc=1\b", r"failed: node 1: .*" + peer + r".*malformed"])
    run_case("http_peer", "an HTTP server as node 0 is refused",
             [r"launcher rc=1\b", r"failed: node 1: .*" + peer + r".*malformed"])
    run_case("version_peer", "a node 0 of another protocol version is refused",
             [r"launcher rc=1\b", r"protocol version 99"])
    run_case("closing_peer", "a node 0 that hangs up is refused",
             [r"launcher rc=1\b", r"failed: node 1: .*" + peer + r".*closed"])
    run_case("node0_ignores_garbage", "junk on node 0's control port is dropped",
             [r"ignoring .*" + peer, r"launcher rc=0", r"node 1 rc=0"])
    finish("launcher")
