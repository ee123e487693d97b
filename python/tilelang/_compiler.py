"""The one place where tilelang talks to libtilescale (through python/tilescale).

A decorated function is known by its file and name (FuncInfo); compiling hands the file, the
name and the call's values as -D parameters to the library, exactly as `tilescale compile -k
NAME -D ...` does (a function nested in another one is handed over as the file's text with its
def hoisted to top level).  Python's own `ast` module is used only to read what the library
needs to be told and cannot report itself: which style a function is (lazy factory, eager body,
prim_func: TileLang's rule, a function that builds a @T.prim_func is a factory), the T.const
names of an eager body and the tensor shapes they are read from (_symbolic), and which
module-level names a @T.prim_func may override.  No kernel body is evaluated here.  Compiles
use one tilescale.Context per thread that compiles (the library is thread-safe per context)."""
import ast
import functools
import hashlib
import logging
import os
import sys
import threading
import time
import types

from . import _host_call, _symbolic
from .env import env as _env
from .language import _Placeholder
from .language.dtypes import dtype as _dtype
from .language.dtypes import dtype_param_text, torch_dtype_name

logger = logging.getLogger("tilelang")

_lock = threading.RLock()
_ctx = None
_local = threading.local()  # .ctx: a worker thread's own context (parallel compilation)
_asts = {}      # (path, mtime_ns, size) -> ast.Module


def _tilescale():
    """python/tilescale, imported on first use (it loads libtilescale.so)."""
    import tilescale
    return tilescale


class TileLangError(Exception):
    """A function the package cannot hand to the compiler (no source file, a closure value
    that is not a plain value, ...)."""


# ---- context and programs --------------------------------------------------------------------
_device = None   # the GPU compiles and launches use: use_device(), else see _context_device


def _context_device():
    """The device a new context uses: the one use_device() chose (a distributed rank's
    LOCAL_RANK), else torch's current device once torch has initialised CUDA (kernels then run
    where the script's tensors are), else 0."""
    if _device is not None:
        return _device
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            dev = torch.cuda.current_device()
            if isinstance(dev, int):
                return dev
    except Exception:  # noqa: BLE001 (a stand-in or broken torch: the default device)
        pass
    return 0


def use_device(device):
    """Compiles and launches from now on use CUDA device `device` (tilelang.distributed: the
    rank's GPU); a shared context made for another device is replaced."""
    global _device, _ctx
    with _lock:
        _device = int(device)
        if _ctx is not None and _ctx.device != _device:
            _ctx = None


def new_context(private_cache_dir=None):
    """A fresh tilescale.Context with the package's cache and verbosity settings (or a private
    cache folder: parallel_compile's temporary one), whose host calls (functions of modules
    the compiler cannot evaluate) run in CPython: _host_call."""
    if private_cache_dir is None:
        ctx = _tilescale().Context(device=_context_device(), cache_dir=_env.TILELANG_CACHE_DIR,
                                   disable_cache=_env.is_cache_disabled(),
                                   verbose=_env.TILELANG_VERBOSE)
    else:
        ctx = _tilescale().Context(device=_context_device(), cache_dir=private_cache_dir,
                                   private_cache=True, verbose=_env.TILELANG_VERBOSE)
    ctx.set_host_call(_host_call.call)
    return ctx


def context():
    """The tilescale.Context compiles of this thread use: a parallel_compile thread's own
    one, else the process-wide one (created on first use, so importing tilelang
    does not touch the driver; tilelang.disable_cache() before the first compile takes
    effect)."""
    global _ctx
    own = getattr(_local, "ctx", None)
    if own is not None and not getattr(own, "in_host_call", 0):
        return own
    with _lock:
        if _ctx is None:
            _ctx = new_context()
        if own is None and not getattr(_ctx, "in_host_call", 0):
            return _ctx
    # A host call (a helper run for the compiler, _host_call.py) compiles a kernel itself: the
    # context compiling on this thread is busy, so this compile gets a context of its own.
    return new_context()


