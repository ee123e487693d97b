/* test_interp_kernels.c — kernels written in TileLang syntax, compiled from source by the
 * front end and the whole pass pipeline, then run in the lockstep interpreter (interp.h)
 * against references computed here in C.  Only constructs the interpreter executes may
 * appear (no tensor-core GEMMs): these tests check what the passes do to indices, guards,
 * vectors, pipelines and barriers, on any machine, without a GPU. */
#include <math.h>
#include <stdlib.h>

#include "../../src/pass/passes.h"
#include "interp.h"
#include "test.h"

/* The first lines of every kernel file below, and the tiles of the GEMM kernels. */
#define KERNEL_FILE_HEAD "import tilelang\nimport tilelang.language as T\n\n\n@tilelang.jit\n"
#define GEMM_TILES                                                    \
  "            A_s = T.alloc_shared((BM, BK), \"float16\")\n"        \
  "            B_s = T.alloc_shared((BK, BN), \"float16\")\n"        \
  "            acc = T.alloc_fragment((BM, BN), \"float32\")\n"      \
  "            T.clear(acc)\n"

/* The prim_func of the GEMM kernels: A [M, K] and B [K, N] float16, C [M, N] float32, one block
 * per BM x BN tile of C, and the tiles. */
#define GEMM_MAIN                                                                                        \
  "    @T.prim_func\n"                                                                                 \
  "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float32\")):\n" \
  "        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=threads) as (bx, by):\n"           \
  GEMM_TILES
/* k-tile k of A and B into A_s and B_s by T.Parallel copies (in a loop over k). */
#define PARALLEL_TILE_COPIES                                   \
  "                for i, j in T.Parallel(BM, BK):\n"        \
  "                    A_s[i, j] = A[by * BM + i, k * BK + j]\n" \
  "                for i, j in T.Parallel(BK, BN):\n"        \
  "                    B_s[i, j] = B[k * BK + i, bx * BN + j]\n"

/* The first global parameter buffer named `name`. */
static IrBuffer *param(IrFunc *f, const char *name) {
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i].buf && !strcmp(f->params[i].buf->name, name)) return f->params[i].buf;
  return NULL;
}

/* Stores that are cp.async of `lanes` lanes (a vector copy with no conversion). */
static void count_async(IrStmt *s, void *ctx) {
  int *n = ctx;
  if (s->kind == IR_S_STORE && s->u.store.async_ && s->u.store.lanes == n[1] && s->u.store.value->kind == IR_LOAD) n[0]++;
}
static int async_stores(IrFunc *f, int lanes) {
  int n[2] = {0, lanes};
  IrVisitor v = {count_async, NULL, n};
  ir_visit(f->body, &v);
  return n[0];
}

static double rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (double)(float)(((*s >> 8) & 0xffff) / 32768.0 - 1.0);
}

/* T.im2col in a T.Pipelined loop; the consumer sums the column tiles, so out[m, j] is the
 * sum over k-tiles kt of col[m, kt * BK + j]. */
static const char IM2COL_SUM[] =
    KERNEL_FILE_HEAD
    "def conv_sum(N, H, W, C, K, S, D, P, BM, BK, stages):\n"
    "    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1\n"
    "    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(data: T.Tensor((N, H, W, C), \"float32\"), out: T.Tensor((N * OH * OW, BK), \"float32\")):\n"
    "        with T.Kernel(1, T.ceildiv(N * OH * OW, BM), threads=32) as (bx, by):\n"
    "            col = T.alloc_shared((BM, BK), \"float32\")\n"
    "            acc = T.alloc_fragment((BM, BK), \"float32\")\n"
    "            T.clear(acc)\n"
    "            for k in T.Pipelined(T.ceildiv(K * K * C, BK), num_stages=stages):\n"
    "                T.im2col(data, col, by, k, K, S, D, P)\n"
    "                for i, j in T.Parallel(BM, BK):\n"
    "                    acc[i, j] += col[i, j]\n"
    "            T.copy(acc, out[by * BM, 0])\n"
    "\n"
    "    return main\n";

typedef struct ConvCase { int N, H, W, C, K, S, D, P, BM, BK, stages, lanes; } ConvCase;

/* col[m, kc] of the NHWC image x (T.im2col's meaning: zero outside the image). */
static double im2col_at(const ConvCase *q, const double *x, int OH, int OW, int m, int kc) {
  if (kc >= q->K * q->K * q->C) return 0;
  int n = m / (OH * OW), oh = m / OW % OH, ow = m % OW;
  int kh = kc / (q->K * q->C), kw = kc / q->C % q->K, ch = kc % q->C;
  int h = oh * q->S + kh * q->D - q->P, w = ow * q->S + kw * q->D - q->P;
  if (h < 0 || h >= q->H || w < 0 || w >= q->W) return 0;
  return x[((n * q->H + h) * q->W + w) * q->C + ch];
}

static void im2col_case(TestCtx *t, ConvCase q) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"conv_sum.py", IM2COL_SUM, sizeof IM2COL_SUM - 1};
  char p[11][32];
  const int v[11] = {q.N, q.H, q.W, q.C, q.K, q.S, q.D, q.P, q.BM, q.BK, q.stages};
  const char *names[11] = {"N", "H", "W", "C", "K", "S", "D", "P", "BM", "BK", "stages"};
  const char *params[12];
  for (int i = 0; i < 11; i++) snprintf(p[i], sizeof p[i], "%s=%d", names[i], v[i]), params[i] = p[i];
  params[11] = NULL;
  IrFunc *f = interp_compile(&c, &file, "conv_sum", params);
  REQUIRE(f);
  /* the gather moves `lanes` elements per cp.async (none: element by element) */
  CHECK(q.lanes > 1 ? async_stores(f, q.lanes) > 0 : async_stores(f, 2) + async_stores(f, 4) == 0);
  int OH = (q.H + 2 * q.P - q.D * (q.K - 1) - 1) / q.S + 1, OW = (q.W + 2 * q.P - q.D * (q.K - 1) - 1) / q.S + 1;
  int rows = q.N * OH * OW, KT = (q.K * q.K * q.C + q.BK - 1) / q.BK;
  Interp in = {0};
  double *x = interp_global(&in, param(f, "data")), *out = interp_global(&in, param(f, "out"));
  unsigned seed = 5;
  for (int e = 0; e < q.N * q.H * q.W * q.C; e++) x[e] = rnd(&seed);
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int m = 0; m < rows; m++)
    for (int j = 0; j < q.BK; j++) {
      double want = 0;
      for (int kt = 0; kt < KT; kt++) want = (double)(float)(want + im2col_at(&q, x, OH, OW, m, kt * q.BK + j));
      bad += !(fabs(out[m * q.BK + j] - want) <= 1e-5);
    }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* 8 channels: 4-lane (16-byte) vectors; rows 70 = 2 full tiles and a partial one */
TEST(interp_im2col_vec4) { im2col_case(t, (ConvCase){2, 5, 7, 8, 3, 1, 1, 1, 32, 8, 3, 4}); }
/* stride 2, 36 columns in tiles of 8: the last k-tile is half outside the filter */
TEST(interp_im2col_stride_partial_k) { im2col_case(t, (ConvCase){1, 9, 6, 4, 3, 2, 1, 1, 16, 8, 2, 4}); }
/* 6 channels, dilation 2, padding 2: 2-lane vectors */
TEST(interp_im2col_vec2_dilated) { im2col_case(t, (ConvCase){2, 6, 6, 6, 3, 1, 2, 2, 32, 12, 3, 2}); }
/* 3 channels: no two columns share their filter tap, so element by element, still pipelined */
TEST(interp_im2col_scalar) { im2col_case(t, (ConvCase){1, 5, 5, 3, 3, 1, 1, 1, 16, 9, 2, 1}); }

/* A row gather whose column index is not `x + j`: groups of 6 valid elements at a pitch of
 * 8, `j // 6 * 8 + j % 6`.  Over 2 lanes (aligned) the group and the offset in it move
 * together, so pairs are contiguous; over 4 they are not (j = 4..7 reads 4, 5, 8, 9). */
static const char UNPAD[] =
    KERNEL_FILE_HEAD
    "def unpad(R, G, BM):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((R, G * 8), \"float32\"), out: T.Tensor((R, G * 6), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(R, BM), threads=32) as bx:\n"
    "            s = T.alloc_shared((BM, G * 6), \"float32\")\n"
    "            for i, j in T.Parallel(BM, G * 6):\n"
    "                s[i, j] = X[bx * BM + i, j // 6 * 8 + j % 6]\n"
    "            T.copy(s, out[bx * BM, 0])\n"
    "\n"
    "    return main\n";

/* Vector loads of `lanes` lanes from buffer b. */
typedef struct VecLoads { IrBuffer *b; int lanes, n; } VecLoads;
static void count_vec_load(IrExpr *e, void *ctx) {
  VecLoads *v = ctx;
  if (e->kind == IR_LOAD && e->u.load.buf == v->b && e->lanes == v->lanes) v->n++;
}

TEST(interp_gather_pitched_rows) {
  enum { R = 40, G = 2, BM = 16 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"unpad.py", UNPAD, sizeof UNPAD - 1};
  const char *params[] = {"R=40", "G=2", "BM=16", NULL};
  IrFunc *f = interp_compile(&c, &file, "unpad", params);
  REQUIRE(f);
  IrBuffer *X = param(f, "X"), *O = param(f, "out");
  VecLoads v2 = {X, 2, 0}, v4 = {X, 4, 0};
  IrVisitor a = {NULL, count_vec_load, &v2}, b4 = {NULL, count_vec_load, &v4};
  ir_visit(f->body, &a);
  ir_visit(f->body, &b4);
  CHECK(v2.n > 0 && v4.n == 0);
  Interp in = {0};
  double *x = interp_global(&in, X), *out = interp_global(&in, O);
  unsigned seed = 3;
  for (int e = 0; e < R * G * 8; e++) x[e] = rnd(&seed);
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < R; r++)
    for (int j = 0; j < G * 6; j++) bad += out[r * G * 6 + j] != x[r * G * 8 + j / 6 * 8 + j % 6];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.gemm from shared tiles, in a serial loop (no pipeline): the copies into the swizzled
 * operand tiles, the GEMM (run by the interpreter from the same layouts) and the
 * accumulator's way out must agree.  A stored K-major (transpose_A) as well. */
static const char GEMM_SERIAL[] =
    KERNEL_FILE_HEAD
    "def mm(M, N, K, BM, BN, BK, threads, ta):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((K, M) if ta else (M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=threads) as (bx, by):\n"
    "            A_s = T.alloc_shared((BK, BM) if ta else (BM, BK), \"float16\")\n"
    "            B_s = T.alloc_shared((BK, BN), \"float16\")\n"
    "            acc = T.alloc_fragment((BM, BN), \"float32\")\n"
    "            T.clear(acc)\n"
    "            for k in T.serial(T.ceildiv(K, BK)):\n"
    "                if ta:\n"
    "                    T.copy(A[k * BK, by * BM], A_s)\n"
    "                else:\n"
    "                    T.copy(A[by * BM, k * BK], A_s)\n"
    "                T.copy(B[k * BK, bx * BN], B_s)\n"
    "                T.gemm(A_s, B_s, acc, transpose_A=ta)\n"
    "            T.copy(acc, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";

/* Compiles GEMM kernel `mm` of src (A [M, K], or [K, M] with ta; B [K, N]; C [M, N] float32;
 * `perm`, when it has one, a permutation of the k-tiles of BK columns), checks `want` on the
 * thread-level result, runs it on random data and compares C with A @ B.  `races`: whether
 * the run's race count is meaningful (not with warp-specialized coroutines). */
static void gemm_case(TestCtx *t, const char *src, size_t len, const char *const *params, int M, int N, int K, int BK,
                      bool ta, bool (*want)(IrFunc *), bool races) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"mm.py", src, len};
  IrFunc *f = interp_compile(&c, &file, "mm", params);
  REQUIRE(f);
  if (want) CHECK(want(f));
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B")),
         *cc = interp_global(&in, param(f, "C"));
  IrBuffer *pb = param(f, "perm");
  unsigned seed = 8;
  for (int e = 0; e < M * K; e++) a[e] = rnd(&seed);
  for (int e = 0; e < K * N; e++) b[e] = rnd(&seed);
  if (pb) {
    double *perm = interp_global(&in, pb);
    for (int i = 0; i < K / BK; i++) perm[i] = (i * 3 + 5) % (K / BK);
  }
  interp_run(&in, f);
  CHECK(in.errors == 0);
  if (races) CHECK(in.races == 0);
  int bad = 0;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += (ta ? a[k * M + m] : a[m * K + k]) * b[k * N + n];
      bad += !(fabs(cc[m * N + n] - s) <= 1e-4);
    }
  if (bad) fprintf(stderr, "  %d of %d wrong\n", bad, M * N);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* A leading copy whose row is a T.alloc_var the body advances after it: run a stage ahead
 * (inject_pipeline's prefix) it would read the row before this iteration's advance, so it
 * stays in its iteration (scan_prefix: producers read what the loop does not write). */
static const char ADVANCING[] =
    KERNEL_FILE_HEAD
    "def advancing(steps, step):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((steps * step + 32, 64), \"float32\"), out: T.Tensor((steps * 32, 64), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            s = T.alloc_shared((32, 64), \"float32\")\n"
    "            row = T.alloc_var(\"int32\", init=0)\n"
    "            for k in T.Pipelined(steps, num_stages=3):\n"
    "                T.copy(A[row, 0], s)\n"
    "                T.copy(s, out[k * 32, 0])\n"
    "                row = row + step\n"
    "\n"
    "    return main\n";
TEST(interp_pipeline_index_advanced_in_loop) {
  enum { STEPS = 5, STEP = 48 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"advancing.py", ADVANCING, sizeof ADVANCING - 1};
  const char *params[] = {"steps=5", "step=48", NULL};
  IrFunc *f = interp_compile(&c, &file, "advancing", params);
  REQUIRE(f);
  IrBuffer *A = param(f, "A"), *O = param(f, "out");
  Interp in = {0};
  double *a = interp_global(&in, A), *out = interp_global(&in, O);
  unsigned seed = 5;
  for (int e = 0; e < (STEPS * STEP + 32) * 64; e++) a[e] = rnd(&seed);
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int k = 0; k < STEPS; k++)
    for (int i = 0; i < 32 * 64; i++) bad += out[k * 32 * 64 + i] != a[k * STEP * 64 + i];
  if (bad) fprintf(stderr, "  %d of %d wrong (out %g %g, A %g %g, A[48 rows] %g)\n", bad, STEPS * 32 * 64, out[0], out[32 * 64], a[0], a[STEP * 64], a[48 * 64]);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}
