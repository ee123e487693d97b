"""tilelang.cuda.intrinsics, as far as kernel files use it while building a kernel: the MMA
shared-memory swizzle.  The MMA emitter classes (macro.mma_macro_generator) are not provided."""
from tilelang.cuda.intrinsics.layout.mma_layout import make_mma_swizzle_layout
