"""tilelang.tools.cuda: CUDA-specific tools (iket, the in-kernel event tracer)."""
