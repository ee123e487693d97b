"""cache.py — the binary cache against hostile folders and settings (harness.py cases).

  entries   an entry replaced by a link to /dev/zero, a FIFO or a 2 GB file is refused at once
            (before: read whole or never finished) and the kernel is simply rebuilt;
  sharing   entries and folders follow the umask (before: always 0600, so a team cache missed
            silently); an unreadable entry is a warning under TILESCALE_VERBOSE;
  switches  TILESCALE_DISABLE_CACHE=false/0/no/off/'' keep the cache on, 1/true/yes/on turn it
            off, anything else warns; TILESCALE_CACHE_MAX_BYTES bounds the folder (least recently
            used entries go) and a bad value warns;
  command   `tilescale cache dir|size|clear` (clear removes only what the cache created).
Every case uses its own temporary cache folder."""
import glob
import os
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, TS, case, finish  # noqa: E402

EX = os.path.join(ROOT, "examples", "elementwise_add.py")
# A refused entry costs no more than a plain compile (NVRTC: ~80 MB, ~160 MB under ASan);
# reading the 2 GB entry or /dev/zero would blow far past this.
FAST = dict(max_s=2.0, max_rss_mb=256)

tmp = tempfile.mkdtemp(prefix="ts-hostile-cache-")
os.chmod(tmp, 0o755)  # the `nobody` case below reads the kernel file from here
SRC = os.path.join(tmp, "k.py")
shutil.copy(EX, SRC)
os.chmod(SRC, 0o644)


def compile_cmd(m=64):
    return [TS, "compile", SRC, "-k", "elementwise_add", "-D", "M=%d" % m, "-D", "N=64", "--emit", "cubin",
            "-o", os.path.join(tmp, "k.cubin")]


def cache_env(name, **extra):
    env = {"TILESCALE_CACHE_DIR": os.path.join(tmp, name), "TILESCALE_VERBOSE": "1"}
    env.update(extra)
    return env


def entries(name):
    return sorted(glob.glob(os.path.join(tmp, name, "*.cubin")))


