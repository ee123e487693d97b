/* builtins_reducer.c — T.alloc_reducer and its epoch: T.reducer_init, T.reducer_update,
 * T.finalize_reducer (TileLang's v2 API, `finalize_reducer(acc, dst)`), and the v1 form the
 * corpus uses (`alloc_reducer(..., replication=...)`, ordinary `acc[i] += x` in T.Parallel,
 * `finalize_reducer(acc)` in place).
 *
 * A reducer is a buffer each thread holds whole (a local array): T.Parallel nests accumulate
 * their iterations into it (each thread the iterations it runs, replicas of an iteration only
 * once: lower_tile_ops), and finalize combines the copies of every thread with the op, so that
 * afterwards each thread holds the full result.  TileLang's replication ("all", "none") is a
 * storage choice with the same values after finalize; both are lowered as "all".
 *
 * v2: reducer_init fills every copy with the op's identity and keeps its optional starting
 * value in a local.var, which finalize combines once into each result element written to the
 * destination fragment.  v1: the caller initialises the buffer (T.clear / T.fill). */
#include <math.h>
#include <string.h>

#include "builtin.h"

static const char *const op_names[] = {"sum", "max", "min", "bitand", "bitor", "bitxor"};
static const int op_kinds[] = {IR_RED_SUM, IR_RED_MAX, IR_RED_MIN, IR_RED_BITAND, IR_RED_BITOR, IR_RED_BITXOR};

static bool is_bitwise(int kind) { return kind >= IR_RED_BITAND; }

/* The innermost IR loop around the evaluation point (Python loops unroll: not scopes). */
static const LoopCtx *ir_loop(const Eval *ev) {
  const LoopCtx *l = ev->loop;
  while (l && !l->is_ir) l = l->outer;
  return l;
}
static int kind_of(const IrBuffer *r) { return r->reducer - 1; }

/* T.alloc_reducer(shape, dtype, op="sum", replication=None) */
static Value *t_alloc_reducer(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  int op = arg[2] ? -1 : 0;
  for (int i = 0; i < 6 && arg[2]; i++)
    if (arg[2]->kind == V_STR && !strcmp(arg[2]->u.str.s, op_names[i])) op = i;
  if (op < 0) {
    ts_error(ev->c, loc, "T.alloc_reducer: op must be \"sum\", \"max\", \"min\", \"bitand\", \"bitor\" or \"bitxor\"");
    return ev->poison;
  }
  bool legacy = arg[3] && arg[3]->kind != V_NONE;
  if (legacy && (arg[3]->kind != V_STR || (strcmp(arg[3]->u.str.s, "all") && strcmp(arg[3]->u.str.s, "none")))) {
    ts_error(ev->c, loc, "T.alloc_reducer: replication must be \"all\" or \"none\"");
    return ev->poison;
  }
  IrBuffer *b = bi_alloc_buffer(ev, a, "T.alloc_reducer", arg[0], arg[1], IR_SCOPE_LOCAL);
  if (!b) return ev->poison;
  if (is_bitwise(op_kinds[op]) && !dtype_is_int(b->dtype) && b->dtype != TS_DTYPE_BOOL) {
    ts_error(ev->c, loc, "T.alloc_reducer: bitwise reducer op '%s' requires an integer dtype, got %s", op_names[op],
             dtype_name(b->dtype));
    return ev->poison;
  }
  if (ir_buffer_numel(b) < 0) {
    ts_error(ev->c, loc, "T.alloc_reducer: the shape must be constant");
    return ev->poison;
  }
  b->reducer = 1 + op_kinds[op];
  return bi_buffer_value(ev, b);
}

/* The combine of the reducer's op. */
static IrExpr *reducer_combine(Eval *ev, const IrBuffer *r, IrExpr *x, IrExpr *y, SrcLoc loc) {
  static const IrExprKind ops[] = {IR_ADD, IR_MAX, IR_MIN, IR_MAX, IR_ADD, IR_BITAND, IR_BITOR, IR_BITXOR};
  return ir_binary(ev->c, ops[kind_of(r)], x, y, loc);
}

