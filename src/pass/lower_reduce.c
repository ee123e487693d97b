/* lower_reduce.c — T.reduce from tile level to thread level (lower_tile_ops.c's reductions),
 * on the fragment layouts layout_inference chose:
 *   1. each thread folds the elements of the reduced dim it owns into registers red[];
 *   2. a butterfly of SHFL_XOR over the threads of the reduced dim inside a warp;
 *   3. threads of that dim in other warps exchange partials through a shared-memory scratch
 *      buffer (its barriers come from thread_sync, which sees the accesses like any others);
 *   4. dst is written (the old value folded in when clear=False).
 * Steps 1-2 and the scratch stores are the "pre" part, the rest the "post" part, so that
 * consecutive reductions can share one barrier (lower_tile_ops.c lower_seq). */
#include "../layout/fragment.h"
#include "passes.h"

static IrExpr *i32(const ReduceLowering *lw, int64_t v) { return ir_i32(lw->c, v); }
static IrExpr *bin(const ReduceLowering *lw, IrExprKind k, IrExpr *a, IrExpr *b) { return ir_binary(lw->c, k, a, b, SRCLOC_NONE); }
static IrVar *new_var(const ReduceLowering *lw, const char *base) {
  return ir_var(lw->c, arena_printf(lw->c->arena, "%s%d", base, (*lw->counter)++), TS_DTYPE_INT32, IR_VAR_LOOP,
                SRCLOC_NONE);
}
static IrStmt *unrolled(const ReduceLowering *lw, IrVar *v, int64_t ext, IrStmt *body) {
  return ir_for(lw->c, v, i32(lw, 0), i32(lw, ext), IR_FOR_UNROLLED, body, SRCLOC_NONE);
}

static IrExpr *red_init(const ReduceLowering *lw, IrReduceKind op, ts_dtype t) { return ir_reduce_identity(lw->c, op, t); }
static IrExpr *red_combine(const ReduceLowering *lw, IrReduceKind op, bool nan, IrExpr *a, IrExpr *b) {
  return ir_reduce_combine(lw->c, op, nan, a, b);
}

static IrExpr *load1(const ReduceLowering *lw, IrBuffer *b, IrExpr *i) { return ir_load(lw->c, b, &i, 1, SRCLOC_NONE); }
static IrStmt *store1(const ReduceLowering *lw, IrBuffer *b, IrExpr *i, IrExpr *v) { return ir_store(lw->c, b, &i, 1, v, SRCLOC_NONE); }

/* A reduction lowered in two parts: *pre (each thread's fold, the in-warp shuffles and the
 * partials' stores to shared memory) and *post (after the barrier thread_sync puts there: the
 * partials folded, dst written).  Consecutive reductions run all their pre parts before their
 * post parts (lower_seq), so one barrier serves them all. */