TEST(interp_gemm_wgmma) {
  const char *p[] = {"M=128", "N=64", "K=96", "BM=64", "BN=64", "BK=32", "threads=128", "ta=False", NULL};
  gemm_case(t, GEMM_SERIAL, sizeof GEMM_SERIAL - 1, p, 128, 64, 96, 32, false, NULL, true);
}
TEST(interp_gemm_wgmma_trans_a) {
  const char *p[] = {"M=64", "N=128", "K=64", "BM=64", "BN=128", "BK=32", "threads=256", "ta=True", NULL};
  gemm_case(t, GEMM_SERIAL, sizeof GEMM_SERIAL - 1, p, 64, 128, 64, 32, true, NULL, true);
}

/* The same GEMM with its tiles filled by T.Parallel copies in a 4-stage T.Pipelined loop:
 * inject_pipeline runs them as cp.async producers 2 stages ahead and leaves one wgmma in
 * flight across iterations, whose tiles the interpreter reads only at its wait. */
static const char GEMM_PAR_PIPELINE[] =
    KERNEL_FILE_HEAD
    "def mm(M, N, K, BM, BN, BK, threads, stages):\n"
    GEMM_MAIN
    "            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=stages):\n"
    PARALLEL_TILE_COPIES
    "                T.gemm(A_s, B_s, acc)\n"
    "            T.copy(acc, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";

static bool has_cp_async_16b(IrFunc *f) { return async_stores(f, 8) > 0; } /* 8 halves */

TEST(interp_gemm_parallel_copies_pipelined) {
  const char *p[] = {"M=64", "N=64", "K=256", "BM=64", "BN=64", "BK=32", "threads=128", "stages=4", NULL};
  gemm_case(t, GEMM_PAR_PIPELINE, sizeof GEMM_PAR_PIPELINE - 1, p, 64, 64, 256, 32, false, has_cp_async_16b, true);
}

/* The GEMM with T.copy tiles in a T.Pipelined loop: warp_specialize makes a TMA producer
 * warpgroup and wgmma consumers on mbarriers, run here as two coroutines. */
static const char GEMM_WS[] =
    KERNEL_FILE_HEAD
    "def mm(M, N, K, BM, BN, BK, threads, stages):\n"
    GEMM_MAIN
    "            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=stages):\n"
    "                T.copy(A[by * BM, k * BK], A_s)\n"
    "                T.copy(B[k * BK, bx * BN], B_s)\n"
    "                T.gemm(A_s, B_s, acc)\n"
    "            T.copy(acc, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";

/* Warp-specialized kernels in the result (a producer warpgroup). */
static void count_ws(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_KERNEL && s->u.kernel.producer_threads) ++*(int *)ctx;
}

static bool warp_specialized(IrFunc *f) {
  int ws = 0;
  IrVisitor wv = {count_ws, NULL, &ws};
  ir_visit(f->body, &wv);
  return ws == 1;
}

TEST(interp_gemm_warp_specialized) {
  const char *p[] = {"M=128", "N=128", "K=320", "BM=64", "BN=128", "BK=64", "threads=128", "stages=3", NULL};
  gemm_case(t, GEMM_WS, sizeof GEMM_WS - 1, p, 128, 128, 320, 64, false, warp_specialized, false);
}

/* The loops below (M = N = 64, a K step of 64): compiled, checked for a producer warpgroup
 * (ws), run with random A and B and the values `extra` (NULL: none) in tensor `extra_name`,
 * and C compared with the sum over the K steps `kept` marks of A_k B_k^T. */
static void steps_case(TestCtx *t, const char *src, size_t len, const char *func, int K, bool ws, const char *extra_name,
                       const double *extra, int nextra, const bool *kept) {
  enum { M = 64, N = 64 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"steps.py", src, len};
  char kp[32];
  snprintf(kp, sizeof kp, "K=%d", K);
  const char *p[] = {"M=64", "N=64", kp, "BM=64", "BN=64", "BK=64", NULL};
  IrFunc *f = interp_compile(&c, &file, func, p);
  REQUIRE(f);
  CHECK(warp_specialized(f) == ws);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B")), *out = interp_global(&in, param(f, "C"));
  double *x = extra_name ? interp_global(&in, param(f, extra_name)) : NULL;
  unsigned seed = 9;
  for (int e = 0; e < M * K; e++) a[e] = rnd(&seed);
  for (int e = 0; e < N * K; e++) b[e] = rnd(&seed);
  for (int i = 0; x && i < nextra; i++) x[i] = extra[i];
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double ref = 0;
      for (int k = 0; k < K; k++)
        if (kept[k / 64]) ref += a[i * K + k] * b[j * K + k];
      bad += !(fabs(out[i * N + j] - ref) <= 1e-3 * (1 + fabs(ref)));
    }
  if (bad) fprintf(stderr, "  %s: %d of %d wrong\n", func, bad, M * N);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* A pipelined loop (a GEMM per step, summed by threads: not the GEMM schedule's shape) whose
 * K range starts at a T.alloc_var computed before the loop (the minimum of a tensor of
 * starts, as DeepSeek's indexer computes its key range): the producer warpgroup repeats that
 * scalar prelude on its own registers (ws_prelude.c), so the loop is warp-specialized and
 * sums A[:, lo:K] B[:, lo:K]^T. */
static const char PRELUDE_SRC[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit\n"
    "def prelude(M, N, K, BM, BN, BK):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((N, K), T.float16), Starts: T.Tensor((4,), T.int32),\n"
    "             C: T.Tensor((M, N), T.float32)):\n"
    "        with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):\n"
    "            A_s = T.alloc_shared((BM, BK), T.float16)\n"
    "            B_s = T.alloc_shared((BN, BK), T.float16)\n"
    "            acc = T.alloc_fragment((BM, BN), T.float32)\n"
    "            tot = T.alloc_fragment((BM, BN), T.float32)\n"
    "            lo = T.alloc_var(T.int32)\n"
    "            lo = K\n"
    "            for i in T.serial(4):\n"
    "                lo = T.min(lo, Starts[i])\n"
    "            T.clear(tot)\n"
    "            for k in T.Pipelined((K - lo) // BK, num_stages=2):\n"
    "                T.copy(A[by * BM, lo + k * BK], A_s)\n"
    "                T.copy(B[bx * BN, lo + k * BK], B_s)\n"
    "                T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=True)\n"
    "                for i, j in T.Parallel(BM, BN):\n"
    "                    tot[i, j] += acc[i, j]\n"
    "            T.copy(tot, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";
TEST(interp_ws_prelude_var) {
  const double starts[4] = {128, 64, 192, 100}; /* lo = 64: the last three K steps */
  const bool kept[4] = {false, true, true, true};
  steps_case(t, PRELUDE_SRC, sizeof PRELUDE_SRC - 1, "prelude", 256, true, "Starts", starts, 4, kept);
}

/* The same loop leaving by `break` after two steps: consumers that leave the loop would leave
 * a producer warpgroup loading (and, with more steps than stages, waiting for releases that
 * never come), so it keeps the cp.async pipeline; the sums stop at the break. */
static const char BREAK_SRC[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit\n"
    "def brk(M, N, K, BM, BN, BK):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((M, N), T.float32)):\n"
    "        with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):\n"
    "            A_s = T.alloc_shared((BM, BK), T.float16)\n"
    "            B_s = T.alloc_shared((BN, BK), T.float16)\n"
    "            acc = T.alloc_fragment((BM, BN), T.float32)\n"
    "            tot = T.alloc_fragment((BM, BN), T.float32)\n"
    "            T.clear(tot)\n"
    "            for k in T.Pipelined(K // BK, num_stages=2):\n"
    "                T.copy(A[by * BM, k * BK], A_s)\n"
    "                T.copy(B[bx * BN, k * BK], B_s)\n"
    "                T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=True)\n"
    "                for i, j in T.Parallel(BM, BN):\n"
    "                    tot[i, j] += acc[i, j]\n"
    "                if k == 1:\n"
    "                    break\n"
    "            T.copy(tot, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";
TEST(interp_ws_not_with_break) {
  const bool kept[8] = {true, true};
  steps_case(t, BREAK_SRC, sizeof BREAK_SRC - 1, "brk", 512, false, NULL, NULL, 0, kept);
}

/* A guarded loop (`if cond: ...`, ws_guard.c) whose condition computes with floats stays off
 * the producer warpgroup (the two roles' compiled arithmetic could decide differently); one
 * that only loads and compares them takes it, and sums the steps it lets through. */
#define GUARD_SRC(COND)                                                                                     \
  "import tilelang\n"                                                                                       \
  "import tilelang.language as T\n"                                                                         \
  "\n"                                                                                                      \
  "@tilelang.jit\n"                                                                                         \
  "def guard(M, N, K, BM, BN, BK):\n"                                                                       \
  "    @T.prim_func\n"                                                                                      \
  "    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((N, K), T.float16), W: T.Tensor((K // BK,), T.float32),\n" \
  "             C: T.Tensor((M, N), T.float32)):\n"                                                        \
  "        with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):\n"                                     \
  "            A_s = T.alloc_shared((BM, BK), T.float16)\n"                                                 \
  "            B_s = T.alloc_shared((BN, BK), T.float16)\n"                                                 \
  "            acc = T.alloc_fragment((BM, BN), T.float32)\n"                                               \
  "            tot = T.alloc_fragment((BM, BN), T.float32)\n"                                               \
  "            T.clear(tot)\n"                                                                              \
  "            for k in T.Pipelined(K // BK, num_stages=2):\n"                                              \
  "                if " COND ":\n"                                                                          \
  "                    T.copy(A[by * BM, k * BK], A_s)\n"                                                   \
  "                    T.copy(B[bx * BN, k * BK], B_s)\n"                                                   \
  "                    T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=True)\n"                         \
  "                    for i, j in T.Parallel(BM, BN):\n"                                                   \
  "                        tot[i, j] += acc[i, j]\n"                                                        \
  "            T.copy(tot, C[by * BM, bx * BN])\n"                                                          \
  "\n"                                                                                                      \
  "    return main\n"
static const char GUARD_EXACT[] = GUARD_SRC("W[k] > 0.5"), GUARD_MATH[] = GUARD_SRC("W[k] * 3.0 + 1.0 > 2.5");
TEST(interp_ws_guard_float_math) {
  const double w[6] = {1, 0, 0.75, 0.25, 0, 1}; /* steps 0, 2 and 5 taken either way */
  const bool kept[6] = {true, false, true, false, false, true};
  steps_case(t, GUARD_EXACT, sizeof GUARD_EXACT - 1, "guard", 384, true, "W", w, 6, kept);
  steps_case(t, GUARD_MATH, sizeof GUARD_MATH - 1, "guard", 384, false, "W", w, 6, kept);
}

/* ts.ws_acc_overlap (opt-in): a per-K-block promotion (DeepGEMM's 2xAcc: acc = A_k B_kᵀ; tot += acc *
 * S[i, k]; acc = 0) issues the GEMM of k+1 before promoting k, from a second accumulator
 * (acc_done).  The same sums as the synchronous loop (the default), no races; with
 * the GEMM's own clear_accum instead of T.clear too.  A kernel reading acc after the loop keeps
 * the synchronous schedule. */
static const char PROMOTE_SRC[] =
    KERNEL_FILE_HEAD
    "def promote(M, N, K, BM, BN, BK, stages, own_clear, read_after):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((N, K), \"float16\"), S: T.Tensor((M, K // BK), \"float32\"),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):\n"
    "            A_s = T.alloc_shared((BM, BK), \"float16\")\n"
    "            B_s = T.alloc_shared((BN, BK), \"float16\")\n"
    "            acc = T.alloc_fragment((BM, BN), \"float32\")\n"
    "            tot = T.alloc_fragment((BM, BN), \"float32\")\n"
    "            T.clear(acc)\n"
    "            T.clear(tot)\n"
    "            for k in T.Pipelined(K // BK, num_stages=stages):\n"
    "                T.copy(A[by * BM, k * BK], A_s)\n"
    "                T.copy(B[bx * BN, k * BK], B_s)\n"
    "                T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=own_clear)\n"
    "                for i, j in T.Parallel(BM, BN):\n"
    "                    tot[i, j] += acc[i, j] * S[by * BM + i, k]\n"
    "                if not own_clear:\n"
    "                    T.clear(acc)\n"
    "            if read_after:\n"
    "                for i, j in T.Parallel(BM, BN):\n"
    "                    tot[i, j] += acc[i, j]\n"
    "            T.copy(tot, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";

/* Does f allocate a buffer whose name contains `part`? */
typedef struct NamedAlloc { const char *part; bool found; } NamedAlloc;
static void named_alloc(IrStmt *s, void *ctx) {
  NamedAlloc *n = ctx;
  if (s->kind == IR_S_ALLOC && strstr(s->u.alloc.buf->name, n->part)) n->found = true;
}
static bool allocates(IrFunc *f, const char *part) {
  NamedAlloc n = {part, false};
  IrVisitor v = {named_alloc, NULL, &n};
  ir_visit(f->body, &v);
  return n.found;
}
static void promote_case(TestCtx *t, const char *own_clear, const char *read_after, const char *config, bool want_done) {
  enum { M = 128, N = 128, K = 320, BK = 64 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"promote.py", PROMOTE_SRC, sizeof PROMOTE_SRC - 1};
  /* one block an SM: the registers prefetch_next_loads counts on (its cap is setmaxnreg's) */
  static const char *const key[] = {"ts.prefetch_next_loads", "ts.ws_two_blocks", "ts.ws_acc_overlap"};
  const char *val[] = {"True", "False", config};
  c.call_pc_keys = key, c.call_pc_values = val, c.ncall_pc = config ? 3 : 2;
  const char *p[] = {"M=128", "N=128", "K=320", "BM=64", "BN=128", "BK=64", "stages=3", own_clear, read_after, NULL};
  IrFunc *f = interp_compile(&c, &file, "promote", p);
  REQUIRE(f);
  CHECK(warp_specialized(f) && allocates(f, "_done") == want_done);
  CHECK(allocates(f, "nxt_S")); /* ts.prefetch_next_loads (set here): S[.., k + 1] loaded during iteration k */
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  double *s = interp_global(&in, param(f, "S")), *out = interp_global(&in, param(f, "C"));
  unsigned seed = 5;
  for (int e = 0; e < M * K; e++) a[e] = rnd(&seed);
  for (int e = 0; e < N * K; e++) b[e] = rnd(&seed);
  for (int e = 0; e < M * (K / BK); e++) s[e] = rnd(&seed);
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double ref = 0, mag = 0;
      for (int kb = 0; kb < K / BK; kb++) {
        double blk = 0;
        for (int k = kb * BK; k < (kb + 1) * BK; k++) blk += a[i * K + k] * b[j * K + k], mag += fabs(a[i * K + k] * b[j * K + k]);
        ref += blk * s[i * (K / BK) + kb];
      }
      bad += !(fabs(out[i * N + j] - ref) <= 1e-3 * (1 + mag));
    }
  if (bad) fprintf(stderr, "  promote %s %s %s: %d of %d wrong\n", own_clear, read_after, config ? config : "-", bad, M * N);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}
TEST(interp_acc_overlap_promote) { promote_case(t, "own_clear=False", "read_after=False", "True", true); }
TEST(interp_acc_overlap_gemm_clears) { promote_case(t, "own_clear=True", "read_after=False", "True", true); }
TEST(interp_acc_overlap_off) { promote_case(t, "own_clear=False", "read_after=False", NULL, false); }
TEST(interp_acc_overlap_read_after_loop) { promote_case(t, "own_clear=False", "read_after=True", "True", false); }

/* The (opt-in: ts.enable_epilogue_overlap) overlapped epilogue of a persistent GEMM (16-bit C
 * through a shared tile), run by
 * fewer blocks than tiles (3 resident, as the runtime clamps the grid): each block stores its
 * previous tile during the next tile's first K steps and its last tile after the loop.
 * examples/gemm_swizzled.py computes its tile from the block index (lets written out in the
 * store), examples/gemm_shared_epilogue.py uses a 2-D grid. */
static void find_pack(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_ALLOC && strstr(s->u.alloc.buf->name, "_pack")) *(bool *)ctx = true;
}
static void overlapped_case(TestCtx *t, const char *path, int M, int N, int K, const char *const *params) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  size_t len = 0;
  char *text = ts_read_file(path, &len);
  REQUIRE(text);
  SourceFile file = {path, text, len};
  static const char *const ov_key[] = {"ts.enable_epilogue_overlap"}, *const ov_val[] = {"True"};
  c.call_pc_keys = ov_key, c.call_pc_values = ov_val, c.ncall_pc = 1; /* as ts_compile_options would */
  IrFunc *f = interp_compile(&c, &file, "matmul", params);
  REQUIRE(f);
  bool packed = false;
  IrVisitor v = {find_pack, NULL, &packed};
  ir_visit(f->body, &v);
  CHECK(packed && warp_specialized(f));
  IrBuffer *A = param(f, "A"), *B = param(f, "B"), *C = param(f, "C");
  Interp in = {0};
  in.resident = 3;
  double *a = interp_global(&in, A), *b = interp_global(&in, B), *out = interp_global(&in, C);
  unsigned seed = 11;
  for (int e = 0; e < M * K; e++) a[e] = rnd(&seed);
  for (int e = 0; e < K * N; e++) b[e] = rnd(&seed);
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double ref = 0, mag = 0;
      for (int k = 0; k < K; k++) ref += a[i * K + k] * b[k * N + j], mag += fabs(a[i * K + k] * b[k * N + j]);
      bad += !(fabs(out[i * N + j] - ref) <= 1e-3 * (1 + mag));
    }
  if (bad) fprintf(stderr, "  %s: %d of %d wrong\n", path, bad, M * N);
  CHECK(bad == 0);
  interp_free(&in);
  free(text);
  ts_compiler_fini(&c);
}
TEST(interp_gemm_overlapped_epilogue_1d_grid) {
  const char *p[] = {"M=256", "N=192", "K=128", "block_M=64", "block_N=64", "block_K=32", "num_stages=2", "threads=128",
                     "group=2", NULL};
  overlapped_case(t, "examples/gemm_swizzled.py", 256, 192, 128, p);
}
TEST(interp_gemm_overlapped_epilogue_2d_grid) {
  const char *p[] = {"M=256", "N=192", "K=128", "block_M=64", "block_N=64", "block_K=32", "num_stages=2", "threads=128",
                     NULL};
  overlapped_case(t, "examples/gemm_shared_epilogue.py", 256, 192, 128, p);
}

