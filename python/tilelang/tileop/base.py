"""tilelang.tileop.base.GemmWarpPolicy: the same placeholder as T.GemmWarpPolicy (a value
passed to a kernel factory travels as its name, e.g. `T.GemmWarpPolicy.FullRow`)."""
from ..language import _Placeholder

GemmWarpPolicy = _Placeholder("T.GemmWarpPolicy")
