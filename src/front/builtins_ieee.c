/* builtins_ieee.c — T.ieee_add / ieee_sub / ieee_mul / ieee_fmaf / ieee_frcp / ieee_fsqrt /
 * ieee_fdiv (x, ..., rounding_mode="rn") and T.ieee_frsqrt(x): IEEE-754 arithmetic with an
 * explicit rounding mode (rn: to nearest even, rz: toward zero, ru: up, rd: down), never
 * contracted into an FMA or approximated under fast math.  Each becomes the device operation
 * IRD_IEEE_<OP> (ir.h; codegen spells it from device/tilescale/ieee.cuh over CUDA's __fadd_rz,
 * __dmul_ru, ...), the mode its attribute, its operands converted to one float type.  float32
 * and float64 take every mode; float16 and bfloat16 only rn (CUDA has no other); ieee_frsqrt
 * takes float32, float16 and bfloat16 (no float64: CUDA has no such intrinsic) and rounds to
 * nearest. */
#include <string.h>

#include "builtin.h"

typedef struct IeeeOp {
  const char *name; /* T.<name> */
  IrDeviceOp dop;
  int nargs;        /* float operands before rounding_mode */
  bool has_mode;
} IeeeOp;

static const IeeeOp ieee_ops[] = {
    {"ieee_add", IRD_IEEE_ADD, 2, true},     {"ieee_sub", IRD_IEEE_SUB, 2, true},
    {"ieee_mul", IRD_IEEE_MUL, 2, true},     {"ieee_fmaf", IRD_IEEE_FMAF, 3, true},
    {"ieee_frcp", IRD_IEEE_FRCP, 1, true},   {"ieee_fsqrt", IRD_IEEE_FSQRT, 1, true},
    {"ieee_fdiv", IRD_IEEE_FDIV, 2, true},   {"ieee_frsqrt", IRD_IEEE_FRSQRT, 1, false},
};

/* The modes, in the order of the device operations' attribute (ieee.cuh). */
static const char *const modes[] = {"rn", "rz", "ru", "rd"};

/* The rounding mode argument's index in modes (0, "rn", when absent), or -1 after an error. */
static int rounding_mode(Eval *ev, const IeeeOp *op, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_NONE) return 0;
  for (int m = 0; v->kind == V_STR && m < 4; m++)
    if (!strcmp(v->u.str.s, modes[m])) return m;
  ts_error(ev->c, loc, "T.%s: rounding_mode must be one of 'rn', 'rz', 'ru', 'rd', got %s", op->name,
           v->kind == V_STR ? v->u.str.s : ev_type_name(v));
  return -1;
}

static Value *t_ieee(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  const IeeeOp *op = &ieee_ops[bi->arg];
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int mode = rounding_mode(ev, op, op->has_mode ? arg[op->nargs] : NULL, loc);
  if (mode < 0) return ev->poison;
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
  if (narrow && mode) { /* TileLang's words, which its users' tests match */
    ts_error(ev->c, loc, "T.%s: Only rounding mode 'rn' is available for half precision (%s), not '%s'", op->name,
             dtype_name(t), modes[mode]);
    return ev->poison;
  }
  if (!op->has_mode && t == TS_DTYPE_FLOAT64) {
    ts_error(ev->c, loc, "T.%s: frsqrt is not supported for float64 (CUDA has no double-precision rsqrt)", op->name);
    return ev->poison;
  }
  IrExpr **args = ARENA_ARRAY(ev->a, IrExpr *, op->nargs);
  for (int i = 0; i < op->nargs; i++) {
    IrExpr *x = ev_to_ir(ev, arg[i], like, loc);
    if (!x) return ev->poison;
    args[i] = ir_cast(ev->c, t, x, loc);
  }
  int64_t attr = mode;
  return ev_expr(ev, ir_device(ev->c, op->dop, t, &attr, 1, args, op->nargs, loc));
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
