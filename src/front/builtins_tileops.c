/* builtins_tileops.c — the tile operations: T.copy, T.fill / T.clear, the reductions, the
 * atomics, T.gemm and its asynchronous form (T.wgmma_gemm + T.wait_wgmma), T.im2col, and
 * T.GemmWarpPolicy.
 *
 *   registry.c  ->  here  ->  COPY / FILL / REDUCE / ATOMIC / GEMM statements
 *                              (lowered by pass/lower_tile_ops.c, planned by pass/plan_gemm.c)
 *
 * An operand is a whole buffer, a region (A[i, a:b]) or a corner element (A[i, j]) that takes
 * its extents from the other operand; extents are checked against each other here, so a
 * mismatch is reported at the call, not by a pass. */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "../ir/analysis.h"

static const Builtin *tileop_row(const char *name);

/* ---- tile-op operands ------------------------------------------------------------------------ */
typedef struct Operand {
  IrBuffer *buf;
  IrExpr **min, **extent; /* extent NULL: a corner (BufferLoad) whose extent comes from the partner */
  SrcLoc loc;
} Operand;

/* A buffer, region or element argument as an operand; `role` names it in errors. */
static bool operand(Eval *ev, Value *v, const char *fname, const char *role, Operand *o, SrcLoc loc) {
  o->loc = loc;
  if (v->kind == V_BUFFER) {
    IrBuffer *b = v->u.buf;
    o->buf = b;
    o->min = ARENA_ARRAY(ev->a, IrExpr *, b->ndim);
    o->extent = ARENA_ARRAY(ev->a, IrExpr *, b->ndim);
    for (int i = 0; i < b->ndim; i++) {
      o->min[i] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
      o->extent[i] = b->shape[i];
    }
    return true;
  }
  if (v->kind == V_REGION) {
    o->buf = v->u.region.buf;
    o->min = v->u.region.min;
    o->extent = v->u.region.extent;
    return true;
  }
  if (v->kind == V_EXPR && v->u.expr->kind == IR_LOAD) {
    o->buf = v->u.expr->u.load.buf;
    o->min = v->u.expr->u.load.idx;
    o->extent = NULL;
    return true;
  }
  if (v->kind == V_OPAQUE) {
    ts_error(ev->c, loc, "%s", v->u.opaque.what);
    return false;
  }
  ts_error(ev->c, loc, "%s(): %s must be a buffer, a buffer region or a buffer element, got %s", fname, role,
           ev_type_name(v));
  return false;
}

/* The operand as the IR region a tile statement holds. */
static IrRegion to_region(const Operand *o) {
  IrRegion r = {o->buf, o->buf->ndim, o->min, o->extent, o->loc};
  return r;
}

static bool is_one(const IrExpr *e) {
  int64_t k;
  return ir_is_const_int(e, &k) && k == 1;
}

/* A corner operand takes the partner's extents, right-aligned: leading 1-extents of
 * the partner are dropped when it has more dimensions; missing leading dims get 1. */
static bool fill_corner(Eval *ev, Operand *corner, const Operand *other, const char *fname) {
  int rank = corner->buf->ndim, n = other->buf->ndim, skip = 0;
  while (n - skip > rank && is_one(other->extent[skip])) skip++;
  if (n - skip > rank) {
    ts_error(ev->c, corner->loc, "%s(): a %d-d region does not fit into buffer '%s' of rank %d", fname, n - skip,
             corner->buf->name, rank);
    return false;
  }
  corner->extent = ARENA_ARRAY(ev->a, IrExpr *, rank);
  int pad = rank - (n - skip);
  for (int i = 0; i < rank; i++)
    corner->extent[i] = i < pad ? ir_int(ev->c, 1, TS_DTYPE_INT32, corner->loc) : other->extent[skip + i - pad];
  return true;
}

/* Non-1 extents must agree in order (1-dims broadcast). */
static bool check_extents(Eval *ev, const Operand *x, const Operand *y, const char *fname, SrcLoc loc) {
  IrExpr *ex[16], *ey[16];
  int nx = 0, ny = 0;
  for (int i = 0; i < x->buf->ndim && nx < 16; i++)
    if (!is_one(x->extent[i])) ex[nx++] = x->extent[i];
  for (int i = 0; i < y->buf->ndim && ny < 16; i++)
    if (!is_one(y->extent[i])) ey[ny++] = y->extent[i];
  StrBuf sx = {0}, sy = {0};
  bool bad = nx != ny;
  for (int i = 0; !bad && i < nx; i++) {
    int64_t a, b;
    if (ir_is_const_int(ex[i], &a) && ir_is_const_int(ey[i], &b)) bad = a != b;
  }
  if (bad) {
    for (int i = 0; i < x->buf->ndim; i++) {
      if (i) sb_append(&sx, ", ");
      ir_print_expr(&sx, x->extent[i]);
    }
    for (int i = 0; i < y->buf->ndim; i++) {
      if (i) sb_append(&sy, ", ");
      ir_print_expr(&sy, y->extent[i]);
    }
    ts_error(ev->c, loc, "%s(): extents do not match: %s [%s] vs %s [%s]", fname, x->buf->name, sb_str(&sx),
             y->buf->name, sb_str(&sy));
  }
  sb_free(&sx);
  sb_free(&sy);
  return !bad;
}

/* TileLang's copy over regions of different extents: the loop runs over the region of the
 * lower-level memory (registers > shared > global; src when they tie), which must not be
 * smaller than src's.  So a dst region larger than src's, where src is that base, takes src's
 * extents (the copy fills the start of dst's region: T.copy(A[:, :2], B[:, :3]) writes B[:, :2]).
 * Non-1 extents are matched in order, all constants; false (nothing changed) otherwise. */
static int scope_level(const IrBuffer *b) {
  IrScope s = ir_buffer_root(b)->scope; /* a view: its memory's */
  return s == IR_SCOPE_FRAGMENT || s == IR_SCOPE_LOCAL ? 2 : s == IR_SCOPE_SHARED || s == IR_SCOPE_SHARED_DYN ? 1 : 0;
}
static bool shrink_dst_to_src(Eval *ev, const Operand *s, Operand *d) {
  if (scope_level(s->buf) < scope_level(d->buf)) return false;
  int si[16], di[16], ns = 0, nd = 0;
  for (int i = 0; i < s->buf->ndim && ns < 16; i++)
    if (!is_one(s->extent[i])) si[ns++] = i;
  for (int i = 0; i < d->buf->ndim && nd < 16; i++)
    if (!is_one(d->extent[i])) di[nd++] = i;
  if (ns != nd) return false;
  bool smaller = false;
  for (int k = 0; k < ns; k++) {
    int64_t a, b;
    if (!ir_is_const_int(s->extent[si[k]], &a) || !ir_is_const_int(d->extent[di[k]], &b) || a > b) return false;
    smaller = smaller || a < b;
  }
  if (!smaller) return false;
  IrExpr **ext = ARENA_ARRAY(ev->a, IrExpr *, d->buf->ndim);
  for (int i = 0; i < d->buf->ndim; i++) ext[i] = d->extent[i];
  for (int k = 0; k < ns; k++) ext[di[k]] = s->extent[si[k]];
  d->extent = ext;
  return true;
}

/* ---- copies, fills, reductions, atomics ---------------------------------------------------------- */
/* The COPY statement of src -> dst (a missing extent taken from the other side); NULL after a
 * diagnostic.  Two single elements are a plain store: *store is set and NULL returned. */
static IrStmt *copy_stmt(Eval *ev, Value *src, Value *dst, const char *fname, SrcLoc loc, IrStmt **store) {
  Operand s, d;
  if (!operand(ev, src, fname, "src", &s, loc) || !operand(ev, dst, fname, "dst", &d, loc)) return NULL;
  if (!s.extent && !d.extent) {
    IrExpr *v = ir_cast(ev->c, d.buf->dtype, src->u.expr, loc);
    *store = ir_store(ev->c, d.buf, d.min, d.buf->ndim, v, loc);
    return NULL;
  }
  if (!s.extent && !fill_corner(ev, &s, &d, fname)) return NULL;
  if (!d.extent && !fill_corner(ev, &d, &s, fname)) return NULL;
  shrink_dst_to_src(ev, &s, &d);
  if (!check_extents(ev, &s, &d, fname, loc)) return NULL;
  IrStmt *st = ir_stmt(ev->c, IR_S_COPY, loc);
  st->u.copy.src = to_region(&s);
  st->u.copy.dst = to_region(&d);
  return st;
}

/* T.copy(src, dst, ...): a tile copy (two elements: a plain store).  T.async_copy(src, dst)
 * is the same row: issued as a plain tile copy, complete when the call returns, so the
 * T.ptx_wait_group that follows it has nothing left to wait for (a correct, not an
 * overlapped, form of TileLang's explicit cp.async copy). */
static Value *t_copy(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, "T.copy", loc)) return NULL;
  IrStmt *store = NULL, *st = copy_stmt(ev, arg[0], arg[1], "T.copy", loc, &store);
  if (store) {
    ev_emit(ev, store);
    return ev->none;
  }
  if (!st) return NULL;
  st->u.copy.disable_tma = bi_opt_bool(ev, arg[3], false, loc);
  int64_t cw = 0;
  if (!bi_opt_int(ev, arg[2], 0, &cw, loc)) return NULL;
  st->u.copy.coalesced_width = (int)cw;
  if (arg[7] && arg[7]->kind != V_NONE) {
    /* the nest legalize makes runs over dst's non-unit extents */
    const IrRegion *d = &st->u.copy.dst;
    IrExpr *ext[8];
    int n = 0;
    for (int k = 0; k < d->ndim && n < 8; k++) {
      int64_t e;
      if (!ir_is_const_int(d->extent[k], &e) || e != 1) ext[n++] = d->extent[k];
    }
    if (!(st->u.copy.loop_layout = bi_loop_layout(ev, arg[7], n, ext, "T.copy", loc))) return NULL;
  }
  ev_emit(ev, st);
  return ev->none;
}

/* The blocks of the kernel's thread-block cluster (1 without one). */
static int cluster_blocks(const Eval *ev) {
  return ev->kernel->u.kernel.cluster_x > 1 ? ev->kernel->u.kernel.cluster_x : 1;
}

