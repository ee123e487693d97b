/* dist_prims.c — 2+-rank GPU tests of every in-kernel distributed primitive, run by
 * `tilescale launch -n N build/test_dist_prims [kernel dir]` (make check-dist, both backends).
 *
 *   TileLang kernel files (tests/dist/ldst_matrix.py, waits.py, barriers.py, workspace.py)
 *   compiled through the public API, plus hand-written kernels over dist.cuh
 *   (tests/dist/prims.cu) through the runtime's JIT -> launch on every rank -> checks of
 *   values written by one rank and observed by another, against what the host computes
 *
 * Cases (one "PASS name" / "FAIL name: why" line each, per rank):
 *   ld/st matrix      21 stores x 27 loads, 32- and 64-bit, store-remote and load-remote,
 *                     ordered by a release/acquire flag handoff, 3 rounds
 *   waits             wait_eq/ne/ge/le/gt/lt on 32- and 64-bit flags, local and remote
 *   signals           signal_op SET/ADD + signal_wait_until with every CmpType (ts::shmem:
 *                     NVSHMEM itself on the nvshmem backend)
 *   barriers          barrier_blocks / sync_blocks, 128 crossings per launch, 3 launches;
 *                     barrier_all(_block/_warp) / sync_all_block, 64 per launch, 3 launches;
 *                     fcollect_block and broadcast_block
 *   sync_grid         cooperative launch, 32 grid barriers per launch; a grid that cannot
 *                     be co-resident is refused with the occupancy error
 *   put/get           warp and block forms, 1..16-byte elements, unaligned sizes/offsets,
 *                     with guard bytes around every destination
 *   atom_add          every thread of every rank adds into counters on every rank; the
 *                     returned old values of a 64-bit counter form a permutation
 *   workspaces        T.alloc_barrier_gpu + init/arrive/wait/sync_barrier_gpu over 256 blocks,
 *                     a T.alloc_global scratch reduction; 3 launches each (zeroed per launch)
 * A launch that fails (a trap, a timeout) ends the program at once with exit code 1 so the
 * launcher stops the other ranks instead of leaving them in a collective. */
#include "../../examples/dist/example.h"
#include "../../src/distributed/dist.h"

#define NS 21 /* store variants (ldst_matrix.py) */
#define NL 27 /* load variants */

static const char *const st_variants[NS] = {
    "weak.cta",       "weak.gpu",       "weak.sys",       "weak.cta.na", "weak.gpu.na", "weak.sys.na",
    "volatile.cta",   "volatile.gpu",   "volatile.sys",   "release.cta", "release.gpu", "release.sys",
    "release.cta.na", "release.gpu.na", "release.sys.na", "relaxed.cta", "relaxed.gpu", "relaxed.sys",
    "relaxed.cta.na", "relaxed.gpu.na", "relaxed.sys.na"};
static const char *const ld_variants[NL] = {
    "weak.cta",       "weak.gpu",       "weak.sys",     "weak.cta.na",    "weak.gpu.na",
    "weak.sys.na",    "weak.cta.nc",    "weak.gpu.nc",  "weak.sys.nc",    "weak.cta.na.nc",
    "weak.gpu.na.nc", "weak.sys.na.nc", "volatile.cta", "volatile.gpu",   "volatile.sys",
    "acquire.cta",    "acquire.gpu",    "acquire.sys",  "acquire.cta.na", "acquire.gpu.na",
    "acquire.sys.na", "relaxed.cta",    "relaxed.gpu",  "relaxed.sys",    "relaxed.cta.na",
    "relaxed.gpu.na", "relaxed.sys.na"};

static void result(Ex *e, const char *name, int ok, const char *why) {
  if (ok)
    printf("PASS %s\n", name);
  else
    printf("FAIL %s: %s\n", name, why);
  fflush(stdout);
  e->failures += !ok;
}

/* The context is unusable after a failed launch (a trap) and the peers may be waiting for
 * us in a kernel or a collective: stop here, the launcher stops them. */
static void fatal(Ex *e, const char *what) {
  printf("FAIL %s: %s\n", what, ts_last_error(e->ctx));
  fflush(stdout);
  exit(1);
}

/* shape points at storage the caller keeps alive until the launch (a compound literal at
 * the call site lives to the end of the enclosing block). */
static ts_arg tensor(void *p, ts_dtype t, const int64_t *shape) {
  ts_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TS_ARG_TENSOR;
  a.tensor.data = p;
  a.tensor.dtype = t;
  a.tensor.ndim = 1;
  a.tensor.shape = shape;
  a.tensor.device = ts_dist_env_local_rank();
  return a;
}

static ts_arg scalar(int64_t v) {
  ts_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TS_ARG_SCALAR;
  a.i = v;
  return a;
}

static void launch(Ex *e, ts_kernel *k, const ts_arg *args, int n, const char *what) {
  if (ts_kernel_launch(k, args, n, NULL) != TS_OK || ts_dist_barrier(e->d, NULL) != TS_OK) fatal(e, what);
}

static int left_of(const Ex *e) {
  return (e->rank + e->world - 1) % e->world;
}
static int right_of(const Ex *e) {
  return (e->rank + 1) % e->world;
}

