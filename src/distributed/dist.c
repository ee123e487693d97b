/* dist.c — the public API of include/tilescale_dist.h (DESIGN.md §7).
 *
 *   ts_dist_init: environment/options -> rendezvous (bootstrap.c) -> device + extra driver
 *                 entry points (driver_ext.c) -> backend heap (ipc.c | nvshmem.c) ->
 *                 symmetric allocator (symheap.c)
 *   ts_dist_malloc/free: the allocator on every rank + an allgather that proves the ranks
 *                 agree (and doubles as the barrier that keeps peers off memory still being
 *                 zeroed)
 *   ts_dist_module_attach: the ts_dist_meta table (device/tilescale/dist.cuh) into a module
 *   host helpers: stream memory operations, mapped counters, copy-engine copies */
#include "dist.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rt/jit.h"
#include "../rt/kernel.h"

#define DIST_ALIGN 256u                 /* alignment of every symmetric allocation */
#define DIST_HEAP_GRANULE (2ull << 20)  /* heap sizes are rounded to 2 MiB */
#define DIST_DEFAULT_HEAP (1ull << 30)
#define DIST_DEFAULT_CONNECT_MS 60000
#define DIST_RUNTIME_BYTES 4096u        /* = TS_DIST_RUNTIME_BYTES of device/tilescale/dist.cuh */

ts_dist_options ts_dist_default_options(void) {
  ts_dist_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.rank = o.world_size = o.local_rank = o.local_world_size = -1;
  o.master_port = 0;
  o.backend = TS_DIST_BACKEND_DEFAULT;
  return o;
}

/* An integer from the environment.  false (and an error) when set but malformed; *out is
 * left alone when unset. */
static bool env_int(ts_context *ctx, const char *name, long lo, long hi, int *out) {
  const char *s = getenv(name);
  if (!s || !*s) return true;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*end || errno || v < lo || v > hi) {
    rt_set_error(ctx, "ts_dist_init: environment variable %s='%s' is not an integer in [%ld, %ld]", name, s, lo, hi);
    return false;
  }
  *out = (int)v;
  return true;
}

/* "1073741824", "512M", "1G", "64k". */
static bool parse_bytes(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return false;
  uint64_t mul = 1;
  if (*end == 'k' || *end == 'K') mul = 1ull << 10, end++;
  else if (*end == 'm' || *end == 'M') mul = 1ull << 20, end++;
  else if (*end == 'g' || *end == 'G') mul = 1ull << 30, end++;
  if (*end == 'i') end++;
  if (*end == 'B' || *end == 'b') end++;
  if (*end || v == 0 || v > (UINT64_MAX >> 31) / mul) return false;
  *out = v * mul;
  return true;
}

const char *ts_dist_backend_name(ts_dist_backend b) {
  switch (b) {
  case TS_DIST_BACKEND_IPC: return "ipc";
  case TS_DIST_BACKEND_NVSHMEM: return "nvshmem";
  default: return "default";
  }
}

/* Fills the group's shape from the options, then the launcher's environment, then
 * "a group of one" (a program run without the launcher). */
