/* parallel_locals.c — the first pass: refuses a T.alloc_local buffer indexed by a T.Parallel
 * loop variable (or a value computed from one), as TileLang does.  Every thread holds its own
 * copy of a local buffer, while T.Parallel spreads the iterations over the threads: each
 * thread would see only the elements of its own iterations, and two nests laid out
 * differently would not meet (what one wrote, the other reads in another thread).  A fragment
 * (T.alloc_fragment) is the buffer T.Parallel distributes, and a reducer (T.alloc_reducer,
 * local too) is indexed that way by design.  Constant indices, and the
 * variables of serial, unrolled or vectorized loops inside the nest, are fine: every
 * iteration then uses the same elements of its thread's copy.  Only the nests the kernel
 * writes are judged: the passes after this one make parallel nests over registers
 * themselves (a tile atomic from a local buffer). */
#include "passes.h"

typedef struct Locals {
  TsCompiler *c;
  PtrVec tainted; /* IrVar*: T.Parallel loop vars, and lets computed from them */
  PtrVec origin;  /* IrVar*: for each of those, the loop var it comes from */
  PtrVec named;   /* IrBuffer*: refused already (one diagnostic a buffer) */
} Locals;

/* Which tainted variable e reads first (its position in Locals.tainted), or -1. */
static int tainted_in(const Locals *x, const IrExpr *e) {
  for (int i = 0; i < x->tainted.len; i++)
    if (ir_expr_uses_var(e, x->tainted.items[i])) return i;
  return -1;
}
static void taint(Locals *x, IrVar *v, IrVar *loop_var) {
  vec_push(x->c->arena, &x->tainted, v);
  vec_push(x->c->arena, &x->origin, loop_var);
}

static void check_index(Locals *x, IrBuffer *b, IrExpr *const *idx, int nidx, SrcLoc loc) {
  IrBuffer *root = (IrBuffer *)ir_buffer_root(b);
  if (root->scope != IR_SCOPE_LOCAL || root->reducer || vec_has(&x->named, root)) return;
  for (int d = 0; d < nidx; d++) {
    int t = tainted_in(x, idx[d]);
    if (t < 0) continue;
    const IrVar *v = x->tainted.items[t], *loop = x->origin.items[t];
    ts_error(x->c, loc,
             "Local buffer '%s' is indexed by T.Parallel loop variable '%s'%s%s%s: each thread holds its own copy of a "
             "T.alloc_local buffer, while T.Parallel spreads the iterations over the threads; use T.alloc_fragment "
             "(or a serial loop)",
             root->name, loop->name, v != loop ? " (through '" : "", v != loop ? v->name : "", v != loop ? "')" : "");
    vec_push(x->c->arena, &x->named, root);
    return;
  }
}

static void check_loads(IrExpr *e, void *ctx) {
  if (e->kind == IR_LOAD) check_index(ctx, e->u.load.buf, e->u.load.idx, e->u.load.nidx, e->loc);
}

static void walk(Locals *x, IrStmt *s, bool in_nest);
/* The expressions s itself holds (not those of the statements inside it). */
static void own_exprs(Locals *x, IrStmt *s) {
  IrVisitor v = {NULL, check_loads, x};
  switch (s->kind) {
    case IR_S_FOR: ir_visit_expr(s->u.loop.min, &v), ir_visit_expr(s->u.loop.extent, &v); return;
    case IR_S_IF: ir_visit_expr(s->u.if_.cond, &v); return;
    case IR_S_WHILE: ir_visit_expr(s->u.while_.cond, &v); return;
    case IR_S_LET: ir_visit_expr(s->u.let.value, &v); return;
    case IR_S_EVAL: ir_visit_expr(s->u.eval.value, &v); return;
    case IR_S_STORE:
      check_index(x, s->u.store.buf, s->u.store.idx, s->u.store.nidx, s->loc);
      for (int i = 0; i < s->u.store.nidx; i++) ir_visit_expr(s->u.store.idx[i], &v);
      ir_visit_expr(s->u.store.value, &v);
      return;
    default: return;
  }
}

static void walk(Locals *x, IrStmt *s, bool in_nest) {
  if (!s) return;
  if (in_nest) own_exprs(x, s);
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) walk(x, s->u.seq.items[i], in_nest);
      return;
    case IR_S_FOR:
      if (s->u.loop.kind == IR_FOR_PARALLEL && s->u.loop.var) {
        taint(x, s->u.loop.var, s->u.loop.var);
        in_nest = true;
      }
      walk(x, s->u.loop.body, in_nest);
      return;
    case IR_S_IF:
      walk(x, s->u.if_.then_s, in_nest);
      walk(x, s->u.if_.else_s, in_nest);
      return;
    case IR_S_WHILE: walk(x, s->u.while_.body, in_nest); return;
    case IR_S_KERNEL: walk(x, s->u.kernel.body, false); return;
    case IR_S_LET:
      if (in_nest) {
        int t = tainted_in(x, s->u.let.value);
        if (t >= 0) taint(x, s->u.let.var, x->origin.items[t]);
      }
      return;
    default: return;
  }
}

void pass_check_parallel_locals(TsCompiler *c, IrFunc *f) {
  Locals x = {c, {0}, {0}, {0}};
  walk(&x, f->body, false);
}
