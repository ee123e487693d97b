/* example.h — the host side shared by the distributed examples (examples/dist/NAME.c): join the
 * group, compile a TileLang kernel file through the public API, symmetric buffers, fresh
 * random data every run (each rank draws a seed; the seeds are all-gathered so every rank
 * can rebuild every other rank's input for its CPU reference), launch, compare.
 *
 *   tilescale launch -n N build/examples/dist/<name> [kernel dir]     (make check-dist)
 *
 * On the nvshmem backend without NVSHMEM installed, ex_init prints SKIP with the reason and
 * the program exits 0.  The helpers are static inline so that a program using only some of
 * them (the tests in tests/dist include this header too) builds without unused-function warnings. */
#ifndef TS_EXAMPLE_DIST_H
#define TS_EXAMPLE_DIST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tilescale.h"
#include "tilescale_dist.h"

typedef struct Ex {
  ts_context *ctx;
  ts_dist *d;
  int rank, world, failures;
  const char *dir;  /* where the kernel files are */
  uint64_t *seeds;  /* [world] */
} Ex;

/* 0: ready; 1: skip (printed, exit 0); 2: error (printed). */
static inline int ex_init(Ex *e, int argc, char **argv) {
  memset(e, 0, sizeof *e);
  e->dir = argc > 1 ? argv[1] : "examples/dist";
  ts_context_options co = {sizeof co, ts_dist_env_local_rank(), NULL, 0, 0};
  if (ts_context_create(&co, &e->ctx) != TS_OK) {
    fprintf(stderr, "ts_context_create failed\n");
    return 2;
  }
  if (ts_dist_init(e->ctx, NULL, &e->d) != TS_OK) {
    const char *be = getenv("TILESCALE_DIST_BACKEND");
    if (be && !strcmp(be, "nvshmem") && strstr(ts_last_error(e->ctx), "NVSHMEM not found")) {
      printf("SKIP %s on the nvshmem backend: %s\n", argv[0], ts_last_error(e->ctx));
      return 1;
    }
    fprintf(stderr, "ts_dist_init: %s\n", ts_last_error(e->ctx));
    return 2;
  }
  e->rank = ts_dist_rank(e->d);
  e->world = ts_dist_world_size(e->d);
  uint64_t mine = ((uint64_t)time(NULL) * 1000003u) ^ ((uint64_t)getpid() << 20) ^ ((uint64_t)e->rank * 7919u);
  e->seeds = calloc((size_t)e->world, sizeof *e->seeds);
  if (ts_dist_allgather(e->d, &mine, sizeof mine, e->seeds) != TS_OK) {
    fprintf(stderr, "seed exchange: %s\n", ts_last_error(e->ctx));
    return 2;
  }
  return 0;
}

static inline ts_kernel *ex_compile(Ex *e, const char *file, const char *func, const ts_param *params, int n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", e->dir, file);
  ts_program *prog = NULL;
  ts_kernel *k = NULL;
  if (ts_program_load_file(e->ctx, path, &prog) != TS_OK) {
    fprintf(stderr, "%s: %s\n", path, ts_last_error(e->ctx));
    return NULL;
  }
  ts_compile_options o = {sizeof o, NULL, TS_COMPILER_NVRTC, 0, NULL, 0};
  if (ts_kernel_compile(prog, func, params, n, &o, &k) != TS_OK) {
    fprintf(stderr, "%s:%s: %s\n", path, func, ts_last_error(e->ctx));
    k = NULL;
  }
  ts_program_destroy(prog);
  return k;
}

static inline void *ex_sym(Ex *e, size_t bytes) {
  void *p = NULL;
  if (ts_dist_malloc(e->d, bytes, &p) != TS_OK) {
    fprintf(stderr, "ts_dist_malloc(%zu): %s\n", bytes, ts_last_error(e->ctx));
    exit(2);
  }
  return p;
}

/* Random 16-bit patterns (the examples move data, so bit-exact comparison is the check). */
static inline void ex_fill(uint16_t *h, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    h[i] = (uint16_t)(x >> 24);
  }
}

static inline ts_arg ex_tensor(void *p, int ndim, const int64_t *shape) {
  ts_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TS_ARG_TENSOR;
  a.tensor.data = p;
  a.tensor.dtype = TS_DTYPE_FLOAT16;
  a.tensor.ndim = ndim;
  a.tensor.shape = shape;
  a.tensor.device = ts_dist_env_local_rank();
  return a;
}

/* Launch on the default stream, then wait for every rank's kernel (data pushed to us by peers
 * is complete once they all finished). */
static inline int ex_run(Ex *e, ts_kernel *k, const ts_arg *args, int n) {
  if (ts_kernel_launch(k, args, n, NULL) != TS_OK || ts_dist_barrier(e->d, NULL) != TS_OK) {
    fprintf(stderr, "launch: %s\n", ts_last_error(e->ctx));
    return 0;
  }
  return 1;
}

/* Compares n 16-bit words; prints PASS/FAIL with the first mismatch. */
static inline void ex_check(Ex *e, const char *what, const uint16_t *got, const uint16_t *want, size_t n) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i] && !bad++) first = i;
  if (bad)
    printf("FAIL %s: %zu of %zu elements differ (first at %zu: got 0x%04x, want 0x%04x)\n", what, bad, n, first,
           got[first], want[first]);
  else
    printf("PASS %s (%zu elements)\n", what, n);
  e->failures += bad != 0;
}

static inline int ex_finish(Ex *e) {
  int f = e->failures;
  ts_dist_finalize(e->d);
  ts_context_destroy(e->ctx);
  free(e->seeds);
  return f ? 1 : 0;
}

#endif