def fill(name, m=64):
    """Compiles once so that the folder holds the kernel's entry; returns its path."""
    env = dict(os.environ, **cache_env(name))
    subprocess.run(compile_cmd(m), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    (path,) = entries(name)
    return path


old_umask = os.umask(0o002)
try:
    # ---- hostile entries: refused at once, the kernel rebuilt ------------------------------
    e = fill("zero")
    os.unlink(e)
    os.symlink("/dev/zero", e)
    case("entry is a link to /dev/zero", compile_cmd(), rc=0, env=cache_env("zero"),
         expect=[r"warning: cannot read cache entry .*: is a symbolic link"], **FAST)
    e = fill("fifo")
    os.unlink(e)
    os.mkfifo(e)
    case("entry is a FIFO", compile_cmd(), rc=0, env=cache_env("fifo"),
         expect=[r"warning: cannot read cache entry .*: is a FIFO"], **FAST)
    e = fill("huge")
    with open(e, "r+b") as f:  # sparse: 2 GB long, no disk used
        f.truncate(2 << 30)
    case("entry of 2 GB", compile_cmd(), rc=0, env=cache_env("huge"),
         expect=[r"cache miss \(.*: is 2\.0 GiB, over the 64\.0 MiB limit\)"], **FAST,
         check=lambda o: None if os.path.getsize(e) < (1 << 20) else "the 2 GB entry was not replaced")
    e = fill("dir")
    os.unlink(e)
    os.mkdir(e)
    case("entry is a directory", compile_cmd(), rc=0, env=cache_env("dir"),
         expect=[r"warning: cannot read cache entry .*: is a directory"], **FAST)

    # ---- sharing: modes follow the umask; unreadable entries are a warning -------------------
    def shared_modes(_):
        d = os.path.join(tmp, "shared", "a", "b")
        got = (stat.S_IMODE(os.stat(d).st_mode), [stat.S_IMODE(os.stat(p).st_mode) for p in entries("shared/a/b")])
        return None if got == (0o775, [0o664]) else "modes %o %s, expected 775 ['664'] under umask 002" % (
            got[0], [oct(m) for m in got[1]])
    case("entries follow the umask (002)", compile_cmd(), rc=0, env=cache_env("shared/a/b"), check=shared_modes)

    e = fill("private")
    os.chmod(e, 0o600)
    if os.geteuid() == 0:  # root reads everything: check as `nobody`
        setpriv = shutil.which("setpriv")
        who = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] if setpriv else None
    else:
        os.chmod(e, 0)
        who = []
    if who is not None:
        case("unreadable entry warns under TILESCALE_VERBOSE",
             who + compile_cmd()[:-2] + ["-o", "/dev/null"], rc=0, env=cache_env("private", HOME=tmp),
             expect=[r"warning: cannot read cache entry .*: Permission denied.*umask"])

    # ---- TILESCALE_DISABLE_CACHE: only a true value turns it off -----------------------------
    for value in ("false", "0", "no", "off", "OFF", ""):
        case("TILESCALE_DISABLE_CACHE=%r keeps the cache" % value, compile_cmd(), rc=0,
             env=cache_env("on_" + value, TILESCALE_DISABLE_CACHE=value), expect=[r"cache miss"],
             reject=[r"cache disabled", r"warning"],
             check=lambda o, v=value: None if len(entries("on_" + v)) == 1 else "no entry written")
    for value in ("1", "true", "yes", "on", "True"):
        case("TILESCALE_DISABLE_CACHE=%r turns it off" % value, compile_cmd(), rc=0,
             env=cache_env("off_" + value, TILESCALE_DISABLE_CACHE=value), expect=[r"cache disabled"],
             check=lambda o, v=value: None if not entries("off_" + v) else "an entry was written")
    case("TILESCALE_DISABLE_CACHE=maybe warns", [TS, "cache", "size"], rc=0,
         env=cache_env("maybe", TILESCALE_DISABLE_CACHE="maybe"),
         expect=[r"warning: TILESCALE_DISABLE_CACHE='maybe' is not a switch value"], reject=[r"turned off"])

    # ---- TILESCALE_CACHE_MAX_BYTES: the folder stays under the limit --------------------------
    one = os.path.getsize(fill("limit", m=32))
    limit = 2 * one + one // 2  # room for two entries

    def under_limit(_):
        sizes = [os.path.getsize(p) for p in entries("limit")]
        if sum(sizes) > limit or len(sizes) != 2:
            return "%d entries, %d bytes over the limit of %d" % (len(sizes), sum(sizes), limit)
        return None
    for m in (64, 96, 128):
        case("TILESCALE_CACHE_MAX_BYTES=%d, kernel %d" % (limit, m), compile_cmd(m), rc=0,
             env=cache_env("limit", TILESCALE_CACHE_MAX_BYTES=str(limit)),
             check=under_limit if m == 128 else None)
    case("the newest entry survives the limit", compile_cmd(128), rc=0,
         env=cache_env("limit", TILESCALE_CACHE_MAX_BYTES=str(limit)), expect=[r"cache hit"])
    case("TILESCALE_CACHE_MAX_BYTES=lots warns", [TS, "cache", "size"], rc=0,
         env=cache_env("limit", TILESCALE_CACHE_MAX_BYTES="lots"),
         expect=[r"warning: TILESCALE_CACHE_MAX_BYTES='lots' is not a size"])
    case("TILESCALE_CACHE_MAX_BYTES=1G", [TS, "cache", "size"], rc=0,
         env=cache_env("limit", TILESCALE_CACHE_MAX_BYTES="1G"),
         expect=[r"limit: 1073741824 bytes"], reject=[r"warning"])

    # ---- `tilescale cache` ------------------------------------------------------------------
    cdir = os.path.join(tmp, "cmd")
    fill("cmd")
    os.mkdir(os.path.join(cdir, "keep_dir"))
    with open(os.path.join(cdir, "notes.txt"), "w") as f:
        f.write("not an entry\n")
    case("cache dir", [TS, "cache", "dir"], rc=0, env=cache_env("cmd"), expect=[r"^%s$" % cdir])
    case("cache size", [TS, "cache", "size"], rc=0, env=cache_env("cmd"), expect=[r": 1 entries, \d+ bytes"])
    case("cache clear", [TS, "cache", "clear"], rc=0, env=cache_env("cmd"), expect=[r"removed 1 entries"],
         check=lambda o: None if sorted(os.listdir(cdir)) == ["keep_dir", "notes.txt"]
         else "folder now holds %s" % sorted(os.listdir(cdir)))
    case("cache clear of a missing folder", [TS, "cache", "clear"], rc=0, env=cache_env("never"),
         expect=[r"removed 0 entries"])
    case("cache size when turned off", [TS, "cache", "size"], rc=0,
         env=cache_env("cmd", TILESCALE_DISABLE_CACHE="1"), expect=[r"\[turned off\]"])
    case("cache bogus", [TS, "cache", "bogus"], rc=2, expect=[r"unknown cache action 'bogus'"])
    case("cache with no action", [TS, "cache"], rc=2, expect=[r"cache needs an action"])
finally:
    os.umask(old_umask)
    shutil.rmtree(tmp, ignore_errors=True)

finish("cache")
