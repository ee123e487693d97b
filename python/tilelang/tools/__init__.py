"""tilelang.tools: developer tools around kernels (tilelang.tools.cuda.iket)."""
