/* lower_tile_ops.c — tile level -> thread level (after layout_inference).
 *
 * Every kernel gets a linear thread index `tid` (threadIdx.x, or x + y*X + z*X*Y).
 *  - A T.Parallel nest with loop layout L becomes per-thread UNROLLED loops over the
 *    thread's registers: for loop dim q, o_q walks the outer repetitions and u_q the
 *    vector lanes, and the logical index is i_q = o_q*V_q*t_q + c_q(tid)*V_q + u_q.
 *    Fragment accesses become one register index that is a compile-time constant after
 *    unrolling (registers are only registers when indexed by constants).  Padding
 *    elements (i_q >= extent) and, where loads/stores touch global memory, out-of-bounds
 *    elements are guarded (OOB loads read 0, OOB stores are skipped).  Replicated
 *    threads skip side effects on memory so nothing is done twice.
 *  - A contiguous copy in such a nest is emitted as one vector STORE of a vector LOAD
 *    (lanes = V <= 16 bytes) when alignment is provable.
 *  - T.reduce: each thread folds the elements it owns, then a butterfly of SHFL_XOR over
 *    the threads of the reduced dim; threads in different warps exchange partials
 *    through a shared-memory scratch buffer between barriers.
 *  - Scalar atomics become atomic_add(&buf[idx], v) calls; fragment/local buffers get
 *    one flat index and buf->local_size.
 *  - Shared buffers with a swizzle (layout.h, chosen for T.gemm operands) are addressed
 *    through layout_offset; T.gemm becomes one call of a device template
 *    (ts::gemm_ss_mma / ts::gemm_ss_wgmma[_issue], device/tilescale/gemm.cuh) whose
 *    accumulator layout is the C fragment's. */
#include <math.h>
#include <stdint.h>

#include "../layout/layout.h"
#include "passes.h"

typedef struct Lower {
  TsCompiler *c;
  IrFunc *f;
  IrKernel *k;
  int64_t T;
  IrExpr *tid;
  IrRangeEnv env;
  PtrVec kallocs; /* ALLOCs hoisted to the top of the kernel body */
  PtrVec scratch; /* IrBuffer*: the reductions' cross-warp workspaces */
  int counter;
  int nests; /* lowered T.Parallel nests: their IrStmt.iter_owned numbers */
  PtrVec unroll_vars; /* IrVar*: serial loop vars in register indices (shifted_index) */
  bool batch_reductions; /* lower_seq: consecutive reductions share their barrier */
  bool cluster_bulk; /* a T.copy_cluster bulk copy or a multicast T.tma_copy works on after it is
                        issued, in other blocks: the kernel ends with a cluster barrier */
} Lower;

typedef struct NestCtx {
  const ParNest *nest;
  const Fragment *L;
  IrExpr *lexpr[FRAG_MAX_DIMS]; /* register coordinate l_q of loop dim q */
  IrExpr *omexpr[FRAG_MAX_DIMS]; /* its parts: o_q M_q + m_q ... */
  IrExpr *uexpr[FRAG_MAX_DIMS];  /* ... and the vector lane u_q (l_q = omexpr V_q + u_q) */
  IrRangeEnv env;
} NestCtx;

typedef struct RwCtx { Lower *lw; NestCtx *nc; } RwCtx;

static IrExpr *i32(Lower *lw, int64_t v) { return ir_i32(lw->c, v); }
static IrExpr *bin(Lower *lw, IrExprKind k, IrExpr *a, IrExpr *b) { return ir_binary(lw->c, k, a, b, SRCLOC_NONE); }
/* Is c one of the conjuncts of a (a && b && ...)? */
static bool has_conjunct(const IrExpr *a, const IrExpr *c) {
  if (a->kind == IR_AND) return has_conjunct(a->u.ops[0], c) || has_conjunct(a->u.ops[1], c);
  return ir_expr_equal(a, c);
}

/* a && b, each of b's conjuncts that a already states left out (a user's guard and a bounds
 * check often say the same thing). */
static IrExpr *and_cond(Lower *lw, IrExpr *a, IrExpr *b) {
  if (!a || !b) return !a ? b : a;
  if (b->kind == IR_AND) return and_cond(lw, and_cond(lw, a, b->u.ops[0]), b->u.ops[1]);
  return has_conjunct(a, b) ? a : bin(lw, IR_AND, a, b);
}

static IrExpr *rw_expr(Lower *lw, NestCtx *nc, IrExpr *e);

static IrExpr **rw_list(Lower *lw, NestCtx *nc, IrExpr **xs, int n) {
  IrExpr **out = ARENA_ARRAY(lw->c->arena, IrExpr *, n);
  for (int i = 0; i < n; i++) out[i] = rw_expr(lw, nc, xs[i]);
  return out;
}

/* Register index of a held access (pass_access_map_held): loop dims through the nest's
 * layout, held dims (every thread holds all of them) by their own index; with div, also a
 * divided one (pass_access_map_div): a dim read at loop var // c has the register
 * coordinate (o M + m) V' + u / c of the loop dim's o, m, u, with V' its own vector
 * (fragment_derive_div: V / c, or 1 when c spans threads, where u / c is 0).  NULL when F is
 * not the layout the nest gives such an access. */
static IrExpr *held_index(Lower *lw, NestCtx *nc, const Fragment *F, IrExpr **idx, const int *map, const int64_t *div) {
  int64_t held[FRAG_MAX_DIMS];
  for (int p = 0; p < F->ndim; p++) held[p] = F->dim[p].extent;
  Fragment *want = fragment_derive_div(lw->c, nc->L, F->ndim, map, held, div);
  if (!want || !fragment_equal(want, F)) return NULL;
  IrExpr *reg = i32(lw, 0);
  for (int p = 0; p < F->ndim; p++) {
    IrExpr *coord = map[p] >= 0 ? nc->lexpr[map[p]] : map[p] == FRAG_HELD ? rw_expr(lw, nc, idx[p]) : NULL;
    if (map[p] >= 0 && div && div[p] > 1) {
      coord = bin(lw, IR_MUL, nc->omexpr[map[p]], i32(lw, F->dim[p].vec));
      if (nc->L->dim[map[p]].vec > div[p]) /* else u < V <= c: u / c is 0 */
        coord = bin(lw, IR_ADD, coord, bin(lw, IR_FLOORDIV, nc->uexpr[map[p]], i32(lw, div[p])));
    }
    if (coord) reg = bin(lw, IR_ADD, reg, bin(lw, IR_MUL, coord, i32(lw, fragment_reg_stride(F, p))));
  }
  return reg;
}

/* Register index of a shifted access (pass_access_map_shift, pass_shift_fits): the loop's
 * register coordinate of each dim plus its shift / fragment_shift_divisor, with F's register
 * strides (the loop has F's fields, so iteration i and element i + shift share the thread). */
static void note_loop_var(IrExpr *e, void *ctx) {
  Lower *lw = ctx;
  if (e->kind == IR_VAR && e->u.var->kind == IR_VAR_LOOP && !vec_has(&lw->unroll_vars, e->u.var))
    vec_push(lw->c->arena, &lw->unroll_vars, e->u.var);
}

static IrExpr *shifted_index(Lower *lw, NestCtx *nc, const Fragment *F, const int *map, IrExpr *const *shift) {
  /* Registers are registers only under constant indices: the serial loops whose vars the
   * shifts use are unrolled (lower_stmt), else the whole fragment would live in local memory. */
  IrVisitor vis = {NULL, note_loop_var, lw};
  for (int p = 0; p < F->ndim; p++)
    if (shift[p]) ir_visit_expr(shift[p], &vis);
  IrExpr *reg = i32(lw, 0);
  for (int p = 0; p < F->ndim; p++) {
    if (map[p] < 0) continue;
    IrExpr *coord = nc->lexpr[map[p]];
    if (shift[p]) {
      IrExpr *d = rw_expr(lw, nc, shift[p]);
      int64_t div = fragment_shift_divisor(F, p);
      if (d->dtype != TS_DTYPE_INT32) d = ir_cast(lw->c, TS_DTYPE_INT32, d, SRCLOC_NONE);
      coord = bin(lw, IR_ADD, coord, div > 1 ? bin(lw, IR_FLOORDIV, d, i32(lw, div)) : d);
    }
    reg = bin(lw, IR_ADD, reg, bin(lw, IR_MUL, coord, i32(lw, fragment_reg_stride(F, p))));
  }
  return reg;
}

