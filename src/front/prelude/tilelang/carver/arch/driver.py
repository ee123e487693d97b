"""tilelang.carver.arch.driver: device queries kernel factories make (number of SMs, shared
memory).  The answers come from the compile target's table (_tilescale.device_attribute), so a
compile on a CPU machine gives the same kernel as on that GPU."""
import _tilescale


def get_num_sms(device_id=0):
    return _tilescale.device_attribute("multiprocessor_count", device_id)


def get_device_name(device_id=0):
    return _tilescale.device_attribute("name", device_id)


def get_shared_memory_per_block(device_id=0, format="bytes"):
    return _scaled(_tilescale.device_attribute("shared_memory_per_block", device_id), format)


def get_max_dynamic_shared_size_bytes(device_id=0, format="bytes"):
    return _scaled(_tilescale.device_attribute("shared_memory_per_block_optin", device_id), format)


def get_persisting_l2_cache_max_size(device_id=0):
    return _tilescale.device_attribute("persisting_l2_cache_max_size", device_id)


def get_registers_per_block(device_id=0):
    return _tilescale.device_attribute("registers_per_block", device_id)


def get_device_attribute(attr, device_id=0):
    return _tilescale.device_attribute(attr, device_id)


def _scaled(nbytes, format):
    if format == "bytes":
        return nbytes
    if format == "kb":
        return nbytes // 1024
    if format == "mb":
        return nbytes // (1024 * 1024)
    raise ValueError("format must be 'bytes', 'kb' or 'mb', not " + repr(format))
