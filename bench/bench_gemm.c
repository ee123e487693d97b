/* bench_gemm.c — T.gemm against cuBLAS in one process (`make bench` runs build/bench_gemm
 * after build/bench).
 *
 * For 8192^3 and TileLang's benchmark shapes, in float16 and bfloat16 (fp32 accumulate),
 * examples/gemm.py is compiled in a few tile configurations, which are timed in REPS
 * rounds that run each configuration once in turn after warm-up (L2 flushed before every
 * run, random inputs); the fastest median is kept, and its output is checked against
 * cuBLAS's (relative norm); then the chosen kernel and
 * cuBLAS (cublasGemmEx, default algorithm) on the same buffers are timed alternately, one
 * run each per round, FINAL rounds, and the medians are reported.  One line per shape:
 * TFLOP/s of both, the ratio and the configuration used; then the geometric mean of the
 * ratios per dtype.  Then fp8 (e4m3 x e4m3 -> bf16, fp32 accumulate; examples/gemm_dtypes.py,
 * K-major operands) against cuBLASLt (cublasLtMatmul, best heuristic algorithm) at 8192^3:
 * there the fastest configuration's tuning median is compared with cuBLASLt's median of
 * REPS runs (not alternated).  --quick: 8192^3 only; --shape M,N,K: one shape; -v: every config's rate;
 * --no-mc: skip the multicast configuration; --cfg I: only configuration I; --no-fp8; --sk: compile the
 * non-multicast configurations with pass_configs {"tl.enable_stream_k": True} (stream-K tail);
 * --overlap: compile with {"ts.enable_epilogue_overlap": True} (each tile's epilogue during the
 * next tile's first K steps instead of after its own K loop, also for whole-tile epilogues;
 * ring-of-atoms epilogues overlap by default). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* an old-style declaration in cublasLt.h */
#include <cublasLt.h>
#pragma GCC diagnostic pop
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/gpu/hostdata.h"
#include "tilescale.h"

#define WARMUP 3
#define REPS 15  /* tuning: median of REPS runs per configuration */
#define FINAL 21 /* the reported numbers: rounds of ours and the peer alternating */

typedef struct Cfg { int bm, bn, bk, stages, threads, mc; } Cfg;

/* threads = consumer threads (2 warpgroups); on sm_90a warp_specialize adds a 128-thread
 * TMA producer warpgroup, so these kernels run 384 threads.  mc = 1: the same kernel
 * compiled with pass_configs {"tl.enable_tma_multicast": True} (2-block clusters sharing
 * the larger operand tile by TMA multicast; opt-in). */
/* Every configuration stores C with TMA: 3 stages of 128x256x64 leave room for the whole
 * epilogue tile, 4 stages (and 8 of 128x256x32) for a ring of two [128 x 64] column atoms. */
static const Cfg cfgs[] = {
    {128, 256, 64, 4, 256, 0},
    {128, 256, 64, 3, 256, 0},
    {128, 256, 64, 4, 256, 1},
    {128, 256, 64, 3, 256, 1},
    {128, 256, 32, 8, 256, 0},
    {128, 256, 32, 8, 256, 1},
};

/* Every CUDA runtime call of the benchmark is checked: a silent failure would time or
 * compare garbage. */