/* The single register index of a fragment access (write: a store, or an address taken). */
static IrExpr *frag_index(Lower *lw, NestCtx *nc, IrBuffer *b, IrExpr **idx, int nidx, bool write, SrcLoc loc) {
  Fragment *F = b->fragment;
  if (!F) {
    ts_error(lw->c, loc, "fragment '%s' has no layout", b->name);
    return i32(lw, 0);
  }
  int map[FRAG_MAX_DIMS];
  if (nc && !fragment_is_replicated(F) && pass_access_map(nc->nest, b, idx, nidx, map)) {
    Fragment *want = fragment_derive(lw->c, nc->L, b->ndim, map);
    if (!fragment_equal(want, F)) {
      ts_error(lw->c, loc, "layout conflict for fragment '%s'", b->name);
      return i32(lw, 0);
    }
    IrExpr *reg = i32(lw, 0);
    for (int p = 0; p < b->ndim; p++)
      if (map[p] >= 0) reg = bin(lw, IR_ADD, reg, bin(lw, IR_MUL, nc->lexpr[map[p]], i32(lw, fragment_reg_stride(F, p))));
    return reg;
  }
  int64_t off[FRAG_MAX_DIMS];
  if (nc && !fragment_is_replicated(F) && pass_access_map_off(nc->nest, b, idx, nidx, map, off)) {
    /* a window of the fragment (fragment_crop): the loop must have the window's layout */
    int64_t ext[FRAG_MAX_DIMS], roff = 0;
    bool ok = true;
    for (int p = 0; p < b->ndim; p++) {
      ok &= map[p] >= 0;
      ext[p] = map[p] >= 0 ? nc->nest->extent[map[p]] : 1;
    }
    Fragment *win = ok ? fragment_crop(lw->c, F, off, ext, &roff) : NULL;
    bool prefix = ok;
    for (int p = 0; p < b->ndim; p++) prefix &= off[p] == 0;
    if (!win && prefix) win = fragment_restrict(lw->c, F, ext); /* same fields: F's registers */
    if (win && fragment_equal(fragment_derive(lw->c, nc->L, b->ndim, map), win)) {
      IrExpr *reg = i32(lw, roff);
      for (int p = 0; p < b->ndim; p++)
        reg = bin(lw, IR_ADD, reg, bin(lw, IR_MUL, nc->lexpr[map[p]], i32(lw, fragment_reg_stride(F, p))));
      return reg;
    }
  }
  IrExpr *shift[FRAG_MAX_DIMS];
  bool shifted = nc && !fragment_is_replicated(F) && pass_access_map_shift(lw->c, nc->nest, b, idx, nidx, map, shift);
  if (shifted && pass_shift_fits(lw->c, nc->L, F, map, shift)) return shifted_index(lw, nc, F, map, shift);
  if (nc && !fragment_is_replicated(F) && pass_access_map_held(nc->nest, b, idx, nidx, map)) {
    IrExpr *reg = held_index(lw, nc, F, idx, map, NULL);
    if (reg) return reg;
  }
  int64_t div[FRAG_MAX_DIMS];
  /* divided reads only (layout_inference lays out no divided write): the threads holding
   * copies of an element would each write their own iterations' values */
  if (nc && !write && !fragment_is_replicated(F) && pass_access_map_div(nc->nest, b, idx, nidx, map, div)) {
    IrExpr *reg = held_index(lw, nc, F, idx, map, div);
    if (reg) return reg;
  }
  if (shifted) {
    ts_error(lw->c, loc,
             "layout conflict for fragment '%s': it is spread over threads and indexed here at an offset from the "
             "loop variables; the loop can follow its layout only when each offset is a provable multiple of the "
             "fragment's period along that dim (the elements one thread repeats with) and nothing else lays the loop "
             "out otherwise",
             b->name);
    return i32(lw, 0);
  }
  if (!fragment_is_replicated(F)) {
    ts_error(lw->c, loc,
             "layout conflict for fragment '%s': it is a thread-distributed fragment (spread over threads) but "
             "indexed here with indices that are not the loop variables of its T.Parallel loop; a serial loop over "
             "one of its dims inside T.Parallel reads other threads' elements: reduce it with T.reduce_sum / "
             "T.reduce_max, or copy it to shared memory first",
             b->name);
    return i32(lw, 0);
  }
  return pass_flat_index(lw->c, b, rw_list(lw, nc, idx, nidx), nidx, loc);
}

/* Indices of an access after lowering: one index for register buffers. */
static IrExpr **access_index(Lower *lw, NestCtx *nc, IrBuffer *b, IrExpr **idx, int nidx, bool write, int *nout,
                             SrcLoc loc) {
  IrExpr **out;
  switch (b->scope) {
    case IR_SCOPE_FRAGMENT:
      out = ARENA_ARRAY(lw->c->arena, IrExpr *, 1);
      out[0] = frag_index(lw, nc, b, idx, nidx, write, loc);
      *nout = 1;
      return out;
    case IR_SCOPE_LOCAL:
      out = ARENA_ARRAY(lw->c->arena, IrExpr *, 1);
      out[0] = pass_flat_index(lw->c, b, rw_list(lw, nc, idx, nidx), nidx, loc);
      *nout = 1;
      return out;
    case IR_SCOPE_VAR:
      out = ARENA_ARRAY(lw->c->arena, IrExpr *, 1);
      out[0] = i32(lw, 0);
      *nout = 1;
      return out;
    case IR_SCOPE_SHARED:
    case IR_SCOPE_SHARED_DYN:
      if (b->layout && b->layout->swizzle && nidx == b->ndim && (nidx >= 2 || b->alias_of)) {
        /* Swizzled tiles (chosen for T.gemm operands or pinned by T.annotate_layout): one
         * element offset through the layout (layout.h); a pinned linear layout is row-major. */
        out = ARENA_ARRAY(lw->c->arena, IrExpr *, 1);
        out[0] = layout_offset(lw->c, b->layout, b, rw_list(lw, nc, idx, nidx), nidx);
        *nout = 1;
        return out;
      }
      *nout = nidx;
      return rw_list(lw, nc, idx, nidx);
    default: *nout = nidx; return rw_list(lw, nc, idx, nidx);
  }
}

/* idx < shape for the dims of a global access that are not provably in bounds. */
/* An index written with a subtraction or a negative constant (`by * 128 + i - 10`): it may go
 * below 0 by its own arithmetic.  (Offsets read from memory are trusted to be non-negative,
 * as the kernels that load row starts and lengths rely on.) */
static void find_minus(IrExpr *e, void *ctx) {
  if (e->kind == IR_SUB || e->kind == IR_NEG || (e->kind == IR_INT && e->u.ival < 0)) *(bool *)ctx = true;
}
static bool may_go_negative(IrExpr *e) {
  bool found = false;
  IrVisitor v = {NULL, find_minus, &found};
  ir_visit_expr(e, &v);
  return found;
}

static IrExpr *bounds_cond(Lower *lw, NestCtx *nc, IrBuffer *b, IrExpr **idx, int nidx) {
  if (!nc || b->scope != IR_SCOPE_GLOBAL) return NULL;
  IrExpr *cond = NULL;
  for (int k = 0; k < nidx && k < b->ndim; k++) {
    int64_t lo, hi, ext;
    bool known = ir_range(idx[k], &nc->env, &lo, &hi);
    if (ir_is_const_int(b->shape[k], &ext) && known && hi < ext && lo >= 0) continue;
    /* an index that may be negative (`by * 128 + i - 10`) is checked from below too */
    if (!(known && lo >= 0) && may_go_negative(idx[k]) && !ir_is_nonneg(idx[k], NULL, NULL))
      cond = and_cond(lw, cond, bin(lw, IR_GE, idx[k], i32(lw, 0)));
    cond = and_cond(lw, cond, bin(lw, IR_LT, idx[k], b->shape[k]));
  }
  return cond;
}

static IrExpr *zero_of(Lower *lw, ts_dtype t) { return ir_int(lw->c, 0, t, SRCLOC_NONE); }

static IrExpr *rw_expr(Lower *lw, NestCtx *nc, IrExpr *e) {
  if (!e) return NULL;
  switch (e->kind) {
    case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return e;
    case IR_LOAD: {
      IrBuffer *b = e->u.load.buf;
      int n;
      IrExpr **idx = access_index(lw, nc, b, e->u.load.idx, e->u.load.nidx, false, &n, e->loc);
      IrExpr *r = ir_load(lw->c, b, idx, n, e->loc);
      r->dtype = e->dtype;
      r->lanes = e->lanes;
      IrExpr *cond = bounds_cond(lw, nc, b, idx, n);
      IrExpr *oob = b->safe_value ? ir_cast(lw->c, r->dtype, b->safe_value, e->loc) : zero_of(lw, r->dtype);
      return cond ? ir_select(lw->c, IR_IF_THEN_ELSE, cond, r, oob, e->loc) : r;
    }
    case IR_CALL: {
      /* &frag[0, ..., 0] outside a parallel loop (calls the compiler makes, e.g. the
       * stream-K partials of warp_specialize): the thread's register array of the fragment */
      if (!nc && e->u.call.op == IRI_ADDRESS_OF && e->u.call.nargs == 1 && e->u.call.args[0]->kind == IR_LOAD) {
        const IrExpr *ld = e->u.call.args[0];
        IrBuffer *b = ld->u.load.buf;
        bool zero = b->scope == IR_SCOPE_FRAGMENT && b->fragment && !fragment_is_replicated(b->fragment);
        for (int i = 0; zero && i < ld->u.load.nidx; i++) {
          int64_t v;
          zero = ir_is_const_int(ld->u.load.idx[i], &v) && v == 0;
        }
        if (zero) {
          IrExpr *c0 = i32(lw, 0), *base = ir_load(lw->c, b, &c0, 1, e->loc);
          return ir_call(lw->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &base, 1, e->loc);
        }
      }
      IrExpr *r = ARENA_NEW(lw->c->arena, IrExpr);
      *r = *e;
      if (e->u.call.op == IRI_ADDRESS_OF && e->u.call.nargs == 1 && e->u.call.args[0]->kind == IR_LOAD) {
        /* An address reads nothing: its element's index is lowered, but no out-of-bounds
         * select is put around it (the operation that uses the address owns that). */
        IrExpr *ld = e->u.call.args[0];
        int n;
        IrExpr **idx = access_index(lw, nc, ld->u.load.buf, ld->u.load.idx, ld->u.load.nidx, true, &n, ld->loc);
        IrExpr *nl = ir_load(lw->c, ld->u.load.buf, idx, n, ld->loc);
        nl->dtype = ld->dtype;
        nl->lanes = ld->lanes;
        r->u.call.args = ARENA_ARRAY(lw->c->arena, IrExpr *, 1);
        r->u.call.args[0] = nl;
        return r;
      }
      r->u.call.args = rw_list(lw, nc, e->u.call.args, e->u.call.nargs);
      return r;
    }
    default: {
      IrExpr *r = ARENA_NEW(lw->c->arena, IrExpr);
      *r = *e;
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) r->u.ops[i] = rw_expr(lw, nc, e->u.ops[i]);
      return r;
    }
  }
}

