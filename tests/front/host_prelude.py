# tilescale-test: -k prelude_sizes --arch sm_90a
"""Host code a kernel factory runs: the embedded prelude (tilelang.math, tilelang.cdiv, the
carver driver, torch.cuda queries and dtypes, tvm.DataType, math.gcd) and a sibling helper
package, with the values checked by asserts (a wrong value is a compile error).  Device
queries answer from the target's table on a machine without a GPU (sm_90a: an H100)."""
import math

import tilelang
import tilelang.language as T
import tilelang.math
import torch
from tilelang.carver.arch import driver
from tvm import DataType, tirx

import tile_helpers
from tile_helpers import scaled, store_twice


@tilelang.jit
def prelude_sizes(M=1000, dtype=torch.float16):
    sms = driver.get_num_sms()
    major, minor = torch.cuda.get_device_capability()
    smem = driver.get_max_dynamic_shared_size_bytes()
    props = torch.cuda.get_device_properties(0)
    assert sms == 132 and (major, minor) == (9, 0) and smem == 232448, (sms, major, minor, smem)
    assert props.multi_processor_count == sms and props.major == 9
    assert tilelang.math.next_power_of_2(M) == 1024 and tilelang.cdiv(M, 128) == 8
    assert math.gcd(M, 48) == 8 and (M - 1).bit_length() == 10
    assert DataType(dtype).bits == 16 and dtype.itemsize == 2 and T.dtype("float32").bits == 32
    assert "".join(c for c in T.int8 if c.isdigit()) == "8"
    assert scaled(2) == 6 + 16 and tile_helpers.SCALE == 3
    blocks = tilelang.cdiv(M, 128)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype)):
        with T.Kernel(blocks, threads=128) as bx:
            store_twice(A, bx * 2, tirx.Cast(dtype, tirx.const(sms, "int32")))

    return main
