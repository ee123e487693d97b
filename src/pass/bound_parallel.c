/* bound_parallel.c — the first pass: a T.Parallel loop whose extent is known only at run time
 * but bounded by a constant (`T.Parallel(T.min(valid_len, 512))`, TileLang's dynamic
 * parallel extents) becomes the loop over the bound with its body guarded by the run-time
 * extent, so that the passes after it (which lay out nests of constant extents) see an
 * ordinary nest.  Other dynamic extents stay, for pass_parallel_nest to refuse. */
#include "passes.h"

/* The ranges of the function's let-bound integers that have one (`span = T.min(n, 512)` is a
 * let), in program order, so that a let's value may use an earlier one. */
static void let_range(IrStmt *s, void *ctx) {
  IrRangeEnv *env = ctx;
  int64_t lo, hi;
  if (s->kind == IR_S_LET && env->n < 32 && !dtype_is_float(s->u.let.var->dtype) &&
      ir_range(s->u.let.value, env, &lo, &hi))
    ir_range_env_add(env, s->u.let.var, lo, hi);
}

/* s (a parallel loop) over the bound of its extent, or s itself. */
static IrStmt *bounded(TsCompiler *c, IrStmt *s, const IrRangeEnv *env) {
  int64_t lo, hi, mn;
  if (ir_is_const_int(s->u.loop.extent, &hi) || !ir_is_const_int(s->u.loop.min, &mn)) return s;
  if (!ir_range(s->u.loop.extent, env, &lo, &hi) || hi < 1 || hi > (INT64_C(1) << 30)) return s;
  SrcLoc loc = s->loc;
  IrExpr *v = ir_varref(c, s->u.loop.var, loc);
  IrExpr *end = ir_binary(c, IR_ADD, s->u.loop.min, s->u.loop.extent, loc);
  IrStmt *body = ir_if(c, ir_binary(c, IR_LT, v, end, loc), s->u.loop.body, NULL, loc);
  IrStmt *r = ir_stmt(c, IR_S_FOR, loc);
  *r = *s; /* the loop's annotations too */
  r->u.loop.extent = ir_int(c, hi, s->u.loop.extent->dtype, loc);
  r->u.loop.body = body;
  return r;
}

static IrStmt *visit(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  IrStmt *r = ir_map_children(c, s, visit, ctx);
  return r->kind == IR_S_FOR && r->u.loop.kind == IR_FOR_PARALLEL ? bounded(c, r, ctx) : r;
}

void pass_bound_parallel_extents(TsCompiler *c, IrFunc *f) {
  IrRangeEnv env = {0};
  IrVisitor v = {let_range, NULL, &env};
  ir_visit(f->body, &v);
  f->body = visit(c, f->body, &env);
}
