/* nvshmem.c — the `nvshmem` backend of the distributed runtime (DESIGN.md §7): the path to
 * InfiniBand and multi-node.
 *
 *   rt_nvshmem_find: $NVSHMEM_HOME -> $NVSHMEM_SRC (built tree) -> pip nvidia-nvshmem-cu13 -> system paths
 *   dlopen(libnvshmem_host.so.3) -> rank 0 nvshmemx_get_uniqueid -> broadcast over our
 *   rendezvous -> nvshmemx_set_attr_uniqueid_args + nvshmemx_hostlib_init_attr(UNIQUEID)
 *   (or, with $NVSHMEM_BOOTSTRAP set to PMI, PMI-2, PMIx or MPI, NVSHMEM's own bootstrap:
 *   nvshmemx_hostlib_init_attr(0)), then a check that NVSHMEM's pe is this rank
 *   -> nvshmem_malloc(heap) -> peer_base[pe] = nvshmem_ptr(heap, pe) (0 off-node)
 *   modules: nvshmemx_cumodule_init + _finalize on every module that carries
 *            nvshmemi_device_state_d, then a read-back check of the state
 *
 * Only the host library is loaded: device code gets NVSHMEM's device library through
 * nvJitLink (libnvshmem_device.bc) or nvcc, and nvshmemx_hostlib_init_attr is the entry
 * point meant for that split (nvshmem_init itself is an inline wrapper that needs the
 * static device library).  The attribute structs below mirror NVSHMEM 3.x's ABI
 * (nvshmemx_init_attr_v1: 144 bytes, nvshmemx_uniqueid_v1: 128 bytes); the version words
 * make the library reject a mismatch instead of misreading it. */
#include "dist.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct NvUniqueId {
  int version;
  char internal[124];
} NvUniqueId;

typedef struct NvUniqueIdArgs {
  int version;
  NvUniqueId *id;
  int myrank, nranks;
} NvUniqueIdArgs;

typedef struct NvInitArgs {
  int version;
  NvUniqueIdArgs uid_args;
  char content[96];
} NvInitArgs;

typedef struct NvInitAttr {
  int version;
  void *mpi_comm;
  NvInitArgs args;
} NvInitAttr;

_Static_assert(sizeof(NvUniqueId) == 128, "nvshmemx_uniqueid_v1 is 128 bytes");
_Static_assert(sizeof(NvUniqueIdArgs) == 24, "nvshmemx_uniqueid_args_v1 is 24 bytes");
_Static_assert(sizeof(NvInitArgs) == 128, "nvshmemx_init_args_v1 is 128 bytes");
_Static_assert(sizeof(NvInitAttr) == 144, "nvshmemx_init_attr_v1 is 144 bytes");

#define NV_INIT_WITH_UNIQUEID (1u << 3)
#define NV_STRUCT_VERSION(T) ((1 << 16) + (int)sizeof(T))

/* X(name, return type, parameters) */
#define NV_FUNCS(X)                                                                            \
  X(nvshmemx_get_uniqueid, int, (NvUniqueId *))                                                \
  X(nvshmemx_set_attr_uniqueid_args, int, (int, int, const NvUniqueId *, NvInitAttr *))        \
  X(nvshmemx_hostlib_init_attr, int, (unsigned, NvInitAttr *))                                 \
  X(nvshmemx_hostlib_finalize, void, (void))                                                   \
  X(nvshmem_my_pe, int, (void))                                                                \
  X(nvshmem_n_pes, int, (void))                                                                \
  X(nvshmem_malloc, void *, (size_t))                                                          \
  X(nvshmem_free, void, (void *))                                                              \
  X(nvshmem_ptr, void *, (const void *, int))                                                  \
  X(nvshmem_barrier_all, void, (void))                                                         \
  X(nvshmemx_cumodule_init, int, (CUmodule))                                                   \
  X(nvshmemx_cumodule_finalize, int, (CUmodule))

struct DistNvshmem {
  void *handle;
#define NV_MEMBER(name, ret, params) ret(*name) params;
  NV_FUNCS(NV_MEMBER)
#undef NV_MEMBER
};

static bool nv_load(DistNvshmem *nv, const char *path, StrBuf *why) {
  /* RTLD_GLOBAL: NVSHMEM dlopens its own bootstrap and transport plugins, which look up
   * symbols of the host library. */
  nv->handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!nv->handle) {
    const char *e = dlerror();
    sb_printf(why, "cannot load %s: %s", path, e ? e : "unknown error");
    return false;
  }
