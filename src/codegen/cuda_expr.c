/* cuda_expr.c — prints IR expressions as C: constants, operators with C precedence, floor
 * division, buffer accesses as flat indexing, calls to the device headers' helpers. */
#include "cuda_gen.h"

#include "../layout/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- constants ---------------------------------------------------------------------- */
static void int_const(StrBuf *sb, int64_t v, ts_dtype t) {
  switch (t) {
  case TS_DTYPE_BOOL: sb_append(sb, v ? "true" : "false"); return;
  case TS_DTYPE_INT64:
    /* int64_t is `long`, a literal with LL is `long long`: the explicit cast keeps
     * template arguments (ts::max, ts::floordiv) deducing one type. */
    if (v == INT64_MIN) sb_append(sb, "(int64_t)(-9223372036854775807LL - 1)");
    else sb_printf(sb, "(int64_t)%lld", (long long)v);
    return;
  case TS_DTYPE_UINT64: sb_printf(sb, "(uint64_t)%lluull", (unsigned long long)v); return;
  case TS_DTYPE_UINT32: sb_printf(sb, "%lluu", (unsigned long long)(uint32_t)v); return;
  case TS_DTYPE_INT32:
    if (v == INT32_MIN) sb_append(sb, "(-2147483647 - 1)");
    else sb_printf(sb, "%lld", (long long)v);
    return;
  default:
    /* Narrow ints: C promotes to int anyway; the cast keeps the declared type visible. */
    sb_printf(sb, "(%s)%lld", tname(t), (long long)v);
    return;
  }
}

/* Shortest decimal that reads back as the same value in the target precision. */
static void float_digits(char *buf, size_t n, double v, bool single) {
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, n, "%.*g", p, v);
    if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
  }
  if (!strpbrk(buf, ".eEn")) strncat(buf, ".0", n - strlen(buf) - 1);
}

static void float_const(StrBuf *sb, double v, ts_dtype t) {
  bool single = t != TS_DTYPE_FLOAT64;
  if (t == TS_DTYPE_FLOAT8_E5M2 && isinf(v)) { /* ts::cast saturates (to 57344): the bits of e5m2's inf */
    sb_printf(sb, "ts::bit_cast<%s>((uint8_t)0x%s)", tname(t), v > 0 ? "7c" : "fc");
    return;
  }
  char digits[64];
  if (isnan(v)) {
    snprintf(digits, sizeof digits, "%s", single ? "__int_as_float(0x7fffffff)"
                                                 : "__longlong_as_double(0x7ff8000000000000LL)");
  } else if (isinf(v)) {
    if (single) snprintf(digits, sizeof digits, "__int_as_float(0x%s)", v > 0 ? "7f800000" : "ff800000");
    else snprintf(digits, sizeof digits, "__longlong_as_double(0x%sLL)", v > 0 ? "7ff0000000000000" : "fff0000000000000");
  } else {
    float_digits(digits, sizeof digits - 2, single ? (double)(float)v : v, single);
    if (single) strcat(digits, "f");
  }
  if (t == TS_DTYPE_FLOAT32 || t == TS_DTYPE_FLOAT64) sb_append(sb, digits);
  else sb_printf(sb, "ts::cast<%s>(%s)", tname(t), digits);
}

/* Precedence of a constant as printed (a leading minus is a unary operator). */
static int const_prec(const IrExpr *e) {
  if (e->kind == IR_INT && is_floating(e->dtype)) {
    IrExpr f = *e;
    f.kind = IR_FLOAT;
    f.u.fval = (double)e->u.ival;
    return const_prec(&f);
  }
  if (e->kind == IR_INT) {
    if (e->dtype == TS_DTYPE_INT32) return e->u.ival < 0 ? PREC_UNARY : PREC_PRIMARY;
    if (e->dtype == TS_DTYPE_UINT32 || e->dtype == TS_DTYPE_BOOL) return PREC_PRIMARY;
    return PREC_UNARY; /* (int64_t)5 */
  }
  if (is_low_float(e->dtype) || isnan(e->u.fval) || isinf(e->u.fval)) return PREC_POSTFIX;
  return signbit(e->u.fval) ? PREC_UNARY : PREC_PRIMARY;
}

/* ---- non-negativity (lets `//` and `%` print as C's / and %): ir_is_nonneg over the
 * variables this kernel knows to be >= 0 (loop vars from a non-negative start, lets) ---- */
static bool var_nonneg(const IrVar *v, void *ctx) { return pmap_get(&((Cg *)ctx)->nonneg, v) != NULL; }
bool nonneg(Cg *g, const IrExpr *e) { return ir_is_nonneg(e, var_nonneg, g); }

/* ---- expressions ------------------------------------------------------------------- */
static void open_paren(StrBuf *sb, int prec, int min_prec) {
  if (prec < min_prec) sb_putc(sb, '(');
}
static void close_paren(StrBuf *sb, int prec, int min_prec) {
  if (prec < min_prec) sb_putc(sb, ')');
}

