/* vectorize_loops.c — a T.vectorized loop of copies moves each element group with one vector
 * access, as TileLang's vectorizer does: in
 *
 *     for k in T.vectorized(8):
 *         A_local[k] = A[bk * 256 + tk * 8 + k]
 *         B_local[k] = B[row, bk * 256 + tk * 8 + k]
 *
 * each statement becomes one 16-byte copy (ts::copy_vec<8>), where the unrolled scalar loop
 * issued eight 2-byte loads that the CUDA compiler cannot merge (it cannot prove the
 * addresses aligned).  T.Parallel copies get their vectors in lower_tile_ops; this pass
 * handles the thread-level loops users write themselves.
 *
 * A loop qualifies when it starts at 0, has a constant extent and its body is a list of
 * stores (each possibly under an `if` whose condition is the same over a vector) whose value
 * is a load, possibly converted once and zero where a condition fails (safe_memory's bounds
 * guards), and no statement touches memory another one writes: then running each store over
 * the whole loop in turn computes the same thing.  Each store takes the widest power-of-two
 * V (at most 16 bytes on either side, dividing the extent) for which both of its accesses
 * move V neighbouring elements that start on a V boundary (vector_lanes.c); a store for which
 * none does stays an element loop.  Runs after safe_memory, so the conditions it keeps are
 * the bounds guards, and before thread_sync, which sees the vector accesses.  pass_configs
 * {"tir.disable_vectorize": True} leaves every loop an element loop, as in TVM. */
#include "passes.h"

/* A buffer a vector may touch: memory (not a scalar local.var, not 4-bit packed, not a
 * T.Layout-remapped tile), each row starting on a V boundary. */
static bool vec_buffer(const IrBuffer *b, int nidx, int64_t V) {
  if (V * dtype_bytes(b->dtype) > 16 || dtype_is_packed(b->dtype) || b->remap) return false;
  if (b->scope != IR_SCOPE_GLOBAL && b->scope != IR_SCOPE_SHARED && b->scope != IR_SCOPE_SHARED_DYN &&
      b->scope != IR_SCOPE_LOCAL)
    return false;
  return nidx == b->ndim && nidx > 0 && pass_rows_on_vectors(b, nidx, V);
}

/* The loop's var over one V-group (a one-level ParNest for pass_lane_indices), the indices
 * read with their lets written out (`base = bx * 256 + tx * 8` is a multiple of 8). */
static bool lanes_ok(TsCompiler *c, IrVar *lv, const IrBuffer *b, IrExpr *const *idx, int nidx, int64_t V) {
  ParNest one = {.n = 1, .var = {lv}, .min = {0}};
  IrExpr **full = ARENA_ARRAY(c->arena, IrExpr *, nidx);
  for (int k = 0; k < nidx; k++) full[k] = pass_inline_lets(c, idx[k]);
  return vec_buffer(b, nidx, V) && pass_lane_indices(&one, full, nidx, V);
}

static bool uniform(TsCompiler *c, const IrExpr *e, IrVar *lv, int64_t V) {
  return !e || pass_lane_uniform(pass_inline_lets(c, (IrExpr *)e), lv, V);
}

/* The widest V for store st (under condition guard, may be NULL) of loop var lv with extent
 * E; 1 when none.  *ld, *cond and *converts: the copied load (pass_gather_value). */
static int64_t store_lanes(TsCompiler *c, IrVar *lv, int64_t E, const IrStmt *st, const IrExpr *guard, IrExpr **ld_out,
                           IrExpr **cond_out, bool *converts) {
  IrExpr *ld = *ld_out = pass_gather_value(c, st->u.store.value, cond_out, converts), *cond = *cond_out;
  if (!ld || st->u.store.lanes != 1) return 1;
  const IrBuffer *db = st->u.store.buf, *sb = ld->u.load.buf;
  if (db->scope == IR_SCOPE_LOCAL && sb->scope == IR_SCOPE_LOCAL) return 1; /* registers already */
  for (int64_t V = 16; V >= 2; V /= 2) {
    if (E % V || !uniform(c, cond, lv, V) || !uniform(c, guard, lv, V)) continue;
    if (lanes_ok(c, lv, db, st->u.store.idx, st->u.store.nidx, V) &&
        lanes_ok(c, lv, sb, ld->u.load.idx, ld->u.load.nidx, V))
      return V;
  }
  return 1;
}

/* ---- may the stores run one after another? ---- */
typedef struct Touch { const IrBuffer *root; bool hit; } Touch;
static void touch_expr(IrExpr *e, void *ctx) {
  Touch *t = ctx;
  if (e->kind == IR_LOAD && ir_buffer_root(e->u.load.buf) == t->root) t->hit = true;
}
static void touch_stmt(IrStmt *s, void *ctx) {
  Touch *t = ctx;
  if (s->kind == IR_S_STORE && ir_buffer_root(s->u.store.buf) == t->root) t->hit = true;
}
static bool touches(IrStmt *s, const IrBuffer *b) {
  Touch t = {ir_buffer_root(b), false};
  IrVisitor v = {touch_stmt, touch_expr, &t};
  ir_visit(s, &v);
  return t.hit;
}

