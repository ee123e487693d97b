/* builtins_scalar.c — T.* for scalar values: the dtypes (T.float16 ...), T.dtype, the math
 * intrinsics (T.exp ...), min / max / clamp, selects, casts and bit reinterpretation, the
 * extreme values of a type, integer division, shifts, device printf and asserts, extern calls,
 * the `astype` method of IR values, and the TIR escapes known but not lowered.
 *
 *   registry.c  ->  here  ->  IR expressions (Python numbers fold where they can)
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "builtin.h"

/* ---- dtypes ------------------------------------------------------------------------------------- */
/* T.float16, T.int32 ...: the row's arg is the dtype. */
static Value *t_dtype_value(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)arg;
  return ev_dtype(ev, (ts_dtype)bi->arg);
}

/* A dtype TileLang has and the IR does not: its use is the error. */
static Value *t_dtype_unsupported(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)arg;
  return ev_opaque(ev, arena_printf(ev->a, "dtype T.%s is not supported yet", bi->name));
}

/* T.dtype(x): the dtype x names (a dtype, or its name; a name that is no dtype stays a string,
 * as TileLang's dtype class keeps names such as "int" of a packed source format). */
static Value *t_dtype_of(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  if (a->npos != 1 || a->nkw) {
    ts_error(ev->c, call_loc(a), "T.dtype() takes one argument");
    return NULL;
  }
  Value *v = a->pos[0];
  ts_dtype t;
  if (v->kind == V_STR && !dtype_parse(v->u.str.s, &t)) return v;
  return ev_to_dtype(ev, v, &t, call_loc(a)) ? ev_dtype(ev, t) : NULL;
}

/* ---- math and arithmetic --------------------------------------------------------------------- */
/* T.exp(x), T.pow(x, y) ...: a math intrinsic of ir.h's table (the row's arg), its operands
 * converted to one type (float for the float functions).  It checks its own arguments. */
static Value *t_math(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  const IrIntrinInfo *info = &ir_intrin_info[bi->arg];
  SrcLoc loc = call_loc(a);
  const char *fname = arena_printf(ev->a, "T.%s", info->name);
  if (a->nkw || a->npos != info->nargs) {
    ts_error(ev->c, loc, "%s() takes %d argument%s (%d given)", fname, info->nargs, info->nargs == 1 ? "" : "s",
             a->npos + a->nkw);
    return NULL;
  }
  IrExpr **args = ARENA_ARRAY(ev->a, IrExpr *, info->nargs);
  const IrExpr *like = NULL;
  for (int i = 0; i < info->nargs; i++)
    if (a->pos[i]->kind == V_EXPR) like = a->pos[i]->u.expr;
  for (int i = 0; i < info->nargs; i++) {
    args[i] = ev_to_ir(ev, a->pos[i], like, loc);
    if (!args[i]) return NULL;
  }
  ts_dtype t = args[0]->dtype;
  if ((info->flags & IRI_FLOAT) && !dtype_is_float(t)) t = TS_DTYPE_FLOAT32;
  for (int i = 0; i < info->nargs; i++) args[i] = ir_cast(ev->c, t, args[i], loc);
  if (bi->arg == IRI_ISNAN || bi->arg == IRI_ISINF || bi->arg == IRI_ISFINITE)
    return ev_expr(ev, ir_call(ev->c, (IrIntrin)bi->arg, TS_DTYPE_BOOL, args, info->nargs, loc));
  return ev_expr(ev, ir_call(ev->c, (IrIntrin)bi->arg, t, args, info->nargs, loc));
}

/* T.round(x, rounding_mode="ties-to-even"): to the nearest integer, halfway cases to even
 * (TVM's tir.round) or away from zero; integers are their own rounding. */
static Value *t_round(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  IrIntrin op = IRI_ROUND;
  if (arg[1] && arg[1]->kind != V_NONE) {
    const char *m = arg[1]->kind == V_STR ? arg[1]->u.str.s : "";
    if (!strcmp(m, "ties-away-from-zero")) op = IRI_ROUND_AWAY;
    else if (strcmp(m, "ties-to-even")) {
      ts_error(ev->c, loc, "Unsupported T.round rounding_mode %s; expected 'ties-to-even' or 'ties-away-from-zero'",
               arg[1]->kind == V_STR ? m : ev_type_name(arg[1]));
      return NULL;
    }
  }
  IrExpr *x = ev_to_ir(ev, arg[0], NULL, loc);
  if (!x) return NULL;
  if (!dtype_is_float(x->dtype)) return ev_expr(ev, x);
  return ev_expr(ev, ir_call(ev->c, op, x->dtype, &x, 1, loc));
}

/* T.max(a, b) / T.min(a, b) */
static Value *t_minmax(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  return ev_minmax(ev, (IrExprKind)bi->arg, arg[0], arg[1], call_loc(a));
}

/* T.clamp(x, lo, hi) = min(max(x, lo), hi) */
static Value *t_clamp(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  Value *v = ev_minmax(ev, IR_MAX, arg[0], arg[1], call_loc(a));
  return v ? ev_minmax(ev, IR_MIN, v, arg[2], call_loc(a)) : NULL;
}

/* T.if_then_else(cond, t, f): decided now on a Python condition, else a select evaluating
 * only the side taken; T.Select(cond, t, f) (bi->arg 1, TIR's Select): both sides. */
static Value *t_if_then_else(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  int tv = ev_truth(ev, arg[0], loc);
  if (tv == -2) return NULL;
  if (tv >= 0) return tv ? arg[1] : arg[2];
  IrExpr *c = ev_to_bool_ir(ev, ev_to_ir(ev, arg[0], NULL, loc), loc);
  return c ? ev_select(ev, bi->arg ? IR_SELECT : IR_IF_THEN_ELSE, c, arg[1], arg[2], loc) : NULL;
}

