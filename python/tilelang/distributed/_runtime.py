"""The distributed state of this process: its one tilescale.Dist (rendezvous + symmetric heap,
include/tilescale_dist.h), the kernels waiting for it, and symmetric tensors.

    init_distributed() / init_dist()      (utils.py: torch.distributed first, then start())
      -> start(rank, world, ...)           Dist on the package's compile context, on the GPU
                                           LOCAL_RANK; kernels compiled before it are attached
    tilelang.compile / @tilelang.jit      -> track_kernel(): attached at once (the heap table,
                                           NVSHMEM module init) so the first launch sees the heap
    tilelang.tensor / pynvshmem tensors   -> symmetric(): ts_dist_malloc, torch views (_dlpack)

Symmetric memory is collective: every rank allocates and frees the same sizes in the same
order.  Allocation happens where the script asks (every rank runs the same code); freeing
cannot happen where torch drops the last view (a deleter may run at a different moment on each
rank, and a collective there could deadlock), so a dead block is queued and freed at the next
collective call of this module (an allocation or a barrier), in address order.  The library
checks that the ranks agree and names them when they do not.

The rendezvous of the C library needs a port of its own: rank 0 of torch.distributed already
listens on MASTER_PORT (or torchrun's agent does).  Rank 0 picks a free port and publishes it
through torch.distributed's store.

Importing this module needs neither torch nor a GPU."""
import os
import random
import socket
import threading
import weakref

__all__ = ["active", "get", "start", "finalize", "barrier", "track_kernel", "symmetric",
           "symmetric_empty", "kernel_uses", "DEFAULT_HEAP_BYTES"]

# A little above TileScale's usual allocator size (2**30): the library keeps the heap's first
# 4 KiB for its own barrier words.  $TILESCALE_DIST_HEAP_BYTES overrides it.
DEFAULT_HEAP_BYTES = 2**30 + 2**26

_lock = threading.RLock()
_dist = None                 # tilescale.Dist
_generation = 0              # bumped by finalize(): blocks of an old heap are never freed again
_kernels = weakref.WeakSet()  # JITKernels compiled before start(): attached by start()
_pending = []                # addresses of dead blocks, freed at the next collective


class DistributedError(RuntimeError):
    """A distributed call made in the wrong state (no group yet, two different groups)."""


def active():
    return _dist is not None


def get():
    """The process's tilescale.Dist; DistributedError when no group was formed."""
    if _dist is None:
        raise DistributedError(
            "tilelang.distributed: this process has no distributed context; call "
            "tilelang.distributed.init_distributed() (torchrun, `tilescale launch`) or "
            "init_dist(local_rank, num_local_ranks) first")
    return _dist


def _heap_bytes():
    return 0 if os.environ.get("TILESCALE_DIST_HEAP_BYTES") else DEFAULT_HEAP_BYTES


def _bind_port(host, port):
    """The port a socket bound to (host, port) got (port 0: the kernel's choice), released
    again; None when it cannot be bound."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return None
        return s.getsockname()[1]


def _bindable(host, port):
    return _bind_port(host, port) is not None


def _free_port(host):
    """A free port below the ephemeral range (what bind(0) gives lies inside it, where the
    job's NCCL / NVSHMEM sockets, bound to port 0 meanwhile, can take it before rank 0 listens:
    "address already in use", seen on 2 GPUs); bind(0)'s when none of 64 tries is free."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    base = max(1024, low - 16384)
    rng = random.Random()
    for _ in range(64 if low - 1 > base else 0):
        port = rng.randrange(base, low - 1)
        if _bindable(host, port) or (host and _bindable("", port)):
            return port
    port = _bind_port(host, 0) or _bind_port("", 0)
    if port is None:
        raise OSError("tilelang.distributed: no TCP port can be bound on this host")
    return port


def rendezvous_port(rank, host):
    """A port for the library's rendezvous that every rank agrees on: rank 0 picks a free one
    and publishes it through torch.distributed (which must be initialised)."""
    import torch.distributed as tdist
    key = "tilelang.distributed/rdzv_port/%d" % _generation
    port = _free_port(host) if rank == 0 else 0
    store = None
    try:
        from torch.distributed import distributed_c10d
        store = distributed_c10d._get_default_store()
    except Exception:  # noqa: BLE001 (an older torch: broadcast the number instead)
        store = None
    if store is not None:
        if rank == 0:
            store.set(key, str(port))
        else:
            port = int(store.get(key))
        return port
    obj = [port]
    tdist.broadcast_object_list(obj, src=0)
    return int(obj[0])


