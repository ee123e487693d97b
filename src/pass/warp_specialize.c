/* warp_specialize.c — first pass on sm_90a: the Hopper shape of a pipelined GEMM (TMA
 * loads completing on mbarriers, a producer warpgroup, consumer warpgroups on wgmma),
 * on tile-level IR, before inject_pipeline (which then leaves the loop alone).
 *
 * A kernel whose body is allocations, statements that touch no shared memory, and one
 * loop
 *
 *   for k in T.Pipelined(n, num_stages=S):            # S >= 2
 *       T.copy(G1[.., k ..], A_s); T.copy(G2[.., k ..], B_s)
 *       T.gemm(A_s, B_s, C)                            # planned as wgmma
 *
 * becomes, with the copied buffers given a leading stage dim S and 2S mbarriers in
 * shared memory (full[s] then empty[s]):
 *
 *   if tx == 0: init full[s] (1 arrival), empty[s] (one per consumer warp); fence
 *   __syncthreads
 *   if tx >= T:                       # the producer warpgroup, launched after the T consumers
 *       setmaxnreg.dec
 *       if tx == T:                   # one elected thread issues every TMA load
 *           for k: s = it % S; wait empty[s] (parity (it/S)%2 ^ 1)
 *                  expect_tx(full[s], bytes of the stage); TMA A/B boxes -> stage s
 *   else:                             # consumers: the original code, loop rewritten
 *       setmaxnreg.inc
 *       ...statements before the loop...
 *       for k: wait full[s] (parity (it/S)%2); issue wgmma on stage s; wait until one
 *              wgmma group is left in flight; lane 0 of each warp: arrive empty[(it-1)%S]
 *       wait for every wgmma; ...statements after the loop...
 *
 * With a 2-D grid the blocks are also made persistent (IrKernel.persistent: the grid is
 * the number of tiles, which the runtime lowers to the blocks co-resident on the device;
 * a tile loop with stride gridDim.x around both roles, stage/phase counters running on across tiles, so the
 * producer fills the stages of the next tile during the consumers' epilogue) and the tiles
 * are visited in rasterized order (panels of IrKernel.raster_panel block rows, default
 * WS_RASTER_PANEL) so that blocks running together share A and B tiles in L2
 * (pass_configs {"ts.disable_persistent": True}: one block per tile).
 *
 * Persistent kernels can also run as 2-block clusters (__cluster_dims__, IrKernel.cluster_x)
 * when one operand tile can be shared: the two blocks take neighbouring tiles along the
 * block axis that operand does not move with, each issues half of its boxes as TMA
 * multicast into both blocks (halving that operand's L2 -> SM traffic), the empty
 * barriers count the consumer warps of both blocks (each arrives on both), and cluster
 * barriers after the barrier init and before exit keep the blocks in step.
 * Opt-in (pass_configs tl.enable_tma_multicast).  The runtime sizes the grid of a cluster
 * kernel from cuOccupancyMaxActiveClusters: with a grid of SMs / 2 clusters, fewer were
 * co-resident and the ones left over only started when others had finished all their
 * tiles (measured 2.2x slower).
 *
 * A kernel that is persistent by itself (the loop inside a tile loop of serial loops, uniform
 * ifs and lets: TileLang's T.Persistent) gets the same schedule for the loop's sequence, both
 * roles running the nest around their part, the stage counter a local variable running on
 * across it (warp_specialize_nest.c says when that is sound); no tile loop of ours then.
 *
 * The epilogue of a persistent kernel overlaps the next tile's K loop when it is the TMA
 * store alone, of fp32 accumulators to a 16-bit C: the consumers pack the accumulators into
 * registers (`<acc>_pack`, IrBuffer.layout_like: the accumulator's layout) and start the
 * next tile; its first K steps store the packed tile, one piece per step after that step's
 * wgmma is issued; the block's last tile is stored after the tile loop.  By default only
 * when the tile goes out through a ring of column atoms (the whole tile does not fit next to
 * the stages: 128x256x64 with 4 stages, where it took 8192^3 fp16 from 753.5 to 781.7
 * TFLOP/s on an H100); a whole-tile epilogue keeps its store after the K loop, because timed
 * alternately on TileLang's example configurations (128x128x32/128 thr, 128x256x64 and
 * 128x128x64/256 thr, 3-4 stages; 2048^3 to 8192^3; H100, 2026-11-28) overlapping lost 2-6%
 * on each.  pass_configs {"ts.enable_epilogue_overlap": True} asks for it always,
 * {"tl.disable_epilogue_overlap": True} never.
 *
 * The shared tiles keep the swizzled layout gemm_plan chooses (layout.h), which is the
 * layout TMA writes with CU_TENSOR_MAP_SWIZZLE_{32,64,128}B: one box per W-byte column
 * atom of the tile ([rows] x [W/elem]), stacked atom after atom.  Boxes past the tensor's
 * edge are zero-filled by TMA, so edges (and a K tail) need no guards.  Tensor maps are
 * IrFunc.tma_maps; the runtime encodes them at launch.
 *
 * Kept conservative: anything else (other statements in the loop, shared memory outside
 * it, reductions, non-16-byte-aligned rows known at compile time, T.copy(disable_tma=True),
 * pass_configs tl.disable_warp_specialized / tl.disable_tma_lower) keeps the cp.async
 * path of inject_pipeline.  Consumer code must not need __syncthreads, which the producer
 * does not join; that is what "no shared memory outside the loop" guarantees. */
#include <string.h>

#include "../layout/layout.h"
#include "passes.h"

#define WS_PRODUCER_THREADS 128
#define WS_MAX_COPIES 4
#define WS_RASTER_PANEL 8 /* block rows per rasterization panel when T.use_swizzle gave none */

static IrExpr *i32(TsCompiler *c, int64_t v) { return ir_i32(c, v); }
static IrExpr *bin(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b) { return ir_binary(c, k, a, b, SRCLOC_NONE); }


/* ---- the plan of one kernel ------------------------------------------------------------ */
typedef struct WsCopy {
  IrStmt *copy;
  IrBuffer *dst, *staged;
  const Layout *layout;
  int64_t rows, cols, atom; /* tile and W-byte column atom (elements) */
  int tma;                  /* index into the function's tma maps */
  int split;                /* multicast in a 2-block cluster: SPLIT_ATOMS / SPLIT_ROWS; 0: local */
} WsCopy;

typedef struct Ws {
  TsCompiler *c;
  IrFunc *f;
  PtrVec maps; /* IrTmaMap* of the whole function */
} Ws;

/* Can `cp` (global -> shared tile) be one TMA box per column atom with `layout`? */
static bool tma_copy_ok(const IrStmt *cp, const Layout *layout, int64_t *rows, int64_t *cols) {
  const IrRegion *src = &cp->u.copy.src, *dst = &cp->u.copy.dst;
  IrBuffer *g = src->buf, *sb = dst->buf;
  if (cp->u.copy.disable_tma || g->scope != IR_SCOPE_GLOBAL || g->param_index < 0 || g->alias_of || g->strides ||
      g->remap || dtype_is_packed(g->dtype))
    return false;
  if (!pass_is_shared(sb) || sb->alias_of || sb->ndim != 2 || g->dtype != sb->dtype || g->ndim < 2 || g->ndim > 4) return false;
  int64_t r, cc;
  if (!ir_is_const_int(sb->shape[0], &r) || !ir_is_const_int(sb->shape[1], &cc)) return false;
  for (int d = 0; d < 2; d++) {
    int64_t m, e;
    if (!ir_is_const_int(dst->min[d], &m) || m != 0 || !ir_is_const_int(dst->extent[d], &e) || e != (d ? cc : r))
      return false;
  }
  if (!ws_tma_global_box(src, r, cc)) return false;
  if (!layout || !layout->swizzle || layout->rows != r || layout->cols != cc) return false;
  int64_t atom = layout_atom_cols(layout);
  if (r > 256 || atom > 256 || cc % atom) return false;
  *rows = r;
  *cols = cc;
  return true;
}

/* Device operations (ir.h IR_DEVICE_OPS) as an int32 value (grid/block indices, stream-K
 * schedule); statements through pass_dev. */
static IrExpr *dev_value(TsCompiler *c, IrDeviceOp op, IrExpr **args, int nargs, SrcLoc loc) {
  return ir_device(c, op, TS_DTYPE_INT32, NULL, 0, args, nargs, loc);
}
static IrExpr *bar_addr(TsCompiler *c, IrBuffer *bars, IrExpr *i) { return pass_addr(c, bars, &i, 1); }

IrRegion ws_stage_region(TsCompiler *c, const IrRegion *r, IrBuffer *staged, IrExpr *stage) {
  IrRegion x = *r;
  x.buf = staged;
  x.ndim = r->ndim + 1;
  x.min = ARENA_ARRAY(c->arena, IrExpr *, x.ndim);
  x.extent = ARENA_ARRAY(c->arena, IrExpr *, x.ndim);
  x.min[0] = stage;
  x.extent[0] = i32(c, 1);
  for (int d = 0; d < r->ndim; d++) x.min[d + 1] = r->min[d], x.extent[d + 1] = r->extent[d];
  return x;
}

/* A copy of the GEMM statement with A and B read from `stage` of their staged buffers. */
static IrRegion staged_region(TsCompiler *c, const IrRegion *r, const WsCopy *cps, int ncp, IrExpr *stage) {
  for (int i = 0; i < ncp; i++)
    if (cps[i].dst == r->buf) return ws_stage_region(c, r, cps[i].staged, stage);
  return *r;
}

/* Does the source box of copy `cp` move with block index `v`? */
static bool copy_uses(const IrStmt *cp, const IrVar *v) {
  const IrRegion *r = &cp->u.copy.src;
  for (int d = 0; d < r->ndim; d++)
    if (ir_expr_uses_var(r->min[d], v) || ir_expr_uses_var(r->extent[d], v)) return true;
  return false;
}

/* How the two blocks of a cluster split a multicast copy: by W-byte column atoms (each
 * issues half of them) or, for one atom column, by rows (each issues half of every box;
 * the halves start on whole 8-row swizzle periods).  0: cannot be split. */
enum { SPLIT_NONE = 0, SPLIT_ATOMS = 1, SPLIT_ROWS = 2 };
static int split_kind(const WsCopy *w) {
  if ((w->cols / w->atom) % 2 == 0) return SPLIT_ATOMS;
  if (w->rows % 16 == 0) return SPLIT_ROWS;
  return SPLIT_NONE;
}

