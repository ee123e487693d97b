/* builtins_dist.c — the distributed primitives of tilescale-distributed.md §1.2–§1.5: ranks,
 * put/get between GPUs, loads and stores with memory semantics, waits, GPU barriers and
 * fences, warp votes and shuffles (the IPC family), the NVSHMEM family, and their enums
 * T.Team, T.CmpType and T.Amo (§1.7).
 *
 *   registry.c  ->  here  ->  typed device operations (ir.h IR_DEVICE_OPS, IRD_DIST / IRD_SHMEM)
 *
 * Each lowers to a device operation of the device library (device/tilescale/dist.cuh for the
 * IPC family, dist_shmem.cuh for the NVSHMEM family); the codegen reports which library the
 * kernel uses.  Operations without a result are statements; those with one are bound to a
 * LET at the call, so they run exactly once, in program order, even when the result is
 * unused (T.atom_add as a statement).  Pointers and memory spaces are checked here, at the
 * user's line: another rank's memory must be a symmetric buffer passed as a parameter. */
#include <stdio.h>
#include <string.h>

#include "builtin.h"

/* ---- operands and checks the primitives share ----------------------------------------------------- */
/* A string option (ld/st sem and scope) among the documented values. */
static bool one_of(Eval *ev, CallArgs *a, const Builtin *bi, Value *v, const char *what, const char *const *ok, int n) {
  if (!v) return true;
  if (v->kind == V_STR)
    for (int i = 0; i < n; i++)
      if (!strcmp(v->u.str.s, ok[i])) return true;
  StrBuf sb = {0};
  for (int i = 0; i < n; i++) sb_printf(&sb, "%s\"%s\"", i ? ", " : "", ok[i]);
  ts_error(ev->c, call_loc(a), "T.%s: %s must be one of %s, got %s", bi->name, what, sb_str(&sb), ev_repr(ev, v));
  sb_free(&sb);
  return false;
}

/* An argument that must be one element, buf[i]. */
static bool is_element(Eval *ev, CallArgs *a, const Builtin *bi, Value *v, const char *role) {
  if (v->kind == V_EXPR && v->u.expr->kind == IR_LOAD) return true;
  ts_error(ev->c, call_loc(a), "T.%s: %s must be a buffer element such as buf[i], got %s", bi->name, role, ev_type_name(v));
  return false;
}

/* A distributed device operation (ir.h IR_DEVICE_OPS) as a statement. */
static void emit_device(Eval *ev, IrDeviceOp op, const int64_t *attrs, IrExpr **args, int n, SrcLoc loc) {
  ev_emit(ev, ir_device_stmt(ev->c, op, attrs, ir_device_info[op].nattrs, args, n, loc));
}

/* A device call's result bound to a fresh LET `var`, so it runs once, where it is written. */
static Value *bind_value(Eval *ev, IrExpr *call, const char *var, SrcLoc loc) {
  IrVar *v = ir_var(ev->c, var, call->dtype, IR_VAR_LET, loc);
  ev_define_var(ev, v);
  ev_emit(ev, ir_let(ev->c, v, call, loc));
  return ev_expr(ev, ir_varref(ev->c, v, loc));
}

/* A device operation with a result of type t, bound to `var` (bind_value). */
static Value *value_device(Eval *ev, IrDeviceOp op, ts_dtype t, const int64_t *attrs, IrExpr **args, int n, SrcLoc loc,
                           const char *var) {
  return bind_value(ev, ir_device(ev->c, op, t, attrs, ir_device_info[op].nattrs, args, n, loc), var, loc);
}

/* The device operation a T.* primitive of the distributed families lowers to: the row of
 * ir.h's table printed with the same name. */
static IrDeviceOp dist_op(const Builtin *bi) {
  IrDeviceOp op = ir_device_named(bi->name);
  TS_ASSERT(op != IRD_COUNT && (ir_device_info[op].flags & IRD_DIST));
  return op;
}

/* An integer operand (pe, size, expected value, ...) as IR of type t. */
static IrExpr *int_operand(Eval *ev, CallArgs *a, const Builtin *bi, Value *v, int64_t dflt, ts_dtype t,
                           const char *what) {
  SrcLoc loc = call_loc(a);
  if (!v) return ir_int(ev->c, dflt, t, loc);
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  if (!e) return NULL;
  if (!dtype_is_int(e->dtype) && e->dtype != TS_DTYPE_BOOL) {
    ts_error(ev->c, loc, "T.%s: %s must be an integer, got %s", bi->name, what, dtype_name(e->dtype));
    return NULL;
  }
  return ir_cast(ev->c, t, e, loc);
}

static bool bool_arg(Eval *ev, CallArgs *a, const Builtin *bi, Value *v, const char *what, bool *out) {
  *out = false;
  if (!v) return true;
  int t = ev_truth(ev, v, call_loc(a));
  if (t < 0) {
    ts_error(ev->c, call_loc(a), "T.%s: %s must be a compile-time bool, got %s", bi->name, what, ev_type_name(v));
    return false;
  }
  *out = t == 1;
  return true;
}

static const char *str_or(Value *v, const char *dflt) { return v ? v->u.str.s : dflt; }

