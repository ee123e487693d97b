/* inject_pipeline.c — software pipelining of T.Pipelined loops (before legalize, on tile
 * ops).  A loop
 *
 *   for k in T.Pipelined(n, num_stages=S):
 *       T.copy(G1[.. k ..], A_s); T.copy(G2[.. k ..], B_s)      # producers
 *       ...consumers (T.gemm(A_s, B_s, C), ...)
 *
 * becomes, with every producer-written shared buffer X_s given a leading stage dim of S:
 *
 *   for s in 0..S-1:  if s < n: producers(k = s) -> stage s      (async);  commit
 *   for k in 0..n-1:
 *       wait until at most S-1 copy groups are pending; __syncthreads
 *       consumers on stage k % S
 *       __syncthreads
 *       if k + S < n: producers(k + S) -> stage k % S   (async);  commit
 *
 * so all S stages are in flight while the loop waits for one: a stage is refilled as soon
 * as its consumers are done (TileLang's schedule; the flash-decoding loop of 2 stages had
 * half its loads in flight when the refill waited for the next iteration's barrier).
 * Without a guard (below), tiles last used at different T.gemm statements get commit groups
 * of their own (Groups): each is waited for just before its first use and refilled right
 * after its last GEMM, so attention's K(k + S) loads during the softmax.  A
 * lone T.gemm (below) is issued first and refills before it: D = S-1 stages ahead
 * (S-2 when its wgmma stays in flight across iterations).
 *
 * The copies are issued as cp.async (legalize/lower_tile_ops turn the marked copies into
 * 16-byte cp.async where they vectorize; others stay synchronous, which the same barrier
 * orders).  One commit per iteration, even an empty one, keeps the group count uniform,
 * so "wait_group D-1" means "stage k has landed".  The barrier before a refill guarantees
 * that every thread finished reading the stage it overwrites.
 *
 * Producers are the statements of the body that fill a shared tile from global memory: T.copy,
 * and gather nests (T.im2col: a T.Parallel store of a global element or zero).
 *  - the leading ones, with the lets among them that read only constant memory
 *    (pass_constant_buffer: `kv_start = block_table[...]`), computed again for the
 *    iteration a producer runs ahead for;
 *  - later ones too (an attention loop's V after the softmax) when nothing before them in
 *    the body touches their tile, and they read only constant memory and no later let;
 *  - inside a body that is one `if` on constant memory (block-sparse masks, after its
 *    lets): the producers run under the test for their own iteration, the consumers under
 *    this iteration's.
 * A loop whose shared buffers are used outside it or allocated in it, with fewer than 2
 * stages, or whose body commits cp.async groups itself (T.ptx_commit_group), stays a plain
 * serial loop. */
#include "passes.h"

typedef struct Pipe {
  TsCompiler *c;
  PtrVec from, to;  /* IrBuffer*: original shared buffers -> staged copies */
} Pipe;


static IrExpr *i32(TsCompiler *c, int64_t v) { return ir_i32(c, v); }

/* ---- buffer replacement: X_s[i, j] -> X_st[stage, i, j] ---------------------------------- */
typedef struct Restage {
  TsCompiler *c;
  IrBuffer *from, *to;
  IrExpr *stage;
} Restage;

static IrExpr **prepend(TsCompiler *c, IrExpr *first, IrExpr *const *rest, int n) {
  IrExpr **out = ARENA_ARRAY(c->arena, IrExpr *, n + 1);
  out[0] = first;
  for (int i = 0; i < n; i++) out[i + 1] = rest[i];
  return out;
}

static IrExpr *restage_expr(Restage *r, IrExpr *e) {
  if (!e) return NULL;
  switch (e->kind) {
    case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return e;
    case IR_LOAD: {
      IrExpr *x = ARENA_NEW(r->c->arena, IrExpr);
      *x = *e;
      x->u.load.idx = ARENA_ARRAY(r->c->arena, IrExpr *, e->u.load.nidx);
      for (int i = 0; i < e->u.load.nidx; i++) x->u.load.idx[i] = restage_expr(r, e->u.load.idx[i]);
      if (e->u.load.buf == r->from) {
        x->u.load.buf = r->to;
        x->u.load.idx = prepend(r->c, r->stage, x->u.load.idx, e->u.load.nidx);
        x->u.load.nidx++;
      }
      return x;
    }
    case IR_CALL: {
      IrExpr *x = ARENA_NEW(r->c->arena, IrExpr);
      *x = *e;
      x->u.call.args = ARENA_ARRAY(r->c->arena, IrExpr *, e->u.call.nargs);
      for (int i = 0; i < e->u.call.nargs; i++) x->u.call.args[i] = restage_expr(r, e->u.call.args[i]);
      return x;
    }
    default: {
      IrExpr *x = ARENA_NEW(r->c->arena, IrExpr);
      *x = *e;
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) x->u.ops[i] = restage_expr(r, e->u.ops[i]);
      return x;
    }
  }
}

static void restage_region(Restage *r, IrRegion *g) {
  if (g->buf != r->from) return;
  g->buf = r->to;
  g->min = prepend(r->c, r->stage, g->min, g->ndim);
  g->extent = prepend(r->c, i32(r->c, 1), g->extent, g->ndim);
  g->ndim++;
}

