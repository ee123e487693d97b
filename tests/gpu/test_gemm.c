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
 * The two wgmma configurations again with pass_configs tl.enable_tma_multicast (2-block
 * clusters sharing an operand tile through TMA multicast).
 * Then the other GEMM examples (bias + ReLU epilogue, split-K with atomics, batched,
 * GEMV) once each at non-divisible shapes against their own CPU references.
 * Then examples/gemm_dtypes.py for fp16 accumulate, tf32, int8 and fp8 on both paths,
 * and examples/gemm_rs.py (A of the second GEMM in registers: wgmma RS / mma.sync),
 * examples/gemm_wgmma.py (T.wgmma_gemm + T.wait_wgmma; tiles pinned to each swizzle by
 * T.annotate_layout), examples/gemm_eager.py (eager style) and
 * examples/gemm_shared_epilogue.py (the epilogue through a shared tile: TMA store) and
 * examples/gemm_swizzled.py (a 1-D grid in its own tile order, made persistent).
 * Options: --filter TEXT, --seed N, --examples DIR. */
#include <math.h>
#include <stdbool.h>
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
  ts_program *prog, *prog_mc; /* examples/gemm.py; the same with tl.enable_tma_multicast */
  int mc;                      /* run_case compiles prog_mc (1: multicast, 2: stream-K, 3: no-overlap program) */
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
  snprintf(name, sizeof name, "gemm %s %s%s M=%d N=%d K=%d %s tile=%dx%dx%d stages=%d threads=%d policy=%d%s", dname,
           ta ? "T" : "N", tb ? "T" : "N", M, N, K, cf->arch, cf->bm, cf->bn, cf->bk, cf->stages, cf->threads,
           cf->policy, su->mc == 3 ? " overlap" : su->mc == 2 ? " stream-K" : su->mc ? " multicast" : "");
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
  ts_status s = ts_kernel_compile(su->mc ? su->prog_mc : su->prog, "matmul", ps, 12, &co, &k);
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

/* ---- the other GEMM examples: generic runner over tensors of doubles ---------------------- */
typedef struct Tens {
  ts_dtype dt;
  int ndim;
  int64_t shape[3];
  size_t n;
  double *v;   /* host values (inputs as uploaded, outputs as read back) */
  int out;     /* 1: output (poisoned), 2: output accumulated into (zeroed) */
} Tens;

static void tens_init(Tens *t, ts_dtype dt, int ndim, int64_t a, int64_t b, int64_t c, int out, uint64_t *st) {
  memset(t, 0, sizeof *t);
  t->dt = dt;
  t->ndim = ndim;
  t->shape[0] = a, t->shape[1] = b, t->shape[2] = c;
  t->n = 1;
  for (int i = 0; i < ndim; i++) t->n *= (size_t)t->shape[i];
  t->v = calloc(t->n, sizeof(double));
  t->out = out;
  for (size_t i = 0; i < t->n && !out; i++) {
    float x = hd_rng_unit(st);
    /* the value the device sees, after rounding to the element type */
    t->v[i] = dt == TS_DTYPE_FLOAT16 ? hd_f16_to_f32(hd_f32_to_f16(x)) : dt == TS_DTYPE_BFLOAT16 ? hd_bf16_to_f32(hd_f32_to_bf16(x)) : x;
  }
}

static size_t esize(ts_dtype t) { return t == TS_DTYPE_FLOAT32 ? 4 : 2; }