/* ---- ld / st matrix ------------------------------------------------------------------------ */
static uint64_t ldst_value(int is64, int writer, int s, int rnd) {
  uint64_t v = (uint64_t)((writer + 1) * 100000 + s * 1000 + rnd);
  return is64 ? v + ((uint64_t)(s + 1) << 40) : (uint64_t)(uint32_t)v;
}

static void case_ldst(Ex *e, int is64, int remote_st) {
  char name[128], why[256];
  snprintf(name, sizeof name, "ld/st matrix (%s, %s)", is64 ? "uint64" : "int32",
           remote_st ? "st to the peer, ld local" : "st local, ld from the peer");
  ts_param p[] = {{"dtype", is64 ? "\"uint64\"" : "\"int32\""}, {"remote_st", remote_st ? "True" : "False"}};
  ts_kernel *k = ex_compile(e, "ldst_matrix.py", "ldst_matrix", p, 2);
  if (!k) return result(e, name, 0, "compile failed");
  const int esz = is64 ? 8 : 4, stride = 128 / esz;
  const ts_dtype dt = is64 ? TS_DTYPE_UINT64 : TS_DTYPE_INT32;
  void *D = ex_sym(e, (size_t)NS * stride * esz), *flag = ex_sym(e, 16),
       *got = ex_sym(e, (size_t)NL * NS * esz);
  unsigned char host[NL * NS * 8];
  int ok = 1;
  why[0] = 0;
  for (int rnd = 1; rnd <= 3 && ok; rnd++) {
    ts_arg a[4] = {tensor(D, dt, &(int64_t){NS * stride}), tensor(flag, TS_DTYPE_UINT64, &(int64_t){2}),
                   tensor(got, dt, &(int64_t){NL * NS}), scalar(rnd)};
    launch(e, k, a, 4, name);
    ts_memcpy_d2h(e->ctx, host, got, (size_t)NL * NS * esz);
    for (int l = 0; l < NL && ok; l++)
      for (int s = 0; s < NS && ok; s++) {
        uint64_t g = is64 ? ((uint64_t *)host)[l * NS + s] : ((uint32_t *)host)[l * NS + s];
        uint64_t w = ldst_value(is64, left_of(e), s, rnd);
        if (g != w) {
          ok = 0;
          snprintf(why, sizeof why, "round %d: st %s by rank %d, ld %s: got %#llx, want %#llx", rnd,
                   st_variants[s], left_of(e), ld_variants[l], (unsigned long long)g, (unsigned long long)w);
        }
      }
  }
  result(e, name, ok, why);
  ts_kernel_destroy(k);
  ts_dist_free(e->d, got), ts_dist_free(e->d, flag), ts_dist_free(e->d, D);
}

/* ---- waits ------------------------------------------------------------------------------------ */
static const char *const rel_names[6] = {"wait_eq", "wait_ne", "wait_ge", "wait_le", "wait_gt", "wait_lt"};

