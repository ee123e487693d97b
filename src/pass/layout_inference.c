/* layout_inference.c — picks a Fragment (fragment.h) for every local.fragment buffer
 * and every T.Parallel nest of each kernel (after legalize, so copies and fills are
 * nests too).
 *
 * Nodes are the parallel nests and the reductions.  Propagation runs to a fixed point:
 *  - a nest that accesses an already laid-out fragment with exactly its loop vars takes
 *    that fragment's layout (so the thread that owns an element computes it);
 *  - a laid-out nest gives every fragment it indexes with a subset of its vars the
 *    derived layout (missing dims become replicas);
 *  - a laid-out nest that reads a fragment with a loop var divided by a constant
 *    (`b[i, j // 2]`, packed 4-bit values) gives it the loop layout divided
 *    (fragment_derive_div: each element with the thread that holds its c loop elements);
 *  - a reduction gives dst the layout of src with the reduced dim replicated;
 *  - a nest that indexes a GEMM-fixed fragment at `var + e` offsets (e invariant in the
 *    nest: `acc[i + s * 16, j]`) takes its layout when each e is a multiple of the
 *    fragment's period along that dim (from_shift, fragment_shift_period);
 *  - a T.reshape view of a fragment and its base have one layout seen through two shapes
 *    (sync_views, fragment_reshape).
 * When nothing propagates, the largest unresolved nest gets a fresh block layout (16-byte
 * vectors when its body is a contiguous copy; on the last dim a multiple of the divisors
 * of its divided reads), or, when that layout would not give a fragment it reads with
 * some of its vars the layout that fragment has (`scores_max[h]` in T.Parallel(h, k)), that
 * fragment's layout on those vars (fragment_from_read), and propagation resumes.  A read at
 * an offset no loop layout serves goes through a shared copy of the fragment
 * (stage_fragment.c) and the kernel is inferred again.  Before all
 * that, each T.gemm fixes its accumulator's tensor-core layout and the swizzles of its
 * shared operands (layout.h), so the epilogue copy of C follows the accumulator.  Fragments used
 * outside nests and reductions, or with other index patterns, are fully replicated
 * (every thread holds all elements).  A fragment whose layout disagrees with a use is
 * reported as a layout conflict at that use. */
#include <string.h>

#include "../layout/layout.h"
#include "passes.h"

typedef struct Access {
  IrBuffer *buf;
  int map[FRAG_MAX_DIMS];
  bool simple, write;
  bool window;                /* not simple, but `var + c` indices: a window (fragment_crop) */
  bool held;                  /* not simple, but loop vars and nest-invariant indices (FRAG_HELD) */
  bool divided;               /* held, with some dims a loop var // c (a read: fragment_derive_div) */
  bool shifted;               /* `var + e`, e nest-invariant, into a fragment laid out before propagation */
  IrExpr **idx;               /* the access's indices */
  int nidx;
  IrExpr *shift[FRAG_MAX_DIMS]; /* shifted: the offsets e (NULL for plain dims) */
  int64_t div[FRAG_MAX_DIMS]; /* divided: the divisors c (1 for other dims) */
  int64_t off[FRAG_MAX_DIMS]; /* window: the constants c */
  SrcLoc loc;
} Access;

typedef struct Node {
  IrStmt *stmt;
  bool is_nest;
  ParNest nest;
  PtrVec acc; /* Access*, fragment accesses in a nest */
  Fragment *layout;
  int64_t size;
  int64_t nthreads; /* the threads that run it: the kernel's, or a T.ws body's */
  bool done;
} Node;

typedef struct Infer {
  TsCompiler *c;
  int64_t nthreads;
  PtrVec nodes;     /* Node* */
  PtrVec outside;   /* IrBuffer* fragments used outside nodes */
  PtrVec frags;     /* IrBuffer* fragments allocated in the kernel */
  Node *cur;        /* node being scanned */
  int64_t scope;    /* threads of the code being collected (a T.ws body: its warpgroups) */
  PtrVec held_set;  /* IrBuffer* laid out from a held access (pass_access_map_held) */
  PtrVec held_bad;  /* IrBuffer* whose held layout disagreed with another use */
  PtrVec no_held;   /* IrBuffer* laid out the old way (replicated) after such a conflict */
  bool held_first;  /* free layouts go to nests with held accesses first (a retry) */
  PtrVec bad_views; /* IrBuffer* fragment views already reported (sync_views) */
  PtrVec stage;     /* Access*: shifted reads the nest's layout cannot serve (stage_reads) */
  PtrVec stage_nest; /* Node*: their nests, in the same order */
} Infer;

static void note_frag(Infer *in, PtrVec *v, IrBuffer *b) {
  if (!vec_has(v, b)) vec_push(in->c->arena, v, b);
}

