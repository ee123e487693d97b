/* simplify.c — runs the arithmetic simplifier (ir_simplify, src/ir/arith.c) over every
 * expression of the function, after lowering has produced index arithmetic such as
 * (o*4 + 0)*1 + (tx/32 % 4)*4.  Statements are rebuilt, never mutated in place. */
#include "passes.h"

static IrExpr *simp(TsCompiler *c, IrExpr *e) { return e ? ir_simplify(c, e) : NULL; }

static IrExpr **simp_list(TsCompiler *c, IrExpr **xs, int n) {
  IrExpr **out = ARENA_ARRAY(c->arena, IrExpr *, n);
  for (int i = 0; i < n; i++) out[i] = simp(c, xs[i]);
  return out;
}

static IrStmt *simp_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  IrStmt *r = ir_map_children(c, s, simp_stmt, ctx);
  switch (r->kind) {
    case IR_S_FOR:
      r->u.loop.min = simp(c, r->u.loop.min);
      r->u.loop.extent = simp(c, r->u.loop.extent);
      break;
    case IR_S_IF: {
      r->u.if_.cond = simp(c, r->u.if_.cond);
      int64_t v;
      /* A guard that folded to a constant disappears. */
      if (ir_is_const_int(r->u.if_.cond, &v)) {
        if (v) return r->u.if_.then_s;
        return r->u.if_.else_s ? r->u.if_.else_s : ir_seq(c, NULL, 0, r->loc);
      }
      break;
    }
    case IR_S_WHILE: r->u.while_.cond = simp(c, r->u.while_.cond); break;
    case IR_S_LET: r->u.let.value = simp(c, r->u.let.value); break;
    case IR_S_STORE:
      r->u.store.idx = simp_list(c, r->u.store.idx, r->u.store.nidx);
      r->u.store.value = simp(c, r->u.store.value);
      break;
    case IR_S_EVAL: r->u.eval.value = simp(c, r->u.eval.value); break;
    case IR_S_ASSERT: r->u.assert_.cond = simp(c, r->u.assert_.cond); break;
    default: break;
  }
  return r;
}

void pass_simplify(TsCompiler *c, IrFunc *f) { f->body = simp_stmt(c, f->body, NULL); }
