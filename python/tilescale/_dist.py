"""tilescale.Dist — the distributed runtime of include/tilescale_dist.h over ctypes.

    env = tilescale.dist_env()          # the launcher's view: rank, world size, local rank ...
    ctx = tilescale.Context(device=env.local_rank)
    d = tilescale.Dist(ctx)             # collective: rendezvous + symmetric heap
    p = d.malloc(1 << 20)               # collective: same heap offset on every rank
    q = d.peer_ptr(p, (d.rank + 1) % d.world_size)
    d.attach(kernel)                    # its module gets the heap table (rank, peers' bases)
    d.free(p); d.finalize()

Addresses are plain ints (device pointers); streams are ints (CUstream), torch.cuda.Stream
objects or None.  Every failure raises TileScaleError with the library's message."""
import ctypes
from collections import namedtuple

from . import _lib
from ._lib import lib as _c

DistEnv = namedtuple("DistEnv", "rank world_size local_rank local_world_size master_addr "
                                "master_port launcher")
DistEnv.__doc__ = ("The group this process belongs to as its launcher's environment says "
                   "(ts_dist_env_read): torchrun / tilescale launch, Open MPI, MPICH, SLURM.")


def _errors():
    from . import TileScaleError, _check
    return TileScaleError, _check


def dist_env():
    """DistEnv of this process (a group of one when no launcher is recognised); a malformed
    environment raises TileScaleError naming the variable."""
    e = _lib.ts_dist_env()
    st = _c.ts_dist_env_read(None, ctypes.byref(e))
    if st != _lib.TS_OK:
        from . import Context, _check  # a context only to hold the message
        ctx = Context()
        _check(_c.ts_dist_env_read(ctx._h, ctypes.byref(e)), ctx._h)
    return DistEnv(e.rank, e.world_size, e.local_rank, e.local_world_size,
                   e.master_addr.decode(), e.master_port, (e.launcher or b"none").decode())


def _stream(s):
    if s is None or isinstance(s, int):
        return s or None
    h = getattr(s, "cuda_stream", None)  # torch.cuda.Stream
    if h is None:
        raise TypeError("tilescale: stream must be an int CUstream, a torch.cuda.Stream or None, "
                        "not %s" % type(s).__name__)
    return h or None


def _addr(x, what):
    """A device address: an int, or anything with data_ptr() (a torch tensor)."""
    if hasattr(x, "data_ptr"):
        x = x.data_ptr()
    if not isinstance(x, int) or isinstance(x, bool):
        raise TypeError("tilescale: %s must be a device address (int) or a tensor, not %s"
                        % (what, type(x).__name__))
    return x


