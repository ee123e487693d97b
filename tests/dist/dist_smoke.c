/* dist_smoke.c — 2+-rank GPU smoke test of the distributed runtime and dist.cuh, run by
 * `tilescale launch -n 2 build/test_dist_smoke` (make check-dist, on GPU machines only).
 *
 *   ts_dist_init -> hand-written CUDA kernels (dist.cuh) compiled through the runtime's
 *   JIT -> module load + ts_dist_module_attach -> checks against host-computed values
 *
 * Cases: put_warp / get_block round trip with the right neighbour, st(release, sys) data +
 * flag handed to the neighbour and received with wait_eq (acquire), barrier_blocks reused
 * several times, host helpers (stream write/wait of a flag, peer copy, mapped counters), the
 * GPU round that releases the ranks of a host barrier together.
 * Every rank prints "PASS <case>" or "FAIL <case>: why"; the exit code is non-zero on any
 * failure, which the launcher reports with the rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/distributed/dist.h"

static const char kernels_src[] =
    "#define TILESCALE_WAIT_TIMEOUT_MS 10000\n"
    "#include <tilescale/dist.cuh>\n"
    "using namespace ts::dist;\n"
    "/* my src -> neighbour's dst (put, warp), then pull neighbour's src into got (get, block). */\n"
    "extern \"C\" __global__ void roundtrip(const float *src, float *dst, float *got, int n) {\n"
    "  int peer = (int)((rank() + 1) % num_ranks());\n"
    "  if (threadIdx.x < 32) put_warp(src, dst, n, peer);\n"
    "  __syncthreads();\n"
    "  get_block(src, got, n, peer);\n"
    "}\n"
    "/* data with weak stores, flag with a release store at system scope; the receiver waits with\n"
    "   acquire and must then see every data word. */\n"
    "extern \"C\" __global__ void handoff(int *data, unsigned long long *flag, int *seen, int n, int round) {\n"
    "  int peer = (int)((rank() + 1) % num_ranks());\n"
    "  for (int i = threadIdx.x; i < n; i += blockDim.x) st(data + i, (int)rank() * 100000 + i + round, peer);\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) { fence_sys(); st<Sem::RELEASE, Scope::SYS>(flag, (unsigned long long)round, peer); }\n"
    "  if (threadIdx.x == 0) wait_eq(flag, (unsigned long long)round);\n"
    "  __syncthreads();\n"
    "  int from = (int)((rank() + num_ranks() - 1) % num_ranks());\n"
    "  for (int i = threadIdx.x; i < n; i += blockDim.x) seen[i] = ld<Sem::RELAXED, Scope::SYS>(data + i) == from * 100000 + i + round;\n"
    "}\n"
    "/* every rank increments every peer's counter slot, then barriers; after the barrier all\n"
    "   increments for this round must be visible. */\n"
    "extern \"C\" __global__ void barrier_test(int *bar, int *counter, int *ok, int round) {\n"
    "  for (int r = threadIdx.x; r < (int)num_ranks(); r += blockDim.x) atom_add<Sem::RELAXED, Scope::SYS>(counter, 1, r);\n"
    "  barrier_blocks(bar);\n"
    "  if (threadIdx.x == 0) ok[round] = ld<Sem::ACQUIRE, Scope::SYS>(counter) == (round + 1) * (int)num_ranks();\n"
    "  barrier_blocks(bar);\n"
    "}\n";

#define N 4096

typedef struct Smoke {
  ts_context *ctx;
  ts_dist *d;
  CUmodule mod;
  int rank, world, failures;
} Smoke;

static void report(Smoke *s, const char *name, int ok, const char *why) {
  if (ok) printf("PASS %s\n", name);
  else printf("FAIL %s: %s\n", name, why ? why : ts_last_error(s->ctx));
  s->failures += !ok;
}

#define DRV(s) (&(s)->ctx->drv)
#define LAUNCH(s, fn, grid, block, params)                                                            \
  (DRV(s)->cuLaunchKernel((fn), (grid), 1, 1, (block), 1, 1, 0, NULL, (params), NULL) == CUDA_SUCCESS && \
   DRV(s)->cuCtxSynchronize() == CUDA_SUCCESS)

