/* tma_copy.c — the explicit mbarriers and split-phase TMA loads of TileLang's manual
 * warp-specialization style (T.alloc_barrier, T.tma_copy), and T.tma_copy's TMA stores (shared
 * to global, waited for by T.tma_store_wait), lowered by lower_tile_ops once
 * layout_inference has fixed the shared tiles' swizzles.
 *
 * Hardware facts and TileLang semantics it relies on:
 *  - An mbarrier completes a phase when its pending arrivals reach zero AND the bytes announced
 *    with expect_tx have landed.  T.alloc_barrier(n) sets the arrivals to n; the arrivals are the
 *    user's (T.barrier_arrive, once per calling thread).  T.tma_copy adds the tile's bytes with a
 *    plain `mbarrier.expect_tx` (no arrival: an arrive.expect_tx here would count one arrival
 *    more than the user's and complete phases early) and issues the boxes, from one thread of
 *    the scope that runs it (TileLang's leader election over the thread range: the range's
 *    first thread here).  The leader announces before its own barrier_arrive, in program order,
 *    so a phase cannot complete before its bytes are counted.
 *  - TMA writes a box of a global tensor into shared memory in the swizzle the tile's wgmma
 *    layout uses (one box per W-byte column atom, CU_TENSOR_MAP_SWIZZLE_<W>B); the pattern is a
 *    function of the address bits, so every atom must start on its repeat (8 rows of W bytes).
 *    Boxes past the tensor's edge are zero-filled and still count all their bytes.
 *  - Barriers are initialised by one thread, then fence.mbarrier_init and a block barrier make
 *    them visible to all threads and to the async proxy before any use: done once at the
 *    kernel's start, with the barriers' declarations hoisted there (TileLang's
 *    LowerSharedBarrier does the same).
 *
 * Shapes refused with a diagnostic rather than lowered wrongly: a destination that is not whole
 * rows of a 2-D tile (leading dims of extent 1), columns not on the swizzle's atoms, sources
 * other than a box of a tensor parameter with 16-byte aligned rows. */
#include <string.h>

#include "../layout/layout.h"
#include "passes.h"

static IrExpr *i32(TsCompiler *c, int64_t v) { return ir_i32(c, v); }

/* ---- barrier initialisation ------------------------------------------------------------------ */
/* (T.alloc_cluster_barrier's barriers are initialised the same way, then a cluster barrier.) */
typedef struct Hoist { PtrVec *allocs; } Hoist;

static IrStmt *drop_barrier_allocs(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  Hoist *h = ctx;
  if (s->kind == IR_S_ALLOC && s->u.alloc.buf->scope == IR_SCOPE_BARRIER && s->u.alloc.buf->arrive_counts) {
    vec_push(c->arena, h->allocs, s);
    return ir_seq(c, NULL, 0, s->loc);
  }
  if (s->kind == IR_S_KERNEL) return s; /* another launch has its own */
  return ir_map_children(c, s, drop_barrier_allocs, ctx);
}

IrStmt *tma_hoist_barriers(TsCompiler *c, IrStmt *body, PtrVec *allocs) {
  Hoist h = {allocs};
  return drop_barrier_allocs(c, body, &h);
}

void tma_init_barriers(TsCompiler *c, const PtrVec *allocs, IrExpr *tid, PtrVec *out, SrcLoc loc) {
  if (!allocs->len) return;
  PtrVec init = {0};
  for (int i = 0; i < allocs->len; i++) {
    IrStmt *a = allocs->items[i];
    IrBuffer *b = a->u.alloc.buf;
    vec_push(c->arena, out, a);
    int64_t n = 0;
    ir_is_const_int(b->shape[0], &n);
    for (int64_t j = 0; j < n; j++) {
      IrExpr *idx = i32(c, j), *ld = ir_load(c, b, &idx, 1, loc);
      IrExpr *args[2] = {ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc), i32(c, b->arrive_counts[j])};
      vec_push(c->arena, &init, ir_device_stmt(c, IRD_MBAR_INIT, NULL, 0, args, 2, loc));
    }
  }
  vec_push(c->arena, &init, ir_device_stmt(c, IRD_MBAR_FENCE_INIT, NULL, 0, NULL, 0, loc));
  IrExpr *first = ir_binary(c, IR_EQ, tid, i32(c, 0), loc);
  vec_push(c->arena, out, ir_if(c, first, ir_seq_vec(c, &init, loc), NULL, loc));
  vec_push(c->arena, out, ir_eval(c, ir_call(c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, loc), loc));
  /* T.alloc_cluster_barrier: other blocks arrive on these, so every block's are initialised
   * before any block goes on (fence.mbarrier_init releases at cluster scope) */
  bool cluster = false;
  for (int i = 0; i < allocs->len; i++) cluster |= ((IrStmt *)allocs->items[i])->u.alloc.buf->cluster_barrier;
  if (cluster) vec_push(c->arena, out, ir_device_stmt(c, IRD_CLUSTER_SYNC, NULL, 0, NULL, 0, loc));
}

