/* flat_fragment_index.c — before layout inference: fragments that T.Parallel nests index with a
 * flattening of the nest's variables (`B[i * n + j]` in T.Parallel(m, n), TileLang's composable
 * indices).  A flattening is a sum of distinct nest variables (each from 0) times constant
 * strides, the smallest 1, each other the next smaller one times that variable's extent, and
 * the largest times its extent the fragment's extent along that dim.
 *
 *   unflatten: when every access of the fragment is such a flattening (always into the same
 *   extents) or a plain nest variable over the whole dim (`B[k]` in T.Parallel(m * n)), the
 *   fragment takes the split shape (m, n): the flattened accesses become B[i, j], and each nest
 *   of a plain variable k gets k split into two loops (k = a * n + b), which may in turn make
 *   other fragments' indices flattenings (repeated until nothing changes);
 *   otherwise, per nest: the flattened accesses go through a reshape view of the fragment
 *   (`B_flat0[i, j]`, the view T.reshape makes: the same registers), whose layout
 *   layout inference merges into the fragment's where the layout allows (sync_views).
 *
 * Either way layout inference then sees nests that index fragments with their variables. */
#include "passes.h"

typedef struct Term {
  IrVar *var;
  int64_t stride, extent;
} Term;

static int nest_dim(const ParNest *nest, const IrVar *v) {
  for (int q = 0; q < nest->n; q++)
    if (nest->var[q] == v && nest->min[q] == 0) return q;
  return -1;
}

/* e's terms (var, stride) into t[*n]; false when e is not a sum of such terms. */
static bool collect_terms(const ParNest *nest, const IrExpr *e, Term *t, int *n) {
  if (e->kind == IR_ADD)
    return collect_terms(nest, e->u.ops[0], t, n) && collect_terms(nest, e->u.ops[1], t, n);
  const IrExpr *v = e;
  int64_t stride = 1;
  if (e->kind == IR_MUL) {
    if (ir_is_const_int(e->u.ops[1], &stride)) v = e->u.ops[0];
    else if (ir_is_const_int(e->u.ops[0], &stride)) v = e->u.ops[1];
    else return false;
  }
  int q = v->kind == IR_VAR ? nest_dim(nest, v->u.var) : -1;
  if (q < 0 || *n == FRAG_MAX_DIMS || stride < 1) return false;
  for (int k = 0; k < *n; k++)
    if (t[k].var == v->u.var) return false;
  t[(*n)++] = (Term){v->u.var, stride, nest->extent[q]};
  return true;
}

/* Whether idx (into a dim of `extent` elements) is a flattening; t[0..*n) then runs from the
 * largest stride to 1. */
static bool flattening(const ParNest *nest, const IrExpr *idx, int64_t extent, Term *t, int *n) {
  *n = 0;
  if (!nest || idx->kind != IR_ADD || !collect_terms(nest, idx, t, n) || *n < 2) return false;
  for (int a = 1; a < *n; a++) /* by stride, largest first */
    for (int b = a; b > 0 && t[b].stride > t[b - 1].stride; b--) {
      Term x = t[b];
      t[b] = t[b - 1];
      t[b - 1] = x;
    }
  if (t[*n - 1].stride != 1) return false;
  for (int k = 0; k + 1 < *n; k++)
    if (t[k].stride != t[k + 1].stride * t[k + 1].extent) return false;
  return t[0].stride * t[0].extent == extent;
}

/* ---- a walk over every fragment access, with the nest it is in (or none) ------------------ */
typedef void (*AccessFn)(void *ctx, const ParNest *nest, IrBuffer *b, IrExpr **idx, int nidx, IrStmt *store,
                         IrExpr *load);
typedef struct Walk {
  const ParNest *nest;
  AccessFn fn;
  void (*other)(void *ctx, IrBuffer *b); /* a fragment used another way (tile op, view, vector) */
  void *ctx;
} Walk;

static void walk_load(IrExpr *e, void *ctx) {
  Walk *w = ctx;
  if (e->kind != IR_LOAD || e->u.load.buf->scope != IR_SCOPE_FRAGMENT) return;
  if (e->lanes != 1) w->other(w->ctx, e->u.load.buf);
  else w->fn(w->ctx, w->nest, e->u.load.buf, e->u.load.idx, e->u.load.nidx, NULL, e);
}