/* The sem / scope attributes of ld / st / atom_add (strings checked by one_of before). */
static int64_t sem_arg(const char *s) {
  return !strcmp(s, "weak") ? IR_SEM_WEAK : !strcmp(s, "volatile") ? IR_SEM_VOLATILE
         : !strcmp(s, "acquire") ? IR_SEM_ACQUIRE : !strcmp(s, "release") ? IR_SEM_RELEASE : IR_SEM_RELAXED;
}
static int64_t scope_arg(const char *s) {
  return !strcmp(s, "cta") ? IR_MSCOPE_CTA : !strcmp(s, "gpu") ? IR_MSCOPE_GPU : IR_MSCOPE_SYS;
}

static const IrBuffer *element_buf(const Value *v) { return v->u.expr->u.load.buf; }

/* A T.alloc_global workspace (or a view of one): global memory that is no parameter, an
 * eager parameter or a T.empty output. */
static bool is_workspace(Eval *ev, const IrBuffer *b) {
  while (b->alias_of) b = b->alias_of;
  if (b->scope != IR_SCOPE_GLOBAL || b->param_index >= 0) return false;
  for (int i = 0; i < ev->outputs.len; i++)
    if (ev->outputs.items[i] == b) return false;
  for (int i = 0; i < ev->eager_params.len; i++)
    if (((IrParam *)ev->eager_params.items[i])->buf == b) return false;
  return true;
}

/* Memory other GPUs (or other threads) can address: global or shared, not registers. */
static bool addressable(Eval *ev, CallArgs *a, const Builtin *bi, const IrBuffer *b, const char *role, bool remote) {
  /* Another rank's copy is found through the symmetric heap (base[pe] + offset): a
   * workspace lives in the module's static storage, outside the heap, so translating its
   * address would point anywhere. */
  if (remote && is_workspace(ev, b)) {
    ts_error(ev->c, call_loc(a),
             "T.%s: %s '%s' is a T.alloc_global workspace, which exists only on this GPU; %s must be in a "
             "symmetric buffer passed as a parameter", bi->name, role, b->name,
             strcmp(role, "sig_addr") ? "memory another rank accesses" : "NVSHMEM signal words");
    return false;
  }
  if (b->scope == IR_SCOPE_GLOBAL || (!remote && (b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN)))
    return true;
  ts_error(ev->c, call_loc(a), "T.%s: %s '%s' is in %s memory; it must be %s", bi->name, role, b->name,
           ir_scope_names[b->scope],
           remote ? "a global (symmetric) buffer when it lives on another rank" : "global or shared memory");
  return false;
}

/* A pe argument that names this rank: absent or -1. */
static bool pe_is_local(const Value *v) {
  int64_t x;
  return !v || (v->kind == V_INT && v->u.i == -1) ||
         (v->kind == V_EXPR && ir_is_const_int(v->u.expr, &x) && x == -1);
}

