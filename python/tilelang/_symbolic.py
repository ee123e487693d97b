"""Symbolic sizes: how the package binds T.const (and T.dynamic) names to the call's tensors.

An eager @tilelang.jit body declares its sizes as symbols (`M, K = T.const("M, K")`) and its
tensors by annotation, often through local names and arithmetic: `A_shape = (M, K)`,
`kernel: T.Tensor((KH, KW, C, F))` after `KH = K`, `B: T.Tensor((K // 2, N))`,
`[batch, 1, heads // groups, dim]`.  TileLang binds each symbol from the tensors' shapes; so
does this module, without running the body: `EagerPlan` reads the body's straight-line
statements with Python's `ast` (assignments, `if` on known values, tensor annotations,
T.empty) and evaluates them over plain values (the call's non-tensor arguments, defaults,
module globals) and symbolic sizes (`Expr`); anything it cannot follow is UNKNOWN and simply
gives no equation.  `solve_sizes` then turns the equations `dim expr == actual size` into
values: bare names first, then any equation left with one unknown (affine forms, floordiv,
ceildiv; ambiguous ones take the smallest value the other equations agree with).

The same solver binds the dynamic variables of a compiled kernel's parameters (read from
the library's IR signature) to allocate outputs whose shapes are dynamic."""
import ast
import builtins
import operator

__all__ = ["UNKNOWN", "Sym", "Expr", "free_syms", "evaluate", "solve", "solve_sizes",
           "EagerPlan", "parse_expr"]


class _Unknown:
    """A value the package cannot know before compiling (a buffer, a call it does not run)."""

    def __repr__(self):
        return "UNKNOWN"

    def __bool__(self):
        raise _Opaque()


UNKNOWN = _Unknown()


class _Opaque(Exception):
    """Raised inside evaluation when a value depends on something unknown."""


def _binop(op):
    def fwd(a, b):
        return Expr.make(op, a, b)

    def rev(a, b):
        return Expr.make(op, b, a)
    return fwd, rev


class Expr:
    """A size expression over symbols: ('sym', name) leaves, integer constants, and the
    integer operators kernels use for sizes.  Python operators build new nodes."""

    __slots__ = ("op", "args")

    def __init__(self, op, *args):
        self.op, self.args = op, args

    @staticmethod
    def make(op, a, b):
        if a is UNKNOWN or b is UNKNOWN or not _is_size(a) or not _is_size(b):
            return UNKNOWN
        if not isinstance(a, Expr) and not isinstance(b, Expr):
            return _APPLY[op](a, b)
        return Expr(op, a, b)

    __add__, __radd__ = _binop("+")
    __sub__, __rsub__ = _binop("-")
    __mul__, __rmul__ = _binop("*")
    __floordiv__, __rfloordiv__ = _binop("//")
    __mod__, __rmod__ = _binop("%")

    def __neg__(self):
        return Expr("neg", self)

    def __pos__(self):
        return self

    def __truediv__(self, other):
        return UNKNOWN

    __rtruediv__ = __pow__ = __rpow__ = __truediv__

    def __eq__(self, other):  # symbolic comparisons are not decidable here
        return UNKNOWN

    __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __hash__(self):
        return hash((self.op, self.args))

    def __bool__(self):
        raise _Opaque()

    def __index__(self):
        raise _Opaque()

    def __repr__(self):
        if self.op == "sym":
            return self.args[0]
        if self.op == "neg":
            return "-(%r)" % (self.args[0],)
        if self.op in _APPLY and self.op not in ("ceildiv", "min", "max"):
            return "(%r %s %r)" % (self.args[0], self.op, self.args[1])
        return "%s(%s)" % (self.op, ", ".join(map(repr, self.args)))


class Sym(Expr):
    """A named size: kind 'const' (T.const: a compile-time value) or 'dynamic' (T.dynamic)."""

    __slots__ = ("kind",)

    def __init__(self, name, kind="const"):
        super().__init__("sym", name)
        self.kind = kind

    @property
    def name(self):
        return self.args[0]


def _ceildiv(a, b):
    return -(-a // b)


_APPLY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
          "%": operator.mod, "ceildiv": _ceildiv, "min": min, "max": max}


