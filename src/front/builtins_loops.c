/* builtins_loops.c — T.Kernel, the loop frames (range, T.serial, T.unroll, T.vectorized,
 * T.Parallel, T.Pipelined, T.Persistent), the kernel's block and thread queries, and
 * synchronisation.
 *
 *   registry.c  ->  here  ->  V_KERNEL / V_FRAME values that eval_stmt.c turns into IR
 *                             (`with T.Kernel(...)`, `for i in T.Parallel(...)`)
 *
 * A frame only describes a loop nest (kind, bounds, pipeline annotations); the statement that
 * iterates it makes the FORs.  A range with constant bounds is also a Python iterable, so
 * `for i in range(4)` in host code runs four times. */
#include <string.h>

#include "builtin.h"

static const Builtin *loop_row(const char *name);

/* ---- T.Kernel -------------------------------------------------------------------------------- */
/* T.Kernel(*grid, threads=128, prelude=None, is_cpu=False): the launch of the `with` body.
 * It checks its own arguments (the row takes *args, **kwargs): 0 to 3 grid extents (none: one
 * block), then the keywords in order. */
/* T.ClusterKernel's cluster_dims: (n, 1, 1) or n, n blocks along x (2 to 16); 1 is no cluster. */
static bool cluster_dims(Eval *ev, Value *v, int *out, SrcLoc loc) {
  ValList items = {0};
  if (v->kind == V_TUPLE || v->kind == V_LIST) items = v->u.seq;
  else vl_push(ev, &items, v);
  int64_t d[3] = {1, 1, 1};
  if (items.n < 1 || items.n > 3) {
    ts_error(ev->c, loc, "T.ClusterKernel cluster_dims= takes 1 to 3 values");
    return false;
  }
  for (int i = 0; i < items.n; i++)
    if (!ev_to_int(ev, items.items[i], &d[i], loc)) return false;
  if (d[1] != 1 || d[2] != 1 || d[0] < 1 || d[0] > 16) {
    ts_error(ev->c, loc, "T.ClusterKernel cluster_dims=(%lld, %lld, %lld): clusters of 1 to 16 blocks along x only "
             "are supported", (long long)d[0], (long long)d[1], (long long)d[2]);
    return false;
  }
  *out = d[0] > 1 ? (int)d[0] : 0;
  return true;
}

/* T.Kernel(*grid, threads=...) (bi->arg 0) / T.ClusterKernel(*grid, cluster_dims=..., threads=...)
 * (1): a kernel frame; a cluster's blocks are consecutive along x (grid x a multiple of it).
 * T.CUDASourceCodeKernel(*grid, threads=..., source_code_or_path=, entry_name=) (2): a kernel
 * statement at once (source_kernel.c). */
static Value *t_kernel(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  KernelFrame *k = ARENA_NEW(ev->a, KernelFrame);
  k->threads[0] = 128;
  k->threads[1] = k->threads[2] = 1;
  if (a->npos > 3) {
    ts_error(ev->c, loc, "T.Kernel() takes 0 to 3 grid dimensions (%d given)", a->npos);
    return NULL;
  }
  if (a->npos == 0) { /* T.Kernel(): one block */
    k->grid[0] = ir_i32(ev->c, 1);
    k->ngrid = 1;
  }
  for (int i = 0; i < a->npos; i++) {
    k->grid[i] = ev_to_ir(ev, a->pos[i], NULL, loc);
    if (!k->grid[i]) return NULL;
    if (!dtype_is_int(k->grid[i]->dtype)) {
      ts_error(ev->c, loc, "T.Kernel grid dimension %d must be an integer", i);
      return NULL;
    }
    const AstNode *an = bi_arg_node(a, i, NULL);
    if (!bi_check_size(ev, k->grid[i], 1, an ? an->loc : loc, "T.Kernel grid dimension", i)) return NULL;
  }
  if (a->npos) k->ngrid = a->npos;
  for (int i = 0; i < a->nkw; i++) {
    Value *v = a->kwv[i];
    if (v->kind == V_POISON) return NULL;
    if (!strcmp(a->kw[i], "threads")) {
      if (v->kind == V_NONE) continue;
      ValList items = {0};
      if (v->kind == V_TUPLE || v->kind == V_LIST) items = v->u.seq;
      else vl_push(ev, &items, v);
      if (items.n < 1 || items.n > 3) {
        ts_error(ev->c, loc, "T.Kernel threads= takes 1 to 3 values");
        return NULL;
      }
      for (int d = 0; d < items.n; d++) {
        int64_t t;
        if (!ev_to_int(ev, items.items[d], &t, loc)) return NULL;
        if (t < 1 || t > 1024) {
          ts_error(ev->c, loc, "T.Kernel threads=%lld is out of range (1..1024)", (long long)t);
          return NULL;
        }
        k->threads[d] = (int)t;
      }
    } else if (!strcmp(a->kw[i], "prelude")) {
      if (v->kind == V_NONE) continue;
      if (v->kind != V_STR) {
        ts_error(ev->c, loc, "T.Kernel prelude= must be a string");
        return NULL;
      }
      k->prelude = v->u.str.s;
    } else if (!strcmp(a->kw[i], "is_cpu")) {
      continue;
    } else if (bi->arg == 1 && !strcmp(a->kw[i], "cluster_dims")) {
      if (v->kind != V_NONE && !cluster_dims(ev, v, &k->cluster_x, loc)) return NULL;
    } else if (bi->arg == 2 && (!strcmp(a->kw[i], "source_code_or_path") || !strcmp(a->kw[i], "entry_name"))) {
      if (v->kind == V_NONE) continue;
      if (v->kind != V_STR) {
        ts_error(ev->c, loc, "T.CUDASourceCodeKernel %s= must be a string (or a path)", a->kw[i]);
        return NULL;
      }
      *(a->kw[i][0] == 's' ? &k->source : &k->entry) = v->u.str.s;
    } else {
      ts_error(ev->c, loc, "T.Kernel() got an unexpected keyword argument '%s'", a->kw[i]);
      return NULL;
    }
  }
  int64_t gx;
  if (k->cluster_x > 1 && ir_is_const_int(k->grid[0], &gx) && gx % k->cluster_x) {
    ts_error(ev->c, loc, "T.ClusterKernel: grid x (%lld) must be a multiple of the cluster's %d blocks", (long long)gx,
             k->cluster_x);
    return NULL;
  }
  if (bi->arg == 2) return ev_source_kernel(ev, k, loc);
  Value *v = ev_new(ev, V_KERNEL);
  v->u.kernel = k;
  return v;
}

