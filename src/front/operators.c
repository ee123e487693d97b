/* operators.c — Python's binary and unary operators over the interpreter's values, and the
 * two ways a value becomes a choice or a difference in IR: selects and linear differences.
 *
 *   eval_expr.c (a + b, -x, x if c else y), builtin handlers  ->  here  ->  IR constructors
 *
 * On two Python values an operator folds now, with Python's semantics (floor division and
 * modulo, unbounded-looking ints that report overflow instead of wrapping); with an IR
 * operand it builds IR, with `//` and `%` as floordiv / floormod and `/` refused between
 * integers (DESIGN.md §4). */
#include <math.h>
#include <string.h>

#include "value.h"

/* ---- linear difference (slice extents) ------------------------------------------------ */
/* `bx*64:(bx+1)*64` must give the constant extent 64 even if the simplifier does not
 * distribute; a tiny linear form over opaque atoms settles the common cases. */
typedef struct LinForm {
  const IrExpr *atom[16];
  int64_t coef[16];
  int n;
  int64_t k;
  bool ok;
  int lets;   /* let-bound names expanded so far (H1 - H0 where H1 = H0 + 64: both are names) */
} LinForm;

static int64_t lin_mul(LinForm *l, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) l->ok = false;
  return r;
}

/* Adds scale * e to the form, splitting sums, differences, negations and constant products;
 * anything else (or a let-bound name's value) is an atom. */
static void lin_add(LinForm *l, const IrExpr *e, int64_t scale) {
  int64_t cv;
  if (!l->ok) return;
  if (ir_is_const_int(e, &cv)) {
    if (__builtin_add_overflow(l->k, lin_mul(l, scale, cv), &l->k)) l->ok = false;
    return;
  }
  switch (e->kind) {
  case IR_ADD: lin_add(l, e->u.ops[0], scale); lin_add(l, e->u.ops[1], scale); return;
  case IR_SUB: lin_add(l, e->u.ops[0], scale); lin_add(l, e->u.ops[1], lin_mul(l, scale, -1)); return;
  case IR_NEG: lin_add(l, e->u.ops[0], lin_mul(l, scale, -1)); return;
  case IR_MUL:
    if (ir_is_const_int(e->u.ops[0], &cv)) { lin_add(l, e->u.ops[1], lin_mul(l, scale, cv)); return; }
    if (ir_is_const_int(e->u.ops[1], &cv)) { lin_add(l, e->u.ops[0], lin_mul(l, scale, cv)); return; }
    break;
  case IR_VAR:
    if (e->u.var->kind == IR_VAR_LET && e->u.var->let_value && e->u.var->let_value->dtype == e->dtype &&
        l->lets++ < 64) {
      lin_add(l, e->u.var->let_value, scale);
      return;
    }
    break;
  default: break;
  }
  for (int i = 0; i < l->n; i++)
    if (ir_expr_equal(l->atom[i], e)) {
      if (__builtin_add_overflow(l->coef[i], scale, &l->coef[i])) l->ok = false;
      return;
    }
  if (l->n == TS_ARRAY_LEN(l->atom)) {
    l->ok = false;
    return;
  }
  l->atom[l->n] = e;
  l->coef[l->n++] = scale;
}

/* hi - lo as a constant when the linear forms cancel, else simplified IR. */
IrExpr *ev_linear_diff(Eval *ev, IrExpr *hi, IrExpr *lo, SrcLoc loc) {
  LinForm l = {.ok = true};
  lin_add(&l, hi, 1);
  lin_add(&l, lo, -1);
  bool constant = l.ok;
  for (int i = 0; constant && i < l.n; i++) constant = l.coef[i] == 0;
  if (constant) return ir_int(ev->c, l.k, hi->dtype == TS_DTYPE_INT64 ? TS_DTYPE_INT64 : TS_DTYPE_INT32, loc);
  return ir_simplify(ev->c, ir_binary(ev->c, IR_SUB, hi, lo, loc));
}