def start(rank, world_size, local_rank, local_world_size, master_addr=None, master_port=None,
          backend=None, host_only=False):
    """Joins (collectively) the group, or returns the one this process already has (which must
    be the same group)."""
    global _dist
    with _lock:
        if _dist is not None:
            if (_dist.rank, _dist.world_size) != (rank, world_size):
                raise DistributedError(
                    "tilelang.distributed: this process is already rank %d of %d; it cannot also "
                    "be rank %d of %d" % (_dist.rank, _dist.world_size, rank, world_size))
            return _dist
        import tilescale
        from .. import _compiler
        if not host_only:
            _compiler.use_device(local_rank)
        d = tilescale.Dist(_compiler.context(), rank=rank, world_size=world_size,
                           local_rank=local_rank, local_world_size=local_world_size,
                           master_addr=master_addr, master_port=master_port, backend=backend,
                           heap_bytes=_heap_bytes(), host_only=host_only)
        d.host_only = bool(host_only)
        if _dist is None and not getattr(start, "_hooked", False):
            import atexit
            import sys
            sys.excepthook = _note_failure(sys.excepthook)
            atexit.register(_at_exit)
            start._hooked = True
        _dist = d
        waiting = list(_kernels)
        _kernels.clear()
    for k in waiting:
        _attach(k)
    return d


_failed = False  # an uncaught exception reached sys.excepthook in this process


def _note_failure(hook):
    def excepthook(*exc):
        global _failed
        _failed = True
        return hook(*exc)
    return excepthook


def _at_exit():
    """A last barrier (at most 10 s) so that no rank unmaps its heap while a peer's kernel may
    still write into it (simple scripts end without one).  Skipped after an uncaught exception:
    the other ranks may never come.  The heap itself goes with the process."""
    d = _dist
    if d is None or _failed or getattr(d, "host_only", False):
        return
    try:
        d.set_op_timeout(10000)
        d.barrier(None)
    except Exception:  # noqa: BLE001 (a peer already gone: nothing left to protect)
        pass


def finalize():
    """Collective: frees what is queued, then the heap and the rendezvous."""
    global _dist, _generation
    with _lock:
        if _dist is None:
            return
        _flush()
        d, _dist = _dist, None
        _generation += 1
        _pending.clear()
    d.finalize()


def barrier(stream=None):
    """Collective: this rank's GPU work (or `stream`'s) finished on every rank."""
    d = get()
    _flush()
    d.barrier(stream)


# ---- kernels ---------------------------------------------------------------------------------
def kernel_uses(kernel):
    """{'device_lib', 'nvshmem'} for a tilescale.Kernel or JITKernel (empty: ordinary)."""
    import tilescale
    return tilescale.Dist.kernel_uses(kernel)


def _attach(kernel):
    d = _dist
    if d is None or getattr(d, "host_only", False):
        return
    d.attach(kernel)


def track_kernel(kernel):
    """Called for every compiled JITKernel: attached now when the group exists, else when it
    is formed (a kernel that uses no distributed feature is left alone by the library)."""
    if _dist is not None:
        _attach(kernel)
    else:
        _kernels.add(kernel)


def attach(kernel):
    """kernel.initialize(): (re)uploads the heap table into the kernel's module."""
    get()
    _attach(kernel)


# ---- symmetric memory ---------------------------------------------------------------------------
class _Block:
    """One ts_dist_malloc block; every torch view of it references this object (through the
    DLPack capsule), so it dies with the last view and queues the block's free."""
    __slots__ = ("ptr", "nbytes", "__weakref__")

    def __init__(self, ptr, nbytes):
        self.ptr, self.nbytes = ptr, nbytes


def _block_died(ptr, generation):
    if generation == _generation:
        _pending.append(ptr)


def _flush():
    """Frees the queued blocks (collective: called at the same point on every rank)."""
    with _lock:
        items = sorted(set(_pending))
        del _pending[:]
        d = _dist
    for p in items:
        d.free(p)


def pending_frees():
    return len(_pending)


def _torch_dtype(dtype, torch):
    if isinstance(dtype, torch.dtype):
        return dtype
    from ..language.dtypes import dtype as tl_dtype
    return tl_dtype(str(dtype)).as_torch()


def _shape(shape):
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def symmetric(shape, dtype, peers=False):
    """A zero-filled tensor at the same heap offset on every rank (collective).  peers=True:
    the list of this node's ranks' copies instead, indexed by local rank, each a view usable
    from this rank's GPU (this rank's own entry is the local tensor)."""
    d = get()
    if getattr(d, "host_only", False):
        raise DistributedError("tilelang.distributed: the group has no GPU heap (host_only)")
    import torch
    from . import _dlpack
    shape, dtype = _shape(shape), _torch_dtype(dtype, torch)
    numel = 1
    for s in shape:
        numel *= s
    nbytes = numel * _dlpack.itemsize_of(dtype, torch)
    _flush()
    ptr = d.malloc(nbytes)
    block = _Block(ptr, nbytes)
    weakref.finalize(block, _block_died, ptr, _generation).atexit = False
    device = d.ctx.device
    if not peers:
        return _dlpack.as_tensor(ptr, shape, dtype, device, block, torch)
    out, base = [], d.rank - d.local_rank
    for i in range(d.local_world_size):
        p = ptr if base + i == d.rank else d.peer_ptr(ptr, base + i)
        out.append(_dlpack.as_tensor(p, shape, dtype, device, block, torch))
    return out


def symmetric_empty(shape, dtype):
    return symmetric(shape, dtype)
