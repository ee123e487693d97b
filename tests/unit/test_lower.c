/* test_lower.c — tests of the lowering pipeline (src/pass, src/layout).
 *
 * Small tile-level IrFuncs are built by hand, run through pass_pipeline, and the
 * thread-level result is checked two ways: structurally (no parallel loops or tile ops
 * left, register counts, shuffles, barriers, shared-memory size) and by running it.
 * The runner below interprets one kernel for every block and thread of the grid in
 * lockstep (each statement for all threads of the block before the next, as a SIMT
 * machine would) and compares the outputs with the tile-level meaning computed in C on
 * random data.  It also detects shared-memory races: between two barriers an element
 * written by one thread and touched by another is an error, so a missing __syncthreads
 * fails the test even though lockstep execution would hide it. */
#include <math.h>
#include <stdlib.h>

#include "../../src/layout/layout.h"
#include "../../src/pass/passes.h"
#include "test.h"

/* ---- a lockstep interpreter of thread-level IR ---- */
#define MAXT 1024
typedef struct Slot { IrVar *var; double val[MAXT]; } Slot;
typedef struct Mem {
  IrBuffer *buf;
  double *data;       /* global/shared: numel; register buffers: numel per thread */
  int64_t n;          /* elements (per thread for registers) */
  int *wep, *wthr, *rep, *rthr; /* race tracking for shared memory */
} Mem;
/* A cp.async write in flight: it lands at the latest moment the hardware allows, the
 * issuing thread's wait that retires its group, so a read before that wait sees the old
 * (or poisoned) contents. */
typedef struct Pending { Mem *m; int64_t a; double v; int t, group; } Pending;
typedef struct Interp {
  int T;
  Slot *slots; int nslots;
  Mem mem[64]; int nmem;
  int epoch;
  int races, errors;
  bool active[MAXT];
  Pending *pend; int npend, cap_pend;
  int committed[MAXT]; /* cp.async groups each thread has committed */
} Interp;

static Slot *slot(Interp *in, IrVar *v) {
  for (int i = 0; i < in->nslots; i++)
    if (in->slots[i].var == v) return &in->slots[i];
  /* fixed capacity: callers keep Slot pointers across evaluations */
  if (!in->slots) in->slots = calloc(512, sizeof(Slot));
  if (in->nslots == 512) abort();
  Slot *s = &in->slots[in->nslots++];
  s->var = v;
  memset(s->val, 0, sizeof s->val);
  return s;
}

static bool is_reg(IrBuffer *b) {
  return b->scope == IR_SCOPE_FRAGMENT || b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR;
}

static Mem *mem_of(Interp *in, IrBuffer *b) {
  for (int i = 0; i < in->nmem; i++)
    if (in->mem[i].buf == b) return &in->mem[i];
  Mem *m = &in->mem[in->nmem++];
  memset(m, 0, sizeof *m);
  m->buf = b;
  m->n = is_reg(b) ? (b->local_size > 0 ? b->local_size : 1) : ir_buffer_numel(b);
  int64_t total = is_reg(b) ? m->n * in->T : m->n;
  m->data = calloc((size_t)total, sizeof(double));
  for (int64_t i = 0; i < total; i++) m->data[i] = NAN; /* poison: uninitialised reads show */
  if (b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN) {
    m->wep = calloc((size_t)total, sizeof(int));
    m->wthr = calloc((size_t)total, sizeof(int));
    m->rep = calloc((size_t)total, sizeof(int));
    m->rthr = calloc((size_t)total, sizeof(int));
    for (int64_t i = 0; i < total; i++) m->wep[i] = m->rep[i] = -1;
  }
  return m;
}

static double eval(Interp *in, IrExpr *e, int t);

static int64_t addr(Interp *in, Mem *m, IrExpr **idx, int nidx, int t) {
  IrBuffer *b = m->buf;
  int64_t a = 0;
  if (is_reg(b)) {
    if (nidx != 1) in->errors++;
    a = (int64_t)eval(in, idx[0], t);
    if (a < 0 || a >= m->n) { in->errors++; return -1; }
    return (int64_t)t * m->n + a;
  }
  if (nidx == 1 && b->ndim > 1 && b->layout) { /* a swizzled tile: one element offset (layout.h) */
    a = (int64_t)eval(in, idx[0], t);
    if (a < 0 || a >= m->n) { in->errors++; return -1; }
    return a;
  }
  if (nidx != b->ndim) { in->errors++; return -1; }
  for (int k = 0; k < nidx; k++) {
    int64_t ext;
    ir_is_const_int(b->shape[k], &ext);
    int64_t i = (int64_t)eval(in, idx[k], t);
    if (i < 0 || i >= ext) { in->errors++; return -1; } /* out of bounds */
    a = a * ext + i;
  }
  return a;
}

static void track(Interp *in, Mem *m, int64_t a, int t, bool write) {
  if (!m->wep) return;
  if (m->wep[a] == in->epoch && m->wthr[a] != t) in->races++;
  if (write) {
    if (m->rep[a] == in->epoch && (m->rthr[a] != t)) in->races++;
    m->wep[a] = in->epoch;
    m->wthr[a] = t;
  } else {
    if (m->rep[a] == in->epoch && m->rthr[a] != t) m->rthr[a] = -2;
    else if (m->rep[a] != in->epoch) { m->rep[a] = in->epoch; m->rthr[a] = t; }
  }
}

static double cast_to(ts_dtype t, double v) {
  if (t == TS_DTYPE_FLOAT32) return (double)(float)v;
  if (dtype_is_float(t)) return v;
  if (t == TS_DTYPE_BOOL) return v != 0;
  return trunc(v);
}

