/* stats.c — counts the work of a function from its tile-level IR (stats.h): the IR the
 * front end stages, where a T.gemm or a T.copy is still one statement.  driver.c runs it
 * before the pass pipeline, whose later IR splits those statements over threads.
 *
 * What is counted, per kernel launch and in total:
 *   flops        2*M*N*K per executed T.gemm (C is M x N, K the reduction extent): the
 *                tensor-core work issued; a tile that overhangs the matrix edge counts whole
 *   load bytes   bytes of global tensors read, and
 *   store bytes  written: tile statements (T.copy, T.fill, tile atomics, reductions) by the
 *                size of their global region, element accesses (a load or store of a global
 *                tensor, an atomic counted as a store) once per execution.  A T.Parallel
 *                iteration is one execution; scalar code outside a T.Parallel nest counts
 *                once per block (its threads touch the same addresses).
 * A statement's count is multiplied by the trip counts of the loops around it and by the
 * number of blocks of its kernel.  Each total is
 *   exact        every loop bound and grid dimension is a compile-time constant, every
 *                counted access happens unconditionally and every tile lies inside its tensor;
 *   upper_bound  work under a runtime condition (counted as if the larger branch ran; the
 *                branches of a thread-index branch run in different threads and are added),
 *                a loop bound that varies between blocks (counted at its largest, from the
 *                ranges of the block and loop indices), a loop that may end an iteration
 *                early (break / continue), or a tile that may reach past its tensor's edge
 *                (the part outside is not moved);
 *   unknown      a loop bound or grid dimension that depends on runtime values (T.dynamic
 *                sizes, scalar parameters, loaded values), a while loop, or global memory
 *                passed by address to an operation not modelled here (T.call_extern, the
 *                distributed put/get family).  Printed as null: never a wrong number.
 * Work that is zero stays an exact zero whatever multiplies it (a dynamic loop that moves
 * nothing does not spoil the FLOPs).  Each inexact total carries a note: file:line:col of
 * the first construct that made it so. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* Bounds from interval analysis above this are sentinels of a one-sided clamp, not bounds. */
#define BOUND_LIMIT ((int64_t)1 << 53)

typedef enum Exactness { EXACT, UPPER_BOUND, UNKNOWN } Exactness;
static const char *const exactness_names[] = {"exact", "upper_bound", "unknown"};

/* One counted quantity. */
typedef struct Count {
  int64_t n; /* the count (the bound when UPPER_BOUND); 0 when UNKNOWN */
  Exactness how;
  const char *what; /* what made it inexact ("a loop bound"), may be NULL */
  const char *why;  /* why (static text); NULL while exact */
  SrcLoc loc;       /* where */
} Count;

/* The counted quantities of a statement: per block of its kernel (per launch outside
 * kernels), plus the work already summed over the blocks (a loop whose trip count depends
 * on the block index, summed block by block: SUMMED + quantity). */
enum { FLOPS, LOAD, STORE, NQUANT, SUMMED = NQUANT };
typedef struct Tally {
  Count q[2 * NQUANT];
} Tally;

typedef struct Walk {
  IrRangeEnv env; /* ranges of the block, thread, loop and let variables in scope */
  int breaks;     /* BREAK / CONTINUE statements seen in the loop body being walked */
  /* the kernel being walked: its block index variables and grid; nblocks 0 when the grid is
   * not constant */
  IrVar *block_var[3];
  int64_t grid[3], nblocks;
  StrBuf *rows; /* one JSON object per kernel launch */
  int nrows;
} Walk;

/* ---- counts ------------------------------------------------------------------------- */
static Count exact(int64_t n) {
  Count c = {n, EXACT, NULL, NULL, SRCLOC_NONE};
  return c;
}

static Tally zero_tally(void) {
  Tally t;
  for (int i = 0; i < 2 * NQUANT; i++) t.q[i] = exact(0);
  return t;
}

