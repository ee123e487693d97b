/* test_gemm.c — GPU tests of T.gemm (`make check-gpu` runs build/test_gemm after
 * build/test_gpu).
 *
 * examples/gemm.py is compiled through the public API for every operand dtype
 * (float16, bfloat16), every transpose combination, both tensor-core paths (sm_90a:
 * wgmma; sm_90 without the "a" features: mma.sync + ldmatrix, the sm_80 code), several
 * tile/thread/stage configurations, at tile-multiple and non-divisible shapes.  Inputs are
 * fresh random values in [-1, 1) (a different seed per case), C is poisoned with 0xFF
 * (NaN) first, and the result is compared with a double-precision CPU product:
 * ||out - ref|| / ||ref|| <= 1e-2 (the fp16/bf16 bound; typical is 1e-3) and no
 * NaN/inf anywhere, so an unwritten element always fails.
 * Options: --filter TEXT, --seed N, --examples DIR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostdata.h"
#include "tilescale.h"

typedef struct Cfg {
  const char *arch;
  int bm, bn, bk, stages, threads, policy;
} Cfg;

typedef struct Suite {
  ts_context *ctx;
  ts_program *prog;
  const char *filter;
  uint64_t seed;
  int idx, passed, failed;
} Suite;

static double to_double(const uint16_t *p, size_t i, ts_dtype t) {
  return t == TS_DTYPE_FLOAT16 ? hd_f16_to_f32(p[i]) : hd_bf16_to_f32(p[i]);
}

static void run_case(Suite *su, ts_dtype dt, int ta, int tb, int M, int N, int K, const Cfg *cf) {
  const char *dname = dt == TS_DTYPE_FLOAT16 ? "float16" : "bfloat16";
  char name[256];
  snprintf(name, sizeof name, "gemm %s %s%s M=%d N=%d K=%d %s tile=%dx%dx%d stages=%d threads=%d policy=%d", dname,
           ta ? "T" : "N", tb ? "T" : "N", M, N, K, cf->arch, cf->bm, cf->bn, cf->bk, cf->stages, cf->threads,
           cf->policy);
  uint64_t seed = su->seed + (uint64_t)su->idx++ * 7919u;
  if (su->filter && !strstr(name, su->filter)) return;
  char v[12][32];
  int iv[] = {M, N, K, cf->bm, cf->bn, cf->bk, cf->stages, cf->threads, cf->policy};
  const char *names[] = {"M", "N", "K", "block_M", "block_N", "block_K", "num_stages", "threads", "policy",
                         "trans_A", "trans_B", "dtype"};
  ts_param ps[12];
  for (int i = 0; i < 9; i++) snprintf(v[i], sizeof v[i], "%d", iv[i]);
  snprintf(v[9], sizeof v[9], "%s", ta ? "True" : "False");
  snprintf(v[10], sizeof v[10], "%s", tb ? "True" : "False");
  snprintf(v[11], sizeof v[11], "%s", dname);
  for (int i = 0; i < 12; i++) ps[i] = (ts_param){names[i], v[i]};
  ts_compile_options co = {.size = sizeof co, .arch = cf->arch};
  ts_kernel *k = NULL;
  ts_status s = ts_kernel_compile(su->prog, "matmul", ps, 12, &co, &k);
  if (s != TS_OK) {
    printf("FAIL %s: compile: %s\n", name, ts_last_error(su->ctx));
    su->failed++;
    return;
  }
  size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hc = malloc(nc * 2);
  double *ref = calloc(nc, sizeof(double)), *fa = malloc(na * sizeof(double)), *fb = malloc(nb * sizeof(double));
  uint64_t st = seed;
  for (size_t i = 0; i < na; i++) {
    float x = hd_rng_unit(&st); /* uniform [-1, 1) */
    ha[i] = dt == TS_DTYPE_FLOAT16 ? hd_f32_to_f16(x) : hd_f32_to_bf16(x);
    fa[i] = to_double(ha, i, dt);
  }
  for (size_t i = 0; i < nb; i++) {
    float x = hd_rng_unit(&st); /* uniform [-1, 1) */
    hb[i] = dt == TS_DTYPE_FLOAT16 ? hd_f32_to_f16(x) : hd_f32_to_bf16(x);
    fb[i] = to_double(hb, i, dt);
  }
  /* ref = op(A) op(B); A stored [K][M] when ta, B stored [N][K] when tb. */
  for (int i = 0; i < M; i++)
    for (int kk = 0; kk < K; kk++) {
      double a = ta ? fa[(size_t)kk * M + i] : fa[(size_t)i * K + kk];
      double *row = ref + (size_t)i * N;
      if (tb)
        for (int j = 0; j < N; j++) row[j] += a * fb[(size_t)j * K + kk];
      else
        for (int j = 0; j < N; j++) row[j] += a * fb[(size_t)kk * N + j];
    }
  void *da = NULL, *db = NULL, *dc = NULL;
  int64_t sa[2] = {ta ? K : M, ta ? M : K}, sb[2] = {tb ? N : K, tb ? K : N}, sc[2] = {M, N};
  const char *err = NULL;
  if (ts_device_malloc(su->ctx, na * 2, &da) || ts_device_malloc(su->ctx, nb * 2, &db) ||
      ts_device_malloc(su->ctx, nc * 2, &dc) || ts_memcpy_h2d(su->ctx, da, ha, na * 2) ||
      ts_memcpy_h2d(su->ctx, db, hb, nb * 2) || ts_memset_d8(su->ctx, dc, 0xFF, nc * 2)) {
    err = "device memory";
  } else {
    ts_arg args[3] = {{.kind = TS_ARG_TENSOR, .tensor = {da, dt, 2, sa, NULL, 0}},
                      {.kind = TS_ARG_TENSOR, .tensor = {db, dt, 2, sb, NULL, 0}},
                      {.kind = TS_ARG_TENSOR, .tensor = {dc, dt, 2, sc, NULL, 0}}};
    if (ts_kernel_launch(k, args, 3, NULL) || ts_synchronize(su->ctx) || ts_memcpy_d2h(su->ctx, hc, dc, nc * 2))
      err = "launch";
  }
  if (err) {
    printf("FAIL %s (seed %llu): %s: %s\n", name, (unsigned long long)seed, err, ts_last_error(su->ctx));
    su->failed++;
  } else {
    double num = 0, den = 0;
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < nc; i++) {
      double o = to_double(hc, i, dt), d = o - ref[i];
      if (!isfinite(o)) {
        if (!bad++) first_bad = i;
        continue;
      }
      num += d * d;
      den += ref[i] * ref[i];
    }
    double rel = sqrt(num / (den > 0 ? den : 1));
    if (bad || !(rel <= 1e-2)) {
      printf("FAIL %s (seed %llu): rel err %.3e, %zu non-finite (first at %zu,%zu)\n", name, (unsigned long long)seed,
             rel, bad, first_bad / N, first_bad % N);
      su->failed++;
    } else {
      printf("PASS %s  (rel err %.2e)\n", name, rel);
      su->passed++;
    }
  }
  if (da) ts_device_free(su->ctx, da);
  if (db) ts_device_free(su->ctx, db);
  if (dc) ts_device_free(su->ctx, dc);
  free(ha); free(hb); free(hc); free(ref); free(fa); free(fb);
  ts_kernel_destroy(k);
}

