/* builtins_allreduce.c — TVM's raw thread all-reduce, as TileLang kernels spell it:
 *
 *   with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, accum)]), "reduce_scope", h):
 *       T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, cond, out[0], tk, dtype="handle"))
 *
 * is: out[0] = the combination, by the lambda, of `value` over every thread of the block that
 * differs from this one only in the thread indices named (tk ...), in every such thread.
 * (`cond` false: the thread contributes the identity.)  It is lowered here, while tracing, to
 * the statements the project's other reductions use (T.warp_reduce_*, T.finalize_reducer):
 *
 *  - one reduced axis whose threads are adjacent lanes of whole warps (the axis and those
 *    below it are powers of two spanning at most 32 lanes, the block whole warps or one
 *    partial warp, whose shuffles then name only its lanes): a
 *    butterfly of __shfl_xor_sync over that axis's lane bits.  XOR by stride * 2^i flips only
 *    the reduced index's bits, so each step stays inside the group, and after log2(extent)
 *    steps every lane holds the same combination;
 *  - anything else: each thread stores its value into a shared [threads] scratch, and (after
 *    the barrier thread_sync places there) combines its group's values in the same order in
 *    every thread, so every copy ends bitwise equal.
 *
 * The combiner is the user's function, traced on IR operands at each combine, so any
 * expression of x and y works (sum, max, min, products, bit operations).  Like TVM's, the
 * all-reduce must be reached by every thread of the block (both forms synchronize: a full-warp
 * shuffle or a block barrier), so one inside T.ws or an IR 'if' is refused; a loop around it
 * must run the same trips in every thread.  Multi-value reducers (argmax's pairs) are refused. */
#include <string.h>

#include "builtin.h"

/* T.comm_reducer(combiner, identity): a V_COMM_REDUCER holding (combiner, identity element). */
static Value *t_comm_reducer(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  Value *fn = arg[0], *id = arg[1];
  if (fn->kind != V_FUNC && fn->kind != V_BUILTIN) {
    ts_error(ev->c, loc, "T.comm_reducer: combiner must be a function of two values (lambda x, y: ...), got %s",
             ev_type_name(fn));
    return ev->poison;
  }
  if ((id->kind == V_LIST || id->kind == V_TUPLE) && id->u.seq.n != 1) {
    ts_error(ev->c, loc, "T.comm_reducer: only single-value reducers are supported (identity list of length 1, got %d)",
             id->u.seq.n);
    return ev->poison;
  }
  if (id->kind == V_LIST || id->kind == V_TUPLE) id = id->u.seq.items[0];
  Value *r = ev_new(ev, V_COMM_REDUCER);
  r->u.reducer.combiner = fn;
  r->u.reducer.identity = id;
  return r;
}

/* T.attr(node, key, value): only the all-reduce's scope, `T.attr(T.comm_reducer(...),
 * "reduce_scope", ...)`, a `with` frame whose body's T.tvm_thread_allreduce uses that
 * reducer; any other attribute is raw TIR, not supported. */
static Value *t_attr(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[0]->kind == V_POISON) return ev->poison;
  bool scope_key = arg[1]->kind == V_STR && !strcmp(arg[1]->u.str.s, "reduce_scope");
  if (arg[0]->kind == V_COMM_REDUCER && scope_key) {
    Value *v = ev_new(ev, V_REDUCE_SCOPE);
    v->u.enter = arg[0];
    return v;
  }
  if (scope_key) {
    ts_error(ev->c, call_loc(a), "T.attr(..., \"reduce_scope\", ...): the node must be a T.comm_reducer, got %s",
             ev_type_name(arg[0]));
    return ev->poison;
  }
  return bi_unsupported(ev, a, arg, bi);
}

/* T.evaluate(value): a call kept for its effect (the statement level keeps non-pure calls);
 * the all-reduce has already emitted its statements and yields None. */
static Value *t_evaluate(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  return arg[0];
}

/* combiner(x, y) traced on IR operands, as x's dtype; NULL after a diagnostic. */
static IrExpr *combine(Eval *ev, const Value *red, IrExpr *x, IrExpr *y, const AstNode *node, SrcLoc loc) {
  Value *args[2] = {ev_expr(ev, x), ev_expr(ev, y)};
  CallArgs ca = {.node = node, .pos = args, .npos = 2};
  Value *r = ev->call(ev, red->u.reducer.combiner, &ca);
  if (!r || r->kind == V_POISON) return NULL;
  IrExpr *e = ev_to_ir(ev, r, x, loc);
  if (!e) return NULL;
  return ir_cast(ev->c, x->dtype, e, loc);
}

