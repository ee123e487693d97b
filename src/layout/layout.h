/* layout.h — shared-memory layouts (swizzles) and the GEMM plan: which tensor-core path a
 * T.gemm takes, how its warps split the tile, and the shared layouts of its operands.
 *
 *   layout_inference (src/pass) calls gemm_plan() and stores the C fragment
 *   (fragment.h) and the A/B shared layouts here  ->  lower_tile_ops rewrites shared
 *   accesses through layout_offset() and prints the GEMM as a device-template call.
 *
 * A swizzled tile [rows x cols] (the last two dims of a shared buffer; leading dims such
 * as pipeline stages stack whole tiles) is stored as atoms of `W` bytes per row
 * (W = 32/64/128, atom = W/elem columns): atom a of the columns occupies rows*W bytes,
 * row r of it W bytes, and inside a row the 16-byte chunk index is XORed with bits 7.. of
 * the row's byte offset (r*W >> 7) — CUTLASS Swizzle<log2(W/16),4,3>, the same function
 * TMA applies for CU_TENSOR_MAP_SWIZZLE_{32,64,128}B and wgmma reads through a descriptor
 * with layout type 3/2/1.  Tiles must start on a 1024-byte boundary (the XOR uses
 * absolute address bits), which merge_shared_memory guarantees. */
#ifndef TS_LAYOUT_LAYOUT_H
#define TS_LAYOUT_LAYOUT_H

#include "fragment.h"

struct Layout {
  int swizzle;       /* W in bytes: 0 (row-major, no swizzle), 32, 64, 128 */
  int elem_bytes;
  int64_t rows, cols;/* the swizzled 2-D tile */
  bool pinned;       /* T.annotate_layout: the user chose it; passes adapt to it or report a conflict */
  SrcLoc loc;        /* pinned: the T.annotate_layout call */
};

/* tilelang.layout helpers (T.annotate_layout): which layout the user asked for. */
typedef enum LayoutKind {
  LAYOUT_AUTO,    /* make_swizzled_layout / make_wgmma_swizzled_layout: the widest that fits */
  LAYOUT_FULL,    /* make_full_bank_swizzled_layout: 128-byte swizzle */
  LAYOUT_HALF,    /* make_half_bank_swizzled_layout: 64-byte swizzle */
  LAYOUT_QUARTER, /* make_quarter_bank_swizzled_layout: 32-byte swizzle */
  LAYOUT_LINEAR   /* make_linear_layout: row-major */
} LayoutKind;

/* The widest swizzle a [rows x cols] tile of elem_bytes supports (NULL: keep row-major). */
Layout *layout_swizzled(TsCompiler *c, int64_t rows, int64_t cols, int elem_bytes);
/* A pinned layout of kind `kind` for a [rows x cols] tile of elem_bytes (T.annotate_layout).
 * NULL when that swizzle cannot tile it; *why then says why ("rows of 96 bytes are not a
 * multiple of the 128-byte swizzle").  LAYOUT_AUTO falls back to row-major, as TileLang's
 * make_swizzled_layout does for tiles no swizzle fits. */
Layout *layout_pinned(TsCompiler *c, LayoutKind kind, int64_t rows, int64_t cols, int elem_bytes, SrcLoc loc,
                      const char **why);
bool layout_equal(const Layout *a, const Layout *b);
/* The layout of a whole [rows x cols] buffer tile that gives a GEMM operand window with
 * layout `win` (all rows, columns starting on an atom) the same memory arrangement: the
 * window's swizzle over all the buffer's columns (atoms are stored one after another, so
 * a window of whole atoms is a tile of its own).  win itself when the window is the whole
 * tile; NULL when no such layout exists (row-major windows, partial rows). */
Layout *layout_widen(TsCompiler *c, const Layout *win, int64_t rows, int64_t cols);
int64_t layout_atom_cols(const Layout *l); /* W / elem_bytes (cols when not swizzled) */
/* Element offset of a tile element (constant arithmetic; tests and the checker). */
int64_t layout_offset_const(const Layout *l, int64_t r, int64_t col);
/* Element offset of buf[idx] for a shared buffer with layout l (IR expression).  A view
 * (alias_of) whose last two extents are not l's rows x cols is addressed by its row-major
 * element number, cut into l's rows and tiles (view_layouts.c). */
IrExpr *layout_offset(TsCompiler *c, const Layout *l, const IrBuffer *buf, IrExpr *const *idx, int nidx);

/* ---- T.gemm planning ---------------------------------------------------------------- */
/* GEMM_MMA_SP: T.gemm_sp, mma.sp m16n8k32 over a 2:4-compressed A (gemm_sp.c) */
typedef enum GemmPath { GEMM_MMA_SYNC, GEMM_WGMMA, GEMM_MMA_SP } GemmPath;

typedef struct GemmPlan {
  GemmPath path;
  int64_t m, n, k;       /* tile extents of C (m x n) and the reduction k */
  int64_t wm, wn;        /* warps stacked along M (wgmma: 4 per warpgroup) and warp columns */
  int64_t k_inst;        /* K of one instruction (16 for 16-bit, 8 for tf32, 32 for 8-bit) */
  bool a_in_regs;        /* A is a fragment (wgmma RS, or mma.sync from registers) */
  /* a_in_regs: the A fragment layout (the tensor-core A operand registers of the wm warps
   * along M; with wn > 1 warp columns every column holds a copy: a replicate field at the
   * stride of C's warp columns).  transpose_A: the same with its dims swapped ([K x M]). */
  Fragment *a_frag;
  Layout *a_layout, *b_layout; /* wanted shared layouts (NULL = row-major) */
  Fragment *c_frag;      /* accumulator layout */
} GemmPlan;

/* Decides the plan of a GEMM statement for `nthreads` threads on the compiler's target.
 * False with a diagnostic at the statement when the shapes or dtypes are unsupported. */
bool gemm_plan(TsCompiler *c, const IrStmt *s, int64_t nthreads, GemmPlan *out);
/* The same; report = false only asks (no diagnostic), for passes that try a plan and
 * leave the statement to the ones that report. */
bool gemm_plan_ex(TsCompiler *c, const IrStmt *s, int64_t nthreads, GemmPlan *out, bool report);
/* Whether the target has tensor-core instructions for GEMM statement s's operand and
 * accumulator types and transposes (no diagnostic); the front end computes the others with
 * FMA (front/gemm_fma.c). */
bool gemm_tensor_core_types(TsCompiler *c, const IrStmt *s);

#endif