/* Uploads ts[], launches, downloads the outputs; returns an error string or NULL. */
static const char *run_tensors_arch(Suite *su, const char *file, const char *func, const ts_param *ps, int np, Tens *ts,
                                    int nt, const char *examples, const char *arch) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", examples, file);
  ts_program *prog = NULL;
  ts_kernel *k = NULL;
  const char *err = NULL;
  void *dev[4] = {0};
  ts_arg args[4];
  ts_compile_options co = {.size = sizeof co, .arch = arch};
  if (ts_program_load_file(su->ctx, path, &prog) != TS_OK ||
      ts_kernel_compile(prog, func, ps, np, arch ? &co : NULL, &k) != TS_OK) {
    err = "compile";
    goto done;
  }
  for (int i = 0; i < nt; i++) {
    size_t bytes = ts[i].n * esize(ts[i].dt);
    void *h = malloc(bytes);
    for (size_t j = 0; j < ts[i].n; j++) {
      if (ts[i].dt == TS_DTYPE_FLOAT32) ((float *)h)[j] = (float)ts[i].v[j];
      else if (ts[i].dt == TS_DTYPE_FLOAT16) ((uint16_t *)h)[j] = hd_f32_to_f16((float)ts[i].v[j]);
      else ((uint16_t *)h)[j] = hd_f32_to_bf16((float)ts[i].v[j]);
    }
    if (ts_device_malloc(su->ctx, bytes, &dev[i]) ||
        (ts[i].out == 1 ? ts_memset_d8(su->ctx, dev[i], 0xFF, bytes) : ts_memcpy_h2d(su->ctx, dev[i], h, bytes))) {
      free(h);
      err = "device memory";
      goto done;
    }
    free(h);
    args[i] = (ts_arg){.kind = TS_ARG_TENSOR, .tensor = {dev[i], ts[i].dt, ts[i].ndim, ts[i].shape, NULL, 0}};
  }
  if (ts_kernel_launch(k, args, nt, NULL) || ts_synchronize(su->ctx)) {
    err = "launch";
    goto done;
  }
  for (int i = 0; i < nt; i++) {
    if (!ts[i].out) continue;
    size_t bytes = ts[i].n * esize(ts[i].dt);
    void *h = malloc(bytes);
    if (ts_memcpy_d2h(su->ctx, h, dev[i], bytes)) err = "copy back";
    for (size_t j = 0; j < ts[i].n; j++)
      ts[i].v[j] = ts[i].dt == TS_DTYPE_FLOAT32 ? ((float *)h)[j]
                   : ts[i].dt == TS_DTYPE_FLOAT16 ? hd_f16_to_f32(((uint16_t *)h)[j]) : hd_bf16_to_f32(((uint16_t *)h)[j]);
    free(h);
  }
done:
  for (int i = 0; i < 4; i++)
    if (dev[i]) ts_device_free(su->ctx, dev[i]);
  ts_kernel_destroy(k);
  ts_program_destroy(prog);
  return err;
}

static const char *run_tensors(Suite *su, const char *file, const char *func, const ts_param *ps, int np, Tens *ts, int nt,
                               const char *examples) {
  return run_tensors_arch(su, file, func, ps, np, ts, nt, examples, NULL);
}

static const char *dtype_name_host(ts_dtype t) {
  switch (t) {
  case TS_DTYPE_FLOAT32: return "float32";
  case TS_DTYPE_FLOAT16: return "float16";
  case TS_DTYPE_INT8: return "int8";
  case TS_DTYPE_INT32: return "int32";
  case TS_DTYPE_FLOAT8_E4M3: return "float8_e4m3";
  default: return "float8_e5m2";
  }
}

static void judge(Suite *su, const char *name, const double *out, const double *ref, size_t n, double tol) {
  double num = 0, den = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(out[i])) {
      bad++;
      continue;
    }
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  double rel = sqrt(num / (den > 0 ? den : 1));
  if (bad || !(rel <= tol)) {
    printf("FAIL %s: rel err %.3e, %zu non-finite\n", name, rel, bad);
    su->failed++;
  } else {
    printf("PASS %s  (rel err %.2e)\n", name, rel);
    su->passed++;
  }
}

