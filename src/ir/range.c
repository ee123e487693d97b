/* range.c — small integer analyses over IR expressions, shared by the passes and codegen:
 * interval bounds under given variable ranges (to drop provably true bounds guards),
 * divisibility (to prove vector alignment), and non-negativity (lets codegen print `//`
 * and `%` as C's / and %).  (analysis.h) */
#include <stdint.h>

#include "analysis.h"

void ir_range_env_add(IrRangeEnv *env, IrVar *v, int64_t lo, int64_t hi) {
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

bool ir_range(const IrExpr *e, const IrRangeEnv *env, int64_t *lo, int64_t *hi) {
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
    case IR_CAST: return !dtype_is_float(e->dtype) && ir_range(e->u.ops[0], env, lo, hi);
    default: break;
  }
  if (ir_expr_nops[e->kind] != 2 || dtype_is_float(e->dtype)) return false;
  if (e->kind == IR_MIN || e->kind == IR_MAX) {
    /* A clamp bounds its result even when the clamped value's range is unknown. */
    bool ka = ir_range(e->u.ops[0], env, &a0, &a1), kb = ir_range(e->u.ops[1], env, &b0, &b1);
    if (!ka && !kb) return false;
    if (!ka) a0 = INT64_MIN / 4, a1 = INT64_MAX / 4;
    if (!kb) b0 = INT64_MIN / 4, b1 = INT64_MAX / 4;
    /* one-sided results keep the sentinel (a true but useless bound) */
    if (e->kind == IR_MIN) *lo = a0 < b0 ? a0 : b0, *hi = a1 < b1 ? a1 : b1;
    else *lo = a0 > b0 ? a0 : b0, *hi = a1 > b1 ? a1 : b1;
    return true;
  }
  bool ka = ir_range(e->u.ops[0], env, &a0, &a1), kb = ir_range(e->u.ops[1], env, &b0, &b1);
  if (e->kind == IR_FLOORMOD && !ka && kb && b0 == b1 && b0 > 0) {
    /* x mod k (floor) lies in [0, k) whatever x is */
    *lo = 0;
    *hi = b0 - 1;
    return true;
  }
  if (!ka || !kb) return false;
  /* arithmetic on a one-sided range could overflow: unknown */
  if (a0 <= INT64_MIN / 4 || b0 <= INT64_MIN / 4 || a1 >= INT64_MAX / 4 || b1 >= INT64_MAX / 4) return false;
  switch (e->kind) {
    case IR_ADD: *lo = a0 + b0; *hi = a1 + b1; return true;
    case IR_SUB: *lo = a0 - b1; *hi = a1 - b0; return true;
    case IR_MUL: {
      /* a bound just under the sentinel (a clamp's one-sided side, less one) times a tile
       * size does not fit in 64 bits: unknown rather than wrapped */
      int64_t p[4];
      if (__builtin_mul_overflow(a0, b0, &p[0]) || __builtin_mul_overflow(a0, b1, &p[1]) ||
          __builtin_mul_overflow(a1, b0, &p[2]) || __builtin_mul_overflow(a1, b1, &p[3]))
        return false;
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

bool ir_is_multiple(const IrExpr *e, int64_t m) {
  if (m <= 1) return true;
  switch (e->kind) {
    case IR_INT: return e->u.ival % m == 0;
    case IR_ADD: case IR_SUB: return ir_is_multiple(e->u.ops[0], m) && ir_is_multiple(e->u.ops[1], m);
    case IR_MUL: return ir_is_multiple(e->u.ops[0], m) || ir_is_multiple(e->u.ops[1], m);
    case IR_CAST: return !dtype_is_float(e->dtype) && ir_is_multiple(e->u.ops[0], m);
    case IR_FLOORDIV: { /* x // d with d * m | x: the division is exact, m | x / d (k * 128 // 2) */
      int64_t d;
      return ir_is_const_int(e->u.ops[1], &d) && d > 0 && d <= INT64_MAX / m && ir_is_multiple(e->u.ops[0], m * d);
    }
    default: return false;
  }
}


static bool is_unsigned_or_bool(ts_dtype t) {
  return t == TS_DTYPE_BOOL || t == TS_DTYPE_UINT8 || t == TS_DTYPE_UINT16 || t == TS_DTYPE_UINT32 ||
         t == TS_DTYPE_UINT64;
}

bool ir_is_nonneg(const IrExpr *e, bool (*var_nonneg)(const IrVar *v, void *ctx), void *ctx) {
  if (is_unsigned_or_bool(e->dtype)) return true;
  bool integer = dtype_is_int(e->dtype);
  switch (e->kind) {
  case IR_INT: return e->u.ival >= 0;
  case IR_VAR:
    switch (e->u.var->kind) {
    case IR_VAR_THREAD_IDX: case IR_VAR_BLOCK_IDX: case IR_VAR_DYNAMIC: return true;
    default: return var_nonneg && var_nonneg(e->u.var, ctx);
    }
  case IR_ADD: case IR_MUL: case IR_FLOORDIV: case IR_FLOORMOD: case IR_TRUNCDIV:
  case IR_TRUNCMOD: case IR_MIN: case IR_SHR:
    return integer && ir_is_nonneg(e->u.ops[0], var_nonneg, ctx) && ir_is_nonneg(e->u.ops[1], var_nonneg, ctx);
  case IR_MAX: case IR_BITAND:
    return integer && (ir_is_nonneg(e->u.ops[0], var_nonneg, ctx) || ir_is_nonneg(e->u.ops[1], var_nonneg, ctx));
  case IR_CAST:
    return integer && dtype_is_int(e->u.ops[0]->dtype) && dtype_bits(e->dtype) >= dtype_bits(e->u.ops[0]->dtype) &&
           ir_is_nonneg(e->u.ops[0], var_nonneg, ctx);
  case IR_SELECT: case IR_IF_THEN_ELSE:
    return ir_is_nonneg(e->u.ops[1], var_nonneg, ctx) && ir_is_nonneg(e->u.ops[2], var_nonneg, ctx);
  default: return false;
  }
}
