"""tilelang.distributed (TileScale): the host names its kernel factories use.  dtype_map maps a
dtype's name to the dtype (the torch dtype in TileScale; here the same dtype, which answers
.itemsize and .bits like a torch dtype)."""
import torch

dtype_map = {
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "float8_e4m3fn": torch.float8_e4m3fn,
    "float8_e5m2": torch.float8_e5m2,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
}