/* ---- loop frames ----------------------------------------------------------------------------- */
/* A frame of `ndim` dimensions; the caller fills min/extent. */
static LoopFrame *new_frame(Eval *ev, IrForKind kind, int ndim) {
  LoopFrame *f = ARENA_NEW(ev->a, LoopFrame);
  f->kind = kind;
  f->ndim = ndim;
  f->min = ARENA_ARRAY(ev->a, IrExpr *, ndim);
  f->extent = ARENA_ARRAY(ev->a, IrExpr *, ndim);
  return f;
}

static Value *frame_value(Eval *ev, LoopFrame *f) {
  Value *v = ev_new(ev, V_FRAME);
  v->u.frame = f;
  return v;
}

/* start/stop/step of serial-like loops (range semantics): constant bounds also make the frame
 * a Python iterable; a step other than 1 iterates 0..ceil((stop - start) / step) with
 * i = start + k*step (eval_stmt.c). */
static LoopFrame *range_frame(Eval *ev, IrForKind kind, Value *start, Value *stop, Value *stepv, SrcLoc loc) {
  if (!stop || stop->kind == V_NONE) {
    stop = start;
    start = ev_int(ev, 0);
  }
  if (stepv && stepv->kind == V_NONE) stepv = NULL;
  LoopFrame *f = new_frame(ev, kind, 1);
  if (start->kind == V_INT && stop->kind == V_INT && (!stepv || stepv->kind == V_INT)) {
    f->py_ok = true;
    f->py_start = start->u.i;
    f->py_stop = stop->u.i;
    f->py_step = stepv ? stepv->u.i : 1;
    if (f->py_step == 0) {
      ts_error(ev->c, loc, "range() step must not be zero");
      return NULL;
    }
  }
  IrExpr *lo = ev_to_ir(ev, start, NULL, loc), *hi = ev_to_ir(ev, stop, lo, loc);
  if (!lo || !hi) return NULL;
  if (!dtype_is_int(lo->dtype) || !dtype_is_int(hi->dtype)) {
    ts_error(ev->c, loc, "loop bounds must be integers");
    return NULL;
  }
  f->min[0] = lo;
  IrExpr *ext = ev_linear_diff(ev, hi, lo, loc);
  if (stepv && !(stepv->kind == V_INT && stepv->u.i == 1)) {
    /* range(a, b, s): n = ceil((b - a) / s) iterations of i = a + k*s (s < 0 counts down) */
    IrExpr *st = ev_to_ir(ev, stepv, lo, loc);
    if (!st) return NULL;
    int64_t sv;
    if (!ir_is_const_int(st, &sv) || sv == 0 || sv == INT64_MIN) {
      ts_error(ev->c, loc, "a staged loop step must be a non-zero constant");
      return NULL;
    }
    f->step = st;
    IrExpr *span = sv > 0 ? ext : ev_linear_diff(ev, lo, hi, loc);
    int64_t mag = sv > 0 ? sv : -sv;
    ext = ir_binary(ev->c, IR_FLOORDIV, ir_binary(ev->c, IR_ADD, span, ir_int(ev->c, mag - 1, span->dtype, loc), loc),
                    ir_int(ev->c, mag, span->dtype, loc), loc);
    ext = ir_binary(ev->c, IR_MAX, ext, ir_int(ev->c, 0, ext->dtype, loc), loc); /* empty ranges */
  }
  f->extent[0] = ext;
  return f;
}

/* range / T.serial / T.unroll / T.vectorized(start, stop=None, step=None): bi->arg is the
 * loop kind. */
static Value *t_range(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  LoopFrame *f;
  if (bi->arg == IR_FOR_UNROLLED) {
    f = range_frame(ev, IR_FOR_UNROLLED, arg[0], arg[1], arg[2], call_loc(a));
    int64_t uf = 0;
    if (f && !bi_opt_int(ev, arg[4], 0, &uf, call_loc(a))) return NULL;
    if (f) f->unroll_factor = (int)uf;
  } else {
    f = range_frame(ev, (IrForKind)bi->arg, arg[0], arg[1], arg[2], call_loc(a));
  }
  return f ? frame_value(ev, f) : NULL;
}

/* T.Parallel(*extents, coalesced_width=None, loop_layout=None, prefer_async=None,
 * annotations=None): a parallel nest from 0; T.grid(*extents): the serial nest (TVMScript's).
 * bi->arg is the loop kind; it checks its own arguments. */
