"""Where libtilescale and the C call path (_fastcall.c, a CPython extension) are, and the base
classes of compiled-kernel objects.  Nothing here loads the library, so `import tilelang` can
choose its classes' bases without loading libtilescale (that waits for the first compile):
tilelang loads this file by itself when tilescale is not imported yet.

The library: $TILESCALE_LIB, else the copy an installed wheel carries beside this file, else
../../build/libtilescale.so from here (a source checkout), else the dynamic loader's search.
The extension: beside the first library file that exists, else beside this file; it takes the
library's functions as addresses (see _callpath.init), so it never loads a second copy.
$TILESCALE_FASTCALL=0 leaves it out: every call then takes the Python path."""
import importlib.machinery
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXT_NAME = __name__.rpartition(".")[0] + "._fastcall" if "." in __name__ else "tilescale._fastcall"


def library_candidates():
    env = os.environ.get("TILESCALE_LIB")
    if env:
        return [env]  # explicit choice: no silent fallback to another build
    return [os.path.join(HERE, "libtilescale.so"),
            os.path.normpath(os.path.join(HERE, "..", "..", "build", "libtilescale.so")),
            "libtilescale.so"]


def _load_extension():
    if os.environ.get("TILESCALE_FASTCALL", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    if EXT_NAME in sys.modules:
        return sys.modules[EXT_NAME]
    dirs = [os.path.dirname(os.path.abspath(p)) for p in library_candidates()
            if os.sep in p and os.path.isfile(p)][:1]
    for d in dirs + [HERE]:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(d, "_fastcall" + suffix)
            if not os.path.isfile(path):
                continue
            loader = importlib.machinery.ExtensionFileLoader(EXT_NAME, path)
            spec = importlib.util.spec_from_file_location(EXT_NAME, path, loader=loader)
            try:
                mod = importlib.util.module_from_spec(spec)
                loader.exec_module(mod)
            except ImportError:
                continue  # built for another interpreter: the next one, else the Python path
            sys.modules[EXT_NAME] = mod
            return mod
    return None


class PyLauncher:
    """Launcher without the extension: every call is the object's _call_py."""

    _fast = False

    def __call__(self, *args, **kwargs):
        return self._call_py(*args, **kwargs)

    def _launch_setup(self, *args):
        return False


class PyDispatcher:
    """Dispatcher without the extension: every call is the object's _call_py."""

    _fast_entries = 0

    def __call__(self, *args, **kwargs):
        return self._call_py(*args, **kwargs)

    def _fast_remember(self, args, launcher, where):
        return False

    def _fast_forget(self):
        pass


fastcall = _load_extension()
Launcher = fastcall.Launcher if fastcall is not None else PyLauncher
Dispatcher = fastcall.Dispatcher if fastcall is not None else PyDispatcher
