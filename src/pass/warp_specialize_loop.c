/* warp_specialize_loop.c — the second half of pass warp_specialize (sm_90a), for the kernels
 * its GEMM schedule does not take, before inject_pipeline: the producer/consumer shape for any other pipelined loop whose
 * loads are tiles of global tensors, e.g. attention (QKᵀ, softmax, PV with K and V loaded at
 * different points of the iteration) or MLA decode.
 *
 * Hardware facts it relies on:
 *  - TMA (cp.async.bulk.tensor) copies a box of a global tensor into shared memory in the
 *    swizzled layout wgmma reads (layout.h), completing on an mbarrier with a byte count:
 *    no thread of the consumers spends registers or issue slots on addresses, and boxes
 *    past the tensor's edge are zero-filled, so no bounds guards remain.
 *  - mbarriers let each tile have its own full/empty pair per stage: the consumers wait for
 *    a tile just before its first use and release it right after its last use, so K of
 *    iteration k+S loads during softmax(k) and V(k+S) during QKᵀ(k+1).  No CTA-wide barrier
 *    is left in the loop; the two consumer warpgroups drift apart and one's softmax overlaps
 *    the other's wgmma.
 *  - setmaxnreg moves registers from the producer warpgroup (24) to the consumers (240), so
 *    the consumers' accumulators and softmax state fit without spills.
 *
 * A kernel qualifies when its body is allocations, statements, exactly one T.Pipelined loop
 * (no order=/stage= lists) and statements after it, with 128..384 threads (512 under
 * pass_configs ts.ws_wide_consumers), and the loop body
 * holds at least one copy
 *
 *   T.copy(G[.., f(k) .., :], X_s)      # a box of a tensor parameter onto the whole tile X_s
 *
 * that TMA can issue (a 2-4-D contiguous tensor with 16-byte rows, box [rows x cols] along
 * any one dim and the innermost, X_s a T.gemm operand tile with a swizzled layout, f computed
 * from block indices, parameters, kernel lets and k alone) and whose tile is read only by
 * T.gemm statements (synchronous wgmma) after the copy in the same iteration.  Every such
 * copy becomes a ring of S stages [S, rows, cols] with full[s] (1 arrival + bytes) and
 * empty[s] (one arrival per consumer warp) mbarriers.  Copies before the loop that TMA can
 * issue into a GEMM tile written by nothing else (Q) become loads on a barrier of their own,
 * waited for before the tile's first use.  The result:
 *
 *   if tx == 0: init barriers; fence          __syncthreads
 *   if tx >= T:                               # producer warpgroup, launched after T consumers
 *       setmaxnreg.dec;  if tx == T:
 *           pre-loop tiles: expect_tx + boxes on their barriers
 *           for k: s = it % S, ph = (it / S) % 2
 *               per staged copy, in loop order: wait empty[s] (ph ^ 1); expect_tx full[s]; boxes
 *   else:                                      # consumers: the original code
 *       setmaxnreg.inc; statements before the loop (waits before a pre-loop tile's first use)
 *       for k: ... wait full[s] (ph) before a tile's first use; T.gemm on stage s;
 *              lane 0 of each warp arrives on empty[s] after the tile's last use ...
 *       statements after the loop
 *
 * thread_sync then orders the consumers' own shared-memory hazards (reduction scratch, a P
 * tile, the epilogue) with named barriers over the consumer threads, and
 * merge_shared_memory counts lifetimes inside the consumer branch (O may reuse Q's bytes).
 * A copy of one row of a tensor onto a 1-D tile (an attention backward's lse and Delta) is
 * staged too even though threads read it (a T.Parallel statement): one unswizzled box per
 * stage, the readers' loads restaged (pass_restage), and a __syncwarp before lane 0 releases
 * the stage, so every lane is past its reads.  Such a loop is taken only where its shared
 * memory already holds it to one block an SM (smem_fits), or always with
 * ts.ws_thread_read_tiles True; False never stages such tiles.
 * A loop whose body is `lets; if cond: ...` (block-sparse attention) is taken over the
 * guarded statements, the producer evaluating its own form of cond and both roles counting
 * the iterations let through for stage and parity (ws_guard.c); what the producer reads may
 * include T.alloc_var scalars computed before the loop, whose statements it repeats
 * (ws_prelude.c).  Where shared memory and the consumers' fragments allow, the registers are
 * split for up to 4 blocks an SM instead of one (plan_blocks).
 * A kernel with T.thread_return, or a loop that break / continue leaves, is not taken.
 * Everything else (loads TMA cannot do, shared memory over the limit, other loop shapes,
 * pass_configs tl.disable_warp_specialized / tl.disable_tma_lower) stays on inject_pipeline's
 * cp.async path. */
#include <string.h>

#include "../layout/layout.h"
#include "passes.h"

#define WSL_PRODUCER_THREADS 128
#define WSL_MAX_COPIES 8
#define WSL_MAX_BARS 64
#define WSL_BLOCK_RESERVED_SMEM 1024 /* the shared memory the driver keeps for each block */
#define WSL_DEEP_SLACK 6144          /* bytes left beside an extra stage: scratch later passes add */

static IrExpr *i32(TsCompiler *c, int64_t v) { return ir_i32(c, v); }
static IrExpr *bin(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b) { return ir_binary(c, k, a, b, SRCLOC_NONE); }

static bool is_shared(const IrBuffer *b) { return pass_is_shared(ir_buffer_root(b)); }

/* One TMA-loaded tile: a staged copy of the loop, or a copy before it. */
typedef struct TmaTile {
  IrStmt *copy;
  int pos;              /* index in the loop body (staged) or in the kernel body (before the loop) */
  IrBuffer *dst;        /* the shared tile */
  IrBuffer *staged;     /* staged: [S, rows, cols] in place of dst; NULL for a pre-loop tile */
  const Layout *layout;
  int64_t rows, cols, atom, bytes;
  int rdim;             /* the global dim the tile's rows run along */
  IrExpr **src_min;     /* the box origin as the producer computes it (lets inlined) */
  IrTmaMap *map;
  int bar;              /* staged: full[s] = bars[bar + s], empty[s] = bars[bar + S + s]; else bars[bar] */
  int lead;             /* staged: the first tile of its group (tiles first and last used by the same
                           statements share one full/empty pair: one wait, one release) */
  int first, last;      /* statements (loop body / kernel body) that use the tile; -1: none */
  bool flat;            /* a 1-D tile (an lse row): one unswizzled box, staged [S, cols] */
  bool thread_read;     /* read by threads (T.Parallel), not only by wgmma (flat tiles) */
} TmaTile;

typedef struct WslOverlap {
  int j1, j2, js; /* G1, G2 (the last statement), the first statement after G1 touching P or O */
  int v;          /* the staged tile G2 reads */
} WslOverlap;

/* ts.ws_acc_overlap (plan_acc_overlap) */
typedef struct WslAccOverlap {
  int jg;          /* the loop's one GEMM */
  IrBuffer *acc;   /* its accumulator, fresh each iteration */
  IrBuffer *done;  /* iteration k's result while the GEMM of k+1 runs (acc's layout) */
  int jclear;      /* the statement clearing acc after its last read (dropped), or -1 */
  IrStmt **post;   /* the statements after the GEMM reading `done` for acc (NULL: dropped) */
} WslAccOverlap;

typedef struct Wsl {
  TsCompiler *c;
  IrFunc *f;
  PtrVec *maps;         /* IrTmaMap* of the function (shared with warp_specialize's) */
  IrKernel *k;
  int64_t T;            /* consumer threads */
  int S;                /* stages */
  IrStmt *body;         /* the kernel body (SEQ) */
  int li;               /* the loop's index in it */
  IrStmt *loop;
  IrVar *kv;            /* the loop variable */
  TmaTile tile[WSL_MAX_COPIES];  /* staged copies, in loop order */
  int nt;
  TmaTile pre[WSL_MAX_COPIES];   /* TMA copies before the loop */
  int np;
  int nbars;
  IrBuffer *bars;
  WsStore ep;           /* the epilogue as a TMA store (form B of warp_specialize.c); idx < 0: none */
  bool overlap;         /* ts.ws_intra_overlap applies (plan_overlap) */
  WslOverlap ov;
  bool acc_overlap;     /* ts.ws_acc_overlap applies (plan_acc_overlap) */
  WslAccOverlap ao;
  IrTmaMap *store_map;
  IrVar *tx;
  SrcLoc loc;
  bool guarded;         /* the loop body is `lets; if cond: ...` (ws_guard.c): w->loop iterates the
                           guarded statements, and stages count the iterations let through */
  WsGuard guard;
  IrBuffer *taken;      /* guarded: the counter of iterations let through (each thread its own) */
  PtrVec pvars;         /* the variables the producer computes too (ws_prelude.c) */
  int blocks;           /* blocks per SM the registers are split for (plan_blocks) */
  int64_t frag;         /* registers a consumer thread's fragments take (fragment_regs; -1: unknown) */
} Wsl;

/* ---- which statements use a buffer --------------------------------------------------------
 * Tile statements name their buffers in regions (not visited as loads), so each kind is
 * looked at; loads and stores through any alias count for the buffer they alias. */
typedef struct UseCtx {
  const IrBuffer *b;
  bool used, written, aliased, gemm_only;
} UseCtx;

