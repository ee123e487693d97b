/* eval_builtins.c — the namespaces the staging interpreter knows: Python builtins,
 * `tilelang`, `tilelang.language` (T.*), `math`, and methods of str/list/dict/IR values.
 *
 *   eval.c (calls, attributes)  ->  here  ->  IR constructors (src/ir/ir.c)
 *
 * Each T.* construct of reference tilelang-core.md §1.2 that this milestone lowers is a
 * builtin that checks its arguments (count, keywords, kinds), and either returns a
 * value (frames, buffers, IR expressions) or appends a tile-op statement to the block
 * being traced.  The other T.* constructs (and the distributed names) live in eval_tl.c,
 * which checks their signatures and reports those without a lowering at the call. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value.h"

/* ---- argument binding ---------------------------------------------------------------- */
/* Matches positional and keyword arguments against `names` (the first nreq required).
 * out[i] is NULL for an absent optional argument. */
static bool bind(Eval *ev, CallArgs *a, const char *fname, const char *const *names, int nreq, int n, Value **out) {
  SrcLoc loc = a->node ? a->node->loc : SRCLOC_NONE;
  for (int i = 0; i < n; i++) out[i] = NULL;
  if (a->npos > n) {
    ts_error(ev->c, loc, "%s() takes at most %d argument%s (%d given)", fname, n, n == 1 ? "" : "s", a->npos);
    return false;
  }
  for (int i = 0; i < a->npos; i++) out[i] = a->pos[i];
  for (int k = 0; k < a->nkw; k++) {
    int j = -1;
    for (int i = 0; i < n; i++)
      if (!strcmp(names[i], a->kw[k])) j = i;
    if (j < 0) {
      ts_error(ev->c, loc, "%s() got an unexpected keyword argument '%s'", fname, a->kw[k]);
      return false;
    }
    if (out[j]) {
      ts_error(ev->c, loc, "%s() got multiple values for argument '%s'", fname, a->kw[k]);
      return false;
    }
    out[j] = a->kwv[k];
  }
  for (int i = 0; i < nreq; i++)
    if (!out[i]) {
      ts_error(ev->c, loc, "%s() missing required argument '%s'", fname, names[i]);
      return false;
    }
  for (int i = 0; i < n; i++)
    if (out[i] && out[i]->kind == V_POISON) return false;
  return true;
}
#define BIND(fname, nreq, ...)                                                     \
  static const char *const names_[] = {__VA_ARGS__};                               \
  Value *arg[TS_ARRAY_LEN(names_)];                                                \
  if (!bind(ev, a, fname, names_, nreq, TS_ARRAY_LEN(names_), arg)) return NULL

static SrcLoc cloc(CallArgs *a) { return a->node ? a->node->loc : SRCLOC_NONE; }

/* The expression the user wrote for argument i (positional) or `name` (keyword), to put a
 * caret under it; NULL when it cannot be told (a starred argument shifts positions). */
static const AstNode *arg_node(CallArgs *a, int i, const char *name) {
  const AstNode *n = a->node;
  if (!n || n->kind != AST_CALL) return NULL;
  for (int k = 0; k < n->items.n; k++)
    if (n->items.items[k]->kind == AST_STARRED) return NULL;
  if (i < n->items.n) return n->items.items[i];
  for (int k = 0; name && k < n->nkwargs; k++)
    if (n->kwargs[k].name && !strcmp(n->kwargs[k].name, name)) return n->kwargs[k].value;
  return NULL;
}

/* Where dimension d of a shape written as `shape` is: the element of a tuple literal, the
 * shape expression, or `dflt`. */
static SrcLoc dim_loc(const AstNode *shape, int d, int ndim, SrcLoc dflt) {
  if (shape && (shape->kind == AST_TUPLE || shape->kind == AST_LIST) && shape->items.n == ndim)
    return shape->items.items[d]->loc;
  if (shape && ndim == 1) return shape->loc;
  return dflt;
}

/* Sizes known at compile time must be at least `min` (1 for tiles, grids and loop nests;
 * 0 for tensors, which may be empty): a negative or zero one is the user's mistake, said
 * at the user's line, not an internal error of a later pass. */
static bool check_size(Eval *ev, IrExpr *e, int64_t min, SrcLoc loc, const char *what, int d) {
  int64_t v;
  if (!e || !ir_is_const_int(e, &v) || v >= min) return true;
  if (ev->bad_tensor_dim) return false; /* a consequence of the tensor's (one mistake, one diagnostic) */
  ts_error(ev->c, loc, "%s %d is %lld; it must be %s", what, d, (long long)v, min > 0 ? "at least 1" : "0 or more");
  return false;
}

static bool opt_bool(Eval *ev, Value *v, bool dflt, SrcLoc loc) {
  if (!v) return dflt;
  int t = ev_truth(ev, v, loc);
  if (t == -1) {
    ts_error(ev->c, loc, "expected a Python bool, got an IR expression");
    return dflt;
  }
  return t == 1;
}

static bool opt_int(Eval *ev, Value *v, int64_t dflt, int64_t *out, SrcLoc loc) {
  if (!v || v->kind == V_NONE) {
    *out = dflt;
    return true;
  }
  return ev_to_int(ev, v, out, loc);
}

/* A shape argument: int, IR expression, or tuple/list of them -> IR extents. */
static int shape_arg(Eval *ev, Value *v, IrExpr ***out, SrcLoc loc) {
  ValList items = {0};
  if (v->kind == V_TUPLE || v->kind == V_LIST) {
    items = v->u.seq;
  } else {
    vl_push(ev, &items, v);
  }
  IrExpr **shape = ARENA_ARRAY(ev->a, IrExpr *, items.n);
  for (int i = 0; i < items.n; i++) {
    shape[i] = ev_to_ir(ev, items.items[i], NULL, loc);
    if (!shape[i]) return -1;
    if (!dtype_is_int(shape[i]->dtype)) {
      ts_error(ev->c, loc, "shape dimensions must be integers, got %s", dtype_name(shape[i]->dtype));
      return -1;
    }
  }
  *out = shape;
  return items.n;
}

Value *bi_dtype(Eval *ev, ts_dtype t) {
  Value *v = ev_new(ev, V_DTYPE);
  v->u.dtype = t;
  return v;
}

Value *bi_builtin(Eval *ev, BiFn fn, const char *name, int arg, Value *self) {
  Value *v = ev_new(ev, V_BUILTIN);
  v->u.bi.fn = fn;
  v->u.bi.name = name;
  v->u.bi.arg = arg;
  v->u.bi.self = self;
  return v;
}
static Value *mk_builtin(Eval *ev, BiFn fn, const char *name, int arg, Value *self) {
  return bi_builtin(ev, fn, name, arg, self);
}

Value *bi_module(Eval *ev, ModKind mod) {
  Value *v = ev_new(ev, V_MODULE);
  v->u.mod.mod = mod;
  return v;
}

static Value *buffer_value(Eval *ev, IrBuffer *b) {
  Value *v = ev_new(ev, V_BUFFER);
  v->u.buf = b;
  return v;
}

/* Python numbers become IR constants of dtype t (T.float32(1.0), T.cast(0, dtype)). */
static IrExpr *typed_const(Eval *ev, Value *v, ts_dtype t, SrcLoc loc) {
  if (v->kind == V_FLOAT)
    return dtype_is_float(t) ? ir_float(ev->c, v->u.f, t, loc) : ir_int(ev->c, ev_f2i(v->u.f), t, loc);
  int64_t i = v->kind == V_INT ? v->u.i : v->u.b;
  return dtype_is_float(t) ? ir_float(ev->c, (double)i, t, loc) : ir_int(ev->c, i, t, loc);
}
static IrExpr *to_dtype(Eval *ev, Value *v, ts_dtype t, SrcLoc loc) {
  if (ev_is_num(v)) return typed_const(ev, v, t, loc);
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  return e ? ir_cast(ev->c, t, e, loc) : NULL;
}

/* ---- unsupported constructs ------------------------------------------------------------ */
static Value *t_unsupported(Eval *ev, CallArgs *a, Value *self, int arg) {
  (void)self;
  (void)arg;
  const char *what = a->node && a->node->func ? a->node->func->id : "construct";
  const char *msg = arena_printf(ev->a, "T.%s is not supported yet", what);
  if (ev->block) {
    IrStmt *s = ir_stmt(ev->c, IR_S_UNSUPPORTED, cloc(a));
    s->u.unsupported.what = arena_printf(ev->a, "T.%s", what);
    ev_emit(ev, s);
  }
  return ev_opaque(ev, msg);
}

/* Decorators used as plain calls (@T.prim_func handled syntactically; @tilelang.jit,
 * @autotune ignored): calling returns the argument or an identity decorator. */
static Value *bi_identity_decorator(Eval *ev, CallArgs *a, Value *self, int arg) {
  (void)self;
  (void)arg;
  if (a->npos == 1 && a->nkw == 0 && a->pos[0]->kind == V_FUNC) return a->pos[0];
  return mk_builtin(ev, bi_identity_decorator, "decorator", 0, NULL);
}

/* ---- T.Tensor / T.Buffer ----------------------------------------------------------------- */
static Value *make_tensortype(Eval *ev, Value *shape, Value *dtype, SrcLoc loc, const AstNode *shape_node) {
  ts_dtype t = TS_DTYPE_FLOAT32;
  if (dtype && !ev_to_dtype(ev, dtype, &t, loc)) return NULL;
  Value *tt = ev_new(ev, V_TENSORTYPE);
  Value *sh = ev_new(ev, V_TUPLE);
  if (shape->kind == V_TUPLE || shape->kind == V_LIST) {
    for (int i = 0; i < shape->u.seq.n; i++) vl_push(ev, &sh->u.seq, shape->u.seq.items[i]);
  } else {
    vl_push(ev, &sh->u.seq, shape);
  }
  for (int i = 0; i < sh->u.seq.n; i++) {
    Value *d = sh->u.seq.items[i];
    if (d->kind != V_INT && !(d->kind == V_EXPR && dtype_is_int(d->u.expr->dtype))) {
      ts_error(ev->c, loc, "tensor shape dimensions must be integers, got %s", ev_type_name(d));
      return NULL;
    }
    if (d->kind == V_INT && d->u.i < 0) {
      /* Reported once: a -D value used by several tensors is one mistake. */
      if (!ev->bad_tensor_dim)
        ts_error(ev->c, dim_loc(shape_node, i, sh->u.seq.n, loc), "tensor dimension %d is %lld; it must be 0 or more",
                 i, (long long)d->u.i);
      ev->bad_tensor_dim = true;
      return NULL;
    }
  }
  tt->u.tt.shape = sh;
  tt->u.tt.dtype = t;
  return tt;
}

