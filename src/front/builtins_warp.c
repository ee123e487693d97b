/* builtins_warp.c — T.* for what threads of a warp or block compute together, with TileLang's
 * signatures: shuffles (T.shfl_xor / shfl_down / shfl_up / shfl_sync), votes (T.any_sync,
 * all_sync, ballot_sync, ballot, activemask, match_any_sync, match_all_sync), block barriers
 * with a predicate (T.syncthreads_count / and / or), bit searches (T.__ffs, T.__fns) and the
 * lane / warp / warp-group numbers of a thread (T.get_lane_idx ...).
 *
 *   registry.c  ->  here  ->  IR intrinsics (ir.h, flagged IRI_LANES / IRI_BLOCK_SYNC so the
 *   passes that regroup threads leave them alone)  ->  codegen: __shfl_down_sync, __any_sync ...
 *
 * Results follow TileLang: votes int32, ballots and activemask uint64 (CUDA's 32-bit mask
 * zero-extended), matches and __fns uint32, __ffs int32. */
#include "builtin.h"

#define FULL_MASK 0xffffffffLL

/* The mask argument: a uint32 (absent: every lane). */
static IrExpr *mask_arg(Eval *ev, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_NONE) return ir_int(ev->c, FULL_MASK, TS_DTYPE_UINT32, loc);
  if (v->kind == V_INT) return ir_int(ev->c, v->u.i & FULL_MASK, TS_DTYPE_UINT32, loc);
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  return e ? ir_cast(ev->c, TS_DTYPE_UINT32, e, loc) : NULL;
}

/* An int32 operand (lane, delta, width, bit position); absent: dflt. */
static IrExpr *int_arg(Eval *ev, Value *v, int64_t dflt, SrcLoc loc) {
  if (!v || v->kind == V_NONE) return ir_int(ev->c, dflt, TS_DTYPE_INT32, loc);
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  if (e && !dtype_is_int(e->dtype) && e->dtype != TS_DTYPE_BOOL) {
    ts_error(ev->c, loc, "expected an integer, got %s", dtype_name(e->dtype));
    return NULL;
  }
  return e ? ir_cast(ev->c, TS_DTYPE_INT32, e, loc) : NULL;
}

/* A predicate: an integer or boolean value as int32 (TileLang refuses floats rather than
 * truncating them). */
static IrExpr *predicate_arg(Eval *ev, Value *v, const Builtin *bi, SrcLoc loc) {
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  if (!e) return NULL;
  if (!dtype_is_int(e->dtype) && e->dtype != TS_DTYPE_BOOL) {
    ts_error(ev->c, loc, "T.%s requires an integer or boolean predicate, but got %s", bi->name, dtype_name(e->dtype));
    return NULL;
  }
  return ir_cast(ev->c, TS_DTYPE_INT32, e, loc);
}

/* A value a shuffle or match moves: any number (bool, 8/16-bit and fp8 values travel
 * widened or as bits, device/tilescale/reduce.cuh). */
static IrExpr *value_arg(Eval *ev, Value *v, const Builtin *bi, SrcLoc loc) {
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  if (e && (e->dtype == TS_DTYPE_VOID || e->dtype == TS_DTYPE_HANDLE)) {
    ts_error(ev->c, loc, "T.%s: a %s value cannot cross lanes", bi->name, dtype_name(e->dtype));
    return NULL;
  }
  return e;
}

static Value *call_value(Eval *ev, IrIntrin op, ts_dtype t, IrExpr **args, int n, SrcLoc loc) {
  for (int i = 0; i < n; i++)
    if (!args[i]) return ev->poison;
  return ev_expr(ev, ir_call(ev->c, op, t, args, n, loc));
}

/* T.shfl_xor / shfl_down / shfl_up (value, delta, width=32, mask=0xffffffff) and
 * T.shfl_sync(value, src_lane, width, mask): bi->arg is the intrinsic.  A full-warp xor is the
 * shuffle the reductions use (IRI_SHFL_XOR). */