def _is_size(v):
    return isinstance(v, Expr) or (isinstance(v, int) and not isinstance(v, bool))


def sym_call(op, a, b):
    """ceildiv/min/max over sizes that may be symbolic."""
    if a is UNKNOWN or b is UNKNOWN or not _is_size(a) or not _is_size(b):
        return UNKNOWN
    if isinstance(a, Expr) or isinstance(b, Expr):
        return Expr(op, a, b)
    return _APPLY[op](a, b)


def free_syms(e):
    """Names of the symbols in e."""
    if isinstance(e, Sym):
        return {e.name}
    if isinstance(e, Expr):
        out = set()
        for a in e.args:
            out |= free_syms(a)
        return out
    return set()


def evaluate(e, env):
    """e with env's values substituted: an int when every symbol is bound, else an Expr."""
    if isinstance(e, Sym):
        return env.get(e.name, e)
    if not isinstance(e, Expr):
        return e
    if e.op == "neg":
        a = evaluate(e.args[0], env)
        return -a if not isinstance(a, Expr) else Expr("neg", a)
    a, b = evaluate(e.args[0], env), evaluate(e.args[1], env)
    if isinstance(a, Expr) or isinstance(b, Expr):
        return Expr(e.op, a, b)
    if e.op in ("//", "%", "ceildiv") and b == 0:
        return Expr(e.op, a, b)
    return _APPLY[e.op](a, b)


_MAX_CANDIDATES = 4096


