/* warp_specialize_epilogue.c — the epilogue of a warp-specialized GEMM (warp_specialize.c)
 * or pipelined loop (warp_specialize_loop.c): the accumulator tile written to global memory
 * through a swizzled shared tile and TMA stores, whole or as a ring of column atoms; and the
 * checks it shares with the load side: which global boxes TMA can move, and whether a
 * statement touches shared memory (which the consumers alone could not order). */
#include <string.h>

#include "../layout/layout.h"
#include "passes.h"

static IrExpr *i32(TsCompiler *c, int64_t v) { return ir_i32(c, v); }
static IrExpr *bin(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b) { return ir_binary(c, k, a, b, SRCLOC_NONE); }

/* ---- does a statement touch shared memory (or reduce, which may)? ---------------------- */
typedef struct Touch { bool found; } Touch;
static void touch_expr(IrExpr *e, void *ctx) {
  Touch *t = ctx;
  if (e->kind == IR_LOAD && pass_is_shared(e->u.load.buf)) t->found = true;
  if (ir_call_has_flag(e, IRI_BLOCK_SYNC)) t->found = true;
}
static void touch_stmt(IrStmt *s, void *ctx) {
  Touch *t = ctx;
  switch (s->kind) {
    case IR_S_STORE: if (pass_is_shared(s->u.store.buf)) t->found = true; break;
    case IR_S_COPY: if (pass_is_shared(s->u.copy.src.buf) || pass_is_shared(s->u.copy.dst.buf)) t->found = true; break;
    case IR_S_FILL: if (pass_is_shared(s->u.fill.dst.buf)) t->found = true; break;
    case IR_S_GEMM: case IR_S_REDUCE: case IR_S_KERNEL: case IR_S_UNSUPPORTED: t->found = true; break;
    case IR_S_ATOMIC:
      if (pass_is_shared(s->u.atomic.dst.buf) || (s->u.atomic.tile && pass_is_shared(s->u.atomic.src.buf))) t->found = true;
      break;
    case IR_S_FOR: if (s->u.loop.kind == IR_FOR_PIPELINED) t->found = true; break;
    default: break;
  }
}
bool ws_touches_shared(IrStmt *s) {
  Touch t = {false};
  IrVisitor v = {touch_stmt, touch_expr, &t};
  ir_visit(s, &v);
  return t.found;
}

/* ---- which global boxes TMA can move ---------------------------------------------------- */
/* TMA needs every row stride of the tensor 16-byte aligned (checked at launch when the
 * extents are not known here). */
bool ws_tma_rows_aligned(const IrBuffer *g) {
  int eb = dtype_bytes(g->dtype);
  for (int d = 1; d < g->ndim; d++) {
    int64_t inner = 1, x;
    bool known = true;
    for (int j = d; j < g->ndim; j++) {
      if (!ir_is_const_int(g->shape[j], &x)) known = false;
      else inner *= x;
    }
    if (known && (inner * eb) % 16) return false;
  }
  return true;
}

/* Is global region `r` a [rows x cols] box (leading dims of extent 1) of a TMA-able parameter? */
bool ws_tma_global_box(const IrRegion *r, int64_t rows, int64_t cols) {
  const IrBuffer *g = r->buf;
  if (g->scope != IR_SCOPE_GLOBAL || g->param_index < 0 || g->alias_of || g->strides || g->remap || g->ndim < 2 ||
      g->ndim > 4 || r->ndim != g->ndim || dtype_is_packed(g->dtype)) /* 4-bit: element by element */
    return false;
  for (int d = 0; d < g->ndim; d++) {
    int64_t e, want = d == g->ndim - 2 ? rows : d == g->ndim - 1 ? cols : 1;
    if (!ir_is_const_int(r->extent[d], &e) || e != want) return false;
  }
  return ws_tma_rows_aligned(g);
}

