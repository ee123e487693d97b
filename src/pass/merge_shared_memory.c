/* merge_shared_memory.c — last pass: every shared.dyn buffer of a kernel becomes a byte
 * range of the one dynamic shared-memory allocation the kernel is launched with
 * (`extern __shared__ __align__(1024) unsigned char ts_smem[]` in codegen).  Each buffer
 * starts on a 128-byte boundary, which covers 16-byte vector accesses and bank-aligned
 * rows; swizzled tiles (layout.h) on a 1024-byte one.
 *
 * Offsets stack up in allocation order while that fits the target's per-block limit and no
 * sharing would let more blocks share an SM.  When it does not fit (MLA decode: Q, the K/V
 * stages and the output tile together are 299 KB), or when sharing would fit more blocks on an
 * SM (mamba chunk_scan: the tiles of its GEMM before the loop under the loop's stages, 84 KB
 * to 34 KB; not for a warp-specialized kernel, built for one block an SM), buffers whose
 * lifetimes do not overlap share bytes, and a buffer no statement touches
 * (allocated for a branch of the factory not taken) takes none.  Lifetimes are counted in top-level
 * statements of the kernel body (a loop or branch that touches a buffer keeps it alive
 * throughout; every pipeline's cp.async / wgmma / TMA completion wait sits in or right after
 * the statement that issues it, so nothing is still in flight past a buffer's last
 * statement).  A buffer that takes over bytes of a dead one gets a __syncthreads before its
 * first statement unless a top-level barrier already separates them: thread_sync ran
 * earlier and saw two different buffers, so it could not order one thread's last read of the
 * old tile before another thread's first write of the new one.
 *
 * A warp-specialized kernel (pass_is_role_split) is counted in the consumer branch's
 * statements: the kernel's statements before the split, then the consumers', then the rest.
 * Whatever the producer branch touches (its TMA loads may run ahead of the consumers at any
 * point) is live from the consumers' first statement; a barrier for reused bytes inside the
 * consumers is a named barrier over the consumer threads (the producer never joins).
 *
 * One buffer whose shape is known only at run time (`T.alloc_shared((n,), ...)`, n a dynamic
 * dimension) goes after all the others; its bytes (IrKernel.smem_dyn) are added to the
 * launch's shared memory from the arguments, as grid dimensions are. */
#include "../layout/layout.h"
#include "passes.h"

typedef struct Life {
  IrBuffer *buf;
  int64_t bytes, align, offset;
  int first, last; /* top-level statements that touch it; -1: never touched */
} Life;

typedef struct Merge {
  TsCompiler *c;
  PtrVec lives;    /* Life*, in allocation order */
  int item;        /* the top-level statement being scanned */
  IrBuffer *dynamic; /* the one buffer whose size is known only at run time, placed last */
} Merge;

static Life *life_of(Merge *m, const IrBuffer *b) {
  b = ir_buffer_root(b);
  for (int i = 0; i < m->lives.len; i++) {
    Life *l = m->lives.items[i];
    if (l->buf == b) return l;
  }
  return NULL;
}

static void touch(Merge *m, const IrBuffer *b) {
  Life *l = life_of(m, b);
  if (!l) return;
  if (l->first < 0) l->first = m->item;
  l->last = m->item;
}