static void add_access(Infer *in, IrBuffer *b, IrExpr **idx, int nidx, bool write, SrcLoc loc) {
  Access *a = ARENA_NEW(in->c->arena, Access);
  a->buf = b;
  a->write = write;
  a->loc = loc;
  a->idx = idx;
  a->nidx = nidx;
  a->simple = pass_access_map(&in->cur->nest, b, idx, nidx, a->map);
  if (!a->simple) a->window = pass_access_map_off(&in->cur->nest, b, idx, nidx, a->map, a->off);
  if (!a->simple && !a->window && !vec_has(&in->no_held, b)) {
    a->held = pass_access_map_held(&in->cur->nest, b, idx, nidx, a->map);
    /* Reads only: iterations c x .. c x + c - 1 all name element x; written from threads
     * that hold copies of it, the copies would disagree. */
    if (!a->held && !write) a->held = a->divided = pass_access_map_div(&in->cur->nest, b, idx, nidx, a->map, a->div);
  }
  vec_push(in->c->arena, &in->cur->acc, a);
}

static void scan_expr(IrExpr *e, void *ctx) {
  Infer *in = ctx;
  if (e->kind != IR_LOAD || e->u.load.buf->scope != IR_SCOPE_FRAGMENT) return;
  if (in->cur) add_access(in, e->u.load.buf, e->u.load.idx, e->u.load.nidx, false, e->loc);
  else note_frag(in, &in->outside, e->u.load.buf);
}

static void scan_stmt(IrStmt *s, void *ctx) {
  Infer *in = ctx;
  if (s->kind == IR_S_ALLOC && s->u.alloc.buf->scope == IR_SCOPE_FRAGMENT) note_frag(in, &in->frags, s->u.alloc.buf);
  if (s->kind == IR_S_STORE && s->u.store.buf->scope == IR_SCOPE_FRAGMENT) {
    if (in->cur) add_access(in, s->u.store.buf, s->u.store.idx, s->u.store.nidx, true, s->loc);
    else note_frag(in, &in->outside, s->u.store.buf);
  }
  if (s->kind == IR_S_ATOMIC && s->u.atomic.dst.buf->scope == IR_SCOPE_FRAGMENT)
    note_frag(in, &in->outside, s->u.atomic.dst.buf);
}

static void set_layout(Infer *in, IrBuffer *b, Fragment *f, SrcLoc loc);

/* T.Parallel(..., loop_layout=T.Fragment(...)): the nest's layout is the user's (the front end
 * fitted it to the nest's extents and the kernel's threads); its fragments follow from it. */
static void pin_nest_layout(Infer *in, Node *n) {
  Fragment *L = n->stmt->u.loop.pinned_layout;
  if (!L) return;
  bool fits = L->ndim == n->nest.n && L->nthreads == n->nthreads;
  for (int q = 0; fits && q < n->nest.n; q++) fits = L->dim[q].extent == n->nest.extent[q];
  if (!fits) {
    ts_error(in->c, n->stmt->loc, "T.Parallel: its loop_layout does not fit this nest of %d loops over %lld threads",
             n->nest.n, (long long)n->nthreads);
    return;
  }
  n->layout = L;
}

/* Strict level: a GEMM fixes its accumulator fragment (the tensor-core register layout)
 * and the swizzled shared layouts of A and B before anything propagates. */
static void gemm_layouts(Infer *in, IrStmt *s) {
  if (!s->u.gemm.plan) return; /* plan_gemm reported it */
  const GemmPlan plan = *s->u.gemm.plan;
  set_layout(in, s->u.gemm.c.buf, plan.c_frag, s->loc);
  if (plan.a_in_regs) set_layout(in, s->u.gemm.a.buf, plan.a_frag, s->loc);
  IrBuffer *ops[2] = {s->u.gemm.a.buf, s->u.gemm.b.buf};
  Layout *want[2] = {plan.a_layout, plan.b_layout};
  for (int i = 0; i < 2; i++) {
    IrBuffer *b = ops[i];
    if (b->scope == IR_SCOPE_FRAGMENT) continue;
    /* a window of the buffer (Q[:, :512] and Q[:, 512:]): the layout of the whole tile */
    int64_t rows, cols;
    if (b->ndim >= 2 && ir_is_const_int(b->shape[b->ndim - 2], &rows) && ir_is_const_int(b->shape[b->ndim - 1], &cols)) {
      Layout *whole = layout_widen(in->c, want[i], rows, cols);
      if (whole) want[i] = whole;
    }
    if (b->layout && !layout_equal(b->layout, want[i])) {
      ts_error(in->c, s->loc, "layout conflict for shared buffer '%s': two T.gemm calls need different swizzles", b->name);
      continue;
    }
    b->layout = want[i];
  }
}

