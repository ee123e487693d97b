"""TileScale's host helpers for distributed scripts, over libtilescale's distributed runtime.

    WORLD_SIZE, RANK, LOCAL_RANK[, TP_GROUP[, LC_GROUP]] = init_distributed(...)
        one process per GPU (torchrun, `tilescale launch`, srun, mpirun): the group comes from
        the launcher's environment (tilescale.dist_env)
    rank, num_ranks, group = init_dist(local_rank, num_local_ranks)
        one process per node that spawns its GPUs' processes (torch.multiprocessing.spawn):
        WORLD_SIZE / RANK count nodes, as in TileScale

Both initialise torch.distributed (NCCL) and then this process's distributed context (_runtime:
the library's rendezvous and symmetric heap on the rank's GPU).  dtype_map, perf_fn, CUDA_CHECK,
has_fullmesh_nvlink, create_mapped_tensor, set_signal and wait_eq are the helpers the example
scripts call.  torch is imported by the functions that need it, not by importing this module."""
import collections.abc
import datetime
import functools
import os
import re
import shutil
import subprocess

from . import _runtime

__all__ = ["init_dist", "init_distributed", "dtype_map", "perf_fn", "CUDA_CHECK",
           "has_fullmesh_nvlink", "create_mapped_tensor", "set_signal", "wait_eq",
           "cuda_stream_max_priority", "supports_p2p_native_atomic"]