/* The op's identity in the reducer's type: 0, the lowest / highest value, all ones. */
static IrExpr *reducer_identity(Eval *ev, const IrBuffer *r, SrcLoc loc) {
  ts_dtype t = r->dtype;
  int k = kind_of(r);
  bool flt = dtype_is_float(t), sgn = dtype_is_signed(t);
  int bits = dtype_bits(t);
  if (k == IR_RED_MAX)
    return flt ? ir_float(ev->c, -INFINITY, t, loc) : ir_int(ev->c, sgn ? -(INT64_C(1) << (bits - 1)) : 0, t, loc);
  if (k == IR_RED_MIN) {
    if (flt) return ir_float(ev->c, INFINITY, t, loc);
    return ir_int(ev->c, t == TS_DTYPE_BOOL ? 1 : sgn ? (INT64_C(1) << (bits - 1)) - 1 : -1, t, loc);
  }
  if (k == IR_RED_BITAND) return ir_int(ev->c, t == TS_DTYPE_BOOL ? 1 : -1, t, loc);
  return flt ? ir_float(ev->c, 0, t, loc) : ir_int(ev->c, 0, t, loc);
}

/* The reducer argument of an epoch operation, or NULL after a diagnostic. */
static IrBuffer *reducer_arg(Eval *ev, Value *v, const char *fname, SrcLoc loc) {
  if (v->kind != V_BUFFER || !v->u.buf->reducer) {
    ts_error(ev->c, loc, "%s: expected a buffer made by T.alloc_reducer, got %s", fname,
             v->kind == V_BUFFER ? v->u.buf->name : ev_type_name(v));
    return NULL;
  }
  return v->u.buf;
}

/* for e in unroll(numel(r)): body(e) */
static IrStmt *each_element(Eval *ev, IrBuffer *r, IrVar *ve, IrStmt *body, SrcLoc loc) {
  return ir_for(ev->c, ve, ir_i32(ev->c, 0), ir_i32(ev->c, ir_buffer_numel(r)), IR_FOR_UNROLLED, body, loc);
}

/* T.reducer_init(reducer, init=None): opens the epoch; every copy starts at the identity,
 * `init` (evaluated here) is kept for finalize. */