/* Walks the kernel body in program order, collecting nodes. */
static void collect(Infer *in, IrStmt *s) {
  if (!s) return;
  IrVisitor vis = {scan_stmt, scan_expr, in};
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) collect(in, s->u.seq.items[i]);
      return;
    case IR_S_FOR:
      if (s->u.loop.kind == IR_FOR_PARALLEL) {
        Node *n = ARENA_NEW(in->c->arena, Node);
        n->stmt = s;
        n->is_nest = true;
        n->nthreads = in->scope;
        if (!pass_parallel_nest(in->c, s, &n->nest) || !pass_check_register_bounds(in->c, &n->nest)) return;
        n->size = 1;
        for (int q = 0; q < n->nest.n; q++) n->size *= n->nest.extent[q];
        pin_nest_layout(in, n);
        in->cur = n;
        ir_visit(n->nest.body, &vis);
        in->cur = NULL;
        vec_push(in->c->arena, &in->nodes, n);
        return;
      }
      ir_visit_expr(s->u.loop.min, &vis);
      ir_visit_expr(s->u.loop.extent, &vis);
      collect(in, s->u.loop.body);
      return;
    case IR_S_IF: {
      ir_visit_expr(s->u.if_.cond, &vis);
      int64_t outer = in->scope;
      if (s->u.if_.ws_hi) in->scope = s->u.if_.ws_hi - s->u.if_.ws_lo;
      collect(in, s->u.if_.then_s);
      in->scope = outer;
      collect(in, s->u.if_.else_s);
      return;
    }
    case IR_S_WHILE:
      ir_visit_expr(s->u.while_.cond, &vis);
      collect(in, s->u.while_.body);
      return;
    case IR_S_REDUCE: {
      Node *n = ARENA_NEW(in->c->arena, Node);
      n->stmt = s;
      n->nthreads = in->scope;
      n->size = ir_buffer_numel(s->u.reduce.src);
      vec_push(in->c->arena, &in->nodes, n);
      return;
    }
    case IR_S_GEMM: gemm_layouts(in, s); return;
    default: ir_visit(s, &vis); return;
  }
}

static bool const_shape(IrBuffer *b, int64_t *shape) {
  for (int k = 0; k < b->ndim; k++)
    if (!ir_is_const_int(b->shape[k], &shape[k])) return false;
  return b->ndim <= FRAG_MAX_DIMS;
}

static void set_layout(Infer *in, IrBuffer *b, Fragment *f, SrcLoc loc) {
  if (!b->fragment) {
    b->fragment = f;
    return;
  }
  if (fragment_equal(b->fragment, f)) return;
  if (vec_has(&in->held_set, b)) {
    note_frag(in, &in->held_bad, b); /* retried without a held layout (infer_kernel_held) */
  } else {
    StrBuf have = {0}, want = {0};
    fragment_print(&have, b->fragment);
    fragment_print(&want, f);
    /* A register-A GEMM with warps along N holds copies of A in every warp column, which
     * the accumulator of a GEMM split along N (or any spread layout) does not. */
    bool copies = fragment_replicas(f) != fragment_replicas(b->fragment);
    ts_error(in->c, loc, "layout conflict for fragment '%s': it has layout %s here but %s elsewhere%s", b->name,
             sb_str(&want), sb_str(&have),
             copies ? " (one of them keeps copies of elements in several threads, e.g. the A of a T.gemm whose warps "
                      "split N; copy the data through a shared buffer instead)"
                    : "");
    sb_free(&have);
    sb_free(&want);
  }
}

/* Do both operands of a copy nest's store move V lanes at a time (vector_lanes.c): every
 * index but the last the same over a vector, the last one running through its lanes? */
static bool copy_lanes_fit(const Node *n, IrExpr **const *idxs, const int *nidx, const IrExpr *cond, int64_t V) {
  if (cond && !pass_lane_uniform(cond, n->nest.var[n->nest.n - 1], V)) return false;
  return pass_lane_indices(&n->nest, idxs[0], nidx[0], V) && pass_lane_indices(&n->nest, idxs[1], nidx[1], V);
}

/* The widest vector atomic add of `t` elements the target has (device atomic.cuh's
 * atomic_add_x): float4 / float2 on sm_90 global memory, half2 / bfloat162 from sm_80. */
static int64_t atomic_vector_lanes(const TsCompiler *c, ts_dtype t) {
  if (t == TS_DTYPE_FLOAT32 && c->target.sm >= 90) return 4;
  if ((t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16) && c->target.sm >= 80) return 2;
  return 1;
}

/* A tile T.atomic_add from a shared tile or a global tensor onto a global tensor (the
 * attention backward's dK and dV): vectors of the atomic_vector_lanes whose lanes both sides move together. */
static int64_t atomic_vector_width(TsCompiler *c, const Node *n, const IrStmt *b) {
  const IrRegion *d = &b->u.atomic.dst;
  const IrExpr *v = b->u.atomic.value;
  if (b->u.atomic.op != IR_ATOMIC_ADD || b->u.atomic.tile || !v || v->kind != IR_LOAD || v->lanes != 1 ||
      v->dtype != d->buf->dtype || d->buf->scope != IR_SCOPE_GLOBAL || d->buf->remap ||
      (!pass_is_shared(v->u.load.buf) && v->u.load.buf->scope != IR_SCOPE_GLOBAL) || v->u.load.buf->remap ||
      !v->u.load.nidx)
    return 1;
  IrExpr **idxs[2] = {d->min, v->u.load.idx};
  int nidx[2] = {d->ndim, v->u.load.nidx};
  int64_t V = atomic_vector_lanes(c, d->buf->dtype);
  while (V > 1 && !copy_lanes_fit(n, idxs, nidx, NULL, V)) V /= 2;
  return V;
}

/* A nest whose body stores one element loaded from another buffer (a copy, or a gather that
 * is zero where a condition fails: pass_gather_value) can use vectors of up to 16 bytes:
 * the widest whose lanes both accesses can move together.  An atomic add from shared
 * memory: atomic_vector_width. */
