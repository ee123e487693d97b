/* register_bounds.c — refuses a register buffer (T.alloc_fragment, T.alloc_local) that a
 * T.Parallel nest indexes past its constant shape, e.g. a fragment of `heads` elements
 * filled by a loop over block_M rows.  Such an access writes or reads registers that do
 * not exist: lowered, it lands in other variables (silently wrong results), so it is a
 * diagnostic at the access.  Only exact index ranges are judged (a loop var of the nest,
 * plus or minus a constant), and only accesses every iteration performs: not under an
 * `if` inside the nest, nor in the branches of T.if_then_else / a select, nor right of a
 * short-circuit `and` / `or`, where a guard may keep the index in bounds. */
#include "passes.h"

typedef struct Bounds {
  TsCompiler *c;
  IrRangeEnv env;
  bool bad;
} Bounds;

/* The exact range of var, var + k or var - k over the nest; false for other forms. */
static bool exact_range(const Bounds *bd, const IrExpr *e, int64_t *lo, int64_t *hi) {
  int64_t k = 0;
  const IrExpr *v = e;
  if ((e->kind == IR_ADD || e->kind == IR_SUB) && ir_is_const_int(e->u.ops[1], &k)) {
    v = e->u.ops[0];
    if (e->kind == IR_SUB) k = -k;
  } else if (e->kind == IR_ADD && ir_is_const_int(e->u.ops[0], &k)) {
    v = e->u.ops[1];
  }
  if (v->kind != IR_VAR || !ir_range(v, &bd->env, lo, hi)) return false;
  *lo += k;
  *hi += k;
  return true;
}

static void check_access(Bounds *bd, IrBuffer *b, IrExpr *const *idx, int nidx, SrcLoc loc) {
  if ((b->scope != IR_SCOPE_FRAGMENT && b->scope != IR_SCOPE_LOCAL) || nidx != b->ndim || bd->bad) return;
  for (int p = 0; p < nidx; p++) {
    int64_t shp, lo, hi;
    if (!ir_is_const_int(b->shape[p], &shp) || !exact_range(bd, idx[p], &lo, &hi)) continue;
    if (lo >= 0 && hi < shp) continue;
    ts_error(bd->c, loc,
             "'%s' has %lld elements along dim %d, but this T.Parallel loop indexes it with values %lld..%lld "
             "(registers that do not exist; size the buffer to the loop, e.g. T.alloc_fragment with the loop's "
             "extent)", b->name, (long long)shp, p, (long long)lo, (long long)hi);
    bd->bad = true;
    return;
  }
}

static void check_expr(Bounds *bd, IrExpr *e) {
  if (!e) return;
  switch (e->kind) {
    case IR_LOAD:
      check_access(bd, e->u.load.buf, e->u.load.idx, e->u.load.nidx, e->loc);
      for (int i = 0; i < e->u.load.nidx; i++) check_expr(bd, e->u.load.idx[i]);
      return;
    case IR_SELECT:
    case IR_IF_THEN_ELSE: check_expr(bd, e->u.ops[0]); return; /* the branches may be guarded */
    case IR_AND:
    case IR_OR: check_expr(bd, e->u.ops[0]); return; /* the right side may be guarded */
    case IR_CALL:
      for (int i = 0; i < e->u.call.nargs; i++) check_expr(bd, e->u.call.args[i]);
      return;
    case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return;
    default:
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) check_expr(bd, e->u.ops[i]);
  }
}

static void check_stmt(Bounds *bd, IrStmt *s) {
  if (!s || bd->bad) return;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) check_stmt(bd, s->u.seq.items[i]);
      return;
    case IR_S_STORE:
      check_access(bd, s->u.store.buf, s->u.store.idx, s->u.store.nidx, s->loc);
      for (int i = 0; i < s->u.store.nidx; i++) check_expr(bd, s->u.store.idx[i]);
      check_expr(bd, s->u.store.value);
      return;
    case IR_S_LET: check_expr(bd, s->u.let.value); return;
    case IR_S_EVAL: check_expr(bd, s->u.eval.value); return;
    case IR_S_IF: check_expr(bd, s->u.if_.cond); return; /* the branches may be guarded */
    case IR_S_FOR: check_stmt(bd, s->u.loop.body); return; /* inner vars: no range, not judged */
    default: return;
  }
}

bool pass_check_register_bounds(TsCompiler *c, const ParNest *nest) {
  Bounds bd = {.c = c};
  for (int q = 0; q < nest->n; q++)
    ir_range_env_add(&bd.env, nest->var[q], nest->min[q], nest->min[q] + nest->extent[q] - 1);
  check_stmt(&bd, nest->body);
  return !bd.bad;
}