/* T.ceildiv(a, b) = (a + b - 1) // b */
static Value *t_ceildiv(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (arg[0]->kind == V_INT && arg[1]->kind == V_INT) {
    if (arg[1]->u.i == 0) {
      ts_error(ev->c, loc, "T.ceildiv: division by zero");
      return NULL;
    }
    Value *s = ev_binop(ev, AOP_ADD, arg[0], ev_int(ev, arg[1]->u.i - 1), loc);
    return s ? ev_binop(ev, AOP_FLOORDIV, s, arg[1], loc) : NULL;
  }
  /* (a + (b - 1)) // b, with b - 1 folded when b is a Python int */
  Value *bm1 = arg[1]->kind == V_INT ? ev_int(ev, arg[1]->u.i - 1) : ev_binop(ev, AOP_SUB, arg[1], ev_int(ev, 1), loc);
  Value *s = bm1 ? ev_binop(ev, AOP_ADD, arg[0], bm1, loc) : NULL;
  return s ? ev_binop(ev, AOP_FLOORDIV, s, arg[1], loc) : NULL;
}

/* T.align_up(a, b): a rounded up to a multiple of b, ceildiv(a, b) * b. */
static Value *t_align_up(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  Value *q = t_ceildiv(ev, a, arg, bi);
  return q ? ev_binop(ev, AOP_MUL, q, arg[1], call_loc(a)) : NULL;
}

/* T.index_to_coordinates(index, shape): the row-major coordinates of flat `index` in `shape`
 * (a tuple: the last dim varies fastest), with Python's // and %. */
static Value *t_index_to_coordinates(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  ValList shape = {0};
  if (!ev_iter_items(ev, arg[1], &shape, loc)) return NULL;
  if (shape.n < 1) {
    ts_error(ev->c, loc, "T.index_to_coordinates: the shape must have at least one dim");
    return NULL;
  }
  Value **out = ARENA_ARRAY(ev->a, Value *, shape.n);
  Value *rest = arg[0];
  for (int d = shape.n - 1; d >= 0; d--) {
    if (d == 0) {
      out[d] = rest;
      break;
    }
    out[d] = ev_binop(ev, AOP_MOD, rest, shape.items[d], loc);
    rest = out[d] ? ev_binop(ev, AOP_FLOORDIV, rest, shape.items[d], loc) : NULL;
    if (!rest) return NULL;
  }
  return ev_tuple(ev, out, shape.n);
}

/* T.floordiv / T.floormod (Python's // and %) and T.truncdiv / T.truncmod (C's): bi->arg is
 * the IR operator. */
static Value *t_intop(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (bi->arg == IR_FLOORDIV || bi->arg == IR_FLOORMOD) return ev_binop(ev, bi->arg == IR_FLOORDIV ? AOP_FLOORDIV : AOP_MOD, arg[0], arg[1], loc);
  const IrExpr *l0 = arg[0]->kind == V_EXPR ? arg[0]->u.expr : NULL, *l1 = arg[1]->kind == V_EXPR ? arg[1]->u.expr : NULL;
  IrExpr *x = ev_to_ir(ev, arg[0], l1, loc), *y = x ? ev_to_ir(ev, arg[1], l0 ? l0 : x, loc) : NULL;
  return y ? ev_expr(ev, ir_binary(ev->c, (IrExprKind)bi->arg, x, y, loc)) : NULL;
}

/* T.shift_left(x, n) / T.shift_right(x, n). */
static Value *t_shift(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  Value *r = ev_binop(ev, bi->arg ? AOP_RSHIFT : AOP_LSHIFT, arg[0], arg[1], call_loc(a));
  return r ? r : ev->poison;
}

/* ---- casts and extreme values ------------------------------------------------------------------ */
/* T.cast(value, dtype) / T.Cast(dtype, value) */
static Value *t_cast(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  Value *x, *dt;
  if (bi->arg) { /* T.Cast(dtype, x) */
    dt = arg[0];
    x = arg[1];
  } else {
    x = arg[0];
    dt = arg[1];
  }
  ts_dtype t;
  if (!ev_to_dtype(ev, dt, &t, call_loc(a))) return NULL;
  return ev_expr(ev, bi_to_dtype(ev, x, t, call_loc(a)));
}

/* x.astype(dtype) on an IR value */
static Value *m_astype(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  ts_dtype t;
  if (!ev_to_dtype(ev, arg[0], &t, call_loc(a))) return NULL;
  return ev_expr(ev, bi_to_dtype(ev, a->self, t, call_loc(a)));
}

static Value *t_reinterpret(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  Value *x = arg[0], *dt = arg[1];
  if (x->kind == V_DTYPE || x->kind == V_STR) { /* T.reinterpret(dtype, value) (TVM order) */
    Value *tmp = x;
    x = dt;
    dt = tmp;
  }
  /* A handle (TVM's opaque pointer) made from an integer: only T.attr's reduce_scope value,
   * which nothing reads, is written so; any other use reports this. */
  if (dt && dt->kind == V_STR && !strcmp(dt->u.str.s, "handle"))
    return ev_opaque(ev, "T.reinterpret(..., dtype=\"handle\") is only supported as the value of "
                         "T.attr(..., \"reduce_scope\", ...)");
  if (x->kind == V_BUFFER) return bi_reinterpret_tile(ev, x, dt, call_loc(a));
  ts_dtype t;
  if (!ev_to_dtype(ev, dt, &t, call_loc(a))) return NULL;
  IrExpr *e = ev_to_ir(ev, x, NULL, call_loc(a));
  if (!e) return NULL;
  if (dtype_bits(e->dtype) != dtype_bits(t)) {
    ts_error(ev->c, call_loc(a), "T.reinterpret: %s and %s have different sizes", dtype_name(e->dtype), dtype_name(t));
    return NULL;
  }
  IrExpr *r = ir_unary(ev->c, IR_REINTERPRET, e, call_loc(a));
  r->dtype = t;
  return ev_expr(ev, r);
}

