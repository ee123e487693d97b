/* bench_dist.c — all-gather and all-to-all of TileScale-C against NCCL, in the same run, on
 * every GPU of the group (make bench-dist: `tilescale launch -n 4 build/bench_dist`).
 *
 *   ours: the collectives of device/tilescale/dist_coll.cuh on the symmetric heap, one
 *         kernel per call, or copy engines for large messages:
 *           push  grid (nb, P): block (j, k) stores part j of the slice for peer (rank + k) % P
 *                 into that peer's buffer (16-byte stores over NVLink), then a release add on
 *                 the peer's signal word; waits for its own word (running count, no reset)
 *           ll    the same grid, data and flag in every 16-byte line (no fence, no signal)
 *           bulk  TMA bulk copies global -> shared -> peer global, one issuing thread per block
 *           ce    one cuMemcpyDtoDAsync per peer (and chunk) on its own stream, a stream
 *                 write of the call's epoch into the peer's flag after it, and stream waits
 *                 on our own flags: the copy engines move the data, no SM is used
 *         choose() picks the protocol and shape per size (from measurements on 4 x H200).
 *   NCCL: libnccl.so.2 by dlopen (torch's nvidia/nccl/lib, then system paths),
 *         ncclAllGather and grouped ncclSend/ncclRecv, NCCL_NVLS_ENABLE=0.
 *
 * Sizes are bytes per rank (64 KB .. 256 MB).  Each measurement: a rank barrier, `reps`
 * back-to-back calls, a device synchronize; the slowest rank's time counts.  Bus bandwidth
 * follows nccl-tests: all-gather (P-1)/P * P*size / t, all-to-all (P-1)/P * size*... with
 * the per-peer slice times P.  Every configuration of ours is checked against the expected
 * data (destination poisoned first) before it is timed.
 *
 * BENCH_DIST_EXPLORE=1 adds a sweep over protocols and shapes at 64 KB .. 256 MB (one line
 * per configuration, with its ratio to NCCL); the TMA variants run last. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/dist/dist.h"

#define BULK_STAGES 4
#define BULK_CHUNK 16384
#define MAX_CE_STREAMS 16

static const char kernels_src[] =
    "#define TILESCALE_WAIT_TIMEOUT_MS 10000\n"
    "#include <tilescale/dist_coll.cuh>\n"
    "using namespace ts::dist;\n"
    "#define U64 unsigned long long\n"
    "extern \"C\" __global__ void ag_push(const uint4 *s, uint4 *d, uint64_t *sig, U64 w, U64 t, int f) {\n"
    "  coll::push<false>(s, d, sig, w, t, f != 0);\n"
    "}\n"
    "extern \"C\" __global__ void a2a_push(const uint4 *s, uint4 *d, uint64_t *sig, U64 w, U64 t, int f) {\n"
    "  coll::push<true>(s, d, sig, w, t, f != 0);\n"
    "}\n"
    "extern \"C\" __global__ void ag_ll(const uint4 *s, uint4 *d, uint4 *l, U64 w, U64 cap, unsigned e) {\n"
    "  coll::ll<false>(s, d, l, w, cap, e);\n"
    "}\n"
    "extern \"C\" __global__ void a2a_ll(const uint4 *s, uint4 *d, uint4 *l, U64 w, U64 cap, unsigned e) {\n"
    "  coll::ll<true>(s, d, l, w, cap, e);\n"
    "}\n"
    "extern \"C\" __global__ void ag_bulk(const uint4 *s, uint4 *d, uint64_t *sig, U64 w, U64 t) {\n"
    "  coll::bulk<false, 4, 16384>(s, d, sig, w, t);\n"
    "}\n"
    "extern \"C\" __global__ void a2a_bulk(const uint4 *s, uint4 *d, uint64_t *sig, U64 w, U64 t) {\n"
    "  coll::bulk<true, 4, 16384>(s, d, sig, w, t);\n"
    "}\n"
    "extern \"C\" __global__ void empty_kernel() {}\n";

/* ---- NCCL through dlopen ------------------------------------------------------------------------ */
typedef struct { char internal[128]; } NcclId;
typedef struct Nccl {
  void *h, *comm;
  int (*get_id)(NcclId *);
  int (*init_rank)(void **, int, NcclId, int);
  int (*allgather)(const void *, void *, size_t, int, void *, void *);
  int (*send)(const void *, size_t, int, int, void *, void *);
  int (*recv)(void *, size_t, int, int, void *, void *);
  int (*group_start)(void);
  int (*group_end)(void);
  int (*destroy)(void *);
} Nccl;