static CUfunction function(Smoke *s, const char *name) {
  CUfunction f = NULL;
  if (DRV(s)->cuModuleGetFunction(&f, s->mod, name) != CUDA_SUCCESS) return NULL;
  return f;
}

static void case_roundtrip(Smoke *s) {
  float *src, *dst, *got;
  if (ts_dist_malloc(s->d, N * 4, (void **)&src) || ts_dist_malloc(s->d, N * 4, (void **)&dst) ||
      ts_dist_malloc(s->d, N * 4, (void **)&got))
    return report(s, "roundtrip", 0, NULL);
  float host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (float)(s->rank * 1000 + (rand() % 997));
  ts_memcpy_h2d(s->ctx, src, host, sizeof host);
  ts_dist_barrier(s->d, NULL);
  CUfunction f = function(s, "roundtrip");
  int n = N - 3; /* not a multiple of 4: the element path runs too */
  void *params[] = {&src, &dst, &got, &n};
  if (!f || !LAUNCH(s, f, 1, 128, params)) return report(s, "roundtrip", 0, "launch failed");
  ts_dist_barrier(s->d, NULL);
  /* dst holds the left neighbour's src; check it through an allgather of everyone's data. */
  float *all = malloc(sizeof host * (size_t)s->world);
  ts_dist_allgather(s->d, host, sizeof host, all);
  int left = (s->rank + s->world - 1) % s->world, right = (s->rank + 1) % s->world, ok = 1;
  ts_memcpy_d2h(s->ctx, back, dst, sizeof back);
  for (int i = 0; i < n; i++) ok &= back[i] == all[left * N + i];
  ts_memcpy_d2h(s->ctx, back, got, sizeof back);
  for (int i = 0; i < n; i++) ok &= back[i] == all[right * N + i];
  free(all);
  report(s, "roundtrip (put_warp + get_block)", ok, ok ? NULL : "wrong data");
  ts_dist_free(s->d, got);
  ts_dist_free(s->d, dst);
  ts_dist_free(s->d, src);
}

static void case_handoff(Smoke *s) {
  int *data, *seen;
  unsigned long long *flag;
  if (ts_dist_malloc(s->d, N * 4, (void **)&data) || ts_dist_malloc(s->d, 8, (void **)&flag) ||
      ts_dist_malloc(s->d, N * 4, (void **)&seen))
    return report(s, "handoff", 0, NULL);
  CUfunction f = function(s, "handoff");
  int ok = f != NULL, n = N;
  for (int round = 1; round <= 3 && ok; round++) {
    void *params[] = {&data, &flag, &seen, &n, &round};
    ok = LAUNCH(s, f, 1, 256, params);
    int host[N];
    ts_memcpy_d2h(s->ctx, host, seen, sizeof host);
    for (int i = 0; i < N && ok; i++) ok = host[i] == 1;
    ts_dist_barrier(s->d, NULL);
  }
  report(s, "handoff (st release sys / wait_eq acquire, 64-bit flag)", ok, ok ? NULL : "data not visible");
}

static void case_barrier(Smoke *s) {
  int *bar, *counter, *okv;
  if (ts_dist_malloc(s->d, 4 * (size_t)s->world, (void **)&bar) || ts_dist_malloc(s->d, 4, (void **)&counter) ||
      ts_dist_malloc(s->d, 64, (void **)&okv))
    return report(s, "barrier", 0, NULL);
  CUfunction f = function(s, "barrier_test");
  int ok = f != NULL;
  for (int round = 0; round < 8 && ok; round++) {
    void *params[] = {&bar, &counter, &okv, &round};
    ok = LAUNCH(s, f, 1, 64, params);
  }
  int host[16] = {0};
  ts_memcpy_d2h(s->ctx, host, okv, sizeof host);
  for (int r = 0; r < 8 && ok; r++) ok = host[r] == 1;
  int barz[TS_DIST_MAX_RANKS] = {0};
  ts_memcpy_d2h(s->ctx, barz, bar, 4 * (size_t)s->world);
  for (int r = 0; r < s->world && ok; r++) ok = barz[r] == 0; /* a barrier leaves its buffer zero */
  report(s, "barrier_blocks x8", ok, ok ? NULL : "counter or barrier buffer wrong");
}

