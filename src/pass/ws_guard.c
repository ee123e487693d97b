/* ws_guard.c — what the producer warpgroup of a warp-specialized loop (warp_specialize_loop.c)
 * can compute, and guarded loops.
 *
 * The producer runs none of the consumers' code: it evaluates a box origin or a loop bound
 * itself, from block indices, parameters, dynamic sizes, the loop variable, tensors nothing
 * writes (a block table, sequence lengths, sparse block indices), variables it computes too
 * (ws_prelude.c) and lets of those.  A
 * register tile that mirrors such a tensor (filled before the loop by one T.copy from it and
 * written by nothing else, as block-sparse attention's `block_mask`) is read from the tensor.
 *
 * A guarded loop is the block-sparse form
 *
 *   for k in T.Pipelined(n, num_stages=S):
 *       i_s = ...                      # lets (any number)
 *       if cond(k, i_s):               # no else
 *           T.copy(K[.., f(i_s), ..], K_shared); T.gemm(...); ...
 *
 * Its pipeline runs over the iterations whose condition holds: both roles evaluate the
 * condition (the producer its own form of it) and count those iterations, and the stage and
 * parity come from the count instead of k - min. */
#include <string.h>

#include "passes.h"

/* ---- register tiles mirroring a tensor ---------------------------------------------------- */
/* The copy among the first `li` statements of kbody that fills register tile b from a tensor
 * nothing writes, whole, when nothing else writes b; NULL otherwise. */
static IrStmt *mirror_copy(IrStmt *kbody, int li, const IrBuffer *b) {
  if ((b->scope != IR_SCOPE_FRAGMENT && b->scope != IR_SCOPE_LOCAL) || b->alias_of) return NULL;
  IrStmt *cp = NULL;
  for (int j = 0; j < kbody->u.seq.n; j++) {
    IrStmt *s = kbody->u.seq.items[j];
    if (s->kind == IR_S_ALLOC || !pass_may_write(s, b)) continue;
    if (cp || j >= li || s->kind != IR_S_COPY || s->u.copy.dst.buf != b) return NULL;
    cp = s;
  }
  if (!cp || !pass_constant_buffer(kbody, cp->u.copy.src.buf)) return NULL;
  const IrRegion *src = &cp->u.copy.src, *dst = &cp->u.copy.dst;
  /* dst whole from 0; src's extents other than 1 are dst's shape, in order */
  int d2 = 0;
  for (int d = 0; d < src->ndim; d++) {
    int64_t e, s2;
    if (!ir_is_const_int(src->extent[d], &e)) return NULL;
    if (e == 1) continue;
    if (d2 >= b->ndim || !ir_is_const_int(b->shape[d2], &s2) || s2 != e) return NULL;
    d2++;
  }
  if (d2 != b->ndim || dst->ndim != b->ndim) return NULL;
  for (int d = 0; d < b->ndim; d++) {
    int64_t m, e, s2;
    if (!ir_is_const_int(dst->min[d], &m) || m || !ir_is_const_int(dst->extent[d], &e) ||
        !ir_is_const_int(b->shape[d], &s2) || e != s2)
      return NULL;
  }
  return cp;
}

typedef struct Mirror { TsCompiler *c; IrStmt *kbody; int li; const PtrVec *pvars; bool bad; } Mirror;
static IrExpr *mirror_expr(Mirror *m, IrExpr *e);
/* b[idx] for the tensor G that b mirrors: G[min + idx along its non-unit dims], converted. */
static IrExpr *mirror_load(Mirror *m, IrExpr *e, IrExpr **idx) {
  IrStmt *cp = mirror_copy(m->kbody, m->li, e->u.load.buf);
  if (!cp) {
    m->bad = true;
    return e;
  }
  const IrRegion *src = &cp->u.copy.src;
  IrExpr **gi = ARENA_ARRAY(m->c->arena, IrExpr *, src->ndim);
  int d2 = 0;
  for (int d = 0; d < src->ndim; d++) {
    int64_t ext;
    ir_is_const_int(src->extent[d], &ext);
    gi[d] = ext == 1 ? src->min[d] : ir_binary(m->c, IR_ADD, src->min[d], idx[d2++], e->loc);
  }
  IrExpr *g = ir_load(m->c, src->buf, gi, src->ndim, e->loc);
  return g->dtype == e->dtype ? g : ir_cast(m->c, e->dtype, g, e->loc);
}
static IrExpr *mirror_expr(Mirror *m, IrExpr *e) {
  if (!e || m->bad) return e;
  if (e->kind == IR_LOAD || e->kind == IR_CALL) {
    bool call = e->kind == IR_CALL;
    int n = call ? e->u.call.nargs : e->u.load.nidx;
    IrExpr **xs = ARENA_ARRAY(m->c->arena, IrExpr *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) xs[i] = mirror_expr(m, call ? e->u.call.args[i] : e->u.load.idx[i]);
    if (!call && !pass_constant_buffer(m->kbody, e->u.load.buf) && !vec_has(m->pvars, e->u.load.buf))
      return mirror_load(m, e, xs);
    return n ? ir_with_operands(m->c, e, xs) : e;
  }
  int n = ir_expr_nops[e->kind];
  if (n <= 0) return e;
  IrExpr *r = ARENA_NEW(m->c->arena, IrExpr);
  *r = *e;
  for (int i = 0; i < n; i++) r->u.ops[i] = mirror_expr(m, e->u.ops[i]);
  return r;
}