static void *open_nccl(char *where, size_t n) {
  char dir[2048] = "";
  FILE *p = popen("python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null", "r");
  if (p) {
    if (fgets(dir, sizeof dir, p)) dir[strcspn(dir, "\n")] = 0;
    pclose(p);
  }
  char torch_lib[2100];
  snprintf(torch_lib, sizeof torch_lib, "%s/lib/libnccl.so.2", dir);
  const char *paths[] = {torch_lib, "libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
                         "/usr/lib/x86_64-linux-gnu/libnccl.so.2"};
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
    if (i == 0 && !dir[0]) continue;
    void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
    if (h) {
      snprintf(where, n, "%s", paths[i]);
      return h;
    }
  }
  return NULL;
}

static int nccl_open(Nccl *c, ts_dist *d, int rank, int world) {
  char where[2200];
  memset(c, 0, sizeof *c);
  c->h = open_nccl(where, sizeof where);
  if (!c->h) return 0;
  *(void **)&c->get_id = dlsym(c->h, "ncclGetUniqueId");
  *(void **)&c->init_rank = dlsym(c->h, "ncclCommInitRank");
  *(void **)&c->allgather = dlsym(c->h, "ncclAllGather");
  *(void **)&c->send = dlsym(c->h, "ncclSend");
  *(void **)&c->recv = dlsym(c->h, "ncclRecv");
  *(void **)&c->group_start = dlsym(c->h, "ncclGroupStart");
  *(void **)&c->group_end = dlsym(c->h, "ncclGroupEnd");
  *(void **)&c->destroy = dlsym(c->h, "ncclCommDestroy");
  if (!c->get_id || !c->init_rank || !c->allgather || !c->send || !c->recv || !c->group_start || !c->group_end)
    return 0;
  NcclId id;
  memset(&id, 0, sizeof id);
  if (rank == 0 && c->get_id(&id) != 0) return 0;
  if (ts_dist_broadcast(d, &id, sizeof id) != TS_OK) return 0;
  if (c->init_rank(&c->comm, world, id, rank) != 0) return 0;
  if (rank == 0) printf("NCCL: %s\n", where);
  return 1;
}

/* ---- our collectives ------------------------------------------------------------------------------ */
typedef enum Proto { PROTO_PUSH, PROTO_LL, PROTO_BULK, PROTO_CE } Proto;

typedef struct Cfg {
  Proto proto;
  int nb;      /* blocks per peer (push, ll, bulk); 0: the old rule words / 1024 in [1, 32] */
  int threads; /* per block */
  int fence;   /* push: a system fence before the release add */
  int chunks;  /* ce: copies (streams) per peer */
} Cfg;

typedef struct Bench {
  ts_context *ctx;
  ts_dist *d;
  int rank, world, nsm;
  CUfunction push[2], ll[2], bulk[2], empty;
  uint64_t *sig;        /* [world] push/bulk signal words */
  uint64_t target;      /* parts every peer has sent us so far (push, bulk) */
  void *lines;          /* ll staging: [2][world][line_cap] 16-byte lines */
  uint64_t line_cap;
  uint32_t epoch;       /* ll calls so far */
  uint32_t *ce_flag;    /* [world][4]: epoch of the last copy from each peer (and chunk) */
  uint32_t ce_epoch;
  CUstream ce_stream[MAX_CE_STREAMS];
  CUevent ce_start, ce_done[MAX_CE_STREAMS];
  size_t ll_max_slice;  /* largest slice the staging area holds */
} Bench;