static Value *t_tensor(Eval *ev, CallArgs *a, Value *self, int is_buffer) {
  (void)self;
  BIND(is_buffer ? "T.Buffer" : "T.Tensor", 1, "shape", "dtype", "data", "strides", "elem_offset", "scope", "align",
       "offset_factor", "buffer_type", "axis_separators");
  if (arg[2] && arg[2]->kind != V_NONE) {
    /* T.Tensor(shape, dtype, buf.data) in a kernel: a view of buf's memory (T.view) */
    for (int i = 3; i < 10; i++)
      if (arg[i] && arg[i]->kind != V_NONE) return t_unsupported(ev, a, NULL, 0);
    if (arg[2]->kind != V_BUFFER) {
      ts_error(ev->c, cloc(a), "T.Tensor(shape, dtype, data): data must be a buffer's memory (buf.data), got %s",
               ev_type_name(arg[2]));
      return NULL;
    }
    CallArgs v = {.node = a->node, .npos = 3};
    Value *pos[3] = {arg[2], arg[0], arg[1] ? arg[1] : bi_dtype(ev, arg[2]->u.buf->dtype)};
    v.pos = pos;
    return ev_call(ev, bi_module_attr_quiet(ev, MOD_T, "view"), &v);
  }
  return make_tensortype(ev, arg[0], arg[1], cloc(a), arg_node(a, 0, "shape"));
}

Value *bi_subscript_builtin(Eval *ev, Value *fn, Value *index, SrcLoc loc) {
  if (fn->u.bi.fn == t_tensor) { /* T.Tensor[(M, N), dtype] */
    if (index->kind != V_TUPLE || index->u.seq.n < 1 || index->u.seq.n > 2) {
      ts_error(ev->c, loc, "T.Tensor[...] expects [shape, dtype]");
      return NULL;
    }
    return make_tensortype(ev, index->u.seq.items[0], index->u.seq.n > 1 ? index->u.seq.items[1] : NULL, loc, NULL);
  }
  ts_error(ev->c, loc, "'%s' is not subscriptable", fn->u.bi.name);
  return NULL;
}

/* ---- allocation -------------------------------------------------------------------------- */
static const char *take_name(Eval *ev, const char *dflt) {
  const char *n = ev->pending_name ? ev->pending_name : dflt;
  ev->pending_name = NULL;
  return n;
}

static IrBuffer *alloc_buffer(Eval *ev, CallArgs *a, const char *what, Value *shape, Value *dtype, IrScope scope) {
  SrcLoc loc = cloc(a);
  if (!ev_need_kernel(ev, what, loc)) return NULL;
  ts_dtype t;
  IrExpr **sh;
  if (!ev_to_dtype(ev, dtype, &t, loc)) return NULL;
  int nd = shape_arg(ev, shape, &sh, loc);
  if (nd < 0) return NULL;
  const AstNode *shape_node = arg_node(a, 0, "shape");
  char what_dim[64];
  snprintf(what_dim, sizeof what_dim, "%s: dimension", what);
  for (int d = 0; d < nd; d++)
    if (!check_size(ev, sh[d], 1, dim_loc(shape_node, d, nd, loc), what_dim, d)) return NULL;
  IrBuffer *b = ir_buffer(ev->c, take_name(ev, scope == IR_SCOPE_FRAGMENT ? "frag" : scope == IR_SCOPE_LOCAL ? "local" : "smem"),
                          t, scope, nd, sh, loc);
  IrStmt *s = ir_stmt(ev->c, IR_S_ALLOC, loc);
  s->u.alloc.buf = b;
  ev_emit(ev, s);
  ev_define_buffer(ev, b);
  return b;
}

static Value *t_alloc(Eval *ev, CallArgs *a, Value *self, int scope) {
  (void)self;
  IrBuffer *b;
  if (scope == IR_SCOPE_SHARED_DYN) {
    BIND("T.alloc_shared", 2, "shape", "dtype", "scope");
    IrScope sc = IR_SCOPE_SHARED_DYN;
    if (arg[2]) {
      if (arg[2]->kind != V_STR || (strcmp(arg[2]->u.str.s, "shared.dyn") && strcmp(arg[2]->u.str.s, "shared"))) {
        ts_error(ev->c, cloc(a), "T.alloc_shared: scope must be \"shared.dyn\" or \"shared\"");
        return NULL;
      }
      sc = !strcmp(arg[2]->u.str.s, "shared") ? IR_SCOPE_SHARED : IR_SCOPE_SHARED_DYN;
    }
    b = alloc_buffer(ev, a, "T.alloc_shared", arg[0], arg[1], sc);
  } else {
    BIND(scope == IR_SCOPE_FRAGMENT ? "T.alloc_fragment" : "T.alloc_local", 2, "shape", "dtype", "scope");
    b = alloc_buffer(ev, a, scope == IR_SCOPE_FRAGMENT ? "T.alloc_fragment" : "T.alloc_local", arg[0], arg[1],
                     (IrScope)scope);
  }
  return b ? buffer_value(ev, b) : NULL;
}

static Value *t_alloc_var(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.alloc_var", 1, "dtype", "init", "scope");
  SrcLoc loc = cloc(a);
  if (!ev_need_kernel(ev, "T.alloc_var", loc)) return NULL;
  ts_dtype t;
  if (!ev_to_dtype(ev, arg[0], &t, loc)) return NULL;
  IrExpr *one = ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
  IrBuffer *b = ir_buffer(ev->c, take_name(ev, "var"), t, IR_SCOPE_VAR, 1, &one, loc);
  if (arg[1] && arg[1]->kind != V_NONE) {
    b->init = to_dtype(ev, arg[1], t, loc);
    if (!b->init) return NULL;
  }
  IrStmt *s = ir_stmt(ev->c, IR_S_ALLOC, loc);
  s->u.alloc.buf = b;
  ev_emit(ev, s);
  ev_define_buffer(ev, b);
  return buffer_value(ev, b);
}

static Value *t_empty(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.empty", 1, "shape", "dtype");
  SrcLoc loc = cloc(a);
  if (!ev->eager) {
    ts_error(ev->c, loc, "T.empty is only allowed in an eager @tilelang.jit function");
    return NULL;
  }
  ts_dtype t = TS_DTYPE_FLOAT32;
  IrExpr **sh;
  if (arg[1] && !ev_to_dtype(ev, arg[1], &t, loc)) return NULL;
  int nd = shape_arg(ev, arg[0], &sh, loc);
  if (nd < 0) return NULL;
  IrBuffer *b = ir_buffer(ev->c, take_name(ev, arena_printf(ev->a, "out%d", ev->outputs.len)), t, IR_SCOPE_GLOBAL, nd, sh, loc);
  vec_push(ev->a, &ev->outputs, b);
  return buffer_value(ev, b);
}

static Value *t_const(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.const", 1, "names", "dtype");
  SrcLoc loc = cloc(a);
  if (arg[0]->kind != V_STR) {
    ts_error(ev->c, loc, "T.const expects a string of names, e.g. T.const(\"M, N\")");
    return NULL;
  }
  Value *out = ev_new(ev, V_TUPLE);
  const char *s = arg[0]->u.str.s;
  while (*s) {
    while (*s == ' ' || *s == ',') s++;
    const char *b = s;
    while (*s && *s != ' ' && *s != ',') s++;
    if (s == b) break;
    const char *name = arena_strndup(ev->a, b, (size_t)(s - b));
    Value *v = NULL;
    for (int i = 0; i < ev->nd; i++)
      if (!strcmp(ev->dnames[i], name)) {
        v = ev->dvals[i];
        ev->dused[i] = true;
      }
    if (!v) {
      ts_error(ev->c, loc, "T.const '%s' has no value: pass -D %s=<int>", name, name);
      v = ev->poison;
    } else if (v->kind != V_INT && v->kind != V_POISON) {
      ts_error(ev->c, loc, "T.const '%s' must be an integer, got %s", name, ev_type_name(v));
      v = ev->poison;
    }
    vl_push(ev, &out->u.seq, v);
  }
  if (out->u.seq.n == 1) return out->u.seq.items[0];
  return out;
}

static Value *t_dynamic(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.dynamic", 1, "names", "dtype");
  SrcLoc loc = cloc(a);
  ts_dtype t = TS_DTYPE_INT32;
  if (arg[1] && !ev_to_dtype(ev, arg[1], &t, loc)) return NULL;
  if (arg[0]->kind != V_STR) {
    ts_error(ev->c, loc, "T.dynamic expects a string of names");
    return NULL;
  }
  Value *out = ev_new(ev, V_TUPLE);
  const char *s = arg[0]->u.str.s;
  while (*s) {
    while (*s == ' ' || *s == ',') s++;
    const char *b = s;
    while (*s && *s != ' ' && *s != ',') s++;
    if (s == b) break;
    IrVar *v = ir_var(ev->c, arena_strndup(ev->a, b, (size_t)(s - b)), t, IR_VAR_DYNAMIC, loc);
    vec_push(ev->a, &ev->dyn_vars, v);
    vl_push(ev, &out->u.seq, ev_expr(ev, ir_varref(ev->c, v, loc)));
  }
  if (out->u.seq.n == 1) return out->u.seq.items[0];
  return out;
}

/* ---- kernel and loops ---------------------------------------------------------------------- */
static Value *t_kernel(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  SrcLoc loc = cloc(a);
  KernelFrame *k = ARENA_NEW(ev->a, KernelFrame);
  k->threads[0] = 128;
  k->threads[1] = k->threads[2] = 1;
  if (a->npos < 1 || a->npos > 3) {
    ts_error(ev->c, loc, "T.Kernel() takes 1 to 3 grid dimensions (%d given)", a->npos);
    return NULL;
  }
  for (int i = 0; i < a->npos; i++) {
    k->grid[i] = ev_to_ir(ev, a->pos[i], NULL, loc);
    if (!k->grid[i]) return NULL;
    if (!dtype_is_int(k->grid[i]->dtype)) {
      ts_error(ev->c, loc, "T.Kernel grid dimension %d must be an integer", i);
      return NULL;
    }
    const AstNode *an = arg_node(a, i, NULL);
    if (!check_size(ev, k->grid[i], 1, an ? an->loc : loc, "T.Kernel grid dimension", i)) return NULL;
  }
  k->ngrid = a->npos;
  for (int i = 0; i < a->nkw; i++) {
    Value *v = a->kwv[i];
    if (v->kind == V_POISON) return NULL;
    if (!strcmp(a->kw[i], "threads")) {
      if (v->kind == V_NONE) continue;
      ValList items = {0};
      if (v->kind == V_TUPLE || v->kind == V_LIST) items = v->u.seq;
      else vl_push(ev, &items, v);
      if (items.n < 1 || items.n > 3) {
        ts_error(ev->c, loc, "T.Kernel threads= takes 1 to 3 values");
        return NULL;
      }
      for (int d = 0; d < items.n; d++) {
        int64_t t;
        if (!ev_to_int(ev, items.items[d], &t, loc)) return NULL;
        if (t < 1 || t > 1024) {
          ts_error(ev->c, loc, "T.Kernel threads=%lld is out of range (1..1024)", (long long)t);
          return NULL;
        }
        k->threads[d] = (int)t;
      }
    } else if (!strcmp(a->kw[i], "prelude")) {
      if (v->kind == V_NONE) continue;
      if (v->kind != V_STR) {
        ts_error(ev->c, loc, "T.Kernel prelude= must be a string");
        return NULL;
      }
      k->prelude = v->u.str.s;
    } else if (!strcmp(a->kw[i], "is_cpu")) {
      continue;
    } else {
      ts_error(ev->c, loc, "T.Kernel() got an unexpected keyword argument '%s'", a->kw[i]);
      return NULL;
    }
  }
  Value *v = ev_new(ev, V_KERNEL);
  v->u.kernel = k;
  return v;
}

