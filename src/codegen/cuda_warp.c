/* cuda_warp.c — the CUDA spelling of the thread-level intrinsics (ir.h: the rows flagged
 * IRI_LANES / IRI_BLOCK_SYNC, and the bit searches): CUDA's own __shfl_*_sync, __any_sync,
 * __ballot_sync, __match_*_sync, __syncthreads_count ... where CUDA has an overload for the
 * value's type, the device library's ts::shfl (device/tilescale/reduce.cuh) otherwise. */
#include "cuda_gen.h"

#include <stdio.h>

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
bool cg_warp_call(Cg *g, StrBuf *sb, const IrExpr *e) {
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