#define CK(call)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "bench_gemm: %s failed: %s\n", #call, cudaGetErrorString(e_));   \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median ms of cuBLAS C = A B (row-major; computed as C^T = B^T A^T column-major). */
static double time_cublas(cublasHandle_t h, ts_dtype dt, int M, int N, int K, void *a, void *b, void *c, void *flush,
                          size_t flush_bytes, int warmup, int reps) {
  cudaDataType t = dt == TS_DTYPE_FLOAT16 ? CUDA_R_16F : CUDA_R_16BF;
  float alpha = 1.f, beta = 0.f;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  double ms[FINAL];
  if (reps > FINAL) reps = FINAL;
  for (int i = 0; i < warmup + reps; i++) {
    cudaMemset(flush, i & 0xff, flush_bytes);
    cudaEventRecord(e0, 0);
    cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, b, t, N, a, t, K, &beta, c, t, N,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    if (st != CUBLAS_STATUS_SUCCESS) return -1;
    float f;
    cudaEventElapsedTime(&f, e0, e1);
    if (i >= warmup) ms[i - warmup] = f;
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  qsort(ms, reps, sizeof ms[0], cmp_double);
  return ms[reps / 2];
}

/* The reported numbers: ours (the configuration the tuning pass chose) and cuBLAS timed
 * alternately, one L2-flushed run each per round, FINAL rounds after warm-up, so clock and
 * temperature drift hit both alike; medians in *ours / *theirs.  False on a failure. */
static bool time_final(ts_kernel *k, const ts_arg *args, cublasHandle_t h, ts_dtype dt, int M, int N, int K, void *a,
                       void *b, void *c, void *flush, size_t flush_bytes, double *ours, double *theirs) {
  double o[FINAL], t[FINAL];
  for (int r = 0; r < FINAL; r++) {
    if (ts_kernel_benchmark(k, args, 3, r ? 0 : WARMUP, 1, 1, &o[r]) != TS_OK) return false;
    t[r] = time_cublas(h, dt, M, N, K, a, b, c, flush, flush_bytes, r ? 0 : WARMUP, 1);
    if (t[r] <= 0) return false;
  }
  qsort(o, FINAL, sizeof o[0], cmp_double);
  qsort(t, FINAL, sizeof t[0], cmp_double);
  *ours = o[FINAL / 2];
  *theirs = t[FINAL / 2];
  return true;
}

static double rel_err(const uint16_t *x, const uint16_t *ref, size_t n, ts_dtype dt);

/* fp8 e4m3 x e4m3 -> bf16 (fp32 accumulate, scales 1) with cuBLASLt, C[M,N] = A[M,K] B[N,K]^T
 * row-major, i.e. column-major C^T = B A^T: the "TN" form cuBLASLt requires for fp8.
 * Median ms, or -1 when cuBLASLt has no algorithm. */
static double time_cublaslt_fp8(int M, int N, int K, void *a, void *b, void *c, void *flush, size_t flush_bytes) {
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return -1;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulPreference_t pref;
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  size_t ws_bytes = 64u << 20;
  void *ws = NULL;
  double result = -1;
  CK(cudaMalloc(&ws, ws_bytes));
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K); /* B [N, K] row-major */
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, M, K); /* A [M, K] row-major */
  cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, N, M, N);    /* C [M, N] row-major */
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes);
  cublasLtMatmulHeuristicResult_t heur;
  int nres = 0;
  float alpha = 1.f, beta = 0.f;
  if (cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &nres) == CUBLAS_STATUS_SUCCESS &&
      nres > 0) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double ms[REPS];
    int ok = 1;
    for (int i = 0; i < WARMUP + REPS && ok; i++) {
      cudaMemset(flush, i & 0xff, flush_bytes);
      cudaEventRecord(e0, 0);
      ok = cublasLtMatmul(lt, op, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &heur.algo, ws, ws_bytes, 0) ==
           CUBLAS_STATUS_SUCCESS;
      cudaEventRecord(e1, 0);
      cudaEventSynchronize(e1);
      float f;
      cudaEventElapsedTime(&f, e0, e1);
      if (i >= WARMUP) ms[i - WARMUP] = f;
    }
    if (ok) {
      qsort(ms, REPS, sizeof ms[0], cmp_double);
      result = ms[REPS / 2];
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(op);
  cudaFree(ws);
  cublasLtDestroy(lt);
  return result;
}

/* Random e4m3 bits with |x| < 2 (exponent field 0..7: no NaN, no overflow of the sums). */
static uint8_t rand_e4m3(uint64_t *st) {
  uint64_t r = hd_rng_next(st);
  return (uint8_t)(((r >> 8) & 0x80) | ((r >> 16) & 7) << 3 | ((r >> 24) & 7));
}

/* The fp8 comparison: gemm_dtypes.py (e4m3 -> bf16) in a few configurations, the fastest
 * against cuBLASLt on the same inputs.  Returns 1 when something failed. */
