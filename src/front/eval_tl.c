/* eval_tl.c — the rest of the T.* namespace: every construct of reference tilelang-core.md
 * §1.2 that eval_builtins.c does not implement, and the distributed primitives of
 * tilescale-distributed.md §1.2–§1.5 with their enums (T.Team, T.CmpType, T.Amo).
 *
 *   eval.c (attribute T.xxx)  ->  eval_builtins.c (core constructs)  ->  here (the others)
 *
 * Each construct is one row of `tl_constructs`: its name, its documented signature as
 * text ("src, dst, size, dst_pe=-1") and a handler.  Arguments are always checked against
 * the signature first, so a wrong argument count or an unknown keyword names the
 * construct whatever its state.  Handlers either build IR the passes can lower (views,
 * strided tensors, device prints and asserts, block/thread queries, extern calls) or
 * report "T.xxx is not supported yet" at the call and return a silent poison value, so
 * the rest of the file is still checked without a cascade of follow-up errors.
 * Performance-only hints whose omission keeps the program's results (block
 * rasterization, L2 and occupancy hints) are accepted and ignored. */
#include <stdio.h>
#include <string.h>

#include "../layout/layout.h"
#include "value.h"

/* ---- signatures ------------------------------------------------------------------------ */
typedef struct TlSig TlSig;
typedef Value *(*TlFn)(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig);

struct TlSig {
  const char *name;    /* T.<name> */
  const char *params;  /* "a, b, c=1, *args, **kwargs": names with '=' are optional */
  TlFn fn;
  int arg;             /* small table argument for the handler */
};

enum { MAX_PARAMS = 16 };

typedef struct ParsedSig {
  const char *names[MAX_PARAMS];
  int n, nreq;
  int npos;  /* parameters that positional arguments may fill (those before *args) */
  bool varargs, varkw;
} ParsedSig;

static void parse_sig(Eval *ev, const char *s, ParsedSig *p) {
  memset(p, 0, sizeof *p);
  bool optional = false;
  while (*s) {
    while (*s == ' ' || *s == ',') s++;
    if (!*s) break;
    const char *b = s;
    while (*s && *s != ',') s++;
    const char *e = s;
    while (e > b && e[-1] == ' ') e--;
    if (e - b >= 2 && b[0] == '*' && b[1] == '*') { p->varkw = true; continue; }
    if (b[0] == '*') { p->varargs = true; optional = true; p->npos = p->n; continue; }
    const char *eq = memchr(b, '=', (size_t)(e - b));
    if (eq) optional = true;
    TS_ASSERT(p->n < MAX_PARAMS);
    p->names[p->n++] = arena_strndup(ev->a, b, (size_t)((eq ? eq : e) - b));
    if (!optional) p->nreq = p->n;
  }
  if (!p->varargs) p->npos = p->n;
}

/* Binds a call to a signature.  arg[i] is NULL for an absent optional parameter; extra
 * positional arguments (only with *args) are left in a->pos[npos..]; parameters after
 * *args are keyword-only. */
static bool bind_sig(Eval *ev, CallArgs *a, const TlSig *sig, const ParsedSig *p, Value **arg) {
  SrcLoc loc = a->node ? a->node->loc : SRCLOC_NONE;
  for (int i = 0; i < p->n; i++) arg[i] = NULL;
  if (a->npos > p->npos && !p->varargs) {
    if (p->n == 0)
      ts_error(ev->c, loc, "T.%s() takes no arguments (%d given)", sig->name, a->npos);
    else
      ts_error(ev->c, loc, "T.%s() takes at most %d argument%s (%d given); signature: T.%s(%s)", sig->name, p->n,
               p->n == 1 ? "" : "s", a->npos, sig->name, sig->params);
    return false;
  }
  for (int i = 0; i < a->npos && i < p->npos; i++) arg[i] = a->pos[i];
  for (int k = 0; k < a->nkw; k++) {
    int j = -1;
    for (int i = 0; i < p->n; i++)
      if (!strcmp(p->names[i], a->kw[k])) j = i;
    if (j < 0) {
      if (p->varkw) continue;
      ts_error(ev->c, loc, "T.%s() got an unexpected keyword argument '%s'; signature: T.%s(%s)", sig->name, a->kw[k],
               sig->name, sig->params);
      return false;
    }
    if (arg[j]) {
      ts_error(ev->c, loc, "T.%s() got multiple values for argument '%s'", sig->name, a->kw[k]);
      return false;
    }
    arg[j] = a->kwv[k];
  }
  for (int i = 0; i < p->nreq; i++)
    if (!arg[i]) {
      ts_error(ev->c, loc, "T.%s() missing required argument '%s'; signature: T.%s(%s)", sig->name, p->names[i],
               sig->name, sig->params);
      return false;
    }
  for (int i = 0; i < a->npos; i++)
    if (!a->pos[i] || a->pos[i]->kind == V_POISON) return false;
  for (int i = 0; i < a->nkw; i++)
    if (!a->kwv[i] || a->kwv[i]->kind == V_POISON) return false;
  return true;
}

static SrcLoc cloc(CallArgs *a) { return a->node ? a->node->loc : SRCLOC_NONE; }

/* ---- handlers ------------------------------------------------------------------------------- */
/* Recognised, arguments checked, no lowering yet: one diagnostic at the call. */
static Value *h_unsupported(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  (void)arg;
  ts_error(ev->c, cloc(a), "T.%s is not supported yet", sig->name);
  return ev->poison;
}

/* Performance hints: the program computes the same results without them. */
static Value *h_hint(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  (void)a;
  (void)arg;
  (void)sig;
  return ev->none;
}

static bool need_kernel(Eval *ev, CallArgs *a, const TlSig *sig) {
  return ev_need_kernel(ev, arena_printf(ev->a, "T.%s", sig->name), cloc(a));
}

/* T.use_swizzle(panel_size, order="row", enable=True): block rasterization only changes
 * the order in which tiles are scheduled; checked and otherwise ignored. */
static Value *h_use_swizzle(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
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
  return ev->none;
}

/* ---- layouts: tilelang.layout.make_*_layout(buf) and T.annotate_layout ---------------------- */
/* A layout value is a builtin that cannot be called: self is the buffer it was made for,
 * arg its LayoutKind.  T.annotate_layout turns it into the buffer's pinned Layout
 * (layout.h), which layout inference and the GEMM planning keep or adapt to. */
static const struct { const char *name; LayoutKind kind; } layout_helpers[] = {
    {"make_swizzled_layout", LAYOUT_AUTO},           {"make_wgmma_swizzled_layout", LAYOUT_AUTO},
    {"make_full_bank_swizzled_layout", LAYOUT_FULL}, {"make_half_bank_swizzled_layout", LAYOUT_HALF},
    {"make_quarter_bank_swizzled_layout", LAYOUT_QUARTER}, {"make_linear_layout", LAYOUT_LINEAR},
};

static Value *layout_obj(Eval *ev, CallArgs *a, Value *self, int kind) {
  (void)self;
  (void)kind;
  ts_error(ev->c, cloc(a), "a layout object is not callable: pass it to T.annotate_layout({buffer: layout})");
  return NULL;
}

static bool is_layout_value(const Value *v) { return v && v->kind == V_BUILTIN && v->u.bi.fn == layout_obj; }

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

/* tilelang.layout.make_*_layout(buffer, k_major=True, allow_pad=True, continuity=None) */
static Value *layout_make(Eval *ev, CallArgs *a, Value *self, int row) {
  (void)self;
  SrcLoc loc = cloc(a);
  const char *name = arena_printf(ev->a, "tilelang.layout.%s", layout_helpers[row].name);
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
  int64_t rows, cols;
  if (!shared_tile(ev, b, name, loc, &rows, &cols)) return ev->poison;
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
  if (!layout_pinned(ev->c, layout_helpers[row].kind, rows, cols, dtype_bytes(b->dtype), loc, &why)) {
    ts_error(ev->c, loc, "%s('%s'): a %lldx%lld %s tile cannot take it: %s", name, b->name, (long long)rows,
             (long long)cols, dtype_name(b->dtype), why);
    return ev->poison;
  }
  Value *v = ev_new(ev, V_BUILTIN);
  v->u.bi.fn = layout_obj;
  v->u.bi.self = bv;
  v->u.bi.arg = (int)layout_helpers[row].kind;
  v->u.bi.name = arena_printf(ev->a, "%s(%s)", name, b->name);
  return v;
}

Value *tl_layout_attr(Eval *ev, const char *name) {
  for (int i = 0; i < TS_ARRAY_LEN(layout_helpers); i++)
    if (!strcmp(layout_helpers[i].name, name)) {
      Value *v = ev_new(ev, V_BUILTIN);
      v->u.bi.fn = layout_make;
      v->u.bi.name = arena_printf(ev->a, "tilelang.layout.%s", name);
      v->u.bi.arg = i;
      return v;
    }
  return NULL;
}

/* T.annotate_layout({buffer: layout}): pins each shared buffer's layout before layout
 * inference (reference tilelang-core.md §4.4 level 0).  A T.gemm on the buffer adapts to
 * the pinned swizzle (layout.c gemm_plan); plain copies and loops address it through the
 * layout (lower_tile_ops). */
