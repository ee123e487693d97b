"""tilelang.intrinsics.mma_macro_generator: the older import path of
tilelang.cuda.intrinsics.macro.mma_macro_generator."""
from tilelang.cuda.intrinsics.macro.mma_macro_generator import (
    TensorCoreIntrinEmitter,
    TensorCoreIntrinEmitterWithLadderTransform,
    INT4TensorCoreIntrinEmitter,
)