/* Lowers c to `how` (keeping the first reason given for the lowest level). */
static void worsen(Count *c, Exactness how, const char *what, const char *why, SrcLoc loc) {
  if (how <= c->how) return;
  c->how = how;
  c->what = what;
  c->why = why;
  c->loc = loc;
  if (how == UNKNOWN) c->n = 0;
}

static void worsen_by(Count *c, const Count *by) {
  worsen(c, by->how, by->what, by->why, by->loc);
}

static void count_add(Count *a, const Count *b) {
  worsen_by(a, b);
  if (a->how != UNKNOWN && __builtin_add_overflow(a->n, b->n, &a->n))
    worsen(a, UNKNOWN, NULL, "a count past 2^63", b->loc);
}

/* a * t, where t is a trip count or a number of blocks; nothing times anything is nothing. */
static void count_mul(Count *a, const Count *t) {
  if (a->n == 0 && a->how != UNKNOWN) return;
  worsen_by(a, t);
  if (a->how != UNKNOWN && __builtin_mul_overflow(a->n, t->n, &a->n))
    worsen(a, UNKNOWN, NULL, "a count past 2^63", t->loc);
}

/* One of a and b happens (an if / else): the larger, an upper bound unless they agree. */
static void count_either(Count *a, const Count *b, SrcLoc loc) {
  if (a->how != UNKNOWN && b->how != UNKNOWN && a->n != b->n)
    worsen(a, UPPER_BOUND, NULL, "work under a runtime condition, counted as if the larger branch ran", loc);
  worsen_by(a, b);
  if (a->how != UNKNOWN && b->n > a->n) a->n = b->n;
}

static void tally_add(Tally *a, const Tally *b) {
  for (int i = 0; i < 2 * NQUANT; i++) count_add(&a->q[i], &b->q[i]);
}

static void tally_mul(Tally *a, const Count *t) {
  for (int i = 0; i < 2 * NQUANT; i++) count_mul(&a->q[i], t);
}

/* Per part, the larger of the branches: their sum over the blocks is at most that. */
static void tally_either(Tally *a, const Tally *b, SrcLoc loc) {
  for (int i = 0; i < 2 * NQUANT; i++) count_either(&a->q[i], &b->q[i], loc);
}

/* A loop bound, grid dimension or tile extent: exact when constant, else its largest value
 * over the ranges of the variables in scope, else unknown. */
static Count bound_count(const Walk *w, const IrExpr *e, const char *what, SrcLoc loc) {
  int64_t n, lo, hi;
  if (ir_is_const_int(e, &n)) return exact(n > 0 ? n : 0);
  Count c = exact(0);
  if (ir_range(e, &w->env, &lo, &hi) && hi < BOUND_LIMIT) {
    c.n = hi > 0 ? hi : 0;
    worsen(&c, UPPER_BOUND, what, "varies between blocks or iterations: counted at its largest", loc);
  } else {
    worsen(&c, UNKNOWN, what,
           "is not known at compile time (a dynamic size, a scalar parameter or a loaded value)", loc);
  }
  return c;
}

/* ---- element accesses in expressions -------------------------------------------------- */
static bool is_global(const IrBuffer *b) {
  return b && b->scope == IR_SCOPE_GLOBAL;
}

static int64_t access_bytes(const IrExpr *load, int64_t lanes) {
  return (int64_t)dtype_bytes(load->u.load.buf->dtype) * (lanes > 1 ? lanes : 1);
}

/* Adds n bytes to c; an access in a conditional arm may not happen. */
static void add_bytes(Count *c, int64_t n, bool conditional, SrcLoc loc) {
  Count b = exact(n);
  if (conditional)
    worsen(&b, UPPER_BOUND, NULL, "an access in a conditional expression, counted as if it always happens",
           loc);
  count_add(c, &b);
}

static void expr_bytes(const IrExpr *e, bool conditional, Tally *t);

static void exprs_bytes(IrExpr *const *xs, int n, bool conditional, Tally *t) {
  for (int i = 0; i < n; i++) expr_bytes(xs[i], conditional, t);
}