/* ---- the epilogue as a TMA store -------------------------------------------------------
 * After the K loop the consumers write the accumulator tile to global memory, either
 * directly, T.copy(C_local, C[..]) (form A), or through a shared tile, T.copy(C_local,
 * C_shared); T.copy(C_shared, C[..]) (form B, TileLang's usual epilogue).  Both become:
 * the tile is written into shared memory (form A: a new buffer) in a swizzled layout, then
 * one thread stores it with TMA, one box per column atom:
 *
 *   if tx == 0: tma_store_wait_read<0>     # the previous tile's store has read the buffer
 *   bar.sync 1, T                          # consumers only (the producer never joins)
 *   T.copy(C_local, S)                     # st.shared through the swizzle: no bank conflicts
 *   fence.proxy.async.shared::cta; bar.sync 1, T
 *   if tx == 0: tma_store(box a) ...; commit
 *
 * and tma_store_wait<0> by that thread before the consumers leave.  Form A takes the whole
 * tile when it fits in shared memory next to the stages; else a ring of `slots` column atoms
 * (e.g. 2 x [128 x 64] halves next to 4 stages of 128x256x64), one atom at a time:
 *
 *   for a in atoms:  s = a % slots
 *     if tx == 0: tma_store_wait_read<slots - 1>   # atom a - slots has left slot s
 *     bar.sync 1, T;  T.copy(C_local[:, a*W:(a+1)*W], S[:, s*W:(s+1)*W])
 *     fence.proxy.async.shared::cta; bar.sync 1, T
 *     if tx == 0: tma_store(slot s -> C[.., a*W]); commit
 *
 * and when not even one atom fits, the direct stores stay. */


static bool is_frag(const IrBuffer *b) { return b->scope == IR_SCOPE_FRAGMENT && !b->alias_of && b->ndim == 2; }

/* Does `cp` copy the whole 2-D buffer `b` (region [0, 0] + its shape)? */
static bool whole(const IrRegion *r, const IrBuffer *b, int64_t *rows, int64_t *cols) {
  if (r->buf != b || r->ndim != 2 || b->ndim != 2) return false;
  int64_t v[2];
  for (int d = 0; d < 2; d++) {
    int64_t m, e;
    if (!ir_is_const_int(b->shape[d], &v[d]) || !ir_is_const_int(r->min[d], &m) || m != 0 ||
        !ir_is_const_int(r->extent[d], &e) || e != v[d])
      return false;
  }
  *rows = v[0];
  *cols = v[1];
  return true;
}

/* The swizzled layout of a [rows x cols] store tile, when TMA can store it box by box. */
Layout *ws_store_layout(TsCompiler *c, int64_t rows, int64_t cols, ts_dtype t) {
  Layout *l = layout_swizzled(c, rows, cols, dtype_bytes(t));
  if (!l || !l->swizzle || rows > 256) return NULL;
  int64_t atom = layout_atom_cols(l);
  return atom <= 256 && cols % atom == 0 ? l : NULL;
}

/* Finds the epilogue store among the statements after the loop (body items li+1..).
 * Returns false when a statement after the loop uses shared memory in a way the
 * warp-specialized kernel cannot keep (the kernel then stays on the cp.async path). */
bool ws_find_epilogue(TsCompiler *c, IrStmt *body, int li, WsStore *ep) {
  memset(ep, 0, sizeof *ep);
  ep->idx = ep->idx_frag = -1;
  int n = body->u.seq.n;
  for (int i = li + 1; i < n; i++) {
    IrStmt *s = body->u.seq.items[i];
    if (s->kind == IR_S_ALLOC) continue;
    if (s->kind == IR_S_COPY && ep->idx < 0) {
      const IrRegion *src = &s->u.copy.src, *dst = &s->u.copy.dst;
      int64_t r, cc;
      /* form B: T.copy(frag, S) then T.copy(S, G) */
      if (is_frag(src->buf) && pass_is_shared(dst->buf) && i + 1 < n && whole(src, src->buf, &r, &cc)) {
        IrStmt *s2 = body->u.seq.items[i + 1];
        int64_t r2, c2;
        IrBuffer *S = dst->buf;
        if (whole(dst, S, &r2, &c2) && r2 == r && c2 == cc && !S->alias_of && s2->kind == IR_S_COPY &&
            whole(&s2->u.copy.src, S, &r2, &c2) && ws_tma_global_box(&s2->u.copy.dst, r, cc) &&
            s2->u.copy.dst.buf->dtype == S->dtype && !s2->u.copy.disable_tma) {
          Layout *l = ws_store_layout(c, r, cc, S->dtype);
          /* any other use of S after the loop touches shared memory: rejected below */
          if (l && (!S->layout || (S->layout->pinned && layout_equal(S->layout, l)))) {
            *ep = (WsStore){.idx = i + 1, .idx_frag = i, .to_global = s2, .smem = S, .layout = l, .rows = r, .cols = cc,
                            .atom = layout_atom_cols(l)};
            i++;
            continue;
          }
        }
        return false;
      }
      /* form A: T.copy(frag, G) */
      if (is_frag(src->buf) && whole(src, src->buf, &r, &cc) && ws_tma_global_box(dst, r, cc) && !s->u.copy.disable_tma) {
        Layout *l = ws_store_layout(c, r, cc, dst->buf->dtype);
        if (l) {
          *ep = (WsStore){.idx = i, .idx_frag = -1, .to_global = s, .layout = l, .rows = r, .cols = cc,
                          .atom = layout_atom_cols(l)};
          continue;
        }
      }
    }
    if (ws_touches_shared(s)) return false;
  }
  return true;
}