static ts_status resolve_options(ts_dist *d, const ts_dist_options *o, const char **addr, int *port,
                                 int *connect_ms) {
  ts_context *ctx = d->ctx;
  int ms = DIST_DEFAULT_CONNECT_MS;
  ts_dist_env env;
  ts_status st = ts_dist_env_read(ctx, &env);
  if (st != TS_OK) return st;
  if (!env_int(ctx, "TILESCALE_RDZV_TIMEOUT_MS", 1, 1 << 30, &ms)) return TS_ERR_INVALID_ARGUMENT;
  int rank = env.rank, world = env.world_size, p = env.master_port;
  /* The environment's local fields describe this process only when the options take its rank. */
  int local_rank = o->rank >= 0 ? -1 : env.local_rank, local_world = o->world_size > 0 ? -1 : env.local_world_size;
  if (o->rank >= 0) rank = o->rank;
  if (o->world_size > 0) world = o->world_size;
  if (o->local_rank >= 0) local_rank = o->local_rank;
  if (o->local_world_size > 0) local_world = o->local_world_size;
  if (o->master_port > 0) p = o->master_port;
  if (o->connect_timeout_ms > 0) ms = o->connect_timeout_ms;
  if (local_rank < 0) local_rank = rank;
  if (local_world < 0) local_world = world;
  if (world > TS_DIST_MAX_RANKS || rank < 0 || rank >= world) {
    rt_set_error(ctx, "ts_dist_init: rank %d is out of range for world size %d (at most %d ranks)", rank, world,
                 TS_DIST_MAX_RANKS);
    return TS_ERR_INVALID_ARGUMENT;
  }
  d->rank = rank;
  d->world = world;
  d->local_rank = local_rank;
  d->local_world = local_world;
  snprintf(d->master_addr, sizeof d->master_addr, "%s", o->master_addr ? o->master_addr : env.master_addr);
  *addr = d->master_addr;
  *port = p;
  *connect_ms = ms;

  d->backend = o->backend;
  if (d->backend == TS_DIST_BACKEND_DEFAULT) {
    d->backend = ctx->dist_backend; /* $TILESCALE_DIST_BACKEND, read when the context was made */
    if (d->backend == TS_DIST_BACKEND_DEFAULT) {
      rt_set_error(ctx, "ts_dist_init: TILESCALE_DIST_BACKEND='%s' is not 'ipc' or 'nvshmem'",
                   ctx->dist_backend_env);
      return TS_ERR_INVALID_ARGUMENT;
    }
  } else if (d->backend != TS_DIST_BACKEND_IPC && d->backend != TS_DIST_BACKEND_NVSHMEM) {
    rt_set_error(ctx, "ts_dist_init: unknown backend %d", (int)d->backend);
    return TS_ERR_INVALID_ARGUMENT;
  }

  uint64_t heap = o->heap_bytes;
  if (heap == 0) {
    const char *h = getenv("TILESCALE_DIST_HEAP_BYTES");
    heap = DIST_DEFAULT_HEAP;
    if (h && *h && !parse_bytes(h, &heap)) {
      rt_set_error(ctx, "ts_dist_init: TILESCALE_DIST_HEAP_BYTES='%s' is not a size (e.g. 1073741824, 512M, 2G)", h);
      return TS_ERR_INVALID_ARGUMENT;
    }
  }
  d->heap_size = (heap + DIST_HEAP_GRANULE - 1) / DIST_HEAP_GRANULE * DIST_HEAP_GRANULE;
  return TS_OK;
}

static ts_status dist_module_hook(void *user, CUmodule mod) { return ts_dist_module_attach(user, mod); }