static void other_examples(Suite *su, const char *examples) {
  uint64_t st = su->seed * 31 + 7;
  const int M = 200, N = 264, K = 328;
  char vm[16], vn[16], vk[16];
  snprintf(vm, sizeof vm, "%d", M);
  snprintf(vn, sizeof vn, "%d", N);
  snprintf(vk, sizeof vk, "%d", K);
  ts_param ps[4] = {{"M", vm}, {"N", vn}, {"K", vk}, {"batch", "3"}};
  Tens t[4];
  const char *err;
  /* bias + ReLU epilogue */
  if (!su->filter || strstr("gemm_bias_relu", su->filter)) {
    tens_init(&t[0], TS_DTYPE_FLOAT16, 2, M, K, 0, 0, &st);
    tens_init(&t[1], TS_DTYPE_FLOAT16, 2, K, N, 0, 0, &st);
    tens_init(&t[2], TS_DTYPE_FLOAT16, 1, N, 0, 0, 0, &st);
    tens_init(&t[3], TS_DTYPE_FLOAT16, 2, M, N, 0, 1, &st);
    if ((err = run_tensors(su, "gemm_bias_relu.py", "matmul_bias_relu", ps, 3, t, 4, examples))) {
      printf("FAIL gemm_bias_relu: %s: %s\n", err, ts_last_error(su->ctx));
      su->failed++;
    } else {
      double *ref = calloc((size_t)M * N, sizeof(double));
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          double acc = t[2].v[j];
          for (int kk = 0; kk < K; kk++) acc += t[0].v[(size_t)i * K + kk] * t[1].v[(size_t)kk * N + j];
          ref[(size_t)i * N + j] = acc > 0 ? acc : 0;
        }
      judge(su, "gemm_bias_relu M=200 N=264 K=328", t[3].v, ref, (size_t)M * N, 1e-2);
      free(ref);
    }
    for (int i = 0; i < 4; i++) free(t[i].v);
  }
  /* split-K with atomics into a zeroed fp32 C */
  if (!su->filter || strstr("gemm_splitk", su->filter)) {
    ts_param pk[4] = {{"M", "128"}, {"N", "192"}, {"K", "2048"}, {"split_k", "4"}};
    tens_init(&t[0], TS_DTYPE_FLOAT16, 2, 128, 2048, 0, 0, &st);
    tens_init(&t[1], TS_DTYPE_FLOAT16, 2, 2048, 192, 0, 0, &st);
    tens_init(&t[2], TS_DTYPE_FLOAT32, 2, 128, 192, 0, 2, &st);
    if ((err = run_tensors(su, "gemm_splitk.py", "matmul_splitk", pk, 4, t, 3, examples))) {
      printf("FAIL gemm_splitk: %s: %s\n", err, ts_last_error(su->ctx));
      su->failed++;
    } else {
      double *ref = calloc(128 * 192, sizeof(double));
      for (int i = 0; i < 128; i++)
        for (int kk = 0; kk < 2048; kk++)
          for (int j = 0; j < 192; j++) ref[i * 192 + j] += t[0].v[(size_t)i * 2048 + kk] * t[1].v[(size_t)kk * 192 + j];
      judge(su, "gemm_splitk M=128 N=192 K=2048 split_k=4", t[2].v, ref, 128 * 192, 1e-4);
      free(ref);
    }
    for (int i = 0; i < 3; i++) free(t[i].v);
  }
  /* batched */
  if (!su->filter || strstr("gemm_batched", su->filter)) {
    tens_init(&t[0], TS_DTYPE_BFLOAT16, 3, 3, M, K, 0, &st);
    tens_init(&t[1], TS_DTYPE_BFLOAT16, 3, 3, K, N, 0, &st);
    tens_init(&t[2], TS_DTYPE_BFLOAT16, 3, 3, M, N, 1, &st);
    ts_param pb[5] = {ps[3], ps[0], ps[1], ps[2], {"dtype", "bfloat16"}};
    if ((err = run_tensors(su, "gemm_batched.py", "batched_matmul", pb, 5, t, 3, examples))) {
      printf("FAIL gemm_batched: %s: %s\n", err, ts_last_error(su->ctx));
      su->failed++;
    } else {
      double *ref = calloc((size_t)3 * M * N, sizeof(double));
      for (int b = 0; b < 3; b++)
        for (int i = 0; i < M; i++)
          for (int kk = 0; kk < K; kk++)
            for (int j = 0; j < N; j++)
              ref[((size_t)b * M + i) * N + j] +=
                  t[0].v[((size_t)b * M + i) * K + kk] * t[1].v[((size_t)b * K + kk) * N + j];
      judge(su, "gemm_batched bfloat16 batch=3 M=200 N=264 K=328", t[2].v, ref, (size_t)3 * M * N, 1e-2);
      free(ref);
    }
    for (int i = 0; i < 3; i++) free(t[i].v);
  }
  /* GEMV */
  if (!su->filter || strstr("gemv", su->filter)) {
    ts_param pv[2] = {{"N", "1000"}, {"K", "1032"}};
    tens_init(&t[0], TS_DTYPE_FLOAT16, 2, 1000, 1032, 0, 0, &st);
    tens_init(&t[1], TS_DTYPE_FLOAT16, 1, 1032, 0, 0, 0, &st);
    tens_init(&t[2], TS_DTYPE_FLOAT16, 1, 1000, 0, 0, 1, &st);
    if ((err = run_tensors(su, "gemv.py", "gemv", pv, 2, t, 3, examples))) {
      printf("FAIL gemv: %s: %s\n", err, ts_last_error(su->ctx));
      su->failed++;
    } else {
      double *ref = calloc(1000, sizeof(double));
      for (int i = 0; i < 1000; i++)
        for (int kk = 0; kk < 1032; kk++) ref[i] += t[0].v[(size_t)i * 1032 + kk] * t[1].v[kk];
      judge(su, "gemv N=1000 K=1032", t[2].v, ref, 1000, 1e-2);
      free(ref);
    }
    for (int i = 0; i < 3; i++) free(t[i].v);
  }
}