static int64_t copy_vector_width(TsCompiler *c, const Node *n) {
  IrStmt *b = n->nest.body;
  if (b && b->kind == IR_S_SEQ && b->u.seq.n == 1) b = b->u.seq.items[0];
  if (b && b->kind == IR_S_ATOMIC) return atomic_vector_width(c, n, b);
  if (!b || b->kind != IR_S_STORE) return 1;
  IrExpr *cond;
  bool converts;
  IrExpr *v = pass_gather_value(c, b->u.store.value, &cond, &converts);
  if (!v) return 1;
  IrBuffer *bufs[2] = {b->u.store.buf, v->u.load.buf};
  IrExpr **idxs[2] = {b->u.store.idx, v->u.load.idx};
  int nidx[2] = {b->u.store.nidx, v->u.load.nidx};
  int maxbytes = 1;
  for (int i = 0; i < 2; i++) {
    if (bufs[i]->scope == IR_SCOPE_LOCAL || bufs[i]->scope == IR_SCOPE_VAR || nidx[i] == 0) return 1;
    /* a T.Layout-remapped tensor is read element by element (lower_tile_ops stages the
     * other side's vectors around it): its width does not bound the vector */
    if (bufs[i]->remap && i == 1 && !bufs[0]->remap) continue;
    if (dtype_bytes(bufs[i]->dtype) > maxbytes) maxbytes = dtype_bytes(bufs[i]->dtype);
  }
  int64_t V = 16 / maxbytes;
  while (V > 1 && !copy_lanes_fit(n, idxs, nidx, cond, V)) V /= 2;
  return V;
}

static int64_t lcm(int64_t a, int64_t b) {
  int64_t x = a, y = b;
  while (y) {
    int64_t t = x % y;
    x = y;
    y = t;
  }
  return a / x * b;
}

/* The vector a nest's last dim needs so that its divided reads (`b[i, j // c]`) find each
 * element's c loop elements in one thread: the lcm of their divisors c on that dim. */
static int64_t divided_vector(const Node *n) {
  int64_t need = 1;
  for (int i = 0; i < n->acc.len; i++) {
    const Access *a = n->acc.items[i];
    for (int p = 0; a->divided && p < a->buf->ndim; p++)
      if (a->map[p] == n->nest.n - 1 && a->div[p] > 1) need = lcm(need, a->div[p]);
  }
  return need;
}

static Fragment *free_layout(Infer *in, Node *n) {
  int64_t vec = copy_vector_width(in->c, n), total = n->size;
  int64_t last = n->nest.extent[n->nest.n - 1];
  /* Keep every thread busy before making vectors wide; vectors must tile the row. */
  while (vec > 1 && (last % vec != 0 || total / vec < n->nthreads)) vec /= 2;
  int64_t want = lcm(vec, divided_vector(n));
  if (want <= 64 && last % want == 0) vec = want;
  return fragment_block(in->c, n->nest.n, n->nest.extent, n->nthreads, vec);
}

/* How many loop dims an access indexes with a plain var (map[p] >= 0). */
static int mapped_dims(const Access *a) {
  int k = 0;
  for (int p = 0; p < a->buf->ndim; p++) k += a->map[p] >= 0;
  return k;
}

/* Loop layout from a fragment the nest indexes with all of its vars (a permutation; unit
 * dims indexed by 0 aside: `logits[i, 0]` in T.Parallel(i)). */
static Fragment *from_buffer(Infer *in, Node *n, const Access *a) {
  Fragment *bf = a->buf->fragment;
  if (mapped_dims(a) != n->nest.n) return NULL;
  Fragment *f = ARENA_NEW(in->c->arena, Fragment);
  *f = *bf;
  f->ndim = n->nest.n;
  for (int p = 0; p < bf->ndim; p++)
    if (a->map[p] >= 0) f->dim[a->map[p]] = bf->dim[p];
  return f;
}

/* Loop layout from a shifted access (`acc[i + s * 32, j]`): the fragment's own fields over
 * the loop's extents, when every shift is a multiple of the fragment's shift period along
 * its dim (pass_shift_fits): each iteration then runs in the threads holding its element. */
static Fragment *from_shift(Infer *in, Node *n, const Access *a) {
  Fragment *bf = a->buf->fragment;
  if (mapped_dims(a) != n->nest.n) return NULL;
  Fragment *f = ARENA_NEW(in->c->arena, Fragment);
  *f = *bf;
  f->ndim = n->nest.n;
  for (int p = 0; p < bf->ndim; p++)
    if (a->map[p] >= 0) {
      f->dim[a->map[p]] = bf->dim[p];
      f->dim[a->map[p]].extent = n->nest.extent[a->map[p]];
    }
  return pass_shift_fits(in->c, f, bf, a->map, a->shift) ? f : NULL;
}

/* Loop layout from a window of a laid-out fragment (e.g. one column atom of a GEMM
 * accumulator copied out by itself): the window's layout (fragment_crop) on the loop dims. */
