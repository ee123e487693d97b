/* builtins_layout.c — layouts and layout annotations: the tilelang.layout.make_*_layout
 * helpers, T.annotate_layout, and the scheduling and memory hints (T.use_swizzle,
 * T.annotate_l2_hit_ratio, ...).
 *
 *   registry.c  ->  here  ->  IrBuffer.layout (pinned before pass/layout_inference.c)
 *
 * A layout value is a builtin that cannot be called: self is the buffer it was made for, its
 * row's arg the LayoutKind.  T.annotate_layout turns it into the buffer's pinned Layout
 * (layout.h), which layout inference and the GEMM planning keep or adapt to.  Hints whose
 * omission keeps the program's results (block rasterization, L2 and occupancy) are checked
 * and otherwise ignored.
 *
 * T.Layout(shape, fn) is a user index map (a V_LAYOUT value, layout/index_map.h): fn is
 * called once with placeholder variables and its outputs kept as expressions.  Annotated on
 * a global tensor it becomes IrBuffer.remap, which pass/remap_global.c applies to every
 * access; on a shared tile it pins our own swizzle (annotate_shared_index_map); on
 * fragments it is refused.  T.Fragment(shape, forward_fn) (the thread holding each element)
 * annotated on a fragment becomes its pinned IrBuffer.fragment (layout/fragment_fit.c). */
#include <string.h>

#include "../layout/fragment.h"
#include "../layout/index_map.h"
#include "../layout/layout.h"
#include "builtin.h"

static Value *t_make_layout(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);

/* ---- layout values ------------------------------------------------------------------------------ */
static Value *t_layout_object(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  ts_error(ev->c, call_loc(a), "a layout object is not callable: pass it to T.annotate_layout({buffer: layout})");
  return NULL;
}

/* The value a make_*_layout call returns, one row per LayoutKind. */
static const Builtin layout_objects[] = {
    {"layout", "*args, **kwargs", t_layout_object, LAYOUT_AUTO, BI_TERSE},
    {"layout", "*args, **kwargs", t_layout_object, LAYOUT_FULL, BI_TERSE},
    {"layout", "*args, **kwargs", t_layout_object, LAYOUT_HALF, BI_TERSE},
    {"layout", "*args, **kwargs", t_layout_object, LAYOUT_QUARTER, BI_TERSE},
    {"layout", "*args, **kwargs", t_layout_object, LAYOUT_LINEAR, BI_TERSE},
};

static const Builtin *layout_object_row(LayoutKind kind) {
  for (size_t i = 0; i < TS_ARRAY_LEN(layout_objects); i++)
    if (layout_objects[i].arg == (int)kind) return &layout_objects[i];
  ts_unreachable();
  return &layout_objects[0];
}

static bool is_layout_value(const Value *v) {
  return v && v->kind == V_BUILTIN && v->u.bi.row->fn == t_layout_object;
}

/* A 1-D shared-memory tile: a linear layout is the row-major it already has (TileLang's
 * issue 2529), so make_linear_layout takes it and annotating it changes nothing. */
static bool shared_1d(const IrBuffer *b) {
  return b->ndim == 1 && (b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN);
}

/* The 2-D tile of a shared buffer (its last two dims), or a diagnostic naming `what`. */
static bool shared_tile(Eval *ev, IrBuffer *b, const char *what, SrcLoc loc, int64_t *rows, int64_t *cols) {
  if (b->scope != IR_SCOPE_SHARED && b->scope != IR_SCOPE_SHARED_DYN) {
    ts_error(ev->c, loc, "%s: '%s' is a %s buffer; only shared-memory tiles (T.alloc_shared) take a swizzled layout%s",
             what, b->name, ir_scope_names[b->scope],
             b->scope == IR_SCOPE_FRAGMENT ? " (fragment layouts are inferred; pinning them is not supported yet)" : "");
    return false;
  }
  if (b->ndim < 2 || !ir_is_const_int(b->shape[b->ndim - 2], rows) || !ir_is_const_int(b->shape[b->ndim - 1], cols)) {
    ts_error(ev->c, loc, "%s: '%s' must have at least 2 dims with constant extents", what, b->name);
    return false;
  }
  return true;
}

/* tilelang.layout.make_*_layout(buffer, k_major=True, allow_pad=True, continuity=None): the
 * row's arg is the LayoutKind.  It checks its own arguments (the row takes *args, **kwargs). */