/* ---- the other tensor-core types (examples/gemm_dtypes.py) and wgmma/mma RS
 * (examples/gemm_rs.py) ------------------------------------------------------------------
 * Inputs are drawn exactly representable in their type (tf32: 10-bit mantissas; int8:
 * integers in [-8, 8]; e4m3: k/8, e5m2: k/4 with |k| <= 8..16), so the reference is
 * the exact product and the bound checks the kernel, not the input rounding: fp32 and
 * tf32 accumulate 5e-4, fp16 accumulate 1e-2, fp8 5e-2, int8 exact. */
static uint8_t fp8_bits(double v, int mbits, int bias) {
  if (v == 0) return 0;
  uint8_t sign = v < 0 ? 0x80 : 0;
  double a = fabs(v);
  int e = (int)floor(log2(a));
  int mant = (int)lround((a / ldexp(1.0, e) - 1.0) * (1 << mbits));
  return (uint8_t)(sign | ((e + bias) << mbits) | mant);
}

static size_t dt_size(ts_dtype t) {
  return t == TS_DTYPE_FLOAT32 || t == TS_DTYPE_INT32 ? 4 : t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16 ? 2 : 1;
}

/* One random element of type t: its value and its bytes at p. */
static double draw(ts_dtype t, void *p, uint64_t *st) {
  float x = hd_rng_unit(st);
  switch (t) {
  case TS_DTYPE_FLOAT32: {
    uint32_t b;
    memcpy(&b, &x, 4);
    b &= 0xFFFFE000u; /* a tf32 value */
    memcpy(p, &b, 4);
    float v;
    memcpy(&v, &b, 4);
    return v;
  }
  case TS_DTYPE_FLOAT16: *(uint16_t *)p = hd_f32_to_f16(x); return hd_f16_to_f32(*(uint16_t *)p);
  case TS_DTYPE_INT8: {
    int v = (int)lround(x * 8);
    *(int8_t *)p = (int8_t)v;
    return v;
  }
  case TS_DTYPE_FLOAT8_E4M3: {
    double v = lround(x * 16) / 8.0;
    *(uint8_t *)p = fp8_bits(v, 3, 7);
    return v;
  }
  default: { /* e5m2 */
    double v = lround(x * 8) / 4.0;
    *(uint8_t *)p = fp8_bits(v, 2, 15);
    return v;
  }
  }
}

static double read_out(ts_dtype t, const void *p) {
  if (t == TS_DTYPE_FLOAT32) return *(const float *)p;
  if (t == TS_DTYPE_INT32) return *(const int32_t *)p;
  return hd_f16_to_f32(*(const uint16_t *)p);
}