/* Prints e converted to type t (no conversion when it already has it).  Builtin
 * arithmetic types use a C cast; half/bfloat16/fp8 need ts::cast. */
void expr_as(Cg *g, StrBuf *sb, const IrExpr *e, ts_dtype t, int min_prec) {
  if (e->dtype == t || t == TS_DTYPE_VOID || e->kind == IR_STR) {
    expr(g, sb, e, min_prec);
  } else if (!is_low_float(t) && !is_low_float(e->dtype) && !dtype_is_packed(t) && !dtype_is_packed(e->dtype)) {
    open_paren(sb, PREC_UNARY, min_prec);
    sb_printf(sb, "(%s)", tname(t));
    expr(g, sb, e, PREC_UNARY);
    close_paren(sb, PREC_UNARY, min_prec);
  } else {
    sb_printf(sb, "ts::cast<%s>(", tname(t));
    expr(g, sb, e, 0);
    sb_putc(sb, ')');
  }
}

/* The flat element offset of buf[idx...]: row-major over the shape unless the buffer has
 * explicit strides.  Global tensors whose size is not a known 32-bit number index in
 * 64 bits: (int64_t)i * N keeps i * N from overflowing past 2^31 elements. */
void flat_index(Cg *g, StrBuf *sb, const IrBuffer *b, IrExpr *const *idx, int nidx) {
  int64_t numel = ir_buffer_numel(b);
  bool wide = b->scope == IR_SCOPE_GLOBAL && (numel < 0 || numel > INT32_MAX);
  bool any = false;
  if (nidx == 1 && !b->strides) {
    expr(g, sb, idx[0], PREC_ADD);
    any = true;
  } else {
    for (int k = 0; k < nidx; k++) {
      int64_t iv, stride = 1;
      if (ir_is_const_int(idx[k], &iv) && iv == 0) continue;
      /* Constant stride when every later extent is constant (the common case). */
      bool const_stride = true;
      if (b->strides) {
        const_stride = ir_is_const_int(b->strides[k], &stride);
      } else {
        for (int j = k + 1; j < b->ndim && j < nidx && const_stride; j++) {
          int64_t ext;
          if (ir_is_const_int(b->shape[j], &ext)) stride *= ext;
          else const_stride = false;
        }
      }
      if (any) sb_append(sb, " + ");
      any = true;
      if (const_stride && stride == 1) {
        expr(g, sb, idx[k], PREC_ADD);
        continue;
      }
      if (wide && idx[k]->dtype != TS_DTYPE_INT64) {
        sb_append(sb, "(int64_t)");
        expr(g, sb, idx[k], PREC_UNARY);
      } else {
        expr(g, sb, idx[k], PREC_MUL);
      }
      if (const_stride) {
        sb_printf(sb, " * %lld", (long long)stride);
      } else if (b->strides) {
        sb_append(sb, " * ");
        expr(g, sb, b->strides[k], PREC_MUL + 1);
      } else {
        for (int j = k + 1; j < b->ndim && j < nidx; j++) {
          int64_t ext;
          if (ir_is_const_int(b->shape[j], &ext) && ext == 1) continue;
          sb_append(sb, " * ");
          expr(g, sb, b->shape[j], PREC_MUL + 1);
        }
      }
    }
  }
  if (!any) sb_append(sb, "0");
  if (g->lane) sb_printf(sb, " + %s", g->lane);
}

/* buf[idx] as an lvalue; local.var buffers are plain scalars. */
void mem_access(Cg *g, StrBuf *sb, const IrBuffer *b, IrExpr *const *idx, int nidx, int lanes,
                SrcLoc loc) {
  if (b->scope == IR_SCOPE_LOCAL && ir_buffer_numel(b) == 0)
    ts_error(g->c, loc, "'%s' has no elements (T.alloc_local with a zero dimension): it cannot be read or written",
             b->name);
  sb_append(sb, buf_name(g, b));
  if (b->scope == IR_SCOPE_VAR) return;
  if (lanes > 1 && !g->lane)
    ts_error(g->c, loc, "internal error: vector access of %d lanes to '%s' outside a vector store", lanes,
             b->name);
  sb_putc(sb, '[');
  flat_index(g, sb, b, idx, nidx);
  sb_putc(sb, ']');
}

/* Element idx of a packed 4-bit tensor (one lane: passes never vectorize them). */
static void packed_load(Cg *g, StrBuf *sb, const IrExpr *e) {
  const IrBuffer *b = e->u.load.buf;
  if (e->lanes > 1 || g->lane)
    ts_error(g->c, e->loc, "internal error: vector access to the 4-bit tensor '%s'", b->name);
  sb_printf(sb, "ts::ld4<%s>(%s, ", cg_ctype(b->dtype), buf_name(g, b));
  flat_index(g, sb, b, e->u.load.idx, e->u.load.nidx);
  sb_putc(sb, ')');
}

