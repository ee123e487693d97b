/* layout.c — shared-memory swizzle layouts and GEMM planning (layout.h).
 *
 * The plan is computed twice from the same inputs — by layout_inference (to fix the C
 * fragment and the A/B shared layouts) and by lower_tile_ops (to print the device-template
 * call) — so it is a pure function of the statement, the thread count and the target. */
#include "layout.h"

#include <string.h>

Layout *layout_swizzled(TsCompiler *c, int64_t rows, int64_t cols, int elem_bytes) {
  if (rows <= 0 || rows % 8 || elem_bytes > 4) return NULL;
  int64_t row_bytes = cols * elem_bytes;
  int w = row_bytes % 128 == 0 ? 128 : row_bytes % 64 == 0 ? 64 : row_bytes % 32 == 0 ? 32 : 0;
  if (!w) return NULL;
  Layout *l = ARENA_NEW(c->arena, Layout);
  l->swizzle = w;
  l->elem_bytes = elem_bytes;
  l->rows = rows;
  l->cols = cols;
  return l;
}

/* The swizzled layout of GEMM operand tile r ([rows x cols], elem_bytes): for a column window
 * of a wider buffer (Q[:, :512] and Q[:, 512:]), the widest swizzle that also tiles the
 * buffer's whole rows and starts on the window's first column, so that every window of the
 * buffer agrees on one layout of the whole tile (layout_widen). */
static Layout *operand_layout(TsCompiler *c, const IrRegion *r, int64_t rows, int64_t cols, int elem_bytes) {
  Layout *l = layout_swizzled(c, rows, cols, elem_bytes);
  const IrBuffer *b = r->buf;
  int64_t full, start;
  if (!l || b->ndim < 2 || r->ndim != b->ndim || !ir_is_const_int(b->shape[b->ndim - 1], &full) || full == cols)
    return l;
  if (!ir_is_const_int(r->min[r->ndim - 1], &start)) start = 0;
  while (l->swizzle > 32 && ((full * elem_bytes) % l->swizzle || (start * elem_bytes) % l->swizzle)) l->swizzle /= 2;
  return (full * elem_bytes) % l->swizzle || (start * elem_bytes) % l->swizzle ? NULL : l;
}

Layout *layout_pinned(TsCompiler *c, LayoutKind kind, int64_t rows, int64_t cols, int elem_bytes, SrcLoc loc,
                      const char **why) {
  Layout *l = NULL;
  *why = NULL;
  if (kind == LAYOUT_AUTO) {
    l = layout_swizzled(c, rows, cols, elem_bytes);
  } else if (kind != LAYOUT_LINEAR) {
    int w = kind == LAYOUT_FULL ? 128 : kind == LAYOUT_HALF ? 64 : 32;
    if (elem_bytes > 4)
      *why = arena_printf(c->arena, "%d-byte elements cannot be swizzled", elem_bytes);
    else if ((cols * elem_bytes) % w)
      *why = arena_printf(c->arena, "rows of %lld bytes are not a multiple of the %d-byte swizzle",
                          (long long)(cols * elem_bytes), w);
    else if (rows % 8)
      *why = arena_printf(c->arena, "%lld rows are not a multiple of the 8-row swizzle period", (long long)rows);
    if (*why) return NULL;
    l = ARENA_NEW(c->arena, Layout);
    l->swizzle = w;
  }
  if (!l) { /* linear, or AUTO on a tile no swizzle fits */
    l = ARENA_NEW(c->arena, Layout);
    l->swizzle = 0;
  }
  l->elem_bytes = elem_bytes;
  l->rows = rows;
  l->cols = cols;
  l->pinned = true;
  l->loc = loc;
  return l;
}

bool layout_equal(const Layout *a, const Layout *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->swizzle == b->swizzle && a->elem_bytes == b->elem_bytes && a->rows == b->rows && a->cols == b->cols;
}