/* Runs `func` of `file` on tensors [M,K] x [N,K] (tb) or [K,N] -> [M,N] (rs: Q, K, V). */
static void dtype_case(Suite *su, const char *examples, const char *arch, ts_dtype in, ts_dtype acc, int tb, int M, int N,
                       int K, double tol) {
  char name[200], vm[16], vn[16], vk[16];
  snprintf(name, sizeof name, "gemm_dtypes %s -> %s %s M=%d N=%d K=%d %s", dtype_name_host(in), dtype_name_host(acc),
           tb ? "NT" : "NN", M, N, K, arch);
  if (su->filter && !strstr(name, su->filter)) return;
  uint64_t st = su->seed * 131 + (uint64_t)su->idx++ * 7919u;
  snprintf(vm, sizeof vm, "%d", M);
  snprintf(vn, sizeof vn, "%d", N);
  snprintf(vk, sizeof vk, "%d", K);
  ts_param ps[6] = {{"M", vm}, {"N", vn}, {"K", vk}, {"in_dtype", dtype_name_host(in)}, {"accum_dtype", dtype_name_host(acc)},
                    {"trans_B", tb ? "True" : "False"}};
  Tens out = {0};
  const char *err = NULL;
  size_t ea = dt_size(in), ec = dt_size(acc), na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
  unsigned char *ha = malloc(na * ea), *hb = malloc(nb * ea), *hc = malloc(nc * ec);
  double *fa = malloc(na * sizeof(double)), *fb = malloc(nb * sizeof(double)), *ref = calloc(nc, sizeof(double));
  double *o = malloc(nc * sizeof(double));
  for (size_t i = 0; i < na; i++) fa[i] = draw(in, ha + i * ea, &st);
  for (size_t i = 0; i < nb; i++) fb[i] = draw(in, hb + i * ea, &st);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double sum = 0;
      for (int k = 0; k < K; k++) sum += fa[(size_t)i * K + k] * (tb ? fb[(size_t)j * K + k] : fb[(size_t)k * N + j]);
      ref[(size_t)i * N + j] = sum;
    }
  char path[1024];
  snprintf(path, sizeof path, "%s/gemm_dtypes.py", examples);
  ts_program *prog = NULL;
  ts_kernel *k = NULL;
  void *da = NULL, *db = NULL, *dc = NULL;
  ts_compile_options co = {.size = sizeof co, .arch = arch};
  int64_t sa[2] = {M, K}, sb[2] = {tb ? N : K, tb ? K : N}, sc[2] = {M, N};
  if (ts_program_load_file(su->ctx, path, &prog) != TS_OK || ts_kernel_compile(prog, "matmul", ps, 6, &co, &k) != TS_OK)
    err = "compile";
  else if (ts_device_malloc(su->ctx, na * ea, &da) || ts_device_malloc(su->ctx, nb * ea, &db) ||
           ts_device_malloc(su->ctx, nc * ec, &dc) || ts_memcpy_h2d(su->ctx, da, ha, na * ea) ||
           ts_memcpy_h2d(su->ctx, db, hb, nb * ea) || ts_memset_d8(su->ctx, dc, 0xFF, nc * ec))
    err = "device memory";
  else {
    ts_arg args[3] = {{.kind = TS_ARG_TENSOR, .tensor = {da, in, 2, sa, NULL, 0}},
                      {.kind = TS_ARG_TENSOR, .tensor = {db, in, 2, sb, NULL, 0}},
                      {.kind = TS_ARG_TENSOR, .tensor = {dc, acc, 2, sc, NULL, 0}}};
    if (ts_kernel_launch(k, args, 3, NULL) || ts_synchronize(su->ctx) || ts_memcpy_d2h(su->ctx, hc, dc, nc * ec))
      err = "launch";
  }
  (void)out;
  if (err) {
    printf("FAIL %s: %s: %s\n", name, err, ts_last_error(su->ctx));
    su->failed++;
  } else {
    for (size_t i = 0; i < nc; i++) o[i] = read_out(acc, hc + i * ec);
    /* 0xFF poison reads as NaN for floats and -1 for int32: an exact check catches it. */
    judge(su, name, o, ref, nc, tol);
  }
  if (da) ts_device_free(su->ctx, da);
  if (db) ts_device_free(su->ctx, db);
  if (dc) ts_device_free(su->ctx, dc);
  ts_kernel_destroy(k);
  ts_program_destroy(prog);
  free(ha); free(hb); free(hc); free(fa); free(fb); free(ref); free(o);
}

