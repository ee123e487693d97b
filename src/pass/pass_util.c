/* pass_util.c — helpers shared by the passes in src/pass: recognising T.Parallel nests
 * and the index patterns of fragment accesses in them, flat register indices, a kernel's
 * thread count.  (Walkers and the interval analysis every layer shares are in src/ir/:
 * walk.c, range.c.) */
#include <string.h>

#include <math.h>

#include "passes.h"
#include "../base/target.h"

/* pass_parallel_nest without the diagnostic: NULL when `out` is filled, else the loop at
 * fault (root itself when the nest is too deep, with *deep set). */
static const IrStmt *fill_nest(IrStmt *root, ParNest *out, bool *deep) {
  memset(out, 0, sizeof *out);
  out->root = root;
  IrStmt *s = root;
  *deep = false;
  for (;;) {
    if (out->n == FRAG_MAX_DIMS) {
      *deep = true;
      return root;
    }
    int64_t mn, ext;
    if (!ir_is_const_int(s->u.loop.min, &mn) || !ir_is_const_int(s->u.loop.extent, &ext)) return s;
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
    return NULL;
  }
}

bool pass_parallel_nest(TsCompiler *c, IrStmt *root, ParNest *out) {
  bool deep;
  const IrStmt *bad = fill_nest(root, out, &deep);
  if (bad && deep) ts_error(c, root->loc, "T.Parallel nest deeper than %d loops", FRAG_MAX_DIMS);
  else if (bad) ts_error(c, bad->loc, "T.Parallel extent must be a compile-time constant");
  return !bad;
}

bool pass_parallel_nest_quiet(IrStmt *root, ParNest *out) {
  bool deep;
  return !fill_nest(root, out, &deep);
}

static bool uses_nest_var(const ParNest *nest, const IrExpr *e) {
  for (int q = 0; q < nest->n; q++)
    if (ir_expr_uses_var(e, nest->var[q])) return true;
  return false;
}

/* The loop var of a divided index `var // c` or `var >> s` (c = 2^s), c > 1 a constant, with
 * *c set; NULL for any other index. */
static const IrExpr *divided_var(const IrExpr *e, int64_t *c) {
  int64_t v;
  if (e->kind != IR_FLOORDIV && e->kind != IR_SHR) return NULL;
  if (e->u.ops[0]->kind != IR_VAR || !ir_is_const_int(e->u.ops[1], &v)) return NULL;
  if (e->kind == IR_SHR) {
    if (v < 1 || v > 30) return NULL;
    v = (int64_t)1 << v;
  }
  if (v < 2) return NULL;
  *c = v;
  return e->u.ops[0];
}

/* pass_access_map, and with allow_held also dims indexed by nest-invariant expressions
 * (map[p] = FRAG_HELD), and with div also dims indexed by a nest var divided by a constant
 * c whose loop runs over c times the dim (div[p] = c; 1 for every other dim). */
static bool access_map(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map, bool allow_held,
                       int64_t *div) {
  if (nidx != buf->ndim || nidx > FRAG_MAX_DIMS) return false;
  bool used[FRAG_MAX_DIMS] = {false};
  for (int p = 0; p < nidx; p++) {
    int64_t shp, v, c = 1;
    if (!ir_is_const_int(buf->shape[p], &shp)) return false;
    map[p] = -2;
    if (div) div[p] = 1;
    const IrExpr *dv = div ? divided_var(idx[p], &c) : NULL;
    if (idx[p]->kind == IR_VAR || dv) {
      const IrVar *var = dv ? dv->u.var : idx[p]->u.var;
      for (int q = 0; q < nest->n && map[p] == -2; q++)
        if (nest->var[q] == var && !used[q] && nest->min[q] == 0 && nest->extent[q] == shp * c) {
          map[p] = q;
          used[q] = true;
          if (dv) div[p] = c;
        }
    } else if (ir_is_const_int(idx[p], &v) && v == 0 && shp == 1) {
      map[p] = -1;
    }
    if (map[p] == -2 && allow_held && !uses_nest_var(nest, idx[p])) map[p] = FRAG_HELD;
    if (map[p] == -2) return false;
  }
  return true;
}

