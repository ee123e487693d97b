/* safe_memory.c — global-memory accesses that may fall outside their tensor are guarded,
 * as TileLang's semantics have it (its LegalizeSafeMemoryAccess): a scalar load of a global
 * tensor whose indices are not proven within the shape reads 0 there instead (a C
 * conditional: the load does not execute), a scalar store (or an address handed to an
 * atomic / device call, T.address_of) is skipped there.  Example: a loop over
 * ceildiv(N, 4096) * 4096 columns of an N-column tensor writes nothing past column N.
 *
 * Runs on thread-level IR (after simplify).  Proof: 0 <= index by interval analysis
 * (ir_range over the kernel's block / thread indices, loop variables and lets in scope),
 * index < extent by intervals for constant extents, or structurally (a loop variable from
 * 0 whose loop runs exactly that extent, or index < extent on the path).  What is not
 * proven gets a guard; vector accesses (T.copy's own lowering guards its tiles), TMA and
 * other tile-level calls are left alone.  pass_configs {"tl.disable_safe_memory_legalize":
 * True} turns the pass off, as in TileLang. */
#include <string.h>

#include "passes.h"

typedef struct Safe {
  TsCompiler *c;
  IrRangeEnv env;
  PtrVec loops;  /* enclosing FOR statements (innermost last) */
  PtrVec facts;  /* enclosing IF conditions known true (IR_LT / IR_LE comparisons) */
  IrExpr *guard; /* conjunction the statement being rebuilt still needs (address_of) */
} Safe;

static IrExpr *safe_expr(Safe *s, IrExpr *e);

/* a && b, where a may be NULL (nothing yet). */
static IrExpr *and_cond(TsCompiler *c, IrExpr *a, IrExpr *b, SrcLoc loc) {
  return a ? ir_binary(c, IR_AND, a, b, loc) : b;
}

#define SAFE_OPEN_HI ((int64_t)1 << 40) /* upper bound of a loop var whose extent has no range */

/* idx < extent from the path: a loop variable from 0 running exactly `extent`, or an
 * enclosing `if idx < extent` (or idx <= extent - 1 in the same form). */
static bool below_structurally(const Safe *s, const IrExpr *idx, const IrExpr *extent) {
  if (idx->kind == IR_VAR)
    for (int i = 0; i < s->loops.len; i++) {
      const IrStmt *f = s->loops.items[i];
      int64_t m;
      if (f->u.loop.var == idx->u.var && ir_is_const_int(f->u.loop.min, &m) && m == 0 &&
          ir_expr_equal(f->u.loop.extent, extent))
        return true;
    }
  for (int i = 0; i < s->facts.len; i++) {
    const IrExpr *f = s->facts.items[i];
    if (f->kind == IR_LT && ir_expr_equal(f->u.ops[0], idx) && ir_expr_equal(f->u.ops[1], extent)) return true;
  }
  return false;
}

/* The condition under which buf[idx] is inside the tensor, NULL when proven. */
static IrExpr *bounds_cond(Safe *s, const IrBuffer *b, IrExpr *const *idx, int nidx, SrcLoc loc) {
  if (b->scope != IR_SCOPE_GLOBAL || nidx != b->ndim || !b->shape) return NULL;
  TsCompiler *c = s->c;
  IrExpr *cond = NULL;
  for (int p = 0; p < nidx; p++) {
    int64_t lo, hi, n;
    bool ranged = ir_range(idx[p], &s->env, &lo, &hi);
    IrExpr *x = idx[p], *ext = b->shape[p];
    if (!ranged || lo < 0) {
      IrExpr *ge = ir_binary(c, IR_GE, x, ir_int(c, 0, x->dtype, loc), loc);
      cond = and_cond(c, cond, ge, loc);
    }
    bool below = (ranged && ir_is_const_int(ext, &n) && hi < n) || below_structurally(s, x, ext);
    if (!below) {
      IrExpr *lt = ir_binary(c, IR_LT, x, ir_cast(c, x->dtype, ext, loc), loc);
      cond = and_cond(c, cond, lt, loc);
    }
  }
  return cond;
}

static IrExpr *copy_node(TsCompiler *c, const IrExpr *e) {
  IrExpr *r = ARENA_NEW(c->arena, IrExpr);
  *r = *e;
  return r;
}

static IrExpr **safe_list(Safe *s, IrExpr **xs, int n, bool *changed) {
  IrExpr **out = xs;
  for (int i = 0; i < n; i++) {
    IrExpr *x = safe_expr(s, xs[i]);
    if (x == xs[i]) continue;
    if (out == xs) {
      out = ARENA_ARRAY(s->c->arena, IrExpr *, n);
      memcpy(out, xs, sizeof(IrExpr *) * (size_t)n);
    }
    out[i] = x;
    *changed = true;
  }
  return out;
}

