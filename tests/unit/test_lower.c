/* test_lower.c — tests of the lowering pipeline (src/pass, src/layout).
 *
 * Small tile-level IrFuncs are built by hand, run through pass_pipeline, and the
 * thread-level result is checked two ways: structurally (no parallel loops or tile ops
 * left, register counts, shuffles, barriers, shared-memory size) and by running it in
 * the lockstep interpreter (interp.h), whose outputs are compared with the tile-level
 * meaning computed in C on random data; its race and error counts must stay 0. */
#include <math.h>
#include <stdlib.h>

#include "../../src/layout/layout.h"
#include "../../src/pass/passes.h"
#include "interp.h"
#include "test.h"

/* ---- building tile-level IR by hand ---- */
typedef struct B {
  TsCompiler c;
  IrFunc *f;
  PtrVec params, body;
  IrKernel *k;
  IrStmt *ks;
} B;

static IrExpr *I(B *b, int64_t v) { return ir_i32(&b->c, v); }
static IrExpr *V(B *b, IrVar *v) { return ir_varref(&b->c, v, SRCLOC_NONE); }
static IrExpr *bin(B *b, IrExprKind k, IrExpr *x, IrExpr *y) { return ir_binary(&b->c, k, x, y, SRCLOC_NONE); }

static void b_init(B *b, int64_t gx, int64_t gy, int threads) {
  memset(b, 0, sizeof *b);
  ts_compiler_init(&b->c, (TsTarget){90, true});
  b->c.debug = true;
  b->f = ARENA_NEW(b->c.arena, IrFunc);
  b->f->name = "main";
  b->ks = ir_stmt(&b->c, IR_S_KERNEL, SRCLOC_NONE);
  b->k = &b->ks->u.kernel;
  b->k->grid[0] = I(b, gx);
  b->k->grid[1] = I(b, gy);
  b->k->grid[2] = I(b, 1);
  b->k->threads[0] = threads;
  b->k->threads[1] = b->k->threads[2] = 1;
  b->k->block_var[0] = ir_var(&b->c, "bx", TS_DTYPE_INT32, IR_VAR_BLOCK_IDX, SRCLOC_NONE);
  b->k->block_var[1] = ir_var(&b->c, "by", TS_DTYPE_INT32, IR_VAR_BLOCK_IDX, SRCLOC_NONE);
  b->k->block_var[1]->axis = 1;
}

static IrBuffer *b_buf(B *b, const char *name, IrScope sc, int64_t d0, int64_t d1) {
  IrExpr *shape[2] = {I(b, d0), I(b, d1)};
  int nd = d1 > 0 ? 2 : 1;
  IrBuffer *buf = ir_buffer(&b->c, name, TS_DTYPE_FLOAT32, sc, nd, shape, SRCLOC_NONE);
  if (sc == IR_SCOPE_GLOBAL) {
    buf->param_index = b->params.len;
    vec_push(b->c.arena, &b->params, buf);
  } else {
    IrStmt *a = ir_stmt(&b->c, IR_S_ALLOC, SRCLOC_NONE);
    a->u.alloc.buf = buf;
    vec_push(b->c.arena, &b->body, a);
  }
  return buf;
}

static IrRegion region(B *b, IrBuffer *buf, IrExpr *m0, IrExpr *m1, int64_t e0, int64_t e1) {
  IrRegion r = ir_region_full(&b->c, buf, SRCLOC_NONE);
  r.min[0] = m0;
  r.extent[0] = I(b, e0);
  if (buf->ndim > 1) {
    r.min[1] = m1;
    r.extent[1] = I(b, e1);
  }
  return r;
}

static void b_copy(B *b, IrRegion src, IrRegion dst) {
  IrStmt *s = ir_stmt(&b->c, IR_S_COPY, SRCLOC_NONE);
  s->u.copy.src = src;
  s->u.copy.dst = dst;
  vec_push(b->c.arena, &b->body, s);
}

static void b_reduce(B *b, IrReduceKind op, IrBuffer *src, IrBuffer *dst, int dim, bool clear) {
  IrStmt *s = ir_stmt(&b->c, IR_S_REDUCE, SRCLOC_NONE);
  s->u.reduce.op = op;
  s->u.reduce.src = src;
  s->u.reduce.dst = dst;
  s->u.reduce.dim = dim;
  s->u.reduce.clear = clear;
  vec_push(b->c.arena, &b->body, s);
}