/* T.infinity / T.max_value / T.min_value(dtype): bi->arg 0, 1, 2. */
static Value *t_infinity(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  ts_dtype t;
  SrcLoc loc = call_loc(a);
  if (!ev_to_dtype(ev, arg[0], &t, loc)) return NULL;
  if (bi->arg == 0) {
    if (!dtype_is_float(t)) {
      ts_error(ev->c, loc, "T.infinity: %s has no infinity", dtype_name(t));
      return NULL;
    }
    return ev_expr(ev, ir_float(ev->c, INFINITY, t, loc));
  }
  bool mx = bi->arg == 1;
  if (dtype_is_float(t)) {
    double v = t == TS_DTYPE_FLOAT16 ? 65504.0 : t == TS_DTYPE_BFLOAT16 ? 3.3895313892515355e38
               : t == TS_DTYPE_FLOAT64 ? DBL_MAX : t == TS_DTYPE_FLOAT8_E4M3 ? 448.0 : t == TS_DTYPE_FLOAT8_E5M2 ? 57344.0
               : FLT_MAX;
    return ev_expr(ev, ir_float(ev->c, mx ? v : -v, t, loc));
  }
  int bits = dtype_bits(t);
  if (t == TS_DTYPE_BOOL) return ev_expr(ev, ir_int(ev->c, mx, t, loc));
  if (!dtype_is_signed(t)) return ev_expr(ev, ir_int(ev->c, mx ? (bits == 64 ? -1 : (int64_t)((1ULL << bits) - 1)) : 0, t, loc));
  int64_t hi = bits == 64 ? INT64_MAX : (int64_t)((1ULL << (bits - 1)) - 1);
  return ev_expr(ev, ir_int(ev->c, mx ? hi : -hi - 1, t, loc));
}

/* ---- device printf, asserts and extern calls ---------------------------------------------------- */
/* T.print(buffer, msg): every element, as `msg buffer=<name> index=<i> value=<v>` (i the
 * row-major element number), printed by thread 0 of each block for shared and global memory,
 * by every thread for its own registers (T.alloc_local).  A fragment's elements live in
 * different threads: print them from a T.Parallel loop. */
static Value *print_buffer(Eval *ev, IrBuffer *b, const char *msg, SrcLoc loc) {
  TsCompiler *c = ev->c;
  if (b->scope == IR_SCOPE_FRAGMENT) {
    ts_error(c, loc, "T.print of fragment '%s': its elements live in different threads (print %s[i, ...] in a "
             "T.Parallel loop)", b->name, b->name);
    return ev->poison;
  }
  IrVar *ve = ir_var(c, "e", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *e = ir_varref(c, ve, loc), *numel = ir_i32(c, 1);
  IrExpr **idx = bi_flat_index(ev, b, e, loc);
  for (int d = b->ndim - 1; d >= 0; d--) numel = ir_binary(c, IR_MUL, numel, b->shape[d], loc);
  IrExpr *args[5] = {ir_str(c, arena_printf(ev->a, "%s%sbuffer=%s index=", msg, *msg ? " " : "", b->name), loc), e,
                     ir_str(c, "value=", loc), ir_load(c, b, idx, b->ndim, loc)};
  IrExpr **pa = ARENA_ARRAY(ev->a, IrExpr *, 4);
  memcpy(pa, args, sizeof(IrExpr *) * 4);
  IrStmt *body = ir_for(c, ve, ir_i32(c, 0), numel, IR_FOR_SERIAL,
                        ir_eval(c, ir_call(c, IRI_PRINTF, TS_DTYPE_VOID, pa, 4, loc), loc), loc);
  if (b->scope != IR_SCOPE_LOCAL) {
    IrKernel *k = &ev->kernel->u.kernel;
    IrExpr *first = NULL;
    for (int d = 0; d < 3; d++) {
      if (k->threads[d] <= 1) continue;
      IrExpr *z = ir_binary(c, IR_EQ, ir_varref(c, ir_kernel_thread_var(c, k, d, loc), loc), ir_i32(c, 0), loc);
      first = first ? ir_binary(c, IR_AND, first, z, loc) : z;
    }
    if (first) body = ir_if(c, first, body, NULL, loc);
  }
  ev_emit(ev, body);
  return ev->none;
}

/* T.print(obj, msg="", warp_group_id=0, warp_id=0): device printf of a scalar or a string, or
 * of every element of a buffer (print_buffer). */
static Value *t_print(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[1] && arg[1]->kind != V_STR) {
    ts_error(ev->c, loc, "T.print: msg must be a string, got %s", ev_type_name(arg[1]));
    return ev->poison;
  }
  bool msg_only = !arg[0] || arg[0]->kind == V_NONE; /* T.print(msg="...") */
  if (msg_only && !(arg[1] && arg[1]->u.str.n)) {
    ts_error(ev->c, loc, "T.print needs a value to print or a msg");
    return ev->poison;
  }
  if (!msg_only && arg[0]->kind == V_BUFFER && arg[0]->u.buf->scope != IR_SCOPE_VAR)
    return print_buffer(ev, arg[0]->u.buf, arg[1] ? arg[1]->u.str.s : "", loc);
  IrExpr *args[3];
  int n = 0;
  if (arg[1] && arg[1]->u.str.n) args[n++] = ir_str(ev->c, arg[1]->u.str.s, loc);
  if (msg_only) {
  } else if (arg[0]->kind == V_STR) args[n++] = ir_str(ev->c, arg[0]->u.str.s, loc);
  else if (!(args[n++] = ev_to_ir(ev, arg[0], NULL, loc))) return ev->poison;
  IrExpr **pa = ARENA_ARRAY(ev->a, IrExpr *, n);
  memcpy(pa, args, sizeof(IrExpr *) * (size_t)n);
  ev_emit(ev, ir_eval(ev->c, ir_call(ev->c, IRI_PRINTF, TS_DTYPE_VOID, pa, n, loc), loc));
  return ev->none;
}