def solve(e, value):
    """The values of the one unknown symbol of e that make e == value, smallest (and exact
    divisions) first; [] when there is none or e is not invertible (mod, min, max, two
    occurrences of the symbol)."""
    if isinstance(e, Sym):
        return [value]
    if not isinstance(e, Expr):
        return []
    if e.op == "neg":
        return solve(e.args[0], -value)
    a, b = e.args
    a_sym, b_sym = isinstance(a, Expr), isinstance(b, Expr)
    if a_sym and b_sym:
        return []  # the symbol on both sides (or two unknowns): not solved here
    if e.op == "+":
        return solve(a, value - b) if a_sym else solve(b, value - a)
    if e.op == "-":
        return solve(a, value + b) if a_sym else solve(b, a - value)
    if e.op == "*":
        k, x = (b, a) if a_sym else (a, b)
        if k == 0:
            return []
        return solve(x, value // k) if value % k == 0 else []
    if e.op in ("//", "ceildiv") and a_sym and isinstance(b, int) and b > 0:
        if e.op == "//":
            lo, hi = value * b, value * b + b - 1       # x // b == value
        else:
            lo, hi = (value - 1) * b + 1, value * b     # ceildiv(x, b) == value
        exact = value * b
        order = [exact] + [x for x in range(lo, min(hi, lo + _MAX_CANDIDATES) + 1) if x != exact]
        out = []
        for x in order:
            out += solve(a, x)
        return out
    return []


def _equal(x, v):
    return not isinstance(x, Expr) and x == v


def solve_sizes(equations, unknowns, known=None):
    """Binds the names in `unknowns` from equations [(expr, actual int)]: {name: int}.
    Equations that are a bare name come first (in any order of the tensors); then one
    equation with a single unknown at a time, its candidate checked against every other
    equation it alone decides.  Names left unbound are simply absent."""
    env = dict(known or {})
    unknowns = set(unknowns)
    pending = [(e, v) for e, v in equations if isinstance(e, Expr)]
    while True:
        progress = False
        for e, v in pending:  # direct uses: `M` as a dimension
            if isinstance(e, Sym) and e.name in unknowns and e.name not in env:
                env[e.name] = v
                progress = True
        if progress:
            continue
        for e, v in pending:
            r = evaluate(e, env)
            if not isinstance(r, Expr):
                continue
            names = free_syms(r)
            if len(names) != 1 or not names <= unknowns:
                continue
            (name,) = names
            cands = solve(r, v)
            if not cands:
                continue
            others = [(e2, v2) for e2, v2 in pending if e2 is not e
                      and free_syms(evaluate(e2, env)) == {name}]
            pick = next((c for c in cands if all(
                _equal(evaluate(e2, dict(env, **{name: c})), v2) for e2, v2 in others)), cands[0])
            env[name] = pick
            progress = True
            break
        if not progress:
            return {k: env[k] for k in unknowns if k in env}


# ---- reading an eager body ----------------------------------------------------------------
_TENSOR_KINDS = {"Tensor", "Buffer", "StridedTensor", "FragmentBuffer", "SharedBuffer",
                 "LocalBuffer"}
_SAFE_BUILTINS = {"min", "max", "abs", "int", "len", "sum", "tuple", "list", "range", "float",
                  "bool", "round", "pow", "divmod", "sorted", "reversed", "zip", "enumerate",
                  "any", "all", "str", "isinstance", "dict"}
# Host modules whose functions are pure and may run on known plain values.
_PURE_MODULES = ("math", "tilelang.math", "tilelang")


def _lang():
    from . import language
    return language


class _Evaluator:
    """Evaluates expressions of an eager body over plain values and symbolic sizes."""

    def __init__(self, env, globals_):
        self.env, self.globals = env, globals_
        lang = _lang()
        self.specials = {lang.const: "const", lang.dynamic: "dynamic",
                         lang.symbolic: "dynamic", lang.ceildiv: "ceildiv",
                         lang.floordiv: "//", lang.floormod: "%", lang.max: "max",
                         lang.min: "min"}

    def lookup(self, name):
        if name in self.env:
            return self.env[name]
        if name in self.globals:
            return self.globals[name]
        b = getattr(builtins, name, UNKNOWN)
        return b

    def eval(self, node):
        try:
            return self._eval(node)
        except _Opaque:
            return UNKNOWN
        except Exception:  # noqa: BLE001 (host code the package cannot follow)
            return UNKNOWN

    def _eval(self, n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            return self.lookup(n.id)
        if isinstance(n, (ast.Tuple, ast.List)):
            items = []
            for e in n.elts:
                if isinstance(e, ast.Starred):
                    v = self._eval(e.value)
                    if v is UNKNOWN:
                        return UNKNOWN
                    items += list(v)
                else:
                    items.append(self._eval(e))
            return tuple(items) if isinstance(n, ast.Tuple) else items
        if isinstance(n, ast.BinOp):
            a, b = self._eval(n.left), self._eval(n.right)
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            return _BINOPS[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp):
            a = self._eval(n.operand)
            if a is UNKNOWN:
                return UNKNOWN
            if isinstance(n.op, ast.Not):
                return not a
            return {ast.USub: operator.neg, ast.UAdd: operator.pos,
                    ast.Invert: operator.invert}[type(n.op)](a)
        if isinstance(n, ast.BoolOp):
            v = None
            for e in n.values:
                v = self._eval(e)
                if v is UNKNOWN:
                    return UNKNOWN
                if isinstance(n.op, ast.And) and not v:
                    return v
                if isinstance(n.op, ast.Or) and v:
                    return v
            return v
        if isinstance(n, ast.Compare):
            left = self._eval(n.left)
            for op, right in zip(n.ops, n.comparators):
                right = self._eval(right)
                if left is UNKNOWN or right is UNKNOWN:
                    return UNKNOWN
                if isinstance(left, Expr) or isinstance(right, Expr):
                    if not isinstance(op, (ast.Is, ast.IsNot)):
                        return UNKNOWN
                    if (left is right) != isinstance(op, ast.Is):
                        return False
                elif not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(n, ast.IfExp):
            t = self._eval(n.test)
            if t is UNKNOWN or isinstance(t, Expr):
                return UNKNOWN
            return self._eval(n.body if t else n.orelse)
        if isinstance(n, ast.Subscript):
            v = self._eval(n.value)
            sl = _slice(n)
            if isinstance(sl, ast.Slice):
                parts = [self._eval(p) if p is not None else None
                         for p in (sl.lower, sl.upper, sl.step)]
                if v is UNKNOWN or any(p is UNKNOWN or isinstance(p, Expr) for p in parts):
                    return UNKNOWN
                return v[slice(*parts)]
            i = self._eval(sl)
            if v is UNKNOWN or i is UNKNOWN or not isinstance(v, (tuple, list, dict, str)):
                return UNKNOWN
            return v[i]
        if isinstance(n, ast.Attribute):
            v = self._eval(n.value)
            if v is UNKNOWN or isinstance(v, Expr):
                return UNKNOWN
            return getattr(v, n.attr)
        if isinstance(n, ast.Call):
            return self._call(n)
        if isinstance(n, (ast.ListComp, ast.GeneratorExp)) and len(n.generators) == 1:
            g = n.generators[0]
            it = self._eval(g.iter)
            if it is UNKNOWN or not isinstance(g.target, ast.Name) or g.is_async:
                return UNKNOWN
            out, saved = [], self.env.get(g.target.id, _MISSING)
            try:
                for x in it:
                    self.env[g.target.id] = x
                    if all(self._eval(c) for c in g.ifs):
                        out.append(self._eval(n.elt))
            finally:
                if saved is _MISSING:
                    self.env.pop(g.target.id, None)
                else:
                    self.env[g.target.id] = saved
            return out if isinstance(n, ast.ListComp) else iter(out)
        return UNKNOWN

    def _call(self, n):
        f = self._eval(n.func)
        if f is UNKNOWN:
            return UNKNOWN
        args = [self._eval(a) for a in n.args if not isinstance(a, ast.Starred)]
        if any(isinstance(a, ast.Starred) for a in n.args):
            return UNKNOWN
        kw = {k.arg: self._eval(k.value) for k in n.keywords if k.arg}
        try:
            special = self.specials.get(f)
        except TypeError:
            special = None
        if special in ("const", "dynamic"):
            spec = args[0] if args else kw.get("name")
            if not isinstance(spec, str):
                return UNKNOWN
            syms = tuple(Sym(s, special) for s in spec.replace(",", " ").split())
            return syms[0] if len(syms) == 1 else syms
        if any(a is UNKNOWN for a in args) or any(v is UNKNOWN for v in kw.values()):
            return UNKNOWN
        if special is not None:
            if len(args) != 2 or kw:
                return UNKNOWN
            return sym_call(special, *args)
        if any(isinstance(a, Expr) for a in args) or any(isinstance(v, Expr) for v in kw.values()):
            if f in (min, max) and len(args) == 2 and not kw:
                return sym_call(f.__name__, *args)
            if f in (tuple, list) and len(args) == 1:
                return f(args[0])
            if f is len and len(args) == 1 and isinstance(args[0], (tuple, list)):
                return len(args[0])
            if f is int and len(args) == 1:
                return args[0]
            return UNKNOWN
        if f is getattr(builtins, getattr(f, "__name__", ""), None) and f.__name__ in _SAFE_BUILTINS:
            return f(*args, **kw)
        mod = getattr(f, "__module__", None) or ""
        if mod in _PURE_MODULES or (mod.startswith("tilelang.") and getattr(f, "__name__", "") in (
                "cdiv", "ceildiv", "next_power_of_2")):
            return f(*args, **kw)
        if isinstance(f, type) and f.__module__.startswith("tilelang.language"):
            return f(*args, **kw)  # T.dtype("float16")
        return UNKNOWN


_MISSING = object()
_INDEX = getattr(ast, "Index", None)  # Python 3.8 wraps subscripts in ast.Index


def _slice(node):
    return node.slice.value if _INDEX is not None and isinstance(node.slice, _INDEX) else node.slice

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Div: operator.truediv,
           ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b}


def _tensor_parts(node):
    """(kind, positional nodes, keyword nodes) of a tensor annotation `T.Tensor((M, K), dt)`,
    `T.Tensor[(M, K), dt]` or `T.StridedTensor((M, K), (sM, 1), dt)`, else None."""
    if isinstance(node, ast.Call):
        f, args = node.func, list(node.args)
        kw = {k.arg: k.value for k in node.keywords}
    elif isinstance(node, ast.Subscript):
        f = node.value
        sl = _slice(node)
        args, kw = (list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]), {}
    else:
        return None
    kind = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return (kind, args, kw) if kind in _TENSOR_KINDS else None