static Value *t_parallel(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  const char *fname = bi->arg == IR_FOR_PARALLEL ? "T.Parallel" : "T.grid";
  if (a->npos < 1) {
    ts_error(ev->c, loc, "%s() needs at least one extent", fname);
    return NULL;
  }
  for (int i = 0; i < a->nkw; i++)
    if (bi->arg != IR_FOR_PARALLEL || (strcmp(a->kw[i], "coalesced_width") && strcmp(a->kw[i], "loop_layout") &&
                                       strcmp(a->kw[i], "prefer_async") && strcmp(a->kw[i], "annotations"))) {
      ts_error(ev->c, loc, "%s() got an unexpected keyword argument '%s'", fname, a->kw[i]);
      return NULL;
    }
  LoopFrame *f = new_frame(ev, (IrForKind)bi->arg, a->npos);
  for (int i = 0; i < a->npos; i++) {
    f->extent[i] = ev_to_ir(ev, a->pos[i], NULL, loc);
    if (!f->extent[i]) return NULL;
    if (!dtype_is_int(f->extent[i]->dtype)) {
      ts_error(ev->c, loc, "%s extents must be integers", fname);
      return NULL;
    }
    const AstNode *an = bi_arg_node(a, i, NULL);
    if (!bi_check_size(ev, f->extent[i], bi->arg == IR_FOR_PARALLEL ? 1 : 0, an ? an->loc : loc,
                       bi->arg == IR_FOR_PARALLEL ? "T.Parallel extent" : "T.grid extent", i))
      return NULL;
    f->min[i] = ir_int(ev->c, 0, f->extent[i]->dtype, loc);
  }
  for (int i = 0; i < a->nkw; i++)
    if (!strcmp(a->kw[i], "loop_layout") && a->kwv[i]->kind != V_NONE &&
        !(f->loop_layout = bi_loop_layout(ev, a->kwv[i], a->npos, f->extent, "T.Parallel", loc)))
      return NULL;
  return frame_value(ev, f);
}

/* T.parallel(start, stop=None, annotations=None): TVMScript's parallel loop, which
 * tilelang.language re-exports; TileLang treats any parallel For as a T.Parallel nest, so
 * `for i in T.parallel(n): for j in T.parallel(m):` is T.Parallel(n, m).  Parallel nests
 * start at 0 here: a non-zero start is refused rather than shifted. */
static Value *t_parallel_range(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  LoopFrame *f = range_frame(ev, IR_FOR_PARALLEL, arg[0], arg[1], NULL, call_loc(a));
  if (!f) return NULL;
  int64_t lo;
  if (!ir_is_const_int(f->min[0], &lo) || lo != 0) {
    ts_error(ev->c, call_loc(a), "T.parallel(start, stop) needs start 0: use T.parallel(stop) and add the start to the index");
    return NULL;
  }
  f->py_ok = false; /* a parallel nest is never a Python iterable */
  if (!bi_check_size(ev, f->extent[0], 1, call_loc(a), "T.parallel extent", 0)) return NULL;
  return frame_value(ev, f);
}

/* An optional list of ints (T.Pipelined's order= and stage=). */
static bool int_list(Eval *ev, Value *v, int **out, int *n, SrcLoc loc) {
  if (!v || v->kind == V_NONE) return true;
  if (v->kind != V_TUPLE && v->kind != V_LIST) {
    ts_error(ev->c, loc, "expected a list of integers, got %s", ev_type_name(v));
    return false;
  }
  *n = v->u.seq.n;
  *out = ARENA_ARRAY(ev->a, int, *n);
  for (int i = 0; i < *n; i++) {
    int64_t x;
    if (!ev_to_int(ev, v->u.seq.items[i], &x, loc)) return false;
    (*out)[i] = (int)x;
  }
  return true;
}

/* T.Pipelined(start, stop, num_stages, order, stage): a serial loop the pipeline passes
 * (inject_pipeline, warp_specialize) overlap in num_stages stages. */
static Value *t_pipelined(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  LoopFrame *f = range_frame(ev, IR_FOR_PIPELINED, arg[0], arg[1], NULL, loc);
  if (!f) return NULL;
  int64_t ns;
  if (!bi_opt_int(ev, arg[2], 0, &ns, loc)) return NULL;
  f->num_stages = (int)ns;
  int no = 0, nst = 0;
  if (!int_list(ev, arg[3], &f->order, &no, loc) || !int_list(ev, arg[4], &f->stage, &nst, loc)) return NULL;
  if (f->order && f->stage && no != nst) {
    ts_error(ev->c, loc, "T.Pipelined: order= and stage= must have the same length");
    return NULL;
  }
  f->norder = no ? no : nst;
  return frame_value(ev, f);
}

/* T.Persistent(domain, wave_size, index, group_size=8): a loop frame over the tiles of a
 * domain of 1 to PERSISTENT_MAX_DIMS dimensions, block `index` taking every wave_size-th tile
 * (exec_persistent_for). */