static void dtype_cases(Suite *su, const char *examples) {
  static const struct { ts_dtype in, acc; int tb; double tol; } ty[] = {
      {TS_DTYPE_FLOAT16, TS_DTYPE_FLOAT16, 0, 1e-2},     {TS_DTYPE_FLOAT16, TS_DTYPE_FLOAT16, 1, 1e-2},
      {TS_DTYPE_FLOAT32, TS_DTYPE_FLOAT32, 1, 5e-4},     {TS_DTYPE_INT8, TS_DTYPE_INT32, 1, 1e-12},
      {TS_DTYPE_FLOAT32, TS_DTYPE_FLOAT32, 0, 5e-4}, /* tf32 B [K, N]: mma.sync, per-thread loads */
      {TS_DTYPE_FLOAT8_E4M3, TS_DTYPE_FLOAT32, 1, 5e-2}, {TS_DTYPE_FLOAT8_E5M2, TS_DTYPE_FLOAT32, 1, 5e-2},
      {TS_DTYPE_FLOAT8_E4M3, TS_DTYPE_FLOAT16, 1, 5e-2},
  };
  static const int shapes[][3] = {{256, 256, 256}, {200, 136, 320}};
  static const char *const arches[] = {"sm_90a", "sm_90"}; /* wgmma; mma.sync (the sm_80 code, fp8 needs sm_89) */
  for (int i = 0; i < (int)(sizeof ty / sizeof ty[0]); i++)
    for (int a = 0; a < 2; a++) {
      if (a == 1 && ty[i].in == TS_DTYPE_FLOAT8_E4M3 && ty[i].acc == TS_DTYPE_FLOAT16) continue; /* wgmma only */
      for (int sh = 0; sh < 2; sh++)
        dtype_case(su, examples, arches[a], ty[i].in, ty[i].acc, ty[i].tb, shapes[sh][0], shapes[sh][1], shapes[sh][2],
                   ty[i].tol);
    }
}

/* examples/gemm_rs.py: O = half(Q K^T) V with the second GEMM's A in registers; again in
 * float32 (tf32 A in registers: mma.sync m16n8k8 with K permuted, both architectures). */
static void rs_cases(Suite *su, const char *examples) {
  static const char *const arches[] = {"sm_90a", "sm_90"};
  for (int a = 0; a < 4; a++) {
    char name[96];
    const int M = 320, N = 128, D = 64;
    bool f32 = a >= 2;
    ts_dtype dt = f32 ? TS_DTYPE_FLOAT32 : TS_DTYPE_FLOAT16;
    snprintf(name, sizeof name, "gemm_rs %s M=%d N=%d D=%d %s", f32 ? "tf32" : "fp16", M, N, D, arches[a % 2]);
    if (su->filter && !strstr(name, su->filter)) continue;
    uint64_t st = su->seed * 17 + (uint64_t)a;
    Tens t[4];
    tens_init(&t[0], dt, 2, M, D, 0, 0, &st);
    tens_init(&t[1], dt, 2, N, D, 0, 0, &st);
    tens_init(&t[2], dt, 2, N, D, 0, 0, &st);
    tens_init(&t[3], TS_DTYPE_FLOAT32, 2, M, D, 0, 1, &st);
    char vm[16], vn[16], vd[16];
    snprintf(vm, sizeof vm, "%d", M);
    snprintf(vn, sizeof vn, "%d", N);
    snprintf(vd, sizeof vd, "%d", D);
    ts_param ps[4] = {{"M", vm}, {"N", vn}, {"D", vd}, {"dtype", f32 ? "float32" : "float16"}};
    const char *err = run_tensors_arch(su, "gemm_rs.py", "chain", ps, 4, t, 4, examples, arches[a % 2]);
    if (err) {
      printf("FAIL %s: %s: %s\n", name, err, ts_last_error(su->ctx));
      su->failed++;
    } else {
      double *ref = calloc((size_t)M * D, sizeof(double));
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          double sv = 0;
          for (int d = 0; d < D; d++) sv += t[0].v[(size_t)i * D + d] * t[1].v[(size_t)j * D + d];
          double p = f32 ? sv : hd_f16_to_f32(hd_f32_to_f16((float)sv)); /* S is cast to float16 */
          for (int d = 0; d < D; d++) ref[(size_t)i * D + d] += p * t[2].v[(size_t)j * D + d];
        }
      judge(su, name, t[3].v, ref, (size_t)M * D, 1e-2);
      free(ref);
    }
    for (int i = 0; i < 4; i++) free(t[i].v);
  }
}

/* examples/gemm_wgmma.py (T.wgmma_gemm + T.wait_wgmma, shared tiles pinned by
 * T.annotate_layout to each swizzle width, and T.gemm with a pinned linear layout, which
 * falls back to mma.sync) and examples/gemm_eager.py (the eager style), at a divisible and
 * a non-divisible shape. */
