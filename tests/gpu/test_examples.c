/* test_examples.c — the GPU test suite (`make check-gpu` runs build/test_gpu).
 *
 * Every example kernel in examples/ is compiled through the public API (tilescale.h) at
 * several shapes — tile-multiples, shapes that do not divide the tile (1000x1000, 1x7,
 * odd widths) and large ones (4096x4096) — and run on fresh random inputs (a fixed-seed
 * PRNG, a different seed per case) with every output poisoned with 0xFF bytes (NaN for
 * floats) first.  The result is compared with a double-precision CPU reference written
 * here: a relative-norm check ||out - ref|| / ||ref|| plus a per-element
 * |out - ref| <= atol + rtol |ref| check, with tolerances per dtype and kernel.  A NaN or
 * infinity where the reference is finite never passes, so an element the kernel did not
 * write (still poisoned) always fails.
 *
 * One line per case (PASS/FAIL with the measured error, and the seed for a rerun), then
 * "N passed, N failed"; the exit status is non-zero when a case failed.
 * Options: --bench (also time each case: median of 50 runs, L2 flushed), --filter TEXT
 * (only cases whose name contains TEXT), --seed N, --examples DIR. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostdata.h"
#include "tilescale.h"

#define MAX_PROGRAMS 16
#define MAX_CASE_PARAMS 8
#define MAX_BUFS 4

typedef struct Suite {
  ts_context *ctx;
  const char *examples_dir;
  const char *filter;
  int bench;
  uint64_t seed;
  int case_index; /* numbers the cases: seed + index gives each its own random stream */
  int passed, failed;
  struct {
    char file[64];
    ts_program *prog;
  } programs[MAX_PROGRAMS];
  int nprograms;
} Suite;

/* One test case: which function of which example, with which -D parameters. */
typedef struct Case {
  char name[256];
  const char *file;
  const char *func;
  ts_param params[MAX_CASE_PARAMS];
  char values[MAX_CASE_PARAMS][48];
  int nparams;
  uint64_t seed;
} Case;

/* A kernel parameter on both sides: host values as doubles (inputs hold exactly the
 * values uploaded, outputs what came back) and the device copy. */
typedef struct Buf {
  const char *name;
  ts_dtype dtype;
  int ndim;
  int64_t shape[4];
  size_t numel;
  int is_output; /* what ts_arg_info must report */
  double *val;
  void *dev;
} Buf;

typedef struct Tol {
  double atol, rtol; /* per element: |out - ref| <= atol * scale_i + rtol * |ref| */
  double norm;       /* ||out - ref||_2 / ||ref||_2 <= norm */
} Tol;

/* ---- cases -------------------------------------------------------------------------------- */

static void case_init(Suite *s, Case *c, const char *file, const char *func) {
  memset(c, 0, sizeof *c);
  c->file = file;
  c->func = func;
  c->seed = s->seed + (uint64_t)s->case_index++ * 1000003u;
}

static void case_param(Case *c, const char *name, const char *fmt, ...) {
  if (c->nparams == MAX_CASE_PARAMS)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->values[c->nparams], sizeof c->values[0], fmt, ap);
  va_end(ap);
  c->params[c->nparams].name = name;
  c->params[c->nparams].value = c->values[c->nparams];
  c->nparams++;
}

/* Builds the printed name and says whether --filter selects the case. */
static int case_selected(const Suite *s, Case *c) {
  size_t len = (size_t)snprintf(c->name, sizeof c->name, "%s", c->func);
  for (int i = 0; i < c->nparams && len < sizeof c->name; i++)
    len += (size_t)snprintf(c->name + len, sizeof c->name - len, " %s=%s", c->params[i].name,
                            c->params[i].value);
  return !s->filter || strstr(c->name, s->filter) != NULL;
}

static void case_pass(Suite *s, const Case *c, const char *detail) {
  printf("PASS %s  (%s)\n", c->name, detail);
  s->passed++;
}

static void case_fail(Suite *s, const Case *c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  printf("FAIL %s  (seed %llu): %s\n", c->name, (unsigned long long)c->seed, msg);
  s->failed++;
}

static ts_program *get_program(Suite *s, const Case *c) {
  for (int i = 0; i < s->nprograms; i++)
    if (!strcmp(s->programs[i].file, c->file))
      return s->programs[i].prog;
  if (s->nprograms == MAX_PROGRAMS)
    return NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", s->examples_dir, c->file);
  ts_program *p = NULL;
  if (ts_program_load_file(s->ctx, path, &p) != TS_OK)
    return NULL;
  snprintf(s->programs[s->nprograms].file, sizeof s->programs[0].file, "%s", c->file);
  s->programs[s->nprograms++].prog = p;
  return p;
}

/* ---- buffers ------------------------------------------------------------------------------ */

