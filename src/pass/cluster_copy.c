/* cluster_copy.c — T.copy_cluster(src, dst, dst_block=r, remote_barrier=b): a shared tile of this
 * block copied into the same tile of block r of its cluster (distributed shared memory), lowered
 * by lower_tile_ops once layout_inference has fixed the tiles' layouts.
 *
 * Two forms, chosen here:
 *  - bulk: with a remote barrier, same element type on both sides, row-major tiles (no swizzle)
 *    and regions that are one contiguous run of a multiple of 16 bytes.  Every thread fences its
 *    writes of the tile to the async proxy, a block barrier, then thread 0 arrives once on block
 *    r's copy of the barrier announcing the bytes and issues one cp.async.bulk into block r that
 *    completes them (ts::dsmem_bulk_copy).  Block r waits for the phase on its own barrier.
 *    The copy reads this block's shared memory after the call returns, so the kernel ends with a
 *    cluster barrier (lower_tile_ops): no block leaves while its tile may still be read.
 *  - per thread: every other case.  The block's threads store the elements one each into block r
 *    through mapa'd addresses (ts::dsmem_store), any layout and a conversion allowed; with a
 *    remote barrier, a block barrier and then one release arrival of thread 0 on block r's
 *    barrier publish them (a T.alloc_cluster_barrier, whose waits acquire at cluster scope).
 *    Without one, the user orders the stores with T.cluster_sync, as in TileLang. */
#include "passes.h"

static IrExpr *i32(TsCompiler *c, int64_t v) { return ir_i32(c, v); }

/* The constant element count of a region; -1 if an extent is not constant. */
static int64_t region_elems(const IrRegion *r) {
  int64_t n = 1, e;
  for (int d = 0; d < r->ndim; d++) {
    if (!ir_is_const_int(r->extent[d], &e)) return -1;
    n *= e;
  }
  return n;
}

/* Is region r of a row-major buffer one contiguous run?  *first: its first element's offset. */
static bool contiguous_run(const IrRegion *r, int64_t *first) {
  const IrBuffer *b = r->buf;
  int64_t off = 0, stride = 1, e, m, sh;
  bool inner_full = true; /* every dim after the current one covers its whole extent */
  for (int d = r->ndim - 1; d >= 0; d--) {
    if (!ir_is_const_int(r->extent[d], &e) || !ir_is_const_int(r->min[d], &m) || !ir_is_const_int(b->shape[d], &sh))
      return false;
    if (e > 1 && !inner_full) return false;
    off += m * stride;
    stride *= sh;
    inner_full = inner_full && m == 0 && e == sh;
  }
  *first = off;
  return true;
}

static bool bulk_form(const IrStmt *s, int64_t n, int64_t *bytes) {
  const IrRegion *src = &s->u.copy.src, *dst = &s->u.copy.dst;
  int64_t fs, fd, eb = dtype_bytes(src->buf->dtype);
  if (!s->u.copy.barrier || src->buf->dtype != dst->buf->dtype || src->buf->layout || dst->buf->layout ||
      dtype_is_packed(src->buf->dtype) || !contiguous_run(src, &fs) || !contiguous_run(dst, &fd))
    return false;
  *bytes = n * eb;
  return *bytes % 16 == 0 && (fs * eb) % 16 == 0 && (fd * eb) % 16 == 0;
}

/* The element of region r at row-major position e of its extents. */
static IrExpr *element_at(TsCompiler *c, const IrRegion *r, IrExpr *e, SrcLoc loc) {
  IrExpr **idx = ARENA_ARRAY(c->arena, IrExpr *, r->ndim);
  int64_t stride = 1;
  for (int d = r->ndim - 1; d >= 0; d--) {
    int64_t ext;
    ir_is_const_int(r->extent[d], &ext);
    IrExpr *q = stride > 1 ? ir_binary(c, IR_FLOORDIV, e, i32(c, stride), loc) : e;
    if (d > 0) q = ir_binary(c, IR_FLOORMOD, q, i32(c, ext), loc);
    idx[d] = ir_simplify(c, ir_binary(c, IR_ADD, r->min[d], q, loc));
    stride *= ext;
  }
  return ir_load(c, r->buf, idx, r->ndim, loc);
}

