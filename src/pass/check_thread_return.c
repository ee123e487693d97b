/* check_thread_return.c — runs before the pass pipeline: a tile operation after a
 * T.thread_return is refused.
 *
 * Tile operations (T.copy, T.fill / T.clear, T.reduce_*, T.gemm, tile atomics, T.Parallel) are
 * split across every thread of the block by layout inference: each thread does its share.  A
 * thread that has left the kernel does not do its share, and nothing would report the elements
 * left undone, so such code is refused instead of silently computing a partial result.  "After"
 * is program order, and for a loop whose body returns, the whole body (its later iterations
 * come after the return).  Per-thread code (stores, T.ld / T.st, warp shuffles, serial loops)
 * stays allowed: that is what TileScale's DeepEP kernels do after returning. */
#include "passes.h"

typedef struct ReturnCheck {
  TsCompiler *c;
  bool returned; /* a T.thread_return precedes the statement being visited */
  bool reported;
} ReturnCheck;

static void find_return(IrExpr *e, void *ctx) {
  if (e->kind == IR_CALL && e->u.call.op == IRI_THREAD_RETURN) *(bool *)ctx = true;
}

static bool has_return(IrStmt *s) {
  bool found = false;
  IrVisitor v = {NULL, find_return, &found};
  if (s) ir_visit(s, &v);
  return found;
}

static const char *tile_op_name(const IrStmt *s) {
  switch (s->kind) {
    case IR_S_COPY: return "T.copy";
    case IR_S_FILL: return "T.fill / T.clear";
    case IR_S_REDUCE: return "T.reduce";
    case IR_S_GEMM: return "T.gemm";
    case IR_S_ATOMIC: return s->u.atomic.tile ? "a tile atomic" : NULL;
    case IR_S_FOR: return s->u.loop.kind == IR_FOR_PARALLEL ? "T.Parallel" : NULL;
    default: return NULL;
  }
}

static void visit_stmt(IrStmt *s, void *ctx) {
  ReturnCheck *rc = ctx;
  if (s->kind == IR_S_FOR && has_return(s->u.loop.body)) rc->returned = true;
  const char *op = tile_op_name(s);
  if (op && rc->returned && !rc->reported) {
    ts_error(rc->c, s->loc,
             "%s after T.thread_return: a tile operation is split across every thread of the block, and the "
             "threads that returned would leave their share undone; do it before the return, or write it per "
             "thread", op);
    rc->reported = true;
  }
}

static void visit_expr(IrExpr *e, void *ctx) {
  ReturnCheck *rc = ctx;
  if (e->kind == IR_CALL && e->u.call.op == IRI_THREAD_RETURN) rc->returned = true;
}

void pass_check_thread_return(TsCompiler *c, IrFunc *f) {
  if (!has_return(f->body)) return;
  ReturnCheck rc = {c, false, false};
  IrVisitor v = {visit_stmt, visit_expr, &rc};
  ir_visit(f->body, &v);
}