static LoopFrame *new_frame(Eval *ev, IrForKind kind, int ndim) {
  LoopFrame *f = ARENA_NEW(ev->a, LoopFrame);
  f->kind = kind;
  f->ndim = ndim;
  f->min = ARENA_ARRAY(ev->a, IrExpr *, ndim);
  f->extent = ARENA_ARRAY(ev->a, IrExpr *, ndim);
  return f;
}
static Value *frame_value(Eval *ev, LoopFrame *f) {
  Value *v = ev_new(ev, V_FRAME);
  v->u.frame = f;
  return v;
}

/* start/stop/step of serial-like loops (range semantics). */
static LoopFrame *range_frame(Eval *ev, IrForKind kind, Value *start, Value *stop, Value *stepv, SrcLoc loc) {
  if (!stop || stop->kind == V_NONE) {
    stop = start;
    start = ev_int(ev, 0);
  }
  if (stepv && stepv->kind == V_NONE) stepv = NULL;
  LoopFrame *f = new_frame(ev, kind, 1);
  if (start->kind == V_INT && stop->kind == V_INT && (!stepv || stepv->kind == V_INT)) {
    f->py_ok = true;
    f->py_start = start->u.i;
    f->py_stop = stop->u.i;
    f->py_step = stepv ? stepv->u.i : 1;
    if (f->py_step == 0) {
      ts_error(ev->c, loc, "range() step must not be zero");
      return NULL;
    }
  }
  IrExpr *lo = ev_to_ir(ev, start, NULL, loc), *hi = ev_to_ir(ev, stop, lo, loc);
  if (!lo || !hi) return NULL;
  if (!dtype_is_int(lo->dtype) || !dtype_is_int(hi->dtype)) {
    ts_error(ev->c, loc, "loop bounds must be integers");
    return NULL;
  }
  f->min[0] = lo;
  IrExpr *ext = ev_linear_diff(ev, hi, lo, loc);
  if (stepv && !(stepv->kind == V_INT && stepv->u.i == 1)) {
    /* range(a, b, s): n = ceil((b - a) / s) iterations of i = a + k*s (s < 0 counts down) */
    IrExpr *st = ev_to_ir(ev, stepv, lo, loc);
    if (!st) return NULL;
    int64_t sv;
    if (!ir_is_const_int(st, &sv) || sv == 0 || sv == INT64_MIN) {
      ts_error(ev->c, loc, "a staged loop step must be a non-zero constant");
      return NULL;
    }
    f->step = st;
    IrExpr *span = sv > 0 ? ext : ev_linear_diff(ev, lo, hi, loc);
    int64_t mag = sv > 0 ? sv : -sv;
    ext = ir_binary(ev->c, IR_FLOORDIV, ir_binary(ev->c, IR_ADD, span, ir_int(ev->c, mag - 1, span->dtype, loc), loc),
                    ir_int(ev->c, mag, span->dtype, loc), loc);
    ext = ir_binary(ev->c, IR_MAX, ext, ir_int(ev->c, 0, ext->dtype, loc), loc); /* empty ranges */
  }
  f->extent[0] = ext;
  return f;
}

static Value *bi_range(Eval *ev, CallArgs *a, Value *self, int kind) {
  (void)self;
  const char *fname = kind == IR_FOR_UNROLLED ? "T.unroll" : kind == IR_FOR_VECTORIZED ? "T.vectorized"
                      : a->node && a->node->func && a->node->func->kind == AST_NAME ? "range" : "T.serial";
  LoopFrame *f;
  if (kind == IR_FOR_UNROLLED) {
    BIND("T.unroll", 1, "start", "stop", "step", "explicit", "unroll_factor");
    f = range_frame(ev, IR_FOR_UNROLLED, arg[0], arg[1], arg[2], cloc(a));
    int64_t uf = 0;
    if (f && !opt_int(ev, arg[4], 0, &uf, cloc(a))) return NULL;
    if (f) f->unroll_factor = (int)uf;
  } else {
    BIND(fname, 1, "start", "stop", "step", "annotations");
    f = range_frame(ev, (IrForKind)kind, arg[0], arg[1], arg[2], cloc(a));
  }
  return f ? frame_value(ev, f) : NULL;
}

static Value *t_parallel(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  SrcLoc loc = cloc(a);
  if (a->npos < 1) {
    ts_error(ev->c, loc, "T.Parallel() needs at least one extent");
    return NULL;
  }
  for (int i = 0; i < a->nkw; i++)
    if (strcmp(a->kw[i], "coalesced_width") && strcmp(a->kw[i], "loop_layout") && strcmp(a->kw[i], "prefer_async") &&
        strcmp(a->kw[i], "annotations")) {
      ts_error(ev->c, loc, "T.Parallel() got an unexpected keyword argument '%s'", a->kw[i]);
      return NULL;
    }
  LoopFrame *f = new_frame(ev, IR_FOR_PARALLEL, a->npos);
  for (int i = 0; i < a->npos; i++) {
    f->extent[i] = ev_to_ir(ev, a->pos[i], NULL, loc);
    if (!f->extent[i]) return NULL;
    if (!dtype_is_int(f->extent[i]->dtype)) {
      ts_error(ev->c, loc, "T.Parallel extents must be integers");
      return NULL;
    }
    const AstNode *an = arg_node(a, i, NULL);
    if (!check_size(ev, f->extent[i], 1, an ? an->loc : loc, "T.Parallel extent", i)) return NULL;
    f->min[i] = ir_int(ev->c, 0, f->extent[i]->dtype, loc);
  }
  return frame_value(ev, f);
}

static bool int_list(Eval *ev, Value *v, int **out, int *n, SrcLoc loc) {
  if (!v || v->kind == V_NONE) return true;
  if (v->kind != V_TUPLE && v->kind != V_LIST) {
    ts_error(ev->c, loc, "expected a list of integers, got %s", ev_type_name(v));
    return false;
  }
  *n = v->u.seq.n;
  *out = ARENA_ARRAY(ev->a, int, *n);
  for (int i = 0; i < *n; i++) {
    int64_t x;
    if (!ev_to_int(ev, v->u.seq.items[i], &x, loc)) return false;
    (*out)[i] = (int)x;
  }
  return true;
}

static Value *t_pipelined(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.Pipelined", 1, "start", "stop", "num_stages", "order", "stage", "sync", "group", "annotations");
  SrcLoc loc = cloc(a);
  LoopFrame *f = range_frame(ev, IR_FOR_PIPELINED, arg[0], arg[1], NULL, loc);
  if (!f) return NULL;
  int64_t ns;
  if (!opt_int(ev, arg[2], 0, &ns, loc)) return NULL;
  f->num_stages = (int)ns;
  int no = 0, nst = 0;
  if (!int_list(ev, arg[3], &f->order, &no, loc) || !int_list(ev, arg[4], &f->stage, &nst, loc)) return NULL;
  if (f->order && f->stage && no != nst) {
    ts_error(ev->c, loc, "T.Pipelined: order= and stage= must have the same length");
    return NULL;
  }
  f->norder = no ? no : nst;
  return frame_value(ev, f);
}

/* ---- tile-op operands ------------------------------------------------------------------------ */
typedef struct Operand {
  IrBuffer *buf;
  IrExpr **min, **extent; /* extent NULL: a corner (BufferLoad) whose extent comes from the partner */
  SrcLoc loc;
} Operand;

static bool operand(Eval *ev, Value *v, const char *fname, const char *role, Operand *o, SrcLoc loc) {
  o->loc = loc;
  if (v->kind == V_BUFFER) {
    IrBuffer *b = v->u.buf;
    o->buf = b;
    o->min = ARENA_ARRAY(ev->a, IrExpr *, b->ndim);
    o->extent = ARENA_ARRAY(ev->a, IrExpr *, b->ndim);
    for (int i = 0; i < b->ndim; i++) {
      o->min[i] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
      o->extent[i] = b->shape[i];
    }
    return true;
  }
  if (v->kind == V_REGION) {
    o->buf = v->u.region.buf;
    o->min = v->u.region.min;
    o->extent = v->u.region.extent;
    return true;
  }
  if (v->kind == V_EXPR && v->u.expr->kind == IR_LOAD) {
    o->buf = v->u.expr->u.load.buf;
    o->min = v->u.expr->u.load.idx;
    o->extent = NULL;
    return true;
  }
  if (v->kind == V_OPAQUE) {
    ts_error(ev->c, loc, "%s", v->u.opaque.what);
    return false;
  }
  ts_error(ev->c, loc, "%s(): %s must be a buffer, a buffer region or a buffer element, got %s", fname, role,
           ev_type_name(v));
  return false;
}

static IrRegion to_region(const Operand *o) {
  IrRegion r = {o->buf, o->buf->ndim, o->min, o->extent, o->loc};
  return r;
}

static bool is_one(const IrExpr *e) {
  int64_t k;
  return ir_is_const_int(e, &k) && k == 1;
}

/* A corner operand takes the partner's extents, right-aligned: leading 1-extents of
 * the partner are dropped when it has more dimensions; missing leading dims get 1. */
static bool fill_corner(Eval *ev, Operand *corner, const Operand *other, const char *fname) {
  int rank = corner->buf->ndim, n = other->buf->ndim, skip = 0;
  while (n - skip > rank && is_one(other->extent[skip])) skip++;
  if (n - skip > rank) {
    ts_error(ev->c, corner->loc, "%s(): a %d-d region does not fit into buffer '%s' of rank %d", fname, n - skip,
             corner->buf->name, rank);
    return false;
  }
  corner->extent = ARENA_ARRAY(ev->a, IrExpr *, rank);
  int pad = rank - (n - skip);
  for (int i = 0; i < rank; i++)
    corner->extent[i] = i < pad ? ir_int(ev->c, 1, TS_DTYPE_INT32, corner->loc) : other->extent[skip + i - pad];
  return true;
}

/* Non-1 extents must agree in order (1-dims broadcast). */
static bool check_extents(Eval *ev, const Operand *x, const Operand *y, const char *fname, SrcLoc loc) {
  IrExpr *ex[16], *ey[16];
  int nx = 0, ny = 0;
  for (int i = 0; i < x->buf->ndim && nx < 16; i++)
    if (!is_one(x->extent[i])) ex[nx++] = x->extent[i];
  for (int i = 0; i < y->buf->ndim && ny < 16; i++)
    if (!is_one(y->extent[i])) ey[ny++] = y->extent[i];
  StrBuf sx = {0}, sy = {0};
  bool bad = nx != ny;
  for (int i = 0; !bad && i < nx; i++) {
    int64_t a, b;
    if (ir_is_const_int(ex[i], &a) && ir_is_const_int(ey[i], &b)) bad = a != b;
  }
  if (bad) {
    for (int i = 0; i < x->buf->ndim; i++) {
      if (i) sb_append(&sx, ", ");
      ir_print_expr(&sx, x->extent[i]);
    }
    for (int i = 0; i < y->buf->ndim; i++) {
      if (i) sb_append(&sy, ", ");
      ir_print_expr(&sy, y->extent[i]);
    }
    ts_error(ev->c, loc, "%s(): extents do not match: %s [%s] vs %s [%s]", fname, x->buf->name, sb_str(&sx),
             y->buf->name, sb_str(&sy));
  }
  sb_free(&sx);
  sb_free(&sy);
  return !bad;
}