static double decode(const void *bytes, ts_dtype t, size_t i) {
  switch (t) {
  case TS_DTYPE_FLOAT16: return hd_f16_to_f32(((const uint16_t *)bytes)[i]);
  case TS_DTYPE_BFLOAT16: return hd_bf16_to_f32(((const uint16_t *)bytes)[i]);
  case TS_DTYPE_FLOAT32: return ((const float *)bytes)[i];
  case TS_DTYPE_FLOAT64: return ((const double *)bytes)[i];
  case TS_DTYPE_INT32: return ((const int32_t *)bytes)[i];
  default: return NAN;
  }
}

static void encode(void *bytes, ts_dtype t, size_t i, double v) {
  switch (t) {
  case TS_DTYPE_FLOAT16: ((uint16_t *)bytes)[i] = hd_f32_to_f16((float)v); break;
  case TS_DTYPE_BFLOAT16: ((uint16_t *)bytes)[i] = hd_f32_to_bf16((float)v); break;
  case TS_DTYPE_FLOAT32: ((float *)bytes)[i] = (float)v; break;
  case TS_DTYPE_FLOAT64: ((double *)bytes)[i] = v; break;
  case TS_DTYPE_INT32: ((int32_t *)bytes)[i] = (int32_t)v; break;
  default: break;
  }
}

static size_t buf_bytes(const Buf *b) {
  return b->numel * ts_dtype_size(b->dtype);
}

/* Allocates a 1-D or 2-D buffer (d1 < 0: 1-D). */
static int buf_init(Suite *s, Buf *b, const char *name, ts_dtype t, int64_t d0, int64_t d1, int is_output) {
  memset(b, 0, sizeof *b);
  b->name = name;
  b->dtype = t;
  b->is_output = is_output;
  b->ndim = d1 < 0 ? 1 : 2;
  b->shape[0] = d0;
  b->shape[1] = d1;
  b->numel = (size_t)d0 * (size_t)(d1 < 0 ? 1 : d1);
  b->val = calloc(b->numel ? b->numel : 1, sizeof(double));
  return b->val && ts_device_malloc(s->ctx, buf_bytes(b) ? buf_bytes(b) : 1, &b->dev) == TS_OK;
}

static void buf_free(Suite *s, Buf *b) {
  if (b->dev)
    ts_device_free(s->ctx, b->dev);
  free(b->val);
  b->dev = NULL;
  b->val = NULL;
}

/* Fresh random values in [-1, 1), rounded to the buffer's dtype, uploaded. */
static int buf_random(Suite *s, Buf *b, uint64_t *rng) {
  void *bytes = malloc(buf_bytes(b) ? buf_bytes(b) : 1);
  if (!bytes)
    return 0;
  for (size_t i = 0; i < b->numel; i++) {
    encode(bytes, b->dtype, i, hd_rng_unit(rng));
    b->val[i] = decode(bytes, b->dtype, i);
  }
  int ok = ts_memcpy_h2d(s->ctx, b->dev, bytes, buf_bytes(b)) == TS_OK;
  free(bytes);
  return ok;
}

static int buf_memset(Suite *s, Buf *b, unsigned char byte) {
  return ts_memset_d8(s->ctx, b->dev, byte, buf_bytes(b)) == TS_OK;
}

static int buf_download(Suite *s, Buf *b) {
  void *bytes = malloc(buf_bytes(b) ? buf_bytes(b) : 1);
  if (!bytes)
    return 0;
  int ok = ts_memcpy_d2h(s->ctx, bytes, b->dev, buf_bytes(b)) == TS_OK;
  for (size_t i = 0; ok && i < b->numel; i++)
    b->val[i] = decode(bytes, b->dtype, i);
  free(bytes);
  return ok;
}

/* ---- compile, check the signature, launch ------------------------------------------------- */

/* Compiles the case, checks that the kernel's parameters are exactly `bufs` (names,
 * dtypes, shapes, outputs), launches once and waits.  On failure reports the case and
 * returns NULL; otherwise returns the kernel (for --bench) with the args in `args`. */
