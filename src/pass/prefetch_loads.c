/* prefetch_loads.c — global loads that the nests after a synchronous wgmma make, issued
 * before it (and before the mbarrier waits in front of it) into registers:
 *
 *   mbar_wait(full[s]); gemm_ss_wgmma(...)           pre[m] = scales_a[f(m, tx, k)]  (m < 2)
 *   for m, j, u: acc[..] += C[..] * scales_a[f(m, tx, k)]    ->    mbar_wait; gemm_ss_wgmma
 *                                                    for m, j, u: acc[..] += C[..] * pre[m]
 *
 * so that their latency overlaps the wait for the data and the tensor cores instead of
 * following it (deepgemm's per-row scale promotion: 41% of its stall cycles were waits on
 * those loads, under ncu).  A load moves when
 *  - its buffer is global and the kernel never writes it (no store, tile write or atomic,
 *    no address taken): nothing between the two places can change what it reads;
 *  - it is not under a condition inside its nest (a select's branch, an `if`): the nest runs
 *    it for every iteration anyway, so moving it reads no element that was not read;
 *  - its index uses only the nest's constant loops above it and variables bound before the
 *    waits (nothing the moved statements or the nest bind themselves);
 *  - the registers it needs (the product of the extents of the loops its index uses) fit
 *    PREFETCH_PER_LOAD, and all of one wgmma's loads fit PREFETCH_PER_GEMM.
 * Equal loads share their registers.
 *
 * A second mode, opt-in as well (ts.prefetch_next_loads=True), loads one iteration ahead instead:
 * see "one iteration ahead" below.
 *
 * Opt-in (ts.prefetch_loads=True): on an H200 it made deepgemm's row no faster (with it off,
 * 1.016x and 1.019x in two A/B runs of 10 and 3 rounds; 33.8 against 33.5 us under ncu), so
 * the latency of those loads was not what held it there. */
#include "passes.h"

#include "../ir/analysis.h"

enum { PREFETCH_PER_LOAD = 8, PREFETCH_PER_GEMM = 16, PREFETCH_MAX_DIMS = 8 };
/* registers left for addresses and temporaries beside the register buffers and prefetches */
enum { PREFETCH_REG_SLACK = 32 };

typedef struct Prefetch {
  IrExpr *load;    /* the original load */
  IrVar *dims[PREFETCH_MAX_DIMS];
  int64_t ext[PREFETCH_MAX_DIMS];
  int ndims;
  IrBuffer *regs;
} Prefetch;

typedef struct Pf {
  TsCompiler *c;
  PtrVec written;  /* root buffers the kernel writes or takes the address of */
  PtrVec bound;    /* variables bound from the insertion point to the nest (disallowed) */
  IrVar *loops[PREFETCH_MAX_DIMS];
  int64_t loop_ext[PREFETCH_MAX_DIMS];
  int nloops;
  Prefetch pf[PREFETCH_PER_GEMM]; /* each holds one register at least */
  int npf, used_regs;
  bool no_loaded_index; /* a load whose index reads memory does not qualify */
  IrVar *need;          /* a load whose index does not use this variable does not qualify */
  int64_t kernel_regs, reg_cap; /* the kernel's register buffers per thread, and its limit */
} Pf;

static bool has_ptr(const PtrVec *v, const void *p) {
  for (int i = 0; i < v->len; i++)
    if (v->items[i] == p) return true;
  return false;
}

/* ---- buffers the kernel writes ---------------------------------------------------------- */
static void note_written(Pf *pf, const IrBuffer *b) {
  const IrBuffer *r = ir_buffer_root(b);
  if (r && !has_ptr(&pf->written, r)) vec_push(pf->c->arena, &pf->written, (void *)r);
}

static void written_stmt(IrStmt *s, void *ctx) {
  Pf *pf = ctx;
  if (s->kind == IR_S_STORE) note_written(pf, s->u.store.buf);
  IrOperand ops[IR_TILE_MAX_OPERANDS];
  int n = ir_tile_operands(s, ops);
  for (int i = 0; i < n; i++)
    if (ops[i].write) note_written(pf, ops[i].buf);
}

static void written_expr(IrExpr *e, void *ctx) {
  if (e->kind == IR_CALL && e->u.call.op == IRI_ADDRESS_OF && e->u.call.nargs == 1 && e->u.call.args[0]->kind == IR_LOAD)
    note_written(ctx, e->u.call.args[0]->u.load.buf);
}

