"""Device properties of a CUDA device, read through torch."""

__all__ = ["get_num_sms", "get_device_name", "get_shared_memory_per_block",
           "get_max_dynamic_shared_size_bytes", "get_registers_per_block", "active"]


def _props(device_id=0):
    import torch
    return torch.cuda.get_device_properties(device_id)


def active():
    """Whether a CUDA device is usable."""
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def get_num_sms(device_id=0):
    return _props(device_id).multi_processor_count


def get_device_name(device_id=0):
    return _props(device_id).name


def get_registers_per_block(device_id=0):
    return getattr(_props(device_id), "regs_per_multiprocessor", 65536)


def get_shared_memory_per_block(device_id=0, format="bytes"):  # noqa: A002 (TileLang's name)
    b = getattr(_props(device_id), "shared_memory_per_block", 49152)
    return {"bytes": b, "kb": b // 1024, "mb": b // (1024 * 1024)}[format]


def get_max_dynamic_shared_size_bytes(device_id=0, format="bytes"):  # noqa: A002
    b = getattr(_props(device_id), "shared_memory_per_block_optin", 232448)
    return {"bytes": b, "kb": b // 1024, "mb": b // (1024 * 1024)}[format]