static Value *h_annotate_layout(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
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
    if (!is_layout_value(val)) {
      if (val->kind == V_FUNC || (val->kind == V_BUILTIN && val->u.bi.fn != layout_make))
        ts_error(ev->c, loc, "T.annotate_layout: custom layouts (T.Layout, T.Fragment, functions) are not supported yet; "
                             "use tilelang.layout.make_swizzled_layout(%s) or another make_*_layout helper", b->name);
      else
        ts_error(ev->c, loc, "T.annotate_layout: the layout of '%s' must be a tilelang.layout.make_*_layout(...) "
                             "value, got %s", b->name, ev_type_name(val));
      return ev->poison;
    }
    int64_t rows, cols;
    if (!shared_tile(ev, b, "T.annotate_layout", loc, &rows, &cols)) return ev->poison;
    IrBuffer *made_for = val->u.bi.self->u.buf;
    if (made_for != b) {
      /* a layout made for another buffer fits when that buffer's tile has the same shape */
      int64_t r2 = -1, c2 = -1;
      ir_is_const_int(made_for->shape[made_for->ndim - 2], &r2);
      ir_is_const_int(made_for->shape[made_for->ndim - 1], &c2);
      if (r2 != rows || c2 != cols || dtype_bytes(made_for->dtype) != dtype_bytes(b->dtype)) {
        ts_error(ev->c, loc, "T.annotate_layout: the layout made for '%s' (%lldx%lld %s) does not fit '%s' (%lldx%lld %s)",
                 made_for->name, (long long)r2, (long long)c2, dtype_name(made_for->dtype), b->name, (long long)rows,
                 (long long)cols, dtype_name(b->dtype));
        return ev->poison;
      }
    }
    const char *why;
    Layout *l = layout_pinned(ev->c, (LayoutKind)val->u.bi.arg, rows, cols, dtype_bytes(b->dtype), loc, &why);
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

/* ---- asynchronous wgmma: T.wgmma_gemm + T.wait_wgmma ------------------------------------- */
/* T.wgmma_gemm(A, B, C, ...): T.gemm's operands and options, issued as wgmma without
 * waiting (gemm.wg_wait = -1; lower_tile_ops prints ts::gemm_*_wgmma_issue).  Legal only
 * where the tile runs as wgmma on sm_90a; anything else is reported here, at the call. */
static Value *h_wgmma_gemm(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  (void)arg;
  if (!need_kernel(ev, a, sig)) return ev->poison;
  int before = ev->block->len;
  Value *r = ev_call(ev, bi_module_attr_quiet(ev, MOD_T, "gemm"), a); /* checks and emits the GEMM */
  if (!r || r->kind == V_POISON || ev->block->len != before + 1) return ev->poison;
  IrStmt *st = ev->block->items[before];
  TS_ASSERT(st->kind == IR_S_GEMM);
  /* issued, not waited for: pass plan_gemm checks that it can run as wgmma (sm_90a, a
   * wgmma plan) and says why not */
  st->u.gemm.wg_wait = -1;
  return ev->none;
}

/* Issued wgmma_gemm statements in `s` (the statements emitted so far in this block), most
 * recent first, one per accumulator. */
static void issued_wgmma(IrStmt *s, IrStmt **found, int *n, int max) {
  if (!s) return;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = s->u.seq.n - 1; i >= 0; i--) issued_wgmma(s->u.seq.items[i], found, n, max);
      return;
    case IR_S_FOR: issued_wgmma(s->u.loop.body, found, n, max); return;
    case IR_S_WHILE: issued_wgmma(s->u.while_.body, found, n, max); return;
    case IR_S_IF:
      issued_wgmma(s->u.if_.else_s, found, n, max);
      issued_wgmma(s->u.if_.then_s, found, n, max);
      return;
    case IR_S_GEMM:
      if (s->u.gemm.wg_wait != -1) return;
      for (int i = 0; i < *n; i++)
        if (found[i]->u.gemm.c.buf == s->u.gemm.c.buf) return;
      if (*n < max) found[(*n)++] = s;
      return;
    default: return;
  }
}

/* T.wait_wgmma(n): waits until at most n wgmma groups of this warpgroup are pending
 * (wgmma.wait_group n).  It is a GEMM statement with wg_wait = -4 - n and the operands of
 * a T.wgmma_gemm issued before it, so lowering also fences that accumulator's registers
 * (the compiler must not read them before the wait); one per accumulator in flight. */
static Value *h_wait_wgmma(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  int64_t n;
  if (!need_kernel(ev, a, sig) || !ev_to_int(ev, arg[0], &n, loc)) return ev->poison;
  if (n < 0 || n > 1000) {
    ts_error(ev->c, loc, "T.wait_wgmma: the number of groups left pending must be between 0 and 1000, got %lld", (long long)n);
    return ev->poison;
  }
  IrStmt *found[8];
  int nf = 0;
  for (int i = ev->block->len - 1; i >= 0; i--) issued_wgmma(ev->block->items[i], found, &nf, 8);
  if (!nf) {
    ts_error(ev->c, loc, "T.wait_wgmma: no T.wgmma_gemm is issued before it in this block (or in a loop before it); "
                         "wait in the block that issues the wgmma");
    return ev->poison;
  }
  for (int i = 0; i < nf; i++) {
    IrStmt *w = ir_stmt(ev->c, IR_S_GEMM, loc);
    w->u.gemm = found[i]->u.gemm;
    w->u.gemm.wg_wait = (int)(-4 - n);
    ev_emit(ev, w);
  }
  return ev->none;
}

/* T.get_block_binding(dim=0): blockIdx of the enclosing T.Kernel (0 for an unused axis). */
static bool dim_arg(Eval *ev, CallArgs *a, Value *v, const TlSig *sig, int64_t *dim) {
  if (!v) {
    *dim = 0;
    return true;
  }
  if (!ev_to_int(ev, v, dim, cloc(a))) return false;
  if (*dim < 0 || *dim > 2) {
    ts_error(ev->c, cloc(a), "T.%s: dim must be 0, 1 or 2, got %lld", sig->name, (long long)*dim);
    return false;
  }
  return true;
}

static Value *h_block_binding(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  int64_t dim;
  if (!need_kernel(ev, a, sig) || !dim_arg(ev, a, arg[0], sig, &dim)) return ev->poison;
  IrVar *v = ev->kernel->u.kernel.block_var[dim];
  if (!v) return ev_int(ev, 0);
  return ev_expr(ev, ir_varref(ev->c, v, cloc(a)));
}

/* T.get_thread_extent(dim=0) / T.get_block_extent(dim=0): blockDim / gridDim. */
static Value *h_extent(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  int64_t dim;
  if (!need_kernel(ev, a, sig) || !dim_arg(ev, a, arg[0], sig, &dim)) return ev->poison;
  IrKernel *k = &ev->kernel->u.kernel;
  if (sig->arg == 0) return ev_int(ev, k->threads[dim]);
  int64_t g;
  if (ir_is_const_int(k->grid[dim], &g)) return ev_int(ev, g);
  return ev_expr(ev, k->grid[dim]);
}

/* T.get_thread_bindings() / T.get_block_bindings(): all three axes as a list. */
static Value *h_bindings(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  (void)arg;
  if (!need_kernel(ev, a, sig)) return ev->poison;
  Value *out = ev_new(ev, V_LIST);
  for (int d = 0; d < 3; d++) {
    Value *v;
    if (sig->arg == 0) {
      Value *dv = ev_int(ev, d);
      CallArgs sub = *a;
      sub.pos = &dv;
      sub.npos = 1;
      sub.nkw = 0;
      Value *fn = bi_module_attr(ev, MOD_T, "get_thread_binding", cloc(a));
      v = fn ? ev_call(ev, fn, &sub) : NULL;
    } else {
      IrVar *bv = ev->kernel->u.kernel.block_var[d];
      v = bv ? ev_expr(ev, ir_varref(ev->c, bv, cloc(a))) : ev_int(ev, 0);
    }
    if (!v) return ev->poison;
    vl_push(ev, &out->u.seq, v);
  }
  return out;
}

/* T.StridedTensor(shape, strides, dtype): a parameter annotation with explicit strides. */
static Value *h_strided_tensor(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  (void)sig;
  Value *tt = ev_call(ev, bi_module_attr(ev, MOD_T, "Tensor", loc),
                      &(CallArgs){a->node, (Value *[]){arg[0], arg[2]}, arg[2] ? 2 : 1, NULL, NULL, 0});
  if (!tt || tt->kind != V_TENSORTYPE) return ev->poison;
  Value *st = arg[1];
  ValList items = {0};
  if (st->kind == V_TUPLE || st->kind == V_LIST) items = st->u.seq;
  else vl_push(ev, &items, st);
  if (items.n != tt->u.tt.shape->u.seq.n) {
    ts_error(ev->c, loc, "T.StridedTensor: %d strides given for a tensor of rank %d", items.n, tt->u.tt.shape->u.seq.n);
    return ev->poison;
  }
  Value *sv = ev_new(ev, V_TUPLE);
  for (int i = 0; i < items.n; i++) {
    Value *d = items.items[i];
    if (d->kind != V_INT && !(d->kind == V_EXPR && dtype_is_int(d->u.expr->dtype))) {
      ts_error(ev->c, loc, "T.StridedTensor: strides must be integers, got %s", ev_type_name(d));
      return ev->poison;
    }
    vl_push(ev, &sv->u.seq, d);
  }
  tt->u.tt.strides = sv;
  return tt;
}

/* T.view(buf, shape=None, dtype=None) / T.reshape(buf, shape): a buffer aliasing the
 * memory of `buf` with a new shape and/or element type; the total size in bits must match. */
static Value *h_view(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (arg[0]->kind != V_BUFFER) {
    ts_error(ev->c, loc, "T.%s: expected a buffer, got %s", sig->name, ev_type_name(arg[0]));
    return ev->poison;
  }
  IrBuffer *src = arg[0]->u.buf;
  if (!ev->block) {
    ts_error(ev->c, loc, "T.%s can only be used inside a @T.prim_func kernel", sig->name);
    return ev->poison;
  }
  if (src->scope == IR_SCOPE_VAR || src->scope == IR_SCOPE_BARRIER) {
    ts_error(ev->c, loc, "T.%s: buffer '%s' of scope %s cannot be viewed", sig->name, src->name,
             ir_scope_names[src->scope]);
    return ev->poison;
  }
  ts_dtype t = src->dtype;
  Value *dt = sig->arg == 0 ? arg[2] : NULL;
  if (dt && dt->kind != V_NONE && !ev_to_dtype(ev, dt, &t, loc)) return ev->poison;
  IrExpr **shape = src->shape;
  int nd = src->ndim;
  if (arg[1] && arg[1]->kind != V_NONE) {
    ValList items = {0};
    if (arg[1]->kind == V_TUPLE || arg[1]->kind == V_LIST) items = arg[1]->u.seq;
    else vl_push(ev, &items, arg[1]);
    nd = items.n;
    shape = ARENA_ARRAY(ev->a, IrExpr *, nd ? nd : 1);
    for (int i = 0; i < nd; i++) {
      shape[i] = ev_to_ir(ev, items.items[i], NULL, loc);
      if (!shape[i]) return ev->poison;
      if (!dtype_is_int(shape[i]->dtype)) {
        ts_error(ev->c, loc, "T.%s: shape dimensions must be integers", sig->name);
        return ev->poison;
      }
    }
  } else if (t != src->dtype) {
    /* same rank, last dimension rescaled by the element-size ratio */
    shape = ARENA_ARRAY(ev->a, IrExpr *, nd);
    for (int i = 0; i < nd; i++) shape[i] = src->shape[i];
    int64_t last;
    if (!nd || !ir_is_const_int(src->shape[nd - 1], &last) ||
        (last * dtype_bits(src->dtype)) % dtype_bits(t) != 0) {
      ts_error(ev->c, loc, "T.view: cannot view '%s' (%s) as %s without an explicit shape", src->name,
               dtype_name(src->dtype), dtype_name(t));
      return ev->poison;
    }
    shape[nd - 1] = ir_int(ev->c, last * dtype_bits(src->dtype) / dtype_bits(t), TS_DTYPE_INT32, loc);
  }
  IrBuffer *probe = ir_buffer(ev->c, src->name, t, src->scope, nd, shape, loc);
  int64_t n_old = ir_buffer_numel(src), n_new = ir_buffer_numel(probe);
  if (n_old >= 0 && n_new >= 0 && n_old * dtype_bits(src->dtype) != n_new * dtype_bits(t)) {
    ts_error(ev->c, loc, "T.%s: '%s' has %lld bits but the view has %lld", sig->name, src->name,
             (long long)(n_old * dtype_bits(src->dtype)), (long long)(n_new * dtype_bits(t)));
    return ev->poison;
  }
  const char *name = ev->pending_name ? ev->pending_name : arena_printf(ev->a, "%s_view", src->name);
  ev->pending_name = NULL;
  IrBuffer *b = ir_buffer(ev->c, name, t, src->scope, nd, shape, loc);
  b->alias_of = src->alias_of ? src->alias_of : src;
  if (src->scope == IR_SCOPE_GLOBAL) b->param_index = -1;
  IrStmt *s = ir_stmt(ev->c, IR_S_ALLOC, loc);
  s->u.alloc.buf = b;
  ev_emit(ev, s);
  ev_define_buffer(ev, b);
  Value *v = ev_new(ev, V_BUFFER);
  v->u.buf = b;
  return v;
}