/* An arithmetic operator on two Python numbers (a float makes it float arithmetic). */
static Value *py_arith(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc) {
  bool isf = l->kind == V_FLOAT || r->kind == V_FLOAT;
  if (isf) {
    double a = ev_num_f(l), b = ev_num_f(r);
    switch (op) {
    case AOP_ADD: return ev_float(ev, a + b);
    case AOP_SUB: return ev_float(ev, a - b);
    case AOP_MUL: return ev_float(ev, a * b);
    case AOP_DIV:
      if (b == 0) break;
      return ev_float(ev, a / b);
    case AOP_FLOORDIV:
      if (b == 0) break;
      return ev_float(ev, floor(a / b));
    case AOP_MOD:
      if (b == 0) break;
      return ev_float(ev, a - floor(a / b) * b);
    case AOP_POW: return ev_float(ev, pow(a, b));
    default:
      ts_error(ev->c, loc, "unsupported operand types for %s: '%s' and '%s'", ast_op_names[op], ev_type_name(l),
               ev_type_name(r));
      return NULL;
    }
    ts_error(ev->c, loc, "division by zero");
    return NULL;
  }
  int64_t a = ev_num_i(l), b = ev_num_i(r), res;
  switch (op) {
  /* Python ints are unbounded; ours are int64 and overflow is reported, never wrapped. */
  case AOP_ADD:
    if (__builtin_add_overflow(a, b, &res)) goto overflow;
    return ev_int(ev, res);
  case AOP_SUB:
    if (__builtin_sub_overflow(a, b, &res)) goto overflow;
    return ev_int(ev, res);
  case AOP_MUL:
    if (__builtin_mul_overflow(a, b, &res)) goto overflow;
    return ev_int(ev, res);
  case AOP_DIV:
    if (b == 0) break;
    return ev_float(ev, (double)a / (double)b);
  case AOP_FLOORDIV: {
    if (b == 0) break;
    if (b == -1 && a == INT64_MIN) goto overflow;
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return ev_int(ev, q);
  }
  case AOP_MOD: {
    if (b == 0) break;
    if (b == -1) return ev_int(ev, 0);
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return ev_int(ev, m);
  }
  case AOP_POW:
    if (b < 0) return ev_float(ev, pow((double)a, (double)b));
    /* By squaring: O(log b) steps, exact sign for negative bases. */
    res = 1;
    for (int64_t base = a, e = b; e > 0; e >>= 1) {
      if ((e & 1) && __builtin_mul_overflow(res, base, &res)) goto overflow;
      if (e > 1 && __builtin_mul_overflow(base, base, &base)) goto overflow;
    }
    return ev_int(ev, res);
  /* Python shifts: a negative count is an error, bits shifted out of 64 are an overflow
   * (1 << 200 used to wrap to 256), a right shift past the width leaves the sign. */
  case AOP_LSHIFT:
  case AOP_RSHIFT:
    if (b < 0) {
      ts_error(ev->c, loc, "negative shift count");
      return NULL;
    }
    if (op == AOP_RSHIFT) return ev_int(ev, b >= 63 ? (a < 0 ? -1 : 0) : a >> b);
    if (a == 0) return ev_int(ev, 0);
    if (b > 63 || (a > 0 ? a > (INT64_MAX >> b) : a < (INT64_MIN >> b))) goto overflow;
    return ev_int(ev, (int64_t)((uint64_t)a << b));
  case AOP_BITOR: return ev_int(ev, a | b);
  case AOP_BITXOR: return ev_int(ev, a ^ b);
  case AOP_BITAND:
    if (l->kind == V_BOOL && r->kind == V_BOOL) return ev_bool(ev, a & b);
    return ev_int(ev, a & b);
  default:
    ts_error(ev->c, loc, "unsupported operand types for %s: '%s' and '%s'", ast_op_names[op], ev_type_name(l),
             ev_type_name(r));
    return NULL;
  }
  ts_error(ev->c, loc, "integer division or modulo by zero");
  return NULL;
overflow:
  ts_error(ev->c, loc, "integer overflow in '%s' (values are limited to 64 bits)", ast_op_names[op]);
  return NULL;
}

static Value *seq_concat(Eval *ev, Value *l, Value *r) {
  Value *v = ev_new(ev, l->kind);
  for (int i = 0; i < l->u.seq.n; i++) vl_push(ev, &v->u.seq, l->u.seq.items[i]);
  for (int i = 0; i < r->u.seq.n; i++) vl_push(ev, &v->u.seq, r->u.seq.items[i]);
  return v;
}

/* TVM's arithmetic (TileLang's): a Python float is float32, and a narrower float operand is
 * promoted to it (`h + 1.0` on a float16 h computes in float32; a Python int takes h's type);
 * comparisons keep the IR side's type (TileLang's _auto_broadcast). */