int main(int argc, char **argv) {
  Suite su = {0};
  su.seed = 12345;
  const char *examples = "examples";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--filter") && i + 1 < argc) su.filter = argv[++i];
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) su.seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--examples") && i + 1 < argc) examples = argv[++i];
  }
  ts_context_options o = {.size = sizeof o};
  if (ts_context_create(&o, &su.ctx) != TS_OK || ts_context_device_sm(su.ctx) == 0) {
    printf("test_gemm: no usable GPU; skipped\n0 passed, 0 failed\n");
    return 0;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/gemm.py", examples);
  if (ts_program_load_file(su.ctx, path, &su.prog) != TS_OK) {
    printf("test_gemm: %s: %s\n", path, ts_last_error(su.ctx));
    return 1;
  }
  static const Cfg cfgs[] = {
      {"sm_90a", 128, 128, 64, 3, 128, 0}, /* wgmma, one warpgroup */
      {"sm_90a", 128, 256, 64, 4, 256, 0}, /* wgmma, two warpgroups along M, one group in flight */
      {"sm_90a", 64, 128, 32, 2, 256, 2},  /* wgmma, FullCol: two warpgroups along N */
      {"sm_90", 128, 128, 32, 3, 128, 0},  /* mma.sync + ldmatrix (the sm_80 path), Square */
      {"sm_90", 64, 128, 64, 2, 256, 1},   /* mma.sync, FullRow */
  };
  static const int shapes[][3] = {{256, 256, 256}, {200, 136, 120}, {384, 512, 1000}};
  for (int c = 0; c < (int)(sizeof cfgs / sizeof cfgs[0]); c++)
    for (int d = 0; d < 2; d++)
      for (int t = 0; t < 4; t++)
        for (int sh = 0; sh < 3; sh++) {
          if (sh == 2 && (t != 0 || d != 0)) continue; /* one larger shape per config */
          run_case(&su, d ? TS_DTYPE_BFLOAT16 : TS_DTYPE_FLOAT16, t & 1, t >> 1, shapes[sh][0], shapes[sh][1],
                   shapes[sh][2], &cfgs[c]);
        }
  printf("%d passed, %d failed\n", su.passed, su.failed);
  ts_program_destroy(su.prog);
  ts_context_destroy(su.ctx);
  return su.failed ? 1 : 0;
}
