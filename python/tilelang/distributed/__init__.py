"""tilelang.distributed — TileScale's host API for multi-GPU scripts, over libtilescale's
distributed runtime (include/tilescale_dist.h: rendezvous, symmetric heap, heap table of every
compiled kernel).

    from tilelang.distributed import init_distributed, init_dist, dtype_map, perf_fn
    WORLD_SIZE, RANK, LOCAL_RANK, TP_GROUP = init_distributed(return_tp_group=True)
    allocator = tilelang.get_allocator(size=2**30, ...)          # the process's heap
    x = tilelang.tensor((M, N), torch.float16, allocator=allocator)   # symmetric, torch
    peers = tilelang.tensor((M,), torch.int32, allocator=allocator, return_peers=True)
    kernel = tilelang.compile(func)                              # attached to the heap

Run scripts with `tilescale launch -n N python3 script.py` (or torchrun, srun, mpirun), or
`GPUS=N bash $(python3 -c "import tilelang.distributed as d; print(d.LAUNCH_SCRIPT)") script.py`.
The backend is $TILESCALE_DIST_BACKEND (ipc | nvshmem), else nvshmem when TILELANG_USE_NVSHMEM=1,
else ipc; the heap size $TILESCALE_DIST_HEAP_BYTES (default 1 GiB + 64 MiB).  The `pynvshmem`
module is a shim over the same heap."""
import os

from . import _runtime
from ._runtime import DistributedError
from .utils import (CUDA_CHECK, create_mapped_tensor, cuda_stream_max_priority, dtype_map,
                    has_fullmesh_nvlink, init_dist, init_distributed, perf_fn, set_signal,
                    supports_p2p_native_atomic, wait_eq)

LAUNCH_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.sh")

__all__ = ["init_dist", "init_distributed", "dtype_map", "perf_fn", "CUDA_CHECK",
           "has_fullmesh_nvlink", "create_mapped_tensor", "set_signal", "wait_eq",
           "cuda_stream_max_priority", "supports_p2p_native_atomic", "barrier", "finalize",
           "is_initialized", "get_rank", "get_world_size", "get_local_rank", "context",
           "DistributedError", "LAUNCH_SCRIPT"]


def is_initialized():
    """Whether this process has joined a group (init_distributed / init_dist)."""
    return _runtime.active()


def context():
    """The process's tilescale.Dist (rank, world_size, malloc, peer_ptr, barrier, ...)."""
    return _runtime.get()


def get_rank():
    return _runtime.get().rank


def get_world_size():
    return _runtime.get().world_size


def get_local_rank():
    return _runtime.get().local_rank


def barrier(stream=None):
    """Collective: waits for this GPU's work (or `stream`'s), then for every rank."""
    _runtime.barrier(stream)


def finalize():
    """Collective: frees the symmetric heap and leaves the group (process exit does it too)."""
    _runtime.finalize()
