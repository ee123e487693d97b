/* cuda_names.c — the CUDA printer's bookkeeping: the pointer map, C types of IR dtypes,
 * legal unique C names for the user's variables and buffers, and the output helpers. */
#include "cuda_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t ptr_hash(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

void *pmap_get(const PtrMap *m, const void *key) {
  if (!m->cap) return NULL;
  for (int i = (int)(ptr_hash(key) & (uint64_t)(m->cap - 1));; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return NULL;
    if (m->keys[i] == key) return m->vals[i];
  }
}

void pmap_put(Arena *a, PtrMap *m, const void *key, void *val) {
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

/* ---- types -------------------------------------------------------------------------- */

int tbytes(ts_dtype t) {
  switch (t) {
  case TS_DTYPE_INT16: case TS_DTYPE_UINT16: case TS_DTYPE_FLOAT16: case TS_DTYPE_BFLOAT16: return 2;
  case TS_DTYPE_INT32: case TS_DTYPE_UINT32: case TS_DTYPE_FLOAT32: return 4;
  case TS_DTYPE_INT64: case TS_DTYPE_UINT64: case TS_DTYPE_FLOAT64: case TS_DTYPE_HANDLE: return 8;
  default: return 1;
  }
}

/* A 4-bit tensor in global or shared memory: two elements a byte, declared as its bytes
 * (uint8_t*) and read and written element by element through ts::ld4 / ts::st4. */
bool packed_mem(const IrBuffer *b) {
  return dtype_is_packed(b->dtype) && (b->scope == IR_SCOPE_GLOBAL || b->scope == IR_SCOPE_SHARED ||
                                       b->scope == IR_SCOPE_SHARED_DYN);
}
const char *mem_ctype(const IrBuffer *b) { return packed_mem(b) ? "uint8_t" : cg_ctype(b->dtype); }
/* Bytes of n elements of b as stored. */
int64_t mem_bytes(const IrBuffer *b, int64_t n) {
  return packed_mem(b) ? dtype_storage_bytes(b->dtype, n) : n * tbytes(b->dtype);
}

bool is_low_float(ts_dtype t) {
  return t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16 || t == TS_DTYPE_FLOAT8_E4M3 ||
         t == TS_DTYPE_FLOAT8_E5M2 || t == TS_DTYPE_FLOAT4_E2M1;
}
bool is_floating(ts_dtype t) {
  return is_low_float(t) || t == TS_DTYPE_FLOAT32 || t == TS_DTYPE_FLOAT64;
}
bool is_unsigned(ts_dtype t) {
  return t == TS_DTYPE_BOOL || t == TS_DTYPE_UINT8 || t == TS_DTYPE_UINT16 || t == TS_DTYPE_UINT32 ||
         t == TS_DTYPE_UINT64;
}
bool is_integer(ts_dtype t) { return t >= TS_DTYPE_INT8 && t <= TS_DTYPE_UINT64; }

/* A type printed for the user's error message. */
const char *tname(ts_dtype t) {
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
    "sinhf", "coshf", "asinf", "acosf", "atanf", "asinhf", "acoshf", "atanhf", "atan2f", "hypotf",
    "copysignf", "nextafterf", "ldexpf", "nearbyintf", "sinh", "cosh", "asin", "acos", "atan",
    "asinh", "acosh", "atanh", "atan2", "hypot", "copysign", "nextafter", "ldexp", "nearbyint",
    "atomicAdd", "atomicMax", "atomicMin", "main"};

static bool is_reserved(const char *s) {
  for (int i = 0; i < TS_ARRAY_LEN(reserved_names); i++)
    if (!strcmp(s, reserved_names[i])) return true;
  /* Identifiers with a double underscore or _Capital are the implementation's. */
  return strstr(s, "__") != NULL || (s[0] == '_' && s[1] >= 'A' && s[1] <= 'Z');
}

/* Makes `base` a legal identifier not used yet in this kernel and marks it taken. */
const char *fresh_name(Cg *g, const char *base) {
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

const char *bind_name(Cg *g, const void *node, const char *base) {
  const char *n = fresh_name(g, base);
  pmap_put(g->c->arena, &g->names, node, (void *)n);
  return n;
}

const char *var_name(Cg *g, const IrVar *v) {
  const char *n = pmap_get(&g->names, v);
  /* A use without a definition in scope: the verifier should have caught it; printing a
   * fresh name keeps the output inspectable and the C compiler reports it. */
  return n ? n : bind_name(g, v, v->name);
}

const char *buf_name(Cg *g, const IrBuffer *b) {
  const char *n = pmap_get(&g->names, b);
  if (n) return n;
  if (b->param_index >= 0 && b->param_index < g->f->nparams && g->f->params[b->param_index].buf) {
    n = pmap_get(&g->names, g->f->params[b->param_index].buf);
    if (n) return n;
  }
  return bind_name(g, b, b->name);
}

/* ---- output helpers --------------------------------------------------------------- */
void line_start(Cg *g) { sb_indent(g->out, g->indent); }

TS_PRINTF(2, 3) void line(Cg *g, const char *fmt, ...) {
  va_list ap;
  line_start(g);
  va_start(ap, fmt);
  sb_vprintf(g->out, fmt, ap);
  va_end(ap);
  sb_putc(g->out, '\n');
}

void c_string(StrBuf *sb, const char *s) {
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

