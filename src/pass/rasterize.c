/* rasterize.c — T.use_swizzle(panel_size) in any kernel: the block indices are remapped so
 * that blocks launched together walk down panels of panel_size block rows (column by column
 * inside a panel; warp_specialize_tiles.c: ws_rasterize), as TileLang's rasterization does.
 * Blocks that run at the same time then share what they read in L2: in MLA decode (grid
 * batch x head groups, T.use_swizzle(10)) both head groups of a batch run side by side and
 * read its KV cache from DRAM once.  The warp-specialized GEMM schedule orders its own tiles
 * (IrKernel.rasterized); only an explicit T.use_swizzle rasterizes other kernels. */
#include "passes.h"

static void walk(TsCompiler *c, const IrFunc *f, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_KERNEL) {
    IrKernel *k = &s->u.kernel;
    if (k->raster_panel > 0 && !k->rasterized)
      k->body = ws_rasterize(c, k, k->body, k->raster_panel, pass_config_on(f, "ts.raster_serpentine"),
                             k->raster_column);
    return;
  }
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, f, s->u.seq.items[i]);
}

void pass_rasterize_blocks(TsCompiler *c, IrFunc *f) { walk(c, f, f->body); }