static IrStmt *lower_stmt(TsCompiler *c, IrStmt *s, void *ctx);

static IrVar *new_var(Lower *lw, const char *base) {
  return ir_var(lw->c, arena_printf(lw->c->arena, "%s%d", base, lw->counter++), TS_DTYPE_INT32, IR_VAR_LOOP,
                SRCLOC_NONE);
}

static IrStmt *unrolled(Lower *lw, IrVar *v, int64_t ext, IrStmt *body) {
  return ir_for(lw->c, v, i32(lw, 0), i32(lw, ext), IR_FOR_UNROLLED, body, SRCLOC_NONE);
}

/* r, one element atomic of statement s, between the fences that give it s's memory order
 * (ts::atomic_fence: releasing orders fence before it, acquiring ones after); r itself when
 * the order is relaxed. */
static IrStmt *ordered_atomic(TsCompiler *c, const IrStmt *s, IrStmt *r) {
  if (!s->u.atomic.order) return r;
  IrStmt *items[3] = {ir_atomic_fence(c, s->u.atomic.order, false, s->loc), r,
                      ir_atomic_fence(c, s->u.atomic.order, true, s->loc)};
  PtrVec v = {0};
  for (int i = 0; i < 3; i++)
    if (items[i]) vec_push(c->arena, &v, items[i]);
  return ir_seq_vec(c, &v, s->loc);
}

static IrStmt *lower_atomic(Lower *lw, NestCtx *nc, IrStmt *s) {
  const IrRegion *d = &s->u.atomic.dst;
  if (d->buf->scope != IR_SCOPE_GLOBAL && d->buf->scope != IR_SCOPE_SHARED && d->buf->scope != IR_SCOPE_SHARED_DYN) {
    ts_error(lw->c, s->loc, "T.atomic_add needs a global or shared destination");
    return NULL;
  }
  int n;
  IrExpr **idx = access_index(lw, nc, d->buf, d->min, d->ndim, true, &n, s->loc);
  IrExpr *val = ir_cast(lw->c, d->buf->dtype, rw_expr(lw, nc, s->u.atomic.value), s->loc);
  IrExpr *addr_arg = ir_load(lw->c, d->buf, idx, n, s->loc);
  IrExpr *addr = ir_call(lw->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &addr_arg, 1, s->loc);
  IrIntrin op = s->u.atomic.op == IR_ATOMIC_MAX ? IRI_ATOMIC_MAX : s->u.atomic.op == IR_ATOMIC_MIN ? IRI_ATOMIC_MIN : IRI_ATOMIC_ADD;
  IrExpr *args[2] = {addr, val};
  IrStmt *r = ordered_atomic(lw->c, s, ir_eval(lw->c, ir_call(lw->c, op, d->buf->dtype, args, 2, s->loc), s->loc));
  IrExpr *cond = bounds_cond(lw, nc, d->buf, idx, n);
  return cond ? ir_if(lw->c, cond, r, NULL, s->loc) : r;
}

/* Statement rewriting shared by nest bodies (nc != NULL) and the rest of the kernel. */
static IrStmt *rw_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  RwCtx *rc = ctx;
  Lower *lw = rc->lw;
  NestCtx *nc = rc->nc;
  if (!s) return NULL;
  switch (s->kind) {
    case IR_S_STORE: {
      IrBuffer *b = s->u.store.buf;
      int n;
      IrExpr **idx = access_index(lw, nc, b, s->u.store.idx, s->u.store.nidx, true, &n, s->loc);
      IrStmt *r = ir_store(c, b, idx, n, rw_expr(lw, nc, s->u.store.value), s->loc);
      r->u.store.lanes = s->u.store.lanes;
      IrExpr *cond = bounds_cond(lw, nc, b, idx, n);
      return cond ? ir_if(c, cond, r, NULL, s->loc) : r;
    }
    case IR_S_ATOMIC: return lower_atomic(lw, nc, s);
    case IR_S_FOR:
      if (s->u.loop.kind == IR_FOR_PARALLEL || nc == NULL) break;
      {
        IrStmt *r = ir_map_children(c, s, rw_stmt, ctx);
        r->u.loop.min = rw_expr(lw, nc, s->u.loop.min);
        r->u.loop.extent = rw_expr(lw, nc, s->u.loop.extent);
        return r;
      }
    case IR_S_REDUCE:
      if (nc) {
        ts_error(c, s->loc, "tile operations are not allowed inside T.Parallel");
        return NULL;
      }
      break;
    case IR_S_IF: {
      IrStmt *r = ir_map_children(c, s, rw_stmt, ctx);
      r->u.if_.cond = rw_expr(lw, nc, s->u.if_.cond);
      return r;
    }
    case IR_S_WHILE: {
      IrStmt *r = ir_map_children(c, s, rw_stmt, ctx);
      r->u.while_.cond = rw_expr(lw, nc, s->u.while_.cond);
      return r;
    }
    case IR_S_LET: {
      IrStmt *r = ir_let(c, s->u.let.var, rw_expr(lw, nc, s->u.let.value), s->loc);
      /* A let outside T.Parallel with a known range (rasterized block indices) lets the
       * bounds analysis drop guards just like the block index it replaces. */
      int64_t lo, hi;
      if (!nc && lw->env.n < 32 && ir_range(r->u.let.value, &lw->env, &lo, &hi))
        ir_range_env_add(&lw->env, s->u.let.var, lo, hi);
      return r;
    }
    case IR_S_EVAL: return ir_eval(c, rw_expr(lw, nc, s->u.eval.value), s->loc);
    case IR_S_ASSERT: {
      IrStmt *r = ir_stmt(c, IR_S_ASSERT, s->loc);
      *r = *s;
      r->u.assert_.cond = rw_expr(lw, nc, s->u.assert_.cond);
      return r;
    }
    case IR_S_SEQ: return ir_map_children(c, s, rw_stmt, ctx);
    /* Leaves with nothing to rewrite; lower_stmt sends them back here, so they must end
     * the mutual recursion instead of falling through to it. */
    case IR_S_BREAK: case IR_S_CONTINUE: case IR_S_RETURN: return s;
    default: break;
  }
  if (nc) {
    if (s->kind == IR_S_FOR) ts_error(c, s->loc, "T.Parallel loops must be directly nested");
    return s;
  }
  return lower_stmt(c, s, lw);
}

/* A statement that touches memory other than the thread's own registers.  A reducer's
 * per-thread partial counts too: replicas of an iteration must add it once, not once each. */
static bool is_memory_effect(const IrStmt *s) {
  if (s->kind == IR_S_STORE) {
    IrScope sc = s->u.store.buf->scope;
    return (sc != IR_SCOPE_FRAGMENT && sc != IR_SCOPE_LOCAL && sc != IR_SCOPE_VAR) || s->u.store.buf->reducer;
  }
  return s->kind == IR_S_ATOMIC || s->kind == IR_S_EVAL;
}

typedef struct SideFx { bool found, writes_regs; } SideFx;
static void sidefx_stmt(IrStmt *s, void *ctx) {
  SideFx *f = ctx;
  if (is_memory_effect(s)) f->found = true;
  else if (s->kind == IR_S_STORE) f->writes_regs = true;
}

/* Wraps each memory effect under s in `if (cond)`, leaving register writes to every
 * thread: the replicas of a fragment element each need the value in their own registers. */
static IrStmt *guard_memory_effects(TsCompiler *c, IrStmt *s, void *cond) {
  if (!s) return NULL;
  if (is_memory_effect(s)) return ir_if(c, cond, s, NULL, s->loc);
  return ir_map_children(c, s, guard_memory_effects, cond);
}

/* A vector statement s of a nest: the loop vars substituted (to), the last dim's lane var
 * uv[last] at 0 (the vector starts at lane 0), which is then gone from to[] and uv. */
static IrStmt *at_lane0(Lower *lw, const ParNest *nest, IrVar **uv, IrExpr **to, IrStmt *s) {
  int last = nest->n - 1;
  IrVar *uf[1] = {uv[last]};
  IrExpr *u0[1] = {i32(lw, 0)};
  s = ir_subst_stmt(lw->c, ir_subst_stmt(lw->c, s, nest->var, to, nest->n), uf, u0, 1);
  for (int q = 0; q < nest->n; q++) to[q] = ir_subst(lw->c, to[q], uf, u0, 1);
  uv[last] = NULL;
  return s;
}

/* Whether one operand of a nest moves V lanes together along its last dim: a fragment laid out
 * with vectors of V there, or memory whose last index runs through V neighbours. */
