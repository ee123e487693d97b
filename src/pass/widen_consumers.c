/* widen_consumers.c — part of plan_gemm on sm_90a: a kernel declared with one warpgroup
 * (threads=128) whose register fragments need more registers a thread than a warpgroup can
 * hold beside its addressing (FlashAttention's forward at block_M 128: acc_s, acc_o and the
 * 16-bit P, about 320 a thread) runs on two warpgroups instead, each GEMM's 128-row C split
 * into one 64-row wgmma atom per warpgroup, as the same file written with threads=256 does.
 * A tile program does not name its threads, so the results are the same, and every thread
 * holds half the fragments: no spills under the 240-register consumer cap.
 *
 * Left alone: a kernel that names a thread (T.get_thread_binding), schedules its own
 * warpgroups (T.ws), runs device-library or user device code or warp shuffles (a barrier
 * count, a lane, a thread's share may be baked into them), has no GEMM, or has a GEMM that
 * would not split along M over the two warpgroups; and every kernel under pass_configs
 * ts.keep_threads. */
#include "../layout/layout.h"
#include "passes.h"

enum {
  WIDEN_FROM = 128,      /* the declared count this applies to: one warpgroup */
  WIDEN_TO = 256,        /* two warpgroups */
  WIDEN_MIN_REGS = 192,  /* fragment registers a thread above which the declared count spills */
};

typedef struct WidenScan {
  TsCompiler *c;
  int64_t fragment_bytes; /* all register fragments of the kernel */
  PtrVec gemms;           /* its T.gemm statements, planned on trial only once the rest allows */
  bool ok;
} WidenScan;

/* A GEMM splits when it is wgmma at both counts and the two warpgroups stack along M. */
static bool gemm_splits(TsCompiler *c, const IrStmt *s) {
  GemmPlan narrow, wide;
  return gemm_plan_ex(c, s, WIDEN_FROM, &narrow, false) && narrow.path == GEMM_WGMMA &&
         gemm_plan_ex(c, s, WIDEN_TO, &wide, false) && wide.path == GEMM_WGMMA && wide.wm == WIDEN_TO / 32 &&
         wide.m % 128 == 0;
}

static void scan_stmt(IrStmt *s, void *ctx) {
  WidenScan *w = ctx;
  if (s->kind == IR_S_ALLOC && s->u.alloc.buf->scope == IR_SCOPE_FRAGMENT) {
    int64_t n = ir_buffer_bytes(s->u.alloc.buf);
    if (n < 0) w->ok = false;
    else w->fragment_bytes += n;
  }
  if (s->kind == IR_S_GEMM) {
    if (s->u.gemm.wg_wait == -1) w->ok = false;
    vec_push(w->c->arena, &w->gemms, s);
  }
  if (s->kind == IR_S_IF && s->u.if_.ws_hi) w->ok = false;
  if (s->kind == IR_S_KERNEL) w->ok = false; /* a nested kernel */
}

/* A named thread, or an operation whose meaning may hang on the thread count or on which
 * thread runs it: a named barrier over a count (T.sync_threads(id, n)), device-library and
 * user device code, warp shuffles and votes, block barriers with a predicate. */
static void scan_expr(IrExpr *e, void *ctx) {
  if (e->kind == IR_VAR && e->u.var->kind == IR_VAR_THREAD_IDX) ((WidenScan *)ctx)->ok = false;
  if (ir_call_has_flag(e, IRI_LANES) ||
      (e->kind == IR_CALL && (e->u.call.op == IRI_DEVICE || e->u.call.op == IRI_CALL_EXTERN)))
    ((WidenScan *)ctx)->ok = false;
}

void pass_widen_consumers(TsCompiler *c, const IrFunc *f, IrKernel *k) {
  if (c->target.sm != 90 || !c->target.arch_a || pass_config_on(f, "ts.keep_threads")) return;
  if (k->threads[0] != WIDEN_FROM || k->threads[1] > 1 || k->threads[2] > 1 || k->manual_ws || k->producer_threads)
    return;
  for (int i = 0; i < 3; i++)
    if (k->thread_var[i]) return;
  WidenScan w = {c, 0, {0}, true};
  IrVisitor v = {scan_stmt, scan_expr, &w};
  ir_visit(k->body, &v);
  if (!w.ok || !w.gemms.len || w.fragment_bytes <= (int64_t)WIDEN_MIN_REGS * 4 * WIDEN_FROM) return;
  for (int i = 0; i < w.gemms.len; i++)
    if (!gemm_splits(c, w.gemms.items[i])) return;
  k->threads[0] = WIDEN_TO;
}
