/* builtin.c — calling a builtin: its signature parsed, the call's arguments bound to it, the
 * handler run; and the small helpers the handlers of every topic share (builtin.h).
 *
 *   eval_expr.c (a call of a V_BUILTIN)  ->  builtin_call  ->  row->fn (builtins_*.c)
 *
 * A signature is the row's Python parameter list, "src, dst, size, dst_pe=-1": names with
 * '=' are optional (so is every name after one), `*args` takes extra positional arguments and
 * makes the names after it keyword-only, `**kwargs` takes other keywords.  Binding follows
 * Python's rules and words its errors as Python does; rows without BI_TERSE add the signature
 * to them ("...; signature: T.put_block(src, dst, size, dst_pe=-1)").  An argument that is
 * already an error (poison) makes the call fail silently: one mistake, one diagnostic. */
#include <stdio.h>
#include <string.h>

#include "builtin.h"

/* ---- signatures ------------------------------------------------------------------------------ */
enum { MAX_PARAMS = 16 };

typedef struct Signature {
  const char *name[MAX_PARAMS]; /* not terminated: name[i][0 .. len[i]) */
  int len[MAX_PARAMS];
  int n, nreq;
  int npos; /* parameters positional arguments may fill (those before *args) */
  bool varargs, varkw;
} Signature;

/* Parses a row's signature into p (no allocation: names point into the row's text). */
static void parse_signature(const char *s, Signature *p) {
  memset(p, 0, sizeof *p);
  bool optional = false;
  while (s && *s) {
    while (*s == ' ' || *s == ',') s++;
    if (!*s) break;
    const char *b = s;
    while (*s && *s != ',') s++;
    const char *e = s;
    while (e > b && e[-1] == ' ') e--;
    if (e - b >= 2 && b[0] == '*' && b[1] == '*') {
      p->varkw = true;
      continue;
    }
    if (b[0] == '*') {
      p->varargs = true;
      optional = true;
      p->npos = p->n;
      continue;
    }
    const char *eq = memchr(b, '=', (size_t)(e - b));
    if (eq) optional = true;
    if (p->n == MAX_PARAMS) { /* a row's signature is longer than the binder's arrays */
      TS_ASSERT(!"too many parameters");
      break;
    }
    p->name[p->n] = b;
    p->len[p->n++] = (int)((eq ? eq : e) - b);
    if (!optional) p->nreq = p->n;
  }
  if (!p->varargs) p->npos = p->n;
}

/* "; signature: T.put_block(src, dst, size, dst_pe=-1)": added to the errors a look at the
 * signature answers (not for BI_TERSE rows). */
static const char *sig_suffix(Eval *ev, const Builtin *row, const char *fname) {
  return row->flags & BI_TERSE ? "" : arena_printf(ev->a, "; signature: %s(%s)", fname, row->params);
}

static bool param_is(const Signature *p, int i, const char *name) {
  return (int)strlen(name) == p->len[i] && !memcmp(p->name[i], name, (size_t)p->len[i]);
}

/* Binds a call to row's signature (fname: the name the errors give).  arg[i] is NULL for an
 * optional parameter not given.  False after an error, or when an argument is poison. */
static bool bind(Eval *ev, CallArgs *a, const Builtin *row, const char *fname, const Signature *p,
                 Value **arg) {
  SrcLoc loc = call_loc(a);
  for (int i = 0; i < p->n; i++) arg[i] = NULL;
  if (a->npos > p->npos && !p->varargs) {
    if (p->n == 0)
      ts_error(ev->c, loc, "%s() takes no arguments (%d given)", fname, a->npos);
    else
      ts_error(ev->c, loc, "%s() takes at most %d argument%s (%d given)%s", fname, p->n, p->n == 1 ? "" : "s",
               a->npos, sig_suffix(ev, row, fname));
    return false;
  }
  for (int i = 0; i < a->npos && i < p->npos; i++) arg[i] = a->pos[i];
  for (int k = 0; k < a->nkw; k++) {
    int j = -1;
    for (int i = 0; i < p->n; i++)
      if (param_is(p, i, a->kw[k])) j = i;
    if (j < 0) {
      if (p->varkw) continue;
      ts_error(ev->c, loc, "%s() got an unexpected keyword argument '%s'%s", fname, a->kw[k],
               sig_suffix(ev, row, fname));
      return false;
    }
    if (arg[j]) {
      ts_error(ev->c, loc, "%s() got multiple values for argument '%s'", fname, a->kw[k]);
      return false;
    }
    arg[j] = a->kwv[k];
  }
  for (int i = 0; i < p->nreq; i++)
    if (!arg[i]) {
      ts_error(ev->c, loc, "%s() missing required argument '%.*s'%s", fname, p->len[i], p->name[i],
               sig_suffix(ev, row, fname));
      return false;
    }
  for (int i = 0; i < a->npos; i++)
    if (!a->pos[i] || a->pos[i]->kind == V_POISON) return false;
  for (int i = 0; i < a->nkw; i++)
    if (!a->kwv[i] || a->kwv[i]->kind == V_POISON) return false;
  return true;
}