def tensor_annotation(node):
    """(shape node, strides node or None) of a tensor annotation (_tensor_parts), else None."""
    parts = _tensor_parts(node)
    if parts is None:
        return None
    kind, args, kw = parts
    shape = args[0] if args else kw.get("shape")
    strides = (args[1] if len(args) > 1 else kw.get("strides")) if kind == "StridedTensor" else None
    return shape, strides


_PACKED4 = ("int4", "uint4", "float4_e2m1fn")


def packed4_annotation(node):
    """Whether tensor annotation `node` declares a 4-bit element type (T.float4_e2m1fn,
    "int4", ...): torch holds such a tensor as its bytes, the last dimension halved."""
    parts = _tensor_parts(node)
    if parts is None:
        return False
    kind, args, kw = parts
    pos = 2 if kind == "StridedTensor" else 1
    dt = args[pos] if len(args) > pos else kw.get("dtype")
    name = dt.attr if isinstance(dt, ast.Attribute) else dt.value if isinstance(dt, ast.Constant) else None
    return name in _PACKED4


def _is_call_to(node, attr):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == attr)


def _assigned_names(stmts):
    out = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


def _dims(v):
    """A shape value as a list of dims (a bare size is a 1-d shape), or None."""
    if isinstance(v, (tuple, list)):
        return list(v)
    if _is_size(v):
        return [v]
    return None