/* ---- T.tma_copy ------------------------------------------------------------------------------ */
/* What the shared side of a copy is: rows x [c0, c0 + w) of the last two dims (leading dims of
 * extent 1 at any index), boxes `atom` columns wide. */
typedef struct TmaDst {
  int64_t rows, c0, w, atom; /* c0 < 0: not a constant (c0e, a multiple of the atom) */
  IrExpr *c0e;               /* the first column */
  int swizzle;
} TmaDst;

static bool tma_dst(TsCompiler *c, const IrRegion *r, TmaDst *t, bool store, SrcLoc loc) {
  IrBuffer *b = r->buf;
  int n = b->ndim;
  int64_t rows, cols, m, e, eb = dtype_bytes(b->dtype);
  const char *why = NULL;
  for (int d = 0; d < n - 2 && !why; d++)
    if (!ir_is_const_int(r->extent[d], &e) || e != 1) why = "its leading dims must have extent 1";
  if (why) {
  } else if (n < 2 || !ir_is_const_int(b->shape[n - 2], &rows) || !ir_is_const_int(b->shape[n - 1], &cols)) {
    why = "it must be a tile of constant shape with at least two dims";
  } else if (!ir_is_const_int(r->min[n - 2], &m) || m || !ir_is_const_int(r->extent[n - 2], &e) || e != rows) {
    why = "it must cover whole rows of the tile";
  } else if (!ir_is_const_int(r->extent[n - 1], &t->w)) {
    why = "its number of columns must be a constant";
  } else if (!ir_is_const_int(r->min[n - 1], &t->c0) || t->c0 < 0) {
    t->c0 = -1; /* e.g. tile[:, j * k : (j + 1) * k] in a T.unroll loop over j */
  }
  t->c0e = r->min[n - 1];
  const Layout *L = b->layout;
  t->rows = rows;
  t->swizzle = L ? L->swizzle : 0;
  if (!why && t->swizzle) {
    t->atom = layout_atom_cols(L);
    if (L->rows != rows || L->cols != cols) why = "its swizzled layout does not match the tile";
    else if ((t->c0 < 0 ? !ir_is_multiple(t->c0e, t->atom) : t->c0 % t->atom) || t->w % t->atom)
      why = arena_printf(c->arena, "its columns must start and end on the %d-byte swizzle's %lld-column atoms",
                         t->swizzle, (long long)t->atom);
    else if (rows % 8) why = "a swizzled tile needs a multiple of 8 rows";
  } else if (!why) {
    t->atom = t->w;
    if (t->c0 || t->w != cols) why = "an unswizzled tile must be copied whole-row (all its columns)";
    else if ((t->w * eb) % 16) why = "its rows must be a multiple of 16 bytes";
    else if (n > 2 && (rows * cols * eb) % 128) why = "each tile of the buffer must be a multiple of 128 bytes";
  }
  if (!why && (rows > 256 || t->atom > 256)) why = "a TMA box has at most 256 rows and 256 columns";
  if (why)
    ts_error(c, loc, "T.tma_copy: the %s '%s' cannot be %s by TMA: %s", store ? "source" : "destination", b->name,
             store ? "read" : "written", why);
  return !why;
}

/* The global side: a box of a tensor parameter, `w` columns innermost and `rows` along one dim,
 * extent 1 elsewhere; *rdim is that dim. */
static bool tma_src(TsCompiler *c, const IrRegion *r, const IrBuffer *sb, const TmaDst *t, int *rdim, bool store,
                    SrcLoc loc) {
  IrBuffer *g = r->buf;
  int n = g->ndim;
  int64_t e;
  const char *why = NULL;
  if (g->param_index < 0 || g->alias_of || g->strides) why = "it must be a tensor parameter of the kernel";
  else if (g->remap) why = "it has a T.Layout (T.annotate_layout), so its boxes are not contiguous";
  else if (dtype_is_packed(g->dtype)) why = "4-bit tensors (two elements a byte) are not copied by TMA yet";
  else if (n < 2 || n > 4) why = "TMA loads here take tensors of 2 to 4 dims";
  else if (g->dtype != sb->dtype) why = "its dtype must be the destination's";
  else if (!ws_tma_rows_aligned(g)) why = "its rows must be 16-byte aligned";
  else if (!ir_is_const_int(r->extent[n - 1], &e) || e != t->w) why = "its innermost extent must be the tile's columns";
  *rdim = -1;
  for (int d = n - 2; d >= 0 && !why; d--) {
    if (!ir_is_const_int(r->extent[d], &e)) why = "its extents must be constants";
    else if (*rdim < 0 && e == t->rows) *rdim = d;
    else if (e != 1) why = "it must be one box: the tile's rows along one dim, extent 1 elsewhere";
  }
  if (!why && *rdim < 0) why = "it must hold the tile's rows along one dim";
  if (why)
    ts_error(c, loc, "T.tma_copy: the %s '%s' cannot be %s by TMA: %s", store ? "destination" : "source", g->name,
             store ? "written" : "read", why);
  return !why;
}

