/* ir.c — construction of Tile IR nodes, the type rules of arithmetic (TVM-like:
 * literals adopt the dtype of the IR operand), constant folding at construction,
 * structural queries, integer evaluation and variable substitution.
 * Used by the evaluator (src/front/eval_*.c builds tile-level IR) and the passes (build thread-level IR). */
#include <math.h>
#include <string.h>

#include "ir.h"

/* ---- generated name tables ------------------------------------------------------- */
const char *const ir_scope_names[IR_SCOPE_COUNT] = {
#define X(n, s) s,
    IR_SCOPES(X)
#undef X
};
const char *const ir_expr_names[IR_EXPR_KIND_COUNT] = {
#define X(n, s, k, f) s,
    IR_EXPR_KINDS(X)
#undef X
};
const int ir_expr_nops[IR_EXPR_KIND_COUNT] = {
#define X(n, s, k, f) k,
    IR_EXPR_KINDS(X)
#undef X
};
const int ir_expr_flags[IR_EXPR_KIND_COUNT] = {
#define X(n, s, k, f) f,
    IR_EXPR_KINDS(X)
#undef X
};
const IrIntrinInfo ir_intrin_info[IRI_COUNT] = {
#define X(n, s, f, k, fl) {s, f, k, fl},
    IR_INTRINSICS(X)
#undef X
};
const IrDeviceInfo ir_device_info[IRD_COUNT] = {
#define X(n, s, k, a, fl) {s, k, a, fl},
    IR_DEVICE_OPS(X)
#undef X
};
const char *const ir_stmt_names[IR_STMT_KIND_COUNT] = {
#define X(n, s) s,
    IR_STMT_KINDS(X)
#undef X
};
const char *const ir_for_kind_names[] = {"serial", "parallel", "pipelined", "unroll", "vectorized", "thread"};
const char *const ir_reduce_names[] = {"sum", "max", "min", "absmax", "abssum", "bitand", "bitor", "bitxor"};

/* ---- leaves ------------------------------------------------------------------------ */
static IrExpr *new_expr(TsCompiler *c, IrExprKind k, ts_dtype t, SrcLoc loc) {
  IrExpr *e = ARENA_NEW(c->arena, IrExpr);
  e->kind = k;
  e->dtype = t;
  e->loc = loc;
  e->lanes = 1;
  return e;
}

/* Ids come from the arena's byte count: strictly increasing within a compilation
 * (every node allocates), so no counter state is needed. */
static int next_id(TsCompiler *c) { return (int)(arena_bytes(c->arena) & 0x7fffffff); }

IrVar *ir_var(TsCompiler *c, const char *name, ts_dtype t, IrVarKind kind, SrcLoc loc) {
  IrVar *v = ARENA_NEW(c->arena, IrVar);
  v->name = arena_strdup(c->arena, name ? name : "v");
  v->dtype = t;
  v->kind = kind;
  v->loc = loc;
  v->id = next_id(c);
  return v;
}

IrBuffer *ir_buffer(TsCompiler *c, const char *name, ts_dtype t, IrScope scope, int ndim, IrExpr **shape,
                    SrcLoc loc) {
  IrBuffer *b = ARENA_NEW(c->arena, IrBuffer);
  b->name = arena_strdup(c->arena, name ? name : "buf");
  b->dtype = t;
  b->scope = scope;
  b->ndim = ndim;
  b->shape = ARENA_ARRAY(c->arena, IrExpr *, ndim);
  for (int i = 0; i < ndim; i++) b->shape[i] = shape[i];
  b->param_index = -1;
  b->smem_offset = -1;
  b->loc = loc;
  b->id = next_id(c);
  return b;
}

/* Integer constants are kept in range of their dtype (wrap like C would). */
static int64_t wrap_int(int64_t v, ts_dtype t) {
  switch (t) {
    case TS_DTYPE_BOOL: return v != 0;
    case TS_DTYPE_INT8: return (int8_t)v;
    case TS_DTYPE_INT16: return (int16_t)v;
    case TS_DTYPE_INT32: return (int32_t)v;
    case TS_DTYPE_UINT8: return (uint8_t)v;
    case TS_DTYPE_UINT16: return (uint16_t)v;
    case TS_DTYPE_UINT32: return (uint32_t)v;
    default: return v;
  }
}

IrExpr *ir_int(TsCompiler *c, int64_t v, ts_dtype t, SrcLoc loc) {
  if (dtype_is_float(t)) return ir_float(c, (double)v, t, loc);
  IrExpr *e = new_expr(c, IR_INT, t, loc);
  e->u.ival = wrap_int(v, t);
  return e;
}
IrExpr *ir_i32(TsCompiler *c, int64_t v) { return ir_int(c, v, TS_DTYPE_INT32, SRCLOC_NONE); }

