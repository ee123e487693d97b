/* lower_gemm.c — T.gemm and T.gemm_sp as one call of a device template each (used by
 * lower_tile_ops): ts::gemm_ss_mma / gemm_rs_mma / gemm_ss_mma4 (mma.sync), gemm_ss_wgmma /
 * gemm_rs_wgmma and their issue / wait halves (wgmma), gemm_sp_ss_mma (mma.sp), with the
 * plan's tile sizes, warp grid, swizzles and element type as attributes.  The operands must
 * be whole shared tiles (or column windows of whole swizzle atoms) whose first elements'
 * addresses lower_tile_ops gives (through their layouts), and the accumulator must have the
 * plan's C fragment. */
#include "../layout/layout.h"
#include "passes.h"

typedef struct GemmAddr {
  GemmRegionAddr addr;
  void *ctx;
} GemmAddr;

/* The tile of an operand must be the whole last-two-dim tile of its buffer: the device
 * templates address it from its first element with the buffer's layout.  Or, for a swizzled
 * operand (tile layout `want`), a window of whole atoms over all rows of a buffer laid out
 * with the same swizzle (layout_widen): its atoms are stored as a tile of their own. */
static bool whole_tile(const IrRegion *r, const Layout *want) {
  int64_t mn[2], ext[2], shp[2];
  bool col_const = true; /* a window's first column may be a multiple of the atom, e.g. j * 64 */
  for (int k = 0; k < 2; k++) {
    int d = r->ndim - 2 + k;
    if (d < 0 || !ir_is_const_int(r->extent[d], &ext[k]) || !ir_is_const_int(r->buf->shape[d], &shp[k])) return false;
    if (!ir_is_const_int(r->min[d], &mn[k])) {
      if (k == 0) return false;
      col_const = false;
      mn[1] = -1;
    }
  }
  if (col_const && mn[0] == 0 && ext[0] == shp[0] && mn[1] == 0 && ext[1] == shp[1]) return true;
  const Layout *have = r->buf->layout;
  if (!want || !want->swizzle || !have || have->swizzle != want->swizzle || have->elem_bytes != want->elem_bytes ||
      have->rows != shp[0] || have->cols != shp[1])
    return false;
  int64_t atom = layout_atom_cols(want);
  bool col_ok = col_const ? mn[1] % atom == 0 : ir_is_multiple(r->min[r->ndim - 1], atom);
  return mn[0] == 0 && ext[0] == shp[0] && col_ok && ext[1] % atom == 0;
}

/* T.gemm_sp -> ts::gemm_sp_ss_mma (device/tilescale/gemm_sp.cuh): A, E and B whole shared
 * tiles (E row-major), C the accumulator fragment of the plan. */
static IrStmt *lower_gemm_sp(TsCompiler *c, IrStmt *s, const GemmPlan *p, IrExpr *tid, const GemmAddr *ga) {
  const IrRegion *A = &s->u.gemm.a, *E = &s->u.gemm.e, *B = &s->u.gemm.b, *C = &s->u.gemm.c;
  if (!whole_tile(A, p->a_layout) || !whole_tile(B, p->b_layout) || !whole_tile(E, NULL)) {
    ts_error(c, s->loc, "T.gemm_sp: A_sparse, E and B must be whole shared tiles (slices of a tile are not supported "
                        "yet)");
    return NULL;
  }
  if (!C->buf->fragment || !fragment_equal(C->buf->fragment, p->c_frag)) {
    ts_error(c, s->loc, "layout conflict for fragment '%s': T.gemm_sp needs its accumulator layout", C->buf->name);
    return NULL;
  }
  IrExpr *c0 = ir_i32(c, 0);
  IrExpr *cld = ir_load(c, C->buf, &c0, 1, s->loc);
  int swa = p->a_layout ? p->a_layout->swizzle : 0, swb = p->b_layout ? p->b_layout->swizzle : 0;
  int64_t attrs[10] = {p->m, p->n, p->k, p->wm, p->wn, s->u.gemm.trans_b, swa, swb, s->u.gemm.clear_accum,
                       A->buf->dtype};
  IrExpr *args[5] = {ga->addr(ga->ctx, A, s->loc), ga->addr(ga->ctx, E, s->loc), ga->addr(ga->ctx, B, s->loc),
                     ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &cld, 1, s->loc), tid};
  return ir_device_stmt(c, IRD_GEMM_SP_SS_MMA, attrs, 10, args, 5, s->loc);
}

/* T.gemm -> one call of a device template (device/tilescale/gemm.cuh) that runs the
 * warp-level (mma.sync) or warpgroup-level (wgmma) loops over K; its accumulator layout
 * is exactly the C fragment layout_inference chose (fragment_gemm_acc). */