Layout *layout_widen(TsCompiler *c, const Layout *win, int64_t rows, int64_t cols) {
  if (!win || (win->rows == rows && win->cols == cols)) return (Layout *)win;
  if (!win->swizzle || win->pinned || win->rows != rows || (cols * win->elem_bytes) % win->swizzle) return NULL;
  Layout *l = ARENA_NEW(c->arena, Layout);
  *l = *win;
  l->cols = cols;
  return l;
}

int64_t layout_atom_cols(const Layout *l) { return l->swizzle ? l->swizzle / l->elem_bytes : l->cols; }

int64_t layout_offset_const(const Layout *l, int64_t r, int64_t col) {
  if (!l->swizzle) return r * l->cols + col;
  int64_t A = layout_atom_cols(l), vec = 16 / l->elem_bytes;
  int64_t a = col / A, cc = col % A;
  int64_t f = ((r * l->swizzle) >> 7) & (l->swizzle / 16 - 1);
  return a * (l->rows * A) + r * A + (((cc / vec) ^ f) * vec) + cc % vec;
}

static IrExpr *bin(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b) { return ir_binary(c, k, a, b, SRCLOC_NONE); }
static IrExpr *cst(TsCompiler *c, int64_t v) { return ir_i32(c, v); }

/* Offset of element (r, col) of one tile. */
static IrExpr *tile_offset(TsCompiler *c, const Layout *l, IrExpr *r, IrExpr *col) {
  if (!l->swizzle) return bin(c, IR_ADD, bin(c, IR_MUL, r, cst(c, l->cols)), col);
  int64_t A = layout_atom_cols(l), vec = 16 / l->elem_bytes;
  IrExpr *a = bin(c, IR_FLOORDIV, col, cst(c, A)), *cc = bin(c, IR_FLOORMOD, col, cst(c, A));
  /* f = (r * W >> 7) & (W/16 - 1), written with division so the simplifier folds it */
  IrExpr *f = bin(c, IR_FLOORMOD, bin(c, IR_FLOORDIV, r, cst(c, 128 / l->swizzle)), cst(c, l->swizzle / 16));
  IrExpr *chunk = bin(c, IR_BITXOR, bin(c, IR_FLOORDIV, cc, cst(c, vec)), f);
  return bin(c, IR_ADD, bin(c, IR_MUL, a, cst(c, l->rows * A)),
             bin(c, IR_ADD, bin(c, IR_MUL, r, cst(c, A)),
                 bin(c, IR_ADD, bin(c, IR_MUL, chunk, cst(c, vec)), bin(c, IR_FLOORMOD, cc, cst(c, vec)))));
}

/* The buffer's last two extents are the layout's tile (rows x cols). */
static bool shaped_like(const Layout *l, const IrBuffer *buf) {
  int64_t r, cc;
  return buf->ndim >= 2 && ir_is_const_int(buf->shape[buf->ndim - 2], &r) &&
         ir_is_const_int(buf->shape[buf->ndim - 1], &cc) && r == l->rows && cc == l->cols;
}

IrExpr *layout_offset(TsCompiler *c, const Layout *l, const IrBuffer *buf, IrExpr *const *idx, int nidx) {
  TS_ASSERT(nidx >= 1 && nidx == buf->ndim);
  /* Leading dims (pipeline stages, batches of tiles) stack whole tiles, row-major. */
  IrExpr *lead = NULL, *r, *col;
  if (shaped_like(l, buf) || (nidx >= 2 && !buf->alias_of)) {
    r = idx[nidx - 2], col = idx[nidx - 1];
    for (int k = 0; k < nidx - 2; k++) {
      int64_t ext = 1;
      if (!ir_is_const_int(buf->shape[k], &ext)) ext = 1;
      lead = lead ? bin(c, IR_ADD, bin(c, IR_MUL, lead, cst(c, ext)), idx[k]) : idx[k];
    }
  } else {
    /* A view shaped otherwise (view_layouts.c: [N] over a [R x C] tile): its row-major
     * element number, cut into the layout's rows of `cols` elements and tiles of `rows` rows. */
    IrExpr *flat = idx[0];
    for (int k = 1; k < nidx; k++) {
      int64_t ext = 1;
      ir_is_const_int(buf->shape[k], &ext);
      flat = bin(c, IR_ADD, bin(c, IR_MUL, flat, cst(c, ext)), idx[k]);
    }
    IrExpr *row = bin(c, IR_FLOORDIV, flat, cst(c, l->cols));
    col = bin(c, IR_FLOORMOD, flat, cst(c, l->cols));
    r = bin(c, IR_FLOORMOD, row, cst(c, l->rows));
    lead = bin(c, IR_FLOORDIV, row, cst(c, l->rows));
  }
  IrExpr *off = tile_offset(c, l, r, col);
  if (lead) off = bin(c, IR_ADD, bin(c, IR_MUL, lead, cst(c, l->rows * l->cols)), off);
  return off;
}