/* A multicast load's cluster_mask: a nonzero bitmask of the kernel's cluster ranks. */
static bool set_cluster_mask(Eval *ev, IrStmt *st, Value *mask, const char *fname, SrcLoc loc) {
  if (!ev_to_int(ev, mask, &st->u.copy.cluster_mask, loc)) return false;
  int cl = cluster_blocks(ev);
  if (st->u.copy.cluster_mask <= 0 || st->u.copy.cluster_mask >= (1 << cl)) {
    ts_error(ev->c, loc, "%s: cluster_mask must be a positive bitmask of the cluster's %d rank%s (below %d), got %lld",
             fname, cl, cl > 1 ? "s" : "", 1 << cl, (long long)st->u.copy.cluster_mask);
    return false;
  }
  return true;
}

/* T.tma_copy(src, dst, barrier=b): the producer half of a TMA load (TileLang's split-phase
 * copy): one thread of the scope that runs it adds the tile's bytes to b's current phase
 * (expect_tx, no arrival) and issues the boxes; nobody waits here: the user arrives on b with
 * T.barrier_arrive and waits with T.barrier_wait.  T.tma_copy(shared, global) is a TMA store:
 * issued by one thread once every thread's writes to the tile are in, waited for by
 * T.tma_store_wait().  cluster_mask=m multicasts a load to the ranks of m (each still
 * announces the bytes on its own copy of b).  Lowered by lower_tile_ops (tma_copy.c). */
static Value *t_tma_copy(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  static const char *const unsupported[] = {NULL, NULL, NULL, NULL, "leader_scope_threads", "eviction_policy",
                                            "annotations"};
  for (int i = 4; i < 7; i++)
    if (arg[i] && arg[i]->kind != V_NONE) {
      ts_error(ev->c, loc, "T.tma_copy with %s is not supported yet", unsupported[i]);
      return ev->poison;
    }
  IrStmt *store = NULL, *st = copy_stmt(ev, arg[0], arg[1], "T.tma_copy", loc, &store);
  if (store) ts_error(ev->c, loc, "T.tma_copy needs a tile (a region or a buffer), not a single element");
  if (!st) return ev->poison;
  IrScope ss = st->u.copy.src.buf->scope, ds = st->u.copy.dst.buf->scope;
  bool s_shared = ss == IR_SCOPE_SHARED || ss == IR_SCOPE_SHARED_DYN, d_shared = ds == IR_SCOPE_SHARED || ds == IR_SCOPE_SHARED_DYN;
  if (s_shared && ds == IR_SCOPE_GLOBAL) { /* a store: one thread issues it, T.tma_store_wait() waits */
    if (arg[2] && arg[2]->kind != V_NONE) {
      ts_error(ev->c, loc, "T.tma_copy: a store (shared -> global) takes no barrier; wait for it with "
                           "T.tma_store_wait()");
      return ev->poison;
    }
    st->u.copy.tma_store = true;
    ev_emit(ev, st);
    return ev->none;
  }
  if (ss != IR_SCOPE_GLOBAL || !d_shared) {
    ts_error(ev->c, loc, "T.tma_copy copies global -> shared (a load) or shared -> global (a store), not %s -> %s",
             ir_scope_names[ss], ir_scope_names[ds]);
    return ev->poison;
  }
  if (!arg[2] || arg[2]->kind == V_NONE) {
    ts_error(ev->c, loc, "T.tma_copy: a load needs barrier=... (a T.alloc_barrier element whose phase the bytes "
                         "complete)");
    return ev->poison;
  }
  st->u.copy.barrier = bi_barrier_addr(ev, arg[2], "T.tma_copy", loc);
  if (!st->u.copy.barrier) return ev->poison;
  if (arg[3] && arg[3]->kind != V_NONE) { /* a multicast: the mask's ranks of the cluster all receive it */
    if (!set_cluster_mask(ev, st, arg[3], "T.tma_copy", loc)) return ev->poison;
    /* another block completes the barrier's bytes: initialised cluster-wide before any block goes on */
    st->u.copy.barrier->u.call.args[0]->u.load.buf->cluster_barrier = true;
  }
  ev_emit(ev, st);
  return ev->none;
}

/* T.copy_cluster(src_global, dst_shared, cluster_mask=m): TMA loads of the tile, multicast into
 * the mask's ranks (the lowest issues it; ranks outside it load their own), on a barrier of
 * its own that every thread of the block arrives on and waits for: complete when it returns. */
static Value *copy_cluster_multicast(Eval *ev, Value **arg, SrcLoc loc) {
  if (arg[2] && arg[2]->kind != V_NONE) {
    ts_error(ev->c, loc, "T.copy_cluster takes cluster_mask (a multicast load) or dst_block (a copy into another "
                         "block), not both");
    return ev->poison;
  }
  IrStmt *store = NULL, *st = copy_stmt(ev, arg[0], arg[1], "T.copy_cluster", loc, &store);
  if (store) ts_error(ev->c, loc, "T.copy_cluster needs tiles (regions or buffers), not single elements");
  if (!st) return ev->poison;
  IrScope ss = st->u.copy.src.buf->scope, ds = st->u.copy.dst.buf->scope;
  if (ss != IR_SCOPE_GLOBAL || (ds != IR_SCOPE_SHARED && ds != IR_SCOPE_SHARED_DYN)) {
    ts_error(ev->c, loc, "T.copy_cluster with cluster_mask loads a global tile into shared memory, not %s -> %s",
             ir_scope_names[ss], ir_scope_names[ds]);
    return ev->poison;
  }
  if (!set_cluster_mask(ev, st, arg[3], "T.copy_cluster", loc)) return ev->poison;
  /* the copy's own barrier: one arrival per thread of the block */
  int64_t *count = ARENA_NEW(ev->a, int64_t);
  *count = 1;
  for (int d = 0; d < 3; d++) *count *= ev->kernel->u.kernel.threads[d] > 0 ? ev->kernel->u.kernel.threads[d] : 1;
  IrExpr *one = ir_i32(ev->c, 1), *zero = ir_i32(ev->c, 0);
  IrBuffer *b = ir_buffer(ev->c, bi_take_name(ev, "copy_barrier"), TS_DTYPE_UINT64, IR_SCOPE_BARRIER, 1, &one, loc);
  b->arrive_counts = count;
  b->cluster_barrier = true;
  bi_declare_buffer(ev, b, loc);
  IrExpr *ld = ir_load(ev->c, b, &zero, 1, loc);
  st->u.copy.barrier = ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc);
  st->u.copy.wait = true;
  ev->kernel->u.kernel.manual_ws = true;
  ev_emit(ev, st);
  return ev->none;
}

/* T.copy_cluster(src, dst, dst_block=r, remote_barrier=b): the shared tile src copied into
 * block r's dst (distributed shared memory, lowered by cluster_copy.c); with remote_barrier the
 * copy arrives once on block r's b (a T.alloc_cluster_barrier element) when it is in, else the
 * user orders it (T.cluster_sync).  Without dst_block it is a T.copy.  The multicast form
 * (cluster_mask, a global tile loaded into several blocks) is T.tma_copy's here. */
static Value *t_copy_cluster(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[3] && arg[3]->kind != V_NONE) return copy_cluster_multicast(ev, arg, loc);
  for (int i = 7; i < 9; i++)
    if (arg[i] && arg[i]->kind != V_NONE) {
      ts_error(ev->c, loc, "T.copy_cluster with %s is not supported yet", i == 7 ? "annotations" : "loop_layout");
      return ev->poison;
    }
  IrStmt *store = NULL, *st = copy_stmt(ev, arg[0], arg[1], "T.copy_cluster", loc, &store);
  bool to_block = arg[2] && arg[2]->kind != V_NONE;
  if (store && to_block) ts_error(ev->c, loc, "T.copy_cluster needs tiles (regions or buffers), not single elements");
  if (store && !to_block) ev_emit(ev, store);
  if (!st) return store && !to_block ? ev->none : ev->poison;
  if (!to_block) { /* a plain copy */
    if (arg[4] && arg[4]->kind != V_NONE) {
      ts_error(ev->c, loc, "T.copy_cluster: remote_barrier needs dst_block (the block the copy goes to)");
      return ev->poison;
    }
    ev_emit(ev, st);
    return ev->none;
  }
  IrScope ss = st->u.copy.src.buf->scope, ds = st->u.copy.dst.buf->scope;
  if ((ss != IR_SCOPE_SHARED && ss != IR_SCOPE_SHARED_DYN) || (ds != IR_SCOPE_SHARED && ds != IR_SCOPE_SHARED_DYN)) {
    ts_error(ev->c, loc, "T.copy_cluster with dst_block copies a shared tile into another block's shared tile, not "
                         "%s -> %s", ir_scope_names[ss], ir_scope_names[ds]);
    return ev->poison;
  }
  IrExpr *r = ev_to_ir(ev, arg[2], NULL, loc);
  if (!r) return ev->poison;
  int64_t rank;
  int cl = cluster_blocks(ev);
  if (!dtype_is_int(r->dtype) || (ir_is_const_int(r, &rank) && (rank < 0 || rank >= cl))) {
    ts_error(ev->c, loc, "T.copy_cluster: dst_block must be an integer rank of the cluster's %d block%s", cl,
             cl > 1 ? "s" : "");
    return ev->poison;
  }
  st->u.copy.dst_block = ir_cast(ev->c, TS_DTYPE_INT32, r, loc);
  if (arg[4] && arg[4]->kind != V_NONE && !(st->u.copy.barrier = bi_barrier_addr(ev, arg[4], "T.copy_cluster", loc)))
    return ev->poison;
  ev->kernel->u.kernel.manual_ws = true; /* the blocks' copies order themselves */
  ev_emit(ev, st);
  return ev->none;
}

/* T.tma_store_wait(read=False): the calling thread waits until its TMA stores (T.tma_copy
 * shared -> global) are done: with read=True only until they have read the tile, so it may be
 * rewritten.  The thread that issued them must call it (threads without stores return at once). */
static Value *t_tma_store_wait(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int64_t zero = 0;
  bool read = bi_opt_bool(ev, arg[0], false, call_loc(a));
  ev_emit(ev, ir_device_stmt(ev->c, read ? IRD_TMA_STORE_WAIT_READ : IRD_TMA_STORE_WAIT, &zero, 1, NULL, 0, call_loc(a)));
  return ev->none;
}

/* T.fill(buffer, value) / T.clear(buffer): every element of the operand set to value. */
static Value *emit_fill(Eval *ev, CallArgs *a, const char *fname, Value *dst, Value *value) {
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, fname, loc)) return NULL;
  Operand d;
  if (!operand(ev, dst, fname, "dst", &d, loc)) return NULL;
  if (!d.extent) { /* a single element */
    d.extent = ARENA_ARRAY(ev->a, IrExpr *, d.buf->ndim);
    for (int i = 0; i < d.buf->ndim; i++) d.extent[i] = ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
  }
  IrExpr *v = bi_to_dtype(ev, value, d.buf->dtype, loc);
  if (!v) return NULL;
  IrStmt *st = ir_stmt(ev->c, IR_S_FILL, loc);
  st->u.fill.dst = to_region(&d);
  st->u.fill.value = v;
  ev_emit(ev, st);
  return ev->none;
}