/* The tensor map of boxes [rows along rdim] x [atom] of g with `swizzle`; an equal one is reused. */
static IrTmaMap *tma_map(TsCompiler *c, IrFunc *f, IrBuffer *g, int rdim, const TmaDst *t, SrcLoc loc) {
  IrTmaMap m;
  memset(&m, 0, sizeof m);
  m.param_index = g->param_index;
  m.rank = g->ndim;
  for (int d = 0; d < 5; d++) m.box[d] = 1;
  m.box[0] = t->atom;
  m.box[g->ndim - 1 - rdim] = t->rows;
  m.swizzle = t->swizzle;
  for (int i = 0; i < f->ntma; i++) {
    IrTmaMap *o = &f->tma_maps[i];
    if (o->param_index == m.param_index && o->rank == m.rank && o->swizzle == m.swizzle &&
        !memcmp(o->box, m.box, sizeof m.box))
      return o;
  }
  m.var = ir_var(c, arena_printf(c->arena, "%s_tma%d", g->name, f->ntma), TS_DTYPE_HANDLE, IR_VAR_PARAM, loc);
  IrTmaMap *maps = ARENA_ARRAY(c->arena, IrTmaMap, f->ntma + 1);
  if (f->ntma) memcpy(maps, f->tma_maps, sizeof *maps * f->ntma);
  maps[f->ntma] = m;
  f->tma_maps = maps;
  return &f->tma_maps[f->ntma++];
}

/* &tile[lead..., 0, c0 + a * atom]: where the box of column atom `a` sits in the tile
 * (lower_tile_ops maps it through the tile's layout). */
static IrExpr *tma_box_addr(TsCompiler *c, const IrRegion *tile, const TmaDst *t, int64_t a, SrcLoc loc) {
  int nd = tile->ndim;
  IrExpr **di = ARENA_ARRAY(c->arena, IrExpr *, nd);
  for (int d = 0; d < nd - 2; d++) di[d] = tile->min[d];
  di[nd - 2] = i32(c, 0);
  di[nd - 1] = t->c0 >= 0 ? i32(c, t->c0 + a * t->atom) : a ? ir_binary(c, IR_ADD, t->c0e, i32(c, a * t->atom), loc) : t->c0e;
  IrExpr *ld = ir_load(c, tile->buf, di, nd, loc);
  return ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc);
}

/* The global coordinates of atom `a`'s box, innermost first, appended to args. */
static int tma_coords(TsCompiler *c, const IrRegion *g, const TmaDst *t, int64_t a, IrExpr **args, int na, SrcLoc loc) {
  for (int d = g->ndim - 1; d >= 0; d--) {
    IrExpr *co = g->min[d];
    if (d == g->ndim - 1 && a) co = ir_binary(c, IR_ADD, co, i32(c, a * t->atom), loc);
    args[na++] = ir_cast(c, TS_DTYPE_INT32, co, loc);
  }
  return na;
}

/* T.tma_copy(shared, global): every thread's writes to the tile made visible to the async proxy
 * (fence.proxy.async.shared::cta; thread_sync puts the block barrier after it, the store reading
 * the tile), then one thread issues the boxes and commits them as one bulk group. */
static IrStmt *tma_store_lower(TsCompiler *c, IrFunc *f, IrStmt *s, IrExpr *tid) {
  const IrRegion *tile = &s->u.copy.src, *g = &s->u.copy.dst;
  SrcLoc loc = s->loc;
  TmaDst t;
  int rdim;
  if (!tma_dst(c, tile, &t, true, loc) || !tma_src(c, g, tile->buf, &t, &rdim, true, loc)) return NULL;
  IrTmaMap *map = tma_map(c, f, g->buf, rdim, &t, loc);
  PtrVec p = {0};
  for (int64_t a = 0; a < t.w / t.atom; a++) {
    IrExpr *args[7];
    int na = 0;
    args[na++] = ir_varref(c, map->var, loc);
    args[na++] = tma_box_addr(c, tile, &t, a, loc);
    na = tma_coords(c, g, &t, a, args, na, loc);
    int64_t rank = g->ndim;
    vec_push(c->arena, &p, ir_device_stmt(c, IRD_TMA_STORE, &rank, 1, args, na, loc));
  }
  vec_push(c->arena, &p, ir_device_stmt(c, IRD_TMA_STORE_COMMIT, NULL, 0, NULL, 0, loc));
  IrStmt *fence = ir_device_stmt(c, IRD_FENCE_PROXY_ASYNC_SHARED, NULL, 0, NULL, 0, loc);
  IrStmt *issue = ir_if(c, ir_binary(c, IR_EQ, tid, i32(c, 0), loc), ir_seq_vec(c, &p, loc), NULL, loc);
  return ir_seq(c, (IrStmt *[]){fence, issue}, 2, loc);
}