static IrStmt *restage_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  Restage *r = ctx;
  if (!s) return NULL;
  IrStmt *x = ir_map_children(c, s, restage_stmt, ctx);
  switch (x->kind) {
    case IR_S_STORE:
      x->u.store.value = restage_expr(r, x->u.store.value);
      {
        IrExpr **idx = ARENA_ARRAY(c->arena, IrExpr *, x->u.store.nidx);
        for (int i = 0; i < x->u.store.nidx; i++) idx[i] = restage_expr(r, x->u.store.idx[i]);
        x->u.store.idx = idx;
      }
      if (x->u.store.buf == r->from) {
        x->u.store.buf = r->to;
        x->u.store.idx = prepend(c, r->stage, x->u.store.idx, x->u.store.nidx);
        x->u.store.nidx++;
      }
      break;
    case IR_S_COPY: restage_region(r, &x->u.copy.src); restage_region(r, &x->u.copy.dst); break;
    case IR_S_FILL: restage_region(r, &x->u.fill.dst); x->u.fill.value = restage_expr(r, x->u.fill.value); break;
    case IR_S_GEMM:
      restage_region(r, &x->u.gemm.a);
      restage_region(r, &x->u.gemm.b);
      restage_region(r, &x->u.gemm.c);
      if (x->u.gemm.e.buf) restage_region(r, &x->u.gemm.e);
      break;
    case IR_S_ATOMIC:
      restage_region(r, &x->u.atomic.dst);
      if (x->u.atomic.tile) restage_region(r, &x->u.atomic.src);
      x->u.atomic.value = restage_expr(r, x->u.atomic.value);
      break;
    case IR_S_EVAL: x->u.eval.value = restage_expr(r, x->u.eval.value); break;
    case IR_S_LET: x = ir_let(c, x->u.let.var, restage_expr(r, x->u.let.value), x->loc); break;
    case IR_S_IF: x->u.if_.cond = restage_expr(r, x->u.if_.cond); break;
    case IR_S_FOR:
      x->u.loop.min = restage_expr(r, x->u.loop.min);
      x->u.loop.extent = restage_expr(r, x->u.loop.extent);
      break;
    case IR_S_REDUCE:
      TS_ASSERT(x->u.reduce.src != r->from && x->u.reduce.dst != r->from);
      break;
    default: break;
  }
  return x;
}

/* s with every access of `from` (loads, stores, tile regions) at `to`[stage, ...] (passes.h). */
IrStmt *pass_restage(TsCompiler *c, IrStmt *s, IrBuffer *from, IrBuffer *to, IrExpr *stage) {
  Restage r = {c, from, to, stage};
  return restage_stmt(c, s, &r);
}

/* ---- does a statement mention a buffer? --------------------------------------------------- */
typedef struct Uses { IrBuffer *buf; bool found; } Uses;
static void uses_expr(IrExpr *e, void *ctx) {
  Uses *u = ctx;
  if (e->kind == IR_LOAD && e->u.load.buf == u->buf) u->found = true;
}
static void uses_stmt(IrStmt *s, void *ctx) {
  Uses *u = ctx;
  if (s->kind == IR_S_STORE && s->u.store.buf == u->buf) u->found = true;
  IrOperand ops[IR_TILE_MAX_OPERANDS];
  for (int i = ir_tile_operands(s, ops) - 1; i >= 0; i--)
    if (ops[i].buf == u->buf) u->found = true;
}
static bool mentions(IrStmt *s, IrBuffer *b) {
  Uses u = {b, false};
  IrVisitor v = {uses_stmt, uses_expr, &u};
  ir_visit(s, &v);
  return u.found;
}

/* A device operation without operands (cp.async commit/wait<pending>, the proxy fence). */
static IrStmt *device_op(TsCompiler *c, IrDeviceOp op, int64_t attr, SrcLoc loc) {
  return ir_device_stmt(c, op, &attr, ir_device_info[op].nattrs, NULL, 0, loc);
}

static IrStmt *sync_threads(TsCompiler *c, SrcLoc loc) {
  return ir_eval(c, ir_call(c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, loc), loc);
}

/* Does anything in the kernel body other than `loop` touch b? */
static bool used_outside(IrStmt *s, IrStmt *loop, IrBuffer *b) {
  if (!s || s == loop) return false;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++)
        if (used_outside(s->u.seq.items[i], loop, b)) return true;
      return false;
    case IR_S_FOR: return used_outside(s->u.loop.body, loop, b);
    case IR_S_WHILE: return used_outside(s->u.while_.body, loop, b);
    case IR_S_IF: return used_outside(s->u.if_.then_s, loop, b) || used_outside(s->u.if_.else_s, loop, b);
    default: return mentions(s, b);
  }
}

/* Is b allocated inside s (a tile of one iteration: nothing to stage ahead into)? */
typedef struct AllocIn { const IrBuffer *b; bool found; } AllocIn;
static void alloc_in_stmt(IrStmt *s, void *ctx) {
  AllocIn *a = ctx;
  if (s->kind == IR_S_ALLOC && s->u.alloc.buf == a->b) a->found = true;
}
static bool allocated_in(IrStmt *s, const IrBuffer *b) {
  AllocIn a = {b, false};
  IrVisitor v = {alloc_in_stmt, NULL, &a};
  ir_visit(s, &v);
  return a.found;
}

/* st with the loop var replaced by k_expr (unless NULL) and every staged buffer indexed
 * at `stage`. */
static IrStmt *restage_all(Pipe *p, IrStmt *st, IrVar *k, IrExpr *k_expr, IrExpr *stage, IrBuffer **bufs,
                           IrBuffer **staged, int nb) {
  if (k_expr) st = ir_subst_stmt(p->c, st, &k, &k_expr, 1);
  for (int i = 0; i < nb; i++) {
    Restage r = {p->c, bufs[i], staged[i], stage};
    st = restage_stmt(p->c, st, &r);
  }
  return st;
}

static IrStmt *mark_async(IrStmt *st) {
  if (st->kind == IR_S_COPY) st->u.copy.async_ = true;
  if (st->kind == IR_S_FOR) st->u.loop.async_copy = true;
  return st;
}

