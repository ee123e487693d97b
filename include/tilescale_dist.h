/* tilescale_dist.h — public C API of the distributed runtime (DESIGN.md §7): one process
 * per GPU, started by `tilescale launch`, joined into a group through a TCP rendezvous
 * served by rank 0, sharing a symmetric heap that kernels address across GPUs.
 *
 *   tilescale launch -n N prog      -> RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT
 *   ts_dist_init(ctx, NULL, &d)     -> rendezvous, symmetric heap (ipc or nvshmem backend)
 *   ts_dist_malloc / ts_dist_peer_ptr / ts_dist_module_attach / ts_dist_barrier / ...
 *   ts_dist_finalize(d)
 *
 * Errors: every call returns ts_status; the message is in ts_last_error(ctx) of the
 * context given to ts_dist_init.  Collective calls (init, malloc, free, barrier,
 * allgather, finalize) must be made by every rank in the same order: the symmetric heap
 * stays symmetric because every rank runs the same deterministic allocator, and each
 * collective checks that the ranks agree (a mismatch is an error naming the ranks). */
#ifndef TILESCALE_DIST_H
#define TILESCALE_DIST_H

#include "tilescale.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_dist ts_dist;

typedef enum ts_dist_backend {
  TS_DIST_BACKEND_DEFAULT = 0, /* $TILESCALE_DIST_BACKEND (ipc|nvshmem), else ipc */
  TS_DIST_BACKEND_IPC = 1,     /* one node: cuMemAlloc heap + CUDA IPC handles, peers mapped */
  TS_DIST_BACKEND_NVSHMEM = 2  /* libnvshmem_host.so.3 by dlopen: nvshmem_malloc heap */
} ts_dist_backend;

/* Slots of the per-module table `ts_dist_meta` (device/tilescale/dist.cuh):
 * [0] rank, [1] world size, [2 + pe] the base address of pe's heap (0: not mapped). */
#define TS_DIST_META_SLOTS 1024
#define TS_DIST_MAX_RANKS (TS_DIST_META_SLOTS - 2)

typedef struct ts_dist_options {
  size_t size;               /* sizeof(ts_dist_options) */
  /* Group membership; -1 / NULL / 0 take the launcher's environment (ts_dist_env_read). */
  int rank, world_size, local_rank, local_world_size;
  const char *master_addr;
  int master_port;
  ts_dist_backend backend;
  size_t heap_bytes;         /* symmetric heap per rank; 0: $TILESCALE_DIST_HEAP_BYTES, else 1 GiB */
  int host_only;             /* no GPU, no heap: rendezvous, barrier and allgather only */
  int connect_timeout_ms;    /* forming the group; 0: $TILESCALE_RDZV_TIMEOUT_MS, else 60000 */
  int op_timeout_ms;         /* each later collective; 0: wait forever (a dead rank is still
                                detected at once: its connection closes) */
} ts_dist_options;

/* Options with every field on "take it from the environment". */
TS_API ts_dist_options ts_dist_default_options(void);

/* The group this process belongs to, as its launcher's environment says: torchrun and
 * `tilescale launch` (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE), Open MPI
 * (OMPI_COMM_WORLD_*), MPICH/Hydra (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS) or a
 * SLURM job step (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, SLURM_STEP_TASKS_PER_NODE),
 * the first family whose rank variable is set; none: a group of one.  The rendezvous is
 * MASTER_ADDR / MASTER_PORT, else (SLURM) the step's first host and a port derived from
 * SLURM_JOB_ID, else 127.0.0.1:29500.  ctx may be NULL (no message on error). */
typedef struct ts_dist_env {
  int rank, world_size, local_rank, local_world_size;
  char master_addr[256];
  int master_port;
  const char *launcher; /* "torchrun" (also tilescale launch), "openmpi", "mpich", "slurm", "none" */
} ts_dist_env;
TS_API ts_status ts_dist_env_read(ts_context *ctx, ts_dist_env *out);

/* The local rank ts_dist_env_read finds (0 when it finds none or fails): the device a rank
 * should create its ts_context on. */
TS_API int ts_dist_env_local_rank(void);

/* Joins the group and creates the symmetric heap on the context's device.  Collective. */
TS_API ts_status ts_dist_init(ts_context *ctx, const ts_dist_options *opt, ts_dist **out);
/* Collective: barrier, unmaps the peers' heaps, frees the heap, closes the rendezvous. */
TS_API void ts_dist_finalize(ts_dist *d);

TS_API int ts_dist_rank(const ts_dist *d);
TS_API int ts_dist_world_size(const ts_dist *d);
TS_API int ts_dist_local_rank(const ts_dist *d);
TS_API int ts_dist_local_world_size(const ts_dist *d);
TS_API ts_dist_backend ts_dist_backend_of(const ts_dist *d);
TS_API const char *ts_dist_backend_name(ts_dist_backend b); /* "ipc", "nvshmem" */