static bool vec_operand_lanes(const ParNest *nest, IrBuffer *b, IrExpr **idx, int nidx, int64_t V) {
  int last = nest->n - 1;
  /* 4-bit tensors in memory share bytes between elements: element by element (ts::st4). */
  if (dtype_is_packed(b->dtype) && b->scope != IR_SCOPE_FRAGMENT && b->scope != IR_SCOPE_LOCAL) return false;
  if (b->scope == IR_SCOPE_FRAGMENT) {
    int map[FRAG_MAX_DIMS];
    int64_t off[FRAG_MAX_DIMS] = {0};
    if (!b->fragment || fragment_is_replicated(b->fragment)) return false;
    if (!pass_access_map(nest, b, idx, nidx, map) && !pass_access_map_off(nest, b, idx, nidx, map, off)) return false;
    return map[nidx - 1] == last && b->fragment->dim[nidx - 1].vec == V && off[nidx - 1] % V == 0;
  }
  if (b->scope != IR_SCOPE_GLOBAL && b->scope != IR_SCOPE_SHARED && b->scope != IR_SCOPE_SHARED_DYN) return false;
  if (nidx != b->ndim || nidx == 0) return false;
  if (b->remap) return false; /* T.Layout: neighbouring logical elements need not be neighbours in memory */
  return pass_lane_indices(nest, idx, nidx, V) && pass_rows_on_vectors(b, nidx, V); /* (vector_lanes.c) */
}

/* Checks one operand of a copy nest for the vector path (see lower_nest): V lanes in one
 * access of at most 16 bytes. */
static bool vec_operand(const ParNest *nest, IrBuffer *b, IrExpr **idx, int nidx, int64_t V) {
  return V * dtype_bytes(b->dtype) <= 16 && vec_operand_lanes(nest, b, idx, nidx, V);
}

/* Marks the lowered nest for thread_sync (IrStmt.iter_owned = id) when each iteration runs in
 * one thread.  Not when replicas of an iteration all run its register writes: they read shared
 * memory that replica 0 writes in the same iteration.  A SEQ is flattened into the enclosing
 * list later, so each of its statements carries the mark. */
static IrStmt *mark_iter_owned(TsCompiler *c, IrStmt *body, bool one_thread, int id) {
  if (!one_thread || !body) return body;
  if (body->kind == IR_S_SEQ) {
    PtrVec items = {0};
    for (int i = 0; i < body->u.seq.n; i++)
      vec_push(c->arena, &items, mark_iter_owned(c, body->u.seq.items[i], true, id));
    return ir_seq_vec(c, &items, body->loc);
  }
  IrStmt *m = ir_stmt(c, body->kind, body->loc);
  *m = *body;
  m->iter_owned = id;
  return m;
}

/* ---- staged vector accesses ----
 * A nest whose last dim carries V lanes but whose body is more than one contiguous copy
 * (lets, arithmetic, several operands) would touch shared and global memory one element at
 * a time.  Instead each contiguous memory operand moves through a V-element register array:
 * a load becomes one vector load before the lane loop, a store one vector store after it,
 * and the lanes compute on registers.  Only for nests without padding (lower_nest checks)
 * and straight-line bodies (LET and STORE) whose calls are pure, whose memory accesses all
 * pass vec_operand and need no bounds guard, and where a written buffer is read, if at all,
 * only before the write and at the same index (each lane then reads and writes its own
 * element, so hoisting the reads is exact). */
typedef struct VecStage {
  IrBuffer *buf;
  IrExpr **idx; /* the logical access (nest vars) */
  int nidx;
  IrBuffer *tmp; /* its V-element register array */
  bool store;
} VecStage;

typedef struct StageScan {
  Lower *lw;
  NestCtx *nc;
  const ParNest *nest;
  const Fragment *L;
  int64_t V;
  IrVar *lane;     /* the last dim's lane variable u */
  PtrVec stages;   /* VecStage* */
  PtrVec scalar_reads; /* IrBuffer*: remapped tensors read element by element */
  bool ok;
} StageScan;

static bool is_memory_scope(IrScope sc) {
  return sc == IR_SCOPE_GLOBAL || sc == IR_SCOPE_SHARED || sc == IR_SCOPE_SHARED_DYN;
}

/* An index that reads no memory and calls nothing impure: it may be evaluated once per
 * vector instead of once per lane. */
static bool plain_index(const IrExpr *e) {
  if (!e) return true;
  if (e->kind == IR_LOAD) return false;
  if (e->kind == IR_CALL) {
    if (!ir_call_is_pure(e)) return false;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!plain_index(e->u.call.args[i])) return false;
    return true;
  }
  for (int i = 0; i < ir_expr_nops[e->kind]; i++)
    if (!plain_index(e->u.ops[i])) return false;
  return true;
}

static bool plain_indices(IrExpr *const *idx, int n) {
  for (int i = 0; i < n; i++)
    if (!plain_index(idx[i])) return false;
  return true;
}

static bool same_access(const VecStage *v, const IrBuffer *b, IrExpr *const *idx, int nidx) {
  if (v->buf != b || v->nidx != nidx) return false;
  for (int i = 0; i < nidx; i++)
    if (!ir_expr_equal(v->idx[i], idx[i])) return false;
  return true;
}

/* The stage of this access, made on first sight; NULL (and sc->ok = false) when it
 * cannot be staged. */
static VecStage *stage_of(StageScan *sc, IrBuffer *b, IrExpr **idx, int nidx, bool store) {
  Lower *lw = sc->lw;
  for (int i = 0; i < sc->stages.len; i++) {
    VecStage *v = sc->stages.items[i];
    if (v->buf != b) continue;
    /* A written buffer: nothing after the write; before it, reads at the same index only. */
    if (v->store || (store && !same_access(v, b, idx, nidx))) {
      sc->ok = false;
      return NULL;
    }
    if (!store && same_access(v, b, idx, nidx)) return v;
  }
  int n = 0;
  IrExpr **low = NULL;
  if (plain_indices(idx, nidx) && vec_operand(sc->nest, b, idx, nidx, sc->V))
    low = access_index(lw, sc->nc, b, idx, nidx, store, &n, SRCLOC_NONE);
  if (!low || bounds_cond(lw, sc->nc, b, low, n)) {
    sc->ok = false;
    return NULL;
  }
  VecStage *v = ARENA_NEW(lw->c->arena, VecStage);
  v->buf = b;
  v->idx = idx;
  v->nidx = nidx;
  v->store = store;
  v->tmp = ir_buffer(lw->c, arena_printf(lw->c->arena, "%s_v%d", b->name, lw->counter++), b->dtype, IR_SCOPE_LOCAL,
                     1, (IrExpr *[]){i32(lw, sc->V)}, b->loc);
  v->tmp->local_size = sc->V;
  vec_push(lw->c->arena, &sc->stages, v);
  return v;
}

/* The expression with every memory load replaced by its register array's lane. */
static IrExpr *stage_expr(StageScan *sc, IrExpr *e) {
  if (!e || !sc->ok) return e;
  IrExpr *r;
  switch (e->kind) {
    case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return e;
    case IR_LOAD: {
      if (e->lanes != 1) { sc->ok = false; return e; }
      if (!is_memory_scope(e->u.load.buf->scope)) {
        if (!plain_indices(e->u.load.idx, e->u.load.nidx)) sc->ok = false;
        return e;
      }
      /* a T.Layout-remapped tensor: read element by element in the lane loop */
      if (e->u.load.buf->remap && plain_indices(e->u.load.idx, e->u.load.nidx)) {
        vec_push(sc->lw->c->arena, &sc->scalar_reads, e->u.load.buf);
        return e;
      }
      VecStage *v = stage_of(sc, e->u.load.buf, e->u.load.idx, e->u.load.nidx, false);
      if (!v) return e;
      IrExpr *lane = ir_varref(sc->lw->c, sc->lane, SRCLOC_NONE);
      IrExpr *l = ir_load(sc->lw->c, v->tmp, &lane, 1, e->loc);
      l->dtype = e->dtype;
      return l;
    }
    case IR_CALL:
      if (!ir_call_is_pure(e)) {
        sc->ok = false;
        return e;
      }
      r = ARENA_NEW(sc->lw->c->arena, IrExpr);
      *r = *e;
      r->u.call.args = ARENA_ARRAY(sc->lw->c->arena, IrExpr *, e->u.call.nargs);
      for (int i = 0; i < e->u.call.nargs; i++) r->u.call.args[i] = stage_expr(sc, e->u.call.args[i]);
      return r;
    default:
      r = ARENA_NEW(sc->lw->c->arena, IrExpr);
      *r = *e;
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) r->u.ops[i] = stage_expr(sc, e->u.ops[i]);
      return r;
  }
}

static IrStmt *stage_stmt(StageScan *sc, IrStmt *s) {
  TsCompiler *c = sc->lw->c;
  if (s->kind == IR_S_LET) return ir_let(c, s->u.let.var, stage_expr(sc, s->u.let.value), s->loc);
  if (s->kind != IR_S_STORE || s->u.store.lanes != 1) {
    sc->ok = false;
    return s;
  }
  IrExpr *val = stage_expr(sc, s->u.store.value);
  IrBuffer *b = s->u.store.buf;
  if (!is_memory_scope(b->scope)) {
    if (!plain_indices(s->u.store.idx, s->u.store.nidx)) sc->ok = false;
    return ir_store(c, b, s->u.store.idx, s->u.store.nidx, val, s->loc);
  }
  if (b->reducer) sc->ok = false;
  VecStage *v = sc->ok ? stage_of(sc, b, s->u.store.idx, s->u.store.nidx, true) : NULL;
  if (!v) return s;
  IrExpr *lane = ir_varref(c, sc->lane, SRCLOC_NONE);
  return ir_store(c, v->tmp, &lane, 1, val, s->loc);
}