/* The element whose address e takes (ADDRESS_OF of a LOAD), or NULL. */
static const IrExpr *address_load(const IrExpr *e) {
  if (e && e->kind == IR_CALL && e->u.call.op == IRI_ADDRESS_OF && e->u.call.nargs == 1 &&
      e->u.call.args[0]->kind == IR_LOAD)
    return e->u.call.args[0];
  return NULL;
}

/* T.atomic_add / max / min (&dst, value) and T.atomic_addx2 / x4 (&dst, &src, lanes): the
 * destination counts as a store, a vector source as a load. */
static void atomic_call_bytes(const IrExpr *e, bool conditional, Tally *t) {
  IrExpr *const *a = e->u.call.args;
  int n = e->u.call.nargs;
  int64_t lanes = 1;
  bool vector = e->u.call.op == IRI_ATOMIC_ADD_X;
  if (vector && n == 3) ir_is_const_int(a[2], &lanes);
  for (int i = 0; i < n; i++) {
    const IrExpr *ld = address_load(a[i]);
    if (!ld || (i == 1 && !vector)) {
      expr_bytes(a[i], conditional, t);
      continue;
    }
    if (is_global(ld->u.load.buf))
      add_bytes(i == 0 ? &t->q[STORE] : &t->q[LOAD], access_bytes(ld, lanes), conditional, e->loc);
    exprs_bytes(ld->u.load.idx, ld->u.load.nidx, conditional, t);
  }
}

static void call_bytes(const IrExpr *e, bool conditional, Tally *t) {
  switch (e->u.call.op) {
    case IRI_ATOMIC_ADD:
    case IRI_ATOMIC_MAX:
    case IRI_ATOMIC_MIN:
    case IRI_ATOMIC_ADD_X:
      atomic_call_bytes(e, conditional, t);
      return;
    case IRI_ADDRESS_OF: {
      /* the address of a global element, passed on to an operation that may move any
       * number of bytes from there */
      const IrExpr *ld = address_load(e);
      if (!ld) break;
      if (is_global(ld->u.load.buf)) {
        const char *why = "global memory passed by address to an operation this analysis does not model";
        worsen(&t->q[LOAD], UNKNOWN, NULL, why, e->loc);
        worsen(&t->q[STORE], UNKNOWN, NULL, why, e->loc);
      }
      exprs_bytes(ld->u.load.idx, ld->u.load.nidx, conditional, t);
      return;
    }
    default:
      break;
  }
  exprs_bytes(e->u.call.args, e->u.call.nargs, conditional, t);
}

/* Loads of global tensors in e; `conditional`: e may not be evaluated. */
static void expr_bytes(const IrExpr *e, bool conditional, Tally *t) {
  if (!e) return;
  switch (e->kind) {
    case IR_LOAD:
      if (is_global(e->u.load.buf)) add_bytes(&t->q[LOAD], access_bytes(e, e->lanes), conditional, e->loc);
      exprs_bytes(e->u.load.idx, e->u.load.nidx, conditional, t);
      return;
    case IR_CALL:
      call_bytes(e, conditional, t);
      return;
    case IR_SELECT:
    case IR_IF_THEN_ELSE: /* the arms are conditional */
      expr_bytes(e->u.ops[0], conditional, t);
      expr_bytes(e->u.ops[1], true, t);
      expr_bytes(e->u.ops[2], true, t);
      return;
    case IR_AND:
    case IR_OR: /* short-circuit: the right operand is conditional */
      expr_bytes(e->u.ops[0], conditional, t);
      expr_bytes(e->u.ops[1], true, t);
      return;
    default:
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) expr_bytes(e->u.ops[i], conditional, t);
      return;
  }
}

/* ---- tile statements ------------------------------------------------------------------ */
/* Whether every element of r provably lies inside its tensor. */
static bool region_inside(const Walk *w, const IrRegion *r) {
  for (int d = 0; d < r->ndim; d++) {
    int64_t shape, ext, lo, hi;
    if (!ir_is_const_int(r->buf->shape[d], &shape) || !ir_is_const_int(r->extent[d], &ext)) return false;
    if (!ir_range(r->min[d], &w->env, &lo, &hi) || lo < 0 || hi > shape - ext) return false;
  }
  return true;
}