static IrExpr *address(TsCompiler *c, IrExpr *ld, SrcLoc loc) {
  return ir_call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc);
}

static IrStmt *sync_threads(TsCompiler *c, SrcLoc loc) {
  return ir_eval(c, ir_call(c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, loc), loc);
}

static IrStmt *bulk_lower(TsCompiler *c, const IrStmt *s, IrExpr *tid, int64_t bytes, SrcLoc loc) {
  IrExpr *zero = i32(c, 0);
  IrExpr *args[5] = {address(c, element_at(c, &s->u.copy.dst, zero, loc), loc),
                     address(c, element_at(c, &s->u.copy.src, zero, loc), loc), i32(c, bytes), s->u.copy.barrier,
                     s->u.copy.dst_block};
  IrStmt *issue = ir_if(c, ir_binary(c, IR_EQ, tid, zero, loc),
                        ir_device_stmt(c, IRD_DSMEM_BULK_COPY, NULL, 0, args, 5, loc), NULL, loc);
  IrStmt *items[3] = {ir_device_stmt(c, IRD_FENCE_PROXY_ASYNC_SHARED, NULL, 0, NULL, 0, loc), sync_threads(c, loc),
                      issue};
  return ir_seq(c, items, 3, loc);
}

static IrStmt *per_thread_lower(TsCompiler *c, const IrStmt *s, IrExpr *tid, int64_t T, int64_t n, SrcLoc loc) {
  IrVar *k = ir_var(c, "k", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *e = ir_binary(c, IR_ADD, ir_binary(c, IR_MUL, ir_varref(c, k, loc), i32(c, T), loc), tid, loc);
  const IrRegion *dst = &s->u.copy.dst;
  IrExpr *v = ir_cast(c, dst->buf->dtype, element_at(c, &s->u.copy.src, e, loc), loc);
  IrExpr *args[3] = {address(c, element_at(c, dst, e, loc), loc), v, s->u.copy.dst_block};
  IrStmt *st = ir_device_stmt(c, IRD_DSMEM_STORE, NULL, 0, args, 3, loc);
  if (n % T) st = ir_if(c, ir_binary(c, IR_LT, e, i32(c, n), loc), st, NULL, loc);
  IrStmt *loop = ir_for(c, k, i32(c, 0), i32(c, (n + T - 1) / T), IR_FOR_SERIAL, st, loc);
  if (!s->u.copy.barrier) return loop;
  IrExpr *arr[2] = {s->u.copy.barrier, s->u.copy.dst_block};
  IrStmt *arrive = ir_if(c, ir_binary(c, IR_EQ, tid, i32(c, 0), loc),
                         ir_device_stmt(c, IRD_MBAR_ARRIVE_REMOTE, NULL, 0, arr, 2, loc), NULL, loc);
  IrStmt *items[3] = {loop, sync_threads(c, loc), arrive};
  return ir_seq(c, items, 3, loc);
}

IrStmt *cluster_copy_lower(TsCompiler *c, const IrStmt *s, IrExpr *tid, int64_t T, bool *bulk) {
  SrcLoc loc = s->loc;
  if (c->target.sm < 90) {
    ts_error(c, loc, "T.copy_cluster needs thread-block clusters (sm_90 or newer)");
    return NULL;
  }
  int64_t n = region_elems(&s->u.copy.src), bytes;
  if (n < 0 || region_elems(&s->u.copy.dst) != n) {
    ts_error(c, loc, "T.copy_cluster needs tiles of constant extents");
    return NULL;
  }
  *bulk = bulk_form(s, n, &bytes);
  return *bulk ? bulk_lower(c, s, tid, bytes, loc) : per_thread_lower(c, s, tid, T, n, loc);
}
