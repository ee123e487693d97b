/* test_interp_corpus.c — TileLang's own example kernels (the corpus, CORPUS or
 * ../shared/corpus) compiled at small sizes and run in the lockstep interpreter (interp.h)
 * against references computed here in C: what the passes make of real files (layouts,
 * vectors, reductions, barriers, edge guards) is checked on any machine, without a GPU.
 * Kernels with tensor-core GEMMs are out of reach (the interpreter does not run them).
 * 16-bit float types are not rounded by the interpreter, so the references use the same
 * float32 steps and the comparisons allow float32 rounding. */
#include <math.h>
#include <stdlib.h>

#include "../../src/pass/passes.h"
#include "interp.h"
#include "test.h"

typedef struct Run {
  TsCompiler c;
  SourceFile file;
  char *text;
  IrFunc *f;
  Interp in;
} Run;

static const char *corpus_dir(void) {
  const char *d = getenv("CORPUS");
  return d && *d ? d : "../shared/corpus";
}

/* Compiles `func` of corpus file `rel` with "name=value" parameters through the whole
 * pass pipeline.  False with a diagnostic (a test failure) when it does not compile; false
 * with a "skipped" line when the corpus is not there (as tests/run.sh skips its corpus
 * step; CI has it beside the checkout). */
/* A pass config (KEY=next_pass_value) the next corpus_compile applies over the file's own:
 * the tests of switches. */
static const char *next_pass_config, *next_pass_value = "True";
/* a second switch, also True, for the same compile */
static const char *next_pass_config2;

static bool corpus_compile(TestCtx *t, Run *r, const char *rel, const char *func, const char *const *params) {
  memset(r, 0, sizeof *r);
  ts_compiler_init(&r->c, (TsTarget){90, true});
  r->c.debug = true;
  static const char *keys[2], *values[2];
  if (next_pass_config) {
    keys[0] = next_pass_config, values[0] = next_pass_value, keys[1] = next_pass_config2, values[1] = "True";
    r->c.call_pc_keys = keys, r->c.call_pc_values = values, r->c.ncall_pc = next_pass_config2 ? 2 : 1;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", corpus_dir(), rel);
  size_t len = 0;
  r->text = ts_read_file(path, &len);
  if (!r->text) {
    printf("  (skipped %s: no corpus at %s; set CORPUS)\n", t->name, corpus_dir());
    ts_compiler_fini(&r->c);
    return false;
  }
  r->file = (SourceFile){rel, r->text, len};
  r->f = interp_compile(&r->c, &r->file, func, params);
  next_pass_config = next_pass_config2 = NULL, next_pass_value = "True";
  if (r->f) return true;
  fprintf(stderr, "  %s: %s:%s does not compile (above)\n", t->name, rel, func);
  t->failures++;
  free(r->text);
  ts_compiler_fini(&r->c);
  return false;
}

/* Does the compiled function hold a warp-specialized kernel (a producer warpgroup)? */
static bool warp_specialized(const IrStmt *s) {
  if (!s) return false;
  if (s->kind == IR_S_KERNEL) return s->u.kernel.producer_threads > 0;
  if (s->kind != IR_S_SEQ) return false;
  for (int i = 0; i < s->u.seq.n; i++)
    if (warp_specialized(s->u.seq.items[i])) return true;
  return false;
}

/* The first kernel under s (in a sequence), or NULL. */
static const IrKernel *first_kernel(const IrStmt *s) {
  if (!s) return NULL;
  if (s->kind == IR_S_KERNEL) return &s->u.kernel;
  for (int i = 0; s->kind == IR_S_SEQ && i < s->u.seq.n; i++)
    if (first_kernel(s->u.seq.items[i])) return first_kernel(s->u.seq.items[i]);
  return NULL;
}

/* The consumer threads (threads[0]) of the first kernel under s; 0 when there is none. */
static int kernel_threads(const IrStmt *s) {
  const IrKernel *k = first_kernel(s);
  return k ? k->threads[0] : 0;
}

/* The leading extent of the allocation named `name` under s (its stages once staged); 0 when
 * there is none. */
static int64_t alloc_extent0(const IrStmt *s, const char *name) {
  if (!s) return 0;
  if (s->kind == IR_S_ALLOC && !strcmp(s->u.alloc.buf->name, name)) {
    int64_t v = 0;
    return ir_is_const_int(s->u.alloc.buf->shape[0], &v) ? v : 0;
  }
  const IrStmt *kids[2] = {NULL, NULL};
  if (s->kind == IR_S_KERNEL) kids[0] = s->u.kernel.body;
  if (s->kind == IR_S_FOR) kids[0] = s->u.loop.body;
  if (s->kind == IR_S_IF) kids[0] = s->u.if_.then_s, kids[1] = s->u.if_.else_s;
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) {
      int64_t v = alloc_extent0(s->u.seq.items[i], name);
      if (v) return v;
    }
  for (int i = 0; i < 2; i++) {
    int64_t v = alloc_extent0(kids[i], name);
    if (v) return v;
  }
  return 0;
}

/* Global parameter `name` of the compiled function, its contents in the interpreter. */
static double *arg(Run *r, const char *name) {
  for (int i = 0; i < r->f->nparams; i++)
    if (r->f->params[i].buf && !strcmp(r->f->params[i].buf->name, name)) return interp_global(&r->in, r->f->params[i].buf);
  fprintf(stderr, "no parameter %s\n", name);
  abort();
}

/* Sets the launch value of scalar parameter or dynamic size `name` (abort when there is none). */
static void scalar(Run *r, const char *name, double value) {
  IrVar *v = NULL;
  for (int i = 0; i < r->f->nparams; i++)
    if (r->f->params[i].var && !strcmp(r->f->params[i].name, name)) v = r->f->params[i].var;
  for (int i = 0; i < r->f->ndyn; i++)
    if (!strcmp(r->f->dyn_vars[i]->name, name)) v = r->f->dyn_vars[i];
  if (!v) {
    fprintf(stderr, "no scalar %s\n", name);
    abort();
  }
  interp_set_scalar(&r->in, v, value);
}

static void run_free(Run *r) {
  interp_free(&r->in);
  free(r->text);
  ts_compiler_fini(&r->c);
}

static double rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (double)(float)(((*s >> 8) & 0xffff) / 32768.0 - 1.0);
}

static bool close_to(double got, double want, double tol) { return fabs(got - want) <= tol * (1 + fabs(want)); }

/* x[0..n) = random values in [-1, 1) */
static void fill(double *x, int n, unsigned *seed) {
  for (int e = 0; e < n; e++) x[e] = rnd(seed);
}

/* Runs the compiled function; the run must count no error and no race. */
static void run_clean(TestCtx *t, Run *r) {
  interp_run(&r->in, r->f);
  CHECK(r->in.errors == 0);
  CHECK(r->in.races == 0);
}

/* norm/layernorm.py _layernorm_bwd: each block walks blk_m rows (a serial loop copying a row
 * of dY and X into shared memory, two row sums, dX back through shared memory) and adds its
 * dGamma/dBeta partial sums atomically; against the formulas in double (dX is bf16).  By
 * default (ts.pipeline_serial_loops) the row loop is pipelined (dY's tile gets two stages);
 * with the switch off it stays serial, with the same results.  The two row sums share one
 * barrier (ts.batch_reductions, on by default; off, each has its own). */
static void count_syncthreads(IrExpr *e, void *ctx) {
  *(int *)ctx += e->kind == IR_CALL && e->u.call.op == IRI_SYNCTHREADS;
}
static int syncthreads_in(IrStmt *s) {
  int n = 0;
  IrVisitor v = {NULL, count_syncthreads, &n};
  ir_visit(s, &v);
  return n;
}
static void layernorm_bwd_case(TestCtx *t, bool pipelined, bool batched) {
  enum { N = 4, D = 1024 };
  Run r;
  const char *p[] = {"N=4", "D=1024", "blk_m=2", "threads=256", NULL};
  if (!pipelined) next_pass_config = "ts.pipeline_serial_loops", next_pass_value = "False";
  if (!batched) next_pass_config = "ts.batch_reductions", next_pass_value = "False";
  if (!corpus_compile(t, &r, "tilelang/examples/norm/layernorm.py", "_layernorm_bwd", p)) return;
  CHECK(alloc_extent0(r.f->body, "DY_smem") == (pipelined ? 2 : 1));
  /* the two row sums: one barrier between their partials' stores and loads, or one each */
  CHECK(syncthreads_in(r.f->body) == (batched ? 5 : 6));
  double *dy = arg(&r, "DY"), *x = arg(&r, "X"), *g = arg(&r, "gamma"), *mean = arg(&r, "Mean"),
         *rstd = arg(&r, "Rstd"), *dx = arg(&r, "DX"), *dg = arg(&r, "DGamma"), *db = arg(&r, "DBeta");
  unsigned seed = 7;
  fill(dy, N * D, &seed);
  fill(x, N * D, &seed);
  fill(g, D, &seed);
  for (int i = 0; i < N; i++) {
    double s = 0, sq = 0;
    for (int j = 0; j < D; j++) s += x[i * D + j], sq += x[i * D + j] * x[i * D + j];
    mean[i] = (float)(s / D), rstd[i] = (float)(1 / sqrt(sq / D - (s / D) * (s / D) + 1e-5));
  }
  for (int j = 0; j < D; j++) dg[j] = db[j] = 0;
  run_clean(t, &r);
  int bad = 0;
  static double want_dg[D], want_db[D];
  for (int j = 0; j < D; j++) want_dg[j] = want_db[j] = 0;
  for (int i = 0; i < N; i++) {
    double c1 = 0, c2 = 0;
    for (int j = 0; j < D; j++) {
      double xh = (x[i * D + j] - mean[i]) * rstd[i], dxh = dy[i * D + j] * g[j];
      c1 += dxh * xh, c2 += dxh;
      want_dg[j] += dy[i * D + j] * xh, want_db[j] += dy[i * D + j];
    }
    c1 /= D, c2 /= D;
    for (int j = 0; j < D; j++) {
      double xh = (x[i * D + j] - mean[i]) * rstd[i], dxh = dy[i * D + j] * g[j];
      bad += !close_to(dx[i * D + j], rstd[i] * (dxh - c2 - xh * c1), 1e-2);
    }
  }
  for (int j = 0; j < D; j++) bad += !close_to(dg[j], want_dg[j], 1e-4) + !close_to(db[j], want_db[j], 1e-4);
  CHECK(bad == 0);
  run_free(&r);
}
TEST(corpus_interp_layernorm_bwd) { layernorm_bwd_case(t, false, true); }
TEST(corpus_interp_layernorm_bwd_pipelined) { layernorm_bwd_case(t, true, true); }
TEST(corpus_interp_layernorm_bwd_reductions_apart) { layernorm_bwd_case(t, true, false); }