/* A loop whose body first computes where its tiles are (`kk = perm[k]`, a read of a tensor
 * the kernel never writes) runs that let stages ahead with its producers, again for the
 * consumers.  The k-tiles in any order give the same product. */
static const char GEMM_LET_PIPELINE[] =
    KERNEL_FILE_HEAD
    "def mm(M, N, K, BM, BN, BK, threads, stages):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), perm: T.Tensor((K // BK,), \"int32\"),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=threads) as (bx, by):\n"
    GEMM_TILES
    "            for k in T.Pipelined(K // BK, num_stages=stages):\n"
    "                kk = perm[k]\n"
    "                for i, j in T.Parallel(BM, BK):\n"
    "                    A_s[i, j] = A[by * BM + i, kk * BK + j]\n"
    "                for i, j in T.Parallel(BK, BN):\n"
    "                    B_s[i, j] = B[kk * BK + i, bx * BN + j]\n"
    "                T.gemm(A_s, B_s, acc)\n"
    "            T.copy(acc, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";

TEST(interp_gemm_let_prefix_pipelined) {
  const char *p[] = {"M=64", "N=64", "K=256", "BM=64", "BN=64", "BK=32", "threads=128", "stages=3", NULL};
  gemm_case(t, GEMM_LET_PIPELINE, sizeof GEMM_LET_PIPELINE - 1, p, 64, 64, 256, 32, false, has_cp_async_16b, true);
}

/* A GEMM reading a column window 32 columns into a 192-column bf16 tile: not on a 128-byte
 * swizzle atom, so the tile takes the 64-byte swizzle, whose atoms the window spans whole
 * (layout.c operand_layout).  S = Q[:, 32:160] K^T. */
static const char GEMM_WINDOW[] =
    KERNEL_FILE_HEAD
    "def qk(H, N):\n"
    "    @T.prim_func\n"
    "    def main(Q: T.Tensor((H, 192), \"bfloat16\"), K: T.Tensor((N, 128), \"bfloat16\"), S: T.Tensor((H, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            Q_shared = T.alloc_shared((H, 192), \"bfloat16\")\n"
    "            K_shared = T.alloc_shared((N, 128), \"bfloat16\")\n"
    "            acc = T.alloc_fragment((H, N), \"float32\")\n"
    "            T.copy(Q, Q_shared)\n"
    "            T.copy(K, K_shared)\n"
    "            T.gemm(Q_shared[:, 32:160], K_shared, acc, transpose_B=True, clear_accum=True)\n"
    "            T.copy(acc, S)\n"
    "\n"
    "    return main\n";

TEST(interp_gemm_window_64b_swizzle) {
  enum { H = 64, N = 64 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"qk.py", GEMM_WINDOW, sizeof GEMM_WINDOW - 1};
  const char *params[] = {"H=64", "N=64", NULL};
  IrFunc *f = interp_compile(&c, &file, "qk", params);
  REQUIRE(f);
  Interp in = {0};
  double *q = interp_global(&in, param(f, "Q")), *kk = interp_global(&in, param(f, "K")),
         *s = interp_global(&in, param(f, "S"));
  unsigned seed = 27;
  for (int e = 0; e < H * 192; e++) q[e] = rnd(&seed);
  for (int e = 0; e < N * 128; e++) kk[e] = rnd(&seed);
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int h = 0; h < H; h++)
    for (int n = 0; n < N; n++) {
      double want = 0;
      for (int d = 0; d < 128; d++) want += q[h * 192 + 32 + d] * kk[n * 128 + d];
      bad += !(fabs(s[h * N + n] - want) <= 1e-4);
    }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* A kernel file of tests/codegen (run from the checkout's root, as tests/run.sh does),
 * compiled with its defaults and run on random A [64, 64] and B [64, 64]; C = A @ B in ab. */
typedef struct CodegenRun {
  TsCompiler c;
  char *text;
  IrFunc *f;
  Interp in;
  double ab[64 * 64];
} CodegenRun;

static bool codegen_run(TestCtx *t, CodegenRun *r, const char *path, const char *func) {
  memset(r, 0, sizeof *r);
  ts_compiler_init(&r->c, (TsTarget){90, true});
  r->c.debug = true;
  size_t len = 0;
  r->text = ts_read_file(path, &len);
  if (!r->text) {
    fprintf(stderr, "  cannot read %s (run from the checkout's root)\n", path);
    t->failures++;
    ts_compiler_fini(&r->c);
    return false;
  }
  SourceFile file = {path, r->text, len};
  const char *params[] = {NULL};
  r->f = interp_compile(&r->c, &file, func, params);
  if (!r->f) {
    t->failures++;
    return false;
  }
  double *a = interp_global(&r->in, param(r->f, "A")), *b = interp_global(&r->in, param(r->f, "B"));
  unsigned seed = 31;
  for (int e = 0; e < 64 * 64; e++) a[e] = rnd(&seed), b[e] = rnd(&seed);
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < 64; n++) {
      double s = 0;
      for (int k = 0; k < 64; k++) s += a[m * 64 + k] * b[k * 64 + n];
      r->ab[m * 64 + n] = s;
    }
  interp_run(&r->in, r->f);
  CHECK(r->in.errors == 0 && r->in.races == 0);
  return true;
}

static void codegen_free(CodegenRun *r) {
  interp_free(&r->in);
  free(r->text);
  ts_compiler_fini(&r->c);
}

/* tests/codegen/fragment_read_rows.py: the row maxima of a wgmma accumulator read by row in two
 * loops, one of them followed by a vector copy of what it writes (layout_inference ranks the
 * loop that reads a laid-out fragment before that copy): S = AB - max_row, P = 2 max_row + j. */
TEST(interp_fragment_read_rows) {
  CodegenRun r;
  if (!codegen_run(t, &r, "tests/codegen/fragment_read_rows.py", "row_reads")) return;
  double *s = interp_global(&r.in, param(r.f, "S")), *p = interp_global(&r.in, param(r.f, "P"));
  int bad = 0;
  for (int m = 0; m < 64; m++) {
    double mx = -INFINITY;
    for (int n = 0; n < 64; n++) mx = fmax(mx, r.ab[m * 64 + n]);
    for (int n = 0; n < 64; n++)
      bad += !(fabs(s[m * 64 + n] - (r.ab[m * 64 + n] - mx)) <= 1e-4) + !(fabs(p[m * 64 + n] - (2 * mx + n)) <= 1e-4);
  }
  CHECK(bad == 0);
  codegen_free(&r);
}

/* tests/codegen/fragment_staged_reads.py: 4-column strips of the accumulator summed under a
 * serial loop through a shared copy of it: R[i, j] = sum over jj of AB[i, jj * 4 + j]. */