static int binary_prec(IrExprKind k) {
  switch (k) {
  case IR_ADD: case IR_SUB: return PREC_ADD;
  case IR_MUL: case IR_DIV: case IR_TRUNCDIV: case IR_TRUNCMOD: return PREC_MUL;
  case IR_EQ: case IR_NE: return PREC_EQ;
  case IR_LT: case IR_LE: case IR_GT: case IR_GE: return PREC_REL;
  case IR_AND: return PREC_LAND;
  case IR_OR: return PREC_LOR;
  case IR_BITAND: return PREC_BAND;
  case IR_BITOR: return PREC_BOR;
  case IR_BITXOR: return PREC_BXOR;
  case IR_SHL: case IR_SHR: return PREC_SHIFT;
  default: return PREC_PRIMARY;
  }
}

static const char *binary_op(IrExprKind k) {
  switch (k) {
  case IR_TRUNCDIV: return "/";
  case IR_TRUNCMOD: return "%";
  default: return ir_expr_names[k];
  }
}

/* The type both sides of a comparison are brought to when they differ. */
static ts_dtype common_type(ts_dtype a, ts_dtype b) {
  if (is_floating(a) != is_floating(b)) return is_floating(a) ? a : b;
  if (is_floating(a) && (is_low_float(a) || is_low_float(b))) return TS_DTYPE_FLOAT32;
  return tbytes(a) >= tbytes(b) ? a : b;
}

static void binary(Cg *g, StrBuf *sb, const IrExpr *e, int min_prec) {
  IrExprKind k = e->kind;
  const IrExpr *a = e->u.ops[0], *b = e->u.ops[1];
  int p = binary_prec(k);
  ts_dtype t = e->dtype; /* operands are brought to the result type ... */
  if (ir_expr_flags[k] & IRF_CMP) t = common_type(a->dtype, b->dtype); /* ... or a common one */
  if (ir_expr_flags[k] & IRF_LOGIC) t = TS_DTYPE_BOOL;
  if (k == IR_SHL || k == IR_SHR) t = TS_DTYPE_VOID; /* shift amount keeps its type */
  if (dtype_is_packed(t) && (ir_expr_flags[k] & IRF_CMP)) t = dtype_is_float(t) ? TS_DTYPE_FLOAT32 : TS_DTYPE_INT32;
  bool fp8 = t == TS_DTYPE_FLOAT8_E4M3 || t == TS_DTYPE_FLOAT8_E5M2; /* CUDA's fp8 types have no operators */
  if (dtype_is_packed(t) || fp8) {
    /* 4-bit and fp8 arithmetic: computed in int (float for e2m1 and fp8), then brought back to
     * the narrow type (integers wrap, floats round), as the IR's result type says. */
    ts_dtype wide = dtype_is_float(t) ? TS_DTYPE_FLOAT32 : TS_DTYPE_INT32;
    IrExpr w = *e;
    w.dtype = wide;
    sb_printf(sb, "ts::cast<%s>(", tname(t));
    binary(g, sb, &w, 0);
    sb_putc(sb, ')');
    return;
  }
  open_paren(sb, p, min_prec);
  /* Both sides of && and || and of comparisons get parentheses around lower-binding
   * operators, so mixed && / || and bitwise tests read unambiguously. */
  bool strict = (ir_expr_flags[k] & (IRF_CMP | IRF_LOGIC)) || p <= PREC_BAND;
  expr_as(g, sb, a, t, strict ? p + 1 : p);
  sb_printf(sb, " %s ", binary_op(k));
  expr_as(g, sb, b, t == TS_DTYPE_VOID ? b->dtype : t, p + 1);
  close_paren(sb, p, min_prec);
}

/* Dynamic sizes arrive as int64_t parameters (the launch ABI) whatever their IR type, so
 * an expression over one T.dynamic int32 size is 64-bit in C while the IR calls it int32. */
static void c_wider_than_ir(IrExpr *e, void *ctx) {
  if (e->kind == IR_VAR && e->u.var->kind == IR_VAR_DYNAMIC && e->u.var->dtype != TS_DTYPE_INT64) *(bool *)ctx = true;
}
static bool c_type_may_differ(const IrExpr *e) {
  bool found = false;
  IrVisitor v = {NULL, c_wider_than_ir, &found};
  ir_visit_expr((IrExpr *)e, &v);
  return found;
}

/* ts::f(a, b) with both operands in the result type (the helpers are templates).  When an
 * operand's C type may differ from its IR type (above), the template argument is explicit:
 * `ts::floordiv<int>(n - (int)blockIdx.x, ...)` instead of an ambiguous deduction. */
static void helper2(Cg *g, StrBuf *sb, const char *fn, const IrExpr *e) {
  if (c_type_may_differ(e)) sb_printf(sb, "%s<%s>(", fn, tname(e->dtype));
  else sb_printf(sb, "%s(", fn);
  expr_as(g, sb, e->u.ops[0], e->dtype, 0);
  sb_append(sb, ", ");
  expr_as(g, sb, e->u.ops[1], e->dtype, 0);
  sb_putc(sb, ')');
}

/* Python's // and %: plain C when both sides are provably non-negative (then truncation
 * and flooring agree), otherwise the flooring helper. */