/* T.device_assert(cond, msg=""): a runtime check in the kernel. */
static Value *t_device_assert(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int t = ev_truth(ev, arg[0], loc);
  if (t == -2) return ev->poison;
  const char *msg = arg[1] && arg[1]->kind == V_STR ? arg[1]->u.str.s : "T.device_assert failed";
  if (t == 0) {
    ts_error(ev->c, loc, "T.device_assert is always false: %s", msg);
    return ev->poison;
  }
  if (t == 1) return ev->none;
  IrStmt *s = ir_stmt(ev->c, IR_S_ASSERT, loc);
  s->u.assert_.cond = ev_to_bool_ir(ev, ev_to_ir(ev, arg[0], NULL, loc), loc);
  s->u.assert_.msg = msg;
  if (s->u.assert_.cond) ev_emit(ev, s);
  return ev->none;
}

/* T.call_extern(name, *args, dtype="void"): a call of a device function by name. */
static Value *t_call_extern(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  (void)bi;
  ts_dtype t = TS_DTYPE_VOID;
  Value *name = arg[0];
  /* TVM order: (dtype, name, ...), the dtype maybe a name ("handle": a call for its effect) */
  bool tvm_order = a->npos >= 2 && a->pos[1]->kind == V_STR && arg[0] == a->pos[0] &&
                   (name->kind == V_DTYPE || (name->kind == V_STR && (!strcmp(name->u.str.s, "handle") ||
                                                                       dtype_parse(name->u.str.s, &t))));
  if (tvm_order) {
    t = name->kind == V_DTYPE ? name->u.dtype : TS_DTYPE_VOID;
    if (name->kind == V_STR && strcmp(name->u.str.s, "handle")) (void)dtype_parse(name->u.str.s, &t);
    name = a->pos[1];
  }
  if (name->kind != V_STR) {
    ts_error(ev->c, loc, "T.call_extern: the function name must be a string, got %s", ev_type_name(name));
    return ev->poison;
  }
  if (arg[1] && arg[1]->kind != V_NONE && !ev_to_dtype(ev, arg[1], &t, loc)) return ev->poison;
  int first = name == arg[0] ? 1 : 2;
  int n = a->npos - first + 1;
  IrExpr **args = ARENA_ARRAY(ev->a, IrExpr *, n);
  args[0] = ir_str(ev->c, name->u.str.s, loc);
  for (int i = first; i < a->npos; i++) {
    Value *v = a->pos[i];
    args[i - first + 1] = v->kind == V_STR ? ir_str(ev->c, v->u.str.s, loc) : ev_to_ir(ev, v, NULL, loc);
    if (!args[i - first + 1]) return ev->poison;
  }
  IrExpr *call = ir_call(ev->c, IRI_CALL_EXTERN, t, args, n, loc);
  return ev_expr(ev, call);
}

/* T.import_source(source): device code (functions for T.call_extern) the generated CUDA
 * includes verbatim, once per distinct text; None imports nothing (TileLang's
 * `pragma_import_c` block attribute). */
static Value *t_import_source(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  if (!arg[0] || arg[0]->kind == V_NONE) return ev->none;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[0]->kind != V_STR) {
    ts_error(ev->c, call_loc(a), "T.import_source: the source must be a string, got %s", ev_type_name(arg[0]));
    return ev->poison;
  }
  IrFunc *f = ev->func;
  for (int i = 0; i < f->nimports; i++)
    if (!strcmp(f->imports[i], arg[0]->u.str.s)) return ev->none;
  const char **imports = ARENA_ARRAY(ev->a, const char *, f->nimports + 1);
  for (int i = 0; i < f->nimports; i++) imports[i] = f->imports[i];
  imports[f->nimports] = arg[0]->u.str.s;
  f->imports = imports;
  f->nimports++;
  return ev->none;
}

/* T.access_ptr(buffer, access_mask="rw", offset=0, extent=None): the address of the buffer's
 * element `offset` (row-major, in elements), for T.call_extern.  The access mask and extent
 * only describe the access to TVM's analyses; the pointer is the same.  TileLang's newer form
 * T.access_ptr(buf[i, j], "w", extent) starts at an element: its third argument is then the
 * extent, and the pointer is &buf[i, j]. */