/* ---- GEMM planning ---------------------------------------------------------------------- */

/* The two non-unit extents of a region (the tile), or false. */
static bool tile2(const IrRegion *r, int64_t *rows, int64_t *cols) {
  int64_t e[2];
  int n = 0;
  for (int k = 0; k < r->ndim; k++) {
    int64_t x;
    if (!ir_is_const_int(r->extent[k], &x)) return false;
    if (x != 1 || k >= r->ndim - 2) {
      if (k < r->ndim - 2) return false; /* tiles live in the last two dims */
      if (n == 2) return false;
      e[n++] = x;
    }
  }
  if (n != 2) return false;
  *rows = e[0];
  *cols = e[1];
  return true;
}

static bool is_shared(const IrBuffer *b) { return b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN; }

static bool dtype_16bit_float(ts_dtype t) { return t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16; }

/* Warp grid for mma.sync: wm x wn = nwarps with M % 16wm == 0 and N % 8wn == 0.
 * Square keeps warp tiles close to square (fewest shared loads per mma); FullRow puts
 * every warp along M, FullCol along N. */
static bool mma_grid(int64_t M, int64_t N, int64_t nw, int policy, int64_t *wm, int64_t *wn) {
  int64_t best_m = 0;
  double best = 1e30;
  for (int64_t m = 1; m <= nw; m++) {
    if (nw % m || M % (16 * m) || N % (8 * (nw / m))) continue;
    double tm = (double)M / (double)m, tn = (double)N / (double)(nw / m);
    double score = policy == 1 ? -(double)m : policy == 2 ? (double)m : (tm > tn ? tm / tn : tn / tm);
    if (score < best) {
      best = score;
      best_m = m;
    }
  }
  if (!best_m) return false;
  *wm = best_m;
  *wn = nw / best_m;
  return true;
}

static bool is_fp8(ts_dtype t) { return t == TS_DTYPE_FLOAT8_E4M3 || t == TS_DTYPE_FLOAT8_E5M2; }

/* The operand/accumulator types the tensor cores take (PTX mma.sync and wgmma):
 *   float16 x float16 -> float32 | float16     bfloat16 x bfloat16 -> float32
 *   float32 x float32 -> float32 (as tf32)      int8 x int8 | uint8 x uint8 -> int32
 *   fp8 (e4m3/e5m2, mixed) -> float32 (| float16 with wgmma); mma.sync needs sm_89+.
 *   int4 x int4 | uint4 x uint4 -> int32 (mma.sync m16n8k64; wgmma has no 4-bit type).
 * The 8- and 32-bit types exist only K-major (A [M][K], B [N][K]): ldmatrix and wgmma
 * transpose 16-bit elements only.  False with a diagnostic at the T.gemm line. */
/* A diagnostic at the T.gemm line, unless the caller only asks whether a plan exists. */
#define PLAN_ERROR(c, ...)                                                                         \
  do {                                                                                              \
    if (report) ts_error(c, __VA_ARGS__);                                                           \
  } while (0)