static void b_fill(B *b, IrBuffer *dst, double v) {
  IrStmt *s = ir_stmt(&b->c, IR_S_FILL, SRCLOC_NONE);
  s->u.fill.dst = ir_region_full(&b->c, dst, SRCLOC_NONE);
  s->u.fill.value = ir_float(&b->c, v, TS_DTYPE_FLOAT32, SRCLOC_NONE);
  vec_push(b->c.arena, &b->body, s);
}

/* for i, j in T.Parallel(e0, e1): body(i, j) */
static IrStmt *par2(B *b, IrVar *i, IrVar *j, int64_t e0, int64_t e1, IrStmt *body) {
  IrStmt *inner = ir_for(&b->c, j, I(b, 0), I(b, e1), IR_FOR_PARALLEL, body, SRCLOC_NONE);
  return ir_for(&b->c, i, I(b, 0), I(b, e0), IR_FOR_PARALLEL, inner, SRCLOC_NONE);
}

static bool b_finish(B *b) {
  b->k->body = ir_seq_vec(&b->c, &b->body, SRCLOC_NONE);
  b->f->nparams = b->params.len;
  b->f->params = ARENA_ARRAY(b->c.arena, IrParam, b->params.len);
  for (int i = 0; i < b->params.len; i++) {
    IrBuffer *p = b->params.items[i];
    b->f->params[i] = (IrParam){p->name, p, NULL, false};
  }
  b->f->body = ir_seq(&b->c, &b->ks, 1, SRCLOC_NONE);
  bool ok = pass_pipeline(&b->c, b->f);
  if (getenv("TS_TEST_DUMP")) {
    StrBuf sb = {0};
    ir_print_func(&sb, b->f);
    fprintf(stderr, "%s\n", sb_str(&sb));
    sb_free(&sb);
  }
  if (!ok) fprintf(stderr, "%s", sb_str(&b->c.diag.out));
  return ok;
}

/* Counts of thread-level features in the result. */
typedef struct Feat { int parallel, tile, shfl, sync, vec_store; } Feat;
static void feat_expr(IrExpr *e, void *ctx) {
  Feat *f = ctx;
  if (e->kind == IR_CALL && e->u.call.op == IRI_SHFL_XOR) f->shfl++;
  if (e->kind == IR_CALL && e->u.call.op == IRI_SYNCTHREADS) f->sync++;
}
static void feat_stmt(IrStmt *s, void *ctx) {
  Feat *f = ctx;
  if (s->kind == IR_S_FOR && (s->u.loop.kind == IR_FOR_PARALLEL || s->u.loop.kind == IR_FOR_PIPELINED)) f->parallel++;
  if (s->kind == IR_S_COPY || s->kind == IR_S_FILL || s->kind == IR_S_REDUCE || s->kind == IR_S_GEMM ||
      s->kind == IR_S_ATOMIC)
    f->tile++;
  if (s->kind == IR_S_STORE && s->u.store.lanes > 1) f->vec_store++;
}
static Feat features(IrFunc *f) {
  Feat ft = {0};
  IrVisitor v = {feat_stmt, feat_expr, &ft};
  ir_visit(f->body, &v);
  return ft;
}

static double rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (double)(float)(((*s >> 8) & 0xffff) / 32768.0 - 1.0);
}

/* ---- tests ---- */

TEST(lower_fragment_block_layout) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  int64_t shape[2] = {16, 32};
  Fragment *f = fragment_block(&c, 2, shape, 128, 4);
  CHECK(fragment_local_size(f) == 4);
  CHECK(f->dim[1].threads == 8 && f->dim[0].threads == 16 && f->nrep == 0);
  /* every element has exactly one (thread, register) and every slot is used once */
  static int seen[128][4];
  memset(seen, 0, sizeof seen);
  for (int64_t i = 0; i < 16; i++)
    for (int64_t j = 0; j < 32; j++) {
      int64_t idx[2] = {i, j};
      int64_t th = fragment_thread_of(f, idx), r = fragment_reg_of(f, idx);
      REQUIRE(th >= 0 && th < 128 && r >= 0 && r < 4);
      seen[th][r]++;
    }
  for (int th = 0; th < 128; th++)
    for (int r = 0; r < 4; r++) CHECK(seen[th][r] == 1);
  Fragment *red = fragment_reduce(&c, f, 1, false);
  CHECK(red->ndim == 1 && fragment_local_size(red) == 1 && fragment_replicas(red) == 8);
  ts_compiler_fini(&c);
}