static Value *t_make_layout(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  const char *name = arena_printf(ev->a, "tilelang.layout.%s", bi->name);
  if (a->npos != 1) {
    ts_error(ev->c, loc, "%s() takes the buffer as its one positional argument (%d given)", name, a->npos);
    return ev->poison;
  }
  Value *bv = a->pos[0];
  if (!bv || bv->kind == V_POISON) return ev->poison;
  if (bv->kind != V_BUFFER) {
    ts_error(ev->c, loc, "%s() expects a shared buffer, got %s", name, ev_type_name(bv));
    return ev->poison;
  }
  IrBuffer *b = bv->u.buf;
  int64_t rows = 1, cols;
  bool linear_1d = bi->arg == LAYOUT_LINEAR && shared_1d(b) && ir_is_const_int(b->shape[0], &cols);
  if (!linear_1d && !shared_tile(ev, b, name, loc, &rows, &cols)) return ev->poison;
  for (int i = 0; i < a->nkw; i++) {
    if (!strcmp(a->kw[i], "k_major") || !strcmp(a->kw[i], "allow_pad")) continue; /* the swizzle runs along the stored rows either way */
    int64_t cont;
    if (!strcmp(a->kw[i], "continuity") && (a->kwv[i]->kind == V_NONE ||
                                            (ev_to_int(ev, a->kwv[i], &cont, loc) && cont == cols)))
      continue;
    if (!strcmp(a->kw[i], "continuity")) {
      ts_error(ev->c, loc, "%s(): a continuity other than the tile's row length (%lld) is not supported yet", name,
               (long long)cols);
      return ev->poison;
    }
    ts_error(ev->c, loc, "%s() got an unexpected keyword argument '%s'", name, a->kw[i]);
    return ev->poison;
  }
  const char *why;
  if (!layout_pinned(ev->c, (LayoutKind)bi->arg, rows, cols, dtype_bytes(b->dtype), loc, &why)) {
    ts_error(ev->c, loc, "%s('%s'): a %lldx%lld %s tile cannot take it: %s", name, b->name, (long long)rows,
             (long long)cols, dtype_name(b->dtype), why);
    return ev->poison;
  }
  return builtin_value(ev, layout_object_row((LayoutKind)bi->arg), arena_printf(ev->a, "%s(%s)", name, b->name), bv);
}

/* ---- T.Layout and T.Fragment ------------------------------------------------------------------ */
/* A map over `shape` (nin dims, plus `extra` trailing inputs such as a replica index): its
 * placeholder variables and their values as call arguments in *args.  `what` names the call. */
static IndexMap *map_inputs(Eval *ev, Value *shapev, int extra, const char *what, Value ***args, SrcLoc loc) {
  ValList shape = {0};
  if (!ev_iter_items(ev, shapev, &shape, loc)) return NULL;
  if (shape.n < 1 || shape.n + extra > INDEX_MAP_MAX_DIMS) {
    ts_error(ev->c, loc, "%s: the shape must have 1 to %d dims, got %d", what, INDEX_MAP_MAX_DIMS - extra, shape.n);
    return NULL;
  }
  IndexMap *m = ARENA_NEW(ev->a, IndexMap);
  m->nin = shape.n + extra;
  m->loc = loc;
  m->in = ARENA_ARRAY(ev->a, IrVar *, m->nin);
  m->in_shape = ARENA_ARRAY(ev->a, IrExpr *, m->nin);
  *args = ARENA_ARRAY(ev->a, Value *, m->nin);
  for (int k = 0; k < m->nin; k++) {
    m->in_shape[k] = k < shape.n ? ev_to_ir(ev, shape.items[k], NULL, loc) : ir_i32(ev->c, 1);
    if (!m->in_shape[k]) return NULL;
    if (!dtype_is_int(m->in_shape[k]->dtype)) {
      ts_error(ev->c, loc, "%s: shape dim %d is not an integer", what, k);
      return NULL;
    }
    m->in[k] = ir_var(ev->c, arena_printf(ev->a, "i%d", k), TS_DTYPE_INT32, IR_VAR_PLACEHOLDER, loc);
    (*args)[k] = ev_expr(ev, ir_varref(ev->c, m->in[k], loc));
  }
  return m;
}