static void use_buf(UseCtx *u, const IrBuffer *x, bool write) {
  if (!x) return;
  if (x != u->b && ir_buffer_root(x) == u->b) u->aliased = true;
  if (ir_buffer_root(x) != u->b) return;
  u->used = true;
  if (write) u->written = true;
}
static void use_stmt(IrStmt *s, void *ctx) {
  UseCtx *u = ctx;
  bool before = u->used;
  switch (s->kind) {
    case IR_S_COPY: use_buf(u, s->u.copy.src.buf, false); use_buf(u, s->u.copy.dst.buf, true); break;
    case IR_S_FILL: use_buf(u, s->u.fill.dst.buf, true); break;
    case IR_S_REDUCE: use_buf(u, s->u.reduce.src, false); use_buf(u, s->u.reduce.dst, true); break;
    case IR_S_ATOMIC:
      use_buf(u, s->u.atomic.dst.buf, true);
      if (s->u.atomic.tile) use_buf(u, s->u.atomic.src.buf, false);
      break;
    case IR_S_GEMM: {
      bool b4 = u->used;
      use_buf(u, s->u.gemm.a.buf, false);
      use_buf(u, s->u.gemm.b.buf, false);
      if (s->u.gemm.e.buf) use_buf(u, s->u.gemm.e.buf, false);
      bool operand = u->used && !b4;
      use_buf(u, s->u.gemm.c.buf, true);
      /* read as a shared operand of a synchronous wgmma: done when the statement is */
      if (u->used && !b4 && !(operand && s->u.gemm.wg_wait == 0 && s->u.gemm.c.buf != u->b &&
                              s->u.gemm.plan && s->u.gemm.plan->path == GEMM_WGMMA &&
                              !(s->u.gemm.a.buf == u->b && s->u.gemm.plan->a_in_regs)))
        u->gemm_only = false;
      return;
    }
    case IR_S_STORE: use_buf(u, s->u.store.buf, true); break;
    case IR_S_ALLOC: break;
    default: break;
  }
  if (u->used && !before) u->gemm_only = false;
}
static void use_expr(IrExpr *e, void *ctx) {
  UseCtx *u = ctx;
  if (e->kind == IR_LOAD) {
    bool before = u->used;
    use_buf(u, e->u.load.buf, false);
    if (u->used && !before) u->gemm_only = false;
  }
}
static UseCtx uses(IrStmt *s, const IrBuffer *b) {
  UseCtx u = {b, false, false, false, true};
  IrVisitor v = {use_stmt, use_expr, &u};
  ir_visit(s, &v);
  return u;
}

/* ---- TMA boxes ---------------------------------------------------------------------------- */
/* The shared layout the T.gemm statements of `s` want for tile b (their plans), NULL when
 * none reads it from shared memory or two disagree. */
typedef struct PlanCtx { const IrBuffer *b; const Layout *lay; bool conflict; } PlanCtx;
static void plan_stmt(IrStmt *s, void *ctx) {
  PlanCtx *p = ctx;
  if (s->kind != IR_S_GEMM || !s->u.gemm.plan) return;
  const GemmPlan *g = s->u.gemm.plan;
  const Layout *want[2] = {s->u.gemm.a.buf == p->b && !g->a_in_regs ? g->a_layout : NULL,
                           s->u.gemm.b.buf == p->b ? g->b_layout : NULL};
  for (int i = 0; i < 2; i++) {
    if (!want[i]) continue;
    if (p->lay && !layout_equal(p->lay, want[i])) p->conflict = true;
    p->lay = want[i];
  }
}
static const Layout *planned_layout(IrStmt *kbody, const IrBuffer *b) {
  PlanCtx p = {b, NULL, false};
  IrVisitor v = {plan_stmt, NULL, &p};
  ir_visit(kbody, &v);
  if (p.conflict || !p.lay || !p.lay->swizzle) return NULL;
  if (b->layout && !layout_equal(b->layout, p.lay)) return NULL;
  return p.lay;
}

/* Is `cp` a box of a tensor parameter onto the whole 2-D tile dst, one TMA box per W-byte
 * column atom of dst's planned layout, its origin computable by the producer?  Fills t. */
/* Can TMA copy cp's source onto its destination: a 2-4-D tensor parameter with 16-byte rows,
 * not a view, strided or remapped, onto an unaliased ndim-D shared tile of its dtype? */
static bool tma_copy_ok(IrStmt *cp, int ndim) {
  const IrRegion *src = &cp->u.copy.src;
  IrBuffer *g = src->buf, *sb = cp->u.copy.dst.buf;
  return !cp->u.copy.disable_tma && g->scope == IR_SCOPE_GLOBAL && g->param_index >= 0 && !g->alias_of && !g->strides &&
         !g->remap && !dtype_is_packed(g->dtype) /* 4-bit: element by element */ && is_shared(sb) && !sb->alias_of &&
         sb->ndim == ndim && g->dtype == sb->dtype && g->ndim >= 2 && g->ndim <= 4 && src->ndim == g->ndim &&
         ws_tma_rows_aligned(g);
}

/* The box origin as the producer computes it (lets inlined) into t->src_min; false when a
 * coordinate is not one the producer can compute. */
static bool box_origin(Wsl *w, const IrRegion *src, const IrVar *kv, TmaTile *t) {
  t->src_min = ARENA_ARRAY(w->c->arena, IrExpr *, src->ndim);
  for (int d = 0; d < src->ndim; d++)
    if (!(t->src_min[d] = ws_producer_form(w->c, w->body, w->li, &w->pvars, src->min[d], kv))) return false;
  return true;
}

static bool tma_tile(Wsl *w, IrStmt *cp, const IrVar *kv, TmaTile *t) {
  memset(t, 0, sizeof *t);
  const IrRegion *src = &cp->u.copy.src, *dst = &cp->u.copy.dst;
  IrBuffer *g = src->buf, *sb = dst->buf;
  if (!tma_copy_ok(cp, 2)) return false;
  int64_t r, cc;
  if (!ir_is_const_int(sb->shape[0], &r) || !ir_is_const_int(sb->shape[1], &cc)) return false;
  for (int d = 0; d < 2; d++) {
    int64_t m, e;
    if (!ir_is_const_int(dst->min[d], &m) || m != 0 || !ir_is_const_int(dst->extent[d], &e) || e != (d ? cc : r))
      return false;
  }
  /* the source: extent cols innermost, rows along one dim, 1 elsewhere */
  int n = g->ndim, rdim = -1;
  int64_t e;
  if (!ir_is_const_int(src->extent[n - 1], &e) || e != cc) return false;
  for (int d = n - 2; d >= 0; d--) {
    if (!ir_is_const_int(src->extent[d], &e)) return false;
    if (rdim < 0 && e == r) rdim = d;
    else if (e != 1) return false;
  }
  if (rdim < 0) return false;
  const Layout *lay = planned_layout(w->body, sb);
  if (!lay || lay->rows != r || lay->cols != cc) return false;
  int64_t atom = layout_atom_cols(lay);
  if (r > 256 || atom > 256 || cc % atom || !box_origin(w, src, kv, t)) return false;
  t->copy = cp;
  t->dst = sb;
  t->layout = lay;
  t->rows = r;
  t->cols = cc;
  t->atom = atom;
  t->rdim = rdim;
  t->bytes = r * cc * dtype_bytes(sb->dtype);
  t->first = t->last = -1;
  return true;
}

/* Unless ts.ws_thread_read_tiles is False: is `cp` a copy of one row of a
 * tensor parameter onto the whole 1-D tile dst (an attention backward's lse or Delta row), one
 * unswizzled TMA box of at most 256 elements in whole 16-byte units?  Fills t. */
static bool flat_tile(Wsl *w, IrStmt *cp, const IrVar *kv, TmaTile *t) {
  memset(t, 0, sizeof *t);
  if (!pass_config_state(w->f, "ts.ws_thread_read_tiles") || !tma_copy_ok(cp, 1)) return false;
  const IrRegion *src = &cp->u.copy.src, *dst = &cp->u.copy.dst;
  IrBuffer *g = src->buf, *sb = dst->buf;
  int64_t n, m, e;
  if (!ir_is_const_int(sb->shape[0], &n) || n > 256 || (n * dtype_bytes(sb->dtype)) % 16 ||
      !ir_is_const_int(dst->min[0], &m) || m != 0 || !ir_is_const_int(dst->extent[0], &e) || e != n)
    return false;
  for (int d = 0; d < g->ndim; d++)
    if (!ir_is_const_int(src->extent[d], &e) || e != (d == g->ndim - 1 ? n : 1)) return false;
  if (!box_origin(w, src, kv, t)) return false;
  t->copy = cp;
  t->dst = sb;
  t->rows = 1;
  t->cols = t->atom = n;
  t->rdim = 0; /* box[rank - 1] = 1: the outermost dim */
  t->bytes = n * dtype_bytes(sb->dtype);
  t->first = t->last = -1;
  t->flat = true;
  return true;
}

/* Does s reduce over tile b (T.reduce_*: its source or destination)? */
typedef struct ReduceOf { const IrBuffer *b; bool found; } ReduceOf;
static void reduce_of_stmt(IrStmt *s, void *ctx) {
  ReduceOf *r = ctx;
  if (s->kind == IR_S_REDUCE && (s->u.reduce.src == r->b || s->u.reduce.dst == r->b)) r->found = true;
}
static bool reduces_tile(IrStmt *s, const IrBuffer *b) {
  ReduceOf r = {b, false};
  IrVisitor v = {reduce_of_stmt, NULL, &r};
  ir_visit(s, &v);
  return r.found;
}

/* ---- planning --------------------------------------------------------------------------- */
typedef struct PipeCount { int n; } PipeCount;
static void count_pipelined(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PIPELINED) ((PipeCount *)ctx)->n++;
  if (s->kind == IR_S_KERNEL) ((PipeCount *)ctx)->n += 100; /* nested kernels: never */
}

/* Staged copies of the loop body: TMA-able, their tiles used only by later synchronous
 * wgmma statements of the same iteration and nowhere outside the loop. */