static void walk_stmt(Walk *w, IrStmt *s);

static void walk_exprs(Walk *w, IrExpr *const *e, int n) {
  IrVisitor v = {NULL, walk_load, w};
  for (int i = 0; i < n; i++)
    if (e[i]) ir_visit_expr(e[i], &v);
}

/* A nest layout inference will refuse (run-time bounds, too deep) is walked as plain loops. */
static void walk_nest(Walk *w, IrStmt *s) {
  ParNest nest;
  if (!pass_parallel_nest_quiet(s, &nest)) {
    walk_stmt(w, s->u.loop.body);
    return;
  }
  const ParNest *outer = w->nest;
  w->nest = &nest;
  walk_stmt(w, nest.body);
  w->nest = outer;
}

static void walk_stmt(Walk *w, IrStmt *s) {
  if (!s) return;
  IrOperand ops[IR_TILE_MAX_OPERANDS];
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) walk_stmt(w, s->u.seq.items[i]);
      return;
    case IR_S_KERNEL: walk_stmt(w, s->u.kernel.body); return;
    case IR_S_FOR:
      walk_exprs(w, (IrExpr *[]){s->u.loop.min, s->u.loop.extent}, 2);
      if (s->u.loop.kind == IR_FOR_PARALLEL && !w->nest) walk_nest(w, s);
      else walk_stmt(w, s->u.loop.body);
      return;
    case IR_S_IF:
      walk_exprs(w, &s->u.if_.cond, 1);
      walk_stmt(w, s->u.if_.then_s);
      walk_stmt(w, s->u.if_.else_s);
      return;
    case IR_S_WHILE:
      walk_exprs(w, &s->u.while_.cond, 1);
      walk_stmt(w, s->u.while_.body);
      return;
    case IR_S_LET: walk_exprs(w, &s->u.let.value, 1); return;
    case IR_S_EVAL: walk_exprs(w, &s->u.eval.value, 1); return;
    case IR_S_ASSERT: walk_exprs(w, &s->u.assert_.cond, 1); return;
    case IR_S_ALLOC:
      if (s->u.alloc.buf->alias_of) w->other(w->ctx, s->u.alloc.buf->alias_of), w->other(w->ctx, s->u.alloc.buf);
      return;
    case IR_S_STORE:
      walk_exprs(w, s->u.store.idx, s->u.store.nidx);
      walk_exprs(w, &s->u.store.value, 1);
      if (s->u.store.buf->scope != IR_SCOPE_FRAGMENT) return;
      if (s->u.store.lanes != 1) w->other(w->ctx, s->u.store.buf);
      else w->fn(w->ctx, w->nest, s->u.store.buf, s->u.store.idx, s->u.store.nidx, s, NULL);
      return;
    default: {
      int n = ir_tile_operands(s, ops);
      for (int i = 0; i < n; i++)
        if (ops[i].buf) w->other(w->ctx, (IrBuffer *)ir_buffer_root(ops[i].buf));
      return;
    }
  }
}

/* Points the access (a STORE or a LOAD, as the walk hands it) at buffer b with indices idx[n]. */
static void set_access(IrStmt *store, IrExpr *load, IrBuffer *b, IrExpr **idx, int n) {
  if (store) store->u.store.buf = b, store->u.store.idx = idx, store->u.store.nidx = n;
  else load->u.load.buf = b, load->u.load.idx = idx, load->u.load.nidx = n;
}

/* ---- unflatten: a fragment every access of which agrees on one split ---------------------- */
typedef struct Cand {
  IrBuffer *buf;
  int dim, n;                   /* dim `dim` splits into n extents */
  int64_t ext[FRAG_MAX_DIMS];
  bool bad;
} Cand;

typedef struct Unflat {
  TsCompiler *c;
  PtrVec cands;   /* Cand* */
  PtrVec split_var; /* IrVar*: nest variables to split ... */
  PtrVec split_by;  /* Cand*: ... into that candidate's extents */
  PtrVec in_flat;   /* IrVar*: variables that are terms of some flattening (never split: the
                       flattening's terms would change under it) */
} Unflat;

