"""tilelang.get_allocator and tilelang.tensor: TileScale's symmetric tensors over the process's
heap (tilelang.distributed: one heap per process, libtilescale's ts_dist_malloc).

TileScale's allocator owns a heap of `size` bytes; here every distributed allocator of the
process is a view of the one heap the group created at init (its size: 1 GiB + 64 MiB, or
$TILESCALE_DIST_HEAP_BYTES), and `size` is checked against it.  Tensors are freed when their
last view dies (TileScale's allocator never frees)."""
__all__ = ["Allocator", "get_allocator", "tensor"]


class Allocator:
    """Symmetric tensors of the process's group (is_distributed=True), or ordinary CUDA tensors
    (is_distributed=False)."""

    def __init__(self, size=2**30, device="cuda", is_distributed=True, local_rank=0,
                 num_local_ranks=1, group=None):
        self.size, self.device, self.is_distributed = int(size), device, bool(is_distributed)
        self.local_rank, self.num_local_ranks, self.group = local_rank, num_local_ranks, group
        if not self.is_distributed:
            return
        from ..distributed import _runtime
        d = _runtime.get()
        if self.size > d.heap_size:
            raise ValueError(
                "tilelang.get_allocator: size %d is larger than this process's symmetric heap "
                "(%d bytes); set TILESCALE_DIST_HEAP_BYTES (e.g. %dM) before init"
                % (self.size, d.heap_size, (self.size + (1 << 20) - 1) // (1 << 20) + 64))
        self.dist = d

    def initialized(self):
        return True

    @property
    def rank(self):
        return self.dist.rank if self.is_distributed else 0

    @property
    def world_size(self):
        return self.dist.world_size if self.is_distributed else 1

    def _allocate_tensor(self, shape, dtype, return_peers=False, take_ownership=False):
        import torch

        from ..distributed import _runtime
        if self.is_distributed:
            return _runtime.symmetric(shape, dtype, peers=bool(return_peers))
        dt = _runtime._torch_dtype(dtype, torch)
        t = torch.zeros(_runtime._shape(shape), dtype=dt, device=self.device)
        return [t] if return_peers else t

    def __repr__(self):
        return "<tilelang.Allocator %s size %d>" % (
            "distributed" if self.is_distributed else "local", self.size)


def get_allocator(size=2**30, device="cuda", is_distributed=True, local_rank=0, num_local_ranks=1,
                  group=None):
    """TileScale's allocator: symmetric tensors over the process's heap (init_distributed or
    init_dist first)."""
    return Allocator(size, device, is_distributed, local_rank, num_local_ranks, group)


def tensor(shape, dtype, device=None, allocator=None, return_peers=None):
    """A tensor from `allocator` (symmetric: zero-filled, the same heap offset on every rank;
    return_peers=True gives this node's ranks' copies, indexed by local rank), or without one
    an uninitialised torch tensor on `device` (default: the current CUDA device)."""
    if allocator is not None:
        return allocator._allocate_tensor(shape, dtype, return_peers=bool(return_peers))
    import torch

    from ..distributed import _runtime
    dt = _runtime._torch_dtype(dtype, torch)
    t = torch.empty(_runtime._shape(shape), dtype=dt, device=device or "cuda")
    return [t] if return_peers else t
