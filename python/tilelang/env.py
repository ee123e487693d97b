"""tilelang.env: the TILELANG_* environment settings TileScale honours.

TILELANG_DISABLE_CACHE (or TILESCALE_DISABLE_CACHE) turns the library's disk cache off (and
the autotuner's results cache; TILELANG_AUTO_TUNING_DISABLE_CACHE turns off only that one);
TILELANG_VERBOSE makes the library report progress; TILELANG_PRINT_ON_COMPILATION logs each
compile; TILELANG_EXECUTION_BACKEND and TILELANG_DEFAULT_TARGET give defaults for jit/compile.
The cache folder is libtilescale's: $TILESCALE_CACHE_DIR, else $TILELANG_CACHE_DIR, else
~/.cache/tilescale; autotuning results are JSON files in its autotuner/ folder.
TILELANG_AUTO_TUNING_CPU_COUNTS / _MAX_CPU_COUNT / _CPU_UTILITIES size the autotuner's
compile workers; TILELANG_COMPILE_PROCESSES=0 keeps its compiles in threads of this process
(NVRTC scales past about four threads only in separate processes).

TileScale's distributed switches: TILELANG_USE_DISTRIBUTED=1 (env.USE_DISTRIBUTED; its launch
script sets it) and TILELANG_USE_NVSHMEM=1 (env.USE_NVSHMEM).  In TileScale they make
execution_backend="auto" take the backend that can link NVSHMEM device code.  Here every
backend name compiles with NVRTC, and "auto" is that NVSHMEM-capable path: a kernel that calls
the NVSHMEM family runs on the ipc implementation of those calls, or, on the nvshmem backend,
is linked with NVSHMEM's device library by nvJitLink (src/rt/jit.c).  TILELANG_USE_NVSHMEM=1
selects the nvshmem backend unless TILESCALE_DIST_BACKEND says otherwise (the library reads
both when a context is created).  Scripts may assign both attributes (TileScale's
examples set env.USE_NVSHMEM = False before compiling an intranode kernel); that changes
nothing here, as a kernel's use of NVSHMEM is read from the kernel itself."""
import os

__all__ = ["env", "Environment"]


def _flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class Environment:
    """Reads the variables when asked (a script may set them after importing tilelang)."""

    def __init__(self):
        self._cache_disabled = None  # set by tilelang.disable_cache() / enable_cache()
        self._switches = {}          # USE_DISTRIBUTED / USE_NVSHMEM assigned by a script

    def _switch(self, name, var):
        return self._switches[name] if name in self._switches else _flag(var)

    @property
    def USE_DISTRIBUTED(self):
        return self._switch("USE_DISTRIBUTED", "TILELANG_USE_DISTRIBUTED")

    @USE_DISTRIBUTED.setter
    def USE_DISTRIBUTED(self, value):
        self._switches["USE_DISTRIBUTED"] = bool(value)

    @property
    def USE_NVSHMEM(self):
        return self._switch("USE_NVSHMEM", "TILELANG_USE_NVSHMEM")

    @USE_NVSHMEM.setter
    def USE_NVSHMEM(self, value):
        self._switches["USE_NVSHMEM"] = bool(value)

    def is_cache_disabled(self):
        if self._cache_disabled is not None:
            return self._cache_disabled
        return _flag("TILELANG_DISABLE_CACHE") or _flag("TILESCALE_DISABLE_CACHE")

    def is_cache_enabled(self):
        return not self.is_cache_disabled()

    def disable_cache(self):
        self._cache_disabled = True

    def enable_cache(self):
        self._cache_disabled = False

    def is_light_import(self):
        return True

    @property
    def TILELANG_VERBOSE(self):
        return _flag("TILELANG_VERBOSE")

    @property
    def TILELANG_PRINT_ON_COMPILATION(self):
        return _flag("TILELANG_PRINT_ON_COMPILATION")

    @property
    def TILELANG_CACHE_DIR(self):
        return (os.environ.get("TILESCALE_CACHE_DIR") or os.environ.get("TILELANG_CACHE_DIR")
                or os.path.expanduser("~/.cache/tilescale"))

    def is_autotune_cache_disabled(self):
        return _flag("TILELANG_AUTO_TUNING_DISABLE_CACHE")

    def __getattr__(self, name):  # other TILELANG_* / TL_* settings: their raw value
        if name.startswith(("TILELANG_", "TL_")):
            return os.environ.get(name)
        raise AttributeError(name)


env = Environment()
