"""tilelang.tools.cuda.iket — the host side of the IKET in-kernel event tracer.

Inside a kernel, iket.range / iket.mark / iket.payload compile to nothing in TileScale (the
compiler's prelude module of the same name): they only record trace events and never change
what a kernel computes.  So no trace is ever written here: a session records nothing,
event_table() is empty and trace_files() finds only what an earlier IKET run left.  The
session still owns its output folder, so a script's own exports (kernel sources) land where
it expects them."""
import contextlib
import os
from pathlib import Path

_DEFAULT_DIR = "/tmp/tilelang_iket"
_state = {"dir": None, "payloads": False}


@contextlib.contextmanager
def session(output_dir=None, runtime_payloads=False, **_ignored):
    """A tracing session: sets the output folder (created) for output_path(); records nothing."""
    saved = dict(_state)
    _state["dir"] = str(output_dir or os.environ.get("TL_IKET_OUTPUT_DIR", _DEFAULT_DIR))
    _state["payloads"] = bool(runtime_payloads)
    Path(_state["dir"]).mkdir(parents=True, exist_ok=True)
    try:
        yield
    finally:
        _state.update(saved)


def output_dir():
    """The current session's output folder (the default one outside a session)."""
    return _state["dir"] or os.environ.get("TL_IKET_OUTPUT_DIR", _DEFAULT_DIR)


def output_path(name, directory=None):
    """Path of `name` in `directory` (or the session's folder), the folder created."""
    d = Path(directory or output_dir())
    d.mkdir(parents=True, exist_ok=True)
    return d / name


def event_table():
    """Events registered by compiled kernels: none, markers compile to nothing here."""
    return {}


def runtime_payloads_enabled():
    return _state["payloads"]


def trace_files(directory=None):
    """Trace files (*.json) in the folder: TileScale writes none itself."""
    d = Path(directory or output_dir())
    return sorted(d.glob("*trace*.json")) if d.is_dir() else []


def range(name, *args, **kwargs):  # noqa: A001 - IKET's name
    """Kernel-only marker range; on the host it is an empty context."""
    return contextlib.nullcontext()


def mark(name, *args, **kwargs):
    return None


def payload(value, dtype=None):
    return None
