"""front.py — hostile input to the front end (lexer, parser, diagnostics): huge files,
huge lines, pathological literals.  Each case must end in a clear diagnostic (or a
successful compile) within bounded time and memory.  The inputs are generated here, into a
temporary folder, never committed.

Budgets: the parser frees tokens as it goes and builds a compact AST, about 10 times the
source size for real kernel code (40 for the densest statements); files over 16 MiB or
2^20 tokens are refused before parsing.  Before, 5 MB of statements took 1.6 GB, a 5 MB
one-line expression 700 MB (and echoed the whole line in its diagnostic), and 200 KB of
string literals after an f-string 2 GB.  The limits below hold with margin on 2 cores and
fail the old code."""
import glob
import os
import shutil
import subprocess
import tempfile

from harness import ROOT, TS, finish
from harness import case as harness_case

tmp = tempfile.mkdtemp(prefix="ts-hostile-front-")
MB = 1 << 20

# Under `make asan` the limits are for memory errors, not for these budgets: ASan's shadow
# memory, redzones and whole-size AST nodes take several times the memory, and it runs
# slower.  (Detected as tests/run.sh detects a sanitizer build.)
try:
    SANITIZED = b"san.so" in subprocess.run(["readelf", "-d", TS], capture_output=True).stdout
except OSError:
    SANITIZED = False
MEM, TIME = (10, 4) if SANITIZED else (1, 1)


def case(name, cmd, max_s, max_rss_mb, **kw):
    harness_case(name, cmd, max_s=max_s * TIME, max_rss_mb=max_rss_mb * MEM, **kw)



def write(name, *parts, repeat=1):
    """Writes the parts (repeated) in pieces: the harness measures the child's peak RSS,
    which on Linux includes this process's at the fork, so no big string is built here."""
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(repeat):
            for part in parts:
                f.write(part)
    return path


def compile_ir(path, *args):
    return [TS, "compile", path, *args, "--emit", "ir", "-o", os.path.join(tmp, "out.ir")]


def short_output(limit):
    """check(): the diagnostics stay small whatever the input (no line echoed whole)."""
    return lambda out: None if len(out) <= limit else "output is %d bytes (> %d)" % (len(out), limit)