static Value *t_shfl(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *v = value_arg(ev, arg[0], bi, loc);
  IrExpr *lane = int_arg(ev, arg[1], 0, loc);
  IrExpr *width = int_arg(ev, arg[2], 32, loc), *mask = mask_arg(ev, arg[3], loc);
  if (!v || !lane || !width || !mask) return ev->poison;
  int64_t w, m;
  if (bi->arg == IRI_SHFL_XOR_SYNC && ir_is_const_int(width, &w) && w == 32 && ir_is_const_int(mask, &m) &&
      m == FULL_MASK)
    return call_value(ev, IRI_SHFL_XOR, v->dtype, (IrExpr *[]){v, lane}, 2, loc);
  return call_value(ev, (IrIntrin)bi->arg, v->dtype, (IrExpr *[]){mask, v, lane, width}, 4, loc);
}

/* T.any_sync / all_sync / ballot_sync (predicate, mask=0xffffffff); T.ballot(predicate). */
static Value *t_vote(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  bool whole_warp = bi->arg == -1; /* T.ballot */
  IrExpr *p = predicate_arg(ev, arg[0], bi, loc), *mask = mask_arg(ev, whole_warp ? NULL : arg[1], loc);
  IrIntrin op = whole_warp ? IRI_BALLOT_SYNC : (IrIntrin)bi->arg;
  ts_dtype t = op == IRI_BALLOT_SYNC ? TS_DTYPE_UINT64 : TS_DTYPE_INT32;
  return call_value(ev, op, t, (IrExpr *[]){mask, p}, 2, loc);
}

/* T.match_any_sync / match_all_sync (value, mask=0xffffffff) -> uint32.  CUDA matches 32- and
 * 64-bit values; narrower integers are widened. */
static Value *t_match(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *v = value_arg(ev, arg[0], bi, loc), *mask = mask_arg(ev, arg[1], loc);
  if (!v || !mask) return ev->poison;
  if (dtype_is_float(v->dtype) && dtype_bits(v->dtype) < 32) {
    ts_error(ev->c, loc, "T.%s: %s values cannot be matched (32- and 64-bit values, and integers)", bi->name,
             dtype_name(v->dtype));
    return ev->poison;
  }
  if (!dtype_is_float(v->dtype) && dtype_bits(v->dtype) < 32) v = ir_cast(ev->c, TS_DTYPE_INT32, v, loc);
  return call_value(ev, (IrIntrin)bi->arg, TS_DTYPE_UINT32, (IrExpr *[]){mask, v}, 2, loc);
}

/* T.activemask() -> uint64 */
static Value *t_activemask(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  return call_value(ev, IRI_ACTIVEMASK, TS_DTYPE_UINT64, NULL, 0, call_loc(a));
}

/* T.syncthreads_count / and / or (predicate) -> int32: a block barrier. */
static Value *t_sync_predicate(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  return call_value(ev, (IrIntrin)bi->arg, TS_DTYPE_INT32, (IrExpr *[]){predicate_arg(ev, arg[0], bi, loc)}, 1, loc);
}

/* T.__ffs(x) -> int32: one plus the lowest set bit of an integer, 0 when none is set. */
static Value *t_ffs(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  IrExpr *x = ev_to_ir(ev, arg[0], NULL, loc);
  if (!x) return ev->poison;
  if (!dtype_is_int(x->dtype)) {
    ts_error(ev->c, loc, "T.%s takes an integer, got %s", bi->name, dtype_name(x->dtype));
    return ev->poison;
  }
  if (dtype_bits(x->dtype) < 32) x = ir_cast(ev->c, TS_DTYPE_UINT32, x, loc);
  return call_value(ev, IRI_FFS, TS_DTYPE_INT32, &x, 1, loc);
}

/* T.__fns(mask, base, offset) -> uint32: the position of the offset-th set bit of mask counted
 * from bit base (CUDA's __fns; 0xffffffff when there is none). */
static Value *t_fns(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  IrExpr *args[3] = {mask_arg(ev, arg[0], loc), int_arg(ev, arg[1], 0, loc), int_arg(ev, arg[2], 0, loc)};
  return call_value(ev, IRI_FNS, TS_DTYPE_UINT32, args, 3, loc);
}

