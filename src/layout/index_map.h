/* index_map.h — user index maps: T.Layout(shape, lambda *idx: [exprs...]) annotated on a
 * global tensor with T.annotate_layout({buf: layout}).
 *
 *   front (builtins_layout.c) builds the map and checks it  ->  IrBuffer.remap
 *   ->  pass/remap_global.c rewrites every access of the buffer through index_map_offset()
 *
 * The map sends a logical index (i_0 .. i_{n-1}) of the tensor to an output tuple
 * (o_0 .. o_{m-1}), expressions over placeholder variables standing for the i_k.  The
 * output "box" has extent E_j = (largest value of o_j over the input shape) + 1, and the
 * element is stored at the row-major position of the tuple in that box:
 *   offset = ((o_0 * E_1 + o_1) * E_2 + o_2) ... * E_{m-1} + o_{m-1}.
 * For FlashAttention's dQ map [b, l//8, h, d//8, d%2, 4*(l%8) + (d%8)//2] over [B, L, H, D]
 * the box is [B, L/8, H, D/8, 2, 32]: the 8x8 accumulator tiles of an mma fragment become
 * contiguous, so the atomics of one warp hit neighbouring addresses.  Every kernel that
 * touches the tensor annotates the same map, so they agree; the host sees a plain buffer of
 * the same number of elements, which holds only when the map is a bijection of the shape
 * onto the box (index_map_check). */
#ifndef TS_LAYOUT_INDEX_MAP_H
#define TS_LAYOUT_INDEX_MAP_H

#include "../ir/ir.h"

#define INDEX_MAP_MAX_DIMS 8

struct IndexMap {
  int nin, nout;
  IrVar **in;        /* placeholder variables (IR_VAR_PLACEHOLDER), one per input dim */
  IrExpr **in_shape; /* the input extents (the shape given to T.Layout) */
  IrExpr **out;      /* the output tuple, expressions over `in` */
  IrExpr **box;      /* output extents (index_map_box), NULL before */
  SrcLoc loc;        /* the T.Layout call */
  /* Annotated on a buffer (IrBuffer.remap, one copy per buffer): the T.Kernel statements
   * that annotated it, by location (which the passes keep).  TileLang pins a layout per
   * kernel, so an access from a kernel that did not annotate it is refused rather than
   * remapped or not. */
  PtrVec kernels; /* SrcLoc * */
  /* T.Fragment (front/builtins_layout.c): out[0] is the thread holding the element; with
   * replicate > 1 the last input is the replica index, of extent replicate */
  bool fragment;
  int64_t replicate;
};

/* Fills m->box.  An extent is the constant bound of its expression when the input extents
 * make one (constant shapes, or expressions such as d % 8 bounded for any input), else
 * symbolic for the forms i_k (E = n_k) and i_k // c (E = ceildiv(n_k, c)).  False with
 * *why when an extent is not computable or an output can be negative. */
bool index_map_box(TsCompiler *c, IndexMap *m, const char **why);

/* Checks that the map is a bijection of the input shape onto the box (so the tensor's own
 * memory holds the box exactly).  The inputs and outputs split into independent groups
 * (outputs sharing inputs); each group is checked by enumeration when its shape is
 * constant (up to 2^24 elements; larger groups only have their sizes compared), and a
 * group with symbolic extents must be one input passed through unchanged.  Call after
 * index_map_box.  False with *why (arena text) otherwise. */
bool index_map_check(TsCompiler *c, const IndexMap *m, const char **why);

/* Checks that no two indices of the (constant, at most 2^22 elements) input shape map to the
 * same output tuple: what a T.Layout on a shared tile must be, whose box may be larger than the
 * shape.  Call after index_map_box.  False with *why (arena text naming two such indices). */
bool index_map_injective(TsCompiler *c, const IndexMap *m, const char **why);

/* The element offset of logical index idx[0..nin) (row-major over the box); wide: in 64
 * bits (tensors past 2^31 elements or of unknown size). */
IrExpr *index_map_offset(TsCompiler *c, const IndexMap *m, IrExpr *const *idx, bool wide, SrcLoc loc);

/* Records / asks whether the kernel at `kernel` annotated the map. */
void index_map_add_kernel(TsCompiler *c, IndexMap *m, SrcLoc kernel);
bool index_map_has_kernel(const IndexMap *m, SrcLoc kernel);

/* Same inputs, same outputs (placeholders matched by position) and same shape. */
bool index_map_equal(TsCompiler *c, const IndexMap *a, const IndexMap *b);

#endif
