/* bench.c — benchmarks of the vertical slice (`make bench` runs build/bench on a GPU).
 *
 * 1. Bandwidth: element-wise add, transpose and softmax at large sizes, each against a
 *    device-to-device cuMemcpy moving the same number of bytes, measured in the same run.
 *    Bytes of a kernel = the sum of its tensor parameters' sizes (each read or written once).
 *    A memcpy of S bytes reads S and writes S, so the peer copies S = bytes / 2 and its
 *    GB/s also counts 2 S: both columns count read + write traffic, and the ratio
 *    kernel GB/s / memcpy GB/s says how close the kernel gets to the driver's own copy.
 *    Times are medians of 100 runs after 10 warm-up runs, L2 flushed before each.
 * 2. Compile time: a cold compile (cache disabled; front end, passes, codegen, NVRTC), and
 *    the time from a fresh context with a warm disk cache to a finished first launch
 *    (program load + ts_kernel_compile hitting the cache + module load + launch + sync).
 *
 * A client of tilescale.h only; inputs are random (never time on zeros), outputs poisoned. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tests/gpu/hostdata.h"
#include "tilescale.h"

#define WARMUP 10
#define REPS 100

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* One bandwidth row: which example, its -D values, and how to lay out its parameters. */
typedef struct BenchCase {
  const char *label;
  const char *file;
  const char *func;
  int64_t M, N;
  ts_dtype dtype;
} BenchCase;

static int fail(ts_context *ctx, const char *what, ts_status s) {
  fprintf(stderr, "bench: %s: %s: %s\n", what, ts_status_string(s), ts_last_error(ctx));
  return 0;
}

/* Random fp16/fp32 data for n elements, uploaded to dev. */
static int upload_random(ts_context *ctx, void *dev, ts_dtype t, size_t n, uint64_t seed) {
  size_t es = ts_dtype_size(t);
  unsigned char *h = malloc(n * es);
  if (!h)
    return 0;
  uint64_t rng = seed;
  for (size_t i = 0; i < n; i++) {
    float u = hd_rng_unit(&rng);
    if (t == TS_DTYPE_FLOAT16)
      ((uint16_t *)h)[i] = hd_f32_to_f16(u);
    else
      ((float *)h)[i] = u;
  }
  ts_status s = ts_memcpy_h2d(ctx, dev, h, n * es);
  free(h);
  return s == TS_OK;
}