/* ---- the IPC family (§1.2, §1.4) ------------------------------------------------------------------ */
/* T.ld(src, value, ...) / T.st(dst, value, ...) */
static Value *t_ldst(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  static const char *const scopes[] = {"cta", "gpu", "sys"};
  static const char *const ld_sems[] = {"weak", "volatile", "acquire", "relaxed"};
  static const char *const st_sems[] = {"weak", "volatile", "release", "relaxed"};
  SrcLoc loc = call_loc(a);
  bool is_st = bi->arg != 0;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (!is_element(ev, a, bi, arg[0], is_st ? "dst" : "src")) return ev->poison;
  if (!one_of(ev, a, bi, arg[2], "scope", scopes, 3)) return ev->poison;
  if (!one_of(ev, a, bi, arg[3], "sem", is_st ? st_sems : ld_sems, 4)) return ev->poison;
  const char *scope = str_or(arg[2], "gpu"), *sem = str_or(arg[3], "weak");
  bool na, nc = false;
  if (!bool_arg(ev, a, bi, arg[4], "na", &na)) return ev->poison;
  if (!is_st && !bool_arg(ev, a, bi, arg[5], "nc", &nc)) return ev->poison;
  Value *pe_v = arg[is_st ? 5 : 6];
  const IrBuffer *b = element_buf(arg[0]);
  if (!addressable(ev, a, bi, b, is_st ? "dst" : "src", !pe_is_local(pe_v))) return ev->poison;
  int bytes = dtype_bits(b->dtype) / 8;
  if (bytes != 2 && bytes != 4 && bytes != 8) {
    ts_error(ev->c, loc, "T.%s: '%s' has elements of %s; 16-, 32- and 64-bit values are supported", bi->name,
             b->name, dtype_name(b->dtype));
    return ev->poison;
  }
  /* Combinations PTX cannot express are errors here, not assembler errors later. */
  if (nc && strcmp(sem, "weak")) {
    ts_error(ev->c, loc, "T.ld: non-coherent loads (nc=True) are weak; sem=\"%s\" is not possible", sem);
    return ev->poison;
  }
  if (na && !strcmp(sem, "volatile") && !nc) {
    ts_error(ev->c, loc, "T.%s: volatile accesses take no L1::no_allocate hint (na=True)", bi->name);
    return ev->poison;
  }
  if ((na || nc) && b->scope != IR_SCOPE_GLOBAL) {
    ts_error(ev->c, loc, "T.%s: %s needs global memory, but '%s' is in %s memory", bi->name, nc ? "nc=True" : "na=True",
             b->name, ir_scope_names[b->scope]);
    return ev->poison;
  }
  IrExpr *pe = int_operand(ev, a, bi, pe_v, -1, TS_DTYPE_INT64, is_st ? "dst_pe" : "src_pe");
  if (!pe) return ev->poison;
  IrExpr *addr = ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &arg[0]->u.expr, 1, loc);
  if (is_st) {
    IrExpr *v = ev_to_ir(ev, arg[1], NULL, loc);
    if (!v) return ev->poison;
    int64_t attrs[3] = {sem_arg(sem), scope_arg(scope), na};
    emit_device(ev, IRD_DIST_ST, attrs, (IrExpr *[]){addr, ir_cast(ev->c, b->dtype, v, loc), pe}, 3, loc);
    return ev->none;
  }
  /* ld: `value` is where the result goes (an alloc_var or a buffer element). */
  if (arg[1]->kind != V_EXPR || arg[1]->u.expr->kind != IR_LOAD) {
    ts_error(ev->c, loc, "T.ld: value must be a T.alloc_var or a buffer element that receives the result, got %s",
             ev_type_name(arg[1]));
    return ev->poison;
  }
  const IrExpr *dst = arg[1]->u.expr;
  if (dst->u.load.buf->scope == IR_SCOPE_FRAGMENT) {
    ts_error(ev->c, loc, "T.ld: value '%s' is a fragment; use a T.alloc_var or a local/shared buffer element",
             dst->u.load.buf->name);
    return ev->poison;
  }
  int64_t attrs[4] = {sem_arg(sem), scope_arg(scope), nc, na};
  IrExpr *call = ir_device(ev->c, IRD_DIST_LD, b->dtype, attrs, 4, (IrExpr *[]){addr, pe}, 2, loc);
  ev_emit(ev, ir_store(ev->c, dst->u.load.buf, dst->u.load.idx, dst->u.load.nidx,
                       ir_cast(ev->c, dst->u.load.buf->dtype, call, loc), loc));
  return ev->none;
}

/* buf[0, ..., 0]: the element T.address_of(buf) points at. */
static IrExpr *first_element(Eval *ev, IrBuffer *b, SrcLoc loc) {
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, b->ndim ? b->ndim : 1);
  for (int i = 0; i < b->ndim; i++) idx[i] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
  return ir_load(ev->c, b, idx, b->ndim, loc);
}

/* wait_eq..wait_lt(value, expected, peer=-1), barrier_blocks(barrier), atom_add(target, ...) */
static Value *t_on_element(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  /* TileScale's barrier_blocks / sync_blocks take the address of their argument, so a whole
   * barrier buffer (its usual form) names its first element. */
  bool barrier = !bi->arg && strncmp(bi->name, "wait_", 5);
  if (barrier && arg[0]->kind == V_BUFFER) arg[0] = ev_expr(ev, first_element(ev, arg[0]->u.buf, loc));
  if (!is_element(ev, a, bi, arg[0], bi->arg ? "target" : "value")) return ev->poison;
  const IrBuffer *b = element_buf(arg[0]);
  IrExpr *addr = ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &arg[0]->u.expr, 1, loc);
  bool is_int = dtype_is_int(b->dtype) && (dtype_bits(b->dtype) == 32 || dtype_bits(b->dtype) == 64);
  if (bi->arg) { /* atom_add scope / sem */
    static const char *const scopes[] = {"gpu", "sys"};
    static const char *const sems[] = {"relaxed", "acquire", "release", "acq_rel"};
    if (!one_of(ev, a, bi, arg[2], "scope", scopes, 2) || !one_of(ev, a, bi, arg[3], "sem", sems, 4))
      return ev->poison;
    if (!is_int) {
      ts_error(ev->c, loc, "T.atom_add: target '%s' must hold 32- or 64-bit integers, got %s", b->name,
               dtype_name(b->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, bi, b, "target", false)) return ev->poison;
    IrExpr *v = ev_to_ir(ev, arg[1], NULL, loc);
    if (!v) return ev->poison;
    const char *sem = str_or(arg[3], "relaxed");
    bool acq_rel = !strcmp(sem, "acq_rel");
    int64_t scope = scope_arg(str_or(arg[2], "gpu"));
    int64_t attrs[2] = {acq_rel ? scope : sem_arg(sem), scope};
    return value_device(ev, acq_rel ? IRD_DIST_ATOM_ADD_ACQ_REL : IRD_DIST_ATOM_ADD, b->dtype, attrs,
                        (IrExpr *[]){addr, ir_cast(ev->c, b->dtype, v, loc)}, 2, loc, "old");
  }
  if (!strncmp(bi->name, "wait_", 5)) {
    if (!is_int) {
      ts_error(ev->c, loc, "T.%s: the flag '%s' must be a 32- or 64-bit integer, got %s", bi->name, b->name,
               dtype_name(b->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, bi, b, "flag", !pe_is_local(arg[2]))) return ev->poison;
    IrExpr *e = ev_to_ir(ev, arg[1], NULL, loc);
    IrExpr *pe = int_operand(ev, a, bi, arg[2], -1, TS_DTYPE_INT64, "peer");
    if (!e || !pe) return ev->poison;
    emit_device(ev, dist_op(bi), NULL, (IrExpr *[]){addr, ir_cast(ev->c, b->dtype, e, loc), pe}, 3, loc);
    return ev->none;
  }
  /* barrier_blocks / sync_blocks: an int32[num_ranks] symmetric buffer, zero at first use. */
  if (b->scope != IR_SCOPE_GLOBAL || dtype_bits(b->dtype) != 32 || !dtype_is_int(b->dtype)) {
    ts_error(ev->c, loc, "T.%s: the barrier '%s' must be a global int32 buffer of num_ranks elements (got %s %s)",
             bi->name, b->name, ir_scope_names[b->scope], dtype_name(b->dtype));
    return ev->poison;
  }
  if (!addressable(ev, a, bi, b, "barrier", true)) return ev->poison;
  emit_device(ev, dist_op(bi), NULL, &addr, 1, loc);
  return ev->none;
}

/* T.address_of(buf[i]) / T.address_of(buf) (= &buf[0, ...]): a pointer operand of
 * put/get and NVSHMEM calls, an ADDRESS_OF intrinsic over the element load. */
static Value *t_address_of(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  IrExpr *load;
  if (arg[0]->kind == V_BUFFER) {
    load = first_element(ev, arg[0]->u.buf, loc);
  } else {
    if (!is_element(ev, a, bi, arg[0], "the argument")) return ev->poison;
    load = arg[0]->u.expr;
  }
  return ev_expr(ev, ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &load, 1, loc));
}

