/* thread_branch.c — hand-written warp specialization written as a plain `if` on the thread
 * index (`tx = T.get_thread_binding()`, then `if tx < 128: ... elif tx >= 256: ...`), as
 * TileLang's own examples do instead of `with T.ws(...)`.  TileLang lowers the tile operations
 * inside such a branch over the branch's threads; so do we, by making each branch a T.ws body
 * (an IF with if_.ws_lo / ws_hi, see ir.h) over its thread range.  eval_stmt.c stages the
 * branches; this file holds the analysis it needs:
 *
 *   tb_cond_range   the threads [lo, hi) of a known range for which a condition holds, when
 *                   that set is an interval (`tx < C`, `tx >= C`, `C1 <= tx < C2`, `and`s);
 *   tb_has_tile_ops whether staged code holds tile operations (only then is a branch made a
 *                   T.ws body: a branch of scalar code keeps its plain IF, and the kernel keeps
 *                   its automatic pipelining);
 *   tb_ws_if        the T.ws IF over [lo, hi) (also what `with T.ws(...)` builds).
 *
 * Hardware facts relied on: a warp's lanes must all run a shuffle (T.reduce), and a named
 * barrier (bar.sync id, n: thread_sync's barrier inside a T.ws body) counts whole warps, so a
 * range is accepted only on warp boundaries; wgmma needs whole warpgroups, which plan_gemm
 * checks for the GEMMs of a range that does not start on one. */
#include "thread_branch.h"

/* The kernel's linear thread index (a one-dimensional block), or NULL. */
static const IrVar *linear_thread_var(const IrKernel *k) {
  if (k->threads[1] > 1 || k->threads[2] > 1) return NULL;
  return k->thread_var[0];
}

static bool is_tx(const IrKernel *k, const IrExpr *e) {
  const IrVar *tx = linear_thread_var(k);
  return tx && e->kind == IR_VAR && e->u.var == tx;
}

/* `tx op C` or `C op tx` restricted to [lo, hi) -> [*rlo, *rhi) (possibly empty). */
static bool compare_range(const IrKernel *k, const IrExpr *e, int64_t lo, int64_t hi, int64_t *rlo, int64_t *rhi) {
  const IrExpr *a = e->u.ops[0], *b = e->u.ops[1];
  IrExprKind op = e->kind;
  if (is_tx(k, b) && a->kind == IR_INT) { /* C op tx == tx op' C */
    const IrExpr *t = a;
    a = b;
    b = t;
    op = op == IR_LT ? IR_GT : op == IR_LE ? IR_GE : op == IR_GT ? IR_LT : op == IR_GE ? IR_LE : op;
  }
  if (!is_tx(k, a) || b->kind != IR_INT) return false;
  int64_t c = b->u.ival;
  switch (op) {
    case IR_LT: hi = c < hi ? c : hi; break;
    case IR_LE: hi = c + 1 < hi ? c + 1 : hi; break;
    case IR_GT: lo = c + 1 > lo ? c + 1 : lo; break;
    case IR_GE: lo = c > lo ? c : lo; break;
    case IR_EQ: lo = c > lo ? c : lo; hi = c + 1 < hi ? c + 1 : hi; break;
    default: return false;
  }
  *rlo = lo;
  *rhi = hi > lo ? hi : lo;
  return true;
}

bool tb_cond_range(const IrKernel *k, const IrExpr *cond, int64_t lo, int64_t hi, int64_t *rlo, int64_t *rhi) {
  if (!cond) return false;
  if (cond->kind == IR_AND) { /* both hold: the intersection */
    int64_t alo, ahi;
    if (!tb_cond_range(k, cond->u.ops[0], lo, hi, &alo, &ahi)) return false;
    return tb_cond_range(k, cond->u.ops[1], alo, ahi, rlo, rhi);
  }
  switch (cond->kind) {
    case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_EQ: return compare_range(k, cond, lo, hi, rlo, rhi);
    default: return false;
  }
}

/* Statements whose work the lowering spreads over the threads running them. */
static void find_tile_op(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_COPY || s->kind == IR_S_FILL || s->kind == IR_S_REDUCE || s->kind == IR_S_GEMM ||
      (s->kind == IR_S_ATOMIC && s->u.atomic.tile) || (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PARALLEL))
    *(bool *)ctx = true;
}
bool tb_has_tile_ops(IrStmt *s) {
  bool found = false;
  IrVisitor v = {find_tile_op, NULL, &found};
  if (s) ir_visit(s, &v);
  return found;
}

/* `tx < hi`, or `tx >= lo and tx < hi`: the condition T.ws gives its IF. */
IrStmt *tb_ws_if(TsCompiler *c, IrKernel *k, int64_t lo, int64_t hi, IrStmt *body, SrcLoc loc) {
  IrExpr *tx = ir_varref(c, ir_kernel_thread_var(c, k, 0, loc), loc);
  IrExpr *cond = ir_binary(c, IR_LT, tx, ir_i32(c, hi), loc);
  if (lo) cond = ir_binary(c, IR_AND, ir_binary(c, IR_GE, tx, ir_i32(c, lo), loc), cond, loc);
  IrStmt *r = ir_if(c, cond, body, NULL, loc);
  r->u.if_.ws_lo = lo;
  r->u.if_.ws_hi = hi;
  return r;
}

/* A range a branch can be lowered over: non-empty, on warp boundaries. */
bool tb_range_ok(int64_t lo, int64_t hi) { return lo < hi && lo % 32 == 0 && hi % 32 == 0; }