static Cand *cand_of(Unflat *u, const IrBuffer *b) {
  for (int i = 0; i < u->cands.len; i++)
    if (((Cand *)u->cands.items[i])->buf == b) return u->cands.items[i];
  return NULL;
}

static void mark_other(void *ctx, IrBuffer *b) {
  Unflat *u = ctx;
  Cand *k = cand_of(u, b);
  if (!k) {
    k = ARENA_NEW(u->c->arena, Cand);
    k->buf = b;
    k->dim = -1;
    vec_push(u->c->arena, &u->cands, k);
  }
  k->bad = true;
}

/* First walk: a candidate for each fragment some access flattens (one dim, one split). */
static void propose(void *ctx, const ParNest *nest, IrBuffer *b, IrExpr **idx, int nidx, IrStmt *store, IrExpr *load) {
  (void)store, (void)load;
  Unflat *u = ctx;
  Cand *k = cand_of(u, b);
  for (int d = 0; d < nidx; d++) {
    Term t[FRAG_MAX_DIMS];
    int n;
    int64_t ext;
    if (!ir_is_const_int(b->shape[d], &ext) || !flattening(nest, idx[d], ext, t, &n)) continue;
    if (b->ndim - 1 + n > FRAG_MAX_DIMS) continue;
    if (!k) {
      k = ARENA_NEW(u->c->arena, Cand);
      k->buf = b;
      k->dim = d;
      k->n = n;
      for (int q = 0; q < n; q++) k->ext[q] = t[q].extent;
      vec_push(u->c->arena, &u->cands, k);
      continue;
    }
    bool same = k->dim == d && k->n == n;
    for (int q = 0; same && q < n; q++) same = k->ext[q] == t[q].extent;
    if (!same) k->bad = true;
  }
}

/* Second walk: every access of a candidate is its flattening or a plain nest variable over
 * the whole dim (to split); anything else rules it out. */
static void verify(void *ctx, const ParNest *nest, IrBuffer *b, IrExpr **idx, int nidx, IrStmt *store, IrExpr *load) {
  (void)store, (void)load, (void)nidx;
  Unflat *u = ctx;
  Cand *k = cand_of(u, b);
  if (!k || k->bad) return;
  Term t[FRAG_MAX_DIMS];
  int n;
  int64_t ext = 0;
  ir_is_const_int(b->shape[k->dim], &ext);
  const IrExpr *e = idx[k->dim];
  if (flattening(nest, e, ext, t, &n)) { /* the same split: propose checked */
    for (int q = 0; q < n; q++)
      if (!vec_has(&u->in_flat, t[q].var)) vec_push(u->c->arena, &u->in_flat, t[q].var);
    return;
  }
  int q = nest && e->kind == IR_VAR ? nest_dim(nest, e->u.var) : -1;
  if (q < 0 || nest->extent[q] != ext) {
    k->bad = true;
    return;
  }
  for (int i = 0; i < u->split_var.len; i++)
    if (u->split_var.items[i] == e->u.var) {
      Cand *o = u->split_by.items[i];
      bool same = o->n == k->n;
      for (int p = 0; same && p < k->n; p++) same = o->ext[p] == k->ext[p];
      if (!same) k->bad = true; /* one variable, two splits */
      return;
    }
  vec_push(u->c->arena, &u->split_var, e->u.var);
  vec_push(u->c->arena, &u->split_by, k);
}

/* `for v in T.Parallel(E)` as nested T.Parallel loops over the split's extents, v replaced by
 * the flattening of their variables. */