static Value *t_fill(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  return emit_fill(ev, a, "T.fill", arg[0], arg[1]);
}

static Value *t_clear(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  return emit_fill(ev, a, "T.clear", arg[0], ev_int(ev, 0));
}

/* Extents equal as constants, or as the same expression. */
static bool same_extent(const IrExpr *x, const IrExpr *y) {
  int64_t a, b;
  if (ir_is_const_int(x, &a) && ir_is_const_int(y, &b)) return a == b;
  return ir_expr_equal(x, y);
}

/* A reduce operand lives in registers (a fragment) or in shared memory. */
static bool reduce_scope_ok(Eval *ev, const IrBuffer *b, const char *fname, SrcLoc loc) {
  if (b->scope == IR_SCOPE_FRAGMENT || b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN) return true;
  ts_error(ev->c, loc, "%s(): '%s' must be a fragment or a shared buffer (T.alloc_fragment / T.alloc_shared)", fname,
           b->name);
  return false;
}

/* A fragment of b's shape and dtype, named b_frag, allocated where the reduction is. */
static IrBuffer *staging_fragment(Eval *ev, const IrBuffer *b, SrcLoc loc) {
  IrBuffer *f = ir_buffer(ev->c, arena_printf(ev->a, "%s_frag", b->name), b->dtype, IR_SCOPE_FRAGMENT, b->ndim,
                          b->shape, loc);
  bi_declare_buffer(ev, f, loc);
  return f;
}

/* T.copy(src, dst) of two whole buffers of one shape. */
static void emit_whole_copy(Eval *ev, IrBuffer *src, IrBuffer *dst, SrcLoc loc) {
  Operand s = {src, NULL, NULL, loc}, d = {dst, NULL, NULL, loc};
  s.min = ARENA_ARRAY(ev->a, IrExpr *, src->ndim);
  d.min = ARENA_ARRAY(ev->a, IrExpr *, dst->ndim);
  for (int i = 0; i < src->ndim; i++) s.min[i] = d.min[i] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
  s.extent = src->shape;
  d.extent = dst->shape;
  IrStmt *st = ir_stmt(ev->c, IR_S_COPY, loc);
  st->u.copy.src = to_region(&s);
  st->u.copy.dst = to_region(&d);
  ev_emit(ev, st);
}

/* A reduction of a thread's own registers (T.alloc_local source, local or T.alloc_var
 * destination): every thread folds its whole array, serially along `dim`, for each element
 * of dst (whose shape the caller checked: src's without dim, with a 1 there, or [1]). */
static void reduce_registers(Eval *ev, IrBuffer *src, IrBuffer *dst, int dim, IrReduceKind op, bool nan, bool clear,
                             SrcLoc loc) {
  TsCompiler *c = ev->c;
  IrExpr **sidx = ARENA_ARRAY(ev->a, IrExpr *, src->ndim), **didx = ARENA_ARRAY(ev->a, IrExpr *, dst->ndim + 1);
  IrVar **vars = ARENA_ARRAY(ev->a, IrVar *, src->ndim);
  int nd = 0;
  for (int i = 0; i < src->ndim; i++) {
    vars[i] = ir_var(c, i == dim ? "r" : "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
    sidx[i] = ir_varref(c, vars[i], loc);
    if (i != dim) didx[nd++] = sidx[i];
    else if (dst->ndim == src->ndim) didx[nd++] = ir_i32(c, 0);
  }
  if (dst->scope == IR_SCOPE_VAR || nd == 0) { /* a scalar: element 0 */
    didx[0] = ir_i32(c, 0);
    nd = 1;
  }
  IrExpr *x = ir_load(c, src, sidx, src->ndim, loc);
  if (op == IR_RED_ABSMAX || op == IR_RED_ABSSUM) x = ir_call(c, IRI_ABS, x->dtype, &x, 1, loc);
  IrExpr *acc = ir_load(c, dst, didx, nd, loc);
  IrStmt *fold = ir_store(c, dst, didx, nd, ir_reduce_combine(c, op, nan, acc, ir_cast(c, dst->dtype, x, loc)), loc);
  fold = ir_for(c, vars[dim], ir_i32(c, 0), src->shape[dim], IR_FOR_SERIAL, fold, loc);
  IrStmt *body = clear ? ir_seq(c, (IrStmt *[]){ir_store(c, dst, didx, nd, ir_reduce_identity(c, op, dst->dtype), loc),
                                               fold}, 2, loc)
                       : fold;
  for (int i = src->ndim - 1; i >= 0; i--)
    if (i != dim) body = ir_for(c, vars[i], ir_i32(c, 0), src->shape[i], IR_FOR_SERIAL, body, loc);
  ev_emit(ev, body);
}

/* T.reduce_sum / _max / _min / _absmax / _abssum(buffer, out, dim=-1, clear=True): bi->arg
 * is the reduce kind. */
static Value *t_reduce(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  static const char *const fnames[] = {"T.reduce_sum",    "T.reduce_max",   "T.reduce_min",   "T.reduce_absmax",
                                       "T.reduce_abssum", "T.reduce_bitand", "T.reduce_bitor", "T.reduce_bitxor"};
  const char *fname = fnames[bi->arg];
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, fname, loc)) return NULL;
  Value *out = arg[1];
  if (out->kind == V_EXPR && out->u.expr->kind == IR_LOAD && out->u.expr->u.load.buf->scope == IR_SCOPE_VAR)
    out = bi_buffer_value(ev, out->u.expr->u.load.buf); /* a T.alloc_var reads as its value */
  if (arg[0]->kind != V_BUFFER || out->kind != V_BUFFER) {
    ts_error(ev->c, loc, "%s(): source and destination must be buffers, got %s and %s", fname, ev_type_name(arg[0]),
             ev_type_name(out));
    return NULL;
  }
  IrBuffer *src = arg[0]->u.buf, *dst = out->u.buf;
  bool bitwise = bi->arg >= IR_RED_BITAND;
  if (bitwise && ((!dtype_is_int(src->dtype) && src->dtype != TS_DTYPE_BOOL) ||
                  (!dtype_is_int(dst->dtype) && dst->dtype != TS_DTYPE_BOOL))) {
    ts_error(ev->c, loc, "%s(): bitwise reductions take integer or bool buffers, got %s -> %s", fname,
             dtype_name(src->dtype), dtype_name(dst->dtype));
    return NULL;
  }
  /* nan_propagate=True: a NaN in the row makes the result NaN (max / min / absmax; a sum
   * propagates NaN anyway).  The bitwise reductions have no such argument. */
  int nan_prop = !bitwise && arg[5] && arg[5]->kind != V_NONE ? ev_truth(ev, arg[5], loc) : 0;
  if (nan_prop == -2) return NULL;
  int64_t dim;
  if (!bi_opt_int(ev, arg[2], -1, &dim, loc)) return NULL;
  if (dim < 0) dim += src->ndim;
  if (dim < 0 || dim >= src->ndim) {
    ts_error(ev->c, loc, "%s(): dim is out of range for buffer '%s' of rank %d", fname, src->name, src->ndim);
    return NULL;
  }
  /* dst = src shape without `dim` (or with a 1 there: keepdim); a 1-d source reduces to [1]. */
  bool ok = false;
  if (dst->ndim == src->ndim - 1) {
    ok = true;
    for (int i = 0, j = 0; i < src->ndim; i++) {
      if (i == dim) continue;
      ok &= same_extent(src->shape[i], dst->shape[j++]);
    }
  } else if (dst->ndim == src->ndim) {
    ok = true;
    for (int i = 0; i < src->ndim; i++) ok &= i == dim ? is_one(dst->shape[i]) : same_extent(src->shape[i], dst->shape[i]);
  }
  if (!ok && src->ndim == 1 && dst->ndim == 1 && is_one(dst->shape[0])) ok = true;
  if (!ok) {
    StrBuf sb = {0};
    sb_append(&sb, "[");
    for (int i = 0; i < dst->ndim; i++) {
      if (i) sb_append(&sb, ", ");
      ir_print_expr(&sb, dst->shape[i]);
    }
    sb_append(&sb, "] vs source [");
    for (int i = 0; i < src->ndim; i++) {
      if (i) sb_append(&sb, ", ");
      ir_print_expr(&sb, src->shape[i]);
    }
    sb_append(&sb, "]");
    ts_error(ev->c, loc, "%s(): output '%s' must have the shape of '%s' without dimension %lld: %s", fname, dst->name,
             src->name, (long long)dim, sb_str(&sb));
    sb_free(&sb);
    return NULL;
  }
  bool clear = bi_opt_bool(ev, arg[3], true, loc);
  bool nan = nan_prop == 1 && dtype_is_float(dst->dtype) &&
             (bi->arg == IR_RED_MAX || bi->arg == IR_RED_MIN || bi->arg == IR_RED_ABSMAX);
  if (src->scope == IR_SCOPE_LOCAL && (dst->scope == IR_SCOPE_LOCAL || dst->scope == IR_SCOPE_VAR)) {
    reduce_registers(ev, src, dst, (int)dim, (IrReduceKind)bi->arg, nan, clear, loc);
    return ev->none;
  }
  if (!reduce_scope_ok(ev, src, fname, loc) || !reduce_scope_ok(ev, dst, fname, loc)) return NULL;
  /* TileLang's semantics for shared operands: the reduction itself runs on fragments, so a
   * shared source is first copied into a temporary fragment, and a shared destination is
   * reduced into a temporary fragment (seeded from it when clear=False) and copied back. */
  IrBuffer *fsrc = src->scope == IR_SCOPE_FRAGMENT ? src : staging_fragment(ev, src, loc);
  IrBuffer *fdst = dst->scope == IR_SCOPE_FRAGMENT ? dst : staging_fragment(ev, dst, loc);
  if (fdst != dst && !clear) emit_whole_copy(ev, dst, fdst, loc);
  if (fsrc != src) emit_whole_copy(ev, src, fsrc, loc);
  IrStmt *st = ir_stmt(ev->c, IR_S_REDUCE, loc);
  st->u.reduce.op = (IrReduceKind)bi->arg;
  st->u.reduce.nan_propagate = nan;
  st->u.reduce.src = fsrc;
  st->u.reduce.dst = fdst;
  st->u.reduce.dim = (int)dim;
  st->u.reduce.clear = clear;
  ev_emit(ev, st);
  if (fdst != dst) emit_whole_copy(ev, fdst, dst, loc);
  return ev->none;
}

