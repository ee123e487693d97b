/* walk.c — generic traversal of the IR for every layer: visiting every statement and
 * expression under a statement (pre-order), rebuilding a statement with its children
 * mapped, whether an expression uses a variable, the buffers a tile statement names, the
 * buffer a view's memory belongs to, and whether a function touches a buffer at all.
 * (analysis.h) */
#include "analysis.h"

IrStmt *ir_map_children(TsCompiler *c, IrStmt *s, IrStmtFn fn, void *ctx) {
  if (!s) return NULL;
  IrStmt *r = ir_stmt(c, s->kind, s->loc);
  *r = *s;
  switch (s->kind) {
    case IR_S_SEQ: {
      PtrVec v = {0};
      for (int i = 0; i < s->u.seq.n; i++) vec_push(c->arena, &v, fn(c, s->u.seq.items[i], ctx));
      return ir_seq_vec(c, &v, s->loc);
    }
    case IR_S_FOR: r->u.loop.body = fn(c, s->u.loop.body, ctx); break;
    case IR_S_IF:
      r->u.if_.then_s = fn(c, s->u.if_.then_s, ctx);
      r->u.if_.else_s = s->u.if_.else_s ? fn(c, s->u.if_.else_s, ctx) : NULL;
      break;
    case IR_S_WHILE: r->u.while_.body = fn(c, s->u.while_.body, ctx); break;
    case IR_S_KERNEL: r->u.kernel.body = fn(c, s->u.kernel.body, ctx); break;
    default: break;
  }
  return r;
}

void ir_visit_expr(IrExpr *e, const IrVisitor *v) {
  if (!e) return;
  if (v->expr) v->expr(e, v->ctx);
  switch (e->kind) {
    case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return;
    case IR_CALL:
      for (int i = 0; i < e->u.call.nargs; i++) ir_visit_expr(e->u.call.args[i], v);
      return;
    case IR_LOAD:
      for (int i = 0; i < e->u.load.nidx; i++) ir_visit_expr(e->u.load.idx[i], v);
      return;
    default:
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) ir_visit_expr(e->u.ops[i], v);
  }
}

static void visit_region(const IrRegion *r, const IrVisitor *v) {
  for (int i = 0; i < r->ndim; i++) {
    ir_visit_expr(r->min[i], v);
    ir_visit_expr(r->extent[i], v);
  }
}

void ir_visit(IrStmt *s, const IrVisitor *v) {
  if (!s) return;
  if (v->stmt) v->stmt(s, v->ctx);
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) ir_visit(s->u.seq.items[i], v);
      break;
    case IR_S_FOR:
      ir_visit_expr(s->u.loop.min, v);
      ir_visit_expr(s->u.loop.extent, v);
      ir_visit(s->u.loop.body, v);
      break;
    case IR_S_IF:
      ir_visit_expr(s->u.if_.cond, v);
      ir_visit(s->u.if_.then_s, v);
      ir_visit(s->u.if_.else_s, v);
      break;
    case IR_S_WHILE:
      ir_visit_expr(s->u.while_.cond, v);
      ir_visit(s->u.while_.body, v);
      break;
    case IR_S_LET: ir_visit_expr(s->u.let.value, v); break;
    case IR_S_STORE:
      for (int i = 0; i < s->u.store.nidx; i++) ir_visit_expr(s->u.store.idx[i], v);
      ir_visit_expr(s->u.store.value, v);
      break;
    case IR_S_EVAL: ir_visit_expr(s->u.eval.value, v); break;
    case IR_S_KERNEL: ir_visit(s->u.kernel.body, v); break;
    case IR_S_ASSERT: ir_visit_expr(s->u.assert_.cond, v); break;
    case IR_S_COPY:
      visit_region(&s->u.copy.src, v);
      visit_region(&s->u.copy.dst, v);
      ir_visit_expr(s->u.copy.barrier, v);
      ir_visit_expr(s->u.copy.dst_block, v);
      break;
    case IR_S_FILL:
      visit_region(&s->u.fill.dst, v);
      ir_visit_expr(s->u.fill.value, v);
      break;
    case IR_S_ATOMIC:
      visit_region(&s->u.atomic.dst, v);
      if (s->u.atomic.tile) visit_region(&s->u.atomic.src, v);
      ir_visit_expr(s->u.atomic.value, v);
      break;
    default: break;
  }
}