static ts_status dist_api_init(ts_context *ctx, const ts_dist_options *opt, ts_dist **out) {
  if (!ctx || !out) return TS_ERR_INVALID_ARGUMENT;
  *out = NULL;
  ts_dist_options defaults = ts_dist_default_options();
  if (opt && opt->size != sizeof *opt) {
    rt_set_error(ctx, "ts_dist_init: options.size is %zu, expected %zu (set it to sizeof(ts_dist_options))",
                 opt->size, sizeof *opt);
    return TS_ERR_INVALID_ARGUMENT;
  }
  const ts_dist_options *o = opt ? opt : &defaults;
  ts_status status = TS_OK;
  StrBuf err = {0};
  static _Atomic uint64_t groups; /* the serial of the last group formed in this process */
  ts_dist *d = ts_calloc(1, sizeof *d);
  d->ctx = ctx;
  d->serial = ++groups;
  d->boot.listen_fd = d->boot.root_fd = -1;
  d->host_only = o->host_only != 0;
  const char *addr;
  int port, connect_ms;
  TS_CHECK(resolve_options(d, o, &addr, &port, &connect_ms));

  /* A rank whose device is unusable still joins the group first, so that its failure
   * reaches the others as a closed connection rather than a rendezvous timeout. */
  if (!dist_boot_open(&d->boot, addr, port, d->rank, d->world, connect_ms, &err)) {
    rt_set_error(ctx, "ts_dist_init: %s", sb_str(&err));
    TS_CHECK(TS_ERR_IO);
  }
  d->boot.op_timeout_ms = o->op_timeout_ms > 0 ? o->op_timeout_ms : 0;
  if (d->host_only) goto cleanup;

  TS_CHECK(rt_ensure_device(ctx));
  if (!dist_driver_load(&d->x, &ctx->drv, &err)) {
    rt_set_error(ctx, "ts_dist_init: %s", sb_str(&err));
    TS_CHECK(TS_ERR_NO_DRIVER);
  }
  d->peer_base = ts_calloc((size_t)d->world, sizeof *d->peer_base);
  if (d->backend == TS_DIST_BACKEND_NVSHMEM) TS_CHECK(dist_nvshmem_open(d));
  else TS_CHECK(dist_ipc_open(d));
  dist_symheap_init(&d->alloc, d->heap_size);
  /* The first bytes of every heap belong to the runtime: the barrier words of the
   * argument-less device barriers (T.barrier_all & co. on the ipc backend; dist.cuh's
   * runtime_barrier()).  Same offset everywhere, zero before any kernel runs. */
  {
    uint64_t off = 1;
    TS_ASSERT(dist_symheap_alloc(&d->alloc, DIST_RUNTIME_BYTES, DIST_ALIGN, &off) && off == 0);
    /* then the slots of the barriers' release round (release.c), on every rank alike */
    uint64_t slots = 0, slot_bytes = 4u * (uint64_t)d->world;
    TS_ASSERT(dist_symheap_alloc(&d->alloc, slot_bytes, DIST_ALIGN, &slots));
    CU_CHECK(ctx, cuMemsetD8, (d->heap, 0, DIST_RUNTIME_BYTES));
    CU_CHECK(ctx, cuMemsetD8, (d->heap + slots, 0, slot_bytes));
    CU_CHECK(ctx, cuCtxSynchronize, ());
    TS_CHECK(dist_release_open(d, slots));
  }
  /* Every module loaded from now on gets the heap-base table before its first launch. */
  ctx->module_hook = dist_module_hook;
  ctx->module_hook_user = d;
  ctx->dist_backend = d->backend; /* kernels built from now on are for this backend */
cleanup:
  sb_free(&err);
  if (status != TS_OK) {
    /* Not ts_dist_finalize: its barrier would wait for ranks that are not coming. */
    dist_release_close(d);
    if (d->backend == TS_DIST_BACKEND_NVSHMEM) dist_nvshmem_close(d);
    else dist_ipc_close(d);
    dist_boot_close(&d->boot);
    ts_free(d->peer_base);
    ts_free(d);
    return status;
  }
  *out = d;
  return TS_OK;
}

static void dist_api_finalize(ts_dist *d) {
  if (!d) return;
  StrBuf err = {0};
  if (!d->host_only && d->ctx->cu_ctx) {
    d->ctx->drv.cuCtxSetCurrent(d->ctx->cu_ctx);
    d->ctx->drv.cuCtxSynchronize();
  }
  /* Peers may still be reading our heap until they, too, have finished their work. */
  if (!dist_boot_barrier(&d->boot, &err))
    rt_set_error(d->ctx, "ts_dist_finalize: final barrier failed (%s); freeing the heap anyway", sb_str(&err));
  if (d->copy_stream) d->x.cuStreamDestroy(d->copy_stream);
  dist_release_close(d);
  if (d->ctx->module_hook_user == d) {
    d->ctx->module_hook = NULL;
    d->ctx->module_hook_user = NULL;
  }
  if (!d->host_only) {
    if (d->backend == TS_DIST_BACKEND_NVSHMEM) dist_nvshmem_close(d);
    else dist_ipc_close(d);
    dist_symheap_destroy(&d->alloc);
  }
  dist_boot_close(&d->boot);
  ts_free(d->peer_base);
  sb_free(&err);
  ts_free(d);
}

int ts_dist_rank(const ts_dist *d) { return d ? d->rank : -1; }
int ts_dist_world_size(const ts_dist *d) { return d ? d->world : 0; }
int ts_dist_local_rank(const ts_dist *d) { return d ? d->local_rank : -1; }
int ts_dist_local_world_size(const ts_dist *d) { return d ? d->local_world : 0; }
ts_dist_backend ts_dist_backend_of(const ts_dist *d) { return d ? d->backend : TS_DIST_BACKEND_DEFAULT; }
void *ts_dist_heap_base(const ts_dist *d) { return d ? (void *)(uintptr_t)d->heap : NULL; }
size_t ts_dist_heap_size(const ts_dist *d) { return d ? (size_t)d->heap_size : 0; }

