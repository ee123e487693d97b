"""pep517_backend.py — the build backend behind `pip install .` (pyproject.toml names it).

    pip install .                                   # builds, installs tilescale + tilelang
    pip install --no-build-isolation .              # the same, using nothing but this file
    pip wheel --no-deps -w dist .                   # a wheel to copy elsewhere
    TILESCALE_BUILD_DIR=build-x pip wheel ...       # the Makefile's build folder (default build)

The wheel: the packages of python/ (tilescale, the ctypes binding; tilelang, the drop-in
TileLang API; tvm, its host stand-in; pynvshmem, the shim of TileScale's NVSHMEM examples over
tilelang.distributed), libtilescale.so and the C call path
(_fastcall<EXT_SUFFIX>, built for the Python running pip) inside the tilescale package, where
tilescale/_locate.py looks first, and the `tilescale` CLI as a script.  Everything is built by
the Makefile (`make lib` and the CLI) into the build folder, so a build that `make` already
did is reused as it is.

Only the standard library is used: no setuptools or wheel package, no network.  The machines
this project builds on carry a setuptools too old to make wheels without the `wheel` package
(setuptools < 70.1), and pip's isolated build would download one; with `requires = []` the
isolated environment needs nothing.  PEP 517 hooks: build_wheel, build_sdist,
prepare_metadata_for_build_wheel, and PEP 660's build_editable (a .pth naming python/; the
library stays in the build folder, found there as in a source checkout).
config_settings: build-dir (as TILESCALE_BUILD_DIR), jobs (make -j, default the CPU count)."""
import base64
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "tilescale"
PACKAGES = ("tilescale", "tilelang", "tvm", "pynvshmem")
SUMMARY = ("TileLang kernels compiled to CUDA by a C11 compiler (libtilescale): the tilescale "
           "binding and a drop-in tilelang package")
# Fixed time stamps make the same sources give the same wheel (SOURCE_DATE_EPOCH overrides).
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, zip's first day


def _version():
    with open(os.path.join(ROOT, "include", "tilescale.h")) as f:
        m = re.search(r'#define TS_VERSION_STRING "([^"]+)"', f.read())
    return m.group(1)


def _tag():
    """python-abi-platform of this interpreter (the extension is built for it)."""
    impl = sys.implementation.name
    ver = "%d%d" % sys.version_info[:2]
    if impl == "cpython":
        soabi = sysconfig.get_config_var("SOABI") or ""
        abi = "cp" + (soabi.split("-")[1] if soabi.startswith("cpython-") else ver)
        interp = "cp" + ver
    else:
        interp, abi = {"pypy": "pp"}.get(impl, impl[:2]) + ver, "none"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (interp, abi, plat)


def _metadata():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: >=3.9\n"
            "Description-Content-Type: text/markdown\n\n%s" % (NAME, _version(), SUMMARY, readme))


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: tilescale tools/pep517_backend.py\nRoot-Is-Purelib: false\n"
            "Tag: %s\n" % _tag())


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


def _settings(config_settings):
    cs = config_settings or {}
    build = cs.get("build-dir") or os.environ.get("TILESCALE_BUILD_DIR") or "build"
    build = build if os.path.isabs(build) else os.path.join(ROOT, build)
    return build, str(cs.get("jobs") or os.cpu_count() or 1)


def _make(build, jobs, targets):
    """Runs the Makefile for this Python; make's output goes to stderr (pip shows it with -v)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    rel = os.path.relpath(build, ROOT)
    if not rel.startswith(".."):  # the names a plain `make` uses, so its build is reused as is
        build, targets = rel, [os.path.relpath(t, ROOT) if os.path.isabs(t) else t for t in targets]
    cmd = ["make", "-C", ROOT, "-j" + jobs, "BUILD=" + build, "PYTHON=" + sys.executable] + targets
    r = subprocess.run(cmd, env=env, stdout=sys.stderr)
    if r.returncode != 0:
        raise RuntimeError("tilescale: `%s` failed (exit %d)" % (" ".join(cmd), r.returncode))


def _ext_suffix():
    return sysconfig.get_config_var("EXT_SUFFIX") or ".so"


class _Wheel:
    """A wheel being written: files with their RECORD rows."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=_date_time())
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append("%s,sha256=%s,%d" % (arcname, digest, len(data)))

    def add_file(self, arcname, path, mode=None):
        with open(path, "rb") as f:
            data = f.read()
        self.add(arcname, data, mode if mode is not None else (0o755 if os.access(path, os.X_OK) else 0o644))

    def close(self, dist_info):
        self.add(dist_info + "/METADATA", _metadata().encode())
        self.add(dist_info + "/WHEEL", _wheel_file().encode())
        self.add(dist_info + "/top_level.txt", "".join(p + "\n" for p in PACKAGES).encode())
        rec = dist_info + "/RECORD"
        info = zipfile.ZipInfo(rec, date_time=_date_time())
        info.external_attr = (0o100644) << 16
        self.zip.writestr(info, "\n".join(self.record + [rec + ",,"]) + "\n", zipfile.ZIP_DEFLATED)
        self.zip.close()


