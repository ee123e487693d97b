/* dist.h — private pieces of the distributed runtime (DESIGN.md §7) shared by the files of
 * src/distributed:
 *
 *   bootstrap.c  TCP rendezvous served by rank 0 (group formation, allgather, barrier)
 *   symheap.c    the deterministic symmetric allocator (same offsets on every rank)
 *   driver_ext.c driver entry points the runtime's table lacks (IPC, stream memory ops, ...)
 *   ipc.c        the `ipc` backend: cuMemAlloc heap + CUDA IPC handles, peers mapped
 *   nvshmem.c    the `nvshmem` backend: libnvshmem_host.so.3 by dlopen
 *   env.c        the launcher's environment (torchrun, tilescale launch, MPI, SLURM)
 *   release.c    the GPU round that lets the ranks out of a host barrier together
 *   dist.c       the public API of include/tilescale_dist.h on top of them
 *
 * Nothing here is used by lower layers; rt/ knows nothing of dist/.  The launcher that
 * starts the ranks is a CLI command (cli/launch.c); only the rendezvous it points them at
 * lives here. */
#ifndef TS_DIST_DIST_H
#define TS_DIST_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "../../include/tilescale_dist.h"
#include "../rt/rt.h"
#include "../rt/nvshmem_paths.h"

/* ---- rendezvous ----------------------------------------------------------------------------- */
typedef struct DistBoot {
  int rank, world;
  int listen_fd;      /* rank 0 */
  int *peer_fd;       /* rank 0: [world], peer_fd[r] is rank r's connection (r > 0) */
  int root_fd;        /* ranks > 0: the connection to rank 0 */
  int op_timeout_ms;  /* 0: forever */
  uint32_t seq;       /* collective sequence number: ranks that fall out of step are caught */
} DistBoot;

/* Forms the group: rank 0 listens on addr:port and waits for world-1 ranks; the others
 * connect (retrying while rank 0 is not up yet).  Both sides give up after
 * connect_timeout_ms with an error naming what was missing.  world == 1 needs no socket. */
bool dist_boot_open(DistBoot *b, const char *addr, int port, int rank, int world, int connect_timeout_ms,
                    StrBuf *err);
/* recv gets world*bytes: rank r's contribution at r*bytes.  Every rank must pass the same
 * `bytes` (checked). */
bool dist_boot_allgather(DistBoot *b, const void *send, size_t bytes, void *recv, StrBuf *err);
bool dist_boot_barrier(DistBoot *b, StrBuf *err);
bool dist_boot_broadcast(DistBoot *b, void *buf, size_t bytes, StrBuf *err);
void dist_boot_close(DistBoot *b);

/* ---- launcher environment (env.c) ------------------------------------------------------------ */
/* SLURM_STEP_TASKS_PER_NODE ("2(x3),1") at node index `node`; -1 when it does not say. */
int dist_env_slurm_tasks_on_node(const char *spec, int node);
/* The first host of a SLURM node list ("gpu[003-004],cpu1" -> "gpu003"). */
bool dist_env_slurm_first_host(const char *list, char *out, size_t cap);

/* ---- symmetric allocator ---------------------------------------------------------------------- */
typedef struct DistSymBlock {
  uint64_t off, size;
  bool used;
} DistSymBlock;

typedef struct DistSymHeap {
  uint64_t size;
  DistSymBlock *blocks; /* sorted by offset, covering [0, size) without gaps */
  int nblocks, cap;
} DistSymHeap;

void dist_symheap_init(DistSymHeap *h, uint64_t size);
void dist_symheap_destroy(DistSymHeap *h);
/* First fit at `align` (a power of two); false when no free range is large enough. */
bool dist_symheap_alloc(DistSymHeap *h, uint64_t bytes, uint64_t align, uint64_t *off);
/* Frees the block starting at off (coalescing neighbours); false when off is not the start
 * of a used block. */
bool dist_symheap_free(DistSymHeap *h, uint64_t off);
uint64_t dist_symheap_used_bytes(const DistSymHeap *h);

/* ---- driver entry points beyond rt/cuda_driver.h ---------------------------------------------- */
#define DIST_DRIVER_FUNCS(X)        \
  X(cuIpcGetMemHandle)              \
  X(cuIpcOpenMemHandle)             \
  X(cuIpcCloseMemHandle)            \
  X(cuStreamWriteValue32)           \
  X(cuStreamWriteValue64)           \
  X(cuStreamWaitValue32)            \
  X(cuStreamWaitValue64)            \
  X(cuMemHostAlloc)                 \
  X(cuMemHostGetDevicePointer)      \
  X(cuMemFreeHost)                  \
  X(cuModuleGetGlobal)              \
  X(cuStreamCreate)                 \
  X(cuStreamDestroy)                \
  X(cuStreamWaitEvent)              \
  X(cuStreamQuery)                  \
  X(cuDeviceGetPCIBusId)