static double eval(Interp *in, IrExpr *e, int t) {
  double a, b;
  switch (e->kind) {
    case IR_INT: return (double)e->u.ival;
    case IR_FLOAT: return e->u.fval;
    case IR_VAR: return slot(in, e->u.var)->val[t];
    case IR_LOAD: {
      Mem *m = mem_of(in, e->u.load.buf);
      int64_t ad = addr(in, m, e->u.load.idx, e->u.load.nidx, t);
      if (ad < 0) return NAN;
      track(in, m, ad, t, false);
      return m->data[ad];
    }
    case IR_CAST: return cast_to(e->dtype, eval(in, e->u.ops[0], t));
    case IR_SELECT: case IR_IF_THEN_ELSE:
      return eval(in, e->u.ops[0], t) != 0 ? eval(in, e->u.ops[1], t) : eval(in, e->u.ops[2], t);
    case IR_NEG: return -eval(in, e->u.ops[0], t);
    case IR_NOT: return !eval(in, e->u.ops[0], t);
    case IR_CALL:
      switch (e->u.call.op) {
        case IRI_SHFL_XOR: {
          int mask = (int)eval(in, e->u.call.args[1], t), other = t ^ mask;
          if ((other >> 5) != (t >> 5) || other >= in->T) { in->errors++; return NAN; }
          return eval(in, e->u.call.args[0], other);
        }
        case IRI_ABS: return fabs(eval(in, e->u.call.args[0], t));
        case IRI_EXP: return exp(eval(in, e->u.call.args[0], t));
        case IRI_SQRT: return sqrt(eval(in, e->u.call.args[0], t));
        default: in->errors++; return NAN;
      }
    default: break;
  }
  a = eval(in, e->u.ops[0], t);
  b = eval(in, e->u.ops[1], t);
  double r;
  switch (e->kind) {
    case IR_ADD: r = a + b; break;
    case IR_SUB: r = a - b; break;
    case IR_MUL: r = a * b; break;
    case IR_DIV: r = a / b; break;
    case IR_FLOORDIV: r = floor(a / b); break;
    case IR_FLOORMOD: r = a - floor(a / b) * b; break;
    case IR_MIN: r = a < b ? a : b; break;
    case IR_MAX: r = a > b ? a : b; break;
    case IR_EQ: return a == b;
    case IR_NE: return a != b;
    case IR_LT: return a < b;
    case IR_LE: return a <= b;
    case IR_GT: return a > b;
    case IR_GE: return a >= b;
    case IR_AND: return a != 0 && b != 0;
    case IR_OR: return a != 0 || b != 0;
    case IR_BITXOR: r = (double)((int64_t)a ^ (int64_t)b); break; /* swizzles */
    case IR_BITAND: r = (double)((int64_t)a & (int64_t)b); break;
    case IR_BITOR: r = (double)((int64_t)a | (int64_t)b); break;
    default: in->errors++; return NAN;
  }
  return cast_to(e->dtype, r);
}

static void exec(Interp *in, IrStmt *s, const bool *mask);

static void pend_push(Interp *in, Pending p) {
  if (in->npend == in->cap_pend) {
    in->cap_pend = in->cap_pend ? 2 * in->cap_pend : 1024;
    in->pend = realloc(in->pend, (size_t)in->cap_pend * sizeof *in->pend);
  }
  in->pend[in->npend++] = p;
}

/* cp.async.wait_group n for thread t: its writes of every group but the n newest land. */
static void pend_retire(Interp *in, int t, int n) {
  int k = 0;
  for (int i = 0; i < in->npend; i++) {
    Pending *p = &in->pend[i];
    if (p->t == t && p->group < in->committed[t] - n) {
      track(in, p->m, p->a, t, true);
      p->m->data[p->a] = p->v;
    } else {
      in->pend[k++] = *p;
    }
  }
  in->npend = k;
}

/* The device operations of a cp.async pipeline; any other is an error here. */
static void exec_device(Interp *in, IrExpr *e, const bool *mask) {
  for (int t = 0; t < in->T; t++) {
    if (!mask[t]) continue;
    switch (e->u.call.dop) {
      case IRD_CP_ASYNC_COMMIT: in->committed[t]++; break;
      case IRD_CP_ASYNC_WAIT: pend_retire(in, t, (int)e->u.call.attrs[0]); break;
      case IRD_FENCE_PROXY_ASYNC: break;
      default: in->errors++; return;
    }
  }
}

