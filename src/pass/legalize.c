/* legalize.c — first pass: brings tile-level IR into the shape layout inference works
 * on.  T.copy, T.fill/T.clear and tile T.atomic_add become T.Parallel nests of plain
 * element stores (a copy is a parallel loop over its extents with a per-element dtype
 * conversion; copies that inject_pipeline made asynchronous mark their nest), T.Pipelined
 * loops inject_pipeline left alone become serial loops, T.gemm stays a tile op, and
 * constructs without a lowering yet are reported at their line. */
#include "passes.h"

/* Extents of a region with the unit dims dropped: "non-1 dims are matched in order". */
static int nonunit_dims(TsCompiler *c, const IrRegion *r, int *dims, int64_t *ext, bool *ok) {
  int n = 0;
  for (int k = 0; k < r->ndim; k++) {
    int64_t e;
    if (!ir_is_const_int(r->extent[k], &e)) {
      ts_error(c, r->loc, "tile extent of '%s' must be a compile-time constant", r->buf->name);
      *ok = false;
      return 0;
    }
    if (e != 1) {
      if (n == FRAG_MAX_DIMS) {
        *ok = false;
        return 0;
      }
      dims[n] = k;
      ext[n++] = e;
    }
  }
  return n;
}

/* Indices of region r for loop vars v (assigned to r's non-unit dims in order). */
static IrExpr **region_index(TsCompiler *c, const IrRegion *r, const int *dims, int n, IrVar **v) {
  IrExpr **idx = ARENA_ARRAY(c->arena, IrExpr *, r->ndim);
  for (int k = 0; k < r->ndim; k++) idx[k] = r->min[k];
  for (int j = 0; j < n; j++) {
    int k = dims[j];
    IrExpr *var = ir_varref(c, v[j], r->loc);
    idx[k] = ir_binary(c, IR_ADD, r->min[k], var, r->loc);
  }
  return idx;
}

/* A nest of PARALLEL loops over ext[0..n) around the body built by the caller. */
static IrStmt *wrap_nest(TsCompiler *c, IrVar **v, const int64_t *ext, int n, IrStmt *body, SrcLoc loc) {
  for (int j = n - 1; j >= 0; j--)
    body = ir_for(c, v[j], ir_i32(c, 0), ir_i32(c, ext[j]), IR_FOR_PARALLEL, body, loc);
  return body;
}

/* A T.alloc_local / T.alloc_var buffer is every thread's own array: a fill or copy that
 * touches one runs whole in every thread (TileLang lowers it as a per-thread loop, not
 * partitioned), instead of being split across the threads as a fragment's is.  Unrolled, so
 * that the array's indices are constants and it stays in registers. */
static bool per_thread(const IrBuffer *b) { return b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR; }
static void serial_nest(IrStmt *nest) {
  for (IrStmt *l = nest; l && l->kind == IR_S_FOR; l = l->u.loop.body) l->u.loop.kind = IR_FOR_UNROLLED;
}