/* ---- variables bound between the insertion point and the nest ----------------------------- */
static void bound_stmt(IrStmt *s, void *ctx) {
  Pf *pf = ctx;
  if (s->kind == IR_S_LET) vec_push(pf->c->arena, &pf->bound, s->u.let.var);
  if (s->kind == IR_S_FOR) vec_push(pf->c->arena, &pf->bound, s->u.loop.var);
}

static void note_bound(Pf *pf, IrStmt *s) {
  IrVisitor v = {bound_stmt, NULL, pf};
  ir_visit(s, &v);
}

/* ---- candidates ------------------------------------------------------------------------- */
typedef struct VarUse {
  Pf *pf;
  bool ok;
  bool used[PREFETCH_MAX_DIMS];
} VarUse;

static void var_use(IrExpr *e, void *ctx) {
  VarUse *u = ctx;
  if (e->kind != IR_VAR) return;
  for (int i = 0; i < u->pf->nloops; i++)
    if (u->pf->loops[i] == e->u.var) {
      u->used[i] = true;
      return;
    }
  if (has_ptr(&u->pf->bound, e->u.var)) u->ok = false;
}

static Prefetch *find_prefetch(Pf *pf, const IrExpr *ld) {
  for (int i = 0; i < pf->npf; i++)
    if (ir_expr_equal(pf->pf[i].load, ld)) return &pf->pf[i];
  return NULL;
}

/* An index of variables, constants and arithmetic: no load, no call. */
static void impure_expr(IrExpr *e, void *ctx) {
  if (e->kind == IR_LOAD || e->kind == IR_CALL) *(bool *)ctx = true;
}
static bool pure_index(IrExpr *e) {
  bool bad = false;
  IrVisitor v = {NULL, impure_expr, &bad};
  ir_visit_expr(e, &v);
  return !bad;
}

/* Records ld as a prefetch when it qualifies (see the top). */
static void consider_load(Pf *pf, IrExpr *ld) {
  const IrBuffer *b = ld->u.load.buf;
  if (b->scope != IR_SCOPE_GLOBAL || ld->lanes != 1 || has_ptr(&pf->written, ir_buffer_root(b)) || find_prefetch(pf, ld))
    return;
  VarUse u = {pf, true, {false}};
  IrVisitor v = {NULL, var_use, &u};
  if (pf->no_loaded_index)
    for (int i = 0; i < ld->u.load.nidx; i++)
      if (!pure_index(ld->u.load.idx[i])) return;
  if (pf->need) {
    bool uses_need = false;
    for (int i = 0; i < ld->u.load.nidx; i++) uses_need |= ir_expr_uses_var(ld->u.load.idx[i], pf->need);
    if (!uses_need) return; /* the same in every iteration: nothing to load ahead */
  }
  for (int i = 0; i < ld->u.load.nidx; i++) ir_visit_expr(ld->u.load.idx[i], &v);
  if (!u.ok) return;
  Prefetch p = {.load = ld};
  int64_t regs = 1;
  for (int i = 0; i < pf->nloops; i++)
    if (u.used[i]) {
      p.dims[p.ndims] = pf->loops[i];
      p.ext[p.ndims++] = pf->loop_ext[i];
      regs *= pf->loop_ext[i];
    }
  if (regs > PREFETCH_PER_LOAD || pf->used_regs + regs > PREFETCH_PER_GEMM) return;
  pf->used_regs += (int)regs;
  pf->pf[pf->npf++] = p;
}

/* The loads of e that run whenever e does: not those in a select's branches. */
static void unconditional_loads(Pf *pf, IrExpr *e) {
  if (!e) return;
  if (e->kind == IR_LOAD) {
    for (int i = 0; i < e->u.load.nidx; i++) unconditional_loads(pf, e->u.load.idx[i]);
    consider_load(pf, e);
    return;
  }
  if (e->kind == IR_CALL) {
    if (e->u.call.op == IRI_ADDRESS_OF) return;
    for (int i = 0; i < e->u.call.nargs; i++) unconditional_loads(pf, e->u.call.args[i]);
    return;
  }
  if (e->kind == IR_SELECT || e->kind == IR_IF_THEN_ELSE) {
    unconditional_loads(pf, e->u.ops[0]);
    return;
  }
  for (int i = 0; i < ir_expr_nops[e->kind]; i++) unconditional_loads(pf, e->u.ops[i]);
}