static IrStmt *split_loop(TsCompiler *c, IrStmt *s, const Cand *k) {
  SrcLoc loc = s->loc;
  IrVar *v = s->u.loop.var, *vars[FRAG_MAX_DIMS];
  IrExpr *flat = NULL;
  int64_t stride = 1;
  for (int q = k->n - 1; q >= 0; q--) { /* v_0 * (e_1 ... e_n-1) + ... + v_n-1: a flattening */
    vars[q] = ir_var(c, arena_printf(c->arena, "%s_%d", v->name, q), v->dtype, IR_VAR_LOOP, loc);
    IrExpr *x = ir_varref(c, vars[q], loc);
    if (stride > 1) x = ir_binary(c, IR_MUL, x, ir_int(c, stride, v->dtype, loc), loc);
    flat = flat ? ir_binary(c, IR_ADD, x, flat, loc) : x;
    stride *= k->ext[q];
  }
  IrStmt *body = ir_subst_stmt(c, s->u.loop.body, &v, &flat, 1);
  for (int q = k->n - 1; q >= 0; q--) {
    IrStmt *l = ir_stmt(c, IR_S_FOR, loc);
    *l = *s; /* the loop's annotations too */
    l->u.loop.var = vars[q];
    l->u.loop.min = ir_int(c, 0, v->dtype, loc);
    l->u.loop.extent = ir_int(c, k->ext[q], v->dtype, loc);
    l->u.loop.body = body;
    body = l;
  }
  return body;
}

static IrStmt *split_loops(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  Unflat *u = ctx;
  IrStmt *r = ir_map_children(c, s, split_loops, ctx);
  if (r->kind != IR_S_FOR || r->u.loop.kind != IR_FOR_PARALLEL) return r;
  for (int i = 0; i < u->split_var.len; i++)
    if (u->split_var.items[i] == r->u.loop.var && !((Cand *)u->split_by.items[i])->bad)
      return split_loop(c, r, u->split_by.items[i]);
  return r;
}

/* Third walk (after the splits): each access of a good candidate indexes its split dims. */
static void reindex(void *ctx, const ParNest *nest, IrBuffer *b, IrExpr **idx, int nidx, IrStmt *store,
                    IrExpr *load) {
  Unflat *u = ctx;
  Cand *k = cand_of(u, b);
  if (!k || k->bad) return;
  Term t[FRAG_MAX_DIMS];
  int n;
  int64_t ext = 1;
  for (int q = 0; q < k->n; q++) ext *= k->ext[q];
  /* verify ruled out splits that could change a flattening's terms; should one still not
   * match, the access stays as it is (layout inference then says what it cannot lay out) */
  if (!flattening(nest, idx[k->dim], ext, t, &n) || n != k->n) return;
  for (int q = 0; q < n; q++)
    if (t[q].extent != k->ext[q]) return;
  IrExpr **out = ARENA_ARRAY(u->c->arena, IrExpr *, nidx - 1 + n);
  int m = 0;
  for (int d = 0; d < nidx; d++)
    if (d != k->dim) out[m++] = idx[d];
    else
      for (int q = 0; q < n; q++) out[m++] = ir_varref(u->c, t[q].var, idx[d]->loc);
  set_access(store, load, b, out, m);
}

static void reshape_cands(Unflat *u) {
  for (int i = 0; i < u->cands.len; i++) {
    Cand *k = u->cands.items[i];
    if (k->bad) continue;
    IrBuffer *b = k->buf;
    IrExpr **shape = ARENA_ARRAY(u->c->arena, IrExpr *, b->ndim - 1 + k->n);
    int m = 0;
    for (int d = 0; d < b->ndim; d++)
      if (d != k->dim) shape[m++] = b->shape[d];
      else
        for (int q = 0; q < k->n; q++) shape[m++] = ir_int(u->c, k->ext[q], b->shape[d]->dtype, b->loc);
    b->shape = shape;
    b->ndim = m;
  }
}

static bool any_good(const Unflat *u) {
  for (int i = 0; i < u->cands.len; i++)
    if (!((Cand *)u->cands.items[i])->bad) return true;
  return false;
}

/* A candidate whose plain-index variable is also a term of a flattening is left for a later
 * round (or the views): splitting it would change that flattening. */
static void keep_flattenings(Unflat *u) {
  for (int i = 0; i < u->split_var.len; i++)
    if (vec_has(&u->in_flat, u->split_var.items[i])) ((Cand *)u->split_by.items[i])->bad = true;
}