#define NV_LOAD(name, ret, params)                                                       \
  *(void **)&nv->name = dlsym(nv->handle, #name);                                       \
  if (!nv->name) {                                                                      \
    sb_printf(why, "%s lacks %s (NVSHMEM 3.x is needed)", path, #name);                 \
    return false;                                                                       \
  }
  NV_FUNCS(NV_LOAD)
#undef NV_LOAD
  return true;
}

/* NVSHMEM's own bootstrap (its PMI, PMI-2, PMIx or MPI plugin, chosen by $NVSHMEM_BOOTSTRAP)
 * when the job asks for it by setting that variable to anything but UID (srun / mpirun jobs
 * whose PMI or MPI NVSHMEM should use); otherwise rank 0's unique id over our rendezvous, which
 * works under every launcher.  Either way the caller then checks that NVSHMEM's pe and count
 * are this rank's. */
bool dist_nvshmem_native_bootstrap(const char *bootstrap) {
  return bootstrap && *bootstrap && strcasecmp(bootstrap, "UID") != 0;
}

/* nvshmemx_hostlib_init_attr, by the bootstrap the environment asks for. */
static ts_status nv_bootstrap(ts_dist *d, DistNvshmem *nv) {
  ts_context *ctx = d->ctx;
  NvInitAttr attr;
  memset(&attr, 0, sizeof attr);
  attr.version = NV_STRUCT_VERSION(NvInitAttr);
  attr.args.version = NV_STRUCT_VERSION(NvInitArgs);
  attr.args.uid_args.version = NV_STRUCT_VERSION(NvUniqueIdArgs);
  const char *bootstrap = getenv("NVSHMEM_BOOTSTRAP");
  if (dist_nvshmem_native_bootstrap(bootstrap)) {
    int rc = nv->nvshmemx_hostlib_init_attr(0, &attr);
    if (rc == 0) return TS_OK;
    rt_set_error(ctx, "ts_dist_init (nvshmem): nvshmemx_hostlib_init_attr with NVSHMEM_BOOTSTRAP=%s failed with %d on "
                      "rank %d (NVSHMEM_DEBUG=INFO shows why; unset NVSHMEM_BOOTSTRAP to bootstrap over the launcher's "
                      "rendezvous instead)",
                 bootstrap, rc, d->rank);
    return TS_ERR_INTERNAL;
  }
  ts_status status = TS_OK;
  StrBuf why = {0};
  NvUniqueId id;
  memset(&id, 0, sizeof id);
  id.version = NV_STRUCT_VERSION(NvUniqueId);
  if (d->rank == 0 && nv->nvshmemx_get_uniqueid(&id) != 0) {
    rt_set_error(ctx, "ts_dist_init (nvshmem): nvshmemx_get_uniqueid failed on rank 0");
    status = TS_ERR_INTERNAL;
    memset(&id, 0, sizeof id);
  }
  /* Every rank takes part in the broadcast even when rank 0 failed, so nobody is left
   * waiting; a zero id then tells the others why. */
  if (!dist_boot_broadcast(&d->boot, &id, sizeof id, &why)) {
    rt_set_error(ctx, "ts_dist_init (nvshmem): broadcasting the unique id failed: %s", sb_str(&why));
    sb_free(&why);
    return TS_ERR_INTERNAL;
  }
  sb_free(&why);
  if (status != TS_OK) return status;
  if (id.version == 0) {
    rt_set_error(ctx, "ts_dist_init (nvshmem): rank 0 could not create the NVSHMEM unique id (see its error)");
    return TS_ERR_INTERNAL;
  }
  int rc = nv->nvshmemx_set_attr_uniqueid_args(d->rank, d->world, &id, &attr);
  if (rc == 0) rc = nv->nvshmemx_hostlib_init_attr(NV_INIT_WITH_UNIQUEID, &attr);
  if (rc != 0) {
    rt_set_error(ctx, "ts_dist_init (nvshmem): nvshmemx_hostlib_init_attr failed with %d on rank %d "
                      "(NVSHMEM_DEBUG=INFO shows why)",
                 rc, d->rank);
    return TS_ERR_INTERNAL;
  }
  return TS_OK;
}

ts_status dist_nvshmem_open(ts_dist *d) {
  ts_context *ctx = d->ctx;
  ts_status status = TS_OK;
  StrBuf why = {0};
  RtNvshmemPaths paths = {0};
  DistNvshmem *nv = ts_calloc(1, sizeof *nv);
  d->nv = nv;
  if (!rt_nvshmem_find(&paths, &why) || !nv_load(nv, sb_str(&paths.host_lib), &why)) {
    rt_set_error(ctx, "ts_dist_init (nvshmem): %s", sb_str(&why));
    status = TS_ERR_NOT_FOUND;
    goto cleanup;
  }
  /* NVLink multicast stays off on our machines, whatever the caller's environment says;
   * the symmetric size covers our heap plus NVSHMEM's own internal allocations. */
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
  if (!getenv("NVSHMEM_SYMMETRIC_SIZE")) {
    char size[32];
    snprintf(size, sizeof size, "%llu", (unsigned long long)(d->heap_size + (256ull << 20)));
    setenv("NVSHMEM_SYMMETRIC_SIZE", size, 1);
  }

  status = nv_bootstrap(d, nv);
  if (status != TS_OK) goto cleanup;
  if (nv->nvshmem_my_pe() != d->rank || nv->nvshmem_n_pes() != d->world) {
    rt_set_error(ctx, "ts_dist_init (nvshmem): NVSHMEM says pe %d of %d, but this is rank %d of %d", nv->nvshmem_my_pe(),
                 nv->nvshmem_n_pes(), d->rank, d->world);
    status = TS_ERR_INTERNAL;
    goto cleanup;
  }
  void *heap = nv->nvshmem_malloc(d->heap_size);
  if (!heap) {
    rt_set_error(ctx, "ts_dist_init (nvshmem): nvshmem_malloc(%llu) failed (NVSHMEM_SYMMETRIC_SIZE too small?)",
                 (unsigned long long)d->heap_size);
    status = TS_ERR_OUT_OF_MEMORY;
    goto cleanup;
  }
  d->heap = (CUdeviceptr)heap;
  CU_CHECK(ctx, cuMemsetD8, (d->heap, 0, d->heap_size));
  CU_CHECK(ctx, cuCtxSynchronize, ());
  for (int r = 0; r < d->world; r++) d->peer_base[r] = (uint64_t)(uintptr_t)nv->nvshmem_ptr(heap, r);
  d->peer_base[d->rank] = (uint64_t)d->heap;
  nv->nvshmem_barrier_all();
cleanup:
  rt_nvshmem_paths_free(&paths);
  sb_free(&why);
  return status;
}

void dist_nvshmem_close(ts_dist *d) {
  DistNvshmem *nv = d->nv;
  if (!nv) return;
  if (nv->handle && nv->nvshmem_free && d->heap) {
    nv->nvshmem_barrier_all();
    nv->nvshmem_free((void *)(uintptr_t)d->heap);
    d->heap = 0;
    nv->nvshmemx_hostlib_finalize();
  }
  /* The library stays loaded: its proxy and transport threads may outlive finalize, and
   * unloading code under a running thread crashes. */
  ts_free(nv);
  d->nv = NULL;
}

/* nvshmemi_device_host_state_v1 (device_host/nvshmem_types.h of NVSHMEM 3.x) starts
 * {int version; int mype; int npes; ...}, version = (1 << 16) + 776. */
#define NV_STATE_V1_VERSION ((1 << 16) + 776)

bool dist_nvshmem_state_ok(const void *head, size_t n, int rank, int world, StrBuf *why) {
  int w[3] = {0, 0, 0};
  memcpy(w, head, n < sizeof w ? n : sizeof w);
  if (w[0] == 0) {
    sb_printf(why, "it is still all zeros (NVSHMEM did not copy its state into this module)");
    return false;
  }
  /* Other layouts: only "written at all" can be checked. */
  if (w[0] != NV_STATE_V1_VERSION) return true;
  if (w[1] != rank || w[2] != world) {
    sb_printf(why, "it says pe %d of %d, but this is rank %d of %d", w[1], w[2], rank, world);
    return false;
  }
  return true;
}

ts_status dist_nvshmem_module_init(ts_dist *d, CUmodule mod) {
  ts_status status = TS_OK;
  CUdeviceptr p;
  size_t size;
  /* Only modules linked with the NVSHMEM device library carry its state. */
  CUresult r = d->x.cuModuleGetGlobal(&p, &size, mod, "nvshmemi_device_state_d");
  if (r == CUDA_ERROR_NOT_FOUND) return TS_OK;
  if (r != CUDA_SUCCESS) return rt_cuda_fail(d->ctx, "cuModuleGetGlobal (nvshmemi_device_state_d)", r);
  /* NVSHMEM registers the module's state address (a refcount keyed by address) and copies
   * its state only into addresses it has not initialised yet.  A module unloaded without
   * nvshmemx_cumodule_finalize (ts_kernel_destroy, or a caller's own cuModuleUnload) leaves
   * its address registered; the next module loaded at the same address (the usual case for
   * a module of the same size) then only bumps the refcount and keeps a zero state: pe 0
   * everywhere, no heap, illegal addresses.  So every module is registered only for the
   * copy: init, then finalize at once.  The state is fixed after ts_dist_init (one heap,
   * no new teams), so the module misses no later update. */
  int rc = d->nv->nvshmemx_cumodule_init(mod);
  if (rc != 0) {
    rt_set_error(d->ctx, "nvshmemx_cumodule_init failed with %d on rank %d", rc, d->rank);
    return TS_ERR_INTERNAL;
  }
  rc = d->nv->nvshmemx_cumodule_finalize(mod);
  if (rc != 0) {
    rt_set_error(d->ctx, "nvshmemx_cumodule_finalize (after the state copy) failed with %d on rank %d", rc, d->rank);
    return TS_ERR_INTERNAL;
  }
  /* Trust, but check: a module running on an unfilled state fails far away from here. */
  int head[4] = {0, 0, 0, 0};
  CU_CHECK(d->ctx, cuMemcpyDtoH, (head, p, size < sizeof head ? size : sizeof head));
  StrBuf why = {0};
  if (!dist_nvshmem_state_ok(head, size < sizeof head ? size : sizeof head, d->rank, d->world, &why)) {
    rt_set_error(d->ctx, "rank %d: the NVSHMEM device state of a loaded module is wrong after nvshmemx_cumodule_init: %s",
                 d->rank, sb_str(&why));
    status = TS_ERR_INTERNAL;
  }
  sb_free(&why);
cleanup:
  return status;
}