/* The shared tile a producer of the pipeline fills: a T.copy from global memory (not a
 * T.Layout-remapped tensor: no contiguous rows for cp.async) or a gather nest; NULL for
 * anything else. */
static IrBuffer *producer_dst(TsCompiler *c, IrStmt *st, IrStmt *kbody) {
  if (st->kind == IR_S_COPY)
    return st->u.copy.src.buf->scope == IR_SCOPE_GLOBAL && !st->u.copy.src.buf->remap && pass_is_shared(st->u.copy.dst.buf)
               ? st->u.copy.dst.buf
               : NULL;
  return pass_gather_dst(c, st, kbody);
}

/* A body that commits cp.async groups itself (T.ptx_commit_group): the pipeline's own
 * commits would interleave with the user's, and its "wait_group D-1" would no longer mean
 * "stage k has landed". */
static void find_user_commit(IrExpr *e, void *ctx) {
  if (ir_is_device(e, IRD_CP_ASYNC_COMMIT)) *(bool *)ctx = true;
}
static bool commits_groups(IrStmt *body) {
  bool found = false;
  IrVisitor v = {NULL, find_user_commit, &found};
  ir_visit(body, &v);
  return found;
}

/* A T.wgmma_gemm (wg_wait != 0) in the body may still read its stage when the iteration ends:
 * that body refills a stage only at the next iteration's top, after its barrier (as before
 * the end-of-iteration refill), never right after its consumers. */
static void find_async_gemm(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_GEMM && s->u.gemm.wg_wait != 0) *(bool *)ctx = true;
}
static bool has_async_gemm(IrStmt *body) {
  bool found = false;
  IrVisitor v = {find_async_gemm, NULL, &found};
  ir_visit(body, &v);
  return found;
}

/* ---- the prefix: what runs stages ahead ---- */
#define PIPE_MAX_PRODUCERS 8
#define PIPE_MAX_LETS 16

/* A let whose value reads only constant memory: it can be computed for any iteration. */
static bool constant_let(const IrStmt *st, IrStmt *kbody) {
  return st->kind == IR_S_LET && pass_reads_constant_memory(st->u.let.value, kbody);
}

/* Does statement s read only buffers `keeps` accepts (its loads, and a copy's source)? */
typedef struct ReadCheck {
  IrStmt *scope;
  bool (*keeps)(IrStmt *scope, const IrBuffer *b);
  bool ok;
} ReadCheck;
static void read_check_expr(IrExpr *e, void *ctx) {
  ReadCheck *rc = ctx;
  if (e->kind == IR_LOAD && rc->ok && !rc->keeps(rc->scope, e->u.load.buf)) rc->ok = false;
}
static void read_check_stmt(IrStmt *s, void *ctx) {
  ReadCheck *rc = ctx;
  if (s->kind == IR_S_COPY && rc->ok && !rc->keeps(rc->scope, s->u.copy.src.buf)) rc->ok = false;
}
static bool reads_only(IrStmt *s, IrStmt *scope, bool (*keeps)(IrStmt *, const IrBuffer *)) {
  ReadCheck rc = {scope, keeps, true};
  IrVisitor v = {read_check_stmt, read_check_expr, &rc};
  ir_visit(s, &v);
  return rc.ok;
}

/* Does the producer read only memory the loop never writes (its source, and any index it
 * loads: a T.alloc_var the body advances, a shared index tile it refills)?  Run stages ahead,
 * it would read those before this iteration's writes. */
static bool unwritten(IrStmt *loop_body, const IrBuffer *b) { return !pass_may_write(loop_body, b); }
static bool reads_loop_invariant(IrStmt *st, IrStmt *loop_body) { return reads_only(st, loop_body, unwritten); }

/* The leading statements of a loop body that a pipeline runs stages ahead: producers
 * (producer_dst) reading what the loop does not write, and lets they may use
 * (`kv_start = block_table[...] * 64`), whose values read only constant memory, up to the
 * last producer.  Fills bufs (*nb) with the producers' tiles; returns the prefix length (0: no
 * producer leads the body). */
static int scan_prefix(TsCompiler *c, IrStmt **items, int n, IrStmt *kbody, IrStmt *loop_body, IrBuffer **bufs,
                       int *nb) {
  int end = 0, lets = 0;
  for (int i = 0; i < n; i++) {
    IrStmt *st = items[i];
    if (lets < PIPE_MAX_LETS && constant_let(st, kbody)) {
      lets++;
      continue;
    }
    IrBuffer *b = *nb < PIPE_MAX_PRODUCERS ? producer_dst(c, st, kbody) : NULL;
    if (!b || !reads_loop_invariant(st, loop_body)) break;
    bufs[(*nb)++] = b;
    end = i + 1;
  }
  return end;
}

/* Does s use one of the lets that body items[from..to) define? */
typedef struct LetUse { IrStmt **items; int from, to; bool found; } LetUse;
static void let_use_expr(IrExpr *e, void *ctx) {
  LetUse *u = ctx;
  if (e->kind != IR_VAR || e->u.var->kind != IR_VAR_LET) return;
  for (int i = u->from; i < u->to; i++)
    if (u->items[i]->kind == IR_S_LET && u->items[i]->u.let.var == e->u.var) u->found = true;
}
static bool uses_body_let(IrStmt *s, IrStmt **items, int from, int to) {
  LetUse u = {items, from, to, false};
  IrVisitor v = {NULL, let_use_expr, &u};
  ir_visit(s, &v);
  return u.found;
}

/* The lets of body items[np..i) that statement s uses, directly or through each other:
 * true (each marked in lets[]) when every one reads only constant memory, so it can be
 * computed ahead with s; false when one cannot. */