/* elementwise/example_elementwise_add.py: partial tiles on both edges. */
TEST(corpus_interp_elementwise_add) {
  enum { M = 100, N = 72 };
  Run r;
  const char *p[] = {"block_M=32", "block_N=32", "in_dtype=float32", "out_dtype=float32", "threads=128", "M=100",
                     "N=72", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/elementwise/example_elementwise_add.py", "elementwise_add", p)) return;
  double *a = arg(&r, "A"), *b = arg(&r, "B"), *c = arg(&r, "C");
  unsigned seed = 1;
  for (int e = 0; e < M * N; e++) a[e] = rnd(&seed), b[e] = rnd(&seed);
  run_clean(t, &r);
  int bad = 0;
  for (int e = 0; e < M * N; e++) bad += c[e] != (double)(float)(a[e] + b[e]);
  CHECK(bad == 0);
  run_free(&r);
}

/* norm/rms_norm.py rms_norm: a row per block, a cross-warp sum. */
TEST(corpus_interp_rms_norm) {
  enum { M = 3, N = 1024 };
  Run r;
  const char *p[] = {"M=3", "N=1024", "blk_m=1", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/norm/rms_norm.py", "rms_norm", p)) return;
  double *a = arg(&r, "A"), *b = arg(&r, "B");
  unsigned seed = 2;
  fill(a, M * N, &seed);
  run_clean(t, &r);
  int bad = 0;
  for (int i = 0; i < M; i++) {
    double s = 0;
    for (int j = 0; j < N; j++) s += a[i * N + j] * a[i * N + j];
    double k = 1 / sqrt(s / N + 1e-12);
    for (int j = 0; j < N; j++) bad += !close_to(b[i * N + j], a[i * N + j] * k, 1e-5);
  }
  CHECK(bad == 0);
  run_free(&r);
}

/* norm/layernorm.py _layernorm_fwd: X, gamma and beta through shared memory, two row sums,
 * the statistics stored by one thread, the normalised row back through shared memory. */
TEST(corpus_interp_layernorm_fwd) {
  enum { N = 3, D = 2048 };
  Run r;
  const char *p[] = {"N=3", "D=2048", "eps=1e-05", "in_dtype=\"bfloat16\"", "out_dtype=\"bfloat16\"", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/norm/layernorm.py", "_layernorm_fwd", p)) return;
  double *x = arg(&r, "X"), *g = arg(&r, "gamma"), *be = arg(&r, "beta"), *y = arg(&r, "Y"), *mean = arg(&r, "Mean"),
         *rstd = arg(&r, "Rstd");
  unsigned seed = 3;
  fill(x, N * D, &seed);
  for (int e = 0; e < D; e++) g[e] = rnd(&seed), be[e] = rnd(&seed);
  run_clean(t, &r);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    double s = 0, sq = 0;
    for (int j = 0; j < D; j++) s += x[i * D + j], sq += x[i * D + j] * x[i * D + j];
    double mu = s / D, rs = 1 / sqrt(sq / D - mu * mu + 1e-5);
    bad += !close_to(mean[i], mu, 1e-5) + !close_to(rstd[i], rs, 1e-5);
    for (int j = 0; j < D; j++) bad += !close_to(y[i * D + j], (x[i * D + j] - mu) * rs * g[j] + be[j], 1e-4);
  }
  CHECK(bad == 0);
  run_free(&r);
}

/* gemv/example_gemv.py: C[n] = sum_k A[k] * B[n, k] through each of the file's schedules
 * (one thread per row; a 2-D block splitting K with a shared or shuffle reduction; vector
 * loads; the T.alloc_reducer variant); float32 sums in any order. */
static void gemv_case(TestCtx *t, const char *func, const char *const *p, const char *a_name, const char *b_name,
                      const char *c_name, int N, int K) {
  Run r;
  if (!corpus_compile(t, &r, "tilelang/examples/gemv/example_gemv.py", func, p)) return;
  double *a = arg(&r, a_name), *b = arg(&r, b_name), *c = arg(&r, c_name);
  unsigned seed = 4;
  fill(a, K, &seed);
  fill(b, N * K, &seed);
  run_clean(t, &r);
  int bad = 0;
  for (int n = 0; n < N; n++) {
    double s = 0, mag = 0;
    for (int k = 0; k < K; k++) s += a[k] * b[n * K + k], mag += fabs(a[k] * b[n * K + k]);
    bad += !(fabs(c[n] - s) <= 1e-5 * (1 + mag));
  }
  CHECK(bad == 0);
  run_free(&r);
}

TEST(corpus_interp_gemv_naive) {
  const char *p[] = {"N=256", "K=256", "BLOCK_N=128", "BLOCK_K=128", NULL};
  gemv_case(t, "naive_gemv", p, "A", "B", "C", 256, 256);
}
TEST(corpus_interp_gemv_naive_splitk) {
  const char *p[] = {"N=64", "K=128", "BLOCK_N=32", "BLOCK_K=32", NULL};
  gemv_case(t, "naive_splitk_gemv", p, "A", "B", "C", 64, 128);
}
TEST(corpus_interp_gemv_splitk) {
  const char *p[] = {"N=64", "K=256", "BLOCK_N=32", "BLOCK_K=32", "reduce_threads=32", NULL};
  gemv_case(t, "splitk_gemv", p, "A", "B", "C", 64, 256);
}
TEST(corpus_interp_gemv_splitk_vectorized) {
  const char *p[] = {"N=16", "K=512", "BLOCK_N=2", "reduce_threads=32", NULL};
  gemv_case(t, "splitk_gemv_vectorized", p, "A", "B", "C", 16, 512);
}
TEST(corpus_interp_gemv_alloc_reducer) {
  /* o[m] = sum_n a[m, n] * x[n]: the same sum with the matrix named a, the vector x */
  const char *p[] = {"M=256", "N=256", "block_M=128", "block_N=128", NULL};
  gemv_case(t, "gemv_alloc_reducer", p, "x", "a", "o", 256, 256);
}

/* convolution/example_convolution*.py: T.im2col's gather and the kernel tile as cp.async
 * stages of the pipeline, wgmma issued and waited around them; against the direct sum. */
static void conv_case(TestCtx *t, const char *file, const char *func, const char *const *p, int N, int C, int H, int W,
                      int F, int K, int S, int D, int P) {
  int OH = (H + 2 * P - D * (K - 1) - 1) / S + 1, OW = (W + 2 * P - D * (K - 1) - 1) / S + 1;
  Run r;
  if (!corpus_compile(t, &r, file, func, p)) return;
  double *x = arg(&r, "data"), *w = arg(&r, "kernel"), *out = arg(&r, "out");
  unsigned seed = 9;
  fill(x, N * H * W * C, &seed);
  fill(w, K * K * C * F, &seed);
  run_clean(t, &r);
  int bad = 0;
  for (int n = 0; n < N; n++)
    for (int oh = 0; oh < OH; oh++)
      for (int ow = 0; ow < OW; ow++)
        for (int f = 0; f < F; f++) {
          double s = 0, mag = 0;
          for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++)
              for (int ch = 0; ch < C; ch++) {
                int h = oh * S + kh * D - P, ww = ow * S + kw * D - P;
                if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
                double v = x[((n * H + h) * W + ww) * C + ch] * w[((kh * K + kw) * C + ch) * F + f];
                s += v, mag += fabs(v);
              }
          double got = out[((n * OH + oh) * OW + ow) * F + f];
          bool wrong = !(fabs(got - s) <= 1e-5 * (1 + mag));
          if (wrong && bad < 5 && getenv("TS_INTERP_DEBUG"))
            fprintf(stderr, "  out[%d,%d,%d,%d] = %g, want %g\n", n, oh, ow, f, got, s);
          bad += wrong;
        }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, N * OH * OW * F);
  CHECK(bad == 0);
  run_free(&r);
}

/* the file's own tile configuration (64 x 128 x 32, 3 stages, 256 threads); 60 output rows
 * (a partial tile) and 144 reduction columns (a half-empty last k-tile) */
TEST(corpus_interp_convolution) {
  const char *p[] = {"S=1", "D=1", "P=1", "block_M=64", "block_N=128", "block_K=32", "num_stages=3", "threads=256",
                     "N=2", "C=16", "H=5", "W=6", "F=128", "K=3", NULL};
  conv_case(t, "tilelang/examples/convolution/example_convolution.py", "convolution", p, 2, 16, 5, 6, 128, 3, 1, 1, 1);
}
/* stride 2, 8 channels (64 reduction columns in tiles of 32): the autotuner file's largest
 * tile (128 x 256 x 64) with its rasterized block order */
TEST(corpus_interp_convolution_autotune_tile) {
  const char *p[] = {"S=2", "D=1", "P=1", "block_M=128", "block_N=256", "block_K=64", "num_stages=3",
                     "thread_num=256", "enable_rasteration=True", "N=2", "C=8", "H=9", "W=7", "F=256", "K=3", NULL};
  conv_case(t, "tilelang/examples/convolution/example_convolution_autotune.py", "convolution", p, 2, 8, 9, 7, 256, 3, 2,
            1, 1);
}
/* analyze/example_conv_analyze.py: the same convolution written through flat views of the
 * filter and the output (T.Tensor(..., x.data)) and an explicit shared output tile, which
 * shares bytes with the pipeline's stages once the loop is done (merge_shared_memory) */
TEST(corpus_interp_conv_analyze) {
  const char *p[] = {"S=1", "D=1", "P=1", "block_M=64", "block_N=128", "block_K=32", "num_stages=3", "threads=256",
                     "N=2", "C=16", "H=5", "W=6", "F=128", "K=3", NULL};
  conv_case(t, "tilelang/examples/analyze/example_conv_analyze.py", "kernel", p, 2, 16, 5, 6, 128, 3, 1, 1, 1);
}

/* grouped_gemm/example_grouped_gemm_bwd.py grouped_gemm_bwd (the file's 64 x 128 x 64 tile,
 * 256 threads): dB[g] = A_g^T @ dO_g over each group's rows, a trip count loaded from
 * memory, gathers masked by the group size.  Group sizes are multiples of block_K, where
 * the file's mask and the math agree. */
TEST(corpus_interp_grouped_gemm_bwd) {
  enum { G = 2, TOTAL = 192, M = 128, N = 256 };
  const int sizes[G] = {64, 128};
  Run r;
  const char *p[] = {"block_M=64", "block_N=128", "block_K=64", "num_stages=2", "threads=256", "batch_sum=192",
                     "batch_count=2", "M=128", "N=256", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/grouped_gemm/example_grouped_gemm_bwd.py", "grouped_gemm_bwd", p))
    return;
  double *a = arg(&r, "A"), *b = arg(&r, "B"), *bs = arg(&r, "batch_sizes"), *bo = arg(&r, "batch_offsets"),
         *c = arg(&r, "C");
  unsigned seed = 10;
  fill(a, TOTAL * M, &seed);
  fill(b, TOTAL * N, &seed);
  for (int g = 0, off = 0; g < G; off += sizes[g++]) bs[g] = sizes[g], bo[g] = off;
  run_clean(t, &r);
  int bad = 0;
  for (int g = 0, off = 0; g < G; off += sizes[g++])
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double s = 0, mag = 0;
        for (int i = off; i < off + sizes[g]; i++) s += a[i * M + m] * b[i * N + n], mag += fabs(a[i * M + m] * b[i * N + n]);
        bad += !(fabs(c[(g * M + m) * N + n] - s) <= 1e-5 * (1 + mag));
      }
  CHECK(bad == 0);
  run_free(&r);
}

/* deepseek_mla/example_mla_decode_paged.py (no split), warp-specialized: the TMA producer
 * finds each KV tile's rows through the block table; sequences that end inside a tile.  Against softmax(q k^T * scale) v over
 * each sequence's tokens, k = [KV | K_pe], v = KV. */