TEST(interp_fragment_staged_reads) {
  CodegenRun r;
  if (!codegen_run(t, &r, "tests/codegen/fragment_staged_reads.py", "strips4")) return;
  double *q = interp_global(&r.in, param(r.f, "R"));
  int bad = 0;
  for (int m = 0; m < 64; m++)
    for (int j = 0; j < 4; j++) {
      double s = 0;
      for (int jj = 0; jj < 16; jj++) s += r.ab[m * 64 + jj * 4 + j];
      bad += !(fabs(q[m * 4 + j] - s) <= 1e-3);
    }
  CHECK(bad == 0);
  codegen_free(&r);
}

/* A shared buffer the kernel allocates but never touches (`Bias_shared` of TileLang's dequant
 * GEMM built without bias) holds nothing: merge_shared_memory gives it no bytes of its own, so
 * the 176 KB of U beside the GEMM's 64 KB of pipeline stages and its 64 KB output tile (which
 * reuses the stages' bytes after the loop) still fit one block. */
static const char GEMM_UNUSED_SMEM[] =
    KERNEL_FILE_HEAD
    "def mm(M, N, K, BM, BN, BK, threads):\n"
    GEMM_MAIN
    "            U = T.alloc_shared((176, 256), \"float32\")\n"
    "            C_s = T.alloc_shared((BM, BN), \"float32\")\n"
    "            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=2):\n"
    "                T.copy(A[by * BM, k * BK], A_s)\n"
    "                T.copy(B[k * BK, bx * BN], B_s)\n"
    "                T.gemm(A_s, B_s, acc)\n"
    "            T.copy(acc, C_s)\n"
    "            T.copy(C_s, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";

static void find_kernel_smem(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_KERNEL) *(int64_t *)ctx = s->u.kernel.smem_bytes;
}
static bool smem_without_unused(IrFunc *f) {
  int64_t bytes = -1;
  IrVisitor v = {find_kernel_smem, NULL, &bytes};
  ir_visit(f->body, &v);
  return bytes > 0 && bytes <= 2 * 32768 + 65536 + 2048; /* the stages, C_s, the mbarriers */
}

TEST(interp_gemm_unused_shared_buffer) {
  const char *p[] = {"M=128", "N=128", "K=256", "BM=128", "BN=128", "BK=64", "threads=128", NULL};
  gemm_case(t, GEMM_UNUSED_SMEM, sizeof GEMM_UNUSED_SMEM - 1, p, 128, 128, 256, 64, false, smem_without_unused, true);
}

/* A GEMM on tiles loaded before the loop (the first k-tile as PA, PB: 16 KB, as chunk_scan's
 * C x prev_states), then a 2-stage pipelined GEMM over the other k-tiles (32 KB of stages, filled
 * by T.Parallel copies: cp.async, one block of threads, no warp specialization):
 * stacked, the 48 KB let 4 blocks share an SM; the stages reusing PA's and PB's bytes once
 * their GEMM is done (merge_shared_memory, with a barrier between) let 6.  C = A @ B. */
static const char GEMM_PRE_TILE[] =
    KERNEL_FILE_HEAD
    "def mm(M, N, K, BM, BN, BK, threads):\n"
    GEMM_MAIN
    "            PA = T.alloc_shared((BM, 64), \"float16\")\n"
    "            PB = T.alloc_shared((64, BN), \"float16\")\n"
    "            T.copy(A[by * BM, 0], PA)\n"
    "            T.copy(B[0, bx * BN], PB)\n"
    "            T.gemm(PA, PB, acc)\n"
    "            for k in T.Pipelined(1, T.ceildiv(K, BK), num_stages=2):\n"
    PARALLEL_TILE_COPIES
    "                T.gemm(A_s, B_s, acc)\n"
    "            T.copy(acc, C[by * BM, bx * BN])\n"
    "\n"
    "    return main\n";

static bool smem_reused_for_occupancy(IrFunc *f) {
  int64_t bytes = -1;
  IrVisitor v = {find_kernel_smem, NULL, &bytes};
  ir_visit(f->body, &v);
  return bytes > 0 && bytes <= 2 * 2 * 64 * 64 * 2 + 1024; /* the stages alone (P's bytes reused) */
}

TEST(interp_gemm_pre_tile_bytes_reused) {
  const char *p[] = {"M=128", "N=64", "K=256", "BM=64", "BN=64", "BK=64", "threads=128", NULL};
  gemm_case(t, GEMM_PRE_TILE, sizeof GEMM_PRE_TILE - 1, p, 128, 64, 256, 64, false, smem_reused_for_occupancy, true);
}

/* T.vectorized loops of copies (vectorize_loops.c): the load of A into registers and the
 * converting store of them into B move TK halves / 4 floats at a time, under the bounds guard
 * of the last block (N is a multiple of TK, not of a block's 32 * TK); the strided loop and the
 * loop whose second statement reads what the first writes stay element loops. */
static const char VEC_COPY[] =
    KERNEL_FILE_HEAD
    "def vcopy(N, TK):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float16\"), B: T.Tensor((N,), \"float32\"), D: T.Tensor((N,), \"float32\"),\n"
    "             S: T.Tensor((2 * N,), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, 32 * TK), threads=32) as bx:\n"
    "            tx = T.get_thread_binding(0)\n"
    "            a = T.alloc_local((TK,), \"float16\")\n"
    "            d = T.alloc_local((TK,), \"float32\")\n"
    "            base = bx * 32 * TK + tx * TK\n"
    "            for k in T.vectorized(TK):\n"
    "                a[k] = A[base + k]\n"
    "            for k in T.vectorized(TK):\n"
    "                B[base + k] = a[k]\n"
    "            for k in T.vectorized(TK):\n"
    "                a[k] = S[2 * base + 2 * k]\n"
    "                d[k] = a[k] * 2.0\n"
    "            for k in T.vectorized(TK):\n"
    "                D[base + k] = d[k]\n"
    "\n"
    "    return main\n";

typedef struct VecStores { IrBuffer *b; int lanes, n; } VecStores;
static void count_vec_store(IrStmt *s, void *ctx) {
  VecStores *v = ctx;
  if (s->kind == IR_S_STORE && s->u.store.buf == v->b && s->u.store.lanes == v->lanes) v->n++;
}
static int vec_stores(IrFunc *f, IrBuffer *b, int lanes) {
  VecStores v = {b, lanes, 0};
  IrVisitor w = {count_vec_store, NULL, &v};
  ir_visit(f->body, &w);
  return v.n;
}

TEST(interp_vectorized_loop_copies) {
  enum { N = 8 * 37, TK = 8 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"vcopy.py", VEC_COPY, sizeof VEC_COPY - 1};
  const char *params[] = {"N=296", "TK=8", NULL};
  IrFunc *f = interp_compile(&c, &file, "vcopy", params);
  REQUIRE(f);
  IrBuffer *A = param(f, "A"), *B = param(f, "B"), *D = param(f, "D"), *S = param(f, "S");
  VecLoads va = {A, 8, 0}, vs = {S, 1, 0}, vs2 = {S, 2, 0};
  IrVisitor wa = {NULL, count_vec_load, &va}, ws = {NULL, count_vec_load, &vs}, ws2 = {NULL, count_vec_load, &vs2};
  ir_visit(f->body, &wa);
  ir_visit(f->body, &ws);
  ir_visit(f->body, &ws2);
  CHECK(va.n == 1 && vec_stores(f, B, 4) == 1);          /* 16-byte vectors on both sides */
  CHECK(vs.n > 0 && vs2.n == 0 && vec_stores(f, D, 4) == 1); /* strided: scalar; d -> D: vector */
  Interp in = {0};
  double *a = interp_global(&in, A), *b = interp_global(&in, B), *d = interp_global(&in, D),
         *s = interp_global(&in, S);
  unsigned seed = 5;
  for (int e = 0; e < N; e++) a[e] = rnd(&seed);
  for (int e = 0; e < 2 * N; e++) s[e] = rnd(&seed);
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int e = 0; e < N; e++) bad += b[e] != a[e] || d[e] != 2.0 * s[2 * e];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* Split-K GEMM (gemm_splitk's kernel): each of S blocks along z multiplies its K slice and adds
 * the accumulator into C with a T.atomic_add nest; the accumulator's lane pairs make that one
 * aligned vector atomic (atomic_add_x) per pair.  C starts at 1. */
static const char SPLIT_ATOMIC[] =
    KERNEL_FILE_HEAD
    "def mm(M, N, K, S, BM, BN, BK):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), S, threads=128) as (bx, by, bz):\n"
    "            A_s = T.alloc_shared((BM, BK), \"float16\")\n"
    "            B_s = T.alloc_shared((BK, BN), \"float16\")\n"
    "            acc = T.alloc_fragment((BM, BN), \"float32\")\n"
    "            T.clear(acc)\n"
    "            for k in T.serial(K // S // BK):\n"
    "                T.copy(A[by * BM, bz * (K // S) + k * BK], A_s)\n"
    "                T.copy(B[bz * (K // S) + k * BK, bx * BN], B_s)\n"
    "                T.gemm(A_s, B_s, acc)\n"
    "            for i, j in T.Parallel(BM, BN):\n"
    "                T.atomic_add(C[by * BM + i, bx * BN + j], acc[i, j])\n"
    "\n"
    "    return main\n";

typedef struct AtomX { int n; int64_t lanes; } AtomX;
static void count_atomic_x(IrExpr *e, void *ctx) {
  AtomX *a = ctx;
  if (e->kind == IR_CALL && e->u.call.op == IRI_ATOMIC_ADD_X) a->n++, a->lanes = e->u.call.args[2]->u.ival;
}

TEST(interp_atomic_add_nest_vectorized) {
  enum { M = 128, N = 128, K = 96, S = 3 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"mm.py", SPLIT_ATOMIC, sizeof SPLIT_ATOMIC - 1};
  const char *params[] = {"M=128", "N=128", "K=96", "S=3", "BM=64", "BN=64", "BK=16", NULL};
  IrFunc *f = interp_compile(&c, &file, "mm", params);
  REQUIRE(f);
  AtomX ax = {0, 0};
  IrVisitor w = {NULL, count_atomic_x, &ax};
  ir_visit(f->body, &w);
  CHECK(ax.n == 1 && ax.lanes == 2);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B")),
         *cc = interp_global(&in, param(f, "C"));
  unsigned seed = 11;
  for (int e = 0; e < M * K; e++) a[e] = rnd(&seed);
  for (int e = 0; e < K * N; e++) b[e] = rnd(&seed);
  for (int e = 0; e < M * N; e++) cc[e] = 1.0;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double want = 1.0;
      for (int k = 0; k < K; k++) want += a[m * K + k] * b[k * N + n];
      bad += !(fabs(cc[m * N + n] - want) <= 1e-4);
    }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.use_swizzle outside a GEMM schedule (rasterize.c): the block indices are remapped, also
 * when the grid's GY rows fit in one panel (then blocks walk each column first), and the
 * remapping is a bijection: every tile is visited exactly once. */
static const char SWIZZLED_TILES[] =
    KERNEL_FILE_HEAD
    "def tiles(GX, GY, panel, order=\"row\"):\n"
    "    @T.prim_func\n"
    "    def main(out: T.Tensor((GY, GX), \"float32\")):\n"
    "        with T.Kernel(GX, GY, threads=32) as (bx, by):\n"
    "            T.use_swizzle(panel, order=order)\n"
    "            tx = T.get_thread_binding(0)\n"
    "            if tx == 0:\n"
    "                out[by, bx] = out[by, bx] + by * GX + bx + 1\n"
    "\n"
    "    return main\n";

static void find_raster_let(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_LET && strstr(s->u.let.var->name, "_r")) *(bool *)ctx = true;
}

/* x % 2 in the remap: the serpentine's odd-panel test */
static void find_mod2(IrExpr *e, void *ctx) {
  int64_t v;
  if (e->kind == IR_FLOORMOD && ir_is_const_int(e->u.ops[1], &v) && v == 2) *(bool *)ctx = true;
}

/* a floordiv by the constant *ctx[0]: sets ctx[1] */
static void find_div_by(IrExpr *e, void *ctx) {
  int64_t v, *want = ctx;
  if (e->kind == IR_FLOORDIV && ir_is_const_int(e->u.ops[1], &v) && v == want[0]) want[1] = 1;
}

/* want_mod2: whether the remap holds an x % 2 (1, 0; -1: either, e.g. panels of 2 rows);
 * order: T.use_swizzle's (NULL: row); group: a panel's blocks (panel x GX for rows, panel x GY
 * for columns), which the remap divides the launch index by; 0: not checked */
static void swizzle_case_ex(TestCtx *t, const char *gx, const char *gy, const char *panel, int GX, int GY,
                            bool serpentine, int want_mod2, const char *order, int64_t group) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  static const char *const key[] = {"ts.raster_serpentine"}, *const val[] = {"True"};
  if (serpentine) c.call_pc_keys = key, c.call_pc_values = val, c.ncall_pc = 1;
  SourceFile file = {"tiles.py", SWIZZLED_TILES, sizeof SWIZZLED_TILES - 1};
  const char *params[] = {gx, gy, panel, order, NULL};
  IrFunc *f = interp_compile(&c, &file, "tiles", params);
  REQUIRE(f);
  bool remapped = false, mod2 = false;
  IrVisitor w = {find_raster_let, NULL, &remapped};
  ir_visit(f->body, &w);
  CHECK(remapped);
  IrVisitor m = {NULL, find_mod2, &mod2};
  ir_visit(f->body, &m);
  CHECK(want_mod2 < 0 || mod2 == (want_mod2 == 1));
  if (group) {
    int64_t div[2] = {group, 0};
    IrVisitor d = {NULL, find_div_by, div};
    ir_visit(f->body, &d);
    CHECK(div[1] == 1);
  }
  Interp in = {0};
  double *out = interp_global(&in, param(f, "out"));
  for (int e = 0; e < GX * GY; e++) out[e] = 0;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int e = 0; e < GX * GY; e++) bad += out[e] != e + 1;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

