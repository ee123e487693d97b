/* pass_util.c — helpers shared by the passes in src/pass: recognising T.Parallel nests
 * and the index patterns of fragment accesses in them, generic statement rebuilding and
 * visiting, and a small interval analysis used to drop provably unneeded bounds guards
 * and to prove vector alignment. */
#include <string.h>

#include "passes.h"

bool pass_parallel_nest(TsCompiler *c, IrStmt *root, ParNest *out) {
  memset(out, 0, sizeof *out);
  out->root = root;
  IrStmt *s = root;
  for (;;) {
    if (out->n == FRAG_MAX_DIMS) {
      ts_error(c, root->loc, "T.Parallel nest deeper than %d loops", FRAG_MAX_DIMS);
      return false;
    }
    int64_t mn, ext;
    if (!ir_is_const_int(s->u.loop.min, &mn) || !ir_is_const_int(s->u.loop.extent, &ext)) {
      ts_error(c, s->loc, "T.Parallel extent must be a compile-time constant");
      return false;
    }
    out->var[out->n] = s->u.loop.var;
    out->min[out->n] = mn;
    out->extent[out->n] = ext;
    out->n++;
    IrStmt *b = s->u.loop.body;
    if (b && b->kind == IR_S_SEQ && b->u.seq.n == 1) b = b->u.seq.items[0];
    if (b && b->kind == IR_S_FOR && b->u.loop.kind == IR_FOR_PARALLEL) {
      s = b;
      continue;
    }
    out->body = s->u.loop.body;
    return true;
  }
}

bool pass_access_map(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map) {
  if (nidx != buf->ndim || nidx > FRAG_MAX_DIMS) return false;
  bool used[FRAG_MAX_DIMS] = {false};
  for (int p = 0; p < nidx; p++) {
    int64_t shp, v;
    if (!ir_is_const_int(buf->shape[p], &shp)) return false;
    map[p] = -2;
    if (idx[p]->kind == IR_VAR) {
      for (int q = 0; q < nest->n; q++)
        if (nest->var[q] == idx[p]->u.var && !used[q] && nest->min[q] == 0 && nest->extent[q] == shp) {
          map[p] = q;
          used[q] = true;
        }
    } else if (ir_is_const_int(idx[p], &v) && v == 0 && shp == 1) {
      map[p] = -1;
    }
    if (map[p] == -2) return false;
  }
  return true;
}

bool pass_access_map_off(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map, int64_t *off) {
  if (nidx != buf->ndim || nidx > FRAG_MAX_DIMS) return false;
  bool used[FRAG_MAX_DIMS] = {false};
  for (int p = 0; p < nidx; p++) {
    int64_t shp, v = 0;
    if (!ir_is_const_int(buf->shape[p], &shp)) return false;
    map[p] = -2;
    off[p] = 0;
    const IrExpr *e = idx[p], *var = NULL;
    if (e->kind == IR_VAR) {
      var = e;
    } else if (e->kind == IR_ADD && e->u.ops[0]->kind == IR_VAR && ir_is_const_int(e->u.ops[1], &v)) {
      var = e->u.ops[0];
    } else if (e->kind == IR_ADD && e->u.ops[1]->kind == IR_VAR && ir_is_const_int(e->u.ops[0], &v)) {
      var = e->u.ops[1];
    } else if (ir_is_const_int(e, &v) && v == 0 && shp == 1) {
      map[p] = -1;
      continue;
    }
    if (!var || v < 0) return false;
    for (int q = 0; q < nest->n && map[p] == -2; q++)
      if (nest->var[q] == var->u.var && !used[q] && nest->min[q] == 0 && v + nest->extent[q] <= shp) {
        map[p] = q;
        off[p] = v;
        used[q] = true;
      }
    if (map[p] == -2) return false;
  }
  return true;
}