static int bench_fp8(ts_context *ctx, const char *examples, int verbose, int M, int N, int K, void *flush,
                     size_t flush_bytes) {
  static const Cfg fcfgs[] = {{128, 256, 128, 4, 256, 0}, {128, 256, 128, 3, 256, 0}, {256, 128, 128, 4, 256, 0}};
  char path[1024];
  snprintf(path, sizeof path, "%s/gemm_dtypes.py", examples);
  ts_program *prog = NULL;
  if (ts_program_load_file(ctx, path, &prog) != TS_OK) {
    fprintf(stderr, "bench_gemm: %s\n", ts_last_error(ctx));
    return 1;
  }
  size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
  uint8_t *ha = malloc(na), *hb = malloc(nb);
  uint16_t *hc = malloc(nc * 2), *hr = malloc(nc * 2);
  uint64_t st = 7;
  for (size_t i = 0; i < na; i++) ha[i] = rand_e4m3(&st);
  for (size_t i = 0; i < nb; i++) hb[i] = rand_e4m3(&st);
  void *da, *db, *dc, *dr;
  CK(cudaMalloc(&da, na));
  CK(cudaMalloc(&db, nb));
  CK(cudaMalloc(&dc, nc * 2));
  CK(cudaMalloc(&dr, nc * 2));
  CK(cudaMemcpy(da, ha, na, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, hb, nb, cudaMemcpyHostToDevice));
  CK(cudaMemset(dc, 0xFF, nc * 2));
  CK(cudaMemset(dr, 0, nc * 2));
  double flops = 2.0 * M * N * (double)K, best = 1e30;
  int best_cfg = -1, failed = 0;
  for (int ci = 0; ci < (int)(sizeof fcfgs / sizeof fcfgs[0]); ci++) {
    const Cfg *cf = &fcfgs[ci];
    char v[11][24];
    int iv[] = {M, N, K, cf->bm, cf->bn, cf->bk, cf->stages, cf->threads};
    const char *names[] = {"M",       "N",       "K",        "block_M",     "block_N",  "block_K",
                           "num_stages", "threads", "in_dtype", "accum_dtype", "out_dtype"};
    ts_param ps[11];
    for (int i = 0; i < 8; i++) snprintf(v[i], sizeof v[i], "%d", iv[i]);
    snprintf(v[8], sizeof v[8], "float8_e4m3");
    snprintf(v[9], sizeof v[9], "float32");
    snprintf(v[10], sizeof v[10], "bfloat16");
    for (int i = 0; i < 11; i++) ps[i] = (ts_param){names[i], v[i]};
    ts_kernel *k = NULL;
    if (ts_kernel_compile(prog, "matmul", ps, 11, NULL, &k) != TS_OK) {
      fprintf(stderr, "bench_gemm: fp8 compile %dx%dx%d: %s\n", cf->bm, cf->bn, cf->bk, ts_last_error(ctx));
      continue;
    }
    int64_t sa[2] = {M, K}, sb[2] = {N, K}, sc[2] = {M, N};
    ts_arg args[3] = {{.kind = TS_ARG_TENSOR, .tensor = {da, TS_DTYPE_FLOAT8_E4M3, 2, sa, NULL, 0}},
                      {.kind = TS_ARG_TENSOR, .tensor = {db, TS_DTYPE_FLOAT8_E4M3, 2, sb, NULL, 0}},
                      {.kind = TS_ARG_TENSOR, .tensor = {dc, TS_DTYPE_BFLOAT16, 2, sc, NULL, 0}}};
    double ms = 0;
    if (ts_kernel_benchmark(k, args, 3, WARMUP, REPS, 1, &ms) != TS_OK)
      fprintf(stderr, "bench_gemm: fp8 run %dx%dx%d: %s\n", cf->bm, cf->bn, cf->bk, ts_last_error(ctx));
    else if (verbose)
      printf("  cfg %dx%dx%d s%d t%d: %.1f TFLOP/s\n", cf->bm, cf->bn, cf->bk, cf->stages, cf->threads,
             flops / ms / 1e9);
    if (ms > 0 && ms < best) {
      best = ms;
      best_cfg = ci;
      CK(cudaMemcpy(hc, dc, nc * 2, cudaMemcpyDeviceToHost));
    }
    ts_kernel_destroy(k);
  }
  double cms = time_cublaslt_fp8(M, N, K, da, db, dr, flush, flush_bytes);
  char shape[32];
  snprintf(shape, sizeof shape, "%d,%d,%d", M, N, K);
  if (best_cfg < 0 || cms <= 0) {
    printf("fp8    %-20s failed (ours %s, cuBLASLt %s)\n", shape, best_cfg < 0 ? "failed" : "ok",
           cms <= 0 ? "failed" : "ok");
    failed = 1;
  } else {
    CK(cudaMemcpy(hr, dr, nc * 2, cudaMemcpyDeviceToHost));
    const Cfg *cf = &fcfgs[best_cfg];
    char cfg[64];
    snprintf(cfg, sizeof cfg, "%dx%dx%d, %d, %d", cf->bm, cf->bn, cf->bk, cf->stages, cf->threads);
    double mag = 0, err = rel_err(hc, hr, nc, TS_DTYPE_BFLOAT16), ours = flops / best / 1e9, theirs = flops / cms / 1e9;
    for (size_t i = 0; i < nc; i++) mag += fabs(hd_bf16_to_f32(hr[i]));
    mag /= (double)nc;
    int bad = !(err <= 5e-2) || !(mag > 0);
    printf("fp8    %-20s %10.1f %10.1f %7.3f  %-26s %.2e (mean|C| %.1f)%s   [e4m3 -> bf16; peer cuBLASLt]\n", shape,
           ours, theirs, ours / theirs, cfg, err, mag, bad ? "  WRONG" : "");
    failed = bad;
  }
  cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(dr);
  free(ha); free(hb); free(hc); free(hr);
  ts_program_destroy(prog);
  return failed;
}

