/* uniform_select.c — a T.Parallel nest that stores a select decided per element, where the
 * condition is the same for every element on most runs of the nest.  Causal attention fills
 * its score tile with `q_idx >= k_idx ? 0 : -inf` before each QKᵀ: for every key block
 * below the diagonal the condition holds for the whole tile, yet each thread compares and
 * selects every element of it, on the path to the GEMM's issue.  The nest
 *
 *   for i, j in T.Parallel(M, N): buf[i, j] = select(x >= y, a, b)     (a, b free of i, j)
 *
 * becomes
 *
 *   if  min over the nest of (x - y) >= 0:  buf[i, j] = a       (every element true)
 *   elif max over the nest of (x - y) < 0:  buf[i, j] = b       (every element false)
 *   else: the nest as written
 *
 * The bounds come from x - y written as a sum of terms times constants: a term the nest's
 * ranges bound (i, j, i % 8, ...) contributes its bound, any other term must not mention the
 * nest's variables and stays symbolic (bx * 128, k * 128).  The branch is uniform over the
 * block and each path computes what the select would, element by element. */
#include <string.h>

#include "passes.h"

#define MAX_NEST 4
#define MAX_LETS 16

typedef struct Nest {
  IrStmt *top;              /* the outermost parallel loop */
  IrVar *var[MAX_NEST];
  int64_t ext[MAX_NEST];
  int n;
  IrVar *let[MAX_LETS];     /* lets of the innermost body, in order */
  IrExpr *let_value[MAX_LETS];
  int nlets;
  IrStmt *store;            /* buf[idx] = select(cond, a, b) */
} Nest;

static bool uses_nest(const Nest *n, const IrExpr *e, int nlets) {
  for (int i = 0; i < n->n; i++)
    if (ir_expr_uses_var(e, n->var[i])) return true;
  for (int i = 0; i < nlets; i++)
    if (ir_expr_uses_var(e, n->let[i])) return true;
  return false;
}

/* e reads back the very element the nest stores (`x[i, j] = select(c, x[i, j], b)`): on
 * that side the store changes nothing. */
static bool is_identity(const Nest *n, const IrExpr *e) {
  const IrStmt *st = n->store;
  if (e->kind != IR_LOAD || e->u.load.buf != st->u.store.buf || e->u.load.nidx != st->u.store.nidx) return false;
  for (int i = 0; i < e->u.load.nidx; i++)
    if (!ir_expr_equal(e->u.load.idx[i], st->u.store.idx[i])) return false;
  return true;
}

static bool match_nest(IrStmt *s, Nest *n) {
  memset(n, 0, sizeof *n);
  n->top = s;
  while (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PARALLEL) {
    int64_t lo;
    if (n->n == MAX_NEST || !ir_is_const_int(s->u.loop.min, &lo) || lo != 0 ||
        !ir_is_const_int(s->u.loop.extent, &n->ext[n->n]) || n->ext[n->n] <= 0)
      return false;
    n->var[n->n++] = s->u.loop.var;
    s = s->u.loop.body;
  }
  if (!n->n || !s) return false;
  IrStmt *const *items = s->kind == IR_S_SEQ ? s->u.seq.items : &s;
  int count = s->kind == IR_S_SEQ ? s->u.seq.n : 1;
  if (count < 1) return false; /* an empty body */
  for (int i = 0; i < count - 1; i++) {
    if (items[i]->kind != IR_S_LET || n->nlets == MAX_LETS) return false;
    n->let[n->nlets] = items[i]->u.let.var;
    n->let_value[n->nlets++] = items[i]->u.let.value;
  }
  IrStmt *st = items[count - 1];
  if (st->kind != IR_S_STORE || st->u.store.lanes > 1) return false;
  IrExpr *v = st->u.store.value;
  if (v->kind != IR_SELECT && v->kind != IR_IF_THEN_ELSE) return false;
  for (int i = 0; i < st->u.store.nidx; i++) /* the uniform paths drop the lets */
    for (int k = 0; k < n->nlets; k++)
      if (ir_expr_uses_var(st->u.store.idx[i], n->let[k])) return false;
  n->store = st;
  for (int side = 1; side <= 2; side++)
    if (uses_nest(n, v->u.ops[side], n->nlets) && !is_identity(n, v->u.ops[side])) return false;
  return !(is_identity(n, v->u.ops[1]) && is_identity(n, v->u.ops[2]));
}

/* x - y as a symbolic part (terms free of the nest's variables) plus a bounded part [lo, hi]. */
typedef struct Lin {
  TsCompiler *c;
  const Nest *n;
  const IrRangeEnv *env;
  IrExpr *outer; /* NULL: 0 */
  int64_t lo, hi;
  bool ok;
} Lin;

