/* dtype.c — element types: sizes, names as TileLang spells them, CUDA spellings.
 * Shared by the front end (parsing `T.float16`, "bfloat16"), codegen and runtime. */
#include <string.h>

#include "ir.h"

typedef struct DtypeInfo {
  const char *name;  /* TileLang / torch spelling */
  const char *cuda;  /* type name in generated CUDA */
  int bits;
  char cls;          /* 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'h' handle, 'v' void */
} DtypeInfo;

static const DtypeInfo infos[TS_DTYPE_COUNT] = {
    [TS_DTYPE_VOID] = {"void", "void", 0, 'v'},
    [TS_DTYPE_BOOL] = {"bool", "bool", 8, 'b'},
    [TS_DTYPE_INT8] = {"int8", "signed char", 8, 'i'},
    [TS_DTYPE_INT16] = {"int16", "short", 16, 'i'},
    [TS_DTYPE_INT32] = {"int32", "int", 32, 'i'},
    [TS_DTYPE_INT64] = {"int64", "long long", 64, 'i'},
    [TS_DTYPE_UINT8] = {"uint8", "unsigned char", 8, 'u'},
    [TS_DTYPE_UINT16] = {"uint16", "unsigned short", 16, 'u'},
    [TS_DTYPE_UINT32] = {"uint32", "unsigned int", 32, 'u'},
    [TS_DTYPE_UINT64] = {"uint64", "unsigned long long", 64, 'u'},
    [TS_DTYPE_FLOAT16] = {"float16", "half", 16, 'f'},
    [TS_DTYPE_BFLOAT16] = {"bfloat16", "__nv_bfloat16", 16, 'f'},
    [TS_DTYPE_FLOAT32] = {"float32", "float", 32, 'f'},
    [TS_DTYPE_FLOAT64] = {"float64", "double", 64, 'f'},
    [TS_DTYPE_FLOAT8_E4M3] = {"float8_e4m3", "__nv_fp8_e4m3", 8, 'f'},
    [TS_DTYPE_FLOAT8_E5M2] = {"float8_e5m2", "__nv_fp8_e5m2", 8, 'f'},
    /* 4-bit types: two a byte in memory (bytes here); one a byte in registers, in the
     * device library's own register types (codegen's cg_ctype spells those). */
    [TS_DTYPE_INT4] = {"int4", "unsigned char", 4, 'i'},
    [TS_DTYPE_UINT4] = {"uint4", "unsigned char", 4, 'u'},
    [TS_DTYPE_FLOAT4_E2M1] = {"float4_e2m1fn", "unsigned char", 4, 'f'},
    [TS_DTYPE_HANDLE] = {"handle", "void*", 64, 'h'},
};

int dtype_bits(ts_dtype t) { return t < TS_DTYPE_COUNT ? infos[t].bits : 0; }
int dtype_bytes(ts_dtype t) { int b = dtype_bits(t) / 8; return b ? b : 1; }
bool dtype_is_packed(ts_dtype t) { return t < TS_DTYPE_COUNT && infos[t].bits > 0 && infos[t].bits < 8; }
/* Bytes that n elements occupy in memory (4-bit types: two a byte, rounded up). */
int64_t dtype_storage_bytes(ts_dtype t, int64_t n) {
  return dtype_is_packed(t) ? (n * dtype_bits(t) + 7) / 8 : n * dtype_bytes(t);
}
bool dtype_is_float(ts_dtype t) { return t < TS_DTYPE_COUNT && infos[t].cls == 'f'; }
bool dtype_is_int(ts_dtype t) { return t < TS_DTYPE_COUNT && (infos[t].cls == 'i' || infos[t].cls == 'u'); }
bool dtype_is_signed(ts_dtype t) { return t < TS_DTYPE_COUNT && (infos[t].cls == 'i' || infos[t].cls == 'f'); }
const char *dtype_name(ts_dtype t) { return t < TS_DTYPE_COUNT ? infos[t].name : "?"; }
const char *dtype_cuda(ts_dtype t) { return t < TS_DTYPE_COUNT ? infos[t].cuda : "?"; }

const char *ts_dtype_name(ts_dtype t) { return dtype_name(t); }
size_t ts_dtype_size(ts_dtype t) { return (size_t)dtype_bytes(t); }

/* Every spelling users write: torch-style names, TileLang aliases, short forms. */
static const struct { const char *alias; ts_dtype t; } aliases[] = {
    {"half", TS_DTYPE_FLOAT16}, {"fp16", TS_DTYPE_FLOAT16}, {"float", TS_DTYPE_FLOAT32},
    {"fp32", TS_DTYPE_FLOAT32}, {"double", TS_DTYPE_FLOAT64}, {"fp64", TS_DTYPE_FLOAT64},
    {"bf16", TS_DTYPE_BFLOAT16}, {"int", TS_DTYPE_INT32}, {"uint", TS_DTYPE_UINT32},
    {"float8_e4m3fn", TS_DTYPE_FLOAT8_E4M3}, {"float8_e4m3fnuz", TS_DTYPE_FLOAT8_E4M3},
    {"float8_e5m2fnuz", TS_DTYPE_FLOAT8_E5M2}, {"e4m3_float8", TS_DTYPE_FLOAT8_E4M3},
    {"e5m2_float8", TS_DTYPE_FLOAT8_E5M2}, {"boolean", TS_DTYPE_BOOL},
    {"float4_e2m1", TS_DTYPE_FLOAT4_E2M1},
};

bool dtype_parse(const char *s, ts_dtype *out) {
  if (!s) return false;
  if (!strncmp(s, "torch.", 6)) s += 6;
  for (int t = TS_DTYPE_BOOL; t < TS_DTYPE_HANDLE; t++)
    if (!strcmp(s, infos[t].name)) {
      *out = (ts_dtype)t;
      return true;
    }
  for (int i = 0; i < TS_ARRAY_LEN(aliases); i++)
    if (!strcmp(s, aliases[i].alias)) {
      *out = aliases[i].t;
      return true;
    }
  return false;
}