TEST(corpus_interp_mla_decode_paged) {
  enum { B = 2, HQ = 64, DV = 256, DPE = 64, PAD = 256, BS = 64, PAGES = PAD / BS };
  const int seqlens[B] = {100, 230};
  const double scale = 0.0625;
  Run r;
  const char *p[] = {"batch=2", "h_q=64", "h_kv=1", "max_seqlen_pad=256", "dv=256", "dpe=64", "block_N=64",
                     "block_H=64", "num_split=1", "block_size=64", "softmax_scale=0.0625", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/deepseek_mla/example_mla_decode_paged.py", "mla_decode_tilelang", p))
    return;
  double *q = arg(&r, "Q"), *qpe = arg(&r, "Q_pe"), *kv = arg(&r, "KV"), *kpe = arg(&r, "K_pe"),
         *table = arg(&r, "block_table"), *lens = arg(&r, "cache_seqlens"), *out = arg(&r, "Output");
  unsigned seed = 14;
  fill(q, B * HQ * DV, &seed);
  fill(qpe, B * HQ * DPE, &seed);
  fill(kv, B * PAD * DV, &seed);
  fill(kpe, B * PAD * DPE, &seed);
  for (int i = 0; i < B * PAGES; i++) table[i] = (i * 5 + 3) % (B * PAGES); /* a permutation of the pages */
  for (int i = 0; i < B; i++) lens[i] = seqlens[i];
  /* the TMA producer reads the block table itself (constant memory) */
  CHECK(r.f->body->u.seq.items[0]->kind == IR_S_KERNEL && r.f->body->u.seq.items[0]->u.kernel.producer_threads > 0);
  interp_run(&r.in, r.f);
  CHECK(r.in.errors == 0);
  int bad = 0;
  static double w[PAD];
  for (int b = 0; b < B; b++)
    for (int h = 0; h < HQ; h++) {
      double mx = -INFINITY, sum = 0;
      for (int tk = 0; tk < seqlens[b]; tk++) {
        int row = (int)table[b * PAGES + tk / BS] * BS + tk % BS;
        double s = 0;
        for (int d = 0; d < DV; d++) s += q[(b * HQ + h) * DV + d] * kv[row * DV + d];
        for (int d = 0; d < DPE; d++) s += qpe[(b * HQ + h) * DPE + d] * kpe[row * DPE + d];
        w[tk] = s * scale;
        mx = fmax(mx, w[tk]);
      }
      for (int tk = 0; tk < seqlens[b]; tk++) sum += (w[tk] = exp(w[tk] - mx));
      for (int d = 0; d < DV; d++) {
        double o = 0;
        for (int tk = 0; tk < seqlens[b]; tk++) o += w[tk] / sum * kv[((int)table[b * PAGES + tk / BS] * BS + tk % BS) * DV + d];
        bad += !close_to(out[(b * HQ + h) * DV + d], o, 1e-4);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, B * HQ * DV);
  CHECK(bad == 0);
  run_free(&r);
}

/* flash_attention/example_{mha,gqa}_fwd_varlen.py: sequences packed back to back
 * (cu_seqlens), the grid sized by a scalar parameter; the TMA producer reads the sequence
 * starts itself.  Each query row of each sequence against softmax(q k^T / sqrt(dim)) v over
 * its own keys (causal: those up to the row, aligned on the right; a row that sees none
 * is 0), query head h reading key head h / G. */
enum { VB = 2, VH = 4, VD = 64, VUQ = 200, VUKV = 150 };
static void varlen_case(TestCtx *t, const char *file, const char *const *p, int G, bool causal, int threads) {
  const int cq[VB + 1] = {0, 70, 200}, ck[VB + 1] = {0, 90, 150}, HK = VH / G;
  Run r;
  if (!corpus_compile(t, &r, file, "flashattn", p)) return;
  CHECK(kernel_threads(r.f->body) == threads);
  double *q = arg(&r, "Q_unpad"), *k = arg(&r, "K_unpad"), *v = arg(&r, "V_unpad"), *cuq = arg(&r, "cu_seqlens_q"),
         *cuk = arg(&r, "cu_seqlens_k"), *o = arg(&r, "Output_unpad");
  scalar(&r, "max_seqlen_q", 130);
  unsigned seed = 15;
  fill(q, VUQ * VH * VD, &seed);
  for (int e = 0; e < VUKV * HK * VD; e++) k[e] = rnd(&seed), v[e] = rnd(&seed);
  for (int i = 0; i <= VB; i++) cuq[i] = cq[i], cuk[i] = ck[i];
  interp_run(&r.in, r.f);
  CHECK(r.in.errors == 0);
  int bad = 0;
  static double w[VUKV];
  for (int b = 0; b < VB; b++)
    for (int h = 0; h < VH; h++)
      for (int i = cq[b]; i < cq[b + 1]; i++) {
        int last = causal ? ck[b] + (i - cq[b]) + (ck[b + 1] - ck[b]) - (cq[b + 1] - cq[b]) : ck[b + 1] - 1;
        double mx = -INFINITY, sum = 0;
        for (int j = ck[b]; j <= last && j < ck[b + 1]; j++) {
          double s = 0;
          for (int d = 0; d < VD; d++) s += q[(i * VH + h) * VD + d] * k[(j * HK + h / G) * VD + d];
          w[j] = s / sqrt((double)VD);
          mx = fmax(mx, w[j]);
        }
        for (int j = ck[b]; j <= last && j < ck[b + 1]; j++) sum += (w[j] = exp(w[j] - mx));
        for (int d = 0; d < VD; d++) {
          double out = 0;
          for (int j = ck[b]; j <= last && j < ck[b + 1]; j++) out += w[j] / sum * v[(j * HK + h / G) * VD + d];
          bad += !close_to(o[(i * VH + h) * VD + d], out, 1e-4);
        }
      }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, VUQ * VH * VD);
  CHECK(bad == 0);
  run_free(&r);
}

TEST(corpus_interp_mha_fwd_varlen) {
  const char *p[] = {"batch_size=2", "UQ=200", "UKV=150", "heads=4", "dim=64", "is_causal=False", "block_M=64",
                     "block_N=64", "num_stages=1", "threads=128", NULL};
  varlen_case(t, "tilelang/examples/flash_attention/example_mha_fwd_varlen.py", p, 1, false, 128);
}
TEST(corpus_interp_mha_fwd_varlen_causal) {
  const char *p[] = {"batch_size=2", "UQ=200", "UKV=150", "heads=4", "dim=64", "is_causal=True", "block_M=64",
                     "block_N=64", "num_stages=1", "threads=128", NULL};
  varlen_case(t, "tilelang/examples/flash_attention/example_mha_fwd_varlen.py", p, 1, true, 128);
}
/* a 128 x 128 tile declared on one warpgroup: acc_s, P and acc_o need 256 registers a thread
 * there, so it runs on two (widen_consumers.c), with the same results; under pass_configs
 * ts.keep_threads on one, as declared */
static const char *const wide_tile[] = {"batch_size=2", "UQ=200", "UKV=150", "heads=4", "dim=64", "is_causal=True",
                                        "block_M=128", "block_N=128", "num_stages=1", "threads=128", NULL};
TEST(corpus_interp_mha_fwd_varlen_widened) {
  varlen_case(t, "tilelang/examples/flash_attention/example_mha_fwd_varlen.py", wide_tile, 1, true, 256);
}
/* pass_configs ts.ws_loop_extra_stage: the one-stage loop gets two (K staged [2, 128, 64]) */
TEST(corpus_interp_mha_fwd_varlen_extra_stage) {
  next_pass_config = "ts.ws_loop_extra_stage";
  Run r;
  if (!corpus_compile(t, &r, "tilelang/examples/flash_attention/example_mha_fwd_varlen.py", "flashattn", wide_tile)) return;
  CHECK(warp_specialized(r.f->body) && alloc_extent0(r.f->body, "K_shared") == 2);
  run_free(&r);
  next_pass_config = "ts.ws_loop_extra_stage";
  varlen_case(t, "tilelang/examples/flash_attention/example_mha_fwd_varlen.py", wide_tile, 1, true, 256);
}
/* pass_configs ts.ws_pingpong: the two consumer warpgroups take turns on QK^T (a register-id
 * bar.sync before the issue, bar.arrive on the other's barrier after it, the wait split off;
 * one arrive before the loop and one sync after it), with the same results */
typedef struct DevCount {
  IrDeviceOp op;
  int n;
} DevCount;
static void count_dev(IrExpr *e, void *ctx) {
  DevCount *d = ctx;
  d->n += ir_is_device(e, d->op);
}
static int device_ops(IrStmt *s, IrDeviceOp op) {
  DevCount d = {op, 0};
  IrVisitor v = {NULL, count_dev, &d};
  ir_visit(s, &v);
  return d.n;
}
TEST(corpus_interp_mha_fwd_varlen_pingpong) {
  const char *file = "tilelang/examples/flash_attention/example_mha_fwd_varlen.py";
  Run r;
  if (!corpus_compile(t, &r, file, "flashattn", wide_tile)) return;
  CHECK(device_ops(r.f->body, IRD_NAMED_BARRIER_SYNC_DYN) == 0);
  run_free(&r);
  /* the turns alone, without the (default) intra-warpgroup overlap */
  next_pass_config = "ts.ws_intra_overlap", next_pass_value = "False", next_pass_config2 = "ts.ws_pingpong";
  if (!corpus_compile(t, &r, file, "flashattn", wide_tile)) return;
  CHECK(warp_specialized(r.f->body));
  CHECK(device_ops(r.f->body, IRD_NAMED_BARRIER_SYNC_DYN) == 2 && device_ops(r.f->body, IRD_NAMED_BARRIER_ARRIVE_DYN) == 2);
  CHECK(device_ops(r.f->body, IRD_GEMM_SS_WGMMA_ISSUE) == 1 && device_ops(r.f->body, IRD_GEMM_WGMMA_WAIT) == 1);
  run_free(&r);
  next_pass_config = "ts.ws_intra_overlap", next_pass_value = "False", next_pass_config2 = "ts.ws_pingpong";
  varlen_case(t, file, wide_tile, 1, true, 256);
}
/* ts.ws_intra_overlap (the default): PV of iteration k-1 issued after QK^T of k and waited for
 * only before P or O is touched (the first iteration peeled, the last PV after the loop); alone
 * and with ts.ws_pingpong, where the turn covers both issues.  Same results.  Set False, the
 * loop issues each GEMM synchronously. */
/* The position, in program order, of the n-th (from 0) device op `op` under s; -1: none. */
typedef struct DevAt {
  IrDeviceOp op;
  int n, seen, at, count;
} DevAt;
static void dev_at(IrExpr *e, void *ctx) {
  DevAt *d = ctx;
  if (e->kind != IR_CALL || e->u.call.op != IRI_DEVICE) return;
  if (e->u.call.dop == d->op && d->seen++ == d->n) d->at = d->count;
  d->count++;
}
static int device_op_at(IrStmt *s, IrDeviceOp op, int n) {
  DevAt d = {op, n, 0, -1, 0};
  IrVisitor v = {NULL, dev_at, &d};
  ir_visit(s, &v);
  return d.at;
}
TEST(corpus_interp_mha_fwd_varlen_overlap) {
  const char *file = "tilelang/examples/flash_attention/example_mha_fwd_varlen.py";
  Run r;
  next_pass_config = "ts.ws_intra_overlap", next_pass_value = "False";
  if (!corpus_compile(t, &r, file, "flashattn", wide_tile)) return;
  CHECK(device_ops(r.f->body, IRD_GEMM_SS_WGMMA_ISSUE) + device_ops(r.f->body, IRD_GEMM_RS_WGMMA_ISSUE) == 0);
  CHECK(alloc_extent0(r.f->body, "K_shared") == 1);
  run_free(&r);
  if (!corpus_compile(t, &r, file, "flashattn", wide_tile)) return;
  /* the first iteration peeled (QK^T synchronous, no PV), then QK^T and the previous PV issued
   * in the loop with a wait for each, the last PV synchronous after it */
  CHECK(device_ops(r.f->body, IRD_GEMM_SS_WGMMA_ISSUE) == 1 && device_ops(r.f->body, IRD_GEMM_RS_WGMMA_ISSUE) == 1);
  CHECK(device_ops(r.f->body, IRD_GEMM_SS_WGMMA) == 1 && device_ops(r.f->body, IRD_GEMM_RS_WGMMA) == 1);
  CHECK(device_ops(r.f->body, IRD_GEMM_WGMMA_WAIT) == 2);
  CHECK(alloc_extent0(r.f->body, "K_shared") == 2); /* the one-stage ring gets a second stage */
  run_free(&r);
  varlen_case(t, file, wide_tile, 1, true, 256);
  next_pass_config = "ts.ws_intra_overlap", next_pass_config2 = "ts.ws_pingpong";
  if (!corpus_compile(t, &r, file, "flashattn", wide_tile)) return;
  CHECK(device_ops(r.f->body, IRD_NAMED_BARRIER_SYNC_DYN) == 2 && device_ops(r.f->body, IRD_NAMED_BARRIER_ARRIVE_DYN) == 2);
  run_free(&r);
  next_pass_config = "ts.ws_intra_overlap", next_pass_config2 = "ts.ws_pingpong";
  varlen_case(t, file, wide_tile, 1, true, 256);
}
/* One warpgroup of consumers (64 x 64 tiles on 128 threads): no turns to take, so
 * ts.ws_pingpong leaves the loop alone, while ts.ws_intra_overlap still applies; the results
 * stay right. */
TEST(corpus_interp_mha_fwd_varlen_one_warpgroup_schedules) {
  const char *file = "tilelang/examples/flash_attention/example_mha_fwd_varlen.py";
  const char *p[] = {"batch_size=2", "UQ=200", "UKV=150", "heads=4", "dim=64", "is_causal=True", "block_M=64",
                     "block_N=64", "num_stages=1", "threads=128", NULL};
  Run r;
  next_pass_config = "ts.ws_pingpong", next_pass_config2 = "ts.ws_intra_overlap";
  if (!corpus_compile(t, &r, file, "flashattn", p)) return;
  CHECK(warp_specialized(r.f->body) && kernel_threads(r.f->body) == 128);
  CHECK(device_ops(r.f->body, IRD_NAMED_BARRIER_SYNC_DYN) == 0 && device_ops(r.f->body, IRD_NAMED_BARRIER_ARRIVE_DYN) == 0);
  CHECK(device_ops(r.f->body, IRD_GEMM_RS_WGMMA_ISSUE) + device_ops(r.f->body, IRD_GEMM_SS_WGMMA_ISSUE) == 2);
  run_free(&r);
  next_pass_config = "ts.ws_pingpong", next_pass_config2 = "ts.ws_intra_overlap";
  varlen_case(t, file, p, 1, true, 128);
}
TEST(corpus_interp_mha_fwd_varlen_keep_threads) {
  next_pass_config = "ts.keep_threads";
  varlen_case(t, "tilelang/examples/flash_attention/example_mha_fwd_varlen.py", wide_tile, 1, true, 128);
}
/* Block-sparse attention (blocksparse_attention/example_tilelang_block_sparse_attn.py): the
 * pipelined loop's whole body is `if block_mask[k] != 0:`, block_mask a fragment copied from
 * the mask tensor before the loop.  Warp-specialized over the blocks the mask lets through
 * (ws_guard.c: the producer reads the mask tensor, both roles count taken blocks for the
 * stage and parity); under ts.ws_guarded_loops False, synchronous as before.  Same results,
 * against softmax(QK^T / sqrt(d)) V over the taken blocks, causal. */
#define BS_H 2
#define BS_S 256
#define BS_D 64
#define BS_N (BS_S / 64)
static void blocksparse_case(TestCtx *t, bool guarded) {
  const char *p[] = {"batch=1", "heads=2", "seq_len=256", "dim=64", "downsample_len=4", "is_causal=True", NULL};
  Run r;
  if (!guarded) next_pass_config = "ts.ws_guarded_loops", next_pass_value = "False";
  if (!corpus_compile(t, &r, "tilelang/examples/blocksparse_attention/example_tilelang_block_sparse_attn.py",
                      "blocksparse_flashattn", p))
    return;
  CHECK(warp_specialized(r.f->body) == guarded);
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *mask = arg(&r, "BlockSparseMask"), *o = arg(&r, "Output");
  unsigned seed = 23;
  fill(q, BS_H * BS_S * BS_D, &seed);
  fill(k, BS_H * BS_S * BS_D, &seed);
  fill(v, BS_H * BS_S * BS_D, &seed);
  for (int h = 0; h < BS_H; h++) /* block 0 always, then a pattern skipping some blocks */
    for (int i = 0; i < BS_N; i++)
      for (int j = 0; j < BS_N; j++) mask[(h * BS_N + i) * BS_N + j] = j == 0 || (i + j + h) % 3 != 1;
  interp_run(&r.in, r.f);
  CHECK(r.in.errors == 0 && r.in.races == 0);
  int bad = 0;
  static double w[BS_S];
  for (int h = 0; h < BS_H; h++)
    for (int i = 0; i < BS_S; i++) {
      const double *mrow = &mask[(h * BS_N + i / 64) * BS_N];
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j <= i; j++) {
        if (!mrow[j / 64]) continue;
        double s = 0;
        for (int d = 0; d < BS_D; d++) s += q[(h * BS_S + i) * BS_D + d] * k[(h * BS_S + j) * BS_D + d];
        mx = fmax(mx, w[j] = s / sqrt((double)BS_D));
      }
      for (int j = 0; j <= i; j++)
        if (mrow[j / 64]) sum += (w[j] = exp(w[j] - mx));
      for (int d = 0; d < BS_D; d++) {
        double out = 0;
        for (int j = 0; j <= i; j++)
          if (mrow[j / 64]) out += w[j] / sum * v[(h * BS_S + j) * BS_D + d];
        bad += !close_to(o[(h * BS_S + i) * BS_D + d], out, 1e-3);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, BS_H * BS_S * BS_D);
  CHECK(bad == 0);
  run_free(&r);
}
/* A warp-specialized kernel split for B blocks an SM: each thread launches with the registers
 * __launch_bounds__(threads, B) allows (a multiple of 8), and the consumers' setmaxnreg.inc
 * must fit in what that block's pool holds once the producer's dec has released its share
 * (an inc the pool cannot cover waits for ever).  kda's dV kernel takes 3 blocks, gqa_fwd 2,
 * the fp8 indexer's 512 consumers (ts.ws_wide_consumers) one. */
typedef struct RegOps { int64_t inc, dec; } RegOps;
static void reg_ops(IrExpr *e, void *ctx) {
  RegOps *r = ctx;
  if (ir_is_device(e, IRD_SETMAXNREG_INC)) r->inc = e->u.call.attrs[0];
  if (ir_is_device(e, IRD_SETMAXNREG_DEC)) r->dec = e->u.call.attrs[0];
}
static void pool_case(TestCtx *t, const char *file, const char *func, const char *const *p, int blocks) {
  Run r;
  if (!corpus_compile(t, &r, file, func, p)) return;
  const IrKernel *k = first_kernel(r.f->body);
  RegOps ro = {0, 0};
  IrVisitor v = {NULL, reg_ops, &ro};
  ir_visit(r.f->body, &v);
  REQUIRE(k && k->producer_threads == 128);
  CHECK(k->ws_blocks == blocks);
  int64_t threads = k->threads[0] + k->producer_threads, launch = 65536 / (blocks * threads) / 8 * 8;
  CHECK(ro.dec > 0 && ro.inc > launch);
  CHECK(ro.inc * k->threads[0] + ro.dec * k->producer_threads <= launch * threads);
  run_free(&r);
}
TEST(corpus_ws_blocks_register_pool) {
  const char *kda[] = {"B=1", "S=8192", "H=64", "DV=128", "scale=1.0", "input_dtype=\"bfloat16\"", "da_dtype=\"float32\"",
                       "do_dtype=\"bfloat16\"", "chunk_size=64", NULL};
  pool_case(t, "tilelang/examples/kda/chunk_bwd_gla_dA.py", "tilelang_chunk_bwd_kernel_dv_local", kda, 3);
  const char *gqa[] = {"batch=1", "heads=64", "seq_len=4096", "dim=128", "is_causal=False", "groups=16", "block_M=64",
                       "block_N=64", "num_stages=2", "threads=128", NULL};
  pool_case(t, "tilelang/examples/flash_attention/example_gqa_fwd_bshd.py", "flashattn", gqa, 2);
  /* one block of 640 threads launches with 96 registers a thread, not 65536 / 640 */
  const char *ix[] = {"heads=32", "index_dim=64", NULL};
  next_pass_config = "ts.ws_wide_consumers";
  pool_case(t, "tilelang/examples/deepseek_v32/fp8_lighting_indexer.py", "mqa_attn_return_logits", ix, 1);
}

/* DeepSeek V3.2's fp8 lightning indexer (deepseek_v32/fp8_lighting_indexer.py): 512 threads,
 * a loop whose bounds and box origins read T.alloc_var minima / maxima over the block's key
 * ranges, computed before it, and its scores read through a T.reshape view of the GEMM's
 * accumulator.  As compiled by default (no producer: 512 consumer threads are opt-in) and
 * under ts.ws_wide_consumers (a producer warpgroup that repeats the scalar prelude,
 * ws_prelude.c).  The logits written are checked against the sum over heads of
 * relu(q.k) * weight * scale, and the entries outside the block's key blocks stay untouched.
 * Values are small integers and halves: exact in the interpreter's doubles. */
static void fp8_indexer_case(TestCtx *t, bool wide) {
  enum { S = 8, SKV = 600, H = 32, D = 64, BQ = 4, BN = 256 };
  const char *p[] = {"heads=32", "index_dim=64", NULL};
  Run r;
  if (wide) next_pass_config = "ts.ws_wide_consumers";
  if (!corpus_compile(t, &r, "tilelang/examples/deepseek_v32/fp8_lighting_indexer.py", "mqa_attn_return_logits", p)) return;
  CHECK(warp_specialized(r.f->body) == wide && kernel_threads(r.f->body) == 512);
  scalar(&r, "seq_len", S);
  scalar(&r, "seq_len_kv", SKV);
  double *q = arg(&r, "IndexQ"), *k = arg(&r, "IndexK"), *sc = arg(&r, "IndexKScale"), *w = arg(&r, "Weights");
  double *ks = arg(&r, "CuSeqLenKS"), *ke = arg(&r, "CuSeqLenKE"), *lg = arg(&r, "Logits");
  for (int e = 0; e < S * H * D; e++) q[e] = (e * 7 % 5) - 2;
  for (int e = 0; e < SKV * D; e++) k[e] = (e * 3 % 3) - 1 + (e % 11 == 0 ? 0.5 : 0);
  for (int j = 0; j < SKV; j++) sc[j] = j % 2 ? 0.5 : 0.25;
  for (int e = 0; e < S * H; e++) w[e] = e % 3 ? 1 : -0.5;
  const int lo[S] = {0, 10, 5, 40, 300, 310, 320, 250}, hi[S] = {100, 120, 90, 60, 600, 500, 590, 400};
  for (int i = 0; i < S; i++) ks[i] = lo[i], ke[i] = hi[i];
  for (int e = 0; e < S * SKV; e++) lg[e] = -7777;
  interp_run(&r.in, r.f);
  CHECK(r.in.errors == 0 && r.in.races == 0);
  int bad = 0;
  for (int b = 0; b < S / BQ; b++) {
    int smin = SKV, emax = 0;
    for (int i = b * BQ; i < (b + 1) * BQ; i++) smin = lo[i] < smin ? lo[i] : smin, emax = hi[i] > emax ? hi[i] : emax;
    int end = smin + (emax - smin + BN - 1) / BN * BN;
    for (int i = b * BQ; i < (b + 1) * BQ; i++)
      for (int j = 0; j < SKV; j++) {
        double want = -7777;
        if (j >= smin && j < end) {
          want = 0;
          for (int h = 0; h < H; h++) {
            double dot = 0;
            for (int d = 0; d < D; d++) dot += q[(i * H + h) * D + d] * k[j * D + d];
            want += (dot > 0 ? dot : 0) * w[i * H + h] * sc[j];
          }
        }
        bad += !close_to(lg[i * SKV + j], want, 1e-9);
      }
  }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, S * SKV);
  CHECK(bad == 0);
  run_free(&r);
}
TEST(corpus_interp_fp8_indexer) { fp8_indexer_case(t, false); }
TEST(corpus_interp_fp8_indexer_wide_consumers) { fp8_indexer_case(t, true); }
TEST(corpus_interp_blocksparse_attn_guarded_ws) { blocksparse_case(t, true); }
TEST(corpus_interp_blocksparse_attn_sync) { blocksparse_case(t, false); }
/* the manifest's tile: 128 x 128, 2 stages, two consumer warpgroups */
TEST(corpus_interp_gqa_fwd_varlen) {
  const char *p[] = {"batch_size=2", "groups=2", "UQ=200", "UKV=150", "heads=4", "dim=64", "is_causal=False",
                     "block_M=128", "block_N=128", "num_stages=2", "threads=256", NULL};
  varlen_case(t, "tilelang/examples/flash_attention/example_gqa_fwd_varlen.py", p, 2, false, 256);
}
/* the same with both FlashAttention-3 schedules (ts.ws_pingpong, ts.ws_intra_overlap), causal:
 * blocks whose loop runs fewer iterations, or none */
