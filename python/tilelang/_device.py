"""The GPU the package compiles for, as host code asks about it (carver.arch, contrib.nvcc).

Answers come from torch.cuda when a GPU is visible to torch, else from the library
(ts_context_device_sm: the device libtilescale found through the driver), else from the
target the library compiles for without a GPU ($TILELANG_DEFAULT_TARGET, or sm_90a: an
H100).  Without a device, properties other than the compute capability come from TABLE, the
published figures of one representative part per architecture."""
import os
import re

__all__ = ["arch_of", "compute_capability", "properties", "TABLE"]

# sm -> representative part: SMs, default and opt-in shared memory per block, registers per
# block, L2 bytes.  (NVIDIA's CUDA C Programming Guide, table "Technical Specifications per
# Compute Capability", and the parts' data sheets.)
TABLE = {
    80: dict(name="NVIDIA A100-SXM4-80GB", multi_processor_count=108, smem_per_block=49152,
             smem_per_block_optin=166912, regs_per_block=65536, l2_cache_size=41943040),
    86: dict(name="NVIDIA GeForce RTX 3090", multi_processor_count=82, smem_per_block=49152,
             smem_per_block_optin=101376, regs_per_block=65536, l2_cache_size=6291456),
    89: dict(name="NVIDIA L40S", multi_processor_count=142, smem_per_block=49152,
             smem_per_block_optin=101376, regs_per_block=65536, l2_cache_size=100663296),
    90: dict(name="NVIDIA H100 80GB HBM3", multi_processor_count=132, smem_per_block=49152,
             smem_per_block_optin=232448, regs_per_block=65536, l2_cache_size=52428800),
    100: dict(name="NVIDIA B200", multi_processor_count=148, smem_per_block=49152,
              smem_per_block_optin=232448, regs_per_block=65536, l2_cache_size=132120576),
    120: dict(name="NVIDIA GeForce RTX 5090", multi_processor_count=170, smem_per_block=49152,
              smem_per_block_optin=101376, regs_per_block=65536, l2_cache_size=100663296),
}

_SM = re.compile(r"(?:sm_)?(\d+)[a-z]*$")


def arch_of(target):
    """The SM number (90) a target names — 'sm_90a', 'cuda -arch=sm_80', an object with .arch
    or .attrs['arch'] — or None when it names none ('cuda', 'auto', None)."""
    if target is None:
        return None
    attrs = target if isinstance(target, dict) else getattr(target, "attrs", None)
    arch = (None if isinstance(target, (str, dict)) else getattr(target, "arch", None)) or (
        attrs.get("arch") if isinstance(attrs, dict) else None)
    text = str(arch if arch is not None else target).strip()
    for part in text.split():
        part = part.split("=", 1)[1] if part.startswith(("-arch=", "--arch=")) else part
        m = _SM.match(part)
        if m and (part.startswith("sm_") or arch is not None):
            return int(m.group(1))
    return None


def _torch_cuda(device=None):
    try:
        import torch
    except ImportError:
        return None
    try:
        if not torch.cuda.is_available():
            return None
        return torch.cuda, (torch.cuda.current_device() if device is None else device)
    except Exception:  # noqa: BLE001 (a broken CUDA install: answer from the library)
        return None


def compute_capability(target=None, device=None):
    """(major, minor) of the target, else of the GPU (torch, then the library), else of the
    library's default target."""
    sm = arch_of(target)
    if sm is None:
        tc = _torch_cuda(device)
        if tc is not None:
            return tuple(tc[0].get_device_capability(tc[1]))
        sm = _library_sm()
    if sm is None:
        sm = arch_of(os.environ.get("TILELANG_DEFAULT_TARGET")) or 90
    return sm // 10, sm % 10


def _library_sm():
    try:
        from . import _compiler
        sm = _compiler.context().device_sm
    except Exception:  # noqa: BLE001 (no library: the default target answers)
        return None
    return sm or None


def properties(device=None, target=None):
    """Properties of the device (torch when it sees a GPU, else TABLE for the arch):
    name, multi_processor_count, smem_per_block, smem_per_block_optin, regs_per_block,
    l2_cache_size, warp_size, major, minor."""
    tc = _torch_cuda(device) if arch_of(target) is None else None
    if tc is not None:
        p = tc[0].get_device_properties(tc[1])
        return dict(name=p.name, multi_processor_count=p.multi_processor_count,
                    smem_per_block=getattr(p, "shared_memory_per_block", 49152),
                    smem_per_block_optin=getattr(p, "shared_memory_per_block_optin", 232448),
                    regs_per_block=getattr(p, "regs_per_multiprocessor", 65536),
                    l2_cache_size=getattr(p, "L2_cache_size", 0) or 0, warp_size=32,
                    major=p.major, minor=p.minor)
    major, minor = compute_capability(target, device)
    sm = major * 10 + minor
    row = TABLE.get(sm) or TABLE[max((s for s in TABLE if s <= sm), default=80)]
    return dict(row, warp_size=32, major=major, minor=minor)