try:
    # 20 MB of statements: over the byte limit, refused before the file is read.
    p = write("stmts20.py", "x = a + b * 3\n", repeat=20 * MB // 14)
    case("file over the size limit", compile_ir(p, "-k", "f"), rc=(1, 2), max_s=5, max_rss_mb=48,
         expect=[r"stmts20\.py: is 20\.0 MiB, over the 16\.0 MiB limit of a kernel file"])

    # 5 MB of statements: under the byte limit, over the token limit (checked in one pass
    # that keeps no tokens), reported at the token where the count passes the limit.
    p = write("stmts5.py", "x = a + b * 3\n", repeat=5 * MB // 14)
    case("statements over the token limit", compile_ir(p, "-k", "f"), rc=1, max_s=5, max_rss_mb=48,
         expect=[r"stmts5\.py:131073:1: error: too many tokens: more than 1048576"],
         check=short_output(2000))

    # One 6 MB line: over the token limit; the echo of the line is a window around the caret.
    p = write("line6.py", "x = 1", " + 1" * (MB // 4), repeat=6)
    case("one-line expression over the token limit", compile_ir(p, "-k", "f"), rc=1, max_s=5,
         max_rss_mb=48, expect=[r"line6\.py:1:\d+: error: too many tokens", r"^  \.\.\..*\.\.\.$"],
         check=short_output(2000))

    # One 3 MB line under the token limit (a long name per term): the chain limit stops the
    # expression; the rest of the line is skipped without keeping its tokens, and the echo
    # is cut.
    p = write("line3.py", "x = 1", " + abcdefghij" * (MB // 13), repeat=3)
    case("one-line expression too long", compile_ir(p, "-k", "f"), rc=1, max_s=5, max_rss_mb=48,
         expect=[r"line3\.py:1:13007: error: expression too long", r"^  \.\.\..*\.\.\.$"],
         check=short_output(2000))

    # Real kernel code, 4 MB of it (every example, each copy's functions renamed): parsed
    # whole, one kernel compiled.  Memory within 20x the source.
    src = "".join(open(f, encoding="utf-8").read() for f in sorted(glob.glob(os.path.join(ROOT, "examples", "*.py"))))
    p = write("kernels4.py", *[src.replace("\ndef ", "\ndef c%d_" % i) for i in range(4 * MB // len(src))])
    size_mb = os.path.getsize(p) / MB
    case("4 MB of real kernels, one compiled", compile_ir(p, "-k", "c7_elementwise_add", "-D", "M=1024", "-D", "N=1024"),
         rc=0, max_s=10, max_rss_mb=int(20 * size_mb))

    # Dense statements just under the token limit: the worst case the limits allow.
    p = write("dense.py", "x = a + b * 3\n", repeat=120000)
    case("dense statements under the token limit", compile_ir(p, "-k", "f"), rc=2, max_s=10, max_rss_mb=90,
         expect=[r"no function 'f'"])

    # One statement of 960 000 tokens (a list literal): the parser frees the tokens of the
    # elements it has read, so what remains is the AST.
    p = write("biglist.py", "x = [0", ", 7" * 480000, "]\n")
    case("a list literal of 480 000 elements", compile_ir(p, "-k", "f"), rc=2, max_s=10, max_rss_mb=80,
         expect=[r"no function 'f'"])

    # An f-string followed by 20000 plain literals: adjacent literals are joined once, not
    # pairwise (that was quadratic: 200 KB of source took 2 GB).
    p = write("fcat.py", "x = f\"{a}\" " + " ".join(['"xxxxxxxxxx"'] * 20000) + "\n")
    case("f-string concatenation", compile_ir(p, "-k", "f"), rc=2, max_s=5, max_rss_mb=48)

    # 350 000 characters that are not Python: the lexer keeps only the first errors, the
    # diagnostics stop after 50.
    p = write("badchars.py", "x = 1\n", "\u00a4 " * (MB // 3), "\n")
    case("350 000 invalid characters", compile_ir(p, "-k", "f"), rc=1, max_s=5, max_rss_mb=48,
         expect=[r"invalid character '\u00a4' \(U\+00A4\)", r"too many errors"], check=short_output(20000))

    # 60000 elifs in a kernel: the chain nests the tree one level per branch, which the
    # evaluator walks recursively (it took 1.3 GB at 20000 and then overflowed the stack).
    head = """import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def k(M):

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 128), threads=128) as bx:
            x = A[bx]
            if x == 0:
                B[bx] = 0
"""
    p = write("elif.py", head, *["            elif x == %d:\n                B[bx] = %d\n" % (i, i) for i in range(1, 60001)],
              "    return main\n")
    case("60000-branch elif chain", compile_ir(p, "-k", "k", "-D", "M=1024"), rc=1, max_s=5, max_rss_mb=128,
         expect=[r"elif\.py:2014:13: error: too many 'elif' branches: more than 1000"])

    # The brief's reproducer: 65536 x 65536 tiles put 16M-element arrays in every thread
    # and NVRTC ran for minutes; the register budget refuses them after lowering.
    case("16M-element fragments per thread", [TS, "compile", os.path.join(ROOT, "examples", "elementwise_add.py"),
         "-k", "elementwise_add", "-D", "M=1024", "-D", "N=1024", "-D", "block_M=65536", "-D", "block_N=65536",
         "--emit", "cubin", "-o", os.path.join(tmp, "k.cubin")], rc=1, max_s=10, max_rss_mb=256,
         env={"TILESCALE_DISABLE_CACHE": "1"},
         expect=[r"elementwise_add\.py:\d+:\d+: error: register buffers need 100663296 bytes per thread"])

    # Not a file: a device that never ends is read only up to the limit.
    case("endless input", compile_ir("/dev/zero", "-k", "f"), rc=(1, 2), max_s=5, max_rss_mb=64,
         expect=[r"cannot read /dev/zero: is a character device"])
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish("front")