static const char *cfg_name(const Cfg *c, char *buf, size_t n) {
  switch (c->proto) {
  case PROTO_PUSH:
    if (c->nb) snprintf(buf, n, "push nb=%d t=%d%s", c->nb, c->threads, c->fence ? " fence" : "");
    else snprintf(buf, n, "push nb=auto t=%d%s", c->threads, c->fence ? " fence" : "");
    break;
  case PROTO_LL: snprintf(buf, n, "ll nb=%d t=%d", c->nb, c->threads); break;
  case PROTO_BULK: snprintf(buf, n, "bulk(tma) nb=%d", c->nb); break;
  case PROTO_CE: snprintf(buf, n, "ce chunks=%d", c->chunks); break;
  }
  return buf;
}

static int blocks_per_peer(const Cfg *c, size_t slice) {
  if (c->nb) return c->nb;
  unsigned long long words = slice / 16;
  int nb = (int)(words / 1024);
  return nb < 1 ? 1 : nb > 32 ? 32 : nb;
}

/* Whether the grid of a configuration is co-resident (its waits span GPUs, so a block that
 * cannot start would deadlock the call). */
static int fits(Bench *b, const Cfg *c, int a2a, size_t slice) {
  if (c->proto == PROTO_CE) return slice >= 64 * 1024 && b->world * c->chunks <= MAX_CE_STREAMS;
  if (c->proto == PROTO_LL && slice > b->ll_max_slice) return 0;
  CUfunction fn = c->proto == PROTO_PUSH ? b->push[a2a] : c->proto == PROTO_LL ? b->ll[a2a] : b->bulk[a2a];
  int threads = c->proto == PROTO_BULK ? 32 : c->threads;
  size_t smem = c->proto == PROTO_BULK ? (size_t)BULK_STAGES * BULK_CHUNK : 0;
  int per_sm = 0;
  if (b->ctx->drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, threads, smem) != CUDA_SUCCESS) return 0;
  return (long)per_sm * b->nsm >= (long)blocks_per_peer(c, slice) * b->world;
}

static int launch_ce(Bench *b, const Cfg *c, int a2a, char *src, char *dst, size_t slice) {
  const int P = b->world, me = b->rank, ch = c->chunks;
  RtDriver *dr = &b->ctx->drv;
  DistDriver *x = &b->d->x;
  const uint32_t epoch = ++b->ce_epoch;
  int ok = dr->cuEventRecord(b->ce_start, NULL) == CUDA_SUCCESS;
  const size_t per = (slice / (size_t)ch + 15) & ~(size_t)15;
  for (int k = 0; k < P && ok; k++) {
    const int q = (me + k) % P;
    void *qdst = NULL;
    ok = ts_dist_peer_ptr(b->d, dst + (size_t)me * slice, q, &qdst) == TS_OK;
    const char *s = src + (a2a ? (size_t)q * slice : 0);
    for (int i = 0; i < ch && ok; i++) {
      CUstream st = b->ce_stream[k * ch + i];
      const size_t off = (size_t)i * per < slice ? (size_t)i * per : slice;
      const size_t len = off + per < slice ? per : slice - off;
      ok = ok && x->cuStreamWaitEvent(st, b->ce_start, 0) == CUDA_SUCCESS;
      if (len)
        ok = ok && dr->cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)((char *)qdst + off),
                                         (CUdeviceptr)(uintptr_t)(s + off), len, st) == CUDA_SUCCESS;
      if (k > 0) {
        void *flag = NULL;
        ok = ok && ts_dist_peer_ptr(b->d, b->ce_flag + me * 4 + i, q, &flag) == TS_OK;
        ok = ok && x->cuStreamWriteValue32(st, (CUdeviceptr)(uintptr_t)flag, epoch, 0) == CUDA_SUCCESS;
      }
      ok = ok && dr->cuEventRecord(b->ce_done[k * ch + i], st) == CUDA_SUCCESS;
      ok = ok && x->cuStreamWaitEvent(NULL, b->ce_done[k * ch + i], 0) == CUDA_SUCCESS;
    }
  }
  for (int k = 1; k < P && ok; k++)
    for (int i = 0; i < ch && ok; i++)
      ok = x->cuStreamWaitValue32(NULL, (CUdeviceptr)(uintptr_t)(b->ce_flag + ((me - k + P) % P) * 4 + i), epoch,
                                  CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS;
  return ok;
}