/* ---- specialize: one kernel, in steps --------------------------------------------------
 * spec_plan (is the kernel a pipelined wgmma GEMM we can take?), spec_schedule (persistent
 * tiles, clusters), spec_maps (staged buffers, TMA maps, the epilogue's form), spec_top
 * (allocations, barrier init), spec_stream_k / spec_overlap (the optional schedules),
 * spec_producer, spec_consumer, spec_finish (the kernel's new body and launch shape). */
typedef struct Spec {
  Ws *ws;
  TsCompiler *c;
  IrStmt *ks;
  IrKernel *k;
  int64_t T;             /* consumer threads */
  IrStmt *body;          /* the kernel body (a SEQ) */
  int li;                /* index of the pipelined loop in body */
  IrStmt *loop, *gemm;   /* the loop and its T.gemm */
  int S;                 /* stages */
  GemmPlan plan;
  WsStore ep;            /* the epilogue store (find_epilogue) */
  WsCopy cps[WS_MAX_COPIES];
  int ncp;
  int64_t stage_bytes;
  IrVar *kv, *bxv, *byv; /* the K loop var, the block vars */
  IrExpr *m0, *ext;      /* the K loop's start and extent */
  int64_t panel;         /* rasterization panel (0: none) */
  WsSched sc, dsc;       /* the schedule; dsc: its data-parallel part (stream-K) */
  SrcLoc loc;
  IrVar *tx;
  IrExpr *txr;
  int first_map;         /* ws->maps index of the first load map */
  IrTmaMap *store_map;   /* the epilogue's TMA store map, or NULL */
  IrBuffer *bars;        /* full barriers [0, S), empty barriers [S, 2S) */
  PtrVec top, pre, post; /* the new body; statements before / after the loop */
  int nallocs;           /* allocations at the head of top */
  IrDeviceOp arrive;     /* the empty-barrier arrival (cluster-wide with 2-block clusters) */
  IrVar *pt, *ct;        /* producer / consumer tile loop vars */
  IrBuffer *acc;         /* the accumulator */
  int64_t am, an;        /* its shape */
  bool sk_on;            /* stream-K */
  int64_t nregs;         /* stream-K: accumulator registers per thread */
  WsSkSched sk;
  IrVar *vk0, *vk1, *vtb;
  int nvariants;         /* 0: tile by tile; 1: stream-K segments */
  int prod_regs;
  int64_t cons_regs;
  IrBuffer *pack;        /* the overlapped epilogue's packed tile, or NULL */
  IrStmt *pack_src;      /* the copy of the whole accumulator into shared memory / global */
  PtrVec pscalars;       /* statements before the loop the producer repeats (spec_scalars) */
  PtrVec pwaits;         /* flag waits before the loop the producer makes (producer_wait) */
  bool nested;           /* the loop sits in a nest of outer loops (warp_specialize_nest.c) */
  WsNest nest;
  IrBuffer *run;         /* nested: the stage counter running on across the nest (local var) */
} Spec;

/* ---- the producer's scalars -------------------------------------------------------------
 * The copies' coordinates (and the K loop's bounds) may use scalars the kernel computes
 * before the loop (grouped GEMM: m_start = offsets[g] + ..., g found by a loop over a
 * tensor; a swizzled tile order: pid_m = ...).  The producer runs on other threads than the
 * consumers, so it computes them itself: each statement before the loop that only computes
 * scalars (lets, T.alloc_var stores, loops and ifs of those) from parameters, block and
 * thread indices, global loads and earlier such scalars is repeated at the head of the
 * producer's tile.  When a copy needs any other value (one computed from a fragment, a
 * variable some other statement writes), the kernel stays on inject_pipeline's path. */
typedef struct Scalars {
  Arena *a;
  PtrVec lets;   /* lets the producer defines */
  PtrVec vars;   /* T.alloc_var buffers only repeated statements write */
  PtrVec others; /* T.alloc_var buffers other statements write */
  bool ok;
  bool used;     /* a copy or the loop bounds read a let or a T.alloc_var */
} Scalars;
static void scalar_expr(IrExpr *e, void *ctx) {
  Scalars *sc = ctx;
  if (e->kind == IR_VAR && e->u.var->kind == IR_VAR_LET) sc->used = true;
  if (e->kind == IR_VAR && e->u.var->kind == IR_VAR_LET && !vec_has(&sc->lets, e->u.var)) sc->ok = false;
  if (e->kind == IR_LOAD) {
    const IrBuffer *b = e->u.load.buf;
    if (b->scope == IR_SCOPE_VAR) sc->used = true;
    if (b->scope != IR_SCOPE_GLOBAL && (b->scope != IR_SCOPE_VAR || vec_has(&sc->others, b))) sc->ok = false;
  }
  if (e->kind == IR_CALL && !ir_call_is_pure(e)) sc->ok = false;
}
/* Does s only compute scalars from what the producer has?  Lets it defines join sc->lets. */
static bool scalar_stmt(Scalars *sc, IrStmt *s) {
  IrVisitor v = {NULL, scalar_expr, sc};
  sc->ok = true;
  switch (s->kind) {
    case IR_S_LET:
      ir_visit_expr(s->u.let.value, &v);
      if (sc->ok) vec_push(sc->a, &sc->lets, s->u.let.var);
      return sc->ok;
    case IR_S_STORE:
      if (s->u.store.buf->scope != IR_SCOPE_VAR || vec_has(&sc->others, s->u.store.buf)) return false;
      for (int i = 0; i < s->u.store.nidx; i++) ir_visit_expr(s->u.store.idx[i], &v);
      ir_visit_expr(s->u.store.value, &v);
      if (sc->ok && !vec_has(&sc->vars, s->u.store.buf)) vec_push(sc->a, &sc->vars, s->u.store.buf);
      return sc->ok;
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++)
        if (!scalar_stmt(sc, s->u.seq.items[i])) return false;
      return true;
    case IR_S_FOR:
      if (s->u.loop.kind != IR_FOR_SERIAL && s->u.loop.kind != IR_FOR_UNROLLED) return false;
      ir_visit_expr(s->u.loop.min, &v);
      ir_visit_expr(s->u.loop.extent, &v);
      return sc->ok && scalar_stmt(sc, s->u.loop.body);
    case IR_S_IF:
      ir_visit_expr(s->u.if_.cond, &v);
      return sc->ok && scalar_stmt(sc, s->u.if_.then_s) && (!s->u.if_.else_s || scalar_stmt(sc, s->u.if_.else_s));
    default: return false;
  }
}
/* The T.alloc_var buffers s writes (a statement the producer does not repeat), and whether
 * it waits on or reads other ranks' memory (T.wait_eq on a signal before the loop): the
 * loads may depend on that wait, which the producer would not make. */
static void dist_expr(IrExpr *e, void *ctx) {
  Scalars *sc = ctx;
  if (e->kind == IR_CALL && e->u.call.op == IRI_DEVICE && (ir_device_info[e->u.call.dop].flags & IRD_DIST)) sc->ok = false;
}
static void var_writes(IrStmt *s, void *ctx) {
  Scalars *sc = ctx;
  if (s->kind == IR_S_STORE && s->u.store.buf->scope == IR_SCOPE_VAR && !vec_has(&sc->others, s->u.store.buf))
    vec_push(sc->a, &sc->others, s->u.store.buf);
}
static bool producer_can_compute(Scalars *sc, IrExpr *e) {
  IrVisitor v = {NULL, scalar_expr, sc};
  sc->ok = true;
  ir_visit_expr(e, &v);
  return sc->ok;
}
/* Does e name a variable of kind `kind` (a let, a thread index)? */
typedef struct VarKind { IrVarKind kind; bool found; } VarKind;
static void var_kind_expr(IrExpr *e, void *ctx) {
  VarKind *vk = ctx;
  if (e->kind == IR_VAR && e->u.var->kind == vk->kind) vk->found = true;
}
static bool names_var_kind(IrExpr *e, IrVarKind kind) {
  VarKind vk = {kind, false};
  IrVisitor v = {NULL, var_kind_expr, &vk};
  ir_visit_expr(e, &v);
  return vk.found;
}
/* A wait on a flag before the loop, made by some threads (`if tid == 0: T.wait_eq(signal[i],
 * 1)`: TileScale's AG-GEMM waits for the gathered rows of its tile) or by all: the loads
 * may read what the flag publishes, so the producer's thread waits too, before its loads,
 * then fences the async proxy (the TMA reads global memory through it).  NULL when s is no
 * such wait or the producer cannot compute its arguments. */
static IrStmt *producer_wait(Scalars *sc, Spec *sp, IrStmt *s) {
  while (s->kind == IR_S_SEQ && s->u.seq.n == 1) s = s->u.seq.items[0];
  if (s->kind == IR_S_IF && !s->u.if_.else_s) {
    IrStmt *w = producer_wait(sc, sp, s->u.if_.then_s);
    if (!w || names_var_kind(s->u.if_.cond, IR_VAR_THREAD_IDX)) return w; /* which thread waits: the producer's own */
    return producer_can_compute(sc, s->u.if_.cond) ? ir_if(sp->c, s->u.if_.cond, w, NULL, s->loc) : NULL;
  }
  if (s->kind != IR_S_EVAL || !ir_is_flag_wait(s->u.eval.value)) return NULL;
  const IrExpr *w = s->u.eval.value;
  for (int i = 0; i < w->u.call.nargs; i++) {
    IrExpr *a = w->u.call.args[i];
    if (a->kind == IR_CALL && a->u.call.op == IRI_ADDRESS_OF && a->u.call.nargs == 1 && a->u.call.args[0]->kind == IR_LOAD)
      a = a->u.call.args[0]; /* the flag's address: its indices must be the producer's */
    if (!producer_can_compute(sc, a)) return NULL;
  }
  sc->used = true; /* the producer makes the wait whether or not its loads need a scalar */
  IrStmt *fence = pass_dev(sp->c, IRD_DIST_FENCE_ASYNC_GLOBAL, 0, 0, NULL, 0, s->loc);
  return ir_seq(sp->c, (IrStmt *[]){s, fence}, 2, s->loc);
}
/* Picks the statements before the loop the producer repeats (sp->pscalars); false when a
 * copy or the loop bounds need a value the producer cannot compute. */