/* fn(*args[0..n)) as a host function of placeholders: its local names bind expressions (no
 * LET statements in the kernel being traced, which would name the placeholders).  Its
 * outputs (a tuple or list, or one value) as integer expressions in *out, or NULL. */
static IrExpr **map_call(Eval *ev, CallArgs *a, Value *fn, Value **args, int n, const char *what, int *nout) {
  SrcLoc loc = call_loc(a);
  CallArgs ca = {.node = a->node, .pos = args, .npos = n};
  PtrVec *block = ev->block;
  ev->block = NULL;
  Value *r = ev->call(ev, fn, &ca);
  ev->block = block;
  if (!r || r->kind == V_POISON) return NULL;
  ValList outs = {0};
  if (r->kind == V_TUPLE || r->kind == V_LIST) outs = r->u.seq;
  else vl_push(ev, &outs, r); /* one output */
  if (outs.n < 1 || outs.n > INDEX_MAP_MAX_DIMS) {
    ts_error(ev->c, loc, "%s must return 1 to %d indices, got %d", what, INDEX_MAP_MAX_DIMS, outs.n);
    return NULL;
  }
  IrExpr **out = ARENA_ARRAY(ev->a, IrExpr *, outs.n);
  for (int j = 0; j < outs.n; j++) {
    Value *o = outs.items[j];
    out[j] = o && (o->kind == V_INT || o->kind == V_BOOL || o->kind == V_EXPR) ? ev_to_ir(ev, o, NULL, loc) : NULL;
    if (!out[j] || !dtype_is_int(out[j]->dtype)) {
      const char *type = out[j] ? arena_printf(ev->a, "a %s expression", dtype_name(out[j]->dtype))
                                : o ? ev_type_name(o) : "missing";
      ts_error(ev->c, loc, "%s: output %d is %s, not an integer index", what, j, type);
      return NULL;
    }
  }
  *nout = outs.n;
  return out;
}

/* T.Layout(shape, forward_fn): forward_fn(*placeholders) -> [exprs...] maps a logical index
 * of `shape` to a physical output tuple (index_map.h).  The outputs are kept symbolic; their
 * box is computed when the layout is annotated on a buffer. */
static Value *t_layout(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  Value **args;
  IndexMap *m = map_inputs(ev, arg[0], 0, "T.Layout", &args, call_loc(a));
  if (!m || !(m->out = map_call(ev, a, arg[1], args, m->nin, "T.Layout: forward_fn", &m->nout))) return ev->poison;
  Value *v = ev_new(ev, V_LAYOUT);
  v->u.imap = m;
  return v;
}

/* T.Fragment(shape, forward_fn=None, forward_thread_fn=None, replicate=1,
 * forward_index_fn=None): a register layout given by the thread that holds each element,
 * forward_fn(*idx[, rep]) -> (thread, local) or forward_thread_fn(*idx[, rep]) -> thread, with
 * rep < replicate naming a copy when replicate > 1.  Kept as an IndexMap with `fragment` set
 * (out[0] the thread; the replica a last input of extent replicate); T.annotate_layout on a
 * fragment buffer turns it into that buffer's Fragment (annotate_fragment).  Which register
 * holds an element (forward_index_fn, the local index) is the compiler's: see fragment_fit.c. */
static Value *t_fragment(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  bool fwd = arg[1] && arg[1]->kind != V_NONE; /* arguments left out are NULL */
  Value *thread_fn = fwd ? arg[1] : arg[2];
  if (!thread_fn || thread_fn->kind == V_NONE) {
    ts_error(ev->c, loc, "T.Fragment needs forward_fn or forward_thread_fn (the thread that holds each element)");
    return ev->poison;
  }
  int64_t rep = 1;
  if (arg[3] && (arg[3]->kind != V_INT || (rep = arg[3]->u.i) < 1)) {
    ts_error(ev->c, loc, "T.Fragment: replicate must be a positive int, got %s", ev_type_name(arg[3]));
    return ev->poison;
  }
  Value **args;
  IndexMap *m = map_inputs(ev, arg[0], rep > 1, "T.Fragment", &args, loc);
  if (!m) return ev->poison;
  if (rep > 1) m->in_shape[m->nin - 1] = ir_i32(ev->c, rep);
  const char *what = fwd ? "T.Fragment: forward_fn" : "T.Fragment: forward_thread_fn";
  if (!(m->out = map_call(ev, a, thread_fn, args, m->nin, what, &m->nout))) return ev->poison;
  m->fragment = true;
  m->replicate = rep;
  Value *v = ev_new(ev, V_LAYOUT);
  v->u.imap = m;
  return v;
}