static bool plan_staged(Wsl *w) {
  IrStmt *lb = w->loop->u.loop.body;
  if (!lb || lb->kind != IR_S_SEQ) return false;
  int n = lb->u.seq.n;
  for (int i = 0; i < n && w->nt < WSL_MAX_COPIES; i++) {
    IrStmt *s = lb->u.seq.items[i];
    TmaTile t;
    if (s->kind != IR_S_COPY || !(tma_tile(w, s, w->kv, &t) || flat_tile(w, s, w->kv, &t))) continue;
    t.pos = i;
    bool ok = true;
    for (int j = 0; j < n && ok; j++) {
      if (j == i) continue;
      UseCtx u = uses(lb->u.seq.items[j], t.dst);
      if (!u.used) continue;
      if (j < i || u.aliased || u.written) ok = false;
      /* a flat tile may be read by threads: restaged loads, all lanes done before the release */
      if (!u.gemm_only || lb->u.seq.items[j]->kind != IR_S_GEMM) {
        if (t.flat && !reduces_tile(lb->u.seq.items[j], t.dst)) t.thread_read = true;
        else ok = false;
      }
      if (t.first < 0) t.first = j;
      t.last = j;
    }
    for (int j = 0; j < w->body->u.seq.n && ok; j++) {
      IrStmt *s2 = w->body->u.seq.items[j];
      if (j == w->li) continue;
      if (s2->kind == IR_S_ALLOC) continue;
      if (uses(s2, t.dst).used) ok = false;
    }
    if (!ok) continue;
    w->tile[w->nt++] = t;
  }
  if (!w->nt) return false;
  /* every load of the loop goes through the producer, or none: a copy TMA cannot issue (or
   * a gather nest: im2col) would run synchronously in the consumers, where inject_pipeline
   * keeps it in flight */
  for (int i = 0; i < n; i++) {
    IrStmt *s = lb->u.seq.items[i];
    bool staged = false;
    for (int j = 0; j < w->nt; j++) staged |= w->tile[j].pos == i;
    if (!staged && ((s->kind == IR_S_COPY && s->u.copy.src.buf->scope == IR_SCOPE_GLOBAL && is_shared(s->u.copy.dst.buf)) ||
                    pass_gather_dst(w->c, s, w->body)))
      return false;
  }
  /* each staged tile's allocation sits at the top level of the kernel */
  for (int i = 0; i < w->nt; i++) {
    bool found = false;
    for (int j = 0; j < w->body->u.seq.n; j++) {
      IrStmt *s = w->body->u.seq.items[j];
      if (s->kind == IR_S_ALLOC && s->u.alloc.buf == w->tile[i].dst) found = true;
    }
    if (!found) return false;
  }
  return true;
}

/* TMA copies before the loop onto GEMM tiles that nothing else writes. */
static void plan_pre(Wsl *w) {
  int n = w->body->u.seq.n;
  for (int i = 0; i < w->li && w->np < WSL_MAX_COPIES; i++) {
    IrStmt *s = w->body->u.seq.items[i];
    TmaTile t;
    if (s->kind != IR_S_COPY || !tma_tile(w, s, NULL, &t)) continue;
    t.pos = i;
    bool ok = true;
    for (int j = 0; j < n && ok; j++) {
      IrStmt *s2 = w->body->u.seq.items[j];
      if (j == i || s2->kind == IR_S_ALLOC) continue;
      UseCtx u = uses(s2, t.dst);
      if (!u.used) continue;
      if (j < i || u.written || u.aliased) ok = false;
      if (t.first < 0) t.first = j;
      t.last = j;
    }
    if (ok) w->pre[w->np++] = t;
  }
}

/* The mbarriers of S stages: full and empty per staged tile and stage, one per pre-loop tile. */
static int stage_bars(const Wsl *w, int S) { return 2 * S * w->nt + w->np; }

/* Shared memory after the rewrite, estimated the way merge_shared_memory will lay it out
 * (stages multiplied in; buffers dead before another's first use share its bytes when the
 * stack would not fit against `cap`; the tiles the producer fills live from the consumers'
 * start); plus a cross-warp reduction's scratch.  -1 when a buffer has no constant size. */
typedef struct Est { int64_t bytes, align, off; int first, last; } Est;
static int64_t smem_estimate(Wsl *w, int64_t cap) {
  TsCompiler *c = w->c;
  int n = w->body->u.seq.n;
  Est *e = ARENA_ARRAY(c->arena, Est, n + 1);
  int ne = 0;
  bool reduces = false;
  for (int i = 0; i < n; i++) {
    IrStmt *s = w->body->u.seq.items[i];
    if (s->kind != IR_S_ALLOC) continue;
    IrBuffer *b = s->u.alloc.buf;
    if (!is_shared(b) || b->alias_of) continue;
    int64_t numel = ir_buffer_numel(b);
    if (numel < 0) return -1;
    Est x = {numel * dtype_bytes(b->dtype), 128, 0, -1, -1};
    bool producer = false;
    for (int j = 0; j < w->nt; j++)
      if (w->tile[j].dst == b) x.bytes *= w->S, producer = true;
    for (int j = 0; j < w->np; j++)
      if (w->pre[j].dst == b) producer = true;
    if ((b->layout && b->layout->swizzle) || planned_layout(w->body, b)) x.align = 1024;
    for (int j = 0; j < n; j++) {
      IrStmt *s2 = w->body->u.seq.items[j];
      if (s2->kind == IR_S_ALLOC || !uses(s2, b).used) continue;
      if (x.first < 0) x.first = j;
      x.last = j;
    }
    if (producer) x.first = 0;
    e[ne++] = x;
  }
  for (int i = 0; i < n && !reduces; i++) {
    IrStmt *s = w->body->u.seq.items[i];
    if (s->kind == IR_S_REDUCE) reduces = true;
    if (s->kind == IR_S_FOR && s->u.loop.body && s->u.loop.body->kind == IR_S_SEQ)
      for (int j = 0; j < s->u.loop.body->u.seq.n; j++)
        if (s->u.loop.body->u.seq.items[j]->kind == IR_S_REDUCE) reduces = true;
  }
  /* the stack, then first fit in order of first use (merge_shared_memory's two layouts) */
  int64_t stack = 0;
  for (int i = 0; i < ne; i++) stack = (stack + e[i].align - 1) / e[i].align * e[i].align + e[i].bytes;
  int64_t extra = 8 * (int64_t)w->nbars + 128 + (reduces ? 2 * w->T * 4 + 128 : 0);
  if (stack + extra <= cap) return stack + extra;
  int64_t end = 0;
  bool *placed = ARENA_ARRAY(c->arena, bool, ne);
  for (int round = 0; round < ne; round++) {
    int pick = -1;
    for (int i = 0; i < ne; i++)
      if (!placed[i] && (pick < 0 || e[i].first < e[pick].first)) pick = i;
    Est *l = &e[pick];
    int64_t off = 0;
    for (bool moved = true; moved;) {
      moved = false;
      off = (off + l->align - 1) / l->align * l->align;
      for (int j = 0; j < ne; j++) {
        if (!placed[j]) continue;
        Est *p = &e[j];
        int a0 = l->first < 0 ? 0 : l->first, a1 = l->first < 0 ? n : l->last;
        int b0 = p->first < 0 ? 0 : p->first, b1 = p->first < 0 ? n : p->last;
        if (a0 <= b1 && b0 <= a1 && off < p->off + p->bytes && p->off < off + l->bytes) {
          off = p->off + p->bytes;
          moved = true;
        }
      }
    }
    l->off = off;
    placed[pick] = true;
    if (off + l->bytes > end) end = off + l->bytes;
  }
  return end + extra;
}

/* Does the kernel fit the target's shared memory after the rewrite, and is the rewrite worth
 * taking?  A producer warpgroup holds the SM's registers for one block (setmaxnreg), so where
 * the consumers still read a staged tile with their own loads (thread_read) the loop is
 * warp-specialized only when its shared memory already keeps it to one block an SM, or when
 * pass_configs ts.ws_thread_read_tiles is True.  On an H200 the attention backward with lse
 * and Delta rows went from 0.87x to 0.97x TileLang at Dqk 192 (one block an SM either way)
 * and from 1.18x to 0.95x at D 64 (three blocks an SM before). */
static bool smem_fits(Wsl *w) {
  int64_t cap = pass_smem_cap(w->c), per_sm = pass_smem_per_sm(w->c);
  if (!cap) return true;
  int64_t est = smem_estimate(w, cap);
  if (est < 0 || est > cap) return false;
  bool thread_read = false;
  for (int i = 0; i < w->nt; i++) thread_read |= w->tile[i].thread_read;
  if (!thread_read || pass_config_state(w->f, "ts.ws_thread_read_tiles") == 1 || !per_sm) return true;
  return 2 * (est + WSL_BLOCK_RESERVED_SMEM) > per_sm;
}

/* ---- ts.ws_intra_overlap (on unless pass_configs set it False; on an H200 it took the five
 * forward attention rows of bench-tilelang from 1.00-1.02x TileLang to 1.00-1.21x, FA bshd/bhsd
 * above cuDNN): FlashAttention-3's intra-warpgroup overlap.  A loop whose body is
 * [.. G1 .. G2] (G1 = QKᵀ, G2 = PV the last statement, reading a staged tile V and a P
 * computed in the loop) runs G2 of iteration k-1 while iteration k computes its softmax:
 *
 *   if the loop runs: iteration min as written, without its G2
 *   for k in min+1 ..:
 *     wait K(k); .. issue G1(k); wait V(k-1); issue G2(k-1) on V's stage of k-1
 *     wait for G1 alone (wait_group 1); release K(k)
 *     .. the statements that touch neither P nor O (the row maxima, exp, the row sums) ..
 *     wait for G2; release V(k-1)
 *     .. the rest (P written, O rescaled) ..
 *   if the loop ran: wait V(last); G2(last); release it
 *
 * The first iteration is peeled rather than guarded: with `if k > min` around the second issue
 * and the two kinds of wait, ptxas serialized every wgmma of the kernel (C7514).
 * wgmma reads P from registers and O is its accumulator, so neither may change while G2 is in
 * flight: the split point is the first statement after G1 that touches either.  Taken when the
 * loop has exactly these two GEMMs (synchronous wgmma), G2 is its last statement and reads one
 * staged tile that nothing else uses, no statement before G1 touches P or O, and no staged tile
 * is read by threads.  With one stage V(k) would load only after V(k-1) is released, in
 * iteration k, and K(k+1) after it: such a loop gets a second stage where shared memory allows
 * (plan_extra_stage), as under ts.ws_loop_extra_stage. */