/* One round; whether it reshaped a fragment. */
static bool unflatten_round(TsCompiler *c, IrFunc *f) {
  Unflat u = {.c = c};
  Walk w = {NULL, propose, mark_other, &u};
  walk_stmt(&w, f->body);
  if (!any_good(&u)) return false;
  w.fn = verify;
  walk_stmt(&w, f->body);
  keep_flattenings(&u);
  if (!any_good(&u)) return false;
  f->body = split_loops(c, f->body, &u);
  w.fn = reindex;
  walk_stmt(&w, f->body); /* before the reshape: reindex reads the old extents */
  reshape_cands(&u);
  return true;
}

/* ---- otherwise: views, per nest ------------------------------------------------------------- */
typedef struct Views {
  TsCompiler *c;
  const ParNest *nest;
  PtrVec allocs; /* IrStmt*: the views' allocations, placed before the nest */
  PtrVec views;  /* IrBuffer*: those views */
} Views;

/* The view of b for the split `shape` (made on first use in the nest). */
static IrBuffer *view_of(Views *f, IrBuffer *b, IrExpr **shape, int n) {
  for (int k = 0; k < f->views.len; k++) {
    IrBuffer *w = f->views.items[k];
    bool same = w->alias_of == b && w->ndim == n;
    for (int d = 0; same && d < n; d++) same = ir_expr_equal(w->shape[d], shape[d]);
    if (same) return w;
  }
  TsCompiler *c = f->c;
  IrBuffer *v = ir_buffer(c, arena_printf(c->arena, "%s_flat%d", b->name, f->allocs.len), b->dtype, b->scope, n,
                          shape, b->loc);
  v->alias_of = b;
  IrStmt *al = ir_stmt(c, IR_S_ALLOC, b->loc);
  al->u.alloc.buf = v;
  vec_push(c->arena, &f->allocs, al);
  vec_push(c->arena, &f->views, v);
  return v;
}

static void to_view(void *ctx, const ParNest *nest, IrBuffer *b, IrExpr **idx, int nidx, IrStmt *store, IrExpr *load) {
  Views *f = ctx;
  if (b->alias_of || nest != f->nest) return;
  TsCompiler *c = f->c;
  IrExpr **shape = ARENA_ARRAY(c->arena, IrExpr *, FRAG_MAX_DIMS), **out = ARENA_ARRAY(c->arena, IrExpr *, FRAG_MAX_DIMS);
  int n = 0;
  bool split = false;
  for (int d = 0; d < nidx; d++) {
    Term t[FRAG_MAX_DIMS];
    int nt;
    int64_t ext;
    if (ir_is_const_int(b->shape[d], &ext) && flattening(nest, idx[d], ext, t, &nt) && n + nt <= FRAG_MAX_DIMS) {
      for (int k = 0; k < nt; k++) {
        shape[n] = ir_i32(c, t[k].extent);
        out[n++] = ir_varref(c, t[k].var, idx[d]->loc);
      }
      split = true;
      continue;
    }
    if (n == FRAG_MAX_DIMS) return;
    shape[n] = b->shape[d];
    out[n++] = idx[d];
  }
  if (!split) return;
  IrBuffer *v = view_of(f, b, shape, n);
  set_access(store, load, v, out, n);
}

static void ignore(void *ctx, IrBuffer *b) { (void)ctx, (void)b; }

static IrStmt *views_in_nests(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  ParNest nest;
  if (s->kind != IR_S_FOR || s->u.loop.kind != IR_FOR_PARALLEL || !pass_parallel_nest_quiet(s, &nest))
    return ir_map_children(c, s, views_in_nests, ctx);
  Views f = {c, &nest, {0}, {0}};
  Walk w = {&nest, to_view, ignore, &f};
  walk_stmt(&w, nest.body);
  if (!f.allocs.len) return s;
  vec_push(c->arena, &f.allocs, s);
  return ir_seq_vec(c, &f.allocs, s->loc);
}

void pass_split_flat_fragment_indices(TsCompiler *c, IrFunc *f) {
  for (int round = 0; round < 8 && unflatten_round(c, f); round++) {
  }
  f->body = views_in_nests(c, f->body, NULL);
}