/* A tile statement's access of region r: its bytes when r is global, and the loads in its
 * index expressions. */
static void region_access(const Walk *w, const IrRegion *r, bool store, Tally *t, SrcLoc loc) {
  exprs_bytes(r->min, r->ndim, false, t);
  exprs_bytes(r->extent, r->ndim, false, t);
  if (!is_global(r->buf)) return;
  Count bytes = exact(dtype_bytes(r->buf->dtype));
  for (int d = 0; d < r->ndim; d++) {
    Count e = bound_count(w, r->extent[d], "a tile extent", loc);
    count_mul(&bytes, &e);
  }
  if (!region_inside(w, r))
    worsen(&bytes, UPPER_BOUND, NULL,
           "a tile that may reach past its tensor's edge (the part outside is not moved), counted whole",
           loc);
  count_add(store ? &t->q[STORE] : &t->q[LOAD], &bytes);
}

/* A whole global buffer read or written by a reduction. */
static void buffer_access(const IrBuffer *b, bool store, Tally *t, SrcLoc loc) {
  if (!is_global(b)) return;
  int64_t n = ir_buffer_numel(b);
  Count bytes = exact(n > 0 ? n * dtype_bytes(b->dtype) : 0);
  if (n < 0) worsen(&bytes, UNKNOWN, "a reduced tensor's size", "is not known at compile time", loc);
  count_add(store ? &t->q[STORE] : &t->q[LOAD], &bytes);
}

/* 2*M*N*K of a T.gemm: C is M x N (its region's elements), K the reduction extent of A
 * (twice it for T.gemm_sp's compressed A).
 * T.wait_wgmma is a GEMM statement that only waits (wg_wait <= -2): no work. */
static Count gemm_flops(const Walk *w, const IrStmt *s) {
  const IrRegion *a = &s->u.gemm.a, *c = &s->u.gemm.c;
  if (s->u.gemm.wg_wait <= -2 || a->ndim < 2) return exact(0);
  Count f = exact(2);
  for (int d = 0; d < c->ndim; d++) {
    Count e = bound_count(w, c->extent[d], "a T.gemm extent", s->loc);
    count_mul(&f, &e);
  }
  Count k =
      bound_count(w, a->extent[s->u.gemm.trans_a ? a->ndim - 2 : a->ndim - 1], "a T.gemm extent", s->loc);
  count_mul(&f, &k);
  if (s->u.gemm.e.buf) { /* T.gemm_sp: A holds half of K (2:4), the work is the dense product's */
    Count two = exact(2);
    count_mul(&f, &two);
  }
  return f;
}

static Tally tile_stmt(const Walk *w, const IrStmt *s) {
  Tally t = zero_tally();
  switch (s->kind) {
    case IR_S_COPY:
      region_access(w, &s->u.copy.src, false, &t, s->loc);
      region_access(w, &s->u.copy.dst, true, &t, s->loc);
      expr_bytes(s->u.copy.barrier, false, &t);
      expr_bytes(s->u.copy.dst_block, false, &t);
      break;
    case IR_S_FILL:
      region_access(w, &s->u.fill.dst, true, &t, s->loc);
      expr_bytes(s->u.fill.value, false, &t);
      break;
    case IR_S_ATOMIC: /* a read-modify-write of dst, counted as its store */
      region_access(w, &s->u.atomic.dst, true, &t, s->loc);
      if (s->u.atomic.tile)
        region_access(w, &s->u.atomic.src, false, &t, s->loc);
      else
        expr_bytes(s->u.atomic.value, false, &t);
      break;
    case IR_S_REDUCE:
      buffer_access(s->u.reduce.src, false, &t, s->loc);
      buffer_access(s->u.reduce.dst, true, &t, s->loc);
      break;
    case IR_S_GEMM:
      t.q[FLOPS] = gemm_flops(w, s);
      region_access(w, &s->u.gemm.a, false, &t, s->loc);
      region_access(w, &s->u.gemm.b, false, &t, s->loc);
      region_access(w, &s->u.gemm.c, true, &t, s->loc);
      if (s->u.gemm.e.buf) region_access(w, &s->u.gemm.e, false, &t, s->loc);
      break;
    default:
      ts_unreachable();
  }
  return t;
}