static bool hoist_lets(IrStmt **items, int np, int i, IrStmt *s, IrStmt *kbody, bool *lets) {
  for (int j = i - 1; j >= np; j--) {
    if (items[j]->kind != IR_S_LET || !uses_body_let(s, items, j, j + 1)) continue;
    if (!constant_let(items[j], kbody) || !hoist_lets(items, np, j, items[j], kbody, lets)) return false;
    lets[j] = true;
  }
  return true;
}

/* Is everything the statement reads constant memory (the body before it cannot have written
 * what it reads stages ahead: not its source, not an index it reads from shared memory)? */
static bool reads_constant_source(IrStmt *s, IrStmt *kbody) { return reads_only(s, kbody, pass_constant_buffer); }

/* Can items[i], further down the body than the prefix items[0..np), run stages ahead too
 * (the V tile of an attention loop, copied after the softmax)?  It must be a producer whose
 * tile no statement before it in the body touches (those would see the previous
 * iteration's tile), reading tensors the kernel never writes, using only lets of the body
 * that can run ahead too (hoist_lets marks them in lets[]).  Adds its tile to bufs. */
static bool late_producer(TsCompiler *c, IrStmt **items, int np, int i, IrStmt *kbody, IrBuffer **bufs, int *nb,
                          bool *lets) {
  IrBuffer *b = *nb < PIPE_MAX_PRODUCERS ? producer_dst(c, items[i], kbody) : NULL;
  if (!b || !reads_constant_source(items[i], kbody) || !hoist_lets(items, np, i, items[i], kbody, lets)) return false;
  for (int j = np; j < i; j++)
    if (mentions(items[j], b)) return false;
  bufs[(*nb)++] = b;
  return true;
}

/* What runs stages ahead: the body's leading lets (`outer`, before a guard), the guard (a
 * test of constant memory around the body, or NULL) and the producers with the lets among
 * them (`prod`), writing tiles `bufs` staged as `staged`. */
typedef struct Prefix {
  IrStmt **outer;
  int nouter;
  IrExpr *guard;
  IrStmt **prod;
  int nprod;
  IrBuffer **bufs, **staged;
  int nb;
} Prefix;

/* Statement list items[0..n) for iteration k_expr into stage `stage`: each let under a fresh
 * name (the consumers keep the originals, computed for their own iteration; *nl renames so
 * far), each producer staged and asynchronous. */
static void emit_items(Pipe *p, const Prefix *pf, IrStmt **items, int n, IrVar *k, IrExpr *k_expr, IrExpr *stage,
                       IrVar **from, IrExpr **to, int *nl, PtrVec *out) {
  TsCompiler *c = p->c;
  for (int i = 0; i < n; i++) {
    IrStmt *st = *nl ? ir_subst_stmt(c, items[i], from, to, *nl) : items[i];
    if (st->kind != IR_S_LET) {
      vec_push(c->arena, out, mark_async(restage_all(p, st, k, k_expr, stage, pf->bufs, pf->staged, pf->nb)));
      continue;
    }
    IrVar *old = items[i]->u.let.var, *nv = ir_var(c, old->name, old->dtype, IR_VAR_LET, st->loc);
    IrExpr *v = ir_subst(c, st->u.let.value, &k, &k_expr, 1);
    nv->let_value = v;
    vec_push(c->arena, out, ir_let(c, nv, v, st->loc));
    from[*nl] = old;
    to[(*nl)++] = ir_varref(c, nv, st->loc);
  }
}

/* The prefix for iteration k_expr into stage `stage`, the producers under the guard. */
static void emit_prefix(Pipe *p, const Prefix *pf, IrVar *k, IrExpr *k_expr, IrExpr *stage, PtrVec *out) {
  TsCompiler *c = p->c;
  /* (one rename per let of the prefix: at most every statement of it) */
  IrVar **from = ARENA_ARRAY(c->arena, IrVar *, pf->nouter + pf->nprod);
  IrExpr **to = ARENA_ARRAY(c->arena, IrExpr *, pf->nouter + pf->nprod);
  int nl = 0;
  emit_items(p, pf, pf->outer, pf->nouter, k, k_expr, stage, from, to, &nl, out);
  if (!pf->guard) {
    emit_items(p, pf, pf->prod, pf->nprod, k, k_expr, stage, from, to, &nl, out);
    return;
  }
  PtrVec in = {0};
  emit_items(p, pf, pf->prod, pf->nprod, k, k_expr, stage, from, to, &nl, &in);
  IrExpr *g = ir_subst(c, nl ? ir_subst(c, pf->guard, from, to, nl) : pf->guard, &k, &k_expr, 1);
  vec_push(c->arena, out, ir_if(c, g, ir_seq_vec(c, &in, pf->guard->loc), NULL, pf->guard->loc));
}

/* The statements of *s: a SEQ's items, or *s alone. */
static IrStmt **stmt_items(IrStmt **s, int *n) {
  if (*s && (*s)->kind == IR_S_SEQ) {
    *n = (*s)->u.seq.n;
    return (*s)->u.seq.items;
  }
  *n = 1;
  return s;
}

/* A statement that only fills registers: T.copy into a fragment or local buffer from global
 * memory the kernel never writes, or T.fill / T.clear of one.  It touches no shared memory,
 * so it may run before the loop's wait and barrier. */
static bool is_register(const IrBuffer *b) {
  return b->scope == IR_SCOPE_FRAGMENT || b->scope == IR_SCOPE_LOCAL;
}
static bool register_fill(const IrStmt *s, IrStmt *kbody) {
  if (s->kind == IR_S_FILL) return is_register(s->u.fill.dst.buf);
  return s->kind == IR_S_COPY && s->u.copy.src.buf->scope == IR_SCOPE_GLOBAL && is_register(s->u.copy.dst.buf) &&
         pass_constant_buffer(kbody, s->u.copy.src.buf);
}

