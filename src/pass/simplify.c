/* simplify.c — runs the arithmetic simplifier (ir_simplify, src/ir/arith.c) over every
 * expression of the function, after lowering has produced index arithmetic such as
 * (o*4 + 0)*1 + (tx/32 % 4)*4.  Statements are rebuilt, never mutated in place.
 *
 * Integer comparisons whose outcome the ranges in scope decide are folded to constants
 * (interval analysis, ir_range, over thread and block indices, loop variables and lets):
 * `k*128 + j >= 4096` with k < 32 and j < 128, the padding mask of an attention loop over a
 * sequence that is a multiple of the block, is false, and the select around it goes away.
 * The same ranges split x // d and x % d over sums (split_divmod). */
#include "passes.h"

typedef struct Simp {
  IrRangeEnv env;
} Simp;

/* (a cmp b) as a constant when the range of a - b decides it; NULL otherwise. */
static IrExpr *fold_compare(TsCompiler *c, const IrExpr *e, const IrRangeEnv *env) {
  const IrExpr *a = e->u.ops[0], *b = e->u.ops[1];
  if (dtype_is_float(a->dtype) || dtype_is_float(b->dtype) || a->dtype == TS_DTYPE_BOOL) return NULL;
  int64_t lo, hi;
  /* a - b built by hand (ir_binary may hand back an operand), as int64: the analysis's
   * difference does not wrap */
  IrExpr d = {.kind = IR_SUB, .dtype = TS_DTYPE_INT64, .loc = e->loc, .lanes = 1};
  d.u.ops[0] = (IrExpr *)a;
  d.u.ops[1] = (IrExpr *)b;
  if (!ir_range(&d, env, &lo, &hi)) return NULL;
  int v = -1;
  switch (e->kind) {
    case IR_LT: v = hi < 0 ? 1 : lo >= 0 ? 0 : -1; break;
    case IR_LE: v = hi <= 0 ? 1 : lo > 0 ? 0 : -1; break;
    case IR_GT: v = lo > 0 ? 1 : hi <= 0 ? 0 : -1; break;
    case IR_GE: v = lo >= 0 ? 1 : hi < 0 ? 0 : -1; break;
    case IR_EQ: v = lo == 0 && hi == 0 ? 1 : (lo > 0 || hi < 0) ? 0 : -1; break;
    case IR_NE: v = lo == 0 && hi == 0 ? 0 : (lo > 0 || hi < 0) ? 1 : -1; break;
    default: break;
  }
  return v < 0 ? NULL : ir_int(c, v, TS_DTYPE_BOOL, e->loc);
}

/* ---- x // d and x % d over a sum whose non-multiples of d stay in one block of d ---------
 * floordiv(M + R, d) = M / d + m and floormod(M + R, d) = R - m * d, exactly, when every term
 * of M is a multiple of d and the ranges in scope put R in [m * d, (m + 1) * d): the remapped
 * dQ index of an attention backward, ((k * 32 + o * 16 + tx / 4 % 8) / 8), is k * 4 + o * 2. */
#define SPLIT_MAX_TERMS 16

static int add_terms(IrExpr *e, IrExpr **t, int n) {
  if (n < 0) return n;
  if (e->kind == IR_ADD) return add_terms(e->u.ops[1], t, add_terms(e->u.ops[0], t, n));
  if (n >= SPLIT_MAX_TERMS) return -1;
  t[n] = e;
  return n + 1;
}

/* t / d when the term t is a constant multiple of d (x * c with d | c, or c with d | c). */
static IrExpr *exact_quotient(TsCompiler *c, IrExpr *t, int64_t d) {
  int64_t v;
  if (ir_is_const_int(t, &v)) return v % d == 0 ? ir_int(c, v / d, t->dtype, t->loc) : NULL;
  if (t->kind == IR_MUL && ir_is_const_int(t->u.ops[1], &v) && v % d == 0)
    return v == d ? t->u.ops[0] : ir_binary(c, IR_MUL, t->u.ops[0], ir_int(c, v / d, t->dtype, t->loc), t->loc);
  return NULL;
}