static const char *shape_text(Eval *ev, IrExpr *const *shape, int n) {
  StrBuf sb = {0};
  sb_putc(&sb, '(');
  for (int k = 0; k < n; k++) {
    if (k) sb_append(&sb, ", ");
    ir_print_expr(&sb, shape[k]);
  }
  sb_append(&sb, n == 1 ? ",)" : ")");
  const char *s = arena_printf(ev->a, "%s", sb_str(&sb));
  sb_free(&sb);
  return s;
}

/* The T.Layout was made for b's rank and shape (the same expressions or equal constants). */
static bool index_map_fits(Eval *ev, const IrBuffer *b, const IndexMap *m, SrcLoc loc) {
  if (m->nin != b->ndim) {
    ts_error(ev->c, loc, "T.annotate_layout: the T.Layout of '%s' maps %d-dimensional indices but '%s' has %d dims",
             b->name, m->nin, b->name, b->ndim);
    return false;
  }
  for (int k = 0; k < m->nin; k++) {
    int64_t x, y;
    bool same = ir_expr_equal(m->in_shape[k], b->shape[k]) ||
                (ir_is_const_int(m->in_shape[k], &x) && ir_is_const_int(b->shape[k], &y) && x == y);
    if (!same) {
      ts_error(ev->c, loc, "T.annotate_layout: the T.Layout was made for shape %s but '%s' has shape %s",
               shape_text(ev, m->in_shape, m->nin), b->name, shape_text(ev, b->shape, b->ndim));
      return false;
    }
  }
  return true;
}

/* T.annotate_layout({buf: T.Layout(...)}) on a shared tile (TileLang's ldmatrix examples build
 * one from get_swizzle_layout): every access of a shared buffer names logical indices and goes
 * through the buffer's layout, so the map only decides which bank each element lands in, never
 * a result.  The tile takes our own widest 16-byte-chunk swizzle (the pinned
 * make_swizzled_layout), which keeps each 16-byte row segment of ldmatrix contiguous and its
 * eight rows on distinct banks, as the user's swizzle meant to; the map's rank and shape are
 * checked. */
static bool annotate_shared_index_map(Eval *ev, IrBuffer *b, IndexMap *m, SrcLoc loc) {
  int64_t rows, cols;
  const char *why;
  if (!index_map_fits(ev, b, m, loc)) return false;
  /* two logical elements in one physical place would alias: TileLang refuses such maps too */
  if (!index_map_box(ev->c, m, &why) || !index_map_injective(ev->c, m, &why)) {
    ts_error(ev->c, loc, "T.annotate_layout: the T.Layout of shared buffer `%s` %s%s", b->name,
             strncmp(why, "must", 4) ? "cannot be used: " : "", why);
    return false;
  }
  if (b->ndim < 2) return true; /* a 1-D tile stays row-major: one row has no banks to spread */
  if (!shared_tile(ev, b, "T.annotate_layout", loc, &rows, &cols)) return false;
  Layout *l = layout_pinned(ev->c, LAYOUT_AUTO, rows, cols, dtype_bytes(b->dtype), loc, &why);
  TS_ASSERT(l); /* AUTO falls back to row-major */
  if (b->layout && !layout_equal(b->layout, l)) {
    ts_error(ev->c, loc, "layout conflict for shared buffer '%s': already annotated with another layout at line %d",
             b->name, b->layout->loc.line);
    return false;
  }
  if (!b->layout) b->layout = l;
  return true;
}

/* T.annotate_layout({buf: T.Layout(...)}) on a global tensor: checks the map against the
 * tensor (rank, shape, box, bijection) and records it as buf->remap. */