static void case_waits(Ex *e, int is64, int remote_wait) {
  char name[128], why[256] = "";
  snprintf(name, sizeof name, "waits eq/ne/ge/le/gt/lt (%s, %s flag)", is64 ? "uint64" : "int32",
           remote_wait ? "remote" : "local");
  ts_param p[] = {{"dtype", is64 ? "\"uint64\"" : "\"int32\""},
                  {"remote_wait", remote_wait ? "True" : "False"}};
  ts_kernel *k = ex_compile(e, "waits.py", "waits", p, 2);
  if (!k) return result(e, name, 0, "compile failed");
  const int esz = is64 ? 8 : 4, stride = 128 / esz;
  const ts_dtype dt = is64 ? TS_DTYPE_UINT64 : TS_DTYPE_INT32;
  void *F = ex_sym(e, (size_t)6 * stride * esz), *D = ex_sym(e, (size_t)6 * stride * esz);
  void *V = ex_sym(e, 30 * 8), *seen = ex_sym(e, 12 * 8), *dly = ex_sym(e, 16);
  int ok = 1;
  for (int rnd = 1; rnd <= 3 && ok; rnd++) {
    /* E and the initial values put signed/unsigned and 32/64-bit mistakes on the wrong side
     * of the comparison: int32 alternates the sign of E, uint64 E has a small low word. */
    int64_t E = is64 ? (int64_t)(((uint64_t)rnd << 32) + 3) : (rnd & 1 ? -(rnd * 1000 + 7) : rnd * 1000 + 7);
    int64_t rows[6][5] = {{E - 5, E - 1, E, E, 0},        {E, E, E + 7, E, 0},
                          {E - 3000, E - 1, E + 3, E, 0}, {E + 3000, E + 1, E - 2, E, 0},
                          {E - 3000, E, E + 1, E, 0},     {E + 3000, E, E - 1, E, 0}};
    for (int i = 0; i < 6; i++)
      rows[i][4] = 0x1000 * (i + 1) + rnd * 16 + (is64 ? (int64_t)(i + 1) << 40 : 0);
    unsigned char vt[30 * 8], ft[6 * 32 * 8];
    memset(ft, 0, sizeof ft);
    for (int i = 0; i < 6; i++) {
      for (int c = 0; c < 5; c++) {
        if (is64)
          ((uint64_t *)vt)[i * 5 + c] = (uint64_t)rows[i][c];
        else
          ((int32_t *)vt)[i * 5 + c] = (int32_t)rows[i][c];
      }
      if (is64)
        ((uint64_t *)ft)[i * stride] = (uint64_t)rows[i][0];
      else
        ((int32_t *)ft)[i * stride] = (int32_t)rows[i][0];
    }
    ts_memcpy_h2d(e->ctx, V, vt, (size_t)30 * esz);
    ts_memcpy_h2d(e->ctx, F, ft, (size_t)6 * stride * esz);
    ts_memset_d8(e->ctx, seen, 0, 12 * 8);
    if (ts_dist_barrier(e->d, NULL) != TS_OK) fatal(e, name);
    ts_arg a[5] = {tensor(F, dt, &(int64_t){6 * stride}), tensor(D, dt, &(int64_t){6 * stride}),
                   tensor(V, dt, &(int64_t){30}), tensor(seen, dt, &(int64_t){12}),
                   tensor(dly, TS_DTYPE_INT32, &(int64_t){4})};
    a[2].tensor.ndim = 2;
    static const int64_t vshape[2] = {6, 5};
    a[2].tensor.shape = vshape;
    launch(e, k, a, 5, name);
    unsigned char sh[12 * 8];
    ts_memcpy_d2h(e->ctx, sh, seen, (size_t)12 * esz);
    for (int i = 0; i < 6 && ok; i++) {
      int64_t data = is64 ? (int64_t)((uint64_t *)sh)[i] : ((int32_t *)sh)[i];
      int64_t fl = is64 ? (int64_t)((uint64_t *)sh)[6 + i] : ((int32_t *)sh)[6 + i];
      int64_t want_data = rows[i][4] + left_of(e), want_flag = rows[i][2];
      if (!is64) want_data = (int32_t)want_data, want_flag = (int32_t)want_flag;
      if (data != want_data || fl != want_flag) {
        ok = 0;
        snprintf(why, sizeof why,
                 "round %d, %s(expected %lld): saw data %#llx (want %#llx), flag %lld (want %lld)", rnd,
                 rel_names[i], (long long)rows[i][3], (unsigned long long)data, (unsigned long long)want_data,
                 (long long)fl, (long long)want_flag);
      }
    }
  }
  result(e, name, ok, why);
  ts_kernel_destroy(k);
  ts_dist_free(e->d, dly), ts_dist_free(e->d, seen), ts_dist_free(e->d, V), ts_dist_free(e->d, D);
  ts_dist_free(e->d, F);
}

/* ---- signals (the NVSHMEM family) -------------------------------------------------------------- */
static uint16_t pattern16(int rank, int i) {
  return (uint16_t)((rank * 40503u + (unsigned)i * 2654435761u) >> 7);
}

static void case_signals(Ex *e) {
  const char *name = "signals (signal_op SET/ADD, signal_wait_until EQ/GE/GT/LE/LT/NE)";
  char why[256] = "";
  enum { N = 1000, K = 5 };
  ts_kernel *k = ex_compile(e, "waits.py", "signals", NULL, 0);
  if (!k) return result(e, name, 0, "compile failed");
  uint16_t *src = ex_sym(e, N * 2), *dst = ex_sym(e, N * 2), *out = ex_sym(e, N * 2);
  uint64_t *sig = ex_sym(e, 64), *seen = ex_sym(e, 64);
  uint16_t h[N];
  for (int i = 0; i < N; i++) h[i] = pattern16(e->rank, i);
  ts_memcpy_h2d(e->ctx, src, h, sizeof h);
  int ok = 1;
  const uint64_t W = (uint64_t)e->world;
  for (int rnd = 1; rnd <= 3 && ok; rnd++) {
    uint64_t high[3] = {1000000, 1000000, 1000000};
    ts_memcpy_h2d(e->ctx, sig + 3, high, sizeof high);
    ts_memset_d8(e->ctx, seen, 0, 64);
    ts_memset_d8(e->ctx, out, 0xff, N * 2);
    if (ts_dist_barrier(e->d, NULL) != TS_OK) fatal(e, name);
    ts_arg a[7] = {tensor(src, TS_DTYPE_FLOAT16, &(int64_t){N}),
                   tensor(dst, TS_DTYPE_FLOAT16, &(int64_t){N}),
                   tensor(out, TS_DTYPE_FLOAT16, &(int64_t){N}),
                   tensor(sig, TS_DTYPE_UINT64, &(int64_t){8}),
                   tensor(seen, TS_DTYPE_UINT64, &(int64_t){8}),
                   scalar(K),
                   scalar(rnd)};
    launch(e, k, a, 7, name);
    uint64_t s[8], g[8];
    ts_memcpy_d2h(e->ctx, s, seen, sizeof s);
    ts_memcpy_d2h(e->ctx, g, sig, sizeof g);
    uint64_t r = (uint64_t)rnd;
    if (s[0] != r || s[1] < r * W * K || s[2] != r * 4 || s[3] != r || s[4] != r || s[5] != r) {
      ok = 0;
      snprintf(why, sizeof why, "round %d: waits returned %llu %llu %llu %llu %llu %llu", rnd,
               (unsigned long long)s[0], (unsigned long long)s[1], (unsigned long long)s[2],
               (unsigned long long)s[3], (unsigned long long)s[4], (unsigned long long)s[5]);
    } else if (g[1] != r * W * K) {
      ok = 0;
      snprintf(why, sizeof why, "round %d: SIGNAL_ADD total %llu, want %llu", rnd, (unsigned long long)g[1],
               (unsigned long long)(r * W * K));
    } else {
      uint16_t o[N];
      ts_memcpy_d2h(e->ctx, o, out, sizeof o);
      for (int i = 0; i < N && ok; i++)
        if (o[i] != pattern16(left_of(e), i)) {
          ok = 0;
          snprintf(why, sizeof why, "round %d: data after the EQ wait, element %d: got %#x, want %#x", rnd, i,
                   o[i], pattern16(left_of(e), i));
        }
    }
  }
  result(e, name, ok, why);
  ts_kernel_destroy(k);
  ts_dist_free(e->d, seen), ts_dist_free(e->d, sig), ts_dist_free(e->d, out), ts_dist_free(e->d, dst);
  ts_dist_free(e->d, src);
}