static int launch_ours(Bench *b, const Cfg *c, int a2a, void *src, void *dst, size_t slice) {
  unsigned long long words = slice / 16;
  const unsigned nb = (unsigned)blocks_per_peer(c, slice), P = (unsigned)b->world;
  switch (c->proto) {
  case PROTO_PUSH: {
    b->target += nb;
    unsigned long long target = b->target;
    int fence = c->fence;
    void *params[] = {&src, &dst, &b->sig, &words, &target, &fence};
    return b->ctx->drv.cuLaunchKernel(b->push[a2a], nb, P, 1, (unsigned)c->threads, 1, 1, 0, NULL, params, NULL) ==
           CUDA_SUCCESS;
  }
  case PROTO_LL: {
    unsigned epoch = ++b->epoch;
    unsigned long long cap = b->line_cap;
    void *params[] = {&src, &dst, &b->lines, &words, &cap, &epoch};
    return b->ctx->drv.cuLaunchKernel(b->ll[a2a], nb, P, 1, (unsigned)c->threads, 1, 1, 0, NULL, params, NULL) ==
           CUDA_SUCCESS;
  }
  case PROTO_BULK: {
    b->target += nb;
    unsigned long long target = b->target;
    void *params[] = {&src, &dst, &b->sig, &words, &target};
    return b->ctx->drv.cuLaunchKernel(b->bulk[a2a], nb, P, 1, 32, 1, 1, BULK_STAGES * BULK_CHUNK, NULL, params,
                                      NULL) == CUDA_SUCCESS;
  }
  case PROTO_CE: return launch_ce(b, c, a2a, src, dst, slice);
  }
  return 0;
}

/* The configuration `make bench-dist` reports as ours, per collective and slice size. */
static Cfg choose(int a2a, size_t slice) {
  (void)a2a, (void)slice;
  Cfg c = {PROTO_PUSH, 0, 512, 1, 1};
  return c;
}

/* ---- measurement ------------------------------------------------------------------------------- */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int launch_nccl(Bench *b, Nccl *c, int a2a, void *src, void *dst, size_t bytes) {
  if (!a2a) return c->allgather(src, dst, bytes, 0 /* ncclInt8 */, c->comm, NULL) == 0;
  int ok = c->group_start() == 0;
  for (int p = 0; p < b->world; p++) {
    ok = ok && c->send((char *)src + (size_t)p * bytes, bytes, 0, p, c->comm, NULL) == 0;
    ok = ok && c->recv((char *)dst + (size_t)p * bytes, bytes, 0, p, c->comm, NULL) == 0;
  }
  return c->group_end() == 0 && ok;
}

/* A failed launch leaves the context unusable and the peers waiting: stop the whole group
 * (the launcher ends the other ranks). */
static void die(Bench *b, const char *what) {
  printf("bench-dist: rank %d: %s failed: %s\n", b->rank, what, ts_last_error(b->ctx));
  fflush(stdout);
  exit(1);
}

static void sync_all(Bench *b, const char *what) {
  CUresult r = b->ctx->drv.cuCtxSynchronize();
  if (r != CUDA_SUCCESS) {
    rt_cuda_fail(b->ctx, "cuCtxSynchronize", r);
    die(b, what);
  }
}

