"""pynvshmem — the host API TileScale's NVSHMEM examples import, as a shim over tilelang's
distributed context (libtilescale's symmetric heap; NVSHMEM itself when the group's backend
is nvshmem, CUDA IPC within a node otherwise).

    WORLD_SIZE, RANK, LOCAL_RANK = tilelang.distributed.init_distributed()
    x = pynvshmem.nvshmem_create_tensor([M, N], torch.float16)     # symmetric, zero-filled
    peers = pynvshmem.nvshmem_create_tensor_list_intra_node([M], torch.int32)
    pynvshmem.nvshmem_barrier_all()

Tensors are torch tensors on this rank's GPU; creating one is collective (every rank, same
order), and they are freed (collectively, at the next allocation or barrier) after their last
view dies.  NVSHMEM's own bootstrap calls (unique ids, init_attr) have no meaning here: the
group is formed by init_distributed and they raise NotImplementedError saying so."""
import enum

from tilelang.distributed import _runtime

__all__ = ["Team", "CmpType", "Amo", "init_nvshmem_by_uniqueid", "nvshmem_my_pe", "nvshmem_n_pes",
           "nvshmem_team_my_pe", "nvshmem_team_n_pes", "nvshmem_create_tensor",
           "nvshmem_create_tensor_list_intra_node", "nvshmem_barrier_all",
           "nvshmem_barrier_all_on_stream", "nvshmemx_barrier_all_on_stream", "nvshmem_malloc",
           "nvshmem_free", "nvshmem_ptr", "nvshmemx_cumodule_init", "write32_on_stream",
           "write64_on_stream", "nvshmem_free_tensor_sync", "nvshmemx_get_uniqueid",
           "nvshmemx_init_attr_with_uniqueid"]


class Team(enum.IntEnum):
    """NVSHMEM's predefined teams (nvshmem_team_t values)."""
    INVALID = -1
    WORLD = 0
    SHARED = 1
    NODE = 2
    SAME_MYPE_NODE = 3
    SAME_GPU = 4
    GPU_LEADERS = 5
    TEAMS_MIN = 6


class CmpType(enum.IntEnum):
    """nvshmem_signal_wait_until comparisons (NVSHMEM's numbering, not TileScale's wait_*)."""
    EQ = 0
    NE = 1
    GT = 2
    LE = 3
    LT = 4
    GE = 5


class Amo(enum.IntEnum):
    """NVSHMEM atomic / signal operations."""
    ACK = 1
    INC = 2
    SET = 3
    ADD = 4
    AND = 5
    OR = 6
    XOR = 7
    SIGNAL = 8
    SIGNAL_SET = 9
    SIGNAL_ADD = 10
    END_OF_NONFETCH = 11
    FETCH = 12
    FETCH_INC = 13
    FETCH_ADD = 14
    FETCH_AND = 15
    FETCH_OR = 16
    FETCH_XOR = 17
    SWAP = 18
    COMPARE_SWAP = 19


def _dist():
    return _runtime.get()


def init_nvshmem_by_uniqueid(group=None):
    """TileScale's NVSHMEM bootstrap over a torch group: here the group is the one
    init_distributed formed (forming it from torch.distributed when it was not)."""
    if _runtime.active():
        return
    import torch.distributed as dist
    from tilelang.distributed.utils import _start_runtime
    import tilescale
    env = tilescale.dist_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    local_world = env.local_world_size if env.world_size == world else world
    _start_runtime(rank, world, rank % local_world, local_world, env.master_addr)


def nvshmem_my_pe():
    return _dist().rank


def nvshmem_n_pes():
    return _dist().world_size


def _team_shape(team):
    d = _dist()
    team = Team(int(team))
    if team == Team.WORLD:
        return d.rank, d.world_size
    if team in (Team.SHARED, Team.NODE):
        return d.local_rank, d.local_world_size
    if team == Team.SAME_MYPE_NODE:  # the PEs with my local rank, one per node
        return d.rank // d.local_world_size, max(d.world_size // d.local_world_size, 1)
    if team == Team.SAME_GPU:
        return 0, 1
    if team == Team.GPU_LEADERS:
        return d.rank, d.world_size  # one PE per GPU: every PE leads its GPU
    raise ValueError("pynvshmem: team %r has no members" % (team,))


def nvshmem_team_my_pe(team):
    return _team_shape(team)[0]


def nvshmem_team_n_pes(team):
    return _team_shape(team)[1]


def nvshmem_create_tensor(shape, dtype):
    """A zero-filled symmetric tensor (collective)."""
    return _runtime.symmetric(shape, dtype)


def nvshmem_create_tensor_list_intra_node(shape, dtype):
    """One symmetric allocation seen from every rank of this node: entry i is local rank i's
    copy, usable from this GPU (entry LOCAL_RANK is the local tensor)."""
    return _runtime.symmetric(shape, dtype, peers=True)


def nvshmem_free_tensor_sync(tensor):
    """Dropping the last view frees the tensor; this only waits for every rank."""
    del tensor
    nvshmem_barrier_all()


def nvshmem_barrier_all():
    """Waits for this GPU's work, then for every PE."""
    _runtime.barrier(None)


def nvshmem_barrier_all_on_stream(stream=None):
    """Waits for `stream` (torch's current one when None), then for every PE (host-blocking)."""
    import torch
    _runtime.barrier(stream if stream is not None else torch.cuda.current_stream())


nvshmemx_barrier_all_on_stream = nvshmem_barrier_all_on_stream


def nvshmem_malloc(nbytes):
    """A symmetric block's device address (collective); free it with nvshmem_free."""
    return _dist().malloc(int(nbytes))


def nvshmem_free(ptr):
    _runtime._flush()
    _dist().free(ptr)


def nvshmem_ptr(ptr, pe):
    """The address of PE `pe`'s copy usable from this GPU, 0 when it is not mapped here."""
    try:
        return _dist().peer_ptr(ptr, int(pe))
    except Exception:  # noqa: BLE001 (NVSHMEM answers NULL for an unreachable PE)
        return 0


def nvshmemx_cumodule_init(module):
    """Gives a CUmodule (an int) the heap table and, on the nvshmem backend, NVSHMEM's state."""
    _dist().attach_module(int(module))


def write32_on_stream(tensor, value, stream=None):
    from tilelang.distributed.utils import set_signal
    if tensor.element_size() != 4:
        raise TypeError("pynvshmem.write32_on_stream: needs a 4-byte tensor, got %s" % tensor.dtype)
    set_signal(tensor, value, stream)


def write64_on_stream(tensor, value, stream=None):
    from tilelang.distributed.utils import set_signal
    if tensor.element_size() != 8:
        raise TypeError("pynvshmem.write64_on_stream: needs an 8-byte tensor, got %s" % tensor.dtype)
    set_signal(tensor, value, stream)


def _not_here(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(
            "pynvshmem.%s: TileScale forms the group itself (tilelang.distributed."
            "init_distributed, or the library's rendezvous); NVSHMEM's unique-id bootstrap is "
            "not exposed" % name)
    fn.__name__ = name
    return fn


nvshmemx_get_uniqueid = _not_here("nvshmemx_get_uniqueid")
nvshmemx_init_attr_with_uniqueid = _not_here("nvshmemx_init_attr_with_uniqueid")
