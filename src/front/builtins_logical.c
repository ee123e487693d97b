/* builtins_logical.c — T.any_of(buffer) / T.all_of(buffer): whether any (every) element of a
 * buffer or region is true (non-zero), read by every thread, as TileLang's block-sparse
 * kernels test a mask row (`if T.any_of(BlockMask[by, bx, k, :]):`).
 *
 *   registry.c  ->  here  ->  one IR expression: an || (&&) chain of the elements' loads,
 *   so the test stays a pure condition a pipelined loop can hold.
 *
 * The region's extents must be known when compiling, and at most ANY_OF_MAX elements; a
 * fragment is refused (its elements live in different threads). */
#include "builtin.h"

#define ANY_OF_MAX 64

/* The element of region (buf, min, extent) at flat position e (row-major over the region). */
static IrExpr *region_element(Eval *ev, IrBuffer *b, IrExpr **min, const int64_t *ext, int64_t e, SrcLoc loc) {
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, b->ndim);
  for (int d = b->ndim - 1; d >= 0; d--) {
    IrExpr *off = ir_int(ev->c, e % ext[d], TS_DTYPE_INT32, loc);
    idx[d] = ir_simplify(ev->c, ir_binary(ev->c, IR_ADD, min[d], off, loc));
    e /= ext[d];
  }
  return ev_to_bool_ir(ev, ir_load(ev->c, b, idx, b->ndim, loc), loc);
}

/* T.any_of(x) (bi->arg 0) / T.all_of(x) (1). */
static Value *t_any_all(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  Value *v = arg[0];
  IrBuffer *b;
  IrExpr **min, **extent;
  if (v->kind == V_BUFFER) {
    b = v->u.buf;
    min = ARENA_ARRAY(ev->a, IrExpr *, b->ndim);
    for (int d = 0; d < b->ndim; d++) min[d] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
    extent = b->shape;
  } else if (v->kind == V_REGION) {
    b = v->u.region.buf;
    min = v->u.region.min;
    extent = v->u.region.extent;
  } else {
    ts_error(ev->c, loc, "T.%s takes a buffer or a buffer region, got %s", bi->name, ev_type_name(v));
    return ev->poison;
  }
  if (b->scope == IR_SCOPE_FRAGMENT) {
    ts_error(ev->c, loc, "T.%s of fragment '%s': its elements live in different threads (copy it to a local or "
             "shared buffer first)", bi->name, b->name);
    return ev->poison;
  }
  int64_t *ext = ARENA_ARRAY(ev->a, int64_t, b->ndim), n = 1;
  for (int d = 0; d < b->ndim; d++) {
    if (!ir_is_const_int(extent[d], &ext[d])) {
      ts_error(ev->c, loc, "T.%s: the extent of dimension %d of '%s' must be known when compiling", bi->name, d,
               b->name);
      return ev->poison;
    }
    n *= ext[d];
  }
  if (n < 1 || n > ANY_OF_MAX) {
    ts_error(ev->c, loc, "T.%s over %lld elements: 1 to %d are supported", bi->name, (long long)n, ANY_OF_MAX);
    return ev->poison;
  }
  IrExpr *r = NULL;
  for (int64_t e = 0; e < n; e++) {
    IrExpr *x = region_element(ev, b, min, ext, e, loc);
    r = r ? ir_binary(ev->c, bi->arg ? IR_AND : IR_OR, r, x, loc) : x;
  }
  return ev_expr(ev, r);
}

static const Builtin logical_rows[] = {
    {"any_of", "buffer", t_any_all, 0, 0},
    {"all_of", "buffer", t_any_all, 1, 0},
};

const BuiltinTable builtins_logical[] = {
    {MOD_T, logical_rows, TS_ARRAY_LEN(logical_rows), NULL},
    BUILTIN_TABLE_END,
};