/* One TMA store box: the column atom at column `scol` of ep->smem to column offset `gcol`
 * of the epilogue's global region. */
static IrStmt *store_box(TsCompiler *c, const WsStore *ep, const IrTmaMap *map, int64_t scol, int64_t gcol, SrcLoc loc) {
  const IrRegion *g = &ep->to_global->u.copy.dst;
  int R = map->rank, na = 0;
  IrExpr *args[6];
  args[na++] = ir_varref(c, map->var, loc);
  args[na++] = pass_addr(c, ep->smem, (IrExpr *[]){i32(c, 0), i32(c, scol)}, 2);
  for (int d = R - 1; d >= 0; d--) {
    IrExpr *co = g->min[d];
    if (d == R - 1 && gcol) co = bin(c, IR_ADD, co, i32(c, gcol));
    args[na++] = ir_cast(c, TS_DTYPE_INT32, co, loc);
  }
  return pass_dev(c, IRD_TMA_STORE, R, 0, args, na, loc);
}

/* A 2-D region [m0, m1] + [e0, e1] of `b`. */
IrRegion ws_region2(TsCompiler *c, IrBuffer *b, int64_t m0, int64_t m1, int64_t e0, int64_t e1) {
  IrRegion r = {0};
  r.buf = b;
  r.ndim = 2;
  r.min = ARENA_ARRAY(c->arena, IrExpr *, 2);
  r.extent = ARENA_ARRAY(c->arena, IrExpr *, 2);
  r.min[0] = i32(c, m0);
  r.min[1] = i32(c, m1);
  r.extent[0] = i32(c, e0);
  r.extent[1] = i32(c, e1);
  return r;
}

/* The epilogue of find_epilogue as pieces (see there), appended to `pieces`: one per ring
 * atom (ep->slots > 0, form A) or one for the whole tile.  `to_smem` is the copy of the whole
 * fragment into ep->smem (form B's T.copy(fragment, S)), NULL for form A (made from the copy
 * into global memory); `from`, when not NULL, is the fragment read instead of that copy's
 * source (the packed tile of the overlapped epilogue). */
