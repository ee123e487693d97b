/* bound_parallel.c — the first pass: T.Parallel loops whose extent is known only at run time.
 *
 *   bounded by a constant (`T.Parallel(T.min(valid_len, 512))`, TileLang's dynamic parallel
 *   extents): the loop over the bound with its body guarded by the run-time extent;
 *   unbounded, over T.Parallel nests whose fragments its variable does not index: a serial
 *   loop (every thread runs every iteration, as TileLang replicates a loop variable no
 *   fragment layout binds), the inner nests laid out as usual;
 *   unbounded, touching no registers and holding no tile op or nested T.Parallel
 *   (`for i in T.Parallel(n): S[i] = 0` on shared or global memory): a serial loop over
 *   chunks of the kernel's thread count with a T.Parallel of that constant extent inside,
 *   each iteration guarded by the run-time extent.
 *
 * So the passes after it (which lay out nests of constant extents) see ordinary nests.  What
 * is left (a fragment indexed by the loop's variable, as TileLang refuses too) is refused by
 * pass_parallel_nest, naming the fragment where there is one. */
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

/* What the body of an unbounded dynamic T.Parallel loop does with its variable. */
typedef struct BodyUse {
  PtrVec tainted;      /* IrVar*: the loop variable, and lets computed from it */
  bool registers;      /* reads or writes a fragment or local buffer */
  IrBuffer *indexed;   /* ... one indexed by a tainted variable (NULL: none) */
  bool nested;         /* holds a T.Parallel loop */
  bool tile_op;        /* holds a tile operation */
  TsCompiler *c;
} BodyUse;

static bool is_tainted(const BodyUse *u, const IrExpr *e) {
  for (int i = 0; i < u->tainted.len; i++)
    if (ir_expr_uses_var(e, u->tainted.items[i])) return true;
  return false;
}

static void note_access(BodyUse *u, IrBuffer *b, IrExpr *const *idx, int nidx) {
  const IrBuffer *root = ir_buffer_root(b);
  if (root->scope != IR_SCOPE_FRAGMENT && root->scope != IR_SCOPE_LOCAL) return;
  u->registers = true;
  for (int d = 0; d < nidx && !u->indexed; d++)
    if (is_tainted(u, idx[d])) u->indexed = b;
}

static void use_stmt(IrStmt *s, void *ctx) {
  BodyUse *u = ctx;
  switch (s->kind) {
    case IR_S_LET:
      if (is_tainted(u, s->u.let.value)) vec_push(u->c->arena, &u->tainted, s->u.let.var);
      return;
    case IR_S_STORE: note_access(u, s->u.store.buf, s->u.store.idx, s->u.store.nidx); return;
    case IR_S_FOR: u->nested = u->nested || s->u.loop.kind == IR_FOR_PARALLEL; return;
    case IR_S_COPY: case IR_S_FILL: case IR_S_REDUCE: case IR_S_ATOMIC: case IR_S_GEMM:
      u->tile_op = true;
      return;
    default: return;
  }
}

static void use_expr(IrExpr *e, void *ctx) {
  if (e->kind == IR_LOAD) note_access(ctx, e->u.load.buf, e->u.load.idx, e->u.load.nidx);
}

/* `for v in T.Parallel(ext): body` as `for o in T.serial(ceildiv(ext, n)): for t in
 * T.Parallel(n): if o * n + t < ext: body[v := min + o * n + t]`. */
static IrStmt *chunked(TsCompiler *c, IrStmt *s, int64_t n) {
  SrcLoc loc = s->loc;
  IrVar *v = s->u.loop.var;
  ts_dtype t = v->dtype;
  IrVar *o = ir_var(c, "chunk", t, IR_VAR_LOOP, loc), *i = ir_var(c, v->name, t, IR_VAR_LOOP, loc);
  IrExpr *N = ir_int(c, n, t, loc), *ext = s->u.loop.extent;
  IrExpr *at = ir_binary(c, IR_ADD, ir_binary(c, IR_MUL, ir_varref(c, o, loc), N, loc), ir_varref(c, i, loc), loc);
  IrExpr *to = ir_binary(c, IR_ADD, s->u.loop.min, at, loc);
  IrStmt *body = ir_if(c, ir_binary(c, IR_LT, at, ext, loc), ir_subst_stmt(c, s->u.loop.body, &v, &to, 1), NULL, loc);
  IrStmt *inner = ir_stmt(c, IR_S_FOR, loc);
  *inner = *s; /* the loop's annotations too */
  inner->u.loop.var = i;
  inner->u.loop.min = ir_int(c, 0, t, loc);
  inner->u.loop.extent = N;
  inner->u.loop.body = body;
  IrStmt *outer = ir_stmt(c, IR_S_FOR, loc);
  *outer = *s;
  outer->u.loop.kind = IR_FOR_SERIAL;
  outer->u.loop.var = o;
  outer->u.loop.min = ir_int(c, 0, t, loc);
  outer->u.loop.extent = ir_binary(c, IR_FLOORDIV, ir_binary(c, IR_ADD, ext, ir_int(c, n - 1, t, loc), loc), N, loc);
  outer->u.loop.body = inner;
  return outer;
}

/* s (a parallel loop with an unbounded run-time extent, in a kernel of `threads` threads) as
 * the loops the passes after this one lay out, or s itself (refused later). */
static IrStmt *unbounded(TsCompiler *c, IrStmt *s, int64_t threads) {
  BodyUse u = {.c = c};
  vec_push(c->arena, &u.tainted, s->u.loop.var);
  IrVisitor v = {use_stmt, use_expr, &u};
  ir_visit(s->u.loop.body, &v);
  if (u.indexed) {
    const IrBuffer *root = ir_buffer_root(u.indexed);
    ts_error(c, s->loc,
             "%s '%s' is indexed by T.Parallel variable '%s', whose extent is known only at run time: a %s is laid out "
             "over constant extents (bound the extent, e.g. T.Parallel(T.min(n, 128)) with a guard, or use T.serial)",
             root->scope == IR_SCOPE_FRAGMENT ? "fragment" : "local buffer", root->name, s->u.loop.var->name,
             root->scope == IR_SCOPE_FRAGMENT ? "fragment" : "local buffer");
    return s;
  }
  if (u.tile_op) return s;
  if (u.nested) {
    s->u.loop.kind = IR_FOR_SERIAL;
    return s;
  }
  return u.registers || threads < 1 ? s : chunked(c, s, threads);
}

typedef struct Bound {
  IrRangeEnv env;
  int64_t threads; /* of the kernel being visited (0: outside one) */
} Bound;

static IrStmt *visit(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  Bound *b = ctx;
  int64_t outer = b->threads;
  if (s->kind == IR_S_KERNEL) b->threads = pass_kernel_threads(&s->u.kernel);
  IrStmt *r = ir_map_children(c, s, visit, ctx);
  b->threads = outer;
  if (r->kind != IR_S_FOR || r->u.loop.kind != IR_FOR_PARALLEL) return r;
  r = bounded(c, r, &b->env);
  int64_t ext;
  return ir_is_const_int(r->u.loop.extent, &ext) ? r : unbounded(c, r, b->threads);
}

void pass_bound_parallel_extents(TsCompiler *c, IrFunc *f) {
  Bound b = {0};
  IrVisitor v = {let_range, NULL, &b.env};
  ir_visit(f->body, &v);
  f->body = visit(c, f->body, &b);
}