/* ---- cumulative scans ------------------------------------------------------------------------ */
/* The buffer whose memory b is (through T.view / T.reshape aliases). */
static const IrBuffer *scan_memory(const IrBuffer *b) {
  for (int guard = 0; b->alias_of && guard < 64; guard++) b = b->alias_of;
  return b;
}

/* A fresh shared buffer of b's shape named <b>_<suffix>, allocated here (scan staging). */
static IrBuffer *scan_scratch(Eval *ev, const IrBuffer *b, const char *suffix, SrcLoc loc) {
  IrBuffer *s = ir_buffer(ev->c, arena_printf(ev->a, "%s_%s", b->name, suffix), b->dtype, IR_SCOPE_SHARED_DYN,
                          b->ndim, b->shape, loc);
  IrStmt *al = ir_stmt(ev->c, IR_S_ALLOC, loc);
  al->u.alloc.buf = s;
  ev_emit(ev, al);
  ev_define_buffer(ev, s);
  return s;
}

/* The scan of shared `in` into shared `out` (distinct memory, one shape) along `dim`:
 *
 *   for <every other index> in T.Parallel(...):       # one row per thread (layout inference)
 *     acc = T.alloc_var(acc_t)
 *     for j in T.serial(N):                           # k = j, or N-1-j when reversed
 *       acc = in[.., k, ..] if j == 0 else acc (op) in[.., k, ..]
 *       out[.., k, ..] = acc
 *
 * Each row is read and written by the threads that own it only, and in and out are distinct
 * buffers, so no barrier is needed inside (thread_sync places those around it).  Half types
 * accumulate in float32. */
static IrStmt *scan_rows(Eval *ev, IrBuffer *in, IrBuffer *out, int dim, bool reverse, IrExprKind op, SrcLoc loc) {
  TsCompiler *c = ev->c;
  int nd = in->ndim;
  ts_dtype acc_t = out->dtype == TS_DTYPE_FLOAT16 || out->dtype == TS_DTYPE_BFLOAT16 ? TS_DTYPE_FLOAT32 : out->dtype;
  IrExpr *one = ir_i32(c, 1), *zero = ir_i32(c, 0);
  IrBuffer *acc = ir_buffer(c, arena_printf(ev->a, "%s_scan", out->name), acc_t, IR_SCOPE_VAR, 1, &one, loc);
  IrVar *vj = ir_var(c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrVar **vars = ARENA_ARRAY(ev->a, IrVar *, nd);
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, nd);
  IrExpr *j = ir_varref(c, vj, loc);
  for (int d = 0; d < nd; d++) {
    if (d == dim) {
      IrExpr *last = ir_binary(c, IR_SUB, in->shape[d], one, loc);
      idx[d] = reverse ? ir_binary(c, IR_SUB, last, j, loc) : j;
      continue;
    }
    vars[d] = ir_var(c, arena_printf(ev->a, "i%d", d), TS_DTYPE_INT32, IR_VAR_LOOP, loc);
    idx[d] = ir_varref(c, vars[d], loc);
  }
  IrExpr *acc_idx[1] = {zero};
  IrExpr *v = ir_cast(c, acc_t, ir_load(c, in, idx, nd, loc), loc);
  IrExpr *prev = ir_load(c, acc, acc_idx, 1, loc);
  IrExpr *next = ir_select(c, IR_SELECT, ir_binary(c, IR_EQ, j, zero, loc), v, ir_binary(c, op, prev, v, loc), loc);
  IrStmt *step[2] = {ir_store(c, acc, acc_idx, 1, next, loc),
                     ir_store(c, out, idx, nd, ir_cast(c, out->dtype, ir_load(c, acc, acc_idx, 1, loc), loc), loc)};
  IrStmt *alloc = ir_stmt(c, IR_S_ALLOC, loc);
  alloc->u.alloc.buf = acc;
  IrStmt *row[2] = {alloc, ir_for(c, vj, zero, in->shape[dim], IR_FOR_SERIAL, ir_seq(c, step, 2, loc), loc)};
  IrStmt *body = ir_seq(c, row, 2, loc);
  bool any = false;
  for (int d = nd - 1; d >= 0; d--) {
    if (d == dim) continue;
    body = ir_for(c, vars[d], zero, in->shape[d], IR_FOR_PARALLEL, body, loc);
    any = true;
  }
  if (!any) /* a 1-d buffer: one row, run by the thread that owns the single iteration */
    body = ir_for(c, ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc), zero, one, IR_FOR_PARALLEL, body, loc);
  return body;
}

/* T.cumsum / T.cummax(src, dst=None, dim=0, reverse=False): the inclusive scan of src along
 * dim into dst (src itself by default); reverse scans from the last element.  bi->arg is the
 * combine (IR_ADD / IR_MAX).  Both operands are shared or fragment buffers of one shape.  As
 * TileLang does for fragments, the scan runs on shared memory: a fragment (or an in-place
 * shared operand) is copied into a shared scratch first, and a fragment result is scanned into
 * a second scratch and copied back, so each row scan reads one buffer and writes another. */
/* T.cumsum / T.cummax of regions (`big[0:M, 0:N]`, `A_shared[r0:r1, :]`): the region is copied
 * into a shared scratch of its extents, scanned into a second one and copied to dst's region. */
static Value *scan_regions(Eval *ev, Value *sv, Value *dv, int64_t dim, bool reverse, IrExprKind op,
                           const char *fname, SrcLoc loc) {
  Operand s, d;
  if (!operand(ev, sv, fname, "src", &s, loc) || !operand(ev, dv, fname, "dst", &d, loc)) return ev->poison;
  if (!s.extent || !d.extent) {
    ts_error(ev->c, loc, "%s(): src and dst must be buffers or buffer regions", fname);
    return ev->poison;
  }
  if (!check_extents(ev, &s, &d, fname, loc)) return ev->poison;
  int nd = s.buf->ndim;
  if (dim < 0) dim += nd;
  if (dim < 0 || dim >= nd) {
    ts_error(ev->c, loc, "%s(): dim is out of range for buffer '%s' of rank %d", fname, s.buf->name, nd);
    return ev->poison;
  }
  for (int k = 0; k < nd; k++) {
    int64_t e;
    if (!ir_is_const_int(s.extent[k], &e)) {
      ts_error(ev->c, loc, "%s(): the extents of the region of '%s' must be constants", fname, s.buf->name);
      return ev->poison;
    }
  }
  IrBuffer *shape_of = ir_buffer(ev->c, s.buf->name, s.buf->dtype, IR_SCOPE_SHARED_DYN, nd, s.extent, loc);
  IrBuffer *in = scan_scratch(ev, shape_of, "scan_in", loc), *out = scan_scratch(ev, shape_of, "scan_out", loc);
  IrExpr **zero = ARENA_ARRAY(ev->a, IrExpr *, nd);
  for (int k = 0; k < nd; k++) zero[k] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
  IrStmt *cin = ir_stmt(ev->c, IR_S_COPY, loc), *cout = ir_stmt(ev->c, IR_S_COPY, loc);
  cin->u.copy.src = to_region(&s);
  cin->u.copy.dst = (IrRegion){in, nd, zero, in->shape, loc};
  ev_emit(ev, cin);
  ev_emit(ev, scan_rows(ev, in, out, (int)dim, reverse, op, loc));
  cout->u.copy.src = (IrRegion){out, nd, zero, out->shape, loc};
  cout->u.copy.dst = to_region(&d);
  ev_emit(ev, cout);
  return ev->none;
}

static Value *t_cumulative(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  const char *fname = bi->arg == IR_ADD ? "T.cumsum" : "T.cummax";
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  Value *dv = arg[1] && arg[1]->kind != V_NONE ? arg[1] : arg[0];
  if ((arg[0]->kind == V_REGION || dv->kind == V_REGION) && (arg[0]->kind == V_REGION || arg[0]->kind == V_BUFFER) &&
      (dv->kind == V_REGION || dv->kind == V_BUFFER)) {
    int64_t dim;
    if (!bi_opt_int(ev, arg[2], 0, &dim, loc)) return ev->poison;
    return scan_regions(ev, arg[0], dv, dim, bi_opt_bool(ev, arg[3], false, loc), (IrExprKind)bi->arg, fname, loc);
  }
  if (arg[0]->kind != V_BUFFER || dv->kind != V_BUFFER) {
    ts_error(ev->c, loc, "%s(): src and dst must be whole buffers (T.alloc_shared / T.alloc_fragment), got %s and %s",
             fname, ev_type_name(arg[0]), ev_type_name(dv));
    return ev->poison;
  }
  IrBuffer *src = arg[0]->u.buf, *dst = dv->u.buf;
  if (!reduce_scope_ok(ev, src, fname, loc) || !reduce_scope_ok(ev, dst, fname, loc)) return ev->poison;
  int64_t dim;
  if (!bi_opt_int(ev, arg[2], 0, &dim, loc)) return ev->poison;
  if (dim < 0) dim += src->ndim;
  if (dim < 0 || dim >= src->ndim) {
    ts_error(ev->c, loc, "%s(): dim is out of range for buffer '%s' of rank %d", fname, src->name, src->ndim);
    return ev->poison;
  }
  bool same = src->ndim == dst->ndim;
  for (int d = 0; same && d < src->ndim; d++) same = same_extent(src->shape[d], dst->shape[d]);
  if (!same) {
    Operand s = {src, NULL, src->shape, loc}, o = {dst, NULL, dst->shape, loc};
    if (check_extents(ev, &s, &o, fname, loc)) /* same extents, other rank */
      ts_error(ev->c, loc, "%s(): src and dst must have the same shape ('%s' has rank %d, '%s' rank %d)", fname,
               src->name, src->ndim, dst->name, dst->ndim);
    return ev->poison;
  }
  int64_t n;
  if (!ir_is_const_int(src->shape[dim], &n)) {
    ts_error(ev->c, loc, "%s(): the scanned dimension %lld of '%s' must be a constant", fname, (long long)dim, src->name);
    return ev->poison;
  }
  bool reverse = bi_opt_bool(ev, arg[3], false, loc);
  bool shared_src = src->scope != IR_SCOPE_FRAGMENT, shared_dst = dst->scope != IR_SCOPE_FRAGMENT;
  IrBuffer *in = src, *out = dst;
  if (!shared_src || (shared_dst && scan_memory(src) == scan_memory(dst))) {
    in = scan_scratch(ev, src, "scan_in", loc);
    emit_whole_copy(ev, src, in, loc);
  }
  if (!shared_dst) out = scan_scratch(ev, dst, "scan_out", loc);
  ev_emit(ev, scan_rows(ev, in, out, (int)dim, reverse, (IrExprKind)bi->arg, loc));
  if (out != dst) emit_whole_copy(ev, out, dst, loc);
  return ev->none;
}