/* Runs one bandwidth row and prints it.  Returns 1 on success. */
static int bench_bandwidth(ts_context *ctx, const char *examples, const BenchCase *bc) {
  char path[1024], mv[32], nv[32];
  snprintf(path, sizeof path, "%s/%s", examples, bc->file);
  snprintf(mv, sizeof mv, "%lld", (long long)bc->M);
  snprintf(nv, sizeof nv, "%lld", (long long)bc->N);
  ts_param params[] = {{"M", mv}, {"N", nv}, {"dtype", ts_dtype_name(bc->dtype)}};
  ts_program *prog = NULL;
  ts_kernel *k = NULL;
  void *dev[4] = {0};
  void *cpy_src = NULL, *cpy_dst = NULL;
  int ok = 0;
  ts_status s = ts_program_load_file(ctx, path, &prog);
  if (s != TS_OK) {
    fail(ctx, path, s);
    goto done;
  }
  ts_compile_options opt = {0};
  opt.size = sizeof opt;
  s = ts_kernel_compile(prog, bc->func, params, 3, &opt, &k);
  if (s != TS_OK) {
    fail(ctx, bc->label, s);
    goto done;
  }
  int nargs = ts_kernel_num_args(k);
  if (nargs < 1 || nargs > 4) {
    fprintf(stderr, "bench: %s: unexpected %d parameters\n", bc->label, nargs);
    goto done;
  }
  ts_arg args[4];
  int64_t shapes[4][8];
  double bytes = 0;
  memset(args, 0, sizeof args);
  for (int i = 0; i < nargs; i++) {
    ts_arg_info ai;
    s = ts_kernel_arg_info(k, i, &ai);
    if (s != TS_OK || ai.kind != TS_ARG_TENSOR) {
      fprintf(stderr, "bench: %s: parameter %d is not a tensor\n", bc->label, i);
      goto done;
    }
    size_t n = 1;
    for (int d = 0; d < ai.ndim; d++) {
      shapes[i][d] = ai.shape[d];
      n *= (size_t)ai.shape[d];
    }
    size_t nb = n * ts_dtype_size(ai.dtype);
    bytes += (double)nb;
    s = ts_device_malloc(ctx, nb, &dev[i]);
    if (s == TS_OK && ai.is_output)
      s = ts_memset_d8(ctx, dev[i], 0xFF, nb);
    else if (s == TS_OK && !upload_random(ctx, dev[i], ai.dtype, n, 0x5EEDull + (uint64_t)i))
      s = TS_ERR_CUDA;
    if (s != TS_OK) {
      fail(ctx, "allocating the parameters", s);
      goto done;
    }
    args[i].kind = TS_ARG_TENSOR;
    args[i].tensor.data = dev[i];
    args[i].tensor.dtype = ai.dtype;
    args[i].tensor.ndim = ai.ndim;
    args[i].tensor.shape = shapes[i];
    args[i].tensor.device = 0;
  }
  double ms = 0, cpy_ms = 0;
  s = ts_kernel_benchmark(k, args, nargs, WARMUP, REPS, 1, &ms);
  if (s != TS_OK) {
    fail(ctx, bc->label, s);
    goto done;
  }
  /* The peer: one copy of bytes / 2 (read bytes/2 + write bytes/2 = the kernel's traffic). */
  size_t half = (size_t)(bytes / 2);
  if ((s = ts_device_malloc(ctx, half, &cpy_src)) != TS_OK || (s = ts_device_malloc(ctx, half, &cpy_dst)) != TS_OK ||
      (s = ts_memset_d8(ctx, cpy_src, 0xA5, half)) != TS_OK ||
      (s = ts_memcpy_benchmark(ctx, cpy_dst, cpy_src, half, WARMUP, REPS, 1, &cpy_ms)) != TS_OK) {
    fail(ctx, "memcpy benchmark", s);
    goto done;
  }
  double gbs = bytes / (ms * 1e-3) / 1e9, cpy_gbs = 2.0 * (double)half / (cpy_ms * 1e-3) / 1e9;
  char size[48];
  snprintf(size, sizeof size, "%lldx%lld %s", (long long)bc->M, (long long)bc->N, ts_dtype_name(bc->dtype));
  printf("%-16s %-22s %10.4f %10.1f %10.4f %12.1f %7.2f\n", bc->label, size, ms, gbs, cpy_ms, cpy_gbs,
         gbs / cpy_gbs);
  ok = 1;
done:
  for (int i = 0; i < 4; i++)
    if (dev[i])
      ts_device_free(ctx, dev[i]);
  if (cpy_src)
    ts_device_free(ctx, cpy_src);
  if (cpy_dst)
    ts_device_free(ctx, cpy_dst);
  ts_kernel_destroy(k);
  ts_program_destroy(prog);
  return ok;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* Compile-time measurements on softmax 8192x8192 fp16 (the largest of the slice's kernels). */
static int bench_compile(ts_context_options base, const char *examples) {
  char path[1024];
  snprintf(path, sizeof path, "%s/softmax.py", examples);
  ts_param params[] = {{"M", "8192"}, {"N", "8192"}, {"dtype", "float16"}};
  ts_compile_options opt = {0};
  opt.size = sizeof opt;
  int ok = 0;

  /* Cold: no cache at all, so every compile runs the whole pipeline and NVRTC. */
  ts_context_options co = base;
  co.disable_cache = 1;
  ts_context *ctx = NULL;
  ts_program *prog = NULL;
  ts_kernel *k = NULL;
  ts_status s = ts_context_create(&co, &ctx);
  if (s != TS_OK || (s = ts_program_load_file(ctx, path, &prog)) != TS_OK)
    return fail(ctx, "cold compile setup", s);
  double best = 1e30, t_ir = 0;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = now_ms();
    s = ts_kernel_compile(prog, "softmax", params, 3, &opt, &k);
    double t = now_ms() - t0;
    if (s != TS_OK) {
      fail(ctx, "cold compile", s);
      goto cold_done;
    }
    ts_kernel_destroy(k);
    k = NULL;
    best = t < best ? t : best;
  }
  {
    /* The share of the front end, passes and codegen: a fresh program, no NVRTC. */
    ts_compile_options no_jit = opt;
    no_jit.no_jit = 1;
    ts_program *fresh = NULL;
    double t0 = now_ms();
    s = ts_program_load_file(ctx, path, &fresh);
    if (s == TS_OK)
      s = ts_kernel_compile(fresh, "softmax", params, 3, &no_jit, &k);
    t_ir = now_ms() - t0;
    ts_kernel_destroy(k);
    k = NULL;
    ts_program_destroy(fresh);
    if (s != TS_OK) {
      fail(ctx, "compile without NVRTC", s);
      goto cold_done;
    }
  }
  printf("cold compile softmax 8192x8192 fp16 (cache disabled, best of 3): %.1f ms\n"
         "  of which load + front end + passes + codegen (no NVRTC, fresh program): %.2f ms\n",
         best, t_ir);
  ok = 1;
cold_done:
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
  if (!ok)
    return 0;

  /* Cache hit: fill a private cache dir, then time a fresh context's path to a launched kernel. */
  char dir[] = "/tmp/tilescale-bench-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("bench: mkdtemp");
    return 0;
  }
  ok = 0;
  co = base;
  co.cache_dir = dir;
  co.disable_cache = 0;
  void *x = NULL, *y = NULL;
  ctx = NULL;
  prog = NULL;
  if ((s = ts_context_create(&co, &ctx)) != TS_OK || (s = ts_program_load_file(ctx, path, &prog)) != TS_OK ||
      (s = ts_kernel_compile(prog, "softmax", params, 3, &opt, &k)) != TS_OK) {
    fail(ctx, "filling the cache", s);
    goto hit_done;
  }
  ts_kernel_destroy(k);
  k = NULL;
  ts_program_destroy(prog);
  prog = NULL;
  ts_context_destroy(ctx);
  ctx = NULL;

  /* Not counted: context creation, driver initialisation (the first allocation) and inputs. */
  double t0 = now_ms();
  s = ts_context_create(&co, &ctx);
  size_t nb = (size_t)8192 * 8192 * 2;
  int64_t shape[2] = {8192, 8192};
  if (s != TS_OK || (s = ts_device_malloc(ctx, nb, &x)) != TS_OK || (s = ts_device_malloc(ctx, nb, &y)) != TS_OK ||
      !upload_random(ctx, x, TS_DTYPE_FLOAT16, nb / 2, 7)) {
    fail(ctx, "cache-hit setup", s);
    goto hit_done;
  }
  double t_setup = now_ms() - t0;
  ts_arg args[2];
  memset(args, 0, sizeof args);
  for (int i = 0; i < 2; i++) {
    args[i].kind = TS_ARG_TENSOR;
    args[i].tensor.data = i ? y : x;
    args[i].tensor.dtype = TS_DTYPE_FLOAT16;
    args[i].tensor.ndim = 2;
    args[i].tensor.shape = shape;
  }
  t0 = now_ms();
  s = ts_program_load_file(ctx, path, &prog);
  double t1 = now_ms();
  if (s == TS_OK)
    s = ts_kernel_compile(prog, "softmax", params, 3, &opt, &k);
  double t2 = now_ms();
  if (s == TS_OK)
    s = ts_kernel_launch(k, args, 2, NULL);
  if (s == TS_OK)
    s = ts_synchronize(ctx);
  double t3 = now_ms();
  if (s != TS_OK) {
    fail(ctx, "cache-hit compile and launch", s);
    goto hit_done;
  }
  printf("cache hit to a launched kernel (fresh context, warm disk cache): %.2f ms\n"
         "  = load file %.2f + compile %.2f (binary from cache: %s) + module load, first launch, sync %.2f\n"
         "  (not counted: context creation, driver init, input upload: %.1f ms)\n",
         t3 - t0, t1 - t0, t2 - t1, ts_kernel_from_cache(k) ? "yes" : "NO", t3 - t2, t_setup);
  ok = 1;
hit_done:
  if (x)
    ts_device_free(ctx, x);
  if (y)
    ts_device_free(ctx, y);
  ts_kernel_destroy(k);
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
  nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
  return ok;
}