static bool spec_scalars(Spec *sp) {
  Scalars sc = {sp->c->arena, {0}, {0}, {0}, true, false};
  for (int i = 0; i < sp->nest.lets.len; i++) vec_push(sc.a, &sc.lets, sp->nest.lets.items[i]); /* the nest's */
  IrStmt *body = sp->body;
  for (int i = 0; i < sp->li; i++) {
    IrStmt *s = body->u.seq.items[i];
    if (s->kind == IR_S_ALLOC) continue;
    int nlets = sc.lets.len, nvars = sc.vars.len;
    if (scalar_stmt(&sc, s)) {
      vec_push(sp->c->arena, &sp->pscalars, s);
      continue;
    }
    sc.lets.len = nlets, sc.vars.len = nvars; /* a variable written by a skipped statement is never the producer's */
    IrStmt *wait = producer_wait(&sc, sp, s);
    if (wait) {
      vec_push(sp->c->arena, &sp->pscalars, wait);
      vec_push(sp->c->arena, &sp->pwaits, s);
      continue;
    }
    IrVisitor v = {var_writes, dist_expr, &sc};
    sc.ok = true;
    ir_visit(s, &v);
    if (!sc.ok) return false;
  }
  for (int i = 0; i < sc.vars.len; i++)
    if (vec_has(&sc.others, sc.vars.items[i])) return false;
  if (!producer_can_compute(&sc, sp->loop->u.loop.min) || !producer_can_compute(&sc, sp->loop->u.loop.extent)) return false;
  for (int i = 0; i < sp->ncp; i++) {
    const IrRegion *r = &sp->cps[i].copy->u.copy.src;
    for (int d = 0; d < r->ndim; d++)
      if (!producer_can_compute(&sc, r->min[d])) return false;
  }
  if (!sc.used) sp->pscalars.len = 0; /* the loads need none of them */
  return true;
}

/* The copies of the loop body: each a TMA-able copy of a whole GEMM operand tile. */
static bool spec_copies(Spec *sp, IrStmt *lb) {
  IrStmt *gemm = sp->gemm;
  sp->stage_bytes = 0;
  for (int i = 0; i < sp->ncp; i++) {
    IrStmt *cp = lb->u.seq.items[i];
    if (cp->kind != IR_S_COPY) return false;
    IrBuffer *d = cp->u.copy.dst.buf;
    const Layout *lay = d == gemm->u.gemm.a.buf ? sp->plan.a_layout : d == gemm->u.gemm.b.buf ? sp->plan.b_layout : NULL;
    WsCopy *w = &sp->cps[i];
    memset(w, 0, sizeof *w);
    if (!lay || !tma_copy_ok(cp, lay, &w->rows, &w->cols)) return false;
    for (int j = 0; j < i; j++)
      if (sp->cps[j].dst == d) return false;
    w->copy = cp;
    w->dst = d;
    w->layout = lay;
    w->atom = layout_atom_cols(lay);
    sp->stage_bytes += w->rows * w->cols * dtype_bytes(d->dtype);
  }
  /* Both operands must come from the copies; nothing else may use the tiles. */
  bool a_ok = false, b_ok = false;
  for (int i = 0; i < sp->ncp; i++) {
    a_ok |= sp->cps[i].dst == gemm->u.gemm.a.buf;
    b_ok |= sp->cps[i].dst == gemm->u.gemm.b.buf;
  }
  return a_ok && b_ok && sp->stage_bytes < (1 << 20);
}

/* The index in `body` of its one pipelined loop after allocations and shared-free
 * statements; -1: none, -2: more than one, or shared memory used before it. */
static int find_loop(IrStmt *body) {
  int li = -1;
  for (int i = 0; i < body->u.seq.n; i++) {
    IrStmt *s = body->u.seq.items[i];
    if (s->kind == IR_S_ALLOC) continue;
    if (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PIPELINED) {
      if (li >= 0) return -2;
      li = i;
      continue;
    }
    if (li >= 0) break; /* after the loop: find_epilogue */
    if (ws_touches_shared(s)) return -2;
  }
  return li;
}

/* Is this kernel a pipelined wgmma GEMM this pass can take?  Fills the plan part of sp. */
static bool spec_plan(Spec *sp) {
  TsCompiler *c = sp->c;
  IrKernel *k = sp->k;
  if (k->threads[1] > 1 || k->threads[2] > 1 || k->threads[0] % 128 || k->threads[0] <= 0 || k->producer_threads ||
      k->manual_ws) /* T.ws: the kernel's own schedule */
    return false;
  sp->T = k->threads[0];
  IrStmt *body = sp->body = k->body;
  /* consumers that leave early would leave the producer waiting for their releases */
  if (!body || body->kind != IR_S_SEQ || pass_has_return(body, NULL)) return false;
  int li = find_loop(body);
  if (li < 0 && ws_nest_find(c, body, &sp->nest)) { /* the loop inside a persistent tile loop */
    body = sp->body = sp->nest.inner;
    sp->nested = true;
    li = find_loop(body);
  }
  if (li < 0) return false;
  sp->li = li;
  if (!ws_find_epilogue(c, body, li, &sp->ep)) return false;
  IrStmt *loop = sp->loop = body->u.seq.items[li];
  sp->S = loop->u.loop.num_stages;
  if (sp->S < 2 || loop->u.loop.norder) return false;
  IrStmt *lb = loop->u.loop.body;
  if (!lb || lb->kind != IR_S_SEQ || lb->u.seq.n < 2 || lb->u.seq.n > WS_MAX_COPIES + 1) return false;
  sp->ncp = lb->u.seq.n - 1;
  sp->gemm = lb->u.seq.items[sp->ncp];
  if (sp->gemm->kind != IR_S_GEMM || sp->gemm->u.gemm.wg_wait != 0) return false;
  if (!sp->gemm->u.gemm.plan || sp->gemm->u.gemm.plan->path != GEMM_WGMMA) return false;
  sp->plan = *sp->gemm->u.gemm.plan;
  return spec_copies(sp, lb) && spec_scalars(sp);
}

/* Does e read a let (a scalar computed in the kernel, which may differ from tile to tile)? */
static bool uses_let(IrExpr *e) { return names_var_kind(e, IR_VAR_LET); }

/* Shared memory a block has beside S pipeline stages (and their mbarriers, plus 2 KB of
 * slack); negative when the stages alone overflow it. */
static int64_t stages_room(const Spec *sp, int S) {
  return pass_smem_cap(sp->c) - (S * sp->stage_bytes + 16 * S + 2048);
}
static int64_t room_beside_stages(const Spec *sp) { return stages_room(sp, sp->S); }

/* A persistent block keeps the user's shared C tile (the epilogue's form B) live next to
 * the stages, which the producer refills for the next tile during the epilogue; one block
 * per tile lets the tile reuse the stages' memory (merge_shared_memory).  Persistent only
 * when both fit. */
static bool persistent_smem_fits(const Spec *sp) {
  const WsStore *ep = &sp->ep;
  if (ep->idx < 0 || ep->idx_frag < 0 || !pass_smem_cap(sp->c)) return true;
  return ep->rows * ep->cols * dtype_bytes(ep->to_global->u.copy.dst.buf->dtype) <= room_beside_stages(sp);
}

/* Persistent blocks (a 2-D grid whose K loop bounds do not depend on the block): the
 * grid becomes min(tiles, co-resident blocks) blocks that walk the tiles in rasterized order,
 * tile = blockIdx.x + t * gridDim.x.  Stage and phase continue across tiles, so the
 * producer loads the next tile while the consumers run the epilogue of this one. */
static void spec_schedule(Spec *sp) {
  TsCompiler *c = sp->c;
  IrKernel *k = sp->k;
  IrStmt *loop = sp->loop;
  sp->kv = loop->u.loop.var;
  IrExpr *m0 = sp->m0 = loop->u.loop.min, *ext = sp->ext = loop->u.loop.extent;
  IrVar *bxv = sp->bxv = k->block_var[0], *byv = sp->byv = k->block_var[1];
  int64_t g1 = 1, g2 = 1;
  /* A 1-D grid (the tile order the kernel computes from its block index, TileScale's AG-GEMM)
   * walks its tiles as rows of one: a block y that nothing names, no rasterization. */
  bool one_d = bxv && !byv && (!k->grid[1] || (ir_is_const_int(k->grid[1], &g1) && g1 == 1));
  if (one_d) byv = sp->byv = ir_var(c, "by_unused", TS_DTYPE_INT32, IR_VAR_LET, loop->loc);
  /* (not for the user's own clusters, T.ClusterKernel: their grid is the blocks it names) */
  bool persistent = !sp->nested && k->cluster_x <= 1 && bxv && byv && k->grid[0] && (k->grid[1] || one_d) && !k->block_var[2] &&
                    (!k->grid[2] || (ir_is_const_int(k->grid[2], &g2) && g2 == 1)) &&
                    !ir_expr_uses_var(m0, bxv) && !ir_expr_uses_var(m0, byv) &&
                    !ir_expr_uses_var(ext, bxv) && !ir_expr_uses_var(ext, byv) && !uses_let(m0) && !uses_let(ext) &&
                    !pass_config_on(sp->ws->f, "ts.disable_persistent") && persistent_smem_fits(sp);
  int64_t panel = sp->panel = k->raster_panel > 0 ? k->raster_panel : k->raster_panel < 0 || one_d ? 0 : WS_RASTER_PANEL;
  /* 2-block clusters (opt-in, see the top): the two blocks take neighbouring tiles along the
   * block axis that the larger operand tile does not move with, and each issues half of
   * that tile's boxes, multicast to both (half its L2 -> SM traffic). */
  IrExpr *gy = one_d ? i32(c, 1) : k->grid[1];
  WsSched sc = {.on = persistent, .cl = 1, .GX = k->grid[0], .GY = gy, .UX = k->grid[0], .UY = gy, .panel = panel,
                .serpentine = pass_config_on(sp->ws->f, "ts.raster_serpentine"), .column = k->raster_column};
  WsCopy *cps = sp->cps;
  int ncp = sp->ncp;
  if (persistent && pass_config_on(sp->ws->f, "tl.enable_tma_multicast")) {
    int64_t best = 0;
    for (int axis = 1; axis >= 0; axis--) {
      IrVar *v = axis ? byv : bxv;
      int64_t bytes = 0;
      for (int i = 0; i < ncp; i++)
        if (!copy_uses(cps[i].copy, v) && split_kind(&cps[i])) bytes += cps[i].rows * cps[i].cols;
      if (bytes > best) best = bytes, sc.axis = axis, sc.cl = 2;
    }
    if (sc.cl == 2)
      for (int i = 0; i < ncp; i++)
        if (!copy_uses(cps[i].copy, sc.axis ? byv : bxv)) cps[i].split = split_kind(&cps[i]);
  }
  if (persistent) {
    IrExpr *n = sc.axis ? sc.GY : sc.GX;
    int64_t nv;
    if (sc.cl == 2) {
      IrExpr *half = bin(c, IR_FLOORDIV, bin(c, IR_ADD, n, i32(c, 1)), i32(c, 2));
      if (sc.axis) sc.UY = half;
      else sc.UX = half;
      sc.guard = !(ir_is_const_int(n, &nv) && nv % 2 == 0);
      if (sc.axis && panel > 1) sc.panel = panel / 2; /* the same block rows per panel */
    }
    sc.nunits = bin(c, IR_MUL, sc.UX, sc.UY);
    /* The grid is all the work; the runtime launches only the blocks (clusters) that are
     * co-resident (IrKernel.persistent), and the blocks stride by gridDim.x / cl. */
    sc.G = sc.cl > 1 ? bin(c, IR_MUL, sc.nunits, i32(c, sc.cl)) : sc.nunits;
    IrExpr *gdim = dev_value(c, IRD_GRID_DIM_X, NULL, 0, loop->loc);
    sc.P = sc.cl > 1 ? bin(c, IR_FLOORDIV, gdim, i32(c, sc.cl)) : gdim;
  }
  sp->sc = sc;
}