#define LIN_LIMIT ((int64_t)1 << 40)

/* Whether some node of e satisfies pred. */
typedef struct AnyNode {
  bool (*pred)(const IrExpr *e);
  bool found;
} AnyNode;
static void any_visit(IrExpr *e, void *ctx) {
  AnyNode *a = ctx;
  a->found = a->found || a->pred(e);
}
static bool any_node(IrExpr *e, bool (*pred)(const IrExpr *e)) {
  AnyNode a = {pred, false};
  IrVisitor v = {NULL, any_visit, &a};
  ir_visit_expr(e, &v);
  return a.found;
}

/* A term hoisted into the branch condition must mean there what it meant in the nest: a
 * fragment element is distributed over the threads by the nest's layout, and a call may
 * have effects; registers (T.alloc_var), shared and global memory read the same. */
static bool unhoistable(const IrExpr *e) {
  return e->kind == IR_CALL || (e->kind == IR_LOAD && e->u.load.buf->scope == IR_SCOPE_FRAGMENT);
}

/* Unsigned arithmetic wraps (i - 1 at i = 0), where the bounds below assume integers. */
static bool is_unsigned(const IrExpr *e) { return dtype_is_int(e->dtype) && !dtype_is_signed(e->dtype); }

static void add_outer(Lin *l, IrExpr *e, int64_t coef) {
  SrcLoc loc = e->loc;
  IrExpr *t = coef == 1 ? e : ir_binary(l->c, IR_MUL, e, ir_int(l->c, coef, e->dtype, loc), loc);
  l->outer = l->outer ? ir_binary(l->c, IR_ADD, l->outer, t, loc) : t;
}

static void collect(Lin *l, IrExpr *e, int64_t coef) {
  int64_t k, lo, hi;
  if (!l->ok) return;
  if (coef > LIN_LIMIT || coef < -LIN_LIMIT || dtype_is_float(e->dtype)) {
    l->ok = false;
    return;
  }
  switch (e->kind) {
  case IR_ADD:
    collect(l, e->u.ops[0], coef), collect(l, e->u.ops[1], coef);
    return;
  case IR_SUB:
    collect(l, e->u.ops[0], coef), collect(l, e->u.ops[1], -coef);
    return;
  case IR_NEG:
    collect(l, e->u.ops[0], -coef);
    return;
  case IR_MUL: {
    int64_t scaled;
    for (int side = 0; side < 2; side++)
      if (ir_is_const_int(e->u.ops[1 - side], &k)) {
        if (__builtin_mul_overflow(coef, k, &scaled)) break;
        return collect(l, e->u.ops[side], scaled);
      }
    break;
  }
  default:
    break;
  }
  if (ir_range(e, l->env, &lo, &hi) && lo > -LIN_LIMIT && hi < LIN_LIMIT) {
    /* |coef|, |lo|, |hi| < 2^40: the products fit in 128 bits; the sums must fit in 64 */
    __int128 a = (__int128)coef * (coef > 0 ? lo : hi), b = (__int128)coef * (coef > 0 ? hi : lo);
    __int128 nlo = l->lo + a, nhi = l->hi + b;
    if (nlo < -((__int128)1 << 62) || nhi > ((__int128)1 << 62)) {
      l->ok = false;
      return;
    }
    l->lo = (int64_t)nlo, l->hi = (int64_t)nhi;
    return;
  }
  if (uses_nest(l->n, e, 0) || any_node(e, unhoistable)) {
    l->ok = false;
    return;
  }
  add_outer(l, e, coef);
}

/* The condition with the nest's lets substituted (last first, so chains resolve). */
static IrExpr *inline_lets(TsCompiler *c, const Nest *n, IrExpr *e) {
  for (int i = n->nlets - 1; i >= 0; i--) e = ir_subst(c, e, &n->let[i], &n->let_value[i], 1);
  return e;
}

/* Predicates on the nest's outer variables for one comparison x OP y: every element true
 * (*all), every element false (*none).  False when it is not of the form the bounds handle. */