static void floor_divmod(Cg *g, StrBuf *sb, const IrExpr *e, int min_prec) {
  bool div = e->kind == IR_FLOORDIV;
  if (is_integer(e->dtype) && nonneg(g, e->u.ops[0]) && nonneg(g, e->u.ops[1])) {
    open_paren(sb, PREC_MUL, min_prec);
    expr_as(g, sb, e->u.ops[0], e->dtype, PREC_MUL);
    sb_append(sb, div ? " / " : " % ");
    expr_as(g, sb, e->u.ops[1], e->dtype, PREC_MUL + 1);
    close_paren(sb, PREC_MUL, min_prec);
  } else if (is_low_float(e->dtype)) {
    sb_printf(sb, "ts::cast<%s>(ts::%s(", tname(e->dtype), div ? "floordiv" : "floormod");
    expr_as(g, sb, e->u.ops[0], TS_DTYPE_FLOAT32, 0);
    sb_append(sb, ", ");
    expr_as(g, sb, e->u.ops[1], TS_DTYPE_FLOAT32, 0);
    sb_append(sb, "))");
  } else {
    helper2(g, sb, div ? "ts::floordiv" : "ts::floormod", e);
  }
}

/* Records the wgmma width a device call issues (gemm.cuh expands only the widths listed). */
static void note_wgmma_width(Cg *g, const IrExpr *e) {
  int w = cg_wgmma_width(e);
  if (w == 0) return;
  if (w < 8 || w > 256 || w % 8) g->wgmma_any_width = true; /* gemm.cuh's static_assert says why */
  else g->wgmma_widths |= 1u << (w / 8 - 1);
}

/* `#define TS_WGMMA_N_LIST(X, A) X(n, A) ...`: the widths gemm.cuh's wgmma dispatchers
 * expand, each costing NVRTC parse time (device/tilescale/gemm.cuh). */
void wgmma_width_list(StrBuf *src, uint32_t widths) {
  sb_append(src, "#define TS_WGMMA_N_LIST(X, A)");
  for (int k = 0; k < 32; k++)
    if (widths & (1u << k)) sb_printf(src, " X(%d, A)", 8 * (k + 1));
  sb_append(src, "\n");
}

static void args_list(Cg *g, StrBuf *sb, IrExpr *const *args, int from, int n, ts_dtype t) {
  sb_putc(sb, '(');
  for (int i = from; i < n; i++) {
    if (i > from) sb_append(sb, ", ");
    expr_as(g, sb, args[i], t == TS_DTYPE_HANDLE ? args[i]->dtype : t, 0);
  }
  sb_putc(sb, ')');
}

/* &buf[idx] from the address operand of an atomic: ADDRESS_OF(LOAD) or a bare LOAD. */
static const IrExpr *address_load(const IrExpr *a) {
  if (a->kind == IR_CALL && a->u.call.op == IRI_ADDRESS_OF && a->u.call.nargs == 1) a = a->u.call.args[0];
  return a->kind == IR_LOAD ? a : NULL;
}

/* A packed 4-bit element whose flat index is even starts a byte: the last index a multiple of
 * 2 in a row of even length (every other dimension's stride is a multiple of that length). */
static bool packed_byte_aligned(const IrExpr *ld) {
  const IrBuffer *b = ld->u.load.buf;
  int n = ld->u.load.nidx;
  int64_t ext;
  return !b->strides && n == b->ndim && n > 0 && ir_is_const_int(b->shape[n - 1], &ext) && ext % 2 == 0 &&
         ir_is_multiple(ld->u.load.idx[n - 1], 2);
}

void address_of(Cg *g, StrBuf *sb, const IrExpr *ld) {
  const IrBuffer *b = ld->u.load.buf;
  if (packed_mem(b)) { /* the byte holding elements 2k and 2k + 1 (the 4-bit GEMM's tiles) */
    if (!packed_byte_aligned(ld)) {
      ts_error(g->c, ld->loc, "the address of an element of the 4-bit tensor '%s' (two elements a byte) can only be "
               "taken at an even element of a row of even length", b->name);
      return;
    }
    sb_printf(sb, "(%s + (", buf_name(g, b));
    flat_index(g, sb, b, ld->u.load.idx, ld->u.load.nidx);
    sb_append(sb, ") / 2)");
    return;
  }
  sb_putc(sb, '&');
  mem_access(g, sb, ld->u.load.buf, ld->u.load.idx, ld->u.load.nidx, 1, ld->loc);
}