static void count_gemms(IrStmt *s, void *ctx) { *(int *)ctx += s->kind == IR_S_GEMM; }

static bool sync_wgmma(const IrStmt *s) {
  return s->kind == IR_S_GEMM && s->u.gemm.plan && s->u.gemm.plan->path == GEMM_WGMMA && s->u.gemm.wg_wait == 0;
}

static bool touches(IrStmt *s, const IrBuffer *a, const IrBuffer *b) {
  return uses(s, ir_buffer_root(a)).used || uses(s, ir_buffer_root(b)).used;
}

static bool plan_overlap(Wsl *w, WslOverlap *ov) {
  if (!pass_config_state(w->f, "ts.ws_intra_overlap")) return false;
  IrStmt *lb = w->loop->u.loop.body;
  int n = lb->u.seq.n, all = 0, top = 0;
  IrVisitor v = {count_gemms, NULL, &all};
  ir_visit(lb, &v);
  for (int j = 0; j < n; j++)
    if (lb->u.seq.items[j]->kind == IR_S_GEMM) *(top++ ? &ov->j2 : &ov->j1) = j;
  if (all != 2 || top != 2 || ov->j2 != n - 1) return false;
  IrStmt *g1 = lb->u.seq.items[ov->j1], *g2 = lb->u.seq.items[ov->j2];
  const IrBuffer *p = g2->u.gemm.a.buf, *o = g2->u.gemm.c.buf, *s1 = ir_buffer_root(g1->u.gemm.c.buf);
  if (!sync_wgmma(g1) || !sync_wgmma(g2) || s1 == ir_buffer_root(p) || s1 == ir_buffer_root(o)) return false;
  for (int j = 0; j < ov->j1; j++)
    if (touches(lb->u.seq.items[j], p, o)) return false;
  ov->js = ov->j2;
  for (int j = ov->j1 + 1; j < ov->j2 && ov->js == ov->j2; j++)
    if (touches(lb->u.seq.items[j], p, o)) ov->js = j;
  ov->v = -1;
  for (int i = 0; i < w->nt; i++) {
    const TmaTile *t = &w->tile[i];
    if (t->thread_read || t->dst == ir_buffer_root(p)) return false;
    if (t->first != ov->j2 && t->last != ov->j2) continue;
    if (t->first != ov->j2 || t->last != ov->j2 || t->dst != ir_buffer_root(g2->u.gemm.b.buf) || ov->v >= 0) return false;
    ov->v = i;
  }
  return ov->v >= 0;
}


/* ---- ts.ws_acc_overlap (opt-in, pass_configs True; on an H200 deepgemm's row ran 4-9% slower
 * with it in three same-run A/Bs, the iteration's length being the per-row scale loads' latency
 * rather than the tensor cores): a loop whose one GEMM writes an
 * accumulator that the statements after it read and then clear (DeepGEMM's promotion of each
 * K block: C = A_k B_kᵀ; acc += C * scale(k); C = 0) issues the GEMM of iteration k+1 before
 * those statements of iteration k run, after copying k's result into a second accumulator:
 *
 *   if the loop runs: wait A, B (min); issue G(min), clearing
 *   for k in min .. last-1:
 *     .. the statements before G (k) ..
 *     wait for G(k); release A, B (k); done = acc
 *     wait A, B (k+1); issue G(k+1), clearing
 *     .. the statements after G (k), reading `done` for acc, without the clear ..
 *   if the loop ran: the same for k = last, without the issue
 *
 * so the promotion's loads and FMAs of k run while the tensor cores compute k+1.  Taken when
 * the body holds one GEMM, a synchronous SS wgmma at its top level whose A and B are staged
 * tiles read by nothing else; nothing before it touches acc; acc is zero when each iteration's
 * GEMM starts (the GEMM clears it, or the last statement touching it in the body and the last
 * one before the loop are whole zero fills); the statements after it read acc only by loads;
 * nothing after the loop uses acc; and a second accumulator fits the consumers' registers.
 * The last iteration is peeled: a guarded issue in the loop would serialize every wgmma (see
 * ts.ws_intra_overlap). */
static bool zero_fill(const IrStmt *s, const IrBuffer *b) {
  if (s->kind != IR_S_FILL || s->u.fill.dst.buf != b || s->u.fill.dst.ndim != b->ndim) return false;
  if (!pass_is_zero(s->u.fill.value)) return false;
  for (int d = 0; d < b->ndim; d++) {
    int64_t m, e, n;
    if (!ir_is_const_int(s->u.fill.dst.min[d], &m) || m || !ir_is_const_int(s->u.fill.dst.extent[d], &e) ||
        !ir_is_const_int(b->shape[d], &n) || e != n)
      return false;
  }
  return true;
}

/* The last statement of items[from, to) touching b, or -1. */
static int last_touch(IrStmt **items, int from, int to, const IrBuffer *b) {
  for (int j = to - 1; j >= from; j--)
    if (uses(items[j], b).used) return j;
  return -1;
}

/* The producer warpgroup's registers (setmaxnreg.dec) and the consumers' share of the rest
 * (setmaxnreg.inc, at most 240). */
static int64_t producer_regs(const Wsl *w) { return w->T >= 256 ? 24 : 40; }
static int64_t consumer_regs(const Wsl *w) {
  return pass_ws_consumer_regs(w->T, WSL_PRODUCER_THREADS, producer_regs(w), w->blocks);
}

/* Registers per consumer thread of the kernel's fragments (constant shapes), or -1. */
static int64_t fragment_regs(const IrStmt *body, int64_t T) {
  int64_t n = 0;
  for (int j = 0; j < body->u.seq.n; j++) {
    const IrStmt *s = body->u.seq.items[j];
    if (s->kind != IR_S_ALLOC || s->u.alloc.buf->scope != IR_SCOPE_FRAGMENT || s->u.alloc.buf->alias_of) continue; /* a view: its root's */
    int64_t e = ir_buffer_numel(s->u.alloc.buf);
    if (e < 0) return -1;
    n += (e * dtype_bytes(s->u.alloc.buf->dtype) + 3) / 4 / T;
  }
  return n;
}

static bool acc_fresh(Wsl *w, WslAccOverlap *ao, IrStmt *g) {
  IrStmt **items = w->loop->u.loop.body->u.seq.items;
  int n = w->loop->u.loop.body->u.seq.n;
  ao->jclear = -1;
  if (g->u.gemm.clear_accum) return true;
  int jc = last_touch(items, ao->jg + 1, n, ao->acc), jb = last_touch(w->body->u.seq.items, 0, w->li, ao->acc);
  if (jc < 0 || jb < 0 || !zero_fill(items[jc], ao->acc) || !zero_fill(w->body->u.seq.items[jb], ao->acc)) return false;
  ao->jclear = jc;
  return true;
}

static bool plan_acc_overlap(Wsl *w, WslAccOverlap *ao) {
  TsCompiler *c = w->c;
  if (w->overlap || pass_config_state(w->f, "ts.ws_acc_overlap") != 1) return false;
  IrStmt *lb = w->loop->u.loop.body;
  int n = lb->u.seq.n, all = 0;
  IrVisitor v = {count_gemms, NULL, &all};
  ir_visit(lb, &v);
  ao->jg = -1;
  for (int j = 0; j < n; j++)
    if (lb->u.seq.items[j]->kind == IR_S_GEMM) ao->jg = j;
  if (all != 1 || ao->jg < 0) return false;
  IrStmt *g = lb->u.seq.items[ao->jg];
  ao->acc = g->u.gemm.c.buf;
  if (!sync_wgmma(g) || g->u.gemm.plan->a_in_regs || ao->acc->alias_of || ao->acc->scope != IR_SCOPE_FRAGMENT) return false;
  /* A and B: staged tiles that the GEMM alone reads */
  int staged = 0;
  for (int i = 0; i < w->nt; i++) {
    const TmaTile *t = &w->tile[i];
    if (t->thread_read || t->first != ao->jg || t->last != ao->jg || t->pos > ao->jg) return false;
    staged += t->dst == g->u.gemm.a.buf || t->dst == g->u.gemm.b.buf;
  }
  if (staged != 2 || g->u.gemm.a.buf == g->u.gemm.b.buf) return false;
  for (int j = 0; j < ao->jg; j++)
    if (uses(lb->u.seq.items[j], ao->acc).used) return false;
  for (int j = w->li + 1; j < w->body->u.seq.n; j++)
    if (uses(w->body->u.seq.items[j], ao->acc).used) return false;
  if (!acc_fresh(w, ao, g)) return false;
  int64_t nacc = ir_buffer_numel(ao->acc), regs = fragment_regs(w->body, w->T);
  if (nacc < 0 || regs < 0 || regs + nacc / w->T + 40 > consumer_regs(w)) return false;
  ao->done = ir_buffer(c, arena_printf(c->arena, "%s_done", ao->acc->name), ao->acc->dtype, IR_SCOPE_FRAGMENT,
                       ao->acc->ndim, ao->acc->shape, w->loc);
  ao->done->layout_like = ao->acc;
  ao->post = ARENA_ARRAY(c->arena, IrStmt *, n);
  bool reads = false;
  for (int j = ao->jg + 1; j < n; j++) {
    ao->post[j] = NULL;
    if (j == ao->jclear) continue;
    IrStmt *s = lb->u.seq.items[j];
    reads |= uses(s, ao->acc).used;
    ao->post[j] = ir_subst_loads_stmt(c, s, ao->acc, ao->done);
    if (uses(ao->post[j], ao->acc).used) return false; /* acc read by a tile statement, or written */
  }
  return reads;
}