static Value *t_persistent(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  Value *dom = arg[0];
  int nd = dom->kind == V_LIST || dom->kind == V_TUPLE ? dom->u.seq.n : 1;
  if (nd < 1 || nd > PERSISTENT_MAX_DIMS) {
    ts_error(ev->c, loc, "T.Persistent: the domain must have 1 to %d dimensions, got %d", PERSISTENT_MAX_DIMS, nd);
    return ev->poison;
  }
  LoopFrame *f = ARENA_NEW(ev->a, LoopFrame);
  f->kind = IR_FOR_SERIAL;
  f->ndim = nd;
  f->min = ARENA_ARRAY(ev->a, IrExpr *, nd);
  f->extent = ARENA_ARRAY(ev->a, IrExpr *, nd);
  f->persistent = true;
  for (int d = 0; d < nd; d++) {
    Value *x = dom->kind == V_LIST || dom->kind == V_TUPLE ? dom->u.seq.items[d] : dom;
    IrExpr *e = ev_to_ir(ev, x, NULL, loc);
    if (!e || !dtype_is_int(e->dtype)) {
      if (e) ts_error(ev->c, loc, "T.Persistent: domain extents must be integers");
      return ev->poison;
    }
    f->min[d] = ir_i32(ev->c, 0);
    f->extent[d] = ir_cast(ev->c, TS_DTYPE_INT32, e, loc);
  }
  f->wave = ev_to_ir(ev, arg[1], NULL, loc);
  f->index = ev_to_ir(ev, arg[2], NULL, loc);
  if (!f->wave || !f->index || !dtype_is_int(f->wave->dtype) || !dtype_is_int(f->index->dtype)) {
    if (f->wave && f->index) ts_error(ev->c, loc, "T.Persistent: wave_size and index must be integers");
    return ev->poison;
  }
  f->wave = ir_cast(ev->c, TS_DTYPE_INT32, f->wave, loc);
  f->index = ir_cast(ev->c, TS_DTYPE_INT32, f->index, loc);
  int64_t w;
  if (ir_is_const_int(f->wave, &w) && w <= 0) {
    ts_error(ev->c, loc, "T.Persistent: wave_size must be positive, got %lld", (long long)w);
    return ev->poison;
  }
  f->group = 8;
  if (arg[3] && arg[3]->kind != V_NONE) {
    if (!ev_to_int(ev, arg[3], &f->group, loc)) return ev->poison;
    if (f->group <= 0) {
      ts_error(ev->c, loc, "T.Persistent: group_size must be positive, got %lld", (long long)f->group);
      return ev->poison;
    }
  }
  Value *v = ev_new(ev, V_FRAME);
  v->u.frame = f;
  return v;
}

/* ---- block and thread indices ------------------------------------------------------------------ */
/* T.get_thread_binding(dim=0): threadIdx along dim, made on first use. */
static Value *t_get_thread_binding(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, "T.get_thread_binding", loc)) return NULL;
  int64_t dim;
  if (!bi_opt_int(ev, arg[0], 0, &dim, loc)) return NULL;
  if (dim < 0 || dim > 2) {
    ts_error(ev->c, loc, "T.get_thread_binding: dim must be 0, 1 or 2");
    return NULL;
  }
  return ev_expr(ev, ir_varref(ev->c, ir_kernel_thread_var(ev->c, &ev->kernel->u.kernel, (int)dim, loc), loc));
}

/* The dim argument of a kernel query: 0, 1 or 2 (absent: 0). */
static bool dim_arg(Eval *ev, CallArgs *a, Value *v, const Builtin *bi, int64_t *dim) {
  if (!v) {
    *dim = 0;
    return true;
  }
  if (!ev_to_int(ev, v, dim, call_loc(a))) return false;
  if (*dim < 0 || *dim > 2) {
    ts_error(ev->c, call_loc(a), "T.%s: dim must be 0, 1 or 2, got %lld", bi->name, (long long)*dim);
    return false;
  }
  return true;
}

/* T.get_block_binding(dim=0): blockIdx of the enclosing T.Kernel (0 for an unused axis). */
static Value *t_block_binding(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  int64_t dim;
  if (!bi_need_kernel(ev, a, bi) || !dim_arg(ev, a, arg[0], bi, &dim)) return ev->poison;
  IrVar *v = ev->kernel->u.kernel.block_var[dim];
  if (!v) return ev_int(ev, 0);
  return ev_expr(ev, ir_varref(ev->c, v, call_loc(a)));
}

/* T.get_thread_extent(dim=0) / T.get_block_extent(dim=0): blockDim / gridDim. */
static Value *t_extent(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  int64_t dim;
  if (!bi_need_kernel(ev, a, bi) || !dim_arg(ev, a, arg[0], bi, &dim)) return ev->poison;
  IrKernel *k = &ev->kernel->u.kernel;
  if (bi->arg == 0) return ev_int(ev, k->threads[dim]);
  int64_t g;
  if (ir_is_const_int(k->grid[dim], &g)) return ev_int(ev, g);
  return ev_expr(ev, k->grid[dim]);
}

/* T.launch_thread("threadIdx.x", n) / ("blockIdx.y", n) inside a T.Kernel: the index of
 * that axis (TVM's form of binding one), whose extent must be the kernel's. */
static Value *t_launch_thread(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  const char *tag = arg[0]->kind == V_STR ? arg[0]->u.str.s : "";
  bool thread = !strncmp(tag, "threadIdx.", 10), block = !strncmp(tag, "blockIdx.", 9);
  const char *axis = thread ? tag + 10 : block ? tag + 9 : "";
  int d = axis[0] >= 'x' && axis[0] <= 'z' && !axis[1] ? axis[0] - 'x' : -1;
  int64_t ext;
  if (d < 0 || !ev_to_int(ev, arg[1], &ext, loc)) {
    if (d < 0)
      ts_error(ev->c, loc, "T.launch_thread: the tag must be threadIdx.x/y/z or blockIdx.x/y/z, got %s%s%s",
               arg[0]->kind == V_STR ? "\"" : "", arg[0]->kind == V_STR ? tag : ev_type_name(arg[0]),
               arg[0]->kind == V_STR ? "\"" : "");
    return ev->poison;
  }
  IrKernel *k = &ev->kernel->u.kernel;
  int64_t have;
  bool same = thread ? k->threads[d] == ext : ir_is_const_int(k->grid[d], &have) && have == ext;
  if (!same) {
    ts_error(ev->c, loc, "T.launch_thread(\"%s\", %lld): inside a T.Kernel the extent must be the kernel's own for "
             "that axis", tag, (long long)ext);
    return ev->poison;
  }
  if (thread) return ev_expr(ev, ir_varref(ev->c, ir_kernel_thread_var(ev->c, k, d, loc), loc));
  return k->block_var[d] ? ev_expr(ev, ir_varref(ev->c, k->block_var[d], loc)) : ev_int(ev, 0);
}