/* The vector move between a stage's register array and memory, at lane 0 of the nest
 * iteration (nest vars replaced by `to`). */
static IrStmt *stage_move(StageScan *sc, const VecStage *v, IrExpr **to) {
  Lower *lw = sc->lw;
  TsCompiler *c = lw->c;
  int n;
  IrExpr **mi = access_index(lw, sc->nc, v->buf, v->idx, v->nidx, v->store, &n, SRCLOC_NONE);
  IrExpr *zero = i32(lw, 0);
  IrExpr *mem = ir_load(c, v->buf, mi, n, SRCLOC_NONE), *reg = ir_load(c, v->tmp, &zero, 1, SRCLOC_NONE);
  mem->lanes = reg->lanes = (int)sc->V;
  IrStmt *st = v->store ? ir_store(c, v->buf, mi, n, reg, SRCLOC_NONE) : ir_store(c, v->tmp, &zero, 1, mem, SRCLOC_NONE);
  st->u.store.lanes = (int)sc->V;
  IrVar *uf[1] = {sc->lane};
  IrExpr *u0[1] = {zero};
  return ir_subst_stmt(c, ir_subst_stmt(c, st, sc->nest->var, to, sc->nest->n), uf, u0, 1);
}

/* Rewrites the nest body through register arrays; fills *pre (allocations and vector
 * loads) and *post (vector stores).  Returns NULL when the body does not qualify. */
static IrStmt *stage_vector_body(Lower *lw, NestCtx *nc, const ParNest *nest, const Fragment *L, IrVar *lane,
                                 IrExpr **to, IrStmt **pre, IrStmt **post) {
  TsCompiler *c = lw->c;
  int64_t V = L->dim[nest->n - 1].vec;
  if (!lane || V <= 1 || !nest->body) return NULL;
  StageScan sc = {lw, nc, nest, L, V, lane, {0}, {0}, true};
  IrStmt *b = nest->body;
  int nitems = b->kind == IR_S_SEQ ? b->u.seq.n : 1;
  PtrVec items = {0};
  for (int i = 0; i < nitems && sc.ok; i++)
    vec_push(c->arena, &items, stage_stmt(&sc, b->kind == IR_S_SEQ ? b->u.seq.items[i] : b));
  if (!sc.ok || sc.stages.len == 0) return NULL;
  /* a tensor read element by element must not be one the vectors write (after the lanes) */
  for (int i = 0; i < sc.scalar_reads.len; i++)
    for (int j = 0; j < sc.stages.len; j++)
      if (((VecStage *)sc.stages.items[j])->buf == sc.scalar_reads.items[i]) return NULL;
  PtrVec before = {0}, after = {0};
  for (int i = 0; i < sc.stages.len; i++) {
    VecStage *v = sc.stages.items[i];
    IrStmt *al = ir_stmt(c, IR_S_ALLOC, SRCLOC_NONE);
    al->u.alloc.buf = v->tmp;
    vec_push(c->arena, &before, al);
    vec_push(c->arena, v->store ? &after : &before, stage_move(&sc, v, to));
  }
  *pre = ir_seq_vec(c, &before, SRCLOC_NONE);
  *post = ir_seq_vec(c, &after, SRCLOC_NONE);
  return ir_seq_vec(c, &items, b->loc);
}

/* cp.async moves 4, 8 or 16 bytes from global to shared without a conversion: V elements of
 * a copy the pipeline marked asynchronous. */
static bool async_eligible(const IrStmt *s, const IrBuffer *sb, const IrBuffer *db, bool converts, int64_t V) {
  int64_t vbytes = V * dtype_bytes(db->dtype);
  return s->u.loop.async_copy && sb->scope == IR_SCOPE_GLOBAL && !converts && !dtype_is_packed(db->dtype) &&
         (db->scope == IR_SCOPE_SHARED || db->scope == IR_SCOPE_SHARED_DYN) && (vbytes == 4 || vbytes == 8 || vbytes == 16);
}

/* The vector path of lower_nest: a nest whose body is one store of a copied value
 * (pass_gather_value) with both operands passing vec_operand moves V lanes at a time; the
 * value may be zero where a condition that is the same over each vector fails (a gather:
 * im2col's padding).  Returns NULL for any other nest.  Substitutes lane 0 into `to` and
 * clears uv[last] (the lane loop is gone). */
static IrStmt *lower_vector_copy(Lower *lw, NestCtx *nc, const ParNest *nest, const IrStmt *s, IrVar **uv,
                                 IrExpr **to) {
  TsCompiler *c = lw->c;
  int n = nest->n, last = n - 1;
  int64_t V = nc->L->dim[last].vec;
  IrStmt *b0 = nest->body;
  if (b0 && b0->kind == IR_S_SEQ && b0->u.seq.n == 1) b0 = b0->u.seq.items[0];
  /* one lane only for a pipelined copy (below: a 4- or 8-byte element is a cp.async too) */
  if (V < 1 || (V == 1 && !s->u.loop.async_copy) || !b0 || b0->kind != IR_S_STORE || b0->u.store.lanes != 1 ||
      nest->extent[last] % V != 0)
    return NULL;
  IrExpr *gcond = NULL;
  bool converts = false;
  IrExpr *ld = pass_gather_value(c, b0->u.store.value, &gcond, &converts);
  if (!ld || ld->u.load.buf->safe_value) return NULL; /* the edge fills 0; an annotated safe value: element-wise */
  if (V == 1) { /* one element: no lanes to line up; the operands index memory directly */
    if (!async_eligible(s, ld->u.load.buf, b0->u.store.buf, converts, 1) || ld->u.load.buf->remap || b0->u.store.buf->remap)
      return NULL;
  } else if ((gcond && !pass_lane_uniform(gcond, nest->var[last], V)) ||
             !vec_operand(nest, b0->u.store.buf, b0->u.store.idx, b0->u.store.nidx, V) ||
             !vec_operand(nest, ld->u.load.buf, ld->u.load.idx, ld->u.load.nidx, V)) {
    return NULL;
  }
  IrBuffer *db = b0->u.store.buf, *sb = ld->u.load.buf;
  int nd, ns;
  IrExpr **di = access_index(lw, nc, db, b0->u.store.idx, b0->u.store.nidx, true, &nd, b0->loc);
  IrExpr **si = access_index(lw, nc, sb, ld->u.load.idx, ld->u.load.nidx, false, &ns, ld->loc);
  IrExpr *vl = ir_load(c, sb, si, ns, ld->loc);
  vl->lanes = (int)V;
  IrExpr *vv = vl;
  if (converts) {
    vv = ir_cast(c, b0->u.store.value->dtype, vl, b0->loc);
    vv->lanes = (int)V;
  }
  IrStmt *vs = ir_store(c, db, di, nd, vv, b0->loc);
  vs->u.store.lanes = (int)V;
  vs->u.store.async_ = async_eligible(s, sb, db, converts, V);
  /* Where the gather's condition fails or the source is past the edge, the vector reads
   * nothing and the destination elements become 0 (the safe value). */
  IrExpr *lc = and_cond(lw, gcond ? rw_expr(lw, nc, gcond) : NULL, bounds_cond(lw, nc, sb, si, ns));
  IrExpr *sc = bounds_cond(lw, nc, db, di, nd);
  if (lc) { /* the zero fill runs the lanes itself: its lane var is z */
    IrVar *z = new_var(lw, "z");
    IrVar *uf[1] = {uv[last]};
    IrExpr *zv[1] = {ir_varref(c, z, SRCLOC_NONE)};
    IrStmt *zs = ir_store(c, db, di, nd, zero_of(lw, db->dtype), b0->loc);
    zs->u.store.async_ = vs->u.store.async_; /* ordered by the pipeline's barriers like the copy */
    zs = ir_subst_stmt(c, ir_subst_stmt(c, zs, nest->var, to, n), uf, zv, 1);
    bool zfill = vs->u.store.async_;
    vs = ir_if(c, lc, vs, unrolled(lw, z, V, zs), b0->loc);
    vs->u.if_.zfill = zfill;
  }
  if (sc) vs = ir_if(c, sc, vs, NULL, b0->loc);
  return at_lane0(lw, nest, uv, to, vs);
}

/* Is st a scalar atomic add `dst[.., x + j] += src[.., j]` (src a fragment, a shared tile or a
 * global tensor, no conversion, dst a float tensor in global memory) whose operands both move
 * V lanes along the nest's last dim? */
static bool vector_atomic_stmt(const ParNest *nest, const IrStmt *st, int64_t V) {
  if (!st || st->kind != IR_S_ATOMIC || st->u.atomic.op != IR_ATOMIC_ADD || st->u.atomic.tile) return false;
  const IrRegion *d = &st->u.atomic.dst;
  const IrExpr *ld = st->u.atomic.value;
  if (!ld || ld->kind != IR_LOAD || ld->lanes != 1 || ld->dtype != d->buf->dtype || d->buf->scope != IR_SCOPE_GLOBAL ||
      (ld->u.load.buf->scope != IR_SCOPE_FRAGMENT && ld->u.load.buf->scope != IR_SCOPE_GLOBAL &&
       !pass_is_shared(ld->u.load.buf)) || ld->u.load.buf->remap || !dtype_is_float(d->buf->dtype))
    return false;
  return vec_operand_lanes(nest, d->buf, d->min, d->ndim, V) &&
         vec_operand_lanes(nest, ld->u.load.buf, ld->u.load.idx, ld->u.load.nidx, V);
}