static ts_kernel *compile_and_launch(Suite *s, const Case *c, Buf **bufs, int nbufs, ts_arg *args) {
  ts_program *prog = get_program(s, c);
  if (!prog) {
    case_fail(s, c, "cannot load %s/%s: %s", s->examples_dir, c->file, ts_last_error(s->ctx));
    return NULL;
  }
  ts_compile_options opt = {0};
  opt.size = sizeof opt;
  ts_kernel *k = NULL;
  ts_status st = ts_kernel_compile(prog, c->func, c->params, c->nparams, &opt, &k);
  if (st != TS_OK) {
    case_fail(s, c, "compile: %s: %s", ts_status_string(st), ts_last_error(s->ctx));
    return NULL;
  }
  if (ts_kernel_num_args(k) != nbufs) {
    case_fail(s, c, "kernel has %d parameters, expected %d", ts_kernel_num_args(k), nbufs);
    ts_kernel_destroy(k);
    return NULL;
  }
  for (int i = 0; i < nbufs; i++) {
    const Buf *b = bufs[i];
    ts_arg_info ai;
    int same = ts_kernel_arg_info(k, i, &ai) == TS_OK && ai.kind == TS_ARG_TENSOR &&
               !strcmp(ai.name, b->name) && ai.dtype == b->dtype && ai.ndim == b->ndim &&
               (ai.is_output != 0) == (b->is_output != 0); /* 1 out_idx, 2 a returned T.empty */
    for (int d = 0; same && d < b->ndim; d++)
      same = ai.shape[d] == b->shape[d];
    if (!same) {
      case_fail(s, c, "parameter %d is not %s %s[%lld%s] (output=%d) as expected", i, b->name,
                ts_dtype_name(b->dtype), (long long)b->shape[0], b->ndim > 1 ? ", ..." : "",
                b->is_output);
      ts_kernel_destroy(k);
      return NULL;
    }
    memset(&args[i], 0, sizeof args[i]);
    args[i].kind = TS_ARG_TENSOR;
    args[i].tensor.data = b->dev;
    args[i].tensor.dtype = b->dtype;
    args[i].tensor.ndim = b->ndim;
    args[i].tensor.shape = b->shape;
    args[i].tensor.device = 0;
  }
  st = ts_kernel_launch(k, args, nbufs, NULL);
  if (st == TS_OK)
    st = ts_synchronize(s->ctx);
  if (st != TS_OK) {
    case_fail(s, c, "launch: %s: %s", ts_status_string(st), ts_last_error(s->ctx));
    ts_kernel_destroy(k);
    return NULL;
  }
  return k;
}

/* Compares out with ref; scale (may be NULL) multiplies atol per element. */
static int compare(const double *out, const double *ref, const double *scale, size_t n, Tol tol,
                   char *detail, size_t cap) {
  double diff2 = 0, ref2 = 0, max_err = 0;
  size_t bad = 0, nonfinite = 0, first_bad = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(out[i])) { /* poison left behind, NaN or overflow */
      if (nonfinite++ == 0 && first_bad == (size_t)-1)
        first_bad = i;
      continue;
    }
    double d = fabs(out[i] - ref[i]);
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    if (d > max_err)
      max_err = d;
    if (d > tol.atol * (scale ? scale[i] : 1.0) + tol.rtol * fabs(ref[i])) {
      if (bad++ == 0 && first_bad == (size_t)-1)
        first_bad = i;
    }
  }
  double rel = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
  int ok = nonfinite == 0 && bad == 0 && rel <= tol.norm;
  if (ok)
    snprintf(detail, cap, "rel err %.2e, max abs err %.2e", rel, max_err);
  else if (first_bad != (size_t)-1)
    snprintf(detail, cap,
             "%zu non-finite, %zu out of tolerance of %zu; rel err %.2e (limit %.0e), max abs err %.2e; "
             "first bad [%zu]: got %.8g, want %.8g",
             nonfinite, bad, n, rel, tol.norm, max_err, first_bad, out[first_bad], ref[first_bad]);
  else
    snprintf(detail, cap, "rel err %.2e above the limit %.0e (max abs err %.2e)", rel, tol.norm, max_err);
  return ok;
}

/* Checks the output against the reference, reports, and runs the benchmark if asked. */
static void finish_case(Suite *s, const Case *c, ts_kernel *k, ts_arg *args, Buf **bufs, int nbufs,
                        const Buf *out, const double *ref, const double *scale, Tol tol) {
  char detail[768];
  if (compare(out->val, ref, scale, out->numel, tol, detail, sizeof detail))
    case_pass(s, c, detail);
  else
    case_fail(s, c, "%s", detail);
  if (s->bench) {
    double ms = 0, bytes = 0;
    for (int i = 0; i < nbufs; i++)
      bytes += (double)buf_bytes(bufs[i]);
    ts_status st = ts_kernel_benchmark(k, args, nbufs, 10, 50, 1, &ms);
    if (st == TS_OK)
      printf("     bench: %.4f ms, %.1f GB/s (%.1f MB moved)\n", ms, ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0,
             bytes / 1e6);
    else
      printf("     bench: failed: %s\n", ts_last_error(s->ctx));
  }
}

static Tol tol_elementwise(ts_dtype t) {
  /* One rounding of an exactly computed value: fp32 within 2^-24 relative. */
  Tol fp32 = {1e-6, 1e-5, 1e-6}, fp16 = {1e-2, 1e-2, 2e-3};
  return t == TS_DTYPE_FLOAT32 ? fp32 : fp16;
}

/* ---- element-wise add --------------------------------------------------------------------- */