static Value *t_access_ptr(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[1] && (arg[1]->kind != V_STR || strspn(arg[1]->u.str.s, "rw") != strlen(arg[1]->u.str.s))) {
    ts_error(ev->c, loc, "T.access_ptr: the access mask must be \"r\", \"w\" or \"rw\"");
    return ev->poison;
  }
  if (arg[0]->kind == V_EXPR && arg[0]->u.expr->kind == IR_LOAD && arg[0]->u.expr->lanes == 1) {
    if (a->npos < 3 && arg[2]) {
      ts_error(ev->c, loc, "T.access_ptr: offset= with an element base (buf[i, j]) is not supported; index the element");
      return ev->poison;
    }
    IrExpr *load = arg[0]->u.expr;
    return ev_expr(ev, ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &load, 1, loc));
  }
  if (arg[0]->kind != V_BUFFER) {
    ts_error(ev->c, loc, "T.access_ptr: expected a buffer or a buffer element, got %s", ev_type_name(arg[0]));
    return ev->poison;
  }
  IrBuffer *b = arg[0]->u.buf;
  IrExpr *off = arg[2] ? ev_to_ir(ev, arg[2], NULL, loc) : ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
  if (!off) return ev->poison;
  int64_t o;
  bool zero = ir_is_const_int(off, &o) && o == 0;
  if (b->strides && !zero) {
    ts_error(ev->c, loc, "T.access_ptr: an offset into a strided buffer is not supported yet");
    return ev->poison;
  }
  /* the flat offset as an index of each dimension: innermost first */
  int nd = b->ndim ? b->ndim : 1;
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, nd);
  for (int d = nd - 1; d >= 0; d--) {
    if (zero || d == 0) {
      idx[d] = zero ? ir_int(ev->c, 0, TS_DTYPE_INT32, loc) : off;
      continue;
    }
    idx[d] = ir_binary(ev->c, IR_FLOORMOD, off, b->shape[d], loc);
    off = ir_binary(ev->c, IR_FLOORDIV, off, b->shape[d], loc);
  }
  IrExpr *load = ir_load(ev->c, b, idx, b->ndim, loc);
  return ev_expr(ev, ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &load, 1, loc));
}

/* The element a T.access_ptr / T.address_of pointer operand points at, in `scope` memory
 * (shared when want_shared, else global); NULL after a diagnostic naming `role`. */
static IrExpr *cp_async_operand(Eval *ev, Value *v, bool want_shared, const char *role, SrcLoc loc) {
  IrExpr *e = v->kind == V_EXPR ? v->u.expr : NULL;
  IrExpr *ld = e && e->kind == IR_CALL && e->u.call.op == IRI_ADDRESS_OF && e->u.call.nargs == 1 ? e->u.call.args[0] : NULL;
  if (!ld || ld->kind != IR_LOAD) {
    ts_error(ev->c, loc, "T.ptx_cp_async: %s must be T.access_ptr(buf[...], ...) or T.address_of(buf[...]), got %s", role,
             ev_type_name(v));
    return NULL;
  }
  IrScope sc = ld->u.load.buf->scope;
  bool shared = sc == IR_SCOPE_SHARED || sc == IR_SCOPE_SHARED_DYN;
  if (want_shared ? !shared : sc != IR_SCOPE_GLOBAL) {
    ts_error(ev->c, loc, "T.ptx_cp_async: %s must point into %s memory, '%s' is %s", role,
             want_shared ? "shared" : "global", ld->u.load.buf->name, ir_scope_names[sc]);
    return NULL;
  }
  return e;
}

/* T.ptx_cp_async(dst, src, num_elems, predicate=None): one cp.async of num_elems elements
 * (4, 8 or 16 bytes: the sizes the instruction moves) from global to shared memory, issued by
 * every thread that runs it; with a predicate, a false one zero-fills the destination.  The
 * copy lands asynchronously: the kernel orders it itself, with T.cp_async_barrier_noinc and an
 * mbarrier wait (thread_sync places no barrier for it), or with T.ptx_commit_group and
 * T.ptx_wait_group (thread_sync places the barrier after the wait). */
static Value *t_ptx_cp_async(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *dst = cp_async_operand(ev, arg[0], true, "dst", loc), *src = dst ? cp_async_operand(ev, arg[1], false, "src", loc) : NULL;
  int64_t n;
  if (!src || !ev_to_int(ev, arg[2], &n, loc)) return ev->poison;
  ts_dtype dt = dst->u.call.args[0]->u.load.buf->dtype, st = src->u.call.args[0]->u.load.buf->dtype;
  if (dtype_bytes(dt) != dtype_bytes(st)) {
    ts_error(ev->c, loc, "T.ptx_cp_async: dst (%s) and src (%s) elements differ in size", dtype_name(dt), dtype_name(st));
    return ev->poison;
  }
  int64_t bytes = n * dtype_bytes(dt);
  if (n <= 0 || (bytes != 4 && bytes != 8 && bytes != 16)) {
    ts_error(ev->c, loc, "T.ptx_cp_async: %lld %s elements are %lld bytes; cp.async moves 4, 8 or 16", (long long)n,
             dtype_name(dt), (long long)bytes);
    return ev->poison;
  }
  if (arg[3] && arg[3]->kind != V_NONE) {
    IrExpr *p = ev_to_ir(ev, arg[3], NULL, loc);
    if (!p || !(p = ev_to_bool_ir(ev, p, loc))) return ev->poison;
    ev_emit(ev, ir_device_stmt(ev->c, IRD_CP_ASYNC_ZFILL, &bytes, 1, (IrExpr *[]){dst, src, p}, 3, loc));
  } else {
    ev_emit(ev, ir_device_stmt(ev->c, IRD_CP_ASYNC, &bytes, 1, (IrExpr *[]){dst, src}, 2, loc));
  }
  return ev->none;
}

/* T.ptx_commit_group(): closes the cp.async group of the copies this thread issued since the
 * last commit (an empty group when none).  T.ptx_wait_group(n): waits until at most n of this
 * thread's groups are pending.  The wait orders only the thread's own copies: thread_sync
 * treats it as the point where every T.ptx_cp_async copy of the kernel lands and places the
 * barrier (block or named) that other threads' reads of that data need after it, unless one
 * already follows.  A T.Pipelined loop whose body commits groups stays serial
 * (inject_pipeline): its own group counting would no longer name its stages. */
static Value *t_ptx_commit_group(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  ev_emit(ev, ir_device_stmt(ev->c, IRD_CP_ASYNC_COMMIT, NULL, 0, NULL, 0, call_loc(a)));
  return ev->none;
}