/* ---- values and calls ------------------------------------------------------------------------- */
Value *builtin_value(Eval *ev, const Builtin *row, const char *name, Value *self) {
  Value *v = ev_new(ev, V_BUILTIN);
  v->u.bi.row = row;
  v->u.bi.name = name;
  v->u.bi.self = self;
  return v;
}

const Builtin *builtin_find(const Builtin *rows, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(rows[i].name, name)) return &rows[i];
  return NULL;
}

/* Binds, then runs the handler (NULL when binding failed or an argument is poison). */
Value *builtin_call_row(Eval *ev, const Builtin *row, const char *name, CallArgs *a) {
  Signature p;
  parse_signature(row->params, &p);
  Value *arg[MAX_PARAMS];
  if (!bind(ev, a, row, name, &p, arg)) return NULL;
  return row->fn(ev, a, arg, row);
}

Value *builtin_call(Eval *ev, Value *fn, CallArgs *a) {
  CallArgs c = *a;
  c.self = fn->u.bi.self;
  return builtin_call_row(ev, fn->u.bi.row, fn->u.bi.name, &c);
}

/* ---- helpers ---------------------------------------------------------------------------------- */
/* The expression the user wrote for argument i (positional) or `name` (keyword), to put a
 * caret under it; NULL when it cannot be told (a starred argument shifts positions). */
