"""TileLang dtype objects for host code: `T.float16` is a str subclass equal to "float16".

Scripts use dtypes outside kernels (default arguments, `torch.randn(..., dtype=...)` through
`.as_torch()`, comparisons with strings, maps keyed by them).  The compiler never sees these
objects: a dtype passed to a kernel becomes the -D text `T.float16` (dtype_param_text)."""
__all__ = ["dtype", "as_dtype", "dtype_param_text", "torch_dtype_name", "DTYPES"]

# name -> canonical name (TileLang's aliases: T.half == "float16", T.float == "float32")
_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "int": "int32",
            "long": "int64", "short": "int16", "uint": "uint32", "ulong": "uint64",
            "boolean": "bool", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
_BITS = {"bool": 8, "int4": 4, "uint4": 4, "float4_e2m1fn": 4, "float4_e2m1_unpacked": 8,
         "float8_e4m3": 8, "float8_e4m3fn": 8, "float8_e4m3fnuz": 8, "float8_e5m2": 8,
         "float8_e5m2fnuz": 8, "float8_e8m0fnu": 8, "tfloat32": 32, "float6_e2m3fn": 6,
         "float6_e3m2fn": 6}
for _b in (8, 16, 32, 64):
    _BITS["int%d" % _b] = _BITS["uint%d" % _b] = _b
for _n, _b in (("float16", 16), ("bfloat16", 16), ("float32", 32), ("float64", 64)):
    _BITS[_n] = _b

# canonical name -> torch attribute (None: torch has no such dtype)
_TORCH_NAMES = {"float8_e4m3": "float8_e4m3fn", "tfloat32": "float32", "int4": None,
                "uint4": None, "float4_e2m1fn": "float4_e2m1fn_x2"}
# torch dtype name -> canonical name
_FROM_TORCH = {"half": "float16", "float": "float32", "double": "float64", "long": "int64",
               "int": "int32", "short": "int16", "float4_e2m1fn_x2": "float4_e2m1fn"}


class dtype(str):
    """A dtype name that compares equal to its string: T.float16 == "float16"."""

    def __new__(cls, value):
        if isinstance(value, dtype):
            return value
        name = value if isinstance(value, str) else torch_dtype_name(value)
        name = _ALIASES.get(name, name)
        if name not in _BITS:
            raise TypeError("tilelang: unknown dtype %r" % (value,))
        return str.__new__(cls, name)

    def __repr__(self):
        return "T.%s" % str.__str__(self)

    @property
    def bits(self):
        return _BITS[str(self)]

    @property
    def bytes(self):
        return max(1, self.bits // 8)

    lanes = 1

    def is_float8(self):
        return self.startswith("float8")

    def is_float4(self):
        return self.startswith("float4")

    def is_unsigned(self):
        return self.startswith("uint")

    def is_boolean(self):
        return self == "bool"

    def is_float(self):
        return self.startswith(("float", "bfloat", "tfloat"))

    def as_torch(self):
        """The torch.dtype of the same name (imports torch)."""
        import torch
        name = _TORCH_NAMES.get(str(self), str(self))
        t = getattr(torch, name, None) if name else None
        if t is None:
            raise TypeError("tilelang: torch has no dtype for %s" % self)
        return t

    torch = as_torch

    def __call__(self, *args, **kwargs):
        from . import kernel_only_error
        raise kernel_only_error("T.%s(...)" % self)


def torch_dtype_name(t):
    """The canonical name of a torch.dtype (or anything whose str is 'torch.NAME')."""
    s = str(t)
    if not s.startswith("torch."):
        raise TypeError("tilelang: not a dtype: %r" % (t,))
    name = s[len("torch."):]
    return _FROM_TORCH.get(name, name)


def as_dtype(value):
    """dtype of a T.* dtype, a string or a torch.dtype."""
    return dtype(value)


def dtype_param_text(d):
    """-D text of a dtype: `T.float16` (the compiler's T module resolves every name)."""
    return "T." + str.__str__(dtype(d))


# Every dtype by name (aliases included); `T.float16` is DTYPES["float16"].  They are not
# module globals here: `int`, `float` and `bool` would shadow the builtins.
DTYPES = {n: dtype(n) for n in list(_BITS) + list(_ALIASES)}


def __getattr__(name):  # tilelang.language.dtypes.float16, ._TORCH_DTYPE_TO_STR
    if name in DTYPES:
        return DTYPES[name]
    if name == "_TORCH_DTYPE_TO_STR":
        import torch
        return {getattr(torch, t): dtype(n) for n, t in
                [(n, _TORCH_NAMES.get(n, n)) for n in _BITS] if t and hasattr(torch, t)}
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