static void layout_cases(Suite *su, const char *examples) {
  static const struct { const char *file, *sw, *async_, *arch; } cases[] = {
      {"gemm_wgmma.py", "-1", "True", "sm_90a"},  {"gemm_wgmma.py", "128", "True", "sm_90a"},
      {"gemm_wgmma.py", "64", "True", "sm_90a"},  {"gemm_wgmma.py", "32", "True", "sm_90a"},
      {"gemm_wgmma.py", "64", "False", "sm_90a"}, /* TMA + warp specialization on the 64-byte swizzle */
      {"gemm_wgmma.py", "32", "False", "sm_90a"}, {"gemm_wgmma.py", "0", "False", "sm_90a"},
      {"gemm_wgmma.py", "64", "False", "sm_90"},  /* mma.sync + ldmatrix on the 64-byte swizzle */
      {"gemm_eager.py", NULL, NULL, "sm_90a"},    {"gemm_eager.py", NULL, NULL, "sm_90"},
      /* the epilogue through C_shared: a TMA store on sm_90a, __syncthreads + stores on sm_90 */
      {"gemm_shared_epilogue.py", NULL, NULL, "sm_90a"}, {"gemm_shared_epilogue.py", NULL, NULL, "sm_90"},
      /* T.Persistent: 132 blocks walking the tiles (255 of them at the third shape) */
      {"gemm_persistent.py", NULL, NULL, "sm_90a"}, {"gemm_persistent.py", NULL, NULL, "sm_90"},
      /* a 1-D grid in its own tile order: persistent, the overlapped store at the lets' tile */
      {"gemm_swizzled.py", NULL, NULL, "sm_90a"}, {"gemm_swizzled.py", NULL, NULL, "sm_90"},
  };
  /* the third shape (255 tiles: persistent blocks reuse the epilogue tile) for the
   * shared epilogue and T.Persistent only */
  static const int shapes[][3] = {{256, 256, 256}, {200, 136, 120}, {1920, 2176, 320}};
  uint64_t st = su->seed * 17 + 3;
  for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++)
    for (int sh = 0; sh < 3; sh++) {
      if (sh == 2 && strcmp(cases[c].file, "gemm_shared_epilogue.py") && strcmp(cases[c].file, "gemm_persistent.py") &&
          strcmp(cases[c].file, "gemm_swizzled.py"))
        continue;
      int M = shapes[sh][0], N = shapes[sh][1], K = shapes[sh][2];
      char name[160], vm[16], vn[16], vk[16];
      snprintf(name, sizeof name, "%s swizzle=%s async=%s %s M=%d N=%d K=%d", cases[c].file, cases[c].sw ? cases[c].sw : "auto",
               cases[c].async_ ? cases[c].async_ : "-", cases[c].arch, M, N, K);
      if (su->filter && !strstr(name, su->filter)) continue;
      snprintf(vm, sizeof vm, "%d", M);
      snprintf(vn, sizeof vn, "%d", N);
      snprintf(vk, sizeof vk, "%d", K);
      ts_param ps[5] = {{"M", vm}, {"N", vn}, {"K", vk}, {"swizzle", cases[c].sw}, {"async_wgmma", cases[c].async_}};
      Tens t[3];
      tens_init(&t[0], TS_DTYPE_FLOAT16, 2, M, K, 0, 0, &st);
      tens_init(&t[1], TS_DTYPE_FLOAT16, 2, K, N, 0, 0, &st);
      tens_init(&t[2], TS_DTYPE_FLOAT16, 2, M, N, 0, 1, &st);
      const char *err = run_tensors_arch(su, cases[c].file, "matmul", ps, cases[c].sw ? 5 : 3, t, 3, examples, cases[c].arch);
      if (err) {
        printf("FAIL %s: %s: %s\n", name, err, ts_last_error(su->ctx));
        su->failed++;
      } else {
        double *ref = calloc((size_t)M * N, sizeof(double));
        for (int i = 0; i < M; i++)
          for (int kk = 0; kk < K; kk++)
            for (int j = 0; j < N; j++) ref[(size_t)i * N + j] += t[0].v[(size_t)i * K + kk] * t[1].v[(size_t)kk * N + j];
        judge(su, name, t[2].v, ref, (size_t)M * N, 1e-2);
        free(ref);
      }
      for (int i = 0; i < 3; i++) free(t[i].v);
    }
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
  /* The last shape has more tiles than the persistent grid has blocks (each block, and
   * each 2-block cluster of the multicast path, walks several tiles with the pipeline
   * running on across them) and an odd number of tile rows (a cluster whose second tile
   * lies past the edge).  The last one has more tiles than blocks and fewer K steps than
   * the 128x256 epilogue has column atoms: the overlapped epilogue (warp_specialize) stores
   * the previous tile's remaining atoms after the short K loop (N = 2104: C's rows must be
   * 16-byte aligned for TMA, else the kernel stays on the cp.async path). */
  static const int shapes[][3] = {{256, 256, 256}, {200, 136, 120}, {384, 512, 1000}, {1920, 2176, 320}, {4000, 2104, 72}};
  for (int c = 0; c < (int)(sizeof cfgs / sizeof cfgs[0]); c++)
    for (int d = 0; d < 2; d++)
      for (int t = 0; t < 4; t++)
        for (int sh = 0; sh < 5; sh++) {
          if (sh == 2 && (t != 0 || d != 0)) continue; /* one larger shape per config */
          if (sh >= 3 && (c > 1 || d != 0 || (t != 0 && t != 3))) continue; /* the wgmma paths, NN and TT */
          run_case(&su, d ? TS_DTYPE_BFLOAT16 : TS_DTYPE_FLOAT16, t & 1, t >> 1, shapes[sh][0], shapes[sh][1],
                   shapes[sh][2], &cfgs[c]);
        }
  /* The multicast path: both wgmma configurations, every transpose, all shapes. */
  su.prog_mc = hd_load_with_configs(su.ctx, path, "\"tl.enable_tma_multicast\": True");
  if (!su.prog_mc) {
    printf("FAIL gemm multicast: cannot load %s with tl.enable_tma_multicast\n", path);
    su.failed++;
  } else {
    su.mc = 1;
    for (int c = 0; c < 2; c++)
      for (int t = 0; t < 4; t++)
        for (int sh = 0; sh < 5; sh++) {
          if (sh >= 2 && t != 0 && t != 3) continue;
          run_case(&su, c && sh < 2 ? TS_DTYPE_BFLOAT16 : TS_DTYPE_FLOAT16, t & 1, t >> 1, shapes[sh][0],
                   shapes[sh][1], shapes[sh][2], &cfgs[c]);
        }
    su.mc = 0;
    ts_program_destroy(su.prog_mc);
  }
  /* Stream-K (opt-in, tl.enable_stream_k): the tail of the tiles split over every resident
   * block, partials fixed up across blocks.  256^3 has 2 tiles of 128x256 (4 k-iterations
   * each) over ~132 blocks: most blocks have no work and a tile gathers several partials;
   * 1920x2176x320 has full waves plus a stream-K tail.  (Each case is one launch of a fresh
   * module; that a launch leaves the flags clean for the next is what bench_gemm --sk shows:
   * it checks the output after dozens of launches of one kernel.) */
  su.prog_mc = hd_load_with_configs(su.ctx, path, "\"tl.enable_stream_k\": True");
  if (!su.prog_mc) {
    printf("FAIL gemm stream-K: cannot load %s with tl.enable_stream_k\n", path);
    su.failed++;
  } else {
    su.mc = 2;
    for (int c = 0; c < 2; c++)
      for (int sh = 0; sh < 4; sh++)
        run_case(&su, c ? TS_DTYPE_BFLOAT16 : TS_DTYPE_FLOAT16, 0, sh == 3, shapes[sh][0], shapes[sh][1], shapes[sh][2],
                 &cfgs[c]);
    su.mc = 0;
    ts_program_destroy(su.prog_mc);
  }
  /* The epilogue of each tile during the next tile's first K steps (ts.enable_epilogue_overlap). */
  su.prog_mc = hd_load_with_configs(su.ctx, path, "\"ts.enable_epilogue_overlap\": True");
  if (!su.prog_mc) {
    printf("FAIL gemm overlap: cannot load %s with ts.enable_epilogue_overlap\n", path);
    su.failed++;
  } else {
    su.mc = 3;
    for (int sh = 3; sh < 5; sh++)
      run_case(&su, TS_DTYPE_FLOAT16, 0, 0, shapes[sh][0], shapes[sh][1], shapes[sh][2], &cfgs[1]);
    su.mc = 0;
    ts_program_destroy(su.prog_mc);
  }
  other_examples(&su, examples);
  dtype_cases(&su, examples);
  rs_cases(&su, examples);
  layout_cases(&su, examples);
  printf("%d passed, %d failed\n", su.passed, su.failed);
  ts_program_destroy(su.prog);
  ts_context_destroy(su.ctx);
  return su.failed ? 1 : 0;
}