/* ---- barriers ---------------------------------------------------------------------------------- */
static void case_barrier(Ex *e, int fence) {
  const char *name = fence ? "barrier_blocks x128 per launch x3" : "sync_blocks x128 per launch x3";
  char why[256] = "";
  enum { ITERS = 64, MAXR = 64 };
  if (e->world > MAXR) return result(e, name, 0, "more than 64 ranks");
  ts_param p[] = {{"iters", "64"}, {"fence", fence ? "True" : "False"}};
  ts_kernel *k = ex_compile(e, "barriers.py", "barrier_reuse", p, 2);
  if (!k) return result(e, name, 0, "compile failed");
  int *bar = ex_sym(e, MAXR * 4), *slots = ex_sym(e, MAXR * 4), *bad = ex_sym(e, 8);
  int base = 0;
  for (int l = 0; l < 3; l++) {
    base = 1000 * (l + 1);
    ts_arg a[4] = {tensor(bar, TS_DTYPE_INT32, &(int64_t){MAXR}),
                   tensor(slots, TS_DTYPE_INT32, &(int64_t){MAXR}),
                   tensor(bad, TS_DTYPE_INT32, &(int64_t){2}), scalar(base)};
    launch(e, k, a, 4, name);
  }
  int hb[MAXR], hs[MAXR], hbad[2];
  ts_memcpy_d2h(e->ctx, hb, bar, sizeof hb);
  ts_memcpy_d2h(e->ctx, hs, slots, sizeof hs);
  ts_memcpy_d2h(e->ctx, hbad, bad, sizeof hbad);
  int ok = hbad[0] == 0;
  if (!ok) snprintf(why, sizeof why, "%d stale slot reads after the barrier", hbad[0]);
  for (int r = 0; r < e->world && ok; r++) {
    if (hb[r] != 0)
      ok = 0, snprintf(why, sizeof why, "barrier word %d is %d after the last barrier, want 0", r, hb[r]);
    else if (hs[r] != base + ITERS - 1)
      ok = 0, snprintf(why, sizeof why, "slot of rank %d holds %d, want %d", r, hs[r], base + ITERS - 1);
  }
  result(e, name, ok, why);
  ts_kernel_destroy(k);
  ts_dist_free(e->d, bad), ts_dist_free(e->d, slots), ts_dist_free(e->d, bar);
}

/* ---- the NVSHMEM-family barriers and collectives ---------------------------------------------- */
static void case_shmem_barriers(Ex *e, int form) {
  static const char *const names[4] = {"int_p + barrier_all_block x64 per launch x3",
                                        "int_p + barrier_all (one thread) x64 per launch x3",
                                        "release stores + sync_all_block x64 per launch x3",
                                        "int_p + barrier_all_warp x64 per launch x3"};
  const char *name = names[form];
  char why[256] = "";
  enum { ITERS = 32, MAXR = 64 };
  if (e->world > MAXR) return result(e, name, 0, "more than 64 ranks");
  char f[4];
  snprintf(f, sizeof f, "%d", form);
  ts_param p[] = {{"iters", "32"}, {"form", f}};
  ts_kernel *k = ex_compile(e, "barriers.py", "shmem_barriers", p, 2);
  if (!k) return result(e, name, 0, "compile failed");
  int *slots = ex_sym(e, MAXR * 4), *bad = ex_sym(e, 8);
  ts_memset_d8(e->ctx, bad, 0, 8);
  int base = 0;
  for (int l = 0; l < 3; l++) {
    base = 1000 * (l + 1);
    ts_arg a[3] = {tensor(slots, TS_DTYPE_INT32, &(int64_t){MAXR}), tensor(bad, TS_DTYPE_INT32, &(int64_t){2}),
                   scalar(base)};
    launch(e, k, a, 3, name);
  }
  int hs[MAXR], hbad[2];
  ts_memcpy_d2h(e->ctx, hs, slots, sizeof hs);
  ts_memcpy_d2h(e->ctx, hbad, bad, sizeof hbad);
  int ok = hbad[0] == 0;
  if (!ok) snprintf(why, sizeof why, "%d stale slot reads after the barrier", hbad[0]);
  for (int r = 0; r < e->world && ok; r++)
    if (hs[r] != base + ITERS - 1)
      ok = 0, snprintf(why, sizeof why, "slot of rank %d holds %d, want %d", r, hs[r], base + ITERS - 1);
  result(e, name, ok, why);
  ts_kernel_destroy(k);
  ts_dist_free(e->d, bad), ts_dist_free(e->d, slots);
}