/* The TMA map of one staged copy's source (box: one column atom by the tile's rows). */
static void spec_load_map(Spec *sp, WsCopy *w) {
  TsCompiler *c = sp->c;
  Ws *ws = sp->ws;
  IrBuffer *b = w->dst, *x = ARENA_NEW(c->arena, IrBuffer);
  *x = *b;
  x->ndim = 3;
  x->shape = ARENA_ARRAY(c->arena, IrExpr *, 3);
  x->shape[0] = i32(c, sp->S);
  x->shape[1] = b->shape[0];
  x->shape[2] = b->shape[1];
  x->strides = NULL;
  w->staged = x;
  /* the tensor map of this copy's source */
  IrBuffer *g = w->copy->u.copy.src.buf;
  IrTmaMap *m = ARENA_NEW(c->arena, IrTmaMap);
  memset(m, 0, sizeof *m);
  m->var = ir_var(c, arena_printf(c->arena, "%s_tma%d", g->name, ws->maps.len), TS_DTYPE_HANDLE, IR_VAR_PARAM, sp->loc);
  m->param_index = g->param_index;
  m->rank = g->ndim;
  for (int d = 0; d < 5; d++) m->box[d] = 1;
  m->box[0] = w->atom;
  m->box[1] = w->split == SPLIT_ROWS ? w->rows / 2 : w->rows;
  m->swizzle = w->layout->swizzle;
  w->tma = ws->maps.len;
  vec_push(c->arena, &ws->maps, m);
}

/* The epilogue store (find_epilogue): form B always (the user's shared tile is there
 * anyway), form A when its tile fits next to the stages. */
static void spec_store_map(Spec *sp) {
  TsCompiler *c = sp->c;
  WsStore *ep = &sp->ep;
  if (ep->idx < 0) return;
  const IrBuffer *G = ep->to_global->u.copy.dst.buf;
  int64_t tile_bytes = ep->rows * ep->cols * dtype_bytes(G->dtype);
  int64_t room = room_beside_stages(sp);
  int64_t atom_bytes = ep->rows * ep->atom * dtype_bytes(G->dtype), n_atoms = ep->cols / ep->atom;
  bool fits = tile_bytes <= room;
  if (ep->idx_frag < 0 && !fits && n_atoms > 1 && atom_bytes <= room) {
    /* form A, the whole tile does not fit: a ring of column atoms */
    ep->slots = room / atom_bytes < n_atoms ? room / atom_bytes : n_atoms - 1;
    while (n_atoms % ep->slots) ep->slots--; /* see epilogue_pieces */
    Layout *l = ws_store_layout(c, ep->rows, ep->slots * ep->atom, G->dtype);
    if (l && layout_atom_cols(l) == ep->atom) {
      ep->layout = l;
      fits = true;
    } else {
      ep->slots = 0;
    }
  }
  if (ep->idx_frag < 0 && !fits) {
    ep->idx = -1; /* form A that does not fit: direct stores */
    return;
  }
  if (!ep->smem)
    ep->smem = ir_buffer(c, arena_printf(c->arena, "%s_epi", G->name), G->dtype, IR_SCOPE_SHARED_DYN, 2,
                         (IrExpr *[]){i32(c, ep->rows), i32(c, (ep->slots ? ep->slots : n_atoms) * ep->atom)}, sp->loc);
  ep->smem->layout = ep->layout;
  IrTmaMap *m = sp->store_map = ARENA_NEW(c->arena, IrTmaMap);
  memset(m, 0, sizeof *m);
  m->var = ir_var(c, arena_printf(c->arena, "%s_tma%d", G->name, sp->ws->maps.len), TS_DTYPE_HANDLE, IR_VAR_PARAM, sp->loc);
  m->param_index = G->param_index;
  m->rank = G->ndim;
  for (int d = 0; d < 5; d++) m->box[d] = 1;
  m->box[0] = ep->atom;
  m->box[1] = ep->rows;
  m->swizzle = ep->layout->swizzle;
  vec_push(c->arena, &sp->ws->maps, m);
}

/* A shared buffer's bytes rounded up to 1 KB (the largest swizzle alignment); -1 when its
 * shape is not constant. */
static int64_t padded_bytes(const IrBuffer *b) {
  int64_t n = ir_buffer_bytes(b);
  return n < 0 ? -1 : (n + 1023) / 1024 * 1024;
}

/* Shared bytes of the kernel's allocations other than the staged tiles, plus form A's new
 * tile; -1 when one has no constant size. */
static int64_t other_smem_bytes(const Spec *sp) {
  int64_t total = 0;
  const IrStmt *kb = sp->k->body;
  for (int i = 0; i < kb->u.seq.n; i++) {
    const IrStmt *s = kb->u.seq.items[i];
    if (s->kind != IR_S_ALLOC) continue;
    const IrBuffer *b = s->u.alloc.buf;
    bool staged = false;
    for (int j = 0; j < sp->ncp; j++) staged |= b == sp->cps[j].dst;
    if (staged || (b->scope != IR_SCOPE_SHARED && b->scope != IR_SCOPE_SHARED_DYN)) continue;
    int64_t n = padded_bytes(b);
    if (n < 0) return -1;
    total += n;
  }
  if (sp->ep.idx >= 0 && sp->ep.idx_frag < 0 && sp->ep.smem) total += padded_bytes(sp->ep.smem);
  return total;
}

/* The consumers release a stage one wgmma late (the wait leaves the wgmma just issued in
 * flight), so S stages keep only S - 1 loads in flight: where the loop is bound by load
 * latency (grouped_gemm's 64-row tiles with 2 stages) that halves the loads a TileLang
 * consumer, which waits for each wgmma before releasing, keeps in flight.  A warp-specialized
 * kernel runs one block an SM, so shared memory left over beside the epilogue and the other
 * buffers costs nothing: the pipeline gets up to max(S + 1, WS_DEEP_STAGES) stages.  Same
 * results; pass_configs {"ts.disable_extra_stages": True} keeps num_stages as written. */
enum { WS_DEEP_STAGES = 4, WS_DEEP_SLACK = 6144 /* beyond stages_room's 2 KB: scratch later passes add */ };
static void spec_deepen(Spec *sp) {
  int64_t other = other_smem_bytes(sp);
  if (!pass_smem_cap(sp->c) || other < 0 || pass_config_on(sp->ws->f, "ts.disable_extra_stages")) return;
  int target = sp->S + 1 > WS_DEEP_STAGES ? sp->S + 1 : WS_DEEP_STAGES, S = sp->S;
  while (S < target && stages_room(sp, S + 1) >= other + WS_DEEP_SLACK) S++;
  sp->S = S;
  for (int i = 0; i < sp->ncp; i++) sp->cps[i].staged->shape[0] = i32(sp->c, S);
}

static void spec_maps(Spec *sp) {
  TsCompiler *c = sp->c;
  sp->loc = sp->loop->loc;
  sp->tx = ir_kernel_thread_var(c, sp->k, 0, sp->ks->loc);
  sp->txr = ir_varref(c, sp->tx, sp->loc);
  sp->first_map = sp->ws->maps.len;
  for (int i = 0; i < sp->ncp; i++) spec_load_map(sp, &sp->cps[i]);
  spec_store_map(sp);
  spec_deepen(sp);
}

/* Statements after the epilogue's TMA store (TileScale's GEMM-RS counts finished tiles with a
 * release atomic, and the count lets a copy engine read the tile) see the tile in global
 * memory: the storing thread waits for the store to complete and fences the async proxy,
 * then the consumers meet at their named barrier. */
static IrStmt *store_landed(Spec *sp) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  IrStmt *wait = ir_seq(c, (IrStmt *[]){pass_dev(c, IRD_TMA_STORE_WAIT, 0, 0, NULL, 0, loc),
                                        pass_dev(c, IRD_DIST_FENCE_ASYNC_GLOBAL, 0, 0, NULL, 0, loc)}, 2, loc);
  return ir_seq(c, (IrStmt *[]){ir_if(c, bin(c, IR_EQ, sp->txr, i32(c, 0)), wait, NULL, loc),
                                pass_dev(c, IRD_NAMED_BARRIER_SYNC, 1, sp->T, NULL, 0, loc)}, 2, loc);
}

/* Do the consumers read global memory themselves (a load, or a copy from global memory other
 * than the loop's TMA-staged tiles) anywhere after the statements before the loop? */