TEST(interp_use_swizzle_one_panel) { swizzle_case_ex(t, "GX=12", "GY=2", "panel=10", 12, 2, false, -1, NULL, 0); }
TEST(interp_use_swizzle_partial_panel) { swizzle_case_ex(t, "GX=5", "GY=7", "panel=3", 5, 7, false, 0, NULL, 15); }
/* order="column": panels of 3 block columns (3 x GY = 21 blocks each), walking by; every tile once */
TEST(interp_use_swizzle_column) {
  swizzle_case_ex(t, "GX=5", "GY=7", "panel=3", 5, 7, false, 0, "order=\"column\"", 21);
  swizzle_case_ex(t, "GX=8", "GY=3", "panel=3", 8, 3, false, 0, "order=\"column\"", 9);
}
/* pass_configs ts.raster_serpentine: odd panels walk right to left (the panel's parity, a
 * % 2, appears in the remap); still every tile exactly once */
TEST(interp_use_swizzle_serpentine) { swizzle_case_ex(t, "GX=5", "GY=7", "panel=3", 5, 7, true, 1, NULL, 0); }

/* heavy_first.c: a kernel whose loop runs bx + 1 times (a causal triangle) walks bx backwards,
 * longest blocks first, with the same results; a loop that shrinks as bx grows, a while loop
 * (blocks that may wait for one another) or ts.heavy_first_blocks=False leave the order. */
static const char TRIANGLE[] =
    KERNEL_FILE_HEAD
    "def triangle(GX, GY, shrink, spin):\n"
    "    @T.prim_func\n"
    "    def main(out: T.Tensor((GY, GX), \"float32\")):\n"
    "        with T.Kernel(GX, GY, threads=32) as (bx, by):\n"
    "            tx = T.get_thread_binding(0)\n"
    "            n = T.ceildiv((GX - bx) * 64, 64) if shrink else T.min(T.ceildiv((bx + 1) * 64, 32) // 2, GX)\n"
    "            acc = T.alloc_var(\"float32\")\n"
    "            acc = 0.0\n"
    "            for k in T.serial(n):\n"
    "                acc = acc + k + 1 + by\n"
    "            if spin:\n"
    "                i = T.alloc_var(\"int32\")\n"
    "                i = 0\n"
    "                while i < 2:\n"
    "                    i = i + 1\n"
    "            if tx == 0:\n"
    "                out[by, bx] = acc\n"
    "\n"
    "    return main\n";

static void find_heavy_let(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_LET && strstr(s->u.let.var->name, "bx_h")) *(bool *)ctx = true;
}

static void triangle_case(TestCtx *t, bool shrink, bool spin, const char *config, bool want_reversed) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  static const char *const key[] = {"ts.heavy_first_blocks"};
  const char *val[] = {config};
  if (config) c.call_pc_keys = key, c.call_pc_values = val, c.ncall_pc = 1;
  SourceFile file = {"triangle.py", TRIANGLE, sizeof TRIANGLE - 1};
  const char *params[] = {"GX=6", "GY=3", shrink ? "shrink=True" : "shrink=False", spin ? "spin=True" : "spin=False", NULL};
  IrFunc *f = interp_compile(&c, &file, "triangle", params);
  REQUIRE(f);
  bool reversed = false;
  IrVisitor w = {find_heavy_let, NULL, &reversed};
  ir_visit(f->body, &w);
  CHECK(reversed == want_reversed);
  Interp in = {0};
  double *out = interp_global(&in, param(f, "out"));
  for (int e = 0; e < 18; e++) out[e] = -1;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 6; x++) {
      int n = shrink ? 6 - x : x + 1;
      bad += out[y * 6 + x] != n * (n + 1) / 2.0 + n * y;
    }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

TEST(interp_heavy_first_blocks) { triangle_case(t, false, false, NULL, true); }
TEST(interp_heavy_first_blocks_shrinking_loop) { triangle_case(t, true, false, NULL, false); }
TEST(interp_heavy_first_blocks_while_loop) { triangle_case(t, false, true, NULL, false); }
TEST(interp_heavy_first_blocks_off) { triangle_case(t, false, false, "False", false); }

/* uniform_select.c: a tile filled with select(bx * 8 + i >= k * 8 + j, 1, 2) in a loop over k
 * gets branches for the whole tile true (k < bx) and false (k > bx), the select itself only on
 * the diagonal; the lower triangle comes out the same.  Also for a sliding window (a
 * conjunction of two comparisons) and for a select that keeps the element on one side
 * (acc[i, j] = select(c, acc[i, j], 2): that branch is left out).  A term mixing the nest's
 * variables with others (i * k) or ts.uniform_selects=False leave the nest as written. */
enum { MASK_CAUSAL, MASK_MIXED, MASK_WINDOW, MASK_KEEP };
static const char MASKED_TILES[] =
    KERNEL_FILE_HEAD
    "def masked(GX, mode):\n"
    "    @T.prim_func\n"
    "    def main(out: T.Tensor((GX * 8, GX * 8), \"float32\")):\n"
    "        with T.Kernel(GX, threads=32) as bx:\n"
    "            acc = T.alloc_fragment((8, 8), \"float32\")\n"
    "            for k in T.serial(GX):\n"
    "                for i, j in T.Parallel(8, 8):\n"
    "                    acc[i, j] = 1.0\n"
    "                for i, j in T.Parallel(8, 8):\n"
    "                    q = bx * 8 + i\n"
    "                    if mode == 0:\n"
    "                        acc[i, j] = T.if_then_else(q >= k * 8 + j, 1.0, 2.0)\n"
    "                    elif mode == 1:\n"
    "                        acc[i, j] = T.if_then_else(i * k >= j, 1.0, 2.0)\n"
    "                    elif mode == 2:\n"
    "                        acc[i, j] = T.if_then_else(q >= k * 8 + j and q < k * 8 + j + 12, 1.0, 2.0)\n"
    "                    else:\n"
    "                        acc[i, j] = T.if_then_else(q >= k * 8 + j, acc[i, j], 2.0)\n"
    "                T.copy(acc, out[bx * 8 : (bx + 1) * 8, k * 8 : (k + 1) * 8])\n"
    "\n"
    "    return main\n";

static void count_ifs(IrStmt *s, void *ctx) { *(int *)ctx += s->kind == IR_S_IF; }

static bool mask_holds(int mode, int r, int col) {
  int i = r % 8, j = col % 8, k = col / 8;
  switch (mode) {
    case MASK_MIXED: return i * k >= j;
    case MASK_WINDOW: return r >= col && r < col + 12;
    default: return r >= col;
  }
}

static int masked_ifs(TestCtx *t, int mode, const char *config) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  static const char *const key[] = {"ts.uniform_selects"};
  const char *val[] = {config};
  if (config) c.call_pc_keys = key, c.call_pc_values = val, c.ncall_pc = 1;
  SourceFile file = {"masked.py", MASKED_TILES, sizeof MASKED_TILES - 1};
  char mode_param[16];
  snprintf(mode_param, sizeof mode_param, "mode=%d", mode);
  const char *params[] = {"GX=4", mode_param, NULL};
  IrFunc *f = interp_compile(&c, &file, "masked", params);
  if (!f) {
    CHECK(f);
    ts_compiler_fini(&c);
    return -1;
  }
  int ifs = 0;
  IrVisitor w = {count_ifs, NULL, &ifs};
  ir_visit(f->body, &w);
  Interp in = {0};
  double *out = interp_global(&in, param(f, "out"));
  for (int e = 0; e < 32 * 32; e++) out[e] = -1;
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < 32; r++)
    for (int col = 0; col < 32; col++) bad += out[r * 32 + col] != (mask_holds(mode, r, col) ? 1.0 : 2.0);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
  return ifs;
}

TEST(interp_uniform_selects) {
  for (int mode = MASK_CAUSAL; mode <= MASK_KEEP; mode++) {
    int off = masked_ifs(t, mode, "False"), on = masked_ifs(t, mode, NULL);
    CHECK(off >= 0 && on == off + (mode == MASK_MIXED ? 0 : 2));
  }
}

/* A warp spinning on a vote (`while T.warp_any(..)`, the test re-evaluated every round, with
 * `continue` and `break` in the body): each lane counts the rounds its warp ran, which is
 * the largest gap in that warp; the second warp stops early at a `break`. */
static const char VOTE_SPIN[] =
    KERNEL_FILE_HEAD
    "def spin():\n"
    "    @T.prim_func\n"
    "    def main(start: T.Tensor((64,), \"int32\"), rounds: T.Tensor((64,), \"int32\")):\n"
    "        with T.Kernel(1, threads=64) as bx:\n"
    "            tx = T.get_thread_binding()\n"
    "            x = T.alloc_var(\"int32\")\n"
    "            x = start[tx]\n"
    "            n = T.alloc_var(\"int32\")\n"
    "            n = 0\n"
    "            while T.warp_any(x < 10):\n"
    "                n += 1\n"
    "                if tx >= 32 and n == 3:\n"
    "                    break\n"
    "                if x >= 10:\n"
    "                    continue\n"
    "                x += 1\n"
    "            rounds[tx] = n\n"
    "\n"
    "    return main\n";

TEST(interp_while_warp_vote) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"spin.py", VOTE_SPIN, sizeof VOTE_SPIN - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "spin", params);
  REQUIRE(f);
  Interp in = {0};
  double *start = interp_global(&in, param(f, "start")), *rounds = interp_global(&in, param(f, "rounds"));
  for (int th = 0; th < 64; th++) start[th] = th % 7, rounds[th] = -1;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int th = 0; th < 64; th++) bad += rounds[th] != (th < 32 ? 10 : 3); /* warp 0's gap: 10 - 0 */
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* pipeline_serial.c: a serial loop copying src[k] into shared memory, adding 1 and storing
 * row k + 1 of buf is pipelined (s gets two stages), and so is the same loop written
 * T.Pipelined(num_stages=0), which TileLang runs serially (num_stages=1 stays as written); the
 * same loop reading buf[k], which iteration k - 1 stored, is not (inject_pipeline refuses
 * it), nor is one whose body may wait (a while loop; pipeline_serial leaves it): loading the
 * next row early could read it before it is written or published.  Each computes
 * buf[k] = x[k - 1] + 1. */
enum { CHAIN_SRC, CHAIN_RAW, CHAIN_SPIN, CHAIN_STAGES0, CHAIN_STAGES1 };
static const char CHAIN[] =
    KERNEL_FILE_HEAD
    "def chain(N, mode):\n"
    "    @T.prim_func\n"
    "    def main(buf: T.Tensor((N + 1, 32), \"float32\"), src: T.Tensor((N, 32), \"float32\")):\n"
    "        with T.Kernel(1, threads=32) as bx:\n"
    "            s = T.alloc_shared((1, 32), \"float32\")\n"
    "            for k in T.Pipelined(N, num_stages=mode - 3) if mode >= 3 else T.serial(N):\n"
    "                if mode == 1:\n"
    "                    T.copy(buf[k : k + 1, 0:32], s)\n"
    "                else:\n"
    "                    T.copy(src[k : k + 1, 0:32], s)\n"
    "                if mode == 2:\n"
    "                    i = T.alloc_var(\"int32\")\n"
    "                    i = 0\n"
    "                    while i < 2:\n"
    "                        i = i + 1\n"
    "                for r, j in T.Parallel(1, 32):\n"
    "                    buf[k + 1 + r, j] = s[r, j] + 1.0\n"
    "\n"
    "    return main\n";

static void find_s_alloc(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_ALLOC && !strcmp(s->u.alloc.buf->name, "s")) *(int *)ctx = s->u.alloc.buf->ndim;
}

static void chain_case(TestCtx *t, int mode, int want_ndim) {
  enum { N = 5 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"chain.py", CHAIN, sizeof CHAIN - 1};
  char m[16];
  snprintf(m, sizeof m, "mode=%d", mode);
  const char *params[] = {"N=5", m, NULL};
  IrFunc *f = interp_compile(&c, &file, "chain", params);
  REQUIRE(f);
  int ndim = 0;
  IrVisitor w = {find_s_alloc, NULL, &ndim};
  ir_visit(f->body, &w);
  CHECK(ndim == want_ndim);
  Interp in = {0};
  double *buf = interp_global(&in, param(f, "buf")), *src = interp_global(&in, param(f, "src"));
  for (int e = 0; e < (N + 1) * 32; e++) buf[e] = e < 32 ? e : -1;
  for (int e = 0; e < N * 32; e++) src[e] = 100 + e;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int k = 1; k <= N; k++)
    for (int j = 0; j < 32; j++)
      bad += buf[k * 32 + j] != (mode == CHAIN_RAW ? j + k : 100 + (k - 1) * 32 + j + 1);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