static Fragment *from_window(Infer *in, Node *n, const Access *a) {
  Fragment *bf = a->buf->fragment;
  if (!bf || fragment_is_replicated(bf) || a->buf->ndim != n->nest.n) return NULL;
  int64_t ext[FRAG_MAX_DIMS], roff;
  for (int p = 0; p < a->buf->ndim; p++) {
    if (a->map[p] < 0) return NULL;
    ext[p] = n->nest.extent[a->map[p]];
  }
  Fragment *w = fragment_crop(in->c, bf, a->off, ext, &roff);
  bool prefix = true;
  for (int p = 0; p < a->buf->ndim; p++) prefix &= a->off[p] == 0;
  if (!w && prefix) w = fragment_restrict(in->c, bf, ext);
  if (!w) return NULL;
  Fragment *f = ARENA_NEW(in->c->arena, Fragment);
  *f = *w;
  for (int p = 0; p < w->ndim; p++) f->dim[a->map[p]] = w->dim[p];
  return f;
}

/* Does the nest's layout read a constant window (`acc[i + 16, j]`) as lowering's window
 * path does (the layout from_window gives, seen from the buffer)? */
static bool window_serves(Infer *in, Node *n, const Access *a) {
  Fragment *w = a->window ? from_window(in, n, a) : NULL;
  return w && fragment_equal(fragment_derive(in->c, w, a->buf->ndim, a->map),
                             fragment_derive(in->c, n->layout, a->buf->ndim, a->map));
}

/* A fragment laid out over one thread count cannot be used by code that runs on another
 * (one used both inside and outside a T.ws body): its registers belong to other threads. */
static bool threads_match(Infer *in, Node *n, const Fragment *f, const IrBuffer *b) {
  if (f->nthreads == n->nthreads || fragment_is_replicated(f)) return true;
  ts_error(in->c, n->stmt->loc,
           "fragment '%s' is laid out over %lld threads, but this code runs on %lld threads (a fragment used by "
           "warpgroups of different T.ws scopes, or inside and outside T.ws)", b->name, (long long)f->nthreads,
           (long long)n->nthreads);
  n->done = true;
  return false;
}

/* A held access (FRAG_HELD dims): the nest's layout on the loop dims, the held dims in
 * every thread's registers; a divided one (`b[i, j // 2]`) the nest's layout divided
 * (fragment_derive_div).  A buffer laid out otherwise already, or a division the nest's
 * layout cannot give (c loop elements that no thread holds together), is noted as a
 * conflict: the kernel is inferred again with held nests laid out first, then with that
 * buffer replicated, as before held layouts. */
static void set_held_layout(Infer *in, Node *n, Access *a) {
  int64_t shape[FRAG_MAX_DIMS];
  IrBuffer *b = a->buf;
  if (b->fragment && fragment_is_replicated(b->fragment)) return; /* fits any access */
  if (!const_shape(b, shape)) return;
  Fragment *want = fragment_derive_div(in->c, n->layout, b->ndim, a->map, shape, a->divided ? a->div : NULL);
  if (!want) {
    note_frag(in, &in->held_bad, b);
  } else if (!b->fragment) {
    b->fragment = want;
    note_frag(in, &in->held_set, b);
  } else if (!fragment_equal(b->fragment, want)) {
    note_frag(in, &in->held_bad, b);
  }
}

static bool propagate_node(Infer *in, Node *n) {
  if (!n->is_nest) {
    IrStmt *s = n->stmt;
    IrBuffer *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    if (!src->fragment) return false;
    if (!threads_match(in, n, src->fragment, src)) return true;
    int dim = s->u.reduce.dim;
    if (dim < 0) dim += src->ndim;
    bool keep = dst->ndim == src->ndim;
    if (dim < 0 || dim >= src->ndim || (dst->ndim != src->ndim - 1 && !keep)) {
      ts_error(in->c, s->loc, "T.reduce: dim %d does not fit '%s' (rank %d) -> '%s' (rank %d)", s->u.reduce.dim,
               src->name, src->ndim, dst->name, dst->ndim);
      n->done = true;
      return true;
    }
    s->u.reduce.dim = dim;
    set_layout(in, dst, fragment_reduce(in->c, src->fragment, dim, keep), s->loc);
    n->done = true;
    return true;
  }
  if (!n->layout) {
    /* Prefer a written fragment, then any; skip fully replicated ones (they fit any loop). */
    for (int pass = 0; pass < 2 && !n->layout; pass++)
      for (int i = 0; i < n->acc.len && !n->layout; i++) {
        Access *a = n->acc.items[i];
        if (!a->simple || !a->buf->fragment || (pass == 0 && !a->write)) continue;
        if (fragment_is_replicated(a->buf->fragment) && mapped_dims(a) != n->nest.n) continue;
        n->layout = from_buffer(in, n, a);
      }
    for (int i = 0; i < n->acc.len && !n->layout; i++) {
      Access *a = n->acc.items[i];
      if (a->window) n->layout = from_window(in, n, a);
      if (!n->layout && a->shifted) n->layout = from_shift(in, n, a);
    }
    if (!n->layout) return false;
  }
  for (int i = 0; i < n->acc.len; i++) {
    Access *a = n->acc.items[i];
    if (a->buf->fragment && !threads_match(in, n, a->buf->fragment, a->buf)) return true;
  }
  for (int i = 0; i < n->acc.len; i++) {
    Access *a = n->acc.items[i];
    if (a->shifted && !a->write && !pass_shift_fits(in->c, n->layout, a->buf->fragment, a->map, a->shift) &&
        !window_serves(in, n, a)) {
      vec_push(in->c->arena, &in->stage, a);
      vec_push(in->c->arena, &in->stage_nest, n);
    }
    if (a->held) set_held_layout(in, n, a);
    if (!a->simple) continue;
    Fragment *want = fragment_derive(in->c, n->layout, a->buf->ndim, a->map);
    if (a->buf->fragment && fragment_is_replicated(a->buf->fragment) && !a->write) continue;
    set_layout(in, a->buf, want, a->loc);
  }
  n->done = true;
  return true;
}