static void exec(Interp *in, IrStmt *s, const bool *mask) {
  if (!s) return;
  bool sub[MAXT];
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) exec(in, s->u.seq.items[i], mask);
      return;
    case IR_S_ALLOC: return;
    case IR_S_LET: {
      Slot *sl = slot(in, s->u.let.var);
      for (int t = 0; t < in->T; t++)
        if (mask[t]) sl->val[t] = eval(in, s->u.let.value, t);
      return;
    }
    case IR_S_IF: {
      bool other[MAXT];
      for (int t = 0; t < in->T; t++) {
        bool cnd = mask[t] && eval(in, s->u.if_.cond, t) != 0;
        sub[t] = cnd;
        other[t] = mask[t] && !cnd;
      }
      exec(in, s->u.if_.then_s, sub);
      exec(in, s->u.if_.else_s, other);
      return;
    }
    case IR_S_FOR: {
      if (s->u.loop.kind == IR_FOR_PARALLEL) in->errors++;
      Slot *sl = slot(in, s->u.loop.var);
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int t = 0; t < in->T; t++)
        if (mask[t]) {
          int64_t mn = (int64_t)eval(in, s->u.loop.min, t), mx = mn + (int64_t)eval(in, s->u.loop.extent, t);
          if (mn < lo) lo = mn;
          if (mx > hi) hi = mx;
        }
      for (int64_t v = lo; v < hi; v++) {
        for (int t = 0; t < in->T; t++) {
          sub[t] = false;
          if (!mask[t]) continue;
          int64_t mn = (int64_t)eval(in, s->u.loop.min, t), mx = mn + (int64_t)eval(in, s->u.loop.extent, t);
          sub[t] = v >= mn && v < mx;
          if (sub[t]) sl->val[t] = (double)v;
        }
        exec(in, s->u.loop.body, sub);
      }
      return;
    }
    case IR_S_STORE: {
      /* SIMT: all values are computed before any lane writes. */
      Mem *m = mem_of(in, s->u.store.buf);
      static double vals[MAXT][16];
      static int64_t ads[MAXT];
      int lanes = s->u.store.lanes;
      for (int t = 0; t < in->T; t++) {
        if (!mask[t]) continue;
        ads[t] = addr(in, m, s->u.store.idx, s->u.store.nidx, t);
        IrExpr *v = s->u.store.value, *ld = v->kind == IR_CAST ? v->u.ops[0] : v;
        if (lanes > 1) {
          if (ld->kind != IR_LOAD || ld->lanes != lanes) { in->errors++; continue; }
          Mem *sm = mem_of(in, ld->u.load.buf);
          int64_t sa = addr(in, sm, ld->u.load.idx, ld->u.load.nidx, t);
          if (sa < 0) continue;
          for (int l = 0; l < lanes; l++) {
            track(in, sm, sa + l, t, false);
            vals[t][l] = cast_to(s->u.store.buf->dtype, sm->data[sa + l]);
          }
        } else {
          vals[t][0] = cast_to(s->u.store.buf->dtype, eval(in, v, t));
        }
      }
      /* codegen issues cp.async for a vector copy with no conversion (vector_store) */
      IrExpr *v0 = s->u.store.value;
      bool async = s->u.store.async_ && lanes > 1 && v0->kind == IR_LOAD;
      for (int t = 0; t < in->T; t++) {
        if (!mask[t] || ads[t] < 0) continue;
        for (int l = 0; l < lanes; l++) {
          if (async) {
            pend_push(in, (Pending){m, ads[t] + l, vals[t][l], t, in->committed[t]});
            continue;
          }
          track(in, m, ads[t] + l, t, true);
          m->data[ads[t] + l] = vals[t][l];
        }
      }
      return;
    }
    case IR_S_EVAL: {
      IrExpr *e = s->u.eval.value;
      if (e->kind == IR_CALL && e->u.call.op == IRI_DEVICE) {
        exec_device(in, e, mask);
        return;
      }
      if (e->kind == IR_CALL && e->u.call.op == IRI_SYNCTHREADS) {
        for (int t = 0; t < in->T; t++)
          if (!mask[t]) in->errors++; /* a barrier not reached by every thread */
        in->epoch++;
        return;
      }
      if (e->kind == IR_CALL && e->u.call.op == IRI_ATOMIC_ADD) {
        IrExpr *ld = e->u.call.args[0]->u.call.args[0];
        Mem *m = mem_of(in, ld->u.load.buf);
        for (int t = 0; t < in->T; t++) {
          if (!mask[t]) continue;
          int64_t ad = addr(in, m, ld->u.load.idx, ld->u.load.nidx, t);
          if (ad >= 0) m->data[ad] += eval(in, e->u.call.args[1], t);
        }
        return;
      }
      in->errors++;
      return;
    }
    default: in->errors++; return; /* a tile op or construct codegen would not accept */
  }
}

/* Runs every block of the (only) kernel of f. */
static void run_kernel(Interp *in, IrFunc *f) {
  IrStmt *ks = f->body->kind == IR_S_KERNEL ? f->body : f->body->u.seq.items[0];
  IrKernel *k = &ks->u.kernel;
  in->T = k->threads[0] * (k->threads[1] > 0 ? k->threads[1] : 1) * (k->threads[2] > 0 ? k->threads[2] : 1);
  int64_t g[3];
  for (int a = 0; a < 3; a++) g[a] = 1, ir_is_const_int(k->grid[a], &g[a]);
  bool all[MAXT];
  for (int t = 0; t < MAXT; t++) all[t] = t < in->T;
  for (int64_t z = 0; z < g[2]; z++)
    for (int64_t y = 0; y < g[1]; y++)
      for (int64_t x = 0; x < g[0]; x++) {
        int64_t bi[3] = {x, y, z};
        for (int a = 0; a < 3; a++) {
          if (k->block_var[a]) for (int t = 0; t < in->T; t++) slot(in, k->block_var[a])->val[t] = (double)bi[a];
          if (k->thread_var[a]) {
            int64_t X = k->threads[0], Y = k->threads[1] > 0 ? k->threads[1] : 1;
            for (int t = 0; t < in->T; t++)
              slot(in, k->thread_var[a])->val[t] = (double)(a == 0 ? t % X : a == 1 ? (t / X) % Y : t / (X * Y));
          }
        }
        /* shared memory and registers start poisoned in every block */
        for (int i = 0; i < in->nmem; i++)
          if (in->mem[i].buf->scope != IR_SCOPE_GLOBAL) {
            Mem *m = &in->mem[i];
            free(m->data);
            free(m->wep);
            free(m->wthr);
            free(m->rep);
            free(m->rthr);
            in->mem[i] = in->mem[--in->nmem];
            i--;
          }
        exec(in, k->body, all);
        in->errors += in->npend; /* copies the kernel never waited for */
        in->npend = 0;
        memset(in->committed, 0, sizeof in->committed);
      }
}

static void interp_free(Interp *in) {
  free(in->pend);
  for (int i = 0; i < in->nmem; i++) {
    free(in->mem[i].data);
    free(in->mem[i].wep);
    free(in->mem[i].wthr);
    free(in->mem[i].rep);
    free(in->mem[i].rthr);
  }
  free(in->slots);
}

/* Sets a global buffer's contents before a run. */
static double *global_data(Interp *in, IrBuffer *b) {
  Mem *m = mem_of(in, b);
  return m->data;
}