TEST(interp_pipeline_serial_loop) { chain_case(t, CHAIN_SRC, 3); }
TEST(interp_pipeline_serial_loop_reads_what_it_writes) { chain_case(t, CHAIN_RAW, 2); }
TEST(interp_pipeline_serial_loop_may_wait) { chain_case(t, CHAIN_SPIN, 2); }
TEST(interp_pipeline_serial_loop_stages0) { chain_case(t, CHAIN_STAGES0, 3); }
TEST(interp_pipeline_serial_loop_stages1) { chain_case(t, CHAIN_STAGES1, 2); }

/* The distributed form of the same hazard: a serial loop that waits for row k's flag before
 * copying row k stays serial (compiled only: the interpreter runs no flag waits).
 * pipeline_serial leaves it (a wait in the body), and inject_pipeline, given it pipelined,
 * also keeps it serial today; the test holds the result, whichever refuses. */
static const char CHAIN_FLAG[] =
    KERNEL_FILE_HEAD
    "def chainw(N):\n"
    "    @T.prim_func\n"
    "    def main(buf: T.Tensor((N + 1, 32), \"float32\"), src: T.Tensor((N, 32), \"float32\"),\n"
    "             flag: T.Tensor((N,), \"int32\")):\n"
    "        with T.Kernel(1, threads=32) as bx:\n"
    "            s = T.alloc_shared((1, 32), \"float32\")\n"
    "            for k in T.serial(N):\n"
    "                T.wait_ge(flag[k], 1)\n"
    "                T.copy(src[k : k + 1, 0:32], s)\n"
    "                for r, j in T.Parallel(1, 32):\n"
    "                    buf[k + 1 + r, j] = s[r, j] + 1.0\n"
    "\n"
    "    return main\n";

TEST(pipeline_serial_loop_waiting_for_a_flag_stays_serial) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  SourceFile file = {"chainw.py", CHAIN_FLAG, sizeof CHAIN_FLAG - 1};
  const char *params[] = {"N=5", NULL};
  IrFunc *f = interp_compile(&c, &file, "chainw", params);
  REQUIRE(f);
  int ndim = 0;
  IrVisitor w = {find_s_alloc, NULL, &ndim};
  ir_visit(f->body, &w);
  CHECK(ndim == 2);
  ts_compiler_fini(&c);
}

/* T.Parallel over a run-time extent bounded by a constant (T.min(valid_len, 64)): the nest
 * runs over the bound with the body guarded (bound_parallel.c); rows past valid_len keep the
 * zeros the first nest wrote, and a valid_len past the bound stops at it. */
static const char DYN_PARALLEL[] =
    KERNEL_FILE_HEAD
    "def dyn(n, threads):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n,), \"float32\"), B: T.Tensor((n,), \"float32\"), valid_len: T.int32):\n"
    "        with T.Kernel(1, threads=threads):\n"
    "            for i in T.Parallel(n):\n"
    "                B[i] = 0.0\n"
    "            span = T.min(valid_len, n)\n"
    "            for i in T.Parallel(span):\n"
    "                B[i] = A[i] - 1.0\n"
    "\n"
    "    return main\n";

TEST(interp_parallel_dynamic_extent) {
  enum { N = 64 };
  for (int valid = 0; valid <= 100; valid += 25) {
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    c.debug = true;
    SourceFile file = {"dyn.py", DYN_PARALLEL, sizeof DYN_PARALLEL - 1};
    const char *params[] = {"n=64", "threads=32", NULL};
    IrFunc *f = interp_compile(&c, &file, "dyn", params);
    REQUIRE(f);
    Interp in = {0};
    double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
    for (int i = 0; i < N; i++) a[i] = i * 0.5, b[i] = 99;
    for (int i = 0; i < f->nparams; i++)
      if (f->params[i].var) interp_set_scalar(&in, f->params[i].var, valid);
    interp_run(&in, f);
    CHECK(in.errors == 0);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += b[i] != (i < valid ? a[i] - 1.0 : 0.0);
    CHECK(bad == 0);
    interp_free(&in);
    ts_compiler_fini(&c);
  }
}

/* T.Parallel over a run-time extent with no constant bound (bound_parallel.c): over global
 * memory, chunks of the thread count with each iteration guarded; around a nest over a
 * fragment its variable does not index, a serial loop every thread runs (a column sum here). */
static const char DYN_UNBOUNDED[] =
    KERNEL_FILE_HEAD
    "def dyn(n, threads):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n,), \"float32\"), B: T.Tensor((n,), \"float32\"),\n"
    "             C: T.Tensor((16,), \"float32\"), m: T.int32):\n"
    "        with T.Kernel(1, threads=threads):\n"
    "            acc = T.alloc_fragment((16,), \"float32\")\n"
    "            for i in T.Parallel(m):\n"
    "                B[i] = A[i] * 2.0\n"
    "            for j in T.Parallel(16):\n"
    "                acc[j] = 0.0\n"
    "            for r in T.Parallel(m // 16):\n"
    "                for j in T.Parallel(16):\n"
    "                    acc[j] += A[r * 16 + j]\n"
    "            for j in T.Parallel(16):\n"
    "                C[j] = acc[j]\n"
    "\n"
    "    return main\n";

TEST(interp_parallel_unbounded_dynamic_extent) {
  enum { N = 128 };
  for (int m = 0; m <= N; m += 48) {
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    c.debug = true;
    SourceFile file = {"dyn.py", DYN_UNBOUNDED, sizeof DYN_UNBOUNDED - 1};
    const char *params[] = {"n=128", "threads=32", NULL};
    IrFunc *f = interp_compile(&c, &file, "dyn", params);
    REQUIRE(f);
    Interp in = {0};
    double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
    double *cc = interp_global(&in, param(f, "C"));
    for (int i = 0; i < N; i++) a[i] = i * 0.5 + 1, b[i] = 99;
    for (int i = 0; i < f->nparams; i++)
      if (f->params[i].var) interp_set_scalar(&in, f->params[i].var, m);
    interp_run(&in, f);
    CHECK(in.errors == 0);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += b[i] != (i < m ? a[i] * 2.0 : 99.0);
    for (int j = 0; j < 16; j++) {
      double want = 0;
      for (int r = 0; r < m / 16; r++) want += a[r * 16 + j];
      bad += cc[j] != want;
    }
    CHECK(bad == 0);
    interp_free(&in);
    ts_compiler_fini(&c);
  }
}

/* ... but a fragment indexed by such a loop's variable has no layout: refused, naming it. */
TEST(parallel_unbounded_extent_indexing_a_fragment_is_refused) {
  static const char src[] =
      KERNEL_FILE_HEAD
      "def dyn(n):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((n,), \"float32\"), m: T.int32):\n"
      "        with T.Kernel(1, threads=32):\n"
      "            acc = T.alloc_fragment((64,), \"float32\")\n"
      "            for i in T.Parallel(m):\n"
      "                acc[i % 64] = 0.0\n"
      "            for i in T.Parallel(64):\n"
      "                A[i] = acc[i]\n"
      "\n"
      "    return main\n";
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  SourceFile file = {"dyn.py", src, sizeof src - 1};
  const char *params[] = {"n=64", NULL};
  CHECK(interp_compile(&c, &file, "dyn", params) == NULL);
  const char *d = sb_str(&c.diag.out);
  CHECK(strstr(d, "dyn.py:11:13: error: ") && strstr(d, "fragment 'acc' is indexed by T.Parallel variable 'i'"));
  ts_compiler_fini(&c);
}

/* A fragment written at flattened indices (`B_local[i * N + j]` in T.Parallel(M, N)) and read
 * plainly over T.Parallel(M * N), TileLang's composable indices (flat_fragment_index.c): the
 * fragment takes the shape (M, N), the plain nest is split, and every element reaches B.  N = 24
 * pads its rows over the threads (a layout no 1-D view could merge). */
static const char COMPOSABLE[] =
    KERNEL_FILE_HEAD
    "def comp(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M * N,), \"float32\")):\n"
    "        with T.Kernel(1, threads=32):\n"
    "            A_local = T.alloc_fragment((M, N), \"float32\")\n"
    "            B_local = T.alloc_fragment((M * N,), \"float32\")\n"
    "            T.copy(A, A_local)\n"
    "            for i, j in T.Parallel(M, N):\n"
    "                B_local[i * N + j] = A_local[i, j] + 1.0\n"
    "            for k in T.Parallel(M * N):\n"
    "                B[k] = B_local[k] * 2.0\n"
    "\n"
    "    return main\n";

static void composable_case(TestCtx *t, const char *n_param, int M, int N) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"comp.py", COMPOSABLE, sizeof COMPOSABLE - 1};
  const char *params[] = {"M=8", n_param, NULL};
  IrFunc *f = interp_compile(&c, &file, "comp", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  for (int i = 0; i < M * N; i++) a[i] = i * 0.25, b[i] = -7;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int i = 0; i < M * N; i++) bad += b[i] != (a[i] + 1.0) * 2.0;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* Two fragments whose splits meet in one nest: C's split (2, 4) would split the j of
 * B[i * 8 + j] + C[j]; that waits until B has its own shape (a later round), and every value
 * still reaches B (B[i * 8 + j] = A[i, j] + j). */
static const char COMPOSABLE2[] =
    KERNEL_FILE_HEAD
    "def comp2():\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((4, 8), \"float32\"), B: T.Tensor((32,), \"float32\")):\n"
    "        with T.Kernel(1, threads=32):\n"
    "            A_local = T.alloc_fragment((4, 8), \"float32\")\n"
    "            B_local = T.alloc_fragment((32,), \"float32\")\n"
    "            C_local = T.alloc_fragment((8,), \"float32\")\n"
    "            T.copy(A, A_local)\n"
    "            for a, b in T.Parallel(2, 4):\n"
    "                C_local[a * 4 + b] = (a * 4 + b) * 1.0\n"
    "            for i, j in T.Parallel(4, 8):\n"
    "                B_local[i * 8 + j] = A_local[i, j] + C_local[j]\n"
    "            for k in T.Parallel(32):\n"
    "                B[k] = B_local[k]\n"
    "\n"
    "    return main\n";

TEST(interp_composable_fragment_index_two_splits_meet) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"comp2.py", COMPOSABLE2, sizeof COMPOSABLE2 - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "comp2", params);
  if (!f) fprintf(stderr, "%s", sb_str(&c.diag.out));
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  for (int i = 0; i < 32; i++) a[i] = i * 0.5, b[i] = -7;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int i = 0; i < 32; i++) bad += b[i] != a[i] + (i % 8);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

TEST(interp_composable_fragment_index) { composable_case(t, "N=32", 8, 32); }
TEST(interp_composable_fragment_index_padded_rows) { composable_case(t, "N=24", 8, 24); }

/* A T.Parallel read whose index may go below 0 by its own arithmetic (`by * BM + i - 10`) is
 * guarded from below as from above: those elements read 0, or the value
 * T.annotate_safe_value gives the tensor (element-wise then, not the zero-filling vector
 * copy). */
static const char SHIFTED_COPY[] =
    KERNEL_FILE_HEAD
    "def shifted(M, N, BM, pad):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(M, BM), threads=32) as by:\n"
    "            s = T.alloc_shared((BM, N), \"float32\")\n"
    "            if pad != 0:\n"
    "                T.annotate_safe_value({A: pad})\n"
    "            for i, j in T.Parallel(BM, N):\n"
    "                s[i, j] = A[by * BM + i - 10, j]\n"
    "            for i, j in T.Parallel(BM, N):\n"
    "                B[by * BM + i, j] = s[i, j]\n"
    "\n"
    "    return main\n";

TEST(interp_negative_index_guard_and_safe_value) {
  enum { M = 32, N = 8 };
  for (int pad = 0; pad <= 7; pad += 7) {
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    c.debug = true;
    SourceFile file = {"shifted.py", SHIFTED_COPY, sizeof SHIFTED_COPY - 1};
    char padp[16];
    snprintf(padp, sizeof padp, "pad=%d", pad);
    const char *params[] = {"M=32", "N=8", "BM=16", padp, NULL};
    IrFunc *f = interp_compile(&c, &file, "shifted", params);
    REQUIRE(f);
    Interp in = {0};
    double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
    for (int i = 0; i < M * N; i++) a[i] = i + 1;
    interp_run(&in, f);
    CHECK(in.errors == 0); /* no read outside A */
    int bad = 0;
    for (int r = 0; r < M; r++)
      for (int j = 0; j < N; j++) bad += b[r * N + j] != (r >= 10 ? a[(r - 10) * N + j] : pad);
    CHECK(bad == 0);
    interp_free(&in);
    ts_compiler_fini(&c);
  }
}

/* T.cumsum of a region (`big[0:M, 0:N]` of a wider buffer, in place) and T.cummax of an offset
 * sub-region (`s[r0:r1, :]`): only the region is scanned, from its own first row. */
static const char REGION_SCAN[] =
    KERNEL_FILE_HEAD
    "def region_scan(M, N, NBIG, r0, r1):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, N), \"float32\"), C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=64):\n"
    "            big = T.alloc_shared((M, NBIG), \"float32\")\n"
    "            s = T.alloc_shared((M, N), \"float32\")\n"
    "            for i, j in T.Parallel(M, NBIG):\n"
    "                big[i, j] = A[i, j] if j < N else 0.0\n"
    "            for i, j in T.Parallel(M, N):\n"
    "                s[i, j] = A[i, j]\n"
    "            T.cumsum(src=big[0:M, 0:N], dst=big[0:M, 0:N], dim=0)\n"
    "            T.cummax(src=s[r0:r1, :], dim=0)\n"
    "            for i, j in T.Parallel(M, N):\n"
    "                B[i, j] = big[i, j]\n"
    "                C[i, j] = s[i, j]\n"
    "\n"
    "    return main\n";