const AstNode *bi_arg_node(const CallArgs *a, int i, const char *name) {
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
SrcLoc bi_dim_loc(const AstNode *shape, int d, int ndim, SrcLoc dflt) {
  if (shape && (shape->kind == AST_TUPLE || shape->kind == AST_LIST) && shape->items.n == ndim)
    return shape->items.items[d]->loc;
  if (shape && ndim == 1) return shape->loc;
  return dflt;
}

/* Sizes known at compile time must be at least `min` (1 for tiles, grids and loop nests;
 * 0 for tensors, which may be empty): a negative or zero one is the user's mistake, said
 * at the user's line, not an internal error of a later pass. */
bool bi_check_size(Eval *ev, IrExpr *e, int64_t min, SrcLoc loc, const char *what, int d) {
  int64_t v;
  if (!e || !ir_is_const_int(e, &v) || v >= min) return true;
  if (ev->bad_tensor_dim) return false; /* a consequence of the tensor's (one mistake, one diagnostic) */
  ts_error(ev->c, loc, "%s %d is %lld; it must be %s", what, d, (long long)v,
           min > 0 ? "at least 1" : "0 or more");
  return false;
}

/* An optional argument that must be a Python bool (IR is refused: the choice is made now). */
bool bi_opt_bool(Eval *ev, Value *v, bool dflt, SrcLoc loc) {
  if (!v) return dflt;
  int t = ev_truth(ev, v, loc);
  if (t == -1) {
    ts_error(ev->c, loc, "expected a Python bool, got an IR expression");
    return dflt;
  }
  return t == 1;
}

/* An optional constant integer (None: the default). */
bool bi_opt_int(Eval *ev, Value *v, int64_t dflt, int64_t *out, SrcLoc loc) {
  if (!v || v->kind == V_NONE) {
    *out = dflt;
    return true;
  }
  return ev_to_int(ev, v, out, loc);
}

/* A shape argument: int, IR expression, or tuple/list of them -> IR extents. */
int bi_shape_arg(Eval *ev, Value *v, IrExpr ***out, SrcLoc loc) {
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

/* Python numbers become IR constants of dtype t (T.float32(1.0), T.cast(0, dtype)). */
static IrExpr *typed_const(Eval *ev, Value *v, ts_dtype t, SrcLoc loc) {
  if (v->kind == V_FLOAT)
    return dtype_is_float(t) ? ir_float(ev->c, v->u.f, t, loc) : ir_int(ev->c, ev_f2i(v->u.f), t, loc);
  int64_t i = v->kind == V_INT ? v->u.i : v->u.b;
  return dtype_is_float(t) ? ir_float(ev->c, (double)i, t, loc) : ir_int(ev->c, i, t, loc);
}

IrExpr *bi_to_dtype(Eval *ev, Value *v, ts_dtype t, SrcLoc loc) {
  if (ev_is_num(v)) return typed_const(ev, v, t, loc);
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  return e ? ir_cast(ev->c, t, e, loc) : NULL;
}

const char *bi_take_name(Eval *ev, const char *dflt) {
  const char *n = ev->pending_name ? ev->pending_name : dflt;
  ev->pending_name = NULL;
  return n;
}

IrBuffer *bi_declare_buffer(Eval *ev, IrBuffer *b, SrcLoc loc) {
  IrStmt *s = ir_stmt(ev->c, IR_S_ALLOC, loc);
  s->u.alloc.buf = b;
  ev_emit(ev, s);
  ev_define_buffer(ev, b);
  return b;
}

Value *bi_buffer_value(Eval *ev, IrBuffer *b) {
  Value *v = ev_new(ev, V_BUFFER);
  v->u.buf = b;
  return v;
}

Value *bi_declare_var(Eval *ev, ts_dtype t, IrExpr *init, SrcLoc loc) {
  IrExpr *one = ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
  IrBuffer *b = ir_buffer(ev->c, bi_take_name(ev, "var"), t, IR_SCOPE_VAR, 1, &one, loc);
  b->init = init;
  return bi_buffer_value(ev, bi_declare_buffer(ev, b, loc));
}

IrExpr *bi_barrier_addr(Eval *ev, Value *v, const char *fname, SrcLoc loc) {
  IrExpr *ld = NULL;
  if (v && v->kind == V_BUFFER && v->u.buf->scope == IR_SCOPE_BARRIER) {
    IrExpr *zero = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
    ld = ir_load(ev->c, v->u.buf, &zero, 1, loc);
  } else if (v && v->kind == V_EXPR && v->u.expr->kind == IR_LOAD && v->u.expr->u.load.buf->scope == IR_SCOPE_BARRIER) {
    ld = v->u.expr;
    int64_t i, n;
    if (ir_is_const_int(ld->u.load.idx[0], &i) && ir_is_const_int(ld->u.load.buf->shape[0], &n) && (i < 0 || i >= n)) {
      ts_error(ev->c, loc, "%s: barrier index %lld is out of range for '%s', which holds %lld barriers", fname,
               (long long)i, ld->u.load.buf->name, (long long)n);
      return NULL;
    }
  } else {
    if (!v || v->kind != V_POISON)
      ts_error(ev->c, loc, "%s: the barrier must be a T.alloc_barrier buffer or one of its elements (got %s)", fname,
               v && v->kind == V_BUFFER ? ir_scope_names[v->u.buf->scope] : v ? ev_type_name(v) : "nothing");
    return NULL;
  }
  return ir_call(ev->c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, &ld, 1, loc);
}

bool bi_need_kernel(Eval *ev, CallArgs *a, const Builtin *bi) {
  return ev_need_kernel(ev, arena_printf(ev->a, "T.%s", bi->name), call_loc(a));
}

/* ---- handlers several tables use ---------------------------------------------------------------- */
/* A construct known but not lowered: an UNSUPPORTED statement (reported by the pipeline, so
 * the rest of the kernel is still checked) and an opaque result whose use is the error. */
Value *bi_unsupported_stmt(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  const char *what = a->node && a->node->func ? a->node->func->id : "construct";
  const char *msg = arena_printf(ev->a, "T.%s is not supported yet", what);
  if (ev->block) {
    IrStmt *s = ir_stmt(ev->c, IR_S_UNSUPPORTED, call_loc(a));
    s->u.unsupported.what = arena_printf(ev->a, "T.%s", what);
    ev_emit(ev, s);
  }
  return ev_opaque(ev, msg);
}

/* Recognised, arguments checked, no lowering yet: one diagnostic at the call. */
Value *bi_unsupported(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  ts_error(ev->c, call_loc(a), "T.%s is not supported yet", bi->name);
  return ev->poison;
}

/* Kernel-only constructs with no lowering: checked for context, then reported. */
Value *bi_kernel_unsupported(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  return bi_unsupported(ev, a, arg, bi);
}

/* Performance hints: the program computes the same results without them. */
Value *bi_hint(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)arg, (void)bi;
  return ev->none;
}

Value *bi_value_namespace(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)arg;
  return ev_namespace(ev, (ModKind)bi->arg);
}

Value *bi_value_int(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)arg;
  return ev_int(ev, bi->arg);
}

IrExpr **bi_region_flat_index(Eval *ev, const IrBuffer *b, IrExpr *const *min, IrExpr *const *extent, IrExpr *flat,
                               SrcLoc loc) {
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, b->ndim ? b->ndim : 1);
  for (int d = b->ndim - 1; d >= 0; d--) {
    IrExpr *ext = extent ? extent[d] : b->shape[d];
    IrExpr *i = d ? ir_binary(ev->c, IR_FLOORMOD, flat, ext, loc) : flat;
    if (d) flat = ir_binary(ev->c, IR_FLOORDIV, flat, ext, loc);
    idx[d] = min ? ir_binary(ev->c, IR_ADD, min[d], i, loc) : i;
  }
  return idx;
}

IrExpr **bi_flat_index(Eval *ev, const IrBuffer *b, IrExpr *flat, SrcLoc loc) {
  return bi_region_flat_index(ev, b, NULL, NULL, flat, loc);
}

IrExpr *bi_let_once(Eval *ev, const char *name, IrExpr *value, SrcLoc loc) {
  IrVar *v = ir_var(ev->c, name, value->dtype, IR_VAR_LET, loc);
  ev_define_var(ev, v);
  ev_emit(ev, ir_let(ev->c, v, value, loc));
  return ir_varref(ev->c, v, loc);
}