IrExpr *ir_float(TsCompiler *c, double v, ts_dtype t, SrcLoc loc) {
  if (!dtype_is_float(t)) t = TS_DTYPE_FLOAT32;
  IrExpr *e = new_expr(c, IR_FLOAT, t, loc);
  e->u.fval = t == TS_DTYPE_FLOAT64 ? v : (double)(float)v;
  return e;
}

IrExpr *ir_str(TsCompiler *c, const char *s, SrcLoc loc) {
  IrExpr *e = new_expr(c, IR_STR, TS_DTYPE_HANDLE, loc);
  e->u.sval = arena_strdup(c->arena, s);
  return e;
}

IrExpr *ir_varref(TsCompiler *c, IrVar *v, SrcLoc loc) {
  IrExpr *e = new_expr(c, IR_VAR, v->dtype, loc);
  e->u.var = v;
  return e;
}

/* ---- typing -------------------------------------------------------------------------- */
static bool is_const(const IrExpr *e) { return e->kind == IR_INT || e->kind == IR_FLOAT; }
static double const_val(const IrExpr *e) { return e->kind == IR_INT ? (double)e->u.ival : e->u.fval; }

/* The result dtype of a binary arithmetic op.  A literal adopts the other side's dtype
 * (so `x * 2` stays half when x is half); otherwise floats win over ints and wider
 * types over narrower ones. */
static ts_dtype arith_type(const IrExpr *a, const IrExpr *b) {
  ts_dtype ta = a->dtype, tb = b->dtype;
  if (ta == tb) return ta;
  bool ca = is_const(a), cb = is_const(b);
  if (ca && !cb) {
    if (dtype_is_float(tb) || !dtype_is_float(ta)) return tb;
    return ta;  /* float literal with an int IR value: float */
  }
  if (cb && !ca) {
    if (dtype_is_float(ta) || !dtype_is_float(tb)) return ta;
    return tb;
  }
  bool fa = dtype_is_float(ta), fb = dtype_is_float(tb);
  if (fa != fb) return fa ? ta : tb;
  if (fa && fb && dtype_bits(ta) == dtype_bits(tb)) return TS_DTYPE_FLOAT32; /* half vs bfloat16 */
  if (ta == TS_DTYPE_BOOL) return tb;
  if (tb == TS_DTYPE_BOOL) return ta;
  return dtype_bits(ta) >= dtype_bits(tb) ? ta : tb;
}

static int64_t floordiv64(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
static int64_t floormod64(int64_t a, int64_t b) { return a - floordiv64(a, b) * b; }

bool ir_int_binop(IrExprKind k, int64_t a, int64_t b, int64_t *out) {
  switch (k) { /* + - * wrap as 64-bit two's complement (no overflow trap) */
    case IR_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); return true;
    case IR_SUB: *out = (int64_t)((uint64_t)a - (uint64_t)b); return true;
    case IR_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); return true;
    case IR_FLOORDIV: if (!b) return false; *out = floordiv64(a, b); return true;
    case IR_FLOORMOD: if (!b) return false; *out = floormod64(a, b); return true;
    case IR_TRUNCDIV: if (!b) return false; *out = a / b; return true;
    case IR_TRUNCMOD: if (!b) return false; *out = a % b; return true;
    case IR_MIN: *out = a < b ? a : b; return true;
    case IR_MAX: *out = a > b ? a : b; return true;
    case IR_EQ: *out = a == b; return true;
    case IR_NE: *out = a != b; return true;
    case IR_LT: *out = a < b; return true;
    case IR_LE: *out = a <= b; return true;
    case IR_GT: *out = a > b; return true;
    case IR_GE: *out = a >= b; return true;
    case IR_AND: *out = a && b; return true;
    case IR_OR: *out = a || b; return true;
    case IR_BITAND: *out = a & b; return true;
    case IR_BITOR: *out = a | b; return true;
    case IR_BITXOR: *out = a ^ b; return true;
    case IR_SHL: if (b < 0 || b > 63) return false; *out = (int64_t)((uint64_t)a << b); return true;
    case IR_SHR: if (b < 0 || b > 63) return false; *out = a >> b; return true;
    default: return false;
  }
}