/* T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): the (nhw_step, c_step)
 * tile of the im2col matrix of an NHWC image into col (rows: output pixels n*OH*OW + oh*OW + ow;
 * columns: kh*KW*C + kw*C + c, as a [KH, KW, C, F] filter flattens), zero where the window falls
 * outside the image or the matrix.  Staged as a T.Parallel nest of guarded loads. */
static IrExpr *im2col_cint(Eval *ev, Value *v, const char *what, SrcLoc loc, int64_t *out) {
  if (!ev_to_int(ev, v, out, loc)) return NULL;
  if (*out < 0 || (*out == 0 && strcmp(what, "pad"))) {
    ts_error(ev->c, loc, "T.im2col: %s must be %s, got %lld", what, strcmp(what, "pad") ? "positive" : "non-negative",
             (long long)*out);
    return NULL;
  }
  return ir_int(ev->c, *out, TS_DTYPE_INT32, loc);
}

static Value *h_im2col(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  TsCompiler *c = ev->c;
  if (!need_kernel(ev, a, sig)) return ev->poison;
  if (arg[0]->kind != V_BUFFER || arg[0]->u.buf->ndim != 4 || arg[1]->kind != V_BUFFER || arg[1]->u.buf->ndim != 2) {
    ts_error(c, loc, "T.im2col: expects an NHWC image buffer and a 2-D tile buffer");
    return ev->poison;
  }
  IrBuffer *img = arg[0]->u.buf, *col = arg[1]->u.buf;
  int64_t kk, s, d, p, bm, bk;
  IrExpr *KH = im2col_cint(ev, arg[4], "kernel", loc, &kk), *S = im2col_cint(ev, arg[5], "stride", loc, &s),
         *D = im2col_cint(ev, arg[6], "dilation", loc, &d), *P = im2col_cint(ev, arg[7], "pad", loc, &p);
  IrExpr *mstep = ev_to_ir(ev, arg[2], NULL, loc), *kstep = ev_to_ir(ev, arg[3], NULL, loc);
  if (!KH || !S || !D || !P || !mstep || !kstep) return ev->poison;
  if (!ir_is_const_int(col->shape[0], &bm) || !ir_is_const_int(col->shape[1], &bk)) {
    ts_error(c, loc, "T.im2col: the tile '%s' needs a constant shape", col->name);
    return ev->poison;
  }
  IrExpr *N = img->shape[0], *H = img->shape[1], *W = img->shape[2], *C = img->shape[3];
#define B(k, x, y) ir_binary(c, IR_##k, (x), (y), loc)
  /* OH = (H + 2P - D(KH-1) - 1) / S + 1, the same for W (square kernel) */
  IrExpr *span = ir_int(c, d * (kk - 1) + 1 - 2 * p, TS_DTYPE_INT32, loc);
  IrExpr *OH = B(ADD, B(FLOORDIV, B(SUB, H, span), S), ir_i32(c, 1));
  IrExpr *OW = B(ADD, B(FLOORDIV, B(SUB, W, span), S), ir_i32(c, 1));
  IrVar *vi = ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc), *vj = ir_var(c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *m = B(ADD, B(MUL, mstep, ir_i32(c, bm)), ir_varref(c, vi, loc));
  IrExpr *k = B(ADD, B(MUL, kstep, ir_i32(c, bk)), ir_varref(c, vj, loc));
  IrExpr *n = B(FLOORDIV, m, B(MUL, OH, OW)), *oh = B(FLOORMOD, B(FLOORDIV, m, OW), OH), *ow = B(FLOORMOD, m, OW);
  IrExpr *kh = B(FLOORDIV, k, B(MUL, KH, C)), *kw = B(FLOORMOD, B(FLOORDIV, k, C), KH), *ch = B(FLOORMOD, k, C);
  IrExpr *h = B(SUB, B(ADD, B(MUL, oh, S), B(MUL, kh, D)), P), *w = B(SUB, B(ADD, B(MUL, ow, S), B(MUL, kw, D)), P);
  IrExpr *zero = ir_i32(c, 0);
  IrExpr *ok = B(AND, B(LT, m, B(MUL, N, B(MUL, OH, OW))), B(LT, k, B(MUL, B(MUL, KH, KH), C)));
  ok = B(AND, ok, B(AND, B(AND, B(GE, h, zero), B(LT, h, H)), B(AND, B(GE, w, zero), B(LT, w, W))));
#undef B
  IrExpr *src_idx[4] = {n, h, w, ch};
  IrExpr *val = ir_select(c, IR_IF_THEN_ELSE, ok, ir_load(c, img, src_idx, 4, loc), ir_float(c, 0, img->dtype, loc), loc);
  IrExpr **dst_idx = ARENA_ARRAY(ev->a, IrExpr *, 2);
  dst_idx[0] = ir_varref(c, vi, loc);
  dst_idx[1] = ir_varref(c, vj, loc);
  IrStmt *st = ir_store(c, col, dst_idx, 2, ir_cast(c, col->dtype, val, loc), loc);
  IrStmt *inner = ir_for(c, vj, ir_i32(c, 0), ir_i32(c, bk), IR_FOR_PARALLEL, st, loc);
  ev_emit(ev, ir_for(c, vi, ir_i32(c, 0), ir_i32(c, bm), IR_FOR_PARALLEL, inner, loc));
  return ev->none;
}

/* tx = T.thread_binding(extent | start, stop, thread="threadIdx.x"): the kernel's thread index
 * along that axis; the range must be the whole axis (0 .. the kernel's threads there). */