static void case_host_helpers(Smoke *s) {
  unsigned *flag;
  float *buf;
  void *hc = NULL, *dc = NULL;
  int ok = ts_dist_malloc(s->d, 8, (void **)&flag) == TS_OK && ts_dist_malloc(s->d, N * 4, (void **)&buf) == TS_OK;
  int right = (s->rank + 1) % s->world;
  void *peer_flag = NULL, *peer_buf = NULL;
  ok = ok && ts_dist_peer_ptr(s->d, flag, right, &peer_flag) == TS_OK &&
       ts_dist_peer_ptr(s->d, buf, right, &peer_buf) == TS_OK;
  float host[N];
  for (int i = 0; i < N; i++) host[i] = (float)(s->rank + i);
  ok = ok && ts_memcpy_h2d(s->ctx, buf, host, sizeof host) == TS_OK;
  ts_dist_barrier(s->d, NULL);
  /* Pull the right neighbour's buffer through the copy engine, then raise its flag from
   * the same stream; our own flag is raised by the left neighbour. */
  float *mine_copy = NULL;
  ok = ok && ts_dist_malloc(s->d, N * 4, (void **)&mine_copy) == TS_OK;
  ok = ok && ts_dist_peer_copy(s->d, mine_copy, peer_buf, N * 4, NULL) == TS_OK;
  void *cs = ts_dist_copy_stream(s->d);
  ok = ok && ts_dist_stream_write32(s->d, cs, peer_flag, 7) == TS_OK;
  ok = ok && ts_dist_stream_wait32(s->d, cs, flag, 7, TS_DIST_WAIT_EQ) == TS_OK;
  ok = ok && DRV(s)->cuStreamSynchronize((CUstream)cs) == CUDA_SUCCESS;
  float back[N];
  ok = ok && ts_memcpy_d2h(s->ctx, back, mine_copy, sizeof back) == TS_OK;
  for (int i = 0; i < N && ok; i++) ok = back[i] == (float)(right + i);
  ok = ok && ts_dist_host_counters_alloc(s->d, 64, &hc, &dc) == TS_OK;
  ok = ok && ts_dist_stream_write64(s->d, NULL, dc, 0x1122334455667788ull) == TS_OK && ts_synchronize(s->ctx) == TS_OK;
  ok = ok && *(volatile unsigned long long *)hc == 0x1122334455667788ull;
  if (hc) ts_dist_host_counters_free(s->d, hc);
  ts_dist_barrier(s->d, NULL);
  report(s, "host helpers (peer copy, stream write/wait, mapped counters)", ok, NULL);
}

/* Skews of `rounds` barriers in a row: for each, the latest minus the earliest rank's
 * CLOCK_MONOTONIC right after it returned (one host: one clock), sorted, in microseconds. */