static bool is_address(const Value *v) {
  return v->kind == V_EXPR && v->u.expr->kind == IR_CALL && v->u.expr->u.call.op == IRI_ADDRESS_OF;
}

static const IrBuffer *address_buf(const Value *v) { return v->u.expr->u.call.args[0]->u.load.buf; }

/* put_warp/get_warp/put_block/get_block(src, dst, size, pe): both pointers must be
 * T.address_of(...) of the same element type, and size a compile-time element count. */
static Value *t_put_get(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  for (int i = 0; i < 2; i++)
    if (!is_address(arg[i])) {
      ts_error(ev->c, loc, "T.%s: %s must be T.address_of(buf[...]), got %s", bi->name, i ? "dst" : "src",
               ev_type_name(arg[i]));
      return ev->poison;
    }
  int64_t size;
  if (!ev_to_int(ev, arg[2], &size, loc)) return ev->poison;
  if (size <= 0) {
    ts_error(ev->c, loc, "T.%s: size must be a positive number of elements, got %lld", bi->name, (long long)size);
    return ev->poison;
  }
  const IrBuffer *src = address_buf(arg[0]), *dst = address_buf(arg[1]);
  bool put = bi->name[0] == 'p', remote = !pe_is_local(arg[3]);
  if (!addressable(ev, a, bi, src, "src", remote && !put) || !addressable(ev, a, bi, dst, "dst", remote && put))
    return ev->poison;
  if (src->dtype != dst->dtype) {
    ts_error(ev->c, loc, "T.%s: src '%s' (%s) and dst '%s' (%s) must have the same element type", bi->name,
             src->name, dtype_name(src->dtype), dst->name, dtype_name(dst->dtype));
    return ev->poison;
  }
  IrExpr *pe = int_operand(ev, a, bi, arg[3], -1, TS_DTYPE_INT64, put ? "dst_pe" : "src_pe");
  if (!pe) return ev->poison;
  int64_t unroll = 4;
  if (ir_device_info[dist_op(bi)].nattrs) { /* put_warp / get_warp */
    if (arg[4] && !ev_to_int(ev, arg[4], &unroll, loc)) return ev->poison;
    if (unroll < 1 || unroll > 16) {
      ts_error(ev->c, loc, "T.%s: unroll_factor must be between 1 and 16, got %lld", bi->name, (long long)unroll);
      return ev->poison;
    }
    /* enable_aggressive_vectorize needs no flag: the copy picks 16-byte words whenever the
     * run-time alignment allows (and stays correct when it does not). */
  }
  emit_device(ev, dist_op(bi), &unroll,
              (IrExpr *[]){arg[0]->u.expr, arg[1]->u.expr, ir_int(ev->c, size, TS_DTYPE_INT64, loc), pe}, 4, loc);
  return ev->none;
}

/* No-argument device calls: fences, grid sync, warp sync. */
static Value *t_dist_stmt(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  static const IrDeviceOp ops[] = {IRD_DIST_FENCE_CTA, IRD_DIST_FENCE_GPU, IRD_DIST_FENCE_SYS, IRD_DIST_SYNC_GRID};
  emit_device(ev, ops[bi->arg], NULL, NULL, 0, call_loc(a));
  return ev->none;
}