/* Opt-in, not yet measured on a GPU (pass_configs ts.ws_loop_extra_stage): one stage more
 * than written where shared memory allows it with WSL_DEEP_SLACK to spare.  The kernel runs
 * one block an SM, so leftover bytes cost nothing, and with one stage the producer cannot
 * load tile k+1 before the consumers release tile k (FlashAttention's bshd example is
 * written with num_stages=1). */
static void plan_extra_stage(Wsl *w) {
  int64_t cap = pass_smem_cap(w->c);
  /* the overlap releases V(k-1) only inside iteration k: with one stage, the producer could
   * load neither V(k) nor K(k+1) before that */
  bool wanted = pass_config_on(w->f, "ts.ws_loop_extra_stage") || (w->overlap && w->S == 1);
  if (!cap || !wanted || stage_bars(w, w->S + 1) > WSL_MAX_BARS) return;
  w->nbars = stage_bars(w, ++w->S);
  int64_t est = smem_estimate(w, cap);
  if (est >= 0 && est + WSL_DEEP_SLACK <= cap) return;
  w->nbars = stage_bars(w, --w->S);
}

/* Blocks an SM (pass_configs ts.ws_two_blocks): a producer warpgroup keeps its SM to one
 * block, which a kernel of small tiles pays for in occupancy.  Where shared memory holds B
 * blocks (up to 4) and the consumers' fragments leave room in their share of a block's
 * registers (64 a thread besides), the registers are split for B blocks: __launch_bounds__
 * (threads, B), the producer's share released to the consumers of its own block. */
static void plan_blocks(Wsl *w) {
  w->blocks = 1;
  int64_t cap = pass_smem_cap(w->c), per_sm = pass_smem_per_sm(w->c);
  /* ts.ws_acc_overlap sized its second accumulator for one block's registers */
  if (pass_config_state(w->f, "ts.ws_two_blocks") == 0 || w->acc_overlap || !cap || !per_sm) return;
  int64_t est = smem_estimate(w, cap), frag = w->frag;
  if (est < 0 || frag < 0) return;
  for (int b = 4; b > 1 && w->blocks == 1; b--) {
    w->blocks = b;
    if (b * (est + WSL_BLOCK_RESERVED_SMEM) > per_sm || b * (w->T + WSL_PRODUCER_THREADS) > 2048 ||
        frag + 64 > consumer_regs(w))
      w->blocks = 1;
  }
}

/* The epilogue T.copy(fragment, S); T.copy(S, G[box]) as TMA stores of S in a swizzled
 * layout (warp_specialize.c's form B): thread 0 issues them once the consumers have written
 * S, instead of every consumer thread reading S back for 16-byte global stores.  Only when
 * S is used by these two statements alone. */
static void plan_epilogue(Wsl *w) {
  WsStore *ep = &w->ep;
  if (!ws_find_epilogue(w->c, w->body, w->li, ep) || ep->idx < 0 || ep->idx_frag < 0) {
    ep->idx = ep->idx_frag = -1;
    return;
  }
  for (int j = 0; j < w->body->u.seq.n; j++) {
    IrStmt *s = w->body->u.seq.items[j];
    if (j == ep->idx || j == ep->idx_frag || s->kind == IR_S_ALLOC) continue;
    UseCtx u = uses(s, ep->smem);
    if (u.used || u.aliased) {
      ep->idx = ep->idx_frag = -1;
      return;
    }
  }
}

/* Anything that synchronises the whole block by itself (__syncthreads, device-library
 * operations that wait or run block-wide collectives) cannot run in the consumers alone. */
static void block_sync_expr(IrExpr *e, void *ctx) {
  if (e->kind != IR_CALL) return;
  if (ir_call_has_flag(e, IRI_BLOCK_SYNC) || e->u.call.op == IRI_SYNCWARP) *(bool *)ctx = true;
  if (e->u.call.op == IRI_DEVICE &&
      (ir_device_info[e->u.call.dop].flags & (IRD_SYNC | IRD_DIST | IRD_SHMEM | IRD_GRID_SYNC | IRD_WGMMA)))
    *(bool *)ctx = true;
}
static void block_sync_stmt(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_UNSUPPORTED) *(bool *)ctx = true;
}

static bool plan(Wsl *w) {
  IrKernel *k = w->k;
  if (k->producer_threads || k->manual_ws || k->threads[1] > 1 || k->threads[2] > 1) return false;
  w->T = k->threads[0];
  if (w->T % 128 || w->T < 128 || w->T > 512) return false;
  IrStmt *body = w->body = k->body;
  if (!body || body->kind != IR_S_SEQ) return false;
  PipeCount pc = {0};
  IrVisitor cv = {count_pipelined, NULL, &pc};
  ir_visit(body, &cv);
  if (pc.n != 1) return false;
  bool syncs = false;
  IrVisitor sv = {block_sync_stmt, block_sync_expr, &syncs};
  ir_visit(body, &sv);
  if (syncs) return false;
  w->li = -1;
  for (int i = 0; i < body->u.seq.n; i++) {
    IrStmt *s = body->u.seq.items[i];
    if (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PIPELINED) w->li = i;
  }
  if (w->li < 0) return false; /* the loop is nested in something else */
  IrStmt *loop = w->loop = body->u.seq.items[w->li];
  w->S = loop->u.loop.num_stages;
  if (w->S < 1 || loop->u.loop.norder || !loop->u.loop.var) return false;
  /* consumers that leave the loop (or the kernel) early would leave the producer waiting */
  if (pass_leaves_loop(loop->u.loop.body) || pass_has_return(body, NULL)) return false;
  w->kv = loop->u.loop.var;
  ws_prelude_vars(w->c, body, &w->pvars);
  if (!ws_scalar_ok(loop->u.loop.min, body, &w->pvars, NULL, false, 0) ||
      !ws_scalar_ok(loop->u.loop.extent, body, &w->pvars, NULL, false, 0))
    return false;
  /* a guarded body: the pipeline runs over the iterations let through (ws_guard.c) */
  int guarded = ws_guard_split(w->c, w->f, body, w->li, &w->pvars, &w->guard);
  if (guarded < 0) return false;
  w->guarded = guarded;
  loop = w->loop = w->guard.loop;
  /* every GEMM of the loop is a synchronous wgmma: the producer targets sm_90a kernels */
  IrStmt *lb = loop->u.loop.body;
  bool any_wgmma = false;
  if (lb && lb->kind == IR_S_SEQ)
    for (int i = 0; i < lb->u.seq.n; i++) {
      IrStmt *s = lb->u.seq.items[i];
      if (s->kind == IR_S_GEMM && s->u.gemm.plan && s->u.gemm.plan->path == GEMM_WGMMA && s->u.gemm.wg_wait == 0)
        any_wgmma = true;
    }
  if (!any_wgmma || !plan_staged(w)) return false;
  /* opt-in (pass_configs ts.ws_wide_consumers; not yet run on a GPU): four consumer
   * warpgroups (an indexer's 512 threads) share 112 registers a thread; their fragments must
   * leave 40 of them (TileLang runs the indexer's 640 threads without setmaxnreg: 96 a thread) */
  int64_t frag = w->frag = fragment_regs(w->body, w->T);
  if (w->T > 384 && (!pass_config_on(w->f, "ts.ws_wide_consumers") || frag < 0 || frag + 40 > consumer_regs(w)))
    return false;
  plan_pre(w);
  w->nbars = stage_bars(w, w->S);
  if (w->nbars > WSL_MAX_BARS) return false;
  if (!smem_fits(w)) return false;
  /* both peel iterations by k, which a guard would have to count instead */
  w->overlap = !w->guarded && plan_overlap(w, &w->ov);
  w->acc_overlap = !w->guarded && plan_acc_overlap(w, &w->ao);
  plan_extra_stage(w);
  plan_blocks(w);
  plan_epilogue(w);
  return true;
}

/* ---- building ----------------------------------------------------------------------------- */
static IrExpr *bar(Wsl *w, IrExpr *i) { return pass_addr(w->c, w->bars, &i, 1); }
static IrExpr *bar_at(Wsl *w, int base, IrExpr *stage) { return bar(w, base ? bin(w->c, IR_ADD, stage, i32(w->c, base)) : stage); }

/* The TMA map of a tile's source: one box of [rows along rdim] x [one column atom]. */
static void make_map(Wsl *w, TmaTile *t) {
  TsCompiler *c = w->c;
  IrBuffer *g = t->copy->u.copy.src.buf;
  IrTmaMap *m = ARENA_NEW(c->arena, IrTmaMap);
  memset(m, 0, sizeof *m);
  m->var = ir_var(c, arena_printf(c->arena, "%s_tma%d", g->name, w->maps->len), TS_DTYPE_HANDLE, IR_VAR_PARAM, w->loc);
  m->param_index = g->param_index;
  m->rank = g->ndim;
  for (int d = 0; d < 5; d++) m->box[d] = 1;
  m->box[0] = t->atom;
  m->box[g->ndim - 1 - t->rdim] = t->rows;
  m->swizzle = t->layout ? t->layout->swizzle : 0; /* a flat tile: no swizzle */
  t->map = m;
  vec_push(c->arena, w->maps, m);
}

/* The boxes of tile t into `dst_base` (stage index or NULL), counted on barrier `b`, with
 * the loop variable (if any) replaced by `kref`. */