/* Seconds per call on the slowest rank (cfg NULL: NCCL). */
static double timed(Bench *b, Nccl *nc, const Cfg *cfg, int a2a, void *src, void *dst, size_t slice, int reps) {
  int ok = 1;
  for (int w = 0; w < 3 && ok; w++)
    ok = cfg ? launch_ours(b, cfg, a2a, src, dst, slice) : launch_nccl(b, nc, a2a, src, dst, slice);
  sync_all(b, "warm-up");
  if (!ok) die(b, "launch");
  ts_dist_barrier(b->d, NULL);
  double t0 = now_s();
  for (int r = 0; r < reps && ok; r++)
    ok = cfg ? launch_ours(b, cfg, a2a, src, dst, slice) : launch_nccl(b, nc, a2a, src, dst, slice);
  sync_all(b, "timed calls");
  if (!ok) die(b, "launch");
  double t = (now_s() - t0) / reps;
  double *all = calloc((size_t)b->world, sizeof *all);
  ts_dist_allgather(b->d, &t, sizeof t, all);
  double mx = 0;
  for (int r = 0; r < b->world; r++) mx = all[r] > mx ? all[r] : mx;
  free(all);
  return mx;
}

static void fill(uint32_t *h, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) x ^= x << 13, x ^= x >> 17, x ^= x << 5, h[i] = x;
}

/* One call of cfg into a poisoned destination, compared with want (slice * P bytes). */
static int verify(Bench *b, const Cfg *cfg, int a2a, void *src, void *dst, size_t slice, const void *want, void *got) {
  const size_t total = slice * (size_t)b->world;
  ts_memset_d8(b->ctx, dst, 0xEE, total);
  ts_dist_barrier(b->d, NULL);
  if (!launch_ours(b, cfg, a2a, src, dst, slice)) die(b, "launch");
  sync_all(b, "verification call");
  ts_dist_barrier(b->d, NULL);
  ts_memcpy_d2h(b->ctx, got, dst, total);
  int ok = memcmp(got, want, total) == 0, all_ok = 1;
  int *oks = calloc((size_t)b->world, sizeof *oks);
  ts_dist_allgather(b->d, &ok, sizeof ok, oks);
  for (int r = 0; r < b->world; r++) all_ok &= oks[r];
  free(oks);
  return all_ok;
}

static double busbw(size_t slice, int P, double t) {
  return t > 0 ? (double)slice * P * (P - 1) / P / t / 1e9 : 0;
}

static const char *size_name(size_t bytes, char *buf, size_t n) {
  if (bytes >= (1 << 20)) snprintf(buf, n, "%zu MB", bytes >> 20);
  else snprintf(buf, n, "%zu KB", bytes >> 10);
  return buf;
}

/* Host data for one size: this rank's src and the dst every rank must end with. */
static void prepare(Bench *b, int a2a, size_t bytes, void *src, void *nsrc, uint32_t *h, uint32_t *want) {
  const int P = b->world;
  const size_t slice = a2a ? bytes / (size_t)P : bytes, words = (a2a ? slice * P : slice) / 4;
  fill(h, words, (uint32_t)(b->rank * 977 + bytes));
  ts_memcpy_h2d(b->ctx, src, h, words * 4);
  ts_memcpy_h2d(b->ctx, nsrc, h, words * 4);
  for (int r = 0; r < P; r++) {
    fill(h, words, (uint32_t)(r * 977 + bytes));
    const uint32_t *from = a2a ? h + (size_t)b->rank * slice / 4 : h;
    memcpy(want + (size_t)r * slice / 4, from, slice);
  }
  ts_dist_barrier(b->d, NULL);
}

static int reps_for(size_t bytes) {
  return bytes <= (1 << 20) ? 200 : bytes <= (32 << 20) ? 40 : 10;
}