static Value *t_ptx_wait_group(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  Value *v = arg[0];
  int64_t n;
  bool known = v && (v->kind == V_INT || v->kind == V_BOOL || (v->kind == V_EXPR && ir_is_const_int(v->u.expr, &n)));
  if (!known) {
    if (v && v->kind != V_POISON)
      ts_error(ev->c, loc, "T.ptx_wait_group: the count must be a compile-time integer (cp.async.wait_group takes an "
                           "immediate), got %s", ev_type_name(v));
    return ev->poison;
  }
  if (!ev_to_int(ev, v, &n, loc)) return ev->poison;
  if (n < 0) {
    ts_error(ev->c, loc, "T.ptx_wait_group(%lld): the count of pending groups cannot be negative", (long long)n);
    return ev->poison;
  }
  ev_emit(ev, ir_device_stmt(ev->c, IRD_CP_ASYNC_WAIT_GROUP, &n, 1, NULL, 0, loc));
  return ev->none;
}

/* ---- random numbers and dp4a ------------------------------------------------------------------- */
/* &state[0] of the kernel's RNG state. */
static IrExpr *rng_state_addr(Eval *ev, SrcLoc loc) {
  IrExpr *zero = ir_i32(ev->c, 0);
  IrExpr *ld = ir_load(ev->c, ev->rng_state, &zero, 1, loc);
  return ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc);
}

/* The generators T.rng_init takes (index: Eval.rng_generator; 0 is our own Philox). */
static const char *const rng_generators[] = {"curandStatePhilox4_32_10_t", "curandStateXORWOW_t",
                                             "curandStateMRG32k3a_t"};

/* T.rng_init(seed, seq=None, off=0, generator="curandStatePhilox4_32_10_t"): each thread
 * that runs it starts a stream at output `off` of subsequence `seq` for `seed`: Philox-4x32-10
 * (device/tilescale/rng.cuh: cuRAND's and Triton's generator, our own code), or cuRAND's
 * XORWOW or MRG32k3a (rng_curand.cuh over curand_kernel.h).  The state is a uint32[16] local
 * per thread, declared at the kernel's start; one generator per kernel. */
static Value *t_rng_init(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int gen = arg[3] ? -1 : 0;
  for (int g = 0; arg[3] && arg[3]->kind == V_STR && g < TS_ARRAY_LEN(rng_generators); g++)
    if (!strcmp(arg[3]->u.str.s, rng_generators[g])) gen = g;
  if (gen < 0) {
    ts_error(ev->c, loc,
             "T.rng_init: generator must be \"curandStatePhilox4_32_10_t\", \"curandStateXORWOW_t\" or "
             "\"curandStateMRG32k3a_t\", got %s",
             arg[3]->kind == V_STR ? arg[3]->u.str.s : ev_type_name(arg[3]));
    return ev->poison;
  }
  if (ev->rng_state && ev->rng_generator != gen) {
    ts_error(ev->c, loc, "T.rng_init: generator %s, but this kernel started %s earlier: one generator per kernel",
             rng_generators[gen], rng_generators[ev->rng_generator]);
    return ev->poison;
  }
  IrExpr *ops[3];
  Value *vals[3] = {arg[0], arg[1] && arg[1]->kind != V_NONE ? arg[1] : ev_int(ev, 0), arg[2] ? arg[2] : ev_int(ev, 0)};
  static const char *const what[] = {"seed", "seq", "off"};
  for (int i = 0; i < 3; i++) {
    IrExpr *v = ev_to_ir(ev, vals[i], NULL, loc);
    if (!v) return ev->poison;
    if (!dtype_is_int(v->dtype)) {
      ts_error(ev->c, loc, "T.rng_init: %s must be an integer, got %s", what[i], dtype_name(v->dtype));
      return ev->poison;
    }
    ops[i] = ir_cast(ev->c, TS_DTYPE_UINT64, v, loc);
  }
  if (!ev->rng_state) {
    IrExpr *n = ir_i32(ev->c, 16); /* ts::RNG_WORDS */
    ev->rng_state = ir_buffer(ev->c, "rng_state", TS_DTYPE_UINT32, IR_SCOPE_LOCAL, 1, &n, loc);
    ev->rng_generator = gen;
  }
  IrExpr *args[4] = {rng_state_addr(ev, loc), ops[0], ops[1], ops[2]};
  int64_t g = gen;
  if (gen) ev_emit(ev, ir_device_stmt(ev->c, IRD_RNG_CURAND_INIT, &g, 1, args, 4, loc));
  else ev_emit(ev, ir_device_stmt(ev->c, IRD_RNG_INIT, NULL, 0, args, 4, loc));
  return ev->none;
}

/* T.rng_rand() -> uint32 / T.rng_rand_float(bit=32, dist="uniform") -> float32 in (0, 1]
 * (bit=64: float64; dist="normal": N(0, 1), rng.cuh): the thread's next output, bound to a LET
 * where it is written so that the state advances once per call. */