def packed_sizes(shape, strides):
    """The logical shape and strides (in elements) of a 4-bit tensor given as its bytes: two
    elements a byte along the last dimension."""
    return (tuple(shape[:-1]) + (2 * shape[-1],),
            tuple(2 * s for s in strides[:-1]) + tuple(strides[-1:]))


class EagerPlan:
    """What an eager body declares, evaluated for one set of known values: the symbols
    (T.const and T.dynamic names), the shape (and stride) of every tensor parameter, and the
    shape of every T.empty output, each dim an int, an Expr over the symbols, or UNKNOWN."""

    def __init__(self, fdef, known, globals_):
        self.consts, self.dynamic = [], []
        self.tensors = {}   # param -> (dims, strides or None)
        self.packed = set()  # params of a 4-bit element type (packed_sizes)
        self.outputs = {}   # local name -> dims
        params = [a.arg for a in fdef.args.args + fdef.args.kwonlyargs]
        env = {p: UNKNOWN for p in params}
        env.update({k: v for k, v in known.items()})
        self._ev = _Evaluator(env, globals_)
        self._params = set(params)
        self._run(fdef.body)
        for a in fdef.args.args + fdef.args.kwonlyargs:  # annotations in the signature
            if a.annotation is not None and a.arg not in self.tensors:
                self._declare(a.arg, a.annotation)
        for v in list(self._ev.env.values()):
            for s in (v if isinstance(v, tuple) else (v,)):
                if isinstance(s, Sym):
                    lst = self.consts if s.kind == "const" else self.dynamic
                    if s.name not in lst:
                        lst.append(s.name)

    def _declare(self, name, ann):
        t = tensor_annotation(ann)
        if t is None:
            return
        shape = _dims(self._ev.eval(t[0])) if t[0] is not None else None
        strides = _dims(self._ev.eval(t[1])) if t[1] is not None else None
        self.tensors[name] = (shape, strides)
        if packed4_annotation(ann):
            self.packed.add(name)

    def _note_syms(self, value):
        for s in (value if isinstance(value, tuple) else (value,)):
            if isinstance(s, Sym):
                lst = self.consts if s.kind == "const" else self.dynamic
                if s.name not in lst:
                    lst.append(s.name)

    def _assign(self, target, value):
        if isinstance(target, ast.Name):
            self._ev.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            vals = list(value) if isinstance(value, (tuple, list)) else None
            if vals is None or len(vals) != len(target.elts) or any(
                    isinstance(e, ast.Starred) for e in target.elts):
                for e in target.elts:
                    self._assign(e, UNKNOWN)
            else:
                for e, v in zip(target.elts, vals):
                    self._assign(e, v)
        else:
            for n in ast.walk(target):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    self._ev.env[n.id] = UNKNOWN

    def _run(self, body):
        ev = self._ev
        for s in body:
            if isinstance(s, ast.Assign):
                if _is_call_to(s.value, "empty") and len(s.targets) == 1 and isinstance(
                        s.targets[0], ast.Name) and s.value.args:
                    self.outputs[s.targets[0].id] = _dims(ev.eval(s.value.args[0]))
                    ev.env[s.targets[0].id] = UNKNOWN
                    continue
                value = ev.eval(s.value)
                self._note_syms(value)
                for t in s.targets:
                    self._assign(t, value)
            elif isinstance(s, ast.AnnAssign):
                if s.value is None:
                    if isinstance(s.target, ast.Name) and s.target.id in self._params:
                        self._declare(s.target.id, s.annotation)
                else:
                    self._assign(s.target, ev.eval(s.value))
            elif isinstance(s, ast.AugAssign):
                if isinstance(s.target, ast.Name):
                    cur = ev.lookup(s.target.id)
                    rhs = ev.eval(s.value)
                    ev.env[s.target.id] = (UNKNOWN if cur is UNKNOWN or rhs is UNKNOWN else
                                           _safe(lambda: _BINOPS[type(s.op)](cur, rhs)))
            elif isinstance(s, ast.If):
                t = ev.eval(s.test)
                if t is UNKNOWN or isinstance(t, Expr):
                    for n in _assigned_names(s.body + s.orelse):
                        ev.env[n] = UNKNOWN
                else:
                    self._run(s.body if t else s.orelse)
            elif isinstance(s, (ast.Expr, ast.Assert, ast.Pass, ast.Import, ast.ImportFrom,
                                ast.FunctionDef, ast.AsyncFunctionDef, ast.Return)):
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    ev.env[s.name] = UNKNOWN
                continue
            else:  # loops, with T.Kernel(...), try: what they bind is not followed
                for n in _assigned_names([s]):
                    ev.env[n] = UNKNOWN

    def equations(self, tensors):
        """[(dim expr, actual value, (param, 'shape'|'stride', i))] for the given tensors
        ({param: object with .shape and .stride()})."""
        out = []
        for name, (shape, strides) in self.tensors.items():
            t = tensors.get(name)
            if t is None:
                continue
            actual, st = tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride())
            if name in self.packed and actual and getattr(t, "element_size", lambda: 0)() == 1:
                actual, st = packed_sizes(actual, st)
            if shape is not None and len(shape) == len(actual):
                out += [(d, a, (name, "shape", i)) for i, (d, a) in enumerate(zip(shape, actual))]
            if strides is not None and len(strides) == len(actual):
                out += [(d, a, (name, "stride", i)) for i, (d, a) in enumerate(zip(strides, st))]
        return out

    def sources(self, name):
        """Where a symbol appears: [(param, 'shape'|'stride', i, dim expr)]."""
        out = []
        for t, (shape, strides) in self.tensors.items():
            for kind, dims in (("shape", shape or []), ("stride", strides or [])):
                for i, d in enumerate(dims):
                    if name in free_syms(d):
                        out.append((t, kind, i, d))
        return out