static void scan_stmt(IrStmt *s, void *ctx) {
  Merge *m = ctx;
  if (s->kind == IR_S_ALLOC && s->u.alloc.buf->scope == IR_SCOPE_SHARED_DYN && !s->u.alloc.buf->alias_of) {
    IrBuffer *b = s->u.alloc.buf;
    int64_t n = ir_buffer_numel(b);
    if (n < 0) { /* sized at run time: after every other buffer, launched with its bytes added */
      if (m->dynamic || dtype_is_packed(b->dtype))
        ts_error(m->c, b->loc, "shared buffer '%s' is sized at run time, and %s; give it a compile-time constant "
                 "shape", b->name, m->dynamic ? "a kernel may have only one such buffer" : "its type is packed");
      m->dynamic = b;
      return;
    }
    Life *l = ARENA_NEW(m->c->arena, Life);
    l->buf = b;
    l->bytes = dtype_storage_bytes(b->dtype, n); /* 4-bit types: two a byte */
    l->align = b->layout && b->layout->swizzle ? 1024 : 128; /* swizzles use address bits 4..9 */
    l->first = l->last = -1;
    vec_push(m->c->arena, &m->lives, l);
  }
  if (s->kind == IR_S_STORE) touch(m, s->u.store.buf);
  /* tile operations left in the kernel (none should reach this last pass, but a buffer they
   * name is in use all the same) */
  IrOperand ops[IR_TILE_MAX_OPERANDS];
  for (int i = ir_tile_operands(s, ops) - 1; i >= 0; i--) touch(m, ops[i].buf);
}

static void scan_expr(IrExpr *e, void *ctx) {
  if (e->kind == IR_LOAD) touch(ctx, e->u.load.buf);
}

static int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/* Offsets in allocation order, no reuse; returns the bytes used. */
static int64_t stack_offsets(Merge *m) {
  int64_t cur = 0;
  for (int i = 0; i < m->lives.len; i++) {
    Life *l = m->lives.items[i];
    cur = align_up(cur, l->align);
    l->offset = cur;
    cur += l->bytes;
  }
  return cur;
}

/* A buffer no statement touches (allocated but unused: `Bias_shared` of a kernel built
 * without bias) holds nothing, so it overlaps nothing. */
static bool lives_overlap(const Life *a, const Life *b) {
  if (a->first < 0 || b->first < 0) return false;
  return a->first <= b->last && b->first <= a->last;
}

/* First fit in order of first use: the lowest offset that collides with no placed buffer
 * alive at the same time.  Returns the bytes used. */
