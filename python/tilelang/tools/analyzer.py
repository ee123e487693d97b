"""tilelang.tools.Analyzer: TileLang's roofline estimate of a kernel, from counts the library
makes (`tilescale compile --emit stats`, ts_kernel_text(k, TS_EMIT_STATS)): the FLOPs of the
kernel's T.gemm statements (2*M*N*K each) and the bytes it moves to and from global memory,
times loop trip counts and blocks, counted in C from the tile-level IR.  This module never
evaluates a kernel body; it only reads those counts and divides by the device's peak rates.

    my_func = kernel.get_tir(block_M=128, ...)      # a TirText: the IR text and its kernel
    result = Analyzer.analysis(my_func, CUDA("cuda"))
    result.total_flops, result.estimated_time, ...

A count the library cannot make exactly is an upper bound (work under a runtime condition, a
loop bound that varies between blocks) or unknown (a dynamic size): an upper bound is returned
as such with a warning, an unknown count as None (and the time estimates with it)."""
import logging
from dataclasses import dataclass

logger = logging.getLogger("tilelang")

__all__ = ["Analyzer", "AnalysisResult", "PEAKS"]

# Nominal peak rates by SM version: (dense float16/bfloat16 tensor-core TFLOP/s with float32
# accumulation, DRAM bandwidth in TB/s), from the vendor data sheets of the part that
# tilelang._device.TABLE takes as each architecture's representative.  Nominal: boost clock,
# no sparsity; sustained rates are lower (clocks under load, DRAM efficiency ~80-90%).
PEAKS = {
    80: (312.0, 2.039),   # A100 SXM4 80GB: 312 TFLOP/s, HBM2e 2,039 GB/s
    86: (71.0, 0.936),    # GeForce RTX 3090: 71 TFLOP/s (fp32 accumulate), GDDR6X 936 GB/s
    89: (362.05, 0.864),  # L40S: 362 TFLOP/s, GDDR6 864 GB/s
    90: (989.4, 3.35),    # H100 SXM5: 989 TFLOP/s, HBM3 3.35 TB/s
    100: (2250.0, 8.0),   # B200: 2.25 PFLOP/s, HBM3e 8 TB/s
}


@dataclass(frozen=True)
class AnalysisResult:
    """TileLang's result fields: total_flops (tensor-core FLOPs), total_global_bytes (bytes
    read and written in global memory), estimated_time (seconds: the roofline, the longer of
    compute at peak FLOP/s and traffic at peak bandwidth), tflops and bandwidth_GBps (the rates
    that time implies).  None where a count is unknown.  flops_status / bytes_status: "exact",
    "upper_bound" or "unknown", as the library reported them."""
    total_flops: int
    total_global_bytes: int
    estimated_time: float
    tflops: float
    bandwidth_GBps: float
    flops_status: str = "exact"
    bytes_status: str = "exact"


def _stats_of(fn):
    """The library's stats dict for what get_tir() returns, a JITKernel, a tilescale.Kernel,
    or a @T.prim_func (compiled here)."""
    from ..jit.kernel import JITKernel, TirText
    from ..language import PrimFuncRef
    import tilescale
    if isinstance(fn, TirText):
        fn = fn.kernel
    elif isinstance(fn, PrimFuncRef):
        from ..jit import compile as _compile
        fn = _compile(fn)
    if isinstance(fn, JITKernel):
        fn = fn.kernel
    if isinstance(fn, tilescale.Kernel):
        stats = fn.stats
        if stats is None:
            raise RuntimeError("tilelang: the library reported no stats for kernel '%s'" % fn.name)
        return stats
    if isinstance(fn, str):
        raise TypeError("Analyzer.analysis: got IR text without its kernel (a plain str); pass "
                        "what kernel.get_tir(...) returns unchanged, or the compiled kernel")
    raise TypeError("Analyzer.analysis: expected what kernel.get_tir(...) returns, a compiled "
                    "kernel (tilelang.compile / @tilelang.jit) or a @T.prim_func; got %s"
                    % type(fn).__name__)


def _sm_of(device):
    """The SM version (90) of a carver device (CUDA("cuda")), a target name, or None (the
    package's device)."""
    from .. import _device
    sm = getattr(device, "sm_version", None)
    if isinstance(sm, int):
        return sm
    if device is not None and not isinstance(device, str):
        raise TypeError("Analyzer.analysis: device must be a tilelang.carver.arch.CUDA device "
                        "or a target name, got %s" % type(device).__name__)
    major, minor = _device.compute_capability(device)
    return major * 10 + minor


def _note(stats, kind):
    status = stats.get(kind + "_status", "exact")
    if status != "exact":
        logger.warning("tilelang.tools.Analyzer: %s of %s is %s: %s", kind, stats.get("function"),
                       status.replace("_", " "), stats.get(kind + "_note", ""))
    return status


class Analyzer:
    """Analyzer.analysis(fn, device) -> AnalysisResult; or Analyzer(fn, device).calculate().
    peak_tflops / peak_bandwidth_GBps override the nominal peaks (PEAKS) of the device."""

    def __init__(self, fn, device=None, peak_tflops=None, peak_bandwidth_GBps=None):
        self.stats = _stats_of(fn)
        self.device = device
        sm = _sm_of(device)
        tf, tb = PEAKS.get(sm, (None, None))
        self.peak_tflops = peak_tflops if peak_tflops is not None else tf
        self.peak_bandwidth_GBps = (peak_bandwidth_GBps if peak_bandwidth_GBps is not None
                                    else tb * 1e3 if tb is not None else None)
        if self.peak_tflops is None or self.peak_bandwidth_GBps is None:
            logger.warning("tilelang.tools.Analyzer: no nominal peak rates for sm_%s; pass "
                           "peak_tflops= and peak_bandwidth_GBps= for a time estimate", sm)

    def calculate(self):
        s = self.stats
        flops_status, bytes_status = _note(s, "flops"), _note(s, "bytes")
        flops, nbytes = s.get("total_flops"), s.get("total_global_bytes")
        time = tflops = bandwidth = None
        if None not in (flops, nbytes, self.peak_tflops, self.peak_bandwidth_GBps):
            time = max(flops / (self.peak_tflops * 1e12), nbytes / (self.peak_bandwidth_GBps * 1e9))
            tflops = flops / time / 1e12 if time > 0 else 0.0
            bandwidth = nbytes / time / 1e9 if time > 0 else 0.0
        return AnalysisResult(flops, nbytes, time, tflops, bandwidth, flops_status, bytes_status)

    @classmethod
    def analysis(cls, fn, device=None, **peaks):
        """TileLang's entry point: the AnalysisResult of fn (what kernel.get_tir() returns, a
        compiled kernel or a @T.prim_func) on device (tilelang.carver.arch.CUDA)."""
        return cls(fn, device, **peaks).calculate()