typedef struct DistDriver {
  bool loaded;
#define DIST_DRIVER_MEMBER(fn) __typeof__(&fn) fn;
  DIST_DRIVER_FUNCS(DIST_DRIVER_MEMBER)
#undef DIST_DRIVER_MEMBER
} DistDriver;

/* Resolves the extra entry points on the runtime's own libcuda handle. */
bool dist_driver_load(DistDriver *x, const RtDriver *drv, StrBuf *why);

/* ---- NVSHMEM discovery and host library ------------------------------------------------------- */
/* Discovery is in the runtime layer (src/rt/nvshmem_paths.h): the JIT needs it too. */

typedef struct DistNvshmem DistNvshmem; /* the loaded library (nvshmem.c) */

/* ---- the group ------------------------------------------------------------------------------ */
struct ts_dist {
  ts_context *ctx;
  int rank, world, local_rank, local_world;
  char master_addr[256];  /* the rendezvous host (options or environment) */
  ts_dist_backend backend;
  bool host_only;
  DistBoot boot;
  DistDriver x;
  DistSymHeap alloc;
  CUdeviceptr heap;       /* this rank's heap base */
  uint64_t heap_size;
  uint64_t *peer_base;    /* [world]: heap base of every rank as mapped here (0: not mapped) */
  CUstream copy_stream;   /* created on first use */
  DistNvshmem *nv;        /* nvshmem backend */
  uint64_t serial;        /* this group's number in the process (1, 2, ...): kernels remember the
                           * group whose table their module holds (ts_kernel.dist_attached) */
  /* release.c: the GPU round after host barriers (off: the host barrier alone) */
  bool release_on;
  uint32_t release_epoch; /* barriers released so far */
  uint64_t release_off;   /* heap offset of the uint32[world] slots */
  CUstream release_stream;
};

/* Backends: create the heap and fill peer_base; destroy undoes it (after a barrier). */
ts_status dist_ipc_open(ts_dist *d);
void dist_ipc_close(ts_dist *d);
ts_status dist_nvshmem_open(ts_dist *d);
/* Whether $NVSHMEM_BOOTSTRAP's value asks for NVSHMEM's own bootstrap (PMI, PMI-2, PMIx, MPI:
 * set and not UID) instead of the unique id over our rendezvous. */
bool dist_nvshmem_native_bootstrap(const char *bootstrap);
void dist_nvshmem_close(ts_dist *d);
/* nvshmemx_cumodule_init when the module carries NVSHMEM device state (then finalize at
 * once, so NVSHMEM never keeps the address of a module that may be unloaded), and a check
 * that the state arrived. */
ts_status dist_nvshmem_module_init(ts_dist *d, CUmodule mod);
/* Whether the first bytes of a module's nvshmemi_device_state_d are NVSHMEM's state for
 * this rank (why says what is wrong otherwise).  Pure: unit-tested on the CPU. */
bool dist_nvshmem_state_ok(const void *head, size_t n, int rank, int world, StrBuf *why);

/* ---- releasing the ranks of a host barrier together (release.c) -------------------------------- */
/* Whether this rank can take part in the round: more than one rank, a GPU heap, every rank's
 * heap mapped here, and `env` (TILESCALE_DIST_RELEASE_ROUND) not "0".  Pure. */
bool dist_release_possible(int world, bool host_only, const uint64_t *peer_base, const char *env);
/* At init (collective): the slots are at heap offset slots_off (zeroed); the round is on when
 * every rank can take part. */
ts_status dist_release_open(ts_dist *d, uint64_t slots_off);
void dist_release_close(ts_dist *d);
/* After a host barrier every rank passed: the GPU round (a no-op when off).  fn names the
 * caller in errors. */
ts_status dist_release_together(ts_dist *d, const char *fn);
/* Checking macro for the extra driver functions (same contract as rt.h's CU_CHECK). */
#define DIST_CU_CHECK(d, fn, args)                             \
  do {                                                         \
    CUresult cu_r_ = (d)->x.fn args;                           \
    if (cu_r_ != CUDA_SUCCESS) {                               \
      status = rt_cuda_fail((d)->ctx, #fn, cu_r_);             \
      goto cleanup;                                            \
    }                                                          \
  } while (0)

#endif