def _safe(fn):
    try:
        return fn()
    except Exception:  # noqa: BLE001
        return UNKNOWN


# ---- the library's IR signature -------------------------------------------------------------
def parse_expr(text):
    """An IR size expression (`M`, `M * 2`, `(M + 31) // 32`, `int64(8)`, `min(a, b)`) as an
    int or Expr over Syms; UNKNOWN when it is anything else."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return UNKNOWN
    return _ir_expr(node)


def _ir_expr(n):
    if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
        return n.value
    if isinstance(n, ast.Name):
        return Sym(n.id, "dynamic")
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        a = _ir_expr(n.operand)
        return UNKNOWN if a is UNKNOWN else -a
    if isinstance(n, ast.BinOp) and type(n.op) in (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv,
                                                   ast.Mod):
        a, b = _ir_expr(n.left), _ir_expr(n.right)
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        return _BINOPS[type(n.op)](a, b)
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
        args = [_ir_expr(a) for a in n.args]
        if any(a is UNKNOWN for a in args):
            return UNKNOWN
        if n.func.id in ("min", "max") and len(args) == 2:
            return sym_call(n.func.id, *args)
        if n.func.id.startswith(("int", "uint")) and len(args) == 1:
            return args[0]  # int64(8): a typed constant or cast
    return UNKNOWN


def ir_signature(ir_text):
    """{param: [dim expr]} from the first line of the library's IR text
    (`func f(A: float16[M, 1024], n: int32) dynamic M:`; tilescale.signature_dims reads it);
    {} when it is not there."""
    import tilescale
    return {name: [parse_expr(d) for d in dims] for name, dims in tilescale.signature_dims(ir_text).items()}
