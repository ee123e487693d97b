/* stage_fragment.c — a layout conversion through shared memory, used by layout_inference.
 *
 * A T.Parallel nest may read a fragment whose layout is fixed (a GEMM operand or
 * accumulator) at an offset the nest's threads do not hold: `x[i, jj * 4 + j]` under a
 * serial jj, where the tf32 A operand's columns repeat every 8 (pairs of lanes), so even
 * and odd jj belong to different lanes.  No single loop layout serves every jj.  Instead
 * the fragment is copied once into a shared tile in its own layout (each thread stores
 * the elements it holds), and the reads go to that tile:
 *
 *     for jj in serial(64):                    alloc x_staged: shared
 *       for i, j in T.Parallel(32, 4):   ->    for i, j in T.Parallel(32, 256): x_staged[i, j] = x[i, j]
 *         ... x[i, jj * 4 + j] ...             for jj in serial(64):
 *                                                for i, j in T.Parallel(32, 4): ... x_staged[i, jj * 4 + j] ...
 *
 * thread_sync then places the barrier between the stores and the reads (and before the
 * next copy when the whole runs in a loop).  The copy goes before the outermost enclosing
 * serial loop that does not change the fragment, so it runs once per value of the
 * fragment, not once per read; it is sound because nothing in that statement writes the
 * fragment: every read there sees the values the copy saw.  Refused (false) when that
 * cannot be shown or the fragment is viewed under another name.
 *
 * pass_stage_gemm_b (run by plan_gemm) stages a T.gemm's B operand that is a fragment the
 * same way: neither tensor-core path takes B from registers as TileLang's fragment B (wgmma
 * reads B from shared memory only; an mma.sync B fragment would need its own register
 * layout, replicated over the warps along M, that no producing nest picks up by itself).
 * The copy into a shared tile (in the window's shape) goes right before the GEMM, exactly
 * the tile a user would have written by hand; the GEMM then reads that tile with the
 * plan's swizzle.  It costs one round trip through shared memory per GEMM. */
#include "passes.h"

/* Does s write buffer b, itself or through a view of it (a store, a reduction, atomic, copy
 * or fill into it, a GEMM accumulating into it, its allocation)?  Reads do not count. */
typedef struct WriteScan {
  const IrBuffer *buf;
  bool writes;
} WriteScan;

static bool is_memory_of(const IrBuffer *x, const IrBuffer *b) { return x && (x == b || x->alias_of == b); }

static void scan_writes(IrStmt *s, void *ctx) {
  WriteScan *w = ctx;
  const IrBuffer *dst = NULL;
  switch (s->kind) {
    case IR_S_STORE: dst = s->u.store.buf; break;
    case IR_S_REDUCE: dst = s->u.reduce.dst; break;
    case IR_S_ATOMIC: dst = s->u.atomic.dst.buf; break;
    case IR_S_COPY: dst = s->u.copy.dst.buf; break;
    case IR_S_FILL: dst = s->u.fill.dst.buf; break;
    case IR_S_GEMM: dst = s->u.gemm.c.buf; break;
    case IR_S_ALLOC: dst = s->u.alloc.buf; break;
    default: break;
  }
  w->writes |= is_memory_of(dst, w->buf);
}

static bool writes_buffer(IrStmt *s, const IrBuffer *b) {
  WriteScan w = {b, false};
  IrVisitor v = {scan_writes, NULL, &w};
  ir_visit(s, &v);
  return w.writes;
}

/* The statements from `s` down to `target` (inclusive), or false when target is not in s. */
static bool find_path(IrStmt *s, IrStmt *target, PtrVec *path, Arena *a) {
  if (!s) return false;
  vec_push(a, path, s);
  if (s == target) return true;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++)
        if (find_path(s->u.seq.items[i], target, path, a)) return true;
      break;
    case IR_S_FOR:
      if (find_path(s->u.loop.body, target, path, a)) return true;
      break;
    case IR_S_IF:
      if (find_path(s->u.if_.then_s, target, path, a) || find_path(s->u.if_.else_s, target, path, a)) return true;
      break;
    case IR_S_WHILE:
      if (find_path(s->u.while_.body, target, path, a)) return true;
      break;
    default: break;
  }
  path->len--;
  return false;
}

