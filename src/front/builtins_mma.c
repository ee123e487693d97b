/* builtins_mma.c — the warp-level tensor-core intrinsics a kernel (or the prelude's MMA
 * emitters, tilelang/cuda/intrinsics/macro/mma_macro_generator.py) calls by hand:
 * T.ptx_ldmatrix and T.ptx_mma, with TileLang's signatures.
 *
 *   registry.c  ->  here  ->  IRD_PTX_LDMATRIX / IRD_PTX_MMA device statements
 *   ->  codegen: ts::ptx_ldmatrix / ts::ptx_mma (device/tilescale/gemm.cuh)
 *
 * Both are per-thread operations that the whole warp must execute together (.sync.aligned):
 * each thread names its own registers (a window of a T.alloc_local buffer) and, for
 * ldmatrix, the shared-memory row it supplies.  Hardware facts (PTX ISA, "warp-level matrix
 * load" and "mma.m16n8k*"):
 * - ldmatrix.m8n8.xNUM.b16 loads NUM 8x8 matrices of 16-bit elements (16-byte rows); lane l
 *   gives the address of row l % 8 of matrix l / 8 and receives, per matrix, one 32-bit
 *   register holding row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 (.trans: column l / 4,
 *   rows 2 (l % 4) and 2 (l % 4) + 1).  8-bit data moves as pairs (no .trans for them).
 * - mma.m16n8kK.row.col with K = 256 / bits of the operands: A is four 32-bit registers, B
 *   two, the accumulator four 32-bit values (two for fp16: four halves), rows g and g + 8 of
 *   the tile, g = lane / 4.  4-bit operands ("int4": two to a byte of int8 registers) take
 *   m16n8k32.s4 with half the registers: A two, B one.
 * The pointers reach codegen as T.address_of of buffer elements, so every pass sees which
 * buffer each operand is in (thread_sync counts the shared read; shared layouts and pipeline
 * stages remap the element like any other access). */
#include <stdio.h>
#include <string.h>

#include "builtin.h"

/* The local buffer a register operand names (`buf.data` or `buf`), and its offset as an
 * ADDRESS_OF of buf[offset]; NULL after a diagnostic. */
static IrExpr *register_window(Eval *ev, CallArgs *a, Value *buf, Value *offset, int bytes, const char *fname,
                               const char *role) {
  SrcLoc loc = call_loc(a);
  if (buf->kind != V_BUFFER || buf->u.buf->scope != IR_SCOPE_LOCAL || buf->u.buf->ndim != 1) {
    ts_error(ev->c, loc, "T.%s: %s must be a one-dimensional T.alloc_local buffer (buf.data), got %s", fname, role,
             buf->kind == V_BUFFER ? ir_scope_names[buf->u.buf->scope] : ev_type_name(buf));
    return NULL;
  }
  IrBuffer *b = buf->u.buf;
  IrExpr *off = ev_to_ir(ev, offset, NULL, loc);
  if (!off) return NULL;
  if (!dtype_is_int(off->dtype)) {
    ts_error(ev->c, loc, "T.%s: the offset of %s must be an integer, got %s", fname, role, dtype_name(off->dtype));
    return NULL;
  }
  int64_t o, n;
  int eb = dtype_bytes(b->dtype);
  if (bytes % eb) {
    ts_error(ev->c, loc, "T.%s: %s '%s' holds %s elements, which do not tile its %d-byte operand", fname, role, b->name,
             dtype_name(b->dtype), bytes);
    return NULL;
  }
  if (ir_is_const_int(off, &o) && ir_is_const_int(b->shape[0], &n) && (o < 0 || o + bytes / eb > n)) {
    ts_error(ev->c, loc, "T.%s: %s '%s'[%lld:%lld] is out of its %lld elements", fname, role, b->name, (long long)o,
             (long long)(o + bytes / eb), (long long)n);
    return NULL;
  }
  /* the window starts on a 32-bit register: elements of 1 or 2 bytes must be aligned to it */
  if (eb < 4 && ir_is_const_int(off, &o) && (o * eb) % 4) {
    ts_error(ev->c, loc, "T.%s: %s '%s'[%lld] does not start on a 32-bit register", fname, role, b->name, (long long)o);
    return NULL;
  }
  IrExpr *ld = ir_load(ev->c, b, &off, 1, loc);
  return ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc);
}