/* Binds e to a fresh LET (so that a shuffle or a combine runs once) and returns its use. */
static IrExpr *bind_let(Eval *ev, PtrVec *body, IrExpr *e, const char *name, SrcLoc loc) {
  IrVar *v = ir_var(ev->c, name, e->dtype, IR_VAR_LET, loc);
  ev_define_var(ev, v);
  IrStmt *s = ir_let(ev->c, v, e, loc);
  if (body) vec_push(ev->a, body, s);
  else ev_emit(ev, s);
  return ir_varref(ev->c, v, loc);
}

typedef struct AllReduce {
  int64_t ext[3];    /* block extent per axis (1 for an unused one) */
  bool reduced[3];   /* the axes named */
  IrExpr *value;     /* this thread's contribution (identity where cond is false) */
  IrExpr *out;       /* the LOAD of the element receiving the result */
  const Value *red;
  const AstNode *node;
} AllReduce;

static bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* The shuffle form applies when a single axis is reduced and its lanes are a power-of-two
 * span of whole warps (see the file comment); its lane stride is returned. */
static bool shuffle_stride(const AllReduce *r, int64_t *stride) {
  int n = 0, axis = -1;
  for (int d = 0; d < 3; d++)
    if (r->reduced[d]) n++, axis = d;
  if (n != 1) return false;
  int64_t below = 1;
  for (int d = 0; d < axis; d++) below *= r->ext[d];
  int64_t all = r->ext[0] * r->ext[1] * r->ext[2];
  if (!is_pow2(below) || !is_pow2(r->ext[axis]) || below * r->ext[axis] > 32 || (all % 32 && all > 32)) return false;
  *stride = below;
  return true;
}

/* A block of fewer than 32 threads is one partial warp: its shuffles name only its lanes. */
static IrExpr *lower_shuffle(Eval *ev, const AllReduce *r, int64_t stride, int64_t extent, SrcLoc loc) {
  TsCompiler *c = ev->c;
  int64_t all = r->ext[0] * r->ext[1] * r->ext[2];
  IrExpr *v = bind_let(ev, NULL, r->value, "red_in", loc);
  for (int64_t off = extent / 2; off >= 1; off /= 2) {
    IrExpr *lane = ir_i32(c, (int32_t)(off * stride)), *sh;
    if (all < 32) {
      IrExpr *mask = ir_int(c, (int64_t)((1u << all) - 1), TS_DTYPE_UINT32, loc);
      sh = ir_call(c, IRI_SHFL_XOR_SYNC, v->dtype, (IrExpr *[]){mask, v, lane, ir_i32(c, 32)}, 4, loc);
    } else {
      sh = ir_call(c, IRI_SHFL_XOR, v->dtype, (IrExpr *[]){v, lane}, 2, loc);
    }
    IrExpr *comb = combine(ev, r->red, v, bind_let(ev, NULL, sh, "red_peer", loc), r->node, loc);
    if (!comb) return NULL;
    v = bind_let(ev, NULL, comb, "red", loc);
  }
  return v;
}

/* Shared form: scratch[tid] = value; then every thread folds its group's entries in the order
 * of the group index j (the reduced axes' indices, axis 0 fastest). */
