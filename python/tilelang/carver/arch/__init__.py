"""tilelang.carver.arch: the device description TileLang's carver and analysis tools take
(`CUDA("cuda")`: SM version, SM count, shared memory, L2, ...), from torch.cuda when a GPU is
visible, else from the library's device or default target (tilelang._device), and `driver`
device queries.  The roller/template classes (MatmulTemplate, hint search) are not provided;
AMD, Metal and CPU devices are not TileScale targets."""
from ... import _device
from . import driver  # noqa: F401

__all__ = ["TileDevice", "CUDA", "CDNA", "get_arch", "auto_infer_current_arch", "is_cuda_arch",
           "is_volta_arch", "is_ampere_arch", "is_ada_arch", "is_hopper_arch", "has_mma_support",
           "is_tensorcore_supported_precision", "driver"]


class TileDevice:
    """Base of the device descriptions."""


class TensorInstruction:
    def __init__(self, name, shape):
        self.name, self.shape = name, shape


class CUDA(TileDevice):
    """A CUDA device as TileLang's carver describes it."""

    def __init__(self, target="cuda"):
        self.target = target
        sm = _device.arch_of(target)
        p = _device.properties(target=target if sm is not None else None)
        self.sm_version = p["major"] * 10 + p["minor"]
        self.name = p["name"]
        self.platform = "CUDA"
        self.smem_cap = p["smem_per_block"]
        self.compute_max_core = p["multi_processor_count"]
        self.warp_size = p["warp_size"]
        self.compute_capability = "%d%d" % (p["major"], p["minor"])
        self.reg_cap = 65536
        self.max_smem_usage = 2 * self.smem_cap
        self.sm_partition = 4
        self.l2_cache_size_bytes = p["l2_cache_size"]
        self.transaction_size = [32, 128]  # bytes
        self.bandwidth = [750, 12080]      # MB/s (TileLang's relative figures)
        self.available_tensor_instructions = None

    def get_avaliable_tensorintrin_shapes(self):
        self.available_tensor_instructions = (TensorInstruction("mma", [16, 16]),
                                              TensorInstruction("wmma", [16, 16]))
        return [t.shape for t in self.available_tensor_instructions]

    get_available_tensorintrin_shapes = get_avaliable_tensorintrin_shapes

    def __repr__(self):
        return "CUDA(%s)" % (self.target,)


class CDNA(TileDevice):
    def __init__(self, target="hip"):
        raise NotImplementedError("tilelang: AMD (CDNA/HIP) devices are not TileScale targets")


def get_arch(target="cuda"):
    t = str(getattr(target, "kind", target))
    if t.startswith(("cuda", "sm_", "auto", "nvidia")) or _device.arch_of(target) is not None:
        return CUDA(target)
    raise ValueError("tilelang: unsupported target %r (TileScale compiles for CUDA)" % (target,))


def auto_infer_current_arch():
    return CUDA("cuda")


def is_cuda_arch(arch):
    return isinstance(arch, CUDA)


def is_volta_arch(arch):
    return is_cuda_arch(arch) and 70 <= arch.sm_version < 80


def is_ampere_arch(arch):
    return is_cuda_arch(arch) and 80 <= arch.sm_version < 89


def is_ada_arch(arch):
    return is_cuda_arch(arch) and arch.sm_version == 89


def is_hopper_arch(arch):
    return is_cuda_arch(arch) and arch.sm_version == 90


def has_mma_support(arch):
    return is_cuda_arch(arch) and arch.sm_version >= 80


_TC = {"volta": [("float16", "float32"), ("float16", "float16")],
       "ampere": [("bfloat16", "float32"), ("float16", "float32"), ("float16", "float16"),
                  ("int8", "int32"), ("int4", "int32"), ("int2", "int32"), ("int1", "int32")],
       "ada": [("bfloat16", "float32"), ("float16", "float32"), ("float16", "float16"),
               ("int8", "int32"), ("float8_e5m2", "float32"), ("float8_e4m3", "float32")]}


def is_tensorcore_supported_precision(in_dtype, accum_dtype, arch):
    pair = (str(in_dtype), str(accum_dtype))
    if is_volta_arch(arch):
        return pair in _TC["volta"]
    if is_ampere_arch(arch):
        return pair in _TC["ampere"]
    if is_ada_arch(arch) or is_hopper_arch(arch):
        return pair in _TC["ada"]
    raise ValueError("Unsupported architecture: %r" % (arch,))