/* get_rank/get_num_ranks (IPC table) and get_pe/get_pe_num (NVSHMEM): int32 values. */
static Value *t_rank(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  static const IrDeviceOp ops[] = {IRD_DIST_GET_RANK, IRD_DIST_GET_NUM_RANKS, IRD_SHMEM_MY_PE, IRD_SHMEM_N_PES};
  static const char *const vars[] = {"rank", "num_ranks", "pe", "num_pes"};
  return value_device(ev, ops[bi->arg], TS_DTYPE_INT32, NULL, NULL, 0, call_loc(a), vars[bi->arg]);
}

/* The GPU barrier set on a global uint32: init_barrier_gpu(bar, expected), arrive / wait /
 * sync_barrier_gpu(bar). */
static Value *t_barrier_gpu(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (!is_element(ev, a, bi, arg[0], "barrier")) return ev->poison;
  const IrBuffer *b = element_buf(arg[0]);
  if (b->scope != IR_SCOPE_GLOBAL || b->dtype != TS_DTYPE_UINT32) {
    ts_error(ev->c, loc,
             "T.%s: the barrier '%s' must be an element of a global uint32 buffer, zero before first use, such "
             "as T.alloc_barrier_gpu() (got %s %s)", bi->name, b->name, ir_scope_names[b->scope],
             dtype_name(b->dtype));
    return ev->poison;
  }
  IrExpr *args[2] = {ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &arg[0]->u.expr, 1, loc), NULL};
  int n = 1;
  if (bi->arg) {
    args[1] = int_operand(ev, a, bi, arg[1], 0, TS_DTYPE_UINT32, "expected");
    if (!args[1]) return ev->poison;
    n = 2;
  }
  emit_device(ev, dist_op(bi), NULL, args, n, loc);
  return ev->none;
}

/* T.warp_any(value, mask=-1) / T.warp_all(...): warp votes, bool results. */
static Value *t_vote(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *v = ev_to_ir(ev, arg[0], NULL, loc);
  IrExpr *mask = int_operand(ev, a, bi, arg[1], -1, TS_DTYPE_UINT32, "mask");
  if (!v || !mask) return ev->poison;
  v = ev_to_bool_ir(ev, v, loc);
  if (!v) return ev->poison;
  return value_device(ev, dist_op(bi), TS_DTYPE_BOOL, NULL, (IrExpr *[]){v, mask}, 2, loc,
                      "vote");
}

/* T.shuffle_elect(thread_extent): one thread per group of thread_extent threads. */
static Value *t_shuffle_elect(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int64_t n;
  if (!ev_to_int(ev, arg[0], &n, loc)) return ev->poison;
  if (n < 0 || n % 32) {
    ts_error(ev->c, loc, "T.shuffle_elect: thread_extent must be 0 (the whole block) or a multiple of 32, got %lld",
             (long long)n);
    return ev->poison;
  }
  return value_device(ev, IRD_DIST_SHUFFLE_ELECT, TS_DTYPE_BOOL, &n, NULL, 0, loc, "elected");
}

/* T.tvm_warp_shuffle(mask, value, src_lane, width, warp_size): __shfl_sync. */
static Value *t_warp_shuffle(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *mask = int_operand(ev, a, bi, arg[0], -1, TS_DTYPE_UINT32, "mask");
  IrExpr *v = ev_to_ir(ev, arg[1], NULL, loc);
  IrExpr *lane = int_operand(ev, a, bi, arg[2], 0, TS_DTYPE_INT32, "src_lane");
  IrExpr *width = int_operand(ev, a, bi, arg[3], 32, TS_DTYPE_INT32, "width");
  if (!mask || !v || !lane || !width) return ev->poison;
  IrExpr *args[5] = {ir_str(ev->c, "__shfl_sync", loc), mask, v, lane, width};
  return bind_value(ev, ir_call(ev->c, IRI_CALL_EXTERN, v->dtype, args, 5, loc), "shfl", loc);
}

/* ---- the NVSHMEM family (§1.5): sizes in bytes, pointers through T.address_of ---------------------- */
static IrExpr *pointer_operand(Eval *ev, CallArgs *a, const Builtin *bi, Value *v, const char *what,
                               const IrBuffer **buf) {
  SrcLoc loc = call_loc(a);
  if (v->kind == V_BUFFER && v->u.buf->scope != IR_SCOPE_VAR) {
    Value *addr = t_address_of(ev, &(CallArgs){.node = a->node, .pos = &v, .npos = 1}, &v, bi);
    if (addr->kind != V_EXPR) return NULL;
    v = addr;
  }
  if (!is_address(v)) {
    ts_error(ev->c, loc, "T.%s: %s must be T.address_of(buf[...]) or a buffer, got %s", bi->name, what,
             ev_type_name(v));
    return NULL;
  }
  *buf = address_buf(v);
  return v->u.expr;
}

/* Rows of the family: which operands each form takes. */
enum { SH_PUTGET = 1, SH_SIGNAL = 2, SH_INT_P = 3, SH_SIGNAL_OP = 4, SH_WAIT = 5, SH_NOARG = 6, SH_COLL = 7 };