static double rel_err(const uint16_t *x, const uint16_t *ref, size_t n, ts_dtype dt) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double a = dt == TS_DTYPE_FLOAT16 ? hd_f16_to_f32(x[i]) : hd_bf16_to_f32(x[i]);
    double r = dt == TS_DTYPE_FLOAT16 ? hd_f16_to_f32(ref[i]) : hd_bf16_to_f32(ref[i]);
    if (!isfinite(a)) return INFINITY;
    num += (a - r) * (a - r);
    den += r * r;
  }
  return sqrt(num / (den > 0 ? den : 1));
}

int main(int argc, char **argv) {
  int quick = 0, verbose = 0, no_mc = 0, one[3] = {0}, only_cfg = -1, no_fp8 = 0, sk = 0, ov = 0;
  const char *examples = "examples";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "-v")) verbose = 1;
    else if (!strcmp(argv[i], "--no-mc")) no_mc = 1;
    else if (!strcmp(argv[i], "--sk")) sk = 1;
    else if (!strcmp(argv[i], "--overlap")) ov = 1;
    else if (!strcmp(argv[i], "--no-fp8")) no_fp8 = 1;
    else if (!strcmp(argv[i], "--cfg") && i + 1 < argc) only_cfg = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--shape") && i + 1 < argc) sscanf(argv[++i], "%d,%d,%d", &one[0], &one[1], &one[2]);
    else examples = argv[i];
  }
  ts_context *ctx = NULL;
  ts_context_options o = {.size = sizeof o};
  if (ts_context_create(&o, &ctx) != TS_OK || ts_context_device_sm(ctx) == 0) {
    printf("bench_gemm: no usable GPU; skipped\n");
    return 0;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/gemm.py", examples);
  ts_program *prog = NULL;
  const char *nov = ov ? ", \"ts.enable_epilogue_overlap\": True" : "";
  char cfg_plain[160], cfg_mc[160];
  snprintf(cfg_plain, sizeof cfg_plain, "\"tl.enable_stream_k\": %s%s", sk ? "True" : "False", nov);
  snprintf(cfg_mc, sizeof cfg_mc, "\"tl.enable_tma_multicast\": True%s", nov); /* stream-K needs no cluster */
  if (!(prog = hd_load_with_configs(ctx, path, cfg_plain))) {
    fprintf(stderr, "bench_gemm: %s\n", ts_last_error(ctx));
    return 1;
  }
  ts_program *prog_mc = hd_load_with_configs(ctx, path, cfg_mc);
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "bench_gemm: cublasCreate failed\n");
    return 1;
  }
  static const int shapes[][3] = {{8192, 8192, 8192}, {4096, 1024, 8192}, {4096, 8192, 8192}, {4096, 28672, 8192},
                                  {4096, 8192, 28672}, {8192, 1024, 8192}, {8192, 28672, 8192}, {8192, 8192, 28672}};
  int nshapes = one[0] ? 1 : quick ? 1 : 8;
  size_t flush_bytes = 256u << 20;
  void *flush = NULL;
  cudaMalloc(&flush, flush_bytes);
  printf("GEMM vs cuBLAS on sm_%d: configurations tuned on the median of %d round-robin runs; then the chosen one and the peer\n"
         "alternately, median of %d rounds, L2 flushed before every run; TFLOP/s = 2MNK / time\n",
         ts_context_device_sm(ctx), REPS, FINAL);
  printf("%-6s %-20s %10s %10s %7s  %-26s %s\n", "dtype", "M,N,K", "ours", "cuBLAS", "ratio", "config (tile, stages, thr)",
         "err vs cuBLAS");
  int failed = 0;
  for (int d = 0; d < 2; d++) {
    ts_dtype dt = d ? TS_DTYPE_BFLOAT16 : TS_DTYPE_FLOAT16;
    const char *dname = d ? "bfloat16" : "float16";
    double logsum = 0;
    int nr = 0;
    for (int si = 0; si < nshapes; si++) {
      int M = one[0] ? one[0] : shapes[si][0], N = one[0] ? one[1] : shapes[si][1], K = one[0] ? one[2] : shapes[si][2];
      size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
      uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hc = malloc(nc * 2), *hr = malloc(nc * 2);
      uint64_t st = 42 + (uint64_t)si;
      for (size_t i = 0; i < na; i++) {
        float x = hd_rng_unit(&st); /* uniform [-1, 1) */
        ha[i] = d ? hd_f32_to_bf16(x) : hd_f32_to_f16(x);
      }
      for (size_t i = 0; i < nb; i++) {
        float x = hd_rng_unit(&st); /* uniform [-1, 1) */
        hb[i] = d ? hd_f32_to_bf16(x) : hd_f32_to_f16(x);
      }
      void *da, *db, *dc, *dr;
      CK(cudaMalloc(&da, na * 2));
      CK(cudaMalloc(&db, nb * 2));
      CK(cudaMalloc(&dc, nc * 2));
      CK(cudaMalloc(&dr, nc * 2));
      CK(cudaMemcpy(da, ha, na * 2, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(db, hb, nb * 2, cudaMemcpyHostToDevice));
      CK(cudaMemset(dc, 0xFF, nc * 2)); /* poisoned: NaN unless written */
      CK(cudaMemset(dr, 0, nc * 2));
      double flops = 2.0 * M * N * (double)K;
      double best = 1e30;
      int best_cfg = -1;
      ts_kernel *bestk = NULL;
      int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
      ts_arg args[3] = {{.kind = TS_ARG_TENSOR, .tensor = {da, dt, 2, sa, NULL, 0}},
                        {.kind = TS_ARG_TENSOR, .tensor = {db, dt, 2, sb, NULL, 0}},
                        {.kind = TS_ARG_TENSOR, .tensor = {dc, dt, 2, sc, NULL, 0}}};
      /* Tuning: every configuration compiled, then REPS rounds that run each once in turn
       * (L2 flushed), so clock and temperature drift over the rounds hit all alike; the
       * configuration with the fastest median is kept. */
      enum { NCFG = sizeof cfgs / sizeof cfgs[0] };
      ts_kernel *ks[NCFG] = {0};
      double tms[NCFG][REPS];
      for (int ci = 0; ci < NCFG; ci++) {
        const Cfg *cf = &cfgs[ci];
        char v[9][24];
        int iv[] = {M, N, K, cf->bm, cf->bn, cf->bk, cf->stages, cf->threads};
        const char *names[] = {"M", "N", "K", "block_M", "block_N", "block_K", "num_stages", "threads", "dtype"};
        ts_param ps[9];
        for (int i = 0; i < 8; i++) snprintf(v[i], sizeof v[i], "%d", iv[i]);
        snprintf(v[8], sizeof v[8], "%s", dname);
        for (int i = 0; i < 9; i++) ps[i] = (ts_param){names[i], v[i]};
        if ((cf->mc && (no_mc || !prog_mc)) || (only_cfg >= 0 && ci != only_cfg)) continue;
        if (ts_kernel_compile(cf->mc ? prog_mc : prog, "matmul", ps, 9, NULL, &ks[ci]) != TS_OK) {
          fprintf(stderr, "bench_gemm: compile %dx%dx%d: %s\n", cf->bm, cf->bn, cf->bk, ts_last_error(ctx));
          ks[ci] = NULL;
        }
      }
      for (int r = 0; r < REPS; r++)
        for (int ci = 0; ci < NCFG; ci++) {
          if (!ks[ci]) continue;
          double ms = 0;
          if (ts_kernel_benchmark(ks[ci], args, 3, r ? 0 : WARMUP, 1, 1, &ms) != TS_OK) {
            fprintf(stderr, "bench_gemm: run %dx%dx%d: %s\n", cfgs[ci].bm, cfgs[ci].bn, cfgs[ci].bk, ts_last_error(ctx));
            ts_kernel_destroy(ks[ci]);
            ks[ci] = NULL;
            continue;
          }
          tms[ci][r] = ms;
        }
      for (int ci = 0; ci < NCFG; ci++) {
        if (!ks[ci]) continue;
        const Cfg *cf = &cfgs[ci];
        qsort(tms[ci], REPS, sizeof tms[ci][0], cmp_double);
        double ms = tms[ci][REPS / 2];
        if (verbose)
          printf("  cfg %dx%dx%d s%d t%d %s: %.1f TFLOP/s\n", cf->bm, cf->bn, cf->bk, cf->stages, cf->threads,
                 cf->mc ? "mc" : "nomc", flops / ms / 1e9);
        if (ms > 0 && ms < best) {
          best = ms;
          best_cfg = ci;
        }
      }
      for (int ci = 0; ci < NCFG; ci++)
        if (ks[ci] && ci != best_cfg) ts_kernel_destroy(ks[ci]);
      bestk = best_cfg >= 0 ? ks[best_cfg] : NULL;
      double cms = -1;
      CK(cudaMemset(dc, 0xFF, nc * 2)); /* poisoned again: what is checked is the chosen kernel's output */
      if (bestk && !time_final(bestk, args, h, dt, M, N, K, da, db, dr, flush, flush_bytes, &best, &cms)) cms = -1;
      if (bestk) ts_kernel_destroy(bestk);
      CK(cudaMemcpy(hc, dc, nc * 2, cudaMemcpyDeviceToHost)); /* the chosen kernel's output */
      CK(cudaMemcpy(hr, dr, nc * 2, cudaMemcpyDeviceToHost));
      double mag = 0;
      for (size_t i = 0; i < nc; i++) mag += fabs(d ? hd_bf16_to_f32(hr[i]) : hd_f16_to_f32(hr[i]));
      mag /= (double)nc; /* mean |C| of cuBLAS: ~sqrt(K)/3 for uniform [-1,1) inputs, never 0 */
      char shape[32], cfg[64];
      snprintf(shape, sizeof shape, "%d,%d,%d", M, N, K);
      if (best_cfg < 0 || cms <= 0) {
        printf("%-6s %-20s failed (ours %s, cuBLAS %s)\n", d ? "bf16" : "fp16", shape, best_cfg < 0 ? "failed" : "ok",
               cms <= 0 ? "failed" : "ok");
        failed++;
      } else {
        const Cfg *cf = &cfgs[best_cfg];
        snprintf(cfg, sizeof cfg, "%dx%dx%d, %d, %d%s", cf->bm, cf->bn, cf->bk, cf->stages, cf->threads,
                 cf->mc ? ", mc" : "");
        double ours = flops / best / 1e9, theirs = flops / cms / 1e9, err = rel_err(hc, hr, nc, dt);
        printf("%-6s %-20s %10.1f %10.1f %7.3f  %-26s %.2e (mean|C| %.1f)%s\n", d ? "bf16" : "fp16", shape, ours,
               theirs, ours / theirs, cfg, err, mag, err <= 1e-2 && mag > 0 ? "" : "  WRONG");
        fflush(stdout);
        if (!(err <= 1e-2) || !(mag > 0)) failed++;
        logsum += log(ours / theirs);
        nr++;
      }
      cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(dr);
      free(ha); free(hb); free(hc); free(hr);
    }
    if (nr) printf("%s: geometric mean ratio over %d shapes: %.3f\n", dname, nr, exp(logsum / nr));
  }
  if (!no_fp8 && only_cfg < 0) failed += bench_fp8(ctx, examples, verbose, 8192, 8192, 8192, flush, flush_bytes);
  cublasDestroy(h);
  cudaFree(flush);
  ts_program_destroy(prog);
  if (prog_mc) ts_program_destroy(prog_mc);
  ts_context_destroy(ctx);
  return failed ? 1 : 0;
}
