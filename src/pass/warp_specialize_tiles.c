/* warp_specialize_tiles.c — how the blocks of a warp-specialized GEMM walk the C tiles:
 * block rasterization (T.use_swizzle), the tile loop of persistent blocks (one tile, or two
 * neighbouring tiles of a 2-block cluster, per unit), and the stream-K segment loop.  Each
 * builds IR around a tile's statements written with the block indices, which it substitutes
 * with the tile's coordinates.  warp_specialize.c decides the schedule (passes.h: WsSched). */
#include "passes.h"

static IrExpr *i32(TsCompiler *c, int64_t v) { return ir_i32(c, v); }
static IrExpr *bin(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b) { return ir_binary(c, k, a, b, SRCLOC_NONE); }

/* Block rasterization (T.use_swizzle): blocks that run at the same time should share
 * operand tiles in L2.  The launch order is blockIdx.x fastest, which walks a whole row of
 * C tiles (every B column panel) before the next row; remapped, consecutive blocks walk
 * down `panel` block rows first:
 *   id = by*GX + bx;  g = id / (panel*GX);  rows = min(GY - g*panel, panel)
 *   by' = g*panel + (id % (panel*GX)) % rows;   bx' = (id % (panel*GX)) / rows
 * a bijection of the grid, so any kernel may use it; by' and bx' are clamped to the grid
 * only to tell the bounds analysis their ranges.  Serpentine (opt-in ts.raster_serpentine,
 * not yet measured on a GPU): odd panels walk their columns from the right,
 * bx' = GX - 1 - (id % (panel*GX)) / rows, so the first blocks of a panel take the B columns
 * the last blocks of the previous one just read, still in L2 (TileLang's rasterization
 * walks its panels that way).  Column order (T.use_swizzle(order="column")) is the same on
 * the transposed grid: panels of `panel` block columns, walking down by. */
/* max(min(x, n - 1), 0): a no-op on valid block indices that states their range. */
static IrExpr *ws_clamp(TsCompiler *c, IrExpr *x, IrExpr *n) {
  return bin(c, IR_MAX, bin(c, IR_MIN, x, bin(c, IR_SUB, n, i32(c, 1))), i32(c, 0));
}

static void ws_raster_coords(TsCompiler *c, IrExpr *id, IrExpr *GX, IrExpr *GY, int64_t panel, bool serpentine,
                             IrExpr **vbx, IrExpr **vby) {
  IrExpr *gsize = bin(c, IR_MUL, i32(c, panel), GX);
  IrExpr *g = bin(c, IR_FLOORDIV, id, gsize);
  IrExpr *first = bin(c, IR_MUL, g, i32(c, panel));
  IrExpr *rows = bin(c, IR_MIN, bin(c, IR_SUB, GY, first), i32(c, panel));
  IrExpr *local = bin(c, IR_FLOORMOD, id, gsize);
  IrExpr *col = bin(c, IR_FLOORDIV, local, rows);
  if (serpentine) { /* odd panels: col -> GX - 1 - col, i.e. col + odd * (GX - 1 - 2 col) */
    IrExpr *odd = bin(c, IR_FLOORMOD, g, i32(c, 2));
    col = bin(c, IR_ADD, col, bin(c, IR_MUL, odd, bin(c, IR_SUB, bin(c, IR_SUB, GX, i32(c, 1)), bin(c, IR_MUL, i32(c, 2), col))));
  }
  *vby = ws_clamp(c, bin(c, IR_ADD, first, bin(c, IR_FLOORMOD, local, rows)), GY);
  *vbx = ws_clamp(c, col, GX);
}
/* Row or column order (the column order swaps the roles of the two axes). */
static void ws_raster_axes(TsCompiler *c, IrExpr *id, IrExpr *GX, IrExpr *GY, int64_t panel, bool serpentine,
                           bool column, IrExpr **vbx, IrExpr **vby) {
  if (column)
    ws_raster_coords(c, id, GY, GX, panel, serpentine, vby, vbx);
  else
    ws_raster_coords(c, id, GX, GY, panel, serpentine, vbx, vby);
}