/* ---- building tile-level IR by hand ---- */
typedef struct B {
  TsCompiler c;
  IrFunc *f;
  PtrVec params, body;
  IrKernel *k;
  IrStmt *ks;
} B;

static IrExpr *I(B *b, int64_t v) { return ir_i32(&b->c, v); }
static IrExpr *V(B *b, IrVar *v) { return ir_varref(&b->c, v, SRCLOC_NONE); }
static IrExpr *bin(B *b, IrExprKind k, IrExpr *x, IrExpr *y) { return ir_binary(&b->c, k, x, y, SRCLOC_NONE); }

static void b_init(B *b, int64_t gx, int64_t gy, int threads) {
  memset(b, 0, sizeof *b);
  ts_compiler_init(&b->c, (TsTarget){90, true});
  b->c.debug = true;
  b->f = ARENA_NEW(b->c.arena, IrFunc);
  b->f->name = "main";
  b->ks = ir_stmt(&b->c, IR_S_KERNEL, SRCLOC_NONE);
  b->k = &b->ks->u.kernel;
  b->k->grid[0] = I(b, gx);
  b->k->grid[1] = I(b, gy);
  b->k->grid[2] = I(b, 1);
  b->k->threads[0] = threads;
  b->k->threads[1] = b->k->threads[2] = 1;
  b->k->block_var[0] = ir_var(&b->c, "bx", TS_DTYPE_INT32, IR_VAR_BLOCK_IDX, SRCLOC_NONE);
  b->k->block_var[1] = ir_var(&b->c, "by", TS_DTYPE_INT32, IR_VAR_BLOCK_IDX, SRCLOC_NONE);
  b->k->block_var[1]->axis = 1;
}

static IrBuffer *b_buf(B *b, const char *name, IrScope sc, int64_t d0, int64_t d1) {
  IrExpr *shape[2] = {I(b, d0), I(b, d1)};
  int nd = d1 > 0 ? 2 : 1;
  IrBuffer *buf = ir_buffer(&b->c, name, TS_DTYPE_FLOAT32, sc, nd, shape, SRCLOC_NONE);
  if (sc == IR_SCOPE_GLOBAL) {
    buf->param_index = b->params.len;
    vec_push(b->c.arena, &b->params, buf);
  } else {
    IrStmt *a = ir_stmt(&b->c, IR_S_ALLOC, SRCLOC_NONE);
    a->u.alloc.buf = buf;
    vec_push(b->c.arena, &b->body, a);
  }
  return buf;
}

static IrRegion region(B *b, IrBuffer *buf, IrExpr *m0, IrExpr *m1, int64_t e0, int64_t e1) {
  IrRegion r = ir_region_full(&b->c, buf, SRCLOC_NONE);
  r.min[0] = m0;
  r.extent[0] = I(b, e0);
  if (buf->ndim > 1) {
    r.min[1] = m1;
    r.extent[1] = I(b, e1);
  }
  return r;
}

static void b_copy(B *b, IrRegion src, IrRegion dst) {
  IrStmt *s = ir_stmt(&b->c, IR_S_COPY, SRCLOC_NONE);
  s->u.copy.src = src;
  s->u.copy.dst = dst;
  vec_push(b->c.arena, &b->body, s);
}

static void b_reduce(B *b, IrReduceKind op, IrBuffer *src, IrBuffer *dst, int dim, bool clear) {
  IrStmt *s = ir_stmt(&b->c, IR_S_REDUCE, SRCLOC_NONE);
  s->u.reduce.op = op;
  s->u.reduce.src = src;
  s->u.reduce.dst = dst;
  s->u.reduce.dim = dim;
  s->u.reduce.clear = clear;
  vec_push(b->c.arena, &b->body, s);
}

static void b_fill(B *b, IrBuffer *dst, double v) {
  IrStmt *s = ir_stmt(&b->c, IR_S_FILL, SRCLOC_NONE);
  s->u.fill.dst = ir_region_full(&b->c, dst, SRCLOC_NONE);
  s->u.fill.value = ir_float(&b->c, v, TS_DTYPE_FLOAT32, SRCLOC_NONE);
  vec_push(b->c.arena, &b->body, s);
}

/* for i, j in T.Parallel(e0, e1): body(i, j) */
static IrStmt *par2(B *b, IrVar *i, IrVar *j, int64_t e0, int64_t e1, IrStmt *body) {
  IrStmt *inner = ir_for(&b->c, j, I(b, 0), I(b, e1), IR_FOR_PARALLEL, body, SRCLOC_NONE);
  return ir_for(&b->c, i, I(b, 0), I(b, e0), IR_FOR_PARALLEL, inner, SRCLOC_NONE);
}

static bool b_finish(B *b) {
  b->k->body = ir_seq_vec(&b->c, &b->body, SRCLOC_NONE);
  b->f->nparams = b->params.len;
  b->f->params = ARENA_ARRAY(b->c.arena, IrParam, b->params.len);
  for (int i = 0; i < b->params.len; i++) {
    IrBuffer *p = b->params.items[i];
    b->f->params[i] = (IrParam){p->name, p, NULL};
  }
  b->f->body = ir_seq(&b->c, &b->ks, 1, SRCLOC_NONE);
  bool ok = pass_pipeline(&b->c, b->f);
  if (getenv("TS_TEST_DUMP")) {
    StrBuf sb = {0};
    ir_print_func(&sb, b->f);
    fprintf(stderr, "%s\n", sb_str(&sb));
    sb_free(&sb);
  }
  if (!ok) fprintf(stderr, "%s", sb_str(&b->c.diag.out));
  return ok;
}

