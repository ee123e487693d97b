"""binding.py — wrong values handed to the Python binding (python/tilescale), as harness cases.

Before: a NUL in a path loaded another file (ctypes ends the C string at the NUL), a NUL in
source text dropped the rest, None/ints raised AttributeError (or str(None) became a file
name).  Now every entry point raises TypeError naming the parameter for a wrong type and
ValueError for a NUL, before the library sees anything.  Each case runs a small script in a
fresh python3 that prints "NAME: ExceptionType: message" per call (or "NAME: ok")."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BUILD, ROOT, case, finish  # noqa: E402

LIB = os.path.join(BUILD, "libtilescale.so")


def sanitizer_build(path):
    """python3 cannot dlopen a library built with ASan (the runtime must come first), so
    under `make asan` these cases are skipped, as tests/run.sh skips the binding test."""
    try:
        with open(path, "rb") as f:
            return b"libasan.so" in f.read()
    except OSError:
        return False


if sanitizer_build(LIB):
    print("hostile binding: 0 passed, 0 failed (skipped: %s is a sanitizer build)" % LIB)
    sys.exit(0)
tmp = tempfile.mkdtemp(prefix="ts-hostile-binding-")
ENV = {"TILESCALE_LIB": LIB, "TILESCALE_CACHE_DIR": os.path.join(tmp, "cache"), "PYTHONDONTWRITEBYTECODE": "1"}

PRELUDE = r'''
import os, sys
sys.path.insert(0, %r)
import tilescale as ts
K = %r
ctx = ts.Context()
prog = ctx.load(K)
def probe(name, fn):
    try:
        fn()
        print("%%s: ok" %% name)
    except Exception as e:
        print("%%s: %%s: %%s" %% (name, type(e).__name__, e))
''' % (os.path.join(ROOT, "python"), os.path.join(tmp, "k.py"))


def script(body):
    return ["python3", "-c", PRELUDE + body]


def py_case(name, body, expect, **kw):
    case(name, script(body), rc=0, expect=expect, reject=[r"AttributeError", r"Traceback"], env=ENV,
         max_s=10, **kw)


try:
    shutil.copy(os.path.join(ROOT, "examples", "elementwise_add.py"), os.path.join(tmp, "k.py"))
    K = os.path.join(tmp, "k.py")

    py_case("NUL in paths", r'''
probe("load nul", lambda: ctx.load(K + "\0junk"))
probe("load bytes nul", lambda: ctx.load(K.encode() + b"\0junk"))
probe("context cache_dir nul", lambda: ts.Context(cache_dir="/tmp/x\0y"))
probe("compile() nul", lambda: ts.compile(K + "\0", "elementwise_add"))
''', [r"^load nul: ValueError: tilescale: path contains a NUL character \(at offset \d+\)$",
      r"^load bytes nul: ValueError: tilescale: path contains a NUL",
      r"^context cache_dir nul: ValueError: tilescale: cache_dir contains a NUL",
      r"^compile\(\) nul: ValueError: tilescale: path contains a NUL"])

    py_case("NUL in text", r'''
src = open(K).read()
probe("source nul", lambda: ctx.load_source("k.py", src + "\0junk"))
probe("name nul", lambda: ctx.load_source("k\0.py", src))
probe("func nul", lambda: prog.compile("elementwise_add\0x", M=64, N=64))
probe("arch nul", lambda: prog.compile("elementwise_add", "sm_90a\0", M=64, N=64))
probe("dump_after nul", lambda: prog.compile("elementwise_add", M=64, N=64, dump_after="simplify\0"))
probe("param value nul", lambda: prog.compile("elementwise_add", M=64, N=64, dtype="float16\0"))
probe("param name nul", lambda: prog.compile("elementwise_add", params={"M\0": 64}, N=64))
''', [r"^source nul: ValueError: tilescale: text contains a NUL character \(at offset \d+\)$",
      r"^name nul: ValueError: tilescale: name contains a NUL",
      r"^func nul: ValueError: tilescale: func contains a NUL",
      r"^arch nul: ValueError: tilescale: arch contains a NUL",
      r"^dump_after nul: ValueError: tilescale: dump_after contains a NUL",
      r"^param value nul: ValueError: tilescale: value of parameter 'dtype' contains a NUL",
      r"^param name nul: ValueError: tilescale: parameter name 'M\\x00' contains a NUL"])

    py_case("wrong types for paths and text", r'''
probe("load None", lambda: ctx.load(None))
probe("load int", lambda: ctx.load(3))
probe("load pathlike", lambda: ctx.load(__import__("pathlib").Path(K)))
probe("source None", lambda: ctx.load_source("k.py", None))
probe("source int", lambda: ctx.load_source("k.py", 5))
probe("name int", lambda: ctx.load_source(5, "x = 1\n"))
probe("name None", lambda: ctx.load_source(None, "x = 1\n"))
probe("context device str", lambda: ts.Context(device="0"))
probe("context cache_dir int", lambda: ts.Context(cache_dir=7))
''', [r"^load None: TypeError: tilescale: path must be a path \(str, bytes or os.PathLike\), not NoneType$",
      r"^load int: TypeError: tilescale: path must be a path .* not int$",
      r"^load pathlike: ok$",
      r"^source None: TypeError: tilescale: text must be str or bytes, not NoneType$",
      r"^source int: TypeError: tilescale: text must be str or bytes, not int$",
      r"^name int: TypeError: tilescale: name must be str or bytes or None, not int$",
      r"^name None: ok$",
      r"^context device str: TypeError: tilescale: device must be an integer, not str$",
      r"^context cache_dir int: TypeError: tilescale: cache_dir must be a path .* not int$"])

    py_case("wrong types for compile and launch", r'''
probe("func None", lambda: prog.compile(None))
probe("func int", lambda: prog.compile(3))
probe("arch int", lambda: prog.compile("elementwise_add", 90, M=64, N=64))
probe("dump_after int", lambda: prog.compile("elementwise_add", M=64, N=64, dump_after=1))
probe("dump_after bogus", lambda: prog.compile("elementwise_add", M=64, N=64, no_jit=True, dump_after="bogus"))
probe("compiler None", lambda: prog.compile("elementwise_add", M=64, N=64, compiler=None))
probe("params list", lambda: prog.compile("elementwise_add", params=[("M", 64)]))
probe("param name int", lambda: prog.compile("elementwise_add", params={1: 64}))
probe("tensor ptr None", lambda: ts.Tensor(None, "float16", (4,)))
probe("tensor ptr str", lambda: ts.Tensor("0x10", "float16", (4,)))
probe("tensor shape int", lambda: ts.Tensor(0x10, "float16", 4))
probe("tensor dtype None", lambda: ts.Tensor(0x10, None, (4,)))
s = ctx.load(%r).compile("saxpy", "sm_90a", no_jit=True, N=1024)
x = ts.Tensor(0x10000, "float32", (1024,))
probe("scalar None", lambda: s(None, 3, x, x))
probe("stream str", lambda: s(2.0, 3, x, x, stream="abc"))
''' % os.path.join(ROOT, "tests", "front", "scalar_params.py"),
        [r"^func None: TypeError: tilescale: func must be str or bytes, not NoneType$",
         r"^func int: TypeError: tilescale: func must be str or bytes, not int$",
         r"^arch int: TypeError: tilescale: arch must be str or bytes or None, not int$",
         r"^dump_after int: TypeError: tilescale: dump_after must be",
         r"^dump_after bogus: TileScaleError: TS_ERR_INVALID_ARGUMENT: no pass named 'bogus'",
         r"^compiler None: TypeError: tilescale: compiler must be 'nvrtc' or 'nvcc', not NoneType$",
         r"^params list: TypeError: tilescale: params must be a dict, not list$",
         r"^param name int: TypeError: tilescale: parameter name 1 must be str",
         r"^tensor ptr None: TypeError: tilescale: Tensor ptr must be an integer, not NoneType$",
         r"^tensor ptr str: TypeError: tilescale: Tensor ptr must be an integer, not str$",
         r"^tensor shape int: TypeError: tilescale: Tensor shape must be a sequence",
         r"^tensor dtype None: TypeError: tilescale: Tensor dtype must be",
         r"^scalar None: TypeError: tilescale: scalar parameter 'alpha' \(float32\) needs a number, not None$",
         r"^stream str: TypeError: tilescale: stream must be an int CUstream"])

    big = os.path.join(tmp, "big.py")
    with open(big, "wb") as f:
        f.truncate(20 << 20)
    py_case("oversized and special files", r'''
probe("load /dev/zero", lambda: ctx.load("/dev/zero"))
probe("load dir", lambda: ctx.load(os.path.dirname(K)))
probe("load 20 MB", lambda: ctx.load(%r))
probe("source 20 MB", lambda: ctx.load_source("big.py", "#" * (20 << 20)))
''' % big, [r"^load /dev/zero: TileScaleError: TS_ERR_IO: cannot read /dev/zero: is a character device$",
            r"^load dir: TileScaleError: TS_ERR_IO: cannot read .*: is a directory$",
            r"^load 20 MB: TileScaleError: TS_ERR_IO: cannot read .*big\.py: is 20\.0 MiB, over the 16\.0 MiB",
            r"^source 20 MB: TileScaleError: TS_ERR_INVALID_ARGUMENT: big\.py: source text over the 16\.0 MiB"],
        max_rss_mb=300)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish("binding")