IrStmt *ws_rasterize(TsCompiler *c, IrKernel *k, IrStmt *body, int64_t panel, bool serpentine, bool column) {
  IrVar *bx = k->block_var[0], *by = k->block_var[1];
  if (!bx || !by || !k->grid[0] || !k->grid[1]) return body;
  int64_t gx, gy;
  /* A single row or column is its own order.  (One panel of several rows is not: it is
   * walked column by column, by fastest.) */
  if ((ir_is_const_int(k->grid[1], &gy) && gy == 1) || (ir_is_const_int(k->grid[0], &gx) && gx == 1)) return body;
  SrcLoc loc = body->loc;
  IrExpr *GX = k->grid[0], *GY = k->grid[1];
  IrExpr *id = bin(c, IR_ADD, bin(c, IR_MUL, ir_varref(c, by, loc), GX), ir_varref(c, bx, loc));
  IrExpr *vbx, *vby;
  ws_raster_axes(c, id, GX, GY, panel, serpentine, column, &vbx, &vby);
  IrVar *nbx = ir_var(c, arena_printf(c->arena, "%s_r", bx->name), TS_DTYPE_INT32, IR_VAR_LET, loc);
  IrVar *nby = ir_var(c, arena_printf(c->arena, "%s_r", by->name), TS_DTYPE_INT32, IR_VAR_LET, loc);
  IrVar *from[2] = {bx, by};
  IrExpr *to[2] = {ir_varref(c, nbx, loc), ir_varref(c, nby, loc)};
  IrStmt *rest = ir_subst_stmt(c, body, from, to, 2);
  return ir_seq(c, (IrStmt *[]){ir_let(c, nby, ir_cast(c, TS_DTYPE_INT32, vby, loc), loc),
                                ir_let(c, nbx, ir_cast(c, TS_DTYPE_INT32, vbx, loc), loc), rest},
                3, loc);
}


/* The tile coordinates of unit `id`: lets of <bx>_<sfx> and <by>_<sfx> pushed on `items`,
 * to[0] / to[1] referring to them; *valid (2-block clusters) tells whether the tile exists. */
void ws_unit_coords(TsCompiler *c, const WsSched *sc, IrExpr *id, IrVar *bx, IrVar *by, const char *sfx,
                        PtrVec *items, IrExpr **to, IrExpr **valid) {
  SrcLoc loc = id->loc;
  IrExpr *ux, *uy;
  if (sc->panel > 0) {
    ws_raster_axes(c, id, sc->UX, sc->UY, sc->panel, sc->serpentine, sc->column, &ux, &uy);
  } else {
    uy = ws_clamp(c, bin(c, IR_FLOORDIV, id, sc->UX), sc->UY);
    ux = ws_clamp(c, bin(c, IR_FLOORMOD, id, sc->UX), sc->UX);
  }
  IrExpr *vbx = ux, *vby = uy;
  *valid = NULL;
  if (sc->cl > 1) {
    IrExpr **v = sc->axis ? &vby : &vbx, *n = sc->axis ? sc->GY : sc->GX;
    IrExpr *raw = bin(c, IR_ADD, bin(c, IR_MUL, *v, i32(c, sc->cl)), ir_varref(c, sc->rank, loc));
    *valid = bin(c, IR_LT, raw, n);
    *v = ws_clamp(c, raw, n);
  }
  IrVar *nbx = ir_var(c, arena_printf(c->arena, "%s_%s", bx->name, sfx), TS_DTYPE_INT32, IR_VAR_LET, loc);
  IrVar *nby = ir_var(c, arena_printf(c->arena, "%s_%s", by->name, sfx), TS_DTYPE_INT32, IR_VAR_LET, loc);
  to[0] = ir_varref(c, nbx, loc);
  to[1] = ir_varref(c, nby, loc);
  vec_push(c->arena, items, ir_let(c, nby, ir_cast(c, TS_DTYPE_INT32, vby, loc), loc));
  vec_push(c->arena, items, ir_let(c, nbx, ir_cast(c, TS_DTYPE_INT32, vbx, loc), loc));
}

/* One unit `id` of a persistent block: its tile coordinates, then `inner` and `post`
 * (written with the block indices bx, by) rewritten to them. */