static Value *h_thread_binding(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  int64_t lo = 0, hi;
  if (!arg[1] || arg[1]->kind == V_NONE) {
    if (!ev_to_int(ev, arg[0], &hi, loc)) return ev->poison;
  } else if (!ev_to_int(ev, arg[0], &lo, loc) || !ev_to_int(ev, arg[1], &hi, loc)) {
    return ev->poison;
  }
  static const char *const axes[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
  int axis = -1;
  for (int i = 0; i < 3 && arg[2] && arg[2]->kind == V_STR; i++)
    if (!strcmp(arg[2]->u.str.s, axes[i])) axis = i;
  if (axis < 0) {
    ts_error(ev->c, loc, "T.thread_binding: thread must be \"threadIdx.x\", \"threadIdx.y\" or \"threadIdx.z\"");
    return ev->poison;
  }
  IrKernel *k = &ev->kernel->u.kernel;
  int64_t n = k->threads[axis] > 0 ? k->threads[axis] : 1;
  if (lo != 0 || hi != n) {
    ts_error(ev->c, loc, "T.thread_binding: %s runs over [0, %lld) in this kernel, not [%lld, %lld)", axes[axis],
             (long long)n, (long long)lo, (long long)hi);
    return ev->poison;
  }
  if (!k->thread_var[axis]) {
    static const char *const names[] = {"tx", "ty", "tz"};
    k->thread_var[axis] = ir_var(ev->c, names[axis], TS_DTYPE_INT32, IR_VAR_THREAD_IDX, loc);
    k->thread_var[axis]->axis = axis;
  }
  return ev_expr(ev, ir_varref(ev->c, k->thread_var[axis], loc));
}

/* T.print(obj, msg="", warp_group_id=0, warp_id=0): device printf of a scalar. */
static Value *h_print(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  if (arg[0]->kind == V_BUFFER && arg[0]->u.buf->scope != IR_SCOPE_VAR) {
    ts_error(ev->c, loc, "T.print of a whole buffer ('%s') is not supported yet: print an element", arg[0]->u.buf->name);
    return ev->poison;
  }
  IrExpr *args[3];
  int n = 0;
  if (arg[1] && arg[1]->kind != V_STR) {
    ts_error(ev->c, loc, "T.print: msg must be a string, got %s", ev_type_name(arg[1]));
    return ev->poison;
  }
  if (arg[1] && arg[1]->u.str.n) args[n++] = ir_str(ev->c, arg[1]->u.str.s, loc);
  if (arg[0]->kind == V_STR) args[n++] = ir_str(ev->c, arg[0]->u.str.s, loc);
  else if (!(args[n++] = ev_to_ir(ev, arg[0], NULL, loc))) return ev->poison;
  IrExpr **pa = ARENA_ARRAY(ev->a, IrExpr *, n);
  memcpy(pa, args, sizeof(IrExpr *) * (size_t)n);
  ev_emit(ev, ir_eval(ev->c, ir_call(ev->c, IRI_PRINTF, TS_DTYPE_VOID, pa, n, loc), loc));
  return ev->none;
}

/* T.device_assert(cond, msg=""): a runtime check in the kernel. */
static Value *h_device_assert(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  int t = ev_truth(ev, arg[0], loc);
  if (t == -2) return ev->poison;
  const char *msg = arg[1] && arg[1]->kind == V_STR ? arg[1]->u.str.s : "T.device_assert failed";
  if (t == 0) {
    ts_error(ev->c, loc, "T.device_assert is always false: %s", msg);
    return ev->poison;
  }
  if (t == 1) return ev->none;
  IrStmt *s = ir_stmt(ev->c, IR_S_ASSERT, loc);
  s->u.assert_.cond = ev_to_bool_ir(ev, ev_to_ir(ev, arg[0], NULL, loc), loc);
  s->u.assert_.msg = msg;
  if (s->u.assert_.cond) ev_emit(ev, s);
  return ev->none;
}

/* T.call_extern(name, *args, dtype="void"): a call of a device function by name. */
static Value *h_call_extern(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  (void)sig;
  ts_dtype t = TS_DTYPE_VOID;
  Value *name = arg[0];
  if (name->kind == V_DTYPE && a->npos >= 2 && a->pos[1]->kind == V_STR) { /* TVM order: (dtype, name, ...) */
    t = name->u.dtype;
    name = a->pos[1];
  }
  if (name->kind != V_STR) {
    ts_error(ev->c, loc, "T.call_extern: the function name must be a string, got %s", ev_type_name(name));
    return ev->poison;
  }
  if (arg[1] && arg[1]->kind != V_NONE && !ev_to_dtype(ev, arg[1], &t, loc)) return ev->poison;
  int first = name == arg[0] ? 1 : 2;
  int n = a->npos - first + 1;
  IrExpr **args = ARENA_ARRAY(ev->a, IrExpr *, n);
  args[0] = ir_str(ev->c, name->u.str.s, loc);
  for (int i = first; i < a->npos; i++) {
    Value *v = a->pos[i];
    args[i - first + 1] = v->kind == V_STR ? ir_str(ev->c, v->u.str.s, loc) : ev_to_ir(ev, v, NULL, loc);
    if (!args[i - first + 1]) return ev->poison;
  }
  IrExpr *call = ir_call(ev->c, IRI_CALL_EXTERN, t, args, n, loc);
  return ev_expr(ev, call);
}

/* T.sync_warp(): __syncwarp(). */
static Value *h_sync_warp(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  (void)arg;
  if (!need_kernel(ev, a, sig)) return ev->poison;
  ev_emit(ev, ir_eval(ev->c, ir_call(ev->c, IRI_SYNCWARP, TS_DTYPE_VOID, NULL, 0, cloc(a)), cloc(a)));
  return ev->none;
}

/* T.shift_left(x, n) / T.shift_right(x, n). */
static Value *h_shift(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  Value *r = ev_binop(ev, sig->arg ? AOP_RSHIFT : AOP_LSHIFT, arg[0], arg[1], cloc(a));
  return r ? r : ev->poison;
}

/* T.alloc_barrier(arrive_count): mbarriers (shared.barrier).  The buffer is created so the
 * rest of the kernel is still checked, but mbarrier lowering does not exist yet. */
/* T.Persistent(domain, wave_size, index, group_size=8): a loop frame over the tiles of a
 * 1-D or 2-D domain, block `index` taking every wave_size-th tile (exec_persistent_for). */
static Value *h_persistent(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  Value *dom = arg[0];
  int nd = dom->kind == V_LIST || dom->kind == V_TUPLE ? dom->u.seq.n : 1;
  if (nd < 1 || nd > 2) {
    ts_error(ev->c, loc, "T.Persistent: the domain must have 1 or 2 dimensions, got %d", nd);
    return ev->poison;
  }
  LoopFrame *f = ARENA_NEW(ev->a, LoopFrame);
  f->kind = IR_FOR_SERIAL;
  f->ndim = nd;
  f->min = ARENA_ARRAY(ev->a, IrExpr *, nd);
  f->extent = ARENA_ARRAY(ev->a, IrExpr *, nd);
  f->persistent = true;
  for (int d = 0; d < nd; d++) {
    Value *x = dom->kind == V_LIST || dom->kind == V_TUPLE ? dom->u.seq.items[d] : dom;
    IrExpr *e = ev_to_ir(ev, x, NULL, loc);
    if (!e || !dtype_is_int(e->dtype)) {
      if (e) ts_error(ev->c, loc, "T.Persistent: domain extents must be integers");
      return ev->poison;
    }
    f->min[d] = ir_i32(ev->c, 0);
    f->extent[d] = ir_cast(ev->c, TS_DTYPE_INT32, e, loc);
  }
  f->wave = ev_to_ir(ev, arg[1], NULL, loc);
  f->index = ev_to_ir(ev, arg[2], NULL, loc);
  if (!f->wave || !f->index || !dtype_is_int(f->wave->dtype) || !dtype_is_int(f->index->dtype)) {
    if (f->wave && f->index) ts_error(ev->c, loc, "T.Persistent: wave_size and index must be integers");
    return ev->poison;
  }
  f->wave = ir_cast(ev->c, TS_DTYPE_INT32, f->wave, loc);
  f->index = ir_cast(ev->c, TS_DTYPE_INT32, f->index, loc);
  int64_t w;
  if (ir_is_const_int(f->wave, &w) && w <= 0) {
    ts_error(ev->c, loc, "T.Persistent: wave_size must be positive, got %lld", (long long)w);
    return ev->poison;
  }
  f->group = 8;
  if (arg[3] && arg[3]->kind != V_NONE) {
    if (!ev_to_int(ev, arg[3], &f->group, loc)) return ev->poison;
    if (f->group <= 0) {
      ts_error(ev->c, loc, "T.Persistent: group_size must be positive, got %lld", (long long)f->group);
      return ev->poison;
    }
  }
  Value *v = ev_new(ev, V_FRAME);
  v->u.frame = f;
  return v;
}

static Value *h_alloc_barrier(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  int n = 1;
  if (arg[0]->kind == V_LIST || arg[0]->kind == V_TUPLE) n = arg[0]->u.seq.n;
  for (int i = 0; i < n; i++) {
    Value *c = arg[0]->kind == V_LIST || arg[0]->kind == V_TUPLE ? arg[0]->u.seq.items[i] : arg[0];
    int64_t k;
    if (!ev_to_int(ev, c, &k, loc)) return ev->poison;
    if (k <= 0) {
      ts_error(ev->c, loc, "T.alloc_barrier: arrive counts must be positive, got %lld", (long long)k);
      return ev->poison;
    }
  }
  h_unsupported(ev, a, arg, sig);
  IrExpr *ext = ir_int(ev->c, n, TS_DTYPE_INT32, loc);
  const char *name = ev->pending_name ? ev->pending_name : "barrier";
  ev->pending_name = NULL;
  Value *v = ev_new(ev, V_BUFFER);
  v->u.buf = ir_buffer(ev->c, name, TS_DTYPE_UINT64, IR_SCOPE_BARRIER, 1, &ext, loc);
  return v;
}

/* T.alloc_global(shape, dtype) / T.alloc_barrier_gpu(): a device workspace that is not a
 * kernel parameter.  Codegen gives it static storage in the module (one array per kernel
 * and buffer) and the runtime zeroes it on the launch stream before every launch, so the
 * one-shot GPU barriers start from 0 each time.  Its size is therefore part of the module:
 * every extent must be a positive compile-time integer. */
enum { WORKSPACE_MAX_BYTES = 1 << 30 };

static Value *alloc_workspace(Eval *ev, CallArgs *a, const TlSig *sig, Value *shape, ts_dtype t,
                              const char *dflt) {
  SrcLoc loc = cloc(a);
  if (t == TS_DTYPE_VOID || t == TS_DTYPE_HANDLE || t == TS_DTYPE_BOOL) {
    ts_error(ev->c, loc, "T.%s: dtype %s cannot be a workspace element; use an integer or floating-point type",
             sig->name, dtype_name(t));
    return ev->poison;
  }
  int nd = 1;
  bool seq = shape->kind == V_TUPLE || shape->kind == V_LIST;
  if (seq) nd = shape->u.seq.n;
  if (nd < 1 || nd > 8) {
    ts_error(ev->c, loc, "T.%s: the shape needs 1 to 8 dimensions, got %d", sig->name, nd);
    return ev->poison;
  }
  IrExpr **sh = ARENA_ARRAY(ev->a, IrExpr *, nd);
  int64_t bytes = dtype_bytes(t);
  for (int i = 0; i < nd; i++) {
    Value *d = seq ? shape->u.seq.items[i] : shape;
    if (d->kind != V_INT) {
      ts_error(ev->c, loc, "T.%s: dimension %d of the shape must be a compile-time integer (the workspace is "
                           "static storage of the module), got %s", sig->name, i, ev_type_name(d));
      return ev->poison;
    }
    if (d->u.i <= 0) {
      ts_error(ev->c, loc, "T.%s: dimension %d of the shape must be positive, got %lld", sig->name, i,
               (long long)d->u.i);
      return ev->poison;
    }
    if (d->u.i > WORKSPACE_MAX_BYTES || (bytes *= d->u.i) > WORKSPACE_MAX_BYTES) {
      ts_error(ev->c, loc, "T.%s: the workspace is larger than %d bytes; pass a tensor instead", sig->name,
               WORKSPACE_MAX_BYTES);
      return ev->poison;
    }
    sh[i] = ir_int(ev->c, d->u.i, TS_DTYPE_INT32, loc);
  }
  const char *name = ev->pending_name ? ev->pending_name : dflt;
  ev->pending_name = NULL;
  IrBuffer *b = ir_buffer(ev->c, name, t, IR_SCOPE_GLOBAL, nd, sh, loc);
  IrStmt *s = ir_stmt(ev->c, IR_S_ALLOC, loc);
  s->u.alloc.buf = b;
  ev_emit(ev, s);
  ev_define_buffer(ev, b);
  Value *v = ev_new(ev, V_BUFFER);
  v->u.buf = b;
  return v;
}

static Value *h_alloc_global(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  if (!need_kernel(ev, a, sig)) return ev->poison;
  if (sig->arg) /* alloc_barrier_gpu = alloc_global([1], "uint32") */
    return alloc_workspace(ev, a, sig, ev_int(ev, 1), TS_DTYPE_UINT32, "barrier");
  ts_dtype t;
  if (!ev_to_dtype(ev, arg[1], &t, cloc(a))) return ev->poison;
  return alloc_workspace(ev, a, sig, arg[0], t, "workspace");
}

/* Distributed ld/st: sem and scope are checked against the documented sets. */
static bool one_of(Eval *ev, CallArgs *a, const TlSig *sig, Value *v, const char *what, const char *const *ok, int n) {
  if (!v) return true;
  if (v->kind == V_STR)
    for (int i = 0; i < n; i++)
      if (!strcmp(v->u.str.s, ok[i])) return true;
  StrBuf sb = {0};
  for (int i = 0; i < n; i++) sb_printf(&sb, "%s\"%s\"", i ? ", " : "", ok[i]);
  ts_error(ev->c, cloc(a), "T.%s: %s must be one of %s, got %s", sig->name, what, sb_str(&sb), ev_repr(ev, v));
  sb_free(&sb);
  return false;
}

static bool is_element(Eval *ev, CallArgs *a, const TlSig *sig, Value *v, const char *role) {
  if (v->kind == V_EXPR && v->u.expr->kind == IR_LOAD) return true;
  ts_error(ev->c, cloc(a), "T.%s: %s must be a buffer element such as buf[i], got %s", sig->name, role, ev_type_name(v));
  return false;
}

/* ---- distributed primitives --------------------------------------------------------------------
 * Each lowers to an extern call of the device library (device/tilescale/dist.cuh for the
 * IPC family, dist_shmem.cuh for the NVSHMEM family); the JIT includes the headers when the
 * generated source calls ts::dist:: or ts::shmem::.  Calls without a result are EVAL
 * statements; calls with one are bound to a LET at the call, so they run exactly once, in
 * program order, even when the result is unused (T.atom_add as a statement). */
/* A distributed device operation (ir.h IR_DEVICE_OPS) as a statement, or as a value bound
 * to a fresh variable `var` (so it runs once, where it is written). */
static void emit_device(Eval *ev, IrDeviceOp op, const int64_t *attrs, IrExpr **args, int n, SrcLoc loc) {
  ev_emit(ev, ir_device_stmt(ev->c, op, attrs, ir_device_info[op].nattrs, args, n, loc));
}

static Value *bind_value(Eval *ev, IrExpr *call, const char *var, SrcLoc loc) {
  IrVar *v = ir_var(ev->c, var, call->dtype, IR_VAR_LET, loc);
  ev_define_var(ev, v);
  ev_emit(ev, ir_let(ev->c, v, call, loc));
  return ev_expr(ev, ir_varref(ev->c, v, loc));
}

static Value *value_device(Eval *ev, IrDeviceOp op, ts_dtype t, const int64_t *attrs, IrExpr **args, int n, SrcLoc loc,
                           const char *var) {
  return bind_value(ev, ir_device(ev->c, op, t, attrs, ir_device_info[op].nattrs, args, n, loc), var, loc);
}

/* The device operation a T.* primitive of the distributed families lowers to: the row of
 * ir.h's table printed with the same name. */
static IrDeviceOp dist_op(const TlSig *sig) {
  IrDeviceOp op = ir_device_named(sig->name);
  TS_ASSERT(op != IRD_COUNT && (ir_device_info[op].flags & IRD_DIST));
  return op;
}

/* An integer operand (pe, size, expected value, ...) as IR of type t. */
static IrExpr *int_operand(Eval *ev, CallArgs *a, const TlSig *sig, Value *v, int64_t dflt, ts_dtype t,
                           const char *what) {
  SrcLoc loc = cloc(a);
  if (!v) return ir_int(ev->c, dflt, t, loc);
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  if (!e) return NULL;
  if (!dtype_is_int(e->dtype) && e->dtype != TS_DTYPE_BOOL) {
    ts_error(ev->c, loc, "T.%s: %s must be an integer, got %s", sig->name, what, dtype_name(e->dtype));
    return NULL;
  }
  return ir_cast(ev->c, t, e, loc);
}

static bool bool_arg(Eval *ev, CallArgs *a, const TlSig *sig, Value *v, const char *what, bool *out) {
  *out = false;
  if (!v) return true;
  int t = ev_truth(ev, v, cloc(a));
  if (t < 0) {
    ts_error(ev->c, cloc(a), "T.%s: %s must be a compile-time bool, got %s", sig->name, what, ev_type_name(v));
    return false;
  }
  *out = t == 1;
  return true;
}

static const char *str_or(Value *v, const char *dflt) { return v ? v->u.str.s : dflt; }

/* The sem / scope attributes of ld / st / atom_add (strings checked by one_of before). */
static int64_t sem_arg(const char *s) {
  return !strcmp(s, "weak") ? IR_SEM_WEAK : !strcmp(s, "volatile") ? IR_SEM_VOLATILE
         : !strcmp(s, "acquire") ? IR_SEM_ACQUIRE : !strcmp(s, "release") ? IR_SEM_RELEASE : IR_SEM_RELAXED;
}
static int64_t scope_arg(const char *s) {
  return !strcmp(s, "cta") ? IR_MSCOPE_CTA : !strcmp(s, "gpu") ? IR_MSCOPE_GPU : IR_MSCOPE_SYS;
}

static const IrBuffer *element_buf(const Value *v) { return v->u.expr->u.load.buf; }

/* A T.alloc_global workspace (or a view of one): global memory that is no parameter, an
 * eager parameter or a T.empty output. */
static bool is_workspace(Eval *ev, const IrBuffer *b) {
  while (b->alias_of) b = b->alias_of;
  if (b->scope != IR_SCOPE_GLOBAL || b->param_index >= 0) return false;
  for (int i = 0; i < ev->outputs.len; i++)
    if (ev->outputs.items[i] == b) return false;
  for (int i = 0; i < ev->eager_params.len; i++)
    if (((IrParam *)ev->eager_params.items[i])->buf == b) return false;
  return true;
}

/* Memory other GPUs (or other threads) can address: global or shared, not registers. */
static bool addressable(Eval *ev, CallArgs *a, const TlSig *sig, const IrBuffer *b, const char *role, bool remote) {
  /* Another rank's copy is found through the symmetric heap (base[pe] + offset): a
   * workspace lives in the module's static storage, outside the heap, so translating its
   * address would point anywhere. */
  if (remote && is_workspace(ev, b)) {
    ts_error(ev->c, cloc(a),
             "T.%s: %s '%s' is a T.alloc_global workspace, which exists only on this GPU; %s must be in a "
             "symmetric buffer passed as a parameter", sig->name, role, b->name,
             strcmp(role, "sig_addr") ? "memory another rank accesses" : "NVSHMEM signal words");
    return false;
  }
  if (b->scope == IR_SCOPE_GLOBAL || (!remote && (b->scope == IR_SCOPE_SHARED || b->scope == IR_SCOPE_SHARED_DYN)))
    return true;
  ts_error(ev->c, cloc(a), "T.%s: %s '%s' is in %s memory; it must be %s", sig->name, role, b->name,
           ir_scope_names[b->scope],
           remote ? "a global (symmetric) buffer when it lives on another rank" : "global or shared memory");
  return false;
}

static bool pe_is_local(const Value *v) {
  int64_t x;
  return !v || (v->kind == V_INT && v->u.i == -1) ||
         (v->kind == V_EXPR && ir_is_const_int(v->u.expr, &x) && x == -1);
}

/* T.ld(src, value, ...) / T.st(dst, value, ...) */
static Value *h_ldst(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  static const char *const scopes[] = {"cta", "gpu", "sys"};
  static const char *const ld_sems[] = {"weak", "volatile", "acquire", "relaxed"};
  static const char *const st_sems[] = {"weak", "volatile", "release", "relaxed"};
  SrcLoc loc = cloc(a);
  bool is_st = sig->arg != 0;
  if (!need_kernel(ev, a, sig)) return ev->poison;
  if (!is_element(ev, a, sig, arg[0], is_st ? "dst" : "src")) return ev->poison;
  if (!one_of(ev, a, sig, arg[2], "scope", scopes, 3)) return ev->poison;
  if (!one_of(ev, a, sig, arg[3], "sem", is_st ? st_sems : ld_sems, 4)) return ev->poison;
  const char *scope = str_or(arg[2], "gpu"), *sem = str_or(arg[3], "weak");
  bool na, nc = false;
  if (!bool_arg(ev, a, sig, arg[4], "na", &na)) return ev->poison;
  if (!is_st && !bool_arg(ev, a, sig, arg[5], "nc", &nc)) return ev->poison;
  Value *pe_v = arg[is_st ? 5 : 6];
  const IrBuffer *b = element_buf(arg[0]);
  if (!addressable(ev, a, sig, b, is_st ? "dst" : "src", !pe_is_local(pe_v))) return ev->poison;
  int bytes = dtype_bits(b->dtype) / 8;
  if (bytes != 2 && bytes != 4 && bytes != 8) {
    ts_error(ev->c, loc, "T.%s: '%s' has elements of %s; 16-, 32- and 64-bit values are supported", sig->name,
             b->name, dtype_name(b->dtype));
    return ev->poison;
  }
  /* Combinations PTX cannot express are errors here, not assembler errors later. */
  if (nc && strcmp(sem, "weak")) {
    ts_error(ev->c, loc, "T.ld: non-coherent loads (nc=True) are weak; sem=\"%s\" is not possible", sem);
    return ev->poison;
  }
  if (na && !strcmp(sem, "volatile") && !nc) {
    ts_error(ev->c, loc, "T.%s: volatile accesses take no L1::no_allocate hint (na=True)", sig->name);
    return ev->poison;
  }
  if ((na || nc) && b->scope != IR_SCOPE_GLOBAL) {
    ts_error(ev->c, loc, "T.%s: %s needs global memory, but '%s' is in %s memory", sig->name, nc ? "nc=True" : "na=True",
             b->name, ir_scope_names[b->scope]);
    return ev->poison;
  }
  IrExpr *pe = int_operand(ev, a, sig, pe_v, -1, TS_DTYPE_INT64, is_st ? "dst_pe" : "src_pe");
  if (!pe) return ev->poison;
  IrExpr *addr = ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &arg[0]->u.expr, 1, loc);
  if (is_st) {
    IrExpr *v = ev_to_ir(ev, arg[1], NULL, loc);
    if (!v) return ev->poison;
    int64_t attrs[3] = {sem_arg(sem), scope_arg(scope), na};
    emit_device(ev, IRD_DIST_ST, attrs, (IrExpr *[]){addr, ir_cast(ev->c, b->dtype, v, loc), pe}, 3, loc);
    return ev->none;
  }
  /* ld: `value` is where the result goes (an alloc_var or a buffer element). */
  if (arg[1]->kind != V_EXPR || arg[1]->u.expr->kind != IR_LOAD) {
    ts_error(ev->c, loc, "T.ld: value must be a T.alloc_var or a buffer element that receives the result, got %s",
             ev_type_name(arg[1]));
    return ev->poison;
  }
  const IrExpr *dst = arg[1]->u.expr;
  if (dst->u.load.buf->scope == IR_SCOPE_FRAGMENT) {
    ts_error(ev->c, loc, "T.ld: value '%s' is a fragment; use a T.alloc_var or a local/shared buffer element",
             dst->u.load.buf->name);
    return ev->poison;
  }
  int64_t attrs[4] = {sem_arg(sem), scope_arg(scope), nc, na};
  IrExpr *call = ir_device(ev->c, IRD_DIST_LD, b->dtype, attrs, 4, (IrExpr *[]){addr, pe}, 2, loc);
  ev_emit(ev, ir_store(ev->c, dst->u.load.buf, dst->u.load.idx, dst->u.load.nidx,
                       ir_cast(ev->c, dst->u.load.buf->dtype, call, loc), loc));
  return ev->none;
}