def num_workers(n):
    """Compile threads for n jobs: TILELANG_AUTO_TUNING_CPU_COUNTS, else
    TILELANG_AUTO_TUNING_CPU_UTILITIES (0.9) of the CPUs this process may use, at most
    TILELANG_AUTO_TUNING_MAX_CPU_COUNT and n."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    counts = int(os.environ.get("TILELANG_AUTO_TUNING_CPU_COUNTS", "-1") or -1)
    share = float(os.environ.get("TILELANG_AUTO_TUNING_CPU_UTILITIES", "0.9") or 0.9)
    workers = min(counts, cpus) if counts > 0 else max(1, int(cpus * share))
    cap = int(os.environ.get("TILELANG_AUTO_TUNING_MAX_CPU_COUNT", "-1") or -1)
    if cap > 0:
        workers = min(workers, cap)
    return max(1, min(workers, n))


def _own_context(cache_dir=None):
    _local.ctx = new_context(cache_dir)


def parallel_compile(build, jobs, workers=None):
    """[(build(job), None) or (None, exception)] for every job (see compile_as_completed)."""
    jobs = list(jobs)
    out = [None] * len(jobs)
    for i, kernel, err in compile_as_completed(build, jobs, workers):
        out[i] = (kernel, err)
    return out


def compile_as_completed(build, jobs, workers=None):
    """Yields (index, build(job) or None, None or exception) for every job as it completes.
    The builds run in threads that compile in a context of their own each (the library is
    thread-safe per context; ctypes releases the GIL during a compile); kernels keep their
    context alive after the threads end.  With several jobs, compile worker processes build
    the binaries first (_WorkerPool: NVRTC does not scale past a few threads of one process)
    into the cache folder (a private temporary one when the cache is off), and each thread
    waits for its job's binary and then finds it there."""
    def one(job):
        try:
            return build(job), None
        except Exception as e:  # noqa: BLE001 (the caller decides what a failure means)
            return None, e
    jobs = list(jobs)
    if len(jobs) <= 1:
        for i, j in enumerate(jobs):
            yield (i,) + one(j)
        return
    import concurrent.futures
    n = workers or num_workers(len(jobs))
    pool = _WorkerPool.start(build, jobs, n)

    def run(i, job):
        pool.wait(i)
        return one(job)
    try:
        with concurrent.futures.ThreadPoolExecutor(
                max_workers=n, initializer=_own_context, initargs=(pool.cache_dir,)) as threads:
            futures = {threads.submit(run, i, j): i for i, j in enumerate(jobs)}
            for f in concurrent.futures.as_completed(futures):
                yield (futures[f],) + f.result()
    finally:
        pool.close()


# ---- compile worker processes ---------------------------------------------------------------
_recording = threading.local()  # .requests: a list while build(job) runs only to be recorded


class _Recorded(Exception):
    """Raised by compile_function in place of compiling while a request is being recorded."""


def _record(build, job):
    """The compile request build(job) would make (compile_function's arguments), or None."""
    _recording.requests = []
    try:
        build(job)
    except _Recorded:
        pass
    except Exception:  # noqa: BLE001 (the real compile reports it)
        pass
    finally:
        reqs, _recording.requests = _recording.requests, None
    return reqs[0] if reqs else None