/* Folds a binary op on two constants; returns NULL when it cannot (division by zero). */
static IrExpr *fold_binary(TsCompiler *c, IrExprKind k, const IrExpr *a, const IrExpr *b, ts_dtype t,
                           SrcLoc loc) {
  int fl = ir_expr_flags[k];
  if (a->kind == IR_INT && b->kind == IR_INT && !dtype_is_float(t)) {
    int64_t r;
    if (!ir_int_binop(k, a->u.ival, b->u.ival, &r)) return NULL;
    return ir_int(c, r, (fl & IRF_CMP) || (fl & IRF_LOGIC) ? TS_DTYPE_BOOL : t, loc);
  }
  double x = const_val(a), y = const_val(b), r;
  switch (k) {
    case IR_ADD: r = x + y; break;
    case IR_SUB: r = x - y; break;
    case IR_MUL: r = x * y; break;
    case IR_DIV: r = x / y; break;
    case IR_MIN: r = x < y ? x : y; break;
    case IR_MAX: r = x > y ? x : y; break;
    case IR_EQ: return ir_int(c, x == y, TS_DTYPE_BOOL, loc);
    case IR_NE: return ir_int(c, x != y, TS_DTYPE_BOOL, loc);
    case IR_LT: return ir_int(c, x < y, TS_DTYPE_BOOL, loc);
    case IR_LE: return ir_int(c, x <= y, TS_DTYPE_BOOL, loc);
    case IR_GT: return ir_int(c, x > y, TS_DTYPE_BOOL, loc);
    case IR_GE: return ir_int(c, x >= y, TS_DTYPE_BOOL, loc);
    default: return NULL;
  }
  return ir_float(c, r, t, loc);
}

IrExpr *ir_binary(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b, SrcLoc loc) {
  int fl = ir_expr_flags[k];
  ts_dtype t = arith_type(a, b);
  if (fl & (IRF_CMP | IRF_LOGIC)) {
    /* operands keep their types; the result is bool */
  } else {
    /* Retype a literal operand to the result type so codegen prints e.g. 2.0f for float. */
    if (is_const(a) && a->dtype != t) a = dtype_is_float(t) ? ir_float(c, const_val(a), t, a->loc)
                                                            : (a->kind == IR_INT ? ir_int(c, a->u.ival, t, a->loc) : a);
    if (is_const(b) && b->dtype != t) b = dtype_is_float(t) ? ir_float(c, const_val(b), t, b->loc)
                                                            : (b->kind == IR_INT ? ir_int(c, b->u.ival, t, b->loc) : b);
  }
  if (is_const(a) && is_const(b)) {
    IrExpr *f = fold_binary(c, k, a, b, t, loc);
    if (f) return f;
  }
  /* Identities that are exact for every dtype. */
  int64_t v;
  bool ia = a->kind == IR_INT, ib = b->kind == IR_INT;
  if (ib && (k == IR_ADD || k == IR_SUB) && b->u.ival == 0 && a->dtype == t) return a;
  if (ia && k == IR_ADD && a->u.ival == 0 && b->dtype == t) return b;
  if (ib && (k == IR_MUL || k == IR_FLOORDIV || k == IR_TRUNCDIV) && b->u.ival == 1 && a->dtype == t) return a;
  if (ia && k == IR_MUL && a->u.ival == 1 && b->dtype == t) return b;
  if (!dtype_is_float(t) && ((ia && a->u.ival == 0 && k == IR_MUL) || (ib && b->u.ival == 0 && k == IR_MUL)))
    return ir_int(c, 0, t, loc);
  if (!dtype_is_float(t) && ib && b->u.ival == 1 && (k == IR_FLOORMOD || k == IR_TRUNCMOD)) return ir_int(c, 0, t, loc);
  if (k == IR_AND && ir_is_const_int(a, &v)) return v ? b : ir_int(c, 0, TS_DTYPE_BOOL, loc);
  if (k == IR_AND && ir_is_const_int(b, &v)) return v ? a : ir_int(c, 0, TS_DTYPE_BOOL, loc);
  if (k == IR_OR && ir_is_const_int(a, &v)) return v ? ir_int(c, 1, TS_DTYPE_BOOL, loc) : b;
  if (k == IR_OR && ir_is_const_int(b, &v)) return v ? ir_int(c, 1, TS_DTYPE_BOOL, loc) : a;
  IrExpr *e = new_expr(c, k, (fl & (IRF_CMP | IRF_LOGIC)) ? TS_DTYPE_BOOL : t, loc);
  e->u.ops[0] = a;
  e->u.ops[1] = b;
  return e;
}