static Value *t_rng_rand(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  const char *fname = bi->arg ? "T.rng_rand_float" : "T.rng_rand";
  if (!ev->rng_state) {
    ts_error(ev->c, loc, "%s needs T.rng_init earlier in this kernel (each thread's stream starts there)", fname);
    return ev->poison;
  }
  /* the draw: 0 uint32, 1 float, 2 double, 3 normal float, 4 normal double (the index of
   * Philox's device operation here, and rng_curand.cuh's draw for a cuRAND generator) */
  static const IrDeviceOp ops[5] = {IRD_RNG_RAND, IRD_RNG_RAND_FLOAT, IRD_RNG_RAND_DOUBLE, IRD_RNG_NORMAL,
                                    IRD_RNG_NORMAL_DOUBLE};
  static const ts_dtype types[5] = {TS_DTYPE_UINT32, TS_DTYPE_FLOAT32, TS_DTYPE_FLOAT64, TS_DTYPE_FLOAT32,
                                    TS_DTYPE_FLOAT64};
  int64_t draw[2] = {ev->rng_generator, 0};
  if (bi->arg) {
    int64_t bits = 32;
    if (!bi_opt_int(ev, arg[0], 32, &bits, loc)) return ev->poison;
    bool normal = arg[1] && arg[1]->kind == V_STR && !strcmp(arg[1]->u.str.s, "normal");
    if ((bits != 32 && bits != 64) || (arg[1] && !normal && (arg[1]->kind != V_STR || strcmp(arg[1]->u.str.s, "uniform")))) {
      ts_error(ev->c, loc, "T.rng_rand_float: bit is 32 or 64 and dist \"uniform\" or \"normal\"");
      return ev->poison;
    }
    draw[1] = (bits == 64 ? 2 : 1) + (normal ? 2 : 0);
  }
  ts_dtype t = types[draw[1]];
  IrExpr *st = rng_state_addr(ev, loc);
  IrExpr *call = ev->rng_generator ? ir_device(ev->c, IRD_RNG_CURAND_DRAW, t, draw, 2, &st, 1, loc)
                                   : ir_device(ev->c, ops[draw[1]], t, NULL, 0, &st, 1, loc);
  IrVar *r = ir_var(ev->c, "rand", t, IR_VAR_LET, loc);
  ev_define_var(ev, r);
  ev_emit(ev, ir_let(ev->c, r, call, loc));
  return ev_expr(ev, ir_varref(ev->c, r, loc));
}

/* T.dp4a(a[i], b[i], c[j]): c[j] += the dot product of a[i:i+4] and b[i:i+4], 8-bit integers
 * (both int8 or both uint8) into int32, with one __dp4a.  A whole buffer stands for its first
 * element (TileLang passes its data pointer: T.dp4a(A, B, C)). */
static Value *t_dp4a(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *ops[3];
  static const char *const what[] = {"A", "B", "C"};
  for (int i = 0; i < 3; i++) {
    if (arg[i]->kind == V_BUFFER) {
      IrBuffer *b = arg[i]->u.buf;
      IrExpr **zero = ARENA_ARRAY(ev->a, IrExpr *, b->ndim ? b->ndim : 1);
      for (int d = 0; d < b->ndim; d++) zero[d] = ir_i32(ev->c, 0);
      arg[i] = ev_expr(ev, ir_load(ev->c, b, zero, b->ndim, loc));
    }
    IrExpr *e = arg[i]->kind == V_EXPR ? arg[i]->u.expr : NULL;
    if (!e || e->kind != IR_LOAD || e->lanes != 1) {
      ts_error(ev->c, loc, "T.dp4a: %s must be a buffer element such as buf[i] (or a buffer: its first), got %s", what[i], ev_type_name(arg[i]));
      return ev->poison;
    }
    ops[i] = ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &e, 1, loc);
  }
  ts_dtype ta = arg[0]->u.expr->dtype, tb = arg[1]->u.expr->dtype, tc = arg[2]->u.expr->dtype;
  bool ok8 = ta == tb && (ta == TS_DTYPE_INT8 || ta == TS_DTYPE_UINT8);
  if (!ok8 || tc != TS_DTYPE_INT32) {
    ts_error(ev->c, loc, "T.dp4a: A and B must both be int8 or both uint8 and C int32 (got %s, %s, %s)",
             dtype_name(ta), dtype_name(tb), dtype_name(tc));
    return ev->poison;
  }
  ev_emit(ev, ir_device_stmt(ev->c, IRD_DP4A, NULL, 0, ops, 3, loc));
  return ev->none;
}