static bool promote_float_literal(const Value *l, const Value *r, const IrExpr *a, const IrExpr *b, IrExprKind k) {
  if ((l->kind == V_FLOAT) == (r->kind == V_FLOAT) || (ir_expr_flags[k] & IRF_CMP)) return false;
  const IrExpr *ir = l->kind == V_FLOAT ? b : a;
  return dtype_is_float(ir->dtype) && dtype_bits(ir->dtype) < 32;
}

/* An operator with an IR operand: the Python side takes the IR side's dtype (but see
 * promote_float_literal). */
static Value *ir_arith(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc) {
  const IrExpr *le = l->kind == V_EXPR ? l->u.expr : NULL, *re = r->kind == V_EXPR ? r->u.expr : NULL;
  IrExpr *a = ev_to_ir(ev, l, re, loc);
  if (!a) return NULL;
  IrExpr *b = ev_to_ir(ev, r, le ? le : a, loc);
  if (!b) return NULL;
  IrExprKind k;
  switch (op) {
  case AOP_ADD: k = IR_ADD; break;
  case AOP_SUB: k = IR_SUB; break;
  case AOP_MUL: k = IR_MUL; break;
  case AOP_DIV:
    if (!dtype_is_float(a->dtype) && !dtype_is_float(b->dtype)) {
      ts_error(ev->c, loc, "'/' between integer values is ambiguous: use // for integer division");
      return NULL;
    }
    k = IR_DIV;
    break;
  case AOP_FLOORDIV: k = IR_FLOORDIV; break;
  case AOP_MOD: k = IR_FLOORMOD; break;
  case AOP_LSHIFT: k = IR_SHL; break;
  case AOP_RSHIFT: k = IR_SHR; break;
  case AOP_BITOR: k = IR_BITOR; break;
  case AOP_BITXOR: k = IR_BITXOR; break;
  case AOP_BITAND: k = IR_BITAND; break;
  case AOP_EQ: k = IR_EQ; break;
  case AOP_NOTEQ: k = IR_NE; break;
  case AOP_LT: k = IR_LT; break;
  case AOP_LTE: k = IR_LE; break;
  case AOP_GT: k = IR_GT; break;
  case AOP_GTE: k = IR_GE; break;
  case AOP_POW: {
    ts_dtype t = dtype_is_float(a->dtype) ? a->dtype : dtype_is_float(b->dtype) ? b->dtype : TS_DTYPE_FLOAT32;
    IrExpr **args = ARENA_ARRAY(ev->a, IrExpr *, 2);
    args[0] = ir_cast(ev->c, t, a, loc);
    args[1] = ir_cast(ev->c, t, b, loc);
    return ev_expr(ev, ir_call(ev->c, IRI_POW, t, args, 2, loc));
  }
  default:
    ts_error(ev->c, loc, "operator '%s' is not supported on IR values", ast_op_names[op]);
    return NULL;
  }
  if (promote_float_literal(l, r, a, b, k)) { /* the literal as float32, the other side cast up */
    a = l->kind == V_FLOAT ? ir_float(ev->c, l->u.f, TS_DTYPE_FLOAT32, loc) : ir_cast(ev->c, TS_DTYPE_FLOAT32, a, loc);
    b = r->kind == V_FLOAT ? ir_float(ev->c, r->u.f, TS_DTYPE_FLOAT32, loc) : ir_cast(ev->c, TS_DTYPE_FLOAT32, b, loc);
  }
  return ev_expr(ev, ir_binary(ev->c, k, a, b, loc));
}

/* An IR expression, or an alloc_var (which reads as its value). */
static bool is_ir_operand(const Value *v) {
  return v->kind == V_EXPR || (v->kind == V_BUFFER && v->u.buf->scope == IR_SCOPE_VAR);
}

/* A binary or comparison operator: folded on Python values, IR when an operand is IR;
 * `is`, `in` and == on containers are Python-only. */
