"""tilelang.tools: developer tools around kernels: Analyzer (FLOPs, global bytes and a
roofline time estimate, counted by the library: tools/analyzer.py) and tilelang.tools.cuda.iket."""
from .analyzer import AnalysisResult, Analyzer  # noqa: F401

__all__ = ["Analyzer", "AnalysisResult"]