static ts_status need_heap(ts_dist *d, const char *fn) {
  if (!d) return TS_ERR_INVALID_ARGUMENT;
  if (d->host_only) {
    rt_set_error(d->ctx, "%s: the group was initialised with host_only (no GPU heap)", fn);
    return TS_ERR_INVALID_ARGUMENT;
  }
  return rt_ensure_device(d->ctx);
}

/* ---- symmetric memory ---------------------------------------------------------------------- */
typedef struct SymRecord { /* what every rank reports for one malloc/free */
  uint64_t op, bytes, off, ok;
} SymRecord;

/* The allgather that proves every rank made the same request and got the same answer. */
static ts_status agree(ts_dist *d, const char *fn, SymRecord mine) {
  ts_status status = TS_OK;
  StrBuf err = {0};
  SymRecord *all = ts_calloc((size_t)d->world, sizeof *all);
  if (!dist_boot_allgather(&d->boot, &mine, sizeof mine, all, &err)) {
    rt_set_error(d->ctx, "%s: %s", fn, sb_str(&err));
    status = TS_ERR_IO;
    goto cleanup;
  }
  for (int r = 0; r < d->world; r++) {
    const SymRecord *a = &all[r];
    if (!a->ok) {
      rt_set_error(d->ctx, "%s: failed on rank %d (%s %llu bytes%s)", fn, r, mine.op ? "free of" : "allocating",
                   (unsigned long long)a->bytes, mine.op ? "" : ": symmetric heap exhausted; raise TILESCALE_DIST_HEAP_BYTES");
      status = mine.op ? TS_ERR_INVALID_ARGUMENT : TS_ERR_OUT_OF_MEMORY;
      goto cleanup;
    }
    if (a->op != mine.op || a->bytes != mine.bytes || a->off != mine.off) {
      rt_set_error(d->ctx, "%s: ranks disagree: rank %d %s %llu bytes at heap offset %llu, rank %d %s %llu bytes at "
                           "offset %llu; every rank must allocate and free the same sizes in the same order",
                   fn, r, a->op ? "freed" : "allocated", (unsigned long long)a->bytes, (unsigned long long)a->off,
                   d->rank, mine.op ? "freed" : "allocated", (unsigned long long)mine.bytes,
                   (unsigned long long)mine.off);
      status = TS_ERR_INVALID_ARGUMENT;
      goto cleanup;
    }
  }
cleanup:
  ts_free(all);
  sb_free(&err);
  return status;
}

static ts_status dist_api_malloc(ts_dist *d, size_t bytes, void **ptr) {
  ts_status status = need_heap(d, "ts_dist_malloc");
  if (status != TS_OK) return status;
  if (!ptr) return TS_ERR_INVALID_ARGUMENT;
  *ptr = NULL;
  uint64_t off = 0;
  bool ok = dist_symheap_alloc(&d->alloc, bytes, DIST_ALIGN, &off);
  /* Freed memory is reused: zero it before any peer can see the allocation (the agreement
   * below is also the barrier that orders this memset before peers' first access). */
  if (ok) {
    CU_CHECK(d->ctx, cuMemsetD8, (d->heap + off, 0, bytes ? bytes : 1));
    CU_CHECK(d->ctx, cuCtxSynchronize, ());
  }
  status = agree(d, "ts_dist_malloc", (SymRecord){0, bytes, ok ? off : 0, ok});
  if (status != TS_OK) goto cleanup;
  /* Callers zero or fill the new block and then launch kernels that write to peers: leave
   * together, or a fast rank's writes can precede a slow rank's fill. */
  status = dist_release_together(d, "ts_dist_malloc");
  if (status != TS_OK) goto cleanup;
  *ptr = (void *)(uintptr_t)(d->heap + off);
  return TS_OK;
cleanup:
  if (ok) dist_symheap_free(&d->alloc, off);
  return status;
}