/* Counts of thread-level features in the result. */
typedef struct Feat { int parallel, tile, shfl, sync, vec_store; } Feat;
static void feat_expr(IrExpr *e, void *ctx) {
  Feat *f = ctx;
  if (e->kind == IR_CALL && e->u.call.op == IRI_SHFL_XOR) f->shfl++;
  if (e->kind == IR_CALL && e->u.call.op == IRI_SYNCTHREADS) f->sync++;
}
static void feat_stmt(IrStmt *s, void *ctx) {
  Feat *f = ctx;
  if (s->kind == IR_S_FOR && (s->u.loop.kind == IR_FOR_PARALLEL || s->u.loop.kind == IR_FOR_PIPELINED)) f->parallel++;
  if (s->kind == IR_S_COPY || s->kind == IR_S_FILL || s->kind == IR_S_REDUCE || s->kind == IR_S_GEMM ||
      s->kind == IR_S_ATOMIC)
    f->tile++;
  if (s->kind == IR_S_STORE && s->u.store.lanes > 1) f->vec_store++;
}
static Feat features(IrFunc *f) {
  Feat ft = {0};
  IrVisitor v = {feat_stmt, feat_expr, &ft};
  ir_visit(f->body, &v);
  return ft;
}

static double rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (double)(float)(((*s >> 8) & 0xffff) / 32768.0 - 1.0);
}

/* ---- tests ---- */

TEST(lower_fragment_block_layout) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  int64_t shape[2] = {16, 32};
  Fragment *f = fragment_block(&c, 2, shape, 128, 4);
  CHECK(fragment_local_size(f) == 4);
  CHECK(f->dim[1].threads == 8 && f->dim[0].threads == 16 && f->nrep == 0);
  /* every element has exactly one (thread, register) and every slot is used once */
  static int seen[128][4];
  memset(seen, 0, sizeof seen);
  for (int64_t i = 0; i < 16; i++)
    for (int64_t j = 0; j < 32; j++) {
      int64_t idx[2] = {i, j};
      int64_t th = fragment_thread_of(f, idx), r = fragment_reg_of(f, idx);
      REQUIRE(th >= 0 && th < 128 && r >= 0 && r < 4);
      seen[th][r]++;
    }
  for (int th = 0; th < 128; th++)
    for (int r = 0; r < 4; r++) CHECK(seen[th][r] == 1);
  Fragment *red = fragment_reduce(&c, f, 1, false);
  CHECK(red->ndim == 1 && fragment_local_size(red) == 1 && fragment_replicas(red) == 8);
  ts_compiler_fini(&c);
}

/* C = A + B over [50, 72] with 16x32 tiles: partial tiles on both edges. */
TEST(lower_elementwise_add) {
  B b;
  enum { M = 50, N = 72, BM = 16, BN = 32 };
  b_init(&b, (N + BN - 1) / BN, (M + BM - 1) / BM, 64);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, M, N), *Bb = b_buf(&b, "B", IR_SCOPE_GLOBAL, M, N),
           *C = b_buf(&b, "C", IR_SCOPE_GLOBAL, M, N);
  IrBuffer *af = b_buf(&b, "A_frag", IR_SCOPE_FRAGMENT, BM, BN), *bf = b_buf(&b, "B_frag", IR_SCOPE_FRAGMENT, BM, BN),
           *cf = b_buf(&b, "C_frag", IR_SCOPE_FRAGMENT, BM, BN);
  IrExpr *r0 = bin(&b, IR_MUL, V(&b, b.k->block_var[1]), I(&b, BM));
  IrExpr *c0 = bin(&b, IR_MUL, V(&b, b.k->block_var[0]), I(&b, BN));
  b_copy(&b, region(&b, A, r0, c0, BM, BN), ir_region_full(&b.c, af, SRCLOC_NONE));
  b_copy(&b, region(&b, Bb, r0, c0, BM, BN), ir_region_full(&b.c, bf, SRCLOC_NONE));
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *ij[2] = {V(&b, i), V(&b, j)};
  IrExpr *sum = bin(&b, IR_ADD, ir_load(&b.c, af, ij, 2, SRCLOC_NONE), ir_load(&b.c, bf, ij, 2, SRCLOC_NONE));
  vec_push(b.c.arena, &b.body, par2(&b, i, j, BM, BN, ir_store(&b.c, cf, ij, 2, sum, SRCLOC_NONE)));
  b_copy(&b, ir_region_full(&b.c, cf, SRCLOC_NONE), region(&b, C, r0, c0, BM, BN));
  REQUIRE(b_finish(&b));
  Feat ft = features(b.f);
  CHECK(ft.parallel == 0 && ft.tile == 0);
  CHECK(ft.vec_store >= 3); /* two vector loads into fragments, one vector store out */
  CHECK(af->local_size == BM * BN / 64 && cf->fragment && fragment_equal(af->fragment, cf->fragment));
  Interp in = {0};
  in.T = 64;
  double *a = global_data(&in, A), *bb = global_data(&in, Bb), *cc = global_data(&in, C);
  unsigned seed = 1;
  for (int e = 0; e < M * N; e++) a[e] = rnd(&seed), bb[e] = rnd(&seed);
  run_kernel(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int e = 0; e < M * N; e++) bad += fabs(cc[e] - (double)(float)(a[e] + bb[e])) > 1e-6;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