static void test_elementwise_add(Suite *s, ts_dtype t, int64_t M, int64_t N) {
  Case c;
  case_init(s, &c, "elementwise_add.py", "elementwise_add");
  case_param(&c, "M", "%lld", (long long)M);
  case_param(&c, "N", "%lld", (long long)N);
  case_param(&c, "dtype", "%s", ts_dtype_name(t));
  if (!case_selected(s, &c))
    return;
  Buf A, B, C;
  Buf *bufs[] = {&A, &B, &C};
  ts_arg args[3];
  uint64_t rng = c.seed;
  double *ref = calloc((size_t)(M * N), sizeof(double));
  if (!ref || !buf_init(s, &A, "A", t, M, N, 0) || !buf_init(s, &B, "B", t, M, N, 0) ||
      !buf_init(s, &C, "C", t, M, N, 1) || !buf_random(s, &A, &rng) || !buf_random(s, &B, &rng) ||
      !buf_memset(s, &C, 0xFF)) {
    case_fail(s, &c, "setup: %s", ts_last_error(s->ctx));
  } else {
    ts_kernel *k = compile_and_launch(s, &c, bufs, 3, args);
    if (k) {
      if (!buf_download(s, &C))
        case_fail(s, &c, "download: %s", ts_last_error(s->ctx));
      else {
        for (size_t i = 0; i < C.numel; i++)
          ref[i] = A.val[i] + B.val[i];
        finish_case(s, &c, k, args, bufs, 3, &C, ref, NULL, tol_elementwise(t));
      }
      ts_kernel_destroy(k);
    }
  }
  free(ref);
  buf_free(s, &A);
  buf_free(s, &B);
  buf_free(s, &C);
}

/* ---- scale and cast ------------------------------------------------------------------------ */

static void test_scale_cast(Suite *s, int64_t M, int64_t N, double scale) {
  Case c;
  case_init(s, &c, "scale_cast.py", "scale_cast");
  case_param(&c, "M", "%lld", (long long)M);
  case_param(&c, "N", "%lld", (long long)N);
  case_param(&c, "scale", "%.15g", scale);
  if (!case_selected(s, &c))
    return;
  Buf A, B;
  Buf *bufs[] = {&A, &B};
  ts_arg args[2];
  uint64_t rng = c.seed;
  double *ref = calloc((size_t)(M * N), sizeof(double));
  if (!ref || !buf_init(s, &A, "A", TS_DTYPE_FLOAT32, M, N, 0) ||
      !buf_init(s, &B, "B", TS_DTYPE_FLOAT16, M, N, 1) || !buf_random(s, &A, &rng) ||
      !buf_memset(s, &B, 0xFF)) {
    case_fail(s, &c, "setup: %s", ts_last_error(s->ctx));
  } else {
    ts_kernel *k = compile_and_launch(s, &c, bufs, 2, args);
    if (k) {
      if (!buf_download(s, &B))
        case_fail(s, &c, "download: %s", ts_last_error(s->ctx));
      else {
        for (size_t i = 0; i < B.numel; i++)
          ref[i] = A.val[i] * scale;
        finish_case(s, &c, k, args, bufs, 2, &B, ref, NULL, tol_elementwise(TS_DTYPE_FLOAT16));
      }
      ts_kernel_destroy(k);
    }
  }
  free(ref);
  buf_free(s, &A);
  buf_free(s, &B);
}

/* ---- transpose ---------------------------------------------------------------------------- */

static void test_transpose(Suite *s, ts_dtype t, int64_t M, int64_t N) {
  Case c;
  case_init(s, &c, "transpose.py", "transpose");
  case_param(&c, "M", "%lld", (long long)M);
  case_param(&c, "N", "%lld", (long long)N);
  case_param(&c, "dtype", "%s", ts_dtype_name(t));
  if (!case_selected(s, &c))
    return;
  Buf A, B;
  Buf *bufs[] = {&A, &B};
  ts_arg args[2];
  uint64_t rng = c.seed;
  double *ref = calloc((size_t)(M * N), sizeof(double));
  if (!ref || !buf_init(s, &A, "A", t, M, N, 0) || !buf_init(s, &B, "B", t, N, M, 1) ||
      !buf_random(s, &A, &rng) || !buf_memset(s, &B, 0xFF)) {
    case_fail(s, &c, "setup: %s", ts_last_error(s->ctx));
  } else {
    ts_kernel *k = compile_and_launch(s, &c, bufs, 2, args);
    if (k) {
      if (!buf_download(s, &B))
        case_fail(s, &c, "download: %s", ts_last_error(s->ctx));
      else {
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++)
            ref[j * M + i] = A.val[i * N + j];
        Tol exact = {0, 0, 0}; /* a transpose moves bits: it must be exact */
        finish_case(s, &c, k, args, bufs, 2, &B, ref, NULL, exact);
      }
      ts_kernel_destroy(k);
    }
  }
  free(ref);
  buf_free(s, &A);
  buf_free(s, &B);
}

/* ---- softmax ------------------------------------------------------------------------------- */

