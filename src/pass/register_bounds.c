/* register_bounds.c — refuses a register buffer (T.alloc_fragment, T.alloc_local) that a
 * T.Parallel nest indexes past its constant shape, e.g. a fragment of `heads` elements
 * filled by a loop over block_M rows.  Such an access writes or reads registers that do
 * not exist: lowered, it lands in other variables (silently wrong results), so it is a
 * diagnostic at the access.  Only exact index ranges are judged (a loop var of the nest,
 * plus or minus a constant), and only accesses every iteration performs: not under an
 * `if` inside the nest, nor in the branches of T.if_then_else / a select, nor right of a
 * short-circuit `and` / `or`, where a guard may keep the index in bounds.
 *
 * pass_size_register_buffers (the first pass) first sizes such a fragment to its loops as
 * TileLang does, where a fragment's registers follow the loop that fills it (its attention-sink
 * examples declare `sinks` with `heads` elements and fill block_M of them): a fragment that only
 * T.Parallel element accesses touch (no tile operation, no view) and that such an access indexes
 * past a dimension, from 0 up, is enlarged along it to the loop's range, with a warning. */
#include "passes.h"

typedef struct Need {
  IrBuffer *buf;
  int64_t hi[8]; /* per dimension: the largest index an exact access reaches */
  SrcLoc loc;    /* the first access past the declared shape */
  bool past, negative, tiled;
} Need;

typedef struct Bounds {
  TsCompiler *c;
  IrRangeEnv env;
  bool bad;
  PtrVec *needs; /* sizing mode (pass_size_register_buffers): record instead of refusing */
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

static Need *need_of(PtrVec *needs, IrBuffer *b, TsCompiler *c) {
  for (int i = 0; i < needs->len; i++)
    if (((Need *)needs->items[i])->buf == b) return needs->items[i];
  Need *n = ARENA_NEW(c->arena, Need);
  n->buf = b;
  for (int p = 0; p < 8; p++) n->hi[p] = -1;
  vec_push(c->arena, needs, n);
  return n;
}

/* Sizing mode: how far an exact access of a fragment reaches along each dimension. */
static void record_access(Bounds *bd, IrBuffer *b, IrExpr *const *idx, int nidx, SrcLoc loc) {
  if (b->scope != IR_SCOPE_FRAGMENT || nidx != b->ndim || nidx > 8) return;
  Need *n = need_of(bd->needs, b, bd->c);
  for (int p = 0; p < nidx; p++) {
    int64_t shp, lo, hi;
    if (!ir_is_const_int(b->shape[p], &shp) || !exact_range(bd, idx[p], &lo, &hi)) continue;
    if (lo < 0) n->negative = true;
    if (hi >= shp && !n->past) n->loc = loc;
    if (hi >= shp) n->past = true;
    if (hi > n->hi[p]) n->hi[p] = hi;
  }
}

static void check_access(Bounds *bd, IrBuffer *b, IrExpr *const *idx, int nidx, SrcLoc loc) {
  if (bd->needs) {
    record_access(bd, b, idx, nidx, loc);
    return;
  }
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

/* ---- sizing (the first pass) ------------------------------------------------------- */

static void mark_tiled(PtrVec *needs, IrBuffer *b, TsCompiler *c) {
  if (b && b->scope == IR_SCOPE_FRAGMENT) need_of(needs, b, c)->tiled = true;
}

/* Fragments a statement touches other than element by element: tile-operation operands and
 * the buffers views alias. */
static void mark_tile_uses(PtrVec *needs, IrStmt *s, TsCompiler *c) {
  IrOperand ops[IR_TILE_MAX_OPERANDS];
  for (int i = ir_tile_operands(s, ops) - 1; i >= 0; i--) mark_tiled(needs, ops[i].buf, c);
  if (s->kind == IR_S_ALLOC) mark_tiled(needs, s->u.alloc.buf->alias_of, c);
}

static void size_walk(TsCompiler *c, IrStmt *s, PtrVec *needs) {
  if (!s) return;
  mark_tile_uses(needs, s, c);
  if (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PARALLEL) {
    Bounds bd = {.c = c, .needs = needs};
    ParNest nest;
    if (!pass_parallel_nest(c, s, &nest)) return;
    for (int q = 0; q < nest.n; q++)
      ir_range_env_add(&bd.env, nest.var[q], nest.min[q], nest.min[q] + nest.extent[q] - 1);
    check_stmt(&bd, nest.body);
    size_walk(c, nest.body, needs); /* tile operations inside the nest */
    return;
  }
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) size_walk(c, s->u.seq.items[i], needs);
      return;
    case IR_S_FOR: size_walk(c, s->u.loop.body, needs); return;
    case IR_S_WHILE: size_walk(c, s->u.while_.body, needs); return;
    case IR_S_IF:
      size_walk(c, s->u.if_.then_s, needs);
      size_walk(c, s->u.if_.else_s, needs);
      return;
    case IR_S_KERNEL: size_walk(c, s->u.kernel.body, needs); return;
    default: return;
  }
}

static void enlarge(TsCompiler *c, const Need *n) {
  IrBuffer *b = n->buf;
  StrBuf was = {0}, now = {0};
  for (int p = 0; p < b->ndim; p++) {
    int64_t shp;
    ir_is_const_int(b->shape[p], &shp);
    sb_printf(&was, "%s%lld", p ? ", " : "", (long long)shp);
    if (n->hi[p] >= shp) b->shape[p] = ir_int(c, n->hi[p] + 1, b->shape[p]->dtype, b->shape[p]->loc);
    ir_is_const_int(b->shape[p], &shp);
    sb_printf(&now, "%s%lld", p ? ", " : "", (long long)shp);
  }
  diag_warning(&c->diag, n->loc,
               "'%s' is declared [%s] but this T.Parallel loop indexes it past that; it holds [%s], as the loops "
               "that use it need (TileLang sizes a fragment by its loops)", b->name, sb_str(&was), sb_str(&now));
  sb_free(&was);
  sb_free(&now);
}

void pass_size_register_buffers(TsCompiler *c, IrFunc *f) {
  PtrVec needs = {0};
  size_walk(c, f->body, &needs);
  for (int i = 0; i < needs.len; i++) {
    const Need *n = needs.items[i];
    if (n->past && !n->negative && !n->tiled) enlarge(c, n);
  }
}
