"""tilelang.utils.target: which GPU a script runs on (determine_target) and the target_is_*
predicates host code branches on (TileScale's reduce_scatter picks its Hopper ring reduce with
target_is_hopper).  TileScale compiles for CUDA only; the answer comes from _device (torch's GPU,
else the library's, else $TILELANG_DEFAULT_TARGET / sm_90a)."""
from .._device import arch_of, compute_capability

__all__ = ["Target", "determine_target", "target_is_cuda", "target_is_hip", "target_is_volta",
           "target_is_turing", "target_is_ampere", "target_is_ada", "target_is_hopper",
           "target_is_blackwell", "target_get_sm"]


class Target:
    """What TileLang's tvm.target.Target tells host code: kind.name, arch ('sm_90'), attrs."""

    class _Kind:
        name = "cuda"

    def __init__(self, sm):
        self.sm = int(sm)
        self.arch = "sm_%d" % self.sm
        self.kind = Target._Kind()
        self.attrs = {"arch": self.arch}

    def __str__(self):
        return "cuda -arch=%s" % self.arch

    __repr__ = __str__


def determine_target(target="auto", return_object=False):
    """'cuda' (or a Target for the device's arch with return_object=True); an explicit CUDA
    target is returned as given."""
    sm = arch_of(target) if target not in (None, "auto") else None
    if target not in (None, "auto", "cuda") and sm is None:
        raise ValueError("tilelang: target %r is not supported by TileScale (CUDA only)" % (target,))
    if not return_object:
        return "cuda" if target in (None, "auto") else target
    if sm is None:
        major, minor = compute_capability()
        sm = major * 10 + minor
    return Target(sm)


def target_get_sm(target):
    sm = arch_of(target) if target is not None else None
    if sm is None:
        major, minor = compute_capability()
        sm = major * 10 + minor
    return sm


def target_is_cuda(target):
    return True


def target_is_hip(target):
    return False


def target_is_volta(target):
    return target_get_sm(target) // 10 == 7 and target_get_sm(target) < 75


def target_is_turing(target):
    return target_get_sm(target) == 75


def target_is_ampere(target):
    return target_get_sm(target) // 10 == 8 and target_get_sm(target) != 89


def target_is_ada(target):
    return target_get_sm(target) == 89


def target_is_hopper(target):
    return target_get_sm(target) // 10 == 9


def target_is_blackwell(target):
    return target_get_sm(target) // 10 in (10, 11, 12)
