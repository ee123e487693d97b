/* ipc.c — the `ipc` backend of the distributed runtime: one node, peers map each other's
 * heap through CUDA IPC (DESIGN.md §7).
 *
 *   cuMemAlloc(heap) -> cuIpcGetMemHandle -> allgather(handle, host, device bus id) over the
 *   rendezvous -> cuIpcOpenMemHandle(every peer, lazy peer access) -> peer_base[world]
 *
 * Legacy IPC on a cuMemAlloc'ed heap is the robust choice: it works on every driver that
 * runs our kernels, needs no file-descriptor passing (VMM POSIX handles would need a Unix
 * socket between the ranks), and one allocation per rank means one handle per rank.
 * The heap is zeroed before any peer can see it, so flags and barrier counters in fresh
 * symmetric buffers start at 0 on every rank. */
#include "dist.h"

#include <string.h>
#include <unistd.h>

/* What each rank publishes about itself. */
typedef struct IpcInfo {
  CUipcMemHandle handle;
  uint64_t heap_size;
  char host[64];   /* IPC only works within one node */
  char bus_id[32]; /* two ranks on one GPU is a launch mistake worth naming */
} IpcInfo;

ts_status dist_ipc_open(ts_dist *d) {
  ts_context *ctx = d->ctx;
  ts_status status = TS_OK;
  IpcInfo *all = NULL;
  StrBuf err = {0};
  IpcInfo me;
  memset(&me, 0, sizeof me);

  CU_CHECK(ctx, cuMemAlloc, (&d->heap, d->heap_size));
  CU_CHECK(ctx, cuMemsetD8, (d->heap, 0, d->heap_size));
  CU_CHECK(ctx, cuCtxSynchronize, ());
  DIST_CU_CHECK(d, cuIpcGetMemHandle, (&me.handle, d->heap));
  me.heap_size = d->heap_size;
  gethostname(me.host, sizeof me.host - 1);
  DIST_CU_CHECK(d, cuDeviceGetPCIBusId, (me.bus_id, (int)sizeof me.bus_id - 1, ctx->cu_device));

  all = ts_calloc((size_t)d->world, sizeof *all);
  if (!dist_boot_allgather(&d->boot, &me, sizeof me, all, &err)) {
    rt_set_error(ctx, "ts_dist_init (ipc): exchanging heap handles failed: %s", sb_str(&err));
    status = TS_ERR_INTERNAL;
    goto cleanup;
  }
  for (int r = 0; r < d->world; r++) {
    if (strcmp(all[r].host, me.host) != 0) {
      rt_set_error(ctx, "ts_dist_init (ipc): rank %d runs on host '%s' but rank %d on '%s'; the ipc backend works "
                        "within one node (use TILESCALE_DIST_BACKEND=nvshmem across nodes)",
                   r, all[r].host, d->rank, me.host);
      status = TS_ERR_UNSUPPORTED;
      goto cleanup;
    }
    if (r != d->rank && strcmp(all[r].bus_id, me.bus_id) == 0) {
      rt_set_error(ctx, "ts_dist_init (ipc): ranks %d and %d both use the GPU at PCI %s; create each rank's "
                        "context on device LOCAL_RANK (ts_dist_env_local_rank())",
                   r < d->rank ? r : d->rank, r < d->rank ? d->rank : r, me.bus_id);
      status = TS_ERR_INVALID_ARGUMENT;
      goto cleanup;
    }
    if (all[r].heap_size != d->heap_size) {
      rt_set_error(ctx, "ts_dist_init (ipc): rank %d asked for a %llu-byte heap but rank %d for %llu bytes; the "
                        "heap must have one size on every rank",
                   r, (unsigned long long)all[r].heap_size, d->rank, (unsigned long long)d->heap_size);
      status = TS_ERR_INVALID_ARGUMENT;
      goto cleanup;
    }
  }
  for (int r = 0; r < d->world; r++) {
    if (r == d->rank) {
      d->peer_base[r] = (uint64_t)d->heap;
      continue;
    }
    CUdeviceptr p = 0;
    CUresult cr = d->x.cuIpcOpenMemHandle(&p, all[r].handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (cr != CUDA_SUCCESS) {
      status = rt_cuda_fail(ctx, "cuIpcOpenMemHandle", cr);
      sb_printf(&ctx->last_error, " (mapping the heap of rank %d, GPU %s, into rank %d, GPU %s: is peer access "
                                  "possible between them?)",
                r, all[r].bus_id, d->rank, me.bus_id);
      goto cleanup;
    }
    d->peer_base[r] = (uint64_t)p;
  }
  /* Nobody may touch a peer's heap before that peer has finished zeroing it. */
  if (!dist_boot_barrier(&d->boot, &err)) {
    rt_set_error(ctx, "ts_dist_init (ipc): barrier after mapping the heaps failed: %s", sb_str(&err));
    status = TS_ERR_INTERNAL;
  }
cleanup:
  ts_free(all);
  sb_free(&err);
  return status;
}

void dist_ipc_close(ts_dist *d) {
  if (!d->x.loaded) return;
  for (int r = 0; r < d->world; r++)
    if (r != d->rank && d->peer_base && d->peer_base[r]) {
      d->x.cuIpcCloseMemHandle((CUdeviceptr)d->peer_base[r]);
      d->peer_base[r] = 0;
    }
  if (d->heap) d->ctx->drv.cuMemFree(d->heap);
  d->heap = 0;
}