static void push_boxes(Wsl *w, const TmaTile *t, IrExpr *stage, IrExpr *b, IrExpr *kref, PtrVec *out) {
  TsCompiler *c = w->c;
  int R = t->map->rank;
  for (int64_t a = 0; a < t->cols / t->atom; a++) {
    IrExpr *args[8];
    int na = 0;
    args[na++] = ir_varref(c, t->map->var, w->loc);
    if (t->flat)
      args[na++] = stage ? pass_addr(c, t->staged, (IrExpr *[]){stage, i32(c, 0)}, 2) : pass_addr(c, t->dst, (IrExpr *[]){i32(c, 0)}, 1);
    else
      args[na++] = stage ? pass_addr(c, t->staged, (IrExpr *[]){stage, i32(c, 0), i32(c, a * t->atom)}, 3)
                         : pass_addr(c, t->dst, (IrExpr *[]){i32(c, 0), i32(c, a * t->atom)}, 2);
    args[na++] = b;
    for (int d = R - 1; d >= 0; d--) {
      IrExpr *co = kref ? ir_subst(c, t->src_min[d], &w->kv, &kref, 1) : t->src_min[d];
      if (d == R - 1 && a) co = bin(c, IR_ADD, co, i32(c, a * t->atom));
      args[na++] = ir_cast(c, TS_DTYPE_INT32, co, w->loc);
    }
    vec_push(c->arena, out, pass_dev(c, IRD_TMA_LOAD, R, 0, args, na, w->loc));
  }
}

/* it = k - min (a guarded loop: the count of iterations let through so far, w->taken);
 * stage = it % S; phase = (it / S) % 2, as lets pushed on `out`. */
static void stage_lets(Wsl *w, IrExpr *kref, IrExpr *m0, IrVar **stage, IrVar **phase, PtrVec *out) {
  TsCompiler *c = w->c;
  IrExpr *it = w->guarded ? ws_guard_count(c, w->taken, w->loc) : bin(c, IR_SUB, kref, m0);
  *stage = ir_var(c, "stage", TS_DTYPE_INT32, IR_VAR_LET, w->loc);
  *phase = ir_var(c, "phase", TS_DTYPE_INT32, IR_VAR_LET, w->loc);
  vec_push(c->arena, out, ir_let(c, *stage, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_FLOORMOD, it, i32(c, w->S)), w->loc), w->loc));
  vec_push(c->arena, out, ir_let(c, *phase, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_FLOORMOD, bin(c, IR_FLOORDIV, it, i32(c, w->S)), i32(c, 2)), w->loc), w->loc));
}

/* The producer warpgroup: few registers; one thread prefetches the descriptors, loads the
 * pre-loop tiles, then per iteration each staged tile once its stage is free. */
static IrStmt *producer(Wsl *w) {
  TsCompiler *c = w->c;
  SrcLoc loc = w->loc;
  PtrVec p = {0};
  ws_prelude_stmts(c, w->body, &p); /* the variables its boxes and bounds read */
  for (int i = 0; i < w->np; i++)
    vec_push(c->arena, &p, pass_dev(c, IRD_TMA_PREFETCH_DESC, 0, 0, (IrExpr *[]){ir_varref(c, w->pre[i].map->var, loc)}, 1, loc));
  for (int i = 0; i < w->nt; i++)
    vec_push(c->arena, &p, pass_dev(c, IRD_TMA_PREFETCH_DESC, 0, 0, (IrExpr *[]){ir_varref(c, w->tile[i].map->var, loc)}, 1, loc));
  for (int i = 0; i < w->np; i++) {
    IrExpr *b = bar(w, i32(c, w->pre[i].bar));
    vec_push(c->arena, &p, pass_dev(c, IRD_MBAR_EXPECT_TX, 0, 0, (IrExpr *[]){b, i32(c, w->pre[i].bytes)}, 2, loc));
    push_boxes(w, &w->pre[i], NULL, bar(w, i32(c, w->pre[i].bar)), NULL, &p);
  }
  IrVar *pk = ir_var(c, w->kv->name, w->kv->dtype, IR_VAR_LOOP, loc);
  IrExpr *pkr = ir_varref(c, pk, loc);
  IrExpr *m0 = pass_inline_lets(c, w->loop->u.loop.min), *ext = pass_inline_lets(c, w->loop->u.loop.extent);
  PtrVec lb = {0};
  IrVar *st, *ph;
  stage_lets(w, pkr, m0, &st, &ph, &lb);
  IrExpr *str = ir_varref(c, st, loc), *phr = ir_varref(c, ph, loc);
  for (int i = 0; i < w->nt; i++) {
    const TmaTile *t = &w->tile[i];
    if (t->lead != i) continue;
    int64_t bytes = 0;
    for (int j = i; j < w->nt; j++) bytes += w->tile[j].lead == i ? w->tile[j].bytes : 0;
    vec_push(c->arena, &lb, pass_dev(c, IRD_MBAR_WAIT, 0, 0, (IrExpr *[]){bar_at(w, t->bar + w->S, str), bin(c, IR_BITXOR, phr, i32(c, 1))}, 2, loc));
    vec_push(c->arena, &lb, pass_dev(c, IRD_MBAR_EXPECT_TX, 0, 0, (IrExpr *[]){bar_at(w, t->bar, str), i32(c, bytes)}, 2, loc));
    for (int j = i; j < w->nt; j++)
      if (w->tile[j].lead == i) push_boxes(w, &w->tile[j], str, bar_at(w, t->bar, str), pkr, &lb);
  }
  IrStmt *it = w->guarded ? ws_guarded_iteration(c, ir_subst(c, w->guard.pcond, &w->kv, &pkr, 1), NULL, 0, w->taken, &lb, loc)
                          : ir_seq_vec(c, &lb, loc);
  vec_push(c->arena, &p, ir_for(c, pk, m0, ext, IR_FOR_SERIAL, it, loc));
  int64_t prod_regs = producer_regs(w);
  IrExpr *elected = bin(c, IR_EQ, ir_varref(c, w->tx, loc), i32(c, w->T));
  return ir_seq(c, (IrStmt *[]){pass_dev(c, IRD_SETMAXNREG_DEC, prod_regs, 0, NULL, 0, loc), ir_if(c, elected, ir_seq_vec(c, &p, loc), NULL, loc)},
                2, loc);
}

/* A copy of a statement of the loop with each staged tile read from stage `stage`. */
static IrRegion staged_region(TsCompiler *c, const Wsl *w, const IrRegion *r, IrExpr *stage) {
  for (int i = 0; i < w->nt; i++)
    if (w->tile[i].dst == r->buf) return ws_stage_region(c, r, w->tile[i].staged, stage);
  return *r;
}
static IrStmt *on_stage(Wsl *w, IrStmt *s, IrExpr *stage) {
  /* flat tiles that threads read: every load of them at this stage */
  for (int i = 0; i < w->nt; i++)
    if (w->tile[i].thread_read && uses(s, w->tile[i].dst).used) s = pass_restage(w->c, s, w->tile[i].dst, w->tile[i].staged, stage);
  if (s->kind != IR_S_GEMM) return s; /* other staged tiles are read by GEMMs alone (plan_staged) */
  IrStmt *g = ir_stmt(w->c, IR_S_GEMM, s->loc);
  *g = *s;
  g->u.gemm.a = staged_region(w->c, w, &s->u.gemm.a, stage);
  g->u.gemm.b = staged_region(w->c, w, &s->u.gemm.b, stage);
  return g;
}

/* A copy of GEMM statement s on stage `stage` as its issue (-1) or wait (-2, -3) half. */
static IrStmt *gemm_part(Wsl *w, IrStmt *s, IrExpr *stage, int wg_wait) {
  return pass_gemm_half(w->c, on_stage(w, s, stage), wg_wait);
}

/* G2 on stage `st` (parity `ph`): wait for V, then the statement (`wg_wait` 0) or its issue. */
static IrStmt *overlap_g2(Wsl *w, const WslOverlap *ov, IrExpr *st, IrExpr *ph, int wg_wait) {
  TsCompiler *c = w->c;
  IrStmt *g2 = w->loop->u.loop.body->u.seq.items[ov->j2];
  IrStmt *wait = pass_dev(c, IRD_MBAR_WAIT, 0, 0, (IrExpr *[]){bar_at(w, w->tile[ov->v].bar, st), ph}, 2, w->loc);
  return ir_seq(c, (IrStmt *[]){wait, gemm_part(w, g2, st, wg_wait)}, 2, w->loc);
}

static IrStmt *release(Wsl *w, const TmaTile *t, IrExpr *st) {
  TsCompiler *c = w->c;
  IrExpr *lane0 = bin(c, IR_EQ, bin(c, IR_FLOORMOD, ir_varref(c, w->tx, w->loc), i32(c, 32)), i32(c, 0));
  return ir_if(c, lane0, pass_dev(c, IRD_MBAR_ARRIVE, 0, 0, (IrExpr *[]){bar_at(w, t->bar + w->S, st)}, 1, w->loc), NULL, w->loc);
}

/* After the loop: the last iteration's G2, when the loop ran. */
static IrStmt *overlap_tail(Wsl *w, const WslOverlap *ov) {
  TsCompiler *c = w->c;
  IrStmt *loop = w->loop;
  PtrVec out = {0};
  IrVar *st, *ph;
  IrExpr *last = bin(c, IR_SUB, bin(c, IR_ADD, loop->u.loop.min, loop->u.loop.extent), i32(c, 1));
  stage_lets(w, last, loop->u.loop.min, &st, &ph, &out);
  IrExpr *str = ir_varref(c, st, w->loc);
  IrStmt *run = ir_seq(c, (IrStmt *[]){overlap_g2(w, ov, str, ir_varref(c, ph, w->loc), 0), release(w, &w->tile[ov->v], str)}, 2, w->loc);
  vec_push(c->arena, &out, ir_if(c, bin(c, IR_GT, loop->u.loop.extent, i32(c, 0)), run, NULL, w->loc));
  return ir_seq_vec(c, &out, w->loc);
}

/* One iteration of the consumers' loop for loop value `kref`, its statements pushed on `out`:
 * the original body without the staged copies, a wait before each tile's first use, the
 * release after its last (lane 0 of each warp: the wgmma of the statement has completed in the
 * warp).  Under ws_intra_overlap, OV_FIRST is the peeled first iteration (G2 deferred) and
 * OV_STEADY the others (G2 of the previous iteration overlapped). */