static void case_collectives(Ex *e) {
  const char *name = "fcollect_block + broadcast_block (root 1) x3";
  char why[256] = "";
  enum { MAXR = 64 };
  if (e->world > MAXR) return result(e, name, 0, "more than 64 ranks");
  ts_param p[] = {{"root", "1"}};
  ts_kernel *k = ex_compile(e, "barriers.py", "collectives", p, 1);
  if (!k) return result(e, name, 0, "compile failed");
  int *src = ex_sym(e, 16), *gath = ex_sym(e, 4 * MAXR * 4), *bc = ex_sym(e, 16);
  int ok = 1;
  for (int l = 0; l < 3 && ok; l++) {
    int hsrc[4];
    for (int i = 0; i < 4; i++) hsrc[i] = 100000 * (l + 1) + 100 * e->rank + i;
    ts_memcpy_h2d(e->ctx, src, hsrc, sizeof hsrc);
    ts_memset_d8(e->ctx, gath, 0xff, 4 * MAXR * 4);
    ts_memset_d8(e->ctx, bc, 0xff, 16);
    if (ts_dist_barrier(e->d, NULL) != TS_OK) fatal(e, name);
    ts_arg a[3] = {tensor(src, TS_DTYPE_INT32, &(int64_t){4}), tensor(gath, TS_DTYPE_INT32, &(int64_t){4 * MAXR}),
                   tensor(bc, TS_DTYPE_INT32, &(int64_t){4})};
    launch(e, k, a, 3, name);
    int hg[4 * MAXR], hb[4];
    ts_memcpy_d2h(e->ctx, hg, gath, sizeof hg);
    ts_memcpy_d2h(e->ctx, hb, bc, sizeof hb);
    for (int r = 0; r < e->world && ok; r++)
      for (int i = 0; i < 4 && ok; i++)
        if (hg[4 * r + i] != 100000 * (l + 1) + 100 * r + i)
          ok = 0, snprintf(why, sizeof why, "launch %d: fcollect element %d of pe %d is %d", l + 1, i, r, hg[4 * r + i]);
    for (int i = 0; i < 4 && ok; i++)
      if (hb[i] != 100000 * (l + 1) + 100 + i)
        ok = 0, snprintf(why, sizeof why, "launch %d: broadcast element %d is %d", l + 1, i, hb[i]);
  }
  result(e, name, ok, why);
  ts_kernel_destroy(k);
  ts_dist_free(e->d, bc), ts_dist_free(e->d, gath), ts_dist_free(e->d, src);
}

/* ---- sync_grid --------------------------------------------------------------------------------- */
static void case_sync_grid(Ex *e) {
  const char *name = "sync_grid x32 per cooperative launch x3";
  char why[256] = "";
  enum { NB = 64, ITERS = 16 };
  ts_param p[] = {{"nb", "64"}, {"iters", "16"}};
  ts_kernel *k = ex_compile(e, "barriers.py", "grid_sync", p, 2);
  if (!k) return result(e, name, 0, "compile failed");
  int *A = ex_sym(e, NB * 4), *bad = ex_sym(e, 8);
  int base = 0;
  for (int l = 0; l < 3; l++) {
    base = 100000 * (l + 1);
    ts_arg a[3] = {tensor(A, TS_DTYPE_INT32, &(int64_t){NB}), tensor(bad, TS_DTYPE_INT32, &(int64_t){2}),
                   scalar(base)};
    launch(e, k, a, 3, name);
  }
  int ha[NB], hbad[2];
  ts_memcpy_d2h(e->ctx, ha, A, sizeof ha);
  ts_memcpy_d2h(e->ctx, hbad, bad, sizeof hbad);
  int ok = hbad[0] == 0;
  if (!ok) snprintf(why, sizeof why, "%d reads of another block's entry were stale after sync_grid", hbad[0]);
  for (int b = 0; b < NB && ok; b++)
    if (ha[b] != base + (ITERS - 1) * NB + b) ok = 0, snprintf(why, sizeof why, "A[%d] = %d", b, ha[b]);
  result(e, name, ok, why);
  ts_kernel_destroy(k);

  /* Far more blocks than can be resident: the runtime must refuse the launch (a plain launch
   * would spin forever in the first sync_grid). */
  const char *big = "sync_grid with a grid too large to be co-resident is refused";
  ts_param pb[] = {{"nb", "100000"}, {"iters", "1"}};
  ts_kernel *kb = ex_compile(e, "barriers.py", "grid_sync", pb, 2);
  if (!kb) return result(e, big, 0, "compile failed");
  int *A2 = ex_sym(e, 100000 * 4);
  ts_arg a[3] = {tensor(A2, TS_DTYPE_INT32, &(int64_t){100000}), tensor(bad, TS_DTYPE_INT32, &(int64_t){2}),
                 scalar(0)};
  ts_status st = ts_kernel_launch(kb, a, 3, NULL);
  const char *msg = ts_last_error(e->ctx);
  ok = st == TS_ERR_LAUNCH_ARGUMENT && strstr(msg, "T.sync_grid") && strstr(msg, "100000 blocks resident");
  snprintf(why, sizeof why, "status %d, message: %s", (int)st, msg);
  if (ts_synchronize(e->ctx) != TS_OK) fatal(e, big);
  result(e, big, ok, why);
  if (ok) printf("  (the runtime said: %s)\n", msg);
  ts_kernel_destroy(kb);
  ts_dist_free(e->d, A2), ts_dist_free(e->d, bad), ts_dist_free(e->d, A);
}

