/* view_layouts.c — a T.view / T.reshape of a shared buffer reads and writes the same bytes as
 * the buffer it aliases, so the two must be laid out alike.  A swizzle (layout.h) permutes
 * 16-byte chunks inside rows of W-byte atoms; that permutation is a function of bytes, not of
 * elements.  So a view takes its base's swizzle re-expressed in its own element type (same
 * rows, same tiles, the row's bytes counted in view elements): float32 [64 x 64] swizzled and
 * its bfloat16 [64 x 128] view map every byte to the same place.  A view of another shape (a
 * 1-D [4096] view of a [64 x 64] tile, rows regrouped into [2 x 32 x 64]) is addressed by its
 * row-major element number cut into the base's rows and tiles (layout_offset).  Run after
 * layout_inference (every swizzle is chosen: pinned by T.annotate_layout, or wanted by a
 * T.gemm operand) and before lower_tile_ops (which rewrites accesses through the layouts):
 *   - a view with a swizzle of its own (annotated, or a GEMM operand) gives it to its base
 *     first, and so to the base's other views: only a view with the base's rows and tiles can;
 *   - a base with a swizzle gives it to each of its views;
 *   - what cannot be laid out alike (a view's swizzle for a base of other rows, two different
 *     swizzles, a view element that is not whole bytes) is an error at the view: no access is
 *     left reading another layout's bytes. */
#include "../layout/layout.h"
#include "passes.h"

/* Every extent constant and the element a whole number of bytes that divides a 16-byte chunk
 * (the unit a swizzle moves). */
static bool plain(const IrBuffer *b) {
  int64_t e;
  for (int k = 0; k < b->ndim; k++)
    if (!ir_is_const_int(b->shape[k], &e)) return false;
  int bits = dtype_bits(b->dtype);
  return b->ndim >= 1 && bits % 8 == 0 && bits / 8 >= 1 && 16 % (bits / 8) == 0;
}

/* The row structure of a shared buffer: tiles (product of the leading dims), rows per tile and
 * bytes per row; false unless it is plain with at least 2 dims. */
typedef struct Rows {
  int64_t tiles, rows, row_bytes;
} Rows;

static bool rows_of(const IrBuffer *b, Rows *r) {
  if (b->ndim < 2 || !plain(b)) return false;
  int64_t e;
  r->tiles = 1;
  for (int k = 0; k < b->ndim - 2; k++) r->tiles *= ir_is_const_int(b->shape[k], &e) ? e : 0;
  ir_is_const_int(b->shape[b->ndim - 2], &r->rows);
  ir_is_const_int(b->shape[b->ndim - 1], &e);
  r->row_bytes = e * dtype_bits(b->dtype) / 8;
  return true;
}

static bool swizzled(const IrBuffer *b) { return b->layout && b->layout->swizzle; }

/* Layout l (a swizzle) for a buffer of elem_bytes-byte elements and rows of `cols` of them. */
static Layout *retyped(TsCompiler *c, const Layout *l, int elem_bytes, int64_t cols) {
  Layout *out = ARENA_NEW(c->arena, Layout);
  *out = *l;
  out->elem_bytes = elem_bytes;
  out->cols = cols;
  return out;
}

/* The base's layout for its view: the base's rows and tiles in the view's element type.  A
 * view shaped otherwise (1-D, rows regrouped) is addressed by its flat element number
 * (layout_offset).  NULL when the base's rows are not whole view elements. */
static Layout *for_view(TsCompiler *c, const IrBuffer *base, const IrBuffer *view) {
  Rows a;
  if (!rows_of(base, &a) || !plain(view) || base->layout->rows != a.rows) return NULL;
  int eb = dtype_bits(view->dtype) / 8;
  return a.row_bytes % eb ? NULL : retyped(c, base->layout, eb, a.row_bytes / eb);
}

/* A view's own layout (made for its shape) for its base: only when both have the same rows
 * and tiles, so that the base's accesses keep their shape. */
static Layout *for_base(TsCompiler *c, const IrBuffer *view, const IrBuffer *base) {
  Rows a, b;
  if (!rows_of(view, &a) || !rows_of(base, &b) || a.tiles != b.tiles || a.rows != b.rows ||
      a.row_bytes != b.row_bytes || view->layout->rows != a.rows)
    return NULL;
  int eb = dtype_bits(base->dtype) / 8;
  return retyped(c, view->layout, eb, b.row_bytes / eb);
}

/* The same bytes in the same places: equal swizzles and row bytes (either may be NULL). */
static bool same_bytes(const Layout *x, const Layout *y) {
  int sx = x ? x->swizzle : 0, sy = y ? y->swizzle : 0;
  if (sx != sy) return false;
  return !sx || (x->rows == y->rows && x->cols * x->elem_bytes == y->cols * y->elem_bytes);
}

typedef struct Views {
  TsCompiler *c;
  PtrVec views; /* IrBuffer*: shared buffers that alias another (T.view / T.reshape) */
} Views;

static void collect(IrStmt *s, void *ctx) {
  Views *v = ctx;
  if (s->kind == IR_S_ALLOC && pass_is_shared(s->u.alloc.buf) && s->u.alloc.buf->alias_of &&
      pass_is_shared(s->u.alloc.buf->alias_of))
    vec_push(v->c->arena, &v->views, s->u.alloc.buf);
}

static void report(TsCompiler *c, const IrBuffer *view, const IrBuffer *base, const char *why) {
  ts_error(c, view->loc,
           "shared buffer '%s' is a view of '%s', which has a %d-byte swizzled layout, but %s",
           view->name, base->name, (swizzled(view) ? view : base)->layout->swizzle, why);
}

/* A view's own swizzle becomes its base's (pass 1). */
static void to_base(TsCompiler *c, IrBuffer *view) {
  IrBuffer *base = view->alias_of;
  if (!swizzled(view)) return;
  Layout *want = for_base(c, view, base);
  if (!want) {
    report(c, view, base,
           "its rows differ from the base's: a layout given to a view must fit its base (annotate the base instead)");
    return;
  }
  if (base->layout && !same_bytes(base->layout, want)) {
    report(c, view, base, "the base already has another layout");
    return;
  }
  if (!swizzled(base)) base->layout = want;
}

/* The base's swizzle becomes each view's (pass 2). */
static void from_base(TsCompiler *c, IrBuffer *view) {
  IrBuffer *base = view->alias_of;
  if (!swizzled(base)) return;
  Layout *want = for_view(c, base, view);
  if (!want) {
    report(c, view, base,
           "its extents are not constants, or its elements do not divide the base's rows and 16-byte chunks");
    return;
  }
  if (view->layout && !same_bytes(view->layout, want)) {
    report(c, view, base, "the view was given another layout");
    return;
  }
  view->layout = want;
}

void pass_view_layouts(TsCompiler *c, IrFunc *f) {
  Views v = {c, {0}};
  IrVisitor vis = {collect, NULL, &v};
  ir_visit(f->body, &vis);
  for (int i = 0; i < v.views.len; i++) to_base(c, v.views.items[i]);
  for (int i = 0; i < v.views.len && !c->diag.errors; i++) from_base(c, v.views.items[i]);
}
