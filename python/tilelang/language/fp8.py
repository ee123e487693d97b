"""tilelang.language.fp8: the FP8 dtype of the platform (CUDA only here: E4M3FN / E5M2)."""
from .dtypes import DTYPES

__all__ = ["determine_fp8_type", "determine_torch_fp8_type"]


def determine_fp8_type(fp8_format="e4m3"):
    if fp8_format not in ("e4m3", "e5m2"):
        raise ValueError("Unsupported FP8 format: %s" % fp8_format)
    return DTYPES["float8_e4m3fn" if fp8_format == "e4m3" else "float8_e5m2"]


def determine_torch_fp8_type(fp8_format="e4m3"):
    return determine_fp8_type(fp8_format).as_torch()