/* T.cluster_sync() / T.cluster_arrive() / T.cluster_wait() (bi->arg: the device operation):
 * barriers over every block of the thread-block cluster (T.ClusterKernel); a kernel without
 * one is a cluster of one block. */
static Value *t_cluster_op(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  ev_emit(ev, ir_device_stmt(ev->c, (IrDeviceOp)bi->arg, NULL, 0, NULL, 0, call_loc(a)));
  return ev->none;
}

/* T.block_rank_in_cluster(): this block's rank in its cluster (0 .. cluster size - 1). */
static Value *t_cluster_rank(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  return ev_expr(ev, ir_device(ev->c, IRD_CLUSTER_RANK, TS_DTYPE_INT32, NULL, 0, NULL, 0, call_loc(a)));
}

/* T.tvm_storage_sync("shared"): TVM's block barrier, T.sync_threads(). */
static Value *t_storage_sync(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  const char *scope = arg[0]->kind == V_STR ? arg[0]->u.str.s : "";
  if (strcmp(scope, "shared") && strcmp(scope, "shared.dyn")) {
    ts_error(ev->c, loc, "T.tvm_storage_sync: only \"shared\" (a block barrier) is supported");
    return ev->poison;
  }
  ev_emit(ev, ir_eval(ev->c, ir_call(ev->c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, loc), loc));
  return ev->none;
}

/* T.get_thread_bindings() / T.get_block_bindings(): all three axes as a list. */
static Value *t_bindings(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  Value *out = ev_new(ev, V_LIST);
  for (int d = 0; d < 3; d++) {
    Value *v;
    if (bi->arg == 0) {
      Value *dv = ev_int(ev, d);
      CallArgs sub = *a;
      sub.pos = &dv;
      sub.npos = 1;
      sub.nkw = 0;
      v = builtin_call_row(ev, loop_row("get_thread_binding"), "T.get_thread_binding", &sub);
    } else {
      IrVar *bv = ev->kernel->u.kernel.block_var[d];
      v = bv ? ev_expr(ev, ir_varref(ev->c, bv, call_loc(a))) : ev_int(ev, 0);
    }
    if (!v) return ev->poison;
    vl_push(ev, &out->u.seq, v);
  }
  return out;
}

/* tx = T.thread_binding(extent | start, stop, thread="threadIdx.x"): the kernel's thread index
 * along that axis; the range must be the whole axis (0 .. the kernel's threads there). */
static Value *t_thread_binding(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int64_t lo = 0, hi;
  if (!arg[1] || arg[1]->kind == V_NONE) {
    if (!ev_to_int(ev, arg[0], &hi, loc)) return ev->poison;
  } else if (!ev_to_int(ev, arg[0], &lo, loc) || !ev_to_int(ev, arg[1], &hi, loc)) {
    return ev->poison;
  }
  static const char *const axes[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
  int axis = -1;
  for (int i = 0; i < 3 && arg[2] && arg[2]->kind == V_STR; i++)
    if (!strcmp(arg[2]->u.str.s, axes[i])) axis = i;
  if (axis < 0) {
    ts_error(ev->c, loc, "T.thread_binding: thread must be \"threadIdx.x\", \"threadIdx.y\" or \"threadIdx.z\"");
    return ev->poison;
  }
  IrKernel *k = &ev->kernel->u.kernel;
  int64_t n = k->threads[axis] > 0 ? k->threads[axis] : 1;
  if (lo != 0 || hi != n) {
    ts_error(ev->c, loc, "T.thread_binding: %s runs over [0, %lld) in this kernel, not [%lld, %lld)", axes[axis],
             (long long)n, (long long)lo, (long long)hi);
    return ev->poison;
  }
  return ev_expr(ev, ir_varref(ev->c, ir_kernel_thread_var(ev->c, k, axis, loc), loc));
}

/* ---- synchronisation --------------------------------------------------------------------------- */
/* The (barrier_id, arrive_count) operands of a named barrier, checked: an id in [0, 16), a
 * positive multiple of 32 threads up to the block's (absent: the whole block); false after a
 * diagnostic naming fname. */
static bool named_barrier_operands(Eval *ev, Value *idv, Value *nv, const char *fname, IrExpr **out, SrcLoc loc) {
  IrKernel *k = &ev->kernel->u.kernel;
  int64_t all = (int64_t)k->threads[0] * (k->threads[1] > 0 ? k->threads[1] : 1) * (k->threads[2] > 0 ? k->threads[2] : 1);
  IrExpr *id = ev_to_ir(ev, idv, NULL, loc), *n = nv ? ev_to_ir(ev, nv, NULL, loc) : ir_i32(ev->c, all);
  if (!id || !n) return false;
  int64_t v;
  if (!dtype_is_int(id->dtype) || !dtype_is_int(n->dtype)) {
    ts_error(ev->c, loc, "%s: barrier_id and arrive_count must be integers", fname);
    return false;
  }
  if (ir_is_const_int(id, &v) && (v < 0 || v > 15)) {
    ts_error(ev->c, loc, "%s: barrier_id must be in [0, 16), got %lld", fname, (long long)v);
    return false;
  }
  if (ir_is_const_int(n, &v) && (v <= 0 || v % 32 || v > all)) {
    ts_error(ev->c, loc, "%s: arrive_count must be a positive multiple of 32 up to the block's %lld threads, got %lld",
             fname, (long long)all, (long long)v);
    return false;
  }
  out[0] = ir_cast(ev->c, TS_DTYPE_INT32, id, loc);
  out[1] = ir_cast(ev->c, TS_DTYPE_INT32, n, loc);
  return true;
}

/* T.sync_threads(): __syncthreads().  T.sync_threads(barrier_id[, arrive_count]): bar.sync on
 * hardware barrier `barrier_id` over `arrive_count` threads (default: the whole block), both
 * possibly run-time values, as TileScale lowers it (DeepEP syncs the warps serving one rank). */
static Value *t_sync_threads(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, "T.sync_threads", loc)) return NULL;
  if (arg[0]) {
    IrExpr *args[2];
    if (!named_barrier_operands(ev, arg[0], arg[1], "T.sync_threads", args, loc)) return ev->poison;
    ev_emit(ev, ir_device_stmt(ev->c, IRD_BAR_SYNC, NULL, 0, args, 2, loc));
    return ev->none;
  }
  ev_emit(ev, ir_eval(ev->c, ir_call(ev->c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, call_loc(a)), call_loc(a)));
  return ev->none;
}