/* T.warp_reduce_sum / _max / _min(value): the reduction over the 32 lanes of the warp, in
 * every lane (a butterfly of __shfl_xor_sync over the full warp, as TileLang's
 * tl::warp_reduce_*: every lane must call it).  Each step is bound to a LET so that each
 * shuffle runs once; bi->arg is the IR_ADD / IR_MAX / IR_MIN combine. */
static Value *t_warp_reduce(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return NULL;
  IrExpr *v = ev_to_ir(ev, arg[0], NULL, loc);
  if (!v) return NULL;
  for (int off = 16; off >= 1; off /= 2) {
    IrExpr *sh = ir_call(ev->c, IRI_SHFL_XOR, v->dtype, (IrExpr *[]){v, ir_i32(ev->c, off)}, 2, loc);
    v = bi_let_once(ev, "warp_red", ir_binary(ev->c, (IrExprKind)bi->arg, v, sh, loc), loc);
  }
  return ev_expr(ev, v);
}

static int memory_order(Eval *ev, Value *v, int dflt, unsigned allowed, const char *fname, SrcLoc loc);

/* The fence (ir_atomic_fence) on one side of an element atomic the front end emits. */
static void atomic_order_fence(Eval *ev, int mo, bool after, SrcLoc loc) {
  IrStmt *f = ir_atomic_fence(ev->c, mo, after, loc);
  if (f) ev_emit(ev, f);
}

/* The element operand of an element-wise atomic: dst must be global or shared memory. */
static IrExpr *atomic_element(Eval *ev, Value *v, const char *fname, const char *role, bool memory, SrcLoc loc) {
  if (v->kind != V_EXPR || v->u.expr->kind != IR_LOAD) {
    ts_error(ev->c, loc, "%s(): %s must be a buffer element such as buf[i, j], got %s", fname, role, ev_type_name(v));
    return NULL;
  }
  IrScope sc = v->u.expr->u.load.buf->scope;
  if (memory && sc != IR_SCOPE_GLOBAL && sc != IR_SCOPE_SHARED && sc != IR_SCOPE_SHARED_DYN) {
    ts_error(ev->c, loc, "%s(): %s must be an element of a global or shared buffer", fname, role);
    return NULL;
  }
  return v->u.expr;
}

/* T.atomic_add / _max / _min(dst[i], value, return_prev=True): the value dst held before the
 * update, bound to a fresh LET so that the atomic runs once, where it is written. */
static Value *atomic_return_prev(Eval *ev, Value **arg, const Builtin *bi, int mo, const char *fname, SrcLoc loc) {
  IrExpr *ld = atomic_element(ev, arg[0], fname, "dst (with return_prev=True)", true, loc);
  if (!ld) return NULL;
  IrExpr *v = bi_to_dtype(ev, arg[1], ld->dtype, loc);
  if (!v) return NULL;
  IrIntrin op = bi->arg == IR_ATOMIC_MAX ? IRI_ATOMIC_MAX : bi->arg == IR_ATOMIC_MIN ? IRI_ATOMIC_MIN : IRI_ATOMIC_ADD;
  IrExpr *args[2] = {ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc), v};
  atomic_order_fence(ev, mo, false, loc);
  IrExpr *prev = bi_let_once(ev, "prev", ir_call(ev->c, op, ld->dtype, args, 2, loc), loc);
  atomic_order_fence(ev, mo, true, loc);
  return ev_expr(ev, prev);
}

/* T.atomic_addx2 / atomic_addx4(dst[i, j], src[i, j]): dst[i, j:j+N] += src[i, j:j+N] as one
 * vector atomic (bi->arg = N); TileLang's AtomicAddx2/x4. */
/* The first element of a vector atomic's operand: buf[i, j] or the slice buf[i, j:j+N]. */
static Value *vector_first(Eval *ev, Value *v, SrcLoc loc) {
  if (v->kind != V_REGION) return v;
  return ev_expr(ev, ir_load(ev->c, v->u.region.buf, v->u.region.min, v->u.region.buf->ndim, loc));
}

/* return_prev=True: the N updates as element atomics, each returning the value it replaced,
 * into a register array (the vector atomic is atomic per element too). */
static Value *atomic_addx_prev(Eval *ev, IrExpr *d, IrExpr *s, int n, SrcLoc loc) {
  IrExpr *ext = ir_i32(ev->c, n);
  IrBuffer *prev = bi_declare_buffer(
      ev, ir_buffer(ev->c, bi_take_name(ev, "prev"), d->dtype, IR_SCOPE_LOCAL, 1, &ext, loc), loc);
  int nd = d->u.load.nidx, ns = s->u.load.nidx;
  for (int k = 0; k < n; k++) {
    IrExpr **di = ARENA_ARRAY(ev->a, IrExpr *, nd), **si = ARENA_ARRAY(ev->a, IrExpr *, ns);
    for (int j = 0; j < nd; j++) di[j] = d->u.load.idx[j];
    for (int j = 0; j < ns; j++) si[j] = s->u.load.idx[j];
    di[nd - 1] = ir_simplify(ev->c, ir_binary(ev->c, IR_ADD, di[nd - 1], ir_i32(ev->c, k), loc));
    si[ns - 1] = ir_simplify(ev->c, ir_binary(ev->c, IR_ADD, si[ns - 1], ir_i32(ev->c, k), loc));
    IrExpr *dk = ir_load(ev->c, d->u.load.buf, di, nd, loc);
    IrExpr *args[2] = {ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &dk, 1, loc), ir_load(ev->c, s->u.load.buf, si, ns, loc)};
    IrExpr *kk = ir_i32(ev->c, k);
    ev_emit(ev, ir_store(ev->c, prev, &kk, 1, ir_call(ev->c, IRI_ATOMIC_ADD, d->dtype, args, 2, loc), loc));
  }
  return bi_buffer_value(ev, prev);
}

static Value *t_atomic_addx(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  const char *fname = bi->arg == 2 ? "T.atomic_addx2" : "T.atomic_addx4";
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, fname, loc)) return NULL;
  IrExpr *d = atomic_element(ev, vector_first(ev, arg[0], loc), fname, "dst", true, loc);
  IrExpr *s = d ? atomic_element(ev, vector_first(ev, arg[1], loc), fname, "value", false, loc) : NULL;
  if (!s) return NULL;
  ts_dtype t = d->u.load.buf->dtype;
  bool ok = t == TS_DTYPE_FLOAT32 || t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16;
  if (!ok || s->u.load.buf->dtype != t) {
    ts_error(ev->c, loc, "%s(): dst and value must both be float32, float16 or bfloat16 (got %s and %s)", fname,
             dtype_name(t), dtype_name(s->u.load.buf->dtype));
    return NULL;
  }
  if (arg[2] && bi_opt_bool(ev, arg[2], false, loc)) return atomic_addx_prev(ev, d, s, (int)bi->arg, loc);
  IrExpr *args[3] = {ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &d, 1, loc),
                     ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &s, 1, loc), ir_i32(ev->c, bi->arg)};
  ev_emit(ev, ir_eval(ev->c, ir_call(ev->c, IRI_ATOMIC_ADD_X, TS_DTYPE_VOID, args, 3, loc), loc));
  return ev->none;
}

/* T.atomic_add(dst_tile, 1.0): every element of the tile gets the scalar, a T.Parallel nest
 * of element atomics. */
static void atomic_broadcast(Eval *ev, const Operand *d, IrAtomicOp op, int mo, IrExpr *v, SrcLoc loc) {
  TsCompiler *c = ev->c;
  int n = d->buf->ndim;
  IrVar **vars = ARENA_ARRAY(ev->a, IrVar *, n);
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, n), **one = ARENA_ARRAY(ev->a, IrExpr *, n);
  for (int k = 0; k < n; k++) {
    vars[k] = ir_var(c, arena_printf(ev->a, "i%d", k), TS_DTYPE_INT32, IR_VAR_LOOP, loc);
    idx[k] = ir_binary(c, IR_ADD, d->min[k], ir_varref(c, vars[k], loc), loc);
    one[k] = ir_int(c, 1, TS_DTYPE_INT32, loc);
  }
  IrStmt *st = ir_stmt(c, IR_S_ATOMIC, loc);
  st->u.atomic.op = op;
  st->u.atomic.order = mo;
  st->u.atomic.dst = (IrRegion){d->buf, n, idx, one, loc};
  st->u.atomic.value = v;
  IrStmt *body = st;
  for (int k = n - 1; k >= 0; k--) body = ir_for(c, vars[k], ir_i32(c, 0), d->extent[k], IR_FOR_PARALLEL, body, loc);
  ev_emit(ev, body);
}

/* T.atomic_add / _max / _min(dst, value): an element (AtomicAdd(&dst[i], value)), a tile
 * (dst region op= src region), or a tile and a scalar (each element op= the scalar). */
static Value *t_atomic(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  const char *fname = bi->arg == IR_ATOMIC_ADD ? "T.atomic_add" : bi->arg == IR_ATOMIC_MAX ? "T.atomic_max" : "T.atomic_min";
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, fname, loc)) return NULL;
  int mo = memory_order(ev, arg[2], 0, 0x3f, fname, loc);
  if (mo < 0) return NULL;
  bool ret = arg[3] && bi_opt_bool(ev, arg[3], false, loc);
  if (ret) return atomic_return_prev(ev, arg, bi, mo, fname, loc);
  Operand d;
  if (!operand(ev, arg[0], fname, "dst", &d, loc)) return NULL;
  if (dtype_is_packed(d.buf->dtype)) { /* no atomic instruction works on half a byte */
    ts_error(ev->c, loc, "%s on the %s tensor '%s' is not supported (two elements share each byte)", fname,
             dtype_name(d.buf->dtype), d.buf->name);
    return NULL;
  }
  IrStmt *st = ir_stmt(ev->c, IR_S_ATOMIC, loc);
  st->u.atomic.op = (IrAtomicOp)bi->arg;
  st->u.atomic.order = mo;
  Value *val = arg[1];
  if (!d.extent && (val->kind == V_BUFFER || val->kind == V_REGION)) { /* dst[i, j] is the corner of a tile */
    Operand s;
    if (!operand(ev, val, fname, "value", &s, loc) || !fill_corner(ev, &d, &s, fname)) return NULL;
  }
  if (!d.extent) { /* scalar: AtomicAdd(&dst[i], value) */
    d.extent = ARENA_ARRAY(ev->a, IrExpr *, d.buf->ndim);
    for (int i = 0; i < d.buf->ndim; i++) d.extent[i] = ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
    IrExpr *v = bi_to_dtype(ev, arg[1], d.buf->dtype, loc);
    if (!v) return NULL;
    st->u.atomic.dst = to_region(&d);
    st->u.atomic.value = v;
    st->u.atomic.tile = false;
  } else if (val->kind == V_INT || val->kind == V_FLOAT || (val->kind == V_EXPR && val->u.expr->kind != IR_LOAD)) {
    IrExpr *v = bi_to_dtype(ev, val, d.buf->dtype, loc); /* tile op= scalar */
    if (!v) return NULL;
    atomic_broadcast(ev, &d, (IrAtomicOp)bi->arg, mo, v, loc);
    return ev->none;
  } else { /* tile: dst region += src region */
    Operand s;
    if (!operand(ev, arg[1], fname, "value", &s, loc)) return NULL;
    if (!s.extent && !fill_corner(ev, &s, &d, fname)) return NULL;
    if (!check_extents(ev, &s, &d, fname, loc)) return NULL;
    st->u.atomic.dst = to_region(&d);
    st->u.atomic.src = to_region(&s);
    st->u.atomic.tile = true;
  }
  ev_emit(ev, st);
  return ev->none;
}

