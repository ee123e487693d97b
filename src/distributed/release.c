/* release.c — letting the ranks out of a host barrier together (DESIGN.md §7).
 *
 * The rendezvous's barrier (bootstrap.c) lets the ranks go one after another: rank 0 answers
 * every rank in turn over TCP and each wakes from poll() on its own, tens of microseconds
 * apart.  A program that enqueues GPU work right after a barrier races its peers by that
 * much: TileScale's examples zero a signal array after nvshmem_create_tensor and then launch
 * a kernel that signals the peers, so a fast rank's signal can land before a slow rank's
 * zeroing and be lost (the kernel then waits forever).  NVSHMEM's host barrier is a GPU
 * barrier, so its ranks leave within a few microseconds; this round gives ours that property.
 *
 *   host barrier (TCP) -> on a private stream: write the barrier's number into this rank's
 *   slot on every peer, wait until each of this rank's slots holds it -> spin on the stream
 *
 * Every GPU sees the last rank's write within about a microsecond, and every host returns
 * within a few microseconds of that.  The slots are uint32[world] at the same heap offset on
 * every rank.  The round runs only when every rank's heap is mapped here (one node) and no
 * rank set TILESCALE_DIST_RELEASE_ROUND=0; the ranks agree on that at init. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist.h"

enum { RELEASE_MAX_MS = 60000 }; /* the round's limit when the group has no operation timeout */

/* Whether this rank can take part: every heap mapped, more than one rank, not switched off. */
bool dist_release_possible(int world, bool host_only, const uint64_t *peer_base, const char *env) {
  if (world < 2 || host_only || !peer_base) return false;
  if (env && strcmp(env, "0") == 0) return false;
  for (int r = 0; r < world; r++)
    if (!peer_base[r]) return false;
  return true;
}

ts_status dist_release_open(ts_dist *d, uint64_t slots_off) {
  ts_status status = TS_OK;
  StrBuf err = {0};
  d->release_off = slots_off;
  uint8_t mine = dist_release_possible(d->world, d->host_only, d->peer_base, getenv("TILESCALE_DIST_RELEASE_ROUND"));
  uint8_t *all = ts_calloc((size_t)d->world, 1);
  if (!dist_boot_allgather(&d->boot, &mine, 1, all, &err)) {
    rt_set_error(d->ctx, "ts_dist_init: %s", sb_str(&err));
    status = TS_ERR_IO;
    goto cleanup;
  }
  bool every = true;
  for (int r = 0; r < d->world; r++) every = every && all[r];
  if (every) {
    CUresult r = d->x.cuStreamCreate(&d->release_stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
      status = rt_cuda_fail(d->ctx, "cuStreamCreate (barrier release stream)", r);
      goto cleanup;
    }
    d->release_on = true;
  }
cleanup:
  ts_free(all);
  sb_free(&err);
  return status;
}

void dist_release_close(ts_dist *d) {
  if (d->release_stream) d->x.cuStreamDestroy(d->release_stream);
  d->release_stream = NULL;
  d->release_on = false;
}

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* After a timeout: which ranks never wrote this round's number into our slots. */
static void name_missing(ts_dist *d, const char *fn, uint32_t epoch, int limit_ms) {
  uint32_t *slots = ts_calloc((size_t)d->world, sizeof *slots);
  StrBuf who = {0};
  if (d->ctx->drv.cuMemcpyDtoH(slots, d->heap + d->release_off, sizeof *slots * (size_t)d->world) == CUDA_SUCCESS)
    for (int r = 0; r < d->world; r++)
      if (r != d->rank && (int32_t)(slots[r] - epoch) < 0) sb_printf(&who, "%s%d", who.len ? ", " : "", r);
  rt_set_error(d->ctx,
               "%s: the ranks met, but rank(s) %s never joined the GPU round that releases them together "
               "within %d ms (exited or stuck right after the barrier?)",
               fn, who.len ? sb_str(&who) : "?", limit_ms);
  sb_free(&who);
  ts_free(slots);
}

ts_status dist_release_together(ts_dist *d, const char *fn) {
  if (!d->release_on) return TS_OK;
  ts_status status = TS_OK;
  uint32_t epoch = ++d->release_epoch;
  CUstream s = d->release_stream;
  uint64_t mine = d->release_off + 4u * (uint64_t)d->rank;
  for (int r = 0; r < d->world; r++)
    if (r != d->rank) DIST_CU_CHECK(d, cuStreamWriteValue32, (s, (CUdeviceptr)(d->peer_base[r] + mine), epoch, 0));
  for (int r = 0; r < d->world; r++)
    if (r != d->rank)
      DIST_CU_CHECK(d, cuStreamWaitValue32,
                    (s, (CUdeviceptr)(d->heap + d->release_off + 4u * (uint64_t)r), epoch, CU_STREAM_WAIT_VALUE_GEQ));
  /* Spin, not a blocking synchronize: waking from a sleep is the skew this round removes.
   * Every rank passed the host barrier, so the round takes microseconds; without an
   * operation timeout it still gives up after RELEASE_MAX_MS (a rank that died right after
   * the barrier is an error, never a hang). */
  int limit_ms = d->boot.op_timeout_ms > 0 ? d->boot.op_timeout_ms : RELEASE_MAX_MS;
  int64_t deadline = now_us() + 1000ll * limit_ms;
  for (;;) {
    CUresult q = d->x.cuStreamQuery(s);
    if (q == CUDA_SUCCESS) break;
    if (q != CUDA_ERROR_NOT_READY) {
      status = rt_cuda_fail(d->ctx, "cuStreamQuery (barrier release round)", q);
      goto cleanup;
    }
    if (now_us() > deadline) {
      name_missing(d, fn, epoch, limit_ms);
      status = TS_ERR_IO;
      goto cleanup;
    }
  }
cleanup:
  /* A round that failed leaves its waits queued: later barriers use the host round only. */
  if (status != TS_OK) d->release_on = false;
  return status;
}
