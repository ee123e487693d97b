"""tilelang.rocm.target: the questions host code asks about AMD targets.  TileScale compiles for
CUDA only, so HIP is never available; the arch helpers answer as TileLang's do."""


def check_hip_availability():
    """False: TileScale runs kernels on NVIDIA GPUs only."""
    return False


def normalize_rocm_arch(arch):
    """'gfx942:sramecc+' -> 'gfx942'; None for anything that is no gfx arch."""
    if arch is None:
        return None
    name = str(arch).strip().split(":", 1)[0]
    return name if name.startswith("gfx") else None


def rocm_warp_size_for_arch(arch):
    """64 for gfx9 (CDNA), 32 for gfx10-12 (RDNA), None otherwise."""
    if arch is None:
        return None
    if arch.startswith("gfx9"):
        return 64
    if arch.startswith(("gfx10", "gfx11", "gfx12")):
        return 32
    return None