IrExpr *ir_unary(TsCompiler *c, IrExprKind k, IrExpr *a, SrcLoc loc) {
  if (a->kind == IR_INT) {
    if (k == IR_NEG) return ir_int(c, -a->u.ival, a->dtype, loc);
    if (k == IR_NOT) return ir_int(c, !a->u.ival, TS_DTYPE_BOOL, loc);
    if (k == IR_BITNOT) return ir_int(c, ~a->u.ival, a->dtype, loc);
  }
  if (a->kind == IR_FLOAT && k == IR_NEG) return ir_float(c, -a->u.fval, a->dtype, loc);
  if (a->kind == k && (k == IR_NEG || k == IR_NOT || k == IR_BITNOT)) return a->u.ops[0];
  IrExpr *e = new_expr(c, k, k == IR_NOT ? TS_DTYPE_BOOL : a->dtype, loc);
  e->u.ops[0] = a;
  return e;
}

IrExpr *ir_select(TsCompiler *c, IrExprKind k, IrExpr *cond, IrExpr *a, IrExpr *b, SrcLoc loc) {
  int64_t v;
  ts_dtype t = arith_type(a, b);
  if (a->dtype != t) a = ir_cast(c, t, a, loc);
  if (b->dtype != t) b = ir_cast(c, t, b, loc);
  if (ir_is_const_int(cond, &v)) return v ? a : b;
  IrExpr *e = new_expr(c, k, t, loc);
  e->u.ops[0] = cond;
  e->u.ops[1] = a;
  e->u.ops[2] = b;
  return e;
}

IrExpr *ir_cast(TsCompiler *c, ts_dtype t, IrExpr *a, SrcLoc loc) {
  if (a->dtype == t) return a;
  if (a->kind == IR_INT && !dtype_is_float(t)) return ir_int(c, a->u.ival, t, loc);
  if (a->kind == IR_INT && dtype_is_float(t)) return ir_float(c, (double)a->u.ival, t, loc);
  if (a->kind == IR_FLOAT && dtype_is_float(t)) return ir_float(c, a->u.fval, t, loc);
  /* Folded only inside int64's range: converting a larger float (T.min_value("float32")
   * stored to an int buffer, found by fuzzing) is undefined in C; the cast stays in the IR. */
  if (a->kind == IR_FLOAT && dtype_is_int(t) && a->u.fval >= -9223372036854775808.0 && a->u.fval < 9223372036854775808.0)
    return ir_int(c, (int64_t)a->u.fval, t, loc);
  IrExpr *e = new_expr(c, IR_CAST, t, loc);
  e->u.ops[0] = a;
  return e;
}

IrExpr *ir_call(TsCompiler *c, IrIntrin op, ts_dtype t, IrExpr **args, int nargs, SrcLoc loc) {
  IrExpr *e = new_expr(c, IR_CALL, t, loc);
  e->u.call.op = op;
  e->u.call.nargs = nargs;
  e->u.call.args = ARENA_ARRAY(c->arena, IrExpr *, nargs);
  for (int i = 0; i < nargs; i++) e->u.call.args[i] = args[i];
  return e;
}

IrExpr *ir_device(TsCompiler *c, IrDeviceOp op, ts_dtype t, const int64_t *attrs, int nattrs, IrExpr **args, int nargs,
                  SrcLoc loc) {
  IrExpr *e = ir_call(c, IRI_DEVICE, t, args, nargs, loc);
  e->u.call.dop = op;
  e->u.call.nattrs = nattrs;
  e->u.call.attrs = ARENA_ARRAY(c->arena, int64_t, nattrs ? nattrs : 1);
  for (int i = 0; i < nattrs; i++) e->u.call.attrs[i] = attrs[i];
  return e;
}

IrStmt *ir_device_stmt(TsCompiler *c, IrDeviceOp op, const int64_t *attrs, int nattrs, IrExpr **args, int nargs,
                       SrcLoc loc) {
  return ir_eval(c, ir_device(c, op, TS_DTYPE_VOID, attrs, nattrs, args, nargs, loc), loc);
}

IrStmt *ir_atomic_fence(TsCompiler *c, int order, bool after, SrcLoc loc) {
  enum { RELEASE = 3 };
  if (!order || (after ? order == RELEASE : order < RELEASE)) return NULL;
  int64_t attrs[2] = {order, after};
  return ir_device_stmt(c, IRD_ATOMIC_FENCE, attrs, 2, NULL, 0, loc);
}

IrDeviceOp ir_device_named(const char *name) {
  for (int i = 0; i < IRD_COUNT; i++)
    if (!strcmp(ir_device_info[i].name, name)) return (IrDeviceOp)i;
  return IRD_COUNT;
}

bool ir_is_device(const IrExpr *e, IrDeviceOp op) {
  return e && e->kind == IR_CALL && e->u.call.op == IRI_DEVICE && e->u.call.dop == op;
}

bool ir_config_true(const char *value) {
  return value && (!strcmp(value, "True") || !strcmp(value, "true") || !strcmp(value, "1"));
}