TEST(corpus_interp_gqa_fwd_varlen_pingpong_overlap) {
  const char *file = "tilelang/examples/flash_attention/example_gqa_fwd_varlen.py";
  const char *p[] = {"batch_size=2", "groups=2", "UQ=200", "UKV=150", "heads=4", "dim=64", "is_causal=True",
                     "block_M=128", "block_N=128", "num_stages=2", "threads=256", NULL};
  Run r;
  next_pass_config = "ts.ws_pingpong", next_pass_config2 = "ts.ws_intra_overlap";
  if (!corpus_compile(t, &r, file, "flashattn", p)) return;
  CHECK(device_ops(r.f->body, IRD_NAMED_BARRIER_SYNC_DYN) == 2 && device_ops(r.f->body, IRD_GEMM_RS_WGMMA_ISSUE) == 1);
  /* the turn covers both issues: the loop's arrive (the second, after the one before the
   * loop) follows the PV issue */
  int pv = device_op_at(r.f->body, IRD_GEMM_RS_WGMMA_ISSUE, 0), arrive = device_op_at(r.f->body, IRD_NAMED_BARRIER_ARRIVE_DYN, 1);
  CHECK(pv >= 0 && arrive > pv);
  run_free(&r);
  next_pass_config = "ts.ws_pingpong", next_pass_config2 = "ts.ws_intra_overlap";
  varlen_case(t, file, p, 2, true, 256);
}