/* T.transpose(src, dst): dst[j, i] = src[i, j] for 2-d tiles (a T.Parallel nest over src). */
static Value *t_transpose(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  Operand s, d;
  if (!operand(ev, arg[0], "T.transpose", "src", &s, loc) || !operand(ev, arg[1], "T.transpose", "dst", &d, loc))
    return ev->poison;
  if (!s.extent || !d.extent || s.buf->ndim != 2 || d.buf->ndim != 2) {
    ts_error(ev->c, loc, "T.transpose(): src and dst must be 2-d buffers or regions");
    return ev->poison;
  }
  if (!same_extent(s.extent[0], d.extent[1]) || !same_extent(s.extent[1], d.extent[0])) {
    ts_error(ev->c, loc, "T.transpose(): dst must have src's extents swapped");
    return ev->poison;
  }
  TsCompiler *c = ev->c;
  IrVar *vi = ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc), *vj = ir_var(c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *i = ir_varref(c, vi, loc), *j = ir_varref(c, vj, loc);
  IrExpr *si[2] = {ir_binary(c, IR_ADD, s.min[0], i, loc), ir_binary(c, IR_ADD, s.min[1], j, loc)};
  IrExpr *di[2] = {ir_binary(c, IR_ADD, d.min[0], j, loc), ir_binary(c, IR_ADD, d.min[1], i, loc)};
  IrExpr *v = ir_cast(c, d.buf->dtype, ir_load(c, s.buf, si, 2, loc), loc);
  IrStmt *body = ir_for(c, vj, ir_i32(c, 0), s.extent[1], IR_FOR_PARALLEL, ir_store(c, d.buf, di, 2, v, loc), loc);
  ev_emit(ev, ir_for(c, vi, ir_i32(c, 0), s.extent[0], IR_FOR_PARALLEL, body, loc));
  return ev->none;
}

/* ---- memory-ordered atomics ------------------------------------------------------------------ */
/* The memory order argument of T.atomic_load / atomic_store / atomic_or as C++'s number (0
 * relaxed .. 5 seq_cst); allowed: a bit set over those numbers.  -1 after an error. */
static int memory_order(Eval *ev, Value *v, int dflt, unsigned allowed, const char *fname, SrcLoc loc) {
  static const char *const names[] = {"relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst"};
  if (!v || v->kind == V_NONE) return dflt;
  for (int m = 0; v->kind == V_STR && m < 6; m++)
    if (!strcmp(v->u.str.s, names[m]) && (allowed >> m & 1)) return m;
  StrBuf sb = {0};
  for (int m = 0; m < 6; m++)
    if (allowed >> m & 1) sb_printf(&sb, "%s'%s'", sb.len ? ", " : "", names[m]);
  ts_error(ev->c, loc, "%s does not support memory_order %s (one of %s)", fname,
           v->kind == V_STR ? v->u.str.s : ev_type_name(v), sb_str(&sb));
  sb_free(&sb);
  return -1;
}

/* T.atomic_load(src[i], memory_order="seq_cst"): the element, read atomically. */
static Value *t_atomic_load(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  IrExpr *ld = atomic_element(ev, arg[0], "T.atomic_load", "src", true, loc);
  int mo = ld ? memory_order(ev, arg[1], 5, 0x27, "T.atomic_load", loc) : -1;
  if (mo < 0) return ev->poison;
  int64_t attr = mo;
  IrExpr *addr = ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc);
  return ev_expr(ev, bi_let_once(ev, "loaded", ir_device(ev->c, IRD_ATOMIC_LOAD, ld->dtype, &attr, 1, &addr, 1, loc), loc));
}

/* T.atomic_store(dst[i], value, memory_order="seq_cst") and T.atomic_or(dst[i], value,
 * memory_order=None, return_prev=False) (bi->arg: the device operation). */
static Value *t_atomic_ordered(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  bool is_or = bi->arg == IRD_ATOMIC_OR;
  const char *fname = is_or ? "T.atomic_or" : "T.atomic_store";
  IrExpr *ld = atomic_element(ev, arg[0], fname, "dst", true, loc);
  int mo = ld ? memory_order(ev, arg[2], is_or ? 0 : 5, is_or ? 0x3f : 0x29, fname, loc) : -1;
  if (mo < 0) return ev->poison;
  if (is_or && (!dtype_is_int(ld->dtype) || dtype_bits(ld->dtype) < 32)) {
    ts_error(ev->c, loc, "T.atomic_or takes a 32- or 64-bit integer element, got %s", dtype_name(ld->dtype));
    return ev->poison;
  }
  IrExpr *v = bi_to_dtype(ev, arg[1], ld->dtype, loc);
  if (!v) return ev->poison;
  int64_t attr = mo;
  IrExpr *args[2] = {ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc), v};
  bool ret = is_or && arg[3] && bi_opt_bool(ev, arg[3], false, loc);
  IrExpr *call = ir_device(ev->c, (IrDeviceOp)bi->arg, ret ? ld->dtype : TS_DTYPE_VOID, &attr, 1, args, 2, loc);
  if (!ret) {
    ev_emit(ev, ir_eval(ev->c, call, loc));
    return ev->none;
  }
  return ev_expr(ev, bi_let_once(ev, "prev", call, loc));
}

/* ---- GEMM ------------------------------------------------------------------------------------ */
/* T.gemm(A, B, C, transpose_A=False, transpose_B=False, policy=0, clear_accum=False, k_pack=1):
 * C += A @ B on tiles; plan_gemm picks mma.sync or wgmma. */
static Value *t_gemm(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, "T.gemm", loc)) return NULL;
  Operand o[3];
  static const char *const roles[] = {"A", "B", "C"};
  for (int i = 0; i < 3; i++) {
    if (!operand(ev, arg[i], "T.gemm", roles[i], &o[i], loc)) return NULL;
    if (!o[i].extent) {
      ts_error(ev->c, loc, "T.gemm(): %s must be a buffer or a buffer region", roles[i]);
      return NULL;
    }
  }
  IrStmt *st = ir_stmt(ev->c, IR_S_GEMM, loc);
  st->u.gemm.a = to_region(&o[0]);
  st->u.gemm.b = to_region(&o[1]);
  st->u.gemm.c = to_region(&o[2]);
  st->u.gemm.trans_a = bi_opt_bool(ev, arg[3], false, loc);
  st->u.gemm.trans_b = bi_opt_bool(ev, arg[4], false, loc);
  IrExpr *clear_if = NULL;
  int64_t folded;
  if (arg[6] && arg[6]->kind == V_EXPR && !ir_is_const_int(arg[6]->u.expr, &folded)) {
    clear_if = ev_to_bool_ir(ev, arg[6]->u.expr, loc); /* clear_accum=(k == 0): decided at run time */
    if (!clear_if) return NULL;
  } else if (arg[6] && arg[6]->kind == V_EXPR) {
    st->u.gemm.clear_accum = folded != 0;
  } else {
    st->u.gemm.clear_accum = bi_opt_bool(ev, arg[6], false, loc);
  }
  int64_t pol, kp;
  if (!bi_opt_int(ev, arg[5], 0, &pol, loc) || !bi_opt_int(ev, arg[7], 1, &kp, loc)) return NULL;
  st->u.gemm.policy = (int)pol;
  st->u.gemm.k_pack = (int)kp;
  if (bi_gemm_needs_fma(ev->c, st)) return bi_gemm_fma(ev, st, clear_if) ? ev->none : NULL;
  if (clear_if) {
    /* The accumulator's clearing is a template argument of the device GEMM (the wgmma scale-d
     * / a zeroed mma.sync C): a runtime condition picks one of two instances, the clearing one
     * where it holds.  The condition must be the same in every thread of the GEMM (as the
     * GEMM itself runs in all of them); inside an unrolled loop it folds per iteration. */
    IrStmt *cleared = ir_stmt(ev->c, IR_S_GEMM, loc);
    cleared->u.gemm = st->u.gemm;
    cleared->u.gemm.clear_accum = true;
    st->u.gemm.clear_accum = false;
    ev_emit(ev, ir_if(ev->c, clear_if, cleared, st, loc));
    return ev->none;
  }
  ev_emit(ev, st);
  return ev->none;
}

/* o (2-D, constant extents) copied into a fresh shared tile, transposed when asked: a
 * T.Parallel nest of the tile's shape (st[i, j] = o[j, i] or o[i, j]) before the GEMM, whose
 * operand becomes the whole tile (thread_sync orders the copy and the GEMM's reads). */