typedef struct UsesCtx { const IrVar *v; bool found; } UsesCtx;
static void uses_expr(IrExpr *e, void *ctx) {
  UsesCtx *u = ctx;
  if (e->kind == IR_VAR && e->u.var == u->v) u->found = true;
}
bool ir_expr_uses_var(const IrExpr *e, const IrVar *v) {
  UsesCtx u = {v, false};
  IrVisitor vis = {NULL, uses_expr, &u};
  ir_visit_expr((IrExpr *)e, &vis);
  return u.found;
}

const IrBuffer *ir_buffer_root(const IrBuffer *b) {
  for (int guard = 0; b && b->alias_of && guard < 64; guard++) b = b->alias_of; /* (a cycle is a front-end bug) */
  return b;
}

int ir_tile_operands(const IrStmt *s, IrOperand *out) {
  int n = 0;
#define OPERAND(b, w) (out[n++] = (IrOperand){(b), (w)})
  switch (s->kind) {
    case IR_S_COPY: OPERAND(s->u.copy.src.buf, false); OPERAND(s->u.copy.dst.buf, true); break;
    case IR_S_FILL: OPERAND(s->u.fill.dst.buf, true); break;
    case IR_S_REDUCE: OPERAND(s->u.reduce.src, false); OPERAND(s->u.reduce.dst, true); break;
    case IR_S_ATOMIC:
      OPERAND(s->u.atomic.dst.buf, true);
      if (s->u.atomic.tile) OPERAND(s->u.atomic.src.buf, false);
      break;
    case IR_S_GEMM:
      OPERAND(s->u.gemm.a.buf, false);
      OPERAND(s->u.gemm.b.buf, false);
      if (s->u.gemm.e.buf) OPERAND(s->u.gemm.e.buf, false);
      OPERAND(s->u.gemm.c.buf, true);
      break;
    default: break;
  }
#undef OPERAND
  return n;
}

/* ---- does a function touch a buffer? ------------------------------------------------------ */
typedef struct TouchCtx { const IrBuffer *b; bool found; } TouchCtx;
static void touch_expr(IrExpr *e, void *ctx) {
  TouchCtx *t = ctx;
  if (e->kind == IR_LOAD && ir_buffer_root(e->u.load.buf) == t->b) t->found = true;
}
static void touch_stmt(IrStmt *s, void *ctx) {
  TouchCtx *t = ctx;
  IrOperand ops[IR_TILE_MAX_OPERANDS];
  int n = ir_tile_operands(s, ops);
  for (int i = 0; i < n; i++)
    if (ir_buffer_root(ops[i].buf) == t->b) t->found = true;
  if (s->kind == IR_S_STORE && ir_buffer_root(s->u.store.buf) == t->b) t->found = true;
  if (s->kind == IR_S_ALLOC && s->u.alloc.buf != t->b && ir_buffer_root(s->u.alloc.buf) == t->b) t->found = true;
}
bool ir_func_touches_buffer(const IrFunc *f, const IrBuffer *b) {
  for (int i = 0; i < f->ntma; i++)
    if (f->tma_maps[i].param_index >= 0 && f->tma_maps[i].param_index < f->nparams &&
        f->params[f->tma_maps[i].param_index].buf == b)
      return true;
  TouchCtx t = {b, false};
  IrVisitor v = {touch_stmt, touch_expr, &t};
  ir_visit(f->body, &v);
  return t.found;
}