/* ---- the sweep (BENCH_DIST_EXPLORE=1) ------------------------------------------------------- */
static int explore_cfgs(int a2a, size_t slice, int bulk_pass, Cfg *out) {
  (void)a2a;
  int n = 0;
  if (bulk_pass) {
    if (slice >= (1 << 20)) {
      static const int nbs[] = {8, 16, 32};
      for (int i = 0; i < 3; i++) out[n++] = (Cfg){PROTO_BULK, nbs[i], 32, 0, 1};
    }
    return n;
  }
  out[n++] = (Cfg){PROTO_PUSH, 0, 512, 1, 1}; /* the previous kernel */
  if (slice <= (1 << 20)) {
    static const int nbs[] = {1, 2, 4, 8, 16, 32};
    static const int ths[] = {256, 512, 1024};
    for (int i = 0; i < 6; i++) {
      for (int t = 0; t < 3; t++) out[n++] = (Cfg){PROTO_PUSH, nbs[i], ths[t], 0, 1};
      out[n++] = (Cfg){PROTO_PUSH, nbs[i], 512, 1, 1};
    }
  } else {
    static const int nbs[] = {16, 24, 32, 48, 64};
    static const int ths[] = {512, 1024};
    for (int i = 0; i < 5; i++)
      for (int t = 0; t < 2; t++) out[n++] = (Cfg){PROTO_PUSH, nbs[i], ths[t], 0, 1};
  }
  if (slice <= (4 << 20)) {
    static const int nbs[] = {1, 2, 4, 8, 16, 32};
    static const int ths[] = {256, 1024};
    for (int i = 0; i < 6; i++)
      for (int t = 0; t < 2; t++) out[n++] = (Cfg){PROTO_LL, nbs[i], ths[t], 0, 1};
  }
  if (slice >= (1 << 20))
    for (int c = 1; c <= 4; c *= 2) out[n++] = (Cfg){PROTO_CE, 0, 0, 0, c};
  return n;
}