static bool stage_sparse_operand(Eval *ev, Operand *o, bool transpose, const char *role, SrcLoc loc) {
  TsCompiler *c = ev->c;
  int64_t ext[2];
  if (o->buf->ndim != 2 || !ir_is_const_int(o->extent[0], &ext[0]) || !ir_is_const_int(o->extent[1], &ext[1])) {
    ts_error(c, loc, "T.gemm_sp: %s must be a 2-D tile with constant extents", role);
    return false;
  }
  int64_t r = transpose ? ext[1] : ext[0], w = transpose ? ext[0] : ext[1];
  IrExpr *shape[2] = {ir_i32(c, r), ir_i32(c, w)};
  IrBuffer *st = bi_declare_buffer(
      ev, ir_buffer(c, arena_printf(ev->a, "%s_staged", o->buf->name), o->buf->dtype, IR_SCOPE_SHARED_DYN, 2, shape, loc),
      loc);
  IrVar *i = ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc), *j = ir_var(c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *iv = ir_varref(c, i, loc), *jv = ir_varref(c, j, loc);
  IrExpr **src = ARENA_ARRAY(ev->a, IrExpr *, 2), **dst = ARENA_ARRAY(ev->a, IrExpr *, 2),
         **zero = ARENA_ARRAY(ev->a, IrExpr *, 2);
  src[0] = ir_binary(c, IR_ADD, o->min[0], transpose ? jv : iv, loc);
  src[1] = ir_binary(c, IR_ADD, o->min[1], transpose ? iv : jv, loc);
  dst[0] = iv, dst[1] = jv, zero[0] = zero[1] = ir_i32(c, 0);
  IrStmt *copy = ir_store(c, st, dst, 2, ir_load(c, o->buf, src, 2, loc), loc);
  copy = ir_for(c, j, ir_i32(c, 0), shape[1], IR_FOR_PARALLEL, copy, loc);
  ev_emit(ev, ir_for(c, i, ir_i32(c, 0), shape[0], IR_FOR_PARALLEL, copy, loc));
  IrExpr **full = ARENA_ARRAY(ev->a, IrExpr *, 2);
  full[0] = shape[0], full[1] = shape[1];
  *o = (Operand){st, zero, full, o->loc};
  return true;
}

/* T.gemm_sp(A_sparse, E, B, C, transpose_A, transpose_E, transpose_B, policy, clear_accum,
 * k_pack, wg_wait): C += A @ B where A is 2:4 sparse along K, given compressed ([M, K/2]: the
 * kept values of each group of 4) with its metadata E ([M, K/e_factor]: two 2-bit indices a
 * group, sparse_layout.py).  A GEMM statement with an E region; plan_gemm checks the shapes
 * and types (layout.c gemm_sp_plan).  The tensor-core path reads A and E [M, ...] from shared
 * memory: TileLang's transposed forms and an A in registers are staged (stage_sparse_operand). */
static Value *t_gemm_sp(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, "T.gemm_sp", loc)) return NULL;
  Operand o[4];
  static const char *const roles[] = {"A_sparse", "E", "B", "C"};
  for (int i = 0; i < 4; i++) {
    if (!operand(ev, arg[i], "T.gemm_sp", roles[i], &o[i], loc)) return NULL;
    if (!o[i].extent) {
      ts_error(ev->c, loc, "T.gemm_sp(): %s must be a buffer or a buffer region", roles[i]);
      return NULL;
    }
  }
  /* the sparse tensor-core path reads A and E row-major [M, ...] from shared memory:
   * transposed ones and an A in registers go through a staged shared copy */
  bool ta = bi_opt_bool(ev, arg[4], false, loc), te = bi_opt_bool(ev, arg[5], false, loc);
  if ((ta || o[0].buf->scope == IR_SCOPE_FRAGMENT || o[0].buf->scope == IR_SCOPE_LOCAL) &&
      !stage_sparse_operand(ev, &o[0], ta, "A_sparse", loc))
    return NULL;
  if (te && !stage_sparse_operand(ev, &o[1], true, "E", loc)) return NULL;
  int64_t pol, kp, wait;
  if (!bi_opt_int(ev, arg[7], 0, &pol, loc) || !bi_opt_int(ev, arg[9], 1, &kp, loc) ||
      !bi_opt_int(ev, arg[10], 0, &wait, loc))
    return NULL;
  if (wait != 0) {
    ts_error(ev->c, loc, "T.gemm_sp: wg_wait=%lld is not supported (the sparse GEMM runs as mma.sp, synchronously)",
             (long long)wait);
    return NULL;
  }
  int64_t clear = 0;
  if (arg[8] && arg[8]->kind == V_EXPR && !ir_is_const_int(arg[8]->u.expr, &clear)) {
    ts_error(ev->c, loc, "T.gemm_sp: clear_accum must be a compile-time constant");
    return NULL;
  }
  if (!(arg[8] && arg[8]->kind == V_EXPR)) clear = bi_opt_bool(ev, arg[8], false, loc);
  IrStmt *st = ir_stmt(ev->c, IR_S_GEMM, loc);
  st->u.gemm.a = to_region(&o[0]);
  st->u.gemm.e = to_region(&o[1]);
  st->u.gemm.b = to_region(&o[2]);
  st->u.gemm.c = to_region(&o[3]);
  st->u.gemm.trans_b = bi_opt_bool(ev, arg[6], false, loc);
  st->u.gemm.clear_accum = clear != 0;
  st->u.gemm.policy = (int)pol;
  st->u.gemm.k_pack = (int)kp;
  ev_emit(ev, st);
  return ev->none;
}

/* Asynchronous wgmma: T.wgmma_gemm issues, T.wait_wgmma waits. */
/* T.wgmma_gemm(A, B, C, ...): T.gemm's operands and options, issued as wgmma without
 * waiting (gemm.wg_wait = -1; lower_tile_ops prints ts::gemm_*_wgmma_issue).  Legal only
 * where the tile runs as wgmma on sm_90a; anything else is reported here, at the call. */
static Value *t_wgmma_gemm(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int before = ev->block->len;
  Value *r = builtin_call_row(ev, tileop_row("gemm"), "T.gemm", a); /* checks and emits the GEMM */
  if (!r || r->kind == V_POISON || ev->block->len != before + 1) return ev->poison;
  IrStmt *st = ev->block->items[before];
  if (st->kind == IR_S_FOR) { /* gemm_fma.c's loop nest: no tensor-core instruction takes the types */
    ts_error(ev->c, call_loc(a), "T.wgmma_gemm: wgmma has no instruction for these operand and accumulator types on "
                                 "this target (T.gemm computes them with FMA)");
    return ev->poison;
  }
  /* issued, not waited for: pass plan_gemm checks that it can run as wgmma (sm_90a, a
   * wgmma plan) and says why not.  A runtime clear_accum made an IF of two GEMMs. */
  if (st->kind == IR_S_IF) {
    TS_ASSERT(st->u.if_.then_s->kind == IR_S_GEMM && st->u.if_.else_s->kind == IR_S_GEMM);
    st->u.if_.then_s->u.gemm.wg_wait = -1;
    st = st->u.if_.else_s;
  }
  TS_ASSERT(st->kind == IR_S_GEMM);
  st->u.gemm.wg_wait = -1;
  return ev->none;
}

/* Issued wgmma_gemm statements in `s` (the statements emitted so far in this block), most
 * recent first, one per accumulator. */
static void issued_wgmma(IrStmt *s, IrStmt **found, int *n, int max) {
  if (!s) return;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = s->u.seq.n - 1; i >= 0; i--) issued_wgmma(s->u.seq.items[i], found, n, max);
      return;
    case IR_S_FOR: issued_wgmma(s->u.loop.body, found, n, max); return;
    case IR_S_WHILE: issued_wgmma(s->u.while_.body, found, n, max); return;
    case IR_S_IF:
      issued_wgmma(s->u.if_.else_s, found, n, max);
      issued_wgmma(s->u.if_.then_s, found, n, max);
      return;
    case IR_S_GEMM:
      if (s->u.gemm.wg_wait != -1) return;
      for (int i = 0; i < *n; i++)
        if (found[i]->u.gemm.c.buf == s->u.gemm.c.buf) return;
      if (*n < max) found[(*n)++] = s;
      return;
    default: return;
  }
}

/* T.wait_wgmma(n): waits until at most n wgmma groups of this warpgroup are pending
 * (wgmma.wait_group n).  It is a GEMM statement with wg_wait = -4 - n and the operands of
 * a T.wgmma_gemm issued before it, so lowering also fences that accumulator's registers
 * (the compiler must not read them before the wait); one per accumulator in flight. */
static Value *t_wait_wgmma(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  int64_t n;
  if (!bi_need_kernel(ev, a, bi) || !ev_to_int(ev, arg[0], &n, loc)) return ev->poison;
  if (n < 0 || n > 1000) {
    ts_error(ev->c, loc, "T.wait_wgmma: the number of groups left pending must be between 0 and 1000, got %lld", (long long)n);
    return ev->poison;
  }
  IrStmt *found[8];
  int nf = 0;
  /* this block, then the enclosing ones (a wait under `if k < n - 1:` for the wgmma issued
   * just before the if); blocks outside the kernel hold only finished KERNEL statements,
   * which issued_wgmma does not enter */
  PtrVec *blk = ev->block;
  for (DefScope *sc = ev->scope; blk && !nf; blk = sc ? sc->outer_block : NULL, sc = sc ? sc->outer_scope : NULL)
    for (int i = blk->len - 1; i >= 0; i--) issued_wgmma(blk->items[i], found, &nf, 8);
  if (!nf) {
    ts_error(ev->c, loc, "T.wait_wgmma: no T.wgmma_gemm is issued before it in this block or an enclosing one (or in "
                         "a loop before it); wait after the wgmma is issued");
    return ev->poison;
  }
  for (int i = 0; i < nf; i++) {
    IrStmt *w = ir_stmt(ev->c, IR_S_GEMM, loc);
    w->u.gemm = found[i]->u.gemm;
    w->u.gemm.wg_wait = (int)(-4 - n);
    ev_emit(ev, w);
  }
  return ev->none;
}

/* ---- im2col ----------------------------------------------------------------------------------- */
/* A constant int argument of T.im2col: positive (pad: 0 or more). */
static IrExpr *im2col_cint(Eval *ev, Value *v, const char *what, SrcLoc loc, int64_t *out) {
  if (!ev_to_int(ev, v, out, loc)) return NULL;
  if (*out < 0 || (*out == 0 && strcmp(what, "pad"))) {
    ts_error(ev->c, loc, "T.im2col: %s must be %s, got %lld", what, strcmp(what, "pad") ? "positive" : "non-negative",
             (long long)*out);
    return NULL;
  }
  return ir_int(ev->c, *out, TS_DTYPE_INT32, loc);
}

/* T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): the (nhw_step, c_step)
 * tile of the im2col matrix of an NHWC image into col (rows: output pixels n*OH*OW + oh*OW + ow;
 * columns: kh*KW*C + kw*C + c, as a [KH, KW, C, F] filter flattens), zero where the window falls
 * outside the image or the matrix.  Staged as a T.Parallel nest of guarded loads. */