static Value *t_copy(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.copy", 2, "src", "dst", "coalesced_width", "disable_tma", "eviction_policy", "prefer_instruction",
       "annotations", "loop_layout");
  SrcLoc loc = cloc(a);
  if (!ev_need_kernel(ev, "T.copy", loc)) return NULL;
  Operand s, d;
  if (!operand(ev, arg[0], "T.copy", "src", &s, loc) || !operand(ev, arg[1], "T.copy", "dst", &d, loc)) return NULL;
  if (!s.extent && !d.extent) { /* two elements: a plain store */
    IrExpr *v = ir_cast(ev->c, d.buf->dtype, arg[0]->u.expr, loc);
    ev_emit(ev, ir_store(ev->c, d.buf, d.min, d.buf->ndim, v, loc));
    return ev->none;
  }
  if (!s.extent && !fill_corner(ev, &s, &d, "T.copy")) return NULL;
  if (!d.extent && !fill_corner(ev, &d, &s, "T.copy")) return NULL;
  if (!check_extents(ev, &s, &d, "T.copy", loc)) return NULL;
  IrStmt *st = ir_stmt(ev->c, IR_S_COPY, loc);
  st->u.copy.src = to_region(&s);
  st->u.copy.dst = to_region(&d);
  st->u.copy.disable_tma = opt_bool(ev, arg[3], false, loc);
  int64_t cw = 0;
  if (!opt_int(ev, arg[2], 0, &cw, loc)) return NULL;
  st->u.copy.coalesced_width = (int)cw;
  ev_emit(ev, st);
  return ev->none;
}

static Value *emit_fill(Eval *ev, CallArgs *a, const char *fname, Value *dst, Value *value) {
  SrcLoc loc = cloc(a);
  if (!ev_need_kernel(ev, fname, loc)) return NULL;
  Operand d;
  if (!operand(ev, dst, fname, "dst", &d, loc)) return NULL;
  if (!d.extent) { /* a single element */
    d.extent = ARENA_ARRAY(ev->a, IrExpr *, d.buf->ndim);
    for (int i = 0; i < d.buf->ndim; i++) d.extent[i] = ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
  }
  IrExpr *v = to_dtype(ev, value, d.buf->dtype, loc);
  if (!v) return NULL;
  IrStmt *st = ir_stmt(ev->c, IR_S_FILL, loc);
  st->u.fill.dst = to_region(&d);
  st->u.fill.value = v;
  ev_emit(ev, st);
  return ev->none;
}

static Value *t_fill(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.fill", 2, "buffer", "value");
  return emit_fill(ev, a, "T.fill", arg[0], arg[1]);
}

static Value *t_clear(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.clear", 1, "buffer");
  return emit_fill(ev, a, "T.clear", arg[0], ev_int(ev, 0));
}

static bool same_extent(const IrExpr *x, const IrExpr *y) {
  int64_t a, b;
  if (ir_is_const_int(x, &a) && ir_is_const_int(y, &b)) return a == b;
  return ir_expr_equal(x, y);
}

static Value *t_reduce(Eval *ev, CallArgs *a, Value *self, int op) {
  (void)self;
  static const char *const fnames[] = {"T.reduce_sum", "T.reduce_max", "T.reduce_min", "T.reduce_absmax",
                                       "T.reduce_abssum"};
  const char *fname = fnames[op];
  BIND(fname, 2, "buffer", "out", "dim", "clear", "batch", "nan_propagate");
  SrcLoc loc = cloc(a);
  if (!ev_need_kernel(ev, fname, loc)) return NULL;
  if (arg[0]->kind != V_BUFFER || arg[1]->kind != V_BUFFER) {
    ts_error(ev->c, loc, "%s(): source and destination must be buffers, got %s and %s", fname, ev_type_name(arg[0]),
             ev_type_name(arg[1]));
    return NULL;
  }
  IrBuffer *src = arg[0]->u.buf, *dst = arg[1]->u.buf;
  int64_t dim;
  if (!opt_int(ev, arg[2], -1, &dim, loc)) return NULL;
  if (dim < 0) dim += src->ndim;
  if (dim < 0 || dim >= src->ndim) {
    ts_error(ev->c, loc, "%s(): dim is out of range for buffer '%s' of rank %d", fname, src->name, src->ndim);
    return NULL;
  }
  /* dst = src shape without `dim` (or with a 1 there: keepdim); a 1-d source reduces to [1]. */
  bool ok = false;
  if (dst->ndim == src->ndim - 1) {
    ok = true;
    for (int i = 0, j = 0; i < src->ndim; i++) {
      if (i == dim) continue;
      ok &= same_extent(src->shape[i], dst->shape[j++]);
    }
  } else if (dst->ndim == src->ndim) {
    ok = true;
    for (int i = 0; i < src->ndim; i++) ok &= i == dim ? is_one(dst->shape[i]) : same_extent(src->shape[i], dst->shape[i]);
  }
  if (!ok && src->ndim == 1 && dst->ndim == 1 && is_one(dst->shape[0])) ok = true;
  if (!ok) {
    StrBuf sb = {0};
    sb_append(&sb, "[");
    for (int i = 0; i < dst->ndim; i++) {
      if (i) sb_append(&sb, ", ");
      ir_print_expr(&sb, dst->shape[i]);
    }
    sb_append(&sb, "] vs source [");
    for (int i = 0; i < src->ndim; i++) {
      if (i) sb_append(&sb, ", ");
      ir_print_expr(&sb, src->shape[i]);
    }
    sb_append(&sb, "]");
    ts_error(ev->c, loc, "%s(): output '%s' must have the shape of '%s' without dimension %lld: %s", fname, dst->name,
             src->name, (long long)dim, sb_str(&sb));
    sb_free(&sb);
    return NULL;
  }
  IrStmt *st = ir_stmt(ev->c, IR_S_REDUCE, loc);
  st->u.reduce.op = (IrReduceKind)op;
  st->u.reduce.src = src;
  st->u.reduce.dst = dst;
  st->u.reduce.dim = (int)dim;
  st->u.reduce.clear = opt_bool(ev, arg[3], true, loc);
  ev_emit(ev, st);
  return ev->none;
}

static Value *t_atomic(Eval *ev, CallArgs *a, Value *self, int op) {
  (void)self;
  const char *fname = op == IR_ATOMIC_ADD ? "T.atomic_add" : op == IR_ATOMIC_MAX ? "T.atomic_max" : "T.atomic_min";
  BIND(fname, 2, "dst", "value", "memory_order", "return_prev", "use_tma");
  SrcLoc loc = cloc(a);
  if (!ev_need_kernel(ev, fname, loc)) return NULL;
  if (arg[3] && opt_bool(ev, arg[3], false, loc)) return t_unsupported(ev, a, NULL, 0);
  Operand d;
  if (!operand(ev, arg[0], fname, "dst", &d, loc)) return NULL;
  IrStmt *st = ir_stmt(ev->c, IR_S_ATOMIC, loc);
  st->u.atomic.op = (IrAtomicOp)op;
  if (!d.extent) { /* scalar: AtomicAdd(&dst[i], value) */
    d.extent = ARENA_ARRAY(ev->a, IrExpr *, d.buf->ndim);
    for (int i = 0; i < d.buf->ndim; i++) d.extent[i] = ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
    IrExpr *v = to_dtype(ev, arg[1], d.buf->dtype, loc);
    if (!v) return NULL;
    st->u.atomic.dst = to_region(&d);
    st->u.atomic.value = v;
    st->u.atomic.tile = false;
  } else { /* tile: dst region += src region */
    Operand s;
    if (!operand(ev, arg[1], fname, "value", &s, loc)) return NULL;
    if (!s.extent && !fill_corner(ev, &s, &d, fname)) return NULL;
    if (!check_extents(ev, &s, &d, fname, loc)) return NULL;
    st->u.atomic.dst = to_region(&d);
    st->u.atomic.src = to_region(&s);
    st->u.atomic.tile = true;
  }
  ev_emit(ev, st);
  return ev->none;
}

static Value *t_gemm(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.gemm", 3, "A", "B", "C", "transpose_A", "transpose_B", "policy", "clear_accum", "k_pack", "wg_wait", "mbar",
       "annotations");
  SrcLoc loc = cloc(a);
  if (!ev_need_kernel(ev, "T.gemm", loc)) return NULL;
  Operand o[3];
  static const char *const roles[] = {"A", "B", "C"};
  for (int i = 0; i < 3; i++) {
    if (!operand(ev, arg[i], "T.gemm", roles[i], &o[i], loc)) return NULL;
    if (!o[i].extent) {
      ts_error(ev->c, loc, "T.gemm(): %s must be a buffer or a buffer region", roles[i]);
      return NULL;
    }
  }
  IrStmt *st = ir_stmt(ev->c, IR_S_GEMM, loc);
  st->u.gemm.a = to_region(&o[0]);
  st->u.gemm.b = to_region(&o[1]);
  st->u.gemm.c = to_region(&o[2]);
  st->u.gemm.trans_a = opt_bool(ev, arg[3], false, loc);
  st->u.gemm.trans_b = opt_bool(ev, arg[4], false, loc);
  st->u.gemm.clear_accum = opt_bool(ev, arg[6], false, loc);
  int64_t pol, kp;
  if (!opt_int(ev, arg[5], 0, &pol, loc) || !opt_int(ev, arg[7], 1, &kp, loc)) return NULL;
  st->u.gemm.policy = (int)pol;
  st->u.gemm.k_pack = (int)kp;
  ev_emit(ev, st);
  return ev->none;
}

static Value *t_sync_threads(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.sync_threads", 0, "barrier_id", "arrive_count");
  if (arg[0] || arg[1]) return t_unsupported(ev, a, NULL, 0);
  if (!ev_need_kernel(ev, "T.sync_threads", cloc(a))) return NULL;
  ev_emit(ev, ir_eval(ev->c, ir_call(ev->c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, cloc(a)), cloc(a)));
  return ev->none;
}