static int64_t floor_div64(int64_t a, int64_t d) { return a / d - (a % d != 0 && a < 0); }

static IrExpr *sum(TsCompiler *c, IrExpr *a, IrExpr *b) { return a ? ir_binary(c, IR_ADD, a, b, b->loc) : b; }

static IrExpr *split_divmod(TsCompiler *c, IrExpr *e, const IrRangeEnv *env) {
  int64_t d, lo, hi;
  if ((e->kind != IR_FLOORDIV && e->kind != IR_FLOORMOD) || dtype_is_float(e->dtype) ||
      !ir_is_const_int(e->u.ops[1], &d) || d <= 0)
    return e;
  IrExpr *t[SPLIT_MAX_TERMS], *q = NULL, *rem = NULL;
  int n = add_terms(e->u.ops[0], t, 0);
  if (n < 0) return e;
  for (int i = 0; i < n; i++) {
    IrExpr *x = exact_quotient(c, t[i], d);
    if (x) q = sum(c, q, x);
    else rem = sum(c, rem, t[i]);
  }
  if (!rem) return e->kind == IR_FLOORDIV ? q : ir_int(c, 0, e->dtype, e->loc);
  if (!ir_range(rem, env, &lo, &hi) || floor_div64(lo, d) != floor_div64(hi, d)) return e;
  int64_t m = floor_div64(lo, d);
  if (!q && m == 0 && e->kind == IR_FLOORMOD) return e; /* already R % d = R: nothing to gain */
  if (e->kind == IR_FLOORMOD) return m ? ir_binary(c, IR_SUB, rem, ir_int(c, m * d, e->dtype, e->loc), e->loc) : rem;
  IrExpr *mc = ir_int(c, m, e->dtype, e->loc);
  return q ? (m ? ir_binary(c, IR_ADD, q, mc, e->loc) : q) : mc;
}

/* e with every decided comparison replaced by its constant (a new tree where changed). */
static IrExpr *fold_ranges(TsCompiler *c, IrExpr *e, const IrRangeEnv *env) {
  if (!e || env->n == 0) return e;
  if (e->kind == IR_LT || e->kind == IR_LE || e->kind == IR_GT || e->kind == IR_GE || e->kind == IR_EQ ||
      e->kind == IR_NE) {
    IrExpr *k = fold_compare(c, e, env);
    if (k) return k;
  }
  if (e->kind == IR_LOAD || e->kind == IR_CALL) {
    IrExpr **xs = e->kind == IR_LOAD ? e->u.load.idx : e->u.call.args;
    int n = e->kind == IR_LOAD ? e->u.load.nidx : e->u.call.nargs;
    IrExpr **out = NULL;
    for (int i = 0; i < n; i++) {
      IrExpr *x = fold_ranges(c, xs[i], env);
      if (x == xs[i]) continue;
      if (!out) {
        out = ARENA_ARRAY(c->arena, IrExpr *, n);
        for (int j = 0; j < n; j++) out[j] = xs[j];
      }
      out[i] = x;
    }
    if (!out) return e;
    IrExpr *r = ARENA_NEW(c->arena, IrExpr);
    *r = *e;
    if (e->kind == IR_LOAD) r->u.load.idx = out;
    else r->u.call.args = out;
    return r;
  }
  IrExpr *ops[3] = {NULL, NULL, NULL};
  bool changed = false;
  for (int i = 0; i < ir_expr_nops[e->kind]; i++) {
    ops[i] = fold_ranges(c, e->u.ops[i], env);
    changed |= ops[i] != e->u.ops[i];
  }
  IrExpr *r = e;
  if (changed) {
    r = ARENA_NEW(c->arena, IrExpr);
    *r = *e;
    for (int i = 0; i < ir_expr_nops[e->kind]; i++) r->u.ops[i] = ops[i];
  }
  return split_divmod(c, r, env);
}

static IrExpr *simp_in(TsCompiler *c, IrExpr *e, const Simp *sp) {
  if (!e) return NULL;
  IrExpr *s = ir_simplify(c, e);
  IrExpr *f = sp ? fold_ranges(c, s, &sp->env) : s;
  return f == s ? s : ir_simplify(c, f);
}