/* T.ptx_ldmatrix(dtype, trans, num, type, local_ptr, local_offset, smem_ptr, smem_offset):
 * ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16 into local_ptr[local_offset:], this
 * thread's row at smem_ptr (T.address_of(shared[i, j])). */
static Value *t_ptx_ldmatrix(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  ts_dtype t;
  int64_t num, soff;
  if (!ev_to_dtype(ev, arg[0], &t, loc) || !ev_to_int(ev, arg[2], &num, loc)) return ev->poison;
  int tr = ev_truth(ev, arg[1], loc);
  if (tr < 0) {
    if (tr == -1) ts_error(ev->c, loc, "T.ptx_ldmatrix: trans must be a compile-time bool");
    return ev->poison;
  }
  if (num != 1 && num != 2 && num != 4) {
    ts_error(ev->c, loc, "T.ptx_ldmatrix: num must be 1, 2 or 4 matrices, got %lld", (long long)num);
    return ev->poison;
  }
  if (arg[3]->kind != V_STR || strcmp(arg[3]->u.str.s, ".b16")) {
    ts_error(ev->c, loc, "T.ptx_ldmatrix: only type \".b16\" is supported");
    return ev->poison;
  }
  int bits = dtype_bits(t);
  if (bits != 16 && !(bits == 8 && !tr)) {
    ts_error(ev->c, loc, "T.ptx_ldmatrix: %s elements cannot be loaded%s (ldmatrix moves 16-bit elements, 8-bit ones "
                         "in pairs without .trans)", dtype_name(t), tr ? " transposed" : "");
    return ev->poison;
  }
  IrExpr *dst = register_window(ev, a, arg[4], arg[5], (int)num * 4, "ptx_ldmatrix", "local_ptr");
  if (!dst) return ev->poison;
  IrExpr *src = arg[6]->kind == V_EXPR ? arg[6]->u.expr : NULL;
  IrExpr *ld = src && src->kind == IR_CALL && src->u.call.op == IRI_ADDRESS_OF && src->u.call.nargs == 1
                   ? src->u.call.args[0] : NULL;
  IrScope sc = ld && ld->kind == IR_LOAD ? ld->u.load.buf->scope : IR_SCOPE_COUNT;
  if (sc != IR_SCOPE_SHARED && sc != IR_SCOPE_SHARED_DYN) {
    ts_error(ev->c, loc, "T.ptx_ldmatrix: smem_ptr must be T.address_of(buf[...]) of a shared buffer, got %s",
             ld && ld->kind == IR_LOAD ? ir_scope_names[sc] : ev_type_name(arg[6]));
    return ev->poison;
  }
  if (!ev_to_int(ev, arg[7], &soff, loc)) return ev->poison;
  if (soff != 0) {
    ts_error(ev->c, loc, "T.ptx_ldmatrix: a non-zero smem_offset is not supported (a shared layout may swizzle the "
                         "buffer): index the element in T.address_of instead");
    return ev->poison;
  }
  if (dtype_bytes(ld->u.load.buf->dtype) != dtype_bytes(t)) {
    ts_error(ev->c, loc, "T.ptx_ldmatrix: dtype %s does not match the shared buffer '%s' (%s)", dtype_name(t),
             ld->u.load.buf->name, dtype_name(ld->u.load.buf->dtype));
    return ev->poison;
  }
  int64_t attrs[2] = {num, tr};
  ev_emit(ev, ir_device_stmt(ev->c, IRD_PTX_LDMATRIX, attrs, 2, (IrExpr *[]){dst, src}, 2, loc));
  return ev->none;
}