TEST(interp_scan_of_regions) {
  enum { M = 16, N = 8, R0 = 4, R1 = 12 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"region_scan.py", REGION_SCAN, sizeof REGION_SCAN - 1};
  const char *params[] = {"M=16", "N=8", "NBIG=24", "r0=4", "r1=12", NULL};
  IrFunc *f = interp_compile(&c, &file, "region_scan", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  double *cc = interp_global(&in, param(f, "C"));
  unsigned s = 9;
  for (int i = 0; i < M * N; i++) a[i] = rnd(&s);
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int j = 0; j < N; j++) {
    double sum = 0, mx = -1e30;
    for (int i = 0; i < M; i++) {
      sum += a[i * N + j];
      bad += fabs(b[i * N + j] - sum) > 1e-9;
      if (i >= R0 && i < R1) mx = fmax(mx, a[i * N + j]);
      bad += cc[i * N + j] != (i >= R0 && i < R1 ? mx : a[i * N + j]);
    }
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.atomic_add(B, A_local) from a thread's registers (every thread holds the same copy) adds
 * each element once, not once per thread (TileLang's test_tile_atomic_add_scalar). */
static const char LOCAL_ATOMIC[] =
    KERNEL_FILE_HEAD
    "def local_atomic(n):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n,), \"float32\"), B: T.Tensor((n,), \"float32\")):\n"
    "        with T.Kernel(1, threads=64):\n"
    "            A_local = T.alloc_local([n], \"float32\")\n"
    "            T.copy(A, A_local)\n"
    "            T.clear(B)\n"
    "            T.atomic_add(B, A_local)\n"
    "            T.atomic_add(B, 1)\n"
    "\n"
    "    return main\n";

TEST(interp_atomic_from_registers_adds_once) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"local_atomic.py", LOCAL_ATOMIC, sizeof LOCAL_ATOMIC - 1};
  const char *params[] = {"n=4", NULL};
  IrFunc *f = interp_compile(&c, &file, "local_atomic", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  for (int i = 0; i < 4; i++) a[i] = i + 0.5;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  for (int i = 0; i < 4; i++) CHECK(b[i] == a[i] + 1);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.tma_copy(shared, global): a TMA store of a tile the threads wrote (scaled rows of A), issued
 * by one thread after the block barrier, waited for with T.tma_store_wait(). */
static const char TMA_STORE[] =
    KERNEL_FILE_HEAD
    "def tma_store(M, N, BM):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(M // BM, threads=128) as bx:\n"
    "            S = T.alloc_shared((BM, N), \"float32\")\n"
    "            for i, j in T.Parallel(BM, N):\n"
    "                S[i, j] = A[bx * BM + i, j] * 2.0\n"
    "            T.tma_copy(S, B[bx * BM, 0])\n"
    "            T.tma_store_wait()\n"
    "\n"
    "    return main\n";

TEST(interp_tma_store) {
  enum { M = 32, N = 32 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"tma_store.py", TMA_STORE, sizeof TMA_STORE - 1};
  const char *params[] = {"M=32", "N=32", "BM=16", NULL};
  IrFunc *f = interp_compile(&c, &file, "tma_store", params);
  REQUIRE(f);
  CHECK(f->ntma == 1);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  for (int i = 0; i < M * N; i++) a[i] = i % 17 - 3;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int i = 0; i < M * N; i++) bad += b[i] != 2 * a[i];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.Broadcast / T.Ramp (TIR's vector constructors) as register arrays a slice stores: an int8
 * value broadcast over 32 lanes (TileLang's issue 2480) and a float ramp. */
static const char VECTOR_MAKE[] =
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@T.prim_func\n"
    "def vector_make(S: T.Tensor((1,), \"int8\"), O: T.Tensor((32,), \"int8\"), R: T.Tensor((8,), \"float32\")):\n"
    "    with T.Kernel(1, threads=1):\n"
    "        packed = T.alloc_local((32,), \"int8\")\n"
    "        packed[0:32] = T.Broadcast(S[0], 32)\n"
    "        for i in T.serial(32):\n"
    "            O[i] = packed[i]\n"
    "        R[0:8] = T.Ramp(T.float32(1.5), T.float32(0.25), 8)\n";

TEST(interp_broadcast_and_ramp) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"vector_make.py", VECTOR_MAKE, sizeof VECTOR_MAKE - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "vector_make", params);
  REQUIRE(f);
  Interp in = {0};
  double *s = interp_global(&in, interp_param(f, "S")), *o = interp_global(&in, interp_param(f, "O"));
  double *r = interp_global(&in, interp_param(f, "R"));
  s[0] = -37;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int i = 0; i < 32; i++) bad += o[i] != -37;
  for (int i = 0; i < 8; i++) bad += r[i] != 1.5 + 0.25 * i;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.Parallel(M, N, loop_layout=T.Fragment(...)): TileLang's identity loop layout (row i on
 * thread i) is the nest's layout, and the fragment it writes takes it: element (1, 0) on
 * thread 1, (0, 4) on thread 0; the same through T.copy(A, x, loop_layout=...).  A row held
 * whole by one thread has its registers in runs of 4, so x is stored to B as float4.  The nest
 * without it gets a layout of its own (4 columns a thread).  B = 2A every way, no races. */
static const char LOOP_LAYOUT_SRC[] =
    KERNEL_FILE_HEAD
    "def loop_layout_copy(M, N, pinned, via_copy):\n"
    "    def loop_layout_fn(i, j):\n"
    "        return i, j\n"
    "\n"
    "    layout = T.Fragment((M, N), forward_fn=loop_layout_fn) if pinned else None\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            x = T.alloc_fragment((M, N), \"float32\")\n"
    "            if via_copy:\n"
    "                T.copy(A, x, loop_layout=layout)\n"
    "                for i, j in T.Parallel(M, N):\n"
    "                    x[i, j] = x[i, j] * 2\n"
    "            else:\n"
    "                for i, j in T.Parallel(M, N, loop_layout=layout):\n"
    "                    x[i, j] = A[i, j] * 2\n"
    "            T.copy(x, B)\n"
    "\n"
    "    return main\n";

static void find_x(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_ALLOC && !strcmp(s->u.alloc.buf->name, "x")) *(IrBuffer **)ctx = s->u.alloc.buf;
}
static void count_vec4_stores(IrStmt *s, void *ctx) {
  *(int *)ctx += s->kind == IR_S_STORE && s->u.store.lanes == 4;
}
static void loop_layout_case(TestCtx *t, bool pinned, bool via_copy) {
  enum { M = 128, N = 32 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"loop_layout.py", LOOP_LAYOUT_SRC, sizeof LOOP_LAYOUT_SRC - 1};
  const char *p[] = {"M=128", "N=32", pinned ? "pinned=True" : "pinned=False",
                     via_copy ? "via_copy=True" : "via_copy=False", NULL};
  IrFunc *f = interp_compile(&c, &file, "loop_layout_copy", p);
  REQUIRE(f);
  IrBuffer *x = NULL;
  IrVisitor v = {find_x, NULL, &x};
  ir_visit(f->body, &v);
  REQUIRE(x && x->fragment);
  int64_t t10 = fragment_thread_of(x->fragment, (int64_t[]){1, 0}), t04 = fragment_thread_of(x->fragment, (int64_t[]){0, 4});
  CHECK(pinned ? t10 == 1 && t04 == 0 : t04 != 0);
  int vec4 = 0; /* a row held whole by its thread moves in runs of 4 registers: float4 stores to B */
  IrVisitor sv = {count_vec4_stores, NULL, &vec4};
  ir_visit(f->body, &sv);
  if (pinned) CHECK(vec4 >= 1);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  for (int e = 0; e < M * N; e++) a[e] = e * 0.5 - 7;
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int e = 0; e < M * N; e++) bad += b[e] != 2 * a[e];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}
TEST(interp_loop_layout_pinned) { loop_layout_case(t, true, false); }
TEST(interp_loop_layout_free) { loop_layout_case(t, false, false); }
TEST(interp_loop_layout_of_copy) { loop_layout_case(t, true, true); }

/* TileLang's packed x2 arithmetic over TIR vector indices: idx = T.Ramp(2 tid, 1, 2) makes
 * A[idx] a gather of two lanes and C[idx] = ... a scatter; T.add2 / T.fma2 / T.abs2 work lane
 * by lane.  C = |A + B|, D = A * B + C lane for lane. */
static const char PACKED_SRC[] =
    KERNEL_FILE_HEAD
    "def packed(M):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M * 2,), \"float32\"), B: T.Tensor((M * 2,), \"float32\"),\n"
    "             C: T.Tensor((M * 2,), \"float32\"), D: T.Tensor((M * 2,), \"float32\")):\n"
    "        with T.Kernel(1, threads=M):\n"
    "            tid = T.get_thread_binding()\n"
    "            idx = T.Ramp(tid * 2, 1, 2)\n"
    "            C[idx] = T.abs2(T.add2(A[idx], B[idx]))\n"
    "            D[idx] = T.fma2(A[idx], B[idx], C[idx])\n"
    "\n"
    "    return main\n";