static bool annotate_index_map(Eval *ev, IrBuffer *b, IndexMap *m, SrcLoc loc) {
  if (b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN) return annotate_shared_index_map(ev, b, m, loc);
  if (b->scope != IR_SCOPE_GLOBAL) {
    ts_error(ev->c, loc, "T.annotate_layout: a T.Layout on the %s buffer '%s' is not supported yet (only on global "
                         "tensors and shared tiles)", ir_scope_names[b->scope], b->name);
    return false;
  }
  if (b->param_index < 0 || b->alias_of || b->strides) {
    ts_error(ev->c, loc, "T.annotate_layout: a T.Layout needs a compact tensor parameter; '%s' is %s", b->name,
             b->param_index < 0 ? "a workspace (T.alloc_global)" : b->alias_of ? "a view of another tensor"
                                                                      : "a strided tensor");
    return false;
  }
  if (!index_map_fits(ev, b, m, loc)) return false;
  const char *why;
  if ((!m->box && !index_map_box(ev->c, m, &why)) || !index_map_check(ev->c, m, &why)) {
    ts_error(ev->c, loc, "T.annotate_layout: the T.Layout of '%s' (line %d) cannot lay out the tensor: %s", b->name,
             m->loc.line, why);
    return false;
  }
  if (b->remap && !index_map_equal(ev->c, b->remap, m)) {
    ts_error(ev->c, loc, "layout conflict for tensor '%s': already annotated with another T.Layout at line %d", b->name,
             b->remap->loc.line);
    return false;
  }
  if (!b->remap) { /* the buffer's own copy: its list of annotating kernels is its own */
    b->remap = ARENA_NEW(ev->a, IndexMap);
    *b->remap = *m;
    b->remap->kernels = (PtrVec){0};
  }
  index_map_add_kernel(ev->c, b->remap, ev->kernel->loc);
  return true;
}

/* ---- T.Fragment annotated on a fragment buffer --------------------------------------------- */
typedef struct FragEval { Eval *ev; const IndexMap *m; int ndim; SrcLoc loc; } FragEval;

/* The thread of element idx, replica rep, under the T.Fragment (FragmentMapFn). */
static bool fragment_thread(void *ctx, const int64_t *idx, int64_t rep, int64_t *thread) {
  FragEval *fe = ctx;
  int64_t vals[INDEX_MAP_MAX_DIMS];
  for (int k = 0; k < fe->ndim; k++) vals[k] = idx[k];
  if (fe->m->nin > fe->ndim) vals[fe->ndim] = rep;
  if (ir_eval_int(fe->m->out[0], fe->m->in, vals, fe->m->nin, thread)) return true;
  ts_error(fe->ev->c, fe->loc, "T.Fragment: the thread of an element is not an integer the compiler can compute from "
                               "the element's indices");
  return false;
}

/* The T.Fragment map m over `ndim` constant extents `shape` as a Fragment over the kernel's
 * threads, or NULL after an error naming `what` (the place) and `name` (the quoted buffer, or
 * the loop nest). */
static Fragment *fit_map(Eval *ev, const IndexMap *m, int ndim, const int64_t *shape, const char *what, const char *name,
                         SrcLoc loc) {
  bool same = m->nin - (m->replicate > 1) == ndim;
  for (int k = 0; same && k < ndim; k++) {
    int64_t x;
    same = ir_is_const_int(m->in_shape[k], &x) && x == shape[k];
  }
  if (!same) {
    IrExpr **want = ARENA_ARRAY(ev->a, IrExpr *, ndim ? ndim : 1);
    for (int k = 0; k < ndim; k++) want[k] = ir_i32(ev->c, shape[k]);
    ts_error(ev->c, loc, "%s: the T.Fragment was made for shape %s but %s has shape %s (both must be constant and "
                         "equal)", what, shape_text(ev, m->in_shape, m->nin - (m->replicate > 1)), name,
             shape_text(ev, want, ndim));
    return NULL;
  }
  const IrKernel *k = &ev->kernel->u.kernel;
  int64_t nthreads = k->threads[0] * k->threads[1] * k->threads[2];
  FragEval fe = {ev, m, ndim, loc};
  const char *why = NULL;
  int errors = ev->c->diag.errors;
  Fragment *f = fragment_fit(ev->c, ndim, shape, nthreads, m->replicate, fragment_thread, &fe, &why);
  if (!f && ev->c->diag.errors == errors)
    ts_error(ev->c, loc, "%s: the T.Fragment of %s is not a layout this compiler can hold: %s", what, name,
             why ? why : "(no reason)");
  return f;
}