/* T.named_barrier_arrive(barrier_id, thread_count): bar.arrive, the one-sided half of
 * T.sync_threads(barrier_id, thread_count) (a producer signals without waiting). */
static Value *t_named_barrier_arrive(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  IrExpr *args[2];
  if (!bi_need_kernel(ev, a, bi) || !named_barrier_operands(ev, arg[0], arg[1], "T.named_barrier_arrive", args, loc))
    return ev->poison;
  ev_emit(ev, ir_device_stmt(ev->c, IRD_BAR_ARRIVE, NULL, 0, args, 2, loc));
  return ev->none;
}

/* T.pdl_trigger() / T.pdl_sync(): programmatic dependent launch's signal and wait (a kernel
 * launched without PDL waits for its predecessor anyway: the wait returns at once). */
static Value *t_pdl(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  ev_emit(ev, ir_device_stmt(ev->c, (IrDeviceOp)bi->arg, NULL, 0, NULL, 0, call_loc(a)));
  return ev->none;
}

/* T.sync_warp(): __syncwarp(). */
static Value *t_sync_warp(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  ev_emit(ev, ir_eval(ev->c, ir_call(ev->c, IRI_SYNCWARP, TS_DTYPE_VOID, NULL, 0, call_loc(a)), call_loc(a)));
  return ev->none;
}

/* T.thread_return(): the calling thread leaves the kernel (CUDA `return;`), e.g. the warps
 * a DeepEP kernel does not need.  What may follow it (no tile operation, no block-wide
 * barrier: the threads that left would miss them) is checked by pass/thread_return.c, where
 * the whole function's control flow is known. */
static Value *t_thread_return(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  ev_emit(ev, ir_stmt(ev->c, IR_S_RETURN, call_loc(a)));
  return ev->none;
}

/* ---- explicit mbarriers (T.alloc_barrier) --------------------------------------------------------
 * TileLang's semantics, executed by every thread that reaches the call: barrier_arrive /
 * mbarrier_arrive is one arrival of that thread; barrier_wait / mbarrier_wait_parity(b, p)
 * returns once the phase of parity p has completed (a fresh barrier is in phase 0, so waiting
 * for parity 1 returns at once); mbarrier_expect_tx adds tx bytes to the current phase without
 * arriving. */
/* T.cp_async_barrier_noinc(bar): bar receives this thread's arrival once every cp.async it
 * issued before has landed (cp.async.mbarrier.arrive.noinc: counted among the barrier's
 * expected arrivals), so a T.barrier_wait on it sees the copied data. */
static Value *t_cp_async_barrier_noinc(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *b = bi_barrier_addr(ev, arg[0], "T.cp_async_barrier_noinc", loc);
  if (!b) return ev->poison;
  ev_emit(ev, ir_device_stmt(ev->c, IRD_CP_ASYNC_MBAR_ARRIVE_NOINC, NULL, 0, &b, 1, loc));
  return ev->none;
}

/* T.barrier_arrive(b) / T.mbarrier_arrive(b, cta_id=None) / T.ptx_arrive_cluster_barrier(b,
 * cta_id) (bi->arg 0 / 1 / 2): one arrival on b, or with cta_id on block cta_id's copy of b
 * (a T.alloc_cluster_barrier), releasing this thread's writes at cluster scope. */
static Value *t_barrier_arrive(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  const char *fname = arena_printf(ev->a, "T.%s", bi->name);
  IrExpr *b = bi_barrier_addr(ev, arg[0], fname, loc);
  if (!b) return ev->poison;
  if (bi->arg && arg[1] && arg[1]->kind != V_NONE) { /* cta_id: block cta_id's copy of the barrier */
    IrExpr *args[2] = {b, ev_to_ir(ev, arg[1], NULL, loc)};
    if (!args[1]) return ev->poison;
    if (!dtype_is_int(args[1]->dtype)) {
      ts_error(ev->c, loc, "%s: cta_id must be an integer (a block's rank in the cluster)", fname);
      return ev->poison;
    }
    args[1] = ir_cast(ev->c, TS_DTYPE_INT32, args[1], loc);
    ev_emit(ev, ir_device_stmt(ev->c, IRD_MBAR_ARRIVE_REMOTE, NULL, 0, args, 2, loc));
    return ev->none;
  }
  if (bi->arg == 2) {
    ts_error(ev->c, loc, "%s needs cta_id (the rank of the block whose barrier it arrives on)", fname);
    return ev->poison;
  }
  ev_emit(ev, ir_device_stmt(ev->c, IRD_MBAR_ARRIVE, NULL, 0, &b, 1, loc));
  return ev->none;
}