static Value *t_shmem(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrDeviceOp op = dist_op(bi);
  IrExpr *ops[8];
  const IrBuffer *b0 = NULL, *b1 = NULL, *bs = NULL;
  switch (bi->arg) {
  case SH_PUTGET:
  case SH_SIGNAL: {
    if (!(ops[0] = pointer_operand(ev, a, bi, arg[0], "dest", &b0))) return ev->poison;
    if (!(ops[1] = pointer_operand(ev, a, bi, arg[1], "src", &b1))) return ev->poison;
    bool get = bi->name[0] == 'g';
    if (!addressable(ev, a, bi, get ? b1 : b0, get ? "src" : "dest", true) ||
        !addressable(ev, a, bi, get ? b0 : b1, get ? "dest" : "src", false))
      return ev->poison;
    if (!(ops[2] = int_operand(ev, a, bi, arg[2], 0, TS_DTYPE_UINT64, "nbytes"))) return ev->poison;
    if (bi->arg == SH_PUTGET) {
      if (!(ops[3] = int_operand(ev, a, bi, arg[3], 0, TS_DTYPE_INT32, "pe"))) return ev->poison;
      emit_device(ev, op, NULL, ops, 4, loc);
      return ev->none;
    }
    if (!(ops[3] = pointer_operand(ev, a, bi, arg[3], "sig_addr", &bs))) return ev->poison;
    if (bs->dtype != TS_DTYPE_UINT64 || bs->scope != IR_SCOPE_GLOBAL) {
      ts_error(ev->c, loc, "T.%s: sig_addr must point into a global uint64 buffer, got '%s' (%s)", bi->name,
               bs->name, dtype_name(bs->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, bi, bs, "sig_addr", true)) return ev->poison; /* signal words are symmetric */
    if (!(ops[4] = int_operand(ev, a, bi, arg[4], 0, TS_DTYPE_UINT64, "signal")) ||
        !(ops[5] = int_operand(ev, a, bi, arg[5], 0, TS_DTYPE_INT32, "sig_op")) ||
        !(ops[6] = int_operand(ev, a, bi, arg[6], 0, TS_DTYPE_INT32, "pe")))
      return ev->poison;
    emit_device(ev, op, NULL, ops, 7, loc);
    return ev->none;
  }
  case SH_INT_P:
    if (!(ops[0] = pointer_operand(ev, a, bi, arg[0], "dest", &b0))) return ev->poison;
    if (b0->dtype != TS_DTYPE_INT32 || b0->scope != IR_SCOPE_GLOBAL) {
      ts_error(ev->c, loc, "T.int_p: dest must point into a global int32 buffer, got '%s' (%s)", b0->name,
               dtype_name(b0->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, bi, b0, "dest", true)) return ev->poison;
    if (!(ops[1] = int_operand(ev, a, bi, arg[1], 0, TS_DTYPE_INT32, "value")) ||
        !(ops[2] = int_operand(ev, a, bi, arg[2], 0, TS_DTYPE_INT32, "pe")))
      return ev->poison;
    emit_device(ev, op, NULL, ops, 3, loc);
    return ev->none;
  case SH_SIGNAL_OP:
  case SH_WAIT:
    if (!(ops[0] = pointer_operand(ev, a, bi, arg[0], "sig_addr", &bs))) return ev->poison;
    if (bs->dtype != TS_DTYPE_UINT64 || bs->scope != IR_SCOPE_GLOBAL) {
      ts_error(ev->c, loc, "T.%s: sig_addr must point into a global uint64 buffer, got '%s' (%s)", bi->name,
               bs->name, dtype_name(bs->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, bi, bs, "sig_addr", true)) return ev->poison; /* signal words are symmetric */
    if (bi->arg == SH_SIGNAL_OP) {
      if (!(ops[1] = int_operand(ev, a, bi, arg[1], 0, TS_DTYPE_UINT64, "signal")) ||
          !(ops[2] = int_operand(ev, a, bi, arg[2], 0, TS_DTYPE_INT32, "sig_op")) ||
          !(ops[3] = int_operand(ev, a, bi, arg[3], 0, TS_DTYPE_INT32, "pe")))
        return ev->poison;
      emit_device(ev, op, NULL, ops, 4, loc);
      return ev->none;
    }
    if (!(ops[1] = int_operand(ev, a, bi, arg[1], 0, TS_DTYPE_INT32, "cmp")) ||
        !(ops[2] = int_operand(ev, a, bi, arg[2], 0, TS_DTYPE_UINT64, "cmp_value")))
      return ev->poison;
    return value_device(ev, op, TS_DTYPE_UINT64, NULL, ops, 3, loc, "sig_value");
  case SH_NOARG:
    emit_device(ev, op, NULL, NULL, 0, loc);
    return ev->none;
  default: { /* collectives: team, dest, src, nelems[, pe_root] */
    if (!(ops[0] = int_operand(ev, a, bi, arg[0], 0, TS_DTYPE_INT32, "team"))) return ev->poison;
    int64_t team;
    if (!ir_is_const_int(ops[0], &team) || team != 0) {
      ts_error(ev->c, loc, "T.%s: only the world team (T.Team.WORLD) is supported", bi->name);
      return ev->poison;
    }
    if (!(ops[1] = pointer_operand(ev, a, bi, arg[1], "dest", &b0)) ||
        !(ops[2] = pointer_operand(ev, a, bi, arg[2], "src", &b1)))
      return ev->poison;
    if (!addressable(ev, a, bi, b0, "dest", true) || !addressable(ev, a, bi, b1, "src", true)) return ev->poison;
    bool mem = strstr(bi->name, "mem") != NULL;
    if (!mem && b0->dtype != b1->dtype) {
      ts_error(ev->c, loc, "T.%s: dest '%s' (%s) and src '%s' (%s) must have the same element type", bi->name,
               b0->name, dtype_name(b0->dtype), b1->name, dtype_name(b1->dtype));
      return ev->poison;
    }
    if (!(ops[3] = int_operand(ev, a, bi, arg[3], 0, TS_DTYPE_UINT64, mem ? "nbytes" : "nelems"))) return ev->poison;
    int n = 4;
    if (!strncmp(bi->name, "broadcast", 9)) {
      if (!(ops[4] = int_operand(ev, a, bi, arg[4], 0, TS_DTYPE_INT32, "pe_root"))) return ev->poison;
      n = 5;
    }
    emit_device(ev, op, NULL, ops, n, loc);
    return ev->none;
  }
  }
}

/* ---- rows -------------------------------------------------------------------------------------- */
static const Builtin dist_rows[] = {
    /* the IPC family (§1.2, §1.4) */
    {"get_rank", "", t_rank, 0, 0},
    {"get_num_ranks", "", t_rank, 1, 0},
    {"put_warp", "src, dst, size, dst_pe=-1, unroll_factor=4, enable_aggressive_vectorize=False", t_put_get, 0, 0},
    {"get_warp", "src, dst, size, src_pe=-1, unroll_factor=4, enable_aggressive_vectorize=False", t_put_get, 0, 0},
    {"put_block", "src, dst, size, dst_pe=-1", t_put_get, 0, 0},
    {"get_block", "src, dst, size, src_pe=-1", t_put_get, 0, 0},
    {"ld", "src, value, scope=\"gpu\", sem=\"weak\", na=False, nc=False, src_pe=-1", t_ldst, 0, 0},
    {"st", "dst, value, scope=\"gpu\", sem=\"weak\", na=False, dst_pe=-1", t_ldst, 1, 0},
    {"wait_eq", "value, expected, peer=-1", t_on_element, 0, 0},
    {"wait_ne", "value, expected, peer=-1", t_on_element, 0, 0},
    {"wait_ge", "value, expected, peer=-1", t_on_element, 0, 0},
    {"wait_le", "value, expected, peer=-1", t_on_element, 0, 0},
    {"wait_gt", "value, expected, peer=-1", t_on_element, 0, 0},
    {"wait_lt", "value, expected, peer=-1", t_on_element, 0, 0},
    {"barrier_blocks", "barrier", t_on_element, 0, 0},
    {"sync_blocks", "barrier", t_on_element, 0, 0},
    {"fence_cta", "", t_dist_stmt, 0, 0},
    {"fence_gpu", "", t_dist_stmt, 1, 0},
    {"fence_sys", "", t_dist_stmt, 2, 0},
    {"init_barrier_gpu", "barrier, expected", t_barrier_gpu, 1, 0},
    {"arrive_barrier_gpu", "barrier", t_barrier_gpu, 0, 0},
    {"wait_barrier_gpu", "barrier", t_barrier_gpu, 0, 0},
    {"sync_barrier_gpu", "barrier", t_barrier_gpu, 0, 0},
    {"sync_grid", "", t_dist_stmt, 3, 0},
    {"atom_add", "target, value, scope=\"gpu\", sem=\"relaxed\"", t_on_element, 1, 0},
    {"warp_any", "value, mask=-1", t_vote, 0, 0},
    {"warp_all", "value, mask=-1", t_vote, 0, 0},
    {"shuffle_elect", "thread_extent", t_shuffle_elect, 0, 0},
    {"tvm_warp_shuffle", "mask, value, src_lane, width, warp_size", t_warp_shuffle, 0, 0},
    {"address_of", "buffer_load", t_address_of, 0, 0},
    /* the NVSHMEM family (§1.5); nbytes counts bytes */
    {"get_pe", "", t_rank, 2, 0},
    {"get_pe_num", "", t_rank, 3, 0},
    {"int_p", "dest, value, pe", t_shmem, SH_INT_P, 0},
    {"putmem", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"putmem_nbi", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"putmem_block", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"putmem_warp", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"putmem_nbi_block", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"putmem_nbi_warp", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"getmem", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"getmem_nbi", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"getmem_block", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"getmem_warp", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"getmem_nbi_block", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"getmem_nbi_warp", "dest, src, nbytes, pe", t_shmem, SH_PUTGET, 0},
    {"putmem_signal", "dest, src, nbytes, sig_addr, signal, sig_op, pe", t_shmem, SH_SIGNAL, 0},
    {"putmem_signal_nbi", "dest, src, nbytes, sig_addr, signal, sig_op, pe", t_shmem, SH_SIGNAL, 0},
    {"putmem_signal_block", "dest, src, nbytes, sig_addr, signal, sig_op, pe", t_shmem, SH_SIGNAL, 0},
    {"putmem_signal_warp", "dest, src, nbytes, sig_addr, signal, sig_op, pe", t_shmem, SH_SIGNAL, 0},
    {"putmem_signal_nbi_block", "dest, src, nbytes, sig_addr, signal, sig_op, pe", t_shmem, SH_SIGNAL, 0},
    {"putmem_signal_nbi_warp", "dest, src, nbytes, sig_addr, signal, sig_op, pe", t_shmem, SH_SIGNAL, 0},
    {"signal_op", "sig_addr, signal, sig_op, pe", t_shmem, SH_SIGNAL_OP, 0},
    {"signal_wait_until", "sig_addr, cmp, cmp_value", t_shmem, SH_WAIT, 0},
    {"barrier_all", "", t_shmem, SH_NOARG, 0},
    {"barrier_all_block", "*args", t_shmem, SH_NOARG, 0},
    {"barrier_all_warp", "*args", t_shmem, SH_NOARG, 0},
    {"sync_all", "", t_shmem, SH_NOARG, 0},
    {"sync_all_block", "*args", t_shmem, SH_NOARG, 0},
    {"sync_all_warp", "*args", t_shmem, SH_NOARG, 0},
    {"quiet", "", t_shmem, SH_NOARG, 0},
    {"fence", "", t_shmem, SH_NOARG, 0},
    {"broadcast", "team, dest, src, nelems, pe_root", t_shmem, SH_COLL, 0},
    {"broadcast_warp", "team, dest, src, nelems, pe_root", t_shmem, SH_COLL, 0},
    {"broadcast_block", "team, dest, src, nelems, pe_root", t_shmem, SH_COLL, 0},
    {"broadcastmem_block", "team, dest, src, nbytes, pe_root", t_shmem, SH_COLL, 0},
    {"fcollect", "team, dest, src, nelems", t_shmem, SH_COLL, 0},
    {"fcollect_warp", "team, dest, src, nelems", t_shmem, SH_COLL, 0},
    {"fcollect_block", "team, dest, src, nelems", t_shmem, SH_COLL, 0},
    {"cpengine_cpasync", "*args", bi_kernel_unsupported, 0, 0},
    /* the enums (§1.7) */
    {"Team", NULL, bi_value_namespace, MOD_TEAM, BI_VALUE},
    {"CmpType", NULL, bi_value_namespace, MOD_CMPTYPE, BI_VALUE},
    {"Amo", NULL, bi_value_namespace, MOD_AMO, BI_VALUE},
};

/* Enum members are ints; each may also be spelled with its C prefix (T.Amo.AMO_SIGNAL_SET),
 * which registry.c strips. */
#define MEMBER(name, value) {name, NULL, bi_value_int, value, BI_VALUE}
static const Builtin team_rows[] = {
    MEMBER("INVALID", -1), MEMBER("WORLD", 0), MEMBER("SHARED", 1), MEMBER("NODE", 2),
    MEMBER("SAME_MYPE_NODE", 3), MEMBER("SAME_GPU", 4), MEMBER("GPU_LEADERS", 5), MEMBER("TEAMS_MIN", 6),
};
/* NVSHMEM order, which differs from the IPC stack's BinaryRelation (GE 2 ... LT 5). */
static const Builtin cmp_rows[] = {
    MEMBER("EQ", 0), MEMBER("NE", 1), MEMBER("GT", 2), MEMBER("LE", 3), MEMBER("LT", 4), MEMBER("GE", 5),
};
static const Builtin amo_rows[] = {
    MEMBER("ACK", 1),        MEMBER("INC", 2),        MEMBER("SET", 3),          MEMBER("ADD", 4),
    MEMBER("AND", 5),        MEMBER("OR", 6),         MEMBER("XOR", 7),          MEMBER("SIGNAL", 8),
    MEMBER("SIGNAL_SET", 9), MEMBER("SIGNAL_ADD", 10), MEMBER("END_OF_NONFETCH", 11), MEMBER("FETCH", 12),
    MEMBER("FETCH_INC", 13), MEMBER("FETCH_ADD", 14), MEMBER("FETCH_AND", 15),   MEMBER("FETCH_OR", 16),
    MEMBER("FETCH_XOR", 17), MEMBER("SWAP", 18),      MEMBER("COMPARE_SWAP", 19),
};
#undef MEMBER

const BuiltinTable builtins_dist[] = {
    {MOD_T, dist_rows, TS_ARRAY_LEN(dist_rows), NULL},
    {MOD_TEAM, team_rows, TS_ARRAY_LEN(team_rows), NULL},
    {MOD_CMPTYPE, cmp_rows, TS_ARRAY_LEN(cmp_rows), NULL},
    {MOD_AMO, amo_rows, TS_ARRAY_LEN(amo_rows), NULL},
    BUILTIN_TABLE_END,
};
