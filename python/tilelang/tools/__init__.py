"""tilelang.tools: developer tools around kernels: Analyzer (FLOPs, global bytes and a
roofline time estimate, counted by the library: tools/analyzer.py), plot_layout (a picture of a
host-side T.Layout / T.Fragment: tools/plot_layout.py) and tilelang.tools.cuda.iket."""
from .analyzer import AnalysisResult, Analyzer  # noqa: F401
from .plot_layout import plot_layout  # noqa: F401

__all__ = ["Analyzer", "AnalysisResult", "plot_layout"]