/* An operand type of T.ptx_mma: TileLang's abbreviations ("fp16", "int8", "e4m3" ...) or a
 * dtype.  "int4" / "uint4" are 4-bit operands packed two to a byte of int8 / uint8 registers
 * (*packed set). */
static bool mma_type(Eval *ev, Value *v, ts_dtype *out, bool *packed, SrcLoc loc) {
  *packed = false;
  if (v->kind == V_STR && (!strcmp(v->u.str.s, "int4") || !strcmp(v->u.str.s, "uint4"))) {
    *out = v->u.str.s[0] == 'u' ? TS_DTYPE_UINT8 : TS_DTYPE_INT8;
    *packed = true;
    return true;
  }
  static const struct { const char *abbr; ts_dtype t; } abbrs[] = {
      {"fp16", TS_DTYPE_FLOAT16}, {"bf16", TS_DTYPE_BFLOAT16}, {"fp32", TS_DTYPE_FLOAT32},
      {"tf32", TS_DTYPE_FLOAT32}, {"int8", TS_DTYPE_INT8},     {"uint8", TS_DTYPE_UINT8},
      {"int32", TS_DTYPE_INT32},  {"e4m3", TS_DTYPE_FLOAT8_E4M3}, {"e5m2", TS_DTYPE_FLOAT8_E5M2},
  };
  if (v->kind == V_STR)
    for (size_t i = 0; i < TS_ARRAY_LEN(abbrs); i++)
      if (!strcmp(v->u.str.s, abbrs[i].abbr)) {
        *out = abbrs[i].t;
        return true;
      }
  return ev_to_dtype(ev, v, out, loc);
}

/* Which mma.sync the operand types make: K of the m16n8kK shape, 0 when unsupported (packed:
 * 4-bit operands, K = 32 of them in 16 bytes a row). */
static int mma_k(ts_dtype ta, ts_dtype tb, ts_dtype tc, bool packed) {
  if (packed) return ta == tb && tc == TS_DTYPE_INT32 ? 32 : 0;
  bool fp8a = ta == TS_DTYPE_FLOAT8_E4M3 || ta == TS_DTYPE_FLOAT8_E5M2;
  bool fp8b = tb == TS_DTYPE_FLOAT8_E4M3 || tb == TS_DTYPE_FLOAT8_E5M2;
  if ((ta == TS_DTYPE_FLOAT16 || ta == TS_DTYPE_BFLOAT16) && tb == ta)
    return tc == TS_DTYPE_FLOAT32 || (tc == TS_DTYPE_FLOAT16 && ta == TS_DTYPE_FLOAT16) ? 16 : 0;
  if ((ta == TS_DTYPE_INT8 || ta == TS_DTYPE_UINT8) && tb == ta) return tc == TS_DTYPE_INT32 ? 32 : 0;
  if (fp8a && fp8b) return tc == TS_DTYPE_FLOAT32 ? 32 : 0;
  if (ta == TS_DTYPE_FLOAT32 && tb == ta) return tc == TS_DTYPE_FLOAT32 ? 8 : 0; /* tf32 */
  return 0;
}

/* T.ptx_mma(dtype, shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, multiplicand_a,
 * a_index, multiplicand_b, b_index, accumulator, c_index, saturate, operator=None): one
 * mma.sync.aligned.m16n8kK.row.col, C (+)= A * B on this warp's registers. */