static void test_softmax(Suite *s, ts_dtype t, int64_t M, int64_t N) {
  Case c;
  case_init(s, &c, "softmax.py", "softmax");
  case_param(&c, "M", "%lld", (long long)M);
  case_param(&c, "N", "%lld", (long long)N);
  case_param(&c, "dtype", "%s", ts_dtype_name(t));
  if (!case_selected(s, &c))
    return;
  Buf X, Y;
  Buf *bufs[] = {&X, &Y};
  ts_arg args[2];
  uint64_t rng = c.seed;
  double *ref = calloc((size_t)(M * N), sizeof(double));
  if (!ref || !buf_init(s, &X, "X", t, M, N, 0) || !buf_init(s, &Y, "Y", t, M, N, 1) ||
      !buf_random(s, &X, &rng) || !buf_memset(s, &Y, 0xFF)) {
    case_fail(s, &c, "setup: %s", ts_last_error(s->ctx));
  } else {
    ts_kernel *k = compile_and_launch(s, &c, bufs, 2, args);
    if (k) {
      if (!buf_download(s, &Y))
        case_fail(s, &c, "download: %s", ts_last_error(s->ctx));
      else {
        for (int64_t i = 0; i < M; i++) {
          const double *x = X.val + i * N;
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < N; j++)
            mx = x[j] > mx ? x[j] : mx;
          for (int64_t j = 0; j < N; j++)
            sum += exp(x[j] - mx);
          for (int64_t j = 0; j < N; j++)
            ref[i * N + j] = exp(x[j] - mx) / sum;
        }
        /* fp32: exp2f and the row sums differ from double by a few ulps; fp16: one
         * rounding of the output (2^-11 relative) dominates. */
        Tol fp32 = {1e-7, 1e-4, 1e-5}, fp16 = {1e-5, 1e-2, 1e-2};
        finish_case(s, &c, k, args, bufs, 2, &Y, ref, NULL, t == TS_DTYPE_FLOAT32 ? fp32 : fp16);
      }
      ts_kernel_destroy(k);
    }
  }
  free(ref);
  buf_free(s, &X);
  buf_free(s, &Y);
}

/* ---- RMSNorm ------------------------------------------------------------------------------- */

static void test_rmsnorm(Suite *s, ts_dtype t, int64_t M, int64_t N, int with_weight) {
  const double eps = 1e-6;
  Case c;
  case_init(s, &c, "rmsnorm.py", "rms_norm");
  case_param(&c, "M", "%lld", (long long)M);
  case_param(&c, "N", "%lld", (long long)N);
  case_param(&c, "dtype", "%s", ts_dtype_name(t));
  case_param(&c, "eps", "%g", eps);
  if (with_weight)
    case_param(&c, "with_weight", "True");
  if (!case_selected(s, &c))
    return;
  Buf X, W, Y;
  Buf *bufs[] = {&X, &W, &Y};
  Buf *bufs_noweight[] = {&X, &Y};
  ts_arg args[3];
  uint64_t rng = c.seed;
  memset(&W, 0, sizeof W);
  double *ref = calloc((size_t)(M * N), sizeof(double));
  if (!ref || !buf_init(s, &X, "X", t, M, N, 0) || !buf_init(s, &Y, "Y", t, M, N, 1) ||
      !buf_random(s, &X, &rng) || !buf_memset(s, &Y, 0xFF) ||
      (with_weight && (!buf_init(s, &W, "W", t, N, -1, 0) || !buf_random(s, &W, &rng)))) {
    case_fail(s, &c, "setup: %s", ts_last_error(s->ctx));
  } else {
    Buf **list = with_weight ? bufs : bufs_noweight;
    int nbufs = with_weight ? 3 : 2;
    ts_kernel *k = compile_and_launch(s, &c, list, nbufs, args);
    if (k) {
      if (!buf_download(s, &Y))
        case_fail(s, &c, "download: %s", ts_last_error(s->ctx));
      else {
        for (int64_t i = 0; i < M; i++) {
          const double *x = X.val + i * N;
          double ss = 0;
          for (int64_t j = 0; j < N; j++)
            ss += x[j] * x[j];
          double r = 1.0 / sqrt(ss / (double)N + eps);
          for (int64_t j = 0; j < N; j++)
            ref[i * N + j] = x[j] * r * (with_weight ? W.val[j] : 1.0);
        }
        /* rsqrtf is within 2 ulp; the row sum of squares adds a few more. */
        Tol fp32 = {1e-6, 1e-4, 1e-5}, fp16 = {1e-2, 1e-2, 2e-3};
        finish_case(s, &c, k, args, list, nbufs, &Y, ref, NULL, t == TS_DTYPE_FLOAT32 ? fp32 : fp16);
      }
      ts_kernel_destroy(k);
    }
  }
  free(ref);
  buf_free(s, &X);
  buf_free(s, &Y);
  if (with_weight)
    buf_free(s, &W);
}

/* ---- block sum reduction ----------------------------------------------------------------- */