enum { OV_NONE, OV_FIRST, OV_STEADY };
static void iteration(Wsl *w, const WslOverlap *ov, int mode, IrExpr *kref, PtrVec *out) {
  TsCompiler *c = w->c;
  SrcLoc loc = w->loc;
  IrStmt *lb = w->loop->u.loop.body;
  IrVar *st, *ph, *pst = NULL, *pph = NULL;
  stage_lets(w, kref, w->loop->u.loop.min, &st, &ph, out);
  IrExpr *str = ir_varref(c, st, loc), *phr = ir_varref(c, ph, loc), *ps = NULL;
  if (mode == OV_STEADY) {
    stage_lets(w, bin(c, IR_SUB, kref, i32(c, 1)), w->loop->u.loop.min, &pst, &pph, out);
    ps = ir_varref(c, pst, loc);
  }
  for (int j = 0; j < lb->u.seq.n; j++) {
    IrStmt *s = lb->u.seq.items[j];
    if (mode == OV_STEADY && j == ov->js) { /* G2 of the previous iteration done: P, O and V(k-1) free */
      vec_push(c->arena, out, gemm_part(w, lb->u.seq.items[ov->j2], ps, -2));
      vec_push(c->arena, out, release(w, &w->tile[ov->v], ps));
    }
    if (mode != OV_NONE && j == ov->j2) continue; /* it runs one iteration later */
    bool staged_copy = false;
    for (int i = 0; i < w->nt; i++) {
      const TmaTile *t = &w->tile[i];
      bool wait_here = t->first == j || (t->first < 0 && t->pos == j);
      if (t->pos == j) staged_copy = true;
      if (wait_here && t->lead == i)
        vec_push(c->arena, out, pass_dev(c, IRD_MBAR_WAIT, 0, 0, (IrExpr *[]){bar_at(w, t->bar, str), phr}, 2, loc));
    }
    if (mode == OV_STEADY && j == ov->j1) { /* issue G1(k), then G2(k-1); wait for G1 alone */
      vec_push(c->arena, out, gemm_part(w, s, str, -1));
      vec_push(c->arena, out, overlap_g2(w, ov, ps, ir_varref(c, pph, loc), -1));
      vec_push(c->arena, out, gemm_part(w, s, str, -3));
    } else if (!staged_copy) {
      vec_push(c->arena, out, on_stage(w, s, str));
    }
    for (int i = 0; i < w->nt; i++) {
      const TmaTile *t = &w->tile[i];
      if (!(t->last == j || (t->last < 0 && t->pos == j)) || t->lead != i) continue;
      /* threads read it: every lane of the warp is past its reads before lane 0 releases it */
      if (t->thread_read) vec_push(c->arena, out, ir_eval(c, ir_call(c, IRI_SYNCWARP, TS_DTYPE_VOID, NULL, 0, loc), loc));
      vec_push(c->arena, out, release(w, t, str));
    }
  }
}

/* Is statement j of the loop body one of the staged copies (the producer issues them)? */
static bool staged_copy_at(const Wsl *w, int j) {
  for (int i = 0; i < w->nt; i++)
    if (w->tile[i].pos == j) return true;
  return false;
}

/* ---- ts.ws_acc_overlap's consumer loop (plan_acc_overlap) -------------------------------
 * The wait for each GEMM stays in the iteration that issued it: with the issue in one
 * iteration and the wait in the next, ptxas serialized every wgmma (C7514). */
/* The GEMM of iteration kref: its tiles waited for, issued clearing the accumulator, then,
 * after the statements `between`, waited for and its tiles released. */
static void acc_gemm(Wsl *w, IrExpr *kref, PtrVec *between, PtrVec *out) {
  TsCompiler *c = w->c;
  IrVar *st, *ph;
  stage_lets(w, kref, w->loop->u.loop.min, &st, &ph, out);
  IrExpr *str = ir_varref(c, st, w->loc);
  for (int i = 0; i < w->nt; i++)
    if (w->tile[i].lead == i)
      vec_push(c->arena, out, pass_dev(c, IRD_MBAR_WAIT, 0, 0, (IrExpr *[]){bar_at(w, w->tile[i].bar, str), ir_varref(c, ph, w->loc)}, 2, w->loc));
  IrStmt *g = w->loop->u.loop.body->u.seq.items[w->ao.jg];
  IrStmt *issue = gemm_part(w, g, str, -1);
  issue->u.gemm.clear_accum = true;
  vec_push(c->arena, out, issue);
  for (int i = 0; between && i < between->len; i++) vec_push(c->arena, out, between->items[i]);
  vec_push(c->arena, out, gemm_part(w, g, str, -2));
  for (int i = 0; i < w->nt; i++)
    if (w->tile[i].lead == i) vec_push(c->arena, out, release(w, &w->tile[i], str));
}

/* Iteration kref, its GEMM done: the statements before the GEMM, its result copied to
 * `done`, the next iteration's GEMM (when `next`) around the statements after it. */
static void acc_iteration(Wsl *w, IrExpr *kref, bool next, PtrVec *out) {
  TsCompiler *c = w->c;
  const WslAccOverlap *ao = &w->ao;
  IrStmt *lb = w->loop->u.loop.body;
  for (int j = 0; j < ao->jg; j++)
    if (!staged_copy_at(w, j)) vec_push(c->arena, out, lb->u.seq.items[j]);
  IrStmt *cp = ir_stmt(c, IR_S_COPY, w->loc);
  cp->u.copy.src = ir_region_full(c, ao->acc, w->loc);
  cp->u.copy.dst = ir_region_full(c, ao->done, w->loc);
  vec_push(c->arena, out, cp);
  PtrVec post = {0};
  for (int j = ao->jg + 1; j < lb->u.seq.n; j++)
    if (ao->post[j]) vec_push(c->arena, &post, ao->post[j]);
  if (next) acc_gemm(w, bin(c, IR_ADD, kref, i32(c, 1)), &post, out);
  else
    for (int i = 0; i < post.len; i++) vec_push(c->arena, out, post.items[i]);
}

/* *head: the first GEMM (when the loop runs); the loop over all iterations but the last;
 * *tail: the last one (when the loop runs). */
static IrStmt *acc_loop(Wsl *w, IrStmt **head, IrStmt **tail) {
  TsCompiler *c = w->c;
  SrcLoc loc = w->loc;
  IrStmt *loop = w->loop;
  IrExpr *m0 = loop->u.loop.min, *ext = loop->u.loop.extent, *runs = bin(c, IR_GT, ext, i32(c, 0));
  PtrVec first = {0}, steady = {0}, last = {0};
  acc_gemm(w, m0, NULL, &first);
  *head = ir_if(c, runs, ir_seq_vec(c, &first, loc), NULL, loc);
  acc_iteration(w, ir_varref(c, w->kv, loc), true, &steady);
  IrStmt *r = ir_stmt(c, IR_S_FOR, loop->loc);
  *r = *loop;
  r->u.loop.kind = IR_FOR_SERIAL;
  r->u.loop.num_stages = 0;
  r->u.loop.body = ir_seq_vec(c, &steady, loc);
  r->u.loop.extent = bin(c, IR_SUB, ext, i32(c, 1));
  acc_iteration(w, ir_varref(c, w->kv, loc), false, &last);
  IrExpr *lastk = bin(c, IR_SUB, bin(c, IR_ADD, m0, ext), i32(c, 1));
  *tail = ir_if(c, runs, ir_subst_stmt(c, ir_seq_vec(c, &last, loc), &w->kv, &lastk, 1), NULL, loc);
  return r;
}

/* The consumers' loop.  Under ws_intra_overlap: *head, the first iteration peeled (when the
 * loop runs), the loop over the others, and *tail, the last G2; otherwise both NULL. */
static IrStmt *consumer_loop(Wsl *w, IrStmt **head, IrStmt **tail) {
  TsCompiler *c = w->c;
  SrcLoc loc = w->loc;
  IrStmt *loop = w->loop;
  if (w->acc_overlap) return acc_loop(w, head, tail);
  IrExpr *kref = ir_varref(c, w->kv, loc);
  WslOverlap ov = w->ov;
  bool overlap = w->overlap;
  PtrVec out = {0};
  iteration(w, &ov, overlap ? OV_STEADY : OV_NONE, kref, &out);
  IrStmt *r = ir_stmt(c, IR_S_FOR, loop->loc);
  *r = *loop;
  r->u.loop.kind = IR_FOR_SERIAL;
  r->u.loop.num_stages = 0;
  r->u.loop.body = w->guarded ? ws_guarded_iteration(c, w->guard.cond, w->guard.lets, w->guard.nlets, w->taken, &out, loc)
                              : ir_seq_vec(c, &out, loc);
  *head = *tail = NULL;
  if (!overlap) return r;
  PtrVec first = {0};
  iteration(w, &ov, OV_FIRST, loop->u.loop.min, &first);
  IrExpr *runs = bin(c, IR_GT, loop->u.loop.extent, i32(c, 0));
  IrVar *from[1] = {w->kv};
  IrExpr *to[1] = {loop->u.loop.min};
  *head = ir_if(c, runs, ir_subst_stmt(c, ir_seq_vec(c, &first, loc), from, to, 1), NULL, loc);
  *tail = overlap_tail(w, &ov);
  r->u.loop.min = bin(c, IR_ADD, loop->u.loop.min, i32(c, 1));
  r->u.loop.extent = bin(c, IR_SUB, loop->u.loop.extent, i32(c, 1));
  return r;
}

/* The consumer warpgroups: more registers; the kernel body without allocations and
 * pre-loop TMA copies, a wait before each pre-loop tile's first use, the loop rewritten. */