/* The store of item it (a STORE, or an IF without else around one), and its guard. */
static IrStmt *item_store(IrStmt *it, IrExpr **guard) {
  *guard = NULL;
  if (it->kind == IR_S_IF && !it->u.if_.else_s && it->u.if_.then_s && !it->u.if_.ws_hi) {
    *guard = it->u.if_.cond;
    it = it->u.if_.then_s;
    if (it->kind == IR_S_SEQ && it->u.seq.n == 1) it = it->u.seq.items[0];
  }
  return it->kind == IR_S_STORE ? it : NULL;
}

/* Each store of items writes a buffer that no other item touches and that its own value
 * does not read. */
static bool independent(IrStmt **items, int n) {
  for (int i = 0; i < n; i++) {
    IrExpr *g;
    IrStmt *st = item_store(items[i], &g);
    if (!st) return false;
    for (int j = 0; j < n; j++) {
      if (j == i) {
        Touch t = {ir_buffer_root(st->u.store.buf), false};
        IrVisitor v = {NULL, touch_expr, &t};
        ir_visit_expr(st->u.store.value, &v);
        if (g) ir_visit_expr(g, &v);
        for (int k = 0; k < st->u.store.nidx; k++) ir_visit_expr(st->u.store.idx[k], &v);
        if (t.hit) return false;
      } else if (touches(items[j], st->u.store.buf)) {
        return false;
      }
    }
  }
  return true;
}

/* ---- rewriting ---- */
/* Item it of loop `loop` (var lv, extent E): V-lane stores over an unrolled loop of E / V
 * groups (lv = group * V at lane 0; no loop for one group), or the element loop when V is 1. */
static IrStmt *vector_item(TsCompiler *c, IrStmt *loop, IrStmt *it) {
  IrVar *lv = loop->u.loop.var;
  int64_t E;
  ir_is_const_int(loop->u.loop.extent, &E);
  IrExpr *guard;
  IrStmt *st = item_store(it, &guard);
  IrExpr *ld, *cond;
  bool converts;
  int64_t V = store_lanes(c, lv, E, st, guard, &ld, &cond, &converts);
  IrVar *g = ir_var(c, lv->name, lv->dtype, lv->kind, lv->loc); /* each new loop its own var */
  IrExpr *gv = ir_varref(c, g, loop->loc);
  if (V == 1)
    return ir_for(c, g, loop->u.loop.min, loop->u.loop.extent, IR_FOR_UNROLLED, ir_subst_stmt(c, it, &lv, &gv, 1),
                  loop->loc);
  IrExpr *vl = ir_load(c, ld->u.load.buf, ld->u.load.idx, ld->u.load.nidx, ld->loc);
  vl->lanes = (int)V;
  IrExpr *vv = vl;
  if (converts) {
    vv = ir_cast(c, st->u.store.value->dtype, vl, st->loc);
    vv->lanes = (int)V;
  }
  IrStmt *vs = ir_store(c, st->u.store.buf, st->u.store.idx, st->u.store.nidx, vv, st->loc);
  vs->u.store.lanes = (int)V;
  if (cond) { /* where the value's condition fails the group is zero: one vector of zeros */
    IrStmt *zs = ir_store(c, st->u.store.buf, st->u.store.idx, st->u.store.nidx,
                          ir_int(c, 0, st->u.store.buf->dtype, st->loc), st->loc);
    zs->u.store.lanes = (int)V;
    vs = ir_if(c, cond, vs, zs, st->loc);
  }
  if (guard) vs = ir_if(c, guard, vs, NULL, it->loc);
  if (E == V) { /* one group: lane 0 is 0 */
    IrExpr *zero = ir_int(c, 0, lv->dtype, loop->loc);
    return ir_subst_stmt(c, vs, &lv, &zero, 1);
  }
  IrExpr *at[1] = {ir_binary(c, IR_MUL, gv, ir_int(c, V, lv->dtype, loop->loc), loop->loc)};
  vs = ir_subst_stmt(c, vs, &lv, at, 1);
  return ir_for(c, g, ir_int(c, 0, lv->dtype, loop->loc), ir_int(c, E / V, lv->dtype, loop->loc), IR_FOR_UNROLLED, vs,
                loop->loc);
}

static IrStmt *vectorize(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return s;
  s = ir_map_children(c, s, vectorize, ctx);
  int64_t min, E;
  if (s->kind != IR_S_FOR || s->u.loop.kind != IR_FOR_VECTORIZED || !ir_is_const_int(s->u.loop.min, &min) ||
      min != 0 || !ir_is_const_int(s->u.loop.extent, &E) || E < 2)
    return s;
  IrStmt *body = s->u.loop.body;
  IrStmt **items = &body;
  int n = 1;
  if (body->kind == IR_S_SEQ) {
    items = body->u.seq.items;
    n = body->u.seq.n;
  }
  if (n == 0 || !independent(items, n)) return s;
  PtrVec out = {0};
  for (int i = 0; i < n; i++) vec_push(c->arena, &out, vector_item(c, s, items[i]));
  return ir_seq_vec(c, &out, s->loc);
}

void pass_vectorize_loops(TsCompiler *c, IrFunc *f) {
  if (!pass_config_on(f, "tir.disable_vectorize")) f->body = vectorize(c, f->body, NULL);
}