static void test_reduce_sum(Suite *s, ts_dtype t, int64_t M, int64_t N) {
  Case c;
  case_init(s, &c, "reduce_sum.py", "reduce_sum");
  case_param(&c, "M", "%lld", (long long)M);
  case_param(&c, "N", "%lld", (long long)N);
  case_param(&c, "dtype", "%s", ts_dtype_name(t));
  if (!case_selected(s, &c))
    return;
  Buf A, Out;
  Buf *bufs[] = {&A, &Out};
  ts_arg args[2];
  uint64_t rng = c.seed;
  double *ref = calloc((size_t)M, sizeof(double));
  double *l1 = calloc((size_t)M, sizeof(double));
  /* Out accumulates through atomics, so it starts at zero (poison would be NaN + x);
   * a row that no block wrote stays 0 and fails the comparison. */
  if (!ref || !l1 || !buf_init(s, &A, "A", t, M, N, 0) ||
      !buf_init(s, &Out, "Out", TS_DTYPE_FLOAT32, M, -1, 0) || !buf_random(s, &A, &rng) ||
      !buf_memset(s, &Out, 0)) {
    case_fail(s, &c, "setup: %s", ts_last_error(s->ctx));
  } else {
    ts_kernel *k = compile_and_launch(s, &c, bufs, 2, args);
    if (k) {
      if (!buf_download(s, &Out))
        case_fail(s, &c, "download: %s", ts_last_error(s->ctx));
      else {
        for (int64_t i = 0; i < M; i++) {
          for (int64_t j = 0; j < N; j++) {
            ref[i] += A.val[i * N + j];
            l1[i] += fabs(A.val[i * N + j]);
          }
        }
        /* fp32 summation in any order: error bounded by a small multiple of eps * sum|a|;
         * the sum itself may be near zero, so the bound scales with the row's L1 norm. */
        Tol tol = {2e-6, 0, 1e-5};
        finish_case(s, &c, k, args, bufs, 2, &Out, ref, l1, tol);
      }
      ts_kernel_destroy(k);
    }
  }
  free(ref);
  free(l1);
  buf_free(s, &A);
  buf_free(s, &Out);
}

/* ---- LayerNorm forward (Y, Mean, Rstd) ---------------------------------------------------- */

static void test_layernorm(Suite *s, ts_dtype t, int64_t M, int64_t N, int block_M) {
  const double eps = 1e-5;
  Case c;
  case_init(s, &c, "layernorm.py", "layernorm_fwd");
  case_param(&c, "M", "%lld", (long long)M);
  case_param(&c, "N", "%lld", (long long)N);
  case_param(&c, "block_M", "%d", block_M);
  case_param(&c, "dtype", "%s", ts_dtype_name(t));
  if (!case_selected(s, &c))
    return;
  Buf X, G, B, Y, Mean, Rstd;
  Buf *bufs[] = {&X, &G, &B, &Y, &Mean, &Rstd};
  ts_arg args[6];
  uint64_t rng = c.seed;
  double *ref = calloc((size_t)(M * N), sizeof(double));
  double *ref_mean = calloc((size_t)M, sizeof(double)), *ref_rstd = calloc((size_t)M, sizeof(double));
  if (!ref || !ref_mean || !ref_rstd || !buf_init(s, &X, "X", t, M, N, 0) || !buf_init(s, &G, "gamma", t, N, -1, 0) ||
      !buf_init(s, &B, "beta", t, N, -1, 0) || !buf_init(s, &Y, "Y", t, M, N, 1) ||
      !buf_init(s, &Mean, "Mean", TS_DTYPE_FLOAT32, M, -1, 1) ||
      !buf_init(s, &Rstd, "Rstd", TS_DTYPE_FLOAT32, M, -1, 1) || !buf_random(s, &X, &rng) ||
      !buf_random(s, &G, &rng) || !buf_random(s, &B, &rng) || !buf_memset(s, &Y, 0xFF) ||
      !buf_memset(s, &Mean, 0xFF) || !buf_memset(s, &Rstd, 0xFF)) {
    case_fail(s, &c, "setup: %s", ts_last_error(s->ctx));
  } else {
    ts_kernel *k = compile_and_launch(s, &c, bufs, 6, args);
    if (k) {
      if (!buf_download(s, &Y) || !buf_download(s, &Mean) || !buf_download(s, &Rstd))
        case_fail(s, &c, "download: %s", ts_last_error(s->ctx));
      else {
        for (int64_t i = 0; i < M; i++) {
          const double *x = X.val + i * N;
          double sum = 0, var = 0;
          for (int64_t j = 0; j < N; j++)
            sum += x[j];
          double mean = sum / (double)N;
          for (int64_t j = 0; j < N; j++)
            var += (x[j] - mean) * (x[j] - mean);
          double rstd = 1.0 / sqrt(var / (double)N + eps);
          ref_mean[i] = mean;
          ref_rstd[i] = rstd;
          for (int64_t j = 0; j < N; j++)
            ref[i * N + j] = (x[j] - mean) * rstd * G.val[j] + B.val[j];
        }
        /* The kernel takes E[x^2] - mean^2 in fp32: for inputs in [-1, 1) (variance ~1/3)
         * that loses a few ulp of the variance; Y is rounded to 16 bits once. */
        Tol stat = {1e-5, 1e-4, 1e-5}, out16 = {2e-2, 2e-2, 5e-3};
        char detail[768];
        if (!compare(Mean.val, ref_mean, NULL, (size_t)M, stat, detail, sizeof detail))
          case_fail(s, &c, "Mean: %s", detail);
        else if (!compare(Rstd.val, ref_rstd, NULL, (size_t)M, stat, detail, sizeof detail))
          case_fail(s, &c, "Rstd: %s", detail);
        else
          finish_case(s, &c, k, args, bufs, 6, &Y, ref, NULL, out16);
      }
      ts_kernel_destroy(k);
    }
  }
  free(ref);
  free(ref_mean);
  free(ref_rstd);
  Buf *all[] = {&X, &G, &B, &Y, &Mean, &Rstd};
  for (int i = 0; i < 6; i++)
    buf_free(s, all[i]);
}