bool reduce_lower_parts(const ReduceLowering *lw, IrStmt *s, PtrVec *pre, PtrVec *post) {
  TsCompiler *c = lw->c;
  IrBuffer *src = s->u.reduce.src, *dst = s->u.reduce.dst;
  const Fragment *FS = src->fragment, *FD = dst->fragment;
  if (!FS || !FD) {
    ts_error(c, s->loc, "T.reduce: fragments without layout");
    return false;
  }
  int r = s->u.reduce.dim, n = FS->ndim;
  IrReduceKind op = s->u.reduce.op;
  bool nan = s->u.reduce.nan_propagate;
  ts_dtype t = dst->dtype;
  int64_t nd = fragment_local_size(FD);
  /* Per-thread partials live in a register array red[nd]. */
  IrBuffer *red = ir_buffer(c, arena_printf(c->arena, "%s_red%d", dst->name, (*lw->counter)++), t, IR_SCOPE_LOCAL, 1,
                            (IrExpr *[]){i32(lw, nd)}, s->loc);
  red->local_size = nd;
  IrStmt *al = ir_stmt(c, IR_S_ALLOC, s->loc);
  al->u.alloc.buf = red;
  vec_push(c->arena, pre, al);

  /* Loops over the kept dims k != r: o_k (outer), m_k (mid) and u_k (lanes);
   * l_k = (o_k*M_k + m_k)*V_k + u_k. */
  IrVar *ov[FRAG_MAX_DIMS] = {0}, *uv[FRAG_MAX_DIMS] = {0}, *mv[FRAG_MAX_DIMS] = {0};
  IrExpr *l[FRAG_MAX_DIMS];
  for (int k = 0; k < n; k++) {
    const FragDim *d = &FS->dim[k];
    IrExpr *o = i32(lw, 0), *u = i32(lw, 0), *m = i32(lw, 0);
    if (fragment_outer(FS, k) > 1) o = ir_varref(c, ov[k] = new_var(lw, "o"), SRCLOC_NONE);
    if (fragdim_mid(d) > 1) m = ir_varref(c, mv[k] = new_var(lw, "m"), SRCLOC_NONE);
    if (d->vec > 1) u = ir_varref(c, uv[k] = new_var(lw, "u"), SRCLOC_NONE);
    l[k] = bin(lw, IR_ADD, bin(lw, IR_MUL, bin(lw, IR_ADD, bin(lw, IR_MUL, o, i32(lw, fragdim_mid(d))), m), i32(lw, d->vec)), u);
  }
  IrExpr *sreg = i32(lw, 0), *dreg = i32(lw, 0);
  for (int k = 0, p = 0; k < n; k++) {
    sreg = bin(lw, IR_ADD, sreg, bin(lw, IR_MUL, l[k], i32(lw, fragment_reg_stride(FS, k))));
    if (k == r) {
      if (FD->ndim == n) p++;
      continue;
    }
    dreg = bin(lw, IR_ADD, dreg, bin(lw, IR_MUL, l[k], i32(lw, fragment_reg_stride(FD, p))));
    p++;
  }
  /* Wraps `body` in the loops of the kept dims (or of the reduced dim). */
#define WRAP_KEPT(body)                                                                   \
  do {                                                                                    \
    for (int k = n - 1; k >= 0; k--)                                                      \
      if (k != r && uv[k]) body = unrolled(lw, uv[k], FS->dim[k].vec, body);              \
    for (int k = n - 1; k >= 0; k--)                                                      \
      if (k != r && mv[k]) body = unrolled(lw, mv[k], fragdim_mid(&FS->dim[k]), body);    \
    for (int k = n - 1; k >= 0; k--)                                                      \
      if (k != r && ov[k]) body = unrolled(lw, ov[k], fragment_outer(FS, k), body);       \
  } while (0)

  /* 1. each thread folds the elements it owns along dim r. */
  const FragDim *dr = &FS->dim[r];
  IrExpr *x = ir_cast(c, t, load1(lw, src, sreg), s->loc);
  if (op == IR_RED_ABSMAX || op == IR_RED_ABSSUM) x = ir_call(c, IRI_ABS, t, &x, 1, s->loc);
  IrStmt *fold = store1(lw, red, dreg, red_combine(lw, op, nan, load1(lw, red, dreg), x));
  if (dr->extent % fragdim_span(dr) != 0) {
    /* padding of the reduced dim: i_r = o*span + c2*V*t*M + m*V*t + c*V + u < extent
     * (padding only arises for plain block layouts, where M = t2 = 1) */
    IrExpr *cr = dr->threads > 1 ? bin(lw, IR_FLOORMOD, bin(lw, IR_FLOORDIV, lw->tid, i32(lw, dr->tstride)), i32(lw, dr->threads)) : i32(lw, 0);
    IrExpr *o = ov[r] ? ir_varref(c, ov[r], SRCLOC_NONE) : i32(lw, 0), *u = uv[r] ? ir_varref(c, uv[r], SRCLOC_NONE) : i32(lw, 0);
    IrExpr *ir = bin(lw, IR_ADD, bin(lw, IR_ADD, bin(lw, IR_MUL, o, i32(lw, fragdim_span(dr))), bin(lw, IR_MUL, cr, i32(lw, dr->vec))), u);
    fold = ir_if(c, bin(lw, IR_LT, ir, i32(lw, dr->extent)), fold, NULL, s->loc);
  }
  if (uv[r]) fold = unrolled(lw, uv[r], dr->vec, fold);
  if (mv[r]) fold = unrolled(lw, mv[r], fragdim_mid(dr), fold);
  if (ov[r]) fold = unrolled(lw, ov[r], fragment_outer(FS, r), fold);
  IrStmt *step1 = ir_seq(c, (IrStmt *[]){store1(lw, red, dreg, red_init(lw, op, t)), fold}, 2, s->loc);

  /* 2. butterfly over the threads of dim r inside a warp: lanes differing in bits of c_r. */
  PtrVec sh = {0};
  int64_t S = 0, nh = 1;
  /* Thread masks of both thread fields of dim r; those >= 32 cross warps and must form
   * one contiguous group S, 2S, 4S, ... (true for block and tensor-core layouts). */
  int64_t masks[64];
  int nmask = 0;
  for (int64_t m = 1; m < dr->threads && nmask < 64; m *= 2) masks[nmask++] = m * dr->tstride;
  for (int64_t m = 1; m < fragdim_t2(dr) && nmask < 64; m *= 2) masks[nmask++] = m * dr->tstride2;
  for (int mi = 0; mi < nmask; mi++) {
    int64_t mask = masks[mi];
    if (mask >= 32) {
      if (!S) S = mask;
      else if (mask != S * nh) ts_error(c, s->loc, "T.reduce: this fragment layout spreads dim %d over warps in a way the reduction does not support", r);
      nh *= 2;
      continue;
    }
    IrExpr *args[2] = {load1(lw, red, dreg), i32(lw, mask)};
    IrExpr *other = ir_call(c, IRI_SHFL_XOR, t, args, 2, s->loc);
    vec_push(c->arena, &sh, store1(lw, red, dreg, red_combine(lw, op, nan, load1(lw, red, dreg), other)));
  }
  IrStmt *step12 = ir_seq(c, (IrStmt *[]){step1, ir_seq_vec(c, &sh, s->loc)}, 2, s->loc);
  WRAP_KEPT(step12);
  vec_push(c->arena, pre, step12);

  /* 3. across warps: partials through shared memory, then each thread folds the nh
   *    partials of its group (thread tid - c_hi*S + h*S for h < nh). */
  if (S) {
    IrBuffer *scratch = ir_buffer(c, arena_printf(c->arena, "%s_red_smem%d", dst->name, (*lw->counter)++), t,
                                  IR_SCOPE_SHARED_DYN, 1, (IrExpr *[]){i32(lw, nd * lw->T)}, s->loc);
    IrStmt *sal = ir_stmt(c, IR_S_ALLOC, s->loc);
    sal->u.alloc.buf = scratch;
    vec_push(c->arena, lw->kallocs, sal);
    vec_push(c->arena, lw->scratch, scratch);
    IrExpr *slot = bin(lw, IR_ADD, bin(lw, IR_MUL, dreg, i32(lw, lw->T)), lw->tid);
    IrStmt *put = store1(lw, scratch, slot, load1(lw, red, dreg));
    WRAP_KEPT(put);
    IrVar *h = new_var(lw, "h");
    IrExpr *chi = bin(lw, IR_FLOORDIV, lw->tid, i32(lw, S));
    if (S * nh < lw->T) chi = bin(lw, IR_FLOORMOD, chi, i32(lw, nh));
    IrExpr *peer = bin(lw, IR_ADD, bin(lw, IR_SUB, lw->tid, bin(lw, IR_MUL, chi, i32(lw, S))),
                       bin(lw, IR_MUL, ir_varref(c, h, SRCLOC_NONE), i32(lw, S)));
    IrExpr *pslot = bin(lw, IR_ADD, bin(lw, IR_MUL, dreg, i32(lw, lw->T)), peer);
    IrStmt *get = ir_seq(c, (IrStmt *[]){store1(lw, red, dreg, red_init(lw, op, t)),
                                          unrolled(lw, h, nh, store1(lw, red, dreg, red_combine(lw, op, nan, load1(lw, red, dreg), load1(lw, scratch, pslot))))},
                         2, s->loc);
    WRAP_KEPT(get);
    /* The barrier between put and get (and before the next put when this runs in a
     * loop) comes from thread_sync, which sees the scratch accesses like any others. */
    vec_push(c->arena, pre, put);
    vec_push(c->arena, post, get);
  }

  /* 4. write dst (folding the old value when clear=False). */
  IrExpr *res = load1(lw, red, dreg);
  if (!s->u.reduce.clear) res = red_combine(lw, op, nan, load1(lw, dst, dreg), res);
  IrStmt *wr = store1(lw, dst, dreg, res);
  WRAP_KEPT(wr);
  vec_push(c->arena, post, wr);
#undef WRAP_KEPT
  return true;
}