/* Does loop layout L give every laid-out fragment the nest indexes plainly its own layout
 * (or read a fragment every thread holds whole)? */
static bool layout_fits(Infer *in, const Node *n, const Fragment *L) {
  for (int i = 0; i < n->acc.len; i++) {
    const Access *a = n->acc.items[i];
    const Fragment *f = a->buf->fragment;
    if (!a->simple || !f || (fragment_is_replicated(f) && !a->write)) continue;
    if (!fragment_equal(fragment_derive(in->c, L, a->buf->ndim, a->map), f)) return false;
  }
  return true;
}

/* The read of a laid-out fragment (spread over the nest's threads) with the most loop vars,
 * or NULL. */
static const Access *laid_out_read(const Node *n) {
  const Access *src = NULL;
  for (int i = 0; i < n->acc.len; i++) {
    const Access *a = n->acc.items[i];
    const Fragment *f = a->buf->fragment;
    if (!a->simple || a->write || !f || fragment_is_replicated(f) || f->nthreads != n->nthreads) continue;
    if (!src || mapped_dims(a) > mapped_dims(src)) src = a;
  }
  return src;
}

/* A fresh layout for a nest nothing laid out (free_layout); when that layout would not give
 * a fragment the nest reads with some of its vars (`scores_max[h]` in T.Parallel(h, k),
 * a reduction's result laid out along a GEMM's rows) the layout it has, the loop follows
 * that fragment instead (fragment_from_read: each iteration in the threads holding what it
 * reads), the read with the most loop vars first (laid_out_read). */
static Fragment *pick_free_layout(Infer *in, Node *n) {
  Fragment *free = free_layout(in, n);
  if (layout_fits(in, n, free)) return free;
  const Access *src = laid_out_read(n);
  if (!src) return free;
  Fragment *L = fragment_from_read(in->c, src->buf->fragment, n->nest.n, n->nest.extent, src->map);
  return L && layout_fits(in, n, L) ? L : free;
}

/* Which unresolved node gets a fresh layout next: the largest; of equal ones first a nest
 * that reads a laid-out fragment (its layout follows that read, and what it writes with it),
 * then a copy that moves vectors (its 16-byte accesses then set the layout the fills and
 * arithmetic on the same fragments follow, instead of a fill's one element per thread making
 * every later load scalar and every row value replicated); on a retry after a held conflict,
 * nests with held accesses first, so that the copies filling the held buffer follow the
 * layout its use needs instead of imposing their own. */
static int64_t free_rank(const Infer *in, const Node *n) {
  bool held = false;
  for (int i = 0; in->held_first && i < n->acc.len; i++) held |= ((Access *)n->acc.items[i])->held;
  int tie = !n->is_nest ? 0 : laid_out_read(n) ? 2 : copy_vector_width(in->c, n) > 1;
  return n->size * 4 + tie + (held ? INT64_MAX / 2 : 0);
}

/* A nest that writes a fragment every thread holds whole (replicated: written with indices
 * that are not plainly its loop vars) must run every iteration in every thread, or each
 * thread's copy gets only the elements of its own iterations.  Such a nest takes the
 * replicated loop layout when every fragment it touches is replicated; when another
 * fragment spreads it over the threads, the two cannot both hold: a diagnostic. */
static void replicate_writing_nest(Infer *in, Node *n) {
  if (!n->layout || fragment_is_replicated(n->layout)) return;
  const Access *wrote = NULL, *spread = NULL;
  for (int i = 0; i < n->acc.len; i++) {
    const Access *a = n->acc.items[i];
    const Fragment *f = a->buf->fragment;
    if (!f) continue;
    if (!fragment_is_replicated(f)) spread = a;
    else if (a->write && !wrote) wrote = a;
  }
  if (!wrote) return;
  if (spread) {
    ts_error(in->c, wrote->loc,
             "fragment '%s' is written here with indices that are not the loop variables of its T.Parallel loop, "
             "so every thread holds all of it, but fragment '%s' spreads this loop over the threads: each "
             "thread would fill only its own iterations' elements (index '%s' with the loop variables)",
             wrote->buf->name, spread->buf->name, wrote->buf->name);
    return;
  }
  n->layout = fragment_replicated(in->c, n->nest.n, n->nest.extent, n->nthreads);
}

/* A nest that writes a fragment with other index patterns runs every iteration in every
 * thread (replicate_writing_nest), so what it reads through a divided index stays whole in
 * every thread too (replicated, as before divided layouts) instead of spread. */
static void keep_divided_whole(Node *n) {
  bool writes_whole = false;
  for (int j = 0; j < n->acc.len; j++) {
    const Access *a = n->acc.items[j];
    writes_whole |= a->write && !a->simple && !a->window && !a->held && !a->shifted;
  }
  for (int j = 0; writes_whole && j < n->acc.len; j++) {
    Access *a = n->acc.items[j];
    if (a->divided) a->held = a->divided = false;
  }
}