/* flash_decoding/example_gqa_decode.py (warp specialization disabled by the file): split-KV
 * attention then the combine kernel; K and V tiles both run a stage ahead as cp.async (V
 * is copied after the softmax in the body).  Query head h reads key head h / (heads /
 * groups); masked keys excluded. */
TEST(corpus_interp_gqa_decode_split) {
  enum { B = 1, H = 8, G = 2, S = 256, D = 64, HG = H / G };
  Run r;
  const char *p[] = {"batch=1", "heads=8", "groups=2", "seqlen_kv=256", "dim=64", "block_N=32", "block_H=64",
                     "num_split=2", "num_stages=2", "threads=128", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/flash_decoding/example_gqa_decode.py", "flashattn", p)) return;
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *mask = arg(&r, "mask"), *o = arg(&r, "Output");
  unsigned seed = 17;
  fill(q, B * H * D, &seed);
  for (int e = 0; e < B * S * G * D; e++) k[e] = rnd(&seed), v[e] = rnd(&seed);
  for (int e = 0; e < B * S * G; e++) mask[e] = rnd(&seed) > -0.6; /* about 80% of the keys */
  run_clean(t, &r);
  int bad = 0;
  static double w[S];
  for (int h = 0; h < H; h++) {
    int kh = h / HG;
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < S; j++) {
      double s = 0;
      for (int d = 0; d < D; d++) s += q[h * D + d] * k[(j * G + kh) * D + d];
      w[j] = mask[j * G + kh] != 0 ? s / sqrt((double)D) : -INFINITY;
      mx = fmax(mx, w[j]);
    }
    for (int j = 0; j < S; j++) sum += (w[j] = exp(w[j] - mx));
    for (int d = 0; d < D; d++) {
      double out = 0;
      for (int j = 0; j < S; j++) out += w[j] / sum * v[(j * G + kh) * D + d];
      bad += !close_to(o[h * D + d], out, 1e-4);
    }
  }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, B * H * D);
  CHECK(bad == 0);
  run_free(&r);
}

/* flash_attention/example_mha_bwd_bhsd.py flashattn_bwd: per key block, the loop over query
 * blocks stages Q, dO, lse and Delta ahead (dO and Delta are copied after the first GEMM in
 * the body).  With lse and Delta given, P = 2^(k.q * scale - lse), dV = P dO,
 * dS = P (V.dO - Delta) / sqrt(dim), dK = dS Q.  (dQ, added atomically in the file's
 * T.Layout order for its postprocess kernel, is not checked here.) */
static void mha_bwd_case(TestCtx *t, bool causal, bool ws) {
  enum { BH = 2, L = 128, D = 64 };
  Run r;
  const char *p[] = {"batch=1", "heads=2", "seq_len=128", "dim=64", causal ? "is_causal=True" : "is_causal=False",
                     "block_M=64", "block_N=64", NULL};
  next_pass_config = "ts.ws_thread_read_tiles", next_pass_value = ws ? "True" : "False";
  if (!corpus_compile(t, &r, "tilelang/examples/flash_attention/example_mha_bwd_bhsd.py", "flashattn_bwd", p)) return;
  CHECK(warp_specialized(r.f->body) == ws);
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *dout = arg(&r, "dO"), *lse = arg(&r, "lse"),
         *delta = arg(&r, "Delta"), *dq = arg(&r, "dQ"), *dk = arg(&r, "dK"), *dv = arg(&r, "dV");
  const double sm = 1 / sqrt((double)D), scale = sm * 1.44269504;
  unsigned seed = 18;
  for (int e = 0; e < BH * L * D; e++) q[e] = rnd(&seed), k[e] = rnd(&seed), v[e] = rnd(&seed), dout[e] = rnd(&seed);
  for (int e = 0; e < BH * L * D; e++) dq[e] = 0;
  fill(delta, BH * L, &seed);
  for (int h = 0; h < BH; h++) /* lse: the largest score of each query, so P <= 1 */
    for (int j = 0; j < L; j++) {
      double mx = -INFINITY;
      for (int i = 0; i < L; i++) {
        double s = 0;
        for (int d = 0; d < D; d++) s += k[(h * L + i) * D + d] * q[(h * L + j) * D + d];
        mx = fmax(mx, s * scale);
      }
      lse[h * L + j] = mx;
    }
  run_clean(t, &r);
  static double P[L][L], dS[L][L];
  int bad = 0;
  for (int h = 0; h < BH; h++) {
    const double *Q = q + h * L * D, *K = k + h * L * D, *Vv = v + h * L * D, *dO = dout + h * L * D;
    for (int i = 0; i < L; i++)
      for (int j = 0; j < L; j++) {
        double s = 0, dp = 0;
        for (int d = 0; d < D; d++) s += K[i * D + d] * Q[j * D + d], dp += Vv[i * D + d] * dO[j * D + d];
        P[i][j] = causal && i > j ? 0 : exp2(s * scale - lse[h * L + j]);
        dS[i][j] = P[i][j] * (dp - delta[h * L + j]) * sm;
      }
    for (int i = 0; i < L; i++)
      for (int d = 0; d < D; d++) {
        double a = 0, b = 0, ma = 0, mb = 0;
        for (int j = 0; j < L; j++) {
          a += P[i][j] * dO[j * D + d], ma += fabs(P[i][j] * dO[j * D + d]);
          b += dS[i][j] * Q[j * D + d], mb += fabs(dS[i][j] * Q[j * D + d]);
        }
        bad += !(fabs(dv[(h * L + i) * D + d] - a) <= 1e-5 * (1 + ma));
        bad += !(fabs(dk[(h * L + i) * D + d] - b) <= 1e-5 * (1 + mb));
      }
  }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, 2 * BH * L * D);
  CHECK(bad == 0);
  run_free(&r);
}
TEST(corpus_interp_mha_bwd) { mha_bwd_case(t, false, false); }
TEST(corpus_interp_mha_bwd_causal) { mha_bwd_case(t, true, false); }
/* ts.ws_thread_read_tiles: the same backward on a TMA producer warpgroup (lse and Delta as
 * flat tiles the consumers' threads read) */
TEST(corpus_interp_mha_bwd_ws) { mha_bwd_case(t, false, true); }
TEST(corpus_interp_mha_bwd_causal_ws) { mha_bwd_case(t, true, true); }

/* Without the switch, the backward's loop (lse and Delta read by threads) is warp-specialized
 * only where its shared memory already keeps it to one block an SM: the gqa backward at the
 * manifest's Dqk 192 (Q and dO tiles of 2 stages: over half an SM's 228 KB) is, the mha
 * backward at D 64 (three blocks an SM fit) is not.  Compile only. */