/* wait_eq..wait_lt(value, expected, peer=-1), barrier_blocks(barrier), atom_add(target, ...) */
static Value *h_on_element(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  if (!is_element(ev, a, sig, arg[0], sig->arg ? "target" : "value")) return ev->poison;
  const IrBuffer *b = element_buf(arg[0]);
  IrExpr *addr = ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &arg[0]->u.expr, 1, loc);
  bool is_int = dtype_is_int(b->dtype) && (dtype_bits(b->dtype) == 32 || dtype_bits(b->dtype) == 64);
  if (sig->arg) { /* atom_add scope / sem */
    static const char *const scopes[] = {"gpu", "sys"};
    static const char *const sems[] = {"relaxed", "acquire", "release", "acq_rel"};
    if (!one_of(ev, a, sig, arg[2], "scope", scopes, 2) || !one_of(ev, a, sig, arg[3], "sem", sems, 4))
      return ev->poison;
    if (!is_int) {
      ts_error(ev->c, loc, "T.atom_add: target '%s' must hold 32- or 64-bit integers, got %s", b->name,
               dtype_name(b->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, sig, b, "target", false)) return ev->poison;
    IrExpr *v = ev_to_ir(ev, arg[1], NULL, loc);
    if (!v) return ev->poison;
    const char *sem = str_or(arg[3], "relaxed");
    bool acq_rel = !strcmp(sem, "acq_rel");
    int64_t scope = scope_arg(str_or(arg[2], "gpu"));
    int64_t attrs[2] = {acq_rel ? scope : sem_arg(sem), scope};
    return value_device(ev, acq_rel ? IRD_DIST_ATOM_ADD_ACQ_REL : IRD_DIST_ATOM_ADD, b->dtype, attrs,
                        (IrExpr *[]){addr, ir_cast(ev->c, b->dtype, v, loc)}, 2, loc, "old");
  }
  if (!strncmp(sig->name, "wait_", 5)) {
    if (!is_int) {
      ts_error(ev->c, loc, "T.%s: the flag '%s' must be a 32- or 64-bit integer, got %s", sig->name, b->name,
               dtype_name(b->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, sig, b, "flag", !pe_is_local(arg[2]))) return ev->poison;
    IrExpr *e = ev_to_ir(ev, arg[1], NULL, loc);
    IrExpr *pe = int_operand(ev, a, sig, arg[2], -1, TS_DTYPE_INT64, "peer");
    if (!e || !pe) return ev->poison;
    emit_device(ev, dist_op(sig), NULL, (IrExpr *[]){addr, ir_cast(ev->c, b->dtype, e, loc), pe}, 3, loc);
    return ev->none;
  }
  /* barrier_blocks / sync_blocks: an int32[num_ranks] symmetric buffer, zero at first use. */
  if (b->scope != IR_SCOPE_GLOBAL || dtype_bits(b->dtype) != 32 || !dtype_is_int(b->dtype)) {
    ts_error(ev->c, loc, "T.%s: the barrier '%s' must be a global int32 buffer of num_ranks elements (got %s %s)",
             sig->name, b->name, ir_scope_names[b->scope], dtype_name(b->dtype));
    return ev->poison;
  }
  if (!addressable(ev, a, sig, b, "barrier", true)) return ev->poison;
  emit_device(ev, dist_op(sig), NULL, &addr, 1, loc);
  return ev->none;
}

/* T.address_of(buf[i]) / T.address_of(buf) (= &buf[0, ...]): a pointer operand of
 * put/get and NVSHMEM calls, an ADDRESS_OF intrinsic over the element load. */
static Value *h_address_of(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  IrExpr *load;
  if (arg[0]->kind == V_BUFFER) {
    IrBuffer *b = arg[0]->u.buf;
    IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, b->ndim ? b->ndim : 1);
    for (int i = 0; i < b->ndim; i++) idx[i] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
    load = ir_load(ev->c, b, idx, b->ndim, loc);
  } else {
    if (!is_element(ev, a, sig, arg[0], "the argument")) return ev->poison;
    load = arg[0]->u.expr;
  }
  return ev_expr(ev, ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &load, 1, loc));
}