# ---- dtypes ----------------------------------------------------------------------------------
class _DtypeMap(collections.abc.Mapping):
    """{"float16": torch.float16, ...}: TileLang dtype names (and short forms) -> torch dtypes,
    read from torch when first used."""
    NAMES = {"float16": "float16", "half": "float16", "fp16": "float16", "bfloat16": "bfloat16",
             "bf16": "bfloat16", "float32": "float32", "float": "float32", "fp32": "float32",
             "float64": "float64", "int8": "int8", "int16": "int16", "int32": "int32",
             "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
             "uint64": "uint64", "bool": "bool", "float8_e4m3": "float8_e4m3fn",
             "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}

    def _table(self):
        import torch
        return {k: getattr(torch, v) for k, v in self.NAMES.items() if hasattr(torch, v)}

    def __getitem__(self, key):
        table = self._table()
        if key not in table:
            raise KeyError("tilelang.distributed.dtype_map: unknown dtype %r (known: %s)"
                           % (key, ", ".join(sorted(table))))
        return table[key]

    def __iter__(self):
        return iter(self._table())

    def __len__(self):
        return len(self._table())


dtype_map = _DtypeMap()


# ---- forming the group -----------------------------------------------------------------------
def _nccl_init(rank, world_size, init_method=None, timeout_s=1800):
    import torch.distributed as dist
    if dist.is_initialized():
        if (dist.get_rank(), dist.get_world_size()) != (rank, world_size):
            raise RuntimeError(
                "tilelang.distributed: torch.distributed is already rank %d of %d, the launcher "
                "says rank %d of %d" % (dist.get_rank(), dist.get_world_size(), rank, world_size))
        return
    kw = {"backend": "nccl", "world_size": world_size, "rank": rank,
          "timeout": datetime.timedelta(seconds=timeout_s)}
    if init_method:
        kw["init_method"] = init_method
    dist.init_process_group(**kw)


def _start_runtime(rank, world_size, local_rank, local_world_size, master_addr):
    port = _runtime.rendezvous_port(rank, master_addr)
    return _runtime.start(rank, world_size, local_rank, local_world_size, master_addr, port)


def export_torch_env():
    """The launcher's group (tilescale.dist_env: `tilescale launch`, torchrun, srun, mpirun),
    also written as the variables torch's env:// rendezvous reads (MASTER_ADDR, MASTER_PORT,
    RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE) where the launcher did not set them: srun
    and mpirun set none of them.  Returns the dist_env."""
    import tilescale
    env = tilescale.dist_env()
    for name, value in (("MASTER_ADDR", env.master_addr), ("MASTER_PORT", env.master_port),
                        ("RANK", env.rank), ("WORLD_SIZE", env.world_size),
                        ("LOCAL_RANK", env.local_rank), ("LOCAL_WORLD_SIZE", env.local_world_size)):
        os.environ.setdefault(name, str(value))
    return env


def init_distributed(return_tp_group=False, init_nvshmem=True, return_lc_group=False):
    """For one process per GPU.  Returns (WORLD_SIZE, RANK, LOCAL_RANK), then TP_GROUP (every
    rank) when return_tp_group, then LC_GROUP (this node's ranks) when return_lc_group.
    init_nvshmem is accepted for TileScale's scripts: the symmetric heap (nvshmem or ipc backend,
    $TILESCALE_DIST_BACKEND / TILELANG_USE_NVSHMEM) is always created."""
    import torch
    import torch.distributed as dist
    env = export_torch_env()
    world, rank, local_rank = env.world_size, env.rank, env.local_rank
    torch.cuda.set_device(local_rank)
    _nccl_init(rank, world)
    out = [world, rank, local_rank]
    tp_group = dist.new_group(ranks=list(range(world)), backend="nccl")
    lc_group = None
    local_world = env.local_world_size
    if world % local_world == 0:  # every node's group, created by every rank in the same order
        for node in range(world // local_world):
            g = dist.new_group(ranks=list(range(node * local_world, (node + 1) * local_world)),
                               backend="nccl")
            if node == rank // local_world:
                lc_group = g
    elif return_lc_group:
        raise RuntimeError("tilelang.distributed: LOCAL_WORLD_SIZE %d does not divide WORLD_SIZE %d"
                           % (local_world, world))
    _start_runtime(rank, world, local_rank, local_world, os.environ["MASTER_ADDR"])
    torch.cuda.synchronize()
    if return_tp_group:
        out.append(tp_group)
    if return_lc_group:
        out.append(lc_group)
    return tuple(out)


def init_dist(local_rank, num_local_ranks):
    """For one process per node spawning num_local_ranks GPU processes (TileScale's IPC
    examples).  WORLD_SIZE / RANK in the environment count nodes (1 / 0 when unset); the
    rendezvous is tcp://MASTER_ADDR:MASTER_PORT (127.0.0.1:8361).  As in TileScale, it makes
    bfloat16 and CUDA torch's defaults and selects GPU local_rank.  Returns (rank, num_ranks,
    group of every rank)."""
    import torch
    import torch.distributed as dist
    ip = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = int(os.environ.get("MASTER_PORT", "8361"))
    num_nodes = int(os.environ.get("WORLD_SIZE", "1"))
    node_rank = int(os.environ.get("RANK", "0"))
    local_rank, num_local_ranks = int(local_rank), int(num_local_ranks)
    world = num_nodes * num_local_ranks
    rank = node_rank * num_local_ranks + local_rank
    torch.cuda.set_device(local_rank)
    _nccl_init(rank, world, init_method="tcp://%s:%d" % (ip, port))
    torch.set_default_dtype(torch.bfloat16)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device("cuda")
    group = dist.new_group(list(range(world)))
    _start_runtime(rank, world, local_rank, num_local_ranks, ip)
    return dist.get_rank(), dist.get_world_size(), group


# ---- timing and checks ---------------------------------------------------------------------
def perf_fn(fn, warmup, rep):
    """Average milliseconds of fn() over `rep` calls after `warmup` calls (CUDA events on the
    current stream)."""
    import torch
    for _ in range(int(warmup)):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(int(rep)):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / max(int(rep), 1)


def CUDA_CHECK(err):  # noqa: N802 (TileScale's name)
    """Raises RuntimeError unless `err` (a cuda-python CUresult / cudaError_t, an int, or a
    tuple whose first item is one) means success."""
    if isinstance(err, tuple):
        err = err[0] if err else 0
    try:
        code = int(err)
    except (TypeError, ValueError):
        code = int(getattr(err, "value", 0))
    if code != 0:
        raise RuntimeError("CUDA error: %s (%d)" % (getattr(err, "name", err), code))


@functools.lru_cache(maxsize=None)
def has_fullmesh_nvlink():
    """Whether every pair of visible GPUs is connected by NVLink (pynvml, else `nvidia-smi
    topo -m`); False when neither can tell.  Asked once per process: TileScale's reduce-scatter
    asserts it on every call, and a pynvml init or an nvidia-smi run (10-100 ms) per call would
    leave the GPU idle between overlapped GEMM-RS calls."""
    try:
        import pynvml
        pynvml.nvmlInit()
        try:
            n = pynvml.nvmlDeviceGetCount()
            hs = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(n)]
            for i in range(n):
                for j in range(n):
                    if i != j and pynvml.nvmlDeviceGetP2PStatus(
                            hs[i], hs[j], pynvml.NVML_P2P_CAPS_INDEX_NVLINK) != pynvml.NVML_P2P_STATUS_OK:
                        return False
            return True
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 (no pynvml: ask nvidia-smi)
        pass
    return _topo_fullmesh(_nvidia_smi_topo())


def _nvidia_smi_topo():
    exe = shutil.which("nvidia-smi")
    if not exe:
        return ""
    try:
        return subprocess.run([exe, "topo", "-m"], capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _topo_fullmesh(text):
    """`nvidia-smi topo -m`'s matrix: every GPU row links every other GPU with NV<n>."""
    rows = [ln.split() for ln in text.splitlines() if re.match(r"GPU\d+\s", ln)]  # not the header
    if not rows:
        return False
    n = len(rows)
    for i, cells in enumerate(rows):
        links = cells[1:1 + n]
        if len(links) < n:
            return False
        for j, c in enumerate(links):
            if i != j and not re.fullmatch(r"NV\d+", c):
                return False
    return True


def cuda_stream_max_priority():
    import torch
    return torch.cuda.Stream.priority_range()[1]


def supports_p2p_native_atomic():
    """Whether GPU 0 and 1 can do native atomics over their link (True with NVLink)."""
    return has_fullmesh_nvlink()


# ---- host-mapped memory and stream signals ---------------------------------------------------
class _Mapped:
    """Pinned host memory from ts_dist_host_counters_alloc, freed with its last view."""
    __slots__ = ("dist", "host", "__weakref__")


def _free_mapped(dist, host):
    try:
        dist.host_counters_free(host)
    except Exception:  # noqa: BLE001 (the group is gone: process exit frees it)
        pass


def create_mapped_tensor(shape, dtype):
    """(host tensor, device tensor) over the same zero-filled pinned bytes: the GPU writes
    through the device tensor, the host polls the host one."""
    import weakref

    import torch

    from . import _dlpack
    shape = _runtime._shape(shape)
    dtype = _runtime._torch_dtype(dtype, torch)
    if not _runtime.active():  # pinned memory is mapped at the same address (unified addressing)
        host = torch.zeros(shape, dtype=dtype, pin_memory=True)
        dev = _dlpack.as_tensor(host.data_ptr(), shape, dtype, torch.cuda.current_device(), host,
                                torch)
        return host, dev
    d = _runtime.get()
    nbytes = max(_dlpack.itemsize_of(dtype, torch), 1)
    for s in shape:
        nbytes *= s
    h, p = d.host_counters_alloc(max(nbytes, 1))
    owner = _Mapped()
    owner.dist, owner.host = d, h
    weakref.finalize(owner, _free_mapped, d, h).atexit = False
    host = _dlpack.as_tensor(h, shape, dtype, "cpu", owner, torch)
    dev = _dlpack.as_tensor(p, shape, dtype, d.ctx.device, owner, torch)
    return host, dev


def _stream_of(stream):
    import torch
    return stream if stream is not None else torch.cuda.current_stream()


def set_signal(signal_tensor, signal, stream=None):
    """Writes `signal` into signal_tensor[0] (32 or 64-bit) when `stream` gets there."""
    bits = 64 if signal_tensor.element_size() == 8 else 32
    _runtime.get().stream_write(signal_tensor.data_ptr(), signal, _stream_of(stream), bits)


def wait_eq(signal_tensor, signal, stream=None, require_i64=False):
    """Makes `stream` wait until signal_tensor[0] == signal."""
    bits = 64 if require_i64 or signal_tensor.element_size() == 8 else 32
    _runtime.get().stream_wait(signal_tensor.data_ptr(), signal, "eq", _stream_of(stream), bits)