/* The parallel nest copying fragment `frag` element by element into `smem`. */
static IrStmt *copy_nest(TsCompiler *c, IrBuffer *frag, IrBuffer *smem, SrcLoc loc) {
  IrVar *v[FRAG_MAX_DIMS];
  IrExpr *idx[FRAG_MAX_DIMS];
  for (int p = 0; p < frag->ndim; p++) {
    v[p] = ir_var(c, arena_printf(c->arena, "i%d", p), TS_DTYPE_INT32, IR_VAR_LOOP, loc);
    idx[p] = ir_varref(c, v[p], loc);
  }
  IrExpr **sidx = ARENA_ARRAY(c->arena, IrExpr *, frag->ndim), **lidx = ARENA_ARRAY(c->arena, IrExpr *, frag->ndim);
  for (int p = 0; p < frag->ndim; p++) sidx[p] = lidx[p] = idx[p];
  IrStmt *body = ir_store(c, smem, sidx, frag->ndim, ir_load(c, frag, lidx, frag->ndim, loc), loc);
  for (int p = frag->ndim - 1; p >= 0; p--) body = ir_for(c, v[p], ir_i32(c, 0), frag->shape[p], IR_FOR_PARALLEL, body, loc);
  return body;
}

/* Rebuilds s with `old` (a statement on the path) replaced by `repl`. */
typedef struct Replace {
  IrStmt *old, *repl;
  const PtrVec *path;
} Replace;

static IrStmt *replace_on_path(TsCompiler *c, IrStmt *s, void *ctx) {
  Replace *r = ctx;
  if (!s) return NULL;
  if (s == r->old) return r->repl;
  if (!vec_has(r->path, s)) return s;
  return ir_map_children(c, s, replace_on_path, r);
}

bool pass_stage_fragment_reads(TsCompiler *c, IrStmt **body, IrStmt *nest, IrBuffer *frag) {
  if (frag->scope != IR_SCOPE_FRAGMENT || frag->alias_of || frag->ndim > FRAG_MAX_DIMS || ir_buffer_numel(frag) <= 0)
    return false;
  PtrVec path = {0};
  if (!find_path(*body, nest, &path, c->arena) || writes_buffer(nest, frag)) return false;
  /* Climb from the nest through the serial loops (and sequences) that leave frag alone. */
  IrStmt *at = nest;
  for (int i = path.len - 2; i >= 0; i--) {
    IrStmt *s = path.items[i];
    if (s->kind == IR_S_SEQ) continue;
    if (s->kind != IR_S_FOR || s->u.loop.kind == IR_FOR_PARALLEL || writes_buffer(s, frag)) break;
    at = s;
  }
  IrBuffer *smem = ir_buffer(c, arena_printf(c->arena, "%s_staged", frag->name), frag->dtype, IR_SCOPE_SHARED_DYN,
                             frag->ndim, frag->shape, nest->loc);
  IrStmt *alloc = ir_stmt(c, IR_S_ALLOC, nest->loc);
  alloc->u.alloc.buf = smem;
  IrStmt *items[3] = {alloc, copy_nest(c, frag, smem, nest->loc), ir_subst_loads_stmt(c, at, frag, smem)};
  Replace r = {at, ir_seq(c, items, 3, at->loc), &path};
  *body = replace_on_path(c, *body, &r);
  return true;
}

/* T.gemm(A, b_frag[window], C) -> alloc b_staged: shared [window];
 *                                  for i.. in T.Parallel(window): b_staged[i..] = b_frag[min + i..];
 *                                  T.gemm(A, b_staged, C) */
static IrStmt *stage_b(TsCompiler *c, IrStmt *s) {
  const IrRegion *B = &s->u.gemm.b;
  IrBuffer *frag = B->buf;
  int64_t *shape = ARENA_ARRAY(c->arena, int64_t, B->ndim);
  IrExpr **ext = ARENA_ARRAY(c->arena, IrExpr *, B->ndim);
  for (int p = 0; p < B->ndim; p++) {
    if (!ir_is_const_int(B->extent[p], &shape[p]) || shape[p] <= 0) return s; /* plan_gemm reports the tile */
    ext[p] = ir_i32(c, shape[p]);
  }
  IrBuffer *smem = ir_buffer(c, arena_printf(c->arena, "%s_staged", frag->name), frag->dtype, IR_SCOPE_SHARED_DYN,
                             B->ndim, ext, s->loc);
  IrStmt *alloc = ir_stmt(c, IR_S_ALLOC, s->loc);
  alloc->u.alloc.buf = smem;
  IrVar *v[FRAG_MAX_DIMS];
  IrExpr **sidx = ARENA_ARRAY(c->arena, IrExpr *, B->ndim), **fidx = ARENA_ARRAY(c->arena, IrExpr *, B->ndim);
  for (int p = 0; p < B->ndim; p++) {
    v[p] = ir_var(c, arena_printf(c->arena, "i%d", p), TS_DTYPE_INT32, IR_VAR_LOOP, s->loc);
    sidx[p] = ir_varref(c, v[p], s->loc);
    fidx[p] = ir_binary(c, IR_ADD, B->min[p], sidx[p], s->loc);
  }
  IrStmt *copy = ir_store(c, smem, sidx, B->ndim, ir_load(c, frag, fidx, B->ndim, s->loc), s->loc);
  for (int p = B->ndim - 1; p >= 0; p--) copy = ir_for(c, v[p], ir_i32(c, 0), ext[p], IR_FOR_PARALLEL, copy, s->loc);
  IrStmt *g = ir_stmt(c, IR_S_GEMM, s->loc);
  *g = *s;
  g->u.gemm.b = ir_region_full(c, smem, B->loc);
  IrStmt *items[3] = {alloc, copy, g};
  return ir_seq(c, items, 3, s->loc);
}

