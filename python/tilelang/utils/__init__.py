"""tilelang.utils: tensor helpers shared by the profiler and tests (torch imported lazily)."""
from .tensor import TensorSupplyType, get_tensor_supply, torch_assert_close  # noqa: F401
