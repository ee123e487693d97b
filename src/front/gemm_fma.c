/* gemm_fma.c — T.gemm where the tensor cores have no instruction for the operand types, the
 * transposes or the target (float64, mixed types, 8-bit operands not K-major, pre-sm_80 targets;
 * layout.c gemm_tensor_core_types decides): the product with FMA, as TileLang falls back to.
 *
 *   for i, j in T.Parallel(M, N):      # C's tile, each element in the thread layout gives it
 *       C[i, j] = 0                    # clear_accum (or `if cond:` for a run-time one)
 *       for k in T.serial(K):
 *           C[i, j] += C(A[i, k]) * C(B[k, j])     # A[k, i] / B[j, k] when transposed
 *
 * The operands are shared tiles or fragments (layout inference then keeps in each thread the
 * rows of A and the columns of B its elements of C need, as for any such nest), C a fragment or
 * a shared tile.  Correct, not fast: every product is one FMA in C's type. */
#include "builtin.h"

#include "../layout/layout.h"

static bool shared(const IrBuffer *b) { return b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN; }
static bool on_chip(const IrBuffer *b) { return shared(b) || b->scope == IR_SCOPE_FRAGMENT; }

/* The element of 2-D-or-more region r at row `row`, column `col` of its last two dims. */
static IrExpr *tile_elem(TsCompiler *c, const IrRegion *r, IrExpr *row, IrExpr *col, SrcLoc loc) {
  int n = r->ndim;
  IrExpr **idx = ARENA_ARRAY(c->arena, IrExpr *, n);
  for (int d = 0; d < n - 2; d++) idx[d] = r->min[d];
  idx[n - 2] = ir_simplify(c, ir_binary(c, IR_ADD, r->min[n - 2], row, loc));
  idx[n - 1] = ir_simplify(c, ir_binary(c, IR_ADD, r->min[n - 1], col, loc));
  return ir_load(c, r->buf, idx, n, loc);
}

/* Whether the GEMM takes the FMA path: its types have no tensor-core instruction, and its
 * operands are where the FMA loop reads them. */
bool bi_gemm_needs_fma(TsCompiler *c, const IrStmt *g) {
  const IrRegion *A = &g->u.gemm.a, *B = &g->u.gemm.b, *C = &g->u.gemm.c;
  if (gemm_tensor_core_types(c, g)) return false;
  return on_chip(A->buf) && on_chip(B->buf) && on_chip(C->buf) && A->ndim >= 2 && B->ndim >= 2 && C->ndim >= 2;
}

/* Emits the FMA loop nest of GEMM g; clear_if: a run-time clear_accum condition, or NULL. */
bool bi_gemm_fma(Eval *ev, const IrStmt *g, IrExpr *clear_if) {
  TsCompiler *c = ev->c;
  SrcLoc loc = g->loc;
  const IrRegion *A = &g->u.gemm.a, *B = &g->u.gemm.b, *C = &g->u.gemm.c;
  bool trans_a = g->u.gemm.trans_a, trans_b = g->u.gemm.trans_b;
  IrExpr *M = C->extent[C->ndim - 2], *N = C->extent[C->ndim - 1];
  IrExpr *K = trans_a ? A->extent[A->ndim - 2] : A->extent[A->ndim - 1];
  IrVar *vi = ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc), *vj = ir_var(c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrVar *vk = ir_var(c, "k", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *i = ir_varref(c, vi, loc), *j = ir_varref(c, vj, loc), *k = ir_varref(c, vk, loc);
  ts_dtype ct = C->buf->dtype;
  IrExpr *a = ir_cast(c, ct, trans_a ? tile_elem(c, A, k, i, loc) : tile_elem(c, A, i, k, loc), loc);
  IrExpr *b = ir_cast(c, ct, trans_b ? tile_elem(c, B, j, k, loc) : tile_elem(c, B, k, j, loc), loc);
  IrExpr *cl = tile_elem(c, C, i, j, loc);
  IrStmt *acc = ir_store(c, C->buf, cl->u.load.idx, C->ndim,
                         ir_binary(c, IR_ADD, cl, ir_binary(c, IR_MUL, a, b, loc), loc), loc);
  IrStmt *body[2];
  int n = 0;
  if (g->u.gemm.clear_accum || clear_if) {
    IrStmt *zero = ir_store(c, C->buf, cl->u.load.idx, C->ndim, ir_cast(c, ct, ir_i32(c, 0), loc), loc);
    body[n++] = clear_if ? ir_if(c, clear_if, zero, NULL, loc) : zero;
  }
  body[n++] = ir_for(c, vk, ir_i32(c, 0), K, IR_FOR_SERIAL, acc, loc);
  IrStmt *nest = ir_for(c, vj, ir_i32(c, 0), N, IR_FOR_PARALLEL, ir_seq(c, body, n, loc), loc);
  ev_emit(ev, ir_for(c, vi, ir_i32(c, 0), M, IR_FOR_PARALLEL, nest, loc));
  return true;
}