static void floors(Bench *b) {
  /* An empty kernel, and a push of nothing (signal round trip only). */
  const int reps = 500;
  sync_all(b, "floors");
  ts_dist_barrier(b->d, NULL);
  double t0 = now_s();
  for (int r = 0; r < reps; r++)
    if (b->ctx->drv.cuLaunchKernel(b->empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS) die(b, "empty");
  sync_all(b, "empty kernels");
  double te = (now_s() - t0) / reps;
  Cfg sig = {PROTO_PUSH, 1, 32, 0, 1};
  double ts = timed(b, NULL, &sig, 0, NULL, NULL, 0, reps);
  Cfg sigf = {PROTO_PUSH, 1, 32, 1, 1};
  double tf = timed(b, NULL, &sigf, 0, NULL, NULL, 0, reps);
  if (b->rank == 0)
    printf("floors: empty kernel %.2f us/call, signal-only push %.2f us, with fence %.2f us\n", te * 1e6, ts * 1e6,
           tf * 1e6);
}

static void explore(Bench *b, void *src, void *dst, void *nsrc, uint32_t *h, uint32_t *want, void *got,
                    double nccl_us[2][16], int bulk_pass) {
  static const int exps[] = {16, 18, 20, 22, 24, 26, 28}; /* 64 KB .. 256 MB */
  const int P = b->world;
  Cfg cfgs[128];
  for (int a2a = 0; a2a < 2; a2a++)
    for (int e = 0; e < 7; e++) {
      const size_t bytes = (size_t)1 << exps[e], slice = a2a ? bytes / (size_t)P : bytes;
      int n = explore_cfgs(a2a, slice, bulk_pass, cfgs);
      if (!n) continue;
      prepare(b, a2a, bytes, src, nsrc, h, want);
      for (int i = 0; i < n; i++) {
        char name[64], sz[32];
        cfg_name(&cfgs[i], name, sizeof name);
        if (!fits(b, &cfgs[i], a2a, slice)) {
          if (b->rank == 0) printf("explore %-9s %7s | %-24s | skipped (grid not co-resident)\n", a2a ? "all2all" : "allgather",
                                   size_name(bytes, sz, sizeof sz), name);
          continue;
        }
        if (b->rank == 0) fflush(stdout);
        /* Above 64 MB only the timing: the same configurations were checked at smaller sizes
         * (the main table checks what it reports at every size). */
        int ok = bytes > (64u << 20) || verify(b, &cfgs[i], a2a, src, dst, slice, want, got);
        double t = timed(b, NULL, &cfgs[i], a2a, src, dst, slice, reps_for(bytes));
        double tn = nccl_us[a2a][exps[e] - 16] * 1e-6;
        if (b->rank == 0) {
          printf("explore %-9s %7s | %-24s | %10.1f us %8.1f GB/s | %6.2fx%s\n", a2a ? "all2all" : "allgather",
                 size_name(bytes, sz, sizeof sz), name, t * 1e6, busbw(slice, P, t), tn > 0 ? tn / t : 0.0,
                 ok ? "" : "  WRONG RESULT");
          fflush(stdout);
        }
      }
    }
}

int main(void) {
  Bench b;
  memset(&b, 0, sizeof b);
  ts_context_options co = {sizeof co, ts_dist_env_local_rank(), NULL, 0, 0};
  if (ts_context_create(&co, &b.ctx) != TS_OK || ts_dist_init(b.ctx, NULL, &b.d) != TS_OK) {
    fprintf(stderr, "init: %s\n", b.ctx ? ts_last_error(b.ctx) : "no context");
    return 2;
  }
  b.rank = ts_dist_rank(b.d);
  b.world = ts_dist_world_size(b.d);
  const size_t max_bytes = 256ull << 20;
  const int P = b.world;
  RtNvrtc nv = {0};
  StrBuf err = {0};
  RtJitInput in = {0};
  RtJitOutput out = {0};
  in.source = kernels_src;
  in.name = "bench_dist.cu";
  in.target = (TsTarget){ts_context_device_sm(b.ctx), ts_context_device_sm(b.ctx) >= 90};
  in.headers = ts_device_headers;
  in.nheaders = ts_device_headers_count;
  CUmodule mod;
  RtDriver *dr = &b.ctx->drv;
  if (rt_jit_compile(&nv, &in, &out, &err) != TS_OK || dr->cuModuleLoadData(&mod, out.cubin) != CUDA_SUCCESS ||
      ts_dist_module_attach(b.d, mod) != TS_OK || dr->cuModuleGetFunction(&b.push[0], mod, "ag_push") ||
      dr->cuModuleGetFunction(&b.push[1], mod, "a2a_push") || dr->cuModuleGetFunction(&b.ll[0], mod, "ag_ll") ||
      dr->cuModuleGetFunction(&b.ll[1], mod, "a2a_ll") || dr->cuModuleGetFunction(&b.bulk[0], mod, "ag_bulk") ||
      dr->cuModuleGetFunction(&b.bulk[1], mod, "a2a_bulk") || dr->cuModuleGetFunction(&b.empty, mod, "empty_kernel") ||
      dr->cuFuncSetAttribute(b.bulk[0], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, BULK_STAGES * BULK_CHUNK) ||
      dr->cuFuncSetAttribute(b.bulk[1], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, BULK_STAGES * BULK_CHUNK) ||
      dr->cuDeviceGetAttribute(&b.nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, b.ctx->cu_device)) {
    fprintf(stderr, "kernels: %s %s\n", sb_str(&err), ts_last_error(b.ctx));
    return 3;
  }
  void *src, *dst, *nsrc, *ndst;
  /* all-to-all moves P slices of `bytes / P` each way; all-gather receives P of `bytes`. */
  b.ll_max_slice = 4u << 20;
  b.line_cap = 2 * b.ll_max_slice / 16;
  if (ts_dist_malloc(b.d, max_bytes * P, &src) || ts_dist_malloc(b.d, max_bytes * P, &dst) ||
      ts_dist_malloc(b.d, 64 * 8, (void **)&b.sig) || ts_dist_malloc(b.d, 64 * 4 * 4, (void **)&b.ce_flag) ||
      ts_dist_malloc(b.d, 2 * (size_t)P * b.line_cap * 16, &b.lines) || ts_device_malloc(b.ctx, max_bytes * P, &nsrc) ||
      ts_device_malloc(b.ctx, max_bytes * P, &ndst)) {
    fprintf(stderr, "alloc: %s\n", ts_last_error(b.ctx));
    return 4;
  }
  if (dr->cuEventCreate(&b.ce_start, CU_EVENT_DISABLE_TIMING)) die(&b, "cuEventCreate");
  for (int i = 0; i < MAX_CE_STREAMS; i++)
    if (b.d->x.cuStreamCreate(&b.ce_stream[i], CU_STREAM_NON_BLOCKING) ||
        dr->cuEventCreate(&b.ce_done[i], CU_EVENT_DISABLE_TIMING))
      die(&b, "stream/event creation");
  Nccl c;
  int have_nccl = nccl_open(&c, b.d, b.rank, P);
  if (!have_nccl && b.rank == 0) printf("NCCL not available (libnccl.so.2 not found or init failed): ours only\n");
  size_t hn = max_bytes * P / 4;
  uint32_t *h = malloc(hn * 4), *want = malloc(hn * 4), *got = malloc(hn * 4);
  double nccl_us[2][16];
  memset(nccl_us, 0, sizeof nccl_us);
  if (b.rank == 0)
    printf("%-10s %10s | %12s %12s | %12s %12s | %7s  %s  (%d GPUs, bytes per rank, busbw GB/s)\n", "collective",
           "size", "ours us", "ours busbw", "nccl us", "nccl busbw", "ratio", "ours is", P);
  int failures = 0;
  for (int a2a = 0; a2a < 2; a2a++) {
    for (size_t bytes = 64 << 10; bytes <= max_bytes; bytes *= 2) {
      const size_t slice = a2a ? bytes / P : bytes;
      prepare(&b, a2a, bytes, src, nsrc, h, want);
      Cfg cfg = choose(a2a, slice);
      const int fit = fits(&b, &cfg, a2a, slice);
      int ok = fit && verify(&b, &cfg, a2a, src, dst, slice, want, got);
      failures += !ok;
      const int reps = reps_for(bytes);
      double t = fit ? timed(&b, NULL, &cfg, a2a, src, dst, slice, reps) : 0;
      double tn = have_nccl ? timed(&b, &c, NULL, a2a, nsrc, ndst, slice, reps) : 0;
      int e = 0;
      while (((size_t)64 << 10 << e) < bytes) e++;
      nccl_us[a2a][e] = tn * 1e6;
      if (b.rank == 0) {
        char sz[32], name[64];
        printf("%-10s %10s | %12.1f %12.1f | %12.1f %12.1f | %6.2fx  %s%s\n", a2a ? "all2all" : "allgather",
               size_name(bytes, sz, sizeof sz), t * 1e6, busbw(slice, P, t), tn * 1e6, busbw(slice, P, tn),
               tn > 0 ? tn / t : 0.0, cfg_name(&cfg, name, sizeof name), ok ? "" : "  WRONG RESULT");
        fflush(stdout);
      }
    }
  }
  if (b.rank == 0) printf("%s\n", failures ? "bench-dist: ours produced WRONG results" : "bench-dist: results verified");
  const char *ex = getenv("BENCH_DIST_EXPLORE");
  if (ex && *ex && strcmp(ex, "0")) {
    floors(&b);
    explore(&b, src, dst, nsrc, h, want, got, nccl_us, 0);
    if (b.rank == 0) printf("explore: TMA bulk variants (last: a fault here ends the run)\n");
    explore(&b, src, dst, nsrc, h, want, got, nccl_us, 1);
  }
  if (have_nccl && c.destroy) c.destroy(c.comm);
  dr->cuModuleUnload(mod);
  rt_jit_output_free(&out);
  ts_dist_finalize(b.d);
  ts_context_destroy(b.ctx);
  free(h), free(want), free(got);
  return failures ? 1 : 0;
}