bool ir_is_flag_wait(const IrExpr *e) {
  if (!e || e->kind != IR_CALL || e->u.call.op != IRI_DEVICE) return false;
  IrDeviceOp op = e->u.call.dop;
  return (op >= IRD_DIST_WAIT_EQ && op <= IRD_DIST_WAIT_LT) || op == IRD_SHMEM_SIGNAL_WAIT_UNTIL;
}

bool ir_call_is_pure(const IrExpr *e) { return ir_call_has_flag(e, IRI_PURE); }

bool ir_call_has_flag(const IrExpr *e, int flag) {
  return e->kind == IR_CALL && (ir_intrin_info[e->u.call.op].flags & flag);
}

IrExpr *ir_load(TsCompiler *c, IrBuffer *b, IrExpr **idx, int nidx, SrcLoc loc) {
  IrExpr *e = new_expr(c, IR_LOAD, b->dtype, loc);
  e->u.load.buf = b;
  e->u.load.nidx = nidx;
  e->u.load.idx = ARENA_ARRAY(c->arena, IrExpr *, nidx);
  for (int i = 0; i < nidx; i++) e->u.load.idx[i] = idx[i];
  return e;
}

/* ---- statements ------------------------------------------------------------------------ */
IrStmt *ir_stmt(TsCompiler *c, IrStmtKind k, SrcLoc loc) {
  IrStmt *s = ARENA_NEW(c->arena, IrStmt);
  s->kind = k;
  s->loc = loc;
  return s;
}

IrStmt *ir_seq(TsCompiler *c, IrStmt **items, int n, SrcLoc loc) {
  PtrVec v = {0};
  for (int i = 0; i < n; i++) vec_push(c->arena, &v, items[i]);
  return ir_seq_vec(c, &v, loc);
}

static void flatten_into(TsCompiler *c, PtrVec *out, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) flatten_into(c, out, s->u.seq.items[i]);
  } else {
    vec_push(c->arena, out, s);
  }
}

IrStmt *ir_seq_vec(TsCompiler *c, PtrVec *items, SrcLoc loc) {
  PtrVec flat = {0};
  for (int i = 0; i < items->len; i++) flatten_into(c, &flat, items->items[i]);
  IrStmt *s = ir_stmt(c, IR_S_SEQ, loc);
  s->u.seq.n = flat.len;
  s->u.seq.items = (IrStmt **)flat.items;
  if (!s->u.seq.items) s->u.seq.items = ARENA_ARRAY(c->arena, IrStmt *, 1);
  return s;
}

IrStmt *ir_store(TsCompiler *c, IrBuffer *b, IrExpr **idx, int nidx, IrExpr *v, SrcLoc loc) {
  IrStmt *s = ir_stmt(c, IR_S_STORE, loc);
  s->u.store.buf = b;
  s->u.store.nidx = nidx;
  s->u.store.idx = ARENA_ARRAY(c->arena, IrExpr *, nidx);
  for (int i = 0; i < nidx; i++) s->u.store.idx[i] = idx[i];
  s->u.store.value = v;
  s->u.store.lanes = 1;
  return s;
}

IrStmt *ir_for(TsCompiler *c, IrVar *v, IrExpr *min, IrExpr *extent, IrForKind k, IrStmt *body, SrcLoc loc) {
  IrStmt *s = ir_stmt(c, IR_S_FOR, loc);
  s->u.loop.var = v;
  s->u.loop.min = min;
  s->u.loop.extent = extent;
  s->u.loop.kind = k;
  s->u.loop.body = body;
  return s;
}

IrStmt *ir_if(TsCompiler *c, IrExpr *cond, IrStmt *then_s, IrStmt *else_s, SrcLoc loc) {
  IrStmt *s = ir_stmt(c, IR_S_IF, loc);
  s->u.if_.cond = cond;
  s->u.if_.then_s = then_s;
  s->u.if_.else_s = else_s;
  return s;
}

IrStmt *ir_let(TsCompiler *c, IrVar *v, IrExpr *value, SrcLoc loc) {
  IrStmt *s = ir_stmt(c, IR_S_LET, loc);
  s->u.let.var = v;
  s->u.let.value = value;
  return s;
}

IrVar *ir_kernel_thread_var(TsCompiler *c, IrKernel *k, int axis, SrcLoc loc) {
  static const char *const names[3] = {"tx", "ty", "tz"};
  if (!k->thread_var[axis]) {
    k->thread_var[axis] = ir_var(c, names[axis], TS_DTYPE_INT32, IR_VAR_THREAD_IDX, loc);
    k->thread_var[axis]->axis = axis;
  }
  return k->thread_var[axis];
}