/* ---- one cp.async group per refill point ----------------------------------------------- */
/* A body with several staged tiles used at different points (attention: K by QKᵀ, V by PV)
 * gives each tile's loads their own commit group, grouped by where the tile's last use is:
 * the consumers wait for a tile just before its first use (not for V before QKᵀ), and a
 * tile is refilled right after its last use (K of iteration k + S during the softmax), as
 * TileLang's schedule does.  With G groups per iteration committed in order of their refill
 * points, the loads of iteration t group g are the (t * G + g)-th group ever committed; at a
 * point of iteration k where r groups were refilled, the ones committed after group g of
 * iteration k number S * G + r - g - 1: the wait_group count that means "landed". */
typedef struct Groups {
  int G;       /* groups per iteration */
  int *group;  /* per staged tile: its group */
  int *first;  /* per staged tile: the consumer before which it is waited for (-1: none) */
  int *last;   /* per group: the consumer after which it is refilled */
  Prefix *pre; /* per group: its producers and the lets before them (group_prefixes) */
} Groups;

/* Is b reached through a view (T.view / T.reshape) anywhere in the kernel?  Its uses then
 * hide behind another buffer: waited for before every consumer, refilled after all. */
typedef struct ViewOf { const IrBuffer *b; bool found; } ViewOf;
static void view_of_stmt(IrStmt *s, void *ctx) {
  ViewOf *v = ctx;
  if (s->kind == IR_S_ALLOC && s->u.alloc.buf->alias_of == v->b) v->found = true;
}
static bool has_views(IrStmt *kbody, const IrBuffer *b) {
  ViewOf v = {b, false};
  IrVisitor vis = {view_of_stmt, NULL, &v};
  ir_visit(kbody, &vis);
  return v.found;
}

/* Each staged tile's first and last use among cons[lead..n), its group by last use. */
static Groups plan_groups(TsCompiler *c, IrStmt *kbody, IrStmt **cons, int lead, int n, IrBuffer **bufs, int nb) {
  Groups g = {0, ARENA_ARRAY(c->arena, int, nb), ARENA_ARRAY(c->arena, int, nb), ARENA_ARRAY(c->arena, int, nb), NULL};
  int *last = ARENA_ARRAY(c->arena, int, nb);
  for (int j = 0; j < nb; j++) {
    g.first[j] = -1;
    last[j] = n - 1;
    if (has_views(kbody, bufs[j])) {
      g.first[j] = lead;
      continue;
    }
    for (int i = lead; i < n; i++)
      if (mentions(cons[i], bufs[j])) {
        if (g.first[j] < 0) g.first[j] = i;
        last[j] = i;
      }
  }
  /* A refill point is a T.gemm (or the body's end): a tile last read elsewhere (a small
   * tile copied to registers) is refilled with the next GEMM's operands, so the barriers
   * the groups cost stay one pair per GEMM. */
  for (int j = 0; j < nb; j++)
    while (last[j] < n - 1 && cons[last[j]]->kind != IR_S_GEMM) last[j]++;
  for (int i = lead; i < n; i++) { /* the distinct refill points, in body order, are the groups */
    bool any = false;
    for (int j = 0; j < nb; j++)
      if (last[j] == i) g.group[j] = g.G, any = true;
    if (any) g.last[g.G++] = i;
  }
  return g;
}

/* g->pre: the prefix restricted to each group, its producers and the lets before them. */
static void group_prefixes(TsCompiler *c, const Prefix *pf, Groups *g, IrStmt *kbody) {
  int *grp_of = ARENA_ARRAY(c->arena, int, pf->nprod); /* per prefix item: its group, -1 for a let */
  for (int i = 0; i < pf->nprod; i++) {
    IrBuffer *b = pf->prod[i]->kind == IR_S_LET ? NULL : producer_dst(c, pf->prod[i], kbody);
    grp_of[i] = -1;
    for (int j = 0; j < pf->nb; j++)
      if (b == pf->bufs[j]) grp_of[i] = g->group[j];
  }
  g->pre = ARENA_ARRAY(c->arena, Prefix, g->G);
  for (int grp = 0; grp < g->G; grp++) {
    Prefix *q = &g->pre[grp];
    *q = *pf;
    q->prod = ARENA_ARRAY(c->arena, IrStmt *, pf->nprod);
    q->nprod = 0;
    int end = 0;
    for (int i = 0; i < pf->nprod; i++)
      if (grp_of[i] == grp) end = i + 1;
    for (int i = 0; i < end; i++)
      if (grp_of[i] < 0 || grp_of[i] == grp) q->prod[q->nprod++] = pf->prod[i];
  }
}

/* `if (in_range) { group grp for iteration k_expr into stage }; commit`. */
static IrStmt *issue_group(Pipe *p, const Prefix *pg, IrVar *k, IrExpr *k_expr, IrExpr *stage, IrExpr *in_range,
                           SrcLoc loc) {
  TsCompiler *c = p->c;
  PtrVec v = {0};
  emit_prefix(p, pg, k, k_expr, stage, &v);
  return ir_seq(c, (IrStmt *[]){ir_if(c, in_range, ir_seq_vec(c, &v, loc), NULL, loc), device_op(c, IRD_CP_ASYNC_COMMIT, 0, loc)},
                2, loc);
}

/* wait_group `pending`, then a barrier.  On sm_90a the staged tiles may feed wgmma, which
 * reads through the async proxy: each thread fences its completed cp.async writes before the
 * barrier hands them over. */
