/* cuda.c — prints thread-level Tile IR as one CUDA C++ translation unit, plus the launch
 * metadata (grid expressions, block dims, dynamic shared memory) the runtime needs.
 *
 *   passes (lower_tile_ops ... flatten) ─► cg_cuda ─► NVRTC / nvcc ─► cubin
 *
 * Each KERNEL statement of the function becomes one `extern "C" __global__` function with
 * the ABI of cuda.h.  Inside, the IR maps one to one onto C: loops, ifs, lets as const
 * declarations, buffer accesses as flat array indexing.  Everything the generated code
 * needs beyond CUDA itself (casts involving half/bfloat16/fp8, Python floor division,
 * vector copies, shuffles and atomics for every type) lives in the device/tilescale headers,
 * so this file stays a printer: it never expands a helper inline.
 *
 * Names: the user's names are kept, made legal C and unique within a kernel (a clash or a
 * keyword gets a _N suffix), so the output reads like the kernel file. */
#include "cuda.h"
#include "device_abi.h"
#include "../ir/analysis.h"

#include "../layout/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pointer -> value map (IrVar / IrBuffer identity is by pointer) ------------------ */
typedef struct PtrMap {
  const void **keys;
  void **vals;
  int cap, len;
} PtrMap;

static uint64_t ptr_hash(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

static void *pmap_get(const PtrMap *m, const void *key) {
  if (!m->cap) return NULL;
  for (int i = (int)(ptr_hash(key) & (uint64_t)(m->cap - 1));; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return NULL;
    if (m->keys[i] == key) return m->vals[i];
  }
}

static void pmap_put(Arena *a, PtrMap *m, const void *key, void *val) {
  if (2 * (m->len + 1) > m->cap) {
    PtrMap n = {0};
    n.cap = m->cap ? 2 * m->cap : 64;
    n.keys = ARENA_ARRAY(a, const void *, n.cap);
    n.vals = ARENA_ARRAY(a, void *, n.cap);
    for (int i = 0; i < m->cap; i++)
      if (m->keys[i]) pmap_put(a, &n, m->keys[i], m->vals[i]);
    *m = n;
  }
  int i = (int)(ptr_hash(key) & (uint64_t)(m->cap - 1));
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->len++;
  m->keys[i] = key;
  m->vals[i] = val;
}

/* ---- generator state ---------------------------------------------------------------- */
typedef struct Cg {
  TsCompiler *c;
  const IrFunc *f;
  StrBuf *out;          /* body of the kernel being printed */
  int indent;
  PtrMap names;         /* IrVar* / IrBuffer* -> C name (per kernel) */
  StrMap used;          /* C names taken in the kernel */
  PtrMap nonneg;        /* vars known to be >= 0 (loop vars from a non-negative start, lets) */
  const char *lane;     /* lane variable while a vector expression is printed element-wise */
  int64_t smem_end;     /* highest byte used by shared.dyn buffers of the kernel */
  bool use_reduce, use_atomic;
  bool use_gemm;        /* tensor-core / async-copy helpers (tilescale/gemm.cuh) */
  bool use_gemm_sp;     /* T.gemm_sp's sparse tensor-core loop (tilescale/gemm_sp.cuh) */
  uint32_t wgmma_widths; /* bit w/8-1 for every wgmma width w issued (TS_WGMMA_N_LIST) */
  bool wgmma_any_width; /* a call the widths cannot be read from: gemm.cuh expands all */
  int device_flags;     /* union of the IRD_* flags of the device operations printed */
  const char *kernel_name;
  StrBuf *decls;        /* module-scope declarations printed before the kernel (workspaces) */
  PtrVec workspaces;    /* CgWorkspace* of the kernel being printed */
} Cg;

/* C operator precedence, higher binds tighter. */
enum {
  PREC_TERNARY = 3, PREC_LOR, PREC_LAND, PREC_BOR, PREC_BXOR, PREC_BAND, PREC_EQ, PREC_REL,
  PREC_SHIFT, PREC_ADD, PREC_MUL, PREC_UNARY, PREC_POSTFIX, PREC_PRIMARY
};

static void expr(Cg *g, StrBuf *sb, const IrExpr *e, int min_prec);

/* ---- types -------------------------------------------------------------------------- */

static int tbytes(ts_dtype t) {
  switch (t) {
  case TS_DTYPE_INT16: case TS_DTYPE_UINT16: case TS_DTYPE_FLOAT16: case TS_DTYPE_BFLOAT16: return 2;
  case TS_DTYPE_INT32: case TS_DTYPE_UINT32: case TS_DTYPE_FLOAT32: return 4;
  case TS_DTYPE_INT64: case TS_DTYPE_UINT64: case TS_DTYPE_FLOAT64: case TS_DTYPE_HANDLE: return 8;
  default: return 1;
  }
}

/* A 4-bit tensor in global or shared memory: two elements a byte, declared as its bytes
 * (uint8_t*) and read and written element by element through ts::ld4 / ts::st4. */
static bool packed_mem(const IrBuffer *b) {
  return dtype_is_packed(b->dtype) && (b->scope == IR_SCOPE_GLOBAL || b->scope == IR_SCOPE_SHARED ||
                                       b->scope == IR_SCOPE_SHARED_DYN);
}
static const char *mem_ctype(const IrBuffer *b) { return packed_mem(b) ? "uint8_t" : cg_ctype(b->dtype); }
/* Bytes of n elements of b as stored. */
static int64_t mem_bytes(const IrBuffer *b, int64_t n) {
  return packed_mem(b) ? dtype_storage_bytes(b->dtype, n) : n * tbytes(b->dtype);
}

static bool is_low_float(ts_dtype t) {
  return t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16 || t == TS_DTYPE_FLOAT8_E4M3 ||
         t == TS_DTYPE_FLOAT8_E5M2 || t == TS_DTYPE_FLOAT4_E2M1;
}
static bool is_floating(ts_dtype t) {
  return is_low_float(t) || t == TS_DTYPE_FLOAT32 || t == TS_DTYPE_FLOAT64;
}
static bool is_unsigned(ts_dtype t) {
  return t == TS_DTYPE_BOOL || t == TS_DTYPE_UINT8 || t == TS_DTYPE_UINT16 || t == TS_DTYPE_UINT32 ||
         t == TS_DTYPE_UINT64;
}
static bool is_integer(ts_dtype t) { return t >= TS_DTYPE_INT8 && t <= TS_DTYPE_UINT64; }

/* A type printed for the user's error message. */
static const char *tname(ts_dtype t) {
  const char *s = cg_ctype(t);
  return s ? s : "?";
}

/* ---- names -------------------------------------------------------------------------- */
/* C/C++ keywords and the identifiers generated code relies on: a user variable called
 * `threadIdx`, `half` or `expf` must not shadow them. */
static const char *const reserved_names[] = {
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
    "class", "const", "constexpr", "const_cast", "continue", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
    "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace",
    "new", "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public",
    "register", "reinterpret_cast", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "throw", "true",
    "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
    "volatile", "while", "xor", "restrict", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "warpSize", "ts", "ts_smem", "half", "half2", "uint4", "uint2", "dim3", "printf", "memcpy",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "expf", "exp2f", "exp10f", "logf", "log2f", "log10f", "log1pf", "sqrtf", "rsqrtf", "sinf",
    "cosf", "tanf", "tanhf", "erff", "powf", "fmodf", "floorf", "ceilf", "roundf", "truncf",
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
    "tan", "tanh", "erf", "pow", "fmod", "floor", "ceil", "round", "trunc", "fabsf", "fabs",
    "atomicAdd", "atomicMax", "atomicMin", "main"};

static bool is_reserved(const char *s) {
  for (int i = 0; i < TS_ARRAY_LEN(reserved_names); i++)
    if (!strcmp(s, reserved_names[i])) return true;
  /* Identifiers with a double underscore or _Capital are the implementation's. */
  return strstr(s, "__") != NULL || (s[0] == '_' && s[1] >= 'A' && s[1] <= 'Z');
}

/* Makes `base` a legal identifier not used yet in this kernel and marks it taken. */
static const char *fresh_name(Cg *g, const char *base) {
  Arena *a = g->c->arena;
  StrBuf sb = {0};
  for (const char *p = base && *base ? base : "v"; *p; p++) {
    char ch = *p;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    /* Collapse runs of '_' so that names from "a.b" never form a reserved "__". */
    if (!ok) ch = '_';
    if (ch == '_' && sb.len && sb.data[sb.len - 1] == '_') continue;
    if (!sb.len && ch >= '0' && ch <= '9') sb_putc(&sb, 'v');
    sb_putc(&sb, ch);
  }
  /* "_Xyz" is reserved whatever suffix follows, so it gets a letter in front; a name ending
   * in '_' takes its number without another '_' (no "__").  Otherwise the loop below never
   * found a free name (found by fuzzing: a function named "\xff\xffBLOCK..."). */
  if (sb.len >= 2 && sb.data[0] == '_' && sb.data[1] >= 'A' && sb.data[1] <= 'Z') {
    StrBuf pre = {0};
    sb_putc(&pre, 'v');
    sb_append(&pre, sb.data);
    sb_free(&sb);
    sb = pre;
  }
  const char *legal = arena_strdup(a, sb_str(&sb));
  bool ends_in_underscore = sb.len && sb.data[sb.len - 1] == '_';
  sb_free(&sb);
  const char *name = legal;
  for (int n = 1; is_reserved(name) || strmap_has(&g->used, name); n++)
    name = arena_printf(a, ends_in_underscore ? "%s%d" : "%s_%d", legal, n);
  strmap_put(a, &g->used, name, (void *)1);
  return name;
}

static const char *bind_name(Cg *g, const void *node, const char *base) {
  const char *n = fresh_name(g, base);
  pmap_put(g->c->arena, &g->names, node, (void *)n);
  return n;
}

static const char *var_name(Cg *g, const IrVar *v) {
  const char *n = pmap_get(&g->names, v);
  /* A use without a definition in scope: the verifier should have caught it; printing a
   * fresh name keeps the output inspectable and the C compiler reports it. */
  return n ? n : bind_name(g, v, v->name);
}

static const char *buf_name(Cg *g, const IrBuffer *b) {
  const char *n = pmap_get(&g->names, b);
  if (n) return n;
  if (b->param_index >= 0 && b->param_index < g->f->nparams && g->f->params[b->param_index].buf) {
    n = pmap_get(&g->names, g->f->params[b->param_index].buf);
    if (n) return n;
  }
  return bind_name(g, b, b->name);
}

/* ---- output helpers --------------------------------------------------------------- */
static void line_start(Cg *g) { sb_indent(g->out, g->indent); }

TS_PRINTF(2, 3) static void line(Cg *g, const char *fmt, ...) {
  va_list ap;
  line_start(g);
  va_start(ap, fmt);
  sb_vprintf(g->out, fmt, ap);
  va_end(ap);
  sb_putc(g->out, '\n');
}

static void c_string(StrBuf *sb, const char *s) {
  sb_putc(sb, '"');
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') { sb_putc(sb, '\\'); sb_putc(sb, (char)ch); }
    else if (ch == '\n') sb_append(sb, "\\n");
    else if (ch == '\t') sb_append(sb, "\\t");
    else if (ch < 32 || ch >= 127) sb_printf(sb, "\\%03o", ch);
    else sb_putc(sb, (char)ch);
  }
  sb_putc(sb, '"');
}

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
static bool nonneg(Cg *g, const IrExpr *e) { return ir_is_nonneg(e, var_nonneg, g); }