/* One ts::atomic_add_x<W> of atomic statement st at lane `first` of its vector. */
static IrStmt *atomic_chunk(Lower *lw, NestCtx *nc, const ParNest *nest, IrExpr **to, IrVar *lane, const IrStmt *st,
                            int64_t first, int64_t W) {
  TsCompiler *c = lw->c;
  const IrRegion *d = &st->u.atomic.dst;
  IrExpr *ld = st->u.atomic.value;
  int nd, ns;
  IrExpr **di = access_index(lw, nc, d->buf, d->min, d->ndim, true, &nd, st->loc);
  IrExpr **si = access_index(lw, nc, ld->u.load.buf, ld->u.load.idx, ld->u.load.nidx, false, &ns, ld->loc);
  IrExpr *dl = ir_load(c, d->buf, di, nd, st->loc), *sl = ir_load(c, ld->u.load.buf, si, ns, ld->loc);
  IrExpr *args[3] = {ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &dl, 1, st->loc),
                     ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &sl, 1, st->loc), i32(lw, W)};
  IrStmt *r = ordered_atomic(c, st, ir_eval(c, ir_call(c, IRI_ATOMIC_ADD_X, TS_DTYPE_VOID, args, 3, st->loc), st->loc));
  IrExpr *cond = bounds_cond(lw, nc, d->buf, di, nd); /* the chunk's first lane in bounds: all are */
  if (cond) r = ir_if(c, cond, r, NULL, st->loc);
  if (!first) return r;
  r = ir_subst_stmt(c, r, nest->var, to, nest->n); /* the loop vars in terms of the lane var */
  IrExpr *at[1] = {ir_binary(c, IR_ADD, ir_varref(c, lane, st->loc), i32(lw, first), st->loc)};
  return ir_subst_stmt(c, r, &lane, at, 1);
}

/* A nest of atomic adds `T.atomic_add(dst[.., x + j], src[.., j])` (vector_atomic_stmt) whose
 * last loop dim carries V lanes in every destination and source: per statement, V / W calls
 * of ts::atomic_add_x<W>, W lanes the widest vector atomic of the type (sm_90: a float4 /
 * float2 atomic on global memory; half2 / bfloat162 anywhere; else W scalar atomics),
 * as TileLang vectorizes atomic adds.  Returns NULL for any other nest. */
static IrStmt *lower_vector_atomic(Lower *lw, NestCtx *nc, const ParNest *nest, IrVar **uv, IrExpr **to) {
  TsCompiler *c = lw->c;
  int last = nest->n - 1;
  int64_t V = nc->L->dim[last].vec;
  IrStmt *b0 = nest->body;
  IrStmt *const *items = b0 && b0->kind == IR_S_SEQ ? b0->u.seq.items : &b0;
  int n = b0 && b0->kind == IR_S_SEQ ? b0->u.seq.n : 1;
  if (V < 2 || !b0 || nest->extent[last] % V != 0) return NULL;
  int64_t W = 0;
  for (int i = 0; i < n; i++) {
    if (!vector_atomic_stmt(nest, items[i], V)) return NULL;
    int bytes = dtype_bytes(items[i]->u.atomic.dst.buf->dtype);
    int64_t w = V, widest = bytes == 4 ? 4 : bytes == 2 ? 2 : 1; /* float4, half2 / bfloat162 */
    while (w > widest) w /= 2;
    if (!W || w < W) W = w;
  }
  if (W < 2) return NULL;
  PtrVec out = {0};
  for (int i = 0; i < n; i++)
    for (int64_t first = 0; first < V; first += W)
      vec_push(c->arena, &out, atomic_chunk(lw, nc, nest, to, uv[last], items[i], first, W));
  IrStmt *r = ir_seq_vec(c, &out, b0->loc);
  return at_lane0(lw, nest, uv, to, r);
}

static IrStmt *lower_nest(Lower *lw, IrStmt *s) {
  TsCompiler *c = lw->c;
  ParNest nest;
  if (!pass_parallel_nest(c, s, &nest)) return NULL;
  const Fragment *L = s->u.loop.loop_layout;
  if (!L || L->ndim != nest.n) {
    ts_error(c, s->loc, "T.Parallel loop has no layout");
    return NULL;
  }
  int n = nest.n;
  IrVar *ov[FRAG_MAX_DIMS] = {0}, *uv[FRAG_MAX_DIMS] = {0}, *mv[FRAG_MAX_DIMS] = {0};
  IrExpr *ival[FRAG_MAX_DIMS];
  NestCtx nc = {0};
  nc.nest = &nest;
  nc.L = L;
  nc.env = lw->env;
  for (int q = 0; q < n; q++) {
    const FragDim *d = &L->dim[q];
    int64_t O = fragment_outer(L, q), M = fragdim_mid(d), T2 = fragdim_t2(d);
    IrExpr *o = i32(lw, 0), *u = i32(lw, 0), *m = i32(lw, 0);
    if (O > 1) o = ir_varref(c, ov[q] = new_var(lw, "o"), SRCLOC_NONE);
    if (M > 1) m = ir_varref(c, mv[q] = new_var(lw, "m"), SRCLOC_NONE);
    if (d->vec > 1) u = ir_varref(c, uv[q] = new_var(lw, "u"), SRCLOC_NONE);
    nc.omexpr[q] = bin(lw, IR_ADD, bin(lw, IR_MUL, o, i32(lw, M)), m);
    nc.uexpr[q] = u;
    nc.lexpr[q] = bin(lw, IR_ADD, bin(lw, IR_MUL, nc.omexpr[q], i32(lw, d->vec)), u);
    IrExpr *cq = i32(lw, 0), *c2 = i32(lw, 0);
    if (d->threads > 1) {
      cq = bin(lw, IR_FLOORDIV, lw->tid, i32(lw, d->tstride));
      if (d->tstride * d->threads < lw->T) cq = bin(lw, IR_FLOORMOD, cq, i32(lw, d->threads));
    }
    if (T2 > 1) {
      c2 = bin(lw, IR_FLOORDIV, lw->tid, i32(lw, d->tstride2));
      if (d->tstride2 * T2 < lw->T) c2 = bin(lw, IR_FLOORMOD, c2, i32(lw, T2));
    }
    int64_t vt = d->vec * d->threads;
    ival[q] = bin(lw, IR_ADD, bin(lw, IR_MUL, o, i32(lw, fragdim_span(d))),
                  bin(lw, IR_ADD, bin(lw, IR_MUL, c2, i32(lw, vt * M)),
                      bin(lw, IR_ADD, bin(lw, IR_MUL, m, i32(lw, vt)),
                          bin(lw, IR_ADD, bin(lw, IR_MUL, cq, i32(lw, d->vec)), u))));
    ir_range_env_add(&nc.env, nest.var[q], nest.min[q], nest.min[q] + nest.extent[q] - 1);
  }
  RwCtx rc = {lw, &nc};
  IrExpr *to[FRAG_MAX_DIMS];
  for (int q = 0; q < n; q++) to[q] = bin(lw, IR_ADD, i32(lw, nest.min[q]), ival[q]);

  /* Vector path: a single contiguous copy whose last loop dim carries V lanes. */
  int last = n - 1;
  IrStmt *body = lower_vector_copy(lw, &nc, &nest, s, uv, to);
  if (!body) body = lower_vector_atomic(lw, &nc, &nest, uv, to);
  /* Padding elements of dims that the threads x vectors do not tile exactly. */
  IrExpr *pad = NULL;
  for (int q = 0; q < n; q++) {
    const FragDim *d = &L->dim[q];
    if (nest.extent[q] % fragdim_span(d) != 0)
      pad = and_cond(lw, pad, bin(lw, IR_LT, ir_varref(c, nest.var[q], SRCLOC_NONE), i32(lw, nest.min[q] + nest.extent[q])));
  }
  IrStmt *stage_pre = NULL, *stage_post = NULL;
  if (!body) {
    /* (not with padding: its guard would have to cover the vector moves) */
    IrStmt *staged = pad ? NULL : stage_vector_body(lw, &nc, &nest, L, uv[last], to, &stage_pre, &stage_post);
    body = rw_stmt(c, staged ? staged : nest.body, &rc);
  }
  if (pad) body = ir_if(c, pad, body, NULL, s->loc);
  body = ir_subst_stmt(c, body, nest.var, to, n);
  for (int q = n - 1; q >= 0; q--) {
    if (!uv[q]) continue;
    body = unrolled(lw, uv[q], L->dim[q].vec, body);
    if (q == last && stage_pre) body = ir_seq(c, (IrStmt *[]){stage_pre, body, stage_post}, 3, s->loc);
  }
  for (int q = n - 1; q >= 0; q--)
    if (mv[q]) body = unrolled(lw, mv[q], fragdim_mid(&L->dim[q]), body);
  for (int q = n - 1; q >= 0; q--)
    if (ov[q]) body = unrolled(lw, ov[q], fragment_outer(L, q), body);
  /* Replicas of a thread do the same work: only replica 0 touches memory.  When the nest
   * also writes registers (a replicated fragment, a local), every replica must still
   * compute those, so only the memory effects are guarded. */
  SideFx fx = {false, false};
  IrVisitor vis = {sidefx_stmt, NULL, &fx};
  ir_visit(nest.body, &vis);
  if (fx.found && L->nrep > 0) {
    IrExpr *rep = NULL;
    for (int i = 0; i < L->nrep; i++) {
      IrExpr *r = bin(lw, IR_FLOORDIV, lw->tid, i32(lw, L->rep_stride[i]));
      if (L->rep_stride[i] * L->rep_count[i] < lw->T) r = bin(lw, IR_FLOORMOD, r, i32(lw, L->rep_count[i]));
      rep = and_cond(lw, rep, bin(lw, IR_EQ, r, i32(lw, 0)));
    }
    body = fx.writes_regs ? guard_memory_effects(c, body, rep) : ir_if(c, rep, body, NULL, s->loc);
  }
  return mark_iter_owned(c, body, !(fx.found && L->nrep > 0 && fx.writes_regs), ++lw->nests);
}

