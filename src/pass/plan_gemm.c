/* plan_gemm.c — the first pass: decides every T.gemm's plan once (layout.c gemm_plan:
 * mma.sync or wgmma, warp tiling, operand swizzles, accumulator fragment) and stores it on
 * the statement (IrStmt.u.gemm.plan).  warp_specialize, inject_pipeline's copies,
 * layout_inference and lower_tile_ops read it; the copies the pipelining passes make of a
 * GEMM share it (staging adds a stage dimension but changes no tile).  Unsupported shapes
 * and dtypes are reported here, once, at the user's line.
 *
 * A GEMM whose B is a fragment first gets a shared copy of it (pass_stage_gemm_b), and a
 * one-warpgroup kernel whose fragments overflow its registers gets two warpgroups
 * (widen_consumers.c).
 *
 * T.wgmma_gemm (a GEMM issued as wgmma without waiting: wg_wait == -1 from the front end)
 * is checked here too: it needs sm_90a and a plan on the wgmma path. */
#include "../layout/layout.h"
#include "passes.h"

/* The refusal of a T.wgmma_gemm whose plan is not wgmma, saying what rules it out. */
static void not_wgmma(TsCompiler *c, const IrStmt *s, const GemmPlan *p, int64_t nthreads) {
  bool linear = (!p->a_in_regs && (!p->a_layout || !p->a_layout->swizzle)) || !p->b_layout || !p->b_layout->swizzle;
  ts_error(c, s->loc, "T.wgmma_gemm: this %lldx%lldx%lld GEMM over %lld threads cannot run as wgmma (%s); use T.gemm",
           (long long)p->m, (long long)p->n, (long long)p->k, (long long)nthreads,
           linear ? "wgmma reads swizzled shared tiles, and an operand's tile or pinned layout has no swizzle"
           : nthreads % 128 ? "wgmma needs whole warpgroups of 128 threads"
                            : "C must split into 64-row atoms per warpgroup with N a multiple of 8, at most 256 per "
                              "warpgroup");
}

/* nthreads: the threads running s, from thread lo of the block (a T.ws range starts past 0) */
static void plan_stmt(TsCompiler *c, IrStmt *s, int64_t nthreads, int64_t lo);

static void plan_children(TsCompiler *c, IrStmt *s, int64_t nthreads, int64_t lo) {
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) plan_stmt(c, s->u.seq.items[i], nthreads, lo);
      return;
    case IR_S_FOR: plan_stmt(c, s->u.loop.body, nthreads, lo); return;
    case IR_S_WHILE: plan_stmt(c, s->u.while_.body, nthreads, lo); return;
    case IR_S_IF: /* a T.ws body runs on its warpgroups only: its GEMMs are planned over them */
      if (s->u.if_.ws_hi) plan_stmt(c, s->u.if_.then_s, s->u.if_.ws_hi - s->u.if_.ws_lo, s->u.if_.ws_lo);
      else plan_stmt(c, s->u.if_.then_s, nthreads, lo);
      plan_stmt(c, s->u.if_.else_s, nthreads, lo);
      return;
    default: return;
  }
}

static void plan_stmt(TsCompiler *c, IrStmt *s, int64_t nthreads, int64_t lo) {
  if (!s) return;
  if (s->kind == IR_S_KERNEL) {
    plan_stmt(c, s->u.kernel.body, pass_kernel_threads(&s->u.kernel), 0);
    return;
  }
  if (s->kind != IR_S_GEMM) {
    plan_children(c, s, nthreads, lo);
    return;
  }
  bool explicit_wgmma = s->u.gemm.wg_wait == -1;
  if (explicit_wgmma && (c->target.sm != 90 || !c->target.arch_a)) {
    ts_error(c, s->loc, "T.wgmma_gemm needs wgmma, which only sm_90a has (the target is sm_%d%s); use T.gemm",
             c->target.sm, c->target.arch_a ? "a" : "");
    return;
  }
  GemmPlan *p = ARENA_NEW(c->arena, GemmPlan);
  if (!gemm_plan(c, s, nthreads, p)) return; /* diagnosed at the statement */
  if (explicit_wgmma && p->path != GEMM_WGMMA) {
    not_wgmma(c, s, p, nthreads);
    return;
  }
  /* wgmma is issued by whole warpgroups: warps 4w .. 4w+3 of the block */
  if (p->path == GEMM_WGMMA && lo % 128) {
    ts_error(c, s->loc, "T.gemm: this GEMM runs as wgmma over threads [%lld, %lld), which do not start on a warpgroup "
             "(a multiple of 128 threads); branch on warpgroup-aligned thread ranges",
             (long long)lo, (long long)(lo + nthreads));
    return;
  }
  s->u.gemm.plan = p;
}

typedef struct WidenCtx { TsCompiler *c; const IrFunc *f; } WidenCtx;
static void widen_kernel(IrStmt *s, void *ctx) {
  WidenCtx *w = ctx;
  if (s->kind == IR_S_KERNEL) pass_widen_consumers(w->c, w->f, &s->u.kernel);
}

void pass_plan_gemm(TsCompiler *c, IrFunc *f) {
  f->body = pass_stage_gemm_b(c, f->body); /* B in registers: through a shared copy */
  WidenCtx w = {c, f};
  IrVisitor v = {widen_kernel, NULL, &w};
  ir_visit(f->body, &v);
  plan_stmt(c, f->body, 1, 0);
}
