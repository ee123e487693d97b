"""tvm.tirx: the IR builders kernel helpers call, as the tile language's own operations."""
import tilelang.language as T

PrimExpr = T.PrimExpr


def const(value, dtype="int32"):
    return T.cast(value, dtype)


def reinterpret(dtype, value):
    return T.reinterpret(dtype, value)


def Select(condition, true_value, false_value):
    return T.if_then_else(condition, true_value, false_value)


def Cast(dtype, value):
    return T.Cast(dtype, value)


def Min(a, b):
    return T.min(a, b)


def Max(a, b):
    return T.max(a, b)