typedef struct GlobalReads { const Spec *sp; bool found; } GlobalReads;
static void global_read_expr(IrExpr *e, void *ctx) {
  GlobalReads *g = ctx;
  if (e->kind == IR_LOAD && ir_buffer_root(e->u.load.buf)->scope == IR_SCOPE_GLOBAL) g->found = true;
}
static void global_read_stmt(IrStmt *s, void *ctx) {
  GlobalReads *g = ctx;
  if (s->kind != IR_S_COPY || ir_buffer_root(s->u.copy.src.buf)->scope != IR_SCOPE_GLOBAL) return;
  for (int j = 0; j < g->sp->ncp; j++)
    if (s == g->sp->cps[j].copy) return;
  g->found = true;
}
static bool consumers_read_global(const Spec *sp) {
  GlobalReads g = {sp, false};
  IrVisitor v = {global_read_stmt, global_read_expr, &g};
  for (int i = sp->li; i < sp->body->u.seq.n && !g.found; i++) ir_visit(sp->body->u.seq.items[i], &v);
  return g.found;
}

/* A wait before the loop that the producer makes before its loads (producer_wait) is left
 * out of the consumers when they read no global memory themselves: everything they read
 * arrives through the stages the producer fills after that wait, so theirs orders nothing,
 * and with a wait in one consumer thread ptxas keeps the K loop's stage index in vector
 * registers instead of uniform ones (seen in the AG-GEMM example's SASS). */
static bool consumer_skips(const Spec *sp, const IrStmt *s) {
  return vec_has(&sp->pwaits, s) && !consumers_read_global(sp);
}

/* The new body's head: allocations (staged tiles in place of the tiles), the statements
 * before and after the loop sorted out, the barriers initialised by thread 0. */
static void spec_top(Spec *sp) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  IrStmt *body = sp->body;
  WsStore *ep = &sp->ep;
  int S = sp->S;
  IrBuffer *bars = sp->bars = ir_buffer(c, "pipe_bar", TS_DTYPE_UINT64, IR_SCOPE_SHARED_DYN, 1, (IrExpr *[]){i32(c, 2 * S)}, loc);
  int64_t nwarps = sp->T / 32;
  IrStmt *kb = sp->k->body; /* the allocations (the loop's own sequence when not nested) */
  for (int i = 0; i < kb->u.seq.n; i++) {
    IrStmt *s = kb->u.seq.items[i];
    if (s->kind != IR_S_ALLOC) continue;
    IrStmt *a = s;
    for (int j = 0; j < sp->ncp; j++)
      if (s->u.alloc.buf == sp->cps[j].dst) {
        a = ir_stmt(c, IR_S_ALLOC, s->loc);
        a->u.alloc.buf = sp->cps[j].staged;
      }
    vec_push(c->arena, &sp->top, a);
  }
  bool stored = false; /* store_landed is in sp->post */
  for (int i = 0; i < body->u.seq.n; i++) {
    IrStmt *s = body->u.seq.items[i];
    if (s->kind == IR_S_ALLOC) {
      continue;
    } else if (i < sp->li) {
      if (!consumer_skips(sp, s)) vec_push(c->arena, &sp->pre, s);
    } else if (i > sp->li && i == ep->idx) {
      vec_push(c->arena, &sp->post, ws_epilogue_store(c, ep, sp->store_map, sp->tx, sp->T,
                                                   ep->idx_frag >= 0 ? body->u.seq.items[ep->idx_frag] : NULL));
    } else if (i > sp->li && i != ep->idx_frag) {
      if (sp->store_map && ep->idx >= 0 && i > ep->idx && !stored) {
        vec_push(c->arena, &sp->post, store_landed(sp));
        stored = true;
      }
      vec_push(c->arena, &sp->post, s);
    }
  }
  if (ep->idx >= 0 && ep->idx_frag < 0) { /* form A: the new shared tile */
    IrStmt *sa = ir_stmt(c, IR_S_ALLOC, loc);
    sa->u.alloc.buf = ep->smem;
    vec_push(c->arena, &sp->top, sa);
  }
  IrStmt *balloc = ir_stmt(c, IR_S_ALLOC, loc);
  balloc->u.alloc.buf = bars;
  vec_push(c->arena, &sp->top, balloc);
  if (sp->nested) { /* every thread's stage counter, from 0 */
    sp->run = ir_buffer(c, "pipe_iter", TS_DTYPE_INT32, IR_SCOPE_VAR, 1, (IrExpr *[]){i32(c, 1)}, loc);
    sp->run->init = i32(c, 0);
    IrStmt *ra = ir_stmt(c, IR_S_ALLOC, loc);
    ra->u.alloc.buf = sp->run;
    vec_push(c->arena, &sp->top, ra);
  }
  sp->nallocs = sp->top.len; /* allocations made further down go here */

  /* barrier init by thread 0, published to the block (and the async proxy) */
  IrVar *bi = ir_var(c, "bi", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *bir = ir_varref(c, bi, loc);
  IrStmt *inits = ir_seq(c, (IrStmt *[]){pass_dev(c, IRD_MBAR_INIT, 0, 0, (IrExpr *[]){bar_addr(c, bars, bir), i32(c, 1)}, 2, loc),
                                         pass_dev(c, IRD_MBAR_INIT, 0, 0, (IrExpr *[]){bar_addr(c, bars, bin(c, IR_ADD, bir, i32(c, S))), i32(c, nwarps * sp->sc.cl)}, 2, loc)},
                         2, loc);
  IrStmt *init_all = ir_seq(c, (IrStmt *[]){ir_for(c, bi, i32(c, 0), i32(c, S), IR_FOR_UNROLLED, inits, loc),
                                            pass_dev(c, IRD_MBAR_FENCE_INIT, 0, 0, NULL, 0, loc)},
                            2, loc);
  vec_push(c->arena, &sp->top, ir_if(c, bin(c, IR_EQ, sp->txr, i32(c, 0)), init_all, NULL, loc));
  vec_push(c->arena, &sp->top, ir_eval(c, ir_call(c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, loc), loc));
  if (sp->sc.cl > 1) {
    /* the partner's barriers are initialised before anything multicasts or arrives on them */
    vec_push(c->arena, &sp->top, pass_dev(c, IRD_CLUSTER_SYNC, 0, 0, NULL, 0, loc));
    sp->sc.rank = ir_var(c, "cta_rank", TS_DTYPE_INT32, IR_VAR_LET, loc);
    vec_push(c->arena, &sp->top, ir_let(c, sp->sc.rank, bin(c, IR_FLOORMOD, ir_varref(c, sp->bxv, loc), i32(c, sp->sc.cl)), loc));
  }
  /* a stage is free when every consumer warp of the cluster has arrived on its empty barrier */
  sp->arrive = sp->sc.cl > 1 ? IRD_MBAR_ARRIVE_CLUSTER : IRD_MBAR_ARRIVE;
  sp->pt = ir_var(c, "tile_iter", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  sp->ct = ir_var(c, "tile_iter", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
}

/* Stream-K (gemm.cuh), opt-in with pass_configs {"tl.enable_stream_k": True}: persistent,
 * no cluster, the epilogue found, fp32 accumulators held once by the consumer threads;
 * the kernel decides at run time (tiles % blocks).  Off by default: on the H100 it is
 * correct but slower (4096x1024x8192: 0.68x; 8192^3: 0.92x of the tile-by-tile
 * schedule), because blocks that share operand panels no longer walk K in step, so L2
 * stops absorbing their reloads and the kernel becomes DRAM-bound. */
static void spec_stream_k(Spec *sp) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  WsSched *sc = &sp->sc;
  IrBuffer *acc = sp->acc = sp->gemm->u.gemm.c.buf;
  int64_t T = sp->T;
  sp->sk_on = sc->on && sc->cl == 1 && sp->ep.idx >= 0 && sp->post.len && pass_config_on(sp->ws->f, "tl.enable_stream_k") &&
              acc->scope == IR_SCOPE_FRAGMENT && acc->dtype == TS_DTYPE_FLOAT32 && acc->ndim == 2 &&
              ir_is_const_int(acc->shape[0], &sp->am) && ir_is_const_int(acc->shape[1], &sp->an) && sp->am * sp->an % T == 0;
  sp->nregs = sp->sk_on ? sp->am * sp->an / T : 0;
  sp->dsc = *sc; /* the data-parallel part */
  sp->nvariants = sp->sk_on ? 2 : 1;
  if (!sp->sk_on) return;
  WsSkSched *sk = &sp->sk;
  PtrVec *top = &sp->top;
  IrExpr *ext = sp->ext;
  IrExpr *G = dev_value(c, IRD_GRID_DIM_X, NULL, 0, loc);
  IrExpr *b = ir_varref(c, sp->bxv, loc);
  sk->dp = ir_var(c, "sk_dp", TS_DTYPE_INT32, IR_VAR_LET, loc);
  sk->iters = ir_var(c, "sk_iters", TS_DTYPE_INT32, IR_VAR_LET, loc);
  sk->s = ir_var(c, "sk_s", TS_DTYPE_INT32, IR_VAR_LET, loc);
  sk->e = ir_var(c, "sk_e", TS_DTYPE_INT32, IR_VAR_LET, loc);
  sk->ndp = ir_var(c, "sk_ndp", TS_DTYPE_INT32, IR_VAR_LET, loc);
  sk->nseg = ir_var(c, "sk_nseg", TS_DTYPE_INT32, IR_VAR_LET, loc);
  IrExpr *dp = ir_varref(c, sk->dp, loc), *iters = ir_varref(c, sk->iters, loc);
  vec_push(c->arena, top, ir_let(c, sk->dp, dev_value(c, IRD_SK_DP_TILES, (IrExpr *[]){sc->nunits, G}, 2, loc), loc));
  vec_push(c->arena, top, ir_let(c, sk->iters, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_MUL, bin(c, IR_SUB, sc->nunits, dp), ext), loc), loc));
  vec_push(c->arena, top, ir_let(c, sk->s, dev_value(c, IRD_SK_BEGIN, (IrExpr *[]){b, G, iters}, 3, loc), loc));
  vec_push(c->arena, top, ir_let(c, sk->e, dev_value(c, IRD_SK_BEGIN, (IrExpr *[]){bin(c, IR_ADD, b, i32(c, 1)), G, iters}, 3, loc), loc));
  vec_push(c->arena, top, ir_let(c, sk->ndp, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_FLOORDIV, bin(c, IR_ADD, bin(c, IR_SUB, dp, b), bin(c, IR_SUB, G, i32(c, 1))), G), loc), loc));
  vec_push(c->arena, top, ir_let(c, sk->nseg, dev_value(c, IRD_SK_SEGMENTS, (IrExpr *[]){ir_varref(c, sk->s, loc), ir_varref(c, sk->e, loc), ext}, 3, loc), loc));
  sp->dsc.nunits = dp;
  sp->vk0 = ir_var(c, "k_lo", TS_DTYPE_INT32, IR_VAR_LET, loc);
  sp->vk1 = ir_var(c, "k_hi", TS_DTYPE_INT32, IR_VAR_LET, loc);
  sp->vtb = ir_var(c, "it_base", TS_DTYPE_INT32, IR_VAR_LET, loc);
}