static ts_status dist_api_free(ts_dist *d, void *ptr) {
  ts_status status = need_heap(d, "ts_dist_free");
  if (status != TS_OK) return status;
  if (!ptr) return TS_OK;
  uint64_t p = (uint64_t)(uintptr_t)ptr;
  bool in_heap = p >= d->heap && p < d->heap + d->heap_size;
  uint64_t off = in_heap ? p - d->heap : 0;
  /* Everyone must be done with the buffer (peers may write into ours) before it is reused:
   * the agreement is that barrier, and the free happens only after it. */
  CU_CHECK(d->ctx, cuCtxSynchronize, ());
  bool ok = false;
  for (int i = 0; in_heap && i < d->alloc.nblocks; i++)
    if (d->alloc.blocks[i].off == off) ok = d->alloc.blocks[i].used;
  status = agree(d, "ts_dist_free", (SymRecord){1, 0, off, ok});
  if (status != TS_OK) {
    if (!in_heap)
      rt_set_error(d->ctx, "ts_dist_free: %p is not in the symmetric heap [%p, +%llu)", ptr,
                   (void *)(uintptr_t)d->heap, (unsigned long long)d->heap_size);
    return status;
  }
  if (!dist_symheap_free(&d->alloc, off)) {
    rt_set_error(d->ctx, "ts_dist_free: %p is not the start of a symmetric allocation", ptr);
    return TS_ERR_INVALID_ARGUMENT;
  }
cleanup:
  return status;
}

ts_status ts_dist_peer_ptr(ts_dist *d, const void *ptr, int peer, void **out) {
  if (!d || !out) return TS_ERR_INVALID_ARGUMENT;
  *out = NULL;
  uint64_t p = (uint64_t)(uintptr_t)ptr;
  if (d->host_only || p < d->heap || p >= d->heap + d->heap_size) {
    rt_set_error(d->ctx, "ts_dist_peer_ptr: %p is not in the symmetric heap", ptr);
    return TS_ERR_INVALID_ARGUMENT;
  }
  if (peer < 0 || peer >= d->world) {
    rt_set_error(d->ctx, "ts_dist_peer_ptr: peer %d is out of range (world size %d)", peer, d->world);
    return TS_ERR_INVALID_ARGUMENT;
  }
  if (!d->peer_base[peer]) {
    rt_set_error(d->ctx, "ts_dist_peer_ptr: the heap of rank %d is not mapped on rank %d (another node?)", peer,
                 d->rank);
    return TS_ERR_INVALID_ARGUMENT;
  }
  *out = (void *)(uintptr_t)(d->peer_base[peer] + (p - d->heap));
  return TS_OK;
}

/* ---- modules ----------------------------------------------------------------------------- */
ts_status ts_dist_module_attach(ts_dist *d, void *cu_module) {
  ts_status status = need_heap(d, "ts_dist_module_attach");
  if (status != TS_OK) return status;
  CUmodule mod = (CUmodule)cu_module;
  if (!mod) return TS_ERR_INVALID_ARGUMENT;
  /* NVSHMEM's module init first: it initialises the module's constant data, and the table
   * written below must not be overwritten by it. */
  if (d->backend == TS_DIST_BACKEND_NVSHMEM) {
    status = dist_nvshmem_module_init(d, mod);
    if (status != TS_OK) return status;
  }
  CUdeviceptr table = 0;
  size_t size = 0;
  CUresult r = d->x.cuModuleGetGlobal(&table, &size, mod, "ts_dist_meta");
  if (r == CUDA_ERROR_NOT_FOUND) {
    /* A module without the table needs none (not distributed, or a caller's own), except
     * one linked with NVSHMEM's device library: only dist_shmem.cuh (which defines the
     * table) brings that in, so its table was lost in the link and the kernel would read
     * zeros.  (The JIT checks its images for this; modules built elsewhere get here.) */
    CUdeviceptr st;
    size_t st_size;
    if (d->x.cuModuleGetGlobal(&st, &st_size, mod, "nvshmemi_device_state_d") == CUDA_SUCCESS) {
      rt_set_error(d->ctx, "ts_dist_module_attach: rank %d: the module is linked with NVSHMEM but has no global "
                           "ts_dist_meta (internalized by its link?); its distributed calls would read rank 0 and "
                           "null heap bases",
                   d->rank);
      return TS_ERR_INVALID_ARGUMENT;
    }
    return TS_OK;
  }
  if (r == CUDA_SUCCESS) {
    size_t need = (size_t)(2 + d->world) * sizeof(uint64_t);
    if (size < need) {
      rt_set_error(d->ctx, "ts_dist_module_attach: the module's ts_dist_meta holds %zu bytes, %zu are needed for %d "
                           "ranks",
                   size, need, d->world);
      return TS_ERR_INVALID_ARGUMENT;
    }
    uint64_t *host = ts_calloc(2 + (size_t)d->world, sizeof *host);
    host[0] = (uint64_t)d->rank;
    host[1] = (uint64_t)d->world;
    memcpy(host + 2, d->peer_base, sizeof *host * (size_t)d->world);
    CUresult cr = d->ctx->drv.cuMemcpyHtoD(table, host, need);
    ts_free(host);
    if (cr != CUDA_SUCCESS) return rt_cuda_fail(d->ctx, "cuMemcpyHtoD (ts_dist_meta)", cr);
  } else {
    return rt_cuda_fail(d->ctx, "cuModuleGetGlobal (ts_dist_meta)", r);
  }
  return TS_OK;
}