/* T.print: one printf with a format built from the argument types. */
static void print_call(Cg *g, StrBuf *sb, const IrExpr *e) {
  StrBuf fmt = {0}, args = {0};
  for (int i = 0; i < e->u.call.nargs; i++) {
    const IrExpr *a = e->u.call.args[i];
    if (i && !(fmt.len && fmt.data[fmt.len - 1] == '=')) sb_putc(&fmt, ' '); /* "index=3", not "index= 3" */
    if (a->kind == IR_STR) {
      for (const char *p = a->u.sval; *p; p++) {
        if (*p == '%') sb_putc(&fmt, '%');
        sb_putc(&fmt, *p);
      }
      continue;
    }
    sb_append(&args, ", ");
    if (is_floating(a->dtype)) {
      sb_append(&fmt, "%f");
      expr_as(g, &args, a, TS_DTYPE_FLOAT64, 0);
    } else if (a->dtype == TS_DTYPE_INT64 || a->dtype == TS_DTYPE_UINT64) {
      sb_append(&fmt, a->dtype == TS_DTYPE_INT64 ? "%lld" : "%llu");
      sb_append(&args, a->dtype == TS_DTYPE_INT64 ? "(long long)" : "(unsigned long long)");
      expr(g, &args, a, PREC_UNARY);
    } else {
      sb_append(&fmt, is_unsigned(a->dtype) ? "%u" : "%d");
      expr_as(g, &args, a, is_unsigned(a->dtype) ? TS_DTYPE_UINT32 : TS_DTYPE_INT32, 0);
    }
  }
  sb_putc(&fmt, '\n');
  sb_append(sb, "printf(");
  c_string(sb, sb_str(&fmt));
  sb_append(sb, sb_str(&args));
  sb_putc(sb, ')');
  sb_free(&fmt);
  sb_free(&args);
}

/* ---- thread-level intrinsics --------------------------------------------------------------- *
 * The rows of ir.h flagged IRI_LANES / IRI_BLOCK_SYNC, and the bit searches: CUDA's own
 * __shfl_*_sync, __any_sync, __ballot_sync, __match_*_sync, __syncthreads_count ... where CUDA
 * has an overload for the value's type, the device library's ts::shfl (reduce.cuh) otherwise. */
/* CUDA's shuffles have overloads for these; other types go through ts::shfl. */
static bool native_shfl(ts_dtype t) {
  return t == TS_DTYPE_INT32 || t == TS_DTYPE_UINT32 || t == TS_DTYPE_FLOAT32 || t == TS_DTYPE_FLOAT64 ||
         t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16;
}

/* name(a0, a1 ...): each operand printed as its own type, or as `as` when given. */
static void call_list(Cg *g, StrBuf *sb, const char *name, IrExpr *const *args, int n, const ts_dtype *as) {
  sb_append(sb, name);
  sb_putc(sb, '(');
  for (int i = 0; i < n; i++) {
    if (i) sb_append(sb, ", ");
    if (as && as[i] != TS_DTYPE_VOID) expr_as(g, sb, args[i], as[i], 0);
    else expr(g, sb, args[i], 0);
  }
  sb_putc(sb, ')');
}

/* A full-warp xor shuffle (the reductions' butterfly): (value, lane mask). */
static void shfl_xor(Cg *g, StrBuf *sb, IrExpr *const *args) {
  if (native_shfl(args[0]->dtype)) {
    sb_append(sb, "__shfl_xor_sync(0xffffffffu, ");
  } else {
    g->use_reduce = true;
    sb_append(sb, "ts::shfl_xor(");
  }
  expr(g, sb, args[0], 0);
  sb_append(sb, ", ");
  expr_as(g, sb, args[1], TS_DTYPE_INT32, 0);
  sb_putc(sb, ')');
}