IrStmt *pass_map_children(TsCompiler *c, IrStmt *s, PassStmtFn fn, void *ctx) {
  if (!s) return NULL;
  IrStmt *r = ir_stmt(c, s->kind, s->loc);
  *r = *s;
  switch (s->kind) {
    case IR_S_SEQ: {
      PtrVec v = {0};
      for (int i = 0; i < s->u.seq.n; i++) vec_push(c->arena, &v, fn(c, s->u.seq.items[i], ctx));
      return ir_seq_vec(c, &v, s->loc);
    }
    case IR_S_FOR: r->u.loop.body = fn(c, s->u.loop.body, ctx); break;
    case IR_S_IF:
      r->u.if_.then_s = fn(c, s->u.if_.then_s, ctx);
      r->u.if_.else_s = s->u.if_.else_s ? fn(c, s->u.if_.else_s, ctx) : NULL;
      break;
    case IR_S_WHILE: r->u.while_.body = fn(c, s->u.while_.body, ctx); break;
    case IR_S_KERNEL: r->u.kernel.body = fn(c, s->u.kernel.body, ctx); break;
    default: break;
  }
  return r;
}

void pass_visit_expr(IrExpr *e, const PassVisitor *v) {
  if (!e) return;
  if (v->expr) v->expr(e, v->ctx);
  switch (e->kind) {
    case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return;
    case IR_CALL:
      for (int i = 0; i < e->u.call.nargs; i++) pass_visit_expr(e->u.call.args[i], v);
      return;
    case IR_LOAD:
      for (int i = 0; i < e->u.load.nidx; i++) pass_visit_expr(e->u.load.idx[i], v);
      return;
    default:
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) pass_visit_expr(e->u.ops[i], v);
  }
}

static void visit_region(const IrRegion *r, const PassVisitor *v) {
  for (int i = 0; i < r->ndim; i++) {
    pass_visit_expr(r->min[i], v);
    pass_visit_expr(r->extent[i], v);
  }
}

void pass_visit(IrStmt *s, const PassVisitor *v) {
  if (!s) return;
  if (v->stmt) v->stmt(s, v->ctx);
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) pass_visit(s->u.seq.items[i], v);
      break;
    case IR_S_FOR:
      pass_visit_expr(s->u.loop.min, v);
      pass_visit_expr(s->u.loop.extent, v);
      pass_visit(s->u.loop.body, v);
      break;
    case IR_S_IF:
      pass_visit_expr(s->u.if_.cond, v);
      pass_visit(s->u.if_.then_s, v);
      pass_visit(s->u.if_.else_s, v);
      break;
    case IR_S_WHILE:
      pass_visit_expr(s->u.while_.cond, v);
      pass_visit(s->u.while_.body, v);
      break;
    case IR_S_LET: pass_visit_expr(s->u.let.value, v); break;
    case IR_S_STORE:
      for (int i = 0; i < s->u.store.nidx; i++) pass_visit_expr(s->u.store.idx[i], v);
      pass_visit_expr(s->u.store.value, v);
      break;
    case IR_S_EVAL: pass_visit_expr(s->u.eval.value, v); break;
    case IR_S_KERNEL: pass_visit(s->u.kernel.body, v); break;
    case IR_S_ASSERT: pass_visit_expr(s->u.assert_.cond, v); break;
    case IR_S_COPY:
      visit_region(&s->u.copy.src, v);
      visit_region(&s->u.copy.dst, v);
      break;
    case IR_S_FILL:
      visit_region(&s->u.fill.dst, v);
      pass_visit_expr(s->u.fill.value, v);
      break;
    case IR_S_ATOMIC:
      visit_region(&s->u.atomic.dst, v);
      if (s->u.atomic.tile) visit_region(&s->u.atomic.src, v);
      pass_visit_expr(s->u.atomic.value, v);
      break;
    default: break;
  }
}

typedef struct UsesCtx { const IrVar *v; bool found; } UsesCtx;
static void uses_expr(IrExpr *e, void *ctx) {
  UsesCtx *u = ctx;
  if (e->kind == IR_VAR && e->u.var == u->v) u->found = true;
}
bool pass_expr_uses_var(const IrExpr *e, const IrVar *v) {
  UsesCtx u = {v, false};
  PassVisitor vis = {NULL, uses_expr, &u};
  pass_visit_expr((IrExpr *)e, &vis);
  return u.found;
}

void range_env_add(RangeEnv *env, IrVar *v, int64_t lo, int64_t hi) {
  if (env->n < TS_ARRAY_LEN(env->var)) {
    env->var[env->n] = v;
    env->lo[env->n] = lo;
    env->hi[env->n] = hi;
    env->n++;
  }
}

static int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