/* T.address_of(buf[idx]): the address is kept; a guard for the statement is noted. */
static IrExpr *safe_address_of(Safe *s, IrExpr *e) {
  IrExpr *ld = e->u.call.args[0];
  if (ld->kind != IR_LOAD) return e;
  bool ch = false;
  IrExpr **idx = safe_list(s, ld->u.load.idx, ld->u.load.nidx, &ch);
  IrExpr *cond = ld->lanes == 1 ? bounds_cond(s, ld->u.load.buf, idx, ld->u.load.nidx, e->loc) : NULL;
  if (cond) s->guard = and_cond(s->c, s->guard, cond, e->loc);
  if (!ch) return e;
  IrExpr *nl = copy_node(s->c, ld);
  nl->u.load.idx = idx;
  IrExpr *r = copy_node(s->c, e);
  r->u.call.args = ARENA_ARRAY(s->c->arena, IrExpr *, e->u.call.nargs);
  memcpy(r->u.call.args, e->u.call.args, sizeof(IrExpr *) * (size_t)e->u.call.nargs);
  r->u.call.args[0] = nl;
  return r;
}

static IrExpr *safe_expr(Safe *s, IrExpr *e) {
  if (!e) return NULL;
  TsCompiler *c = s->c;
  switch (e->kind) {
  case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return e;
  case IR_CALL: {
    if (e->u.call.op == IRI_ADDRESS_OF && e->u.call.nargs >= 1) return safe_address_of(s, e);
    bool ch = false;
    IrExpr **args = safe_list(s, e->u.call.args, e->u.call.nargs, &ch);
    if (!ch) return e;
    IrExpr *r = copy_node(c, e);
    r->u.call.args = args;
    return r;
  }
  case IR_LOAD: {
    bool ch = false;
    IrExpr **idx = safe_list(s, e->u.load.idx, e->u.load.nidx, &ch);
    IrExpr *r = e;
    if (ch) {
      r = copy_node(c, e);
      r->u.load.idx = idx;
    }
    IrExpr *cond = e->lanes == 1 ? bounds_cond(s, e->u.load.buf, idx, e->u.load.nidx, e->loc) : NULL;
    if (!cond) return r;
    IrExpr *zero = dtype_is_float(e->dtype) ? ir_float(c, 0.0, e->dtype, e->loc) : ir_int(c, 0, e->dtype, e->loc);
    if (e->u.load.buf->safe_value) zero = ir_cast(c, e->dtype, e->u.load.buf->safe_value, e->loc); /* annotated */
    IrExpr *sel = ir_select(c, IR_IF_THEN_ELSE, cond, r, zero, e->loc);
    sel->dtype = e->dtype;
    return sel;
  }
  default: break;
  }
  int n = ir_expr_nops[e->kind];
  IrExpr *ops[3] = {0};
  bool ch = false;
  for (int i = 0; i < n; i++) {
    ops[i] = safe_expr(s, e->u.ops[i]);
    ch |= ops[i] != e->u.ops[i];
  }
  if (!ch) return e;
  IrExpr *r = copy_node(c, e);
  for (int i = 0; i < n; i++) r->u.ops[i] = ops[i];
  return r;
}

static IrStmt *safe_stmt(TsCompiler *c, IrStmt *st, void *ctx);

static IrStmt *safe_store(Safe *s, IrStmt *st) {
  TsCompiler *c = s->c;
  IrExpr *guard0 = s->guard;
  s->guard = NULL;
  bool ch = false;
  IrExpr **idx = safe_list(s, st->u.store.idx, st->u.store.nidx, &ch);
  IrExpr *v = safe_expr(s, st->u.store.value);
  IrStmt *r = st;
  if (ch || v != st->u.store.value) {
    r = ir_stmt(c, IR_S_STORE, st->loc);
    *r = *st;
    r->u.store.idx = idx;
    r->u.store.value = v;
  }
  if (st->u.store.lanes == 1) {
    IrExpr *cond = bounds_cond(s, st->u.store.buf, idx, st->u.store.nidx, st->loc);
    if (cond) s->guard = and_cond(c, s->guard, cond, st->loc);
  }
  IrExpr *g = s->guard;
  s->guard = guard0;
  return g ? ir_if(c, g, r, NULL, st->loc) : r;
}

/* e rebuilt; *guard: what T.address_of operands in it need (NULL: nothing). */
static IrExpr *safe_expr_guard(Safe *s, IrExpr *e, IrExpr **guard) {
  IrExpr *guard0 = s->guard;
  s->guard = NULL;
  IrExpr *x = safe_expr(s, e);
  *guard = s->guard;
  s->guard = guard0;
  return x;
}

/* A copy of st (when x differs from its expression *slot) holding x instead. */
static IrStmt *with_expr(Safe *s, IrStmt *st, IrExpr *const *slot, IrExpr *x) {
  if (x == *slot) return st;
  IrStmt *r = ir_stmt(s->c, st->kind, st->loc);
  *r = *st;
  switch (st->kind) {
  case IR_S_EVAL: r->u.eval.value = x; break;
  case IR_S_LET: r->u.let.value = x; break;
  case IR_S_IF: r->u.if_.cond = x; break;
  case IR_S_WHILE: r->u.while_.cond = x; break;
  default: ts_unreachable(); /* only the kinds above call it */
  }
  return r;
}