class Dist:
    """One process's membership of a group (ts_dist).  Creating it is collective: every rank
    of the group must construct one (same options).  Fields left None come from the launcher's
    environment; backend "ipc", "nvshmem" or None ($TILESCALE_DIST_BACKEND, else ipc)."""

    def __init__(self, ctx, *, rank=None, world_size=None, local_rank=None, local_world_size=None,
                 master_addr=None, master_port=None, backend=None, heap_bytes=0, host_only=False,
                 connect_timeout_ms=0, op_timeout_ms=0):
        from . import _c_str
        TileScaleError, _check = _errors()
        o = _c.ts_dist_default_options()
        for name, v in (("rank", rank), ("world_size", world_size), ("local_rank", local_rank),
                        ("local_world_size", local_world_size), ("master_port", master_port)):
            if v is not None:
                setattr(o, name, int(v))
        if backend is not None and backend not in _lib.TS_DIST_BACKENDS:
            raise ValueError("tilescale: backend must be 'ipc', 'nvshmem' or None, not %r" % (backend,))
        o.backend = _lib.TS_DIST_BACKENDS[backend or "default"]
        self._addr_keep = _c_str(master_addr, "master_addr", allow_none=True)
        o.master_addr = self._addr_keep
        o.heap_bytes, o.host_only = int(heap_bytes), int(bool(host_only))
        o.connect_timeout_ms, o.op_timeout_ms = int(connect_timeout_ms), int(op_timeout_ms)
        h = ctypes.c_void_p()
        self.ctx, self._ctxh = ctx, ctx._h
        _check(_c.ts_dist_init(ctx._h, ctypes.byref(o), ctypes.byref(h)), ctx._h)
        self._h = h
        self.rank = _c.ts_dist_rank(h)
        self.world_size = _c.ts_dist_world_size(h)
        self.local_rank = _c.ts_dist_local_rank(h)
        self.local_world_size = _c.ts_dist_local_world_size(h)
        self.backend = _c.ts_dist_backend_name(_c.ts_dist_backend_of(h)).decode()

    def _check(self, st):
        _errors()[1](st, self._ctxh)

    @property
    def handle(self):
        if not self._h.value:
            raise RuntimeError("tilescale: this Dist was finalized")
        return self._h

    @property
    def heap_base(self):
        return _c.ts_dist_heap_base(self.handle) or 0

    @property
    def heap_size(self):
        return _c.ts_dist_heap_size(self.handle)

    def finalize(self):
        """Collective: barrier, unmap the peers, free the heap."""
        if self._h.value:
            _c.ts_dist_finalize(self._h)
            self._h.value = None

    # ---- symmetric memory (collective) ----------------------------------------------------------
    def malloc(self, nbytes):
        p = ctypes.c_void_p()
        self._check(_c.ts_dist_malloc(self.handle, int(nbytes), ctypes.byref(p)))
        return p.value

    def free(self, ptr):
        self._check(_c.ts_dist_free(self.handle, ctypes.c_void_p(_addr(ptr, "ptr"))))

    def peer_ptr(self, ptr, peer):
        out = ctypes.c_void_p()
        self._check(_c.ts_dist_peer_ptr(self.handle, ctypes.c_void_p(_addr(ptr, "ptr")),
                                        int(peer), ctypes.byref(out)))
        return out.value

    # ---- kernels ------------------------------------------------------------------------------
    def attach(self, kernel):
        """Uploads the heap table into a compiled kernel's module (loading it if needed)."""
        k = getattr(kernel, "kernel", kernel)  # tilelang.JITKernel wraps a tilescale.Kernel
        self._check(_c.ts_dist_kernel_attach(self.handle, k._h))

    @staticmethod
    def kernel_uses(kernel):
        """{'device_lib', 'nvshmem'}: what a compiled kernel's device code uses (empty for an
        ordinary kernel); such kernels read the heap table and symmetric addresses."""
        k = getattr(kernel, "kernel", kernel)
        bits = _c.ts_dist_kernel_uses(k._h)
        return {name for bit, name in ((1, "device_lib"), (2, "nvshmem")) if bits & bit}

    def attach_module(self, cu_module):
        self._check(_c.ts_dist_module_attach(self.handle, ctypes.c_void_p(int(cu_module))))

    # ---- synchronisation --------------------------------------------------------------------
    def barrier(self, stream=None):
        """Waits for `stream` (None: the whole device), then for every rank."""
        self._check(_c.ts_dist_barrier(self.handle, ctypes.c_void_p(_stream(stream))))

    def set_op_timeout(self, ms):
        """Later collectives give up after `ms` milliseconds (0: wait forever)."""
        _c.ts_dist_set_op_timeout(self.handle, int(ms))

    def allgather(self, data):
        """Every rank's bytes (all the same length), in rank order."""
        data = bytes(data)
        n = len(data)
        recv = ctypes.create_string_buffer(max(n * self.world_size, 1))
        self._check(_c.ts_dist_allgather(self.handle, ctypes.c_char_p(data), n, recv))
        raw = recv.raw
        return [raw[i * n:(i + 1) * n] for i in range(self.world_size)]

    def broadcast(self, data):
        """Rank 0's bytes on every rank (every rank passes a buffer of the same length)."""
        buf = ctypes.create_string_buffer(bytes(data), len(data))
        self._check(_c.ts_dist_broadcast(self.handle, buf, len(data)))
        return buf.raw

    # ---- host helpers ---------------------------------------------------------------------------
    def stream_write(self, addr, value, stream=None, bits=32):
        fn = _c.ts_dist_stream_write64 if bits == 64 else _c.ts_dist_stream_write32
        self._check(fn(self.handle, ctypes.c_void_p(_stream(stream)),
                       ctypes.c_void_p(_addr(addr, "addr")), int(value)))

    def stream_wait(self, addr, value, cmp="eq", stream=None, bits=32):
        if cmp not in _lib.TS_DIST_WAIT:
            raise ValueError("tilescale: cmp must be one of %s, not %r"
                             % (", ".join(_lib.TS_DIST_WAIT), cmp))
        fn = _c.ts_dist_stream_wait64 if bits == 64 else _c.ts_dist_stream_wait32
        self._check(fn(self.handle, ctypes.c_void_p(_stream(stream)),
                       ctypes.c_void_p(_addr(addr, "addr")), int(value), _lib.TS_DIST_WAIT[cmp]))

    def host_counters_alloc(self, nbytes):
        """(host address, device address) of zero-filled pinned memory the GPU can write."""
        h, d = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(_c.ts_dist_host_counters_alloc(self.handle, int(nbytes), ctypes.byref(h),
                                                   ctypes.byref(d)))
        return h.value, d.value

    def host_counters_free(self, host):
        self._check(_c.ts_dist_host_counters_free(self.handle, ctypes.c_void_p(int(host))))

    def peer_copy(self, dst, src, nbytes, stream=None):
        self._check(_c.ts_dist_peer_copy(self.handle, ctypes.c_void_p(_addr(dst, "dst")),
                                         ctypes.c_void_p(_addr(src, "src")), int(nbytes),
                                         ctypes.c_void_p(_stream(stream))))

    @property
    def copy_stream(self):
        return _c.ts_dist_copy_stream(self.handle) or 0

    def __repr__(self):
        return "<tilescale.Dist rank %d of %d (local %d of %d) backend %s>" % (
            self.rank, self.world_size, self.local_rank, self.local_world_size, self.backend)