Fragment *bi_loop_layout(Eval *ev, Value *v, int ndim, IrExpr *const *extent, const char *what, SrcLoc loc) {
  if (!v || v->kind == V_NONE) return NULL;
  if (!ev->kernel) {
    ts_error(ev->c, loc, "%s with a loop_layout must be inside a 'with T.Kernel(...)' block", what);
    return NULL;
  }
  if (v->kind != V_LAYOUT || !v->u.imap->fragment) {
    ts_error(ev->c, loc, "%s: loop_layout must be a T.Fragment(shape, forward_fn=...), got %s", what, ev_type_name(v));
    return NULL;
  }
  int64_t shape[INDEX_MAP_MAX_DIMS];
  for (int k = 0; k < ndim; k++)
    if (k >= INDEX_MAP_MAX_DIMS || !ir_is_const_int(extent[k], &shape[k])) {
      ts_error(ev->c, loc, "%s: a loop_layout needs constant extents", what);
      return NULL;
    }
  return fit_map(ev, v->u.imap, ndim, shape, what, "the loop nest", loc);
}

/* T.annotate_layout({frag: T.Fragment(...)}): the fragment's layout, pinned before layout
 * inference (which keeps an annotated Fragment and propagates from it). */
static bool annotate_fragment(Eval *ev, IrBuffer *b, const IndexMap *m, SrcLoc loc) {
  if (b->scope != IR_SCOPE_FRAGMENT) {
    ts_error(ev->c, loc, "T.annotate_layout: a T.Fragment lays out a fragment (T.alloc_fragment), but '%s' is a %s buffer",
             b->name, ir_scope_names[b->scope]);
    return false;
  }
  int64_t shape[INDEX_MAP_MAX_DIMS];
  for (int k = 0; k < b->ndim; k++)
    if (k >= INDEX_MAP_MAX_DIMS || !ir_is_const_int(b->shape[k], &shape[k])) {
      ts_error(ev->c, loc, "T.annotate_layout: a T.Fragment needs '%s' to have a constant shape", b->name);
      return false;
    }
  Fragment *f = fit_map(ev, m, b->ndim, shape, "T.annotate_layout", arena_printf(ev->a, "'%s'", b->name), loc);
  if (!f) return false;
  if (b->fragment && !fragment_equal(b->fragment, f)) {
    ts_error(ev->c, loc, "layout conflict for fragment '%s': already annotated with another T.Fragment", b->name);
    return false;
  }
  b->fragment = f;
  return true;
}

/* ---- T.annotate_layout ---------------------------------------------------------------------- */
/* T.annotate_layout({buffer: layout}): pins each shared buffer's layout before layout
 * inference (reference tilelang-core.md §4.4 level 0).  A T.gemm on the buffer adapts to
 * the pinned swizzle (layout.c gemm_plan); plain copies and loops address it through the
 * layout (lower_tile_ops).  A T.Layout on a global tensor remaps its accesses
 * (annotate_index_map). */
