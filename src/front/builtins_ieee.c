/* builtins_ieee.c — T.ieee_add / ieee_sub / ieee_mul / ieee_fmaf / ieee_frcp / ieee_fsqrt /
 * ieee_fdiv (x, ..., rounding_mode="rn") and T.ieee_frsqrt(x): IEEE-754 arithmetic with an
 * explicit rounding mode (rn: to nearest even, rz: toward zero, ru: up, rd: down), never
 * contracted into an FMA or approximated under fast math.  Each becomes a call of the device
 * function ts::ieee_<op>_<mode> (device/tilescale/ieee.cuh: CUDA's __fadd_rz, __dmul_ru, ...),
 * its operands converted to one float type.  float32 and float64 take every mode; float16 and
 * bfloat16 only rn (CUDA has no other); ieee_frsqrt is float32 only, and rounds to nearest. */
#include <string.h>

#include "builtin.h"

typedef struct IeeeOp {
  const char *name; /* T.<name> and ts::<name>_<mode> */
  int nargs;        /* float operands before rounding_mode */
  bool has_mode;
} IeeeOp;

static const IeeeOp ieee_ops[] = {
    {"ieee_add", 2, true},   {"ieee_sub", 2, true},   {"ieee_mul", 2, true},  {"ieee_fmaf", 3, true},
    {"ieee_frcp", 1, true},  {"ieee_fsqrt", 1, true}, {"ieee_fdiv", 2, true}, {"ieee_frsqrt", 1, false},
};

static bool known_mode(const char *m) {
  return !strcmp(m, "rn") || !strcmp(m, "rz") || !strcmp(m, "ru") || !strcmp(m, "rd");
}

/* The rounding mode argument (a string; "rn" when absent), or NULL after an error. */
static const char *rounding_mode(Eval *ev, const IeeeOp *op, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_NONE) return "rn";
  if (v->kind != V_STR || !known_mode(v->u.str.s)) {
    ts_error(ev->c, loc, "T.%s: rounding_mode must be one of 'rn', 'rz', 'ru', 'rd', got %s", op->name,
             v->kind == V_STR ? v->u.str.s : ev_type_name(v));
    return NULL;
  }
  return v->u.str.s;
}

static Value *t_ieee(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  const IeeeOp *op = &ieee_ops[bi->arg];
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  const char *mode = rounding_mode(ev, op, op->has_mode ? arg[op->nargs] : NULL, loc);
  if (!mode) return ev->poison;
  const IrExpr *like = NULL;
  for (int i = 0; i < op->nargs; i++)
    if (arg[i]->kind == V_EXPR && dtype_is_float(arg[i]->u.expr->dtype)) like = arg[i]->u.expr;
  ts_dtype t = like ? like->dtype : TS_DTYPE_FLOAT32;
  bool narrow = t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16;
  if (!narrow && t != TS_DTYPE_FLOAT32 && t != TS_DTYPE_FLOAT64) {
    ts_error(ev->c, loc, "T.%s: operands of %s are not supported (float16, bfloat16, float32, float64)", op->name,
             dtype_name(t));
    return ev->poison;
  }
  if ((narrow || !op->has_mode) && strcmp(mode, "rn")) {
    ts_error(ev->c, loc, "T.%s: %s has only round-to-nearest ('rn'), not '%s'", op->name, dtype_name(t), mode);
    return ev->poison;
  }
  if (!op->has_mode && t != TS_DTYPE_FLOAT32) {
    ts_error(ev->c, loc, "T.%s is float32 only, got %s", op->name, dtype_name(t));
    return ev->poison;
  }
  IrExpr **args = ARENA_ARRAY(ev->a, IrExpr *, op->nargs + 1);
  args[0] = ir_str(ev->c, arena_printf(ev->a, "ts::%s_%s", op->name, mode), loc);
  for (int i = 0; i < op->nargs; i++) {
    IrExpr *x = ev_to_ir(ev, arg[i], like, loc);
    if (!x) return ev->poison;
    args[i + 1] = ir_cast(ev->c, t, x, loc);
  }
  return ev_expr(ev, ir_call(ev->c, IRI_CALL_EXTERN, t, args, op->nargs + 1, loc));
}

static const Builtin ieee_rows[] = {
    {"ieee_add", "x, y, rounding_mode=\"rn\"", t_ieee, 0, 0},
    {"ieee_sub", "x, y, rounding_mode=\"rn\"", t_ieee, 1, 0},
    {"ieee_mul", "x, y, rounding_mode=\"rn\"", t_ieee, 2, 0},
    {"ieee_fmaf", "x, y, z, rounding_mode=\"rn\"", t_ieee, 3, 0},
    {"ieee_frcp", "x, rounding_mode=\"rn\"", t_ieee, 4, 0},
    {"ieee_fsqrt", "x, rounding_mode=\"rn\"", t_ieee, 5, 0},
    {"ieee_fdiv", "x, y, rounding_mode=\"rn\"", t_ieee, 6, 0},
    {"ieee_frsqrt", "x", t_ieee, 7, 0},
};

const BuiltinTable builtins_ieee[] = {
    {MOD_T, ieee_rows, TS_ARRAY_LEN(ieee_rows), NULL},
    BUILTIN_TABLE_END,
};