Value *ev_binop(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc) {
  if (!l || !r || l->kind == V_POISON || r->kind == V_POISON) return NULL;
  if (l->kind == V_OPAQUE) return ev_use_opaque(ev, l, loc);
  if (r->kind == V_OPAQUE) return ev_use_opaque(ev, r, loc);
  if ((l->kind == V_HOST_TENSOR || r->kind == V_HOST_TENSOR) && op != AOP_IS && op != AOP_ISNOT)
    return ht_binop(ev, op, l, r, loc);
  switch (op) {
  case AOP_EQ: case AOP_NOTEQ:
    if (!is_ir_operand(l) && !is_ir_operand(r)) return ev_bool(ev, ev_values_equal(l, r) == (op == AOP_EQ));
    break;
  case AOP_IS: case AOP_ISNOT: {
    bool same = l == r || (l->kind == V_NONE && r->kind == V_NONE) ||
                (l->kind == V_BOOL && r->kind == V_BOOL && l->u.b == r->u.b) ||
                (l->kind == V_DTYPE && r->kind == V_DTYPE && l->u.dtype == r->u.dtype);
    return ev_bool(ev, same == (op == AOP_IS));
  }
  case AOP_IN: case AOP_NOTIN: {
    bool found = false;
    if (r->kind == V_TUPLE || r->kind == V_LIST) {
      for (int i = 0; i < r->u.seq.n && !found; i++) found = ev_values_equal(l, r->u.seq.items[i]);
    } else if (r->kind == V_DICT) {
      for (int i = 0; i < r->u.dict.keys.n && !found; i++) found = ev_values_equal(l, r->u.dict.keys.items[i]);
    } else if (r->kind == V_STR && l->kind == V_STR) {
      found = memmem(r->u.str.s, r->u.str.n, l->u.str.s, l->u.str.n) != NULL;
    } else {
      ts_error(ev->c, loc, "argument of type '%s' is not iterable", ev_type_name(r));
      return NULL;
    }
    return ev_bool(ev, found == (op == AOP_IN));
  }
  default: break;
  }
  if (is_ir_operand(l) || is_ir_operand(r)) {
    if ((is_ir_operand(l) || ev_is_num(l)) && (is_ir_operand(r) || ev_is_num(r))) return ir_arith(ev, op, l, r, loc);
  } else if (ev_is_num(l) && ev_is_num(r)) {
    switch (op) {
    case AOP_LT: return ev_bool(ev, ev_num_f(l) < ev_num_f(r));
    case AOP_LTE: return ev_bool(ev, ev_num_f(l) <= ev_num_f(r));
    case AOP_GT: return ev_bool(ev, ev_num_f(l) > ev_num_f(r));
    case AOP_GTE: return ev_bool(ev, ev_num_f(l) >= ev_num_f(r));
    default: return py_arith(ev, op, l, r, loc);
    }
  } else if (l->kind == V_STR && r->kind == V_STR) {
    int cmp = strcmp(l->u.str.s, r->u.str.s);
    switch (op) {
    case AOP_ADD: return ev_str(ev, arena_printf(ev->a, "%s%s", l->u.str.s, r->u.str.s));
    case AOP_LT: return ev_bool(ev, cmp < 0);
    case AOP_LTE: return ev_bool(ev, cmp <= 0);
    case AOP_GT: return ev_bool(ev, cmp > 0);
    case AOP_GTE: return ev_bool(ev, cmp >= 0);
    default: break;
    }
  } else if ((l->kind == V_TUPLE || l->kind == V_LIST) && l->kind == r->kind && op == AOP_ADD) {
    return seq_concat(ev, l, r);
  } else if ((l->kind == V_TUPLE || l->kind == V_LIST || l->kind == V_STR) && r->kind == V_INT && op == AOP_MUL) {
    /* Check the size first: `[0] * 10**9` must not run a billion pushes to find out. */
    int64_t unit = l->kind == V_STR ? (int64_t)l->u.str.n : (int64_t)l->u.seq.n * (int64_t)sizeof(Value *);
    if (r->u.i > 0 && unit > 0 && !ev_memory_ok(ev, r->u.i > INT64_MAX / unit ? INT64_MAX : r->u.i * unit, loc))
      return NULL;
    if (l->kind == V_STR) {
      StrBuf sb = {0};
      for (int64_t i = 0; i < r->u.i; i++) sb_append(&sb, l->u.str.s);
      Value *v = ev_str(ev, arena_strdup(ev->a, sb_str(&sb)));
      sb_free(&sb);
      return v;
    }
    Value *v = ev_new(ev, l->kind);
    for (int64_t k = 0; k < r->u.i; k++)
      for (int i = 0; i < l->u.seq.n; i++) vl_push(ev, &v->u.seq, l->u.seq.items[i]);
    return v;
  }
  ts_error(ev->c, loc, "unsupported operand types for %s: '%s' and '%s'", ast_op_names[op], ev_type_name(l),
           ev_type_name(r));
  return NULL;
}