static Value *t_ptx_mma(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  ts_dtype acc, ta, tb, tc;
  bool pa, pb, pc;
  if (!ev_to_dtype(ev, arg[0], &acc, loc) || !mma_type(ev, arg[4], &ta, &pa, loc) ||
      !mma_type(ev, arg[5], &tb, &pb, loc) || !mma_type(ev, arg[6], &tc, &pc, loc))
    return ev->poison;
  if (pa != pb || pc) {
    ts_error(ev->c, loc, "T.ptx_mma: 4-bit operands must be A and B together (int4 x int4 or uint4 x uint4 into int32)");
    return ev->poison;
  }
  if (arg[2]->kind != V_STR || arg[3]->kind != V_STR || strcmp(arg[2]->u.str.s, "row") || strcmp(arg[3]->u.str.s, "col")) {
    ts_error(ev->c, loc, "T.ptx_mma: only A_layout \"row\" and B_layout \"col\" exist for these shapes");
    return ev->poison;
  }
  if (arg[13] && ev_truth(ev, arg[13], loc) != 0) {
    ts_error(ev->c, loc, "T.ptx_mma: saturate must be False");
    return ev->poison;
  }
  if (arg[14] && arg[14]->kind != V_NONE) {
    ts_error(ev->c, loc, "T.ptx_mma: operator= (sparse or bit operations) is not supported");
    return ev->poison;
  }
  int k = mma_k(ta, tb, tc, pa);
  if (!k || acc != tc) {
    ts_error(ev->c, loc, "T.ptx_mma: no mma.sync multiplies %s%s by %s%s into %s%s", dtype_name(ta),
             pa ? " (as int4 pairs)" : "", dtype_name(tb), pa ? " (as int4 pairs)" : "", dtype_name(tc),
             k ? " (dtype and C_dtype differ)" : "");
    return ev->poison;
  }
  char want[24];
  snprintf(want, sizeof want, "m16n8k%d", k);
  if (arg[1]->kind != V_STR || strcmp(arg[1]->u.str.s, want)) {
    ts_error(ev->c, loc, "T.ptx_mma: %s operands take shape \"%s\", got %s", pa ? "4-bit" : dtype_name(ta), want,
             arg[1]->kind == V_STR ? arg[1]->u.str.s : ev_type_name(arg[1]));
    return ev->poison;
  }
  ts_dtype want_t[3] = {ta, tb, tc};
  static const char *const roles[3] = {"multiplicand_a", "multiplicand_b", "accumulator"};
  /* registers a thread holds: A 4 (2 for 4-bit), B 2 (1), C 4 values (fp16: 4 halves) */
  int bytes[3] = {pa ? 8 : 16, pa ? 4 : 8, tc == TS_DTYPE_FLOAT16 ? 8 : 16};
  IrExpr *ops[3];
  for (int i = 0; i < 3; i++) {
    Value *buf = arg[7 + 2 * i];
    if (buf->kind == V_BUFFER && dtype_bytes(buf->u.buf->dtype) != dtype_bytes(want_t[i])) {
      ts_error(ev->c, loc, "T.ptx_mma: %s '%s' holds %s, not %s", roles[i], buf->u.buf->name,
               dtype_name(buf->u.buf->dtype), dtype_name(want_t[i]));
      return ev->poison;
    }
    if (!(ops[i] = register_window(ev, a, buf, arg[8 + 2 * i], bytes[i], "ptx_mma", roles[i]))) return ev->poison;
  }
  int64_t attrs[4] = {ta, tb, tc, pa};
  ev_emit(ev, ir_device_stmt(ev->c, IRD_PTX_MMA, attrs, 4, ops, 3, loc));
  return ev->none;
}

static const Builtin mma_rows[] = {
    {"ptx_ldmatrix", "dtype, trans, num, type, local_ptr, local_offset, smem_ptr, smem_offset", t_ptx_ldmatrix, 0, 0},
    {"ptx_mma",
     "dtype, shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, multiplicand_a, a_index, multiplicand_b, b_index, "
     "accumulator, c_index, saturate=False, operator=None",
     t_ptx_mma, 0, 0},
};

const BuiltinTable builtins_mma[] = {
    {MOD_T, mma_rows, TS_ARRAY_LEN(mma_rows), NULL},
    BUILTIN_TABLE_END,
};