IrStmt *ir_eval(TsCompiler *c, IrExpr *e, SrcLoc loc) {
  IrStmt *s = ir_stmt(c, IR_S_EVAL, loc);
  s->u.eval.value = e;
  return s;
}

IrRegion ir_region_full(TsCompiler *c, IrBuffer *b, SrcLoc loc) {
  IrRegion r;
  r.buf = b;
  r.ndim = b->ndim;
  r.min = ARENA_ARRAY(c->arena, IrExpr *, b->ndim);
  r.extent = ARENA_ARRAY(c->arena, IrExpr *, b->ndim);
  for (int i = 0; i < b->ndim; i++) {
    r.min[i] = ir_i32(c, 0);
    r.extent[i] = b->shape[i];
  }
  r.loc = loc;
  return r;
}

/* ---- queries ------------------------------------------------------------------------------ */
bool ir_is_const_int(const IrExpr *e, int64_t *out) {
  if (e && e->kind == IR_INT) {
    if (out) *out = e->u.ival;
    return true;
  }
  return false;
}

bool ir_expr_equal(const IrExpr *a, const IrExpr *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->lanes != b->lanes) return false;
  switch (a->kind) {
    case IR_INT: return a->u.ival == b->u.ival;
    case IR_FLOAT: return a->u.fval == b->u.fval || (isnan(a->u.fval) && isnan(b->u.fval));
    case IR_STR: return strcmp(a->u.sval, b->u.sval) == 0;
    case IR_VAR: return a->u.var == b->u.var;
    case IR_CALL:
      if (a->u.call.op != b->u.call.op || a->u.call.nargs != b->u.call.nargs) return false;
      for (int i = 0; i < a->u.call.nargs; i++)
        if (!ir_expr_equal(a->u.call.args[i], b->u.call.args[i])) return false;
      return true;
    case IR_LOAD:
      if (a->u.load.buf != b->u.load.buf || a->u.load.nidx != b->u.load.nidx) return false;
      for (int i = 0; i < a->u.load.nidx; i++)
        if (!ir_expr_equal(a->u.load.idx[i], b->u.load.idx[i])) return false;
      return true;
    default:
      for (int i = 0; i < ir_expr_nops[a->kind]; i++)
        if (!ir_expr_equal(a->u.ops[i], b->u.ops[i])) return false;
      return true;
  }
}

/* Saturates at IR_NUMEL_MAX (a tensor parameter's constant dims may multiply past int64): a
 * size that large is refused wherever sizes are checked, and times any element's bytes it
 * still fits in int64. */
#define IR_NUMEL_MAX (INT64_MAX >> 4)
int64_t ir_buffer_numel(const IrBuffer *b) {
  int64_t n = 1, v;
  for (int i = 0; i < b->ndim; i++) {
    if (!ir_is_const_int(b->shape[i], &v)) return -1;
    if (v < 0) return -1;
    n = v && n > IR_NUMEL_MAX / v ? IR_NUMEL_MAX : n * v;
  }
  return n;
}

int64_t ir_buffer_bytes(const IrBuffer *b) {
  int64_t n = ir_buffer_numel(b);
  return n < 0 ? -1 : dtype_storage_bytes(b->dtype, n);
}

/* ---- substitution ----------------------------------------------------------------------- */
IrExpr *ir_with_operands(TsCompiler *c, const IrExpr *e, IrExpr **xs) {
  TS_ASSERT(e->kind == IR_CALL || e->kind == IR_LOAD);
  IrExpr *r = e->kind == IR_CALL ? ir_call(c, e->u.call.op, e->dtype, xs, e->u.call.nargs, e->loc)
                                 : ir_load(c, e->u.load.buf, xs, e->u.load.nidx, e->loc);
  if (e->kind == IR_CALL) { /* device operations keep their operation and attributes */
    r->u.call.dop = e->u.call.dop;
    r->u.call.attrs = e->u.call.attrs;
    r->u.call.nattrs = e->u.call.nattrs;
  }
  r->lanes = e->lanes;
  r->dtype = e->dtype;
  return r;
}

typedef struct Subst {
  IrVar *const *from;
  IrExpr *const *to;
  int n;
  const IrBuffer *buf_from; /* ir_subst_loads_stmt: loads of buf_from read buf_to instead */
  IrBuffer *buf_to;
} Subst;

static IrExpr *subst_expr(TsCompiler *c, IrExpr *e, const Subst *s);

static IrExpr **subst_list(TsCompiler *c, IrExpr **xs, int n, const Subst *s, bool *changed) {
  IrExpr **out = NULL;
  for (int i = 0; i < n; i++) {
    IrExpr *x = subst_expr(c, xs[i], s);
    if (x != xs[i] && !out) {
      out = ARENA_ARRAY(c->arena, IrExpr *, n);
      memcpy(out, xs, sizeof(IrExpr *) * (size_t)n);
    }
    if (out) out[i] = x;
  }
  if (out) *changed = true;
  return out ? out : xs;
}