static int64_t pack_offsets(Merge *m) {
  int n = m->lives.len;
  Life **order = ARENA_ARRAY(m->c->arena, Life *, n);
  for (int i = 0; i < n; i++) order[i] = m->lives.items[i];
  for (int i = 1; i < n; i++) /* stable insertion sort by first use (untouched first) */
    for (int j = i; j > 0 && order[j - 1]->first > order[j]->first; j--) {
      Life *t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  int64_t end = 0;
  for (int i = 0; i < n; i++) {
    Life *l = order[i];
    int64_t off = 0;
    if (l->first < 0) { /* untouched: no bytes of its own */
      l->offset = 0;
      continue;
    }
    for (bool moved = true; moved;) {
      moved = false;
      off = align_up(off, l->align);
      for (int j = 0; j < i; j++) {
        Life *p = order[j];
        if (lives_overlap(l, p) && off < p->offset + p->bytes && p->offset < off + l->bytes) {
          off = p->offset + p->bytes;
          moved = true;
        }
      }
    }
    l->offset = off;
    if (off + l->bytes > end) end = off + l->bytes;
  }
  return end;
}

static bool is_barrier(const IrStmt *s) {
  if (s->kind != IR_S_EVAL || s->u.eval.value->kind != IR_CALL) return false;
  const IrExpr *e = s->u.eval.value;
  return e->u.call.op == IRI_SYNCTHREADS || ir_is_device(e, IRD_NAMED_BARRIER_SYNC);
}

/* Whether top-level statement `at` needs a barrier in front: it is the first of a buffer
 * whose bytes a buffer dead before it used, with no top-level barrier in between. */
static bool needs_barrier(Merge *m, IrStmt **items, int at) {
  for (int i = 0; i < m->lives.len; i++) {
    const Life *b = m->lives.items[i];
    if (b->first != at) continue;
    for (int j = 0; j < m->lives.len; j++) {
      const Life *a = m->lives.items[j];
      if (a == b || a->first < 0 || a->last >= at) continue;
      if (!(a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes)) continue;
      bool separated = false;
      for (int k = a->last + 1; k < at && !separated; k++) separated = is_barrier(items[k]);
      if (!separated) return true;
    }
  }
  return false;
}

/* The statements lifetimes are counted in: the body's, with a role split's consumer
 * statements in its place (*split: the split's index in the body, *ncons: how many). */
static IrStmt **flat_items(TsCompiler *c, const IrKernel *k, int *nitems, int *split, int *ncons) {
  IrStmt *body = k->body;
  *split = -1;
  *ncons = 0;
  if (!body || body->kind != IR_S_SEQ) {
    *nitems = 1;
    return &((IrKernel *)k)->body;
  }
  int n = body->u.seq.n;
  for (int i = 0; i < n && *split < 0; i++) {
    IrStmt *s = body->u.seq.items[i];
    if (pass_is_role_split(k, s) && s->u.if_.else_s->kind == IR_S_SEQ) *split = i;
  }
  if (*split < 0) {
    *nitems = n;
    return body->u.seq.items;
  }
  IrStmt *cons = body->u.seq.items[*split]->u.if_.else_s;
  *ncons = cons->u.seq.n;
  *nitems = n - 1 + *ncons;
  IrStmt **items = ARENA_ARRAY(c->arena, IrStmt *, *nitems);
  int o = 0;
  for (int i = 0; i < n; i++) {
    if (i != *split) {
      items[o++] = body->u.seq.items[i];
      continue;
    }
    for (int j = 0; j < *ncons; j++) items[o++] = cons->u.seq.items[j];
  }
  return items;
}

/* Blocks of `threads` threads with `bytes` of dynamic shared memory one SM holds, as far as
 * shared memory (each block also takes 1 KB the system reserves) and the SM's 2048 threads
 * decide; registers are not known before NVRTC. */
static int64_t blocks_per_sm(const TsCompiler *c, int64_t bytes, int64_t threads) {
  int64_t per_sm = pass_smem_per_sm(c);
  if (!per_sm || threads <= 0) return 1;
  int64_t by_smem = per_sm / (bytes + 1024), by_threads = 2048 / threads;
  return by_smem < by_threads ? by_smem : by_threads;
}

/* Do buffers whose lifetimes do not overlap share bytes?  Yes when the stacked offsets
 * (*bytes) exceed the block's limit `cap`, or when sharing lets more blocks of the kernel run
 * on one SM (chunk_scan: the tiles of the GEMM before the loop reused by the loop's stages;
 * not for a warp-specialized kernel, which is built for one block an SM: setmaxnreg hands its
 * registers to the consumers).  Leaves the offsets packed (*bytes their size) or stacked. */
static bool choose_packing(Merge *m, const IrKernel *k, int64_t cap, int64_t *bytes) {
  int64_t stacked = *bytes, packed = pack_offsets(m), threads = pass_kernel_threads(k);
  if (stacked > cap ||
      (!k->producer_threads && blocks_per_sm(m->c, packed, threads) > blocks_per_sm(m->c, stacked, threads))) {
    *bytes = packed;
    return true;
  }
  stack_offsets(m);
  return false;
}

static void merge_kernel(TsCompiler *c, IrStmt *ks) {
  IrKernel *k = &ks->u.kernel;
  Merge m = {c, {0}, 0, NULL};
  IrStmt *body = k->body;
  int nitems, split, ncons;
  IrStmt **items = flat_items(c, k, &nitems, &split, &ncons);
  IrVisitor v = {scan_stmt, scan_expr, &m};
  /* allocations first (the producer's touches need their buffers) */
  for (m.item = 0; m.item < nitems; m.item++)
    if (items[m.item]->kind == IR_S_ALLOC) ir_visit(items[m.item], &v);
  if (split >= 0) {
    m.item = split; /* the consumers' first statement */
    ir_visit(body->u.seq.items[split]->u.if_.then_s, &v);
  }
  for (m.item = 0; m.item < nitems; m.item++)
    if (items[m.item]->kind != IR_S_ALLOC) ir_visit(items[m.item], &v);
  int64_t cap = pass_smem_cap(c);
  int64_t bytes = stack_offsets(&m);
  if (cap && body && body->kind == IR_S_SEQ && choose_packing(&m, k, cap, &bytes)) {
    PtrVec out = {0}, cons = {0};
    for (int i = 0; i < nitems; i++) {
      bool in_cons = split >= 0 && i >= split && i < split + ncons;
      PtrVec *dst = in_cons ? &cons : &out;
      if (needs_barrier(&m, items, i)) {
        SrcLoc loc = items[i]->loc;
        int64_t attrs[2] = {1, k->threads[0]};
        vec_push(c->arena, dst, in_cons ? ir_device_stmt(c, IRD_NAMED_BARRIER_SYNC, attrs, 2, NULL, 0, loc)
                                        : ir_eval(c, ir_call(c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, loc), loc));
      }
      vec_push(c->arena, dst, items[i]);
      if (in_cons && i == split + ncons - 1) {
        IrStmt *sp = body->u.seq.items[split], *r = ir_stmt(c, IR_S_IF, sp->loc);
        *r = *sp;
        r->u.if_.else_s = ir_seq_vec(c, &cons, sp->u.if_.else_s->loc);
        vec_push(c->arena, &out, r);
      }
    }
    k->body = ir_seq_vec(c, &out, body->loc);
  }
  for (int i = 0; i < m.lives.len; i++) {
    Life *l = m.lives.items[i];
    l->buf->smem_offset = l->offset;
  }
  if (m.dynamic) { /* its bytes: dtype size times the product of its extents, known at launch */
    bytes = align_up(bytes, m.dynamic->layout && m.dynamic->layout->swizzle ? 1024 : 128);
    m.dynamic->smem_offset = bytes;
    IrExpr *n = ir_i32(c, dtype_bytes(m.dynamic->dtype));
    for (int d = 0; d < m.dynamic->ndim; d++) n = ir_binary(c, IR_MUL, n, m.dynamic->shape[d], m.dynamic->loc);
    k->smem_dyn = ir_simplify(c, n);
  }
  k->smem_bytes = bytes;
  if (cap && bytes > cap)
    ts_error(c, ks->loc, "the kernel needs %lld bytes of shared memory; one block on sm_%d may have at most %lld "
             "(fewer pipeline stages or smaller tiles)", (long long)bytes, c->target.sm, (long long)cap);
}

/* pass_configs {"ts.occupancy_launch_bounds": True} (opt-in, to be measured): a kernel without
 * a producer warpgroup asks ptxas for the blocks per SM that shared memory and threads allow
 * (__launch_bounds__'s minimum), so it may use the registers that occupancy leaves instead of
 * ptxas's default target (layernorm fwd: 52 registers by default, 64 with the hint, its global
 * loads then hoisted); a kernel that needs more registers than that spills. */
static void occupancy_hint(TsCompiler *c, const IrFunc *f, IrKernel *k) {
  if (k->producer_threads || !pass_config_on(f, "ts.occupancy_launch_bounds")) return;
  int64_t b = blocks_per_sm(c, k->smem_bytes, pass_kernel_threads(k));
  k->min_blocks = (int)(b < 1 ? 1 : b > 32 ? 32 : b);
}

static void walk(TsCompiler *c, const IrFunc *f, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_KERNEL) {
    merge_kernel(c, s);
    occupancy_hint(c, f, &s->u.kernel);
    return;
  }
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, f, s->u.seq.items[i]);
}

void pass_merge_shared_memory(TsCompiler *c, IrFunc *f) { walk(c, f, f->body); }
