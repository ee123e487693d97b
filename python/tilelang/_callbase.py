"""The base classes of JITImpl (Dispatcher) and JITKernel (Launcher): the C call path's
(python/tilescale/_fastcall.c) when it is built, else their Python stand-ins.  They come from
tilescale/_locate.py, loaded here without importing tilescale, whose import loads libtilescale:
that waits for the first compile."""
import importlib.util
import os
import sys


def _locate():
    name = "tilescale._locate"
    if name in sys.modules:
        return sys.modules[name]
    if "tilescale" in sys.modules:
        from tilescale import _locate as mod
        return mod
    spec = importlib.util.find_spec("tilescale")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "_locate.py")
    if not os.path.isfile(path):
        return None
    mspec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[name] = mod
    try:
        mspec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


class _PyLauncher:
    def __call__(self, *args, **kwargs):
        return self._call_py(*args, **kwargs)

    def _launch_setup(self, *args):
        return False


class _PyDispatcher:
    def __call__(self, *args, **kwargs):
        return self._call_py(*args, **kwargs)

    def _fast_remember(self, args, launcher, where):
        return False

    def _fast_forget(self):
        pass


_mod = _locate()
Launcher = _mod.Launcher if _mod is not None else _PyLauncher
Dispatcher = _mod.Dispatcher if _mod is not None else _PyDispatcher