/* ---- T.alloc_global workspaces and the GPU barrier set (workspace.py) ----------------------------- */
/* Three launches each: the runtime zeroes the workspaces before every launch, so the one-shot
 * barriers work again and the scratch sums start from 0 (a leftover barrier word would hang
 * until the debug timeout traps; a leftover sum would be doubled). */
static void case_workspace(Ex *e) {
  char why[256] = "";
  enum { NB = 256, SB = 96, ST = 128 };
  const char *name = "GPU barrier set on T.alloc_barrier_gpu (256 blocks) x3 launches";
  ts_kernel *k = ex_compile(e, "workspace.py", "gpu_barrier", NULL, 0);
  if (!k) return result(e, name, 0, "compile failed");
  int *A = ex_sym(e, NB * 4), *B = ex_sym(e, NB * 4), *bad = ex_sym(e, 16);
  ts_memset_d8(e->ctx, bad, 0, 16);
  int ok = 1;
  for (int l = 0; l < 3 && ok; l++) {
    int base = 1000 * (l + 1) + 10 * e->rank;
    ts_arg a[4] = {tensor(A, TS_DTYPE_INT32, &(int64_t){NB}), tensor(B, TS_DTYPE_INT32, &(int64_t){NB}),
                   tensor(bad, TS_DTYPE_INT32, &(int64_t){4}), scalar(base)};
    launch(e, k, a, 4, name);
    int hb[4], ha[NB];
    ts_memcpy_d2h(e->ctx, hb, bad, sizeof hb);
    ts_memcpy_d2h(e->ctx, ha, B, sizeof ha);
    if (hb[0] || hb[1] || hb[2]) {
      ok = 0;
      snprintf(why, sizeof why,
               "launch %d: %d stale reads after wait_barrier_gpu, %d blocks saw a barrier word other than "
               "0x80000000, %d stale reads after sync_barrier_gpu", l + 1, hb[0], hb[1], hb[2]);
    }
    for (int b = 0; b < NB && ok; b++)
      if (ha[b] != base * 2 + b) ok = 0, snprintf(why, sizeof why, "launch %d: B[%d] = %d", l + 1, b, ha[b]);
  }
  result(e, name, ok, why);
  ts_kernel_destroy(k);
  ts_dist_free(e->d, bad), ts_dist_free(e->d, B), ts_dist_free(e->d, A);

  name = "T.alloc_global scratch reduction (96 blocks) x3 launches";
  k = ex_compile(e, "workspace.py", "scratch_sum", NULL, 0);
  if (!k) return result(e, name, 0, "compile failed");
  int *X = ex_sym(e, SB * ST * 4), *out = ex_sym(e, 16);
  ok = 1;
  for (int l = 0; l < 3 && ok; l++) {
    static int hx[SB * ST];
    uint64_t r = 0x9E3779B97F4A7C15ull * (uint64_t)(e->rank * 3 + l + 1);
    long long want = 0;
    for (int i = 0; i < SB * ST; i++) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      hx[i] = (int)(r % 2001) - 1000;
      want += hx[i];
    }
    ts_memcpy_h2d(e->ctx, X, hx, sizeof hx);
    ts_memset_d8(e->ctx, out, 0xff, 16);
    ts_arg a[2] = {tensor(X, TS_DTYPE_INT32, &(int64_t){SB * ST}), tensor(out, TS_DTYPE_INT32, &(int64_t){3})};
    launch(e, k, a, 2, name);
    int ho[3];
    ts_memcpy_d2h(e->ctx, ho, out, sizeof ho);
    if (ho[0] != want || ho[1] != SB * ST || ho[2] != want) {
      ok = 0;
      snprintf(why, sizeof why,
               "launch %d: sum of the per-block parts %d, count %d, atomic total %d; want %lld, %d, %lld", l + 1,
               ho[0], ho[1], ho[2], want, SB * ST, want);
    }
  }
  result(e, name, ok, why);
  ts_kernel_destroy(k);
  ts_dist_free(e->d, out), ts_dist_free(e->d, X);
}

/* ---- hand-written kernels (prims.cu) ------------------------------------------------------------ */
typedef struct Hand {
  CUmodule mod;
  RtJitOutput out;
} Hand;

