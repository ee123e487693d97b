/* bench_dist.c — all-gather and all-to-all of TileScale-C against NCCL, in the same run, on
 * every GPU of the group (make bench-dist: `tilescale launch -n 4 build/bench_dist`).
 *
 *   ours: one kernel per collective on the symmetric heap (device/tilescale/dist.cuh): a grid
 *         of nb x P blocks; block (j, k) pushes slice j of the data for peer (rank + k) % P
 *         straight into that peer's buffer with 16-byte stores over NVLink (k = 0: the local
 *         copy), then adds 1 to the peer's signal word for this rank (release, system scope)
 *         and waits until its own word for (rank - k) % P reaches the running total of slices
 *         sent to us; the kernel ends when every peer's data has landed (no reset).
 *   NCCL: libnccl.so.2 by dlopen (torch's nvidia/nccl/lib, then system paths),
 *         ncclAllGather and grouped ncclSend/ncclRecv, NCCL_NVLS_ENABLE=0.
 *
 * Sizes are bytes per rank (64 KB .. 256 MB).  Each measurement: a rank barrier, `reps`
 * back-to-back calls, a device synchronize; the slowest rank's time counts.  Bus bandwidth
 * follows nccl-tests: all-gather (P-1)/P * P*size / t, all-to-all (P-1)/P * P*size / t with
 * size the per-peer bytes times P.  Ours is checked against the expected data once per size. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/dist/dist.h"

static const char kernels_src[] =
    "#include <tilescale/dist.cuh>\n"
    "using namespace ts::dist;\n"
    "template <bool A2A> TS_DEV void push(const uint4 *src, uint4 *dst, uint64_t *sig, unsigned long long words,\n"
    "                                     unsigned long long target) {\n"
    "  const int P = (int)num_ranks(), me = (int)rank(), k = blockIdx.y, nb = gridDim.x;\n"
    "  const int peer = (me + k) % P;\n"
    "  const uint4 *s = A2A ? src + (unsigned long long)peer * words : src;\n"
    "  uint4 *d = remote(dst + (unsigned long long)me * words, peer);\n"
    "  const unsigned long long per = (words + nb - 1) / nb, lo = per * blockIdx.x;\n"
    "  const unsigned long long hi = lo + per < words ? lo + per : words;\n"
    "  unsigned long long i = lo + threadIdx.x;\n"
    "  for (; i + 3 * blockDim.x < hi; i += 4 * blockDim.x) {\n"
    "    uint4 a = s[i], b = s[i + blockDim.x], c = s[i + 2 * blockDim.x], e = s[i + 3 * blockDim.x];\n"
    "    d[i] = a; d[i + blockDim.x] = b; d[i + 2 * blockDim.x] = c; d[i + 3 * blockDim.x] = e;\n"
    "  }\n"
    "  for (; i < hi; i += blockDim.x) d[i] = s[i];\n"
    "  if (k == 0) return;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) {\n"
    "    fence_sys();\n"
    "    atom_add<Sem::RELEASE, Scope::SYS>(sig + me, 1ull, peer);\n"
    "    wait_ge(sig + (me - k + P) % P, target);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(512) allgather(const uint4 *src, uint4 *dst, uint64_t *sig,\n"
    "    unsigned long long words, unsigned long long target) { push<false>(src, dst, sig, words, target); }\n"
    "extern \"C\" __global__ void __launch_bounds__(512) alltoall(const uint4 *src, uint4 *dst, uint64_t *sig,\n"
    "    unsigned long long words, unsigned long long target) { push<true>(src, dst, sig, words, target); }\n";

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

/* ---- measurement ------------------------------------------------------------------------------- */
typedef struct Bench {
  ts_context *ctx;
  ts_dist *d;
  int rank, world;
  CUfunction ag, a2a;
  uint64_t *sig;
  unsigned long long target; /* signal total every peer has sent us so far */
} Bench;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int launch_ours(Bench *b, int a2a, void *src, void *dst, size_t bytes) {
  unsigned long long words = bytes / 16;
  unsigned nb = (unsigned)(words / 1024);
  if (nb < 1) nb = 1;
  if (nb > 32) nb = 32;
  /* Each peer adds nb per call to our word for it; the slice count changes with the size,
   * so the wait target is the running total, not call number x nb. */
  b->target += nb;
  unsigned long long target = b->target;
  void *params[] = {&src, &dst, &b->sig, &words, &target};
  return b->ctx->drv.cuLaunchKernel(a2a ? b->a2a : b->ag, nb, (unsigned)b->world, 1, 512, 1, 1, 0, NULL, params,
                                    NULL) == CUDA_SUCCESS;
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

/* Seconds per call on the slowest rank. */
static double timed(Bench *b, Nccl *c, int nccl, int a2a, void *src, void *dst, size_t bytes, int reps) {
  for (int w = 0; w < 3; w++) nccl ? launch_nccl(b, c, a2a, src, dst, bytes) : launch_ours(b, a2a, src, dst, bytes);
  b->ctx->drv.cuCtxSynchronize();
  ts_dist_barrier(b->d, NULL);
  double t0 = now_s();
  for (int r = 0; r < reps; r++) nccl ? launch_nccl(b, c, a2a, src, dst, bytes) : launch_ours(b, a2a, src, dst, bytes);
  b->ctx->drv.cuCtxSynchronize();
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

int main(void) {
  Bench b = {0};
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
  if (rt_jit_compile(&nv, &in, &out, &err) != TS_OK || b.ctx->drv.cuModuleLoadData(&mod, out.cubin) != CUDA_SUCCESS ||
      ts_dist_module_attach(b.d, mod) != TS_OK || b.ctx->drv.cuModuleGetFunction(&b.ag, mod, "allgather") ||
      b.ctx->drv.cuModuleGetFunction(&b.a2a, mod, "alltoall")) {
    fprintf(stderr, "kernels: %s %s\n", sb_str(&err), ts_last_error(b.ctx));
    return 3;
  }
  void *src, *dst, *nsrc, *ndst;
  /* all-to-all moves P slices of `bytes` each way; all-gather receives P of them. */
  if (ts_dist_malloc(b.d, max_bytes * P, &src) || ts_dist_malloc(b.d, max_bytes * P, &dst) ||
      ts_dist_malloc(b.d, 64 * 8, (void **)&b.sig) || ts_device_malloc(b.ctx, max_bytes * P, &nsrc) ||
      ts_device_malloc(b.ctx, max_bytes * P, &ndst)) {
    fprintf(stderr, "alloc: %s\n", ts_last_error(b.ctx));
    return 4;
  }
  Nccl c;
  int have_nccl = nccl_open(&c, b.d, b.rank, P);
  if (!have_nccl && b.rank == 0) printf("NCCL not available (libnccl.so.2 not found or init failed): ours only\n");
  size_t hn = max_bytes * P / 4;
  uint32_t *h = malloc(hn * 4), *g = malloc(hn * 4);
  if (b.rank == 0)
    printf("%-10s %10s | %12s %12s | %12s %12s | %7s  (%d GPUs, bytes per rank, busbw GB/s)\n", "collective", "size",
           "ours us", "ours busbw", "nccl us", "nccl busbw", "ratio", P);
  int failures = 0;
  for (int a2a = 0; a2a < 2; a2a++) {
    for (size_t bytes = 64 << 10; bytes <= max_bytes; bytes *= 2) {
      /* per-peer slice for all-to-all: bytes per rank in total, split over P */
      size_t slice = a2a ? bytes / P : bytes;
      size_t words = (a2a ? slice * P : slice) / 4;
      fill(h, words, (uint32_t)(b.rank * 977 + bytes));
      ts_memcpy_h2d(b.ctx, src, h, words * 4);
      ts_memcpy_h2d(b.ctx, nsrc, h, words * 4);
      ts_dist_barrier(b.d, NULL);
      /* correctness of ours, once per size */
      launch_ours(&b, a2a, src, dst, slice);
      b.ctx->drv.cuCtxSynchronize();
      ts_dist_barrier(b.d, NULL);
      ts_memcpy_d2h(b.ctx, g, dst, slice * P);
      int ok = 1;
      for (int r = 0; r < P && ok; r++) {
        fill(h, words, (uint32_t)(r * 977 + bytes));
        const uint32_t *want = a2a ? h + (size_t)b.rank * slice / 4 : h;
        ok = memcmp(g + (size_t)r * slice / 4, want, slice) == 0;
      }
      failures += !ok;
      int reps = bytes <= (1 << 20) ? 200 : bytes <= (32 << 20) ? 40 : 10;
      double t = timed(&b, &c, 0, a2a, src, dst, slice, reps);
      double tn = have_nccl ? timed(&b, &c, 1, a2a, nsrc, ndst, slice, reps) : 0;
      double total = (double)slice * P;
      double bus = total * (P - 1) / P / t / 1e9, busn = tn > 0 ? total * (P - 1) / P / tn / 1e9 : 0;
      if (b.rank == 0) {
        char sz[32];
        if (bytes >= (1 << 20)) snprintf(sz, sizeof sz, "%zu MB", bytes >> 20);
        else snprintf(sz, sizeof sz, "%zu KB", bytes >> 10);
        printf("%-10s %10s | %12.1f %12.1f | %12.1f %12.1f | %6.2fx%s\n", a2a ? "all2all" : "allgather", sz, t * 1e6,
               bus, tn * 1e6, busn, tn > 0 ? tn / t : 0.0, ok ? "" : "  WRONG RESULT");
        fflush(stdout);
      }
    }
  }
  if (b.rank == 0) printf("%s\n", failures ? "bench-dist: ours produced WRONG results" : "bench-dist: results verified");
  if (have_nccl && c.destroy) c.destroy(c.comm);
  b.ctx->drv.cuModuleUnload(mod);
  rt_jit_output_free(&out);
  ts_dist_finalize(b.d);
  ts_context_destroy(b.ctx);
  free(h), free(g);
  return failures ? 1 : 0;
}