static bool gemm_types_ok(TsCompiler *c, const IrStmt *s, ts_dtype at, ts_dtype bt, ts_dtype ct, bool report) {
  bool ok;
  const char *why = "";
  if (c->target.sm < 80) { /* the mma.sync shapes used here (m16n8k16, tf32, int8 k32) are sm_80's */
    PLAN_ERROR(c, s->loc, "T.gemm: the tensor-core GEMM needs sm_80 or newer (target is sm_%d)", c->target.sm);
    return false;
  }
  if (dtype_16bit_float(at))
    ok = at == bt && (ct == TS_DTYPE_FLOAT32 || (at == TS_DTYPE_FLOAT16 && ct == TS_DTYPE_FLOAT16));
  else if (at == TS_DTYPE_FLOAT32)
    ok = bt == at && ct == TS_DTYPE_FLOAT32;
  else if (at == TS_DTYPE_INT8 || at == TS_DTYPE_UINT8 || at == TS_DTYPE_INT4 || at == TS_DTYPE_UINT4)
    ok = bt == at && ct == TS_DTYPE_INT32;
  else if (is_fp8(at)) {
    bool hopper = c->target.sm == 90 && c->target.arch_a;
    ok = is_fp8(bt) && (ct == TS_DTYPE_FLOAT32 || (hopper && ct == TS_DTYPE_FLOAT16));
    if (ok && c->target.sm < 89) {
      PLAN_ERROR(c, s->loc, "T.gemm: float8 tensor-core instructions need sm_89 or newer (target is sm_%d)", c->target.sm);
      return false;
    }
    if (!ok && is_fp8(bt) && ct == TS_DTYPE_FLOAT16) why = " (a float16 accumulator for float8 needs wgmma, sm_90a)";
  } else
    ok = false;
  if (!ok) {
    PLAN_ERROR(c, s->loc,
             "T.gemm: unsupported types %s x %s -> %s%s; supported: float16 x float16 -> float32/float16, "
             "bfloat16 -> float32, float32 (tf32) -> float32, int8/uint8 -> int32, int4/uint4 -> int32, float8 -> float32 "
             "(float16 on sm_90a)",
             dtype_name(at), dtype_name(bt), dtype_name(ct), why);
    return false;
  }
  /* 32-bit (tf32) operands that are not K-major take the mma.sync path with per-thread
   * loads (gemm.cuh); 8-bit ones have no such path. */
  if (dtype_bytes(at) == 1 && (s->u.gemm.trans_a || !s->u.gemm.trans_b)) {
    PLAN_ERROR(c, s->loc,
             "T.gemm: %s operands must be K-major: use transpose_A=False with A as [M, K] and transpose_B=True with "
             "B as [N, K] (got transpose_A=%s, transpose_B=%s)",
             at == TS_DTYPE_FLOAT32 ? "float32 (tf32)" : dtype_name(at), s->u.gemm.trans_a ? "True" : "False",
             s->u.gemm.trans_b ? "True" : "False");
    return false;
  }
  return true;
}

bool gemm_tensor_core_types(TsCompiler *c, const IrStmt *s) {
  return gemm_types_ok(c, s, s->u.gemm.a.buf->dtype, s->u.gemm.b.buf->dtype, s->u.gemm.c.buf->dtype, false);
}

/* Is a metadata tile E of T.gemm_sp row-major (the layout gemm_sp.cuh reads)? */
static bool row_major(const IrBuffer *b) { return !b->layout || !b->layout->swizzle; }

/* T.gemm_sp: A [M, K/2] (2:4 compressed) and E [M, K/e_factor] in shared memory, B [K, N]
 * (transpose_B: [N, K]; 8-bit operands only so) shared, C an [M, N] fragment; mma.sp
 * m16n8k32 (m16n8k64 for 8-bit operands) over the warp grid of mma.sync, so C gets the same fragment
 * as a T.gemm of its shape.  e_factor is the number of
 * K columns one metadata element covers: 4 bits per group of 4 (sparse_layout.py). */
