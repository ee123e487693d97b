/* heavy_first.c — launch the longest blocks first.  Blocks start in the order of their linear
 * index (x fastest), one wave after another as SMs free up.  When a kernel's loops run more
 * iterations for a larger block index on some axis (causal attention: block row bx visits
 * bx + 1 key blocks), its heaviest blocks start last and the grid ends with a few SMs still
 * busy on them.  Walking that axis backwards (bx = gridDim - 1 - blockIdx) starts them first,
 * so the last blocks to start are the short ones that fill the gaps, as FlashAttention's
 * causal schedule does.
 *
 * Any order of independent blocks computes the same result; the pass leaves alone kernels
 * whose blocks may wait for one another (a while loop, distributed or grid-wide operations,
 * extern calls or a prelude, which could spin on what another block writes) and kernels whose
 * block order the compiler or T.use_swizzle already chose (persistent, rasterized,
 * clusters).  On unless pass_configs set ts.heavy_first_blocks False. */
#include "passes.h"

/* How an integer expression moves as v grows: independent of v, never down, never up, or
 * unknown.  A let variable is followed into its value; other variables count as fixed. */
typedef enum Trend { TR_FIXED, TR_UP, TR_DOWN, TR_UNKNOWN } Trend;

static Trend flip(Trend t) { return t == TR_UP ? TR_DOWN : t == TR_DOWN ? TR_UP : t; }

static Trend join(Trend a, Trend b) {
  if (a == TR_FIXED) return b;
  if (b == TR_FIXED || a == b) return a;
  return TR_UNKNOWN;
}

static Trend trend(const IrExpr *e, const IrVar *v, int *budget);

/* t scaled by the constant factor f (a product with anything else is unknown) */
static Trend scaled(const IrExpr *e, const IrExpr *f, const IrVar *v, int *budget) {
  int64_t k;
  Trend t = trend(e, v, budget);
  if (t == TR_FIXED) return trend(f, v, budget) == TR_FIXED ? TR_FIXED : TR_UNKNOWN;
  if (!ir_is_const_int(f, &k)) return TR_UNKNOWN;
  return k > 0 ? t : k < 0 ? flip(t) : TR_FIXED;
}

/* budget: expression nodes still to visit (lets shared by several terms are revisited, so a
 * chain of them could take exponential time); unknown once spent */
static Trend trend(const IrExpr *e, const IrVar *v, int *budget) {
  if (!e || --*budget < 0) return TR_UNKNOWN;
  int64_t k;
  switch (e->kind) {
  case IR_INT:
  case IR_FLOAT:
    return TR_FIXED;
  case IR_VAR:
    if (e->u.var == v) return TR_UP;
    return e->u.var->kind == IR_VAR_LET && e->u.var->let_value ? trend(e->u.var->let_value, v, budget) : TR_FIXED;
  case IR_ADD:
  case IR_MIN:
  case IR_MAX:
    return join(trend(e->u.ops[0], v, budget), trend(e->u.ops[1], v, budget));
  case IR_SUB:
    return join(trend(e->u.ops[0], v, budget), flip(trend(e->u.ops[1], v, budget)));
  case IR_NEG:
    return flip(trend(e->u.ops[0], v, budget));
  case IR_CAST:
    return trend(e->u.ops[0], v, budget);
  case IR_MUL: {
    Trend t = scaled(e->u.ops[0], e->u.ops[1], v, budget);
    return t != TR_UNKNOWN ? t : scaled(e->u.ops[1], e->u.ops[0], v, budget);
  }
  case IR_FLOORDIV:
    if (ir_is_const_int(e->u.ops[1], &k) && k > 0) return trend(e->u.ops[0], v, budget);
    break;
  default:
    break;
  }
  return ir_expr_uses_var(e, v) ? TR_UNKNOWN : TR_FIXED;
}

/* A block index v and the combined trend, in v, of the trip counts of the loops seen so far. */
typedef struct Scan {
  const IrVar *v;
  Trend loops;
} Scan;

static void scan_loop(IrStmt *s, void *ctx) {
  Scan *sc = ctx;
  if (s->kind == IR_S_FOR && s->u.loop.kind != IR_FOR_PARALLEL && s->u.loop.kind != IR_FOR_THREAD)
    sc->loops = join(sc->loops, trend(s->u.loop.extent, sc->v, &(int){4096}));
}

/* The axis to walk backwards: the one axis whose block index the loops' trip counts grow
 * with (none shrinking or moving unknowably); -1 for none. */
static int heavy_axis(const IrKernel *k) {
  int axis = -1;
  for (int a = 0; a < 3; a++) {
    if (!k->block_var[a]) continue;
    Scan sc = {k->block_var[a], TR_FIXED};
    IrVisitor vis = {scan_loop, NULL, &sc};
    ir_visit(k->body, &vis);
    if (sc.loops == TR_UP) {
      if (axis >= 0) return -1;
      axis = a;
    }
  }
  return axis;
}

static void reverse_axis(TsCompiler *c, IrKernel *k, int a) {
  IrVar *bv = k->block_var[a];
  SrcLoc loc = k->body->loc;
  IrVar *nv = ir_var(c, arena_printf(c->arena, "%s_h", bv->name), TS_DTYPE_INT32, IR_VAR_LET, loc);
  IrExpr *last = ir_binary(c, IR_SUB, ir_cast(c, TS_DTYPE_INT32, k->grid[a], loc), ir_int(c, 1, TS_DTYPE_INT32, loc), loc);
  IrExpr *value = ir_binary(c, IR_SUB, last, ir_varref(c, bv, loc), loc);
  nv->let_value = value;
  IrExpr *to = ir_varref(c, nv, loc);
  IrStmt *rest = ir_subst_stmt(c, k->body, &bv, &to, 1);
  k->body = ir_seq(c, (IrStmt *[]){ir_let(c, nv, value, loc), rest}, 2, loc);
}

static void walk(TsCompiler *c, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, s->u.seq.items[i]);
  if (s->kind != IR_S_KERNEL) return;
  IrKernel *k = &s->u.kernel;
  int64_t n;
  if (k->persistent || k->rasterized || k->raster_panel > 0 || k->cluster_x > 1 || k->prelude ||
      pass_may_wait(k->body))
    return;
  int a = heavy_axis(k);
  if (a < 0 || (ir_is_const_int(k->grid[a], &n) && n <= 1)) return;
  reverse_axis(c, k, a);
}

void pass_heavy_first_blocks(TsCompiler *c, IrFunc *f) {
  if (pass_config_state(f, "ts.heavy_first_blocks") == 0) return;
  walk(c, f->body);
}