/* ---- control flow ------------------------------------------------------------------------ */
static Tally walk_stmt(Walk *w, const IrStmt *s);

static void push_range(Walk *w, IrVar *v, const IrExpr *min, const IrExpr *extent) {
  int64_t mlo, mhi, elo, ehi;
  if (ir_range(min, &w->env, &mlo, &mhi) && ir_range(extent, &w->env, &elo, &ehi) && ehi >= 1 &&
      mhi < BOUND_LIMIT && ehi < BOUND_LIMIT && mlo > -BOUND_LIMIT)
    ir_range_env_add(&w->env, v, mlo, mhi + ehi - 1);
}

/* A trip count that depends on block indices is summed over at most this many of their
 * combinations (about 0.1 s); past that it is counted at its largest. */
#define SUM_MAX_BLOCKS ((int64_t)1 << 19)
#define SUM_MAX_LETS 8

/* The let variables (`end = T.min(...)` in the kernel) that e uses, directly or through
 * other lets, each after the lets its value uses; false past max of them. */
static bool collect_lets(const IrExpr *e, IrVar **lets, int *n, int max) {
  if (!e) return true;
  switch (e->kind) {
    case IR_VAR: {
      IrVar *v = e->u.var;
      if (v->kind != IR_VAR_LET || !v->let_value) return true;
      for (int i = 0; i < *n; i++)
        if (lets[i] == v) return true;
      if (!collect_lets(v->let_value, lets, n, max) || *n == max) return false;
      lets[(*n)++] = v;
      return true;
    }
    case IR_LOAD:
      return false; /* a loaded value is not known at compile time */
    case IR_CALL:
      for (int i = 0; i < e->u.call.nargs; i++)
        if (!collect_lets(e->u.call.args[i], lets, n, max)) return false;
      return true;
    default:
      for (int i = 0; i < ir_expr_nops[e->kind]; i++)
        if (!collect_lets(e->u.ops[i], lets, n, max)) return false;
      return true;
  }
}

/* Whether block index i is used by e or by one of the lets. */
static bool uses_block(const Walk *w, int i, const IrExpr *e, IrVar *const *lets, int nlets) {
  if (!w->block_var[i]) return false;
  bool used = ir_expr_uses_var(e, w->block_var[i]);
  for (int k = 0; k < nlets && !used; k++) used = ir_expr_uses_var(lets[k]->let_value, w->block_var[i]);
  return used;
}

/* The sum over the kernel's blocks of a trip count that depends on the block indices alone,
 * maybe through lets (a causal mask: T.ceildiv((bx + 1) * block_M, block_N)): enumerated over
 * the block indices it uses, times the extent of the others.  False when it uses any other
 * variable, or the grid is not constant or too large. */
static bool summed_trips(const Walk *w, const IrExpr *extent, int64_t *sum) {
  IrVar *vars[3 + SUM_MAX_LETS], *lets[SUM_MAX_LETS];
  int64_t vals[3 + SUM_MAX_LETS], dims[3], blocks = 1, others = 1;
  int nb = 0, nlets = 0;
  if (w->nblocks <= 0 || !collect_lets(extent, lets, &nlets, SUM_MAX_LETS)) return false;
  for (int i = 0; i < 3; i++) {
    if (uses_block(w, i, extent, lets, nlets)) {
      dims[nb] = w->grid[i];
      vars[nb++] = w->block_var[i];
      blocks *= w->grid[i];
    } else {
      others *= w->grid[i];
    }
  }
  if (blocks > SUM_MAX_BLOCKS) return false;
  for (int i = 0; i < nlets; i++) vars[nb + i] = lets[i];
  *sum = 0;
  for (int64_t b = 0; b < blocks; b++) {
    int64_t rest = b, n;
    for (int i = 0; i < nb; i++) { /* combination b of the used block indices */
      vals[i] = rest % dims[i];
      rest /= dims[i];
    }
    for (int i = 0; i < nlets; i++) /* each let from the block indices and the lets before it */
      if (!ir_eval_int(lets[i]->let_value, vars, vals, nb + i, &vals[nb + i])) return false;
    if (!ir_eval_int(extent, vars, vals, nb + nlets, &n) || __builtin_add_overflow(*sum, n > 0 ? n : 0, sum))
      return false;
  }
  return !__builtin_mul_overflow(*sum, others, sum);
}