/* A condition or value rebuilt: a guard is only meaningful around an EVAL's effect. */
static IrStmt *safe_value_stmt(Safe *s, IrStmt *st, IrExpr *const *slot) {
  IrExpr *guard;
  IrStmt *r = with_expr(s, st, slot, safe_expr_guard(s, *slot, &guard));
  return guard && st->kind == IR_S_EVAL ? ir_if(s->c, guard, r, NULL, st->loc) : r;
}

static IrStmt *safe_for(Safe *s, IrStmt *st) {
  int n0 = s->env.n;
  pass_range_enter_loop(&s->env, st->u.loop.var, st->u.loop.min, st->u.loop.extent, SAFE_OPEN_HI);
  vec_push(s->c->arena, &s->loops, st);
  IrStmt *r = ir_map_children(s->c, st, safe_stmt, s);
  s->loops.len--;
  s->env.n = n0;
  return r;
}

static IrStmt *safe_if(Safe *s, IrStmt *st) {
  IrStmt *r = safe_value_stmt(s, st, &st->u.if_.cond);
  IrStmt *then_s = st->u.if_.then_s, *else_s = st->u.if_.else_s;
  const IrExpr *cond = st->u.if_.cond;
  int nf = s->facts.len, n0 = s->env.n;
  for (const IrExpr *k = cond; k;) { /* a && b && (x < n): each conjunct holds in then_s */
    const IrExpr *leaf = k->kind == IR_AND ? k->u.ops[1] : k;
    if (leaf->kind == IR_LT) vec_push(s->c->arena, &s->facts, (void *)leaf);
    k = k->kind == IR_AND ? k->u.ops[0] : NULL;
  }
  pass_range_narrow(&s->env, cond, true);
  IrStmt *nt = safe_stmt(s->c, then_s, s);
  s->facts.len = nf;
  s->env.n = n0;
  pass_range_narrow(&s->env, cond, false); /* `if tx >= 128: ... else: <tx < 128 here>` */
  IrStmt *ne = else_s ? safe_stmt(s->c, else_s, s) : NULL;
  s->env.n = n0;
  if (nt == then_s && ne == else_s) return r;
  if (r == st) {
    r = ir_stmt(s->c, IR_S_IF, st->loc);
    *r = *st;
  }
  r->u.if_.then_s = nt;
  r->u.if_.else_s = ne;
  return r;
}

static IrStmt *safe_kernel(Safe *s, IrStmt *st) {
  IrKernel *k = &st->u.kernel;
  int n0 = s->env.n;
  pass_range_enter_kernel(&s->env, k);
  IrStmt *r = ir_map_children(s->c, st, safe_stmt, s);
  s->env.n = n0;
  return r;
}

static IrStmt *safe_seq(Safe *s, IrStmt *st) {
  int n0 = s->env.n;
  IrStmt *r = ir_map_children(s->c, st, safe_stmt, s); /* a LET's range holds for the rest */
  s->env.n = n0;
  return r;
}

static IrStmt *safe_let(Safe *s, IrStmt *st) {
  IrStmt *r = safe_value_stmt(s, st, &st->u.let.value);
  int64_t lo, hi;
  if (s->env.n < 32 && ir_range(st->u.let.value, &s->env, &lo, &hi)) ir_range_env_add(&s->env, st->u.let.var, lo, hi);
  return r;
}

static IrStmt *safe_stmt(TsCompiler *c, IrStmt *st, void *ctx) {
  (void)c;
  Safe *s = ctx;
  if (!st) return NULL;
  switch (st->kind) {
  case IR_S_SEQ: return safe_seq(s, st);
  case IR_S_FOR: return safe_for(s, st);
  case IR_S_IF: return safe_if(s, st);
  case IR_S_KERNEL: return safe_kernel(s, st);
  case IR_S_LET: return safe_let(s, st);
  case IR_S_STORE: return safe_store(s, st);
  case IR_S_EVAL: return safe_value_stmt(s, st, &st->u.eval.value);
  case IR_S_WHILE: {
    IrStmt *r = safe_value_stmt(s, st, &st->u.while_.cond);
    IrStmt *body = safe_stmt(c, st->u.while_.body, s);
    if (body == st->u.while_.body) return r;
    if (r == st) {
      r = ir_stmt(c, IR_S_WHILE, st->loc);
      *r = *st;
    }
    r->u.while_.body = body;
    return r;
  }
  default: return ir_map_children(s->c, st, safe_stmt, s);
  }
}

void pass_safe_memory(TsCompiler *c, IrFunc *f) {
  if (pass_config_on(f, "tl.disable_safe_memory_legalize")) return;
  Safe s = {.c = c};
  f->body = safe_stmt(c, f->body, &s);
}