void ws_epilogue_pieces(TsCompiler *c, const WsStore *ep, const IrTmaMap *map, IrVar *tx, int64_t T,
                            IrStmt *to_smem, IrBuffer *from, PtrVec *pieces) {
  SrcLoc loc = ep->to_global->loc;
  IrExpr *t0 = bin(c, IR_EQ, ir_varref(c, tx, loc), i32(c, 0));
    IrStmt *whole = ir_stmt(c, IR_S_COPY, loc);
  *whole = to_smem ? *to_smem : *ep->to_global;
  if (!to_smem) whole->u.copy.dst = ws_region2(c, ep->smem, 0, 0, ep->rows, ep->cols);
  if (from) whole->u.copy.src = ws_region2(c, from, 0, 0, ep->rows, ep->cols);
  if (ep->slots == 0) {
    PtrVec st = {0};
    for (int64_t a = 0; a < ep->cols / ep->atom; a++)
      vec_push(c->arena, &st, store_box(c, ep, map, a * ep->atom, a * ep->atom, loc));
    vec_push(c->arena, &st, pass_dev(c, IRD_TMA_STORE_COMMIT, 0, 0, NULL, 0, loc));
    IrStmt *items[] = {ir_if(c, t0, pass_dev(c, IRD_TMA_STORE_WAIT_READ, 0, 0, NULL, 0, loc), NULL, loc),
                       pass_dev(c, IRD_NAMED_BARRIER_SYNC, 1, T, NULL, 0, loc),
                       whole,
                       pass_dev(c, IRD_FENCE_PROXY_ASYNC_SHARED, 0, 0, NULL, 0, loc),
                       pass_dev(c, IRD_NAMED_BARRIER_SYNC, 1, T, NULL, 0, loc),
                       ir_if(c, t0, ir_seq_vec(c, &st, loc), NULL, loc)};
    vec_push(c->arena, pieces, ir_seq(c, items, 6, loc));
    return;
  }
  /* the ring: atom a goes through slot a % slots (slots divides the atoms, so the slot
   * sequence runs on unbroken from one tile to the next) */
  const IrBuffer *frag = whole->u.copy.src.buf;
  int64_t W = ep->atom, n = ep->cols / W;
    for (int64_t a = 0; a < n; a++) {
    int64_t slot = a % ep->slots;
    IrStmt *cp = ir_stmt(c, IR_S_COPY, loc);
    *cp = *whole;
    cp->u.copy.src = ws_region2(c, (IrBuffer *)frag, 0, a * W, ep->rows, W);
    cp->u.copy.dst = ws_region2(c, ep->smem, 0, slot * W, ep->rows, W);
    IrStmt *store = ir_seq(c, (IrStmt *[]){store_box(c, ep, map, slot * W, a * W, loc),
                                           pass_dev(c, IRD_TMA_STORE_COMMIT, 0, 0, NULL, 0, loc)},
                           2, loc);
    IrStmt *items[] = {ir_if(c, t0, pass_dev(c, IRD_TMA_STORE_WAIT_READ, ep->slots - 1, 0, NULL, 0, loc), NULL, loc),
                       pass_dev(c, IRD_NAMED_BARRIER_SYNC, 1, T, NULL, 0, loc),
                       cp,
                       pass_dev(c, IRD_FENCE_PROXY_ASYNC_SHARED, 0, 0, NULL, 0, loc),
                       pass_dev(c, IRD_NAMED_BARRIER_SYNC, 1, T, NULL, 0, loc),
                       ir_if(c, t0, store, NULL, loc)};
    vec_push(c->arena, pieces, ir_seq(c, items, 6, loc));
  }
}

/* The whole epilogue of find_epilogue as one statement. */
IrStmt *ws_epilogue_store(TsCompiler *c, const WsStore *ep, const IrTmaMap *map, IrVar *tx, int64_t T,
                          IrStmt *to_smem) {
  PtrVec pieces = {0};
  ws_epilogue_pieces(c, ep, map, tx, T, to_smem, NULL, &pieces);
  return ir_seq_vec(c, &pieces, ep->to_global->loc);
}

/* The pieces of epilogue_pieces for the tile at block indices `to` (replacing from[0..1]),
 * each guarded by `valid` when not NULL: a fresh tree per call, so no statement is shared. */
void ws_tile_pieces(TsCompiler *c, const WsStore *ep, const IrTmaMap *map, IrVar *tx, int64_t T, IrStmt *to_smem,
                        IrBuffer *from_frag, IrVar **from, IrExpr **to, IrExpr *valid, PtrVec *out) {
  PtrVec raw = {0};
  ws_epilogue_pieces(c, ep, map, tx, T, to_smem, from_frag, &raw);
  for (int a = 0; a < raw.len; a++) {
    IrStmt *p = ir_subst_stmt(c, raw.items[a], from, to, 2);
    vec_push(c->arena, out, valid ? ir_if(c, valid, p, NULL, p->loc) : p);
  }
}