bool pass_access_map(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map) {
  return access_map(nest, buf, idx, nidx, map, false, NULL);
}

bool pass_access_map_held(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map) {
  if (!access_map(nest, buf, idx, nidx, map, true, NULL)) return false;
  bool held = false, mapped = false;
  for (int p = 0; p < nidx; p++) {
    held |= map[p] == FRAG_HELD;
    mapped |= map[p] >= 0;
  }
  return held && mapped;
}

bool pass_access_map_div(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map, int64_t *div) {
  if (!access_map(nest, buf, idx, nidx, map, true, div)) return false;
  for (int p = 0; p < nidx; p++)
    if (div[p] > 1) return true;
  return false;
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


/* Splits e into `var + rest` where var is a plain nest var and rest (NULL: nothing) uses no
 * nest var; false for any other shape. */
static bool split_shift(TsCompiler *c, const ParNest *nest, IrExpr *e, IrExpr **var, IrExpr **rest) {
  if (e->kind == IR_VAR) {
    *var = e;
    *rest = NULL;
    return uses_nest_var(nest, e);
  }
  if (e->kind != IR_ADD) return false;
  for (int side = 0; side < 2; side++) {
    IrExpr *inner = e->u.ops[side], *other = e->u.ops[1 - side];
    if (uses_nest_var(nest, other) || !split_shift(c, nest, inner, var, rest)) continue;
    *rest = *rest ? ir_binary(c, IR_ADD, *rest, other, e->loc) : other;
    return true;
  }
  return false;
}

bool pass_access_map_shift(TsCompiler *c, const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map,
                           IrExpr **shift) {
  if (nidx != buf->ndim || nidx > FRAG_MAX_DIMS) return false;
  bool used[FRAG_MAX_DIMS] = {false}, any = false;
  for (int p = 0; p < nidx; p++) {
    int64_t shp, v;
    IrExpr *var = NULL, *rest = NULL;
    if (!ir_is_const_int(buf->shape[p], &shp)) return false;
    map[p] = -2;
    shift[p] = NULL;
    if (ir_is_const_int(idx[p], &v) && v == 0 && shp == 1) {
      map[p] = -1;
      continue;
    }
    if (!split_shift(c, nest, idx[p], &var, &rest)) return false;
    for (int q = 0; q < nest->n && map[p] == -2; q++)
      if (nest->var[q] == var->u.var && !used[q] && nest->min[q] == 0 && nest->extent[q] <= shp) {
        map[p] = q;
        used[q] = true;
      }
    if (map[p] == -2) return false;
    shift[p] = rest;
    any |= rest != NULL;
  }
  return any;
}

bool pass_shift_fits(TsCompiler *c, const Fragment *loop, const Fragment *buf, const int *map, IrExpr *const *shift) {
  Fragment *want = fragment_derive(c, loop, buf->ndim, map);
  for (int p = 0; p < buf->ndim; p++) {
    if (map[p] < 0) continue;
    if (want->dim[p].extent > buf->dim[p].extent) return false;
    want->dim[p].extent = buf->dim[p].extent;
  }
  if (!fragment_equal(want, buf)) return false;
  for (int p = 0; p < buf->ndim; p++)
    if (shift[p] && !ir_is_multiple(shift[p], fragment_shift_period(buf, p))) return false;
  return true;
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

int64_t pass_smem_cap(const TsCompiler *c) {
  /* cudaDevAttrMaxSharedMemoryPerBlockOptin of the target (base/target.c's table) */
  if (c->target.sm == 87) return 166912; /* Orin: an sm_80-sized shared memory */
  const TsDeviceProps *d = ts_target_device(c->target.sm);
  return d && c->target.sm >= 80 ? d->shared_memory_per_block_optin : 0;
}

int64_t pass_smem_per_sm(const TsCompiler *c) {
  const TsDeviceProps *d = ts_target_device(c->target.sm);
  return d ? d->shared_memory_per_sm : 0;
}

static void wait_stmt(IrStmt *s, void *ctx) { *(bool *)ctx |= s->kind == IR_S_WHILE; }

static void wait_expr(IrExpr *e, void *ctx) {
  if (e->kind != IR_CALL) return;
  const unsigned waits = IRD_DIST | IRD_SHMEM | IRD_GRID_SYNC;
  *(bool *)ctx |= e->u.call.op == IRI_CALL_EXTERN ||
                  (e->u.call.op == IRI_DEVICE && (ir_device_info[e->u.call.dop].flags & waits));
}

bool pass_may_wait(IrStmt *s) {
  bool waits = false;
  IrVisitor vis = {wait_stmt, wait_expr, &waits};
  ir_visit(s, &vis);
  return waits;
}

int64_t pass_kernel_threads(const IrKernel *k) {
  int64_t t = 1;
  for (int i = 0; i < 3; i++) t *= k->threads[i] > 0 ? k->threads[i] : 1;
  return t;
}

int64_t pass_ws_consumer_regs(int64_t consumers, int64_t producers, int64_t producer_regs, int64_t blocks) {
  int64_t threads = consumers + producers;
  int64_t launch = 65536 / ((blocks > 1 ? blocks : 1) * threads) / 8 * 8;
  if (launch > 256) launch = 256;
  int64_t r = (launch * threads - producers * producer_regs) / consumers / 8 * 8;
  return r > 240 ? 240 : r;
}

bool pass_is_shared(const IrBuffer *b) { return b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN; }

int pass_config_state(const IrFunc *f, const char *key) {
  for (int i = 0; i < f->npass_configs; i++)
    if (f->pass_configs[i].key && !strcmp(f->pass_configs[i].key, key)) return ir_config_true(f->pass_configs[i].value);
  return -1;
}

bool pass_config_on(const IrFunc *f, const char *key) { return pass_config_state(f, key) == 1; }

bool pass_is_role_split(const IrKernel *k, const IrStmt *s) {
  if (!k->producer_threads || !s || s->kind != IR_S_IF || !s->u.if_.else_s) return false;
  const IrExpr *c = s->u.if_.cond;
  int64_t t;
  return c->kind == IR_GE && c->u.ops[0]->kind == IR_VAR && c->u.ops[0]->u.var->kind == IR_VAR_THREAD_IDX &&
         c->u.ops[0]->u.var->axis == 0 && ir_is_const_int(c->u.ops[1], &t) && t == k->threads[0];
}

/* Narrows v's range in env where the comparison k (`v < c`, `v <= c`, `v >= c`, `v > c`; v a
 * variable or a variable plus or minus a constant, c a constant; with holds, each conjunct of an `a && b`) is known to hold (holds)
 * or to fail (!holds: the else branch). */
void pass_range_narrow(IrRangeEnv *env, const IrExpr *k, bool holds) {
  if (holds && k->kind == IR_AND) {
    pass_range_narrow(env, k->u.ops[0], true);
    pass_range_narrow(env, k->u.ops[1], true);
    return;
  }
  int64_t c, d = 0, lo, hi;
  if (env->n >= 32 || !(k->kind == IR_LT || k->kind == IR_LE || k->kind == IR_GE || k->kind == IR_GT) ||
      !ir_is_const_int(k->u.ops[1], &c))
    return;
  /* `v + d < c` (a pipeline's `k + D < n`) is `v < c - d` */
  const IrExpr *v = k->u.ops[0];
  if ((v->kind == IR_ADD || v->kind == IR_SUB) && v->u.ops[0]->kind == IR_VAR && ir_is_const_int(v->u.ops[1], &d) &&
      d > -(1LL << 40) && d < (1LL << 40) && c > -(1LL << 40) && c < (1LL << 40)) {
    c -= v->kind == IR_ADD ? d : -d;
    v = v->u.ops[0];
  }
  if (v->kind != IR_VAR || !ir_range(v, env, &lo, &hi)) return;
  IrExprKind kind = k->kind;
  if (!holds) kind = kind == IR_LT ? IR_GE : kind == IR_LE ? IR_GT : kind == IR_GE ? IR_LT : IR_LE;
  if (kind == IR_LT && c - 1 < hi) hi = c - 1;
  if (kind == IR_LE && c < hi) hi = c;
  if (kind == IR_GE && c > lo) lo = c;
  if (kind == IR_GT && c + 1 > lo) lo = c + 1;
  if (lo <= hi) ir_range_env_add(env, v->u.var, lo, hi);
}

void pass_range_enter_kernel(IrRangeEnv *env, const IrKernel *k) {
  for (int a = 0; a < 3; a++) {
    int64_t lo, hi, t = k->threads[a] + (a == 0 ? k->producer_threads : 0);
    if (k->block_var[a] && ir_range(k->grid[a], env, &lo, &hi) && hi >= 1) ir_range_env_add(env, k->block_var[a], 0, hi - 1);
    if (k->thread_var[a] && t >= 1) ir_range_env_add(env, k->thread_var[a], 0, t - 1);
  }
}

void pass_range_enter_loop(IrRangeEnv *env, IrVar *v, const IrExpr *min, const IrExpr *extent, int64_t open_hi) {
  int64_t lo, hi, elo, ehi;
  if (!v || !ir_range(min, env, &lo, &hi)) return;
  if (!ir_range(extent, env, &elo, &ehi)) {
    if (!open_hi) return;
    ehi = open_hi; /* still >= min */
  }
  if (ehi >= 1) ir_range_env_add(env, v, lo, hi + ehi - 1);
}

/* ---- constant memory ---- */

/* Might a statement of s write the memory of buffer b (a store, a tile op's destination, or
 * an address taken for a device call, which may write through it; through any view)?  A
 * distributed kernel (remote puts and signals) may have its tensors written by peers, and
 * a kernel calling user device code (T.call_extern) anything. */
typedef struct Writes {
  const IrBuffer *root;
  bool found;
  bool extern_args; /* T.call_extern writes only what its arguments name (else: anything) */
} Writes;
static void wrote(Writes *w, const IrBuffer *b) { w->found |= b && ir_buffer_root(b) == w->root; }
static void writes_stmt(IrStmt *s, void *ctx) {
  Writes *w = ctx;
  if (s->kind == IR_S_STORE) wrote(w, s->u.store.buf);
  IrOperand ops[IR_TILE_MAX_OPERANDS];
  for (int i = ir_tile_operands(s, ops) - 1; i >= 0; i--)
    if (ops[i].write) wrote(w, ops[i].buf);
}
static void names_root(IrExpr *e, void *ctx) {
  if (e->kind == IR_LOAD) wrote(ctx, e->u.load.buf);
}
static void writes_expr(IrExpr *e, void *ctx) {
  Writes *w = ctx;
  if (e->kind != IR_CALL) return;
  if (e->u.call.op == IRI_ADDRESS_OF && e->u.call.nargs == 1 && e->u.call.args[0]->kind == IR_LOAD)
    wrote(w, e->u.call.args[0]->u.load.buf);
  if (e->u.call.op == IRI_DEVICE && (ir_device_info[e->u.call.dop].flags & (IRD_DIST | IRD_SHMEM))) w->found = true;
  if (e->u.call.op == IRI_CALL_EXTERN && !w->extern_args) w->found = true; /* user device code: any pointer */
  if (e->u.call.op == IRI_CALL_EXTERN && w->extern_args)
    for (int i = 0; i < e->u.call.nargs; i++) {
      IrVisitor v = {NULL, names_root, w};
      ir_visit_expr(e->u.call.args[i], &v);
    }
}

static bool may_write(IrStmt *s, const IrBuffer *b, bool extern_args) {
  Writes w = {ir_buffer_root(b), false, extern_args};
  IrVisitor v = {writes_stmt, writes_expr, &w};
  ir_visit(s, &v);
  return w.found;
}
bool pass_may_write(IrStmt *s, const IrBuffer *b) { return may_write(s, b, true); }

bool pass_constant_buffer(IrStmt *kbody, const IrBuffer *b) {
  return ir_buffer_root(b)->scope == IR_SCOPE_GLOBAL && !may_write(kbody, b, false);
}

typedef struct ReadOnly { IrStmt *kbody; bool ok; } ReadOnly;
static void read_only_expr(IrExpr *e, void *ctx) {
  ReadOnly *r = ctx;
  if (e->kind == IR_LOAD && r->ok) r->ok = pass_constant_buffer(r->kbody, e->u.load.buf);
}
bool pass_reads_constant_memory(IrExpr *e, IrStmt *kbody) {
  ReadOnly r = {kbody, true};
  IrVisitor v = {NULL, read_only_expr, &r};
  ir_visit_expr(e, &v);
  return r.ok;
}

/* ---- lets written out ---- */
typedef struct LetCtx { PtrVec vars; TsCompiler *c; } LetCtx;
static void let_expr(IrExpr *e, void *ctx) {
  LetCtx *l = ctx;
  if (e->kind == IR_VAR && e->u.var->kind == IR_VAR_LET && e->u.var->let_value) {
    for (int i = 0; i < l->vars.len; i++)
      if (l->vars.items[i] == e->u.var) return;
    vec_push(l->c->arena, &l->vars, e->u.var);
  }
}
IrExpr *pass_inline_lets(TsCompiler *c, IrExpr *e) {
  for (int round = 0; round < 17; round++) {
    LetCtx l = {{0}, c};
    IrVisitor v = {NULL, let_expr, &l};
    ir_visit_expr(e, &v);
    if (!l.vars.len) return e;
    IrExpr **to = ARENA_ARRAY(c->arena, IrExpr *, l.vars.len);
    for (int i = 0; i < l.vars.len; i++) to[i] = (IrExpr *)((IrVar *)l.vars.items[i])->let_value;
    e = ir_subst(c, e, (IrVar *const *)l.vars.items, to, l.vars.len);
  }
  return e;
}

IrStmt *pass_dev(TsCompiler *c, IrDeviceOp op, int64_t a0, int64_t a1, IrExpr **args, int nargs, SrcLoc loc) {
  int64_t attrs[2] = {a0, a1};
  return ir_device_stmt(c, op, attrs, ir_device_info[op].nattrs, args, nargs, loc);
}

typedef struct FoundReturn { bool found; SrcLoc loc; } FoundReturn;
static void find_return(IrStmt *s, void *ctx) {
  FoundReturn *r = ctx;
  if (s->kind == IR_S_RETURN && !r->found) *r = (FoundReturn){true, s->loc};
}

bool pass_has_return(IrStmt *s, SrcLoc *loc) {
  FoundReturn r = {false, SRCLOC_NONE};
  IrVisitor v = {find_return, NULL, &r};
  if (s) ir_visit(s, &v);
  if (r.found && loc) *loc = r.loc;
  return r.found;
}

/* Does s hold a T.thread_return, or a break / continue of the loop whose body s is (not one
 * inside a loop of its own)? */
bool pass_leaves_loop(const IrStmt *s) {
  if (!s) return false;
  switch (s->kind) {
    case IR_S_BREAK: case IR_S_CONTINUE: case IR_S_RETURN: return true;
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++)
        if (pass_leaves_loop(s->u.seq.items[i])) return true;
      return false;
    case IR_S_IF: return pass_leaves_loop(s->u.if_.then_s) || pass_leaves_loop(s->u.if_.else_s);
    case IR_S_FOR: return pass_has_return(s->u.loop.body, NULL);
    case IR_S_WHILE: return pass_has_return(s->u.while_.body, NULL);
    default: return false;
  }
}

bool pass_is_zero(const IrExpr *e) {
  if (e->kind == IR_CAST) e = e->u.ops[0];
  return (e->kind == IR_INT && e->u.ival == 0) || (e->kind == IR_FLOAT && e->u.fval == 0.0 && !signbit(e->u.fval));
}

IrStmt *pass_gemm_half(TsCompiler *c, const IrStmt *g, int wg_wait) {
  IrStmt *h = ir_stmt(c, IR_S_GEMM, g->loc);
  *h = *g;
  h->u.gemm.wg_wait = wg_wait;
  return h;
}

IrExpr *pass_addr(TsCompiler *c, IrBuffer *b, IrExpr **idx, int n) {
  IrExpr *ld = ir_load(c, b, idx, n, SRCLOC_NONE);
  return ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, SRCLOC_NONE);
}