/* Row max and row sum (clear=False on top of a fill) of [R, N] rows, block_M rows per block. */
static void row_reduce_case(TestCtx *t, int R, int BM, int NN, int threads, bool expect_smem) {
  B b;
  b_init(&b, R / BM, 1, threads);
  IrBuffer *X = b_buf(&b, "X", IR_SCOPE_GLOBAL, R, NN), *OM = b_buf(&b, "OutMax", IR_SCOPE_GLOBAL, R, 0),
           *OS = b_buf(&b, "OutSum", IR_SCOPE_GLOBAL, R, 0);
  IrBuffer *x = b_buf(&b, "x", IR_SCOPE_FRAGMENT, BM, NN), *m = b_buf(&b, "m", IR_SCOPE_FRAGMENT, BM, 0),
           *sm = b_buf(&b, "s", IR_SCOPE_FRAGMENT, BM, 0);
  IrExpr *r0 = bin(&b, IR_MUL, V(&b, b.k->block_var[0]), I(&b, BM));
  b_fill(&b, sm, 1.0);
  b_copy(&b, region(&b, X, r0, I(&b, 0), BM, NN), ir_region_full(&b.c, x, SRCLOC_NONE));
  b_reduce(&b, IR_RED_MAX, x, m, 1, true);
  b_reduce(&b, IR_RED_SUM, x, sm, 1, false);
  b_copy(&b, ir_region_full(&b.c, m, SRCLOC_NONE), region(&b, OM, r0, NULL, BM, 0));
  b_copy(&b, ir_region_full(&b.c, sm, SRCLOC_NONE), region(&b, OS, r0, NULL, BM, 0));
  REQUIRE(b_finish(&b));
  Feat ft = features(b.f);
  CHECK(ft.parallel == 0 && ft.tile == 0 && ft.shfl > 0);
  IrKernel *k = &b.f->body->u.seq.items[0]->u.kernel;
  CHECK((k->smem_bytes > 0) == expect_smem);
  CHECK((ft.sync > 0) == expect_smem);
  Interp in = {0};
  in.T = threads;
  double *xs = global_data(&in, X), *om = global_data(&in, OM), *os = global_data(&in, OS);
  unsigned seed = 7;
  for (int e = 0; e < R * NN; e++) xs[e] = rnd(&seed);
  run_kernel(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < R; r++) {
    double mx = -INFINITY, s = 1.0;
    for (int j = 0; j < NN; j++) {
      mx = xs[r * NN + j] > mx ? xs[r * NN + j] : mx;
      s += xs[r * NN + j];
    }
    bad += om[r] != mx;
    bad += fabs(os[r] - s) > 1e-4;
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

TEST(lower_reduce_in_warp) { row_reduce_case(t, 6, 2, 100, 64, false); }
TEST(lower_reduce_across_warps) { row_reduce_case(t, 4, 1, 256, 128, true); }

/* B = A^T through two shared tiles: barriers must separate the three phases. */
TEST(lower_shared_transpose) {
  B b;
  enum { M = 40, N = 24, TB = 16 };
  b_init(&b, (N + TB - 1) / TB, (M + TB - 1) / TB, 64);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, M, N), *Bt = b_buf(&b, "B", IR_SCOPE_GLOBAL, N, M);
  IrBuffer *tile = b_buf(&b, "tile", IR_SCOPE_SHARED_DYN, TB, TB), *tt = b_buf(&b, "tile_t", IR_SCOPE_SHARED_DYN, TB, TB);
  IrExpr *r0 = bin(&b, IR_MUL, V(&b, b.k->block_var[1]), I(&b, TB));
  IrExpr *c0 = bin(&b, IR_MUL, V(&b, b.k->block_var[0]), I(&b, TB));
  b_copy(&b, region(&b, A, r0, c0, TB, TB), ir_region_full(&b.c, tile, SRCLOC_NONE));
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *ji[2] = {V(&b, j), V(&b, i)}, *ij[2] = {V(&b, i), V(&b, j)};
  vec_push(b.c.arena, &b.body, par2(&b, j, i, TB, TB, ir_store(&b.c, tt, ji, 2, ir_load(&b.c, tile, ij, 2, SRCLOC_NONE), SRCLOC_NONE)));
  b_copy(&b, ir_region_full(&b.c, tt, SRCLOC_NONE), region(&b, Bt, c0, r0, TB, TB));
  REQUIRE(b_finish(&b));
  IrKernel *k = &b.f->body->u.seq.items[0]->u.kernel;
  CHECK(tile->smem_offset == 0 && tt->smem_offset == 1024 && k->smem_bytes == 2048);
  Feat ft = features(b.f);
  CHECK(ft.sync >= 2 && ft.parallel == 0);
  Interp in = {0};
  in.T = 64;
  double *a = global_data(&in, A), *bt = global_data(&in, Bt);
  unsigned seed = 3;
  for (int e = 0; e < M * N; e++) a[e] = rnd(&seed);
  run_kernel(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < M; r++)
    for (int cc = 0; cc < N; cc++) bad += bt[cc * M + r] != a[r * N + cc];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

/* A `break` / `continue` in a kernel loop is a leaf for lower_tile_ops: it once bounced
 * between rw_stmt and lower_stmt forever.  It must reach the thread-level IR unchanged. */
typedef struct Jumps { int brk, cont; } Jumps;
static void jumps_stmt(IrStmt *s, void *ctx) {
  Jumps *j = ctx;
  if (s->kind == IR_S_BREAK) j->brk++;
  if (s->kind == IR_S_CONTINUE) j->cont++;
}
TEST(lower_break_continue_in_loop) {
  B b;
  b_init(&b, 1, 1, 32);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, 32, 0);
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *iv = V(&b, i);
  IrStmt *st = ir_store(&b.c, A, &iv, 1, ir_float(&b.c, 1.0, TS_DTYPE_FLOAT32, SRCLOC_NONE), SRCLOC_NONE);
  IrStmt *brk = ir_stmt(&b.c, IR_S_BREAK, SRCLOC_NONE), *cont = ir_stmt(&b.c, IR_S_CONTINUE, SRCLOC_NONE);
  IrStmt *body = ir_seq(&b.c, (IrStmt *[]){ir_if(&b.c, bin(&b, IR_EQ, iv, I(&b, 3)), cont, NULL, SRCLOC_NONE),
                                           ir_if(&b.c, bin(&b, IR_GE, iv, I(&b, 20)), brk, NULL, SRCLOC_NONE), st},
                        3, SRCLOC_NONE);
  vec_push(b.c.arena, &b.body, ir_for(&b.c, i, I(&b, 0), I(&b, 32), IR_FOR_SERIAL, body, SRCLOC_NONE));
  REQUIRE(b_finish(&b));
  Jumps j = {0, 0};
  IrVisitor v = {jumps_stmt, NULL, &j};
  ir_visit(b.f->body, &v);
  CHECK(j.brk == 1 && j.cont == 1);
  ts_compiler_fini(&b.c);
}

/* Writing a shared tile and reading it back through a T.view alias is a RAW hazard on
 * the same memory: thread_sync must put a barrier between them (and the interpreter,
 * which sees both names as one array here, must find no race). */
TEST(lower_sync_through_view_alias) {
  B b;
  enum { N = 64 };
  b_init(&b, 1, 1, 64);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, N, 0), *O = b_buf(&b, "O", IR_SCOPE_GLOBAL, N, 0);
  IrBuffer *tile = b_buf(&b, "tile", IR_SCOPE_SHARED_DYN, N, 0);
  IrBuffer *view = ir_buffer(&b.c, "tile_v", TS_DTYPE_FLOAT32, IR_SCOPE_SHARED_DYN, 1, (IrExpr *[]){I(&b, N)}, SRCLOC_NONE);
  view->alias_of = tile;
  IrStmt *al = ir_stmt(&b.c, IR_S_ALLOC, SRCLOC_NONE);
  al->u.alloc.buf = view;
  vec_push(b.c.arena, &b.body, al);
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *iv = V(&b, i), *rev = bin(&b, IR_SUB, I(&b, N - 1), V(&b, j)), *jv = V(&b, j);
  vec_push(b.c.arena, &b.body, ir_for(&b.c, i, I(&b, 0), I(&b, N), IR_FOR_PARALLEL,
                                      ir_store(&b.c, tile, &iv, 1, ir_load(&b.c, A, &iv, 1, SRCLOC_NONE), SRCLOC_NONE), SRCLOC_NONE));
  vec_push(b.c.arena, &b.body, ir_for(&b.c, j, I(&b, 0), I(&b, N), IR_FOR_PARALLEL,
                                      ir_store(&b.c, O, &jv, 1, ir_load(&b.c, view, &rev, 1, SRCLOC_NONE), SRCLOC_NONE), SRCLOC_NONE));
  REQUIRE(b_finish(&b));
  CHECK(features(b.f).sync >= 1);
  ts_compiler_fini(&b.c);
}