/* Unary operators: `not`, `-`, `+`, `~` on Python numbers (folded) or IR values. */
Value *ev_unop(Eval *ev, AstOp op, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_POISON) return NULL;
  if (v->kind == V_OPAQUE) return ev_use_opaque(ev, v, loc);
  if (v->kind == V_HOST_TENSOR) return ht_unop(ev, op, v, loc);
  if (op == AOP_NOT) {
    int t = ev_truth(ev, v, loc);
    if (t == -2) return NULL;
    if (t >= 0) return ev_bool(ev, !t);
    IrExpr *e = ev_to_ir(ev, v, NULL, loc);
    return e ? ev_expr(ev, ir_unary(ev->c, IR_NOT, ev_to_bool_ir(ev, e, loc), loc)) : NULL;
  }
  if (ev_is_num(v)) {
    switch (op) {
    case AOP_UADD: return v->kind == V_BOOL ? ev_int(ev, v->u.b) : v;
    case AOP_USUB:
      if (v->kind == V_FLOAT) return ev_float(ev, -v->u.f);
      if (ev_num_i(v) == INT64_MIN) {
        ts_error(ev->c, loc, "integer overflow in unary '-'");
        return NULL;
      }
      return ev_int(ev, -ev_num_i(v));
    case AOP_INVERT:
      if (v->kind != V_FLOAT) return ev_int(ev, ~ev_num_i(v));
      break;
    default: break;
    }
  } else if (is_ir_operand(v)) {
    IrExpr *e = ev_to_ir(ev, v, NULL, loc);
    if (!e) return NULL;
    if (op == AOP_UADD) return ev_expr(ev, e);
    if (op == AOP_USUB) return ev_expr(ev, ir_unary(ev->c, IR_NEG, e, loc));
    if (op == AOP_INVERT) return ev_expr(ev, ir_unary(ev->c, IR_BITNOT, e, loc));
  }
  ts_error(ev->c, loc, "bad operand type for unary %s: '%s'", ast_op_names[op], ev_type_name(v));
  return NULL;
}

/* min/max of two values (k: IR_MIN or IR_MAX): Python numbers fold, anything IR -> MIN/MAX. */
Value *ev_minmax(Eval *ev, IrExprKind k, Value *x, Value *y, SrcLoc loc) {
  if (ev_is_num(x) && ev_is_num(y)) {
    Value *lt = ev_binop(ev, AOP_LT, x, y, loc);
    if (!lt) return NULL;
    return (lt->u.b == (k == IR_MIN)) ? x : y;
  }
  const IrExpr *lx = x->kind == V_EXPR ? x->u.expr : NULL, *ly = y->kind == V_EXPR ? y->u.expr : NULL;
  IrExpr *a = ev_to_ir(ev, x, ly, loc);
  IrExpr *b = a ? ev_to_ir(ev, y, lx ? lx : a, loc) : NULL;
  if (!a || !b) return NULL;
  return ev_expr(ev, ir_binary(ev->c, k, a, b, loc));
}

/* ---- selects ---------------------------------------------------------------------------- */
/* Unifies two branch values of a select: Python literals take the IR side's dtype. */
Value *ev_select(Eval *ev, IrExprKind k, IrExpr *cond, Value *a, Value *b, SrcLoc loc) {
  const IrExpr *la = a && a->kind == V_EXPR ? a->u.expr : NULL, *lb = b && b->kind == V_EXPR ? b->u.expr : NULL;
  IrExpr *x = ev_to_ir(ev, a, lb, loc);
  IrExpr *y = ev_to_ir(ev, b, la ? la : x, loc);
  if (!x || !y) return NULL;
  if (x->dtype != y->dtype) {
    /* the wider / float type wins */
    ts_dtype t = dtype_is_float(x->dtype) && !dtype_is_float(y->dtype) ? x->dtype
                 : dtype_is_float(y->dtype) && !dtype_is_float(x->dtype) ? y->dtype
                 : dtype_bits(x->dtype) >= dtype_bits(y->dtype) ? x->dtype : y->dtype;
    x = ir_cast(ev->c, t, x, loc);
    y = ir_cast(ev->c, t, y, loc);
  }
  return ev_expr(ev, ir_select(ev->c, k, cond, x, y, loc));
}