/* ---- expressions ------------------------------------------------------------------- */
static void open_paren(StrBuf *sb, int prec, int min_prec) {
  if (prec < min_prec) sb_putc(sb, '(');
}
static void close_paren(StrBuf *sb, int prec, int min_prec) {
  if (prec < min_prec) sb_putc(sb, ')');
}

/* Prints e converted to type t (no conversion when it already has it).  Builtin
 * arithmetic types use a C cast; half/bfloat16/fp8 need ts::cast. */
static void expr_as(Cg *g, StrBuf *sb, const IrExpr *e, ts_dtype t, int min_prec) {
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
static void flat_index(Cg *g, StrBuf *sb, const IrBuffer *b, IrExpr *const *idx, int nidx) {
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
static void access(Cg *g, StrBuf *sb, const IrBuffer *b, IrExpr *const *idx, int nidx, int lanes,
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
  if (dtype_is_packed(t)) {
    /* 4-bit arithmetic: computed in int (float for e2m1), then brought back to the 4-bit type
     * (integers wrap, floats round), as the IR's result type says. */
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
static void wgmma_width_list(StrBuf *src, uint32_t widths) {
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

static void address_of(Cg *g, StrBuf *sb, const IrExpr *ld) {
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
  access(g, sb, ld->u.load.buf, ld->u.load.idx, ld->u.load.nidx, 1, ld->loc);
}

/* T.print: one printf with a format built from the argument types. */
static void print_call(Cg *g, StrBuf *sb, const IrExpr *e) {
  StrBuf fmt = {0}, args = {0};
  for (int i = 0; i < e->u.call.nargs; i++) {
    const IrExpr *a = e->u.call.args[i];
    if (i) sb_putc(&fmt, ' ');
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

/* __shfl_xor_sync has overloads for these; other types go through ts::shfl_xor. */
static bool native_shfl(ts_dtype t) {
  return t == TS_DTYPE_INT32 || t == TS_DTYPE_UINT32 || t == TS_DTYPE_FLOAT32 || t == TS_DTYPE_FLOAT64 ||
         t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16;
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
     * bfloat16 (and anything else): computed in float and converted back. */
    ts_dtype t = e->dtype;
    if (t == TS_DTYPE_FLOAT64) {
      size_t n = strlen(info->cuda_f32);
      sb_printf(sb, "%.*s", (int)(n - 1), info->cuda_f32);
      args_list(g, sb, args, 0, nargs, t);
    } else if (t == TS_DTYPE_FLOAT32) {
      sb_append(sb, info->cuda_f32);
      args_list(g, sb, args, 0, nargs, t);
    } else {
      sb_printf(sb, "ts::cast<%s>(%s", tname(t), info->cuda_f32);
      args_list(g, sb, args, 0, nargs, TS_DTYPE_FLOAT32);
      sb_putc(sb, ')');
    }
    return;
  }
  switch (op) {
  case IRI_SIGMOID:
    if (e->dtype == TS_DTYPE_FLOAT32 || e->dtype == TS_DTYPE_FLOAT64) {
      sb_append(sb, "ts::sigmoid");
      args_list(g, sb, args, 0, 1, e->dtype);
    } else {
      sb_printf(sb, "ts::cast<%s>(ts::sigmoid", tname(e->dtype));
      args_list(g, sb, args, 0, 1, TS_DTYPE_FLOAT32);
      sb_putc(sb, ')');
    }
    return;
  case IRI_ABS:
    sb_append(sb, e->dtype == TS_DTYPE_FLOAT32 ? "fabsf" : e->dtype == TS_DTYPE_FLOAT64 ? "fabs" : "ts::abs");
    args_list(g, sb, args, 0, 1, e->dtype);
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
  case IRI_SHFL_XOR:
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
    return;
  case IRI_SYNCTHREADS: sb_append(sb, "__syncthreads()"); return;
  case IRI_SYNCWARP: sb_append(sb, "__syncwarp()"); return;
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

static void expr(Cg *g, StrBuf *sb, const IrExpr *e, int min_prec) {
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
    open_paren(sb, PREC_POSTFIX, min_prec);
    access(g, sb, e->u.load.buf, e->u.load.idx, e->u.load.nidx, e->lanes, e->loc);
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

/* ---- statements -------------------------------------------------------------------- */
static void stmt(Cg *g, const IrStmt *s);

static void block(Cg *g, const IrStmt *s) {
  g->indent++;
  if (s) stmt(g, s);
  g->indent--;
}

static bool expr_has_load(const IrExpr *e) {
  switch (e->kind) {
  case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return false;
  case IR_LOAD: return true;
  case IR_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (expr_has_load(e->u.call.args[i])) return true;
    return e->u.call.op >= IRI_SHFL_XOR; /* thread-level intrinsics have effects */
  default:
    for (int i = 0; i < ir_expr_nops[e->kind]; i++)
      if (expr_has_load(e->u.ops[i])) return true;
    return false;
  }
}

static void for_loop(Cg *g, const IrStmt *s) {
  IrForKind kind = s->u.loop.kind;
  if (kind == IR_FOR_PARALLEL || kind == IR_FOR_THREAD) {
    ts_error(g->c, s->loc, "internal error: %s loop reached codegen without being lowered to threads",
             ir_for_kind_names[kind]);
    return;
  }
  const IrVar *v = s->u.loop.var;
  const char *type = cg_ctype(v->dtype);
  if (!type || !is_integer(v->dtype)) type = "int";
  const char *name = bind_name(g, v, v->name);
  const IrExpr *min = s->u.loop.min, *ext = s->u.loop.extent;
  if (nonneg(g, min)) pmap_put(g->c->arena, &g->nonneg, v, (void *)1);
  int64_t m0;
  bool zero_min = ir_is_const_int(min, &m0) && m0 == 0;

  /* The bound is evaluated once in the IR; hoist it when it reads memory that the body
   * might change. */
  StrBuf bound = {0};
  if (expr_has_load(ext) || (!zero_min && expr_has_load(min))) {
    const char *end = fresh_name(g, arena_printf(g->c->arena, "%s_end", name));
    StrBuf tmp = {0};
    if (!zero_min) {
      expr_as(g, &tmp, min, v->dtype, PREC_ADD);
      sb_append(&tmp, " + ");
    }
    expr_as(g, &tmp, ext, v->dtype, PREC_ADD + 1);
    line(g, "const %s %s = %s;", type, end, sb_str(&tmp));
    sb_free(&tmp);
    sb_append(&bound, end);
  } else {
    if (!zero_min) {
      expr_as(g, &bound, min, v->dtype, PREC_ADD);
      sb_append(&bound, " + ");
      expr_as(g, &bound, ext, v->dtype, PREC_ADD + 1);
    } else {
      expr_as(g, &bound, ext, v->dtype, PREC_REL + 1);
    }
  }
  if (kind == IR_FOR_UNROLLED && s->u.loop.unroll_factor > 0) line(g, "#pragma unroll %d", s->u.loop.unroll_factor);
  else if (kind == IR_FOR_UNROLLED || kind == IR_FOR_VECTORIZED) line(g, "#pragma unroll");
  StrBuf init = {0};
  expr_as(g, &init, min, v->dtype, 0);
  line(g, "for (%s %s = %s; %s < %s; ++%s) {", type, name, sb_str(&init), name, sb_str(&bound), name);
  sb_free(&init);
  sb_free(&bound);
  block(g, s->u.loop.body);
  line(g, "}");
}

/* `FN<bytes>(&dst, &src[, pred]);` for the vector store st (cp.async, global -> shared). */
static void async_copy(Cg *g, const char *fn, int bytes, const IrStmt *st, const IrExpr *src, const IrExpr *pred) {
  g->use_gemm = true;
  line_start(g);
  sb_printf(g->out, "%s<%d>(", fn, bytes);
  address_of(g, g->out, &(IrExpr){.kind = IR_LOAD, .lanes = 1, .loc = st->loc,
                                  .u.load = {st->u.store.buf, st->u.store.idx, st->u.store.nidx}});
  sb_append(g->out, ", ");
  address_of(g, g->out, src);
  if (pred) {
    sb_append(g->out, ", ");
    expr_as(g, g->out, pred, TS_DTYPE_BOOL, 0);
  }
  sb_append(g->out, ");\n");
}

/* A SEQ of one statement: that statement; else s. */
static const IrStmt *lone_stmt(const IrStmt *s) {
  return s && s->kind == IR_S_SEQ && s->u.seq.n == 1 ? s->u.seq.items[0] : s;
}

/* Is `e` (the IF's else branch) the unrolled zero fill of `lanes` elements of buffer b? */
static bool is_zero_fill(const IrStmt *e, const IrBuffer *b, int lanes) {
  int64_t ext = 0;
  e = lone_stmt(e);
  if (!e || e->kind != IR_S_FOR || e->u.loop.kind != IR_FOR_UNROLLED || !ir_is_const_int(e->u.loop.extent, &ext) ||
      ext != lanes)
    return false;
  const IrStmt *z = lone_stmt(e->u.loop.body);
  if (!z || z->kind != IR_S_STORE || z->u.store.buf != b || z->u.store.lanes != 1) return false;
  const IrExpr *v = z->u.store.value;
  return (v->kind == IR_INT && v->u.ival == 0) || (v->kind == IR_FLOAT && v->u.fval == 0.0);
}

/* An IF marked zfill (lower_vector_copy: a cp.async vector copy under a condition, the zero
 * fill of its destination otherwise) as one ts::cp_async_zfill: a source size of 0 where the
 * condition fails writes the zeros, without a branch (a guarded 64x64 + 64x128 tile copy took
 * 141 registers with the branches, 64 without).  False when the branch no longer has that
 * shape. */
static bool zfill_copy(Cg *g, const IrStmt *s) {
  const IrStmt *t = lone_stmt(s->u.if_.then_s);
  if (!s->u.if_.zfill || !t || t->kind != IR_S_STORE || !t->u.store.async_) return false;
  const IrExpr *src = t->u.store.value;
  int lanes = t->u.store.lanes, bytes = lanes * tbytes(t->u.store.buf->dtype);
  if (src->kind != IR_LOAD || src->lanes != lanes || (bytes != 4 && bytes != 8 && bytes != 16) ||
      !is_zero_fill(s->u.if_.else_s, t->u.store.buf, lanes))
    return false;
  async_copy(g, "ts::cp_async_zfill", bytes, t, src, s->u.if_.cond);
  return true;
}

static void if_stmt(Cg *g, const IrStmt *s, bool chained) {
  if (!chained && zfill_copy(g, s)) return;
  StrBuf cond = {0};
  expr_as(g, &cond, s->u.if_.cond, TS_DTYPE_BOOL, 0);
  if (chained) sb_printf(g->out, "if (%s) {\n", sb_str(&cond));
  else line(g, "if (%s) {", sb_str(&cond));
  sb_free(&cond);
  block(g, s->u.if_.then_s);
  const IrStmt *e = lone_stmt(s->u.if_.else_s);
  if (e && e->kind == IR_S_IF) {
    line_start(g);
    sb_append(g->out, "} else ");
    if_stmt(g, e, true);
    return;
  }
  if (e) {
    line(g, "} else {");
    block(g, e);
  }
  line(g, "}");
}

/* Largest power of two <= 16 that divides the byte size: register arrays and static
 * shared arrays are aligned so the vector copies the lowering chose are legal. */
static int array_align(int64_t bytes) {
  int a = 16;
  while (a > 1 && bytes % a) a /= 2;
  return a;
}

static void alloc(Cg *g, const IrStmt *s) {
  const IrBuffer *b = s->u.alloc.buf;
  const char *type = mem_ctype(b);
  if (!type || b->dtype == TS_DTYPE_VOID) {
    ts_error(g->c, s->loc, "buffer '%s' has no CUDA element type", b->name);
    return;
  }
  const char *name = bind_name(g, b, b->name);
  int64_t numel = ir_buffer_numel(b);
  if (b->alias_of && b->scope != IR_SCOPE_VAR) {
    /* A view (T.view / reshape) reuses the memory of the buffer it aliases. */
    line(g, "%s* %s = reinterpret_cast<%s*>(%s);", type, name, type, buf_name(g, b->alias_of));
    return;
  }
  if (b->data) {
    /* T.make_tensor: a typed view of a loaded 64-bit address, read once here. */
    StrBuf addr = {0};
    expr(g, &addr, b->data, 0);
    line(g, "%s* __restrict__ %s = reinterpret_cast<%s*>(%s);", type, name, type, sb_str(&addr));
    sb_free(&addr);
    return;
  }
  switch (b->scope) {
  case IR_SCOPE_SHARED_DYN: {
    if (b->smem_offset < 0) {
      ts_error(g->c, s->loc, "internal error: shared buffer '%s' has no offset (merge_shared_memory did not run)",
               b->name);
      return;
    }
    if (numel > 0 && b->smem_offset + mem_bytes(b, numel) > g->smem_end)
      g->smem_end = b->smem_offset + mem_bytes(b, numel);
    line(g, "%s* %s = reinterpret_cast<%s*>(ts_smem + %lld);", type, name, type, (long long)b->smem_offset);
    return;
  }
  case IR_SCOPE_SHARED:
  case IR_SCOPE_BARRIER:
    if (numel <= 0) {
      ts_error(g->c, s->loc, "shared buffer '%s' needs a constant size", b->name);
      return;
    }
    if (b->scope == IR_SCOPE_BARRIER) line(g, "__shared__ __align__(8) uint64_t %s[%lld];", name, (long long)numel);
    else line(g, "__shared__ __align__(%d) %s %s[%lld];", array_align(mem_bytes(b, numel)), type, name,
              (long long)(packed_mem(b) ? mem_bytes(b, numel) : numel));
    return;
  case IR_SCOPE_LOCAL:
  case IR_SCOPE_FRAGMENT: {
    int64_t n = b->local_size > 0 ? b->local_size : numel;
    if (numel == 0 && b->scope == IR_SCOPE_LOCAL) return; /* T.alloc_local(0, ...): no storage (access() refuses one) */
    if (n <= 0) {
      ts_error(g->c, s->loc, "internal error: register buffer '%s' has no per-thread size", b->name);
      return;
    }
    line(g, "__align__(%d) %s %s[%lld];", array_align(n * tbytes(b->dtype)), type, name, (long long)n);
    return;
  }
  case IR_SCOPE_VAR: {
    StrBuf init = {0};
    if (b->init) {
      expr_as(g, &init, b->init, b->dtype, 0);
    } else {
      IrExpr zero = {.kind = is_floating(b->dtype) ? IR_FLOAT : IR_INT, .dtype = b->dtype, .lanes = 1};
      expr(g, &init, &zero, 0);
    }
    line(g, "%s %s = %s;", type, name, sb_str(&init));
    sb_free(&init);
    return;
  }
  case IR_SCOPE_GLOBAL: {
    /* T.alloc_global: static storage of the module, not a local array (an atomic through a
     * generic pointer into local memory is undefined, and every thread would have its own
     * copy).  C linkage keeps the symbol findable by cuModuleGetGlobal; the runtime zeroes
     * it before each launch (CgWorkspace).  The kernel sees it through a pointer of the
     * buffer's name, so accesses print like any other global buffer. */
    if (numel <= 0) {
      ts_error(g->c, s->loc, "workspace '%s' needs a constant size", b->name);
      return;
    }
    const char *sym = fresh_name(g, arena_printf(g->c->arena, "%s_ws_%s", g->kernel_name, name));
    int64_t bytes = mem_bytes(b, numel);
    sb_printf(g->decls, "extern \"C\" {\n__device__ __align__(16) %s %s[%lld];\n}\n", type, sym,
              (long long)(packed_mem(b) ? bytes : numel));
    CgWorkspace *w = ARENA_NEW(g->c->arena, CgWorkspace);
    w->symbol = sym;
    w->bytes = bytes;
    vec_push(g->c->arena, &g->workspaces, w);
    line(g, "%s* %s = %s;", type, name, sym);
    return;
  }
  default: ts_unreachable(); /* every scope is a case above */
  }
}

/* STORE of V lanes (or an asynchronous one of one lane): a contiguous copy (possibly with one conversion) becomes
 * ts::copy_vec<V>; any other vector value is printed element by element under
 * `#pragma unroll`, every V-lane load reading element [flat + lane]. */
static void vector_store(Cg *g, const IrStmt *s) {
  int lanes = s->u.store.lanes;
  if (packed_mem(s->u.store.buf))
    ts_error(g->c, s->loc, "internal error: vector store to the 4-bit tensor '%s'", s->u.store.buf->name);
  const IrExpr *v = s->u.store.value, *src = v;
  if (src->kind == IR_CAST) src = src->u.ops[0];
  if (s->u.store.async_ && v == src && src->kind == IR_LOAD && src->lanes == lanes) {
    /* global -> shared without conversion, completed by the pipeline's cp.async waits */
    async_copy(g, "ts::cp_async", lanes * tbytes(s->u.store.buf->dtype), s, src, NULL);
    return;
  }
  if (src->kind == IR_LOAD && src->lanes == lanes && src->u.load.buf->scope != IR_SCOPE_VAR &&
      s->u.store.buf->scope != IR_SCOPE_VAR && (v == src || v->dtype == s->u.store.buf->dtype)) {
    line_start(g);
    sb_printf(g->out, "ts::copy_vec<%d>(", lanes);
    address_of(g, g->out, &(IrExpr){.kind = IR_LOAD, .lanes = 1, .loc = s->loc,
                                    .u.load = {s->u.store.buf, s->u.store.idx, s->u.store.nidx}});
    sb_append(g->out, ", ");
    address_of(g, g->out, src);
    sb_append(g->out, ");\n");
    return;
  }
  const char *lane = fresh_name(g, "vec");
  line(g, "#pragma unroll");
  line(g, "for (int %s = 0; %s < %d; ++%s) {", lane, lane, lanes, lane);
  g->indent++;
  g->lane = lane;
  line_start(g);
  access(g, g->out, s->u.store.buf, s->u.store.idx, s->u.store.nidx, lanes, s->loc);
  sb_append(g->out, " = ");
  expr_as(g, g->out, v, s->u.store.buf->dtype, 0);
  sb_append(g->out, ";\n");
  g->lane = NULL;
  g->indent--;
  line(g, "}");
}

static void stmt(Cg *g, const IrStmt *s) {
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) stmt(g, s->u.seq.items[i]);
    return;
  case IR_S_FOR: for_loop(g, s); return;
  case IR_S_IF: if_stmt(g, s, false); return;
  case IR_S_WHILE: {
    StrBuf cond = {0};
    expr_as(g, &cond, s->u.while_.cond, TS_DTYPE_BOOL, 0);
    line(g, "while (%s) {", sb_str(&cond));
    sb_free(&cond);
    block(g, s->u.while_.body);
    line(g, "}");
    return;
  }
  case IR_S_LET: {
    const IrVar *v = s->u.let.var;
    const char *type = cg_ctype(v->dtype);
    if (!type || v->dtype == TS_DTYPE_VOID) {
      ts_error(g->c, s->loc, "'%s' has a type CUDA cannot hold", v->name);
      return;
    }
    StrBuf val = {0};
    expr_as(g, &val, s->u.let.value, v->dtype, 0);
    if (nonneg(g, s->u.let.value)) pmap_put(g->c->arena, &g->nonneg, v, (void *)1);
    line(g, "const %s %s = %s;", type, bind_name(g, v, v->name), sb_str(&val));
    sb_free(&val);
    return;
  }
  case IR_S_STORE: {
    if (s->u.store.lanes > 1 || s->u.store.async_) { /* (a 4- or 8-byte element may be a cp.async) */
      vector_store(g, s);
      return;
    }
    line_start(g);
    if (packed_mem(s->u.store.buf)) { /* ts::st4(bytes, i, value) */
      sb_printf(g->out, "ts::st4<%s>(%s, ", cg_ctype(s->u.store.buf->dtype), buf_name(g, s->u.store.buf));
      flat_index(g, g->out, s->u.store.buf, s->u.store.idx, s->u.store.nidx);
      sb_append(g->out, ", ");
      expr_as(g, g->out, s->u.store.value, s->u.store.buf->dtype, 0);
      sb_append(g->out, ");\n");
      return;
    }
    access(g, g->out, s->u.store.buf, s->u.store.idx, s->u.store.nidx, 1, s->loc);
    sb_append(g->out, " = ");
    expr_as(g, g->out, s->u.store.value, s->u.store.buf->dtype, 0);
    sb_append(g->out, ";\n");
    return;
  }
  case IR_S_ALLOC: alloc(g, s); return;
  case IR_S_EVAL:
    line_start(g);
    expr(g, g->out, s->u.eval.value, 0);
    sb_append(g->out, ";\n");
    return;
  case IR_S_BREAK: line(g, "break;"); return;
  case IR_S_CONTINUE: line(g, "continue;"); return;
  case IR_S_RETURN: line(g, "return;"); return; /* pass thread_return_* checked what follows */
  case IR_S_ASSERT: {
    StrBuf cond = {0}, msg = {0}, where = {0};
    expr_as(g, &cond, s->u.assert_.cond, TS_DTYPE_BOOL, PREC_UNARY);
    c_string(&msg, s->u.assert_.msg ? s->u.assert_.msg : "assertion");
    c_string(&where, arena_printf(g->c->arena, "%s:%d:%d", s->loc.file ? s->loc.file->name : "?", s->loc.line,
                                  s->loc.col));
    line(g, "if (!%s) ts::assert_fail(%s, %s);", sb_str(&cond), sb_str(&msg), sb_str(&where));
    sb_free(&cond);
    sb_free(&msg);
    sb_free(&where);
    return;
  }
  case IR_S_KERNEL:
    ts_error(g->c, s->loc, "a T.Kernel inside another T.Kernel is not supported");
    return;
  case IR_S_UNSUPPORTED:
    ts_error(g->c, s->loc, "%s is not supported yet", s->u.unsupported.what ? s->u.unsupported.what : "this construct");
    return;
  default:
    ts_error(g->c, s->loc, "internal error: tile operation '%s' reached codegen without being lowered",
             ir_stmt_names[s->kind]);
    return;
  }
}

/* ---- kernels ------------------------------------------------------------------------ */
static bool has_dyn_smem(const IrStmt *s) {
  if (!s) return false;
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (has_dyn_smem(s->u.seq.items[i])) return true;
    return false;
  case IR_S_FOR: return has_dyn_smem(s->u.loop.body);
  case IR_S_WHILE: return has_dyn_smem(s->u.while_.body);
  case IR_S_IF: return has_dyn_smem(s->u.if_.then_s) || has_dyn_smem(s->u.if_.else_s);
  case IR_S_ALLOC: return s->u.alloc.buf->scope == IR_SCOPE_SHARED_DYN && !s->u.alloc.buf->alias_of;
  default: return false;
  }
}

static bool has_swizzled_smem(const IrStmt *s) {
  if (!s) return false;
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (has_swizzled_smem(s->u.seq.items[i])) return true;
    return false;
  case IR_S_FOR: return has_swizzled_smem(s->u.loop.body);
  case IR_S_WHILE: return has_swizzled_smem(s->u.while_.body);
  case IR_S_IF: return has_swizzled_smem(s->u.if_.then_s) || has_swizzled_smem(s->u.if_.else_s);
  case IR_S_ALLOC:
    return s->u.alloc.buf->scope == IR_SCOPE_SHARED_DYN && s->u.alloc.buf->layout != NULL &&
           s->u.alloc.buf->layout->swizzle; /* a pinned linear layout needs no 1024-byte alignment */
  default: return false;
  }
}

/* Binds the kernel's parameter names in ABI order and prints the parameter list. */
static void params(Cg *g, StrBuf *sig) {
  const IrFunc *f = g->f;
  bool first = true;
  for (int i = 0; i < f->nparams; i++) {
    const IrParam *p = &f->params[i];
    if (!first) sb_append(sig, ", ");
    first = false;
    if (p->buf) {
      const char *type = mem_ctype(p->buf);
      sb_printf(sig, "%s* __restrict__ %s", type ? type : "void",
                bind_name(g, p->buf, p->name ? p->name : p->buf->name));
    } else if (p->var) {
      const char *type = cg_ctype(p->var->dtype);
      if (!type || p->var->dtype == TS_DTYPE_VOID) {
        ts_error(g->c, p->var->loc, "parameter '%s' has a type CUDA cannot pass", p->var->name);
        type = "int";
      }
      sb_printf(sig, "%s %s", type, bind_name(g, p->var, p->name ? p->name : p->var->name));
    } else {
      ts_error(g->c, f->loc, "internal error: parameter %d is neither a tensor nor a scalar", i);
    }
  }
  for (int i = 0; i < f->ndyn; i++) {
    if (!first) sb_append(sig, ", ");
    first = false;
    sb_printf(sig, "int64_t %s", bind_name(g, f->dyn_vars[i], f->dyn_vars[i]->name));
  }
  /* TMA tensor maps last: TMA reads them from the kernel's parameter space, which is why
   * they are passed by value and __grid_constant__ (their address is taken). */
  for (int i = 0; i < f->ntma; i++) {
    if (!first) sb_append(sig, ", ");
    first = false;
    sb_printf(sig, "const __grid_constant__ ts::TmaDesc %s", bind_name(g, f->tma_maps[i].var, f->tma_maps[i].var->name));
  }
}

/* A T.alloc_global made in the prim_func outside its kernels: one module symbol that every
 * kernel of the function using it points at.  The first kernel that uses it declares it
 * (and has it zeroed before its launch); later ones read what earlier ones wrote. */
typedef struct FnWorkspace {
  const IrStmt *alloc;
  const char *symbol; /* NULL until a kernel declared it */
} FnWorkspace;

typedef struct BufUse { const IrBuffer *b; bool found; } BufUse;
static bool is_memory_of(const IrBuffer *x, const IrBuffer *b) {
  for (int guard = 0; x && guard < 64; guard++, x = x->alias_of)
    if (x == b) return true;
  return false;
}
static void use_stmt(IrStmt *s, void *ctx) {
  BufUse *u = ctx;
  if ((s->kind == IR_S_STORE && is_memory_of(s->u.store.buf, u->b)) ||
      (s->kind == IR_S_ALLOC && s->u.alloc.buf != u->b && is_memory_of(s->u.alloc.buf, u->b)))
    u->found = true;
}
static void use_expr(IrExpr *e, void *ctx) {
  BufUse *u = ctx;
  if (e->kind == IR_LOAD && is_memory_of(e->u.load.buf, u->b)) u->found = true;
}

/* Points the kernel at the function-level workspaces its body uses. */
static void function_workspaces(Cg *g, const IrKernel *k, const PtrVec *fn_ws) {
  for (int i = 0; i < fn_ws->len; i++) {
    FnWorkspace *w = fn_ws->items[i];
    const IrBuffer *b = w->alloc->u.alloc.buf;
    BufUse u = {b, false};
    IrVisitor v = {use_stmt, use_expr, &u};
    if (k->body) ir_visit(k->body, &v);
    if (!u.found) continue;
    if (w->symbol) {
      line(g, "%s* %s = %s;", mem_ctype(b), bind_name(g, b, b->name), w->symbol);
      continue;
    }
    int before = g->workspaces.len;
    stmt(g, w->alloc); /* declares the symbol; zeroed before this kernel's launch */
    if (g->workspaces.len > before) w->symbol = ((CgWorkspace *)g->workspaces.items[before])->symbol;
  }
}

static void kernel(Cg *g, const IrKernel *k, const PtrVec *host_lets, const PtrVec *fn_ws, const char *name,
                   StrBuf *src, CgKernelInfo *info) {
  Arena *a = g->c->arena;
  g->names = (PtrMap){0};
  g->used = (StrMap){0};
  g->nonneg = (PtrMap){0};
  g->smem_end = 0;
  g->kernel_name = name;
  g->workspaces = (PtrVec){0};
  StrBuf decls = {0};
  g->decls = &decls;
  strmap_put(a, &g->used, name, (void *)1);

  StrBuf sig = {0}, body = {0};
  params(g, &sig);
  g->out = &body;
  g->indent = 1;
  if (k->smem_bytes > 0 || has_dyn_smem(k->body))
    /* Swizzled tiles XOR address bits 4..9 (as TMA and wgmma do), so they start on 1 KB. */
    line(g, "extern __shared__ __align__(%d) unsigned char ts_smem[];", has_swizzled_smem(k->body) ? 1024 : 128);
  /* Host-side lets before this kernel (shapes derived from dynamic dims, ...) are
   * recomputed on the device: they only read parameters. */
  for (int i = 0; i < host_lets->len; i++) stmt(g, host_lets->items[i]);
  function_workspaces(g, k, fn_ws);
  if (k->body) stmt(g, k->body);

  int nthreads = 1;
  for (int d = 0; d < 3; d++) {
    info->grid[d] = k->grid[d];
    info->block[d] = k->threads[d] > 0 ? k->threads[d] : 1;
    if (d == 0) info->block[0] += k->producer_threads; /* warp_specialize's producer warpgroup */
    nthreads *= info->block[d];
  }
  info->name = name;
  info->cluster_x = k->cluster_x;
  info->persistent = k->persistent;
  info->smem_bytes = k->smem_bytes > g->smem_end ? k->smem_bytes : g->smem_end;
  info->nworkspaces = g->workspaces.len;
  info->workspaces = ARENA_ARRAY(a, CgWorkspace, g->workspaces.len > 0 ? g->workspaces.len : 1);
  for (int i = 0; i < g->workspaces.len; i++) info->workspaces[i] = *(CgWorkspace *)g->workspaces.items[i];

  /* setmaxnreg needs a register cap at entry: one block per SM gives every thread
   * 64K / nthreads registers, which the warpgroups then trade. */
  /* A thread-block cluster (TMA multicast between its blocks) is fixed at compile time, so
   * a plain launch suffices: the runtime's grid is a multiple of it (warp_specialize). */
  /* T.Kernel(prelude=...): C++ the kernel calls (device functions, templates), at file scope */
  if (k->prelude) sb_printf(src, "\n%s\n", k->prelude);
  if (decls.len) sb_printf(src, "\n%s", sb_str(&decls));
  sb_free(&decls);
  g->decls = NULL;
  char cluster[48] = "";
  if (k->cluster_x > 1) snprintf(cluster, sizeof cluster, "__cluster_dims__(%d, 1, 1) ", k->cluster_x);
  int min_blocks = k->producer_threads ? 1 : k->min_blocks;
  if (min_blocks > 0)
    sb_printf(src, "\nextern \"C\" __global__ void %s__launch_bounds__(%d, %d) %s(%s) {\n", cluster, nthreads, min_blocks,
              name, sb_str(&sig));
  else
    sb_printf(src, "\nextern \"C\" __global__ void %s__launch_bounds__(%d) %s(%s) {\n", cluster, nthreads, name,
              sb_str(&sig));
  sb_append(src, sb_str(&body));
  sb_append(src, "}\n");
  sb_free(&sig);
  sb_free(&body);
}

bool cg_cuda(TsCompiler *c, const IrFunc *f, CgOutput *out) {
  Arena *a = c->arena;
  int errors0 = c->diag.errors;
  Cg g = {.c = c, .f = f};
  *out = (CgOutput){0};

  /* The function body: KERNEL statements, with host lets in between. */
  PtrVec items = {0}, kernels = {0}, host_lets = {0}, fn_ws = {0};
  if (f->body && f->body->kind == IR_S_SEQ) {
    for (int i = 0; i < f->body->u.seq.n; i++) vec_push(a, &items, f->body->u.seq.items[i]);
  } else if (f->body) {
    vec_push(a, &items, f->body);
  }
  for (int i = 0; i < items.len; i++) {
    const IrStmt *s = items.items[i];
    if (s->kind == IR_S_KERNEL) vec_push(a, &kernels, (void *)s);
  }
  if (!kernels.len) {
    ts_error(c, f->loc, "'%s' launches no kernel (no T.Kernel block)", f->name);
    return false;
  }

  /* The kernel symbol: the function's name made a legal identifier. */
  Cg namer = {.c = c, .f = f};
  const char *base = fresh_name(&namer, arena_printf(a, "%s_kernel", f->name ? f->name : "main"));

  StrBuf src = {0}, kernels_src = {0};
  out->kernels = ARENA_ARRAY(a, CgKernelInfo, kernels.len);
  out->nkernels = kernels.len;
  int ki = 0;
  for (int i = 0; i < items.len; i++) {
    const IrStmt *s = items.items[i];
    if (s->kind == IR_S_LET) {
      vec_push(a, &host_lets, (void *)s);
    } else if (s->kind == IR_S_ALLOC && s->u.alloc.buf->scope == IR_SCOPE_GLOBAL && !s->u.alloc.buf->alias_of &&
               !s->u.alloc.buf->data) {
      FnWorkspace *w = ARENA_NEW(a, FnWorkspace);
      w->alloc = s;
      vec_push(a, &fn_ws, w);
    } else if (s->kind == IR_S_KERNEL) {
      const char *name = kernels.len == 1 ? base : arena_printf(a, "%s_%d", base, ki);
      kernel(&g, &s->u.kernel, &host_lets, &fn_ws, name, &kernels_src, &out->kernels[ki]);
      ki++;
    } else if (s->kind != IR_S_SEQ || s->u.seq.n) {
      ts_error(c, s->loc, "only kernels and constants may appear outside T.Kernel (found '%s')",
               ir_stmt_names[s->kind]);
    }
  }

  sb_printf(&src, "// Generated by TileScale-C from '%s'.\n", f->name ? f->name : "?");
  sb_append(&src, "#include <tilescale/common.cuh>\n");
  if (g.use_reduce) sb_append(&src, "#include <tilescale/reduce.cuh>\n");
  if (g.use_atomic) sb_append(&src, "#include <tilescale/atomic.cuh>\n");
  if (g.use_gemm || f->ntma) {
    if (!g.wgmma_any_width && !f->nimports) wgmma_width_list(&src, g.wgmma_widths);
    sb_append(&src, "#include <tilescale/gemm.cuh>\n");
  }
  if (g.use_gemm_sp) sb_append(&src, "#include <tilescale/gemm_sp.cuh>\n");
  for (int i = 0; i < f->nimports; i++) /* T.import_source: the user's device code, verbatim */
    sb_printf(&src, "\n// T.import_source\n%s\n", f->imports[i]);
  sb_append(&src, sb_str(&kernels_src));
  out->source = arena_strdup(a, sb_str(&src));
  out->uses_dist = g.device_flags & IRD_DIST;
  out->uses_shmem = g.device_flags & IRD_SHMEM;
  out->cooperative = g.device_flags & IRD_GRID_SYNC;
  sb_free(&src);
  sb_free(&kernels_src);
  return c->diag.errors == errors0;
}