static void push_wait(TsCompiler *c, int pending, SrcLoc loc, PtrVec *out) {
  vec_push(c->arena, out, device_op(c, IRD_CP_ASYNC_WAIT, pending, loc));
  if (c->target.sm >= 90 && c->target.arch_a) vec_push(c->arena, out, device_op(c, IRD_FENCE_PROXY_ASYNC, 0, loc));
  vec_push(c->arena, out, sync_threads(c, loc));
}

/* The loop state the grouped schedule builds from. */
typedef struct GroupLoop {
  Pipe *p;
  IrVar *k;
  int S;
  IrExpr *cur_stage, *ahead, *ahead_stage, *in_range;
  SrcLoc loc;
} GroupLoop;

/* The consumers cons[lead..n) of iteration k with each group's wait before the first use of
 * its tiles and its refill (k + S, after a barrier) after its last use. */
static void grouped_consumers(GroupLoop *gl, const Prefix *pf, const Groups *g, IrStmt **cons, int lead, int n,
                              PtrVec *mb) {
  TsCompiler *c = gl->p->c;
  int refilled = 0, waited = -1; /* groups refilled so far; the newest group waited for */
  for (int i = lead; i < n; i++) {
    int need = -1;
    for (int j = 0; j < pf->nb; j++)
      if (g->first[j] == i && g->group[j] > need) need = g->group[j];
    if (need > waited) {
      push_wait(c, gl->S * g->G + refilled - need - 1, gl->loc, mb);
      waited = need;
    }
    vec_push(c->arena, mb, restage_all(gl->p, cons[i], gl->k, NULL, gl->cur_stage, pf->bufs, pf->staged, pf->nb));
    for (int grp = 0; grp < g->G; grp++) {
      if (g->last[grp] != i) continue;
      vec_push(c->arena, mb, sync_threads(c, gl->loc)); /* every thread is done with its stage */
      vec_push(c->arena, mb, issue_group(gl->p, &g->pre[grp], gl->k, gl->ahead, gl->ahead_stage, gl->in_range, gl->loc));
      refilled++;
    }
  }
}