/* Does the tile's store name a scalar the tile computes (a let, a T.alloc_var)?  Those hold
 * the current tile's values where the previous tile is stored. */
static void tile_scalar(IrExpr *e, void *ctx) {
  if ((e->kind == IR_VAR && e->u.var->kind == IR_VAR_LET) || (e->kind == IR_LOAD && e->u.load.buf->scope != IR_SCOPE_GLOBAL))
    *(bool *)ctx = true;
}
static bool store_names_tile_scalars(const IrStmt *cp) {
  bool found = false;
  IrVisitor v = {NULL, tile_scalar, &found};
  const IrRegion *r = &cp->u.copy.dst;
  for (int d = 0; d < r->ndim; d++) ir_visit_expr(r->min[d], &v);
  return found;
}
/* The tile's store with its lets written out (TileScale's GEMMs compute their tile's row and
 * column from the block index: pid_m = ...), so that it can be moved to another tile by
 * substituting the block indices; NULL when the store still names a tile scalar then (a
 * T.alloc_var). */
static IrStmt *store_with_lets_inlined(TsCompiler *c, IrStmt *cp) {
  IrStmt *x = ir_stmt(c, IR_S_COPY, cp->loc);
  *x = *cp;
  IrRegion *r = &x->u.copy.dst;
  r->min = ARENA_ARRAY(c->arena, IrExpr *, r->ndim);
  for (int d = 0; d < r->ndim; d++) r->min[d] = pass_inline_lets(c, cp->u.copy.dst.min[d]);
  return store_names_tile_scalars(x) ? NULL : x;
}
/* The overlapped epilogue (persistent, tile by tile, the TMA-store epilogue alone after
 * the loop, fp32 accumulators, a 16-bit C): at the end of a tile the consumers only
 * convert the accumulators into a packed register copy (`pack`, half their registers)
 * and start the next tile; its first K steps store the packed tile, one piece (ring
 * atom, or the whole tile) per step right after that step's wgmma is issued, so the
 * tensor cores keep working through the epilogue.  The last tile is stored after the
 * tile loop.  When (see the top): a ring-of-atoms epilogue, or pass_configs
 * {"ts.enable_epilogue_overlap": True}; never with {"tl.disable_epilogue_overlap": True}. */
static void spec_overlap(Spec *sp) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  WsStore *ep = &sp->ep;
  IrBuffer *acc = sp->acc;
  int64_t T = sp->T;
  /* Registers: the producer keeps few; consumers take what it releases (<= 240). */
  sp->prod_regs = T >= 256 ? 24 : 40;
  sp->cons_regs = pass_ws_consumer_regs(T, WS_PRODUCER_THREADS, sp->prod_regs, 1);
  if (!(sp->sc.on && !sp->sk_on && ep->idx >= 0 && sp->store_map && sp->post.len == 1 &&
        (ep->slots > 0 || pass_config_on(sp->ws->f, "ts.enable_epilogue_overlap")) &&
        !pass_config_on(sp->ws->f, "tl.disable_epilogue_overlap") && acc->scope == IR_SCOPE_FRAGMENT &&
        acc->dtype == TS_DTYPE_FLOAT32 && acc->ndim == 2 && ir_is_const_int(acc->shape[0], &sp->am) &&
        ir_is_const_int(acc->shape[1], &sp->an) && sp->am * sp->an % T == 0 && sp->am == ep->rows && sp->an == ep->cols))
    return;
  IrStmt *store = store_with_lets_inlined(c, ep->to_global);
  if (!store) return;
  int64_t am = sp->am, an = sp->an;
  IrStmt *pack_src = ep->idx_frag >= 0 ? sp->body->u.seq.items[ep->idx_frag] : store;
  ts_dtype ot = store->u.copy.dst.buf->dtype;
  int64_t nacc = am * an / T, npack = nacc * dtype_bytes(ot) / 4;
  if (pack_src->u.copy.src.buf != acc || dtype_bytes(ot) != 2 || nacc + npack + 40 > sp->cons_regs) return;
  ep->to_global = store; /* the overlapped pieces move it to the previous tile and the last one */
  sp->pack_src = pack_src;
  IrBuffer *pack = sp->pack = ir_buffer(c, arena_printf(c->arena, "%s_pack", acc->name), ot, IR_SCOPE_FRAGMENT, 2,
                                        (IrExpr *[]){i32(c, am), i32(c, an)}, loc);
  pack->layout_like = acc;
  IrStmt *pa = ir_stmt(c, IR_S_ALLOC, loc);
  pa->u.alloc.buf = pack;
  PtrVec *top = &sp->top;
  vec_push(c->arena, top, NULL);
  memmove(&top->items[sp->nallocs + 1], &top->items[sp->nallocs], (size_t)(top->len - 1 - sp->nallocs) * sizeof top->items[0]);
  top->items[sp->nallocs] = pa;
}

/* The producer's TMA loads of one K step into stage `psr` (multicast halves by cluster rank). */
static void producer_loads(Spec *sp, IrVar *pk, IrExpr *psr, PtrVec *pb) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  IrExpr *pkr = ir_varref(c, pk, loc);
  PtrVec halves[2] = {{0}, {0}}; /* multicast boxes issued by cluster rank 0 / 1 */
  for (int i = 0; i < sp->ncp; i++) {
    const WsCopy *w = &sp->cps[i];
    const IrRegion *src = &w->copy->u.copy.src;
    IrTmaMap *m = sp->ws->maps.items[w->tma];
    int R = m->rank;
    int64_t hrows = w->rows / 2;
    for (int h = 0; h < (w->split == SPLIT_ROWS ? 2 : 1); h++)
      for (int64_t a = 0; a < w->cols / w->atom; a++) {
        int64_t r0 = w->split == SPLIT_ROWS ? h * hrows : 0;
        IrExpr *args[9];
        int na = 0;
        args[na++] = ir_varref(c, m->var, loc);
        args[na++] = pass_addr(c, w->staged, (IrExpr *[]){psr, i32(c, r0), i32(c, a * w->atom)}, 3);
        args[na++] = bar_addr(c, sp->bars, psr);
        if (w->split) args[na++] = i32(c, (1 << sp->sc.cl) - 1);
        for (int d = R - 1; d >= 0; d--) {
          IrExpr *co = ir_subst(c, src->min[d], &sp->kv, &pkr, 1);
          if (d == R - 1 && a) co = bin(c, IR_ADD, co, i32(c, a * w->atom));
          if (d == R - 2 && r0) co = bin(c, IR_ADD, co, i32(c, r0));
          args[na++] = ir_cast(c, TS_DTYPE_INT32, co, loc);
        }
        IrStmt *ld = pass_dev(c, w->split ? IRD_TMA_LOAD_MC : IRD_TMA_LOAD, R, 0, args, na, loc);
        if (!w->split) vec_push(c->arena, pb, ld);
        else vec_push(c->arena, &halves[w->split == SPLIT_ROWS ? h : 2 * a * w->atom >= w->cols], ld);
      }
  }
  if (halves[0].len || halves[1].len)
    vec_push(c->arena, pb, ir_if(c, bin(c, IR_EQ, ir_varref(c, sp->sc.rank, loc), i32(c, 0)), ir_seq_vec(c, &halves[0], loc),
                                 ir_seq_vec(c, &halves[1], loc), loc));
}

/* The producer's load loop, after the scalars it uses (spec_scalars). */
static IrStmt *with_scalars(Spec *sp, IrStmt *loop) {
  if (!sp->pscalars.len) return loop;
  PtrVec head = {0};
  for (int i = 0; i < sp->pscalars.len; i++) vec_push(sp->c->arena, &head, sp->pscalars.items[i]);
  vec_push(sp->c->arena, &head, loop);
  return ir_seq_vec(sp->c, &head, loop->loc);
}

/* The nested schedule's stage counter: its value, and its advance past one K loop. */
static IrExpr *run_value(Spec *sp) { return ir_load(sp->c, sp->run, (IrExpr *[]){i32(sp->c, 0)}, 1, sp->loc); }
static IrStmt *run_advance(Spec *sp) {
  return ir_store(sp->c, sp->run, (IrExpr *[]){i32(sp->c, 0)}, 1, bin(sp->c, IR_ADD, run_value(sp), sp->ext), sp->loc);
}

/* The producer's loop of one variant (0: tile by tile, 1: stream-K segments): per K step,
 * wait for the stage to be free, announce its bytes, issue its loads. */