static Value *t_im2col(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  TsCompiler *c = ev->c;
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[0]->kind != V_BUFFER || arg[0]->u.buf->ndim != 4 || arg[1]->kind != V_BUFFER || arg[1]->u.buf->ndim != 2) {
    ts_error(c, loc, "T.im2col: expects an NHWC image buffer and a 2-D tile buffer");
    return ev->poison;
  }
  IrBuffer *img = arg[0]->u.buf, *col = arg[1]->u.buf;
  int64_t kk, s, d, p, bm, bk;
  IrExpr *KH = im2col_cint(ev, arg[4], "kernel", loc, &kk), *S = im2col_cint(ev, arg[5], "stride", loc, &s),
         *D = im2col_cint(ev, arg[6], "dilation", loc, &d), *P = im2col_cint(ev, arg[7], "pad", loc, &p);
  IrExpr *mstep = ev_to_ir(ev, arg[2], NULL, loc), *kstep = ev_to_ir(ev, arg[3], NULL, loc);
  if (!KH || !S || !D || !P || !mstep || !kstep) return ev->poison;
  if (!ir_is_const_int(col->shape[0], &bm) || !ir_is_const_int(col->shape[1], &bk)) {
    ts_error(c, loc, "T.im2col: the tile '%s' needs a constant shape", col->name);
    return ev->poison;
  }
  IrExpr *N = img->shape[0], *H = img->shape[1], *W = img->shape[2], *C = img->shape[3];
#define B(k, x, y) ir_binary(c, IR_##k, (x), (y), loc)
  /* OH = (H + 2P - D(KH-1) - 1) / S + 1, the same for W (square kernel) */
  IrExpr *span = ir_int(c, d * (kk - 1) + 1 - 2 * p, TS_DTYPE_INT32, loc);
  IrExpr *OH = B(ADD, B(FLOORDIV, B(SUB, H, span), S), ir_i32(c, 1));
  IrExpr *OW = B(ADD, B(FLOORDIV, B(SUB, W, span), S), ir_i32(c, 1));
  IrVar *vi = ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc), *vj = ir_var(c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *m = B(ADD, B(MUL, mstep, ir_i32(c, bm)), ir_varref(c, vi, loc));
  IrExpr *k = B(ADD, B(MUL, kstep, ir_i32(c, bk)), ir_varref(c, vj, loc));
  IrExpr *n = B(FLOORDIV, m, B(MUL, OH, OW)), *oh = B(FLOORMOD, B(FLOORDIV, m, OW), OH), *ow = B(FLOORMOD, m, OW);
  IrExpr *kh = B(FLOORDIV, k, B(MUL, KH, C)), *kw = B(FLOORMOD, B(FLOORDIV, k, C), KH), *ch = B(FLOORMOD, k, C);
  IrExpr *h = B(SUB, B(ADD, B(MUL, oh, S), B(MUL, kh, D)), P), *w = B(SUB, B(ADD, B(MUL, ow, S), B(MUL, kw, D)), P);
  IrExpr *zero = ir_i32(c, 0);
  IrExpr *ok = B(AND, B(LT, m, B(MUL, N, B(MUL, OH, OW))), B(LT, k, B(MUL, B(MUL, KH, KH), C)));
  ok = B(AND, ok, B(AND, B(AND, B(GE, h, zero), B(LT, h, H)), B(AND, B(GE, w, zero), B(LT, w, W))));
#undef B
  IrExpr *src_idx[4] = {n, h, w, ch};
  IrExpr *val = ir_select(c, IR_IF_THEN_ELSE, ok, ir_load(c, img, src_idx, 4, loc), ir_float(c, 0, img->dtype, loc), loc);
  IrExpr **dst_idx = ARENA_ARRAY(ev->a, IrExpr *, 2);
  dst_idx[0] = ir_varref(c, vi, loc);
  dst_idx[1] = ir_varref(c, vj, loc);
  IrStmt *st = ir_store(c, col, dst_idx, 2, ir_cast(c, col->dtype, val, loc), loc);
  IrStmt *inner = ir_for(c, vj, ir_i32(c, 0), ir_i32(c, bk), IR_FOR_PARALLEL, st, loc);
  ev_emit(ev, ir_for(c, vi, ir_i32(c, 0), ir_i32(c, bm), IR_FOR_PARALLEL, inner, loc));
  return ev->none;
}

/* ---- rows -------------------------------------------------------------------------------------- */
static const Builtin tileop_rows[] = {
    {"copy", "src, dst, coalesced_width=None, disable_tma=False, eviction_policy=None, prefer_instruction=None, "
             "annotations=None, loop_layout=None", t_copy, 0, BI_TERSE},
    {"fill", "buffer, value", t_fill, 0, BI_TERSE},
    {"clear", "buffer", t_clear, 0, BI_TERSE},
    {"reduce_sum", "buffer, out, dim=-1, clear=True, batch=None, nan_propagate=None", t_reduce, IR_RED_SUM, BI_TERSE},
    {"reduce_max", "buffer, out, dim=-1, clear=True, batch=None, nan_propagate=None", t_reduce, IR_RED_MAX, BI_TERSE},
    {"reduce_min", "buffer, out, dim=-1, clear=True, batch=None, nan_propagate=None", t_reduce, IR_RED_MIN, BI_TERSE},
    {"reduce_absmax", "buffer, out, dim=-1, clear=True, batch=None, nan_propagate=None", t_reduce, IR_RED_ABSMAX,
     BI_TERSE},
    {"reduce_abssum", "buffer, out, dim=-1, clear=True, batch=None, nan_propagate=None", t_reduce, IR_RED_ABSSUM,
     BI_TERSE},
    {"atomic_add", "dst, value, memory_order=None, return_prev=False, use_tma=False", t_atomic, IR_ATOMIC_ADD,
     BI_TERSE},
    {"atomic_max", "dst, value, memory_order=None, return_prev=False, use_tma=False", t_atomic, IR_ATOMIC_MAX,
     BI_TERSE},
    {"atomic_min", "dst, value, memory_order=None, return_prev=False, use_tma=False", t_atomic, IR_ATOMIC_MIN,
     BI_TERSE},
    {"gemm", "A, B, C, transpose_A=False, transpose_B=False, policy=0, clear_accum=False, k_pack=1, wg_wait=0, "
             "mbar=None, annotations=None", t_gemm, 0, BI_TERSE},
    {"gemm_sp", "A_sparse, E, B, C, transpose_A=False, transpose_E=False, transpose_B=False, policy=0, "
                "clear_accum=False, k_pack=1, wg_wait=0", t_gemm_sp, 0, BI_TERSE},
    {"wgmma_gemm", "A, B, C, transpose_A=False, transpose_B=False, policy=0, clear_accum=False, k_pack=1, "
                   "annotations=None", t_wgmma_gemm, 0, 0},
    {"wait_wgmma", "id", t_wait_wgmma, 0, 0},
    {"copy_cluster", "src, dst, dst_block=None, cluster_mask=None, remote_barrier=None, eviction_policy=None, "
                     "coalesced_width=None, annotations=None, loop_layout=None", t_copy_cluster, 0, 0},
    {"tma_copy", "src, dst, barrier=None, cluster_mask=None, leader_scope_threads=None, eviction_policy=None, "
                 "annotations=None", t_tma_copy, 0, 0},
    {"tma_store_wait", "read=False", t_tma_store_wait, 0, 0},
    {"im2col", "img, col, nhw_step, c_step, kernel, stride=1, dilation=1, pad=0", t_im2col, 0, 0},
    {"GemmWarpPolicy", NULL, bi_value_namespace, MOD_WARPPOLICY, BI_VALUE},
    /* known, not lowered yet */
    {"async_copy", "src, dst, coalesced_width=None, disable_tma=False, eviction_policy=None, prefer_instruction=None, "
             "annotations=None, loop_layout=None", t_copy, 0, BI_TERSE},

    {"transpose", "src, dst", t_transpose, 0, 0},
    {"tcgen05_gemm", "A, B, C, transpose_A=False, transpose_B=False, policy=0, clear_accum=False, mbar=None, "
                     "use_2cta=False, annotations=None", bi_kernel_unsupported, 0, 0},
    {"cumsum", "src, dst=None, dim=0, reverse=False", t_cumulative, IR_ADD, 0},
    {"cummax", "src, dst=None, dim=0, reverse=False", t_cumulative, IR_MAX, 0},
    {"warp_reduce_sum", "value", t_warp_reduce, IR_ADD, 0},
    {"warp_reduce_max", "value", t_warp_reduce, IR_MAX, 0},
    {"warp_reduce_min", "value", t_warp_reduce, IR_MIN, 0},
    {"warp_reduce_bitand", "value", t_warp_reduce, IR_BITAND, 0},
    {"warp_reduce_bitor", "value", t_warp_reduce, IR_BITOR, 0},
    {"reduce_bitand", "buffer, out, dim=-1, clear=True, batch=None", t_reduce, IR_RED_BITAND, 0},
    {"reduce_bitor", "buffer, out, dim=-1, clear=True, batch=None", t_reduce, IR_RED_BITOR, 0},
    {"reduce_bitxor", "buffer, out, dim=-1, clear=True, batch=None", t_reduce, IR_RED_BITXOR, 0},
    {"atomic_addx2", "dst, value, return_prev=False", t_atomic_addx, 2, 0},
    {"atomic_addx4", "dst, value, return_prev=False", t_atomic_addx, 4, 0},
    {"atomic_load", "src, memory_order=\"seq_cst\"", t_atomic_load, 0, 0},
    {"atomic_store", "dst, value, memory_order=\"seq_cst\"", t_atomic_ordered, IRD_ATOMIC_STORE, 0},
    {"atomic_or", "dst, value, memory_order=None, return_prev=False", t_atomic_ordered, IRD_ATOMIC_OR, 0},
    {"region", "buffer_load, access_type, *extents", bi_kernel_unsupported, 0, 0},
};

/* T.GemmWarpPolicy.<name>: how T.gemm splits the tile between warps. */
static const Builtin warp_policy_rows[] = {
    {"Square", NULL, bi_value_int, 0, BI_VALUE},
    {"FullRow", NULL, bi_value_int, 1, BI_VALUE},
    {"FullCol", NULL, bi_value_int, 2, BI_VALUE},
};

static const Builtin *tileop_row(const char *name) {
  const Builtin *row = builtin_find(tileop_rows, TS_ARRAY_LEN(tileop_rows), name);
  TS_ASSERT(row);
  return row;
}

const BuiltinTable builtins_tileops[] = {
    {MOD_T, tileop_rows, TS_ARRAY_LEN(tileop_rows), NULL},
    {MOD_WARPPOLICY, warp_policy_rows, TS_ARRAY_LEN(warp_policy_rows), NULL},
    BUILTIN_TABLE_END,
};