/* T.shfl_sync / up / down / xor: (mask, value, lane or delta, width). */
static void shfl(Cg *g, StrBuf *sb, IrIntrin op, IrExpr *const *args) {
  static const char *const cuda[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"};
  int kind = op - IRI_SHFL_SYNC; /* ts::ShflKind: the rows' order in ir.h */
  ts_dtype as[4] = {TS_DTYPE_UINT32, TS_DTYPE_VOID, op == IRI_SHFL_UP || op == IRI_SHFL_DOWN ? TS_DTYPE_UINT32
                                                                                            : TS_DTYPE_INT32,
                    TS_DTYPE_INT32};
  if (native_shfl(args[1]->dtype)) {
    call_list(g, sb, cuda[kind], args, 4, as);
    return;
  }
  g->use_reduce = true;
  char name[32];
  snprintf(name, sizeof name, "ts::shfl<%d>", kind);
  call_list(g, sb, name, args, 4, as);
}

/* Prints e when it is a thread-level intrinsic or a bit search; false for any other call. */
static bool warp_call(Cg *g, StrBuf *sb, const IrExpr *e) {
  IrIntrin op = e->u.call.op;
  IrExpr *const *args = e->u.call.args;
  const ts_dtype vote[2] = {TS_DTYPE_UINT32, TS_DTYPE_INT32};
  switch (op) {
  case IRI_SHFL_XOR: shfl_xor(g, sb, args); return true;
  case IRI_SHFL_SYNC: case IRI_SHFL_UP: case IRI_SHFL_DOWN: case IRI_SHFL_XOR_SYNC: shfl(g, sb, op, args); return true;
  case IRI_ANY_SYNC: call_list(g, sb, "__any_sync", args, 2, vote); return true;
  case IRI_ALL_SYNC: call_list(g, sb, "__all_sync", args, 2, vote); return true;
  /* CUDA's warp is 32 lanes: the uint64 result is the 32-bit mask zero-extended */
  case IRI_BALLOT_SYNC: call_list(g, sb, "(unsigned long long)__ballot_sync", args, 2, vote); return true;
  case IRI_ACTIVEMASK: sb_append(sb, "(unsigned long long)__activemask()"); return true;
  case IRI_MATCH_ANY_SYNC: call_list(g, sb, "__match_any_sync", args, 2, vote); return true;
  case IRI_MATCH_ALL_SYNC: /* its int* predicate output goes to a temporary (ts::Discard) */
    sb_append(sb, "__match_all_sync(");
    expr_as(g, sb, args[0], TS_DTYPE_UINT32, 0);
    sb_append(sb, ", ");
    expr(g, sb, args[1], 0);
    sb_append(sb, ", ts::Discard())");
    return true;
  case IRI_SYNCTHREADS_COUNT: call_list(g, sb, "__syncthreads_count", args, 1, vote + 1); return true;
  case IRI_SYNCTHREADS_AND: call_list(g, sb, "__syncthreads_and", args, 1, vote + 1); return true;
  case IRI_SYNCTHREADS_OR: call_list(g, sb, "__syncthreads_or", args, 1, vote + 1); return true;
  case IRI_FFS: {
    bool wide = tbytes(args[0]->dtype) == 8;
    ts_dtype as = wide ? TS_DTYPE_INT64 : TS_DTYPE_INT32;
    call_list(g, sb, wide ? "__ffsll" : "__ffs", args, 1, &as);
    return true;
  }
  case IRI_FNS: {
    const ts_dtype as[3] = {TS_DTYPE_UINT32, TS_DTYPE_UINT32, TS_DTYPE_INT32};
    call_list(g, sb, "__fns", args, 3, as);
    return true;
  }
  case IRI_SYNCTHREADS: sb_append(sb, "__syncthreads()"); return true;
  case IRI_SYNCWARP: sb_append(sb, "__syncwarp()"); return true;
  default: return false;
  }
}

static void call(Cg *g, StrBuf *sb, const IrExpr *e) {
  IrIntrin op = e->u.call.op;
  IrExpr *const *args = e->u.call.args;
  int nargs = e->u.call.nargs;
  const IrIntrinInfo *info = &ir_intrin_info[op];
  if (info->nargs >= 0 && nargs != info->nargs) {
    ts_error(g->c, e->loc, "internal error: %s takes %d arguments, got %d", info->name, info->nargs, nargs);
    sb_append(sb, "0");
    return;
  }
  if ((info->flags & IRI_FLOAT) && info->cuda_f32) {
    /* float: the CUDA f32 function; double: the same name without the f suffix; half,
     * bfloat16 (and anything else): computed in float and converted back.  The fast forms
     * (__expf) are float32's only; the other types take the function without "__", as
     * TileLang's codegen does. */
    ts_dtype t = e->dtype;
    const char *fn = (info->flags & IRI_FAST) && t != TS_DTYPE_FLOAT32 ? info->cuda_f32 + 2 : info->cuda_f32;
    if (t == TS_DTYPE_FLOAT64) {
      size_t n = strlen(fn);
      sb_printf(sb, "%.*s", (int)(n - 1), fn);
      args_list(g, sb, args, 0, nargs, t);
    } else if (t == TS_DTYPE_FLOAT32) {
      sb_append(sb, fn);
      args_list(g, sb, args, 0, nargs, t);
    } else {
      sb_printf(sb, "ts::cast<%s>(%s", tname(t), fn);
      args_list(g, sb, args, 0, nargs, TS_DTYPE_FLOAT32);
      sb_putc(sb, ')');
    }
    return;
  }
  if (warp_call(g, sb, e)) return;
  switch (op) {
  case IRI_SIGMOID: case IRI_FAST_RCP: /* common.cuh's ts::sigmoid / ts::fast_rcp (float, double) */
    if (e->dtype == TS_DTYPE_FLOAT32 || e->dtype == TS_DTYPE_FLOAT64) {
      sb_printf(sb, "ts::%s", info->name);
      args_list(g, sb, args, 0, 1, e->dtype);
    } else {
      sb_printf(sb, "ts::cast<%s>(ts::%s", tname(e->dtype), info->name);
      args_list(g, sb, args, 0, 1, TS_DTYPE_FLOAT32);
      sb_putc(sb, ')');
    }
    return;
  case IRI_ABS:
    sb_append(sb, e->dtype == TS_DTYPE_FLOAT32 ? "fabsf" : e->dtype == TS_DTYPE_FLOAT64 ? "fabs" : "ts::abs");
    args_list(g, sb, args, 0, 1, e->dtype);
    return;
  case IRI_MAX_NAN: case IRI_MIN_NAN:
    sb_printf(sb, "ts::%s", info->name);
    args_list(g, sb, args, 0, 2, e->dtype);
    return;
  case IRI_ISNAN: case IRI_ISINF: case IRI_ISFINITE:
    sb_printf(sb, "ts::%s", info->name);
    args_list(g, sb, args, 0, 1, args[0]->dtype);
    return;
  case IRI_POPCOUNT: case IRI_CLZ: {
    bool wide = tbytes(args[0]->dtype) == 8;
    if (op == IRI_POPCOUNT) sb_append(sb, wide ? "__popcll((unsigned long long)" : "__popc((unsigned)");
    else sb_append(sb, wide ? "__clzll((long long)" : "__clz((int)");
    expr(g, sb, args[0], PREC_UNARY);
    sb_putc(sb, ')');
    /* clz counts leading zeros of the 32-bit word; narrower types start lower. */
    if (op == IRI_CLZ && tbytes(args[0]->dtype) < 4) sb_printf(sb, " - %d", 32 - 8 * tbytes(args[0]->dtype));
    return;
  }
  case IRI_ATOMIC_ADD: case IRI_ATOMIC_MAX: case IRI_ATOMIC_MIN: {
    const IrExpr *ld = address_load(args[0]);
    if (!ld) {
      ts_error(g->c, e->loc, "internal error: the address of %s must be a buffer element", info->name);
      sb_append(sb, "0");
      return;
    }
    ts_dtype t = ld->u.load.buf->dtype;
    bool native = op == IRI_ATOMIC_ADD ? (t == TS_DTYPE_FLOAT32 || t == TS_DTYPE_FLOAT64 || t == TS_DTYPE_INT32 ||
                                          t == TS_DTYPE_UINT32 || t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16)
                                       : (t == TS_DTYPE_INT32 || t == TS_DTYPE_UINT32);
    if (native) {
      sb_append(sb, op == IRI_ATOMIC_ADD ? "atomicAdd(" : op == IRI_ATOMIC_MAX ? "atomicMax(" : "atomicMin(");
    } else {
      g->use_atomic = true;
      sb_printf(sb, "ts::%s(", info->name);
    }
    address_of(g, sb, ld);
    sb_append(sb, ", ");
    expr_as(g, sb, args[1], t, 0);
    sb_putc(sb, ')');
    return;
  }
  case IRI_ATOMIC_ADD_X: { /* dst[0..N) += src[0..N), N = args[2] (T.atomic_addx2/x4) */
    const IrExpr *dl = address_load(args[0]), *sl = address_load(args[1]);
    int64_t n;
    if (!dl || !sl || !ir_is_const_int(args[2], &n)) {
      ts_error(g->c, e->loc, "internal error: %s needs two buffer elements and a lane count", info->name);
      sb_append(sb, "0");
      return;
    }
    g->use_atomic = true;
    sb_printf(sb, "ts::atomic_add_x<%lld>(", (long long)n);
    address_of(g, sb, dl);
    sb_append(sb, ", ");
    address_of(g, sb, sl);
    sb_putc(sb, ')');
    return;
  }
  case IRI_ADDRESS_OF:
    if (args[0]->kind != IR_LOAD) {
      ts_error(g->c, e->loc, "internal error: address_of needs a buffer element");
      sb_append(sb, "nullptr");
      return;
    }
    address_of(g, sb, args[0]);
    return;
  case IRI_CALL_EXTERN:
    if (nargs < 1 || args[0]->kind != IR_STR) {
      ts_error(g->c, e->loc, "call_extern needs the function name as a string first");
      sb_append(sb, "0");
      return;
    }
    if (!strncmp(args[0]->u.sval, "ts::", 4)) { /* device-library templates, of any width */
      g->use_gemm = true;
      g->wgmma_any_width = true;
    }
    sb_append(sb, args[0]->u.sval);
    args_list(g, sb, args, 1, nargs, TS_DTYPE_HANDLE);
    return;
  case IRI_DEVICE:
    g->use_gemm = true; /* the device-library templates (gemm.cuh, which includes tma.cuh) */
    g->device_flags |= ir_device_info[e->u.call.dop].flags;
    if (e->u.call.dop == IRD_GEMM_SP_SS_MMA) g->use_gemm_sp = true;
    if (!strcmp(cg_device_abi[e->u.call.dop].header, "atomic.cuh")) g->use_atomic = true;
    if (!strcmp(cg_device_abi[e->u.call.dop].header, "rng_curand.cuh")) g->use_curand = true;
    note_wgmma_width(g, e);
    cg_device_callee(sb, e);
    args_list(g, sb, args, 0, nargs, TS_DTYPE_HANDLE);
    return;
  case IRI_PRINTF: print_call(g, sb, e); return;
  default:
    ts_error(g->c, e->loc, "internal error: intrinsic %s has no CUDA spelling", info->name);
    sb_append(sb, "0");
    return;
  }
}

void expr(Cg *g, StrBuf *sb, const IrExpr *e, int min_prec) {
  switch (e->kind) {
  case IR_INT:
    open_paren(sb, const_prec(e), min_prec);
    /* An integer literal of float type (a typed zero from a pass) prints as a float. */
    if (is_floating(e->dtype)) float_const(sb, (double)e->u.ival, e->dtype);
    else int_const(sb, e->u.ival, e->dtype);
    close_paren(sb, const_prec(e), min_prec);
    return;
  case IR_FLOAT:
    open_paren(sb, const_prec(e), min_prec);
    float_const(sb, e->u.fval, e->dtype);
    close_paren(sb, const_prec(e), min_prec);
    return;
  case IR_STR: c_string(sb, e->u.sval); return;
  case IR_VAR: {
    const IrVar *v = e->u.var;
    if (v->kind == IR_VAR_THREAD_IDX || v->kind == IR_VAR_BLOCK_IDX) {
      /* threadIdx/blockIdx are unsigned: the cast keeps `tx - 1 < n` signed, as in the IR. */
      open_paren(sb, PREC_UNARY, min_prec);
      sb_printf(sb, "(%s)%s.%c", tname(v->dtype), v->kind == IR_VAR_THREAD_IDX ? "threadIdx" : "blockIdx",
                "xyz"[v->axis >= 0 && v->axis < 3 ? v->axis : 0]);
      close_paren(sb, PREC_UNARY, min_prec);
    } else {
      sb_append(sb, var_name(g, v));
    }
    return;
  }
  case IR_FLOORDIV: case IR_FLOORMOD: floor_divmod(g, sb, e, min_prec); return;
  case IR_DIV:
    if (is_integer(e->dtype)) ts_error(g->c, e->loc, "internal error: '/' on integers reached codegen");
    binary(g, sb, e, min_prec);
    return;
  case IR_MIN: case IR_MAX: helper2(g, sb, e->kind == IR_MIN ? "ts::min" : "ts::max", e); return;
  case IR_NEG: case IR_NOT: case IR_BITNOT: {
    open_paren(sb, PREC_UNARY, min_prec);
    sb_append(sb, e->kind == IR_NEG ? "-" : e->kind == IR_NOT ? "!" : "~");
    const IrExpr *a = e->u.ops[0];
    /* "- -x" must not become "--x". */
    if (e->kind == IR_NEG && ((a->kind == IR_NEG) || (a->kind == IR_INT && a->u.ival < 0) ||
                              (a->kind == IR_FLOAT && signbit(a->u.fval))))
      sb_putc(sb, ' ');
    expr_as(g, sb, a, e->kind == IR_NOT ? TS_DTYPE_BOOL : e->dtype, PREC_UNARY);
    close_paren(sb, PREC_UNARY, min_prec);
    return;
  }
  case IR_SELECT: case IR_IF_THEN_ELSE:
    /* A C conditional evaluates only the taken side, which IF_THEN_ELSE requires (a
     * guarded out-of-bounds load must not execute). */
    open_paren(sb, PREC_TERNARY, min_prec);
    expr_as(g, sb, e->u.ops[0], TS_DTYPE_BOOL, PREC_LOR);
    sb_append(sb, " ? ");
    expr_as(g, sb, e->u.ops[1], e->dtype, PREC_TERNARY + 1);
    sb_append(sb, " : ");
    expr_as(g, sb, e->u.ops[2], e->dtype, PREC_TERNARY);
    close_paren(sb, PREC_TERNARY, min_prec);
    return;
  case IR_CAST:
    if (e->u.ops[0]->dtype == e->dtype) expr(g, sb, e->u.ops[0], min_prec);
    else expr_as(g, sb, e->u.ops[0], e->dtype, min_prec);
    return;
  case IR_REINTERPRET:
    /* The source type is spelled out: C++ promotes 8/16-bit integer arithmetic to int, which
     * would make the sizes differ; the explicit argument converts back first. */
    if (e->lanes == 1 && e->u.ops[0]->lanes == 1)
      sb_printf(sb, "ts::bit_cast<%s, %s>(", tname(e->dtype), tname(e->u.ops[0]->dtype));
    else
      sb_printf(sb, "ts::bit_cast<%s>(", tname(e->dtype));
    expr(g, sb, e->u.ops[0], 0);
    sb_putc(sb, ')');
    return;
  case IR_CALL: call(g, sb, e); return;
  case IR_LOAD:
    if (packed_mem(e->u.load.buf)) {
      packed_load(g, sb, e);
      return;
    }
    if (cg_is_wide16(g, e->u.load.buf)) { /* a 16-bit element held in a 32-bit word */
      sb_printf(sb, "ts::from_word<%s>(", tname(e->dtype));
      mem_access(g, sb, e->u.load.buf, e->u.load.idx, e->u.load.nidx, e->lanes, e->loc);
      sb_putc(sb, ')');
      return;
    }
    open_paren(sb, PREC_POSTFIX, min_prec);
    mem_access(g, sb, e->u.load.buf, e->u.load.idx, e->u.load.nidx, e->lanes, e->loc);
    close_paren(sb, PREC_POSTFIX, min_prec);
    return;
  default:
    if (ir_expr_flags[e->kind] & IRF_BINARY || e->kind == IR_TRUNCDIV || e->kind == IR_TRUNCMOD) {
      binary(g, sb, e, min_prec);
      return;
    }
    ts_error(g->c, e->loc, "internal error: expression '%s' has no CUDA spelling", ir_expr_names[e->kind]);
    sb_append(sb, "0");
    return;
  }
}