static int hand_load(Ex *e, Hand *h) {
  char path[1024];
  snprintf(path, sizeof path, "%s/prims.cu", e->dir);
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("FAIL prims.cu: cannot open %s\n", path);
    return 0;
  }
  StrBuf src = {0};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_appendn(&src, buf, n);
  fclose(f);
  RtNvrtc nv = {0};
  StrBuf err = {0};
  RtJitInput in = {0};
  in.source = sb_str(&src);
  in.name = "prims.cu";
  in.target = (TsTarget){ts_context_device_sm(e->ctx), ts_context_device_sm(e->ctx) >= 90};
  in.headers = ts_device_headers;
  in.nheaders = ts_device_headers_count;
  int ok = rt_jit_compile(&nv, &in, &h->out, &err) == TS_OK;
  if (!ok) printf("FAIL prims.cu: %s\n", sb_str(&err));
  ok = ok && e->ctx->drv.cuModuleLoadData(&h->mod, h->out.cubin) == CUDA_SUCCESS &&
       ts_dist_module_attach(e->d, h->mod) == TS_OK;
  rt_nvrtc_close(&nv);
  sb_free(&err);
  sb_free(&src);
  return ok;
}

static void hand_launch(Ex *e, Hand *h, const char *fn_name, unsigned grid, unsigned block, void **params) {
  CUfunction fn = NULL;
  if (e->ctx->drv.cuModuleGetFunction(&fn, h->mod, fn_name) != CUDA_SUCCESS ||
      e->ctx->drv.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL) != CUDA_SUCCESS ||
      e->ctx->drv.cuCtxSynchronize() != CUDA_SUCCESS || ts_dist_barrier(e->d, NULL) != TS_OK)
    fatal(e, fn_name);
}

static unsigned char pattern8(int rank, size_t j) {
  unsigned char b = (unsigned char)(rank * 73 + j * 13 + (j >> 9) * 5 + 1);
  return b == 0xA5 ? 0x5A : b; /* never the guard byte */
}