TEST(corpus_ws_thread_read_tiles_default) {
  Run r;
  const char *gqa[] = {"batch=8", "heads=32", "seq_len=1024", "dim_qk=192", "dim_v=128", "is_causal=False", "block_M=128",
                       "block_N=32", "threads=256", "num_stages=2", "groups=16", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/flash_attention/example_gqa_bwd.py", "flashattn_bwd_atomic_add", gqa)) return;
  CHECK(warp_specialized(r.f->body));
  run_free(&r);
  const char *mha[] = {"batch=8", "heads=32", "seq_len=1024", "dim=64", "is_causal=False", "block_M=64", "block_N=64", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/flash_attention/example_mha_bwd_bhsd.py", "flashattn_bwd", mha)) return;
  CHECK(!warp_specialized(r.f->body));
  run_free(&r);
}

/* linear_attention/example_mamba_chunk_state.py: per chunk, states[m, n] = sum over its
 * positions l of x[l, m] * 2^((dA[last] - dA[l]) * log2 e) * dt[l] * B[l, n]; the manifest's
 * 4-stage tile, x, dA, dt and the B tile (copied after the scaling in the body) all staged. */
TEST(corpus_interp_mamba_chunk_state) {
  enum { BA = 1, SEQ = 256, CS = 128, NC = SEQ / CS, G = 1, NH = 2, HD = 64, DS = 128 };
  Run r;
  const char *p[] = {"batch=1", "seqlen=256", "chunk_size=128", "ngroups=1", "nheads=2", "headdim=64", "dstate=128",
                     "block_M=64", "block_N=128", "block_K=64", "num_stages=4", "threads=128", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/linear_attention/example_mamba_chunk_state.py", "chunk_state_fwd", p))
    return;
  double *Bm = arg(&r, "B"), *x = arg(&r, "x"), *dt = arg(&r, "dt"), *dA = arg(&r, "dA_cumsum"), *out = arg(&r, "Output");
  unsigned seed = 19;
  fill(Bm, BA * SEQ * G * DS, &seed);
  fill(x, BA * SEQ * NH * HD, &seed);
  for (int e = 0; e < BA * NH * NC * CS; e++) dt[e] = 0.5 + 0.5 * rnd(&seed);
  for (int h = 0; h < NH; h++) /* a decreasing cumulative sum per chunk, as dA_cumsum is */
    for (int c = 0; c < NC; c++)
      for (int l = 0; l < CS; l++) dA[(h * NC + c) * CS + l] = -0.01 * l + 0.001 * rnd(&seed);
  run_clean(t, &r);
  int bad = 0;
  for (int c = 0; c < NC; c++)
    for (int h = 0; h < NH; h++)
      for (int m = 0; m < HD; m++)
        for (int n = 0; n < DS; n++) {
          double s = 0, mag = 0;
          for (int l = 0; l < CS; l++) {
            int pos = c * CS + l;
            double sc = exp2((dA[(h * NC + c) * CS + CS - 1] - dA[(h * NC + c) * CS + l]) * 1.44269504) * dt[(h * NC + c) * CS + l];
            double term = x[(pos * NH + h) * HD + m] * sc * Bm[(pos * G + h / (NH / G)) * DS + n];
            s += term, mag += fabs(term);
          }
          bad += !(fabs(out[((c * NH + h) * HD + m) * DS + n] - s) <= 1e-4 * (1 + mag));
        }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, NC * NH * HD * DS);
  CHECK(bad == 0);
  run_free(&r);
}

/* linear_attention/example_mamba_chunk_scan.py: out[l, n] = 2^(dA[l] log2 e) C[l] . state[n]
 * + sum over k <= l in the chunk of cb[l, k] 2^((dA[l] - dA[k]) log2 e) dt[k] x[k, n]
 * + D x[l, n]; cb, dA, dt and x tiles (x copied after the masking) staged. */
TEST(corpus_interp_mamba_chunk_scan) {
  enum { SEQ = 256, CS = 128, NC = SEQ / CS, NH = 2, HD = 64, DS = 64 };
  const double lg = 1.44269504;
  Run r;
  const char *p[] = {"batch=1", "seqlen=256", "chunk_size=128", "ngroups=1", "nheads=2", "headdim=64", "dstate=64",
                     "block_M=64", "block_N=64", "block_K=64", "block_Dstate=64", "num_stages=2", "threads=128", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/linear_attention/example_mamba_chunk_scan.py", "chunk_scan_fwd", p))
    return;
  double *cb = arg(&r, "cb"), *x = arg(&r, "x"), *dt = arg(&r, "dt"), *dA = arg(&r, "dA_cumsum"), *Cm = arg(&r, "C"),
         *st = arg(&r, "prev_states"), *Dv = arg(&r, "D"), *out = arg(&r, "Output");
  unsigned seed = 20;
  fill(cb, NC * CS * CS, &seed);
  fill(x, SEQ * NH * HD, &seed);
  for (int e = 0; e < NH * NC * CS; e++) dt[e] = 0.5 + 0.5 * rnd(&seed);
  for (int e = 0; e < NH * NC * CS; e++) dA[e] = -0.01 * (e % CS) + 0.001 * rnd(&seed);
  fill(Cm, SEQ * DS, &seed);
  fill(st, NC * NH * HD * DS, &seed);
  for (int h = 0; h < NH; h++) Dv[h] = rnd(&seed);
  run_clean(t, &r);
  int bad = 0;
  for (int c = 0; c < NC; c++)
    for (int h = 0; h < NH; h++)
      for (int l = 0; l < CS; l++)
        for (int n = 0; n < HD; n++) {
          int pos = c * CS + l;
          const double *dAc = dA + (h * NC + c) * CS, *dtc = dt + (h * NC + c) * CS;
          double s = 0, mag = 0, sc = 0;
          for (int d = 0; d < DS; d++) sc += Cm[pos * DS + d] * st[((c * NH + h) * HD + n) * DS + d];
          s = sc * exp2(dAc[l] * lg), mag = fabs(s);
          for (int k = 0; k <= l; k++) {
            double term = cb[(c * CS + l) * CS + k] * exp2((dAc[l] - dAc[k]) * lg) * dtc[k] * x[((c * CS + k) * NH + h) * HD + n];
            s += term, mag += fabs(term);
          }
          s += x[(pos * NH + h) * HD + n] * Dv[h];
          bad += !(fabs(out[(pos * NH + h) * HD + n] - s) <= 1e-4 * (1 + mag));
        }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, SEQ * NH * HD);
  CHECK(bad == 0);
  run_free(&r);
}

/* flash_attention/example_gqa_bwd.py flashattn_bwd_atomic_add (BSHD, 2 query heads per key
 * head, the manifest's 128 x 32 tile): the same backward as above with dK and dV summed over each group's query heads by
 * tile atomics; Q, lse, dO and Delta staged. */
static void gqa_bwd_case(TestCtx *t, bool ws) {
  enum { L = 128, H = 4, G = 2, HK = H / G, D = 64 };
  Run r;
  const char *p[] = {"batch=1", "heads=4", "seq_len=128", "dim_qk=64", "dim_v=64", "is_causal=False", "block_M=128",
                     "block_N=32", "threads=256", "num_stages=2", "groups=2", NULL};
  next_pass_config = "ts.ws_thread_read_tiles", next_pass_value = ws ? "True" : "False";
  if (!corpus_compile(t, &r, "tilelang/examples/flash_attention/example_gqa_bwd.py", "flashattn_bwd_atomic_add", p))
    return;
  CHECK(warp_specialized(r.f->body) == ws);
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *dout = arg(&r, "dO"), *lse = arg(&r, "lse"),
         *delta = arg(&r, "Delta"), *dq = arg(&r, "dQ"), *dk = arg(&r, "dK"), *dv = arg(&r, "dV");
  const double sm = 1 / sqrt((double)D), scale = sm * 1.44269504;
  unsigned seed = 21;
  for (int e = 0; e < L * H * D; e++) q[e] = rnd(&seed), dout[e] = rnd(&seed), dq[e] = 0;
  for (int e = 0; e < L * HK * D; e++) k[e] = rnd(&seed), v[e] = rnd(&seed), dk[e] = 0, dv[e] = 0;
  fill(delta, H * L, &seed);
  for (int h = 0; h < H; h++)
    for (int j = 0; j < L; j++) {
      double mx = -INFINITY;
      for (int i = 0; i < L; i++) {
        double s = 0;
        for (int d = 0; d < D; d++) s += k[(i * HK + h / G) * D + d] * q[(j * H + h) * D + d];
        mx = fmax(mx, s * scale);
      }
      lse[h * L + j] = mx;
    }
  run_clean(t, &r);
  static double wantk[L * HK * D], wantv[L * HK * D], magk[L * HK * D], magv[L * HK * D];
  memset(wantk, 0, sizeof wantk), memset(wantv, 0, sizeof wantv), memset(magk, 0, sizeof magk), memset(magv, 0, sizeof magv);
  for (int h = 0; h < H; h++)
    for (int i = 0; i < L; i++)
      for (int j = 0; j < L; j++) {
        double s = 0, dp = 0;
        for (int d = 0; d < D; d++) {
          s += k[(i * HK + h / G) * D + d] * q[(j * H + h) * D + d];
          dp += v[(i * HK + h / G) * D + d] * dout[(j * H + h) * D + d];
        }
        double P = exp2(s * scale - lse[h * L + j]), dS = P * (dp - delta[h * L + j]) * sm;
        for (int d = 0; d < D; d++) {
          int o = (i * HK + h / G) * D + d;
          wantv[o] += P * dout[(j * H + h) * D + d], magv[o] += fabs(P * dout[(j * H + h) * D + d]);
          wantk[o] += dS * q[(j * H + h) * D + d], magk[o] += fabs(dS * q[(j * H + h) * D + d]);
        }
      }
  int bad = 0;
  for (int o = 0; o < L * HK * D; o++) {
    bad += !(fabs(dv[o] - wantv[o]) <= 1e-5 * (1 + magv[o]));
    bad += !(fabs(dk[o] - wantk[o]) <= 1e-5 * (1 + magk[o]));
  }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, 2 * L * HK * D);
  CHECK(bad == 0);
  run_free(&r);
}
TEST(corpus_interp_gqa_bwd_atomic) { gqa_bwd_case(t, false); }
TEST(corpus_interp_gqa_bwd_atomic_ws) { gqa_bwd_case(t, true); }

/* blocksparse_gemm/example_blocksparse_gemm.py: `if BlockMask[by, bx, k]:` around the tile
 * copies and the GEMM; the copies run a stage ahead under the mask of their own k-tile. */
TEST(corpus_interp_blocksparse_gemm) {
  enum { M = 256, N = 256, K = 256, BM = 128, BN = 128, BK = 32 };
  Run r;
  const char *p[] = {"M=256", "N=256", "K=256", "block_M=128", "block_N=128", "block_K=32", "num_stages=2",
                     "thread_num=128", "enable_rasteration=True", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/blocksparse_gemm/example_blocksparse_gemm.py", "blocksparse_matmul", p))
    return;
  double *a = arg(&r, "A"), *b = arg(&r, "B"), *mask = arg(&r, "BlockMask"), *c = arg(&r, "C");
  unsigned seed = 22;
  fill(a, M * K, &seed);
  fill(b, K * N, &seed);
  for (int e = 0; e < (M / BM) * (N / BN) * (K / BK); e++) mask[e] = rnd(&seed) > 0; /* about half */
  run_clean(t, &r);
  int bad = 0;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double s = 0, mag = 0;
      for (int k = 0; k < K; k++)
        if (mask[((m / BM) * (N / BN) + n / BN) * (K / BK) + k / BK] != 0)
          s += a[m * K + k] * b[k * N + n], mag += fabs(a[m * K + k] * b[k * N + n]);
      bad += !(fabs(c[m * N + n] - s) <= 1e-5 * (1 + mag));
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, M * N);
  CHECK(bad == 0);
  run_free(&r);
}

/* deepseek_nsa/example_tilelang_nsa_fwd.py (causal): each query attends over its selected key
 * blocks; `i_s = BlockIndices[..] * BS` then `if 0 <= i_s <= t:` around the block's work,
 * whose K and V tiles run a stage ahead under the test for their own block. */
TEST(corpus_interp_nsa_fwd) {
  enum { BA = 1, L = 128, H = 16, G = 16, HK = H / G, D = 32, BS = 32, NS = 3 };
  const double scale = 0.1;
  Run r;
  const char *p[] = {"dim=32", "is_causal=True", "scale=0.1", "block_size=32", "groups=16", "selected_blocks=3",
                     "batch=1", "heads=16", "seq_len=128", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/deepseek_nsa/example_tilelang_nsa_fwd.py", "native_sparse_attention", p))
    return;
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *bi = arg(&r, "BlockIndices"), *o = arg(&r, "Output");
  unsigned seed = 23;
  fill(q, BA * L * H * D, &seed);
  for (int e = 0; e < BA * L * HK * D; e++) k[e] = rnd(&seed), v[e] = rnd(&seed);
  for (int tq = 0; tq < L; tq++) /* the query's own block, one before it when there is one, and a skipped -1 */
    for (int h = 0; h < HK; h++) {
      double *row = bi + (tq * HK + h) * NS;
      row[0] = tq / BS, row[1] = tq / BS > 0 ? tq / BS - 1 : -1, row[2] = -1;
    }
  run_clean(t, &r);
  int bad = 0;
  static double w[NS * BS];
  for (int tq = 0; tq < L; tq++)
    for (int hq = 0; hq < H; hq++) {
      int h = hq / G, nk = 0, keys[NS * BS];
      for (int i = 0; i < NS; i++) {
        int is = (int)bi[(tq * HK + h) * NS + i] * BS;
        if (is < 0 || is > tq) continue;
        for (int j = is; j < is + BS; j++)
          if (j <= tq) keys[nk++] = j;
      }
      double mx = -INFINITY, sum = 0;
      for (int a = 0; a < nk; a++) {
        double s = 0;
        for (int d = 0; d < D; d++) s += q[(tq * H + hq) * D + d] * k[(keys[a] * HK + h) * D + d];
        w[a] = s * scale;
        mx = fmax(mx, w[a]);
      }
      for (int a = 0; a < nk; a++) sum += (w[a] = exp(w[a] - mx));
      for (int d = 0; d < D; d++) {
        double out = 0;
        for (int a = 0; a < nk; a++) out += w[a] / sum * v[(keys[a] * HK + h) * D + d];
        bad += !close_to(o[(tq * H + hq) * D + d], out, 1e-4);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, BA * L * H * D);
  CHECK(bad == 0);
  run_free(&r);
}

/* blocksparse_attention/example_tilelang_sparse_gqa_decode_varlen_mask.py: sizes bound at
 * launch (T.dynamic), a split-KV kernel whose body is `if block_mask[..]:` starting with a
 * flag store (the K and V tiles, further down, run a stage ahead under the mask of their own
 * block), then the combine kernel.  Against attention over the keys of unmasked blocks
 * below the cached length. */
TEST(corpus_interp_sparse_gqa_decode_mask) {
  enum { H = 8, HK = 2, D = 64, S = 256, BN = 32, NB = S / BN, LEN = 230 };
  Run r;
  const char *p[] = {"batch=1", "heads=8", "heads_kv=2", "dim=64", "dim_v=64", "block_N=32", "block_H=64",
                     "num_stages=2", "threads=128", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/blocksparse_attention/example_tilelang_sparse_gqa_decode_varlen_mask.py",
                      "flashattn", p))
    return;
  scalar(&r, "num_split", 2);
  scalar(&r, "max_cache_seqlen", S);
  scalar(&r, "num_blocks", NB);
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *mask = arg(&r, "block_mask"),
         *lens = arg(&r, "cache_seqlens"), *o = arg(&r, "Output");
  unsigned seed = 24;
  fill(q, H * D, &seed);
  fill(k, S * HK * D, &seed);
  fill(v, S * HK * D, &seed);
  for (int e = 0; e < HK * NB; e++) mask[e] = e % 3 != 1; /* two blocks of three */
  lens[0] = LEN;
  run_clean(t, &r);
  int bad = 0;
  static double w[S];
  for (int h = 0; h < H; h++) {
    int kh = h / (H / HK);
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < S; j++) {
      w[j] = -INFINITY;
      if (mask[kh * NB + j / BN] == 0 || j >= LEN) continue;
      double s = 0;
      for (int d = 0; d < D; d++) s += q[h * D + d] * k[(j * HK + kh) * D + d];
      w[j] = s / sqrt((double)D);
      mx = fmax(mx, w[j]);
    }
    for (int j = 0; j < S; j++) sum += (w[j] = exp(w[j] - mx));
    for (int d = 0; d < D; d++) {
      double out = 0;
      for (int j = 0; j < S; j++) out += w[j] / sum * v[(j * HK + kh) * D + d];
      bad += !close_to(o[h * D + d], out, 1e-4);
    }
  }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, H * D);
  CHECK(bad == 0);
  run_free(&r);
}