/* ---- grouped GEMM weight gradient (device-side group sizes) -------------------------------- */

/* Uploads host integers into an int32 buffer (b->val keeps them as doubles). */
static int buf_upload_ints(Suite *s, Buf *b, const int64_t *v) {
  int32_t *bytes = malloc(buf_bytes(b) ? buf_bytes(b) : 1);
  if (!bytes)
    return 0;
  for (size_t i = 0; i < b->numel; i++) {
    bytes[i] = (int32_t)v[i];
    b->val[i] = (double)v[i];
  }
  int ok = ts_memcpy_h2d(s->ctx, b->dev, bytes, buf_bytes(b)) == TS_OK;
  free(bytes);
  return ok;
}

static void test_grouped_gemm_wgrad(Suite *s, const int64_t *sizes, int G, int64_t M, int64_t N) {
  int64_t offsets[16], total = 0;
  for (int g = 0; g < G; g++) {
    offsets[g] = total;
    total += sizes[g];
  }
  Case c;
  case_init(s, &c, "grouped_gemm_wgrad.py", "grouped_gemm_wgrad");
  case_param(&c, "batch_sum", "%lld", (long long)total);
  case_param(&c, "batch_count", "%d", G);
  case_param(&c, "M", "%lld", (long long)M);
  case_param(&c, "N", "%lld", (long long)N);
  if (!case_selected(s, &c))
    return;
  for (int g = 0; g < G; g++) /* the group sizes in the printed name */
    snprintf(c.name + strlen(c.name), sizeof c.name - strlen(c.name), "%s%lld", g ? "," : " sizes=",
             (long long)sizes[g]);
  Buf X, DY, Sz, Off, DW;
  Buf *bufs[] = {&X, &DY, &Sz, &Off, &DW};
  ts_arg args[5];
  uint64_t rng = c.seed;
  double *ref = calloc((size_t)(G * M * N), sizeof(double)), *l1 = calloc((size_t)(G * M * N), sizeof(double));
  if (!ref || !l1 || !buf_init(s, &X, "X", TS_DTYPE_FLOAT16, total, M, 0) ||
      !buf_init(s, &DY, "dY", TS_DTYPE_FLOAT16, total, N, 0) || !buf_init(s, &Sz, "sizes", TS_DTYPE_INT32, G, -1, 0) ||
      !buf_init(s, &Off, "offsets", TS_DTYPE_INT32, G, -1, 0) ||
      !buf_init(s, &DW, "dW", TS_DTYPE_FLOAT16, G * M, N, 1) || !buf_random(s, &X, &rng) ||
      !buf_random(s, &DY, &rng) || !buf_upload_ints(s, &Sz, sizes) || !buf_upload_ints(s, &Off, offsets) ||
      !buf_memset(s, &DW, 0xFF)) {
    case_fail(s, &c, "setup: %s", ts_last_error(s->ctx));
  } else {
    ts_kernel *k = compile_and_launch(s, &c, bufs, 5, args);
    if (k) {
      if (!buf_download(s, &DW))
        case_fail(s, &c, "download: %s", ts_last_error(s->ctx));
      else {
        for (int g = 0; g < G; g++)
          for (int64_t r = offsets[g]; r < offsets[g] + sizes[g]; r++)
            for (int64_t m = 0; m < M; m++) {
              double xv = X.val[r * M + m];
              double *out = ref + (g * M + m) * N, *o1 = l1 + (g * M + m) * N;
              const double *dy = DY.val + r * N;
              for (int64_t n = 0; n < N; n++) {
                out[n] += xv * dy[n];
                o1[n] += fabs(xv * dy[n]);
              }
            }
        /* fp32 accumulation of fp16 products, one fp16 rounding of the result. */
        Tol tol = {1e-3, 2e-3, 2e-3};
        finish_case(s, &c, k, args, bufs, 5, &DW, ref, l1, tol);
      }
      ts_kernel_destroy(k);
    }
  }
  free(ref);
  free(l1);
  Buf *all[] = {&X, &DY, &Sz, &Off, &DW};
  for (int i = 0; i < 5; i++)
    buf_free(s, all[i]);
}