/* ---- reductions (lower_reduce.c) ---- */
static ReduceLowering reduce_lowering(Lower *lw) {
  return (ReduceLowering){lw->c, lw->tid, lw->T, &lw->counter, &lw->kallocs, &lw->scratch};
}

/* Reductions items[0..n): the pre parts of all, then their post parts; NULL after an error. */
static IrStmt *lower_reductions(Lower *lw, IrStmt **items, int n) {
  PtrVec pre = {0}, post = {0};
  ReduceLowering rl = reduce_lowering(lw);
  for (int k = 0; k < n; k++)
    if (!reduce_lower_parts(&rl, items[k], &pre, &post)) return NULL;
  for (int k = 0; k < post.len; k++) vec_push(lw->c->arena, &pre, post.items[k]);
  return ir_seq_vec(lw->c, &pre, items[0]->loc);
}

/* A sequence lowered statement by statement, except that a run of consecutive reductions,
 * none reading a fragment an earlier one of the run writes, runs the pre parts of all of
 * them before their post parts (reduce_lower_parts): a layernorm backward's two row sums
 * then cost one barrier, not two.  pass_configs {"ts.batch_reductions": False} turns it off. */
static IrStmt *lower_seq(Lower *lw, IrStmt *s) {
  TsCompiler *c = lw->c;
  PtrVec out = {0};
  for (int i = 0; i < s->u.seq.n;) {
    IrStmt *x = s->u.seq.items[i];
    if (x->kind != IR_S_REDUCE) {
      IrStmt *y = lower_stmt(c, x, lw);
      if (y) vec_push(c->arena, &out, y);
      i++;
      continue;
    }
    int j = i + 1;
    while (lw->batch_reductions && j < s->u.seq.n && s->u.seq.items[j]->kind == IR_S_REDUCE) {
      const IrBuffer *src = ir_buffer_root(s->u.seq.items[j]->u.reduce.src);
      bool reads_earlier = false;
      for (int k = i; k < j; k++) reads_earlier |= ir_buffer_root(s->u.seq.items[k]->u.reduce.dst) == src;
      if (reads_earlier) break;
      j++;
    }
    IrStmt *y = lower_reductions(lw, s->u.seq.items + i, j - i);
    if (y) vec_push(c->arena, &out, y);
    i = j;
  }
  IrStmt *r = ir_stmt(c, IR_S_SEQ, s->loc);
  *r = *s;
  r->u.seq.items = (IrStmt **)out.items;
  r->u.seq.n = out.len;
  return r;
}

/* ---- T.gemm (lower_gemm.c) ---- */

/* &buf[offset of region r's first element] for a shared operand (through its layout). */
static IrExpr *region_ptr(void *ctx, const IrRegion *r, SrcLoc loc) {
  Lower *lw = ctx;
  int n;
  IrExpr **idx = access_index(lw, NULL, r->buf, r->min, r->ndim, false, &n, loc);
  IrExpr *ld = ir_load(lw->c, r->buf, idx, n, loc);
  return ir_call(lw->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc);
}

/* Does s hold tile operations (lowered over the threads of their scope)? */
static void find_tile_op(IrStmt *s, void *ctx) {
  if ((s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PARALLEL) || s->kind == IR_S_REDUCE || s->kind == IR_S_GEMM)
    *(bool *)ctx = true;
}
/* ... or T.tma_copy loads, issued by the first thread of their scope */
static void find_tile_op_or_tma(IrStmt *s, void *ctx) {
  find_tile_op(s, ctx);
  if (s->kind == IR_S_COPY) *(bool *)ctx = true;
}
static bool has_tile_op(IrStmt *s, bool tma) {
  bool tile = false;
  IrVisitor v = {tma ? find_tile_op_or_tma : find_tile_op, NULL, &tile};
  ir_visit(s, &v);
  return tile;
}

/* A T.ws body: its tile ops run on threads [lo, hi) only, so they are lowered over hi - lo
 * threads with the index tid - lo (layout_inference gave its nests hi - lo threads). */
static IrStmt *lower_ws(Lower *lw, IrStmt *s) {
  int64_t T = lw->T;
  IrExpr *tid = lw->tid;
  lw->T = s->u.if_.ws_hi - s->u.if_.ws_lo;
  if (s->u.if_.ws_lo) lw->tid = bin(lw, IR_SUB, tid, i32(lw, s->u.if_.ws_lo));
  IrStmt *r = ir_stmt(lw->c, IR_S_IF, s->loc);
  *r = *s;
  r->u.if_.then_s = lower_stmt(lw->c, s->u.if_.then_s, lw);
  lw->T = T;
  lw->tid = tid;
  /* the else of a hand-written thread branch: the next range (a T.ws IF of its own), or the
   * threads of no one range, over which no tile operation can be lowered */
  const IrStmt *e = s->u.if_.else_s;
  if (e && !(e->kind == IR_S_IF && e->u.if_.ws_hi) && has_tile_op(s->u.if_.else_s, true)) {
    ts_error(lw->c, s->loc, "tile operations (T.copy, T.tma_copy, T.fill, T.Parallel, T.reduce, T.gemm) in the `else` of a branch "
                            "on threads [%lld, %lld): the threads reaching it are not one warp-aligned range, so the "
                            "work cannot be split over them; branch on contiguous ranges (tx < C, C1 <= tx < C2)",
             (long long)s->u.if_.ws_lo, (long long)s->u.if_.ws_hi);
    return r;
  }
  r->u.if_.else_s = lower_stmt(lw->c, s->u.if_.else_s, lw);
  return r;
}

/* Does `if` s branch on the thread index around tile operations (which are lowered over the
 * whole block, so threads outside the branch would skip their share)? */
static bool thread_branch_with_tile_ops(Lower *lw, IrStmt *s) {
  if (!has_tile_op(s, false)) return false;
  for (int a = 0; a < 3; a++)
    if (lw->k->thread_var[a] && ir_expr_uses_var(s->u.if_.cond, lw->k->thread_var[a])) return true;
  return false;
}

static IrStmt *lower_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  Lower *lw = ctx;
  if (!s) return NULL;
  RwCtx rc = {lw, NULL};
  switch (s->kind) {
    case IR_S_FOR:
      if (s->u.loop.kind == IR_FOR_PARALLEL) return lower_nest(lw, s);
      {
        IrStmt *r = ir_map_children(c, s, lower_stmt, ctx);
        if (r->u.loop.kind == IR_FOR_PIPELINED) r->u.loop.kind = IR_FOR_SERIAL;
        int64_t trips;
        if (r->u.loop.kind == IR_FOR_SERIAL && vec_has(&lw->unroll_vars, s->u.loop.var) &&
            ir_is_const_int(s->u.loop.extent, &trips) && trips <= 64)
          r->u.loop.kind = IR_FOR_UNROLLED;
        r->u.loop.min = rw_expr(lw, NULL, s->u.loop.min);
        r->u.loop.extent = rw_expr(lw, NULL, s->u.loop.extent);
        return r;
      }
    case IR_S_REDUCE: return lower_reductions(lw, &s, 1);
    case IR_S_ALLOC: {
      IrBuffer *b = s->u.alloc.buf;
      if (b->scope == IR_SCOPE_FRAGMENT && b->fragment) b->local_size = fragment_local_size(b->fragment);
      if (b->scope == IR_SCOPE_LOCAL) {
        b->local_size = ir_buffer_numel(b);
        if (b->local_size < 0) ts_error(c, s->loc, "local buffer '%s' needs a constant shape", b->name);
      }
      if (b->scope == IR_SCOPE_VAR) b->local_size = 1;
      return s;
    }
    case IR_S_GEMM: return gemm_lower(c, s, lw->tid, region_ptr, lw);
    case IR_S_COPY:
      if (s->u.copy.dst_block) {
        bool bulk = false;
        IrStmt *r = cluster_copy_lower(c, s, lw->tid, lw->T, &bulk);
        lw->cluster_bulk |= bulk;
        return r ? rw_stmt(c, r, &rc) : NULL;
      }
      lw->cluster_bulk |= s->u.copy.cluster_mask != 0; /* a multicast reaches other blocks too */
      if (s->u.copy.barrier || s->u.copy.tma_store) return rw_stmt(c, tma_copy_lower(c, lw->f, s, lw->tid), &rc);
      ts_unreachable(); /* removed by legalize */
      return NULL;
    case IR_S_FILL: case IR_S_UNSUPPORTED:
      ts_unreachable(); /* removed by legalize */
      return NULL;
    case IR_S_SEQ: return lower_seq(lw, s);
    case IR_S_IF:
      if (s->u.if_.ws_hi) return lower_ws(lw, s);
      if (!pass_is_role_split(lw->k, s) && thread_branch_with_tile_ops(lw, s)) {
        /* a branch on a warp-aligned range of the thread index is a T.ws body (eval_stmt.c);
         * over any other condition the work cannot be split over the threads running it, in
         * any kernel (lowered over the whole block, the threads outside the branch would skip
         * their share: silently wrong).  warp_specialize's own producer/consumer split is not
         * such a branch. */
        ts_error(c, s->loc, "tile operations (T.copy, T.fill, T.Parallel, T.reduce, T.gemm) under a branch on the "
                            "thread index are only supported when the branch runs on a contiguous, warp-aligned "
                            "range of it (tx < C, tx >= C, C1 <= tx < C2) or in a `with T.ws(...)` body");
        return s;
      }
      return rw_stmt(c, s, &rc);
    default: return rw_stmt(c, s, &rc);
  }
}

