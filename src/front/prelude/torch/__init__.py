"""torch, as far as kernel factories use it while building a kernel: its dtypes (the tile
language's dtypes, with .itemsize and .bits) and the device queries of torch.cuda.  Tensors
and everything else stay unavailable: using them while building a kernel is a diagnostic."""
import tilelang.language as T
from torch import cuda

bool = T.bool
int8 = T.int8
int16 = T.int16
int32 = T.int32
int64 = T.int64
uint8 = T.uint8
float16 = T.float16
half = T.float16
bfloat16 = T.bfloat16
float32 = T.float32
float = T.float32
float64 = T.float64
double = T.float64
float8_e4m3fn = T.float8_e4m3
float8_e5m2 = T.float8_e5m2