static Value *t_thread_binding(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.get_thread_binding", 0, "dim");
  SrcLoc loc = cloc(a);
  if (!ev_need_kernel(ev, "T.get_thread_binding", loc)) return NULL;
  int64_t dim;
  if (!opt_int(ev, arg[0], 0, &dim, loc)) return NULL;
  if (dim < 0 || dim > 2) {
    ts_error(ev->c, loc, "T.get_thread_binding: dim must be 0, 1 or 2");
    return NULL;
  }
  IrKernel *k = &ev->kernel->u.kernel;
  if (!k->thread_var[dim]) {
    static const char *const names[] = {"tx", "ty", "tz"};
    k->thread_var[dim] = ir_var(ev->c, names[dim], TS_DTYPE_INT32, IR_VAR_THREAD_IDX, loc);
    k->thread_var[dim]->axis = (int)dim;
  }
  return ev_expr(ev, ir_varref(ev->c, k->thread_var[dim], loc));
}

/* ---- math ---------------------------------------------------------------------------------------- */
static Value *t_math(Eval *ev, CallArgs *a, Value *self, int op) {
  (void)self;
  const IrIntrinInfo *info = &ir_intrin_info[op];
  SrcLoc loc = cloc(a);
  const char *fname = arena_printf(ev->a, "T.%s", info->name);
  if (a->nkw || a->npos != info->nargs) {
    ts_error(ev->c, loc, "%s() takes %d argument%s (%d given)", fname, info->nargs, info->nargs == 1 ? "" : "s",
             a->npos + a->nkw);
    return NULL;
  }
  IrExpr **args = ARENA_ARRAY(ev->a, IrExpr *, info->nargs);
  const IrExpr *like = NULL;
  for (int i = 0; i < info->nargs; i++)
    if (a->pos[i]->kind == V_EXPR) like = a->pos[i]->u.expr;
  for (int i = 0; i < info->nargs; i++) {
    args[i] = ev_to_ir(ev, a->pos[i], like, loc);
    if (!args[i]) return NULL;
  }
  ts_dtype t = args[0]->dtype;
  if ((info->flags & IRI_FLOAT) && !dtype_is_float(t)) t = TS_DTYPE_FLOAT32;
  for (int i = 0; i < info->nargs; i++) args[i] = ir_cast(ev->c, t, args[i], loc);
  if (op == IRI_ISNAN || op == IRI_ISINF || op == IRI_ISFINITE)
    return ev_expr(ev, ir_call(ev->c, (IrIntrin)op, TS_DTYPE_BOOL, args, info->nargs, loc));
  return ev_expr(ev, ir_call(ev->c, (IrIntrin)op, t, args, info->nargs, loc));
}

/* min/max of two values: Python numbers fold, anything IR -> MIN/MAX. */
static Value *minmax2(Eval *ev, IrExprKind k, Value *x, Value *y, SrcLoc loc) {
  if (ev_is_num(x) && ev_is_num(y)) {
    Value *lt = ev_binop(ev, AOP_LT, x, y, loc);
    if (!lt) return NULL;
    return (lt->u.b == (k == IR_MIN)) ? x : y;
  }
  const IrExpr *lx = x->kind == V_EXPR ? x->u.expr : NULL, *ly = y->kind == V_EXPR ? y->u.expr : NULL;
  IrExpr *a = ev_to_ir(ev, x, ly, loc);
  IrExpr *b = a ? ev_to_ir(ev, y, lx ? lx : a, loc) : NULL;
  if (!a || !b) return NULL;
  return ev_expr(ev, ir_binary(ev->c, k, a, b, loc));
}

static Value *t_minmax(Eval *ev, CallArgs *a, Value *self, int k) {
  (void)self;
  BIND(k == IR_MAX ? "T.max" : "T.min", 2, "a", "b");
  return minmax2(ev, (IrExprKind)k, arg[0], arg[1], cloc(a));
}

static Value *t_clamp(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.clamp", 3, "x", "lo", "hi");
  Value *v = minmax2(ev, IR_MAX, arg[0], arg[1], cloc(a));
  return v ? minmax2(ev, IR_MIN, v, arg[2], cloc(a)) : NULL;
}

static Value *t_if_then_else(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.if_then_else", 3, "cond", "t", "f");
  SrcLoc loc = cloc(a);
  int tv = ev_truth(ev, arg[0], loc);
  if (tv == -2) return NULL;
  if (tv >= 0) return tv ? arg[1] : arg[2];
  IrExpr *c = ev_to_bool_ir(ev, ev_to_ir(ev, arg[0], NULL, loc), loc);
  return c ? ev_select(ev, IR_IF_THEN_ELSE, c, arg[1], arg[2], loc) : NULL;
}

static Value *t_cast(Eval *ev, CallArgs *a, Value *self, int swapped) {
  (void)self;
  Value *x, *dt;
  if (swapped) { /* T.Cast(dtype, x) */
    BIND("T.Cast", 2, "dtype", "value");
    dt = arg[0];
    x = arg[1];
  } else {
    BIND("T.cast", 2, "value", "dtype");
    x = arg[0];
    dt = arg[1];
  }
  ts_dtype t;
  if (!ev_to_dtype(ev, dt, &t, cloc(a))) return NULL;
  return ev_expr(ev, to_dtype(ev, x, t, cloc(a)));
}

static Value *m_astype(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)unused;
  BIND("astype", 1, "dtype");
  ts_dtype t;
  if (!ev_to_dtype(ev, arg[0], &t, cloc(a))) return NULL;
  return ev_expr(ev, to_dtype(ev, self, t, cloc(a)));
}

static Value *t_reinterpret(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.reinterpret", 2, "value", "dtype");
  Value *x = arg[0], *dt = arg[1];
  if (x->kind == V_DTYPE || x->kind == V_STR) { /* T.reinterpret(dtype, value) (TVM order) */
    Value *tmp = x;
    x = dt;
    dt = tmp;
  }
  ts_dtype t;
  if (!ev_to_dtype(ev, dt, &t, cloc(a))) return NULL;
  IrExpr *e = ev_to_ir(ev, x, NULL, cloc(a));
  if (!e) return NULL;
  if (dtype_bits(e->dtype) != dtype_bits(t)) {
    ts_error(ev->c, cloc(a), "T.reinterpret: %s and %s have different sizes", dtype_name(e->dtype), dtype_name(t));
    return NULL;
  }
  IrExpr *r = ir_unary(ev->c, IR_REINTERPRET, e, cloc(a));
  r->dtype = t;
  return ev_expr(ev, r);
}

static Value *t_infinity(Eval *ev, CallArgs *a, Value *self, int which) {
  (void)self;
  static const char *const fnames[] = {"T.infinity", "T.max_value", "T.min_value"};
  BIND(fnames[which], 1, "dtype");
  ts_dtype t;
  SrcLoc loc = cloc(a);
  if (!ev_to_dtype(ev, arg[0], &t, loc)) return NULL;
  if (which == 0) {
    if (!dtype_is_float(t)) {
      ts_error(ev->c, loc, "T.infinity: %s has no infinity", dtype_name(t));
      return NULL;
    }
    return ev_expr(ev, ir_float(ev->c, INFINITY, t, loc));
  }
  bool mx = which == 1;
  if (dtype_is_float(t)) {
    double v = t == TS_DTYPE_FLOAT16 ? 65504.0 : t == TS_DTYPE_BFLOAT16 ? 3.3895313892515355e38
               : t == TS_DTYPE_FLOAT64 ? DBL_MAX : t == TS_DTYPE_FLOAT8_E4M3 ? 448.0 : t == TS_DTYPE_FLOAT8_E5M2 ? 57344.0
               : FLT_MAX;
    return ev_expr(ev, ir_float(ev->c, mx ? v : -v, t, loc));
  }
  int bits = dtype_bits(t);
  if (t == TS_DTYPE_BOOL) return ev_expr(ev, ir_int(ev->c, mx, t, loc));
  if (!dtype_is_signed(t)) return ev_expr(ev, ir_int(ev->c, mx ? (bits == 64 ? -1 : (int64_t)((1ULL << bits) - 1)) : 0, t, loc));
  int64_t hi = bits == 64 ? INT64_MAX : (int64_t)((1ULL << (bits - 1)) - 1);
  return ev_expr(ev, ir_int(ev->c, mx ? hi : -hi - 1, t, loc));
}

static Value *t_ceildiv(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("T.ceildiv", 2, "a", "b");
  SrcLoc loc = cloc(a);
  if (arg[0]->kind == V_INT && arg[1]->kind == V_INT) {
    if (arg[1]->u.i == 0) {
      ts_error(ev->c, loc, "T.ceildiv: division by zero");
      return NULL;
    }
    Value *s = ev_binop(ev, AOP_ADD, arg[0], ev_int(ev, arg[1]->u.i - 1), loc);
    return s ? ev_binop(ev, AOP_FLOORDIV, s, arg[1], loc) : NULL;
  }
  /* (a + (b - 1)) // b, with b - 1 folded when b is a Python int */
  Value *bm1 = arg[1]->kind == V_INT ? ev_int(ev, arg[1]->u.i - 1) : ev_binop(ev, AOP_SUB, arg[1], ev_int(ev, 1), loc);
  Value *s = bm1 ? ev_binop(ev, AOP_ADD, arg[0], bm1, loc) : NULL;
  return s ? ev_binop(ev, AOP_FLOORDIV, s, arg[1], loc) : NULL;
}

static Value *t_intop(Eval *ev, CallArgs *a, Value *self, int k) {
  (void)self;
  const char *fname = k == IR_FLOORDIV ? "T.floordiv" : k == IR_FLOORMOD ? "T.floormod" : k == IR_TRUNCDIV ? "T.truncdiv" : "T.truncmod";
  BIND(fname, 2, "a", "b");
  SrcLoc loc = cloc(a);
  if (k == IR_FLOORDIV || k == IR_FLOORMOD) return ev_binop(ev, k == IR_FLOORDIV ? AOP_FLOORDIV : AOP_MOD, arg[0], arg[1], loc);
  const IrExpr *l0 = arg[0]->kind == V_EXPR ? arg[0]->u.expr : NULL, *l1 = arg[1]->kind == V_EXPR ? arg[1]->u.expr : NULL;
  IrExpr *x = ev_to_ir(ev, arg[0], l1, loc), *y = x ? ev_to_ir(ev, arg[1], l0 ? l0 : x, loc) : NULL;
  return y ? ev_expr(ev, ir_binary(ev->c, (IrExprKind)k, x, y, loc)) : NULL;
}

/* ---- Python builtins ---------------------------------------------------------------------------- */
static Value *py_minmax(Eval *ev, CallArgs *a, Value *self, int k) {
  (void)self;
  SrcLoc loc = cloc(a);
  ValList items = {0};
  if (a->nkw) {
    ts_error(ev->c, loc, "%s() keyword arguments are not supported", k == IR_MIN ? "min" : "max");
    return NULL;
  }
  if (a->npos == 1) {
    if (!ev_iter_items(ev, a->pos[0], &items, loc)) return NULL;
  } else {
    for (int i = 0; i < a->npos; i++) vl_push(ev, &items, a->pos[i]);
  }
  if (!items.n) {
    ts_error(ev->c, loc, "%s() arg is an empty sequence", k == IR_MIN ? "min" : "max");
    return NULL;
  }
  Value *acc = items.items[0];
  for (int i = 1; i < items.n && acc; i++) acc = minmax2(ev, (IrExprKind)k, acc, items.items[i], loc);
  return acc;
}