/* The body of a nest of constant unrolled / serial loops: its stores and LETs. */
static void nest_loads(Pf *pf, IrStmt *s) {
  if (!s) return;
  switch (s->kind) {
  case IR_S_FOR: {
    int64_t lo, ext;
    if (pf->nloops == PREFETCH_MAX_DIMS || (s->u.loop.kind != IR_FOR_UNROLLED && s->u.loop.kind != IR_FOR_SERIAL) ||
        !ir_is_const_int(s->u.loop.min, &lo) || lo != 0 || !ir_is_const_int(s->u.loop.extent, &ext))
      return;
    pf->loops[pf->nloops] = s->u.loop.var;
    pf->loop_ext[pf->nloops++] = ext;
    nest_loads(pf, s->u.loop.body);
    pf->nloops--;
    return;
  }
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) nest_loads(pf, s->u.seq.items[i]);
    return;
  case IR_S_STORE:
    for (int i = 0; i < s->u.store.nidx; i++) unconditional_loads(pf, s->u.store.idx[i]);
    unconditional_loads(pf, s->u.store.value);
    return;
  case IR_S_LET: unconditional_loads(pf, s->u.let.value); return;
  default: return;
  }
}

/* ---- rewriting ---------------------------------------------------------------------------- */
/* The register of prefetch p for the values of its loops given as exprs (row-major). */
static IrExpr *reg_load(Pf *pf, const Prefetch *p, IrExpr *const *vals, SrcLoc loc) {
  IrExpr *flat = ir_i32(pf->c, 0);
  for (int i = 0; i < p->ndims; i++)
    flat = ir_simplify(pf->c, ir_binary(pf->c, IR_ADD, ir_binary(pf->c, IR_MUL, flat, ir_i32(pf->c, p->ext[i]), loc),
                                         vals[i], loc));
  return ir_load(pf->c, p->regs, &flat, 1, loc);
}

static IrExpr *replace_loads(Pf *pf, IrExpr *e);

static IrExpr **replace_list(Pf *pf, IrExpr **xs, int n, bool *changed) {
  IrExpr **out = ARENA_ARRAY(pf->c->arena, IrExpr *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    out[i] = replace_loads(pf, xs[i]);
    *changed |= out[i] != xs[i];
  }
  return out;
}

/* e with every prefetched load read from its registers (the nest's own loop variables). */
static IrExpr *replace_loads(Pf *pf, IrExpr *e) {
  if (!e) return NULL;
  if (e->kind == IR_LOAD) {
    const Prefetch *p = find_prefetch(pf, e);
    if (p) {
      IrExpr *vals[PREFETCH_MAX_DIMS];
      for (int i = 0; i < p->ndims; i++) vals[i] = ir_varref(pf->c, p->dims[i], e->loc);
      return reg_load(pf, p, vals, e->loc);
    }
  }
  if (e->kind == IR_LOAD || e->kind == IR_CALL) {
    bool ch = false, call = e->kind == IR_CALL;
    IrExpr **xs = replace_list(pf, call ? e->u.call.args : e->u.load.idx, call ? e->u.call.nargs : e->u.load.nidx, &ch);
    return ch ? ir_with_operands(pf->c, e, xs) : e;
  }
  int n = ir_expr_nops[e->kind];
  bool ch = false;
  IrExpr *ops[3] = {0};
  for (int i = 0; i < n; i++) {
    ops[i] = replace_loads(pf, e->u.ops[i]);
    ch |= ops[i] != e->u.ops[i];
  }
  if (!ch) return e;
  IrExpr *r = ARENA_NEW(pf->c->arena, IrExpr);
  *r = *e;
  for (int i = 0; i < n; i++) r->u.ops[i] = ops[i];
  return r;
}

static IrStmt *replace_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  Pf *pf = ctx;
  if (!s) return NULL;
  IrStmt *r = ir_map_children(c, s, replace_stmt, pf); /* a copy of s */
  if (r->kind == IR_S_STORE) {
    bool ch = false;
    r->u.store.idx = replace_list(pf, r->u.store.idx, r->u.store.nidx, &ch);
    r->u.store.value = replace_loads(pf, r->u.store.value);
  } else if (r->kind == IR_S_LET) {
    r->u.let.value = replace_loads(pf, r->u.let.value);
  }
  return r;
}