static IrExpr *lower_shared(Eval *ev, const AllReduce *r, SrcLoc loc) {
  TsCompiler *c = ev->c;
  IrKernel *k = &ev->kernel->u.kernel;
  int64_t all = r->ext[0] * r->ext[1] * r->ext[2], group = 1;
  IrExpr *idx[3], *tid = NULL;
  for (int d = 0; d < 3; d++) {
    idx[d] = r->ext[d] > 1 ? ir_varref(c, ir_kernel_thread_var(c, k, d, loc), loc) : ir_i32(c, 0);
    if (r->reduced[d]) group *= r->ext[d];
  }
  IrExpr *ext = ir_i32(c, (int32_t)all);
  IrBuffer *scratch = ir_buffer(c, bi_take_name(ev, "allreduce_scratch"), r->value->dtype, IR_SCOPE_SHARED_DYN, 1, &ext, loc);
  IrStmt *al = ir_stmt(c, IR_S_ALLOC, loc);
  al->u.alloc.buf = scratch;
  ev_emit(ev, al);
  ev_define_buffer(ev, scratch);
  /* linear thread index: x + X * (y + Y * z) */
  for (int d = 2; d >= 0; d--)
    tid = tid ? ir_binary(c, IR_ADD, idx[d], ir_binary(c, IR_MUL, tid, ir_i32(c, (int32_t)r->ext[d]), loc), loc) : idx[d];
  ev_emit(ev, ir_store(c, scratch, &tid, 1, r->value, loc));
  /* member(j): the thread's own index on the other axes, j's digits on the reduced ones */
  IrVar *vj = ir_var(c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *rest = ir_varref(c, vj, loc), *member = NULL;
  IrExpr *mi[3];
  for (int d = 0; d < 3; d++) {
    if (!r->reduced[d]) { mi[d] = idx[d]; continue; }
    mi[d] = ir_binary(c, IR_FLOORMOD, rest, ir_i32(c, (int32_t)r->ext[d]), loc);
    rest = ir_binary(c, IR_FLOORDIV, rest, ir_i32(c, (int32_t)r->ext[d]), loc);
  }
  for (int d = 2; d >= 0; d--)
    member = member ? ir_binary(c, IR_ADD, mi[d], ir_binary(c, IR_MUL, member, ir_i32(c, (int32_t)r->ext[d]), loc), loc)
                    : mi[d];
  /* acc = scratch[member(0)]; for j in 1..group: acc = combine(acc, scratch[member(j)]) */
  IrExpr *one = ir_i32(c, 1);
  IrBuffer *acc = ir_buffer(c, bi_take_name(ev, "red_acc"), r->value->dtype, IR_SCOPE_LOCAL, 1, &one, loc);
  IrStmt *al2 = ir_stmt(c, IR_S_ALLOC, loc);
  al2->u.alloc.buf = acc;
  ev_emit(ev, al2);
  ev_define_buffer(ev, acc);
  IrExpr *zero = ir_i32(c, 0);
  /* the first member, member(0) */
  IrExpr *m0 = NULL;
  for (int d = 2; d >= 0; d--) {
    IrExpr *x = r->reduced[d] ? zero : idx[d];
    m0 = m0 ? ir_binary(c, IR_ADD, x, ir_binary(c, IR_MUL, m0, ir_i32(c, (int32_t)r->ext[d]), loc), loc) : x;
  }
  ev_emit(ev, ir_store(c, acc, &zero, 1, ir_load(c, scratch, &m0, 1, loc), loc));
  IrExpr *folded = combine(ev, r->red, ir_load(c, acc, &zero, 1, loc), ir_load(c, scratch, &member, 1, loc), r->node, loc);
  if (!folded) return NULL;
  ev_emit(ev, ir_for(c, vj, one, ir_i32(c, (int32_t)(group - 1)), IR_FOR_SERIAL, ir_store(c, acc, &zero, 1, folded, loc), loc));
  return ir_load(c, acc, &zero, 1, loc);
}

/* The thread axis a reduce operand names (a kernel thread index), or -1 after a diagnostic. */
static int reduce_axis(Eval *ev, Value *v, int i, SrcLoc loc) {
  IrKernel *k = &ev->kernel->u.kernel;
  if (v->kind == V_EXPR && v->u.expr->kind == IR_VAR)
    for (int d = 0; d < 3; d++)
      if (k->thread_var[d] && v->u.expr->u.var == k->thread_var[d]) return d;
  ts_error(ev->c, loc, "T.tvm_thread_allreduce: argument %d must be a thread index of the kernel (T.get_thread_binding, "
           "T.thread_binding), got %s", i, ev_type_name(v));
  return -1;
}

/* T.tvm_thread_allreduce(size, value, cond, out, *thread_indices, dtype="handle"), inside
 * `with T.attr(T.comm_reducer(...), "reduce_scope", ...)`: see the file comment. */
static Value *t_thread_allreduce(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  const Value *red = ev->reduce_scope;
  if (!red) {
    ts_error(ev->c, loc, "T.tvm_thread_allreduce must be inside `with T.attr(T.comm_reducer(...), \"reduce_scope\", ...)`");
    return ev->poison;
  }
  if (ev->in_ws || ev->ir_if_depth) { /* its shuffles and barriers need every thread of the block */
    ts_error(ev->c, loc, "T.tvm_thread_allreduce inside %s is not supported (every thread of the block must reach it)",
             ev->in_ws ? "T.ws or a branch on a range of the thread index" : "an 'if' on a run-time value");
    return ev->poison;
  }
  (void)arg; /* the positional arguments are read from the call */
  ValList argl = {a->pos, a->npos, a->npos}, *args = &argl;
  int64_t size;
  if (args->n < 1 || !ev_to_int(ev, args->items[0], &size, loc)) {
    if (args->n < 1) ts_error(ev->c, loc, "T.tvm_thread_allreduce: expected (size, value, cond, out, thread indices...)");
    return ev->poison;
  }
  if (size != 1) {
    ts_error(ev->c, loc, "T.tvm_thread_allreduce: only size 1 (one value per thread) is supported, got %lld", (long long)size);
    return ev->poison;
  }
  if (args->n < 5) {
    ts_error(ev->c, loc, "T.tvm_thread_allreduce: expected (1, value, cond, out, thread indices...), got %d arguments", args->n);
    return ev->poison;
  }
  for (int i = 0; i < args->n; i++)
    if (args->items[i]->kind == V_POISON) return ev->poison;
  AllReduce r = {.red = red, .node = a->node};
  IrKernel *k = &ev->kernel->u.kernel;
  for (int d = 0; d < 3; d++) r.ext[d] = k->threads[d] > 0 ? k->threads[d] : 1;
  for (int i = 4; i < args->n; i++) {
    int d = reduce_axis(ev, args->items[i], i, loc);
    if (d < 0) return ev->poison;
    r.reduced[d] = true;
  }
  Value *out = args->items[3];
  if (out->kind != V_EXPR || out->u.expr->kind != IR_LOAD ||
      (out->u.expr->u.load.buf->scope != IR_SCOPE_LOCAL && out->u.expr->u.load.buf->scope != IR_SCOPE_SHARED &&
       out->u.expr->u.load.buf->scope != IR_SCOPE_SHARED_DYN)) {
    ts_error(ev->c, loc, "T.tvm_thread_allreduce: the result (argument 3) must be an element of a local or shared buffer, "
             "such as out[0]");
    return ev->poison;
  }
  r.out = out->u.expr;
  IrExpr *v = ev_to_ir(ev, args->items[1], NULL, loc);
  if (!v) return ev->poison;
  int ct = ev_truth(ev, args->items[2], loc);
  if (ct == -2) return ev->poison;
  if (ct != 1) { /* false or a run-time condition: the identity where it does not hold */
    IrExpr *id = ev_to_ir(ev, red->u.reducer.identity, v, loc);
    IrExpr *cond = ct == 0 ? NULL : ev_to_bool_ir(ev, ev_to_ir(ev, args->items[2], NULL, loc), loc);
    if (!id || (ct != 0 && !cond)) return ev->poison;
    id = ir_cast(ev->c, v->dtype, id, loc);
    v = ct == 0 ? id : ir_select(ev->c, IR_SELECT, cond, v, id, loc);
  }
  r.value = v;
  int64_t stride;
  IrExpr *res = NULL;
  if (shuffle_stride(&r, &stride)) {
    int axis = r.reduced[0] ? 0 : r.reduced[1] ? 1 : 2;
    res = lower_shuffle(ev, &r, stride, r.ext[axis], loc);
  } else {
    res = lower_shared(ev, &r, loc);
  }
  if (!res) return ev->poison;
  IrBuffer *ob = r.out->u.load.buf;
  ev_emit(ev, ir_store(ev->c, ob, r.out->u.load.idx, r.out->u.load.nidx, ir_cast(ev->c, ob->dtype, res, loc), loc));
  return ev->none;
}

static const Builtin allreduce_rows[] = {
    {"comm_reducer", "combiner, identity", t_comm_reducer, 0, 0},
    {"attr", "node, key, value", t_attr, 0, 0},
    {"tvm_thread_allreduce", "*args, dtype=None", t_thread_allreduce, 0, 0},
    {"evaluate", "value", t_evaluate, 0, 0},
};

const BuiltinTable builtins_allreduce[] = {
    {MOD_T, allreduce_rows, TS_ARRAY_LEN(allreduce_rows), NULL},
    BUILTIN_TABLE_END,
};