static Value *py_abs(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("abs", 1, "x");
  Value *x = arg[0];
  if (x->kind == V_INT || x->kind == V_BOOL) {
    int64_t i = x->kind == V_INT ? x->u.i : x->u.b;
    return ev_int(ev, i == INT64_MIN ? i : i < 0 ? -i : i);
  }
  if (x->kind == V_FLOAT) return ev_float(ev, fabs(x->u.f));
  IrExpr *e = ev_to_ir(ev, x, NULL, cloc(a));
  return e ? ev_expr(ev, ir_call(ev->c, IRI_ABS, e->dtype, &e, 1, cloc(a))) : NULL;
}

static Value *py_int(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("int", 0, "x", "base");
  Value *x = arg[0];
  if (!x) return ev_int(ev, 0);
  switch (x->kind) {
  case V_INT: return x;
  case V_BOOL: return ev_int(ev, x->u.b);
  case V_FLOAT: return ev_int(ev, ev_f2i(x->u.f));
  case V_STR: {
    char *end;
    long long v = strtoll(x->u.str.s, &end, 10);
    if (*x->u.str.s && !*end) return ev_int(ev, v);
    ts_error(ev->c, cloc(a), "invalid literal for int(): '%s'", x->u.str.s);
    return NULL;
  }
  default: break;
  }
  IrExpr *e = ev_to_ir(ev, x, NULL, cloc(a));
  if (!e) return NULL;
  int64_t k;
  if (ir_is_const_int(e, &k)) return ev_int(ev, k);
  return ev_expr(ev, ir_cast(ev->c, TS_DTYPE_INT32, e, cloc(a)));
}

static Value *py_float(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("float", 0, "x");
  Value *x = arg[0];
  if (!x) return ev_float(ev, 0);
  if (ev_is_num(x)) return ev_float(ev, x->kind == V_FLOAT ? x->u.f : (double)(x->kind == V_INT ? x->u.i : x->u.b));
  if (x->kind == V_STR) {
    char *end;
    double v = strtod(x->u.str.s, &end);
    if (*x->u.str.s && !*end) return ev_float(ev, v);
    if (!strcmp(x->u.str.s, "inf")) return ev_float(ev, INFINITY);
    if (!strcmp(x->u.str.s, "-inf")) return ev_float(ev, -INFINITY);
    ts_error(ev->c, cloc(a), "could not convert string to float: '%s'", x->u.str.s);
    return NULL;
  }
  IrExpr *e = ev_to_ir(ev, x, NULL, cloc(a));
  if (!e) return NULL;
  if (e->kind == IR_FLOAT) return ev_float(ev, e->u.fval);
  return ev_expr(ev, ir_cast(ev->c, TS_DTYPE_FLOAT32, e, cloc(a)));
}

static Value *py_bool(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("bool", 0, "x");
  if (!arg[0]) return ev_bool(ev, false);
  int t = ev_truth(ev, arg[0], cloc(a));
  if (t == -2) return NULL;
  if (t == -1) return ev_expr(ev, ev_to_bool_ir(ev, ev_to_ir(ev, arg[0], NULL, cloc(a)), cloc(a)));
  return ev_bool(ev, t);
}

static Value *py_str(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("str", 0, "x");
  if (!arg[0]) return ev_str(ev, "");
  if (arg[0]->kind == V_STR) return arg[0];
  char *r = ev_repr(ev, arg[0]);
  return ev_str(ev, r);
}

static Value *py_len(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("len", 1, "x");
  Value *x = arg[0];
  switch (x->kind) {
  case V_STR: return ev_int(ev, (int64_t)x->u.str.n);
  case V_TUPLE:
  case V_LIST: return ev_int(ev, x->u.seq.n);
  case V_DICT: return ev_int(ev, x->u.dict.keys.n);
  case V_FRAME:
    if (x->u.frame->py_ok) {
      LoopFrame *f = x->u.frame;
      int64_t n = f->py_step > 0 ? (f->py_stop - f->py_start + f->py_step - 1) / f->py_step
                                 : (f->py_start - f->py_stop - f->py_step - 1) / -f->py_step;
      return ev_int(ev, n < 0 ? 0 : n);
    }
    break;
  default: break;
  }
  ts_error(ev->c, cloc(a), "object of type '%s' has no len()", ev_type_name(x));
  return NULL;
}

static Value *py_seq(Eval *ev, CallArgs *a, Value *self, int kind) {
  (void)self;
  BIND(kind == V_TUPLE ? "tuple" : "list", 0, "iterable");
  Value *v = ev_new(ev, (ValKind)kind);
  if (arg[0] && !ev_iter_items(ev, arg[0], &v->u.seq, cloc(a))) return NULL;
  return v;
}

static Value *py_dict(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  Value *d = ev_new(ev, V_DICT);
  if (a->npos == 1 && a->pos[0]->kind == V_DICT) {
    for (int i = 0; i < a->pos[0]->u.dict.keys.n; i++) {
      vl_push(ev, &d->u.dict.keys, a->pos[0]->u.dict.keys.items[i]);
      vl_push(ev, &d->u.dict.vals, a->pos[0]->u.dict.vals.items[i]);
    }
  } else if (a->npos == 1) { /* dict(zip(keys, values)): an iterable of pairs */
    ValList items = {0};
    if (!ev_iter_items(ev, a->pos[0], &items, cloc(a))) return NULL;
    for (int i = 0; i < items.n; i++) {
      Value *p = items.items[i];
      if ((p->kind != V_TUPLE && p->kind != V_LIST) || p->u.seq.n != 2) {
        ts_error(ev->c, cloc(a), "dict(): element %d of the sequence is not a pair", i);
        return NULL;
      }
      vl_push(ev, &d->u.dict.keys, p->u.seq.items[0]);
      vl_push(ev, &d->u.dict.vals, p->u.seq.items[1]);
    }
  } else if (a->npos) {
    ts_error(ev->c, cloc(a), "dict() takes at most 1 positional argument (%d given)", a->npos);
    return NULL;
  }
  for (int i = 0; i < a->nkw; i++) {
    vl_push(ev, &d->u.dict.keys, ev_str(ev, a->kw[i]));
    vl_push(ev, &d->u.dict.vals, a->kwv[i]);
  }
  return d;
}

static Value *py_isinstance(Eval *ev, CallArgs *a, Value *self, int unused);

static Value *py_print(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)ev;
  (void)a;
  (void)self;
  (void)unused;
  return ev->none; /* host-side prints of factories are dropped */
}

static Value *py_round(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("round", 1, "x", "ndigits");
  if (!ev_is_num(arg[0])) {
    ts_error(ev->c, cloc(a), "round() expects a number");
    return NULL;
  }
  double x = arg[0]->kind == V_FLOAT ? arg[0]->u.f : (double)(arg[0]->kind == V_INT ? arg[0]->u.i : arg[0]->u.b);
  if (arg[1] && arg[1]->kind == V_INT) {
    double p = pow(10.0, (double)arg[1]->u.i);
    return ev_float(ev, nearbyint(x * p) / p);
  }
  return ev_int(ev, ev_f2i(nearbyint(x)));
}

static Value *py_sum(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("sum", 1, "iterable", "start");
  ValList items = {0};
  if (!ev_iter_items(ev, arg[0], &items, cloc(a))) return NULL;
  Value *acc = arg[1] ? arg[1] : ev_int(ev, 0);
  for (int i = 0; i < items.n && acc; i++) acc = ev_binop(ev, AOP_ADD, acc, items.items[i], cloc(a));
  return acc;
}

static Value *py_enumerate(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("enumerate", 1, "iterable", "start");
  ValList items = {0};
  if (!ev_iter_items(ev, arg[0], &items, cloc(a))) return NULL;
  int64_t start = arg[1] && arg[1]->kind == V_INT ? arg[1]->u.i : 0;
  Value *out = ev_new(ev, V_LIST);
  for (int i = 0; i < items.n; i++) {
    Value *pair[2] = {ev_int(ev, start + i), items.items[i]};
    vl_push(ev, &out->u.seq, ev_tuple(ev, pair, 2));
  }
  return out;
}

static Value *py_zip(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  ValList lists[8];
  int n = a->npos, len = -1;
  if (n > 8 || a->nkw) {
    ts_error(ev->c, cloc(a), "zip() supports at most 8 iterables");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    lists[i] = (ValList){0};
    if (!ev_iter_items(ev, a->pos[i], &lists[i], cloc(a))) return NULL;
    if (len < 0 || lists[i].n < len) len = lists[i].n;
  }
  Value *out = ev_new(ev, V_LIST);
  for (int k = 0; k < len; k++) {
    Value *row[8];
    for (int i = 0; i < n; i++) row[i] = lists[i].items[k];
    vl_push(ev, &out->u.seq, ev_tuple(ev, row, n));
  }
  return out;
}

/* itertools.product(*iterables): the cartesian product as a list of tuples (autotune
 * config spaces); the size is bounded by the evaluation step limit through ev_memory_ok. */
static Value *py_product(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  SrcLoc loc = cloc(a);
  if (a->nkw) {
    ts_error(ev->c, loc, "itertools.product() keyword arguments are not supported");
    return NULL;
  }
  Value *out = ev_new(ev, V_LIST);
  vl_push(ev, &out->u.seq, ev_new(ev, V_TUPLE));
  for (int i = 0; i < a->npos; i++) {
    ValList items = {0};
    if (!ev_iter_items(ev, a->pos[i], &items, loc)) return NULL;
    Value *next = ev_new(ev, V_LIST);
    for (int p = 0; p < out->u.seq.n; p++)
      for (int k = 0; k < items.n; k++) {
        if (!ev_memory_ok(ev, 64, loc)) return NULL;
        Value *t = ev_tuple(ev, out->u.seq.items[p]->u.seq.items, out->u.seq.items[p]->u.seq.n);
        vl_push(ev, &t->u.seq, items.items[k]);
        vl_push(ev, &next->u.seq, t);
      }
    out = next;
  }
  return out;
}

static Value *py_exception(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  const char *name = a->node && a->node->func && a->node->func->id ? a->node->func->id : "Exception";
  const char *msg = a->npos && a->pos[0]->kind == V_STR ? a->pos[0]->u.str.s : a->npos ? ev_repr(ev, a->pos[0]) : "";
  return ev_str(ev, arena_printf(ev->a, "%s: %s", name, msg));
}

static const struct {
  const char *name;
  BiFn fn;
  int arg;
} py_builtins[] = {
    {"min", py_minmax, IR_MIN}, {"max", py_minmax, IR_MAX}, {"abs", py_abs, 0}, {"int", py_int, 0},
    {"float", py_float, 0}, {"bool", py_bool, 0}, {"str", py_str, 0}, {"len", py_len, 0},
    {"range", bi_range, IR_FOR_SERIAL}, {"isinstance", py_isinstance, 0}, {"tuple", py_seq, V_TUPLE},
    {"list", py_seq, V_LIST}, {"dict", py_dict, 0}, {"print", py_print, 0}, {"round", py_round, 0},
    {"sum", py_sum, 0}, {"enumerate", py_enumerate, 0}, {"zip", py_zip, 0},
    {"ValueError", py_exception, 0}, {"TypeError", py_exception, 0}, {"RuntimeError", py_exception, 0},
    {"NotImplementedError", py_exception, 0}, {"AssertionError", py_exception, 0}, {"Exception", py_exception, 0},
    {"KeyError", py_exception, 0}, {"IndexError", py_exception, 0},
};