IrStmt *gemm_lower(TsCompiler *c, IrStmt *s, IrExpr *tid, GemmRegionAddr addr, void *ctx) {
  const GemmAddr g = {addr, ctx}, *ga = &g;
  if (!s->u.gemm.plan) return NULL; /* plan_gemm reported it */
  GemmPlan p = *s->u.gemm.plan;
  /* mma.sp is synchronous: the wait half of a GEMM split by inject_pipeline is nothing */
  if (p.path == GEMM_MMA_SP) return s->u.gemm.wg_wait <= -2 ? NULL : lower_gemm_sp(c, s, &p, tid, ga);
  const IrRegion *A = &s->u.gemm.a, *B = &s->u.gemm.b, *C = &s->u.gemm.c;
  if ((!p.a_in_regs && !whole_tile(A, p.a_layout)) || !whole_tile(B, p.b_layout)) {
    ts_error(c, s->loc, "T.gemm: A and B must be whole shared tiles, or column windows of a swizzled tile that span all "
                        "its rows and whole swizzle atoms (other slices of a tile are not supported yet)");
    return NULL;
  }
  if (!C->buf->fragment || !fragment_equal(C->buf->fragment, p.c_frag)) {
    ts_error(c, s->loc, "layout conflict for fragment '%s': T.gemm needs its accumulator layout", C->buf->name);
    return NULL;
  }
  if (p.a_in_regs && (!A->buf->fragment || !fragment_equal(A->buf->fragment, p.a_frag) || !whole_tile(A, NULL))) {
    ts_error(c, s->loc, "layout conflict for fragment '%s': T.gemm with A in registers needs the whole fragment in the "
                        "tensor-core operand layout", A->buf->name);
    return NULL;
  }
  IrExpr *c0 = ir_i32(c, 0);
  IrExpr *cld = ir_load(c, C->buf, &c0, 1, s->loc);
  IrExpr *cptr = ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &cld, 1, s->loc);
  if (s->u.gemm.wg_wait <= -2) {
    /* The wait half of a split wgmma (inject_pipeline, T.wait_wgmma): -2 waits for all
     * groups, -3 leaves the latest one in flight, -4 - n leaves n (T.wait_wgmma(n));
     * mma.sync is synchronous. */
    if (p.path != GEMM_WGMMA) return NULL;
    int pending = s->u.gemm.wg_wait == -3 ? 1 : s->u.gemm.wg_wait <= -4 ? -4 - s->u.gemm.wg_wait : 0;
    int64_t attrs[2] = {fragment_local_size(p.c_frag), pending};
    return ir_device_stmt(c, IRD_GEMM_WGMMA_WAIT, attrs, 2, &cptr, 1, s->loc);
  }
  int swa = p.a_layout ? p.a_layout->swizzle : 0, swb = p.b_layout ? p.b_layout->swizzle : 0;
  bool issue = s->u.gemm.wg_wait == -1, wg = p.path == GEMM_WGMMA;
  /* the template's element type T is A's (B's and the accumulator's are deduced) */
  int64_t ty = A->buf->dtype, clear = s->u.gemm.clear_accum, ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
  if (p.a_in_regs) {
    /* RS: the A fragment's registers are the instruction's A operand (replicated over
     * the WN warp / warpgroup columns).  WM counts warpgroups for wgmma, warps for mma. */
    int64_t attrs[10] = {p.m, p.n, p.k, wg ? p.wm / 4 : p.wm, p.wn, ta, tb, swb, clear, ty};
    IrExpr *a0 = ir_load(c, A->buf, &c0, 1, s->loc);
    IrExpr *args[4] = {ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &a0, 1, s->loc), ga->addr(ga->ctx, B, s->loc), cptr,
                       tid};
    IrDeviceOp op = !wg ? IRD_GEMM_RS_MMA : issue ? IRD_GEMM_RS_WGMMA_ISSUE : IRD_GEMM_RS_WGMMA;
    return ir_device_stmt(c, op, attrs, 10, args, 4, s->loc);
  }
  if (dtype_is_packed(A->buf->dtype)) { /* 4-bit: K-major row-major byte tiles (layout.c), mma.sync */
    int64_t attrs4[7] = {p.m, p.n, p.k, p.wm, p.wn, clear, ty};
    IrExpr *args[4] = {ga->addr(ga->ctx, A, s->loc), ga->addr(ga->ctx, B, s->loc), cptr, tid};
    return ir_device_stmt(c, IRD_GEMM_SS_MMA4, attrs4, 7, args, 4, s->loc);
  }
  int64_t attrs[11] = {p.m, p.n, p.k, wg ? p.wm / 4 : p.wm, p.wn, ta, tb, swa, swb, clear, ty};
  IrDeviceOp op = !wg ? IRD_GEMM_SS_MMA : issue ? IRD_GEMM_SS_WGMMA_ISSUE : IRD_GEMM_SS_WGMMA;
  IrExpr *args[4] = {ga->addr(ga->ctx, A, s->loc), ga->addr(ga->ctx, B, s->loc), cptr, tid};
  return ir_device_stmt(c, op, attrs, 11, args, 4, s->loc);
}