/* The prologue: stages 0 .. D-1 issued, one commit per stage, or per group and stage. */
static IrStmt *prologue(Pipe *p, const Prefix *pf, const Groups *g, IrVar *k, IrExpr *m0, IrExpr *ext, int D,
                        SrcLoc loc) {
  TsCompiler *c = p->c;
  IrVar *sv = ir_var(c, "stage", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *svr = ir_varref(c, sv, loc);
  IrExpr *sv_k = ir_binary(c, IR_ADD, m0, svr, loc), *sv_in = ir_binary(c, IR_LT, svr, ext, loc);
  PtrVec pro = {0};
  if (!g->G) {
    emit_prefix(p, pf, k, sv_k, svr, &pro);
    IrStmt *body = ir_seq(c, (IrStmt *[]){ir_if(c, sv_in, ir_seq_vec(c, &pro, loc), NULL, loc), device_op(c, IRD_CP_ASYNC_COMMIT, 0, loc)}, 2, loc);
    return ir_for(c, sv, i32(c, 0), i32(c, D), IR_FOR_UNROLLED, body, loc);
  }
  for (int grp = 0; grp < g->G; grp++) vec_push(c->arena, &pro, issue_group(p, &g->pre[grp], k, sv_k, svr, sv_in, loc));
  return ir_for(c, sv, i32(c, 0), i32(c, D), IR_FOR_UNROLLED, ir_seq_vec(c, &pro, loc), loc);
}

/* Pipelines one loop; returns NULL to keep it as written. */
static IrStmt *pipeline_loop(Pipe *p, IrStmt *kbody, IrStmt *s) {
  TsCompiler *c = p->c;
  int S = s->u.loop.num_stages;
  if (S < 2 || commits_groups(s->u.loop.body)) return NULL;
  IrStmt *body = s->u.loop.body, *inner = NULL;
  int n;
  IrStmt **items = stmt_items(&body, &n);
  /* A body guarded by a test of constant memory (`if block_mask[k]:`, after lets such as
   * `i_s = block_indices[i]`): the producers inside run ahead under the test for their own
   * iteration, the consumers under this iteration's. */
  int nouter = 0;
  IrExpr *guard = NULL;
  while (nouter < n && nouter < PIPE_MAX_LETS && constant_let(items[nouter], kbody)) nouter++;
  IrStmt **outer = items;
  if (nouter == n - 1 && items[n - 1]->kind == IR_S_IF && !items[n - 1]->u.if_.else_s &&
      pass_reads_constant_memory(items[n - 1]->u.if_.cond, kbody)) {
    guard = items[n - 1]->u.if_.cond;
    inner = items[n - 1]->u.if_.then_s;
    items = stmt_items(&inner, &n);
  } else {
    nouter = 0;
  }
  IrBuffer *bufs[PIPE_MAX_PRODUCERS], *staged[PIPE_MAX_PRODUCERS];
  int nb = 0, np = scan_prefix(c, items, n, kbody, s->u.loop.body, bufs, &nb);
  /* the producers further down the body join the prefix; the rest are the consumers */
  IrStmt **prod = ARENA_ARRAY(c->arena, IrStmt *, n), **cons = ARENA_ARRAY(c->arena, IrStmt *, n);
  int nprod = np, ncons = 0;
  bool *lets = ARENA_ARRAY(c->arena, bool, n), *late = ARENA_ARRAY(c->arena, bool, n);
  for (int i = 0; i < np; i++) prod[i] = items[i];
  for (int i = np; i < n; i++) late[i] = late_producer(c, items, np, i, kbody, bufs, &nb, lets);
  /* the lets a late producer needs run ahead with it (and stay, for the consumers) */
  for (int i = np; i < n; i++) {
    if (lets[i] || late[i]) prod[nprod++] = items[i];
    if (!late[i]) cons[ncons++] = items[i];
  }
  if (nb == 0 || ncons == 0) return NULL;
  for (int i = 0; i < nb; i++) {
    IrBuffer *b = bufs[i];
    for (int j = 0; j < i; j++)
      if (bufs[j] == b) return NULL; /* two copies into one buffer: leave it alone */
    if (b->ndim > 6 || ir_buffer_numel(b) < 0 || b->alias_of || used_outside(kbody, s, b) ||
        allocated_in(s->u.loop.body, b))
      return NULL;
  }
  for (int i = 0; i < nb; i++) {
    IrBuffer *b = bufs[i], *x = ARENA_NEW(c->arena, IrBuffer);
    *x = *b;
    x->ndim = b->ndim + 1;
    x->shape = prepend(c, i32(c, S), b->shape, b->ndim);
    x->strides = NULL;
    staged[i] = x;
    vec_push(c->arena, &p->from, b);
    vec_push(c->arena, &p->to, x);
  }
  IrVar *k = s->u.loop.var;
  IrExpr *m0 = s->u.loop.min, *ext = s->u.loop.extent;
  SrcLoc loc = s->loc;
  PtrVec out = {0};
  /* A lone T.gemm on sm_90a keeps one wgmma group in flight across iterations; the stage
   * it may still be reading is then off limits too, so copies run D = S-2 ahead. */
  bool lone_gemm = !guard && ncons == 1 && cons[0]->kind == IR_S_GEMM && cons[0]->u.gemm.wg_wait == 0;
  bool overlap = lone_gemm && S >= 4 && c->target.sm == 90 && c->target.arch_a; /* D >= 2 */
  /* Any other body refills a stage right after its consumers are done with it (a barrier
   * between), so all S stages are in flight while the loop waits for one. */
  bool refill_at_end = !lone_gemm && !has_async_gemm(s->u.loop.body);
  int D = overlap ? S - 2 : refill_at_end ? S : S - 1;

  /* the leading register fills (a mask's T.copy into a fragment, T.clear) go before the
   * wait, so their loads are in flight while it waits (TileLang orders them so too) */
  int lead = 0;
  while (refill_at_end && !guard && lead < ncons && register_fill(cons[lead], kbody)) lead++;
  Prefix pf = {outer, nouter, guard, prod, nprod, bufs, staged, nb};
  /* without a guard, one commit group per refill point (Groups) */
  Groups groups = {0};
  if (refill_at_end && !guard) groups = plan_groups(c, kbody, cons, lead, ncons, bufs, nb);
  if (groups.G) group_prefixes(c, &pf, &groups, kbody);

  vec_push(c->arena, &out, prologue(p, &pf, &groups, k, m0, ext, D, loc));

  /* Main loop. */
  IrExpr *kv = ir_varref(c, k, loc);
  IrExpr *it = ir_binary(c, IR_SUB, kv, m0, loc);
  IrExpr *ahead = ir_binary(c, IR_ADD, kv, i32(c, D), loc);
  IrExpr *ahead_stage = ir_binary(c, IR_FLOORMOD, ir_binary(c, IR_ADD, it, i32(c, D), loc), i32(c, S), loc);
  IrExpr *cur_stage = ir_binary(c, IR_FLOORMOD, it, i32(c, S), loc);
  PtrVec mb = {0}, issued = {0};
  PtrVec inner_lets = {0}; /* the prefix's lets for this iteration's consumers */
  for (int i = 0; i < nouter; i++) vec_push(c->arena, &mb, outer[i]);
  for (int i = 0; i < np; i++)
    if (items[i]->kind == IR_S_LET) vec_push(c->arena, guard ? &inner_lets : &mb, items[i]);
  for (int i = 0; i < lead; i++) vec_push(c->arena, &mb, cons[i]);
  IrExpr *in_range = ir_binary(c, IR_LT, ir_binary(c, IR_ADD, it, i32(c, D), loc), ext, loc);
  IrStmt *final_wait = NULL;
  if (groups.G) {
    GroupLoop gl = {p, k, S, cur_stage, ahead, ahead_stage, in_range, loc};
    grouped_consumers(&gl, &pf, &groups, cons, lead, ncons, &mb);
  } else {
    push_wait(c, D - 1, loc, &mb);
    emit_prefix(p, &pf, k, ahead, ahead_stage, &issued);
    IrStmt *issue = ir_seq(c, (IrStmt *[]){ir_if(c, in_range, ir_seq_vec(c, &issued, loc), NULL, loc),
                                           device_op(c, IRD_CP_ASYNC_COMMIT, 0, loc)},
                           2, loc);
    if (lone_gemm) {
      /* A lone T.gemm: issue the tensor-core work first, then the copies of stage k+D
       * (into a stage no MMA still reads: the barrier above follows every thread's wait),
       * then wait for the MMAs — all of them, or all but this iteration's group when
       * overlapping — so the copy instructions and the next barrier overlap the wgmma. */
      IrStmt *g = restage_all(p, cons[0], k, NULL, cur_stage, bufs, staged, nb);
      g->u.gemm.wg_wait = -1;
      vec_push(c->arena, &mb, g);
      vec_push(c->arena, &mb, issue);
      vec_push(c->arena, &mb, pass_gemm_half(c, g, overlap ? -3 : -2));
      if (overlap) final_wait = pass_gemm_half(c, g, -2);
    } else {
      PtrVec *cv = guard ? &inner_lets : &mb;
      if (!refill_at_end) vec_push(c->arena, &mb, issue); /* stage (k - 1) % S, after the barrier above */
      for (int i = lead; i < ncons; i++) vec_push(c->arena, cv, restage_all(p, cons[i], k, NULL, cur_stage, bufs, staged, nb));
      if (guard) vec_push(c->arena, &mb, ir_if(c, guard, ir_seq_vec(c, &inner_lets, loc), NULL, loc));
      if (refill_at_end) {
        /* every thread is done with stage k % S (= (k + S) % S): refill it */
        vec_push(c->arena, &mb, sync_threads(c, loc));
        vec_push(c->arena, &mb, issue);
      }
    }
  }
  IrStmt *main_loop = ir_for(c, k, m0, ext, IR_FOR_SERIAL, ir_seq_vec(c, &mb, loc), loc);
  vec_push(c->arena, &out, main_loop);
  if (final_wait) vec_push(c->arena, &out, final_wait);
  /* Nothing may be left in flight when the staged buffers' memory is reused. */
  vec_push(c->arena, &out, device_op(c, IRD_CP_ASYNC_WAIT, 0, loc));
  return ir_seq_vec(c, &out, loc);
}

/* ---- asynchronous prologue loads ------------------------------------------------------- */
/* The run of T.copy statements from global memory into shared tiles that opens a kernel body
 * (after allocations, lets of constant memory and register fills: nothing has touched shared memory yet, so no
 * tile, nor memory merge_shared_memory may later share with one, is still being read) is
 * issued as cp.async and waited for once after the run: all of its loads are in flight
 * together without holding registers (layernorm's X, gamma and beta: synchronous load/store
 * pairs keep only as many in flight as ptxas's register budget allows; an attention
 * kernel's Q). */
static bool before_shared(const IrStmt *st, IrStmt *kbody) {
  /* (a let that reads mutable memory may be an acquire the copies must follow) */
  return st->kind == IR_S_ALLOC || constant_let(st, kbody) || (st->kind == IR_S_FILL && register_fill(st, kbody));
}

static bool prologue_copy(TsCompiler *c, IrStmt *kbody, IrStmt *st) {
  IrBuffer *b = st->kind == IR_S_COPY ? producer_dst(c, st, kbody) : NULL;
  return b && !b->alias_of && !has_views(kbody, b);
}

static IrStmt *async_prologue(TsCompiler *c, IrStmt *kbody) {
  if (!kbody || kbody->kind != IR_S_SEQ) return kbody;
  IrStmt **items = kbody->u.seq.items;
  int n = kbody->u.seq.n, i = 0, j;
  while (i < n && before_shared(items[i], kbody)) i++;
  for (j = i; j < n && prologue_copy(c, kbody, items[j]);) j++;
  if (j == i) return kbody;
  PtrVec out = {0};
  for (int k = 0; k < n; k++) {
    if (k < i || k >= j) {
      vec_push(c->arena, &out, items[k]);
    } else {
      IrStmt *cp = ir_stmt(c, IR_S_COPY, items[k]->loc);
      *cp = *items[k];
      vec_push(c->arena, &out, mark_async(cp));
    }
    if (k == j - 1) {
      vec_push(c->arena, &out, device_op(c, IRD_CP_ASYNC_COMMIT, 0, items[k]->loc));
      push_wait(c, 0, items[k]->loc, &out);
    }
  }
  return ir_seq_vec(c, &out, kbody->loc);
}

typedef struct Walk { Pipe *p; IrStmt *kbody; } Walk;

static IrStmt *pipe_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  Walk *w = ctx;
  if (!s) return NULL;
  if (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PIPELINED) {
    IrStmt *r = pipeline_loop(w->p, w->kbody, s);
    if (r) return r;
  }
  return ir_map_children(c, s, pipe_stmt, ctx);
}