/* C = A + B over [50, 72] with 16x32 tiles: partial tiles on both edges. */
TEST(lower_elementwise_add) {
  B b;
  enum { M = 50, N = 72, BM = 16, BN = 32 };
  b_init(&b, (N + BN - 1) / BN, (M + BM - 1) / BM, 64);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, M, N), *Bb = b_buf(&b, "B", IR_SCOPE_GLOBAL, M, N),
           *C = b_buf(&b, "C", IR_SCOPE_GLOBAL, M, N);
  IrBuffer *af = b_buf(&b, "A_frag", IR_SCOPE_FRAGMENT, BM, BN), *bf = b_buf(&b, "B_frag", IR_SCOPE_FRAGMENT, BM, BN),
           *cf = b_buf(&b, "C_frag", IR_SCOPE_FRAGMENT, BM, BN);
  IrExpr *r0 = bin(&b, IR_MUL, V(&b, b.k->block_var[1]), I(&b, BM));
  IrExpr *c0 = bin(&b, IR_MUL, V(&b, b.k->block_var[0]), I(&b, BN));
  b_copy(&b, region(&b, A, r0, c0, BM, BN), ir_region_full(&b.c, af, SRCLOC_NONE));
  b_copy(&b, region(&b, Bb, r0, c0, BM, BN), ir_region_full(&b.c, bf, SRCLOC_NONE));
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *ij[2] = {V(&b, i), V(&b, j)};
  IrExpr *sum = bin(&b, IR_ADD, ir_load(&b.c, af, ij, 2, SRCLOC_NONE), ir_load(&b.c, bf, ij, 2, SRCLOC_NONE));
  vec_push(b.c.arena, &b.body, par2(&b, i, j, BM, BN, ir_store(&b.c, cf, ij, 2, sum, SRCLOC_NONE)));
  b_copy(&b, ir_region_full(&b.c, cf, SRCLOC_NONE), region(&b, C, r0, c0, BM, BN));
  REQUIRE(b_finish(&b));
  Feat ft = features(b.f);
  CHECK(ft.parallel == 0 && ft.tile == 0);
  CHECK(ft.vec_store >= 3); /* two vector loads into fragments, one vector store out */
  CHECK(af->local_size == BM * BN / 64 && cf->fragment && fragment_equal(af->fragment, cf->fragment));
  Interp in = {0};
  in.T = 64;
  double *a = interp_global(&in, A), *bb = interp_global(&in, Bb), *cc = interp_global(&in, C);
  unsigned seed = 1;
  for (int e = 0; e < M * N; e++) a[e] = rnd(&seed), bb[e] = rnd(&seed);
  interp_run(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int e = 0; e < M * N; e++) bad += fabs(cc[e] - (double)(float)(a[e] + bb[e])) > 1e-6;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