static void case_copies(Ex *e, Hand *h) {
  static const int sizes[] = {1, 2, 3, 7, 31, 32, 33, 65, 257, 1000, 4099};
  static const int offs[][2] = {{0, 0}, {1, 0}, {0, 1}, {3, 5}, {8, 8}, {16, 0}, {5, 16}};
  static const char *const ops[] = {"put_warp", "get_warp", "put_block", "get_block"};
  enum { NSZ = 11, NOFF = 7, NCASE = 4 * NSZ * NOFF, REGION = 4160 };
  static const char *const fns[] = {"copy_u8", "copy_u16", "copy_u32", "copy_u64", "copy_u128"};
  int cfg[NCASE * 4];
  for (int op = 0, b = 0; op < 4; op++)
    for (int s = 0; s < NSZ; s++)
      for (int o = 0; o < NOFF; o++, b++) {
        cfg[4 * b] = op, cfg[4 * b + 1] = sizes[s], cfg[4 * b + 2] = offs[o][0], cfg[4 * b + 3] = offs[o][1];
      }
  void *dcfg = NULL;
  if (ts_device_malloc(e->ctx, sizeof cfg, &dcfg) != TS_OK) fatal(e, "put/get");
  ts_memcpy_h2d(e->ctx, dcfg, cfg, sizeof cfg);
  const size_t bytes = (size_t)NCASE * REGION * 16;
  unsigned char *src = ex_sym(e, bytes), *dst = ex_sym(e, bytes);
  unsigned char *hsrc = malloc(bytes), *hdst = malloc(bytes);
  for (int t = 0; t < 5; t++) {
    const size_t esz = (size_t)1 << t, used = (size_t)NCASE * REGION * esz;
    for (size_t j = 0; j < used; j++) hsrc[j] = pattern8(e->rank, j);
    ts_memcpy_h2d(e->ctx, src, hsrc, used);
    ts_memset_d8(e->ctx, dst, 0xA5, used);
    if (ts_dist_barrier(e->d, NULL) != TS_OK) fatal(e, "put/get");
    unsigned long long region = REGION;
    void *params[] = {&dcfg, &src, &dst, &region};
    hand_launch(e, h, fns[t], NCASE, 128, params);
    ts_memcpy_d2h(e->ctx, hdst, dst, used);
    char name[96], why[256] = "";
    snprintf(name, sizeof name, "put/get warp+block, %zu-byte elements, unaligned sizes and offsets", esz);
    int ok = 1;
    for (int b = 0; b < NCASE && ok; b++) {
      const int op = cfg[4 * b], n = cfg[4 * b + 1], so = cfg[4 * b + 2], dof = cfg[4 * b + 3];
      const int from = op == 0 || op == 2 ? left_of(e) : right_of(e); /* whose src lands in my dst */
      const size_t base = (size_t)b * REGION * esz;
      for (size_t j = 0; j < REGION * esz && ok; j++) {
        const size_t lo = (size_t)dof * esz, hi = lo + (size_t)n * esz;
        unsigned char want = j >= lo && j < hi ? pattern8(from, base + (size_t)so * esz + (j - lo)) : 0xA5;
        if (hdst[base + j] != want) {
          ok = 0;
          snprintf(
              why, sizeof why,
              "%s of %d elements, src offset %d, dst offset %d: byte %zu of the region is %#x, want %#x%s",
              ops[op], n, so, dof, j, hdst[base + j], want, j >= lo && j < hi ? "" : " (outside the copy)");
        }
      }
    }
    result(e, name, ok, why);
  }
  free(hsrc), free(hdst);
  ts_dist_free(e->d, dst), ts_dist_free(e->d, src);
  ts_device_free(e->ctx, dcfg);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void case_atom(Ex *e, Hand *h) {
  const char *name =
      "atom_add from every rank to every rank (sys scope; relaxed/acquire/release/acq_rel; 32/64-bit)";
  char why[256] = "";
  enum { GRID = 8, BLOCK = 128, NT = GRID * BLOCK, ITERS = 4 };
  const uint64_t W = (uint64_t)e->world;
  unsigned *c32 = ex_sym(e, 16);
  int *c32s = ex_sym(e, 4);
  unsigned long long *c64 = ex_sym(e, 8), *olds = ex_sym(e, W * NT * 8);
  uint64_t *mine = malloc(W * NT * 8), *all = malloc(W * W * NT * 8), *col = malloc(W * NT * 8);
  uint64_t sum_ranks = W * (W + 1) / 2;
  int ok = 1;
  for (int round = 1; round <= 2 && ok; round++) {
    int iters = ITERS;
    void *params[] = {&c32, &c32s, &c64, &olds, &iters};
    hand_launch(e, h, "atom_every_rank", GRID, BLOCK, params);
    unsigned hc[4];
    int hs;
    unsigned long long h64;
    ts_memcpy_d2h(e->ctx, hc, c32, sizeof hc);
    ts_memcpy_d2h(e->ctx, &hs, c32s, sizeof hs);
    ts_memcpy_d2h(e->ctx, &h64, c64, sizeof h64);
    const uint64_t R = (uint64_t)round, per = NT * ITERS;
    const uint64_t want[4] = {R * W * per, R * sum_ranks * per, R * 2 * W * per, R * 3 * W * per};
    for (int i = 0; i < 4 && ok; i++)
      if (hc[i] != (unsigned)want[i])
        ok = 0, snprintf(why, sizeof why, "round %d: counter %d is %u, want %llu", round, i, hc[i],
                         (unsigned long long)want[i]);
    if (ok && hs != -(int)(R * W * per))
      ok = 0, snprintf(why, sizeof why, "round %d: signed counter is %d, want %lld", round, hs,
                       -(long long)(R * W * per));
    if (ok && h64 != R * W * NT)
      ok = 0, snprintf(why, sizeof why, "round %d: 64-bit counter is %llu, want %llu", round, h64,
                       (unsigned long long)(R * W * NT));
    /* The old values every rank got from my counter: each of (R-1)WNT .. RWNT-1 exactly once. */
    ts_memcpy_d2h(e->ctx, mine, olds, W * NT * 8);
    if (ts_dist_allgather(e->d, mine, W * NT * 8, all) != TS_OK) fatal(e, name);
    for (uint64_t q = 0; q < W; q++) memcpy(col + q * NT, all + (q * W + (uint64_t)e->rank) * NT, NT * 8);
    qsort(col, W * NT, 8, cmp_u64);
    for (uint64_t i = 0; i < W * NT && ok; i++)
      if (col[i] != (R - 1) * W * NT + i)
        ok = 0,
        snprintf(why, sizeof why, "round %d: returned old values are not a permutation (sorted[%llu] = %llu)",
                 round, (unsigned long long)i, (unsigned long long)col[i]);
  }
  result(e, name, ok, why);
  free(mine), free(all), free(col);
  ts_dist_free(e->d, olds), ts_dist_free(e->d, c64), ts_dist_free(e->d, c32s), ts_dist_free(e->d, c32);
}

int main(int argc, char **argv) {
  Ex e;
  int rc = ex_init(&e, argc, argv);
  if (rc) return rc == 1 ? 0 : rc;
  e.dir = argc > 1 ? argv[1] : "tests/dist";
  printf("rank %d of %d, backend %s\n", e.rank, e.world, ts_dist_backend_name(ts_dist_backend_of(e.d)));
  if (e.world < 2) {
    printf("SKIP %s: needs at least 2 ranks\n", argv[0]);
    return ex_finish(&e);
  }
  for (int is64 = 0; is64 < 2; is64++)
    for (int remote = 1; remote >= 0; remote--) case_ldst(&e, is64, remote);
  for (int is64 = 0; is64 < 2; is64++)
    for (int remote = 0; remote < 2; remote++) case_waits(&e, is64, remote);
  case_signals(&e);
  case_barrier(&e, 1);
  case_barrier(&e, 0);
  for (int form = 0; form < 4; form++) case_shmem_barriers(&e, form);
  case_collectives(&e);
  case_sync_grid(&e);
  case_workspace(&e);
  Hand h;
  memset(&h, 0, sizeof h);
  if (hand_load(&e, &h)) {
    case_copies(&e, &h);
    case_atom(&e, &h);
    e.ctx->drv.cuModuleUnload(h.mod);
  } else {
    e.failures++;
  }
  rt_jit_output_free(&h.out);
  printf("%s: %d failure%s\n", e.failures ? "FAIL" : "PASS", e.failures, e.failures == 1 ? "" : "s");
  return ex_finish(&e);
}