static bool has_summed(const Tally *t) {
  for (int i = SUMMED; i < SUMMED + NQUANT; i++)
    if (t->q[i].n != 0 || t->q[i].how != EXACT) return true;
  return false;
}

/* body runs `sum` times over all the blocks together: its per-block work becomes summed work. */
static void sum_over_blocks(Tally *body, int64_t sum) {
  Count times = exact(sum);
  for (int i = 0; i < NQUANT; i++) {
    body->q[SUMMED + i] = body->q[i];
    count_mul(&body->q[SUMMED + i], &times);
    body->q[i] = exact(0);
  }
}

static Tally walk_for(Walk *w, const IrStmt *s) {
  Tally t = zero_tally();
  expr_bytes(s->u.loop.min, false, &t);
  expr_bytes(s->u.loop.extent, false, &t);
  Count trips = bound_count(w, s->u.loop.extent, "a loop bound", s->loc);
  int saved_env = w->env.n, saved_breaks = w->breaks;
  push_range(w, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
  w->breaks = 0;
  Tally body = walk_stmt(w, s->u.loop.body);
  bool breaks = w->breaks > 0;
  w->breaks = saved_breaks;
  w->env.n = saved_env;
  if (breaks)
    worsen(&trips, UPPER_BOUND, NULL,
           "a loop whose iterations may end early (break / continue), counted whole", s->loc);
  int64_t sum;
  if (!breaks && trips.how != EXACT && !has_summed(&body) && summed_trips(w, s->u.loop.extent, &sum))
    sum_over_blocks(&body, sum);
  else
    tally_mul(&body, &trips);
  tally_add(&t, &body);
  return t;
}

static Tally walk_while(Walk *w, const IrStmt *s) {
  Tally t = zero_tally();
  expr_bytes(s->u.while_.cond, false, &t);
  int saved_breaks = w->breaks;
  Tally body = walk_stmt(w, s->u.while_.body);
  w->breaks = saved_breaks;
  tally_add(&t, &body); /* per iteration: the test and the body */
  Count trips = exact(0);
  worsen(&trips, UNKNOWN, NULL, "a while loop (its trip count is not known at compile time)", s->loc);
  tally_mul(&t, &trips);
  return t;
}

/* Whether every variable in e is a thread index (and e loads nothing): the block's threads
 * take different arms of such a branch, so both arms run. */
static bool thread_only(const IrExpr *e) {
  if (!e) return true;
  switch (e->kind) {
    case IR_VAR:
      return e->u.var->kind == IR_VAR_THREAD_IDX;
    case IR_LOAD:
    case IR_CALL:
      return false;
    default:
      for (int i = 0; i < ir_expr_nops[e->kind]; i++)
        if (!thread_only(e->u.ops[i])) return false;
      return true;
  }
}

static Tally walk_if(Walk *w, const IrStmt *s) {
  Tally t = zero_tally();
  expr_bytes(s->u.if_.cond, false, &t);
  Tally a = walk_stmt(w, s->u.if_.then_s);
  Tally b = s->u.if_.else_s ? walk_stmt(w, s->u.if_.else_s) : zero_tally();
  /* a T.ws body or a branch on the thread index: the arms run in different threads */
  if (s->u.if_.ws_hi > 0 || thread_only(s->u.if_.cond))
    tally_add(&a, &b);
  else
    tally_either(&a, &b, s->loc);
  tally_add(&t, &a);
  return t;
}

static Tally walk_seq(Walk *w, const IrStmt *s) {
  Tally t = zero_tally();
  int saved_env = w->env.n; /* a LET is in scope for the rest of its SEQ */
  for (int i = 0; i < s->u.seq.n; i++) {
    Tally x = walk_stmt(w, s->u.seq.items[i]);
    tally_add(&t, &x);
  }
  w->env.n = saved_env;
  return t;
}

static void print_count(StrBuf *out, const Count *c) {
  if (c->how == UNKNOWN)
    sb_append(out, "null");
  else
    sb_printf(out, "%lld", (long long)c->n);
}

static Count bytes_of(const Tally *t) {
  Count b = t->q[LOAD];
  count_add(&b, &t->q[STORE]);
  return b;
}

/* One JSON object of the "kernels" list: its launch and its counts over all its blocks. */
static void kernel_row(Walk *w, const IrKernel *k, const Tally *t) {
  StrBuf *o = w->rows;
  sb_append(o, w->nrows++ ? ",\n    {\"grid\": [" : "    {\"grid\": [");
  for (int i = 0; i < 3; i++) {
    int64_t g = 1; /* an unused dimension */
    if (!k->grid[i] || ir_is_const_int(k->grid[i], &g))
      sb_printf(o, "%s%lld", i ? ", " : "", (long long)g);
    else
      sb_append(o, i ? ", null" : "null");
  }
  sb_printf(o, "], \"threads\": [%d, %d, %d], \"flops\": ", k->threads[0], k->threads[1], k->threads[2]);
  print_count(o, &t->q[FLOPS]);
  sb_printf(o, ", \"flops_status\": \"%s\", \"global_load_bytes\": ", exactness_names[t->q[FLOPS].how]);
  print_count(o, &t->q[LOAD]);
  sb_append(o, ", \"global_store_bytes\": ");
  print_count(o, &t->q[STORE]);
  sb_printf(o, ", \"bytes_status\": \"%s\"}", exactness_names[bytes_of(t).how]);
}

/* The kernel's launch: its blocks' work (per-block counts times the blocks, plus the work
 * summed block by block), one row of the "kernels" list. */
static Tally walk_kernel(Walk *w, const IrStmt *s) {
  const IrKernel *k = &s->u.kernel;
  int saved_env = w->env.n;
  Count blocks = exact(1);
  for (int i = 0; i < 3; i++) {
    Count g = k->grid[i] ? bound_count(w, k->grid[i], "a grid dimension", s->loc) : exact(1);
    count_mul(&blocks, &g);
    w->block_var[i] = k->block_var[i];
    w->grid[i] = g.n;
    if (g.how == EXACT && k->block_var[i]) ir_range_env_add(&w->env, k->block_var[i], 0, g.n - 1);
    if (k->thread_var[i] && k->threads[i] > 0)
      ir_range_env_add(&w->env, k->thread_var[i], 0, k->threads[i] - 1);
  }
  w->nblocks = blocks.how == EXACT ? blocks.n : 0;
  Tally body = walk_stmt(w, k->body), t = zero_tally();
  for (int i = 0; i < NQUANT; i++) {
    t.q[i] = body.q[i];
    count_mul(&t.q[i], &blocks);
    count_add(&t.q[i], &body.q[SUMMED + i]);
  }
  kernel_row(w, k, &t);
  w->nblocks = 0;
  w->env.n = saved_env;
  return t;
}

static Tally walk_stmt(Walk *w, const IrStmt *s) {
  Tally t = zero_tally();
  if (!s) return t;
  switch (s->kind) {
    case IR_S_SEQ:
      return walk_seq(w, s);
    case IR_S_FOR:
      return walk_for(w, s);
    case IR_S_WHILE:
      return walk_while(w, s);
    case IR_S_IF:
      return walk_if(w, s);
    case IR_S_KERNEL:
      return walk_kernel(w, s);
    case IR_S_COPY:
    case IR_S_FILL:
    case IR_S_ATOMIC:
    case IR_S_REDUCE:
    case IR_S_GEMM:
      return tile_stmt(w, s);
    case IR_S_LET: {
      int64_t lo, hi;
      expr_bytes(s->u.let.value, false, &t);
      if (ir_range(s->u.let.value, &w->env, &lo, &hi)) ir_range_env_add(&w->env, s->u.let.var, lo, hi);
      return t;
    }
    case IR_S_STORE:
      exprs_bytes(s->u.store.idx, s->u.store.nidx, false, &t);
      expr_bytes(s->u.store.value, false, &t);
      if (is_global(s->u.store.buf)) {
        int64_t lanes = s->u.store.lanes > 1 ? s->u.store.lanes : 1;
        add_bytes(&t.q[STORE], (int64_t)dtype_bytes(s->u.store.buf->dtype) * lanes, false, s->loc);
      }
      return t;
    case IR_S_ALLOC:
      expr_bytes(s->u.alloc.buf->init, false, &t);
      return t;
    case IR_S_EVAL:
      expr_bytes(s->u.eval.value, false, &t);
      return t;
    case IR_S_ASSERT:
      expr_bytes(s->u.assert_.cond, false, &t);
      return t;
    case IR_S_BREAK:
    case IR_S_CONTINUE:
      w->breaks++;
      return t;
    case IR_S_RETURN:
    case IR_S_UNSUPPORTED:
      return t;
    case IR_STMT_KIND_COUNT:
      break;
  }
  ts_unreachable();
  return t;
}

/* ---- JSON ---------------------------------------------------------------------------- */
static void json_string(StrBuf *out, const char *s) {
  sb_putc(out, '"');
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      sb_printf(out, "\\%c", *p);
    else if (*p < 0x20)
      sb_printf(out, "\\u%04x", *p);
    else
      sb_putc(out, (char)*p);
  }
  sb_putc(out, '"');
}