static IrStmt *producer_variant(Spec *sp, IrVar *pk, int var) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  int S = sp->S;
  IrExpr *pkr = ir_varref(c, pk, loc), *m0 = sp->m0, *ext = sp->ext;
  IrExpr *pit = bin(c, IR_SUB, pkr, m0);
  if (var == 1) pit = bin(c, IR_ADD, ir_varref(c, sp->vtb, loc), pit);
  else if (sp->sc.on) pit = bin(c, IR_ADD, bin(c, IR_MUL, ir_varref(c, sp->pt, loc), ext), pit);
  else if (sp->run) pit = bin(c, IR_ADD, run_value(sp), pit);
  IrVar *ps = ir_var(c, "stage", TS_DTYPE_INT32, IR_VAR_LET, loc), *pph = ir_var(c, "phase", TS_DTYPE_INT32, IR_VAR_LET, loc);
  IrExpr *psr = ir_varref(c, ps, loc), *pphr = ir_varref(c, pph, loc);
  PtrVec pb = {0};
  vec_push(c->arena, &pb, ir_let(c, ps, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_FLOORMOD, pit, i32(c, S)), loc), loc));
  vec_push(c->arena, &pb, ir_let(c, pph, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_FLOORMOD, bin(c, IR_FLOORDIV, pit, i32(c, S)), i32(c, 2)), loc), loc));
  vec_push(c->arena, &pb, pass_dev(c, IRD_MBAR_WAIT, 0, 0, (IrExpr *[]){bar_addr(c, sp->bars, bin(c, IR_ADD, psr, i32(c, S))),
                                                                        bin(c, IR_BITXOR, pphr, i32(c, 1))}, 2, loc));
  vec_push(c->arena, &pb, pass_dev(c, IRD_MBAR_EXPECT_TX, 0, 0, (IrExpr *[]){bar_addr(c, sp->bars, psr), i32(c, sp->stage_bytes)}, 2, loc));
  producer_loads(sp, pk, psr, &pb);
  if (var == 0 && sp->run) /* nested: the K loop, then the counter moves on */
    return with_scalars(sp, ir_seq(c, (IrStmt *[]){ir_for(c, pk, m0, ext, IR_FOR_SERIAL, ir_seq_vec(c, &pb, loc), loc),
                                                    run_advance(sp)}, 2, loc));
  if (var == 0)
    return ws_per_tile(c, &sp->dsc, sp->pt, sp->bxv, sp->byv, with_scalars(sp, ir_for(c, pk, m0, ext, IR_FOR_SERIAL, ir_seq_vec(c, &pb, loc), loc)), NULL);
  IrExpr *lo = bin(c, IR_ADD, m0, ir_varref(c, sp->vk0, loc)), *n = bin(c, IR_SUB, ir_varref(c, sp->vk1, loc), ir_varref(c, sp->vk0, loc));
  IrVar *pu = ir_var(c, "seg", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  return ws_sk_loop(c, &sp->sc, &sp->sk, ext, pu, sp->vk0, sp->vk1, sp->vtb, sp->bxv, sp->byv,
                 with_scalars(sp, ir_for(c, pk, lo, n, IR_FOR_SERIAL, ir_seq_vec(c, &pb, loc), loc)), NULL);
}

/* The producer warpgroup: few registers; one thread prefetches the descriptors and runs
 * the load loops. */
static IrStmt *spec_producer(Spec *sp) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  IrVar *pk = ir_var(c, sp->kv->name, sp->kv->dtype, IR_VAR_LOOP, loc);
  IrStmt *ploops[2] = {NULL, NULL};
  for (int var = 0; var < sp->nvariants; var++) ploops[var] = producer_variant(sp, pk, var);
  IrStmt *ploop = ploops[1] ? ir_seq(c, ploops, 2, loc) : ploops[0];
  if (sp->nested) ploop = ws_nest_wrap(c, &sp->nest, ploop);
  PtrVec pfx = {0};
  for (int i = sp->first_map; i < sp->first_map + sp->ncp; i++) {
    IrTmaMap *m = sp->ws->maps.items[i];
    vec_push(c->arena, &pfx, pass_dev(c, IRD_TMA_PREFETCH_DESC, 0, 0, (IrExpr *[]){ir_varref(c, m->var, loc)}, 1, loc));
  }
  vec_push(c->arena, &pfx, ploop);
  return ir_seq(c, (IrStmt *[]){pass_dev(c, IRD_SETMAXNREG_DEC, sp->prod_regs, 0, NULL, 0, loc),
                                ir_if(c, bin(c, IR_EQ, sp->txr, i32(c, sp->T)), ir_seq_vec(c, &pfx, loc), NULL, loc)},
                2, loc);
}

/* A consumer K step's state shared by its pieces (see consumer_variant). */
typedef struct ConsStep {
  IrExpr *klo, *kext, *tbase, *lane0;
  IrExpr *has_prev, *pto[2], *pvalid; /* the overlapped epilogue's previous tile */
  PtrVec prevl;                       /* lets of the previous tile's coordinates */
  IrStmt *to_smem;
  int64_t nk;
  bool nk_known;
} ConsStep;

/* The consumer's K loop of one variant: wait for the stage, issue the wgmma, wait for the
 * previous one, release the previous stage; with the overlapped epilogue, the previous
 * tile's store pieces in the first K steps. */
static IrStmt *consumer_k_loop(Spec *sp, int var, ConsStep *st) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  int S = sp->S;
  IrStmt *gemm = sp->gemm;
  IrExpr *kr = ir_varref(c, sp->kv, loc), *m0 = sp->m0;
  IrExpr *it = bin(c, IR_SUB, kr, m0);
  if (st->tbase) it = bin(c, IR_ADD, st->tbase, it);
  IrVar *cs = ir_var(c, "stage", TS_DTYPE_INT32, IR_VAR_LET, loc), *cph = ir_var(c, "phase", TS_DTYPE_INT32, IR_VAR_LET, loc);
  IrExpr *csr = ir_varref(c, cs, loc), *cphr = ir_varref(c, cph, loc);
  PtrVec cb = {0};
  vec_push(c->arena, &cb, ir_let(c, cs, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_FLOORMOD, it, i32(c, S)), loc), loc));
  vec_push(c->arena, &cb, ir_let(c, cph, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_FLOORMOD, bin(c, IR_FLOORDIV, it, i32(c, S)), i32(c, 2)), loc), loc));
  /* the previous stage, released below once this step's wgmma is issued: computed here, with
   * the stage, so that it is ready (a uniform register) when the release needs it.  Computed
   * inside the release's `if`, ptxas if-converted it into predicated per-thread arithmetic
   * between the wgmma issues, reusing the descriptor registers: 5% of a 128x256 GEMM on H200. */
  IrVar *cprev = ir_var(c, "stage_prev", TS_DTYPE_INT32, IR_VAR_LET, loc);
  vec_push(c->arena, &cb, ir_let(c, cprev, bin(c, IR_FLOORMOD, bin(c, IR_ADD, csr, i32(c, S - 1)), i32(c, S)), loc));
  vec_push(c->arena, &cb, pass_dev(c, IRD_MBAR_WAIT, 0, 0, (IrExpr *[]){bar_addr(c, sp->bars, csr), cphr}, 2, loc));
  IrStmt *g = ir_stmt(c, IR_S_GEMM, gemm->loc);
  *g = *gemm;
  g->u.gemm.a = staged_region(c, &gemm->u.gemm.a, sp->cps, sp->ncp, csr);
  g->u.gemm.b = staged_region(c, &gemm->u.gemm.b, sp->cps, sp->ncp, csr);
  g->u.gemm.wg_wait = -1;
  vec_push(c->arena, &cb, g);
  vec_push(c->arena, &cb, pass_gemm_half(c, g, -3)); /* one group left in flight: the one just issued */
  /* the previous stage of this tile is no longer read by this warp's wgmma */
  IrExpr *prev = ir_varref(c, cprev, loc);
  IrExpr *release = bin(c, IR_AND, bin(c, IR_GT, kr, st->klo), st->lane0);
  vec_push(c->arena, &cb, ir_if(c, release, pass_dev(c, sp->arrive, sp->sc.cl, 0, (IrExpr *[]){bar_addr(c, sp->bars, bin(c, IR_ADD, prev, i32(c, S)))}, 1, loc), NULL, loc));
  /* the overlapped epilogue: the previous tile's pieces, piece a in K step a */
  IrVar *from[2] = {sp->bxv, sp->byv};
  st->to_smem = sp->pack && sp->ep.idx_frag >= 0 ? sp->pack_src : NULL;
  st->nk = -1; /* K steps of a tile, when known */
  st->nk_known = ir_is_const_int(st->kext, &st->nk);
  if (sp->pack && var == 0) {
    ws_unit_coords(c, &sp->dsc, ws_unit_id(c, &sp->dsc, bin(c, IR_SUB, ir_varref(c, sp->ct, loc), i32(c, 1)), sp->bxv), sp->bxv,
                sp->byv, "p", &st->prevl, st->pto, &st->pvalid);
    if (!sp->dsc.guard) st->pvalid = NULL;
    PtrVec pieces = {0};
    ws_tile_pieces(c, &sp->ep, sp->store_map, sp->tx, sp->T, st->to_smem, sp->pack, from, st->pto, st->pvalid, &pieces);
    st->has_prev = bin(c, IR_GT, ir_varref(c, sp->ct, loc), i32(c, 0));
    for (int a = 0; a < pieces.len && (!st->nk_known || a < st->nk); a++) {
      IrExpr *at = bin(c, IR_AND, st->has_prev, bin(c, IR_EQ, kr, bin(c, IR_ADD, st->klo, i32(c, a))));
      vec_push(c->arena, &cb, ir_if(c, at, pieces.items[a], NULL, loc));
    }
  }
  return ir_for(c, sp->kv, st->klo, st->kext, IR_FOR_SERIAL, ir_seq_vec(c, &cb, loc), loc);
}

/* The overlapped epilogue's tile loop: pieces the K loop had no step for, the packed copy
 * of the accumulators; after the loop, the last tile's store. */
static void consumer_overlapped(Spec *sp, ConsStep *st, PtrVec *tile, PtrVec *cons) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  IrVar *from[2] = {sp->bxv, sp->byv};
  WsSched *dsc = &sp->dsc;
  /* pieces the K loop had no step for (fewer steps than pieces), then the packed copy */
  PtrVec left = {0};
  ws_tile_pieces(c, &sp->ep, sp->store_map, sp->tx, sp->T, st->to_smem, sp->pack, from, st->pto, st->pvalid, &left);
  for (int a = 0; a < left.len; a++)
    if (!st->nk_known || st->nk <= a) {
      IrExpr *cond = st->nk_known ? st->has_prev : bin(c, IR_AND, st->has_prev, bin(c, IR_LE, st->kext, i32(c, a)));
      vec_push(c->arena, tile, ir_if(c, cond, left.items[a], NULL, loc));
    }
  IrStmt *pcp = ir_stmt(c, IR_S_COPY, loc);
  *pcp = *sp->pack_src;
  pcp->u.copy.src = ws_region2(c, sp->acc, 0, 0, sp->am, sp->an);
  pcp->u.copy.dst = ws_region2(c, sp->pack, 0, 0, sp->am, sp->an);
  pcp->u.copy.disable_tma = false;
  vec_push(c->arena, tile, pcp);
  IrExpr *id = ws_unit_id(c, dsc, ir_varref(c, sp->ct, loc), sp->bxv);
  vec_push(c->arena, &st->prevl, ws_tile_body(c, dsc, id, sp->bxv, sp->byv, ir_seq_vec(c, tile, loc), NULL));
  IrExpr *count = ws_unit_count(c, dsc, sp->bxv);
  vec_push(c->arena, cons, ir_for(c, sp->ct, i32(c, 0), count, IR_FOR_SERIAL, ir_seq_vec(c, &st->prevl, loc), loc));
  /* the last tile's store */
  PtrVec fin = {0};
  IrExpr *lto[2], *lvalid;
  ws_unit_coords(c, dsc, ws_unit_id(c, dsc, bin(c, IR_SUB, count, i32(c, 1)), sp->bxv), sp->bxv, sp->byv, "l", &fin, lto, &lvalid);
  ws_tile_pieces(c, &sp->ep, sp->store_map, sp->tx, sp->T, st->to_smem, sp->pack, from, lto, dsc->guard ? lvalid : NULL, &fin);
  vec_push(c->arena, cons, ir_if(c, bin(c, IR_GT, count, i32(c, 0)), ir_seq_vec(c, &fin, loc), NULL, loc));
}