static IrStmt *consumer(Wsl *w) {
  TsCompiler *c = w->c;
  SrcLoc loc = w->loc;
  PtrVec out = {0};
  vec_push(c->arena, &out, pass_dev(c, IRD_SETMAXNREG_INC, consumer_regs(w), 0, NULL, 0, loc));
  IrStmt *body = w->body;
  for (int j = 0; j < body->u.seq.n; j++) {
    IrStmt *s = body->u.seq.items[j];
    if (s->kind == IR_S_ALLOC) continue;
    bool pre_copy = false;
    for (int i = 0; i < w->np; i++) {
      if (w->pre[i].pos == j) pre_copy = true;
      if (w->pre[i].first == j)
        vec_push(c->arena, &out, pass_dev(c, IRD_MBAR_WAIT, 0, 0, (IrExpr *[]){bar(w, i32(c, w->pre[i].bar)), i32(c, 0)}, 2, loc));
    }
    if (pre_copy || j == w->ep.idx_frag) continue;
    if (j == w->ep.idx)
      s = ws_epilogue_store(c, &w->ep, w->store_map, w->tx, w->T, body->u.seq.items[w->ep.idx_frag]);
    if (j != w->li) {
      vec_push(c->arena, &out, s);
      continue;
    }
    IrStmt *head, *tail, *loop = consumer_loop(w, &head, &tail);
    if (head) vec_push(c->arena, &out, head);
    vec_push(c->arena, &out, ws_pingpong(c, w->f, body, loop, w->tx, w->T));
    if (tail) vec_push(c->arena, &out, tail);
  }
  for (int i = 0; i < w->np; i++) /* a tile nobody reads has still landed before the block exits */
    if (w->pre[i].first < 0)
      vec_push(c->arena, &out, pass_dev(c, IRD_MBAR_WAIT, 0, 0, (IrExpr *[]){bar(w, i32(c, w->pre[i].bar)), i32(c, 0)}, 2, loc));
  if (w->store_map) /* the stores have read S and written global memory before the block exits */
    vec_push(c->arena, &out, ir_if(c, bin(c, IR_EQ, ir_varref(c, w->tx, loc), i32(c, 0)), pass_dev(c, IRD_TMA_STORE_WAIT, 0, 0, NULL, 0, loc), NULL, loc));
  return ir_seq_vec(c, &out, loc);
}

/* Tiles first and last used by the same statements (a GEMM's A and B) share their barriers:
 * the producer expects all their bytes on one full barrier, the consumers wait once and
 * release once. */
static void group_tiles(Wsl *w) {
  for (int i = 0; i < w->nt; i++) {
    TmaTile *t = &w->tile[i];
    t->lead = i;
    for (int j = 0; j < i && t->first >= 0; j++) {
      const TmaTile *u = &w->tile[j];
      if (u->lead == j && u->first == t->first && u->last == t->last && u->thread_read == t->thread_read) {
        t->lead = j;
        break;
      }
    }
  }
}

/* Rewrites one kernel; false leaves it to inject_pipeline. */
static bool specialize(Wsl *w) {
  TsCompiler *c = w->c;
  if (!plan(w)) return false;
  IrKernel *k = w->k;
  w->loc = w->loop->loc;
  w->tx = ir_kernel_thread_var(c, k, 0, w->loc);
  SrcLoc loc = w->loc;
  /* barriers: per staged tile full[S] then empty[S]; then one per pre-loop tile */
  int nb = 0;
  group_tiles(w);
  for (int i = 0; i < w->nt; i++) {
    TmaTile *t = &w->tile[i];
    if (t->lead == i) t->bar = nb, nb += 2 * w->S;
    else t->bar = w->tile[t->lead].bar;
  }
  for (int i = 0; i < w->np; i++) w->pre[i].bar = nb++;
  w->bars = ir_buffer(c, "load_bar", TS_DTYPE_UINT64, IR_SCOPE_SHARED_DYN, 1, (IrExpr *[]){i32(c, nb)}, loc);
  for (int i = 0; i < w->np; i++) make_map(w, &w->pre[i]);
  for (int i = 0; i < w->nt; i++) {
    TmaTile *t = &w->tile[i];
    IrBuffer *x = ARENA_NEW(c->arena, IrBuffer);
    *x = *t->dst;
    x->ndim = t->dst->ndim + 1; /* [S, rows, cols], or [S, cols] for a flat tile */
    x->shape = ARENA_ARRAY(c->arena, IrExpr *, x->ndim);
    x->shape[0] = i32(c, w->S);
    for (int d = 0; d < t->dst->ndim; d++) x->shape[d + 1] = t->dst->shape[d];
    x->strides = NULL;
    t->staged = x;
    make_map(w, t);
  }
  if (w->ep.idx >= 0) {
    WsStore *ep = &w->ep;
    const IrBuffer *G = ep->to_global->u.copy.dst.buf;
    ep->smem->layout = ep->layout;
    IrTmaMap *m = w->store_map = ARENA_NEW(c->arena, IrTmaMap);
    memset(m, 0, sizeof *m);
    m->var = ir_var(c, arena_printf(c->arena, "%s_tma%d", G->name, w->maps->len), TS_DTYPE_HANDLE, IR_VAR_PARAM, loc);
    m->param_index = G->param_index;
    m->rank = G->ndim;
    for (int d = 0; d < 5; d++) m->box[d] = 1;
    m->box[0] = ep->atom;
    m->box[1] = ep->rows;
    m->swizzle = ep->layout->swizzle;
    vec_push(c->arena, w->maps, m);
  }
  /* allocations (staged tiles in place of the tiles), the barriers, their initialisation */
  PtrVec top = {0};
  IrStmt *body = w->body;
  for (int j = 0; j < body->u.seq.n; j++) {
    IrStmt *s = body->u.seq.items[j];
    if (s->kind != IR_S_ALLOC) continue;
    for (int i = 0; i < w->nt; i++)
      if (s->u.alloc.buf == w->tile[i].dst) {
        s = ir_stmt(c, IR_S_ALLOC, s->loc);
        s->u.alloc.buf = w->tile[i].staged;
      }
    vec_push(c->arena, &top, s);
  }
  if (w->acc_overlap) {
    IrStmt *da = ir_stmt(c, IR_S_ALLOC, loc);
    da->u.alloc.buf = w->ao.done;
    vec_push(c->arena, &top, da);
  }
  IrStmt *ba = ir_stmt(c, IR_S_ALLOC, loc);
  ba->u.alloc.buf = w->bars;
  vec_push(c->arena, &top, ba);
  if (w->guarded) {
    IrStmt *ta = ir_stmt(c, IR_S_ALLOC, loc);
    ta->u.alloc.buf = w->taken = ws_guard_counter(c, loc);
    vec_push(c->arena, &top, ta);
  }
  PtrVec init = {0};
  for (int i = 0; i < w->nt; i++) /* full[s]: the producer's one arrival; empty[s]: one per consumer warp */
    for (int s = 0; s < 2 * w->S && w->tile[i].lead == i; s++)
      vec_push(c->arena, &init, pass_dev(c, IRD_MBAR_INIT, 0, 0, (IrExpr *[]){bar(w, i32(c, w->tile[i].bar + s)), i32(c, s < w->S ? 1 : w->T / 32)}, 2, loc));
  for (int i = 0; i < w->np; i++)
    vec_push(c->arena, &init, pass_dev(c, IRD_MBAR_INIT, 0, 0, (IrExpr *[]){bar(w, i32(c, w->pre[i].bar)), i32(c, 1)}, 2, loc));
  vec_push(c->arena, &init, pass_dev(c, IRD_MBAR_FENCE_INIT, 0, 0, NULL, 0, loc));
  IrExpr *txr = ir_varref(c, w->tx, loc);
  vec_push(c->arena, &top, ir_if(c, bin(c, IR_EQ, txr, i32(c, 0)), ir_seq_vec(c, &init, loc), NULL, loc));
  vec_push(c->arena, &top, ir_eval(c, ir_call(c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, loc), loc));
  /* the producer is built first: its TMA-map variables come first in the generated code */
  IrStmt *prod = producer(w);
  IrStmt *cons = consumer(w);
  vec_push(c->arena, &top, ir_if(c, bin(c, IR_GE, txr, i32(c, w->T)), prod, cons, loc));
  k->body = ir_seq_vec(c, &top, body->loc);
  k->producer_threads = WSL_PRODUCER_THREADS;
  k->ws_blocks = w->blocks;
  return true;
}

static void walk(TsCompiler *c, IrFunc *f, PtrVec *maps, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_KERNEL) {
    Wsl *w = ARENA_NEW(c->arena, Wsl);
    memset(w, 0, sizeof *w);
    w->c = c;
    w->f = f;
    w->maps = maps;
    w->k = &s->u.kernel;
    int before = maps->len;
    if (!specialize(w)) maps->len = before;
    return;
  }
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, f, maps, s->u.seq.items[i]);
}

void ws_loop_specialize(TsCompiler *c, IrFunc *f) {
  if (c->target.sm != 90 || !c->target.arch_a) return; /* wgmma + setmaxnreg: sm_90a */
  if (pass_config_on(f, "tl.disable_warp_specialized") || pass_config_on(f, "tl.disable_tma_lower")) return;
  PtrVec maps = {0};
  for (int i = 0; i < f->ntma; i++) vec_push(c->arena, &maps, &f->tma_maps[i]);
  int had = f->ntma;
  walk(c, f, &maps, f->body);
  if (maps.len == had) return;
  f->ntma = maps.len;
  f->tma_maps = ARENA_ARRAY(c->arena, IrTmaMap, maps.len);
  for (int i = 0; i < maps.len; i++) f->tma_maps[i] = *(IrTmaMap *)maps.items[i];
}

/* The pass: sm_90a GEMM loops first (warp_specialize.c), then the kernels left whose
 * pipelined loop's loads TMA can issue.  It lives here so that this file depends on
 * warp_specialize.c (the shared epilogue) and not the other way round. */
void pass_warp_specialize(TsCompiler *c, IrFunc *f) {
  if (c->target.sm != 90 || !c->target.arch_a) return; /* wgmma + setmaxnreg: sm_90a */
  if (pass_config_on(f, "tl.disable_warp_specialized") || pass_config_on(f, "tl.disable_tma_lower")) return;
  ws_gemm_specialize(c, f);
  ws_loop_specialize(c, f);
}
