"""`make install` for C users, on the CPU (part of `make test`): installs into a temporary
PREFIX, then `pkg-config --cflags --libs tilescale` (PKG_CONFIG_PATH at the installed .pc) gives
the flags a tiny C program compiles and links with, against the installed shared library, and
the program runs (it creates a context, which works without a GPU, and parses a kernel file).
The static library links too, with `pkg-config --static`.  Reuses the build folder ($BUILD of
tests/run.sh through $TILESCALE_BUILD_DIR, else the one $TILESCALE_LIB sits in, else build).
Without pkg-config the .pc file is read by this test instead (said on stderr).
Run: python3 tests/python/test_make_install.py"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROGRAM = r'''
#include <stdio.h>
#include <string.h>
#include <tilescale.h>

int main(int argc, char **argv) {
  ts_context *ctx;
  ts_program *prog;
  if (ts_context_create(NULL, &ctx) != TS_OK) return 1;
  if (ts_program_load_file(ctx, argv[1], &prog) != TS_OK) {
    fprintf(stderr, "%s\n", ts_last_error(ctx));
    return 2;
  }
  const char *names[8];
  int n = ts_program_functions(prog, names, 8);
  printf("%s %s %d %s\n", TS_VERSION_STRING, ts_dtype_name(TS_DTYPE_FLOAT16), n, n > 0 ? names[0] : "-");
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
  return argc == 2 ? 0 : 3;
}
'''


def build_dir():
    if os.environ.get("TILESCALE_BUILD_DIR"):
        return os.environ["TILESCALE_BUILD_DIR"]
    lib = os.environ.get("TILESCALE_LIB")
    return os.path.dirname(os.path.abspath(lib)) if lib else os.path.join(ROOT, "build")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise AssertionError("%s failed (exit %d):\n%s" % (" ".join(cmd), r.returncode, (r.stdout + r.stderr)[-4000:]))
    return r.stdout


def pc_flags(pcdir, static):
    """What `pkg-config --cflags --libs [--static] tilescale` prints."""
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
    if shutil.which("pkg-config"):
        return run(["pkg-config", "--cflags", "--libs"] + (["--static"] if static else []) + ["tilescale"],
                   env=env).split()
    print("pkg-config not found: the test reads tilescale.pc itself", file=sys.stderr)
    vars_, fields = {}, {}
    with open(os.path.join(pcdir, "tilescale.pc")) as f:
        for line in f:
            line = re.sub(r"\$\{(\w+)\}", lambda m: vars_[m.group(1)], line.strip())
            if re.match(r"^\w+=", line):
                k, v = line.split("=", 1)
                vars_[k] = v
            elif ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                fields[k] = v.strip()
    libs = fields["Libs"] + (" " + fields.get("Libs.private", "") if static else "")
    return shlex.split(fields["Cflags"]) + shlex.split(libs)


class MakeInstallTest(unittest.TestCase):
    def test_install_pkg_config_and_link(self):
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        self.assertTrue(cc, "no C compiler")
        with tempfile.TemporaryDirectory() as tmp:
            prefix = os.path.join(tmp, "prefix")
            env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
            b = build_dir()
            rel = os.path.relpath(b, ROOT)
            run(["make", "-C", ROOT, "install", "BUILD=" + (b if rel.startswith("..") else rel), "PREFIX=" + prefix],
                env=env)
            for f in ("include/tilescale.h", "include/tilescale_dist.h", "lib/libtilescale.a",
                      "lib/libtilescale.so", "bin/tilescale", "lib/pkgconfig/tilescale.pc"):
                self.assertTrue(os.path.isfile(os.path.join(prefix, f)), f)
            self.assertTrue(os.access(os.path.join(prefix, "bin", "tilescale"), os.X_OK))
            pcdir = os.path.join(prefix, "lib", "pkgconfig")
            flags = pc_flags(pcdir, static=False)
            self.assertIn("-I" + os.path.join(prefix, "include"), flags)
            self.assertIn("-ltilescale", flags)
            src = os.path.join(tmp, "app.c")
            with open(src, "w") as f:
                f.write(PROGRAM)
            kernel = os.path.join(ROOT, "examples", "softmax.py")
            app = os.path.join(tmp, "app")
            run([cc, "-std=c11", "-Wall", "-Werror", src, "-o", app] + flags, cwd=tmp)
            out = run([app, kernel], env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib")))
            self.assertEqual(out.split()[:2], ["0.1.0", "float16"])
            self.assertEqual(out.split()[3], "softmax")
            # statically: the archive and Libs.private
            sflags = [f for f in pc_flags(pcdir, static=True) if f != "-ltilescale"]
            self.assertIn("-ldl", sflags)
            run([cc, "-std=c11", src, "-o", app + "_static", os.path.join(prefix, "lib", "libtilescale.a")] + sflags,
                cwd=tmp)
            self.assertEqual(run([app + "_static", kernel]).split()[:2], ["0.1.0", "float16"])
            run(["make", "-C", ROOT, "uninstall", "PREFIX=" + prefix], env=env)
            self.assertFalse(os.path.exists(os.path.join(prefix, "lib", "libtilescale.so")))


if __name__ == "__main__":
    unittest.main(verbosity=1)
