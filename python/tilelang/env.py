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
    """Reads the variables when asked (a script may set them after importing tilelang).  A
    script may also assign them (env.TILELANG_CACHE_DIR = path): that value wins over the
    environment's from then on, in this process only; None goes back to the environment."""

    def __init__(self):
        self._cache_disabled = None  # set by tilelang.disable_cache() / enable_cache()
        self._switches = {}          # USE_DISTRIBUTED / USE_NVSHMEM assigned by a script
        self._forced = {}            # TILELANG_* values assigned by a script (env.X = value)

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

    def _forced_flag(self, name):
        v = self._forced.get(name)
        if v is None:
            return _flag(name)
        return v if isinstance(v, bool) else str(v).strip().lower() in ("1", "true", "yes", "on")

    @property
    def TILELANG_VERBOSE(self):
        return self._forced_flag("TILELANG_VERBOSE")

    @TILELANG_VERBOSE.setter
    def TILELANG_VERBOSE(self, value):
        self._forced["TILELANG_VERBOSE"] = value

    @property
    def TILELANG_PRINT_ON_COMPILATION(self):
        return self._forced_flag("TILELANG_PRINT_ON_COMPILATION")

    @TILELANG_PRINT_ON_COMPILATION.setter
    def TILELANG_PRINT_ON_COMPILATION(self, value):
        self._forced["TILELANG_PRINT_ON_COMPILATION"] = value

    @property
    def TILELANG_CACHE_DIR(self):
        if self._forced.get("TILELANG_CACHE_DIR") is not None:
            return self._forced["TILELANG_CACHE_DIR"]
        return (os.environ.get("TILESCALE_CACHE_DIR") or os.environ.get("TILELANG_CACHE_DIR")
                or os.path.expanduser("~/.cache/tilescale"))

    @TILELANG_CACHE_DIR.setter
    def TILELANG_CACHE_DIR(self, value):
        """env.TILELANG_CACHE_DIR = path: kernels compiled from now on are cached there (None:
        back to the environment's folder)."""
        self._forced["TILELANG_CACHE_DIR"] = None if value is None else os.fspath(value)
        from . import _compiler
        _compiler.reset_context()

    @property
    def TILELANG_TMP_DIR(self):
        """Scratch files: $TILELANG_TMP_DIR, else the cache folder's tmp/."""
        if self._forced.get("TILELANG_TMP_DIR") is not None:
            return self._forced["TILELANG_TMP_DIR"]
        return os.environ.get("TILELANG_TMP_DIR") or os.path.join(self.TILELANG_CACHE_DIR, "tmp")

    @TILELANG_TMP_DIR.setter
    def TILELANG_TMP_DIR(self, value):
        self._forced["TILELANG_TMP_DIR"] = None if value is None else os.fspath(value)

    def is_autotune_cache_disabled(self):
        return _flag("TILELANG_AUTO_TUNING_DISABLE_CACHE")

    def __getattr__(self, name):  # other TILELANG_* / TL_* settings: their raw value
        if name.startswith(("TILELANG_", "TL_")):
            forced = self.__dict__.get("_forced", {}).get(name)
            return forced if forced is not None else os.environ.get(name)
        raise AttributeError(name)

    def __setattr__(self, name, value):  # env.TILELANG_X = v: that value from now on (None: unset)
        if name.startswith(("TILELANG_", "TL_")) and not isinstance(getattr(type(self), name, None), property):
            self._forced[name] = value
            return
        object.__setattr__(self, name, value)


env = Environment()