/* ---- lane and warp numbers ------------------------------------------------------------------- */
/* The thread's number in its block: x + X * (y + Y * z). */
static IrExpr *linear_thread(Eval *ev, SrcLoc loc) {
  IrKernel *k = &ev->kernel->u.kernel;
  IrExpr *id = NULL;
  for (int d = 2; d >= 0; d--) {
    if (k->threads[d] <= 1 && d > 0) continue;
    IrExpr *t = ir_varref(ev->c, ir_kernel_thread_var(ev->c, k, d, loc), loc);
    id = id ? ir_binary(ev->c, IR_ADD, t, ir_binary(ev->c, IR_MUL, ir_int(ev->c, k->threads[d], TS_DTYPE_INT32, loc),
                                                       id, loc), loc)
            : t;
  }
  return id;
}

/* A positive size argument (warp_size, warps_per_group); absent: dflt. */
static bool size_arg(Eval *ev, const Builtin *bi, Value *v, int64_t dflt, const char *what, int64_t *out,
                     SrcLoc loc) {
  if (!bi_opt_int(ev, v && v->kind != V_NONE ? v : NULL, dflt, out, loc)) return false;
  if (*out <= 0) {
    ts_error(ev->c, loc, "T.%s: %s must be positive, got %lld", bi->name, what, (long long)*out);
    return false;
  }
  return true;
}

/* T.get_lane_idx(warp_size=32): thread % warp_size; T.get_warp_idx / get_warp_idx_sync
 * (warp_size=32): thread // warp_size; T.get_warp_group_idx(warp_size=32, warps_per_group=4):
 * thread // (warp_size * warps_per_group).  bi->arg: 0 lane, 1 warp, 2 warp group. */
static Value *t_lane_warp(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int64_t ws, per = 1;
  if (!size_arg(ev, bi, arg[0], 32, "warp_size", &ws, loc)) return ev->poison;
  if (bi->arg == 2 && !size_arg(ev, bi, arg[1], 4, "warps_per_group", &per, loc)) return ev->poison;
  IrExpr *n = ir_int(ev->c, ws * per, TS_DTYPE_INT32, loc);
  return ev_expr(ev, ir_binary(ev->c, bi->arg == 0 ? IR_FLOORMOD : IR_FLOORDIV, linear_thread(ev, loc), n, loc));
}

static const Builtin warp_rows[] = {
    {"shfl_xor", "value, delta, width=32, mask=0xffffffff", t_shfl, IRI_SHFL_XOR_SYNC, 0},
    {"shfl_down", "value, delta, width=32, mask=0xffffffff", t_shfl, IRI_SHFL_DOWN, 0},
    {"shfl_up", "value, delta, width=32, mask=0xffffffff", t_shfl, IRI_SHFL_UP, 0},
    {"shfl_sync", "value, srcLane, width=32, mask=0xffffffff", t_shfl, IRI_SHFL_SYNC, 0},
    {"any_sync", "predicate, mask=0xffffffff", t_vote, IRI_ANY_SYNC, 0},
    {"all_sync", "predicate, mask=0xffffffff", t_vote, IRI_ALL_SYNC, 0},
    {"ballot_sync", "predicate, mask=0xffffffff", t_vote, IRI_BALLOT_SYNC, 0},
    {"ballot", "predicate", t_vote, -1, 0},
    {"activemask", "", t_activemask, 0, 0},
    {"match_any_sync", "value, mask=0xffffffff", t_match, IRI_MATCH_ANY_SYNC, 0},
    {"match_all_sync", "value, mask=0xffffffff", t_match, IRI_MATCH_ALL_SYNC, 0},
    {"syncthreads_count", "predicate", t_sync_predicate, IRI_SYNCTHREADS_COUNT, 0},
    {"syncthreads_and", "predicate", t_sync_predicate, IRI_SYNCTHREADS_AND, 0},
    {"syncthreads_or", "predicate", t_sync_predicate, IRI_SYNCTHREADS_OR, 0},
    {"__ffs", "value", t_ffs, 0, 0},
    {"__fns", "mask, base, offset", t_fns, 0, 0},
    {"get_lane_idx", "warp_size=None", t_lane_warp, 0, 0},
    {"get_warp_idx", "warp_size=None", t_lane_warp, 1, 0},
    {"get_warp_idx_sync", "warp_size=None", t_lane_warp, 1, 0},
    {"get_warp_group_idx", "warp_size=None, warps_per_group=None", t_lane_warp, 2, 0},
};

const BuiltinTable builtins_warp[] = {
    {MOD_T, warp_rows, TS_ARRAY_LEN(warp_rows), NULL},
    BUILTIN_TABLE_END,
};
