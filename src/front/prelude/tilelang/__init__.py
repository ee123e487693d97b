"""tilelang's host helpers at the package's top level (tilelang.cdiv, tilelang.next_power_of_2).
The rest of `tilelang` (jit, language, PassConfigKey, ...) is the compiler's own namespace."""
from tilelang.math import cdiv, next_power_of_2, prev_power_of_2
import tvm
from tvm import DataType