static bool is_address(const Value *v) {
  return v->kind == V_EXPR && v->u.expr->kind == IR_CALL && v->u.expr->u.call.op == IRI_ADDRESS_OF;
}

static const IrBuffer *address_buf(const Value *v) { return v->u.expr->u.call.args[0]->u.load.buf; }

/* put_warp/get_warp/put_block/get_block(src, dst, size, pe): both pointers must be
 * T.address_of(...) of the same element type, and size a compile-time element count. */
static Value *h_put_get(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  for (int i = 0; i < 2; i++)
    if (!is_address(arg[i])) {
      ts_error(ev->c, loc, "T.%s: %s must be T.address_of(buf[...]), got %s", sig->name, i ? "dst" : "src",
               ev_type_name(arg[i]));
      return ev->poison;
    }
  int64_t size;
  if (!ev_to_int(ev, arg[2], &size, loc)) return ev->poison;
  if (size <= 0) {
    ts_error(ev->c, loc, "T.%s: size must be a positive number of elements, got %lld", sig->name, (long long)size);
    return ev->poison;
  }
  const IrBuffer *src = address_buf(arg[0]), *dst = address_buf(arg[1]);
  bool put = sig->name[0] == 'p', remote = !pe_is_local(arg[3]);
  if (!addressable(ev, a, sig, src, "src", remote && !put) || !addressable(ev, a, sig, dst, "dst", remote && put))
    return ev->poison;
  if (src->dtype != dst->dtype) {
    ts_error(ev->c, loc, "T.%s: src '%s' (%s) and dst '%s' (%s) must have the same element type", sig->name,
             src->name, dtype_name(src->dtype), dst->name, dtype_name(dst->dtype));
    return ev->poison;
  }
  IrExpr *pe = int_operand(ev, a, sig, arg[3], -1, TS_DTYPE_INT64, put ? "dst_pe" : "src_pe");
  if (!pe) return ev->poison;
  int64_t unroll = 4;
  if (ir_device_info[dist_op(sig)].nattrs) { /* put_warp / get_warp */
    if (arg[4] && !ev_to_int(ev, arg[4], &unroll, loc)) return ev->poison;
    if (unroll < 1 || unroll > 16) {
      ts_error(ev->c, loc, "T.%s: unroll_factor must be between 1 and 16, got %lld", sig->name, (long long)unroll);
      return ev->poison;
    }
    /* enable_aggressive_vectorize needs no flag: the copy picks 16-byte words whenever the
     * run-time alignment allows (and stays correct when it does not). */
  }
  emit_device(ev, dist_op(sig), &unroll,
              (IrExpr *[]){arg[0]->u.expr, arg[1]->u.expr, ir_int(ev->c, size, TS_DTYPE_INT64, loc), pe}, 4, loc);
  return ev->none;
}

/* No-argument device calls: fences, grid sync, warp sync. */
static Value *h_dist_stmt(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  (void)arg;
  if (!need_kernel(ev, a, sig)) return ev->poison;
  static const IrDeviceOp ops[] = {IRD_DIST_FENCE_CTA, IRD_DIST_FENCE_GPU, IRD_DIST_FENCE_SYS, IRD_DIST_SYNC_GRID};
  emit_device(ev, ops[sig->arg], NULL, NULL, 0, cloc(a));
  return ev->none;
}

/* get_rank/get_num_ranks (IPC table) and get_pe/get_pe_num (NVSHMEM): int32 values. */
static Value *h_rank(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  (void)arg;
  if (!need_kernel(ev, a, sig)) return ev->poison;
  static const IrDeviceOp ops[] = {IRD_DIST_GET_RANK, IRD_DIST_GET_NUM_RANKS, IRD_SHMEM_MY_PE, IRD_SHMEM_N_PES};
  static const char *const vars[] = {"rank", "num_ranks", "pe", "num_pes"};
  return value_device(ev, ops[sig->arg], TS_DTYPE_INT32, NULL, NULL, 0, cloc(a), vars[sig->arg]);
}

/* The GPU barrier set on a global uint32: init_barrier_gpu(bar, expected), arrive / wait /
 * sync_barrier_gpu(bar). */
static Value *h_barrier_gpu(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  if (!is_element(ev, a, sig, arg[0], "barrier")) return ev->poison;
  const IrBuffer *b = element_buf(arg[0]);
  if (b->scope != IR_SCOPE_GLOBAL || b->dtype != TS_DTYPE_UINT32) {
    ts_error(ev->c, loc,
             "T.%s: the barrier '%s' must be an element of a global uint32 buffer, zero before first use, such "
             "as T.alloc_barrier_gpu() (got %s %s)", sig->name, b->name, ir_scope_names[b->scope],
             dtype_name(b->dtype));
    return ev->poison;
  }
  IrExpr *args[2] = {ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &arg[0]->u.expr, 1, loc), NULL};
  int n = 1;
  if (sig->arg) {
    args[1] = int_operand(ev, a, sig, arg[1], 0, TS_DTYPE_UINT32, "expected");
    if (!args[1]) return ev->poison;
    n = 2;
  }
  emit_device(ev, dist_op(sig), NULL, args, n, loc);
  return ev->none;
}

/* T.warp_any(value, mask=-1) / T.warp_all(...): warp votes, bool results. */
static Value *h_vote(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  IrExpr *v = ev_to_ir(ev, arg[0], NULL, loc);
  IrExpr *mask = int_operand(ev, a, sig, arg[1], -1, TS_DTYPE_UINT32, "mask");
  if (!v || !mask) return ev->poison;
  v = ev_to_bool_ir(ev, v, loc);
  if (!v) return ev->poison;
  return value_device(ev, dist_op(sig), TS_DTYPE_BOOL, NULL, (IrExpr *[]){v, mask}, 2, loc,
                      "vote");
}

/* T.shuffle_elect(thread_extent): one thread per group of thread_extent threads. */
static Value *h_shuffle_elect(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  int64_t n;
  if (!ev_to_int(ev, arg[0], &n, loc)) return ev->poison;
  if (n < 0 || n % 32) {
    ts_error(ev->c, loc, "T.shuffle_elect: thread_extent must be 0 (the whole block) or a multiple of 32, got %lld",
             (long long)n);
    return ev->poison;
  }
  return value_device(ev, IRD_DIST_SHUFFLE_ELECT, TS_DTYPE_BOOL, &n, NULL, 0, loc, "elected");
}

/* T.tvm_warp_shuffle(mask, value, src_lane, width, warp_size): __shfl_sync. */
static Value *h_warp_shuffle(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  IrExpr *mask = int_operand(ev, a, sig, arg[0], -1, TS_DTYPE_UINT32, "mask");
  IrExpr *v = ev_to_ir(ev, arg[1], NULL, loc);
  IrExpr *lane = int_operand(ev, a, sig, arg[2], 0, TS_DTYPE_INT32, "src_lane");
  IrExpr *width = int_operand(ev, a, sig, arg[3], 32, TS_DTYPE_INT32, "width");
  if (!mask || !v || !lane || !width) return ev->poison;
  IrExpr *args[5] = {ir_str(ev->c, "__shfl_sync", loc), mask, v, lane, width};
  return bind_value(ev, ir_call(ev->c, IRI_CALL_EXTERN, v->dtype, args, 5, loc), "shfl", loc);
}

/* ---- the NVSHMEM family (§1.5): sizes in bytes, pointers through T.address_of ---------------------- */
static IrExpr *pointer_operand(Eval *ev, CallArgs *a, const TlSig *sig, Value *v, const char *what,
                               const IrBuffer **buf) {
  SrcLoc loc = cloc(a);
  if (v->kind == V_BUFFER && v->u.buf->scope != IR_SCOPE_VAR) {
    Value *addr = h_address_of(ev, &(CallArgs){a->node, &v, 1, NULL, NULL, 0}, &v, sig);
    if (addr->kind != V_EXPR) return NULL;
    v = addr;
  }
  if (!is_address(v)) {
    ts_error(ev->c, loc, "T.%s: %s must be T.address_of(buf[...]) or a buffer, got %s", sig->name, what,
             ev_type_name(v));
    return NULL;
  }
  *buf = address_buf(v);
  return v->u.expr;
}

/* Rows of the family: which operands each form takes. */
enum { SH_PUTGET = 1, SH_SIGNAL = 2, SH_INT_P = 3, SH_SIGNAL_OP = 4, SH_WAIT = 5, SH_NOARG = 6, SH_COLL = 7 };