IrExpr *ws_producer_form(TsCompiler *c, IrStmt *kbody, int li, const PtrVec *pvars, IrExpr *e, const IrVar *kv) {
  Mirror m = {c, kbody, li, pvars, false};
  IrExpr *r = mirror_expr(&m, pass_inline_lets(c, e));
  return !m.bad && ws_scalar_ok(r, kbody, pvars, kv, false, 0) ? r : NULL;
}

/* ---- guarded loops ------------------------------------------------------------------------ */
/* Does e compute with floating-point values (beyond loading, converting and comparing them)?
 * Both roles must decide alike on every iteration, or the producer waits for a release that
 * never comes: float arithmetic compiled twice (contracted to an FMA in one branch, say) might
 * not give the same bits. */
static void float_math(IrExpr *e, void *ctx) {
  if (dtype_is_float(e->dtype) && e->kind != IR_LOAD && e->kind != IR_CAST && e->kind != IR_FLOAT) *(bool *)ctx = true;
}
static bool computes_floats(IrExpr *e) {
  bool found = false;
  IrVisitor v = {NULL, float_math, &found};
  ir_visit_expr(e, &v);
  return found;
}

int ws_guard_split(TsCompiler *c, const IrFunc *f, IrStmt *kbody, int li, const PtrVec *pvars, WsGuard *g) {
  IrStmt *loop = kbody->u.seq.items[li], *lb = loop->u.loop.body;
  memset(g, 0, sizeof *g);
  g->loop = loop;
  if (!lb) return 0;
  IrStmt **items = &lb;
  int n = 1;
  if (lb->kind == IR_S_SEQ) items = lb->u.seq.items, n = lb->u.seq.n;
  if (n < 1) return 0;
  IrStmt *last = items[n - 1];
  if (last->kind != IR_S_IF || last->u.if_.else_s || last->u.if_.ws_hi) return 0;
  for (int i = 0; i < n - 1; i++)
    if (items[i]->kind != IR_S_LET) return 0;
  if (pass_config_state(f, "ts.ws_guarded_loops") == 0) return -1;
  g->pcond = ws_producer_form(c, kbody, li, pvars, last->u.if_.cond, loop->u.loop.var);
  if (!g->pcond || computes_floats(g->pcond)) return -1;
  g->cond = last->u.if_.cond;
  g->lets = items;
  g->nlets = n - 1;
  IrStmt *then = last->u.if_.then_s;
  IrStmt *l2 = ir_stmt(c, IR_S_FOR, loop->loc);
  *l2 = *loop;
  l2->u.loop.body = then->kind == IR_S_SEQ ? then : ir_seq(c, &then, 1, then->loc);
  g->loop = l2;
  return 1;
}

/* A register counter of the iterations the guard let through, from 0, and its value. */
IrBuffer *ws_guard_counter(TsCompiler *c, SrcLoc loc) {
  IrExpr *one = ir_i32(c, 1);
  IrBuffer *b = ir_buffer(c, "taken", TS_DTYPE_INT32, IR_SCOPE_VAR, 1, &one, loc);
  b->init = ir_i32(c, 0);
  return b;
}
IrExpr *ws_guard_count(TsCompiler *c, IrBuffer *ctr, SrcLoc loc) {
  IrExpr *zero = ir_i32(c, 0);
  return ir_load(c, ctr, &zero, 1, loc);
}

IrStmt *ws_guarded_iteration(TsCompiler *c, IrExpr *cond, IrStmt **lets, int nlets, IrBuffer *ctr, PtrVec *body,
                             SrcLoc loc) {
  IrExpr *zero = ir_i32(c, 0);
  vec_push(c->arena, body, ir_store(c, ctr, &zero, 1, ir_binary(c, IR_ADD, ws_guard_count(c, ctr, loc), ir_i32(c, 1), loc), loc));
  PtrVec out = {0};
  for (int i = 0; i < nlets; i++) vec_push(c->arena, &out, lets[i]);
  vec_push(c->arena, &out, ir_if(c, cond, ir_seq_vec(c, body, loc), NULL, loc));
  return ir_seq_vec(c, &out, loc);
}
