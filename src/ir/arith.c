/* arith.c — integer/float expression simplification used by the passes to keep index
 * arithmetic readable and cheap: constant folding (done by ir_binary), re-association
 * of constants, (x*c)//c -> x, (x*c)%c -> 0 and friends.  Rules are exact for integers
 * (no overflow assumptions beyond those C already makes for int32 indices). */
#include "ir.h"

static bool cint(const IrExpr *e, int64_t *v) { return ir_is_const_int(e, v); }

static IrExpr *simplify_binary(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b, const IrExpr *orig) {
  int64_t ca, cb, cc;
  bool is_int = !dtype_is_float(orig->dtype) || (ir_expr_flags[k] & IRF_CMP);
  /* Constants to the right of commutative ops so the rules below see them there. */
  if ((ir_expr_flags[k] & IRF_COMMUT) && cint(a, &ca) && !cint(b, &cb)) {
    IrExpr *t = a;
    a = b;
    b = t;
  }
  if (is_int && !dtype_is_float(a->dtype) && cint(b, &cb)) {
    /* (x + c1) + c2 -> x + (c1 + c2);  (x - c1) + c2 likewise */
    if ((k == IR_ADD || k == IR_SUB) && (a->kind == IR_ADD || a->kind == IR_SUB) && cint(a->u.ops[1], &ca)) {
      int64_t inner = a->kind == IR_ADD ? ca : -ca;
      int64_t total = inner + (k == IR_ADD ? cb : -cb);
      IrExpr *x = a->u.ops[0];
      if (total == 0) return x;
      return total > 0 ? ir_binary(c, IR_ADD, x, ir_int(c, total, orig->dtype, orig->loc), orig->loc)
                       : ir_binary(c, IR_SUB, x, ir_int(c, -total, orig->dtype, orig->loc), orig->loc);
    }
    /* (x * c1) * c2 -> x * (c1 * c2) */
    if (k == IR_MUL && a->kind == IR_MUL && cint(a->u.ops[1], &ca))
      return ir_binary(c, IR_MUL, a->u.ops[0], ir_int(c, ca * cb, orig->dtype, orig->loc), orig->loc);
    if (cb > 0 && a->kind == IR_MUL && cint(a->u.ops[1], &ca) && ca > 0) {
      /* (x * c1) // c2 with c2 | c1 -> x * (c1 / c2); (x * c1) % c2 with c2 | c1 -> 0 */
      if ((k == IR_FLOORDIV) && ca % cb == 0)
        return ir_binary(c, IR_MUL, a->u.ops[0], ir_int(c, ca / cb, orig->dtype, orig->loc), orig->loc);
      if ((k == IR_FLOORMOD) && ca % cb == 0) return ir_int(c, 0, orig->dtype, orig->loc);
    }
    /* (x * c1 + y) // c1 where 0 <= y < c1 is not provable without bounds; skip. */
    /* (x // c1) // c2 -> x // (c1 * c2) for positive constants (exact for floor division) */
    if (k == IR_FLOORDIV && cb > 0 && a->kind == IR_FLOORDIV && cint(a->u.ops[1], &cc) && cc > 0)
      return ir_binary(c, IR_FLOORDIV, a->u.ops[0], ir_int(c, cc * cb, orig->dtype, orig->loc), orig->loc);
  }
  if ((k == IR_MIN || k == IR_MAX) && ir_expr_equal(a, b)) return a;
  if (k == IR_SUB && is_int && ir_expr_equal(a, b)) return ir_int(c, 0, orig->dtype, orig->loc);
  IrExpr *r = ir_binary(c, k, a, b, orig->loc);
  if (r->dtype != orig->dtype && !(ir_expr_flags[k] & (IRF_CMP | IRF_LOGIC)) && r->kind != IR_INT &&
      r->kind != IR_FLOAT)
    r = ir_cast(c, orig->dtype, r, orig->loc);
  return r;
}

IrExpr *ir_simplify(TsCompiler *c, IrExpr *e) {
  if (!e) return NULL;
  switch (e->kind) {
    case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return e;
    case IR_CALL:
    case IR_LOAD: {
      bool call = e->kind == IR_CALL;
      int n = call ? e->u.call.nargs : e->u.load.nidx;
      IrExpr **old = call ? e->u.call.args : e->u.load.idx;
      IrExpr **xs = ARENA_ARRAY(c->arena, IrExpr *, n);
      bool ch = false;
      for (int i = 0; i < n; i++) {
        xs[i] = ir_simplify(c, old[i]);
        ch |= xs[i] != old[i];
      }
      return ch ? ir_with_operands(c, e, xs) : e;
    }
    default: break;
  }
  int n = ir_expr_nops[e->kind];
  IrExpr *ops[3] = {0};
  for (int i = 0; i < n; i++) ops[i] = ir_simplify(c, e->u.ops[i]);
  if (n == 2) return simplify_binary(c, e->kind, ops[0], ops[1], e);
  if (e->kind == IR_SELECT || e->kind == IR_IF_THEN_ELSE) {
    if (ir_expr_equal(ops[1], ops[2])) return ops[1];
    return ir_select(c, e->kind, ops[0], ops[1], ops[2], e->loc);
  }
  if (e->kind == IR_CAST) return ir_cast(c, e->dtype, ops[0], e->loc);
  if (e->kind == IR_REINTERPRET) {
    if (ops[0] == e->u.ops[0]) return e;
    IrExpr *r = ARENA_NEW(c->arena, IrExpr);
    *r = *e;
    r->u.ops[0] = ops[0];
    return r;
  }
  return ir_unary(c, e->kind, ops[0], e->loc);
}