static Value *t_annotate_layout(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[0]->kind != V_DICT) {
    ts_error(ev->c, loc, "T.annotate_layout expects a dict {buffer: layout}, got %s", ev_type_name(arg[0]));
    return ev->poison;
  }
  for (int i = 0; i < arg[0]->u.dict.keys.n; i++) {
    Value *key = arg[0]->u.dict.keys.items[i], *val = arg[0]->u.dict.vals.items[i];
    if (key->kind != V_BUFFER) {
      ts_error(ev->c, loc, "T.annotate_layout: keys must be buffers, got %s", ev_type_name(key));
      return ev->poison;
    }
    if (val->kind == V_POISON) return ev->poison;
    IrBuffer *b = key->u.buf;
    if (val->kind == V_LAYOUT) {
      bool ok = val->u.imap->fragment ? annotate_fragment(ev, b, val->u.imap, loc) : annotate_index_map(ev, b, val->u.imap, loc);
      if (!ok) return ev->poison;
      continue;
    }
    if (!is_layout_value(val)) {
      if (val->kind == V_FUNC || (val->kind == V_BUILTIN && val->u.bi.row->fn != t_make_layout))
        ts_error(ev->c, loc, "T.annotate_layout: a function is not a layout; use T.Fragment(shape, forward_fn=...) for "
                             "a fragment, T.Layout(shape, fn) for a tensor, or tilelang.layout.make_swizzled_layout(%s)",
                 b->name);
      else
        ts_error(ev->c, loc, "T.annotate_layout: the layout of '%s' must be a tilelang.layout.make_*_layout(...) "
                             "value, got %s", b->name, ev_type_name(val));
      return ev->poison;
    }
    int64_t rows, cols;
    IrBuffer *made_for = val->u.bi.self->u.buf;
    if (val->u.bi.row->arg == LAYOUT_LINEAR && shared_1d(b) && made_for->ndim == 1) continue; /* (shared_1d) */
    if (!shared_tile(ev, b, "T.annotate_layout", loc, &rows, &cols)) return ev->poison;
    if (made_for != b) {
      /* a layout made for another buffer fits when that buffer's tile has the same shape */
      int64_t r2 = made_for->ndim < 2 ? 1 : -1, c2 = -1; /* (a 1-D tile's linear layout: one row) */
      if (made_for->ndim >= 2) ir_is_const_int(made_for->shape[made_for->ndim - 2], &r2);
      ir_is_const_int(made_for->shape[made_for->ndim - 1], &c2);
      if (r2 != rows || c2 != cols || dtype_bytes(made_for->dtype) != dtype_bytes(b->dtype)) {
        ts_error(ev->c, loc, "T.annotate_layout: the layout made for '%s' (%lldx%lld %s) does not fit '%s' (%lldx%lld %s)",
                 made_for->name, (long long)r2, (long long)c2, dtype_name(made_for->dtype), b->name, (long long)rows,
                 (long long)cols, dtype_name(b->dtype));
        return ev->poison;
      }
    }
    const char *why;
    Layout *l = layout_pinned(ev->c, (LayoutKind)val->u.bi.row->arg, rows, cols, dtype_bytes(b->dtype), loc, &why);
    TS_ASSERT(l); /* checked when the layout was made */
    if (b->layout && !layout_equal(b->layout, l)) {
      ts_error(ev->c, loc, "layout conflict for shared buffer '%s': already annotated with another layout at line %d",
               b->name, b->layout->loc.line);
      return ev->poison;
    }
    if (!b->layout) b->layout = l;
  }
  return ev->none;
}

/* ---- hints ------------------------------------------------------------------------------------ */
/* T.use_swizzle(panel_size, order="row", enable=True): block rasterization only changes
 * the order in which tiles are scheduled.  Recorded as IrKernel.raster_panel for the
 * schedules that rasterize (warp_specialize.c): "row" walks panels of panel_size block
 * rows (by), "column" panels of panel_size block columns (bx, IrKernel.raster_column);
 * enable=False turns rasterization off; "mlx" leaves it to the compiler. */
static Value *t_use_swizzle(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int64_t panel;
  if (!ev_to_int(ev, arg[0], &panel, loc)) return ev->poison;
  if (panel <= 0) {
    ts_error(ev->c, loc, "T.use_swizzle: panel_size must be positive, got %lld", (long long)panel);
    return ev->poison;
  }
  if (arg[1] && (arg[1]->kind != V_STR || (strcmp(arg[1]->u.str.s, "row") && strcmp(arg[1]->u.str.s, "column") &&
                                            strcmp(arg[1]->u.str.s, "mlx")))) {
    ts_error(ev->c, loc, "T.use_swizzle: order must be \"row\", \"column\" or \"mlx\", got %s", ev_repr(ev, arg[1]));
    return ev->poison;
  }
  int enable = arg[2] ? ev_truth(ev, arg[2], loc) : 1;
  if (enable < 0) {
    if (enable == -1) ts_error(ev->c, loc, "T.use_swizzle: enable must be a Python value, got %s", ev_repr(ev, arg[2]));
    return ev->poison;
  }
  bool row = !arg[1] || !strcmp(arg[1]->u.str.s, "row"), column = arg[1] && !strcmp(arg[1]->u.str.s, "column");
  ev->kernel->u.kernel.raster_panel = !enable ? -1 : row || column ? (int)(panel < 1 << 20 ? panel : 1 << 20) : 0;
  ev->kernel->u.kernel.raster_column = enable && column;
  return ev->none;
}

/* T.annotate_safe_value({buffer: value}): an out-of-bounds read of the (global) buffer gives
 * value instead of 0 (the guarded loads of T.Parallel nests and T.copy, safe_memory's). */