bool pass_range(const IrExpr *e, const RangeEnv *env, int64_t *lo, int64_t *hi) {
  int64_t a0, a1, b0, b1, k;
  switch (e->kind) {
    case IR_INT: *lo = *hi = e->u.ival; return true;
    case IR_VAR:
      for (int i = env->n - 1; i >= 0; i--)
        if (env->var[i] == e->u.var) {
          *lo = env->lo[i];
          *hi = env->hi[i];
          return true;
        }
      return false;
    case IR_CAST: return !dtype_is_float(e->dtype) && pass_range(e->u.ops[0], env, lo, hi);
    default: break;
  }
  if (ir_expr_nops[e->kind] != 2 || dtype_is_float(e->dtype)) return false;
  if (e->kind == IR_MIN || e->kind == IR_MAX) {
    /* A clamp bounds its result even when the clamped value's range is unknown. */
    bool ka = pass_range(e->u.ops[0], env, &a0, &a1), kb = pass_range(e->u.ops[1], env, &b0, &b1);
    if (!ka && !kb) return false;
    if (!ka) a0 = INT64_MIN / 4, a1 = INT64_MAX / 4;
    if (!kb) b0 = INT64_MIN / 4, b1 = INT64_MAX / 4;
    /* one-sided results keep the sentinel (a true but useless bound) */
    if (e->kind == IR_MIN) *lo = a0 < b0 ? a0 : b0, *hi = a1 < b1 ? a1 : b1;
    else *lo = a0 > b0 ? a0 : b0, *hi = a1 > b1 ? a1 : b1;
    return true;
  }
  if (!pass_range(e->u.ops[0], env, &a0, &a1) || !pass_range(e->u.ops[1], env, &b0, &b1)) return false;
  /* arithmetic on a one-sided range could overflow: unknown */
  if (a0 <= INT64_MIN / 4 || b0 <= INT64_MIN / 4 || a1 >= INT64_MAX / 4 || b1 >= INT64_MAX / 4) return false;
  switch (e->kind) {
    case IR_ADD: *lo = a0 + b0; *hi = a1 + b1; return true;
    case IR_SUB: *lo = a0 - b1; *hi = a1 - b0; return true;
    case IR_MUL: {
      int64_t p[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
      *lo = *hi = p[0];
      for (int i = 1; i < 4; i++) {
        if (p[i] < *lo) *lo = p[i];
        if (p[i] > *hi) *hi = p[i];
      }
      return true;
    }
    case IR_FLOORDIV:
      if (b0 != b1 || b0 <= 0) return false;
      k = b0;
      *lo = fdiv(a0, k);
      *hi = fdiv(a1, k);
      return true;
    case IR_FLOORMOD:
      if (b0 != b1 || b0 <= 0) return false;
      if (a0 >= 0 && a1 < b0) { *lo = a0; *hi = a1; } else { *lo = 0; *hi = b0 - 1; }
      return true;
    case IR_MIN: *lo = a0 < b0 ? a0 : b0; *hi = a1 < b1 ? a1 : b1; return true;
    case IR_MAX: *lo = a0 > b0 ? a0 : b0; *hi = a1 > b1 ? a1 : b1; return true;
    default: return false;
  }
}

bool pass_is_multiple(const IrExpr *e, int64_t m) {
  if (m <= 1) return true;
  switch (e->kind) {
    case IR_INT: return e->u.ival % m == 0;
    case IR_ADD: case IR_SUB: return pass_is_multiple(e->u.ops[0], m) && pass_is_multiple(e->u.ops[1], m);
    case IR_MUL: return pass_is_multiple(e->u.ops[0], m) || pass_is_multiple(e->u.ops[1], m);
    case IR_CAST: return !dtype_is_float(e->dtype) && pass_is_multiple(e->u.ops[0], m);
    default: return false;
  }
}

IrExpr *pass_flat_index(TsCompiler *c, IrBuffer *buf, IrExpr *const *idx, int nidx, SrcLoc loc) {
  if (nidx == 0) return ir_i32(c, 0);
  IrExpr *flat = idx[0];
  for (int p = 1; p < nidx; p++) {
    IrExpr *ext = p < buf->ndim ? buf->shape[p] : ir_i32(c, 1);
    flat = ir_binary(c, IR_ADD, ir_binary(c, IR_MUL, flat, ext, loc), idx[p], loc);
  }
  return flat;
}

int64_t pass_kernel_threads(const IrKernel *k) {
  int64_t t = 1;
  for (int i = 0; i < 3; i++) t *= k->threads[i] > 0 ? k->threads[i] : 1;
  return t;
}