/* Is s a GEMM whose fragment B gets staged?  Only where A is in a form the GEMM takes:
 * plan_gemm reports the others as they are. */
static bool stages_b(const IrStmt *s) {
  if (s->kind != IR_S_GEMM) return false;
  const IrBuffer *a = s->u.gemm.a.buf, *b = s->u.gemm.b.buf;
  bool a_ok = a->scope == IR_SCOPE_FRAGMENT || a->scope == IR_SCOPE_SHARED || a->scope == IR_SCOPE_SHARED_DYN;
  return a_ok && b->scope == IR_SCOPE_FRAGMENT && !dtype_is_packed(b->dtype) && b->ndim <= FRAG_MAX_DIMS &&
         s->u.gemm.c.buf->scope == IR_SCOPE_FRAGMENT;
}

static bool same_region(const IrRegion *x, const IrRegion *y) {
  if (x->buf != y->buf || x->ndim != y->ndim) return false;
  for (int p = 0; p < x->ndim; p++)
    if (!ir_expr_equal(x->min[p], y->min[p]) || !ir_expr_equal(x->extent[p], y->extent[p])) return false;
  return true;
}

/* A sequence: each staged GEMM right after another one that staged the same window of the
 * same fragment (KDA's dq and dk GEMMs, both multiplying kg_fragment), with only GEMMs that
 * leave the fragment alone in between, reads the earlier copy instead of making its own. */
static IrStmt *stage_seq(TsCompiler *c, IrStmt *s, void *ctx);

/* Does GEMM g accumulate into fragment f (itself or a view of it)? */
static bool writes_fragment(const IrStmt *g, const IrBuffer *f) { return is_memory_of(g->u.gemm.c.buf, f); }

static IrStmt *stage_gemm_b_fn(TsCompiler *c, IrStmt *s, void *ctx) {
  if (!s) return NULL;
  if (stages_b(s)) return stage_b(c, s);
  if (s->kind == IR_S_SEQ) return stage_seq(c, s, ctx);
  return ir_map_children(c, s, stage_gemm_b_fn, ctx);
}

static IrStmt *stage_seq(TsCompiler *c, IrStmt *s, void *ctx) {
  PtrVec items = {0};
  const IrStmt *last = NULL;  /* the latest staged GEMM of this sequence (as written) */
  IrBuffer *last_smem = NULL; /* and its copy */
  for (int i = 0; i < s->u.seq.n; i++) {
    IrStmt *it = s->u.seq.items[i];
    if (stages_b(it) && last && same_region(&it->u.gemm.b, &last->u.gemm.b)) {
      IrStmt *g = ir_stmt(c, IR_S_GEMM, it->loc);
      *g = *it;
      g->u.gemm.b = ir_region_full(c, last_smem, it->u.gemm.b.loc);
      vec_push(c->arena, &items, g);
      if (writes_fragment(it, last->u.gemm.b.buf)) last = NULL;
      continue;
    }
    IrStmt *r = stage_gemm_b_fn(c, it, ctx);
    vec_push(c->arena, &items, r);
    if (stages_b(it) && r != it && r->kind == IR_S_SEQ && !writes_fragment(it, it->u.gemm.b.buf)) {
      last = it;
      last_smem = r->u.seq.items[0]->u.alloc.buf; /* stage_b: alloc, copy, GEMM */
    } else if (!(it->kind == IR_S_GEMM && last && !writes_fragment(it, last->u.gemm.b.buf))) {
      last = NULL; /* anything but a GEMM that leaves the fragment alone ends the run */
    }
  }
  IrStmt *out = ir_stmt(c, IR_S_SEQ, s->loc);
  *out = *s;
  out->u.seq.items = (IrStmt **)items.items;
  out->u.seq.n = items.len;
  return out;
}

IrStmt *pass_stage_gemm_b(TsCompiler *c, IrStmt *body) { return stage_gemm_b_fn(c, body, NULL); }