static Value *t_barrier_wait(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  const char *fname = arena_printf(ev->a, "T.%s", bi->name);
  IrExpr *b = bi_barrier_addr(ev, arg[0], fname, loc);
  IrExpr *p = b ? ev_to_ir(ev, arg[1], NULL, loc) : NULL;
  if (!p) return ev->poison;
  int64_t v;
  if (!dtype_is_int(p->dtype) && p->dtype != TS_DTYPE_BOOL) {
    ts_error(ev->c, loc, "%s: the parity must be an integer", fname);
    return ev->poison;
  }
  if (ir_is_const_int(p, &v) && v != 0 && v != 1) {
    ts_error(ev->c, loc, "%s: the parity must be 0 or 1, got %lld", fname, (long long)v);
    return ev->poison;
  }
  IrExpr *args[2] = {b, ir_cast(ev->c, TS_DTYPE_INT32, p, loc)};
  /* a cluster barrier's phase is completed by other blocks: their writes are acquired */
  bool cluster = b->u.call.args[0]->u.load.buf->cluster_barrier;
  ev_emit(ev, ir_device_stmt(ev->c, cluster ? IRD_MBAR_WAIT_CLUSTER : IRD_MBAR_WAIT, NULL, 0, args, 2, loc));
  return ev->none;
}

static Value *t_mbarrier_expect_tx(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *b = bi_barrier_addr(ev, arg[0], "T.mbarrier_expect_tx", loc);
  IrExpr *tx = b ? ev_to_ir(ev, arg[1], NULL, loc) : NULL;
  if (!tx) return ev->poison;
  if (!dtype_is_int(tx->dtype)) {
    ts_error(ev->c, loc, "T.mbarrier_expect_tx: the byte count must be an integer");
    return ev->poison;
  }
  IrExpr *args[2] = {b, ir_cast(ev->c, TS_DTYPE_INT32, tx, loc)};
  ev_emit(ev, ir_device_stmt(ev->c, IRD_MBAR_EXPECT_TX_NOARRIVE, NULL, 0, args, 2, loc));
  return ev->none;
}

/* T.set_max_nreg(n, is_inc) / T.inc_max_nreg(n) / T.dec_max_nreg(n): setmaxnreg, which every
 * warp of a warpgroup must run together (a T.ws body's code); n in [24, 256], a multiple of 8.
 * bi->arg: 0 set_max_nreg, 1 inc, 2 dec. */
static Value *t_set_max_nreg(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int64_t n, inc = bi->arg == 1;
  if (!ev_to_int(ev, arg[0], &n, loc) || (bi->arg == 0 && !ev_to_int(ev, arg[1], &inc, loc))) return ev->poison;
  if (n < 24 || n > 256 || n % 8 || (inc != 0 && inc != 1)) {
    ts_error(ev->c, loc, "T.%s: the register count must be a multiple of 8 in [24, 256] and is_inc 0 or 1 (got %lld, %lld)",
             bi->name, (long long)n, (long long)inc);
    return ev->poison;
  }
  ev_emit(ev, ir_device_stmt(ev->c, inc ? IRD_SETMAXNREG_INC : IRD_SETMAXNREG_DEC, &n, 1, NULL, 0, loc));
  return ev->none;
}

/* T.fence_proxy_async(): orders this thread's generic-proxy shared-memory writes before later
 * async-proxy reads (wgmma, TMA stores) of other threads, as TileLang's user fence. */
static Value *t_fence_proxy_async(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  ev_emit(ev, ir_device_stmt(ev->c, IRD_FENCE_PROXY_ASYNC, NULL, 0, NULL, 0, call_loc(a)));
  return ev->none;
}

/* T.ws(*warp_group_ids) (= T.WarpSpecialize): `with T.ws(i, ...)` runs its body on the
 * warpgroups listed only, threads [128 i, 128 (i + 1)) of the linear thread index, as
 * TileLang's WarpSpecialize frame does (an `if` on the thread index); consecutive groups
 * merge into one range.  The value is the range; eval_stmt.c's `with` makes the IF. */
static Value *t_ws(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrKernel *k = &ev->kernel->u.kernel;
  if (a->npos == 0) {
    ts_error(ev->c, loc, "T.%s needs at least one warp group index", bi->name);
    return ev->poison;
  }
  bool seen[64] = {false};
  for (int i = 0; i < a->npos; i++) {
    int64_t g;
    if (!ev_to_int(ev, a->pos[i], &g, loc)) return ev->poison;
    if (g < 0 || g >= 64) {
      ts_error(ev->c, loc, "T.%s: warp group index %lld is out of range", bi->name, (long long)g);
      return ev->poison;
    }
    seen[g] = true;
  }
  int64_t lo = 0, hi = 0;
  while (!seen[lo]) lo++;
  for (hi = lo; hi < 64 && seen[hi]; hi++) {
  }
  for (int64_t g = hi; g < 64; g++)
    if (seen[g]) {
      ts_error(ev->c, loc, "T.%s: warp groups %lld and %lld are not consecutive; one T.%s over a split thread range is "
               "not supported", bi->name, (long long)(hi - 1), (long long)g, bi->name);
      return ev->poison;
    }
  int64_t nthreads = (int64_t)k->threads[0] * (k->threads[1] > 0 ? k->threads[1] : 1) * (k->threads[2] > 0 ? k->threads[2] : 1);
  if (k->threads[1] > 1 || k->threads[2] > 1) {
    ts_error(ev->c, loc, "T.%s needs a one-dimensional thread block (threads=N)", bi->name);
    return ev->poison;
  }
  if (hi * 128 > nthreads) {
    ts_error(ev->c, loc, "T.%s: warp group %lld is threads [%lld, %lld), but the kernel has %lld threads", bi->name,
             (long long)(hi - 1), (long long)((hi - 1) * 128), (long long)(hi * 128), (long long)nthreads);
    return ev->poison;
  }
  Value *v = ev_new(ev, V_WS);
  v->u.ws.lo = lo * 128;
  v->u.ws.hi = hi * 128;
  return v;
}