/* ---- symmetric memory (collective) ---------------------------------------------------- */
/* `bytes` at the same heap offset on every rank, zero-filled, aligned to 256 bytes. */
TS_API ts_status ts_dist_malloc(ts_dist *d, size_t bytes, void **ptr);
TS_API ts_status ts_dist_free(ts_dist *d, void *ptr);
/* The address of `peer`'s copy of the symmetric object `ptr` points into (a device pointer
 * usable from this rank's GPU); TS_ERR_INVALID_ARGUMENT when ptr is not in the heap or
 * the peer's heap is not mapped here (another node). */
TS_API ts_status ts_dist_peer_ptr(ts_dist *d, const void *ptr, int peer, void **out);
/* Heap base and size of this rank. */
TS_API void *ts_dist_heap_base(const ts_dist *d);
TS_API size_t ts_dist_heap_size(const ts_dist *d);

/* ---- modules ----------------------------------------------------------------------------- */
/* Makes a loaded module (a CUmodule) distributed: uploads the ts_dist_meta table (rank,
 * world size, heap bases) when the module has one, and runs nvshmemx_cumodule_init on the
 * nvshmem backend when the module uses NVSHMEM.  A module with neither is left alone. */
TS_API ts_status ts_dist_module_attach(ts_dist *d, void *cu_module);
/* The same for a compiled kernel: loads its module if needed, then attaches it. */
TS_API ts_status ts_dist_kernel_attach(ts_dist *d, ts_kernel *k);

/* What a compiled kernel's device code uses, as codegen reported it (never read from the
 * text): TS_DIST_USES_DEVICE_LIB when it calls the distributed device library (it reads the
 * heap table: symmetric addresses, ranks), TS_DIST_USES_NVSHMEM for the NVSHMEM family.
 * 0 for an ordinary kernel.  Hosts use it to give such kernels symmetric outputs. */
#define TS_DIST_USES_DEVICE_LIB 1
#define TS_DIST_USES_NVSHMEM 2
TS_API int ts_dist_kernel_uses(const ts_kernel *k);

/* ---- synchronisation and host-side collectives ----------------------------------------- */
/* Replaces options.op_timeout_ms for the collectives from now on (0: wait forever); e.g. a
 * last barrier at process exit that must not hang on a rank that is stuck elsewhere. */
TS_API void ts_dist_set_op_timeout(ts_dist *d, int op_timeout_ms);
/* Waits for `stream` (a CUstream; NULL: the whole device), then for every rank. */
TS_API ts_status ts_dist_barrier(ts_dist *d, void *stream);
/* Every rank contributes `bytes` bytes; recv (world_size * bytes) receives them in rank order. */
TS_API ts_status ts_dist_allgather(ts_dist *d, const void *send, size_t bytes, void *recv);
/* Rank 0's `bytes` bytes are copied into buf on every rank. */
TS_API ts_status ts_dist_broadcast(ts_dist *d, void *buf, size_t bytes);

/* ---- host helpers (stream-ordered signalling, copy engines) ------------------------------ */
typedef enum ts_dist_wait_cmp {
  TS_DIST_WAIT_GEQ = 0, /* (int32)(*addr - value) >= 0 (wrap-around aware, as the driver does) */
  TS_DIST_WAIT_EQ = 1,
  TS_DIST_WAIT_AND = 2, /* (*addr & value) != 0 */
  TS_DIST_WAIT_NOR = 3  /* ~(*addr | value) != 0 */
} ts_dist_wait_cmp;

/* Writes a 32/64-bit flag in device memory (local or a peer view) when `stream` reaches it. */
TS_API ts_status ts_dist_stream_write32(ts_dist *d, void *stream, void *addr, uint32_t value);
TS_API ts_status ts_dist_stream_write64(ts_dist *d, void *stream, void *addr, uint64_t value);
/* Makes `stream` wait until the flag satisfies cmp against value. */
TS_API ts_status ts_dist_stream_wait32(ts_dist *d, void *stream, void *addr, uint32_t value, ts_dist_wait_cmp cmp);
TS_API ts_status ts_dist_stream_wait64(ts_dist *d, void *stream, void *addr, uint64_t value, ts_dist_wait_cmp cmp);

/* Pinned host memory mapped into the device (counters the GPU writes and the host polls):
 * *host and *dev alias the same bytes; zero-filled. */
TS_API ts_status ts_dist_host_counters_alloc(ts_dist *d, size_t bytes, void **host, void **dev);
TS_API ts_status ts_dist_host_counters_free(ts_dist *d, void *host);

/* Copies bytes between device addresses (either may be a peer view) on `stream`, or on the
 * group's own copy-engine stream when stream is NULL (see ts_dist_copy_stream). */
TS_API ts_status ts_dist_peer_copy(ts_dist *d, void *dst, const void *src, size_t bytes, void *stream);
/* A non-blocking stream owned by the group, for copies that overlap kernels (a CUstream). */
TS_API void *ts_dist_copy_stream(ts_dist *d);

#ifdef __cplusplus
}
#endif
#endif
