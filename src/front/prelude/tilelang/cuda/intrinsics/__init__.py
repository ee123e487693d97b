"""tilelang.cuda.intrinsics, as far as kernel files use it while building a kernel: the MMA
shared-memory swizzles (make_mma_swizzle_layout, get_swizzle_layout) and the warp MMA emitter
(macro.mma_macro_generator)."""
from tilelang.cuda.intrinsics.layout.mma_layout import make_mma_swizzle_layout, get_swizzle_layout
from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter
