/* interp.c — the lockstep interpreter of thread-level IR used by the unit tests (interp.h). */
#include "interp.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/front/front.h"
#include "../../src/ir/analysis.h"
#include "../../src/layout/layout.h"
#include "../../src/pass/passes.h"

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

/* An error of the run (see interp.h); TS_INTERP_DEBUG=1 prints where each is counted. */
static void interp_fault(Interp *in, int line) {
  if (getenv("TS_INTERP_DEBUG")) fprintf(stderr, "interp: error counted at interp.c:%d\n", line);
  in->errors++;
}

static double eval(Interp *in, IrExpr *e, int t);

/* The source lane of a T.shfl_* (CUDA's rules): within groups of `width` lanes; a lane
 * outside the caller's group (or past the block) reads the caller's own value. */
static int shfl_source(IrIntrin op, int lane, int delta, int width) {
  int base = lane - lane % width, src;
  switch (op) {
    case IRI_SHFL_SYNC: return base + ((delta % width) + width) % width;
    case IRI_SHFL_UP: src = lane - delta; return src >= base ? src : lane;
    case IRI_SHFL_DOWN: src = lane + delta; return src < base + width ? src : lane;
    default: src = lane ^ delta; return src < base + width ? src : lane; /* xor: earlier groups may be read */
  }
}

/* Shuffles, votes, matches, block barriers with a predicate and bit searches, evaluated for
 * thread t over the threads of its warp (or block) in lockstep. */
static double warp_call(Interp *in, IrExpr *e, int t) {
  IrExpr *const *a = e->u.call.args;
  IrIntrin op = e->u.call.op;
  int w0 = t - t % 32, w1 = w0 + 32 < in->T ? w0 + 32 : in->T;
  bool block = op == IRI_SYNCTHREADS_COUNT || op == IRI_SYNCTHREADS_AND || op == IRI_SYNCTHREADS_OR;
  int lo = block ? 0 : w0, hi = block ? in->T : w1;
  uint32_t mask = op == IRI_ACTIVEMASK || block || op == IRI_FFS || op == IRI_FNS ? 0xffffffffu : (uint32_t)eval(in, a[0], t);
  if (op >= IRI_SHFL_SYNC && op <= IRI_SHFL_XOR_SYNC) {
    int src = w0 + shfl_source(op, t - w0, (int)eval(in, a[2], t), (int)eval(in, a[3], t));
    return eval(in, a[1], src < in->T ? src : t);
  }
  if (op == IRI_FFS) {
    uint64_t x = (uint64_t)(int64_t)eval(in, a[0], t);
    for (int b = 0; b < 64; b++)
      if (x >> b & 1) return b + 1;
    return 0;
  }
  if (op == IRI_FNS) { /* the |offset|-th set bit from base on (backwards when negative); 0: base's */
    uint32_t m = (uint32_t)eval(in, a[0], t);
    int base = (int)eval(in, a[1], t), n = (int)eval(in, a[2], t), step = n < 0 ? -1 : 1;
    if (n == 0) return m >> base & 1 ? base : 4294967295.0;
    for (int b = base, left = n * step; b >= 0 && b < 32; b += step)
      if (m >> b & 1 && --left == 0) return b;
    return 4294967295.0;
  }
  double own = op == IRI_MATCH_ANY_SYNC || op == IRI_MATCH_ALL_SYNC ? eval(in, a[1], t) : 0;
  uint64_t bits = 0;
  int count = 0, n = 0;
  bool same = true;
  for (int u = lo; u < hi; u++) {
    if (!block && !(mask >> (u - w0) & 1)) continue;
    double v = op == IRI_ACTIVEMASK ? 1 : eval(in, a[block ? 0 : 1], u);
    bool hit = op == IRI_MATCH_ANY_SYNC || op == IRI_MATCH_ALL_SYNC ? v == own : v != 0;
    if (op == IRI_MATCH_ALL_SYNC && v != own) same = false;
    if (hit && !block) bits |= 1ull << (u - w0);
    count += hit;
    n++;
  }
  switch (op) {
    case IRI_ANY_SYNC: case IRI_SYNCTHREADS_OR: return count > 0;
    case IRI_ALL_SYNC: case IRI_SYNCTHREADS_AND: return count == n;
    case IRI_SYNCTHREADS_COUNT: return count;
    case IRI_MATCH_ALL_SYNC: return same ? (double)mask : 0;
    default: return (double)bits; /* ballot, match_any, activemask */
  }
}

/* Extent k of b: a constant, or an expression of dynamic sizes set with interp_set_scalar. */
static int64_t extent(Interp *in, const IrBuffer *b, int k) {
  int64_t v;
  return ir_is_const_int(b->shape[k], &v) ? v : (int64_t)eval(in, b->shape[k], 0);
}
static int64_t numel(Interp *in, const IrBuffer *b) {
  int64_t n = 1;
  for (int k = 0; k < b->ndim; k++) n *= extent(in, b, k);
  return n;
}

Mem *interp_mem(Interp *in, IrBuffer *b) {
  for (int i = 0; i < in->nmem; i++)
    if (in->mem[i].buf == b) return &in->mem[i];
  if (b->alias_of && (!is_reg(b) || b->alias_of->scope == b->scope)) {
    /* a view: the root's elements (T.Tensor(shape, dtype, x.data), T.view: row-major); a
     * register view (T.reshape / T.view of a fragment): register i of a thread is the root's
     * register i, as the generated code's pointer makes it */
    IrBuffer *root = b->alias_of;
    while (root->alias_of) root = root->alias_of;
    Mem *r = interp_mem(in, root);
    Mem *m = &in->mem[in->nmem++];
    *m = *r;
    m->buf = b;
    m->borrowed = true;
    if (!is_reg(b)) m->n = numel(in, b);
    if (b->dtype != root->dtype || m->n > r->n || (is_reg(b) && b->local_size > 0 && b->local_size != r->n))
      interp_fault(in, __LINE__);
    return m;
  }
  Mem *m = &in->mem[in->nmem++];
  memset(m, 0, sizeof *m);
  m->buf = b;
  m->n = is_reg(b) ? (b->local_size > 0 ? b->local_size : 1) : numel(in, b);
  int64_t total = is_reg(b) ? m->n * in->T : m->n;
  m->data = calloc((size_t)total, sizeof(double));
  for (int64_t i = 0; i < total; i++) m->data[i] = NAN; /* poison: uninitialised reads show */
  if (b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN) {
    m->wep = calloc((size_t)total, sizeof(int));
    m->wthr = calloc((size_t)total, sizeof(int));
    m->rep = calloc((size_t)total, sizeof(int));
    m->rthr = calloc((size_t)total, sizeof(int));
    m->flux = calloc((size_t)total, sizeof(int));
    for (int64_t i = 0; i < total; i++) m->wep[i] = m->rep[i] = -1;
  }
  return m;
}


static int64_t addr(Interp *in, Mem *m, IrExpr **idx, int nidx, int t) {
  IrBuffer *b = m->buf;
  int64_t a = 0;
  if (is_reg(b)) {
    if (nidx != 1) interp_fault(in, __LINE__);
    a = (int64_t)eval(in, idx[0], t);
    if (a < 0 || a >= m->n) { interp_fault(in, __LINE__); return -1; }
    return (int64_t)t * m->n + a;
  }
  if (nidx == 1 && b->ndim > 1 && (b->layout || b->remap)) {
    /* a swizzled tile (layout.h) or a T.Layout-mapped tensor (remap_global): one physical offset */
    a = (int64_t)eval(in, idx[0], t);
    if (a < 0 || a >= m->n) { interp_fault(in, __LINE__); return -1; }
    return a;
  }
  if (nidx != b->ndim) { interp_fault(in, __LINE__); return -1; }
  for (int k = 0; k < nidx; k++) {
    int64_t ext = extent(in, b, k);
    int64_t i = (int64_t)eval(in, idx[k], t);
    if (i < 0 || i >= ext) { interp_fault(in, __LINE__); return -1; } /* out of bounds */
    a = a * ext + i;
  }
  return a;
}

/* The bytes of shared element a of m in the kernel's dynamic shared memory; false for a
 * buffer without an offset (or of a sub-byte type). */
static bool smem_bytes_of(const Interp *in, const Mem *m, int64_t a, int64_t *lo, int64_t *n) {
  const IrBuffer *r = ir_buffer_root(m->buf);
  if (!in->smem.n || r->scope != IR_SCOPE_SHARED_DYN || r->smem_offset < 0 || dtype_bits(r->dtype) < 8) return false;
  *n = dtype_bytes(r->dtype);
  *lo = r->smem_offset + a * *n;
  return *lo >= 0 && *lo + *n <= in->smem.n;
}

/* An access by thread t to element a of m, by byte (SmemBytes); `check` false: a TMA landing,
 * which marks its bytes only (the coroutines order it by mbarriers, not barriers). */
static void track_bytes(Interp *in, const Mem *m, int64_t a, int t, bool write, bool check) {
  int64_t lo, n;
  if (!smem_bytes_of(in, m, a, &lo, &n)) return;
  SmemBytes *sb = &in->smem;
  int id = ir_buffer_root(m->buf)->id + 1;
  for (int64_t b = lo; b < lo + n; b++) {
    if (!write) {
      if (sb->own[b] && sb->own[b] != id) interp_fault(in, __LINE__); /* clobbered by another buffer */
      if (sb->rep[b] == in->epoch && sb->rthr[b] != t) sb->rthr[b] = -2;
      else if (sb->rep[b] != in->epoch) sb->rep[b] = in->epoch, sb->rthr[b] = t;
      sb->rbuf[b] = id;
      continue;
    }
    if (check && sb->rep[b] == in->epoch && sb->rthr[b] != t && sb->rbuf[b] != id) in->races++;
    if (check && sb->wep[b] == in->epoch && sb->wthr[b] != t && sb->own[b] != id) in->races++;
    sb->own[b] = id;
    sb->wep[b] = in->epoch;
    sb->wthr[b] = t;
  }
}

/* Records an access to shared element a by thread t (a write stores v); counts a race when
 * another thread wrote the element since the last barrier (unless this is a write of the
 * value already there: every thread storing the same element is benign), or, for a
 * write, read it. */
static void track(Interp *in, Mem *m, int64_t a, int t, bool write, double v) {
  if (!m->wep) return;
  track_bytes(in, m, a, t, write, true);
  if (m->flux[a] > 0) in->races++; /* a cp.async to it in flight */
  if (m->wep[a] == in->epoch && m->wthr[a] != t && !(write && m->data[a] == v)) in->races++;
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

/* A construct the interpreter does not run: an error, named once on stderr with
 * TS_INTERP_DEBUG=1 (what to add here when a new test needs it). */
static void unsupported(Interp *in, const char *what, const char *name) {
  if (getenv("TS_INTERP_DEBUG")) fprintf(stderr, "interp: unsupported %s %s\n", what, name);
  interp_fault(in, __LINE__);
}

/* Registers an async wgmma in flight reads or writes (see PendingGemm): a race. */
static void gemm_regs_busy(Interp *in, const Mem *m) {
  for (int i = 0; i < in->ngemm; i++)
    if (in->gemm[i].acc == m || in->gemm[i].areg == m) in->races++;
}

static double eval(Interp *in, IrExpr *e, int t) {
  double a, b;
  switch (e->kind) {
    case IR_INT: return (double)e->u.ival;
    case IR_FLOAT: return e->u.fval;
    case IR_VAR: return slot(in, e->u.var)->val[t];
    case IR_LOAD: {
      Mem *m = interp_mem(in, e->u.load.buf);
      int64_t ad = addr(in, m, e->u.load.idx, e->u.load.nidx, t);
      if (ad < 0) return NAN;
      track(in, m, ad, t, false, 0);
      if (in->ngemm) gemm_regs_busy(in, m);
      return m->data[ad];
    }
    case IR_CAST: return cast_to(e->dtype, eval(in, e->u.ops[0], t));
    case IR_SELECT: case IR_IF_THEN_ELSE:
      return eval(in, e->u.ops[0], t) != 0 ? eval(in, e->u.ops[1], t) : eval(in, e->u.ops[2], t);
    case IR_NEG: return -eval(in, e->u.ops[0], t);
    case IR_NOT: return !eval(in, e->u.ops[0], t);
    case IR_CALL:
      switch (e->u.call.op) {
        case IRI_DEVICE:
          if (e->u.call.dop == IRD_GRID_DIM_X) return (double)in->grid[0];
          if (e->u.call.dop == IRD_BLOCK_IDX_X) return (double)in->block[0];
          if (e->u.call.dop == IRD_CLUSTER_RANK) /* clusters of cluster_x blocks along x */
            return in->kernel && in->kernel->cluster_x > 1 ? (double)(in->block[0] % in->kernel->cluster_x) : 0;
          unsupported(in, "device value", ir_device_info[e->u.call.dop].name);
          return NAN;
        case IRI_SHFL_XOR: {
          int mask = (int)eval(in, e->u.call.args[1], t), other = t ^ mask;
          if ((other >> 5) != (t >> 5) || other >= in->T) { interp_fault(in, __LINE__); return NAN; }
          return eval(in, e->u.call.args[0], other);
        }
        case IRI_SHFL_SYNC: case IRI_SHFL_UP: case IRI_SHFL_DOWN: case IRI_SHFL_XOR_SYNC:
        case IRI_ANY_SYNC: case IRI_ALL_SYNC: case IRI_BALLOT_SYNC: case IRI_MATCH_ANY_SYNC:
        case IRI_MATCH_ALL_SYNC: case IRI_ACTIVEMASK: case IRI_SYNCTHREADS_COUNT: case IRI_SYNCTHREADS_AND:
        case IRI_SYNCTHREADS_OR: case IRI_FFS: case IRI_FNS:
          return warp_call(in, e, t);
        case IRI_ABS: return fabs(eval(in, e->u.call.args[0], t));
        case IRI_EXP: return cast_to(e->dtype, exp(eval(in, e->u.call.args[0], t)));
        case IRI_EXP2: return cast_to(e->dtype, exp2(eval(in, e->u.call.args[0], t)));
        case IRI_LOG: return cast_to(e->dtype, log(eval(in, e->u.call.args[0], t)));
        case IRI_LOG2: return cast_to(e->dtype, log2(eval(in, e->u.call.args[0], t)));
        case IRI_SQRT: return cast_to(e->dtype, sqrt(eval(in, e->u.call.args[0], t)));
        case IRI_RSQRT: return cast_to(e->dtype, 1 / sqrt(eval(in, e->u.call.args[0], t)));
        case IRI_TANH: return cast_to(e->dtype, tanh(eval(in, e->u.call.args[0], t)));
        case IRI_SINH: return cast_to(e->dtype, sinh(eval(in, e->u.call.args[0], t)));
        case IRI_COSH: return cast_to(e->dtype, cosh(eval(in, e->u.call.args[0], t)));
        case IRI_ASIN: return cast_to(e->dtype, asin(eval(in, e->u.call.args[0], t)));
        case IRI_ACOS: return cast_to(e->dtype, acos(eval(in, e->u.call.args[0], t)));
        case IRI_ATAN: return cast_to(e->dtype, atan(eval(in, e->u.call.args[0], t)));
        case IRI_ASINH: return cast_to(e->dtype, asinh(eval(in, e->u.call.args[0], t)));
        case IRI_ACOSH: return cast_to(e->dtype, acosh(eval(in, e->u.call.args[0], t)));
        case IRI_ATANH: return cast_to(e->dtype, atanh(eval(in, e->u.call.args[0], t)));
        case IRI_NEARBYINT: return nearbyint(eval(in, e->u.call.args[0], t));
        case IRI_ATAN2: case IRI_HYPOT: case IRI_COPYSIGN: case IRI_NEXTAFTER: case IRI_LDEXP: {
          double x = eval(in, e->u.call.args[0], t), y = eval(in, e->u.call.args[1], t);
          IrIntrin op = e->u.call.op;
          double r = op == IRI_ATAN2 ? atan2(x, y) : op == IRI_HYPOT ? hypot(x, y) : op == IRI_COPYSIGN ? copysign(x, y)
                   : op == IRI_NEXTAFTER ? (e->dtype == TS_DTYPE_FLOAT64 ? nextafter(x, y) : nextafterf((float)x, (float)y))
                   : ldexp(x, (int)y);
          return cast_to(e->dtype, r);
        }
        /* the fast forms: the exact functions (the interpreter checks semantics, not accuracy) */
        case IRI_FAST_EXP: return cast_to(e->dtype, exp(eval(in, e->u.call.args[0], t)));
        case IRI_FAST_EXP10: return cast_to(e->dtype, pow(10.0, eval(in, e->u.call.args[0], t)));
        case IRI_FAST_LOG: return cast_to(e->dtype, log(eval(in, e->u.call.args[0], t)));
        case IRI_FAST_LOG2: return cast_to(e->dtype, log2(eval(in, e->u.call.args[0], t)));
        case IRI_FAST_LOG10: return cast_to(e->dtype, log10(eval(in, e->u.call.args[0], t)));
        case IRI_FAST_TAN: return cast_to(e->dtype, tan(eval(in, e->u.call.args[0], t)));
        case IRI_FAST_COS: return cast_to(e->dtype, cos(eval(in, e->u.call.args[0], t)));
        case IRI_FAST_SIN: return cast_to(e->dtype, sin(eval(in, e->u.call.args[0], t)));
        case IRI_FAST_RCP: return cast_to(e->dtype, 1.0 / eval(in, e->u.call.args[0], t));
        case IRI_FLOOR: return floor(eval(in, e->u.call.args[0], t));
        case IRI_CEIL: return ceil(eval(in, e->u.call.args[0], t));
        case IRI_ROUND: return nearbyint(eval(in, e->u.call.args[0], t)); /* ties to even */
        case IRI_ROUND_AWAY: return round(eval(in, e->u.call.args[0], t));
        case IRI_MAX_NAN: case IRI_MIN_NAN: {
          double x = eval(in, e->u.call.args[0], t), y = eval(in, e->u.call.args[1], t);
          if (isnan(x) || isnan(y)) return NAN;
          return e->u.call.op == IRI_MAX_NAN ? fmax(x, y) : fmin(x, y);
        }
        case IRI_POW:
          return cast_to(e->dtype, pow(eval(in, e->u.call.args[0], t), eval(in, e->u.call.args[1], t)));
        default: unsupported(in, "intrinsic", ir_intrin_info[e->u.call.op].name); return NAN;
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
    case IR_MIN: r = fmin(a, b); break; /* NaN-dropping, as CUDA's fminf / __hmin */
    case IR_MAX: r = fmax(a, b); break;
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
    default: unsupported(in, "expression", ir_expr_names[e->kind]); return NAN;
  }
  return cast_to(e->dtype, r);
}

static void exec(Interp *in, IrStmt *s, const bool *mask);

static void pend_push(Interp *in, Pending p) {
  if (p.m->flux) p.m->flux[p.a]++;
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
      if (p->m->flux) p->m->flux[p->a]--;
      track(in, p->m, p->a, t, true, p->v);
      p->m->data[p->a] = p->v;
    } else {
      in->pend[k++] = *p;
    }
  }
  in->npend = k;
}

/* ---- tensor-core GEMMs ---- */
static bool gemm_op(IrDeviceOp op, bool *rs, bool *async) {
  *rs = op == IRD_GEMM_RS_MMA || op == IRD_GEMM_RS_WGMMA || op == IRD_GEMM_RS_WGMMA_ISSUE;
  *async = op == IRD_GEMM_SS_WGMMA_ISSUE || op == IRD_GEMM_RS_WGMMA_ISSUE;
  return *rs || op == IRD_GEMM_SS_MMA || op == IRD_GEMM_SS_WGMMA || op == IRD_GEMM_SS_WGMMA_ISSUE;
}

/* The buffer behind `T.address_of(buf[i])` and the element offset it names. */
static Mem *operand(Interp *in, IrExpr *ptr, int t, int64_t *off) {
  IrExpr *ld = ptr->u.call.args[0];
  Mem *m = interp_mem(in, ld->u.load.buf);
  *off = addr(in, m, ld->u.load.idx, ld->u.load.nidx, t);
  if (is_reg(m->buf)) *off -= (int64_t)t * m->n; /* a register index, the same in every thread */
  return m;
}

/* Element (r, c) of a shared operand tile stored [rows x cols] with swizzle `sw` at `base`. */
static int64_t tile_at(const Mem *m, int sw, int64_t rows, int64_t cols, int64_t base, int64_t r, int64_t c) {
  if (!sw) {
    int64_t last = cols; /* row-major rows have the (shared, constant) buffer's pitch */
    ir_is_const_int(m->buf->shape[m->buf->ndim - 1], &last);
    return base + r * last + c;
  }
  Layout l = {.swizzle = sw, .elem_bytes = dtype_bytes(m->buf->dtype), .rows = rows, .cols = cols};
  return base + layout_offset_const(&l, r, c);
}

/* Runs GEMM g: C (+)= A @ B over the tile, reading the operands now. */
static void gemm_retire(Interp *in, PendingGemm *g) {
  IrExpr *e = g->call;
  bool rs, async;
  gemm_op(e->u.call.dop, &rs, &async);
  const int64_t *at = e->u.call.attrs;
  int64_t M = at[0], N = at[1], K = at[2], ta = at[5], tb = at[6];
  int64_t swa = rs ? 0 : at[7], swb = rs ? at[7] : at[8], clear = rs ? at[8] : at[9];
  int64_t off;
  Mem *ma = operand(in, e->u.call.args[0], g->reader[0], &off), *mb = operand(in, e->u.call.args[1], g->reader[0], &off),
      *mc = operand(in, e->u.call.args[2], g->reader[0], &off);
  const Fragment *cf = mc->buf->fragment, *af = rs ? ma->buf->fragment : NULL;
  if (!cf || (rs && !af)) {
    interp_fault(in, __LINE__);
    return;
  }
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) {
        double a;
        if (rs) {
          int64_t ix[2] = {m, k};
          int ft = (int)fragment_thread_of(af, ix), t = ft >= 0 && ft < MAXT ? g->thread_of[ft] : -1;
          if (t < 0) { interp_fault(in, __LINE__); return; }
          a = ma->data[(int64_t)t * ma->n + g->base_a + fragment_reg_of(af, ix)];
        } else {
          int64_t p = ta ? tile_at(ma, (int)swa, K, M, g->base_a, k, m) : tile_at(ma, (int)swa, M, K, g->base_a, m, k);
          track(in, ma, p, g->reader[0], false, 0);
          track(in, ma, p, g->reader[1], false, 0);
          a = ma->data[p];
        }
        int64_t q = tb ? tile_at(mb, (int)swb, N, K, g->base_b, n, k) : tile_at(mb, (int)swb, K, N, g->base_b, k, n);
        track(in, mb, q, g->reader[0], false, 0);
        track(in, mb, q, g->reader[1], false, 0);
        acc += a * mb->data[q];
      }
      int64_t ix[2] = {m, n};
      int ft = (int)fragment_thread_of(cf, ix), t = ft >= 0 && ft < MAXT ? g->thread_of[ft] : -1;
      if (t < 0) { interp_fault(in, __LINE__); return; }
      double *c = &mc->data[(int64_t)t * mc->n + fragment_reg_of(cf, ix)];
      *c = cast_to(mc->buf->dtype, (clear ? 0 : *c) + acc);
    }
}

/* wgmma.wait_group n: every GEMM but the n most recent completes. */
static void gemm_wait(Interp *in, int n) {
  int done = in->ngemm > n ? in->ngemm - n : 0;
  for (int i = 0; i < done; i++) gemm_retire(in, &in->gemm[i]);
  memmove(in->gemm, in->gemm + done, (size_t)(in->ngemm - done) * sizeof in->gemm[0]);
  in->ngemm -= done;
}

/* A GEMM statement, run by every thread of the tile at once: issued (wgmma, retired by a
 * later wait) or, synchronous, completed with everything issued before it. */
static void gemm_issue(Interp *in, IrExpr *e, const bool *mask, bool async) {
  if (in->ngemm == INTERP_MAX_GEMMS) gemm_wait(in, INTERP_MAX_GEMMS - 1); /* (more in flight than kept) */
  PendingGemm *g = &in->gemm[in->ngemm++];
  g->call = e;
  g->reader[0] = g->reader[1] = -1;
  for (int t = 0; t < MAXT; t++) g->thread_of[t] = -1;
  for (int t = 0; t < in->T; t++) {
    if (!mask[t]) continue;
    int ft = (int)eval(in, e->u.call.args[3], t);
    if (ft >= 0 && ft < MAXT) g->thread_of[ft] = t;
    if (g->reader[0] < 0) g->reader[0] = t;
    else if (g->reader[1] < 0) g->reader[1] = t;
  }
  if (g->reader[0] < 0) { in->ngemm--; return; }
  if (g->reader[1] < 0) g->reader[1] = g->reader[0];
  bool rs, as;
  gemm_op(e->u.call.dop, &rs, &as);
  int64_t off;
  Mem *ma = operand(in, e->u.call.args[0], g->reader[0], &g->base_a);
  operand(in, e->u.call.args[1], g->reader[0], &g->base_b);
  g->acc = operand(in, e->u.call.args[2], g->reader[0], &off);
  g->areg = rs ? ma : NULL;
  if (!async) gemm_wait(in, 0);
}

/* ---- warp specialization: mbarriers, TMA, the two roles as coroutines ---- */
/* The roles of a role split run on two OS threads, one at a time: the one holding `turn`
 * runs; it hands over only at an mbarrier wait that is not satisfied (coop_yield), so
 * the interpreter's state never sees two writers. */
typedef struct Coop {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int turn, done[2];
  bool stuck;           /* both roles wait: a deadlock */
  int64_t progress;     /* mbarrier state changes so far */
  int64_t handed_at;    /* `progress` when the turn last changed hands at a wait (-1: never) */
} Coop;
static _Thread_local int coop_role;

/* Gives the turn to the other role until it gives it back; false when it cannot run (it
 * finished, or is waiting too): the wait can never be satisfied. */
static bool coop_yield(Interp *in) {
  Coop *co = in->coop;
  int me = coop_role, other = 1 - me;
  pthread_mutex_lock(&co->mu);
  /* the other role finished, or handed over at a wait and nothing changed since: no one
   * can ever satisfy this wait */
  if (co->done[other] || co->handed_at == co->progress) co->stuck = true;
  co->handed_at = co->progress;
  co->turn = other;
  pthread_cond_broadcast(&co->cv);
  while (co->turn != me && !co->stuck) pthread_cond_wait(&co->cv, &co->mu);
  bool ok = !co->stuck;
  pthread_mutex_unlock(&co->mu);
  return ok;
}

typedef struct Role { Interp *in; IrStmt *body; bool mask[MAXT]; int id; } Role;
static void *role_main(void *arg) {
  Role *r = arg;
  Coop *co = r->in->coop;
  coop_role = r->id;
  pthread_mutex_lock(&co->mu);
  while (co->turn != r->id && !co->stuck) pthread_cond_wait(&co->cv, &co->mu);
  pthread_mutex_unlock(&co->mu);
  if (!co->stuck) exec(r->in, r->body, r->mask);
  pthread_mutex_lock(&co->mu);
  co->done[r->id] = 1;
  co->turn = 1 - r->id;
  pthread_cond_broadcast(&co->cv);
  pthread_mutex_unlock(&co->mu);
  return NULL;
}

/* `if tx >= T: producer else: consumers`: both branches, as coroutines. */
static void exec_role_split(Interp *in, IrStmt *s, const bool *mask) {
  static Role roles[2];
  Coop co = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0, 0}, false, 0, -1};
  in->coop = &co;
  for (int r = 0; r < 2; r++) {
    roles[r].in = in;
    roles[r].body = r == 0 ? s->u.if_.then_s : s->u.if_.else_s;
    roles[r].id = r;
    for (int t = 0; t < MAXT; t++) {
      bool prod = t < in->T && eval(in, s->u.if_.cond, t) != 0;
      roles[r].mask[t] = t < in->T && mask[t] && (r == 0 ? prod : !prod); /* masks hold in->T threads */
    }
  }
  pthread_t th[2];
  for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, role_main, &roles[r]);
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
  if (co.stuck) interp_fault(in, __LINE__);
  in->coop = NULL;
}

static MBar *mbar_at(Interp *in, IrExpr *ptr, int t) {
  int64_t a;
  Mem *m = operand(in, ptr, t, &a);
  for (int i = 0; i < in->nmbar; i++)
    if (in->mbar[i].m->buf == m->buf && in->mbar[i].a == a) return &in->mbar[i];
  if (in->nmbar == INTERP_MAX_MBARS) abort();
  MBar *b = &in->mbar[in->nmbar++];
  *b = (MBar){m, a, 0, 0, 0, 0};
  return b;
}
static void mbar_check(Interp *in, MBar *b) {
  if (in->coop) in->coop->progress++;
  if (b->pending <= 0 && b->tx == 0) {
    b->phase++;
    b->pending = b->count;
  }
}
/* try_wait.parity p: the phase with parity p has completed (the current one has the other) */
static bool mbar_done(const MBar *b, int parity) { return (b->phase & 1) != parity; }

/* A TMA box between global tensor g (row-major) and shared memory at element `base`: box[i]
 * along dim rank-1-i from coordinate c[i]; in shared memory rows of box[0] elements, 16-byte
 * chunks XORed as the descriptor's swizzle says (layout.h); reads past the tensor give 0,
 * writes past it are dropped. */
static void tma_box(Interp *in, const IrTmaMap *map, Mem *g, Mem *sm, int64_t base, const int64_t *c, bool load) {
  int rank = map->rank;
  int64_t n = 1, vec = 16 / dtype_bytes(g->buf->dtype), A = map->box[0];
  for (int i = 0; i < rank; i++) n *= map->box[i];
  for (int64_t e = 0; e < n; e++) {
    int64_t rem = e, gi = 0, row = e / A, j0 = e % A;
    bool inside = true;
    for (int d = 0; d < rank; d++) { /* row-major over the tensor's dims, outermost first */
      int i = rank - 1 - d;
      int64_t ext = 1, stride = 1;
      for (int q = 0; q < i; q++) stride *= map->box[q];
      int64_t x = c[i] + rem / stride % map->box[i];
      ext = extent(in, g->buf, d);
      inside &= x >= 0 && x < ext;
      gi = gi * ext + x;
    }
    int64_t f = map->swizzle ? ((row * map->swizzle) >> 7) & (map->swizzle / 16 - 1) : 0;
    int64_t so = base + row * A + (((j0 / vec) ^ f) * vec) + j0 % vec;
    if (so < 0 || so >= sm->n) {
      interp_fault(in, __LINE__);
      return;
    }
    track_bytes(in, sm, so, 0, load, false);
    if (load) sm->data[so] = inside ? g->data[gi] : 0;
    else if (inside) g->data[gi] = sm->data[so];
  }
}

static const IrTmaMap *tma_map(Interp *in, IrExpr *desc) {
  for (int i = 0; desc->kind == IR_VAR && i < in->func->ntma; i++)
    if (in->func->tma_maps[i].var == desc->u.var) return &in->func->tma_maps[i];
  return NULL;
}

/* tma_load (desc, &smem, &bar, coords...) / tma_store (desc, &smem, coords...), by thread t */
static void exec_tma(Interp *in, IrExpr *e, int t, bool load) {
  const IrTmaMap *map = tma_map(in, e->u.call.args[0]);
  if (!map) { unsupported(in, "TMA descriptor", "?"); return; }
  int64_t base, c[5];
  Mem *sm = operand(in, e->u.call.args[1], t, &base);
  Mem *g = interp_mem(in, in->func->params[map->param_index].buf);
  int first = load ? 3 : 2;
  for (int i = 0; i < map->rank; i++) c[i] = (int64_t)eval(in, e->u.call.args[first + i], t);
  tma_box(in, map, g, sm, base, c, load);
  if (!load) return;
  int64_t bytes = dtype_bytes(g->buf->dtype);
  for (int i = 0; i < map->rank; i++) bytes *= map->box[i];
  MBar *b = mbar_at(in, e->u.call.args[2], t);
  b->tx -= bytes;
  mbar_check(in, b);
}

/* The warp-specialization operations of thread t; false: not one of them. */
static bool exec_ws_device(Interp *in, IrExpr *e, const bool *mask) {
  IrDeviceOp op = e->u.call.dop;
  switch (op) {
    case IRD_SETMAXNREG_DEC: case IRD_SETMAXNREG_INC: case IRD_TMA_PREFETCH_DESC: case IRD_MBAR_FENCE_INIT:
    case IRD_FENCE_PROXY_ASYNC_SHARED: case IRD_TMA_STORE_COMMIT: case IRD_TMA_STORE_WAIT: case IRD_TMA_STORE_WAIT_READ:
      return true;
    case IRD_NAMED_BARRIER_SYNC: in->epoch++; return true;
    /* cluster barriers: blocks run one after another here, so they order the block's threads */
    case IRD_CLUSTER_SYNC: case IRD_CLUSTER_WAIT: in->epoch++; return true;
    /* warpgroup turns (ws_pingpong.c) only order tensor-core work: nothing to do in lockstep */
    case IRD_NAMED_BARRIER_SYNC_DYN: case IRD_NAMED_BARRIER_ARRIVE_DYN: return true;
    case IRD_MBAR_WAIT: case IRD_MBAR_WAIT_CLUSTER: {
      int t0 = -1;
      for (int t = 0; t < in->T && t0 < 0; t++) if (mask[t]) t0 = t;
      if (t0 < 0) return true;
      MBar *b = mbar_at(in, e->u.call.args[0], t0);
      int parity = (int)eval(in, e->u.call.args[1], t0) & 1;
      while (!mbar_done(b, parity))
        if (!in->coop || !coop_yield(in)) {
          if (getenv("TS_INTERP_DEBUG"))
            fprintf(stderr, "interp: role %d waits for parity %d of mbarrier %s[%lld] (phase %d, %d arrivals and %lld bytes "
                    "to come)\n", coop_role, parity, b->m->buf->name, (long long)b->a, b->phase, b->pending,
                    (long long)b->tx);
          interp_fault(in, __LINE__);
          return true;
        }
      return true;
    }
    default: break;
  }
  if (op != IRD_MBAR_INIT && op != IRD_MBAR_ARRIVE && op != IRD_MBAR_EXPECT_TX && op != IRD_MBAR_EXPECT_TX_NOARRIVE &&
      op != IRD_TMA_LOAD && op != IRD_TMA_STORE)
    return false;
  for (int t = 0; t < in->T; t++) {
    if (!mask[t]) continue;
    if (op == IRD_TMA_LOAD || op == IRD_TMA_STORE) {
      exec_tma(in, e, t, op == IRD_TMA_LOAD);
      continue;
    }
    MBar *b = mbar_at(in, e->u.call.args[0], t);
    if (op == IRD_MBAR_INIT) b->count = b->pending = (int)eval(in, e->u.call.args[1], t), b->tx = 0, b->phase = 0;
    if (op == IRD_MBAR_EXPECT_TX || op == IRD_MBAR_EXPECT_TX_NOARRIVE) b->tx += (int64_t)eval(in, e->u.call.args[1], t);
    if (op == IRD_MBAR_ARRIVE || op == IRD_MBAR_EXPECT_TX) b->pending--;
    mbar_check(in, b);
  }
  return true;
}

/* The device operations of a cp.async pipeline, of tensor-core GEMMs and of warp
 * specialization; any other is an error here. */
static void exec_device(Interp *in, IrExpr *e, const bool *mask) {
  bool rs, async;
  if (gemm_op(e->u.call.dop, &rs, &async)) {
    gemm_issue(in, e, mask, async);
    return;
  }
  if (e->u.call.dop == IRD_GEMM_WGMMA_WAIT) {
    gemm_wait(in, (int)e->u.call.attrs[1]);
    return;
  }
  if (exec_ws_device(in, e, mask)) return;
  for (int t = 0; t < in->T; t++) {
    if (!mask[t]) continue;
    switch (e->u.call.dop) {
      case IRD_CP_ASYNC_COMMIT: in->committed[t]++; break;
      case IRD_CP_ASYNC_WAIT: pend_retire(in, t, (int)e->u.call.attrs[0]); break;
      case IRD_CP_ASYNC_WAIT_GROUP: pend_retire(in, t, (int)e->u.call.attrs[0]); break; /* T.ptx_wait_group */
      /* blocks run one after another here: a cluster barrier orders the block's own threads */
      case IRD_CLUSTER_ARRIVE: break;
      case IRD_FENCE_PROXY_ASYNC: break;
      case IRD_ATOMIC_FENCE: break; /* one thread at a time: memory is always ordered */
      default: unsupported(in, "device operation", ir_device_info[e->u.call.dop].name); return;
    }
  }
}

static void exec(Interp *in, IrStmt *s, const bool *mask);

/* sub = the threads of mask still running the loop body (no `break` or `continue` yet);
 * false when none is. */
static bool still_running(const Interp *in, const bool *mask, bool *sub) {
  bool any = false;
  for (int t = 0; t < in->T; t++) any |= sub[t] = mask[t] && !in->brk[t] && !in->cont[t];
  return any;
}

/* Loop bookkeeping: after an iteration its `continue`s are spent; after the loop, its
 * `break`s. */
static void end_iteration(Interp *in, const bool *mask) {
  for (int t = 0; t < in->T; t++)
    if (mask[t]) in->cont[t] = false;
}
static void end_loop(Interp *in, const bool *mask) {
  for (int t = 0; t < in->T; t++)
    if (mask[t]) in->brk[t] = in->cont[t] = false;
}

/* while cond: body, in lockstep: each round runs the threads whose condition holds; at most
 * 2^20 rounds (a spin on what no thread of this block will write never ends here). */
static void exec_while(Interp *in, IrStmt *s, const bool *mask) {
  bool sub[MAXT];
  for (long round = 0;; round++) {
    bool any = false;
    for (int t = 0; t < in->T; t++) {
      sub[t] = mask[t] && !in->brk[t] && eval(in, s->u.while_.cond, t) != 0;
      any |= sub[t];
    }
    if (!any) break;
    if (round == 1 << 20) {
      interp_fault(in, __LINE__);
      break;
    }
    exec(in, s->u.while_.body, sub);
    end_iteration(in, mask);
  }
  end_loop(in, mask);
}

/* let v = T.warp_any(x, mask) / T.warp_all(...): the vote of the lanes of each warp that run
 * it (and that the mask names). */
static bool exec_vote(Interp *in, IrStmt *s, const bool *mask) {
  IrExpr *e = s->u.let.value;
  if (e->kind != IR_CALL || e->u.call.op != IRI_DEVICE ||
      (e->u.call.dop != IRD_DIST_WARP_ANY && e->u.call.dop != IRD_DIST_WARP_ALL))
    return false;
  bool all = e->u.call.dop == IRD_DIST_WARP_ALL;
  Slot *sl = slot(in, s->u.let.var);
  for (int w = 0; w < in->T; w += 32) {
    bool vote = all;
    for (int t = w; t < w + 32 && t < in->T; t++) {
      uint32_t lanes = (uint32_t)(int64_t)eval(in, e->u.call.args[1], t);
      if (!mask[t] || !(lanes >> (t - w) & 1)) continue;
      bool x = eval(in, e->u.call.args[0], t) != 0;
      vote = all ? vote && x : vote || x;
    }
    for (int t = w; t < w + 32 && t < in->T; t++)
      if (mask[t]) sl->val[t] = vote;
  }
  return true;
}

static void exec(Interp *in, IrStmt *s, const bool *mask) {
  if (!s) return;
  bool sub[MAXT];
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n && still_running(in, mask, sub); i++) exec(in, s->u.seq.items[i], sub);
      return;
    case IR_S_BREAK:
    case IR_S_CONTINUE:
      for (int t = 0; t < in->T; t++)
        if (mask[t]) *(s->kind == IR_S_BREAK ? &in->brk[t] : &in->cont[t]) = true;
      return;
    case IR_S_WHILE:
      exec_while(in, s, mask);
      return;
    case IR_S_ALLOC: { /* T.alloc_var(..., init=v): each running thread's copy starts at v */
      IrBuffer *b = s->u.alloc.buf;
      if (!b->init || !is_reg(b)) return;
      Mem *m = interp_mem(in, b);
      for (int t = 0; t < in->T; t++)
        if (mask[t])
          for (int64_t i = 0; i < m->n; i++) m->data[(int64_t)t * m->n + i] = eval(in, b->init, t);
      return;
    }
    case IR_S_LET: {
      if (exec_vote(in, s, mask)) return;
      Slot *sl = slot(in, s->u.let.var);
      for (int t = 0; t < in->T; t++)
        if (mask[t]) sl->val[t] = eval(in, s->u.let.value, t);
      return;
    }
    case IR_S_IF: {
      if (in->kernel && !in->coop && pass_is_role_split(in->kernel, s)) {
        exec_role_split(in, s, mask);
        return;
      }
      bool other[MAXT], any_then = false, any_else = false;
      for (int t = 0; t < in->T; t++) {
        bool cnd = mask[t] && eval(in, s->u.if_.cond, t) != 0;
        sub[t] = cnd;
        other[t] = mask[t] && !cnd;
        any_then |= cnd, any_else |= other[t];
      }
      /* a branch no thread takes is not run (its barriers are never reached: a block-sparse
       * loop skips a whole iteration's body, __syncthreads included, in every thread) */
      if (any_then) exec(in, s->u.if_.then_s, sub);
      if (any_else) exec(in, s->u.if_.else_s, other);
      return;
    }
    case IR_S_FOR: {
      if (s->u.loop.kind == IR_FOR_PARALLEL) interp_fault(in, __LINE__);
      Slot *sl = slot(in, s->u.loop.var);
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int t = 0; t < in->T; t++)
        if (mask[t]) {
          int64_t mn = (int64_t)eval(in, s->u.loop.min, t), mx = mn + (int64_t)eval(in, s->u.loop.extent, t);
          if (mn < lo) lo = mn;
          if (mx > hi) hi = mx;
        }
      for (int64_t v = lo; v < hi; v++) {
        bool any = false;
        for (int t = 0; t < in->T; t++) {
          sub[t] = false;
          if (!mask[t] || in->brk[t]) continue;
          int64_t mn = (int64_t)eval(in, s->u.loop.min, t), mx = mn + (int64_t)eval(in, s->u.loop.extent, t);
          sub[t] = v >= mn && v < mx;
          if (sub[t]) sl->val[t] = (double)v;
          any |= sub[t];
        }
        if (any) exec(in, s->u.loop.body, sub);
        end_iteration(in, mask);
      }
      end_loop(in, mask);
      return;
    }
    case IR_S_STORE: {
      /* SIMT: all values are computed before any lane writes. */
      Mem *m = interp_mem(in, s->u.store.buf);
      if (in->ngemm) gemm_regs_busy(in, m);
      static double vals[MAXT][16];
      static int64_t ads[MAXT];
      int lanes = s->u.store.lanes;
      for (int t = 0; t < in->T; t++) {
        if (!mask[t]) continue;
        ads[t] = addr(in, m, s->u.store.idx, s->u.store.nidx, t);
        IrExpr *v = s->u.store.value, *ld = v->kind == IR_CAST ? v->u.ops[0] : v;
        if (lanes > 1 && (ld->kind == IR_INT || ld->kind == IR_FLOAT)) { /* one value in every lane */
          for (int l = 0; l < lanes; l++) vals[t][l] = cast_to(s->u.store.buf->dtype, eval(in, v, t));
        } else if (lanes > 1) {
          if (ld->kind != IR_LOAD || ld->lanes != lanes) { interp_fault(in, __LINE__); continue; }
          Mem *sm = interp_mem(in, ld->u.load.buf);
          if (in->ngemm) gemm_regs_busy(in, sm);
          int64_t sa = addr(in, sm, ld->u.load.idx, ld->u.load.nidx, t);
          if (sa < 0) continue;
          for (int l = 0; l < lanes; l++) {
            track(in, sm, sa + l, t, false, 0);
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
          track(in, m, ads[t] + l, t, true, vals[t][l]);
          m->data[ads[t] + l] = vals[t][l];
        }
      }
      return;
    }
    case IR_S_ASSERT: /* T.device_assert and the compiler's checks: a failure is an error */
      for (int t = 0; t < in->T; t++)
        if (mask[t] && eval(in, s->u.assert_.cond, t) == 0) interp_fault(in, __LINE__);
      return;
    case IR_S_EVAL: {
      IrExpr *e = s->u.eval.value;
      if (e->kind == IR_CALL && e->u.call.op == IRI_DEVICE) {
        exec_device(in, e, mask);
        return;
      }
      if (e->kind == IR_CALL && e->u.call.op == IRI_SYNCTHREADS) {
        for (int t = 0; t < in->T; t++)
          if (!mask[t]) interp_fault(in, __LINE__); /* a barrier not reached by every thread */
        in->epoch++;
        return;
      }
      /* __syncwarp: statements run for every thread before the next one, so a warp's lanes
       * are already past their earlier reads */
      if (e->kind == IR_CALL && e->u.call.op == IRI_SYNCWARP) return;
      if (e->kind == IR_CALL && e->u.call.op == IRI_ATOMIC_ADD) {
        IrExpr *ld = e->u.call.args[0]->u.call.args[0];
        Mem *m = interp_mem(in, ld->u.load.buf);
        for (int t = 0; t < in->T; t++) {
          if (!mask[t]) continue;
          int64_t ad = addr(in, m, ld->u.load.idx, ld->u.load.nidx, t);
          if (ad >= 0) m->data[ad] += eval(in, e->u.call.args[1], t);
        }
        return;
      }
      if (e->kind == IR_CALL && e->u.call.op == IRI_ATOMIC_ADD_X) { /* dst[0..N) += src[0..N) */
        IrExpr *dl = e->u.call.args[0]->u.call.args[0], *sl = e->u.call.args[1]->u.call.args[0];
        Mem *dm = interp_mem(in, dl->u.load.buf), *sm = interp_mem(in, sl->u.load.buf);
        int64_t lanes = e->u.call.args[2]->u.ival;
        for (int t = 0; t < in->T; t++) {
          if (!mask[t]) continue;
          int64_t ad = addr(in, dm, dl->u.load.idx, dl->u.load.nidx, t);
          int64_t sa = addr(in, sm, sl->u.load.idx, sl->u.load.nidx, t);
          if (ad < 0 || sa < 0) continue;
          if (ad % lanes) interp_fault(in, __LINE__); /* a vector atomic needs an aligned address */
          for (int l = 0; l < lanes; l++) dm->data[ad + l] += sm->data[sa + l];
        }
        return;
      }
      interp_fault(in, __LINE__);
      return;
    }
    default: unsupported(in, "statement", ir_stmt_names[s->kind]); return; /* e.g. a tile op */
  }
}

static void mem_release(Mem *m) {
  if (m->borrowed) return; /* (its root releases the memory) */
  free(m->data);
  free(m->wep);
  free(m->wthr);
  free(m->rep);
  free(m->rthr);
  free(m->flux);
}

static void smem_free(SmemBytes *sb) {
  free(sb->own), free(sb->rbuf), free(sb->wep), free(sb->wthr), free(sb->rep), free(sb->rthr);
  memset(sb, 0, sizeof *sb);
}

/* Every byte unowned and untouched (a block starts). */
static void smem_reset(SmemBytes *sb, int64_t bytes) {
  if (sb->n != bytes) {
    smem_free(sb);
    sb->n = bytes;
    if (!bytes) return;
    sb->own = calloc((size_t)bytes, sizeof(int)), sb->rbuf = calloc((size_t)bytes, sizeof(int));
    sb->wep = calloc((size_t)bytes, sizeof(int)), sb->wthr = calloc((size_t)bytes, sizeof(int));
    sb->rep = calloc((size_t)bytes, sizeof(int)), sb->rthr = calloc((size_t)bytes, sizeof(int));
  }
  for (int64_t b = 0; b < bytes; b++) sb->own[b] = sb->rbuf[b] = 0, sb->wep[b] = sb->rep[b] = -1;
}

/* Runs every block of kernel ks. */
static void run_kernel(Interp *in, IrFunc *f, IrStmt *ks) {
  IrKernel *k = &ks->u.kernel;
  in->func = f;
  in->kernel = k;
  /* (a warp-specialized kernel launches its producer warpgroup beyond threads[0]) */
  in->T = (k->threads[0] + k->producer_threads) * (k->threads[1] > 0 ? k->threads[1] : 1) *
          (k->threads[2] > 0 ? k->threads[2] : 1);
  int64_t g[3];
  for (int a = 0; a < 3; a++) g[a] = k->grid[a] ? (int64_t)eval(in, k->grid[a], 0) : 1; /* (scalar params set) */
  if (k->persistent && in->resident > 0 && g[0] > in->resident) g[0] = in->resident;
  bool all[MAXT];
  for (int t = 0; t < MAXT; t++) all[t] = t < in->T;
  for (int64_t z = 0; z < g[2]; z++)
    for (int64_t y = 0; y < g[1]; y++)
      for (int64_t x = 0; x < g[0]; x++) {
        int64_t bi[3] = {x, y, z};
        for (int a = 0; a < 3; a++) in->grid[a] = g[a], in->block[a] = bi[a];
        for (int a = 0; a < 3; a++) {
          if (k->block_var[a]) for (int t = 0; t < in->T; t++) slot(in, k->block_var[a])->val[t] = (double)bi[a];
          if (k->thread_var[a]) {
            int64_t X = k->threads[0] + k->producer_threads, Y = k->threads[1] > 0 ? k->threads[1] : 1;
            for (int t = 0; t < in->T; t++)
              slot(in, k->thread_var[a])->val[t] = (double)(a == 0 ? t % X : a == 1 ? (t / X) % Y : t / (X * Y));
          }
        }
        /* shared memory and registers start poisoned in every block */
        for (int i = 0; i < in->nmem; i++)
          if (in->mem[i].buf->scope != IR_SCOPE_GLOBAL) {
            mem_release(&in->mem[i]);
            in->mem[i] = in->mem[--in->nmem];
            i--;
          }
        smem_reset(&in->smem, k->smem_bytes);
        exec(in, k->body, all);
        if (in->npend + in->ngemm) interp_fault(in, __LINE__); /* copies or GEMMs never waited for */
        in->npend = 0;
        in->ngemm = 0;
        in->nmbar = 0;
        memset(in->committed, 0, sizeof in->committed);
      }
}

/* Runs the kernels of f in order (a split-KV kernel and its combine share global memory);
 * a host let between them is computed once. */
void interp_run(Interp *in, IrFunc *f) {
  IrStmt *body = f->body;
  int n = body->kind == IR_S_SEQ ? body->u.seq.n : 1;
  for (int i = 0; i < n; i++) {
    IrStmt *s = body->kind == IR_S_SEQ ? body->u.seq.items[i] : body;
    if (s->kind == IR_S_KERNEL) run_kernel(in, f, s);
    else if (s->kind == IR_S_LET) interp_set_scalar(in, s->u.let.var, eval(in, s->u.let.value, 0));
    else if (s->kind != IR_S_ALLOC) interp_fault(in, __LINE__);
  }
}

void interp_free(Interp *in) {
  free(in->pend);
  smem_free(&in->smem);
  for (int i = 0; i < in->nmem; i++) mem_release(&in->mem[i]);
  free(in->slots);
}

/* Sets a global buffer's contents before a run. */
double *interp_global(Interp *in, IrBuffer *b) {
  Mem *m = interp_mem(in, b);
  return m->data;
}

void interp_set_scalar(Interp *in, IrVar *v, double value) {
  for (int t = 0; t < MAXT; t++) slot(in, v)->val[t] = value;
}

IrFunc *interp_compile(TsCompiler *c, SourceFile *file, const char *func, const char *const *params) {
  ts_param ps[16];
  char buf[16][96];
  int np = 0;
  for (; params[np] && np < 16; np++) {
    snprintf(buf[np], sizeof buf[np], "%s", params[np]);
    char *eq = strchr(buf[np], '=');
    if (!eq) abort(); /* a test's own parameter list */
    *eq = 0;
    ps[np] = (ts_param){buf[np], eq + 1};
  }
  AstNode *m = parse_module(c, file);
  IrFunc *f = m ? front_compile(c, m, func, ps, np) : NULL;
  if (f && !pass_pipeline(c, f)) f = NULL;
  if (!f) fprintf(stderr, "%s", sb_str(&c->diag.out));
  return f;
}

IrBuffer *interp_param(IrFunc *f, const char *name) {
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i].buf && !strcmp(f->params[i].buf->name, name)) return f->params[i].buf;
  return NULL;
}