IrStmt *ws_tile_body(TsCompiler *c, const WsSched *sc, IrExpr *id, IrVar *bx, IrVar *by, IrStmt *inner, IrStmt *post) {
  SrcLoc loc = inner->loc;
  PtrVec items = {0};
  IrExpr *to[2], *valid;
  ws_unit_coords(c, sc, id, bx, by, "t", &items, to, &valid);
  IrVar *from[2] = {bx, by};
  vec_push(c->arena, &items, ir_subst_stmt(c, inner, from, to, 2));
  if (post) {
    IrStmt *p = ir_subst_stmt(c, post, from, to, 2);
    vec_push(c->arena, &items, sc->guard ? ir_if(c, valid, p, NULL, loc) : p);
  }
  return ir_seq_vec(c, &items, loc);
}

/* The block's first unit (cid) and its number of units (cid, cid + P, ... < nunits). */
static IrExpr *ws_first_unit(TsCompiler *c, const WsSched *sc, IrVar *bx) {
  IrExpr *bxr = ir_varref(c, bx, SRCLOC_NONE);
  return sc->cl > 1 ? bin(c, IR_FLOORDIV, bxr, i32(c, sc->cl)) : bxr;
}
IrExpr *ws_unit_count(TsCompiler *c, const WsSched *sc, IrVar *bx) {
  IrExpr *cid = ws_first_unit(c, sc, bx);
  return bin(c, IR_FLOORDIV, bin(c, IR_ADD, bin(c, IR_SUB, sc->nunits, cid), bin(c, IR_SUB, sc->P, i32(c, 1))), sc->P);
}
/* unit number t of the block */
IrExpr *ws_unit_id(TsCompiler *c, const WsSched *sc, IrExpr *t, IrVar *bx) {
  return bin(c, IR_ADD, ws_first_unit(c, sc, bx), bin(c, IR_MUL, t, sc->P));
}

/* The tile loop of a persistent block around `inner` and `post`: for t: unit = cid + t*P. */
IrStmt *ws_per_tile(TsCompiler *c, const WsSched *sc, IrVar *t, IrVar *bx, IrVar *by, IrStmt *inner, IrStmt *post) {
  if (!sc->on) return post ? ir_seq(c, (IrStmt *[]){inner, post}, 2, inner->loc) : inner;
  SrcLoc loc = inner->loc;
  IrExpr *id = ws_unit_id(c, sc, ir_varref(c, t, loc), bx);
  return ir_for(c, t, i32(c, 0), ws_unit_count(c, sc, bx), IR_FOR_SERIAL, ws_tile_body(c, sc, id, bx, by, inner, post), loc);
}


/* One stream-K segment loop: for u < nseg: tile r = s/KT + u, unit dp + r, iterations
 * [k0, k1) of it (lets vk0/vk1), stage counter base vtb = ndp*KT + r*KT - s; then
 * `inner` and `post` (written with vk0, vk1, vtb and the block indices). */
IrStmt *ws_sk_loop(TsCompiler *c, const WsSched *sc, const WsSkSched *sk, IrExpr *KT, IrVar *u, IrVar *vk0, IrVar *vk1,
                       IrVar *vtb, IrVar *bx, IrVar *by, IrStmt *inner, IrStmt *post) {
  SrcLoc loc = inner->loc;
  IrExpr *sr = ir_varref(c, sk->s, loc), *er = ir_varref(c, sk->e, loc);
  IrExpr *r = bin(c, IR_ADD, bin(c, IR_FLOORDIV, sr, KT), ir_varref(c, u, loc));
  IrExpr *rk = bin(c, IR_MUL, r, KT);
  IrExpr *id = bin(c, IR_ADD, ir_varref(c, sk->dp, loc), r);
  IrStmt *lets[3] = {
      ir_let(c, vk0, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_MAX, bin(c, IR_SUB, sr, rk), i32(c, 0)), loc), loc),
      ir_let(c, vk1, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_MIN, bin(c, IR_SUB, er, rk), KT), loc), loc),
      ir_let(c, vtb, ir_cast(c, TS_DTYPE_INT32, bin(c, IR_SUB, bin(c, IR_ADD, bin(c, IR_MUL, ir_varref(c, sk->ndp, loc), KT), rk), sr), loc), loc)};
  IrStmt *body = ir_seq(c, (IrStmt *[]){lets[0], lets[1], lets[2], ws_tile_body(c, sc, id, bx, by, inner, post)}, 4, loc);
  return ir_for(c, u, i32(c, 0), ir_varref(c, sk->nseg, loc), IR_FOR_SERIAL, body, loc);
}