/* ---- rows -------------------------------------------------------------------------------------- */
static const Builtin scalar_rows[] = {
    /* dtypes */
    {"float16", NULL, t_dtype_value, TS_DTYPE_FLOAT16, BI_VALUE},
    {"half", NULL, t_dtype_value, TS_DTYPE_FLOAT16, BI_VALUE},
    {"bfloat16", NULL, t_dtype_value, TS_DTYPE_BFLOAT16, BI_VALUE},
    {"float32", NULL, t_dtype_value, TS_DTYPE_FLOAT32, BI_VALUE},
    {"float", NULL, t_dtype_value, TS_DTYPE_FLOAT32, BI_VALUE},
    {"float64", NULL, t_dtype_value, TS_DTYPE_FLOAT64, BI_VALUE},
    {"double", NULL, t_dtype_value, TS_DTYPE_FLOAT64, BI_VALUE},
    {"int8", NULL, t_dtype_value, TS_DTYPE_INT8, BI_VALUE},
    {"int16", NULL, t_dtype_value, TS_DTYPE_INT16, BI_VALUE},
    {"int32", NULL, t_dtype_value, TS_DTYPE_INT32, BI_VALUE},
    {"int", NULL, t_dtype_value, TS_DTYPE_INT32, BI_VALUE},
    {"int64", NULL, t_dtype_value, TS_DTYPE_INT64, BI_VALUE},
    {"uint8", NULL, t_dtype_value, TS_DTYPE_UINT8, BI_VALUE},
    {"uint16", NULL, t_dtype_value, TS_DTYPE_UINT16, BI_VALUE},
    {"uint32", NULL, t_dtype_value, TS_DTYPE_UINT32, BI_VALUE},
    {"uint", NULL, t_dtype_value, TS_DTYPE_UINT32, BI_VALUE},
    {"uint64", NULL, t_dtype_value, TS_DTYPE_UINT64, BI_VALUE},
    {"bool", NULL, t_dtype_value, TS_DTYPE_BOOL, BI_VALUE},
    {"float8_e4m3", NULL, t_dtype_value, TS_DTYPE_FLOAT8_E4M3, BI_VALUE},
    {"float8_e4m3fn", NULL, t_dtype_value, TS_DTYPE_FLOAT8_E4M3, BI_VALUE},
    {"float8_e5m2", NULL, t_dtype_value, TS_DTYPE_FLOAT8_E5M2, BI_VALUE},
    /* 4-bit types, two a byte in memory (torch passes int8 / uint8 tensors of half the last dim) */
    {"float4_e2m1fn", NULL, t_dtype_value, TS_DTYPE_FLOAT4_E2M1, BI_VALUE},
    {"int4", NULL, t_dtype_value, TS_DTYPE_INT4, BI_VALUE},
    {"uint4", NULL, t_dtype_value, TS_DTYPE_UINT4, BI_VALUE},
    /* tf32 is float32 storage that the tensor cores read with a 10-bit mantissa: TileLang
     * passes float32 tensors for it and its GEMMs take float32 operands as tf32 as ours do. */
    {"tfloat32", NULL, t_dtype_value, TS_DTYPE_FLOAT32, BI_VALUE},
    {"float8_e8m0fnu", NULL, t_dtype_unsupported, 0, BI_VALUE},
    {"dtype", "*args, **kwargs", t_dtype_of, 0, BI_TERSE},
    /* arithmetic, selects and casts */
    {"max", "a, b", t_minmax, IR_MAX, BI_TERSE},
    {"min", "a, b", t_minmax, IR_MIN, BI_TERSE},
    {"clamp", "dst, min_val, max_val", t_clamp, 0, BI_TERSE},
    {"round", "x, rounding_mode=\"ties-to-even\"", t_round, 0, BI_TERSE},
    {"if_then_else", "cond, t, f", t_if_then_else, 0, BI_TERSE},
    {"Select", "condition, true_value, false_value", t_if_then_else, 1, BI_TERSE},
    {"cast", "value, dtype", t_cast, 0, BI_TERSE},
    {"Cast", "dtype, value", t_cast, 1, BI_TERSE},
    {"reinterpret", "value, dtype", t_reinterpret, 0, BI_TERSE},
    {"infinity", "dtype", t_infinity, 0, BI_TERSE},
    {"max_value", "dtype", t_infinity, 1, BI_TERSE},
    {"min_value", "dtype", t_infinity, 2, BI_TERSE},
    {"ceildiv", "a, b", t_ceildiv, 0, BI_TERSE},
    {"align_up", "a, b", t_align_up, 0, BI_TERSE},
    /* T.assume(cond): a fact the author states for the optimiser; nothing relies on it here */
    {"assume", "cond", bi_hint, 0, 0},
    {"floordiv", "a, b", t_intop, IR_FLOORDIV, BI_TERSE},
    {"index_to_coordinates", "index, shape", t_index_to_coordinates, 0, BI_TERSE},
    {"floormod", "a, b", t_intop, IR_FLOORMOD, BI_TERSE},
    {"truncdiv", "a, b", t_intop, IR_TRUNCDIV, BI_TERSE},
    {"truncmod", "a, b", t_intop, IR_TRUNCMOD, BI_TERSE},
    {"shift_left", "x, y", t_shift, 0, 0},
    {"shift_right", "x, y", t_shift, 1, 0},
    /* debugging and escapes */
    {"print", "obj=None, msg=\"\", warp_group_id=0, warp_id=0", t_print, 0, 0},
    {"device_assert", "cond, msg=\"\"", t_device_assert, 0, 0},
    {"call_extern", "name, *args, dtype=None", t_call_extern, 0, 0},
    {"import_source", "source=None", t_import_source, 0, 0},
    {"call_intrin", "dtype, op, *args", bi_kernel_unsupported, 0, 0},
    {"access_ptr", "buffer, access_mask=\"rw\", offset=0, extent=None", t_access_ptr, 0, 0},
    {"ptx_cp_async", "dst, src, num_elems, predicate=None", t_ptx_cp_async, 0, 0},
    {"ptx_commit_group", "", t_ptx_commit_group, 0, 0},
    {"ptx_wait_group", "n", t_ptx_wait_group, 0, 0},
    {"rng_init", "seed, seq=None, off=0, generator=\"curandStatePhilox4_32_10_t\"", t_rng_init, 0, 0},
    {"rng_rand", "", t_rng_rand, 0, 0},
    {"rng_rand_float", "bit=32, dist=\"uniform\"", t_rng_rand, 1, 0},
    {"dp4a", "A, B, C", t_dp4a, 0, 0},
    /* raw TIR escapes */
    {"block", "name=\"\"", bi_kernel_unsupported, 0, 0},
    {"Ref", "*args", bi_unsupported, 0, 0},
};

/* The math intrinsics: the rows of ir.h's intrinsic table before the thread-level ones
 * (T.shfl_xor and the other warp operations are builtins_warp.c's). */
#define INTRINSIC_ROW(n, s, f, k, fl) {s, "*args, **kwargs", t_math, IRI_##n, BI_TERSE},
static const Builtin intrinsic_rows[] = {IR_INTRINSICS(INTRINSIC_ROW)};
#undef INTRINSIC_ROW

static const Builtin expr_methods[] = {
    {"astype", "dtype", m_astype, 0, BI_TERSE},
};

const BuiltinTable builtins_scalar[] = {
    {MOD_T, scalar_rows, TS_ARRAY_LEN(scalar_rows), NULL},
    {MOD_T, intrinsic_rows, IRI_SHFL_XOR, NULL},
    {MOD_EXPR, expr_methods, TS_ARRAY_LEN(expr_methods), NULL},
    BUILTIN_TABLE_END,
};