def _date_time():
    import time
    return time.gmtime(max(EPOCH, 315532800))[:6]


def _package_files():
    """(arcname, path) of every file of the packages under python/ (no caches, no C sources)."""
    out = []
    for pkg in PACKAGES:
        top = os.path.join(ROOT, "python", pkg)
        for d, dirs, files in os.walk(top):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for f in sorted(files):
                if f.endswith((".pyc", ".c", ".so", ".o")) or f.startswith("."):
                    continue
                path = os.path.join(d, f)
                out.append((os.path.relpath(path, os.path.join(ROOT, "python")).replace(os.sep, "/"), path))
    return out


def _wheel_name():
    return "%s-%s-%s.whl" % (NAME, _version(), _tag())


# ---- PEP 517 hooks --------------------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write(_wheel_file())
    return _dist_info()


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build, jobs = _settings(config_settings)
    cli = os.path.join(build, "tilescale")
    _make(build, jobs, ["lib", cli])
    lib = os.path.join(build, "libtilescale.so")
    ext = os.path.join(build, "_fastcall" + _ext_suffix())
    if not os.path.isfile(ext):
        print("tilescale: %s was not built (no Python headers for %s?): the wheel's packages take "
              "their Python call path" % (ext, sys.executable), file=sys.stderr)
    os.makedirs(wheel_directory, exist_ok=True)
    name = _wheel_name()
    w = _Wheel(os.path.join(wheel_directory, name))
    for arc, path in _package_files():
        w.add_file(arc, path, 0o644)
    w.add_file("tilescale/libtilescale.so", lib, 0o755)
    if os.path.isfile(ext):
        w.add_file("tilescale/_fastcall" + _ext_suffix(), ext, 0o755)
    w.add_file("%s-%s.data/scripts/tilescale" % (NAME, _version()), cli, 0o755)
    w.close(_dist_info())
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    build, jobs = _settings(config_settings)
    if os.path.abspath(build) != os.path.join(ROOT, "build"):
        raise RuntimeError("tilescale: an editable install uses the checkout's build/ folder "
                           "(python/tilescale finds the library at ../../build)")
    _make(build, jobs, ["lib"])
    os.makedirs(wheel_directory, exist_ok=True)
    name = _wheel_name()
    w = _Wheel(os.path.join(wheel_directory, name))
    w.add("tilescale_editable.pth", (os.path.join(ROOT, "python") + "\n").encode())
    w.close(_dist_info())
    return name


def _sdist_files():
    """The checkout's tracked files (git), else every file outside build folders and caches."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f and os.path.isfile(os.path.join(ROOT, f))]
        if files:
            return sorted(files)
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(ROOT):
        rel = os.path.relpath(d, ROOT)
        dirs[:] = sorted(x for x in dirs if not (x.startswith((".", "build")) or x == "__pycache__"))
        files += [os.path.normpath(os.path.join(rel, n)) for n in sorted(names) if not n.endswith((".o", ".pyc"))]
    return files


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    os.makedirs(sdist_directory, exist_ok=True)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add(arc, data, mode=0o644):
            info = tarfile.TarInfo(base + "/" + arc)
            info.size, info.mode, info.mtime = len(data), mode, EPOCH
            tar.addfile(info, io.BytesIO(data))
        for f in _sdist_files():
            path = os.path.join(ROOT, f)
            with open(path, "rb") as fh:
                add(f.replace(os.sep, "/"), fh.read(), 0o755 if os.access(path, os.X_OK) else 0o644)
        add("PKG-INFO", _metadata().encode())
    return name