/* deepseek_v32/sparse_mla_fwd.py: each query attends to its top-k keys (indices read from
 * memory; those past the query masked); the key tiles are gathers through the index tensor,
 * staged ahead from after the mask store.  Against softmax((q . kv[idx]) / sqrt(dim + tail))
 * kv[idx][:dim] over the unmasked indices (a repeated index counts twice). */
enum { SL = 16, SLKV = 64, SH = 16, STOPK = 128 };
static void sparse_mla_case(TestCtx *t, int D, int DT) {
  enum { L = SL, LKV = SLKV, H = SH, TOPK = STOPK };
  char pd[32], pt[32];
  snprintf(pd, sizeof pd, "dim=%d", D);
  snprintf(pt, sizeof pt, "tail_dim=%d", DT);
  Run r;
  const char *p[] = {"heads=16", pd, pt, "topk=128", "kv_group=1", "sm_scale=None", "is_causal=True",
                     "block_I=64", "num_stages=2", "threads=256", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/deepseek_v32/sparse_mla_fwd.py", "sparse_mla_fwd", p)) return;
  scalar(&r, "batch", 1);
  scalar(&r, "seq_len", L);
  scalar(&r, "seq_len_kv", LKV);
  double *q = arg(&r, "Q"), *kv = arg(&r, "KV"), *idx = arg(&r, "Indices"), *o = arg(&r, "Output");
  unsigned seed = 25;
  fill(q, L * H * (D + DT), &seed);
  fill(kv, LKV * (D + DT), &seed);
  for (int s = 0; s < L; s++)
    for (int i = 0; i < TOPK; i++) idx[s * TOPK + i] = i == 0 ? 0 : (i * 7 + s * 3) % LKV;
  run_clean(t, &r);
  int bad = 0;
  static double w[TOPK];
  for (int s = 0; s < L; s++)
    for (int h = 0; h < H; h++) {
      double mx = -INFINITY, sum = 0;
      for (int i = 0; i < TOPK; i++) {
        int j = (int)idx[s * TOPK + i];
        w[i] = -INFINITY;
        if (j > s) continue;
        double dot = 0;
        for (int d = 0; d < D + DT; d++) dot += q[(s * H + h) * (D + DT) + d] * kv[j * (D + DT) + d];
        w[i] = dot / sqrt((double)(D + DT));
        mx = fmax(mx, w[i]);
      }
      for (int i = 0; i < TOPK; i++) sum += (w[i] = exp(w[i] - mx));
      for (int d = 0; d < D; d++) {
        double out = 0;
        for (int i = 0; i < TOPK; i++)
          if (w[i] > 0) out += w[i] / sum * kv[(int)idx[s * TOPK + i] * (D + DT) + d];
        bad += !close_to(o[(s * H + h) * D + d], out, 1e-4);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, L * H * D);
  CHECK(bad == 0);
  run_free(&r);
}
TEST(corpus_interp_sparse_mla_fwd) { sparse_mla_case(t, 128, 64); }
/* Q_shared's two GEMM windows (64 and 32 columns) agree on one 64-byte swizzle of the whole
 * 96-column tile (layout.c operand_layout) */
TEST(corpus_interp_sparse_mla_fwd_narrow_tail) { sparse_mla_case(t, 64, 32); }

/* blocksparse_attention/example_tilelang_sparse_gqa_decode_paged.py: selected logical blocks
 * (descending, -1 ends the list), each found through the page table; the lets computing the
 * page come after a flag store in the guarded body and run ahead with the K and V tiles.
 * One split; the file masks the cached length in the first (highest) block only. */
TEST(corpus_interp_sparse_gqa_decode_paged) {
  enum { H = 8, HK = 2, D = 64, BN = 32, PAGE = 64, PAGES = 8, SEL = 4, PER_SEQ = 4, LEN = 230 };
  const int chosen[SEL] = {7, 5, 2, -1};
  Run r;
  const char *p[] = {"batch=1", "heads=8", "heads_kv=2", "dim=64", "dim_v=64", "block_N=32", "block_H=64",
                     "page_block_size=64", "num_stages=2", "threads=128", "num_pages=8", NULL};
  if (!corpus_compile(t, &r, "tilelang/examples/blocksparse_attention/example_tilelang_sparse_gqa_decode_paged.py",
                      "flashattn", p))
    return;
  scalar(&r, "num_split", 1);
  scalar(&r, "max_num_blocks_per_seq", PER_SEQ);
  scalar(&r, "max_selected_blocks", SEL);
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *bi = arg(&r, "block_indices"),
         *lens = arg(&r, "cache_seqlens"), *table = arg(&r, "block_table"), *o = arg(&r, "Output");
  unsigned seed = 26;
  fill(q, H * D, &seed);
  fill(k, PAGES * PAGE * HK * D, &seed);
  fill(v, PAGES * PAGE * HK * D, &seed);
  for (int h = 0; h < HK; h++)
    for (int i = 0; i < SEL; i++) bi[h * SEL + i] = chosen[i];
  for (int i = 0; i < PER_SEQ; i++) table[i] = (i * 3 + 1) % PAGES; /* pages 1, 4, 7, 2 */
  lens[0] = LEN;
  run_clean(t, &r);
  int bad = 0;
  static double w[SEL * BN];
  for (int h = 0; h < H; h++) {
    int kh = h / (H / HK), nk = 0, rows[SEL * BN];
    for (int i = 0; i < SEL && chosen[i] >= 0; i++)
      for (int j = 0; j < BN; j++)
        if (chosen[i] * BN + j < LEN)
          rows[nk++] = ((int)table[chosen[i] / (PAGE / BN)] * PAGE + chosen[i] % (PAGE / BN) * BN + j) * HK + kh;
    double mx = -INFINITY, sum = 0;
    for (int a = 0; a < nk; a++) {
      double s = 0;
      for (int d = 0; d < D; d++) s += q[h * D + d] * k[rows[a] * D + d];
      w[a] = s / sqrt((double)D);
      mx = fmax(mx, w[a]);
    }
    for (int a = 0; a < nk; a++) sum += (w[a] = exp(w[a] - mx));
    for (int d = 0; d < D; d++) {
      double out = 0;
      for (int a = 0; a < nk; a++) out += w[a] / sum * v[rows[a] * D + d];
      bad += !close_to(o[h * D + d], out, 1e-4);
    }
  }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, H * D);
  CHECK(bad == 0);
  run_free(&r);
}

/* attention_sink/example_mha_sink_bwd_bhsd.py flashattn_fwd: `sinks` is declared with `heads`
 * elements but filled by a loop over block_M rows, so it is sized to the loop (size_registers;
 * heads = 2 < block_M = 64: reading it past 2 read other registers).  Each row's softmax also
 * counts the head's sink: o = sum_j e^(s_j) v_j / (sum_j e^(s_j) + e^sink), lse = log2 of the
 * denominator, s_j = q.k_j / sqrt(dim) over the sliding window k in (i - window, i]. */
enum { KH = 2, KS = 192, KD = 64, KW = 64 };
TEST(corpus_interp_attention_sink_fwd_window) {
  const char *p[] = {"batch=1", "heads=2", "seq_len=192", "dim=64", "window_size=64", "dtype=float16", NULL};
  Run r;
  if (!corpus_compile(t, &r, "tilelang/examples/attention_sink/example_mha_sink_bwd_bhsd.py", "flashattn_fwd", p)) return;
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *sinks = arg(&r, "Sinks"), *o = arg(&r, "Output"),
         *lse = arg(&r, "lse");
  unsigned seed = 21;
  for (int e = 0; e < KH * KS * KD; e++) q[e] = rnd(&seed), k[e] = rnd(&seed), v[e] = rnd(&seed);
  sinks[0] = 0.75, sinks[1] = -1.5;
  run_clean(t, &r);
  int bad = 0;
  for (int h = 0; h < KH; h++)
    for (int i = 0; i < KS; i++) {
      double w[KS], den = exp(sinks[h]);
      for (int j = 0; j < KS; j++) {
        w[j] = 0;
        if (j > i || j <= i - KW) continue;
        double s = 0;
        for (int d = 0; d < KD; d++) s += q[(h * KS + i) * KD + d] * k[(h * KS + j) * KD + d];
        den += (w[j] = exp(s / sqrt((double)KD)));
      }
      bad += !close_to(lse[h * KS + i], log2(den), 1e-3);
      for (int d = 0; d < KD; d++) {
        double out = 0;
        for (int j = 0; j < KS; j++) out += w[j] / den * v[(h * KS + j) * KD + d];
        bad += !close_to(o[(h * KS + i) * KD + d], out, 4e-3);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, KH * KS * (KD + 1));
  CHECK(bad == 0);
  run_free(&r);
}

/* flash_decoding/example_mha_inference.py: split-KV attention (4 module-constant splits, each a
 * warp-specialized TMA loop) then the combine kernel, whose copy of a split's partial output
 * sets the layout of its row values (layout_inference ranks the vector copy first: 16 rows per
 * thread, not all 128).  Output = softmax(q k^T / sqrt(dim)) v per head. */
enum { IH = 2, IQ = 128, IKV = 512, ID = 64 };
static void find_local_size(IrStmt *s, void *ctx) {
  int64_t *size = ctx;
  if (s->kind == IR_S_ALLOC && !strcmp(s->u.alloc.buf->name, "scale_local")) *size = s->u.alloc.buf->local_size;
}
TEST(corpus_interp_mha_inference_split_combine) {
  const char *p[] = {"batch=1", "heads=2", "seqlen_q=128", "seqlen_kv=512", "dim=64", "is_causal=False", "block_M=128",
                     "block_N=64", NULL};
  Run r;
  if (!corpus_compile(t, &r, "tilelang/examples/flash_decoding/example_mha_inference.py", "flashattn", p)) return;
  int64_t scale_regs = 0;
  IrVisitor vis = {find_local_size, NULL, &scale_regs};
  ir_visit(r.f->body, &vis);
  CHECK(scale_regs == 8); /* 16-byte vectors: a row of 64 halves is 8 threads, so 16 rows per
                           * pass of the 128 threads and 8 passes; each thread keeps 8 rows */
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *o = arg(&r, "Output");
  unsigned seed = 41;
  for (int e = 0; e < IQ * IH * ID; e++) q[e] = rnd(&seed);
  for (int e = 0; e < IKV * IH * ID; e++) k[e] = rnd(&seed), v[e] = rnd(&seed);
  interp_run(&r.in, r.f);
  CHECK(r.in.errors == 0);
  int bad = 0;
  static double w[IKV];
  for (int h = 0; h < IH; h++)
    for (int i = 0; i < IQ; i++) {
      double mx = -INFINITY, den = 0;
      for (int j = 0; j < IKV; j++) {
        double s = 0;
        for (int d = 0; d < ID; d++) s += q[(i * IH + h) * ID + d] * k[(j * IH + h) * ID + d];
        mx = fmax(mx, w[j] = s / sqrt((double)ID));
      }
      for (int j = 0; j < IKV; j++) den += (w[j] = exp(w[j] - mx));
      for (int d = 0; d < ID; d++) {
        double out = 0;
        for (int j = 0; j < IKV; j++) out += w[j] / den * v[(j * IH + h) * ID + d];
        bad += !close_to(o[(i * IH + h) * ID + d], out, 1e-2);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, IQ * IH * ID);
  CHECK(bad == 0);
  run_free(&r);
}

/* gdn/example_chunk_o.py tilelang_chunk_fwd_o: the gated-delta-rule output of each 64-row chunk,
 * O = scale (exp(G_s) q_s H_c + sum over s2 <= s in the chunk of (q_s . k_s2) exp(G_s - G_s2) v_s2)
 * (a pair whose gate difference is positive counts 0, as the kernel writes it).  The tiles
 * of the K loop (Q, K, H) give their bytes to V, A and O after it (merge_shared_memory: 6
 * blocks an SM instead of 4). */
enum { GS = 128, GH = 2, GD = 64, GC = 64 };
TEST(corpus_interp_gdn_chunk_o) {
  const char *p[] = {"B=1", "S=128", "H=2", "DK=64", "DV=64", "input_dtype=\"bfloat16\"", "output_dtype=\"bfloat16\"",
                     "accum_dtype=\"float32\"", "gate_dtype=\"float32\"", "chunk_size=64", "scale=0.125", "use_g=True",
                     "block_S=64", "block_DK=64", "block_DV=64", "threads=128", "num_stages=1", NULL};
  Run r;
  if (!corpus_compile(t, &r, "tilelang/examples/gdn/example_chunk_o.py", "tilelang_chunk_fwd_o", p)) return;
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *hid = arg(&r, "HIDDEN"), *g = arg(&r, "G"),
         *o = arg(&r, "O");
  unsigned seed = 51;
  fill(q, GS * GH * GD, &seed);
  fill(k, GS * GH * GD, &seed);
  fill(v, GS * GH * GD, &seed);
  fill(hid, GS / GC * GH * GD * GD, &seed);
  for (int h = 0; h < GH; h++) /* gates: a running sum of negative steps, restarting each chunk */
    for (int s = 0; s < GS; s++) g[s * GH + h] = (s % GC ? g[(s - 1) * GH + h] : 0) - 0.02 * (1.5 + rnd(&seed));
  g[5 * GH + 1] += 0.5; /* one gate above its predecessor: a pair with a positive difference counts 0 */
  run_clean(t, &r);
  int bad = 0;
  for (int h = 0; h < GH; h++)
    for (int s = 0; s < GS; s++) {
      int c = s / GC;
      for (int dv = 0; dv < GD; dv++) {
        double inter = 0, intra = 0;
        for (int d = 0; d < GD; d++) inter += q[(s * GH + h) * GD + d] * hid[((c * GH + h) * GD + d) * GD + dv];
        for (int s2 = c * GC; s2 <= s; s2++) {
          double diff = g[s * GH + h] - g[s2 * GH + h], qk = 0;
          if (diff > 0) continue;
          for (int d = 0; d < GD; d++) qk += q[(s * GH + h) * GD + d] * k[(s2 * GH + h) * GD + d];
          intra += qk * exp(diff) * v[(s2 * GH + h) * GD + dv];
        }
        double want = 0.125 * (exp(g[s * GH + h]) * inter + intra);
        bad += !close_to(o[(s * GH + h) * GD + dv], want, 1e-4);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, GS * GH * GD);
  CHECK(bad == 0);
  run_free(&r);
}

/* tilescale/examples/distributed/reduce_scatter.py kernel_ring_reduce_tma: each output block is
 * the sum of the num_splits row blocks of C (the local half of a ring reduce-scatter), starting
 * from split (begin_idx + 1) % num_splits; its first tile's bytes go to the loop's tile
 * (merge_shared_memory: 16 blocks an SM instead of 13). */
TEST(corpus_interp_ring_reduce) {
  const char *p[] = {"M_per_rank=128", "N=64", "block_M=64", "block_N=64", "begin_idx=1", "num_splits=3", "threads=128",
                     NULL};
  Run r;
  if (!corpus_compile(t, &r, "tilescale/examples/distributed/reduce_scatter.py", "kernel_ring_reduce_tma", p)) return;
  double *c = arg(&r, "C"), *out = arg(&r, "output");
  unsigned seed = 61;
  fill(c, 3 * 128 * 64, &seed);
  run_clean(t, &r);
  int bad = 0;
  for (int e = 0; e < 128 * 64; e++)
    bad += !close_to(out[e], c[e] + c[128 * 64 + e] + c[2 * 128 * 64 + e], 1e-6);
  CHECK(bad == 0);
  run_free(&r);
}

/* kda/chunk_o.py tilelang_chunk_fwd_o: O = sum over k of (scale q_sk 2^GK_sk) H_c[k] + the
 * chunk's lower-triangular A (s2 <= s) times V; two k-tiles of 64 in a pipelined loop that
 * scales Q in place, whose tiles give their bytes to V, A and O after it. */
enum { DS = 128, DH = 2, DDK = 128, DDV = 64, DC = 64 };
TEST(corpus_interp_kda_chunk_o) {
  const char *p[] = {"B=1", "S=128", "H=2", "DK=128", "DV=64", "input_dtype=\"bfloat16\"", "output_dtype=\"bfloat16\"",
                     "accum_dtype=\"float32\"", "gate_dtype=\"float32\"", "chunk_size=64", "scale=0.125", "block_S=64",
                     "block_DK=64", "block_DV=64", "threads=128", "num_stages=1", NULL};
  Run r;
  if (!corpus_compile(t, &r, "tilelang/examples/kda/chunk_o.py", "tilelang_chunk_fwd_o", p)) return;
  double *q = arg(&r, "Q"), *v = arg(&r, "V"), *gk = arg(&r, "GK"), *a = arg(&r, "A"), *hid = arg(&r, "HIDDEN"),
         *o = arg(&r, "O");
  unsigned seed = 71;
  fill(q, DS * DH * DDK, &seed);
  fill(v, DS * DH * DDV, &seed);
  fill(gk, DS * DH * DDK, &seed);
  fill(a, DS * DH * DC, &seed);
  fill(hid, DS / DC * DH * DDK * DDV, &seed);
  run_clean(t, &r);
  int bad = 0;
  for (int h = 0; h < DH; h++)
    for (int s = 0; s < DS; s++) {
      int c = s / DC;
      for (int dv = 0; dv < DDV; dv++) {
        double want = 0;
        for (int d = 0; d < DDK; d++)
          want += 0.125 * q[(s * DH + h) * DDK + d] * exp2(gk[(s * DH + h) * DDK + d]) *
                  hid[((c * DH + h) * DDK + d) * DDV + dv];
        for (int s2 = c * DC; s2 <= s; s2++) want += a[(s * DH + h) * DC + s2 % DC] * v[(s2 * DH + h) * DDV + dv];
        bad += !close_to(o[(s * DH + h) * DDV + dv], want, 1e-4);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, DS * DH * DDV);
  CHECK(bad == 0);
  run_free(&r);
}

/* blocksparse_attention/example_tilelang_block_sparse_attn.py: causal attention over the key
 * blocks a boolean mask keeps (64 x 64 blocks; the diagonal one always kept, so every row sees a
 * key), its output tile over the bytes of Q's once the loop is done (merge_shared_memory). */
enum { BSH = 2, BSS = 256, BSD = 64, BSB = 64 };
TEST(corpus_interp_block_sparse_attn) {
  const char *p[] = {"batch=1", "heads=2", "seq_len=256", "dim=64", "downsample_len=4", "is_causal=True", NULL};
  Run r;
  if (!corpus_compile(t, &r, "tilelang/examples/blocksparse_attention/example_tilelang_block_sparse_attn.py",
                      "blocksparse_flashattn", p))
    return;
  double *q = arg(&r, "Q"), *k = arg(&r, "K"), *v = arg(&r, "V"), *mask = arg(&r, "BlockSparseMask"),
         *o = arg(&r, "Output");
  unsigned seed = 81;
  fill(q, BSH * BSS * BSD, &seed);
  fill(k, BSH * BSS * BSD, &seed);
  fill(v, BSH * BSS * BSD, &seed);
  const int nb = BSS / BSB;
  for (int h = 0; h < BSH; h++)
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) mask[(h * nb + i) * nb + j] = i == j || (i + j + h) % 2 == 0;
  run_clean(t, &r);
  int bad = 0;
  static double w[BSS];
  for (int h = 0; h < BSH; h++)
    for (int i = 0; i < BSS; i++) {
      double mx = -INFINITY, den = 0;
      for (int j = 0; j <= i; j++) {
        w[j] = -INFINITY;
        if (!mask[(h * nb + i / BSB) * nb + j / BSB]) continue;
        double s = 0;
        for (int d = 0; d < BSD; d++) s += q[(h * BSS + i) * BSD + d] * k[(h * BSS + j) * BSD + d];
        mx = fmax(mx, w[j] = s / sqrt((double)BSD));
      }
      for (int j = 0; j <= i; j++) den += w[j] == -INFINITY ? 0 : (w[j] = exp(w[j] - mx));
      for (int d = 0; d < BSD; d++) {
        double want = 0;
        for (int j = 0; j <= i; j++)
          if (w[j] != -INFINITY) want += w[j] / den * v[(h * BSS + j) * BSD + d];
        bad += !close_to(o[(h * BSS + i) * BSD + d], want, 1e-4);
      }
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, BSH * BSS * BSD);
  CHECK(bad == 0);
  run_free(&r);
}

/* Barriers thread_sync placed over the threads it synchronises: __syncthreads and named
 * barriers (not the user's T.sync_threads(id, n)). */
static void count_barrier(IrExpr *e, void *ctx) {
  if ((e->kind == IR_CALL && e->u.call.op == IRI_SYNCTHREADS) || ir_is_device(e, IRD_NAMED_BARRIER_SYNC)) ++*(int *)ctx;
}

/* TileScale's DeepEP combine: after its receive loop (trip count by warp) each warp marks itself
 * retired from one elected lane, so that the coordinator warp stops waiting for its head.  The
 * receiver range is a T.ws body outside any loop: the write-after-write test must not compare
 * that store with the body's own accesses as if a previous iteration had made them (a barrier
 * there makes early warps wait for the slowest before retiring, which the head protocol does not
 * expect).  One barrier, after the receivers' set-up, as before write-after-write was ordered
 * (the CUDA's other one is the senders' own T.sync_threads(id, 96)). */
TEST(corpus_deepep_combine_retire_has_no_barrier) {
  Run r;
  const char *p[] = {"num_ranks=8", "num_max_send_tokens=4", "num_recv_buffer_tokens=256", "hidden=7168",
                     "num_topk=8", "num_sms=20", NULL};
  if (!corpus_compile(t, &r, "tilescale/examples/distributed/deepseek_deepep/intranode/combine.py", "combine_kernel", p))
    return;
  int n = 0;
  IrVisitor v = {NULL, count_barrier, &n};
  ir_visit(r.f->body, &v);
  CHECK(n == 1);
  if (n != 1) fprintf(stderr, "  %d barriers\n", n);
  run_free(&r);
}
