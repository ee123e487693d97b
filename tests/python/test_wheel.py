"""The pip install path, on the CPU (part of `make test`): the wheel is built from the checkout
(`pip wheel --no-build-isolation --no-index`, so no network and no build dependency: the backend
is tools/pep517_backend.py), installed into a temporary target, and the packages imported from
there with no $TILESCALE_LIB: they must find the library and the C call path the wheel carries,
compile a kernel, and the CLI script must run.  Reuses the Makefile's build folder
($TILESCALE_BUILD_DIR, else the one $TILESCALE_LIB sits in, else build), so it is fast.
Run: python3 tests/python/test_wheel.py"""
import glob
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_dir():
    if os.environ.get("TILESCALE_BUILD_DIR"):
        return os.environ["TILESCALE_BUILD_DIR"]
    lib = os.environ.get("TILESCALE_LIB")
    return os.path.dirname(os.path.abspath(lib)) if lib else os.path.join(ROOT, "build")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TILESCALE_LIB", "PYTHONPATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1",
               PIP_ROOT_USER_ACTION="ignore", **extra)
    return env


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise AssertionError("%s failed (exit %d):\n%s" % (" ".join(cmd), r.returncode, (r.stdout + r.stderr)[-4000:]))
    return r.stdout


def source_tree_extras():
    """Untracked and ignored files outside the build folders (caches, egg-info, ...)."""
    r = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--ignored", "--untracked-files=all", "--",
                        "python", "tools", "tests/python", "*.egg-info"], capture_output=True, text=True)
    return set(r.stdout.splitlines()) if r.returncode == 0 else set()


CHECK = r'''
import os, sys
site = sys.argv[1]
import tilelang, tilescale
from tilescale import _lib
def under(p):
    return os.path.realpath(p).startswith(os.path.realpath(site) + os.sep)
assert under(tilelang.__file__) and under(tilescale.__file__), (tilelang.__file__, tilescale.__file__)
assert under(_lib.lib.path), _lib.lib.path                      # the wheel's own library
fast = _lib.fastcall
assert fast is not None and under(fast.__file__), fast        # and its C call path
import tilelang.language as T
k = tilescale.Context(disable_cache=True).load(sys.argv[2]).compile(
    "softmax", M=256, N=1024, no_jit=True)
assert k._fast and "__global__" in k.source
print("ok", tilelang.__version__)
'''


@unittest.skipIf(subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode,
                 "pip is not available for %s" % sys.executable)
class WheelTest(unittest.TestCase):
    def test_wheel_installs_and_imports(self):
        before = source_tree_extras()
        with tempfile.TemporaryDirectory() as tmp:
            env = clean_env(TILESCALE_BUILD_DIR=build_dir())
            run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index", "--no-cache-dir",
                 "--no-build-isolation", "-w", os.path.join(tmp, "wheel"), ROOT], env=env, cwd=tmp)
            wheels = glob.glob(os.path.join(tmp, "wheel", "tilescale-*.whl"))
            self.assertEqual(len(wheels), 1, wheels)
            site = os.path.join(tmp, "site")
            run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-cache-dir",
                 "--target", site, wheels[0]], env=env, cwd=tmp)
            out = run([sys.executable, "-c", CHECK, site, os.path.join(ROOT, "examples", "softmax.py")],
                      env=clean_env(PYTHONPATH=site, TILESCALE_CACHE_DIR=os.path.join(tmp, "cache")), cwd=tmp)
            self.assertTrue(out.startswith("ok "), out)
            cli = os.path.join(site, "bin", "tilescale")
            out = run([cli, "compile", os.path.join(ROOT, "examples", "softmax.py"), "-k", "softmax",
                       "-D", "M=256", "-D", "N=1024", "--emit", "cuda"], env=clean_env(), cwd=tmp)
            self.assertIn("__global__", out)
        self.assertEqual(source_tree_extras() - before, set(), "building the wheel wrote into the source tree")


if __name__ == "__main__":
    unittest.main(verbosity=1)