/* Row max and row sum (clear=False on top of a fill) of [R, N] rows, block_M rows per block. */
static void row_reduce_case(TestCtx *t, int R, int BM, int NN, int threads, bool expect_smem) {
  B b;
  b_init(&b, R / BM, 1, threads);
  IrBuffer *X = b_buf(&b, "X", IR_SCOPE_GLOBAL, R, NN), *OM = b_buf(&b, "OutMax", IR_SCOPE_GLOBAL, R, 0),
           *OS = b_buf(&b, "OutSum", IR_SCOPE_GLOBAL, R, 0);
  IrBuffer *x = b_buf(&b, "x", IR_SCOPE_FRAGMENT, BM, NN), *m = b_buf(&b, "m", IR_SCOPE_FRAGMENT, BM, 0),
           *sm = b_buf(&b, "s", IR_SCOPE_FRAGMENT, BM, 0);
  IrExpr *r0 = bin(&b, IR_MUL, V(&b, b.k->block_var[0]), I(&b, BM));
  b_fill(&b, sm, 1.0);
  b_copy(&b, region(&b, X, r0, I(&b, 0), BM, NN), ir_region_full(&b.c, x, SRCLOC_NONE));
  b_reduce(&b, IR_RED_MAX, x, m, 1, true);
  b_reduce(&b, IR_RED_SUM, x, sm, 1, false);
  b_copy(&b, ir_region_full(&b.c, m, SRCLOC_NONE), region(&b, OM, r0, NULL, BM, 0));
  b_copy(&b, ir_region_full(&b.c, sm, SRCLOC_NONE), region(&b, OS, r0, NULL, BM, 0));
  REQUIRE(b_finish(&b));
  Feat ft = features(b.f);
  CHECK(ft.parallel == 0 && ft.tile == 0 && ft.shfl > 0);
  IrKernel *k = &b.f->body->u.seq.items[0]->u.kernel;
  CHECK((k->smem_bytes > 0) == expect_smem);
  CHECK((ft.sync > 0) == expect_smem);
  Interp in = {0};
  in.T = threads;
  double *xs = interp_global(&in, X), *om = interp_global(&in, OM), *os = interp_global(&in, OS);
  unsigned seed = 7;
  for (int e = 0; e < R * NN; e++) xs[e] = rnd(&seed);
  interp_run(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < R; r++) {
    double mx = -INFINITY, s = 1.0;
    for (int j = 0; j < NN; j++) {
      mx = xs[r * NN + j] > mx ? xs[r * NN + j] : mx;
      s += xs[r * NN + j];
    }
    bad += om[r] != mx;
    bad += fabs(os[r] - s) > 1e-4;
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

TEST(lower_reduce_in_warp) { row_reduce_case(t, 6, 2, 100, 64, false); }
TEST(lower_reduce_across_warps) { row_reduce_case(t, 4, 1, 256, 128, true); }

/* B = A^T through two shared tiles: barriers must separate the three phases. */
TEST(lower_shared_transpose) {
  B b;
  enum { M = 40, N = 24, TB = 16 };
  b_init(&b, (N + TB - 1) / TB, (M + TB - 1) / TB, 64);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, M, N), *Bt = b_buf(&b, "B", IR_SCOPE_GLOBAL, N, M);
  IrBuffer *tile = b_buf(&b, "tile", IR_SCOPE_SHARED_DYN, TB, TB), *tt = b_buf(&b, "tile_t", IR_SCOPE_SHARED_DYN, TB, TB);
  IrExpr *r0 = bin(&b, IR_MUL, V(&b, b.k->block_var[1]), I(&b, TB));
  IrExpr *c0 = bin(&b, IR_MUL, V(&b, b.k->block_var[0]), I(&b, TB));
  b_copy(&b, region(&b, A, r0, c0, TB, TB), ir_region_full(&b.c, tile, SRCLOC_NONE));
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *ji[2] = {V(&b, j), V(&b, i)}, *ij[2] = {V(&b, i), V(&b, j)};
  vec_push(b.c.arena, &b.body, par2(&b, j, i, TB, TB, ir_store(&b.c, tt, ji, 2, ir_load(&b.c, tile, ij, 2, SRCLOC_NONE), SRCLOC_NONE)));
  b_copy(&b, ir_region_full(&b.c, tt, SRCLOC_NONE), region(&b, Bt, c0, r0, TB, TB));
  REQUIRE(b_finish(&b));
  IrKernel *k = &b.f->body->u.seq.items[0]->u.kernel;
  CHECK(tile->smem_offset == 0 && tt->smem_offset == 1024 && k->smem_bytes == 2048);
  Feat ft = features(b.f);
  CHECK(ft.sync >= 2 && ft.parallel == 0);
  Interp in = {0};
  in.T = 64;
  double *a = interp_global(&in, A), *bt = interp_global(&in, Bt);
  unsigned seed = 3;
  for (int e = 0; e < M * N; e++) a[e] = rnd(&seed);
  interp_run(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < M; r++)
    for (int cc = 0; cc < N; cc++) bad += bt[cc * M + r] != a[r * N + cc];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

/* A `break` / `continue` in a kernel loop is a leaf for lower_tile_ops: it once bounced
 * between rw_stmt and lower_stmt forever.  It must reach the thread-level IR unchanged. */
typedef struct Jumps { int brk, cont; } Jumps;
static void jumps_stmt(IrStmt *s, void *ctx) {
  Jumps *j = ctx;
  if (s->kind == IR_S_BREAK) j->brk++;
  if (s->kind == IR_S_CONTINUE) j->cont++;
}
TEST(lower_break_continue_in_loop) {
  B b;
  b_init(&b, 1, 1, 32);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, 32, 0);
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *iv = V(&b, i);
  IrStmt *st = ir_store(&b.c, A, &iv, 1, ir_float(&b.c, 1.0, TS_DTYPE_FLOAT32, SRCLOC_NONE), SRCLOC_NONE);
  IrStmt *brk = ir_stmt(&b.c, IR_S_BREAK, SRCLOC_NONE), *cont = ir_stmt(&b.c, IR_S_CONTINUE, SRCLOC_NONE);
  IrStmt *body = ir_seq(&b.c, (IrStmt *[]){ir_if(&b.c, bin(&b, IR_EQ, iv, I(&b, 3)), cont, NULL, SRCLOC_NONE),
                                           ir_if(&b.c, bin(&b, IR_GE, iv, I(&b, 20)), brk, NULL, SRCLOC_NONE), st},
                        3, SRCLOC_NONE);
  vec_push(b.c.arena, &b.body, ir_for(&b.c, i, I(&b, 0), I(&b, 32), IR_FOR_SERIAL, body, SRCLOC_NONE));
  REQUIRE(b_finish(&b));
  Jumps j = {0, 0};
  IrVisitor v = {jumps_stmt, NULL, &j};
  ir_visit(b.f->body, &v);
  CHECK(j.brk == 1 && j.cont == 1);
  ts_compiler_fini(&b.c);
}

/* Writing a shared tile and reading it back through a T.view alias is a RAW hazard on
 * the same memory: thread_sync must put a barrier between them (and the interpreter,
 * which sees both names as one array here, must find no race). */
TEST(lower_sync_through_view_alias) {
  B b;
  enum { N = 64 };
  b_init(&b, 1, 1, 64);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, N, 0), *O = b_buf(&b, "O", IR_SCOPE_GLOBAL, N, 0);
  IrBuffer *tile = b_buf(&b, "tile", IR_SCOPE_SHARED_DYN, N, 0);
  IrBuffer *view = ir_buffer(&b.c, "tile_v", TS_DTYPE_FLOAT32, IR_SCOPE_SHARED_DYN, 1, (IrExpr *[]){I(&b, N)}, SRCLOC_NONE);
  view->alias_of = tile;
  IrStmt *al = ir_stmt(&b.c, IR_S_ALLOC, SRCLOC_NONE);
  al->u.alloc.buf = view;
  vec_push(b.c.arena, &b.body, al);
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *iv = V(&b, i), *rev = bin(&b, IR_SUB, I(&b, N - 1), V(&b, j)), *jv = V(&b, j);
  vec_push(b.c.arena, &b.body, ir_for(&b.c, i, I(&b, 0), I(&b, N), IR_FOR_PARALLEL,
                                      ir_store(&b.c, tile, &iv, 1, ir_load(&b.c, A, &iv, 1, SRCLOC_NONE), SRCLOC_NONE), SRCLOC_NONE));
  vec_push(b.c.arena, &b.body, ir_for(&b.c, j, I(&b, 0), I(&b, N), IR_FOR_PARALLEL,
                                      ir_store(&b.c, O, &jv, 1, ir_load(&b.c, view, &rev, 1, SRCLOC_NONE), SRCLOC_NONE), SRCLOC_NONE));
  REQUIRE(b_finish(&b));
  CHECK(features(b.f).sync >= 1);
  ts_compiler_fini(&b.c);
}