/* A register array for prefetch p (one register per value of its loops). */
static IrBuffer *regs_for(Pf *pf, const Prefetch *p, const char *prefix, SrcLoc loc) {
  int64_t n = 1;
  for (int i = 0; i < p->ndims; i++) n *= p->ext[i];
  IrExpr *ext = ir_i32(pf->c, n);
  IrBuffer *r = ir_buffer(pf->c, arena_printf(pf->c->arena, "%s_%s", prefix, p->load->u.load.buf->name), p->load->dtype,
                          IR_SCOPE_LOCAL, 1, &ext, loc);
  r->local_size = n; /* registers per thread, as lower_tile_ops sets them */
  return r;
}

static IrStmt *alloc_of(TsCompiler *c, IrBuffer *b, SrcLoc loc) {
  IrStmt *al = ir_stmt(c, IR_S_ALLOC, loc);
  al->u.alloc.buf = b;
  return al;
}

/* A loop nest over fresh copies of p's loops storing into `to` (p's register order) the load,
 * or with `from`, the registers of `from`; with `kv`, the load's kv replaced by `kval`. */
static IrStmt *fill_nest(Pf *pf, Prefetch *p, IrBuffer *to, IrBuffer *from, IrVar *kv, IrExpr *kval, SrcLoc loc) {
  TsCompiler *c = pf->c;
  IrVar *fresh[PREFETCH_MAX_DIMS];
  IrExpr *vals[PREFETCH_MAX_DIMS];
  for (int i = 0; i < p->ndims; i++) {
    fresh[i] = ir_var(c, p->dims[i]->name, TS_DTYPE_INT32, IR_VAR_LOOP, loc);
    vals[i] = ir_varref(c, fresh[i], loc);
  }
  IrBuffer *keep = p->regs;
  p->regs = to;
  IrExpr *reg = reg_load(pf, p, vals, loc), *val;
  if (from) {
    p->regs = from;
    val = reg_load(pf, p, vals, loc);
  } else {
    val = ir_subst(c, p->load, p->dims, vals, p->ndims);
    if (kv) val = ir_subst(c, val, &kv, &kval, 1);
  }
  p->regs = keep;
  IrStmt *body = ir_store(c, to, reg->u.load.idx, 1, val, loc);
  for (int i = p->ndims - 1; i >= 0; i--)
    body = ir_for(c, fresh[i], ir_i32(c, 0), ir_i32(c, p->ext[i]), IR_FOR_UNROLLED, body, loc);
  return body;
}

/* The statements that fill the registers of p (allocated here) with its loads. */
static IrStmt *fill_regs(Pf *pf, Prefetch *p, SrcLoc loc) {
  p->regs = regs_for(pf, p, "pre", loc);
  return ir_seq(pf->c, (IrStmt *[]){alloc_of(pf->c, p->regs, loc), fill_nest(pf, p, p->regs, NULL, NULL, NULL, loc)}, 2, loc);
}

/* ---- the sequences ------------------------------------------------------------------------ */
static bool is_blocking_gemm(const IrStmt *s) {
  return s->kind == IR_S_EVAL &&
         (ir_is_device(s->u.eval.value, IRD_GEMM_SS_WGMMA) || ir_is_device(s->u.eval.value, IRD_GEMM_RS_WGMMA));
}

static bool is_wait(const IrStmt *s) { return s->kind == IR_S_EVAL && ir_is_device(s->u.eval.value, IRD_MBAR_WAIT); }

/* items[g] a blocking wgmma: the loads of the nests after it (up to the next one) move to
 * before it and the waits in front of it; returns the new sequence's items in out. */
static void prefetch_after(Pf *pf, IrStmt **items, int n, int g, PtrVec *out, int *next) {
  int p = g;
  while (p > *next && is_wait(items[p - 1])) p--;
  int end = g + 1;
  while (end < n && !is_blocking_gemm(items[end])) end++;
  pf->npf = 0;
  pf->used_regs = 0;
  pf->bound.len = 0;
  for (int i = p; i <= g; i++) note_bound(pf, items[i]);
  for (int j = g + 1; j < end; j++) {
    note_bound(pf, items[j]); /* its own loops too: var_use allows the chain above a load first */
    if (items[j]->kind == IR_S_FOR) nest_loads(pf, items[j]);
  }
  for (int i = 0; i < pf->npf; i++) vec_push(pf->c->arena, out, fill_regs(pf, &pf->pf[i], items[g]->loc));
  for (int i = p; i <= g; i++) vec_push(pf->c->arena, out, items[i]);
  for (int j = g + 1; j < end; j++)
    vec_push(pf->c->arena, out, pf->npf && items[j]->kind == IR_S_FOR ? replace_stmt(pf->c, items[j], pf) : items[j]);
  *next = end;
}

