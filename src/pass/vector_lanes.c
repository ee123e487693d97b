/* vector_lanes.c — how an expression varies over one vector of a T.Parallel nest: V
 * consecutive values g, g+1, .., g+V-1 of the nest's last var lv, where g is a multiple of V
 * (the loop starts on a multiple of V and the layout gives each thread aligned groups).
 *
 * A copy nest moves such a group with one V-lane access when every index of each operand
 * but the last is the same over the group and the last one runs through V neighbours.
 * im2col's gather is the case that needs more than `x + lv`: its channel index is
 * `(k*bk + lv) % C` and its row and filter indices are `(k*bk + lv) // C ...`, the same for
 * the whole group when V divides C; its zero padding is a select whose condition is then
 * the same over the group too. */
#include "passes.h"

static bool is_var(const IrExpr *e, const IrVar *v) { return e->kind == IR_VAR && e->u.var == v; }

static bool const_multiple(const IrExpr *e, int64_t V) {
  int64_t c;
  return ir_is_const_int(e, &c) && c > 0 && c % V == 0;
}

/* e = g + r with g a multiple of V that is the same over the group, r the lane (0..V-1). */
static bool lane_contiguous(const IrExpr *e, const IrVar *lv, int64_t V) {
  if (is_var(e, lv)) return true;
  switch (e->kind) {
    case IR_ADD:
      for (int k = 0; k < 2; k++)
        if (lane_contiguous(e->u.ops[k], lv, V))
          return ir_is_multiple(e->u.ops[1 - k], V) && pass_lane_uniform(e->u.ops[1 - k], lv, V);
      return false;
    case IR_SUB:
      return lane_contiguous(e->u.ops[0], lv, V) && ir_is_multiple(e->u.ops[1], V) &&
             pass_lane_uniform(e->u.ops[1], lv, V);
    case IR_FLOORMOD: /* (g + r) % c = g % c + r when V divides c */
      return const_multiple(e->u.ops[1], V) && lane_contiguous(e->u.ops[0], lv, V);
    default: return false;
  }
}

/* e takes one value over the group (integer and boolean arithmetic; no memory reads and no
 * calls that depend on the lane). */
bool pass_lane_uniform(const IrExpr *e, const IrVar *lv, int64_t V) {
  if (!ir_expr_uses_var(e, lv)) return true;
  switch (e->kind) {
    case IR_FLOORDIV: /* (g + r) // c = g // c when V divides c */
      if (const_multiple(e->u.ops[1], V) && lane_contiguous(e->u.ops[0], lv, V)) return true;
      break;
    case IR_LT: case IR_GE: /* g + r < b  <=>  g < b, for b a multiple of V */
      if (lane_contiguous(e->u.ops[0], lv, V) && ir_is_multiple(e->u.ops[1], V) &&
          pass_lane_uniform(e->u.ops[1], lv, V))
        return true;
      break;
    case IR_GT: case IR_LE: /* b > g + r  <=>  b > g */
      if (lane_contiguous(e->u.ops[1], lv, V) && ir_is_multiple(e->u.ops[0], V) &&
          pass_lane_uniform(e->u.ops[0], lv, V))
        return true;
      break;
    default: break;
  }
  switch (e->kind) {
    case IR_LOAD: case IR_CALL: case IR_VAR: case IR_DIV: return false;
    default:
      if (ir_expr_nops[e->kind] <= 0 || dtype_is_float(e->dtype)) return false;
      for (int k = 0; k < ir_expr_nops[e->kind]; k++)
        if (!pass_lane_uniform(e->u.ops[k], lv, V)) return false;
      return true;
  }
}


IrExpr *pass_gather_value(TsCompiler *c, IrExpr *value, IrExpr **cond, bool *converts) {
  *cond = NULL;
  *converts = false;
  IrExpr *e = value;
  if (e->kind == IR_CAST) {
    *converts = true;
    e = e->u.ops[0];
  }
  while ((e->kind == IR_SELECT || e->kind == IR_IF_THEN_ELSE) && pass_is_zero(e->u.ops[2])) {
    IrExpr *k = e->u.ops[0];
    *cond = *cond ? ir_binary(c, IR_AND, *cond, k, k->loc) : k;
    e = e->u.ops[1];
  }
  if (e->kind == IR_CAST && !*converts) {
    *converts = true;
    e = e->u.ops[0];
  }
  return e->kind == IR_LOAD && e->lanes == 1 ? e : NULL;
}

/* ---- gather nests ---- */
/* A gather nest reads no memory but its one element and tensors the kernel never writes: it
 * can run stages ahead like a T.copy. */
IrBuffer *pass_gather_dst(TsCompiler *c, IrStmt *st, IrStmt *kbody) {
  IrStmt *b = st;
  while (b && ((b->kind == IR_S_FOR && b->u.loop.kind == IR_FOR_PARALLEL) || (b->kind == IR_S_SEQ && b->u.seq.n == 1)))
    b = b->kind == IR_S_FOR ? b->u.loop.body : b->u.seq.items[0];
  if (st->kind != IR_S_FOR || !b || b->kind != IR_S_STORE || b->u.store.lanes != 1) return NULL;
  IrScope sc = b->u.store.buf->scope;
  if (sc != IR_SCOPE_SHARED && sc != IR_SCOPE_SHARED_DYN) return NULL;
  IrExpr *cond;
  bool converts;
  IrExpr *ld = pass_gather_value(c, b->u.store.value, &cond, &converts);
  if (!ld || ld->u.load.buf->scope != IR_SCOPE_GLOBAL || ld->u.load.buf->remap ||
      (cond && !pass_reads_constant_memory(cond, kbody)))
    return NULL;
  for (int i = 0; i < ld->u.load.nidx; i++)
    if (!pass_reads_constant_memory(ld->u.load.idx[i], kbody)) return NULL;
  for (int i = 0; i < b->u.store.nidx; i++)
    if (!pass_reads_constant_memory(b->u.store.idx[i], kbody)) return NULL;
  return b->u.store.buf;
}

bool pass_lane_indices(const ParNest *nest, IrExpr *const *idx, int nidx, int64_t V) {
  const IrVar *lv = nest->var[nest->n - 1];
  if (nidx == 0 || nest->min[nest->n - 1] % V != 0) return false;
  for (int k = 0; k < nidx - 1; k++)
    if (!pass_lane_uniform(idx[k], lv, V)) return false;
  return lane_contiguous(idx[nidx - 1], lv, V);
}

bool pass_rows_on_vectors(const IrBuffer *b, int nidx, int64_t V) {
  if (!b->strides) return ir_is_multiple(b->shape[nidx - 1], V);
  int64_t st;
  if (!ir_is_const_int(b->strides[nidx - 1], &st) || st != 1) return false;
  for (int k = 0; k < nidx - 1; k++)
    if (!ir_is_multiple(b->strides[k], V)) return false;
  return true;
}