/* ---- main --------------------------------------------------------------------------------- */

static void run_all(Suite *s) {
  const ts_dtype f16 = TS_DTYPE_FLOAT16, f32 = TS_DTYPE_FLOAT32;

  test_elementwise_add(s, f16, 1024, 1024);
  test_elementwise_add(s, f16, 1000, 1000);
  test_elementwise_add(s, f16, 1, 7);
  test_elementwise_add(s, f16, 333, 4099);
  test_elementwise_add(s, f16, 4096, 4096);
  test_elementwise_add(s, f32, 1000, 1000);
  test_elementwise_add(s, f32, 1, 7);

  test_scale_cast(s, 1024, 1024, 0.5);
  test_scale_cast(s, 1000, 1000, 0.3);
  test_scale_cast(s, 1, 7, 2.0);
  test_scale_cast(s, 4096, 4096, 0.125);

  test_transpose(s, f16, 1024, 1024);
  test_transpose(s, f16, 1000, 1000);
  test_transpose(s, f16, 1, 7);
  test_transpose(s, f16, 64, 4000);
  test_transpose(s, f16, 4000, 64);
  test_transpose(s, f16, 4096, 4096);
  test_transpose(s, f32, 1000, 600);

  test_softmax(s, f16, 256, 1024);
  test_softmax(s, f16, 1000, 1000);
  test_softmax(s, f16, 1, 7);
  test_softmax(s, f16, 4096, 4096);
  test_softmax(s, f32, 100, 2048);
  test_softmax(s, f32, 1000, 1000);

  test_rmsnorm(s, f32, 256, 1024, 0);
  test_rmsnorm(s, f32, 1000, 1000, 0);
  test_rmsnorm(s, f32, 1, 7, 0);
  test_rmsnorm(s, f32, 4096, 4096, 0);
  test_rmsnorm(s, f32, 1000, 1000, 1);
  test_rmsnorm(s, f16, 512, 1024, 1);

  test_reduce_sum(s, f32, 1024, 1024);
  test_reduce_sum(s, f32, 1000, 1000);
  test_reduce_sum(s, f32, 1, 7);
  test_reduce_sum(s, f32, 4096, 4096);
  test_reduce_sum(s, f16, 1000, 3000);

  const ts_dtype bf16 = TS_DTYPE_BFLOAT16;
  test_layernorm(s, bf16, 64, 1024, 1);
  test_layernorm(s, bf16, 256, 8192, 1);
  test_layernorm(s, f16, 128, 2048, 2);
  test_layernorm(s, f32, 33, 4096, 1);

  static const int64_t groups_a[] = {64, 128}, groups_b[] = {1, 200, 63, 129}, groups_c[] = {0, 256, 70};
  test_grouped_gemm_wgrad(s, groups_a, 2, 256, 256);
  test_grouped_gemm_wgrad(s, groups_b, 4, 128, 256);
  test_grouped_gemm_wgrad(s, groups_c, 3, 256, 512);
}

static const char usage[] =
    "usage: test_gpu [--bench] [--filter TEXT] [--seed N] [--examples DIR]\n"
    "  --bench          also time every case (median of 50 runs after 10, L2 flushed)\n"
    "  --filter TEXT    only the cases whose printed name contains TEXT\n"
    "  --seed N         base seed of the random inputs (default 12345; case i uses its own)\n"
    "  --examples DIR   folder of the example kernels (default: examples)\n";

int main(int argc, char **argv) {
  Suite s;
  memset(&s, 0, sizeof s);
  s.examples_dir = "examples";
  s.seed = 12345;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--bench"))
      s.bench = 1;
    else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
      s.filter = argv[++i];
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      s.seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--examples") && i + 1 < argc)
      s.examples_dir = argv[++i];
    else {
      fputs(usage, !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ? stdout : stderr);
      return !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ? 0 : 2;
    }
  }
  ts_context_options co = {0};
  co.size = sizeof co;
  if (ts_context_create(&co, &s.ctx) != TS_OK) {
    fprintf(stderr, "test_gpu: cannot create a context\n");
    return 2;
  }
  if (ts_context_device_sm(s.ctx) == 0) {
    fprintf(stderr, "test_gpu: no usable GPU: %s\n", ts_last_error(s.ctx));
    ts_context_destroy(s.ctx);
    return 2;
  }
  printf("GPU tests on sm_%d (examples from %s/)\n", ts_context_device_sm(s.ctx), s.examples_dir);
  run_all(&s);
  printf("%d passed, %d failed\n", s.passed, s.failed);
  for (int i = 0; i < s.nprograms; i++)
    ts_program_destroy(s.programs[i].prog);
  ts_context_destroy(s.ctx);
  return s.failed ? 1 : 0;
}