static Value *t_reducer_init(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrBuffer *r = reducer_arg(ev, arg[0], "T.reducer_init", loc);
  if (!r) return ev->poison;
  if (r->reducer_epoch == 1) {
    ts_error(ev->c, loc, "double T.reducer_init of reducer '%s' (its epoch is open: T.finalize_reducer first)", r->name);
    return ev->poison;
  }
  r->reducer_start = NULL;
  if (arg[1] && arg[1]->kind != V_NONE) {
    if (arg[1]->kind == V_EXPR && arg[1]->u.expr->dtype != r->dtype) {
      ts_error(ev->c, loc, "T.reducer_init: the init value's dtype %s does not match reducer '%s' (%s)",
               dtype_name(arg[1]->u.expr->dtype), r->name, dtype_name(r->dtype));
      return ev->poison;
    }
    IrExpr *one = ir_i32(ev->c, 1);
    IrBuffer *s = ir_buffer(ev->c, arena_printf(ev->a, "%s_start", r->name), r->dtype, IR_SCOPE_VAR, 1, &one, loc);
    s->init = bi_to_dtype(ev, arg[1], r->dtype, loc);
    if (!s->init) return ev->poison;
    r->reducer_start = bi_declare_buffer(ev, s, loc);
  }
  IrVar *ve = ir_var(ev->c, "e", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr **ri = bi_flat_index(ev, r, ir_varref(ev->c, ve, loc), loc);
  ev_emit(ev, each_element(ev, r, ve, ir_store(ev->c, r, ri, r->ndim, reducer_identity(ev, r, loc), loc), loc));
  r->reducer_epoch = 1;
  r->reducer_scope = ir_loop(ev) ? ir_loop(ev)->id : 0;
  return ev->none;
}

/* T.reducer_update(reducer[indices], value): one contribution to that element. */
static Value *t_reducer_update(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  Value *t = arg[0];
  if (t->kind != V_EXPR || t->u.expr->kind != IR_LOAD || !t->u.expr->u.load.buf->reducer) {
    ts_error(ev->c, loc, "T.reducer_update expects `acc[indices]` of a T.alloc_reducer buffer first, got %s",
             ev_type_name(t));
    return ev->poison;
  }
  IrExpr *ld = t->u.expr;
  IrBuffer *r = ld->u.load.buf;
  for (int i = 0; i < ev->reducer_reads.len; i++) /* its target, not a read of a partial value */
    if (ev->reducer_reads.items[i] == ld) ev->reducer_reads.items[i--] = ev->reducer_reads.items[--ev->reducer_reads.len];
  if (r->reducer_epoch != 1) {
    ts_error(ev->c, loc, "T.reducer_update before T.reducer_init of reducer '%s'", r->name);
    return ev->poison;
  }
  const LoopCtx *l = ir_loop(ev);
  while (l && l->kind != IR_FOR_PARALLEL) l = l->outer;
  if (!l) { /* each T.Parallel iteration contributes once; elsewhere every thread would */
    ts_error(ev->c, loc, "T.reducer_update of reducer '%s' outside any T.Parallel loop", r->name);
    return ev->poison;
  }
  IrExpr *v = bi_to_dtype(ev, arg[1], r->dtype, loc);
  if (!v) return ev->poison;
  ev_emit(ev, ir_store(ev->c, r, ld->u.load.idx, ld->u.load.nidx, reducer_combine(ev, r, ld, v, loc), loc));
  return ev->none;
}

/* Every thread's copy of r becomes the op-combination of all copies.  Per element: a
 * butterfly of __shfl_xor_sync over the warp, lane 0 of each warp stores its warp's value into
 * a shared [warps, numel] scratch, and after the barrier thread_sync places there, each thread
 * combines the warps' values in order (the same order in every thread, so every copy ends
 * bitwise equal). */
static bool combine_copies(Eval *ev, IrBuffer *r, SrcLoc loc) {
  TsCompiler *c = ev->c;
  IrKernel *k = &ev->kernel->u.kernel;
  int64_t threads = (int64_t)k->threads[0] * k->threads[1] * k->threads[2];
  if (ev->in_ws || k->threads[1] != 1 || k->threads[2] != 1 || threads % 32) {
    ts_error(c, loc, "T.finalize_reducer needs a kernel of whole warps along threadIdx.x, outside T.ws (here %lld threads)",
             (long long)threads);
    return false;
  }
  int64_t n = ir_buffer_numel(r), warps = threads / 32;
  IrExpr *tx = ir_varref(c, ir_kernel_thread_var(c, k, 0, loc), loc);
  IrExpr *shape[2] = {ir_i32(c, warps), ir_i32(c, n)};
  IrBuffer *scratch = ir_buffer(c, arena_printf(ev->a, "%s_warps", r->name), r->dtype, IR_SCOPE_SHARED_DYN, 2, shape, loc);
  IrStmt *al = ir_stmt(c, IR_S_ALLOC, loc);
  al->u.alloc.buf = scratch;
  ev_emit(ev, al);
  ev_define_buffer(ev, scratch);
  /* for e in unroll(n): v = r[e] reduced over the warp; lane 0: scratch[warp, e] = v */
  IrVar *ve = ir_var(c, "e", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *e = ir_varref(c, ve, loc);
  IrExpr **ri = bi_flat_index(ev, r, e, loc);
  IrExpr *v = ir_load(c, r, ri, r->ndim, loc);
  PtrVec body = {0};
  for (int off = 16; off >= 1; off /= 2) {
    IrExpr *sh = ir_call(c, IRI_SHFL_XOR, v->dtype, (IrExpr *[]){v, ir_i32(c, off)}, 2, loc);
    IrVar *lv = ir_var(c, "warp_red", v->dtype, IR_VAR_LET, loc);
    vec_push(ev->a, &body, ir_let(c, lv, reducer_combine(ev, r, v, sh, loc), loc));
    v = ir_varref(c, lv, loc);
  }
  IrExpr *lane0 = ir_binary(c, IR_EQ, ir_binary(c, IR_FLOORMOD, tx, ir_i32(c, 32), loc), ir_i32(c, 0), loc);
  IrExpr *si[2] = {ir_binary(c, IR_FLOORDIV, tx, ir_i32(c, 32), loc), e};
  vec_push(ev->a, &body, ir_if(c, lane0, ir_store(c, scratch, si, 2, v, loc), NULL, loc));
  ev_emit(ev, each_element(ev, r, ve, ir_seq_vec(c, &body, loc), loc));
  /* for e in unroll(n): r[e] = scratch[0, e]; for w in 1..warps: r[e] = r[e] op scratch[w, e] */
  IrVar *ve2 = ir_var(c, "e", TS_DTYPE_INT32, IR_VAR_LOOP, loc), *vw = ir_var(c, "w", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *e2 = ir_varref(c, ve2, loc);
  IrExpr **ri2 = bi_flat_index(ev, r, e2, loc);
  IrExpr *first[2] = {ir_i32(c, 0), e2}, *wi[2] = {ir_varref(c, vw, loc), e2};
  IrExpr *acc = reducer_combine(ev, r, ir_load(c, r, ri2, r->ndim, loc), ir_load(c, scratch, wi, 2, loc), loc);
  IrStmt *steps[2] = {ir_store(c, r, ri2, r->ndim, ir_load(c, scratch, first, 2, loc), loc),
                      ir_for(c, vw, ir_i32(c, 1), ir_i32(c, warps - 1), IR_FOR_SERIAL,
                             ir_store(c, r, ri2, r->ndim, acc, loc), loc)};
  ev_emit(ev, each_element(ev, r, ve2, ir_seq(c, steps, 2, loc), loc));
  return true;
}

/* dst[i...] = r[i...] (op start), a T.Parallel nest over dst. */
static void publish(Eval *ev, IrBuffer *r, IrBuffer *dst, SrcLoc loc) {
  TsCompiler *c = ev->c;
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, r->ndim);
  IrVar **vars = ARENA_ARRAY(ev->a, IrVar *, r->ndim);
  for (int d = 0; d < r->ndim; d++) {
    vars[d] = ir_var(c, arena_printf(ev->a, "i%d", d), TS_DTYPE_INT32, IR_VAR_LOOP, loc);
    idx[d] = ir_varref(c, vars[d], loc);
  }
  IrExpr *v = ir_load(c, r, idx, r->ndim, loc);
  if (r->reducer_start) v = reducer_combine(ev, r, v, ir_load(c, r->reducer_start, (IrExpr *[]){ir_i32(c, 0)}, 1, loc), loc);
  IrStmt *body = ir_store(c, dst, idx, dst->ndim, v, loc);
  for (int d = r->ndim - 1; d >= 0; d--) body = ir_for(c, vars[d], ir_i32(c, 0), r->shape[d], IR_FOR_PARALLEL, body, loc);
  ev_emit(ev, body);
}

/* T.finalize_reducer(reducer, dst=None, batch=1, annotations=None): combines every thread's
 * copy; with dst (v2), closes the epoch and writes the result (with the starting value) to
 * the fragment dst. */
static Value *t_finalize_reducer(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrBuffer *r = reducer_arg(ev, arg[0], "T.finalize_reducer", loc);
  if (!r) return ev->poison;
  int64_t batch;
  if (!bi_opt_int(ev, arg[2], 1, &batch, loc)) return ev->poison;
  if (batch < 1) {
    ts_error(ev->c, loc, "T.finalize_reducer: batch must be >= 1, got %lld", (long long)batch);
    return ev->poison;
  }
  IrBuffer *dst = NULL;
  if (arg[1] && arg[1]->kind != V_NONE) {
    dst = arg[1]->kind == V_BUFFER ? arg[1]->u.buf : NULL;
    bool same = dst && dst != r && dst->ndim == r->ndim && dst->dtype == r->dtype && dst->scope == IR_SCOPE_FRAGMENT;
    for (int d = 0; same && d < r->ndim; d++) {
      int64_t x, y;
      same = ir_is_const_int(dst->shape[d], &x) && ir_is_const_int(r->shape[d], &y) && x == y;
    }
    if (!same) {
      ts_error(ev->c, loc, "T.finalize_reducer: dst must be a fragment of the reducer's shape and dtype (not the "
               "reducer itself)");
      return ev->poison;
    }
    if (r->reducer_epoch != 1) {
      ts_error(ev->c, loc, "T.finalize_reducer before T.reducer_init of reducer '%s'", r->name);
      return ev->poison;
    }
    if ((ir_loop(ev) ? ir_loop(ev)->id : 0) != r->reducer_scope) {
      ts_error(ev->c, loc, "T.finalize_reducer of reducer '%s' is not in the scope of its T.reducer_init (a loop "
               "opens or closes between them)", r->name);
      return ev->poison;
    }
  }
  if (!combine_copies(ev, r, loc)) return ev->poison;
  if (dst) {
    publish(ev, r, dst, loc);
    r->reducer_epoch = 2;
  }
  return ev->none;
}

static const Builtin reducer_rows[] = {
    {"alloc_reducer", "shape, dtype, op=\"sum\", replication=None", t_alloc_reducer, 0, 0},
    {"reducer_init", "reducer, init=None", t_reducer_init, 0, 0},
    {"reducer_update", "target, value", t_reducer_update, 0, 0},
    {"finalize_reducer", "reducer, dst=None, batch=1, annotations=None", t_finalize_reducer, 0, 0},
};

const BuiltinTable builtins_reducer[] = {
    {MOD_T, reducer_rows, TS_ARRAY_LEN(reducer_rows), NULL},
    BUILTIN_TABLE_END,
};