/* `,\n  "name": "file:line:col: what why"` for an inexact count. */
static void print_note(StrBuf *out, const char *name, const Count *c) {
  if (c->how == EXACT) return;
  StrBuf note = {0};
  if (c->loc.file && c->loc.line) sb_printf(&note, "%s:%d:%d: ", c->loc.file->name, c->loc.line, c->loc.col);
  sb_printf(&note, "%s%s%s", c->what ? c->what : "", c->what ? " " : "", c->why ? c->why : "");
  sb_printf(out, ",\n  \"%s\": ", name);
  json_string(out, sb_str(&note));
  sb_free(&note);
}

void ir_func_stats(const IrFunc *f, StrBuf *out) {
  Walk w;
  memset(&w, 0, sizeof w);
  StrBuf rows = {0};
  w.rows = &rows;
  Tally t = walk_stmt(&w, f->body);
  Count bytes = bytes_of(&t);
  sb_append(out, "{\n  \"function\": ");
  json_string(out, f->name);
  sb_printf(out, ",\n  \"kernels\": [%s%s%s],\n  \"total_flops\": ", w.nrows ? "\n" : "", sb_str(&rows),
            w.nrows ? "\n  " : "");
  print_count(out, &t.q[FLOPS]);
  sb_printf(out, ",\n  \"flops_status\": \"%s\",\n  \"total_global_load_bytes\": ",
            exactness_names[t.q[FLOPS].how]);
  print_count(out, &t.q[LOAD]);
  sb_append(out, ",\n  \"total_global_store_bytes\": ");
  print_count(out, &t.q[STORE]);
  sb_append(out, ",\n  \"total_global_bytes\": ");
  print_count(out, &bytes);
  sb_printf(out, ",\n  \"bytes_status\": \"%s\"", exactness_names[bytes.how]);
  print_note(out, "flops_note", &t.q[FLOPS]);
  print_note(out, "bytes_note", &bytes);
  sb_append(out, "\n}\n");
  sb_free(&rows);
}