static Value *h_shmem(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  SrcLoc loc = cloc(a);
  if (!need_kernel(ev, a, sig)) return ev->poison;
  IrDeviceOp op = dist_op(sig);
  IrExpr *ops[8];
  const IrBuffer *b0 = NULL, *b1 = NULL, *bs = NULL;
  switch (sig->arg) {
  case SH_PUTGET:
  case SH_SIGNAL: {
    if (!(ops[0] = pointer_operand(ev, a, sig, arg[0], "dest", &b0))) return ev->poison;
    if (!(ops[1] = pointer_operand(ev, a, sig, arg[1], "src", &b1))) return ev->poison;
    bool get = sig->name[0] == 'g';
    if (!addressable(ev, a, sig, get ? b1 : b0, get ? "src" : "dest", true) ||
        !addressable(ev, a, sig, get ? b0 : b1, get ? "dest" : "src", false))
      return ev->poison;
    if (!(ops[2] = int_operand(ev, a, sig, arg[2], 0, TS_DTYPE_UINT64, "nbytes"))) return ev->poison;
    if (sig->arg == SH_PUTGET) {
      if (!(ops[3] = int_operand(ev, a, sig, arg[3], 0, TS_DTYPE_INT32, "pe"))) return ev->poison;
      emit_device(ev, op, NULL, ops, 4, loc);
      return ev->none;
    }
    if (!(ops[3] = pointer_operand(ev, a, sig, arg[3], "sig_addr", &bs))) return ev->poison;
    if (bs->dtype != TS_DTYPE_UINT64 || bs->scope != IR_SCOPE_GLOBAL) {
      ts_error(ev->c, loc, "T.%s: sig_addr must point into a global uint64 buffer, got '%s' (%s)", sig->name,
               bs->name, dtype_name(bs->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, sig, bs, "sig_addr", true)) return ev->poison; /* signal words are symmetric */
    if (!(ops[4] = int_operand(ev, a, sig, arg[4], 0, TS_DTYPE_UINT64, "signal")) ||
        !(ops[5] = int_operand(ev, a, sig, arg[5], 0, TS_DTYPE_INT32, "sig_op")) ||
        !(ops[6] = int_operand(ev, a, sig, arg[6], 0, TS_DTYPE_INT32, "pe")))
      return ev->poison;
    emit_device(ev, op, NULL, ops, 7, loc);
    return ev->none;
  }
  case SH_INT_P:
    if (!(ops[0] = pointer_operand(ev, a, sig, arg[0], "dest", &b0))) return ev->poison;
    if (b0->dtype != TS_DTYPE_INT32 || b0->scope != IR_SCOPE_GLOBAL) {
      ts_error(ev->c, loc, "T.int_p: dest must point into a global int32 buffer, got '%s' (%s)", b0->name,
               dtype_name(b0->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, sig, b0, "dest", true)) return ev->poison;
    if (!(ops[1] = int_operand(ev, a, sig, arg[1], 0, TS_DTYPE_INT32, "value")) ||
        !(ops[2] = int_operand(ev, a, sig, arg[2], 0, TS_DTYPE_INT32, "pe")))
      return ev->poison;
    emit_device(ev, op, NULL, ops, 3, loc);
    return ev->none;
  case SH_SIGNAL_OP:
  case SH_WAIT:
    if (!(ops[0] = pointer_operand(ev, a, sig, arg[0], "sig_addr", &bs))) return ev->poison;
    if (bs->dtype != TS_DTYPE_UINT64 || bs->scope != IR_SCOPE_GLOBAL) {
      ts_error(ev->c, loc, "T.%s: sig_addr must point into a global uint64 buffer, got '%s' (%s)", sig->name,
               bs->name, dtype_name(bs->dtype));
      return ev->poison;
    }
    if (!addressable(ev, a, sig, bs, "sig_addr", true)) return ev->poison; /* signal words are symmetric */
    if (sig->arg == SH_SIGNAL_OP) {
      if (!(ops[1] = int_operand(ev, a, sig, arg[1], 0, TS_DTYPE_UINT64, "signal")) ||
          !(ops[2] = int_operand(ev, a, sig, arg[2], 0, TS_DTYPE_INT32, "sig_op")) ||
          !(ops[3] = int_operand(ev, a, sig, arg[3], 0, TS_DTYPE_INT32, "pe")))
        return ev->poison;
      emit_device(ev, op, NULL, ops, 4, loc);
      return ev->none;
    }
    if (!(ops[1] = int_operand(ev, a, sig, arg[1], 0, TS_DTYPE_INT32, "cmp")) ||
        !(ops[2] = int_operand(ev, a, sig, arg[2], 0, TS_DTYPE_UINT64, "cmp_value")))
      return ev->poison;
    return value_device(ev, op, TS_DTYPE_UINT64, NULL, ops, 3, loc, "sig_value");
  case SH_NOARG:
    emit_device(ev, op, NULL, NULL, 0, loc);
    return ev->none;
  default: { /* collectives: team, dest, src, nelems[, pe_root] */
    if (!(ops[0] = int_operand(ev, a, sig, arg[0], 0, TS_DTYPE_INT32, "team"))) return ev->poison;
    int64_t team;
    if (!ir_is_const_int(ops[0], &team) || team != 0) {
      ts_error(ev->c, loc, "T.%s: only the world team (T.Team.WORLD) is supported", sig->name);
      return ev->poison;
    }
    if (!(ops[1] = pointer_operand(ev, a, sig, arg[1], "dest", &b0)) ||
        !(ops[2] = pointer_operand(ev, a, sig, arg[2], "src", &b1)))
      return ev->poison;
    if (!addressable(ev, a, sig, b0, "dest", true) || !addressable(ev, a, sig, b1, "src", true)) return ev->poison;
    bool mem = strstr(sig->name, "mem") != NULL;
    if (!mem && b0->dtype != b1->dtype) {
      ts_error(ev->c, loc, "T.%s: dest '%s' (%s) and src '%s' (%s) must have the same element type", sig->name,
               b0->name, dtype_name(b0->dtype), b1->name, dtype_name(b1->dtype));
      return ev->poison;
    }
    if (!(ops[3] = int_operand(ev, a, sig, arg[3], 0, TS_DTYPE_UINT64, mem ? "nbytes" : "nelems"))) return ev->poison;
    int n = 4;
    if (!strncmp(sig->name, "broadcast", 9)) {
      if (!(ops[4] = int_operand(ev, a, sig, arg[4], 0, TS_DTYPE_INT32, "pe_root"))) return ev->poison;
      n = 5;
    }
    emit_device(ev, op, NULL, ops, n, loc);
    return ev->none;
  }
  }
}

/* Kernel-only constructs with no lowering: checked for context, then reported. */
static Value *h_kernel_unsupported(Eval *ev, CallArgs *a, Value **arg, const TlSig *sig) {
  if (!need_kernel(ev, a, sig)) return ev->poison;
  return h_unsupported(ev, a, arg, sig);
}

#define U h_unsupported
#define K h_kernel_unsupported
static const TlSig tl_constructs[] = {
    /* buffers and parameters */
    {"StridedTensor", "shape, strides, dtype=\"float32\"", h_strided_tensor, 0},
    {"FragmentBuffer", "shape, dtype=\"float32\", **kwargs", U, 0},
    {"SharedBuffer", "shape, dtype=\"float32\", **kwargs", U, 0},
    {"LocalBuffer", "shape, dtype=\"float32\", **kwargs", U, 0},
    {"ptr", "dtype=None, storage_scope=\"global\"", U, 0},
    {"make_tensor", "ptr, shape, dtype=\"float32\", strides=None", U, 0},
    {"ClusterKernel", "*grid, cluster_dims=None, threads=None, prelude=None", U, 0},
    {"get_block_binding", "dim=0", h_block_binding, 0},
    {"get_thread_bindings", "", h_bindings, 0},
    {"get_block_bindings", "", h_bindings, 1},
    {"get_thread_extent", "dim=0", h_extent, 0},
    {"get_block_extent", "dim=0", h_extent, 1},
    {"alloc_barrier", "arrive_count", h_alloc_barrier, 0},
    {"alloc_global", "shape, dtype", h_alloc_global, 0},
    {"alloc_reducer", "shape, dtype, op=\"sum\", replication=None", K, 0},
    {"finalize_reducer", "reducer", K, 0},
    {"alloc_tmem", "shape, dtype", K, 0},
    {"alloc_cluster_barrier", "arrive_count", K, 0},
    {"alloc_descriptor", "dtype=\"uint64\"", K, 0},
    /* loops */
    {"Persistent", "domain, wave_size, index, group_size=8", h_persistent, 0},
    /* copies and tile ops */
    {"async_copy", "src, dst, **kwargs", K, 0},
    {"tma_copy", "src, dst, barrier=None, cluster_mask=None, **kwargs", K, 0},
    {"transpose", "src, dst", K, 0},
    {"im2col", "img, col, nhw_step, c_step, kernel, stride=1, dilation=1, pad=0", h_im2col, 0},
    {"wgmma_gemm", "A, B, C, transpose_A=False, transpose_B=False, policy=0, clear_accum=False, k_pack=1, "
                   "annotations=None", h_wgmma_gemm, 0},
    {"wait_wgmma", "id", h_wait_wgmma, 0},
    {"tcgen05_gemm", "A, B, C, transpose_A=False, transpose_B=False, policy=0, clear_accum=False, mbar=None, "
                     "use_2cta=False, annotations=None", K, 0},
    {"gemm_sp", "A_sparse, E, B, C, transpose_A=False, transpose_B=False, policy=0, clear_accum=False, k_pack=1", K, 0},
    {"cumsum", "src, dst=None, dim=0, reverse=False", K, 0},
    {"cummax", "src, dst=None, dim=0, reverse=False", K, 0},
    {"warp_reduce_sum", "value", K, 0},
    {"warp_reduce_max", "value", K, 0},
    {"warp_reduce_min", "value", K, 0},
    {"reduce_bitand", "buffer, out, dim=-1, clear=True", K, 0},
    {"reduce_bitor", "buffer, out, dim=-1, clear=True", K, 0},
    {"reduce_bitxor", "buffer, out, dim=-1, clear=True", K, 0},
    {"atomic_addx2", "dst, value, return_prev=False", K, 0},
    {"atomic_addx4", "dst, value, return_prev=False", K, 0},
    {"atomic_load", "src, memory_order=\"seq_cst\"", K, 0},
    {"atomic_store", "dst, value, memory_order=\"seq_cst\"", K, 0},
    {"atomic_or", "dst, value, memory_order=None, return_prev=False", K, 0},
    /* layouts and annotations */
    {"Fragment", "shape, forward_thread_fn=None, forward_index_fn=None, replicate=1, forward_fn=None", U, 0},
    {"Layout", "shape, forward_fn", U, 0},
    {"annotate_layout", "layout_map", h_annotate_layout, 0},
    {"use_swizzle", "panel_size, order=\"row\", enable=True", h_use_swizzle, 0},
    {"annotate_l2_hit_ratio", "l2_hit_ratio_map", h_hint, 0},
    {"annotate_safe_value", "safe_value_map", K, 0},
    {"annotate_restrict_buffers", "*buffers", h_hint, 0},
    {"annotate_min_blocks_per_sm", "min_blocks", h_hint, 0},
    {"annotate_padding", "padding_map", K, 0},
    {"view", "buffer, shape=None, dtype=None", h_view, 0},
    {"reshape", "buffer, shape", h_view, 1},
    {"region", "buffer_load, access_type, *extents", K, 0},
    /* debugging and escapes */
    {"print", "obj, msg=\"\", warp_group_id=0, warp_id=0", h_print, 0},
    {"device_assert", "cond, msg=\"\"", h_device_assert, 0},
    {"import_source", "source", U, 0},
    {"call_extern", "name, *args, dtype=None", h_call_extern, 0},
    {"call_intrin", "dtype, op, *args", K, 0},
    {"access_ptr", "buffer, access_mask=\"rw\", offset=0, extent=None", K, 0},
    /* synchronisation */
    {"barrier_arrive", "barrier", K, 0},
    {"barrier_wait", "barrier, parity", K, 0},
    {"mbarrier_arrive", "barrier, cta_id=None", K, 0},
    {"mbarrier_wait_parity", "barrier, parity", K, 0},
    {"mbarrier_expect_tx", "barrier, tx", K, 0},
    {"ws", "*warp_group_ids", K, 0},
    {"WarpSpecialize", "*warp_group_ids", K, 0},
    {"set_max_nreg", "reg_count, is_inc", K, 0},
    /* register reallocation between warpgroups is a performance choice: results are the same */
    {"disable_warp_group_reg_alloc", "", h_hint, 0},
    {"no_set_max_nreg", "", h_hint, 0},
    {"inc_max_nreg", "reg_count", K, 0},
    {"dec_max_nreg", "reg_count", K, 0},
    {"fence_proxy_async", "", K, 0},
    {"pdl_trigger", "", K, 0},
    {"pdl_sync", "", K, 0},
    {"loop_break", "", K, 0},
    {"sync_warp", "", h_sync_warp, 0},
    /* warp intrinsics */
    {"shfl_xor", "value, offset", K, 0},
    {"shfl_down", "value, offset", K, 0},
    {"shfl_up", "value, offset", K, 0},
    {"shfl_sync", "value, src_lane", K, 0},
    {"get_lane_idx", "warp_size=32", K, 0},
    {"get_warp_idx", "warp_size=32", K, 0},
    {"shift_left", "x, y", h_shift, 0},
    {"shift_right", "x, y", h_shift, 1},
    /* raw TIR escapes */
    {"attr", "node, key, value", K, 0},
    {"comm_reducer", "combiner, identity", U, 0},
    {"tvm_thread_allreduce", "*args", K, 0},
    {"evaluate", "value", K, 0},
    {"launch_thread", "thread_tag, extent", K, 0},
    {"thread_binding", "start, stop=None, thread=None, annotations=None", h_thread_binding, 0},
    {"block", "name=\"\"", K, 0},
    {"Ref", "*args", U, 0},
    /* distributed, IPC family (tilescale-distributed.md §1.2, §1.4) */
    {"get_rank", "", h_rank, 0},
    {"get_num_ranks", "", h_rank, 1},
    {"put_warp", "src, dst, size, dst_pe=-1, unroll_factor=4, enable_aggressive_vectorize=False", h_put_get, 0},
    {"get_warp", "src, dst, size, src_pe=-1, unroll_factor=4, enable_aggressive_vectorize=False", h_put_get, 0},
    {"put_block", "src, dst, size, dst_pe=-1", h_put_get, 0},
    {"get_block", "src, dst, size, src_pe=-1", h_put_get, 0},
    {"ld", "src, value, scope=\"gpu\", sem=\"weak\", na=False, nc=False, src_pe=-1", h_ldst, 0},
    {"st", "dst, value, scope=\"gpu\", sem=\"weak\", na=False, dst_pe=-1", h_ldst, 1},
    {"wait_eq", "value, expected, peer=-1", h_on_element, 0},
    {"wait_ne", "value, expected, peer=-1", h_on_element, 0},
    {"wait_ge", "value, expected, peer=-1", h_on_element, 0},
    {"wait_le", "value, expected, peer=-1", h_on_element, 0},
    {"wait_gt", "value, expected, peer=-1", h_on_element, 0},
    {"wait_lt", "value, expected, peer=-1", h_on_element, 0},
    {"barrier_blocks", "barrier", h_on_element, 0},
    {"sync_blocks", "barrier", h_on_element, 0},
    {"fence_cta", "", h_dist_stmt, 0},
    {"fence_gpu", "", h_dist_stmt, 1},
    {"fence_sys", "", h_dist_stmt, 2},
    {"init_barrier_gpu", "barrier, expected", h_barrier_gpu, 1},
    {"arrive_barrier_gpu", "barrier", h_barrier_gpu, 0},
    {"wait_barrier_gpu", "barrier", h_barrier_gpu, 0},
    {"sync_barrier_gpu", "barrier", h_barrier_gpu, 0},
    {"alloc_barrier_gpu", "", h_alloc_global, 1},
    {"sync_grid", "", h_dist_stmt, 3},
    {"atom_add", "target, value, scope=\"gpu\", sem=\"relaxed\"", h_on_element, 1},
    {"warp_any", "value, mask=-1", h_vote, 0},
    {"warp_all", "value, mask=-1", h_vote, 0},
    {"shuffle_elect", "thread_extent", h_shuffle_elect, 0},
    {"tvm_warp_shuffle", "mask, value, src_lane, width, warp_size", h_warp_shuffle, 0},
    {"address_of", "buffer_load", h_address_of, 0},
    /* distributed, NVSHMEM family (§1.5); nbytes counts bytes */
    {"get_pe", "", h_rank, 2},
    {"get_pe_num", "", h_rank, 3},
    {"int_p", "dest, value, pe", h_shmem, SH_INT_P},
    {"putmem", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"putmem_nbi", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"putmem_block", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"putmem_warp", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"putmem_nbi_block", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"putmem_nbi_warp", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"getmem", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"getmem_nbi", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"getmem_block", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"getmem_warp", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"getmem_nbi_block", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"getmem_nbi_warp", "dest, src, nbytes, pe", h_shmem, SH_PUTGET},
    {"putmem_signal", "dest, src, nbytes, sig_addr, signal, sig_op, pe", h_shmem, SH_SIGNAL},
    {"putmem_signal_nbi", "dest, src, nbytes, sig_addr, signal, sig_op, pe", h_shmem, SH_SIGNAL},
    {"putmem_signal_block", "dest, src, nbytes, sig_addr, signal, sig_op, pe", h_shmem, SH_SIGNAL},
    {"putmem_signal_warp", "dest, src, nbytes, sig_addr, signal, sig_op, pe", h_shmem, SH_SIGNAL},
    {"putmem_signal_nbi_block", "dest, src, nbytes, sig_addr, signal, sig_op, pe", h_shmem, SH_SIGNAL},
    {"putmem_signal_nbi_warp", "dest, src, nbytes, sig_addr, signal, sig_op, pe", h_shmem, SH_SIGNAL},
    {"signal_op", "sig_addr, signal, sig_op, pe", h_shmem, SH_SIGNAL_OP},
    {"signal_wait_until", "sig_addr, cmp, cmp_value", h_shmem, SH_WAIT},
    {"barrier_all", "", h_shmem, SH_NOARG},
    {"barrier_all_block", "*args", h_shmem, SH_NOARG},
    {"barrier_all_warp", "*args", h_shmem, SH_NOARG},
    {"sync_all", "", h_shmem, SH_NOARG},
    {"sync_all_block", "*args", h_shmem, SH_NOARG},
    {"sync_all_warp", "*args", h_shmem, SH_NOARG},
    {"quiet", "", h_shmem, SH_NOARG},
    {"fence", "", h_shmem, SH_NOARG},
    {"broadcast", "team, dest, src, nelems, pe_root", h_shmem, SH_COLL},
    {"broadcast_warp", "team, dest, src, nelems, pe_root", h_shmem, SH_COLL},
    {"broadcast_block", "team, dest, src, nelems, pe_root", h_shmem, SH_COLL},
    {"broadcastmem_block", "team, dest, src, nbytes, pe_root", h_shmem, SH_COLL},
    {"fcollect", "team, dest, src, nelems", h_shmem, SH_COLL},
    {"fcollect_warp", "team, dest, src, nelems", h_shmem, SH_COLL},
    {"fcollect_block", "team, dest, src, nelems", h_shmem, SH_COLL},
    {"cpengine_cpasync", "*args", K, 0},
};
#undef U
#undef K

/* The builtin value behind T.<name>: checks the call against the row's signature first. */
static Value *tl_call(Eval *ev, CallArgs *a, Value *self, int row) {
  (void)self;
  const TlSig *sig = &tl_constructs[row];
  ParsedSig p;
  parse_sig(ev, sig->params, &p);
  Value *arg[MAX_PARAMS];
  if (!bind_sig(ev, a, sig, &p, arg)) return ev->poison;
  return sig->fn(ev, a, arg, sig);
}

Value *tl_construct_attr(Eval *ev, const char *name) {
  for (int i = 0; i < TS_ARRAY_LEN(tl_constructs); i++)
    if (!strcmp(tl_constructs[i].name, name)) {
      Value *v = ev_new(ev, V_BUILTIN);
      v->u.bi.fn = tl_call;
      v->u.bi.name = arena_printf(ev->a, "T.%s", name);
      v->u.bi.arg = i;
      return v;
    }
  return NULL;
}

bool tl_is_construct_call(const Value *fn) { return fn && fn->kind == V_BUILTIN && fn->u.bi.fn == tl_call; }

/* ---- enums (tilescale-distributed.md §1.7) ----------------------------------------------------- */
typedef struct EnumRow {
  const char *name;
  int value;
} EnumRow;

static const EnumRow team_rows[] = {{"INVALID", -1}, {"WORLD", 0}, {"SHARED", 1}, {"NODE", 2}, {"SAME_MYPE_NODE", 3},
                                    {"SAME_GPU", 4}, {"GPU_LEADERS", 5}, {"TEAMS_MIN", 6}};
/* NVSHMEM order, which differs from the IPC stack's BinaryRelation (GE 2 ... LT 5). */
static const EnumRow cmp_rows[] = {{"EQ", 0}, {"NE", 1}, {"GT", 2}, {"LE", 3}, {"LT", 4}, {"GE", 5}};
static const EnumRow amo_rows[] = {
    {"ACK", 1},        {"INC", 2},        {"SET", 3},         {"ADD", 4},        {"AND", 5},
    {"OR", 6},         {"XOR", 7},        {"SIGNAL", 8},      {"SIGNAL_SET", 9}, {"SIGNAL_ADD", 10},
    {"END_OF_NONFETCH", 11}, {"FETCH", 12}, {"FETCH_INC", 13}, {"FETCH_ADD", 14}, {"FETCH_AND", 15},
    {"FETCH_OR", 16},  {"FETCH_XOR", 17}, {"SWAP", 18},       {"COMPARE_SWAP", 19}};

Value *tl_enum_attr(Eval *ev, ModKind mod, const char *name) {
  const EnumRow *rows;
  int n;
  const char *prefix;
  switch (mod) {
  case MOD_TEAM: rows = team_rows, n = TS_ARRAY_LEN(team_rows), prefix = "TEAM_"; break;
  case MOD_CMPTYPE: rows = cmp_rows, n = TS_ARRAY_LEN(cmp_rows), prefix = "CMP_"; break;
  case MOD_AMO: rows = amo_rows, n = TS_ARRAY_LEN(amo_rows), prefix = "AMO_"; break;
  default: return NULL;
  }
  /* Both T.Amo.SIGNAL_SET and the C-style T.Amo.AMO_SIGNAL_SET spellings are accepted. */
  if (!strncmp(name, prefix, strlen(prefix))) name += strlen(prefix);
  for (int i = 0; i < n; i++)
    if (!strcmp(rows[i].name, name)) return ev_int(ev, rows[i].value);
  return NULL;
}