static IrExpr *subst_expr(TsCompiler *c, IrExpr *e, const Subst *s) {
  if (!e) return NULL;
  switch (e->kind) {
    case IR_INT: case IR_FLOAT: case IR_STR: return e;
    case IR_VAR:
      for (int i = 0; i < s->n; i++)
        if (s->from[i] == e->u.var) return s->to[i];
      return e;
    case IR_CALL:
    case IR_LOAD: {
      bool ch = false;
      bool call = e->kind == IR_CALL;
      IrExpr **xs = subst_list(c, call ? e->u.call.args : e->u.load.idx, call ? e->u.call.nargs : e->u.load.nidx, s, &ch);
      if (!call && s->buf_from && e->u.load.buf == s->buf_from) {
        IrExpr *r = ir_with_operands(c, e, xs); /* a new node */
        r->u.load.buf = s->buf_to;
        return r;
      }
      return ch ? ir_with_operands(c, e, xs) : e;
    }
    default: break;
  }
  int n = ir_expr_nops[e->kind];
  IrExpr *ops[3] = {0};
  bool ch = false;
  for (int i = 0; i < n; i++) {
    ops[i] = subst_expr(c, e->u.ops[i], s);
    ch |= ops[i] != e->u.ops[i];
  }
  if (!ch) return e;
  IrExpr *r;
  if (n == 2) {
    r = ir_binary(c, e->kind, ops[0], ops[1], e->loc);
    /* Keep the original result type (the operands' types did not change meaningfully). */
    if (r->dtype != e->dtype && !is_const(r) && !(ir_expr_flags[e->kind] & (IRF_CMP | IRF_LOGIC)))
      r = ir_cast(c, e->dtype, r, e->loc);
  } else if (e->kind == IR_SELECT || e->kind == IR_IF_THEN_ELSE) {
    r = ir_select(c, e->kind, ops[0], ops[1], ops[2], e->loc);
  } else if (e->kind == IR_CAST) {
    r = ir_cast(c, e->dtype, ops[0], e->loc);
  } else if (e->kind == IR_REINTERPRET) {
    r = new_expr(c, IR_REINTERPRET, e->dtype, e->loc);
    r->u.ops[0] = ops[0];
  } else {
    r = ir_unary(c, e->kind, ops[0], e->loc);
  }
  return r;
}

IrExpr *ir_subst(TsCompiler *c, IrExpr *e, IrVar *const *from, IrExpr *const *to, int n) {
  Subst s = {from, to, n, NULL, NULL};
  return subst_expr(c, e, &s);
}

static IrRegion subst_region(TsCompiler *c, IrRegion r, const Subst *s) {
  bool ch = false;
  r.min = subst_list(c, r.min, r.ndim, s, &ch);
  r.extent = subst_list(c, r.extent, r.ndim, s, &ch);
  return r;
}