/* Stream-K segments: a segment that starts inside its tile leaves a partial for the
 * tile's finisher; the finisher (the segment from k = 0) adds the partials, then runs the
 * epilogue. */
static IrStmt *consumer_stream_k(Spec *sp, PtrVec *tile) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  IrExpr *ext = sp->ext;
  IrExpr *k0 = ir_varref(c, sp->vk0, loc);
  IrExpr *accp = pass_addr(c, sp->acc, (IrExpr *[]){i32(c, 0), i32(c, 0)}, 2);
  IrExpr *tile_end = bin(c, IR_ADD, bin(c, IR_SUB, ir_varref(c, sp->vtb, loc), bin(c, IR_MUL, ir_varref(c, sp->sk.ndp, loc), ext)), ir_varref(c, sp->sk.s, loc));
  tile_end = bin(c, IR_ADD, tile_end, ext); /* (r + 1) * KT in the stream-K numbering */
  IrExpr *G = dev_value(c, IRD_GRID_DIM_X, NULL, 0, loc);
  /* the block's own index: bx inside a tile body means the tile's column */
  IrExpr *bid = dev_value(c, IRD_BLOCK_IDX_X, NULL, 0, loc);
  IrStmt *store = pass_dev(c, IRD_SK_STORE_PARTIAL, sp->nregs, sp->T, (IrExpr *[]){accp, bid, sp->txr}, 3, loc);
  IrStmt *fix = pass_dev(c, IRD_SK_FIXUP, sp->nregs, sp->T, (IrExpr *[]){accp, bid, G,
                                           ir_varref(c, sp->sk.iters, loc), tile_end, sp->txr}, 6, loc);
  IrStmt *fin = ir_seq(c, (IrStmt *[]){fix, ir_seq_vec(c, &sp->post, loc)}, 2, loc);
  IrStmt *spost = ir_if(c, bin(c, IR_GT, k0, i32(c, 0)), store, fin, loc);
  IrVar *cu = ir_var(c, "seg", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  return ws_sk_loop(c, &sp->sc, &sp->sk, ext, cu, sp->vk0, sp->vk1, sp->vtb, sp->bxv, sp->byv, ir_seq_vec(c, tile, loc), spost);
}

/* One consumer variant (0: tile by tile, 1: stream-K segments), appended to cons. */
static void consumer_variant(Spec *sp, int var, PtrVec *cons) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  IrStmt *gemm = sp->gemm;
  IrExpr *m0 = sp->m0, *ext = sp->ext;
  ConsStep st = {0};
  /* this variant's k range [klo, klo + kext) and stage counter base */
  st.klo = var ? bin(c, IR_ADD, m0, ir_varref(c, sp->vk0, loc)) : m0;
  st.kext = var ? bin(c, IR_SUB, ir_varref(c, sp->vk1, loc), ir_varref(c, sp->vk0, loc)) : ext;
  st.tbase = var ? ir_varref(c, sp->vtb, loc) : sp->sc.on ? bin(c, IR_MUL, ir_varref(c, sp->ct, loc), ext)
                                            : sp->run ? run_value(sp) : NULL;
  st.lane0 = bin(c, IR_EQ, bin(c, IR_FLOORMOD, sp->txr, i32(c, 32)), i32(c, 0));
  IrStmt *cloop = consumer_k_loop(sp, var, &st);
  IrStmt *gall = ir_stmt(c, IR_S_GEMM, gemm->loc);
  *gall = *gemm; /* after the loop: operands at stage 0 (only the accumulator matters to a wait) */
  gall->u.gemm.a = staged_region(c, &gemm->u.gemm.a, sp->cps, sp->ncp, i32(c, 0));
  gall->u.gemm.b = staged_region(c, &gemm->u.gemm.b, sp->cps, sp->ncp, i32(c, 0));
  gall->u.gemm.wg_wait = -2;
  /* every wgmma of the tile is done: release its last stage before the epilogue, so the
   * producer can fill it meanwhile */
  IrExpr *last = bin(c, IR_SUB, var ? ir_varref(c, sp->vk1, loc) : ext, i32(c, 1));
  if (st.tbase) last = bin(c, IR_ADD, st.tbase, last);
  IrExpr *last_stage = bin(c, IR_FLOORMOD, last, i32(c, sp->S));
  IrStmt *rel_last = ir_if(c, bin(c, IR_AND, bin(c, IR_GT, st.kext, i32(c, 0)), st.lane0),
                           pass_dev(c, sp->arrive, sp->sc.cl, 0, (IrExpr *[]){bar_addr(c, sp->bars, bin(c, IR_ADD, last_stage, i32(c, sp->S)))}, 1, loc),
                           NULL, loc);
  PtrVec tile = {0};
  for (int i = 0; i < sp->pre.len; i++) vec_push(c->arena, &tile, sp->pre.items[i]);
  vec_push(c->arena, &tile, cloop);
  vec_push(c->arena, &tile, gall);
  vec_push(c->arena, &tile, rel_last);
  if (sp->run) vec_push(c->arena, &tile, run_advance(sp));
  if (var == 0 && sp->pack)
    consumer_overlapped(sp, &st, &tile, cons);
  else if (var == 0)
    vec_push(c->arena, cons, ws_per_tile(c, &sp->dsc, sp->ct, sp->bxv, sp->byv, ir_seq_vec(c, &tile, loc),
                                      sp->post.len ? ir_seq_vec(c, &sp->post, loc) : NULL));
  else
    vec_push(c->arena, cons, consumer_stream_k(sp, &tile));
}

/* The consumer warpgroups: more registers, the variants, the final TMA-store wait. */
static IrStmt *spec_consumer(Spec *sp) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  PtrVec cons = {0};
  vec_push(c->arena, &cons, pass_dev(c, IRD_SETMAXNREG_INC, sp->cons_regs, 0, NULL, 0, loc));
  PtrVec work = {0};
  for (int var = 0; var < sp->nvariants; var++) consumer_variant(sp, var, &work);
  IrStmt *w = ir_seq_vec(c, &work, loc);
  vec_push(c->arena, &cons, sp->nested ? ws_nest_wrap(c, &sp->nest, w) : w);
  if (sp->store_map) /* the last tile's store has written global memory (and read the tile) */
    vec_push(c->arena, &cons, ir_if(c, bin(c, IR_EQ, sp->txr, i32(c, 0)), pass_dev(c, IRD_TMA_STORE_WAIT, 0, 0, NULL, 0, loc), NULL, loc));
  return ir_seq_vec(c, &cons, loc);
}

/* The kernel's new body (producer above thread T, consumers below) and launch shape. */
static void spec_finish(Spec *sp, IrStmt *producer, IrStmt *consumers) {
  TsCompiler *c = sp->c;
  SrcLoc loc = sp->loc;
  IrKernel *k = sp->k;
  WsSched *sc = &sp->sc;
  vec_push(c->arena, &sp->top, ir_if(c, bin(c, IR_GE, sp->txr, i32(c, sp->T)), producer, consumers, loc));
  /* no block leaves while its partner may still multicast into it or arrive on its barriers */
  if (sc->cl > 1) vec_push(c->arena, &sp->top, pass_dev(c, IRD_CLUSTER_SYNC, 0, 0, NULL, 0, loc));
  k->body = ir_seq_vec(c, &sp->top, sp->body->loc);
  if (sc->on) {
    k->cluster_x = sc->cl;
    k->persistent = true;
    /* stream-K splits the work over every co-resident block even when the tiles are fewer:
     * ask for more blocks than any GPU holds; the runtime keeps the resident ones and blocks
     * past the tiles get stream-K work (or none when stream-K is off at run time) */
    k->grid[0] = sp->sk_on ? bin(c, IR_ADD, sc->G, i32(c, 4096)) : sc->G;
    k->grid[1] = i32(c, 1);
    k->block_var[1] = NULL; /* replaced by the tile coordinates */
  } else if (sp->panel > 0) {
    k->body = ws_rasterize(c, k, k->body, sp->panel, sc->serpentine, sc->column);
  }
  k->producer_threads = WS_PRODUCER_THREADS;
  k->rasterized = true; /* the tile order above is the schedule's */
}

/* Rewrites one kernel; false leaves it to inject_pipeline. */
static bool specialize(Ws *ws, IrStmt *ks) {
  Spec *sp = ARENA_NEW(ws->c->arena, Spec);
  memset(sp, 0, sizeof *sp);
  sp->ws = ws;
  sp->c = ws->c;
  sp->ks = ks;
  sp->k = &ks->u.kernel;
  if (!spec_plan(sp)) return false;
  spec_schedule(sp);
  spec_maps(sp);
  spec_top(sp);
  spec_stream_k(sp);
  spec_overlap(sp);
  /* the producer is built before the consumers: their variables and TMA-map order are
   * part of the generated code */
  IrStmt *producer = spec_producer(sp);
  IrStmt *consumers = spec_consumer(sp);
  spec_finish(sp, producer, consumers);
  return true;
}

static void walk(Ws *ws, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_KERNEL) specialize(ws, s);
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(ws, s->u.seq.items[i]);
}

/* The GEMM half of pass_warp_specialize (warp_specialize_loop.c runs both halves). */
void ws_gemm_specialize(TsCompiler *c, IrFunc *f) {
  Ws ws = {c, f, {0}};
  walk(&ws, f->body);
  if (ws.maps.len) {
    f->ntma = ws.maps.len;
    f->tma_maps = ARENA_ARRAY(c->arena, IrTmaMap, ws.maps.len);
    for (int i = 0; i < ws.maps.len; i++) f->tma_maps[i] = *(IrTmaMap *)ws.maps.items[i];
  }
}