/* ALLOC of a staged buffer -> ALLOC of its staged copy. */
static IrStmt *swap_allocs(TsCompiler *c, IrStmt *s, void *ctx) {
  Pipe *p = ctx;
  if (!s) return NULL;
  if (s->kind == IR_S_ALLOC) {
    for (int i = 0; i < p->from.len; i++)
      if (s->u.alloc.buf == p->from.items[i]) {
        IrStmt *r = ir_stmt(c, IR_S_ALLOC, s->loc);
        r->u.alloc.buf = p->to.items[i];
        return r;
      }
    return s;
  }
  return ir_map_children(c, s, swap_allocs, ctx);
}

static IrStmt *walk_kernels(TsCompiler *c, IrStmt *s, void *ctx) {
  (void)ctx;
  if (!s) return NULL;
  if (s->kind == IR_S_KERNEL) {
    /* T.ws: the kernel schedules its warpgroups (and its loads) itself; T.Pipelined loops
     * in it run as written (TileLang leaves such loops to the user's barriers too) */
    if (s->u.kernel.manual_ws) return s;
    Pipe p = {c, {0}, {0}};
    Walk w = {&p, s->u.kernel.body};
    IrStmt *r = ir_stmt(c, IR_S_KERNEL, s->loc);
    *r = *s;
    r->u.kernel.body = pipe_stmt(c, s->u.kernel.body, &w);
    if (p.from.len) r->u.kernel.body = swap_allocs(c, r->u.kernel.body, &p);
    /* (not a warp-specialized kernel: its producer loads the tiles it needs) */
    if (!r->u.kernel.producer_threads) r->u.kernel.body = async_prologue(c, r->u.kernel.body);
    return r;
  }
  if (s->kind == IR_S_SEQ) return ir_map_children(c, s, walk_kernels, ctx);
  return s;
}

void pass_inject_pipeline(TsCompiler *c, IrFunc *f) {
  if (c->target.sm < 80) return; /* cp.async needs sm_80; older targets keep serial loops */
  f->body = walk_kernels(c, f->body, NULL);
}