static IrExpr **simp_list(TsCompiler *c, IrExpr **xs, int n, const Simp *sp) {
  IrExpr **out = ARENA_ARRAY(c->arena, IrExpr *, n);
  for (int i = 0; i < n; i++) out[i] = simp_in(c, xs[i], sp);
  return out;
}

static IrStmt *simp_stmt(TsCompiler *c, IrStmt *s, void *ctx);

/* An IF's branches, each under what it knows: every conjunct of the condition in the then
 * branch, the failed comparison in the else branch (`if tx >= 128: producer else: consumer`
 * leaves tx < 128 to the consumer's code). */
static IrStmt *simp_branches(TsCompiler *c, IrStmt *s, Simp *sp) {
  IrStmt *r = ir_stmt(c, IR_S_IF, s->loc);
  *r = *s;
  int n0 = sp->env.n;
  pass_range_narrow(&sp->env, s->u.if_.cond, true);
  r->u.if_.then_s = simp_stmt(c, s->u.if_.then_s, sp);
  sp->env.n = n0;
  pass_range_narrow(&sp->env, s->u.if_.cond, false);
  r->u.if_.else_s = simp_stmt(c, s->u.if_.else_s, sp);
  sp->env.n = n0;
  return r;
}

static IrStmt *simp_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  Simp *sp = ctx;
  int n0 = sp->env.n; /* a SEQ's lets and a loop's variable end with the statement */
  IrStmt *r;
  if (s->kind == IR_S_IF) {
    r = simp_branches(c, s, sp);
  } else {
    if (s->kind == IR_S_FOR) pass_range_enter_loop(&sp->env, s->u.loop.var, s->u.loop.min, s->u.loop.extent, 0);
    if (s->kind == IR_S_KERNEL) pass_range_enter_kernel(&sp->env, &s->u.kernel);
    r = ir_map_children(c, s, simp_stmt, ctx);
  }
  sp->env.n = n0;
  switch (r->kind) {
    case IR_S_FOR:
      r->u.loop.min = simp_in(c, r->u.loop.min, sp);
      r->u.loop.extent = simp_in(c, r->u.loop.extent, sp);
      break;
    case IR_S_IF: {
      /* A T.ws body (ws_hi > 0) keeps its test as written: the IF marks the thread range its
       * code runs on (thread_sync's named barriers), even where the range is already known. */
      if (r->u.if_.ws_hi > 0) {
        r->u.if_.cond = simp_in(c, r->u.if_.cond, NULL);
        break;
      }
      r->u.if_.cond = simp_in(c, r->u.if_.cond, sp);
      int64_t v;
      /* A guard that folded to a constant disappears. */
      if (ir_is_const_int(r->u.if_.cond, &v)) {
        if (v) return r->u.if_.then_s;
        return r->u.if_.else_s ? r->u.if_.else_s : ir_seq(c, NULL, 0, r->loc);
      }
      break;
    }
    case IR_S_WHILE: r->u.while_.cond = simp_in(c, r->u.while_.cond, sp); break;
    case IR_S_LET: {
      r->u.let.value = simp_in(c, r->u.let.value, sp);
      int64_t lo, hi; /* in scope for the rest of the enclosing SEQ */
      if (ir_range(r->u.let.value, &sp->env, &lo, &hi)) ir_range_env_add(&sp->env, r->u.let.var, lo, hi);
      break;
    }
    case IR_S_STORE:
      r->u.store.idx = simp_list(c, r->u.store.idx, r->u.store.nidx, sp);
      r->u.store.value = simp_in(c, r->u.store.value, sp);
      break;
    case IR_S_EVAL: r->u.eval.value = simp_in(c, r->u.eval.value, sp); break;
    case IR_S_ASSERT: r->u.assert_.cond = simp_in(c, r->u.assert_.cond, sp); break;
    default: break;
  }
  return r;
}

void pass_simplify(TsCompiler *c, IrFunc *f) {
  Simp sp = {{{0}, {0}, {0}, 0}};
  f->body = simp_stmt(c, f->body, &sp);
}