/* Loading through the runtime runs the module hook, which attaches; a module loaded before
 * this group existed, or a kernel of another context (whose loads run no hook of this group:
 * a compile thread's own context, say), is attached directly. */
ts_status ts_dist_kernel_attach(ts_dist *d, ts_kernel *k) {
  ts_status status = need_heap(d, "ts_dist_kernel_attach");
  if (status != TS_OK) return status;
  if (!k || !k->cubin) {
    rt_set_error(d->ctx, "ts_dist_kernel_attach: the kernel has no binary");
    return TS_ERR_INVALID_ARGUMENT;
  }
  /* The table never changes during a group's life, so a module that holds this group's is
   * left alone: TileScale's scripts call kernel.initialize() before every launch, and the
   * upload is a synchronous copy that would wait for the legacy default stream each time. */
  if (k->module && k->dist_attached == d->serial) return TS_OK;
  /* A kernel that calls the device library reads the table; an image without it would be
   * skipped below as "needs none": refuse it here, where source and image can be read. */
  bool uses = k->uses_dist;
  RtCubinSym sym = rt_cubin_symbol(k->cubin, k->cubin_size, "ts_dist_meta");
  if (uses && sym != RT_CUBIN_SYM_GLOBAL && sym != RT_CUBIN_SYM_LOCAL) {
    rt_set_error(d->ctx, "ts_dist_kernel_attach: kernel '%s' calls the distributed device library but its binary "
                         "does not define ts_dist_meta, so its heap table cannot be filled in",
                 k->func_name);
    return TS_ERR_INVALID_ARGUMENT;
  }
  if (k->module || k->ctx->module_hook_user != d) {
    if (!k->module) TS_CHECK(rt_kernel_load_module(k));
    TS_CHECK(ts_dist_module_attach(d, k->module));
  } else {
    TS_CHECK(rt_kernel_load_module(k)); /* the module hook attaches */
  }
  k->dist_attached = d->serial;
cleanup:
  return status;
}

int ts_dist_kernel_uses(const ts_kernel *k) {
  if (!k) return 0;
  return (k->uses_dist ? TS_DIST_USES_DEVICE_LIB : 0) | (k->uses_shmem ? TS_DIST_USES_NVSHMEM : 0);
}

void ts_dist_set_op_timeout(ts_dist *d, int op_timeout_ms) {
  if (d) d->boot.op_timeout_ms = op_timeout_ms > 0 ? op_timeout_ms : 0;
}

/* ---- synchronisation ---------------------------------------------------------------------- */
ts_status ts_dist_barrier(ts_dist *d, void *stream) {
  if (!d) return TS_ERR_INVALID_ARGUMENT;
  ts_status status = TS_OK;
  StrBuf err = {0};
  if (!d->host_only) {
    TS_CHECK(rt_ensure_device(d->ctx));
    if (stream) CU_CHECK(d->ctx, cuStreamSynchronize, ((CUstream)stream));
    else CU_CHECK(d->ctx, cuCtxSynchronize, ());
  }
  if (!dist_boot_barrier(&d->boot, &err)) {
    rt_set_error(d->ctx, "ts_dist_barrier: %s", sb_str(&err));
    status = TS_ERR_IO;
    goto cleanup;
  }
  if (!d->host_only) status = dist_release_together(d, "ts_dist_barrier");
cleanup:
  sb_free(&err);
  return status;
}