int main(int argc, char **argv) {
  const char *examples = argc > 1 ? argv[1] : "examples";
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    printf("usage: bench [EXAMPLES_DIR]   (default: examples)\n");
    return 0;
  }
  ts_context_options co = {0};
  co.size = sizeof co;
  ts_context *ctx = NULL;
  ts_status s = ts_context_create(&co, &ctx);
  if (s != TS_OK || ts_context_device_sm(ctx) == 0) {
    fprintf(stderr, "bench: no usable GPU: %s\n", ctx ? ts_last_error(ctx) : ts_status_string(s));
    ts_context_destroy(ctx);
    return 2;
  }
  printf("TileScale-C %s benchmarks on sm_%d; medians of %d runs after %d warm-up, L2 flushed\n",
         TS_VERSION_STRING, ts_context_device_sm(ctx), REPS, WARMUP);
  printf("GB/s counts read + write bytes for both the kernel and the memcpy of half as many bytes\n\n");
  printf("%-16s %-22s %10s %10s %10s %12s %7s\n", "kernel", "size", "time ms", "GB/s", "memcpy ms",
         "memcpy GB/s", "ratio");
  const BenchCase cases[] = {
      {"elementwise_add", "elementwise_add.py", "elementwise_add", 8192, 8192, TS_DTYPE_FLOAT16},
      {"elementwise_add", "elementwise_add.py", "elementwise_add", 4096, 4096, TS_DTYPE_FLOAT16},
      {"elementwise_add", "elementwise_add.py", "elementwise_add", 8192, 8192, TS_DTYPE_FLOAT32},
      {"transpose", "transpose.py", "transpose", 8192, 8192, TS_DTYPE_FLOAT16},
      {"transpose", "transpose.py", "transpose", 4096, 4096, TS_DTYPE_FLOAT16},
      {"softmax", "softmax.py", "softmax", 8192, 8192, TS_DTYPE_FLOAT16},
      {"softmax", "softmax.py", "softmax", 4096, 4096, TS_DTYPE_FLOAT16},
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    failed += !bench_bandwidth(ctx, examples, &cases[i]);
  ts_context_destroy(ctx);
  printf("\n");
  failed += !bench_compile(co, examples);
  return failed ? 1 : 0;
}