/* The boxes of T.tma_copy load s, each completing on its barrier: plain TMA loads, or with a
 * nonzero `mask` multicast into the same place of every block of the mask (and their barriers). */
static IrStmt *tma_load_boxes(TsCompiler *c, const IrTmaMap *map, const IrStmt *s, const TmaDst *t, int64_t mask,
                              SrcLoc loc) {
  const IrRegion *src = &s->u.copy.src, *dst = &s->u.copy.dst;
  PtrVec p = {0};
  for (int64_t a = 0; a < t->w / t->atom; a++) {
    IrExpr *args[8];
    int na = 0;
    args[na++] = ir_varref(c, map->var, loc);
    args[na++] = tma_box_addr(c, dst, t, a, loc);
    args[na++] = s->u.copy.barrier;
    if (mask) args[na++] = i32(c, mask);
    na = tma_coords(c, src, t, a, args, na, loc);
    int64_t rank = src->ndim;
    vec_push(c->arena, &p, ir_device_stmt(c, mask ? IRD_TMA_LOAD_MC : IRD_TMA_LOAD, &rank, 1, args, na, loc));
  }
  return ir_seq_vec(c, &p, loc);
}

IrStmt *tma_copy_lower(TsCompiler *c, IrFunc *f, IrStmt *s, IrExpr *tid) {
  if (c->target.sm < 90) {
    ts_error(c, s->loc, "T.tma_copy needs TMA (sm_90 or newer)");
    return NULL;
  }
  if (s->u.copy.tma_store) return tma_store_lower(c, f, s, tid);
  const IrRegion *src = &s->u.copy.src, *dst = &s->u.copy.dst;
  SrcLoc loc = s->loc;
  TmaDst t;
  int rdim;
  if (!tma_dst(c, dst, &t, false, loc) || !tma_src(c, src, dst->buf, &t, &rdim, false, loc)) return NULL;
  IrTmaMap *map = tma_map(c, f, src->buf, rdim, &t, loc);
  int64_t bytes = t.rows * t.w * dtype_bytes(dst->buf->dtype);
  PtrVec p = {0};
  if (!s->u.copy.wait) /* a synchronous copy announces its bytes with the leader's arrival */
    vec_push(c->arena, &p, ir_device_stmt(c, IRD_MBAR_EXPECT_TX_NOARRIVE, NULL, 0, (IrExpr *[]){s->u.copy.barrier, i32(c, bytes)}, 2, loc));
  IrStmt *load = tma_load_boxes(c, map, s, &t, 0, loc);
  int64_t mask = s->u.copy.cluster_mask;
  if (mask) { /* the mask's lowest rank multicasts, its other ranks receive, the rest load alone */
    IrExpr *rank = ir_device(c, IRD_CLUSTER_RANK, TS_DTYPE_INT32, NULL, 0, NULL, 0, loc);
    IrExpr *in_mask = ir_binary(c, IR_NE, ir_binary(c, IR_BITAND, i32(c, mask), ir_binary(c, IR_SHL, i32(c, 1), rank, loc), loc),
                                i32(c, 0), loc);
    int lowest = 0;
    while (!(mask >> lowest & 1)) lowest++;
    IrStmt *multicast = ir_if(c, ir_binary(c, IR_EQ, rank, i32(c, lowest), loc), tma_load_boxes(c, map, s, &t, mask, loc),
                              NULL, loc);
    load = ir_if(c, in_mask, multicast, load, loc);
  }
  vec_push(c->arena, &p, load);
  IrExpr *leader = ir_binary(c, IR_EQ, tid, i32(c, 0), loc);
  IrStmt *issue = ir_if(c, leader, ir_seq_vec(c, &p, loc), NULL, loc);
  if (!s->u.copy.wait) return issue;
  /* every thread arrives (the leader announcing the bytes) and waits for the tile */
  IrExpr *tx = ir_select(c, IR_SELECT, leader, i32(c, bytes), i32(c, 0), loc);
  IrStmt *wait = ir_device_stmt(c, IRD_MBAR_ARRIVE_WAIT, NULL, 0, (IrExpr *[]){s->u.copy.barrier, tx}, 2, loc);
  return ir_seq(c, (IrStmt *[]){issue, wait}, 2, loc);
}