/* A shifted access (`var + e` indices, pass_access_map_shift) is laid out only into a
 * fragment whose layout is fixed before propagation (a GEMM operand or accumulator): the
 * loop then follows that layout (from_shift).  Into any other fragment it stays what it
 * was, an index pattern that replicates the fragment. */
static void mark_shifted(Infer *in, Node *n, Access *a) {
  const Fragment *f = a->buf->fragment;
  if (a->simple || a->held || !f || fragment_is_replicated(f)) return;
  int map[FRAG_MAX_DIMS];
  if (!pass_access_map_shift(in->c, &n->nest, a->buf, a->idx, a->nidx, map, a->shift)) return;
  a->shifted = true;
  memcpy(a->map, map, sizeof map);
}

/* T.reshape / T.view of a fragment with a dtype of the same width shares its registers
 * (codegen: a pointer into the base's array), so each must have the other's layout seen
 * through fragment_reshape.  Returns whether a layout was set. */
static bool sync_views(Infer *in) {
  bool changed = false;
  for (int i = 0; i < in->frags.len; i++) {
    IrBuffer *v = in->frags.items[i], *base = v->alias_of;
    int64_t vshape[FRAG_MAX_DIMS], bshape[FRAG_MAX_DIMS];
    if (!base || base->scope != IR_SCOPE_FRAGMENT || dtype_bits(base->dtype) != dtype_bits(v->dtype) ||
        vec_has(&in->bad_views, v))
      continue;
    if (!const_shape(v, vshape) || !const_shape(base, bshape) || (!v->fragment && !base->fragment)) continue;
    Fragment *want = NULL;
    if (!base->fragment) {
      want = fragment_reshape(in->c, v->fragment, base->ndim, bshape);
      if (want) {
        base->fragment = want;
        changed = true;
        continue;
      }
    } else {
      want = fragment_reshape(in->c, base->fragment, v->ndim, vshape);
      if (want && !v->fragment) {
        v->fragment = want;
        changed = true;
        continue;
      }
      if (want && fragment_equal(want, v->fragment)) continue;
    }
    StrBuf have = {0}, other = {0};
    fragment_print(&have, base->fragment ? base->fragment : v->fragment);
    if (base->fragment && v->fragment) fragment_print(&other, v->fragment);
    ts_error(in->c, v->loc,
             "fragment '%s' is a view of fragment '%s' (the same registers), but '%s' has layout %s%s%s: a view of a "
             "fragment spread over threads may only add or remove dims of extent 1 or split a dim where its lanes, "
             "threads and registers divide it",
             v->name, base->name, base->fragment ? base->name : v->name, sb_str(&have),
             other.len ? " and the view " : "", other.len ? sb_str(&other) : "");
    sb_free(&have);
    sb_free(&other);
    note_frag(in, &in->bad_views, v);
  }
  return changed;
}

/* A view of a fragment as a dtype of another width (T.view(frag, dtype=...)) reinterprets each
 * thread's registers; that names the same bytes only when both are held whole by every thread
 * with registers row-major (fragment_reshape's flat case).  Anything else is refused.  (A
 * dtype of the same width is a view like T.reshape: sync_views.) */
static void check_retyped_views(Infer *in) {
  for (int i = 0; i < in->frags.len; i++) {
    IrBuffer *v = in->frags.items[i], *base = v->alias_of;
    if (!base || base->scope != IR_SCOPE_FRAGMENT || dtype_bits(base->dtype) == dtype_bits(v->dtype) || !v->fragment ||
        !base->fragment)
      continue;
    bool flat_v = fragment_is_replicated(v->fragment) && fragment_local_size(v->fragment) == ir_buffer_numel(v);
    bool flat_b = fragment_is_replicated(base->fragment) && fragment_local_size(base->fragment) == ir_buffer_numel(base);
    if (flat_v && flat_b) continue;
    ts_error(in->c, v->loc,
             "fragment '%s' views fragment '%s' as %s: the registers of a fragment spread over threads cannot be "
             "reinterpreted as another dtype (copy it into a fragment of that dtype instead)",
             v->name, base->name, dtype_name(v->dtype));
  }
}