static IrStmt *subst_stmt(TsCompiler *c, IrStmt *st, const Subst *s) {
  if (!st) return NULL;
  IrStmt *r = ir_stmt(c, st->kind, st->loc);
  *r = *st;
  bool ch = false;
  switch (st->kind) {
    case IR_S_SEQ:
      r->u.seq.items = ARENA_ARRAY(c->arena, IrStmt *, st->u.seq.n);
      for (int i = 0; i < st->u.seq.n; i++) r->u.seq.items[i] = subst_stmt(c, st->u.seq.items[i], s);
      break;
    case IR_S_FOR:
      r->u.loop.min = subst_expr(c, st->u.loop.min, s);
      r->u.loop.extent = subst_expr(c, st->u.loop.extent, s);
      r->u.loop.body = subst_stmt(c, st->u.loop.body, s);
      break;
    case IR_S_IF:
      r->u.if_.cond = subst_expr(c, st->u.if_.cond, s);
      r->u.if_.then_s = subst_stmt(c, st->u.if_.then_s, s);
      r->u.if_.else_s = subst_stmt(c, st->u.if_.else_s, s);
      break;
    case IR_S_WHILE:
      r->u.while_.cond = subst_expr(c, st->u.while_.cond, s);
      r->u.while_.body = subst_stmt(c, st->u.while_.body, s);
      break;
    case IR_S_LET: r->u.let.value = subst_expr(c, st->u.let.value, s); break;
    case IR_S_STORE:
      r->u.store.idx = subst_list(c, st->u.store.idx, st->u.store.nidx, s, &ch);
      r->u.store.value = subst_expr(c, st->u.store.value, s);
      break;
    case IR_S_EVAL: r->u.eval.value = subst_expr(c, st->u.eval.value, s); break;
    case IR_S_KERNEL:
      for (int i = 0; i < 3; i++) r->u.kernel.grid[i] = subst_expr(c, st->u.kernel.grid[i], s);
      r->u.kernel.body = subst_stmt(c, st->u.kernel.body, s);
      break;
    case IR_S_ASSERT: r->u.assert_.cond = subst_expr(c, st->u.assert_.cond, s); break;
    case IR_S_COPY:
      r->u.copy.src = subst_region(c, st->u.copy.src, s);
      r->u.copy.dst = subst_region(c, st->u.copy.dst, s);
      r->u.copy.barrier = subst_expr(c, st->u.copy.barrier, s);
      r->u.copy.dst_block = subst_expr(c, st->u.copy.dst_block, s);
      break;
    case IR_S_FILL:
      r->u.fill.dst = subst_region(c, st->u.fill.dst, s);
      r->u.fill.value = subst_expr(c, st->u.fill.value, s);
      break;
    case IR_S_ATOMIC:
      r->u.atomic.dst = subst_region(c, st->u.atomic.dst, s);
      if (st->u.atomic.tile) r->u.atomic.src = subst_region(c, st->u.atomic.src, s);
      r->u.atomic.value = subst_expr(c, st->u.atomic.value, s);
      break;
    case IR_S_GEMM:
      r->u.gemm.a = subst_region(c, st->u.gemm.a, s);
      r->u.gemm.b = subst_region(c, st->u.gemm.b, s);
      r->u.gemm.c = subst_region(c, st->u.gemm.c, s);
      if (st->u.gemm.e.buf) r->u.gemm.e = subst_region(c, st->u.gemm.e, s);
      break;
    default: break;
  }
  return r;
}

IrStmt *ir_subst_stmt(TsCompiler *c, IrStmt *st, IrVar *const *from, IrExpr *const *to, int n) {
  Subst s = {from, to, n, NULL, NULL};
  return subst_stmt(c, st, &s);
}

IrStmt *ir_subst_loads_stmt(TsCompiler *c, IrStmt *st, const IrBuffer *from, IrBuffer *to) {
  Subst s = {NULL, NULL, 0, from, to};
  return subst_stmt(c, st, &s);
}

/* ---- reductions: what T.reduce_* start from and how they combine (lower_tile_ops for
 * fragments, the front end for a thread's own registers) ---------------------------------- */
IrExpr *ir_reduce_identity(TsCompiler *c, IrReduceKind op, ts_dtype t) {
  bool flt = dtype_is_float(t);
  switch (op) {
    case IR_RED_MAX:
      if (flt) return ir_float(c, -INFINITY, t, SRCLOC_NONE);
      return ir_int(c, dtype_is_signed(t) ? -(INT64_C(1) << (dtype_bits(t) - 1)) : 0, t, SRCLOC_NONE);
    case IR_RED_MIN:
      if (flt) return ir_float(c, INFINITY, t, SRCLOC_NONE);
      return ir_int(c, dtype_is_signed(t) ? (INT64_C(1) << (dtype_bits(t) - 1)) - 1 : -1, t, SRCLOC_NONE);
    case IR_RED_BITAND: return ir_int(c, t == TS_DTYPE_BOOL ? 1 : -1, t, SRCLOC_NONE); /* all bits set */
    default: return ir_int(c, 0, t, SRCLOC_NONE);
  }
}

IrExpr *ir_reduce_combine(TsCompiler *c, IrReduceKind op, bool nan, IrExpr *a, IrExpr *b) {
  switch (op) {
    case IR_RED_MAX: case IR_RED_ABSMAX:
      return nan ? ir_call(c, IRI_MAX_NAN, a->dtype, (IrExpr *[]){a, b}, 2, SRCLOC_NONE) : ir_binary(c, IR_MAX, a, b, SRCLOC_NONE);
    case IR_RED_MIN:
      return nan ? ir_call(c, IRI_MIN_NAN, a->dtype, (IrExpr *[]){a, b}, 2, SRCLOC_NONE) : ir_binary(c, IR_MIN, a, b, SRCLOC_NONE);
    case IR_RED_BITAND: return ir_binary(c, IR_BITAND, a, b, SRCLOC_NONE);
    case IR_RED_BITOR: return ir_binary(c, IR_BITOR, a, b, SRCLOC_NONE);
    case IR_RED_BITXOR: return ir_binary(c, IR_BITXOR, a, b, SRCLOC_NONE);
    default: return ir_binary(c, IR_ADD, a, b, SRCLOC_NONE);
  }
}