class _WorkerPool:
    """Compile worker processes (`python -m tilescale._compile_worker`) building the binaries
    of recorded requests into a cache folder, in job order, in the background.  wait(i)
    returns once job i's binary is built, failed (the in-process compile then reports the
    error) or was never handed over.  TILELANG_COMPILE_PROCESSES=0 turns the workers off."""

    def __init__(self):
        self.cache_dir, self.tmp, self.done, self.threads = None, None, {}, []
        self.t0, self.failed, self.n, self.lock = time.time(), 0, 0, threading.Lock()

    @classmethod
    def start(cls, build, jobs, workers):
        import queue
        import tempfile
        pool = cls()
        off = os.environ.get("TILELANG_COMPILE_PROCESSES", "1").strip() in ("0", "false", "no", "off")
        if workers < 2 or off:
            return pool
        reqs = [(i, r) for i, r in ((i, _record(build, j)) for i, j in enumerate(jobs)) if r is not None]
        if len(reqs) < 2:
            return pool
        pool.tmp = tempfile.mkdtemp(prefix="tilelang-compile-") if _env.is_cache_disabled() else None
        pool.cache_dir = pool.tmp  # None: the usual cache folder, which the workers share
        todo = queue.Queue()
        for i, r in reqs:
            r["cache_dir"], r["private"] = pool.tmp or _env.TILELANG_CACHE_DIR, pool.tmp is not None
            pool.done[i] = threading.Event()
            todo.put((i, r))
        pool.n = len(reqs)
        pool.threads = [threading.Thread(target=pool._drive, args=(todo,), daemon=True)
                        for _ in range(min(workers, len(reqs)))]
        for t in pool.threads:
            t.start()
        return pool

    def wait(self, i):
        ev = self.done.get(i)
        if ev is not None:
            ev.wait()

    def close(self):
        import shutil
        for t in self.threads:
            t.join()
        if self.threads:
            logger.info("compile workers: %d kernels in %.1f s (%d compiled again in-process)",
                        self.n, time.time() - self.t0, self.failed)
        if self.tmp is not None:  # the kernels hold their binaries in memory
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _drive(self, todo):
        """One worker process: takes requests until none is left; a dead worker releases
        the rest of the queue to the in-process compiles."""
        import json
        import queue
        import subprocess
        root = os.path.dirname(os.path.dirname(os.path.abspath(_tilescale().__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        proc = None
        try:
            proc = subprocess.Popen([sys.executable, "-m", "tilescale._compile_worker"], env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
        except OSError:
            pass
        try:
            while True:
                try:
                    i, r = todo.get_nowait()
                except queue.Empty:
                    break
                answer = None
                if proc is not None:
                    try:
                        proc.stdin.write(json.dumps(r) + "\n")
                        proc.stdin.flush()
                        answer = proc.stdout.readline()
                    except OSError:
                        answer = None
                if not answer or not json.loads(answer).get("ok"):
                    with self.lock:
                        self.failed += 1
                    if not answer:
                        proc = self._stop(proc)
                self.done[i].set()
        finally:
            self._stop(proc)

    @staticmethod
    def _stop(proc):
        if proc is not None:
            for f in (proc.stdin, proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            proc.wait()
        return None


def reset_context():
    """Drops the shared context and its loaded programs (after a cache setting changes)."""
    global _ctx
    with _lock:
        _ctx = None


def _file_key(path):
    st = os.stat(path)
    return (path, st.st_mtime_ns, st.st_size)


def _programs_of(ctx):
    progs = getattr(ctx, "_tilelang_programs", None)
    if progs is None:
        progs = ctx._tilelang_programs = {}
    return progs


def program(path, ctx=None):
    """The file at `path` loaded in ctx (default: context()), cached per file version."""
    ctx = ctx or context()
    key = _file_key(path)
    with _lock:
        progs = _programs_of(ctx)
        p = progs.get(key)
        if p is None:
            p = progs[key] = ctx.load(path)
        return p


def program_source(path, text, ctx=None):
    """Source text (a hoisted nested function) loaded in ctx under the name of its file, so
    that diagnostics and sibling imports refer to that file."""
    ctx = ctx or context()
    key = ("source", path, hashlib.sha256(text.encode()).hexdigest())
    with _lock:
        progs = _programs_of(ctx)
        p = progs.get(key)
        if p is None:
            p = progs[key] = ctx.load_source(path, text)
        return p


def module_ast(path):
    key = _file_key(path)
    with _lock:
        tree = _asts.get(key)
        if tree is None:
            with open(path, encoding="utf-8") as f:
                tree = _asts[key] = ast.parse(f.read(), filename=path)
        return tree


def _source_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines(True)


# ---- what the C front end sees of a function --------------------------------------------------
def _decorator_names(node):
    out = []
    for d in node.decorator_list:
        if isinstance(d, ast.Call):
            d = d.func
        if isinstance(d, ast.Attribute):
            out.append(d.attr)
        elif isinstance(d, ast.Name):
            out.append(d.id)
    return out


def _contains_prim_func(body):
    """Whether a function body builds a @T.prim_func (so that, as TileLang sees it, the
    function returns one: a lazy factory): a nested @T.prim_func, also inside if/for/while/
    with/try blocks and inside plain helper functions defined in the body (blocksparse
    attention's `def kernel_func(...): @T.prim_func ...; return kernel_func(...)`)."""
    for s in body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if "prim_func" in _decorator_names(s) or _contains_prim_func(s.body):
                return True
            continue
        blocks = []
        if isinstance(s, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            blocks = [getattr(s, "body", []), getattr(s, "orelse", [])]
        if isinstance(s, ast.Try):
            blocks += [h.body for h in s.handlers] + [s.finalbody]
        if any(_contains_prim_func(b) for b in blocks):
            return True
    return False


def _module_names(tree):
    """Names the C front end binds at module level: top-level assignments only (it never runs
    top-level control flow such as `if __name__ == "__main__":`)."""
    names = set()

    def targets(t):
        if isinstance(t, ast.Name):
            names.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
    for s in tree.body:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                targets(t)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            targets(s.target)
    return names


def _freeze(v):
    """A hashable stand-in for a plain value (dicts and lists included)."""
    if isinstance(v, dict):
        return ("dict",) + tuple(sorted(((repr(k), _freeze(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__,) + tuple(_freeze(x) for x in v)
    try:
        hash(v)
        return (type(v).__name__, v)
    except TypeError:
        return ("repr", repr(v))


class EagerSignature:
    """What an eager @tilelang.jit body declares: its T.const names (every `T.const("...")`
    of the body), the parameters declared as tensors by annotation, and, per set of known
    argument values, an _symbolic.EagerPlan: every tensor's dims as expressions over the
    symbols, through the body's local names (`A_shape = (M, K)`, `KH = K`, `K // 2`, a
    `[...] if trans_b else [...]` choice on an argument).  T.const values are bound from
    any tensor of the call by _symbolic.solve_sizes, as TileLang binds them."""

    def __init__(self, fdef, globals_=None):
        self.fdef, self.globals = fdef, globals_ if globals_ is not None else {}
        self.consts, self.tensors = [], []
        self._plans = {}
        params = {a.arg for a in fdef.args.args + fdef.args.kwonlyargs}
        for node in ast.walk(fdef):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "const" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                self.consts += [n for n in node.args[0].value.replace(",", " ").split()
                                if n not in self.consts]
        anns = [(a.arg, a.annotation) for a in fdef.args.args + fdef.args.kwonlyargs if a.annotation]
        anns += [(s.target.id, s.annotation) for s in fdef.body
                 if isinstance(s, ast.AnnAssign) and s.value is None and isinstance(s.target, ast.Name)]
        for name, ann in anns:
            if name in params and _symbolic.tensor_annotation(ann) is not None \
                    and name not in self.tensors:
                self.tensors.append(name)

    def plan(self, known):
        """The EagerPlan for these known argument values (cached by value)."""
        key = _freeze(known)
        p = self._plans.get(key)
        if p is None:
            if len(self._plans) > 256:
                self._plans.clear()
            p = self._plans[key] = _symbolic.EagerPlan(self.fdef, known, self.globals)
        return p

    @property
    def matcher(self):
        """{const: (tensor, 'shape'|'stride', i)}: the first dimension that is the bare const
        (with the parameters' defaults)."""
        out = {}
        for c in self.consts:
            for t, kind, i, d in self.plan({}).sources(c):
                if isinstance(d, _symbolic.Sym) and d.name == c:
                    out[c] = (t, kind, i)
                    break
        return out


def _first_line(node):
    """The first line of a statement, its decorators included."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])


def _closure_values(fn):
    """{name: value} of the enclosing-scope variables fn reads (unbound cells left out)."""
    out = {}
    for n, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[n] = cell.cell_contents
        except ValueError:
            pass
    return out


def _find_def(tree, code):
    """(FunctionDef, the top-level statement holding it) of the function compiled to `code`:
    same name, first line (decorators included) at code.co_firstlineno."""
    for top in tree.body:
        for n in ast.walk(top):
            if (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == code.co_name
                    and _first_line(n) == code.co_firstlineno):
                return n, top
    return None, None


def _defines(stmt, name):
    """stmt is, or contains, a def of `name`."""
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in ast.walk(stmt))


class FuncInfo:
    """A function of a kernel file as the compiler knows it: path, name, style ('prim',
    'lazy' or 'eager'), its ast node, and the module-level names of the file.  A function
    defined inside another one (a factory built in main(), AutoTuner.from_kernel over a
    closure) is `nested`: the library only compiles top-level functions, so load() hands it
    the file's text with that def moved to top level, on its own lines (diagnostics keep
    their line numbers; columns lose the def's indentation), and the values the function
    reads from enclosing scopes appended as module-level assignments."""

    def __init__(self, func, what="function"):
        code = func.__code__
        self.func = func
        self.name = code.co_name
        self.qualname = getattr(func, "__qualname__", None) or getattr(code, "co_qualname", self.name)
        path = code.co_filename
        if not path or not os.path.exists(path):
            raise TileLangError(
                "tilelang: %s '%s' has no source file (defined in %s); TileScale compiles "
                "kernels from their .py file" % (what, self.qualname, path))
        self.path = os.path.abspath(path)
        tree = module_ast(self.path)
        self.freevars = tuple(code.co_freevars)
        node, top = _find_def(tree, code)
        self.nested = node is not None and node is not top
        if not self.nested:
            node = None
            for s in tree.body:  # the last top-level def of that name, as the C front end picks
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == self.name:
                    node = s
        if node is None:
            raise TileLangError("tilelang: no function '%s' in %s (the compiler skips defs "
                                "inside top-level `if` blocks)" % (self.qualname, self.path))
        self.node, self.top = node, top
        self.module_names = _module_names(tree)
        self._tree = tree
        if "prim_func" in _decorator_names(node):
            self.style = "prim"
        elif _contains_prim_func(node.body):
            self.style = "lazy"
        else:
            self.style = "eager"
        self._eager = None
        self._cut = None  # stop_after: (def's last line, body's last line, indent, name)

    @property
    def eager(self):
        if self._eager is None:
            self._eager = EagerSignature(self.node, getattr(self.func, "__globals__", None))
        return self._eager

    def closure(self):
        """{name: value} the function reads from enclosing function scopes, now."""
        cells = getattr(self.func, "__closure__", None) or ()
        out = {}
        for name, cell in zip(self.freevars, cells):
            try:
                out[name] = cell.cell_contents
            except ValueError:  # a cell not assigned yet
                continue
        return out

    def stop_after(self, name, lineno):
        """A factory that goes on after building its @T.prim_func `name` (defined at lineno,
        maybe in one branch of an if): a test function that compiles, runs and checks the
        kernel it just defined.  The compiler re-runs the factory only up to the statement
        holding that def: the statements after it are blanked in the text it reads (lines
        kept) and the first becomes `return <name>`."""
        body = self.node.body
        for i, s in enumerate(body):  # the statement holding the def (itself, or an if around it)
            if (_first_line(s) <= lineno <= s.end_lineno and i + 1 < len(body)
                    and not isinstance(body[i + 1], ast.Return) and _defines(s, name)):
                self._cut = (s.end_lineno, body[-1].end_lineno, body[i + 1].col_offset, name)
                return

    def run_statements(self):
        """The body statements the compiler runs: all of them, or those up to stop_after's."""
        body = self.node.body
        return [st for st in body if not self._cut or _first_line(st) <= self._cut[0]]

    def _lines(self):
        lines = _source_lines(self.path)
        if self._cut:
            end, last, col, name = self._cut
            for ln in range(end + 1, last + 1):
                lines[ln - 1] = "\n"
            lines[end] = " " * col + "return %s\n" % name
        return lines

    def load(self, ctx=None, closure=None):
        """The tilescale.Program to compile this function from: the file itself, or for a
        nested function the file's text with the def hoisted (see the class comment)."""
        if not self.nested and not self._cut:
            return program(self.path, ctx)
        if not self.nested:
            return program_source(self.path, "".join(self._lines()), ctx)
        return program_source(self.path, self.hoisted_source(closure or {}), ctx)

    def hoisted_source(self, closure):
        lines = self._lines()
        hoist, assigns = [self.node], []
        self._closure_text(closure, hoist, assigns, set())
        keep = {}
        for n in hoist:
            for ln in range(_first_line(n), n.end_lineno + 1):
                keep[ln] = n.col_offset
        tops = {id(self._top_of(n)) for n in hoist}
        out = list(lines)
        for s in self._tree.body:
            same_name = (isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and any(s.name == n.name for n in hoist) and s not in hoist)
            if id(s) not in tops and not same_name:
                continue
            for ln in range(_first_line(s), s.end_lineno + 1):
                if ln in keep and not same_name:
                    text = out[ln - 1]
                    col = keep[ln]
                    strip = len(text) - len(text.lstrip(" \t"))
                    out[ln - 1] = text[min(col, strip):]
                else:
                    out[ln - 1] = "\n" if out[ln - 1].endswith("\n") else ""
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        return "".join(out) + "".join(assigns)

    def _top_of(self, node):
        for s in self._tree.body:
            if s.lineno <= node.lineno <= s.end_lineno:
                return s
        return None

    def _closure_text(self, closure, hoist, assigns, seen):
        """Module-level text for the closure values: plain values as assignments, modules as
        imports, functions of the same file as hoisted defs (their closures in turn)."""
        for name, value in sorted(closure.items()):
            if name in seen:
                continue
            seen.add(name)
            if isinstance(value, types.ModuleType):
                assigns.append("import %s as %s\n" % (value.__name__, name))
                continue
            fn = getattr(value, "func", None) if not isinstance(value, types.FunctionType) else value
            fn = getattr(fn, "__wrapped__", fn) if fn is not None else None
            if isinstance(fn, types.FunctionType):
                code = fn.__code__
                lam = lambda_text(fn, allow_closure=True)
                if lam is not None:  # a lambda (of any file): its text, after the values it reads
                    self._closure_text(_closure_values(fn), hoist, assigns, seen)
                    assigns.append("%s = %s\n" % (name, lam))
                    continue
                if os.path.abspath(code.co_filename) != self.path:
                    raise TileLangError(
                        "tilelang: '%s' reads '%s', a function of another file (%s), from an "
                        "enclosing scope; import it at module level instead"
                        % (self.qualname, name, code.co_filename))
                node, top = _find_def(self._tree, code)
                if node is None:
                    raise TileLangError("tilelang: cannot find the source of '%s' (read by '%s')"
                                        % (name, self.qualname))
                if node is not top and node not in hoist:
                    hoist.append(node)
                    self._closure_text(_closure_values(fn), hoist, assigns, seen)
                if node.name != name:
                    assigns.append("%s = %s\n" % (name, node.name))
                continue
            try:
                text = param_text(value)
            except TypeError:
                raise TileLangError(
                    "tilelang: '%s' reads '%s' from an enclosing scope, a %s; the compiler can "
                    "be given plain values (int, float, bool, str, None, dtypes, tuples, lists), "
                    "modules and functions of the same file" % (
                        self.qualname, name, type(value).__name__)) from None
            assigns.append("%s = %s\n" % (name, text))

    def __repr__(self):
        return "<%s %s in %s>" % (self.style, self.qualname, self.path)


def referenced_names(code):
    """Global names a function's code (nested functions included) reads."""
    names = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names |= referenced_names(c)
    return names


_IDEMPOTENT_CONVERSIONS = frozenset(("tuple", "list", "int", "float", "bool", "str", "sorted", "set",
                                     "frozenset"))


def assigned_params(fdef, body=None):
    """Parameters the function body (or `body`, some of its statements) itself assigns to
    (nested defs excluded), except the
    default-filling idiom `if P is None: P = ...` (no else): re-run with the value P had when
    the prim_func was built (not None), that branch is skipped, so the value stands; and the
    normalising idiom `P = tuple(P)` (list, int, float, bool, str, sorted, set, frozenset):
    applied again to the value it made, it gives that value back."""
    params = {a.arg for a in fdef.args.args + fdef.args.kwonlyargs}
    found = set()

    def normalised(node):  # the P of `P = conv(P)`, or None
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            return None
        v, p = node.value, node.targets[0].id
        if (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in _IDEMPOTENT_CONVERSIONS
                and len(v.args) == 1 and not v.keywords and isinstance(v.args[0], ast.Name)
                and v.args[0].id == p):
            return p
        return None

    def none_guard(node):  # the P of `if P is None:` without else, or None
        t = node.test if isinstance(node, ast.If) and not node.orelse else None
        if (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and len(t.ops) == 1
                and isinstance(t.ops[0], ast.Is) and isinstance(t.comparators[0], ast.Constant)
                and t.comparators[0].value is None):
            return t.left.id
        return None

    def visit(node, guarded):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if (isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store)
                    and child.id in params and child.id not in guarded):
                found.add(child.id)
            g = none_guard(child) or normalised(child)
            visit(child, guarded | {g} if g else guarded)
    for s in fdef.body if body is None else body:
        visit(ast.Module(body=[s], type_ignores=[]), frozenset())
    return found


# ---- lambdas -> source text ------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _parsed(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return text, ast.parse(text, path)


def lambda_text(fn, allow_closure=False):
    """The source text of a lambda (`(lambda i: i % 64)`), found in its file by line and
    column, or None when it is no lambda, cannot be located, or reads enclosing variables
    (unless allow_closure: the caller passes those on itself)."""
    code = fn.__code__
    if code.co_name != "<lambda>" or (code.co_freevars and not allow_closure):
        return None
    try:
        text, tree = _parsed(os.path.abspath(code.co_filename))
    except (OSError, SyntaxError, ValueError):
        return None
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
    if len(nodes) > 1:  # several on the line: the one whose body holds the code's first position
        cols = [p for p in code.co_positions()  # (the RESUME at (line, line, 0, 0) says nothing)
                if p[0] == code.co_firstlineno and p[2] is not None and (p[2], p[3]) != (0, 0)]
        col = cols[0][2] if cols else -1
        nodes = [n for n in nodes if n.body.col_offset <= col <= (n.body.end_col_offset or col)]
        nodes = [min(nodes, key=lambda n: (n.end_col_offset or 0) - n.col_offset)] if nodes else []
    if len(nodes) != 1:
        return None
    seg = ast.get_source_segment(text, nodes[0])
    return "(%s)" % seg if seg else None


def function_text(fn):
    """A plain straight-line function as lambda text: `def f(i, j): e = i * 32 + j; return
    e // 4, e % 4` gives `(lambda i, j: (lambda e: (e // 4, e % 4))(i * 32 + j))`.  None when
    it is not located, has defaults or *args, reads enclosing variables, or has a statement
    other than single-name assignments and a final return (lambdas: lambda_text)."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_freevars:
        return None
    if code.co_name == "<lambda>":
        return lambda_text(fn)
    try:
        text, tree = _parsed(os.path.abspath(code.co_filename))
    except (OSError, SyntaxError, ValueError):
        return None
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == code.co_name
            and n.lineno <= code.co_firstlineno <= (n.body[0].lineno if n.body else n.lineno)]
    if len(defs) != 1:
        return None
    a = defs[0].args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
        return None
    body = list(defs[0].body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # a docstring
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return None
    expr = ast.unparse(body[-1].value)
    for st in reversed(body[:-1]):
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            return None
        expr = "(lambda %s: %s)(%s)" % (st.targets[0].id, expr, ast.unparse(st.value))
    return "(lambda %s: %s)" % (", ".join(x.arg for x in a.args), expr)


# ---- values -> -D text -----------------------------------------------------------------------
def param_text(value, where=""):
    """The -D text of a Python value (tilescale.param_text plus TileLang's objects)."""
    if isinstance(value, _dtype):
        return dtype_param_text(value)
    if isinstance(value, (tuple, list)):
        items = [param_text(v, where) for v in value]
        if isinstance(value, list):
            return "[%s]" % ", ".join(items)
        return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
    if type(value) is dict:  # a factory's options (target={"kind": "cuda", "arch": "sm_75"})
        return "{%s}" % ", ".join("%s: %s" % (param_text(k, where), param_text(v, where))
                                  for k, v in value.items())
    text = getattr(value, "tilelang_param_text", None)
    if text is not None and not isinstance(value, type):
        return text()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return _tilescale().param_text(value)
    if isinstance(value, os.PathLike):  # a path (T.CUDASourceCodeKernel's source file): its text
        return _tilescale().param_text(os.fspath(value))
    tname = type(value).__module__ + "." + type(value).__name__
    if tname.startswith("torch.") and type(value).__name__ == "dtype":
        return dtype_param_text(torch_dtype_name(value))
    if tname.startswith("numpy.") and getattr(value, "ndim", None) == 0:
        return param_text(value.item(), where)  # numpy scalars
    if hasattr(value, "__index__") and not hasattr(value, "data_ptr"):
        return str(value.__index__())
    lam = lambda_text(value) if isinstance(value, types.FunctionType) else None
    if lam is not None:
        return lam
    if hasattr(value, "data_ptr") and hasattr(value, "shape"):
        raise TypeError("tilelang: %sgot a tensor; a lazy @tilelang.jit factory takes compile-time "
                        "values (ints, floats, dtypes, tuples), the kernel it returns takes tensors"
                        % where)
    raise TypeError("tilelang: %scannot pass %r (%s) to the compiler: only int, float, bool, str, "
                    "None, dtypes, T.* names, tuples, lists, dicts and lambdas that read no enclosing "
                    "variables are kernel parameters"
                    % (where, value, type(value).__name__))


def factory_param_text(name, value, fname, fdef=None):
    """The -D text of factory parameter `name`: param_text's, or, for an object Python keeps (a
    pytest fixture a test function takes) in a parameter the body of `fdef` (the factory's
    ast.FunctionDef) never names, a stand-in (_tilescale.host_object: any use would be the
    compiler's error naming it).  A parameter the body uses gets param_text's refusal."""
    where = "parameter '%s' of '%s': " % (name, fname)
    try:
        return param_text(value, where)
    except TypeError:
        if (fdef is None or name not in unreferenced_params(fdef)
                or (hasattr(value, "data_ptr") and hasattr(value, "shape"))):
            raise
        t = type(value)
        return "_tilescale.host_object(%r, %r)" % (name, t.__module__ + "." + t.__qualname__)


def unreferenced_params(fdef):
    """The parameters of function `fdef` (an ast.FunctionDef) its body never names."""
    named = {n.id for st in fdef.body for n in ast.walk(st) if isinstance(n, ast.Name)}
    return {a.arg for a in fdef.args.args + fdef.args.kwonlyargs} - named


def params_text(values, fname, fdef=None):
    DType = _tilescale().DType
    return {k: DType(factory_param_text(k, v, fname, fdef)) for k, v in values.items()}


# ---- options ---------------------------------------------------------------------------------
_BACKENDS = {None: "nvrtc", "auto": "nvrtc", "tvm_ffi": "nvrtc", "cython": "nvrtc",
             "nvrtc": "nvrtc", "ctypes": "nvrtc", "dlpack": "nvrtc", "cutedsl": "nvrtc",
             "nvcc": "nvcc"}


def compiler_for(execution_backend):
    eb = execution_backend if execution_backend is not None else (
        os.environ.get("TILELANG_EXECUTION_BACKEND") or None)
    if eb not in _BACKENDS:
        raise ValueError("tilelang: execution_backend=%r is not supported by TileScale (use one of "
                         "'auto', 'tvm_ffi', 'cython', 'nvrtc', 'cutedsl': all compile with NVRTC; "
                         "'nvcc' for nvcc)" % (eb,))
    return _BACKENDS[eb]


def arch_for(target):
    """The library's arch string for a TileLang target (None: the device's, else sm_90a)."""
    if target is None:
        target = os.environ.get("TILELANG_DEFAULT_TARGET") or "auto"
    if isinstance(target, dict):  # TileLang's {"kind": "cuda", "arch": "sm_90a"}
        if str(target.get("kind", "cuda")) not in ("cuda", "cutedsl", "nvidia"):
            raise ValueError("tilelang: target=%r is not supported by TileScale (CUDA only)" % (target,))
        arch = target.get("arch")
        return str(arch) if arch else None
    t = str(getattr(target, "arch", None) or target).strip()
    if t in ("auto", "cuda", "nvidia"):
        return None
    if t.startswith("sm_"):
        return t
    if t.startswith("cuda"):
        for part in t.split():
            if part.startswith(("-arch=", "--arch=")):
                return part.split("=", 1)[1]
        return None
    raise ValueError("tilelang: target=%r is not supported by TileScale (CUDA only: 'auto', "
                     "'cuda', 'cuda -arch=sm_90a' or 'sm_90a')" % (target,))


def compile_function(info, params, *, closure=None, target=None, execution_backend=None,
                     verbose=False, no_jit=False, pass_configs=None):
    """Compiles `info` with -D params {name: python value} (and, for a nested function, the
    values it reads from enclosing scopes) and pass_configs {key: value} over the decorator's;
    returns a tilescale.Kernel."""
    pcs = {str(getattr(k, "value", k)): str(getattr(v, "value", v)) for k, v in (pass_configs or {}).items()}
    arch = arch_for(target)
    compiler = compiler_for(execution_backend)
    dparams = params_text(params, info.name, getattr(info, "node", None))
    requests = getattr(_recording, "requests", None)
    if requests is not None:  # _WorkerPool.start: what to compile, not a compile
        requests.append({"path": info.path, "func": info.name, "arch": arch, "compiler": compiler,
                         "source": info.hoisted_source(closure or {}) if info.nested else None,
                         "params": {k: str(v) for k, v in dparams.items()}, "pass_configs": pcs,
                         "module_path": _tilescale().user_module_path()})
        raise _Recorded()
    prog = info.load(context(), closure)
    t0 = time.time()
    k = prog.compile(info.name, arch, params=dparams, compiler=compiler, no_jit=no_jit, pass_configs=pcs)
    if verbose or _env.TILELANG_PRINT_ON_COMPILATION:
        print("tilelang: compiled %s:%s(%s) in %.2f s%s" % (
            os.path.basename(info.path), info.name,
            ", ".join("%s=%s" % kv for kv in dparams.items()), time.time() - t0,
            " (cached)" if k.from_cache else ""), file=sys.stderr)
    return k