/* A shared tile pinned to a swizzle (T.annotate_layout) that no GEMM uses: the plain
 * T.copy into it and the transposing T.Parallel read out of it go through the layout's
 * forward mapping, so the transpose is still exact (for each swizzle width), and the
 * tile really is stored swizzled (element (r, c) at layout_offset_const). */
static void swizzled_transpose(TestCtx *t, LayoutKind kind, int want_sw) {
  B b;
  enum { M = 64, N = 96, TB = 32 };
  b_init(&b, N / TB, M / TB, 128);
  IrBuffer *A = b_buf(&b, "A", IR_SCOPE_GLOBAL, M, N), *Bt = b_buf(&b, "B", IR_SCOPE_GLOBAL, N, M);
  IrBuffer *tile = b_buf(&b, "tile", IR_SCOPE_SHARED_DYN, TB, TB);
  const char *why;
  tile->layout = layout_pinned(&b.c, kind, TB, TB, 4, SRCLOC_NONE, &why);
  REQUIRE(tile->layout && tile->layout->swizzle == want_sw);
  IrExpr *r0 = bin(&b, IR_MUL, V(&b, b.k->block_var[1]), I(&b, TB));
  IrExpr *c0 = bin(&b, IR_MUL, V(&b, b.k->block_var[0]), I(&b, TB));
  b_copy(&b, region(&b, A, r0, c0, TB, TB), ir_region_full(&b.c, tile, SRCLOC_NONE));
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *ji[2] = {V(&b, j), V(&b, i)};
  IrExpr *out[2] = {bin(&b, IR_ADD, c0, V(&b, i)), bin(&b, IR_ADD, r0, V(&b, j))};
  vec_push(b.c.arena, &b.body, par2(&b, i, j, TB, TB, ir_store(&b.c, Bt, out, 2, ir_load(&b.c, tile, ji, 2, SRCLOC_NONE), SRCLOC_NONE)));
  REQUIRE(b_finish(&b));
  CHECK(tile->layout->swizzle == want_sw); /* inference kept the pinned layout */
  Interp in = {0};
  in.T = 128;
  double *a = global_data(&in, A), *bt = global_data(&in, Bt);
  unsigned seed = 11;
  for (int e = 0; e < M * N; e++) a[e] = rnd(&seed);
  run_kernel(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int r = 0; r < M; r++)
    for (int cc = 0; cc < N; cc++) bad += bt[cc * M + r] != a[r * N + cc];
  CHECK(bad == 0);
  /* the last block's tile as it sits in shared memory: swizzled, not row-major */
  Mem *m = mem_of(&in, tile);
  int misplaced = 0;
  int64_t lr = (M / TB - 1) * TB, lc = (N / TB - 1) * TB;
  for (int r = 0; r < TB; r++)
    for (int cc = 0; cc < TB; cc++) misplaced += m->data[layout_offset_const(tile->layout, r, cc)] != a[(lr + r) * N + lc + cc];
  CHECK(misplaced == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

TEST(lower_swizzled_tile_without_gemm) {
  swizzled_transpose(t, LAYOUT_FULL, 128);
  swizzled_transpose(t, LAYOUT_HALF, 64);
  swizzled_transpose(t, LAYOUT_QUARTER, 32);
  swizzled_transpose(t, LAYOUT_LINEAR, 0);
}

/* cp.async stores of `lanes` lanes and commits in the result. */
typedef struct AsyncFeat { int lanes, async_vec, commits; } AsyncFeat;
static void async_stmt(IrStmt *s, void *ctx) {
  AsyncFeat *f = ctx;
  if (s->kind == IR_S_STORE && s->u.store.async_ && s->u.store.lanes == f->lanes) f->async_vec++;
}
static void async_expr(IrExpr *e, void *ctx) {
  if (ir_is_device(e, IRD_CP_ASYNC_COMMIT)) ((AsyncFeat *)ctx)->commits++;
}

/* A gather in a T.Pipelined loop (T.im2col's shape, over a sequence): tile kt of the
 * windowed rows, col[m, k] = X[m + k // C - P, k % C] (0 outside [0, L)), moves V lanes at
 * a time (the row and the padding test are the same over each vector when V | C) and runs
 * stages ahead as cp.async; the consumer adds each tile into a fragment, so the output is
 * the sum of the tiles.  The interpreter lands each cp.async at its wait: a read before the
 * wait sees poison. */
static void gather_pipeline_case(TestCtx *t, int L, int C, int K, int P, int BM, int BK, int stages, int threads,
                                 int want_lanes) {
  B b;
  int NK = K * C / BK;
  b_init(&b, 1, (L + BM - 1) / BM, threads);
  IrBuffer *X = b_buf(&b, "X", IR_SCOPE_GLOBAL, L, C), *OUT = b_buf(&b, "OUT", IR_SCOPE_GLOBAL, L, BK);
  IrBuffer *As = b_buf(&b, "A_s", IR_SCOPE_SHARED_DYN, BM, BK), *acc = b_buf(&b, "acc", IR_SCOPE_FRAGMENT, BM, BK);
  IrVar *kt = ir_var(&b.c, "kt", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrVar *i = ir_var(&b.c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j = ir_var(&b.c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrVar *i2 = ir_var(&b.c, "i2", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE), *j2 = ir_var(&b.c, "j2", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *m0 = bin(&b, IR_MUL, V(&b, b.k->block_var[1]), I(&b, BM));
  b_fill(&b, acc, 0.0);
  IrExpr *kk = bin(&b, IR_ADD, bin(&b, IR_MUL, V(&b, kt), I(&b, BK)), V(&b, j));
  IrExpr *row = bin(&b, IR_SUB, bin(&b, IR_ADD, bin(&b, IR_ADD, m0, V(&b, i)), bin(&b, IR_FLOORDIV, kk, I(&b, C))), I(&b, P));
  IrExpr *inside = bin(&b, IR_AND, bin(&b, IR_GE, row, I(&b, 0)), bin(&b, IR_LT, row, I(&b, L)));
  IrExpr *src[2] = {row, bin(&b, IR_FLOORMOD, kk, I(&b, C))}, *ij[2] = {V(&b, i), V(&b, j)};
  IrExpr *val = ir_select(&b.c, IR_IF_THEN_ELSE, inside, ir_load(&b.c, X, src, 2, SRCLOC_NONE),
                          ir_float(&b.c, 0, TS_DTYPE_FLOAT32, SRCLOC_NONE), SRCLOC_NONE);
  IrStmt *gather = par2(&b, i, j, BM, BK, ir_store(&b.c, As, ij, 2, val, SRCLOC_NONE));
  IrExpr *ij2[2] = {V(&b, i2), V(&b, j2)};
  IrExpr *sum = bin(&b, IR_ADD, ir_load(&b.c, acc, ij2, 2, SRCLOC_NONE), ir_load(&b.c, As, ij2, 2, SRCLOC_NONE));
  IrStmt *use = par2(&b, i2, j2, BM, BK, ir_store(&b.c, acc, ij2, 2, sum, SRCLOC_NONE));
  IrStmt *loop = ir_for(&b.c, kt, I(&b, 0), I(&b, NK), IR_FOR_PIPELINED, ir_seq(&b.c, (IrStmt *[]){gather, use}, 2, SRCLOC_NONE),
                        SRCLOC_NONE);
  loop->u.loop.num_stages = stages;
  vec_push(b.c.arena, &b.body, loop);
  b_copy(&b, ir_region_full(&b.c, acc, SRCLOC_NONE), region(&b, OUT, m0, I(&b, 0), BM, BK));
  REQUIRE(b_finish(&b));
  Feat ft = features(b.f);
  CHECK(ft.parallel == 0 && ft.tile == 0);
  AsyncFeat af = {want_lanes, 0, 0};
  IrVisitor av = {async_stmt, async_expr, &af};
  ir_visit(b.f->body, &av);
  CHECK(af.async_vec > 0); /* the gather became cp.async of want_lanes lanes */
  CHECK(af.commits >= 2);  /* a prologue and the main loop */
  Interp in = {0};
  in.T = threads;
  double *x = global_data(&in, X), *out = global_data(&in, OUT);
  unsigned seed = 11;
  for (int e = 0; e < L * C; e++) x[e] = rnd(&seed);
  run_kernel(&in, b.f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int m = 0; m < L; m++)
    for (int jj = 0; jj < BK; jj++) {
      double want = 0;
      for (int k = 0; k < NK; k++) {
        int kc = k * BK + jj, r = m + kc / C - P;
        want = (double)(float)(want + (r >= 0 && r < L ? x[r * C + kc % C] : 0.0));
      }
      bad += fabs(out[m * BK + jj] - want) > 1e-5;
    }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&b.c);
}

TEST(lower_gather_pipeline_vec4) { gather_pipeline_case(t, 40, 8, 3, 1, 16, 8, 3, 32, 4); }
TEST(lower_gather_pipeline_vec2) { gather_pipeline_case(t, 37, 6, 3, 2, 16, 6, 2, 32, 2); }
