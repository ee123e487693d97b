"""tilelang.intrinsics: the older import path of tilelang.cuda.intrinsics (the MMA swizzles and
the warp MMA emitter)."""
from tilelang.cuda.intrinsics import make_mma_swizzle_layout, get_swizzle_layout, TensorCoreIntrinEmitter