static double *barrier_skews(Smoke *s, int rounds) {
  int64_t *mine = calloc((size_t)rounds, sizeof *mine), *all = calloc((size_t)rounds * s->world, sizeof *all);
  double *skew = calloc((size_t)rounds, sizeof *skew);
  for (int i = 0; i < rounds; i++) {
    ts_dist_barrier(s->d, NULL);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    mine[i] = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
  }
  ts_dist_allgather(s->d, mine, sizeof *mine * (size_t)rounds, all);
  for (int i = 0; i < rounds; i++) {
    int64_t lo = all[i], hi = all[i];
    for (int r = 1; r < s->world; r++) {
      int64_t v = all[(size_t)r * rounds + i];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    skew[i] = (double)(hi - lo) / 1000.0;
  }
  for (int i = 1; i < rounds; i++) /* insertion sort: a few hundred values */
    for (int j = i; j > 0 && skew[j] < skew[j - 1]; j--) {
      double t = skew[j];
      skew[j] = skew[j - 1];
      skew[j - 1] = t;
    }
  free(mine);
  free(all);
  return skew;
}

/* The barriers' release round (src/distributed/release.c): after it ran, every peer's slot
 * here holds the number of the last barrier (each rank wrote it), and the ranks leave a
 * barrier closer together than the TCP barrier alone lets them (both skews printed). */
static void case_release_round(Smoke *s) {
  enum { ROUNDS = 200 };
  if (!s->d->release_on) return report(s, "barrier release round: off (a heap not mapped here, or switched off)", 1, NULL);
  s->d->release_on = false; /* every rank alike: the TCP barrier alone */
  double *tcp = barrier_skews(s, ROUNDS);
  s->d->release_on = true;
  double *gpu = barrier_skews(s, ROUNDS);
  uint32_t slots[TS_DIST_MAX_RANKS] = {0};
  int ok = DRV(s)->cuMemcpyDtoH(slots, s->d->heap + s->d->release_off, 4 * (size_t)s->world) == CUDA_SUCCESS;
  for (int r = 0; r < s->world && ok; r++) ok = r == s->rank || slots[r] == s->d->release_epoch;
  char what[256];
  snprintf(what, sizeof what,
           "barrier release round (%d barriers): ranks leave within median %.1f us, p90 %.1f us "
           "(TCP alone: median %.1f us, p90 %.1f us)",
           ROUNDS, gpu[ROUNDS / 2], gpu[ROUNDS * 9 / 10], tcp[ROUNDS / 2], tcp[ROUNDS * 9 / 10]);
  report(s, what, ok, ok ? NULL : "a peer's slot does not hold the last barrier's number");
  free(tcp);
  free(gpu);
}

int main(void) {
  Smoke s = {0};
  ts_context_options co = {sizeof co, ts_dist_env_local_rank(), NULL, 0, 0};
  if (ts_context_create(&co, &s.ctx) != TS_OK) return 2;
  if (ts_dist_init(s.ctx, NULL, &s.d) != TS_OK) {
    fprintf(stderr, "ts_dist_init: %s\n", ts_last_error(s.ctx));
    return 3;
  }
  s.rank = ts_dist_rank(s.d);
  s.world = ts_dist_world_size(s.d);
  srand(1234 + (unsigned)s.rank * 7919u);
  printf("rank %d of %d, backend %s\n", s.rank, s.world, ts_dist_backend_name(ts_dist_backend_of(s.d)));

  RtNvrtc nv = {0};
  StrBuf err = {0};
  RtJitInput in = {0};
  RtJitOutput out = {0};
  in.source = kernels_src;
  in.name = "dist_smoke.cu";
  in.target = (TsTarget){ts_context_device_sm(s.ctx), ts_context_device_sm(s.ctx) >= 90};
  in.headers = ts_device_headers;
  in.nheaders = ts_device_headers_count;
  if (rt_jit_compile(&nv, &in, &out, &err) != TS_OK) {
    fprintf(stderr, "compile failed: %s\n", sb_str(&err));
    return 4;
  }
  if (s.ctx->drv.cuModuleLoadData(&s.mod, out.cubin) != CUDA_SUCCESS ||
      ts_dist_module_attach(s.d, s.mod) != TS_OK) {
    fprintf(stderr, "module load/attach failed: %s\n", ts_last_error(s.ctx));
    return 5;
  }
  case_roundtrip(&s);
  case_handoff(&s);
  case_barrier(&s);
  case_host_helpers(&s);
  case_release_round(&s);
  s.ctx->drv.cuModuleUnload(s.mod);
  rt_jit_output_free(&out);
  rt_nvrtc_close(&nv);
  sb_free(&err);
  ts_dist_finalize(s.d);
  ts_context_destroy(s.ctx);
  printf("%s: %d failure%s\n", s.failures ? "FAIL" : "PASS", s.failures, s.failures == 1 ? "" : "s");
  return s.failures ? 1 : 0;
}