static void infer_kernel(Infer *in, IrKernel *k) {
  collect(in, k->body);
  int64_t shape[FRAG_MAX_DIMS];
  /* fragments made to mirror another (IrBuffer.layout_like, e.g. warp_specialize's packed
   * accumulator) take its layout once the GEMMs have fixed theirs */
  for (int i = 0; i < in->frags.len; i++) {
    IrBuffer *b = in->frags.items[i];
    if (!b->fragment && b->layout_like && b->layout_like->fragment) b->fragment = b->layout_like->fragment;
  }
  /* Seed: fragments used outside nodes, or with other index patterns, are replicated. */
  for (int i = 0; i < in->nodes.len; i++) {
    Node *n = in->nodes.items[i];
    for (int j = 0; j < n->acc.len; j++) mark_shifted(in, n, n->acc.items[j]);
    keep_divided_whole(n);
    for (int j = 0; j < n->acc.len; j++) {
      Access *a = n->acc.items[j];
      if (!a->simple && !a->held) note_frag(in, &in->outside, a->buf);
    }
  }
  for (int i = 0; i < in->outside.len; i++) {
    IrBuffer *b = in->outside.items[i];
    if (!b->fragment && const_shape(b, shape)) b->fragment = fragment_replicated(in->c, b->ndim, shape, in->nthreads);
  }
  for (;;) {
    bool changed = true;
    while (changed) {
      changed = sync_views(in);
      for (int i = 0; i < in->nodes.len; i++) {
        Node *n = in->nodes.items[i];
        if (!n->done && propagate_node(in, n)) changed = true;
      }
    }
    Node *best = NULL;
    int64_t best_rank = 0;
    for (int i = 0; i < in->nodes.len; i++) {
      Node *n = in->nodes.items[i];
      if (n->done) continue;
      int64_t rank = free_rank(in, n);
      if (!best || rank > best_rank) best = n, best_rank = rank;
    }
    if (!best) break;
    if (best->is_nest) {
      best->layout = pick_free_layout(in, best);
    } else {
      IrBuffer *src = best->stmt->u.reduce.src;
      if (!const_shape(src, shape)) {
        ts_error(in->c, best->stmt->loc, "fragment '%s' needs a constant shape", src->name);
        best->done = true;
        continue;
      }
      src->fragment = fragment_block(in->c, src->ndim, shape, best->nthreads, 1);
    }
  }
  for (int i = 0; i < in->frags.len; i++) {
    IrBuffer *b = in->frags.items[i];
    if (b->fragment) continue;
    if (const_shape(b, shape)) b->fragment = fragment_replicated(in->c, b->ndim, shape, in->nthreads);
    else ts_error(in->c, b->loc, "fragment '%s' needs a constant shape", b->name);
  }
  check_retyped_views(in);
  for (int i = 0; i < in->nodes.len; i++) {
    Node *n = in->nodes.items[i];
    if (!n->is_nest) continue;
    replicate_writing_nest(in, n);
    n->stmt->u.loop.loop_layout = n->layout;
  }
}

/* The fragment buffers a kernel allocates, with the layouts they had before inference
 * (annotations), so that a retry starts from the same state. */
typedef struct FragSnap {
  TsCompiler *c;
  PtrVec bufs, frags;
} FragSnap;

static void snap_alloc(IrStmt *s, void *ctx) {
  FragSnap *snap = ctx;
  if (s->kind != IR_S_ALLOC || s->u.alloc.buf->scope != IR_SCOPE_FRAGMENT) return;
  vec_push(snap->c->arena, &snap->bufs, s->u.alloc.buf);
  vec_push(snap->c->arena, &snap->frags, s->u.alloc.buf->fragment);
}

/* Reads at a shifted window the nest's layout cannot serve (`x[i, jj * 4 + j]` with a
 * period of 8) go through a shared copy of the fragment (stage_fragment.c); returns whether
 * the kernel changed.  A read that cannot be staged stays, and lowering reports it. */
static bool stage_reads(TsCompiler *c, IrKernel *k, const Infer *in) {
  bool changed = false;
  PtrVec done = {0};
  for (int i = 0; i < in->stage.len; i++) {
    const Access *a = in->stage.items[i];
    const Node *n = in->stage_nest.items[i];
    if (vec_has(&done, n->stmt)) continue; /* its loads of other fragments: the next round */
    if (pass_stage_fragment_reads(c, &k->body, n->stmt, a->buf)) {
      vec_push(c->arena, &done, n->stmt);
      changed = true;
    }
  }
  return changed;
}

/* Infers a kernel; when a held layout (set_held_layout) conflicts with another use of
 * its buffer, infers it again from the start with those buffers replicated; when a read
 * has to go through shared memory (stage_reads), from the start with the staged copy. */
static void infer_kernel_held(TsCompiler *c, IrKernel *k) {
  FragSnap snap = {.c = c};
  IrVisitor v = {snap_alloc, NULL, &snap};
  ir_visit(k->body, &v);
  PtrVec no_held = {0};
  int errors = c->diag.errors, staged = 0;
  for (int attempt = 0;; attempt++) {
    Infer in = {0};
    in.c = c;
    in.nthreads = in.scope = pass_kernel_threads(k);
    in.no_held = no_held;
    in.held_first = attempt > staged;
    infer_kernel(&in, k);
    if (c->diag.errors != errors) return;
    if (in.stage.len && staged < 8 && stage_reads(c, k, &in)) {
      for (int i = 0; i < snap.bufs.len; i++) ((IrBuffer *)snap.bufs.items[i])->fragment = snap.frags.items[i];
      staged++;
      continue;
    }
    if (!in.held_bad.len) return;
    for (int i = 0; attempt > staged && i < in.held_bad.len; i++) note_frag(&in, &no_held, in.held_bad.items[i]);
    for (int i = 0; i < snap.bufs.len; i++) ((IrBuffer *)snap.bufs.items[i])->fragment = snap.frags.items[i];
  }
}

static void walk(TsCompiler *c, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_KERNEL) {
    infer_kernel_held(c, &s->u.kernel);
    return;
  }
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, s->u.seq.items[i]);
}

void pass_layout_inference(TsCompiler *c, IrFunc *f) { walk(c, f->body); }