TEST(interp_packed_x2_ramp_lanes) {
  enum { M = 64 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"packed.py", PACKED_SRC, sizeof PACKED_SRC - 1};
  const char *p[] = {"M=64", NULL};
  IrFunc *f = interp_compile(&c, &file, "packed", p);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  double *cc = interp_global(&in, param(f, "C")), *d = interp_global(&in, param(f, "D"));
  for (int e = 0; e < 2 * M; e++) a[e] = e * 0.25 - 9, b[e] = 3 - e * 0.5;
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int e = 0; e < 2 * M; e++) {
    double s = fabs(a[e] + b[e]);
    bad += cc[e] != s || fabs(d[e] - (a[e] * b[e] + s)) > 1e-4;
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* Negative indices (TileLang's issue 2554 and LegalizeNegativeIndex): a T.Ramp index in the
 * last dim of a 2-D tensor, and lanes of a Ramp that are negative at run time counting from the
 * end (A[T.Ramp(t - 2, 1, 4)] at t = 0 reads A[n - 2], A[n - 1], A[0], A[1]); a constant
 * negative scalar index counts from the end too (A[-1] is A[n - 1]). */
static const char NEGATIVE_SRC[] =
    KERNEL_FILE_HEAD
    "def negative(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), B: T.Tensor((4, 4), \"float32\"), C: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(1, threads=1):\n"
    "            for t in T.serial(4):\n"
    "                B[t, T.Ramp(0, 1, 4)] = A[T.Ramp(t - 2, 1, 4)]\n"
    "            for t in T.serial(2):\n"
    "                C[T.Ramp(t * 4 - 3, 1, 4)] = B[t, T.Ramp(0, 1, 4)]\n"
    "            C[4] = A[-1]\n"
    "            C[-3] = A[T.int32(-2)]\n"
    "\n"
    "    return main\n";

TEST(interp_negative_indices) {
  enum { N = 64 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"negative.py", NEGATIVE_SRC, sizeof NEGATIVE_SRC - 1};
  const char *p[] = {"N=64", NULL};
  IrFunc *f = interp_compile(&c, &file, "negative", p);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  double *cc = interp_global(&in, param(f, "C"));
  for (int e = 0; e < N; e++) a[e] = 100 + e, cc[e] = -1;
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < 4; r++)
    for (int l = 0; l < 4; l++) bad += b[r * 4 + l] != a[(r - 2 + l + N) % N];
  CHECK(bad == 0);
  /* rows 0 and 1 of B land at C[-3 .. 0] and C[1 .. 4], then C[4] = A[-1], C[-3] = A[-2] */
  double want[N];
  for (int e = 0; e < N; e++) want[e] = -1;
  for (int r = 0; r < 2; r++)
    for (int l = 0; l < 4; l++) want[(r * 4 - 3 + l + N) % N] = b[r * 4 + l];
  want[4] = a[N - 1];
  want[N - 3] = a[N - 2];
  for (int e = 0; e < N; e++) bad += cc[e] != want[e];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* tests/codegen/gemm_fma.py: a float64 T.gemm in a pipelined K loop, which the tensor cores
 * do not take, computed with FMA (front/gemm_fma.c): C = A @ B. */
TEST(interp_gemm_fma) {
  CodegenRun r;
  if (!codegen_run(t, &r, "tests/codegen/gemm_fma.py", "gemm_fma")) return;
  double *cc = interp_global(&r.in, param(r.f, "C"));
  int bad = 0;
  for (int e = 0; e < 64 * 64; e++) bad += !(fabs(cc[e] - r.ab[e]) <= 1e-9);
  CHECK(bad == 0);
  codegen_free(&r);
}

/* Runs the FMA GEMM of a tests/codegen file (compiled for `target` with `params`) on random A
 * and B of [M, K] and [K, N] row-major, and counts the elements of C off `scale` * A @ B. */
static int fma_gemm_errors(TestCtx *t, const char *path, const char *func, const char *const *params, TsTarget target,
                           int M, int N, int K, double scale, double tol) {
  TsCompiler c;
  ts_compiler_init(&c, target);
  c.debug = true;
  size_t len = 0;
  char *text = ts_read_file(path, &len);
  IrFunc *f = NULL;
  if (text) {
    SourceFile file = {path, text, len};
    f = interp_compile(&c, &file, func, params);
  }
  int bad = -1;
  if (f) {
    Interp in = {0};
    double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
    double *cc = interp_global(&in, param(f, "C"));
    unsigned seed = 7;
    for (int e = 0; e < M * K; e++) a[e] = rnd(&seed);
    for (int e = 0; e < K * N; e++) b[e] = rnd(&seed);
    interp_run(&in, f);
    CHECK(in.errors == 0 && in.races == 0);
    bad = 0;
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double sum = 0;
        for (int k = 0; k < K; k++) sum += a[m * K + k] * b[k * N + n];
        bad += !(fabs(cc[m * N + n] - scale * sum) <= tol);
      }
    interp_free(&in);
  }
  free(text);
  ts_compiler_fini(&c);
  return bad;
}

/* tests/codegen/gemm_fma_sm75.py on an sm_75 target: two float32 T.gemm computed with FMA, the
 * second with A in registers (layout inference keeps each thread's rows of A): C = 2 A @ B. */
TEST(interp_gemm_fma_registers) {
  const char *params[] = {NULL};
  CHECK(fma_gemm_errors(t, "tests/codegen/gemm_fma_sm75.py", "mm", params, (TsTarget){75, false}, 64, 64, 32, 2, 1e-3) ==
        0);
}

/* tests/codegen/gemm_fma.py with a_in_regs: the float64 FMA GEMM of a pipelined K loop taking A
 * through a fragment copied from its shared stage each iteration: C = A @ B. */
TEST(interp_gemm_fma_pipelined_registers) {
  const char *params[] = {"a_in_regs=True", NULL};
  CHECK(fma_gemm_errors(t, "tests/codegen/gemm_fma.py", "gemm_fma", params, (TsTarget){90, true}, 64, 64, 64, 1, 1e-9) ==
        0);
}

/* `for tx in T.thread_binding(n, thread="threadIdx.x"):` inside a T.Kernel (TVM's thread-bound
 * loop): every thread runs the body once with its index; two axes nested. */
static const char THREAD_LOOP_SRC[] =
    KERNEL_FILE_HEAD
    "def bound():\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((4, 32), \"float32\")):\n"
    "        with T.Kernel(1, threads=(32, 4)):\n"
    "            for ty in T.thread_binding(4, thread=\"threadIdx.y\"):\n"
    "                for tx in T.thread_binding(0, 32, thread=\"threadIdx.x\"):\n"
    "                    A[ty, tx] = ty * 100 + tx\n"
    "\n"
    "    return main\n";

TEST(interp_thread_binding_loop) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"bound.py", THREAD_LOOP_SRC, sizeof THREAD_LOOP_SRC - 1};
  const char *p[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "bound", p);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A"));
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 32; x++) bad += a[y * 32 + x] != y * 100 + x;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* A TIR-style kernel (TVMScript as TileLang's older tests write it): `A_ptr: T.handle` bound by
 * T.match_buffer, and thread-bound loops over blockIdx and threadIdx outside any T.Kernel as
 * the kernel's launch: B = A * 2 + ty over a 4 x 64 grid of 32 x 2 threads. */
static const char TIR_STYLE_SRC[] =
    KERNEL_FILE_HEAD
    "def tir():\n"
    "    @T.prim_func\n"
    "    def main(A_ptr: T.handle, B_ptr: T.handle):\n"
    "        A = T.match_buffer(A_ptr, (256, 64), dtype=T.float32, align=16)\n"
    "        B = T.match_buffer(B_ptr, (256, 64), \"float32\")\n"
    "        for bx in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
    "            for ty in T.thread_binding(2, thread=\"threadIdx.y\"):\n"
    "                for tx in T.thread_binding(0, 32, thread=\"threadIdx.x\"):\n"
    "                    for r in T.serial(32):\n"
    "                        B[bx * 64 + r * 2 + ty, tx * 2] = A[bx * 64 + r * 2 + ty, tx * 2] * 2 + ty\n"
    "                        B[bx * 64 + r * 2 + ty, tx * 2 + 1] = A[bx * 64 + r * 2 + ty, tx * 2 + 1] * 2 + ty\n"
    "\n"
    "    return main\n";

TEST(interp_tir_style_kernel) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"tir.py", TIR_STYLE_SRC, sizeof TIR_STYLE_SRC - 1};
  const char *p[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "tir", p);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A_ptr")), *b = interp_global(&in, param(f, "B_ptr"));
  for (int e = 0; e < 256 * 64; e++) a[e] = e % 97 - 40;
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int row = 0; row < 256; row++)
    for (int col = 0; col < 64; col++) bad += b[row * 64 + col] != a[row * 64 + col] * 2 + row % 2;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* TVMScript's variable: `off = T.int32()` declares an int32 scalar and T.let(off, value) gives
 * it its value (TileLang's language/test_tilelang_language_alias.py), read afterwards like any
 * T.alloc_var. */
static const char LET_VAR[] =
    KERNEL_FILE_HEAD
    "def shifted(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), B: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(N // 32, threads=32) as bx:\n"
    "            off = T.int32()\n"
    "            T.let(off, bx * 32)\n"
    "            tx = T.get_thread_binding(0)\n"
    "            B[off + tx] = A[off + tx] + off\n"
    "\n"
    "    return main\n";

TEST(interp_let_declared_var) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  SourceFile file = {"let_var.py", LET_VAR, sizeof LET_VAR - 1};
  const char *params[] = {"N=96", NULL};
  IrFunc *f = interp_compile(&c, &file, "shifted", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  for (int i = 0; i < 96; i++) a[i] = i * 0.5, b[i] = -1;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int i = 0; i < 96; i++) bad += b[i] != i * 0.5 + i / 32 * 32;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.reshape of a fragment that merges dims spread over threads (TileLang's
 * language/test_tilelang_language_reshape.py test_reshape_fragment): the 1-D view shares the
 * 2-D fragment's registers (fragment_reshape's merge), and copying it out gives the rows in
 * order. */
static const char RESHAPE_MERGE[] =
    KERNEL_FILE_HEAD
    "def merged(N, M, threads):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N // M, M), \"float32\"), B: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(1, threads=threads) as _:\n"
    "            A_shared = T.alloc_shared((N // M, M), \"float32\")\n"
    "            A_local = T.alloc_fragment((N // M, M), \"float32\")\n"
    "            B_shared = T.alloc_shared((N,), \"float32\")\n"
    "            T.copy(A, A_shared)\n"
    "            T.copy(A_shared, A_local)\n"
    "            A_flat = T.reshape(A_local, [N])\n"
    "            T.copy(A_flat, B_shared)\n"
    "            T.copy(B_shared, B)\n"
    "\n"
    "    return main\n";

static void reshape_merge_case(TestCtx *t, int n, int m, int threads) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  SourceFile file = {"reshape_merge.py", RESHAPE_MERGE, sizeof RESHAPE_MERGE - 1};
  char pn[32], pm[32], pt[32];
  snprintf(pn, sizeof pn, "N=%d", n);
  snprintf(pm, sizeof pm, "M=%d", m);
  snprintf(pt, sizeof pt, "threads=%d", threads);
  const char *params[] = {pn, pm, pt, NULL};
  IrFunc *f = interp_compile(&c, &file, "merged", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  for (int i = 0; i < n; i++) a[i] = i * 0.25 - 7, b[i] = -1;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += b[i] != i * 0.25 - 7;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

TEST(interp_reshape_fragment_merge) { reshape_merge_case(t, 1024, 32, 32); }
TEST(interp_reshape_fragment_merge_wide) { reshape_merge_case(t, 2048, 64, 128); }

/* T.Persistent over a domain of three dimensions (TileLang issue 2433): every element is
 * visited exactly once, with uneven extents, a wave that does not divide the tiles and a
 * middle extent below and above the group of 8 rows. */
static const char PERSISTENT_3D[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "def visit(D0, D1, D2, sm_num):\n"
    "    @T.prim_func\n"
    "    def main(Visited: T.Tensor((D0, D1, D2), T.int32)):\n"
    "        with T.Kernel(sm_num, threads=1) as block_id:\n"
    "            for i, j, k in T.Persistent([D0, D1, D2], sm_num, block_id):\n"
    "                Visited[i, j, k] += 1\n"
    "    return main\n";

TEST(interp_persistent_3d_domain) {
  const int dims[][4] = {{3, 5, 7, 4}, {2, 11, 3, 5}, {4, 9, 2, 132}};
  for (int c0 = 0; c0 < 3; c0++) {
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    SourceFile file = {"persistent3d.py", PERSISTENT_3D, sizeof PERSISTENT_3D - 1};
    char p0[32], p1[32], p2[32], p3[32];
    snprintf(p0, sizeof p0, "D0=%d", dims[c0][0]);
    snprintf(p1, sizeof p1, "D1=%d", dims[c0][1]);
    snprintf(p2, sizeof p2, "D2=%d", dims[c0][2]);
    snprintf(p3, sizeof p3, "sm_num=%d", dims[c0][3]);
    const char *params[] = {p0, p1, p2, p3, NULL};
    IrFunc *f = interp_compile(&c, &file, "visit", params);
    CHECK(f != NULL);
    if (f) {
      IrBuffer *V = interp_param(f, "Visited");
      Interp in = {0};
      double *v = interp_global(&in, V);
      int n = dims[c0][0] * dims[c0][1] * dims[c0][2], bad = 0;
      for (int e = 0; e < n; e++) v[e] = 0;
      interp_run(&in, f);
      CHECK(in.errors == 0);
      for (int e = 0; e < n; e++) bad += v[e] != 1;
      CHECK(bad == 0);
      interp_free(&in);
    }
    ts_compiler_fini(&c);
  }
}

/* The math functions beyond exp/log/sin (T.sinh ... T.nearbyint, the two-operand ones) and the
 * fast-math forms (T.__exp ...), run by the interpreter against C's libm on one row of inputs. */
static const char MATH_FUNCS[] =
    KERNEL_FILE_HEAD
    "def math_funcs(N):\n"
    "    @T.prim_func\n"
    "    def main(x: T.Tensor((N,), \"float32\"), y: T.Tensor((N,), \"float32\"), out: T.Tensor((23, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=N) as bx:\n"
    "            i = T.get_thread_binding(0)\n"
    "            a = x[i]\n"
    "            b = y[i]\n"
    "            out[0, i] = T.sinh(a)\n"
    "            out[1, i] = T.cosh(a)\n"
    "            out[2, i] = T.asin(a)\n"
    "            out[3, i] = T.acos(a)\n"
    "            out[4, i] = T.atan(a)\n"
    "            out[5, i] = T.asinh(a)\n"
    "            out[6, i] = T.acosh(a + 1.0)\n"
    "            out[7, i] = T.atanh(a)\n"
    "            out[8, i] = T.atan2(a, b)\n"
    "            out[9, i] = T.hypot(a, b)\n"
    "            out[10, i] = T.copysign(a, b)\n"
    "            out[11, i] = T.ldexp(a, 3)\n"
    "            out[12, i] = T.nearbyint(a * 8.0)\n"
    "            out[13, i] = T.nextafter(a, b)\n"
    "            out[14, i] = T.__exp(a)\n"
    "            out[15, i] = T.__exp10(a)\n"
    "            out[16, i] = T.__log(a)\n"
    "            out[17, i] = T.__log2(a)\n"
    "            out[18, i] = T.__log10(a)\n"
    "            out[19, i] = T.__tan(a)\n"
    "            out[20, i] = T.__cos(a)\n"
    "            out[21, i] = T.__sin(a)\n"
    "            out[22, i] = T.fast_rcp(a + 0.5)\n"
    "\n"
    "    return main\n";

TEST(interp_math_functions) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"math_funcs.py", MATH_FUNCS, sizeof MATH_FUNCS - 1};
  const char *params[] = {"N=8", NULL};
  IrFunc *f = interp_compile(&c, &file, "math_funcs", params);
  REQUIRE(f);
  Interp in = {0};
  double *x = interp_global(&in, param(f, "x")), *y = interp_global(&in, param(f, "y"));
  double *out = interp_global(&in, param(f, "out"));
  for (int i = 0; i < 8; i++) x[i] = (float)(0.05 + 0.11 * i), y[i] = (float)(i % 2 ? 0.7 - 0.2 * i : 0.3 + 0.1 * i);
  for (int e = 0; e < 23 * 8; e++) out[e] = NAN;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int i = 0; i < 8; i++) {
    float a = (float)x[i], b = (float)y[i];
    const double want[23] = {sinhf(a), coshf(a), asinf(a), acosf(a), atanf(a), asinhf(a), acoshf(a + 1.0f),
                             atanhf(a), atan2f(a, b), hypotf(a, b), copysignf(a, b), ldexpf(a, 3),
                             nearbyintf(a * 8.0f), nextafterf(a, b), expf(a), powf(10.0f, a), logf(a), log2f(a),
                             log10f(a), tanf(a), cosf(a), sinf(a), 1.0f / (a + 0.5f)};
    for (int r = 0; r < 23; r++) /* copysign, ldexp, nearbyint and nextafter exactly */
      if (!(fabs(out[r * 8 + i] - want[r]) <= (r >= 10 && r <= 13 ? 0 : 1e-6 * (1 + fabs(want[r]))))) {
        if (bad++ < 5) fprintf(stderr, "  row %d x=%g y=%g: got %.9g, want %.9g\n", r, a, b, out[r * 8 + i], want[r]);
      }
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}