/* A shared tile pinned to a swizzle (T.annotate_layout) that no GEMM uses: the plain
 * T.copy into it and the transposing T.Parallel read out of it go through the layout's
 * forward mapping, so the transpose is still exact (for each swizzle width), and the
 * tile really is stored swizzled (element (r, c) at layout_offset_const). */
static void swizzled_transpose(TestCtx *t, LayoutKind kind, int want_sw) {
  B b;
  enum { M = 64, N = 96, TB = 32 };
  b_init(&b, N / TB, M / TB, 128);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, M, N), *Bt = b_buf(&b, "B", IR_SCOPE_GLOBAL, N, M);
  IrBuffer *tile = b_buf(&b, "tile", IR_SCOPE_SHARED_DYN, TB, TB);
  const char *why;
  tile->layout = layout_pinned(&b.c, kind, TB, TB, 4, SRCLOC_NONE, &why);
  REQUIRE(tile->layout && tile->layout->swizzle == want_sw);
  IrExpr *r0 = bin(&b, IR_MUL, V(&b, b.k->block_var[1]), I(&b, TB));
  IrExpr *c0 = bin(&b, IR_MUL, V(&b, b.k->block_var[0]), I(&b, TB));
  b_copy(&b, region(&b, A, r0, c0, TB, TB), ir_region_full(&b.c, tile, SRCLOC_NONE));
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *ji[2] = {V(&b, j), V(&b, i)};
  IrExpr *out[2] = {bin(&b, IR_ADD, c0, V(&b, i)), bin(&b, IR_ADD, r0, V(&b, j))};
  vec_push(b.c.arena, &b.body, par2(&b, i, j, TB, TB, ir_store(&b.c, Bt, out, 2, ir_load(&b.c, tile, ji, 2, SRCLOC_NONE), SRCLOC_NONE)));
  REQUIRE(b_finish(&b));
  CHECK(tile->layout->swizzle == want_sw); /* inference kept the pinned layout */
  Interp in = {0};
  in.T = 128;
  double *a = interp_global(&in, A), *bt = interp_global(&in, Bt);
  unsigned seed = 11;
  for (int e = 0; e < M * N; e++) a[e] = rnd(&seed);
  interp_run(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < M; r++)
    for (int cc = 0; cc < N; cc++) bad += bt[cc * M + r] != a[r * N + cc];
  CHECK(bad == 0);
  /* the last block's tile as it sits in shared memory: swizzled, not row-major */
  Mem *m = interp_mem(&in, tile);
  int misplaced = 0;
  int64_t lr = (M / TB - 1) * TB, lc = (N / TB - 1) * TB;
  for (int r = 0; r < TB; r++)
    for (int cc = 0; cc < TB; cc++) misplaced += m->data[layout_offset_const(tile->layout, r, cc)] != a[(lr + r) * N + lc + cc];
  CHECK(misplaced == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

TEST(lower_swizzled_tile_without_gemm) {
  swizzled_transpose(t, LAYOUT_FULL, 128);
  swizzled_transpose(t, LAYOUT_HALF, 64);
  swizzled_transpose(t, LAYOUT_QUARTER, 32);
  swizzled_transpose(t, LAYOUT_LINEAR, 0);
}

/* cp.async stores of `lanes` lanes and commits in the result. */
typedef struct AsyncFeat { int lanes, async_vec, commits; } AsyncFeat;
static void async_stmt(IrStmt *s, void *ctx) {
  AsyncFeat *f = ctx;
  if (s->kind == IR_S_STORE && s->u.store.async_ && s->u.store.lanes == f->lanes) f->async_vec++;
}
static void async_expr(IrExpr *e, void *ctx) {
  if (ir_is_device(e, IRD_CP_ASYNC_COMMIT)) ((AsyncFeat *)ctx)->commits++;
}

/* A gather in a T.Pipelined loop (T.im2col's shape, over a sequence): tile kt of the
 * windowed rows, col[m, k] = X[m + k // C - P, k % C] (0 outside [0, L)), moves V lanes at
 * a time (the row and the padding test are the same over each vector when V | C) and runs
 * stages ahead as cp.async; the consumer adds each tile into a fragment, so the output is
 * the sum of the tiles.  The interpreter lands each cp.async at its wait: a read before the
 * wait sees poison. */
static void gather_pipeline_case(TestCtx *t, int L, int C, int K, int P, int BM, int BK, int stages, int threads,
                                 int want_lanes) {
  B b;
  int NK = K * C / BK;
  b_init(&b, 1, (L + BM - 1) / BM, threads);
  IrBuffer *X = b_buf(&b, "X", IR_SCOPE_GLOBAL, L, C), *OUT = b_buf(&b, "OUT", IR_SCOPE_GLOBAL, L, BK);
  IrBuffer *As = b_buf(&b, "A_s", IR_SCOPE_SHARED_DYN, BM, BK), *acc = b_buf(&b, "acc", IR_SCOPE_FRAGMENT, BM, BK);
  IrVar *kt = ir_var(&b.c, "kt", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrVar *i2 = ir_var(&b.c, "i2", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j2 = ir_var(&b.c, "j2", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *m0 = bin(&b, IR_MUL, V(&b, b.k->block_var[1]), I(&b, BM));
  b_fill(&b, acc, 0.0);
  IrExpr *kk = bin(&b, IR_ADD, bin(&b, IR_MUL, V(&b, kt), I(&b, BK)), V(&b, j));
  IrExpr *row = bin(&b, IR_SUB, bin(&b, IR_ADD, bin(&b, IR_ADD, m0, V(&b, i)), bin(&b, IR_FLOORDIV, kk, I(&b, C))), I(&b, P));
  IrExpr *inside = bin(&b, IR_AND, bin(&b, IR_GE, row, I(&b, 0)), bin(&b, IR_LT, row, I(&b, L)));
  IrExpr *src[2] = {row, bin(&b, IR_FLOORMOD, kk, I(&b, C))}, *ij[2] = {V(&b, i), V(&b, j)};
  IrExpr *val = ir_select(&b.c, IR_IF_THEN_ELSE, inside, ir_load(&b.c, X, src, 2, SRCLOC_NONE),
                          ir_float(&b.c, 0, TS_DTYPE_FLOAT32, SRCLOC_NONE), SRCLOC_NONE);
  IrStmt *gather = par2(&b, i, j, BM, BK, ir_store(&b.c, As, ij, 2, val, SRCLOC_NONE));
  IrExpr *ij2[2] = {V(&b, i2), V(&b, j2)};
  IrExpr *sum = bin(&b, IR_ADD, ir_load(&b.c, acc, ij2, 2, SRCLOC_NONE), ir_load(&b.c, As, ij2, 2, SRCLOC_NONE));
  IrStmt *use = par2(&b, i2, j2, BM, BK, ir_store(&b.c, acc, ij2, 2, sum, SRCLOC_NONE));
  IrStmt *loop = ir_for(&b.c, kt, I(&b, 0), I(&b, NK), IR_FOR_PIPELINED, ir_seq(&b.c, (IrStmt *[]){gather, use}, 2, SRCLOC_NONE),
                        SRCLOC_NONE);
  loop->u.loop.num_stages = stages;
  vec_push(b.c.arena, &b.body, loop);
  b_copy(&b, ir_region_full(&b.c, acc, SRCLOC_NONE), region(&b, OUT, m0, I(&b, 0), BM, BK));
  REQUIRE(b_finish(&b));
  Feat ft = features(b.f);
  CHECK(ft.parallel == 0 && ft.tile == 0);
  AsyncFeat af = {want_lanes, 0, 0};
  IrVisitor av = {async_stmt, async_expr, &af};
  ir_visit(b.f->body, &av);
  CHECK(af.async_vec > 0); /* the gather became cp.async of want_lanes lanes */
  CHECK(af.commits >= 2);  /* a prologue and the main loop */
  Interp in = {0};
  in.T = threads;
  double *x = interp_global(&in, X), *out = interp_global(&in, OUT);
  unsigned seed = 11;
  for (int e = 0; e < L * C; e++) x[e] = rnd(&seed);
  interp_run(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int m = 0; m < L; m++)
    for (int jj = 0; jj < BK; jj++) {
      double want = 0;
      for (int k = 0; k < NK; k++) {
        int kc = k * BK + jj, r = m + kc / C - P;
        want = (double)(float)(want + (r >= 0 && r < L ? x[r * C + kc % C] : 0.0));
      }
      bad += fabs(out[m * BK + jj] - want) > 1e-5;
    }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

TEST(lower_gather_pipeline_vec4) { gather_pipeline_case(t, 40, 8, 3, 1, 16, 8, 3, 32, 4); }
TEST(lower_gather_pipeline_vec2) { gather_pipeline_case(t, 37, 6, 3, 2, 16, 6, 2, 32, 2); }