ts_status ts_dist_allgather(ts_dist *d, const void *send, size_t bytes, void *recv) {
  if (!d || (bytes && (!send || !recv))) return TS_ERR_INVALID_ARGUMENT;
  StrBuf err = {0};
  ts_status status = TS_OK;
  if (!dist_boot_allgather(&d->boot, send, bytes, recv, &err)) {
    rt_set_error(d->ctx, "ts_dist_allgather: %s", sb_str(&err));
    status = TS_ERR_IO;
  }
  sb_free(&err);
  return status;
}

ts_status ts_dist_broadcast(ts_dist *d, void *buf, size_t bytes) {
  if (!d || (bytes && !buf)) return TS_ERR_INVALID_ARGUMENT;
  StrBuf err = {0};
  ts_status status = TS_OK;
  if (!dist_boot_broadcast(&d->boot, buf, bytes, &err)) {
    rt_set_error(d->ctx, "ts_dist_broadcast: %s", sb_str(&err));
    status = TS_ERR_IO;
  }
  sb_free(&err);
  return status;
}

/* ---- host helpers ------------------------------------------------------------------------------- */
static bool wait_flags(ts_dist_wait_cmp cmp, unsigned *flags) {
  switch (cmp) {
  case TS_DIST_WAIT_GEQ: *flags = CU_STREAM_WAIT_VALUE_GEQ; return true;
  case TS_DIST_WAIT_EQ: *flags = CU_STREAM_WAIT_VALUE_EQ; return true;
  case TS_DIST_WAIT_AND: *flags = CU_STREAM_WAIT_VALUE_AND; return true;
  case TS_DIST_WAIT_NOR: *flags = CU_STREAM_WAIT_VALUE_NOR; return true;
  }
  return false;
}

ts_status ts_dist_stream_write32(ts_dist *d, void *stream, void *addr, uint32_t value) {
  ts_status status = need_heap(d, "ts_dist_stream_write32");
  if (status != TS_OK) return status;
  DIST_CU_CHECK(d, cuStreamWriteValue32, ((CUstream)stream, (CUdeviceptr)(uintptr_t)addr, value, 0));
cleanup:
  return status;
}

ts_status ts_dist_stream_write64(ts_dist *d, void *stream, void *addr, uint64_t value) {
  ts_status status = need_heap(d, "ts_dist_stream_write64");
  if (status != TS_OK) return status;
  DIST_CU_CHECK(d, cuStreamWriteValue64, ((CUstream)stream, (CUdeviceptr)(uintptr_t)addr, value, 0));
cleanup:
  return status;
}

ts_status ts_dist_stream_wait32(ts_dist *d, void *stream, void *addr, uint32_t value, ts_dist_wait_cmp cmp) {
  ts_status status = need_heap(d, "ts_dist_stream_wait32");
  if (status != TS_OK) return status;
  unsigned flags;
  if (!wait_flags(cmp, &flags)) {
    rt_set_error(d->ctx, "ts_dist_stream_wait32: unknown comparison %d", (int)cmp);
    return TS_ERR_INVALID_ARGUMENT;
  }
  DIST_CU_CHECK(d, cuStreamWaitValue32, ((CUstream)stream, (CUdeviceptr)(uintptr_t)addr, value, flags));
cleanup:
  return status;
}

ts_status ts_dist_stream_wait64(ts_dist *d, void *stream, void *addr, uint64_t value, ts_dist_wait_cmp cmp) {
  ts_status status = need_heap(d, "ts_dist_stream_wait64");
  if (status != TS_OK) return status;
  unsigned flags;
  if (!wait_flags(cmp, &flags)) {
    rt_set_error(d->ctx, "ts_dist_stream_wait64: unknown comparison %d", (int)cmp);
    return TS_ERR_INVALID_ARGUMENT;
  }
  DIST_CU_CHECK(d, cuStreamWaitValue64, ((CUstream)stream, (CUdeviceptr)(uintptr_t)addr, value, flags));
cleanup:
  return status;
}