static bool isinstance1(const Value *x, const Value *ty) {
  if (ty->kind != V_BUILTIN) return false;
  BiFn f = ty->u.bi.fn;
  if (f == py_int) return x->kind == V_INT || x->kind == V_BOOL;
  if (f == py_float) return x->kind == V_FLOAT;
  if (f == py_bool) return x->kind == V_BOOL;
  if (f == py_str) return x->kind == V_STR;
  if (f == py_seq) return x->kind == (ValKind)ty->u.bi.arg;
  if (f == py_dict) return x->kind == V_DICT;
  return false;
}

static Value *py_isinstance(Eval *ev, CallArgs *a, Value *self, int unused) {
  (void)self;
  (void)unused;
  BIND("isinstance", 2, "obj", "classinfo");
  Value *ty = arg[1];
  if (ty->kind == V_TUPLE) {
    for (int i = 0; i < ty->u.seq.n; i++)
      if (isinstance1(arg[0], ty->u.seq.items[i])) return ev_bool(ev, true);
    return ev_bool(ev, false);
  }
  if (ty->kind == V_OPAQUE) return ev_bool(ev, false); /* isinstance(x, torch.Tensor) */
  return ev_bool(ev, isinstance1(arg[0], ty));
}

void bi_install_builtins(Eval *ev, Env *env) {
  for (int i = 0; i < TS_ARRAY_LEN(py_builtins); i++)
    strmap_put(ev->a, &env->vars, py_builtins[i].name,
               mk_builtin(ev, py_builtins[i].fn, py_builtins[i].name, py_builtins[i].arg, NULL));
  strmap_put(ev->a, &env->vars, "__name__", ev_str(ev, "__tilescale__"));
}

/* ---- methods -------------------------------------------------------------------------------------- */
static Value *m_str(Eval *ev, CallArgs *a, Value *self, int which) {
  SrcLoc loc = cloc(a);
  const char *s = self->u.str.s;
  enum { STARTS, ENDS, SPLIT, JOIN, REPLACE, STRIP, LOWER, UPPER, ISDIGIT, FORMAT };
  Value *x = a->npos > 0 ? a->pos[0] : NULL;
  switch (which) {
  case STARTS:
  case ENDS: {
    if (!x || x->kind != V_STR) break;
    size_t n = strlen(s), m = x->u.str.n;
    bool r = m <= n && !memcmp(which == STARTS ? s : s + n - m, x->u.str.s, m);
    return ev_bool(ev, r);
  }
  case SPLIT: {
    Value *out = ev_new(ev, V_LIST);
    const char *sep = x && x->kind == V_STR ? x->u.str.s : NULL;
    const char *p = s;
    if (!sep) {
      while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        const char *b = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
        if (p > b) vl_push(ev, &out->u.seq, ev_str(ev, arena_strndup(ev->a, b, (size_t)(p - b))));
      }
      return out;
    }
    size_t sl = strlen(sep);
    if (!sl) break;
    for (;;) {
      const char *q = strstr(p, sep);
      if (!q) {
        vl_push(ev, &out->u.seq, ev_str(ev, p));
        return out;
      }
      vl_push(ev, &out->u.seq, ev_str(ev, arena_strndup(ev->a, p, (size_t)(q - p))));
      p = q + sl;
    }
  }
  case JOIN: {
    ValList items = {0};
    if (!x || !ev_iter_items(ev, x, &items, loc)) return NULL;
    StrBuf sb = {0};
    for (int i = 0; i < items.n; i++) {
      if (items.items[i]->kind != V_STR) {
        sb_free(&sb);
        ts_error(ev->c, loc, "join(): sequence item %d is not a str", i);
        return NULL;
      }
      if (i) sb_append(&sb, s);
      sb_append(&sb, items.items[i]->u.str.s);
    }
    Value *r = ev_str(ev, arena_strdup(ev->a, sb_str(&sb)));
    sb_free(&sb);
    return r;
  }
  case REPLACE: {
    if (a->npos != 2 || x->kind != V_STR || a->pos[1]->kind != V_STR || !x->u.str.n) break;
    StrBuf sb = {0};
    const char *p = s;
    for (const char *q; (q = strstr(p, x->u.str.s)); p = q + x->u.str.n) {
      sb_appendn(&sb, p, (size_t)(q - p));
      sb_append(&sb, a->pos[1]->u.str.s);
    }
    sb_append(&sb, p);
    Value *r = ev_str(ev, arena_strdup(ev->a, sb_str(&sb)));
    sb_free(&sb);
    return r;
  }
  case STRIP: {
    while (*s == ' ' || *s == '\t' || *s == '\n') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n')) n--;
    return ev_str(ev, arena_strndup(ev->a, s, n));
  }
  case LOWER:
  case UPPER: {
    char *r = arena_strdup(ev->a, s);
    for (char *p = r; *p; p++)
      if (which == LOWER && *p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
      else if (which == UPPER && *p >= 'a' && *p <= 'z') *p = (char)(*p - 32);
    return ev_str(ev, r);
  }
  case ISDIGIT: {
    bool r = *s != 0;
    for (const char *p = s; *p; p++) r &= *p >= '0' && *p <= '9';
    return ev_bool(ev, r);
  }
  default: break;
  }
  ts_error(ev->c, loc, "unsupported arguments to a str method");
  return NULL;
}

static Value *m_list(Eval *ev, CallArgs *a, Value *self, int which) {
  SrcLoc loc = cloc(a);
  if (which == 0) { /* append */
    if (a->npos != 1) { ts_error(ev->c, loc, "append() takes exactly one argument"); return NULL; }
    vl_push(ev, &self->u.seq, a->pos[0]);
    return ev->none;
  }
  ValList items = {0}; /* extend */
  if (a->npos != 1 || !ev_iter_items(ev, a->pos[0], &items, loc)) return NULL;
  for (int i = 0; i < items.n; i++) vl_push(ev, &self->u.seq, items.items[i]);
  return ev->none;
}

static Value *m_dict(Eval *ev, CallArgs *a, Value *self, int which) {
  enum { GET, ITEMS, KEYS, VALUES };
  Value *out;
  switch (which) {
  case GET: {
    if (a->npos < 1 || a->npos > 2) { ts_error(ev->c, cloc(a), "get() takes 1 or 2 arguments"); return NULL; }
    for (int i = 0; i < self->u.dict.keys.n; i++) {
      Value *k = self->u.dict.keys.items[i];
      Value *eq = ev_binop(ev, AOP_EQ, k, a->pos[0], cloc(a));
      if (eq && eq->kind == V_BOOL && eq->u.b) return self->u.dict.vals.items[i];
    }
    return a->npos == 2 ? a->pos[1] : ev->none;
  }
  case ITEMS:
    out = ev_new(ev, V_LIST);
    for (int i = 0; i < self->u.dict.keys.n; i++) {
      Value *pair[2] = {self->u.dict.keys.items[i], self->u.dict.vals.items[i]};
      vl_push(ev, &out->u.seq, ev_tuple(ev, pair, 2));
    }
    return out;
  case KEYS:
  case VALUES:
    out = ev_new(ev, V_LIST);
    for (int i = 0; i < self->u.dict.keys.n; i++)
      vl_push(ev, &out->u.seq, which == KEYS ? self->u.dict.keys.items[i] : self->u.dict.vals.items[i]);
    return out;
  default: return NULL;
  }
}

/* int.bit_length() */
static Value *m_int_bit_length(Eval *ev, CallArgs *a, Value *self, int arg) {
  (void)arg;
  if (a->npos || a->nkw) {
    ts_error(ev->c, cloc(a), "int.bit_length() takes no arguments");
    return NULL;
  }
  uint64_t n = self->u.i < 0 ? -(uint64_t)self->u.i : (uint64_t)self->u.i;
  int bits = 0;
  for (; n; n >>= 1) bits++;
  return ev_int(ev, bits);
}

Value *bi_method(Eval *ev, Value *self, const char *name, SrcLoc loc) {
  static const char *const str_methods[] = {"startswith", "endswith", "split", "join", "replace", "strip", "lower",
                                            "upper", "isdigit"};
  static const char *const dict_methods[] = {"get", "items", "keys", "values"};
  switch (self->kind) {
  case V_EXPR:
    if (!strcmp(name, "astype")) return mk_builtin(ev, m_astype, "astype", 0, self);
    break;
  case V_DTYPE: /* a dtype is also its name (TileLang's dtypes are str subclasses) */
    return bi_method(ev, ev_str(ev, dtype_name(self->u.dtype)), name, loc);
  case V_STR:
    for (int i = 0; i < TS_ARRAY_LEN(str_methods); i++)
      if (!strcmp(name, str_methods[i])) return mk_builtin(ev, m_str, str_methods[i], i, self);
    break;
  case V_INT:
    if (!strcmp(name, "bit_length")) return mk_builtin(ev, m_int_bit_length, "bit_length", 0, self);
    break;
  case V_LIST:
    if (!strcmp(name, "append")) return mk_builtin(ev, m_list, "append", 0, self);
    if (!strcmp(name, "extend")) return mk_builtin(ev, m_list, "extend", 1, self);
    break;
  case V_DICT:
    for (int i = 0; i < TS_ARRAY_LEN(dict_methods); i++)
      if (!strcmp(name, dict_methods[i])) return mk_builtin(ev, m_dict, dict_methods[i], i, self);
    break;
  default: break;
  }
  return NULL;
}

/* ---- math module ---------------------------------------------------------------------------------- */
static Value *math_fn(Eval *ev, CallArgs *a, Value *self, int which) {
  (void)self;
  static const char *const names[] = {"sqrt", "log", "log2", "exp", "ceil", "floor", "pow", "log10", "exp2"};
  SrcLoc loc = cloc(a);
  int want = which == 6 ? 2 : 1;
  if (a->npos != want || a->nkw) {
    ts_error(ev->c, loc, "math.%s() takes %d argument%s", names[which], want, want == 1 ? "" : "s");
    return NULL;
  }
  for (int i = 0; i < want; i++)
    if (!ev_is_num(a->pos[i])) {
      ts_error(ev->c, loc, "math.%s() expects Python numbers, got %s", names[which], ev_type_name(a->pos[i]));
      return NULL;
    }
  double x = a->pos[0]->kind == V_FLOAT ? a->pos[0]->u.f : (double)(a->pos[0]->kind == V_INT ? a->pos[0]->u.i : a->pos[0]->u.b);
  switch (which) {
  case 0: return ev_float(ev, sqrt(x));
  case 1: return ev_float(ev, log(x));
  case 2: return ev_float(ev, log2(x));
  case 3: return ev_float(ev, exp(x));
  case 4: return ev_int(ev, ev_f2i(ceil(x)));
  case 5: return ev_int(ev, ev_f2i(floor(x)));
  case 6: {
    double y = a->pos[1]->kind == V_FLOAT ? a->pos[1]->u.f : (double)(a->pos[1]->kind == V_INT ? a->pos[1]->u.i : a->pos[1]->u.b);
    return ev_float(ev, pow(x, y));
  }
  case 7: return ev_float(ev, log10(x));
  default: return ev_float(ev, exp2(x));
  }
}