/* ---- rows -------------------------------------------------------------------------------------- */
static const Builtin loop_rows[] = {
    /* kernels */
    {"Kernel", "*args, **kwargs", t_kernel, 0, BI_TERSE},
    {"ClusterKernel", "*args, **kwargs", t_kernel, 1, 0},
    {"CUDASourceCodeKernel", "*args, **kwargs", t_kernel, 2, 0},
    /* loop frames */
    {"Parallel", "*args, **kwargs", t_parallel, IR_FOR_PARALLEL, BI_TERSE},
    {"grid", "*args, **kwargs", t_parallel, IR_FOR_SERIAL, 0},
    {"parallel", "start, stop=None, annotations=None", t_parallel_range, 0, BI_TERSE},
    {"serial", "start, stop=None, step=None, annotations=None", t_range, IR_FOR_SERIAL, BI_TERSE},
    {"Serial", "start, stop=None, step=None, annotations=None", t_range, IR_FOR_SERIAL, BI_TERSE},
    {"unroll", "start, stop=None, step=None, explicit=False, unroll_factor=None", t_range, IR_FOR_UNROLLED, BI_TERSE},
    {"vectorized", "start, stop=None, step=None, annotations=None", t_range, IR_FOR_VECTORIZED, BI_TERSE},
    {"Pipelined", "start, stop=None, num_stages=0, order=None, stage=None, sync=None, group=None, annotations=None",
     t_pipelined, 0, BI_TERSE},
    {"Persistent", "domain, wave_size, index, group_size=8", t_persistent, 0, 0},
    {"loop_break", "", bi_kernel_unsupported, 0, 0},
    /* block and thread indices */
    {"get_thread_binding", "dim=0", t_get_thread_binding, 0, BI_TERSE},
    {"get_block_binding", "dim=0", t_block_binding, 0, 0},
    {"get_thread_bindings", "", t_bindings, 0, 0},
    {"get_block_bindings", "", t_bindings, 1, 0},
    {"get_thread_extent", "dim=0", t_extent, 0, 0},
    {"get_block_extent", "dim=0", t_extent, 1, 0},
    {"thread_binding", "start, stop=None, thread=None, annotations=None", t_thread_binding, 0, 0},
    /* synchronisation and warp specialisation */
    {"sync_threads", "barrier_id=None, arrive_count=None", t_sync_threads, 0, BI_TERSE},
    {"tvm_storage_sync", "scope", t_storage_sync, 0, 0},
    {"cluster_sync", "", t_cluster_op, IRD_CLUSTER_SYNC, 0},
    {"cluster_arrive", "", t_cluster_op, IRD_CLUSTER_ARRIVE, 0},
    {"cluster_wait", "", t_cluster_op, IRD_CLUSTER_WAIT, 0},
    {"block_rank_in_cluster", "", t_cluster_rank, 0, 0},
    {"launch_thread", "thread_tag, extent", t_launch_thread, 0, 0},
    {"named_barrier_arrive", "barrier_id, thread_count", t_named_barrier_arrive, 0, 0},
    {"sync_warp", "", t_sync_warp, 0, 0},
    {"thread_return", "", t_thread_return, 0, 0},
    {"cp_async_barrier_noinc", "barrier", t_cp_async_barrier_noinc, 0, 0},
    {"barrier_arrive", "mbarrier", t_barrier_arrive, 0, 0},
    {"barrier_wait", "mbarrier, parity", t_barrier_wait, 0, 0},
    {"mbarrier_arrive", "mbarrier, cta_id=None", t_barrier_arrive, 1, 0},
    {"ptx_arrive_cluster_barrier", "mbarrier, cta_id", t_barrier_arrive, 2, 0},
    {"mbarrier_wait_parity", "mbarrier, parity", t_barrier_wait, 0, 0},
    {"mbarrier_expect_tx", "mbarrier, tx", t_mbarrier_expect_tx, 0, 0},
    {"ws", "*warp_group_ids", t_ws, 0, 0},
    {"WarpSpecialize", "*warp_group_ids", t_ws, 0, 0},
    {"set_max_nreg", "reg_count, is_inc", t_set_max_nreg, 0, 0},
    /* register reallocation between warpgroups is a performance choice: results are the same */
    {"disable_warp_group_reg_alloc", "", bi_hint, 0, 0},
    {"no_set_max_nreg", "", bi_hint, 0, 0},
    /* the producer/consumer pair of a hand-written split: both kept as hints, since lowering only
     * the consumer's setmaxnreg.inc without the producer's release could block it forever */
    {"annotate_producer_reg_dealloc", "reg_count=24", bi_hint, 0, 0},
    {"annotate_consumer_reg_alloc", "reg_count=240", bi_hint, 0, 0},
    {"inc_max_nreg", "reg_count", t_set_max_nreg, 1, 0},
    {"dec_max_nreg", "reg_count", t_set_max_nreg, 2, 0},
    {"fence_proxy_async", "", t_fence_proxy_async, 0, 0},
    {"pdl_trigger", "", t_pdl, IRD_PDL_TRIGGER, 0},
    {"pdl_sync", "", t_pdl, IRD_PDL_SYNC, 0},
};

/* range is the Python builtin; in a kernel it is T.serial (DESIGN.md §4). */
static const Builtin range_rows[] = {
    {"range", "start, stop=None, step=None, annotations=None", t_range, IR_FOR_SERIAL, BI_TERSE},
};

static const Builtin *loop_row(const char *name) {
  const Builtin *row = builtin_find(loop_rows, TS_ARRAY_LEN(loop_rows), name);
  TS_ASSERT(row);
  return row;
}

const BuiltinTable builtins_loops[] = {
    {MOD_T, loop_rows, TS_ARRAY_LEN(loop_rows), NULL},
    {MOD_BUILTINS, range_rows, TS_ARRAY_LEN(range_rows), NULL},
    BUILTIN_TABLE_END,
};