static void make_vars(TsCompiler *c, IrVar **v, int n, SrcLoc loc) {
  static const char *const names[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
  for (int j = 0; j < n; j++) v[j] = ir_var(c, names[j], TS_DTYPE_INT32, IR_VAR_LOOP, loc);
}

/* dst[...] = cast(src[...]) (or, for a tile atomic, the element atomic of it with the same
 * operation and memory order) for two equally shaped regions. */
static IrStmt *lower_copy_like(TsCompiler *c, const IrRegion *src, const IrRegion *dst, const IrStmt *atomic,
                               SrcLoc loc) {
  int sd[FRAG_MAX_DIMS], dd[FRAG_MAX_DIMS];
  int64_t se[FRAG_MAX_DIMS], de[FRAG_MAX_DIMS];
  bool ok = true;
  int ns = nonunit_dims(c, src, sd, se, &ok), nd = nonunit_dims(c, dst, dd, de, &ok);
  if (!ok) return NULL;
  bool same = ns == nd;
  for (int j = 0; same && j < ns; j++) same = se[j] == de[j];
  if (!same) {
    ts_error(c, loc, "T.copy: the extents of '%s' and '%s' do not match", src->buf->name, dst->buf->name);
    return NULL;
  }
  IrVar *v[FRAG_MAX_DIMS];
  int n = ns;
  make_vars(c, v, n > 0 ? n : 1, loc);
  IrExpr **si = region_index(c, src, sd, n, v), **di = region_index(c, dst, dd, n, v);
  IrExpr *val = ir_cast(c, dst->buf->dtype, ir_load(c, src->buf, si, src->ndim, loc), loc);
  IrStmt *body;
  if (atomic) {
    body = ir_stmt(c, IR_S_ATOMIC, loc);
    body->u.atomic.op = atomic->u.atomic.op;
    body->u.atomic.order = atomic->u.atomic.order;
    body->u.atomic.dst = *dst;
    body->u.atomic.dst.min = di;
    body->u.atomic.dst.extent = ARENA_ARRAY(c->arena, IrExpr *, dst->ndim);
    for (int k = 0; k < dst->ndim; k++) body->u.atomic.dst.extent[k] = ir_i32(c, 1);
    body->u.atomic.value = val;
    body->u.atomic.tile = false;
  } else {
    body = ir_store(c, dst->buf, di, dst->ndim, val, loc);
  }
  int64_t one = 1;
  IrStmt *nest = n > 0 ? wrap_nest(c, v, se, n, body, loc) : wrap_nest(c, v, &one, 1, body, loc);
  /* A copy into or out of a thread's own registers runs whole in every thread; an atomic into
   * memory must add each element once, so from registers (each thread holds the same copy)
   * it stays a T.Parallel nest and lays out over the threads like any other. */
  if (per_thread(dst->buf) || (per_thread(src->buf) && !atomic)) serial_nest(nest);
  return nest;
}

static IrStmt *lower_fill(TsCompiler *c, IrStmt *s) {
  const IrRegion *dst = &s->u.fill.dst;
  int dd[FRAG_MAX_DIMS];
  int64_t de[FRAG_MAX_DIMS];
  bool ok = true;
  int n = nonunit_dims(c, dst, dd, de, &ok);
  if (!ok) return NULL;
  IrVar *v[FRAG_MAX_DIMS];
  make_vars(c, v, n > 0 ? n : 1, s->loc);
  IrExpr **di = region_index(c, dst, dd, n, v);
  IrStmt *body = ir_store(c, dst->buf, di, dst->ndim, ir_cast(c, dst->buf->dtype, s->u.fill.value, s->loc), s->loc);
  int64_t one = 1;
  IrStmt *nest = n > 0 ? wrap_nest(c, v, de, n, body, s->loc) : wrap_nest(c, v, &one, 1, body, s->loc);
  if (per_thread(dst->buf)) serial_nest(nest);
  return nest;
}

/* ---- 4-bit copies by bytes ----------------------------------------------------------------
 * Element by element, every 4-bit store is a pair of atomics on the word that holds it
 * (ts::st4: the byte's other nibble may be another thread's).  A copy between two 4-bit
 * tensors in memory that moves whole bytes of every row — the last dimension's start and
 * extent even, rows of even length, no strides, layout or remap — is a copy of uint8 views of
 * both (declared in front of it, aliases of their memory), which later passes vectorize and
 * pipeline (cp.async) like any byte copy. */
static bool whole_bytes(const IrRegion *r) {
  const IrBuffer *b = r->buf;
  int n = r->ndim;
  int64_t len, ext;
  bool mem = b->scope == IR_SCOPE_GLOBAL || b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN;
  return mem && dtype_is_packed(b->dtype) && !b->strides && !b->layout && !b->remap && n == b->ndim && n > 0 &&
         ir_is_const_int(b->shape[n - 1], &len) && len % 2 == 0 && ir_is_const_int(r->extent[n - 1], &ext) &&
         ext % 2 == 0 && ir_is_multiple(r->min[n - 1], 2);
}

/* The uint8 view of r's buffer and r over it (last dimension halved); *alloc declares the view. */
static IrRegion byte_region(TsCompiler *c, const IrRegion *r, IrStmt **alloc, SrcLoc loc) {
  IrBuffer *b = r->buf;
  int n = b->ndim;
  int64_t len, ext;
  ir_is_const_int(b->shape[n - 1], &len);
  ir_is_const_int(r->extent[n - 1], &ext);
  IrExpr **shape = ARENA_ARRAY(c->arena, IrExpr *, n);
  for (int k = 0; k < n; k++) shape[k] = k < n - 1 ? b->shape[k] : ir_i32(c, len / 2);
  IrBuffer *v = ir_buffer(c, arena_printf(c->arena, "%s_bytes", b->name), TS_DTYPE_UINT8, b->scope, n, shape, loc);
  v->alias_of = b->alias_of ? b->alias_of : b;
  if (b->scope == IR_SCOPE_GLOBAL) v->param_index = -1;
  IrRegion out = *r;
  out.buf = v;
  out.min = ARENA_ARRAY(c->arena, IrExpr *, n);
  out.extent = ARENA_ARRAY(c->arena, IrExpr *, n);
  for (int k = 0; k < n; k++) {
    out.min[k] = k < n - 1 ? r->min[k] : ir_simplify(c, ir_binary(c, IR_FLOORDIV, r->min[k], ir_i32(c, 2), loc));
    out.extent[k] = k < n - 1 ? r->extent[k] : ir_i32(c, ext / 2);
  }
  *alloc = ir_stmt(c, IR_S_ALLOC, loc);
  (*alloc)->u.alloc.buf = v;
  return out;
}

static IrStmt *lower_copy(TsCompiler *c, IrStmt *s) {
  const IrRegion *src = &s->u.copy.src, *dst = &s->u.copy.dst;
  IrStmt *allocs[2] = {NULL, NULL};
  IrRegion sb, db;
  /* bytes of a plain copy move as wider elements, unless the user pinned the nest's layout */
  if (!s->u.copy.loop_layout && src->buf->dtype == dst->buf->dtype && whole_bytes(src) && whole_bytes(dst)) {
    sb = byte_region(c, src, &allocs[0], s->loc);
    db = byte_region(c, dst, &allocs[1], s->loc);
    src = &sb;
    dst = &db;
  }
  IrStmt *r = lower_copy_like(c, src, dst, NULL, s->loc);
  if (r && s->u.copy.async_ && r->kind == IR_S_FOR) r->u.loop.async_copy = true;
  if (r && r->kind == IR_S_FOR && r->u.loop.kind == IR_FOR_PARALLEL) r->u.loop.pinned_layout = s->u.copy.loop_layout;
  if (!r || !allocs[0]) return r;
  return ir_seq(c, (IrStmt *[]){allocs[0], allocs[1], r}, 3, s->loc);
}

/* ---- tiles whose extents are known only at run time ----------------------------------------
 * T.fill / T.copy of global or shared regions with run-time extents (`x[a:b]`, a and b
 * variables): no layout can split them, so the block's threads stride over the flattened
 * region (element e = i * threads + tid for i < ceil(n / threads), guarded by e < n), as a
 * T.Parallel nest's elements would be shared; a shared destination is written only inside
 * its shape (safe_memory guards global accesses).  Inside a T.ws branch, whose threads are a
 * subrange, this is refused (an unreached thread would leave its elements undone). */
typedef struct LegalCtx {
  IrKernel *k;
  bool in_ws;
} LegalCtx;

static bool has_runtime_extent(const IrRegion *r) {
  for (int k = 0; k < r->ndim; k++)
    if (!ir_is_const_int(r->extent[k], NULL)) return true;
  return false;
}

static bool strided_ok(const IrBuffer *b) {
  return b->scope == IR_SCOPE_GLOBAL || b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN;
}

/* Element `flat` (row-major over the extents) of region r. */
static IrExpr **region_element(TsCompiler *c, const IrRegion *r, IrExpr *flat) {
  IrExpr **idx = ARENA_ARRAY(c->arena, IrExpr *, r->ndim);
  for (int k = r->ndim - 1; k >= 0; k--) {
    IrExpr *i = k ? ir_binary(c, IR_FLOORMOD, flat, r->extent[k], r->loc) : flat;
    if (k) flat = ir_binary(c, IR_FLOORDIV, flat, r->extent[k], r->loc);
    idx[k] = ir_binary(c, IR_ADD, r->min[k], i, r->loc);
  }
  return idx;
}

/* for i in serial(ceil(n / T)): e = i * T + tid; if e < n: body(e) (body built on a LET e). */
static IrStmt *thread_strided(TsCompiler *c, IrKernel *k, IrExpr *n, IrVar *e, IrStmt *body, SrcLoc loc) {
  IrExpr *tid = NULL;
  int64_t T = 1;
  for (int d = 2; d >= 0; d--) {
    if (k->threads[d] <= 1) continue;
    IrExpr *v = ir_varref(c, ir_kernel_thread_var(c, k, d, loc), loc);
    tid = tid ? ir_binary(c, IR_ADD, v, ir_binary(c, IR_MUL, tid, ir_i32(c, k->threads[d]), loc), loc) : v;
    T *= k->threads[d];
  }
  if (!tid) tid = ir_i32(c, 0);
  IrVar *i = ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *ev = ir_binary(c, IR_ADD, ir_binary(c, IR_MUL, ir_varref(c, i, loc), ir_i32(c, T), loc), tid, loc);
  IrStmt *guarded = ir_if(c, ir_binary(c, IR_LT, ir_varref(c, e, loc), n, loc), body, NULL, loc);
  IrStmt *inner = ir_seq(c, (IrStmt *[]){ir_let(c, e, ev, loc), guarded}, 2, loc);
  IrExpr *trips = ir_binary(c, IR_FLOORDIV, ir_binary(c, IR_ADD, n, ir_i32(c, T - 1), loc), ir_i32(c, T), loc);
  return ir_for(c, i, ir_i32(c, 0), trips, IR_FOR_SERIAL, inner, loc);
}

static IrExpr *region_count(TsCompiler *c, const IrRegion *r) {
  IrExpr *n = ir_i32(c, 1);
  for (int k = 0; k < r->ndim; k++) n = ir_binary(c, IR_MUL, n, r->extent[k], r->loc);
  return ir_simplify(c, n);
}

/* A run-time-extent T.fill / T.copy (see above); NULL after a diagnostic. */
static IrStmt *lower_runtime_tile(TsCompiler *c, IrStmt *s, const LegalCtx *lc) {
  bool fill = s->kind == IR_S_FILL;
  const IrRegion *dst = fill ? &s->u.fill.dst : &s->u.copy.dst, *src = fill ? NULL : &s->u.copy.src;
  const char *what = fill ? "T.fill" : "T.copy";
  if (!lc->k || lc->in_ws || !strided_ok(dst->buf) || (src && !strided_ok(src->buf))) {
    ts_error(c, s->loc, "%s with extents known only at run time: supported for global and shared buffers outside "
             "T.ws branches ('%s')", what, (src && !strided_ok(src->buf)) ? src->buf->name : dst->buf->name);
    return NULL;
  }
  IrExpr *n = region_count(c, dst);
  IrStmt *check = NULL; /* a copy whose sides the compiler cannot show equal checks it when run */
  if (src) {
    IrExpr *ns = region_count(c, src);
    int64_t d;
    IrExpr *diff = ir_simplify(c, ir_binary(c, IR_SUB, ns, n, s->loc));
    if (!ir_is_const_int(diff, &d) || d != 0) {
      if (ir_is_const_int(diff, &d)) {
        ts_error(c, s->loc, "T.copy: '%s' and '%s' hold different numbers of elements", src->buf->name, dst->buf->name);
        return NULL;
      }
      check = ir_stmt(c, IR_S_ASSERT, s->loc);
      check->u.assert_.cond = ir_binary(c, IR_EQ, ns, n, s->loc);
      check->u.assert_.msg = "T.copy: the source and destination regions hold different numbers of elements";
    }
  }
  IrVar *e = ir_var(c, "e", TS_DTYPE_INT32, IR_VAR_LET, s->loc);
  IrExpr *er = ir_varref(c, e, s->loc);
  IrExpr *val = fill ? s->u.fill.value : ir_load(c, src->buf, region_element(c, src, er), src->ndim, s->loc);
  IrExpr **di = region_element(c, dst, er);
  IrStmt *st = ir_store(c, dst->buf, di, dst->ndim, ir_cast(c, dst->buf->dtype, val, s->loc), s->loc);
  if (dst->buf->scope != IR_SCOPE_GLOBAL) { /* (safe_memory guards global memory) */
    IrExpr *in = NULL;
    for (int k = 0; k < dst->ndim; k++) {
      IrExpr *ok = ir_binary(c, IR_AND, ir_binary(c, IR_GE, di[k], ir_i32(c, 0), s->loc),
                             ir_binary(c, IR_LT, di[k], dst->buf->shape[k], s->loc), s->loc);
      in = in ? ir_binary(c, IR_AND, in, ok, s->loc) : ok;
    }
    st = ir_if(c, in, st, NULL, s->loc);
  }
  IrStmt *loop = thread_strided(c, lc->k, n, e, st, s->loc);
  return check ? ir_seq(c, (IrStmt *[]){check, loop}, 2, s->loc) : loop;
}

static IrStmt *legalize_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  LegalCtx *lc = ctx;
  if (!s) return NULL;
  switch (s->kind) {
    case IR_S_KERNEL: { /* the copy's kernel: a thread variable made for the body is bound there */
      IrStmt *r = ir_stmt(c, IR_S_KERNEL, s->loc);
      *r = *s;
      LegalCtx inner = {&r->u.kernel, false};
      r->u.kernel.body = legalize_stmt(c, s->u.kernel.body, &inner);
      return r;
    }
    case IR_S_IF:
      if (s->u.if_.ws_hi) {
        LegalCtx inner = {lc->k, true};
        return ir_map_children(c, s, legalize_stmt, &inner);
      }
      return ir_map_children(c, s, legalize_stmt, ctx);
    case IR_S_COPY:
      /* T.tma_copy and T.copy_cluster: lower_tile_ops (tma_copy.c, cluster_copy.c) */
      if (s->u.copy.barrier || s->u.copy.tma_store || s->u.copy.dst_block) return s;
      if (has_runtime_extent(&s->u.copy.dst) || has_runtime_extent(&s->u.copy.src)) return lower_runtime_tile(c, s, lc);
      return lower_copy(c, s);
    case IR_S_FILL:
      if (has_runtime_extent(&s->u.fill.dst)) return lower_runtime_tile(c, s, lc);
      return lower_fill(c, s);
    case IR_S_ATOMIC:
      if (s->u.atomic.tile) return lower_copy_like(c, &s->u.atomic.src, &s->u.atomic.dst, s, s->loc);
      return s;
    case IR_S_GEMM: return s; /* planned by layout_inference, lowered by lower_tile_ops */
    case IR_S_UNSUPPORTED:
      ts_error(c, s->loc, "%s is not supported yet", s->u.unsupported.what ? s->u.unsupported.what : "this construct");
      return NULL;
    case IR_S_REDUCE:
      if (s->u.reduce.src->scope != IR_SCOPE_FRAGMENT || s->u.reduce.dst->scope != IR_SCOPE_FRAGMENT) {
        ts_error(c, s->loc, "T.reduce: source and destination must be fragments (T.alloc_fragment) for now");
        return NULL;
      }
      return s;
    case IR_S_FOR: {
      IrStmt *r = ir_map_children(c, s, legalize_stmt, ctx);
      if (r->u.loop.kind == IR_FOR_PIPELINED) r->u.loop.kind = IR_FOR_SERIAL;
      return r;
    }
    default: return ir_map_children(c, s, legalize_stmt, ctx);
  }
}

void pass_legalize(TsCompiler *c, IrFunc *f) {
  LegalCtx lc = {NULL, false};
  f->body = legalize_stmt(c, f->body, &lc);
}