/* ---- namespaces ------------------------------------------------------------------------------------ */
typedef struct BiEntry {
  const char *name;
  BiFn fn;
  int arg;
} BiEntry;

/* T.dtype(x): the dtype x names (a dtype, or its name; a name that is no dtype stays a string,
 * as TileLang's dtype class keeps names such as "int" of a packed source format). */
static Value *t_dtype_of(Eval *ev, CallArgs *a, Value *self, int arg) {
  (void)self, (void)arg;
  if (a->npos != 1 || a->nkw) {
    ts_error(ev->c, cloc(a), "T.dtype() takes one argument");
    return NULL;
  }
  Value *v = a->pos[0];
  ts_dtype t;
  if (v->kind == V_STR && !dtype_parse(v->u.str.s, &t)) return v;
  return ev_to_dtype(ev, v, &t, cloc(a)) ? bi_dtype(ev, t) : NULL;
}

static const BiEntry t_entries[] = {
    {"Kernel", t_kernel, 0}, {"dtype", t_dtype_of, 0}, {"Tensor", t_tensor, 0}, {"Buffer", t_tensor, 1},
    {"alloc_shared", t_alloc, IR_SCOPE_SHARED_DYN}, {"alloc_fragment", t_alloc, IR_SCOPE_FRAGMENT},
    {"alloc_local", t_alloc, IR_SCOPE_LOCAL}, {"alloc_var", t_alloc_var, 0},
    {"Parallel", t_parallel, 0}, {"serial", bi_range, IR_FOR_SERIAL}, {"Serial", bi_range, IR_FOR_SERIAL},
    {"unroll", bi_range, IR_FOR_UNROLLED}, {"vectorized", bi_range, IR_FOR_VECTORIZED},
    {"Pipelined", t_pipelined, 0},
    {"copy", t_copy, 0}, {"fill", t_fill, 0}, {"clear", t_clear, 0},
    {"reduce_sum", t_reduce, IR_RED_SUM}, {"reduce_max", t_reduce, IR_RED_MAX}, {"reduce_min", t_reduce, IR_RED_MIN},
    {"reduce_absmax", t_reduce, IR_RED_ABSMAX}, {"reduce_abssum", t_reduce, IR_RED_ABSSUM},
    {"atomic_add", t_atomic, IR_ATOMIC_ADD}, {"atomic_max", t_atomic, IR_ATOMIC_MAX},
    {"atomic_min", t_atomic, IR_ATOMIC_MIN}, {"gemm", t_gemm, 0},
    {"max", t_minmax, IR_MAX}, {"min", t_minmax, IR_MIN}, {"clamp", t_clamp, 0},
    {"if_then_else", t_if_then_else, 0}, {"cast", t_cast, 0}, {"Cast", t_cast, 1}, {"reinterpret", t_reinterpret, 0},
    {"infinity", t_infinity, 0}, {"max_value", t_infinity, 1}, {"min_value", t_infinity, 2},
    {"ceildiv", t_ceildiv, 0}, {"floordiv", t_intop, IR_FLOORDIV}, {"floormod", t_intop, IR_FLOORMOD},
    {"truncdiv", t_intop, IR_TRUNCDIV}, {"truncmod", t_intop, IR_TRUNCMOD},
    {"prim_func", bi_identity_decorator, 0}, {"macro", bi_identity_decorator, 0},
    {"dynamic", t_dynamic, 0}, {"symbolic", t_dynamic, 0}, {"const", t_const, 0}, {"empty", t_empty, 0},
    {"get_thread_binding", t_thread_binding, 0}, {"sync_threads", t_sync_threads, 0},
};

static bool t_dtype_name(const char *name, ts_dtype *t) {
  static const struct { const char *n; ts_dtype t; } names[] = {
      {"float16", TS_DTYPE_FLOAT16}, {"half", TS_DTYPE_FLOAT16}, {"bfloat16", TS_DTYPE_BFLOAT16},
      {"float32", TS_DTYPE_FLOAT32}, {"float", TS_DTYPE_FLOAT32}, {"float64", TS_DTYPE_FLOAT64},
      {"double", TS_DTYPE_FLOAT64}, {"int8", TS_DTYPE_INT8}, {"int16", TS_DTYPE_INT16}, {"int32", TS_DTYPE_INT32},
      {"int", TS_DTYPE_INT32}, {"int64", TS_DTYPE_INT64}, {"uint8", TS_DTYPE_UINT8}, {"uint16", TS_DTYPE_UINT16},
      {"uint32", TS_DTYPE_UINT32}, {"uint", TS_DTYPE_UINT32}, {"uint64", TS_DTYPE_UINT64}, {"bool", TS_DTYPE_BOOL},
      {"float8_e4m3", TS_DTYPE_FLOAT8_E4M3}, {"float8_e4m3fn", TS_DTYPE_FLOAT8_E4M3},
      {"float8_e5m2", TS_DTYPE_FLOAT8_E5M2},
  };
  for (int i = 0; i < TS_ARRAY_LEN(names); i++)
    if (!strcmp(names[i].n, name)) {
      *t = names[i].t;
      return true;
    }
  return false;
}

Value *bi_module_attr_quiet(Eval *ev, ModKind mod, const char *name) {
  switch (mod) {
  case MOD_T: {
    ts_dtype t;
    if (t_dtype_name(name, &t)) return bi_dtype(ev, t);
    for (int i = 0; i < TS_ARRAY_LEN(t_entries); i++)
      if (!strcmp(t_entries[i].name, name)) return mk_builtin(ev, t_entries[i].fn, arena_printf(ev->a, "T.%s", name), t_entries[i].arg, NULL);
    for (int i = 0; i < IRI_SYNCTHREADS; i++) /* math intrinsics: the pure rows of the table */
      if (!strcmp(ir_intrin_info[i].name, name)) return mk_builtin(ev, t_math, arena_printf(ev->a, "T.%s", name), i, NULL);
    if (!strcmp(name, "GemmWarpPolicy")) return bi_module(ev, MOD_WARPPOLICY);
    if (!strcmp(name, "float4_e2m1fn") || !strcmp(name, "tfloat32") || !strcmp(name, "float8_e8m0fnu") ||
        !strcmp(name, "int4") || !strcmp(name, "uint4"))
      return ev_opaque(ev, arena_printf(ev->a, "dtype T.%s is not supported yet", name));
    if (!strcmp(name, "Team")) return bi_module(ev, MOD_TEAM);
    if (!strcmp(name, "CmpType")) return bi_module(ev, MOD_CMPTYPE);
    if (!strcmp(name, "Amo")) return bi_module(ev, MOD_AMO);
    return tl_construct_attr(ev, name); /* the rest of §1.2 and the distributed names */
  }
  case MOD_TILELANG:
    if (!strcmp(name, "language")) return bi_module(ev, MOD_T);
    if (!strcmp(name, "jit") || !strcmp(name, "autotune") || !strcmp(name, "lazy_jit"))
      return mk_builtin(ev, bi_identity_decorator, arena_printf(ev->a, "tilelang.%s", name), 0, NULL);
    if (!strcmp(name, "PassConfigKey")) return bi_module(ev, MOD_PASSCONFIG);
    if (!strcmp(name, "autotuner")) return bi_module(ev, MOD_AUTOTUNER);
    if (!strcmp(name, "layout")) return bi_module(ev, MOD_LAYOUT);
    return ev_opaque(ev, arena_printf(ev->a, "tilelang.%s is not available in kernels", name));
  case MOD_AUTOTUNER:
    if (!strcmp(name, "autotune")) return mk_builtin(ev, bi_identity_decorator, "autotune", 0, NULL);
    return ev_opaque(ev, arena_printf(ev->a, "tilelang.autotuner.%s is not available in kernels", name));
  case MOD_LAYOUT: {
    Value *l = tl_layout_attr(ev, name); /* the make_*_layout helpers (eval_tl.c) */
    if (l) return l;
    return mk_builtin(ev, t_unsupported, arena_printf(ev->a, "tilelang.layout.%s", name), 0, NULL);
  }
  case MOD_PASSCONFIG: {
    /* TL_ENABLE_FAST_MATH -> "tl.enable_fast_math" */
    const char *s = !strncmp(name, "TL_", 3) ? name + 3 : !strncmp(name, "TIR_", 4) ? name + 4 : name;
    char *k = arena_printf(ev->a, "%s.%s", !strncmp(name, "TIR_", 4) ? "tir" : "tl", s);
    for (char *p = k; *p; p++)
      if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
    return ev_str(ev, k);
  }
  case MOD_WARPPOLICY:
    if (!strcmp(name, "Square")) return ev_int(ev, 0);
    if (!strcmp(name, "FullRow")) return ev_int(ev, 1);
    if (!strcmp(name, "FullCol")) return ev_int(ev, 2);
    return NULL;
  case MOD_ITERTOOLS:
    if (!strcmp(name, "product")) return mk_builtin(ev, py_product, "itertools.product", 0, NULL);
    return NULL;
  case MOD_TEAM:
  case MOD_CMPTYPE:
  case MOD_AMO: return tl_enum_attr(ev, mod, name);
  case MOD_PY: return NULL; /* a module read from a file: eval_module.c */
  case MOD_TILESCALE: return ev_tilescale_attr(ev, name);
  case MOD_MATH: {
    static const char *const names[] = {"sqrt", "log", "log2", "exp", "ceil", "floor", "pow", "log10", "exp2"};
    for (int i = 0; i < TS_ARRAY_LEN(names); i++)
      if (!strcmp(names[i], name)) return mk_builtin(ev, math_fn, arena_printf(ev->a, "math.%s", name), i, NULL);
    if (!strcmp(name, "pi")) return ev_float(ev, M_PI);
    if (!strcmp(name, "e")) return ev_float(ev, M_E);
    if (!strcmp(name, "inf")) return ev_float(ev, INFINITY);
    return NULL;
  }
  }
  return NULL;
}

Value *bi_module_attr(Eval *ev, ModKind mod, const char *name, SrcLoc loc) {
  Value *v = bi_module_attr_quiet(ev, mod, name);
  if (v) return v;
  static const char *const mod_names[] = {"tilelang", "T", "math", "tilelang.PassConfigKey", "T.GemmWarpPolicy",
                                          "tilelang.autotuner", "tilelang.layout", "T.Team", "T.CmpType", "T.Amo",
                                          "itertools", "module", "_tilescale"};
  ts_error(ev->c, loc, "module '%s' has no attribute '%s'", mod_names[mod], name);
  return NULL;
}