static Value *t_safe_value(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[0]->kind != V_DICT) {
    ts_error(ev->c, loc, "T.annotate_safe_value takes a dict {buffer: value}, got %s", ev_type_name(arg[0]));
    return ev->poison;
  }
  for (int i = 0; i < arg[0]->u.dict.keys.n; i++) {
    Value *key = arg[0]->u.dict.keys.items[i];
    if (key->kind != V_BUFFER || key->u.buf->scope != IR_SCOPE_GLOBAL) {
      ts_error(ev->c, loc, "T.annotate_safe_value: the keys must be global tensors, got %s", ev_type_name(key));
      return ev->poison;
    }
    IrBuffer *b = key->u.buf;
    IrExpr *v = bi_to_dtype(ev, arg[0]->u.dict.vals.items[i], b->dtype, loc);
    if (!v) return ev->poison;
    b->safe_value = v;
  }
  return ev->none;
}

/* T.annotate_min_blocks_per_sm(n): __launch_bounds__(threads, n), asking ptxas to fit n blocks
 * per SM in registers. */
static Value *t_min_blocks(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  int64_t n;
  if (!bi_need_kernel(ev, a, bi) || !ev_to_int(ev, arg[0], &n, loc)) return ev->poison;
  if (n < 1 || n > 32) {
    ts_error(ev->c, loc, "T.annotate_min_blocks_per_sm: min_blocks must be in 1..32, got %lld", (long long)n);
    return ev->poison;
  }
  ev->kernel->u.kernel.min_blocks = (int)n;
  return ev->none;
}

/* ---- rows -------------------------------------------------------------------------------------- */
static const Builtin layout_rows[] = {
    {"annotate_layout", "layout_map", t_annotate_layout, 0, 0},
    {"use_swizzle", "panel_size, order=\"row\", enable=True", t_use_swizzle, 0, 0},
    {"annotate_l2_hit_ratio", "l2_hit_ratio_map", bi_hint, 0, 0},
    {"annotate_safe_value", "safe_value_map", t_safe_value, 0, 0},
    {"annotate_restrict_buffers", "*buffers", bi_hint, 0, 0},
    {"annotate_min_blocks_per_sm", "min_blocks", t_min_blocks, 0, 0},
    {"annotate_padding", "padding_map", bi_kernel_unsupported, 0, 0},
    {"Fragment", "shape, forward_fn=None, forward_thread_fn=None, replicate=1, forward_index_fn=None", t_fragment, 0, 0},
    {"Layout", "shape, forward_fn", t_layout, 0, 0},
};

/* tilelang.layout.make_*_layout(buffer, k_major=True, allow_pad=True, continuity=None) */
static const Builtin make_layout_rows[] = {
    {"make_swizzled_layout", "*args, **kwargs", t_make_layout, LAYOUT_AUTO, BI_TERSE},
    {"make_wgmma_swizzled_layout", "*args, **kwargs", t_make_layout, LAYOUT_AUTO, BI_TERSE},
    {"make_full_bank_swizzled_layout", "*args, **kwargs", t_make_layout, LAYOUT_FULL, BI_TERSE},
    {"make_half_bank_swizzled_layout", "*args, **kwargs", t_make_layout, LAYOUT_HALF, BI_TERSE},
    {"make_quarter_bank_swizzled_layout", "*args, **kwargs", t_make_layout, LAYOUT_QUARTER, BI_TERSE},
    {"make_linear_layout", "*args, **kwargs", t_make_layout, LAYOUT_LINEAR, BI_TERSE},
    /* tilelang.layout.Layout / Fragment are T.Layout / T.Fragment */
    {"Fragment", "shape, forward_fn=None, forward_thread_fn=None, replicate=1, forward_index_fn=None", t_fragment, 0, 0},
    {"Layout", "shape, forward_fn", t_layout, 0, 0},
};

/* Another tilelang.layout name: known to exist, not lowered (an UNSUPPORTED statement). */
static const Builtin layout_unsupported = {"unsupported", "*args, **kwargs", bi_unsupported_stmt, 0, BI_TERSE};

static Value *layout_missing(Eval *ev, const char *name) {
  return builtin_value(ev, &layout_unsupported, arena_printf(ev->a, "tilelang.layout.%s", name), NULL);
}

const BuiltinTable builtins_layout[] = {
    {MOD_T, layout_rows, TS_ARRAY_LEN(layout_rows), NULL},
    {MOD_LAYOUT, make_layout_rows, TS_ARRAY_LEN(make_layout_rows), layout_missing},
    BUILTIN_TABLE_END,
};