static bool gemm_sp_plan(TsCompiler *c, const IrStmt *s, int64_t nthreads, GemmPlan *out, bool report) {
  const IrRegion *A = &s->u.gemm.a, *E = &s->u.gemm.e, *B = &s->u.gemm.b, *C = &s->u.gemm.c;
  bool tb = s->u.gemm.trans_b;
  int64_t ar, ac, er, ec, br, bc, M, N;
  if (C->buf->scope != IR_SCOPE_FRAGMENT || !tile2(C, &M, &N)) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: C must be a 2-D fragment (T.alloc_fragment) with constant extents");
    return false;
  }
  if (!tile2(A, &ar, &ac) || !tile2(E, &er, &ec) || !tile2(B, &br, &bc)) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: A_sparse, E and B must be 2-D tiles with constant extents");
    return false;
  }
  if (!is_shared(A->buf) || !is_shared(E->buf) || !is_shared(B->buf)) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: A_sparse, E and B must be in shared memory (T.alloc_shared)");
    return false;
  }
  ts_dtype at = A->buf->dtype, bt = B->buf->dtype, ct = C->buf->dtype, et = E->buf->dtype;
  bool f16 = dtype_16bit_float(at) && (ct == TS_DTYPE_FLOAT32 || (at == TS_DTYPE_FLOAT16 && ct == at));
  bool i8 = at == TS_DTYPE_INT8 && ct == TS_DTYPE_INT32, f8 = is_fp8(at) && ct == TS_DTYPE_FLOAT32;
  if (bt != at || !(f16 || i8 || f8)) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: unsupported types %s x %s -> %s; supported: float16 x float16 -> float32/float16, "
               "bfloat16 x bfloat16 -> float32, int8 x int8 -> int32, float8 x float8 -> float32 (sparse float32 is "
               "not supported yet)", dtype_name(at), dtype_name(bt), dtype_name(ct));
    return false;
  }
  if ((i8 || f8) && !tb) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: 8-bit operands need B stored [N, K] (transpose_B=True), as the 8-bit tensor "
                          "cores read it K-major");
    return false;
  }
  int64_t kstep = f8 || i8 ? 64 : 32, eb = dtype_bytes(at); /* dense K of one mma.sp: m16n8k32, m16n8k64 for 8 bits */
  int ebits = dtype_bytes(et) * 8;
  if (!dtype_is_int(et) || (ebits != 8 && ebits != 16 && ebits != 32)) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: the metadata E must be an 8-, 16- or 32-bit integer tile, got %s", dtype_name(et));
    return false;
  }
  int64_t K = 2 * ac, bk = tb ? bc : br, bn = tb ? br : bc, efactor = ebits; /* (bits / 4) groups of 4 */
  if (ar != M || bn != N || bk != K || er != M || ec * efactor != K) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: shapes do not match: A_sparse is %lldx%lld, E %lldx%lld, B %lldx%lld, C %lldx%lld; "
               "want A_sparse [M, K/2], E [M, K/%lld] (%s), B [%s], C [M, N]",
               (long long)ar, (long long)ac, (long long)er, (long long)ec, (long long)br, (long long)bc, (long long)M,
               (long long)N, (long long)efactor, dtype_name(et), tb ? "N, K" : "K, N");
    return false;
  }
  if (K % kstep) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: K (%lld) must be a multiple of %lld (one mma.sp m16n8k%lld step)", (long long)K,
               (long long)kstep, (long long)kstep);
    return false;
  }
  if (!row_major(E->buf)) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: the metadata tile '%s' must be row-major (no swizzled layout)", E->buf->name);
    return false;
  }
  out->path = GEMM_MMA_SP;
  out->m = M;
  out->n = N;
  out->k = K;
  out->k_inst = (int)kstep;
  if (nthreads % 32 || !mma_grid(M, N, nthreads / 32, s->u.gemm.policy, &out->wm, &out->wn)) {
    PLAN_ERROR(c, s->loc, "T.gemm_sp: No valid warp partition: a %lldx%lld tile cannot be split over %lld threads (warp tiles must be multiples "
               "of 16x8)", (long long)M, (long long)N, (long long)nthreads);
    return false;
  }
  out->a_layout = layout_swizzled(c, ar, ac, (int)eb);
  out->b_layout = layout_swizzled(c, br, bc, (int)eb);
  /* layouts pinned by T.annotate_layout: gemm_sp.cuh reads any swizzle, for this tile */
  IrBuffer *ops[2] = {A->buf, B->buf};
  int64_t trows[2] = {ar, br}, tcols[2] = {ac, bc};
  for (int i = 0; i < 2; i++) {
    Layout *l = ops[i]->layout;
    if (!l || !l->pinned) continue;
    if (l->rows != trows[i] || l->cols != tcols[i] || l->elem_bytes != eb) {
      PLAN_ERROR(c, s->loc, "layout conflict for shared buffer '%s': its layout (T.annotate_layout at line %d) is not "
                 "for the %lldx%lld tile T.gemm_sp reads", ops[i]->name, l->loc.line, (long long)trows[i],
                 (long long)tcols[i]);
      return false;
    }
    if (i) out->b_layout = l;
    else out->a_layout = l;
  }
  out->c_frag = fragment_gemm_acc(c, M, N, out->wm, out->wn, nthreads);
  TS_ASSERT(out->c_frag);
  return true;
}

