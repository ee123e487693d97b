"""torch.cuda's device queries, answered from the compile target's table (the answers a kernel
factory would get on that GPU)."""
import _tilescale


def is_available():
    return True


def device_count():
    return _tilescale.device_attribute("device_count", 0)


def current_device():
    return 0


def get_device_capability(device=None):
    cc = _tilescale.device_attribute("compute_capability", 0)
    return (cc // 10, cc % 10)


def get_device_name(device=None):
    return _tilescale.device_attribute("name", 0)


def get_device_properties(device=None):
    return _tilescale.device_properties(0)
