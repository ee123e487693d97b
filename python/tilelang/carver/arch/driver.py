"""Device properties of a CUDA device: torch.cuda when it sees a GPU, else the library's
device or default target with tilelang._device.TABLE (so host code that sizes a grid by the
SM count runs on a machine without a GPU too)."""
from ... import _device

__all__ = ["get_num_sms", "get_device_name", "get_shared_memory_per_block",
           "get_max_dynamic_shared_size_bytes", "get_registers_per_block", "get_l2_cache_size",
           "get_device_capability", "active"]


def active():
    """Whether a CUDA device is usable."""
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def _sized(b, format):  # noqa: A002 (TileLang's name)
    return {"bytes": b, "kb": b // 1024, "mb": b // (1024 * 1024)}[format]


def get_num_sms(device_id=0):
    return _device.properties(device_id)["multi_processor_count"]


def get_device_name(device_id=0):
    return _device.properties(device_id)["name"]


def get_registers_per_block(device_id=0):
    return _device.properties(device_id)["regs_per_block"]


def get_l2_cache_size(device_id=0):
    return _device.properties(device_id)["l2_cache_size"]


def get_device_capability(device_id=0):
    p = _device.properties(device_id)
    return p["major"], p["minor"]


def get_shared_memory_per_block(device_id=0, format="bytes"):  # noqa: A002
    return _sized(_device.properties(device_id)["smem_per_block"], format)


def get_max_dynamic_shared_size_bytes(device_id=0, format="bytes"):  # noqa: A002
    return _sized(_device.properties(device_id)["smem_per_block_optin"], format)