static void add_smem_bytes(IrStmt *s, void *ctx) {
  if (s->kind != IR_S_ALLOC || s->u.alloc.buf->scope != IR_SCOPE_SHARED_DYN || s->u.alloc.buf->alias_of) return;
  int64_t n = ir_buffer_numel(s->u.alloc.buf);
  if (n > 0) *(int64_t *)ctx += dtype_storage_bytes(s->u.alloc.buf->dtype, n);
}

/* One workspace per reduction costs nothing to order (no two reductions touch the same
 * bytes).  When the kernel's tiles and those workspaces do not fit the block's shared
 * memory (MLA decode), the reductions of one dtype share the largest workspace instead
 * (the others become views of it), and thread_sync, which sees views as the same memory,
 * places the barrier between one reduction's reads and the next one's writes. */
static void share_scratch(Lower *lw, IrStmt *body) {
  int64_t bytes = 0, cap = pass_smem_cap(lw->c);
  IrVisitor v = {add_smem_bytes, NULL, &bytes};
  ir_visit(body, &v);
  for (int i = 0; i < lw->scratch.len; i++) {
    IrBuffer *b = lw->scratch.items[i];
    bytes += dtype_storage_bytes(b->dtype, ir_buffer_numel(b));
  }
  if (!cap || bytes <= cap) return;
  for (int i = 0; i < lw->scratch.len; i++) {
    IrBuffer *b = lw->scratch.items[i];
    for (int j = 0; j < i && !b->alias_of; j++) {
      IrBuffer *owner = lw->scratch.items[j];
      if (owner->alias_of || owner->dtype != b->dtype) continue;
      if (ir_buffer_numel(b) > ir_buffer_numel(owner)) owner->shape[0] = b->shape[0];
      b->alias_of = owner;
    }
  }
}

static void lower_kernel(TsCompiler *c, IrFunc *f, IrStmt *ks) {
  IrKernel *k = &ks->u.kernel;
  Lower lw = {0};
  lw.c = c;
  lw.f = f;
  lw.batch_reductions = pass_config_state(f, "ts.batch_reductions") != 0;
  lw.k = k;
  lw.T = pass_kernel_threads(k);
  int naxes = 1;
  for (int a = 1; a < 3; a++)
    if (k->threads[a] > 1) naxes = a + 1;
  for (int a = 0; a < naxes; a++) {
    ir_range_env_add(&lw.env, ir_kernel_thread_var(c, k, a, ks->loc), 0, (k->threads[a] > 0 ? k->threads[a] : 1) - 1);
  }
  PtrVec items = {0};
  if (naxes == 1) {
    lw.tid = ir_varref(c, k->thread_var[0], ks->loc);
  } else {
    /* Lowering works on one linear thread index; blockDim stays as the user wrote it. */
    IrExpr *t = ir_varref(c, k->thread_var[0], ks->loc);
    int64_t stride = k->threads[0];
    for (int a = 1; a < naxes; a++) {
      t = bin(&lw, IR_ADD, t, bin(&lw, IR_MUL, ir_varref(c, k->thread_var[a], ks->loc), i32(&lw, stride)));
      stride *= k->threads[a] > 0 ? k->threads[a] : 1;
    }
    IrVar *tid = ir_var(c, "tid", TS_DTYPE_INT32, IR_VAR_LET, ks->loc);
    vec_push(c->arena, &items, ir_let(c, tid, t, ks->loc));
    lw.tid = ir_varref(c, tid, ks->loc);
    ir_range_env_add(&lw.env, tid, 0, lw.T - 1);
  }
  for (int a = 0; a < 3; a++) {
    int64_t g;
    if (k->block_var[a] && k->grid[a] && ir_is_const_int(k->grid[a], &g) && g > 0)
      ir_range_env_add(&lw.env, k->block_var[a], 0, g - 1);
  }
  PtrVec barriers = {0};
  IrStmt *body = lower_stmt(c, tma_hoist_barriers(c, k->body, &barriers), &lw);
  share_scratch(&lw, k->body);
  for (int i = 0; i < lw.kallocs.len; i++) vec_push(c->arena, &items, lw.kallocs.items[i]);
  tma_init_barriers(c, &barriers, lw.tid, &items, ks->loc);
  vec_push(c->arena, &items, body);
  /* a bulk T.copy_cluster reads this block's shared memory after it is issued, a multicast writes
   * other blocks': no block of the cluster leaves before every block is done (a kernel whose
   * threads return early keeps that to the user: the barrier would wait for them forever) */
  if (lw.cluster_bulk && !pass_has_return(body, NULL))
    vec_push(c->arena, &items, ir_device_stmt(c, IRD_CLUSTER_SYNC, NULL, 0, NULL, 0, ks->loc));
  k->body = ir_seq_vec(c, &items, ks->loc);
}

/* ---- register budget ---------------------------------------------------------------- */
/* Fragments and local buffers live in registers, one thread's share each (local_size).  A
 * thread has at most 255 32-bit registers (1020 bytes) for everything; past that the
 * arrays spill to local memory, and every access of a fragment is an unrolled
 * instruction, so NVRTC's time grows with the square of the size (elementwise add at 6 KB
 * per thread: 1.2 s; 12 KB: 4.3 s; 24 KB: 35 s; 32 MB: minutes).  The rule: more than
 * 16 KB per thread (4096 registers, 16 register files) is certainly a mistake of tile
 * size or thread count and is refused here.  Real kernels stay near 1 KB (a 128x256 fp32
 * accumulator over 128 threads); the largest this suite compiles is a 64x64 fp32
 * fragment that layout inference replicates in every thread (tests/front/fill_clear.py,
 * exactly 16 KB). */
enum { REG_BUDGET_BYTES = 16384, REG_BUDGET_NAMED = 3 };

typedef struct RegUse {
  int64_t total;
  IrBuffer *top[REG_BUDGET_NAMED]; /* the largest register buffers, largest first */
  int ntop, nbuf;
} RegUse;

static int64_t reg_bytes(const IrBuffer *b) { return b->local_size * dtype_bytes(b->dtype); }

static void count_register_buffer(IrStmt *s, void *ctx) {
  RegUse *u = ctx;
  if (s->kind != IR_S_ALLOC) return;
  IrBuffer *b = s->u.alloc.buf;
  if ((b->scope != IR_SCOPE_FRAGMENT && b->scope != IR_SCOPE_LOCAL) || b->alias_of || b->local_size <= 0) return;
  u->total += reg_bytes(b);
  u->nbuf++;
  int i = u->ntop < REG_BUDGET_NAMED ? u->ntop++ : REG_BUDGET_NAMED;
  for (; i > 0 && reg_bytes(u->top[i - 1]) < reg_bytes(b); i--)
    if (i < REG_BUDGET_NAMED) u->top[i] = u->top[i - 1];
  if (i < REG_BUDGET_NAMED) u->top[i] = b;
}

/* One diagnostic per kernel, at the largest buffer's declaration. */
static void check_register_budget(TsCompiler *c, IrStmt *ks) {
  RegUse u = {0};
  IrVisitor v = {count_register_buffer, NULL, &u};
  ir_visit(ks->u.kernel.body, &v);
  if (u.total <= REG_BUDGET_BYTES) return;
  StrBuf names = {0};
  for (int i = 0; i < u.ntop; i++)
    sb_printf(&names, "%s%s'%s': %lld", i ? ", " : "", u.top[i]->scope == IR_SCOPE_FRAGMENT ? "fragment " : "local ",
              u.top[i]->name, (long long)reg_bytes(u.top[i]));
  ts_error(c, u.top[0]->loc,
           "register buffers need %lld bytes per thread (%s%s); more than %d bytes per thread is refused (a thread "
           "has 255 32-bit registers, 1020 bytes): %s",
           (long long)u.total, sb_str(&names), u.nbuf > u.ntop ? ", ..." : "", REG_BUDGET_BYTES,
           u.top[0]->scope == IR_SCOPE_FRAGMENT ? "use smaller tiles or more threads" : "use a smaller local array");
  sb_free(&names);
}

static void walk(TsCompiler *c, IrFunc *f, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_KERNEL) {
    lower_kernel(c, f, s);
    check_register_budget(c, s);
  }
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, f, s->u.seq.items[i]);
}

void pass_lower_tile_ops(TsCompiler *c, IrFunc *f) { walk(c, f, f->body); }