/* A sequence with a blocking wgmma: each one's prefetches go in front of its waits. */
static IrStmt *prefetch_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  Pf *pf = ctx;
  if (!s) return NULL;
  s = ir_map_children(c, s, prefetch_stmt, pf);
  if (s->kind != IR_S_SEQ) return s;
  IrStmt **items = s->u.seq.items;
  int n = s->u.seq.n, i = 0;
  PtrVec out = {0};
  while (i < n) {
    int g = i;
    while (g < n && !is_blocking_gemm(items[g])) g++;
    if (g == n) {
      for (; i < n; i++) vec_push(c->arena, &out, items[i]);
      break;
    }
    int p = g;
    while (p > i && is_wait(items[p - 1])) p--;
    for (; i < p; i++) vec_push(c->arena, &out, items[i]);
    prefetch_after(pf, items, n, g, &out, &i);
  }
  return ir_seq_vec(c, &out, s->loc);
}

/* ---- one iteration ahead (opt-in, ts.prefetch_next_loads=True; on an H200 deepgemm's row
 * was 1.04x faster with it while each tile had barriers of its own, 0.92x once A and B shared
 * theirs, which made it 1.05x TileLang) ----------------------------------------------------
 * A serial loop whose body issues a wgmma at its top level: the global loads that the
 * statements running in every iteration make (its top-level nests, lets and stores; loads
 * qualifying as above, whose index may also use the loop variable k but no loaded value)
 * are made for k+1 at the top of iteration k, into registers that iteration k+1 reads:
 *
 *   for k in m0 ..:                         nxt = L(m0)                   (when the loop runs)
 *     .. a wgmma ..                  ->     for k in m0 ..:
 *     .. x = L(k) ..                          cur = nxt; if k + 1 < end: nxt = L(k + 1)
 *                                             .. a wgmma ..
 *                                             .. x = cur ..
 *
 * so each load has a whole iteration to land instead of the time between the wgmma's issue
 * and the first use (DeepGEMM's per-row scales: their latency, not the tensor cores, set the
 * iteration's length under ncu).  Not for loops with break, continue or return. */
static bool top_wgmma(IrStmt *s) {
  if (s->kind == IR_S_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++)
      if (top_wgmma(s->u.seq.items[i])) return true;
    return false;
  }
  if (s->kind != IR_S_EVAL) return false;
  const IrExpr *e = s->u.eval.value;
  return ir_is_device(e, IRD_GEMM_SS_WGMMA) || ir_is_device(e, IRD_GEMM_RS_WGMMA) ||
         ir_is_device(e, IRD_GEMM_SS_WGMMA_ISSUE) || ir_is_device(e, IRD_GEMM_RS_WGMMA_ISSUE);
}

static void exits_stmt(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_BREAK || s->kind == IR_S_CONTINUE || s->kind == IR_S_RETURN) *(bool *)ctx = true;
}

/* The loads of the statements that run in every iteration of a loop body. */
static void iteration_loads(Pf *pf, IrStmt *s) {
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) iteration_loads(pf, s->u.seq.items[i]);
    return;
  case IR_S_FOR: case IR_S_LET: case IR_S_STORE:
    pf->nloops = 0;
    nest_loads(pf, s);
    return;
  default: return;
  }
}