static bool compare_predicates(TsCompiler *c, const Nest *n, IrExpr *cond, IrExpr **all, IrExpr **none) {
  IrExprKind k = cond->kind;
  if (k != IR_GE && k != IR_GT && k != IR_LE && k != IR_LT) return false;
  bool swap = k == IR_LE || k == IR_LT, strict = k == IR_GT || k == IR_LT;
  IrExpr *x = cond->u.ops[swap], *y = cond->u.ops[!swap];
  if (dtype_is_float(x->dtype) || dtype_is_float(y->dtype) || any_node(cond, is_unsigned)) return false;
  IrRangeEnv env = {0};
  for (int i = 0; i < n->n; i++) ir_range_env_add(&env, n->var[i], 0, n->ext[i] - 1);
  Lin l = {c, n, &env, NULL, 0, 0, true};
  collect(&l, x, 1), collect(&l, y, -1);
  if (!l.ok || !l.outer) return false;
  /* x - y >= 0 (strict: > 0) everywhere iff outer + lo >= 0 (> 0); nowhere iff outer + hi < 0 (<= 0) */
  SrcLoc loc = cond->loc;
  ts_dtype t = l.outer->dtype;
  *all = ir_binary(c, strict ? IR_GT : IR_GE, l.outer, ir_int(c, -l.lo, t, loc), loc);
  *none = ir_binary(c, strict ? IR_LE : IR_LT, l.outer, ir_int(c, -l.hi, t, loc), loc);
  return true;
}

/* The same for a conjunction of comparisons (a sliding window: q >= k and q < k + w), where
 * a term free of the nest's variables decides itself: all of them everywhere true when each
 * is; the whole false everywhere when one of them is. */
static bool predicates(TsCompiler *c, const Nest *n, IrExpr *cond, IrExpr **all, IrExpr **none) {
  SrcLoc loc = cond->loc;
  if (cond->kind == IR_AND || (cond->kind == IR_BITAND && cond->dtype == TS_DTYPE_BOOL)) {
    IrExpr *a1, *n1, *a2, *n2;
    if (!predicates(c, n, cond->u.ops[0], &a1, &n1) || !predicates(c, n, cond->u.ops[1], &a2, &n2)) return false;
    *all = ir_binary(c, IR_AND, a1, a2, loc);
    *none = ir_binary(c, IR_OR, n1, n2, loc);
    return true;
  }
  if (!uses_nest(n, cond, 0)) {
    if (any_node(cond, unhoistable)) return false;
    *all = cond;
    *none = ir_unary(c, IR_NOT, cond, loc);
    return true;
  }
  return compare_predicates(c, n, cond, all, none);
}

/* The predicates of the nest's condition (its lets substituted); false when the condition
 * does not depend on the nest's variables at all (then it is uniform as written). */
static bool uniform_predicates(TsCompiler *c, const Nest *n, IrExpr *cond, IrExpr **all, IrExpr **none) {
  cond = inline_lets(c, n, cond);
  return uses_nest(n, cond, 0) && predicates(c, n, cond, all, none);
}

/* The nest storing `value` at the same indices, over fresh loop variables, without lets. */
static IrStmt *uniform_nest(TsCompiler *c, const Nest *n, IrExpr *value) {
  IrVar *fresh[MAX_NEST];
  IrExpr *ref[MAX_NEST];
  SrcLoc loc = n->store->loc;
  for (int i = 0; i < n->n; i++) {
    fresh[i] = ir_var(c, n->var[i]->name, n->var[i]->dtype, IR_VAR_LOOP, loc);
    ref[i] = ir_varref(c, fresh[i], loc);
  }
  IrExpr **idx = arena_alloc(c->arena, sizeof *idx * (size_t)n->store->u.store.nidx);
  for (int i = 0; i < n->store->u.store.nidx; i++) idx[i] = ir_subst(c, n->store->u.store.idx[i], n->var, ref, n->n);
  IrStmt *body = ir_store(c, n->store->u.store.buf, idx, n->store->u.store.nidx, value, loc);
  for (int i = n->n - 1; i >= 0; i--) body = ir_for(c, fresh[i], ir_i32(c, 0), ir_i32(c, n->ext[i]), IR_FOR_PARALLEL, body, loc);
  return body;
}

static IrStmt *rewrite(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  Nest n;
  IrExpr *all, *none;
  if (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PARALLEL) {
    if (!match_nest(s, &n)) return s;
    IrExpr *v = n.store->u.store.value;
    if (!uniform_predicates(c, &n, v->u.ops[0], &all, &none)) return s;
    /* a side that stores the element back does nothing: its branch is left out */
    IrStmt *rest = is_identity(&n, v->u.ops[2]) ? ir_if(c, ir_unary(c, IR_NOT, none, s->loc), s, NULL, s->loc)
                                                : ir_if(c, none, uniform_nest(c, &n, v->u.ops[2]), s, s->loc);
    return is_identity(&n, v->u.ops[1]) ? ir_if(c, ir_unary(c, IR_NOT, all, s->loc), rest, NULL, s->loc)
                                        : ir_if(c, all, uniform_nest(c, &n, v->u.ops[1]), rest, s->loc);
  }
  return ir_map_children(c, s, rewrite, ctx);
}

void pass_uniform_selects(TsCompiler *c, IrFunc *f) {
  if (pass_config_state(f, "ts.uniform_selects") == 0) return;
  f->body = rewrite(c, f->body, NULL);
}