ts_status ts_dist_host_counters_alloc(ts_dist *d, size_t bytes, void **host, void **dev) {
  ts_status status = need_heap(d, "ts_dist_host_counters_alloc");
  if (status != TS_OK) return status;
  if (!host || !dev || bytes == 0) return TS_ERR_INVALID_ARGUMENT;
  void *h = NULL;
  CUdeviceptr p = 0;
  /* PORTABLE: every context of the process sees it; DEVICEMAP: the GPU addresses it directly
   * (its writes land in host memory, where the host polls them). */
  DIST_CU_CHECK(d, cuMemHostAlloc, (&h, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  memset(h, 0, bytes);
  DIST_CU_CHECK(d, cuMemHostGetDevicePointer, (&p, h, 0));
  *host = h;
  *dev = (void *)(uintptr_t)p;
  h = NULL;
cleanup:
  if (h) d->x.cuMemFreeHost(h);
  return status;
}

ts_status ts_dist_host_counters_free(ts_dist *d, void *host) {
  ts_status status = need_heap(d, "ts_dist_host_counters_free");
  if (status != TS_OK || !host) return status;
  DIST_CU_CHECK(d, cuMemFreeHost, (host));
cleanup:
  return status;
}

void *ts_dist_copy_stream(ts_dist *d) {
  if (!d || d->host_only || need_heap(d, "ts_dist_copy_stream") != TS_OK) return NULL;
  if (!d->copy_stream) {
    CUresult r = d->x.cuStreamCreate(&d->copy_stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
      rt_cuda_fail(d->ctx, "cuStreamCreate (copy stream)", r);
      d->copy_stream = NULL;
    }
  }
  return d->copy_stream;
}

ts_status ts_dist_peer_copy(ts_dist *d, void *dst, const void *src, size_t bytes, void *stream) {
  ts_status status = need_heap(d, "ts_dist_peer_copy");
  if (status != TS_OK) return status;
  if (bytes == 0) return TS_OK;
  if (!dst || !src) return TS_ERR_INVALID_ARGUMENT;
  CUstream s = stream ? (CUstream)stream : (CUstream)ts_dist_copy_stream(d);
  if (!stream && !s) return TS_ERR_CUDA;
  /* With unified addressing a peer view is an ordinary device pointer: the driver picks the
   * copy engine and the NVLink path. */
  CU_CHECK(d->ctx, cuMemcpyDtoDAsync, ((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes, s));
cleanup:
  return status;
}

/* ---- public entry points: the context's allocation scope ---------------------------------
 * The distributed runtime allocates its state with the context's hook, like everything else
 * (rt.h); an allocation failure inside it still aborts (it holds sockets and device
 * mappings that a jump could not release safely). */
ts_status ts_dist_init(ts_context *ctx, const ts_dist_options *opt, ts_dist **out) {
  if (!ctx) return TS_ERR_INVALID_ARGUMENT;
  TsAllocScope scope;
  rt_alloc_enter(ctx, &scope, NULL);
  ts_status status = dist_api_init(ctx, opt, out);
  rt_alloc_leave(&scope);
  if (status == TS_OK) rt_context_ref(ctx); /* the context outlives the distributed one */
  return status;
}

void ts_dist_finalize(ts_dist *d) {
  if (!d) return;
  TsAllocScope scope;
  ts_context *ctx = d->ctx;
  rt_alloc_enter(ctx, &scope, NULL);
  dist_api_finalize(d);
  rt_alloc_leave(&scope);
  rt_context_unref(ctx);
}

ts_status ts_dist_malloc(ts_dist *d, size_t bytes, void **ptr) {
  if (!d) return TS_ERR_INVALID_ARGUMENT;
  TsAllocScope scope;
  rt_alloc_enter(d->ctx, &scope, NULL);
  ts_status status = dist_api_malloc(d, bytes, ptr);
  rt_alloc_leave(&scope);
  return status;
}

ts_status ts_dist_free(ts_dist *d, void *ptr) {
  if (!d) return TS_ERR_INVALID_ARGUMENT;
  TsAllocScope scope;
  rt_alloc_enter(d->ctx, &scope, NULL);
  ts_status status = dist_api_free(d, ptr);
  rt_alloc_leave(&scope);
  return status;
}