static IrStmt *prefetch_next_loop(Pf *pf, IrStmt *loop) {
  TsCompiler *c = pf->c;
  SrcLoc loc = loop->loc;
  IrStmt *body = loop->u.loop.body;
  bool exits = false;
  IrVisitor ev = {exits_stmt, NULL, &exits};
  ir_visit(body, &ev);
  if (exits || !top_wgmma(body)) return loop;
  pf->npf = pf->used_regs = 0;
  pf->bound.len = 0;
  pf->no_loaded_index = true;
  pf->need = loop->u.loop.var;
  note_bound(pf, body);
  iteration_loads(pf, body);
  pf->no_loaded_index = false;
  pf->need = NULL;
  if (!pf->npf || pf->kernel_regs + 2 * pf->used_regs + PREFETCH_REG_SLACK > pf->reg_cap) return loop;
  IrVar *kv = loop->u.loop.var;
  IrExpr *m0 = loop->u.loop.min, *ext = loop->u.loop.extent;
  IrExpr *k1 = ir_binary(c, IR_ADD, ir_varref(c, kv, loc), ir_i32(c, 1), loc);
  PtrVec before = {0}, first = {0}, top = {0}, next = {0};
  for (int i = 0; i < pf->npf; i++) {
    Prefetch *p = &pf->pf[i];
    IrBuffer *nxt = regs_for(pf, p, "nxt", loc), *cur = regs_for(pf, p, "cur", loc);
    vec_push(c->arena, &before, alloc_of(c, nxt, loc));
    vec_push(c->arena, &first, fill_nest(pf, p, nxt, NULL, kv, m0, loc));
    vec_push(c->arena, &top, alloc_of(c, cur, loc));
    vec_push(c->arena, &top, fill_nest(pf, p, cur, nxt, NULL, NULL, loc));
    vec_push(c->arena, &next, fill_nest(pf, p, nxt, NULL, kv, k1, loc));
    p->regs = cur;
  }
  IrExpr *more = ir_binary(c, IR_LT, k1, ir_binary(c, IR_ADD, m0, ext, loc), loc);
  vec_push(c->arena, &top, ir_if(c, more, ir_seq_vec(c, &next, loc), NULL, loc));
  vec_push(c->arena, &top, replace_stmt(c, body, pf));
  IrStmt *r = ir_stmt(c, IR_S_FOR, loc);
  *r = *loop;
  r->u.loop.body = ir_seq_vec(c, &top, loc);
  vec_push(c->arena, &before, ir_if(c, ir_binary(c, IR_GT, ext, ir_i32(c, 0), loc), ir_seq_vec(c, &first, loc), NULL, loc));
  vec_push(c->arena, &before, r);
  return ir_seq_vec(c, &before, loc);
}

/* The registers a thread of kernel k keeps in its register buffers (fragments at their
 * per-thread size), and what it may use: 255, or what warp_specialize's setmaxnreg.inc gives
 * the consumers. */
static void reg_sum(IrStmt *s, void *ctx) {
  if (s->kind != IR_S_ALLOC) return;
  const IrBuffer *b = s->u.alloc.buf;
  int64_t n = b->scope == IR_SCOPE_FRAGMENT ? b->local_size
              : b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR ? ir_buffer_numel(b) : 0;
  if (n > 0) ((Pf *)ctx)->kernel_regs += (n * dtype_bytes(b->dtype) + 3) / 4;
}
static void reg_cap(IrExpr *e, void *ctx) {
  if (ir_is_device(e, IRD_SETMAXNREG_INC)) ((Pf *)ctx)->reg_cap = e->u.call.attrs[0];
}
static void kernel_regs(Pf *pf, IrStmt *k) {
  pf->kernel_regs = 0;
  pf->reg_cap = 255;
  IrVisitor v = {reg_sum, reg_cap, pf};
  ir_visit(k->u.kernel.body, &v);
}

static IrStmt *prefetch_next_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  if (s->kind == IR_S_KERNEL) kernel_regs(ctx, s);
  s = ir_map_children(c, s, prefetch_next_stmt, ctx);
  if (s->kind != IR_S_FOR || s->u.loop.kind != IR_FOR_SERIAL) return s;
  return prefetch_next_loop(ctx, s);
}

void pass_prefetch_loads(TsCompiler *c, IrFunc *f) {
  bool same = pass_config_state(f, "ts.prefetch_loads") == 1; /* opt-in: see the note at the top */
  bool next = pass_config_state(f, "ts.prefetch_next_loads") == 1; /* opt-in: see its section */
  if (!same && !next) return;
  Pf pf = {.c = c};
  IrVisitor v = {written_stmt, written_expr, &pf};
  ir_visit(f->body, &v);
  if (next) f->body = prefetch_next_stmt(c, f->body, &pf);
  if (same) f->body = prefetch_stmt(c, f->body, &pf);
}