bool gemm_plan_ex(TsCompiler *c, const IrStmt *s, int64_t nthreads, GemmPlan *out, bool report) {
  memset(out, 0, sizeof *out);
  if (s->u.gemm.e.buf) return gemm_sp_plan(c, s, nthreads, out, report);
  const IrRegion *A = &s->u.gemm.a, *B = &s->u.gemm.b, *C = &s->u.gemm.c;
  bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
  int64_t ar, ac, br, bc, M, N;
  if (C->buf->scope != IR_SCOPE_FRAGMENT || !tile2(C, &M, &N)) {
    PLAN_ERROR(c, s->loc, "T.gemm: C must be a 2-D fragment (T.alloc_fragment) with constant extents");
    return false;
  }
  if (!tile2(A, &ar, &ac) || !tile2(B, &br, &bc)) {
    PLAN_ERROR(c, s->loc, "T.gemm: A and B must be 2-D tiles with constant extents");
    return false;
  }
  int64_t am = ta ? ac : ar, ak = ta ? ar : ac, bk = tb ? bc : br, bn = tb ? br : bc;
  if (am != M || bn != N || ak != bk) {
    PLAN_ERROR(c, s->loc, "T.gemm: shapes do not match: A is %lldx%lld, B is %lldx%lld, C is %lldx%lld%s", (long long)ar,
             (long long)ac, (long long)br, (long long)bc, (long long)M, (long long)N,
             ta || tb ? " (after transposes)" : "");
    return false;
  }
  out->m = M;
  out->n = N;
  out->k = ak;
  out->a_in_regs = A->buf->scope == IR_SCOPE_FRAGMENT;
  ts_dtype at = A->buf->dtype, bt = B->buf->dtype, ct = C->buf->dtype;
  /* A fragment B was staged into shared memory before planning (pass_stage_gemm_b). */
  if (!is_shared(B->buf) || (!is_shared(A->buf) && !out->a_in_regs)) {
    const IrBuffer *bad = !is_shared(A->buf) && !out->a_in_regs ? A->buf : B->buf;
    PLAN_ERROR(c, s->loc, "T.gemm: A and B must be shared tiles (T.alloc_shared) or fragments (T.alloc_fragment); "
                          "'%s' has scope %s", bad->name, ir_scope_names[bad->scope]);
    return false;
  }
  if (!gemm_types_ok(c, s, at, bt, ct, report)) return false;
  bool hopper = c->target.sm == 90 && c->target.arch_a;
  /* 8-bit A in registers takes mma.sync m16n8k32 (gemm.cuh gemm_rs_8: the accumulator-shaped
   * fragment with K permuted in both operands); one element type for both operands, as the
   * device template has, and the float32 accumulator that mma.sync has for float8. */
  if (out->a_in_regs && dtype_bytes(at) == 1 && (at != bt || (is_fp8(at) && ct != TS_DTYPE_FLOAT32))) {
    PLAN_ERROR(c, s->loc, "T.gemm: A in registers (a fragment) of %s needs B of the same type and, for float8, a "
                          "float32 accumulator (got B %s, C %s); copy A to shared memory instead",
               dtype_name(at), dtype_name(bt), dtype_name(ct));
    return false;
  }
  int eb = dtype_bytes(at);
  bool packed = dtype_is_packed(at); /* 4-bit: two elements a byte in shared memory */
  out->k_inst = packed ? 64 : 32 / eb;
  if (ak % out->k_inst) {
    PLAN_ERROR(c, s->loc, "T.gemm: K (%lld) must be a multiple of %lld for %s", (long long)ak, (long long)out->k_inst,
             dtype_name(at));
    return false;
  }
  /* 4-bit tiles stay row-major: their copies write nibbles element by element (ts::st4) at
   * plain offsets, and gemm_ss_mma4 reads rows of K/2 bytes */
  out->a_layout = out->a_in_regs || packed ? NULL : operand_layout(c, A, ar, ac, eb);
  out->b_layout = packed ? NULL : operand_layout(c, B, br, bc, eb);
  /* A layout pinned by T.annotate_layout wins: every swizzle width (and row-major, which
   * only rules out wgmma) tiles the operand, so the GEMM adapts to it, provided it was
   * made for the tile the GEMM reads. */
  IrBuffer *ops[2] = {out->a_in_regs ? NULL : A->buf, B->buf};
  int64_t trows[2] = {ar, br}, tcols[2] = {ac, bc};
  for (int i = 0; i < 2; i++) {
    Layout *l = ops[i] ? ops[i]->layout : NULL;
    if (!l || !l->pinned) continue;
    if (packed && l->swizzle) {
      PLAN_ERROR(c, s->loc, "T.gemm: the %s tile '%s' has a swizzled layout (T.annotate_layout at line %d); 4-bit "
                            "operands are read row-major", dtype_name(at), ops[i]->name, l->loc.line);
      return false;
    }
    if (l->rows != trows[i] || l->cols != tcols[i] || l->elem_bytes != eb) {
      PLAN_ERROR(c, s->loc,
                 "layout conflict for shared buffer '%s': its layout (T.annotate_layout at line %d) is for a %lldx%lld "
                 "tile of %d-byte elements, but T.gemm reads a %lldx%lld tile of %s",
                 ops[i]->name, l->loc.line, (long long)l->rows, (long long)l->cols, l->elem_bytes,
                 (long long)trows[i], (long long)tcols[i], dtype_name(ops[i]->dtype));
      return false;
    }
    if (i) out->b_layout = l;
    else out->a_layout = l;
  }
  int policy = s->u.gemm.policy;

  /* wgmma: sm_90a only (sm_100 replaced it with tcgen05); warpgroups of 128 threads, 64-row
   * atoms; the instruction reads swizzled shared memory through descriptors. */
  bool a_sw = out->a_layout && out->a_layout->swizzle, b_sw = out->b_layout && out->b_layout->swizzle;
  /* wgmma reads 8- and 32-bit operands K-major only (and no 4-bit ones), and its tf32 and
   * 8-bit A registers are not the accumulator-shaped fragment the mma.sync paths permute K
   * into: those take mma.sync (gemm_rs_tf32, gemm_rs_8). */
  bool wgmma_types = eb == 2 || (!ta && tb && !out->a_in_regs && !packed);
  if (hopper && wgmma_types && nthreads % 128 == 0 && (a_sw || out->a_in_regs) && b_sw) {
    int64_t nwg = nthreads / 128;
    int64_t b_atom = tb ? 0 : layout_atom_cols(out->b_layout); /* MN-major B: atoms along N */
    int64_t a_atom = ta && !out->a_in_regs ? layout_atom_cols(out->a_layout) : 0;
    bool int8 = at == TS_DTYPE_INT8 || at == TS_DTYPE_UINT8;
    /* A in registers with every warp along M fits mma.sync: no warp holds a copy of another's
     * A, and A keeps the layout of a previous GEMM's C split the same way; wgmma with
     * warpgroups along N (copies of A) only where that does not fit. */
    bool rs_all_m = M % (16 * (nthreads / 32)) == 0 && N % 8 == 0;
    for (int64_t i = 1; i <= nwg; i++) {
      /* FullCol tries many warpgroups along N first; otherwise along M first (one wide
       * instruction per warpgroup reads B once for 64 rows).  A in registers always tries
       * M first: warpgroups along N each hold a copy of the A rows they multiply. */
      int64_t wgm = policy == 2 && !out->a_in_regs ? i : nwg + 1 - i;
      if (nwg % wgm) continue;
      int64_t wgn = nwg / wgm, ni = N / wgn;
      if (M % (64 * wgm) || N % (8 * wgn) || ni > 256 || (b_atom && ni % b_atom) || (a_atom && 64 % a_atom)) continue;
      if (int8 && ni % 16 && ni != 8 && ni != 24) continue; /* the s32 shapes: N = 8, 16, 24, 32, 48, 64, ... */
      if (out->a_in_regs && wgn > 1 && rs_all_m) continue;
      out->wm = 4 * wgm;
      out->wn = wgn;
      break;
    }
    if (out->wm) out->path = GEMM_WGMMA;
  }
  if (!out->wm && out->a_in_regs) {
    /* mma.sync from registers: as many warps along M as 16-row strips allow, the rest
     * along N; the warps of one M strip each hold a copy of its A rows (the A fragment
     * is replicated over the warp columns). */
    int64_t nw = nthreads / 32;
    for (int64_t wm = nw; wm >= 1 && nthreads % 32 == 0; wm--)
      if (nw % wm == 0 && M % (16 * wm) == 0 && N % (8 * (nw / wm)) == 0) {
        out->wm = wm;
        out->wn = nw / wm;
        break;
      }
    if (!out->wm) {
      PLAN_ERROR(c, s->loc, "T.gemm: No valid warp partition: A in registers, a %lldx%lld tile cannot be split over %lld warps (M must be a "
                            "multiple of 16 per warp along M, N of 8 per warp along N)",
                 (long long)M, (long long)N, (long long)(nthreads / 32));
      return false;
    }
    out->path = GEMM_MMA_SYNC;
  }
  if (!out->wm && is_fp8(at) && ct == TS_DTYPE_FLOAT16) {
    PLAN_ERROR(c, s->loc, "T.gemm: a float16 accumulator for float8 needs wgmma, and this %lldx%lld tile over %lld "
                          "threads does not fit it; use a float32 accumulator",
               (long long)M, (long long)N, (long long)nthreads);
    return false;
  }
  if (!out->wm) {
    out->path = GEMM_MMA_SYNC;
    if (nthreads % 32 || !mma_grid(M, N, nthreads / 32, policy, &out->wm, &out->wn)) {
      PLAN_ERROR(c, s->loc,
                 "T.gemm: No valid warp partition: a %lldx%lld tile cannot be split over %lld threads (warp tiles must be "
                 "multiples of 16x8)",
               (long long)M, (long long)N, (long long)nthreads);
      return false;
    }
  }
  out->c_frag = fragment_gemm_acc(c, M, N, out->wm, out->wn, nthreads);
  TS_ASSERT(out->c_frag);
  if (out->a_in_regs) {
    /* The wgmma A registers are placed like an accumulator of the same warpgroups with K
     * as its columns (gemm.cuh gemm_rs_wgmma), so a T.copy from a previous GEMM's C
     * with the same M split is a per-thread conversion.  With wn > 1 warp columns the
     * fragment is replicated over them (a replicate field at stride 32 wm, the stride
     * of C's warp columns): each warp column multiplies the whole rows of A. */
    out->a_frag = fragment_gemm_acc(c, M, ak, out->wm, 1, nthreads);
    TS_ASSERT(out->a_frag);
    /* transpose_A: the buffer is [K x M]; the same elements in the same threads */
    if (ta) out->a_frag = fragment_transpose2(c, out->a_frag);
  }
  return true;
}

bool gemm_plan(TsCompiler *c, const IrStmt *s, int64_t nthreads, GemmPlan *out) {
  return gemm_plan_ex(c, s, nthreads, out, true);
}
