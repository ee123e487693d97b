/* eval_expr.c — expressions, assignment targets and calls of the staging interpreter.
 *
 *   eval_stmt.c (statements)  ->  ev_eval / ev_assign  ->  value.h operations, builtins
 *
 * An expression evaluates to a Value (value.h): a Python value folded now, or IR.  Names are
 * looked up through the environments (a module's lazy top-level names run on first use,
 * eval_module.c); attributes of modules go to eval_module.c, methods and namespaces to the
 * builtin registry; subscripts of buffers become loads or regions.  A call of a def binds
 * its parameters like Python and runs its body as statements; a call of a builtin goes to
 * its registry row.  NULL means an error was reported. */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "registry.h"

static Value *eval_raw(Eval *ev, Env *env, const AstNode *n);

/* ---- calls ---------------------------------------------------------------------------- */
static const char *param_list(Eval *ev, const AstParams *ps) {
  StrBuf sb = {0};
  for (int i = 0; i < ps->n; i++) {
    if (i) sb_append(&sb, ", ");
    if (ps->items[i].kind == APARAM_VARARGS) sb_putc(&sb, '*');
    if (ps->items[i].kind == APARAM_VARKW) sb_append(&sb, "**");
    sb_append(&sb, ps->items[i].name);
  }
  if (!ps->n) sb_append(&sb, "(none)");
  const char *s = arena_strdup(ev->a, sb_str(&sb));
  sb_free(&sb);
  return s;
}

static const char *func_name(const AstNode *def) { return def->kind == AST_LAMBDA ? "<lambda>" : def->id; }

/* Binds call arguments to a def's parameters in a fresh environment. */
static bool bind_params(Eval *ev, Env *fenv, Env *defenv, const AstNode *def, CallArgs *a) {
  const AstParams *ps = &def->params;
  SrcLoc loc = a->node ? a->node->loc : def->loc;
  bool *set = ARENA_ARRAY(ev->a, bool, ps->n);
  int pi = 0;
  Value *varargs = NULL, *varkw = NULL;
  for (int i = 0; i < ps->n; i++) {
    if (ps->items[i].kind == APARAM_VARARGS) varargs = ev_new(ev, V_TUPLE);
    if (ps->items[i].kind == APARAM_VARKW) varkw = ev_new(ev, V_DICT);
  }
  for (int k = 0; k < a->npos; k++) {
    while (pi < ps->n && ps->items[pi].kind != APARAM_POSONLY && ps->items[pi].kind != APARAM_NORMAL) {
      if (ps->items[pi].kind == APARAM_VARARGS || ps->items[pi].kind == APARAM_KWONLY || ps->items[pi].kind == APARAM_VARKW) break;
      pi++;
    }
    if (pi < ps->n && (ps->items[pi].kind == APARAM_POSONLY || ps->items[pi].kind == APARAM_NORMAL)) {
      ev_env_set(ev, fenv, ps->items[pi].name, a->pos[k]);
      set[pi++] = true;
    } else if (varargs) {
      vl_push(ev, &varargs->u.seq, a->pos[k]);
    } else {
      ts_error(ev->c, loc, "%s() takes %d positional arguments but %d were given (parameters: %s)", func_name(def),
               pi, a->npos, param_list(ev, ps));
      return false;
    }
  }
  for (int k = 0; k < a->nkw; k++) {
    int j = -1;
    for (int i = 0; i < ps->n; i++)
      if (ps->items[i].kind != APARAM_VARARGS && ps->items[i].kind != APARAM_VARKW && ps->items[i].kind != APARAM_POSONLY &&
          !strcmp(ps->items[i].name, a->kw[k]))
        j = i;
    if (j < 0) {
      if (varkw) {
        vl_push(ev, &varkw->u.dict.keys, ev_str(ev, a->kw[k]));
        vl_push(ev, &varkw->u.dict.vals, a->kwv[k]);
        continue;
      }
      ts_error(ev->c, loc, "%s() got an unexpected keyword argument '%s' (parameters: %s)", func_name(def), a->kw[k],
               param_list(ev, ps));
      return false;
    }
    if (set[j]) {
      ts_error(ev->c, loc, "%s() got multiple values for argument '%s'", func_name(def), a->kw[k]);
      return false;
    }
    ev_env_set(ev, fenv, ps->items[j].name, a->kwv[k]);
    set[j] = true;
  }
  for (int i = 0; i < ps->n; i++) {
    const AstParam *p = &ps->items[i];
    if (p->kind == APARAM_VARARGS) { ev_env_set(ev, fenv, p->name, varargs); continue; }
    if (p->kind == APARAM_VARKW) { ev_env_set(ev, fenv, p->name, varkw); continue; }
    if (set[i]) continue;
    if (!p->default_value) {
      ts_error(ev->c, loc, "%s() missing required argument '%s' (parameters: %s)", func_name(def), p->name,
               param_list(ev, ps));
      return false;
    }
    /* Defaults are evaluated in the defining scope (Python does it at def time). */
    ev_env_set(ev, fenv, p->name, ev_eval(ev, defenv, p->default_value));
  }
  return true;
}

/* Calls a def or lambda: a fresh environment over its closure, its body run with staging
 * on for a @T.macro and off otherwise. */
Value *ev_call_function(Eval *ev, Value *fn, CallArgs *a) {
  const AstNode *def = fn->u.fn.def;
  SrcLoc loc = a->node ? a->node->loc : def->loc;
  if (fn->u.fn.flavor == FN_PRIM) {
    ts_error(ev->c, loc, "a @T.prim_func cannot be called from kernel code");
    return NULL;
  }
  if (ev->depth >= ev->limit_depth) {
    ts_error(ev->c, loc, "maximum recursion depth (%d) exceeded", ev->limit_depth);
    return NULL;
  }
  if (!ev_step(ev, loc)) return NULL;
  Env *fenv = ev_env_new(ev, fn->u.fn.env);
  if (!bind_params(ev, fenv, fn->u.fn.env, def, a)) return NULL;
  if (def->kind == AST_LAMBDA) {
    ev->depth++;
    Value *r = ev_eval(ev, fenv, def->value);
    ev->depth--;
    return r;
  }
  bool staged = ev->staged;
  LoopCtx *loop = ev->loop;
  ev->staged = fn->u.fn.flavor == FN_MACRO;
  ev->loop = NULL;
  ev->depth++;
  ev->ret = NULL;
  ExecStatus st = ev_exec_block(ev, fenv, &def->body);
  ev->depth--;
  ev->staged = staged;
  ev->loop = loop;
  Value *r = st == EX_RETURN ? ev->ret : ev->none;
  ev->ret = NULL;
  return r;
}

/* T.float16(x): a typed constant of a Python number, else a cast.  In a kernel, T.int32() without
 * an argument (TVMScript's variable, bound later by T.let) is a T.alloc_var of that dtype. */
static Value *call_dtype(Eval *ev, ts_dtype t, CallArgs *a) {
  SrcLoc loc = a->node->loc;
  if (a->npos == 0 && !a->nkw && ev->kernel) return bi_declare_var(ev, t, NULL, loc);
  if (a->npos == 0 && !a->nkw && ev->block) {
    ts_error(ev->c, loc, "%s() without an argument declares a variable (given its value by T.let), which only a "
             "T.Kernel body may do", dtype_name(t));
    return NULL;
  }
  if (a->npos != 1 || a->nkw) {
    ts_error(ev->c, loc, "%s() takes exactly one argument", dtype_name(t));
    return NULL;
  }
  Value *v = a->pos[0];
  if (!v || v->kind == V_POISON) return NULL;
  if (ev_is_num(v)) {
    if (dtype_is_float(t)) return ev_expr(ev, ir_float(ev->c, ev_num_f(v), t, loc));
    return ev_expr(ev, ir_int(ev->c, v->kind == V_FLOAT ? ev_f2i(v->u.f) : ev_num_i(v), t, loc));
  }
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  return e ? ev_expr(ev, ir_cast(ev->c, t, e, loc)) : NULL;
}

/* Calls fn (a def, a builtin, a dtype) with evaluated arguments. */
Value *ev_call(Eval *ev, Value *fn, CallArgs *a) {
  SrcLoc loc = a->node ? a->node->loc : SRCLOC_NONE;
  if (!fn || fn->kind == V_POISON) return NULL;
  switch (fn->kind) {
  case V_FUNC: {
    bool handled;
    Value *host = ev_host_first(ev, fn, a, &handled); /* host code calling a module-path helper */
    if (handled) return host;
    HostRetry mark = ev_host_retry_arm(ev, fn); /* a sibling helper the interpreter fails on */
    Value *r = ev_call_function(ev, fn, a);
    return mark.armed ? ev_host_retry(ev, fn, a, &mark, r) : r;
  }
  case V_BUILTIN: return builtin_call(ev, fn, a);
  case V_DTYPE: return call_dtype(ev, fn->u.dtype, a);
  case V_CLASS: return ev_class_call(ev, fn, a);
  case V_METHOD: return ev_method_call(ev, fn, a);
  case V_OPAQUE: return ev_host_call(ev, fn, a);
  default: break;
  }
  ts_error(ev->c, loc, "'%s' object is not callable", ev_type_name(fn));
  return NULL;
}

/* Evaluates a call's arguments, spreading *seq and **dict; a failed one becomes poison. */
static bool eval_args(Eval *ev, Env *env, const AstNode *n, CallArgs *a) {
  PtrVec pos = {0}, kw = {0}, kwv = {0};
  bool ok = true;
  a->node = n;
  for (int i = 0; i < n->items.n; i++) {
    const AstNode *x = n->items.items[i];
    if (x->kind == AST_STARRED) {
      Value *s = ev_eval(ev, env, x->value);
      if (!s) { ok = false; continue; }
      if (s->kind != V_TUPLE && s->kind != V_LIST) {
        ts_error(ev->c, x->loc, "argument after * must be a tuple or list, not %s", ev_type_name(s));
        ok = false;
        continue;
      }
      for (int k = 0; k < s->u.seq.n; k++) vec_push(ev->a, &pos, s->u.seq.items[k]);
    } else {
      Value *v = ev_eval(ev, env, x);
      if (!v) ok = false;
      vec_push(ev->a, &pos, v ? v : ev->poison);
    }
  }
  for (int i = 0; i < n->nkwargs; i++) {
    const AstKeyword *k = &n->kwargs[i];
    Value *v = ev_eval(ev, env, k->value);
    if (!v) { ok = false; v = ev->poison; }
    if (k->name) {
      vec_push(ev->a, &kw, (void *)k->name);
      vec_push(ev->a, &kwv, v);
    } else if (v->kind == V_DICT) {
      for (int j = 0; j < v->u.dict.keys.n; j++) {
        Value *key = v->u.dict.keys.items[j];
        if (key->kind != V_STR) continue;
        vec_push(ev->a, &kw, (void *)key->u.str.s);
        vec_push(ev->a, &kwv, v->u.dict.vals.items[j]);
      }
    } else if (v->kind != V_POISON) {
      ts_error(ev->c, k->loc, "argument after ** must be a dict, not %s", ev_type_name(v));
      ok = false;
    }
  }
  a->pos = (Value **)pos.items;
  a->npos = pos.len;
  a->kw = (const char **)kw.items;
  a->kwv = (Value **)kwv.items;
  a->nkw = kw.len;
  return ok;
}

/* ---- subscripts ------------------------------------------------------------------------- */
static int64_t norm_index(int64_t i, int n) { return i < 0 ? i + n : i; }

/* seq[i], seq[a:b:c], d[k] on Python values. */
static Value *py_subscript(Eval *ev, Env *env, Value *base, const AstNode *index, SrcLoc loc) {
  if (index->kind == AST_SLICE && (base->kind == V_TUPLE || base->kind == V_LIST || base->kind == V_STR)) {
    int n = base->kind == V_STR ? (int)base->u.str.n : base->u.seq.n;
    int64_t lo = 0, hi = n, st = 1;
    Value *v;
    if (index->step && !ev_to_int(ev, ev_eval(ev, env, index->step), &st, index->loc)) return NULL;
    if (st == 0) { ts_error(ev->c, loc, "slice step cannot be zero"); return NULL; }
    if (st < 0) { lo = n - 1; hi = -1; }
    if (index->lo) {
      if (!ev_to_int(ev, ev_eval(ev, env, index->lo), &lo, index->loc)) return NULL;
      lo = norm_index(lo, n);
    }
    if (index->hi) {
      if (!ev_to_int(ev, ev_eval(ev, env, index->hi), &hi, index->loc)) return NULL;
      hi = norm_index(hi, n);
    }
    if (st > 0) { if (lo < 0) lo = 0; if (hi > n) hi = n; }
    else { if (lo >= n) lo = n - 1; if (hi < -1) hi = -1; }
    if (base->kind == V_STR) {
      StrBuf sb = {0};
      for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) sb_putc(&sb, base->u.str.s[i]);
      v = ev_str(ev, arena_strdup(ev->a, sb_str(&sb)));
      sb_free(&sb);
      return v;
    }
    v = ev_new(ev, base->kind);
    for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) vl_push(ev, &v->u.seq, base->u.seq.items[i]);
    return v;
  }
  Value *key = ev_eval(ev, env, index);
  if (!key) return NULL;
  if (base->kind == V_DICT) {
    for (int i = 0; i < base->u.dict.keys.n; i++)
      if (ev_values_equal(base->u.dict.keys.items[i], key)) return base->u.dict.vals.items[i];
    ts_error(ev->c, loc, "key %s not found in dict", ev_repr(ev, key));
    return NULL;
  }
  int64_t i;
  if (key->kind != V_INT && key->kind != V_BOOL) {
    ts_error(ev->c, loc, "%s indices must be integers, not %s", ev_type_name(base), ev_type_name(key));
    return NULL;
  }
  i = ev_num_i(key);
  int n = base->kind == V_STR ? (int)base->u.str.n : base->u.seq.n;
  int64_t j = norm_index(i, n);
  if (j < 0 || j >= n) {
    ts_error(ev->c, loc, "%s index %lld out of range (length %d)", ev_type_name(base), (long long)i, n);
    return NULL;
  }
  if (base->kind == V_STR) return ev_str(ev, arena_strndup(ev->a, base->u.str.s + j, 1));
  return base->u.seq.items[j];
}

/* Evaluated indices of a buffer subscript: each is a scalar IR expr or a slice. */
typedef struct BufIndex {
  int n;
  IrExpr **idx;      /* scalar index or slice start */
  IrExpr **extent;   /* slice extent, NULL for a scalar index */
  bool any_slice;
  IrBuffer *lanes;   /* A[..., idx] with idx a register array of indices (T.Ramp) in the last
                        dim, the others scalars in idx[]: a gather/scatter */
} BufIndex;

/* A constant negative index -n <= i < 0 into a dimension of constant size n counts from its
 * end, as in Python (TileLang's LegalizeNegativeIndex): *idx becomes i + n. */
static void wrap_const_index(Eval *ev, const IrBuffer *b, int d, IrExpr **idx) {
  int64_t i, n;
  if (*idx && ir_is_const_int(*idx, &i) && i < 0 && ir_is_const_int(b->shape[d], &n) && i >= -n)
    *idx = ir_int(ev->c, i + n, (*idx)->dtype, (*idx)->loc);
}

/* An index known at compile time into a dimension of known size of an on-chip buffer
 * (fragment, shared, local) must be inside it (after wrap_const_index): nothing guards these
 * accesses, and a register array indexed out of bounds is not even memory.  `is_end`: the
 * bound of a slice, which may equal the size. */
static bool check_const_index(Eval *ev, const IrBuffer *b, int d, const IrExpr *idx, bool is_end, SrcLoc loc) {
  int64_t i, n;
  if (b->scope != IR_SCOPE_FRAGMENT && b->scope != IR_SCOPE_SHARED_DYN && b->scope != IR_SCOPE_SHARED &&
      b->scope != IR_SCOPE_LOCAL)
    return true;
  if (!idx || !ir_is_const_int(idx, &i) || !ir_is_const_int(b->shape[d], &n)) return true;
  if (i >= 0 && (i < n || (is_end && i == n))) return true;
  const char *what = b->scope == IR_SCOPE_FRAGMENT ? "fragment" : b->scope == IR_SCOPE_LOCAL ? "local buffer" : "shared buffer";
  ts_error(ev->c, loc, "%s %lld is out of range for dimension %d of %s '%s' (size %lld%s)", is_end ? "slice end" : "index",
           (long long)i, d, what, b->name, (long long)n, i < 0 ? "; a negative index counts from the end down to -size" : "");
  return false;
}

/* A register array of integers with a constant length (T.Ramp's value) used as an index. */
static bool lane_indices(const Value *v) {
  int64_t n;
  return bi_register_array(v, &n) && dtype_is_int(v->u.buf->dtype);
}

/* The indices of lane l (loop var lr) of a gather/scatter through bi: bi's scalars, then lane
 * l's index in the last dim.  A lane index whose sign is unknown counts from the end when it
 * is negative at run time (TileLang's vector indices do; A[T.Ramp(t - 2, 1, 4)] at t = 0 reads
 * A[n - 2], A[n - 1], A[0], A[1]). */
static IrExpr **lane_index(Eval *ev, const IrBuffer *b, const BufIndex *bi, IrExpr *lr, SrcLoc loc) {
  IrExpr **at = ARENA_ARRAY(ev->a, IrExpr *, bi->n);
  for (int d = 0; d < bi->n - 1; d++) at[d] = bi->idx[d];
  IrExpr *x = ir_load(ev->c, bi->lanes, &lr, 1, loc), *n = b->shape[bi->n - 1];
  IrExpr *neg = ir_binary(ev->c, IR_LT, x, ir_int(ev->c, 0, x->dtype, loc), loc);
  at[bi->n - 1] = ir_select(ev->c, IR_SELECT, neg, ir_binary(ev->c, IR_ADD, x, ir_cast(ev->c, x->dtype, n, loc), loc), x, loc);
  return at;
}

/* A[..., idx] for a register array idx: a register array with A[..., idx[l]] in lane l. */
static Value *gather_lanes(Eval *ev, IrBuffer *b, const BufIndex *bi, SrcLoc loc) {
  int64_t n;
  ir_is_const_int(bi->lanes->shape[0], &n);
  IrVar *l = ir_var(ev->c, "l", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr **at = lane_index(ev, b, bi, ir_varref(ev->c, l, loc), loc);
  return bi_lane_array(ev, bi_take_name(ev, "lanes"), b->dtype, n, l, ir_load(ev->c, b, at, bi->n, loc), loc);
}

/* A[..., idx] = v for a register array idx: lane l of v (a register array as long, or one
 * value for every lane) to A[..., idx[l]]. */
static bool scatter_lanes(Eval *ev, IrBuffer *b, const BufIndex *bi, Value *v, SrcLoc loc) {
  IrExpr *n = bi->lanes->shape[0];
  int64_t lanes, vl;
  ir_is_const_int(n, &lanes);
  bool vec = v->kind == V_BUFFER && v->u.buf->ndim == 1 && ir_is_const_int(v->u.buf->shape[0], &vl);
  if (vec && vl != lanes) {
    ts_error(ev->c, loc, "storing %lld lanes through an index of %lld lanes into '%s'", (long long)vl, (long long)lanes,
             b->name);
    return false;
  }
  IrVar *l = ir_var(ev->c, "l", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *lr = ir_varref(ev->c, l, loc), **at = lane_index(ev, b, bi, lr, loc);
  IrExpr *val = vec ? ir_load(ev->c, v->u.buf, &lr, 1, loc) : ev_to_ir(ev, v, NULL, loc);
  if (!val) return false;
  ev_emit(ev, ir_for(ev->c, l, ir_i32(ev->c, 0), n, IR_FOR_UNROLLED,
                     ir_store(ev->c, b, at, bi->n, ir_cast(ev->c, b->dtype, val, loc), loc), loc));
  return true;
}

/* The indices of A[i, a:b, ...]: scalars and slices, constants checked against on-chip
 * buffer sizes. */
static bool eval_buf_index(Eval *ev, Env *env, IrBuffer *b, const AstNode *index, BufIndex *out, SrcLoc loc) {
  PtrVec nodes = {0};
  if (index->kind == AST_TUPLE)
    for (int i = 0; i < index->items.n; i++) vec_push(ev->a, &nodes, index->items.items[i]);
  else
    vec_push(ev->a, &nodes, (void *)index);
  /* Entries are either an evaluated Value or a SLICE node; a single index that evaluates
   * to a Python tuple (A[idx] with idx = (i, j)) spreads over several dimensions. */
  PtrVec vals = {0}, slices = {0}, where = {0}; /* where: the index's own node, for carets */
  for (int i = 0; i < nodes.len; i++) {
    const AstNode *x = nodes.items[i];
    if (x->kind == AST_SLICE) {
      vec_push(ev->a, &vals, NULL);
      vec_push(ev->a, &slices, (void *)x);
      vec_push(ev->a, &where, (void *)x);
      continue;
    }
    Value *v = ev_eval(ev, env, x);
    if (!v) return false;
    if (v->kind == V_TUPLE || v->kind == V_LIST) {
      for (int k = 0; k < v->u.seq.n; k++) {
        vec_push(ev->a, &vals, v->u.seq.items[k]);
        vec_push(ev->a, &slices, NULL);
        vec_push(ev->a, &where, (void *)x);
      }
      continue;
    }
    vec_push(ev->a, &vals, v);
    vec_push(ev->a, &slices, NULL);
    vec_push(ev->a, &where, (void *)x);
  }
  int n = vals.len;
  if (n != b->ndim) {
    ts_error(ev->c, loc, "buffer '%s' has %d dimension%s but is indexed with %d", b->name, b->ndim,
             b->ndim == 1 ? "" : "s", n);
    return false;
  }
  out->n = n;
  out->idx = ARENA_ARRAY(ev->a, IrExpr *, n);
  out->extent = ARENA_ARRAY(ev->a, IrExpr *, n);
  out->any_slice = false;
  out->lanes = NULL;
  /* TIR's vector index A[..., T.Ramp(base, 1, n)], the last dim's */
  if (n >= 1 && vals.items[n - 1] && lane_indices(vals.items[n - 1])) {
    out->lanes = ((Value *)vals.items[n - 1])->u.buf;
    n--;
  }
  for (int d = 0; d < n; d++) {
    Value *v = vals.items[d];
    const AstNode *sl = slices.items[d];
    if (out->lanes && (sl || lane_indices(v))) {
      ts_error(ev->c, loc, "a vector index (T.Ramp) of '%s' goes in its last dim, the others scalars", b->name);
      return false;
    }
    if (!sl) {
      out->idx[d] = ev_to_ir(ev, v, NULL, loc);
      if (!out->idx[d]) return false;
      if (!dtype_is_int(out->idx[d]->dtype)) {
        ts_error(ev->c, loc, "index %d of buffer '%s' must be an integer, got %s", d, b->name,
                 dtype_name(out->idx[d]->dtype));
        return false;
      }
      wrap_const_index(ev, b, d, &out->idx[d]);
      if (!check_const_index(ev, b, d, out->idx[d], false, ((const AstNode *)where.items[d])->loc)) return false;
      continue;
    }
    if (sl->step) {
      ts_error(ev->c, sl->loc, "slices with a step are not supported in buffer regions");
      return false;
    }
    IrExpr *lo = sl->lo ? ev_to_ir(ev, ev_eval(ev, env, sl->lo), NULL, sl->loc) : ir_int(ev->c, 0, TS_DTYPE_INT32, sl->loc);
    IrExpr *hi = sl->hi ? ev_to_ir(ev, ev_eval(ev, env, sl->hi), NULL, sl->loc) : b->shape[d];
    if (!lo || !hi) return false;
    if (!check_const_index(ev, b, d, lo, false, sl->lo ? sl->lo->loc : sl->loc) ||
        !check_const_index(ev, b, d, hi, true, sl->hi ? sl->hi->loc : sl->loc))
      return false;
    out->idx[d] = lo;
    out->extent[d] = ev_linear_diff(ev, hi, lo, sl->loc);
    out->any_slice = true;
  }
  return true;
}

/* base[index]: a buffer load or region, a Python item, or T.Tensor[...] on a builtin. */
static Value *eval_subscript(Eval *ev, Env *env, const AstNode *n) {
  Value *base = eval_raw(ev, env, n->value);
  if (!base || base->kind == V_POISON) return NULL;
  switch (base->kind) {
  case V_BUFFER: {
    BufIndex bi;
    if (!eval_buf_index(ev, env, base->u.buf, n->index, &bi, n->loc)) return NULL;
    if (bi.lanes) return gather_lanes(ev, base->u.buf, &bi, n->loc);
    if (bi.any_slice) {
      Value *v = ev_new(ev, V_REGION);
      v->u.region.buf = base->u.buf;
      v->u.region.min = bi.idx;
      for (int d = 0; d < bi.n; d++)
        if (!bi.extent[d]) bi.extent[d] = ir_int(ev->c, 1, TS_DTYPE_INT32, n->loc);
      v->u.region.extent = bi.extent;
      return v;
    }
    IrExpr *ld = ir_load(ev->c, base->u.buf, bi.idx, bi.n, n->loc);
    if (base->u.buf->reducer && base->u.buf->reducer_epoch == 1) vec_push(ev->a, &ev->reducer_reads, ld);
    return ev_expr(ev, ld);
  }
  case V_TUPLE:
  case V_LIST:
  case V_STR:
  case V_DICT: return py_subscript(ev, env, base, n->index, n->loc);
  case V_BUILTIN: {
    Value *idx = ev_eval(ev, env, n->index);
    return idx ? builtin_subscript(ev, base, idx, n) : NULL;
  }
  case V_OPAQUE: return ev_use_opaque(ev, base, n->loc);
  case V_HOST_TENSOR:
    ts_error(ev->c, n->loc, "indexing a torch tensor made while building a kernel needs its data, which exists only when "
             "the program runs (use its .shape / .dtype, or pass the tensor to the kernel)");
    return NULL;
  default: break;
  }
  ts_error(ev->c, n->loc, "'%s' object is not subscriptable", ev_type_name(base));
  return NULL;
}

/* ---- attributes ---------------------------------------------------------------------------- */
static Value *shape_tuple(Eval *ev, IrExpr **shape, int ndim) {
  Value *t = ev_new(ev, V_TUPLE);
  for (int i = 0; i < ndim; i++) {
    int64_t k;
    vl_push(ev, &t->u.seq, ir_is_const_int(shape[i], &k) ? ev_int(ev, k) : ev_expr(ev, shape[i]));
  }
  return t;
}

/* base.name: module attributes, buffer and dtype properties, methods (value.h). */
Value *ev_attr(Eval *ev, Value *base, const char *name, SrcLoc loc) {
  if (!base || base->kind == V_POISON) return NULL;
  switch (base->kind) {
  case V_MODULE: return ev_module_attr(ev, base, name, loc);
  case V_OPAQUE: {
    /* torch.float16 is a dtype (factories pass them around); anything else stays
     * opaque and only its use is an error. */
    ts_dtype t;
    const char *path = base->u.opaque.qualname;
    if (base->u.opaque.module && !strcmp(base->u.opaque.module, "torch") && (!path || !strchr(path, '.')) &&
        dtype_parse(name, &t) && strcmp(name, "int") && strcmp(name, "float"))
      return ev_dtype(ev, t);
    /* the attribute path is kept: a call of it may go to the host (host_call.c) */
    Value *v = ev_opaque(ev, base->u.opaque.what);
    v->u.opaque.module = base->u.opaque.module;
    if (v->u.opaque.module)
      v->u.opaque.qualname =
          base->u.opaque.qualname ? arena_printf(ev->a, "%s.%s", base->u.opaque.qualname, name) : name;
    return v;
  }
  case V_BUFFER: {
    IrBuffer *b = base->u.buf;
    if (!strcmp(name, "shape")) return shape_tuple(ev, b->shape, b->ndim);
    if (!strcmp(name, "dtype")) return ev_dtype(ev, b->dtype);
    if (!strcmp(name, "name")) return ev_str(ev, b->name);
    /* buf.data: the buffer's memory, for T.Tensor(shape, dtype, buf.data) views */
    if (!strcmp(name, "data") && b->scope != IR_SCOPE_VAR) return base;
    if (!strcmp(name, "ndim")) return ev_int(ev, b->ndim);
    if (!strcmp(name, "scope")) return ev_str(ev, ir_scope_names[b->scope]);
    if (b->scope == IR_SCOPE_VAR) {
      Value *m = builtin_method(ev, ev_expr(ev, ev_load_var(ev, b, loc)), name);
      if (m) return m;
    }
    break;
  }
  case V_EXPR:
    if (!strcmp(name, "dtype")) return ev_dtype(ev, base->u.expr->dtype);
    break;
  case V_DTYPE:
    if (!strcmp(name, "bits")) return ev_int(ev, dtype_bits(base->u.dtype));
    if (!strcmp(name, "bytes") || !strcmp(name, "itemsize")) return ev_int(ev, dtype_bytes(base->u.dtype));
    if (!strcmp(name, "name")) return ev_str(ev, dtype_name(base->u.dtype));
    if (!strcmp(name, "lanes")) return ev_int(ev, 1);
    break;
  case V_HOST_TENSOR: {
    Value *m = ht_attr(ev, base, name);
    if (m) return m;
    break;
  }
  case V_CLASS:
  case V_INSTANCE: {
    int errors = ev->c->diag.errors;
    Value *v = ev_object_attr(ev, base, name, loc);
    if (v) return v;
    if (ev->c->diag.errors > errors) return NULL;
    ts_error(ev->c, loc, "'%s' object has no attribute '%s'", ev_class_name(base), name);
    return NULL;
  }
  case V_TENSORTYPE:
    if (!strcmp(name, "shape")) return base->u.tt.shape;
    if (!strcmp(name, "dtype")) return ev_dtype(ev, base->u.tt.dtype);
    break;
  case V_REGION:
    if (!strcmp(name, "buffer")) {
      Value *v = ev_new(ev, V_BUFFER);
      v->u.buf = base->u.region.buf;
      return v;
    }
    break;
  default: break;
  }
  Value *m = builtin_method(ev, base, name);
  if (m) return m;
  ts_error(ev->c, loc, "'%s' object has no attribute '%s'", ev_type_name(base), name);
  return NULL;
}

static Value *eval_attribute(Eval *ev, Env *env, const AstNode *n) {
  return ev_attr(ev, eval_raw(ev, env, n->value), n->id, n->loc);
}


/* ---- comprehensions ------------------------------------------------------------------------ */
static bool comp_rec(Eval *ev, Env *env, const AstNode *n, int ci, Value *acc) {
  if (ci == n->ncomps) {
    if (n->kind == AST_DICTCOMP) {
      Value *k = ev_eval(ev, env, n->key), *v = ev_eval(ev, env, n->elt);
      if (!k || !v) return false;
      vl_push(ev, &acc->u.dict.keys, k);
      vl_push(ev, &acc->u.dict.vals, v);
    } else {
      Value *v = ev_eval(ev, env, n->elt);
      if (!v) return false;
      vl_push(ev, &acc->u.seq, v);
    }
    return true;
  }
  const AstComp *c = &n->comps[ci];
  ValList items = {0};
  if (!ev_iter_items(ev, ev_eval(ev, env, c->iter), &items, n->loc)) return false;
  for (int i = 0; i < items.n; i++) {
    if (!ev_step(ev, n->loc)) return false;
    if (!ev_assign(ev, env, c->target, items.items[i], n->loc)) return false;
    bool keep = true;
    for (int k = 0; k < c->ifs.n && keep; k++) {
      int t = ev_truth(ev, ev_eval(ev, env, c->ifs.items[k]), c->ifs.items[k]->loc);
      if (t < 0) {
        if (t == -1) ts_error(ev->c, c->ifs.items[k]->loc, "comprehension conditions must be Python values");
        return false;
      }
      keep = t;
    }
    if (keep && !comp_rec(ev, env, n, ci + 1, acc)) return false;
  }
  return true;
}

/* ---- expressions ---------------------------------------------------------------------------- */
/* `a and b` / `a or b`: Python short-circuit on Python values, logical IR otherwise. */
static Value *eval_boolop(Eval *ev, Env *env, const AstNode *n) {
  Value *acc = ev_eval(ev, env, n->items.items[0]);
  for (int i = 1; i < n->items.n; i++) {
    int t = ev_truth(ev, acc, n->loc);
    if (t == -2) return NULL;
    if (t >= 0) {
      if ((n->op == AOP_AND) != (t == 1)) return acc; /* decided */
      acc = ev_eval(ev, env, n->items.items[i]);
      continue;
    }
    /* acc is IR */
    Value *r = ev_eval(ev, env, n->items.items[i]);
    int rt = ev_truth(ev, r, n->items.items[i]->loc);
    if (rt == -2) return NULL;
    if (rt >= 0) {
      /* IR and True = IR; IR and False = False; IR or False = IR; IR or True = True */
      if ((n->op == AOP_AND) == (rt == 1)) continue;
      acc = r;
      continue;
    }
    IrExpr *a = ev_to_bool_ir(ev, ev_to_ir(ev, acc, NULL, n->loc), n->loc);
    IrExpr *b = ev_to_bool_ir(ev, ev_to_ir(ev, r, NULL, n->loc), n->loc);
    if (!a || !b) return NULL;
    acc = ev_expr(ev, ir_binary(ev->c, n->op == AOP_AND ? IR_AND : IR_OR, a, b, n->loc));
  }
  return acc;
}

/* a < b < c: Python chaining, short-circuited on Python values; IR `and` otherwise. */
static Value *eval_compare(Eval *ev, Env *env, const AstNode *n) {
  Value *left = ev_eval(ev, env, n->left);
  Value *result = NULL;
  for (int i = 0; i < n->items.n; i++) {
    Value *right = ev_eval(ev, env, n->items.items[i]);
    Value *c = ev_binop(ev, n->ops[i], left, right, n->loc);
    if (!c) return NULL;
    if (!result) {
      result = c;
    } else {
      int t = ev_truth(ev, result, n->loc);
      if (t == 0) return result;
      if (t == 1) result = c;
      else {
        IrExpr *a = ev_to_bool_ir(ev, ev_to_ir(ev, result, NULL, n->loc), n->loc);
        IrExpr *b = ev_to_bool_ir(ev, ev_to_ir(ev, c, NULL, n->loc), n->loc);
        if (!a || !b) return NULL;
        result = ev_expr(ev, ir_binary(ev->c, IR_AND, a, b, n->loc));
      }
    }
    if (i + 1 == n->items.n) break; /* the last result is not tested (a tensor's has no truth) */
    int t = ev_truth(ev, result, n->loc);
    if (t == 0) return result; /* Python short-circuit */
    left = right;
  }
  return result;
}

/* A name's value; an undefined name is reported once (then poison). */
static Value *eval_name(Eval *ev, Env *env, const AstNode *n) {
  Value *v = ev_env_lookup(ev, env, n->id);
  if (!v) {
    ts_error(ev->c, n->loc, "name '%s' is not defined", n->id);
    ev_env_set(ev, env, n->id, ev->poison); /* report once */
    return NULL;
  }
  if (v->kind == V_POISON) return NULL;
  if (v->kind == V_OPAQUE && v->u.opaque.at_name) {
    ts_error(ev->c, n->loc, "%s", v->u.opaque.what);
    return NULL;
  }
  return v;
}

/* Like eval, but a name bound to a T.alloc_var buffer is the buffer itself. */
static Value *eval_raw(Eval *ev, Env *env, const AstNode *n) {
  if (n->kind == AST_NAME) return eval_name(ev, env, n);
  return ev_eval(ev, env, n);
}

/* A tuple or list display, with *starred items spread. */
static Value *eval_seq(Eval *ev, Env *env, const AstNode *n, ValKind k) {
  Value *v = ev_new(ev, k);
  for (int i = 0; i < n->items.n; i++) {
    const AstNode *x = n->items.items[i];
    if (x->kind == AST_STARRED) {
      ValList items = {0};
      if (!ev_iter_items(ev, ev_eval(ev, env, x->value), &items, x->loc)) return NULL;
      for (int j = 0; j < items.n; j++) vl_push(ev, &v->u.seq, items.items[j]);
      continue;
    }
    Value *e = ev_eval(ev, env, x);
    if (!e) return NULL;
    vl_push(ev, &v->u.seq, e);
  }
  return v;
}

/* The value of expression n in env (NULL: an error was reported). */
Value *ev_eval(Eval *ev, Env *env, const AstNode *n) {
  if (!n) return ev->none;
  switch (n->kind) {
  case AST_NAME: {
    Value *v = eval_name(ev, env, n);
    if (v && v->kind == V_BUFFER && v->u.buf->scope == IR_SCOPE_VAR) return ev_expr(ev, ev_load_var(ev, v->u.buf, n->loc));
    return v;
  }
  case AST_CONST_INT:
    if (n->is_big) {
      ts_error(ev->c, n->loc, "integer literal %s does not fit in 64 bits", n->sval ? n->sval : "");
      return NULL;
    }
    return ev_int(ev, n->ival);
  case AST_CONST_FLOAT:
    if (n->is_imag) {
      ts_error(ev->c, n->loc, "complex numbers are not supported");
      return NULL;
    }
    return ev_float(ev, n->fval);
  case AST_CONST_STR: {
    Value *v = ev_new(ev, V_STR);
    v->u.str.s = n->sval ? n->sval : "";
    v->u.str.n = n->sval ? n->slen : 0;
    return v;
  }
  case AST_CONST_TRUE: return ev->vtrue;
  case AST_CONST_FALSE: return ev->vfalse;
  case AST_CONST_NONE: return ev->none;
  case AST_CONST_ELLIPSIS: return ev_opaque(ev, "'...' is not supported here");
  case AST_FSTRING: {
    StrBuf sb = {0};
    for (int i = 0; i < n->items.n; i++) {
      const AstNode *p = n->items.items[i];
      if (p->kind == AST_CONST_STR) {
        sb_appendn(&sb, p->sval ? p->sval : "", p->sval ? p->slen : 0);
      } else {
        Value *v = ev_eval(ev, env, p->kind == AST_FORMATTED ? p->value : p);
        if (v) ev_repr_into(&sb, v, p->kind == AST_FORMATTED && p->conversion == 'r');
      }
    }
    Value *v = ev_str(ev, arena_strdup(ev->a, sb_str(&sb)));
    sb_free(&sb);
    return v;
  }
  case AST_BINOP: {
    Value *l = ev_eval(ev, env, n->left);
    Value *r = ev_eval(ev, env, n->right);
    return ev_binop(ev, n->op, l, r, n->loc);
  }
  case AST_UNARYOP: return ev_unop(ev, n->op, ev_eval(ev, env, n->value), n->loc);
  case AST_BOOLOP: return eval_boolop(ev, env, n);
  case AST_COMPARE: return eval_compare(ev, env, n);
  case AST_CALL: {
    Value *fn = eval_raw(ev, env, n->func);
    if (!fn) return NULL;
    CallArgs a = {0};
    if (!eval_args(ev, env, n, &a)) return NULL;
    return ev_call(ev, fn, &a);
  }
  case AST_ATTRIBUTE: return eval_attribute(ev, env, n);
  case AST_SUBSCRIPT: return eval_subscript(ev, env, n);
  case AST_SLICE: ts_error(ev->c, n->loc, "a slice is only allowed inside a subscript"); return NULL;
  case AST_STARRED: ts_error(ev->c, n->loc, "starred expression is not allowed here"); return NULL;
  case AST_TUPLE: return eval_seq(ev, env, n, V_TUPLE);
  case AST_LIST:
  case AST_SET: return eval_seq(ev, env, n, V_LIST);
  case AST_DICT: {
    Value *d = ev_new(ev, V_DICT);
    for (int i = 0; i < n->items.n; i++) {
      Value *v = ev_eval(ev, env, n->items.items[i]);
      if (!v) return NULL;
      if (!n->keys.items[i]) { /* {**other} */
        if (v->kind != V_DICT) { ts_error(ev->c, n->loc, "'%s' object is not a mapping", ev_type_name(v)); return NULL; }
        for (int j = 0; j < v->u.dict.keys.n; j++) {
          vl_push(ev, &d->u.dict.keys, v->u.dict.keys.items[j]);
          vl_push(ev, &d->u.dict.vals, v->u.dict.vals.items[j]);
        }
        continue;
      }
      Value *k = ev_eval(ev, env, n->keys.items[i]);
      if (!k) return NULL;
      int j;
      for (j = 0; j < d->u.dict.keys.n; j++)
        if (ev_values_equal(d->u.dict.keys.items[j], k)) break;
      if (j < d->u.dict.keys.n) d->u.dict.vals.items[j] = v;
      else {
        vl_push(ev, &d->u.dict.keys, k);
        vl_push(ev, &d->u.dict.vals, v);
      }
    }
    return d;
  }
  case AST_LISTCOMP:
  case AST_SETCOMP:
  case AST_GENEXP:
  case AST_DICTCOMP: {
    Env *cenv = ev_env_new(ev, env);
    Value *acc = ev_new(ev, n->kind == AST_DICTCOMP ? V_DICT : V_LIST);
    return comp_rec(ev, cenv, n, 0, acc) ? acc : NULL;
  }
  case AST_LAMBDA: {
    Value *f = ev_new(ev, V_FUNC);
    f->u.fn.def = n;
    f->u.fn.env = env;
    f->u.fn.flavor = FN_PLAIN;
    return f;
  }
  case AST_IFEXP: {
    Value *t = ev_eval(ev, env, n->test);
    int tv = ev_truth(ev, t, n->test->loc);
    if (tv == -2) return NULL;
    if (tv >= 0) return ev_eval(ev, env, tv ? n->left : n->right);
    Value *a = ev_eval(ev, env, n->left), *b = ev_eval(ev, env, n->right);
    if (!a || !b) return NULL;
    return ev_select(ev, IR_SELECT, ev_to_bool_ir(ev, ev_to_ir(ev, t, NULL, n->loc), n->loc), a, b, n->loc);
  }
  case AST_NAMEDEXPR: {
    Value *v = ev_eval(ev, env, n->value);
    if (!v || !ev_assign(ev, env, n->left, v, n->loc)) return NULL;
    return v;
  }
  default: break;
  }
  ts_error(ev->c, n->loc, "%s expressions are not supported", ast_kind_names[n->kind]);
  return NULL;
}

/* ---- assignment ------------------------------------------------------------------------------ */
/* `x = v`: Python values bind; IR values become a LET; an alloc_var is stored to. */
static bool assign_name(Eval *ev, Env *env, const char *name, Value *v, SrcLoc loc) {
  Value *cur = strmap_get(&env->vars, name);
  if (cur && cur->kind == V_BUFFER && cur->u.buf->scope == IR_SCOPE_VAR && v->kind != V_BUFFER)
    return ev_store_var(ev, cur->u.buf, v, loc);
  if (v->kind == V_EXPR && ev->block) {
    IrExpr *e = v->u.expr;
    if (e->kind != IR_INT && e->kind != IR_FLOAT && e->kind != IR_VAR && e->kind != IR_STR) {
      IrVar *var = ir_var(ev->c, name, e->dtype, IR_VAR_LET, loc);
      var->let_value = e;
      ev_define_var(ev, var);
      ev_emit(ev, ir_let(ev->c, var, e, loc));
      v = ev_expr(ev, ir_varref(ev->c, var, loc));
    }
  }
  ev_env_set(ev, env, name, v);
  return true;
}

/* A tile's constant element count (-1: not constant). */
static int64_t tile_count(IrBuffer *b, IrExpr **extent, int n) {
  int64_t total = 1, e;
  for (int d = 0; d < n; d++) {
    if (!ir_is_const_int(extent ? extent[d] : b->shape[d], &e)) return -1;
    total *= e;
  }
  return total;
}

/* A[a:b] = tile (a buffer or a region, e.g. the registers T.ldg128 returns): TIR's vector
 * store, run whole by every thread that reaches it: an unrolled loop over the elements,
 * each converted to A's dtype.  Both sides hold the same constant number of elements. */
static bool store_slice(Eval *ev, IrBuffer *b, BufIndex *bi, Value *v, SrcLoc loc) {
  if (v->kind != V_BUFFER && v->kind != V_REGION) {
    ts_error(ev->c, loc, "assigning %s to a buffer slice is not supported: assign a tile (a buffer or a slice of "
             "one), or use T.fill or T.copy", ev_type_name(v));
    return false;
  }
  for (int d = 0; d < bi->n; d++)
    if (!bi->extent[d]) bi->extent[d] = ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
  IrBuffer *sb = v->kind == V_BUFFER ? v->u.buf : v->u.region.buf;
  IrExpr **smin = v->kind == V_REGION ? v->u.region.min : NULL, **sext = v->kind == V_REGION ? v->u.region.extent : NULL;
  int64_t nd = tile_count(b, bi->extent, bi->n), ns = tile_count(sb, sext, sb->ndim);
  if (nd < 0 || ns < 0 || nd != ns) {
    ts_error(ev->c, loc, "assigning a tile to a buffer slice: both need the same constant number of elements (the "
             "slice of '%s' has %lld, '%s' %lld)", b->name, (long long)nd, sb->name, (long long)ns);
    return false;
  }
  IrVar *f = ir_var(ev->c, "v", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *fr = ir_varref(ev->c, f, loc);
  IrExpr *val = ir_load(ev->c, sb, bi_region_flat_index(ev, sb, smin, sext, fr, loc), sb->ndim, loc);
  IrStmt *st = ir_store(ev->c, b, bi_region_flat_index(ev, b, bi->idx, bi->extent, fr, loc), bi->n,
                        ir_cast(ev->c, b->dtype, val, loc), loc);
  ev_emit(ev, ir_for(ev->c, f, ir_i32(ev->c, 0), ir_i32(ev->c, nd), IR_FOR_UNROLLED, st, loc));
  return true;
}

/* A[i, j] = v: a STORE of v cast to the buffer's dtype (a slice: store_slice). */
static bool store_buffer(Eval *ev, IrBuffer *b, BufIndex *bi, Value *v, SrcLoc loc) {
  if (!ev->block) {
    ts_error(ev->c, loc, "buffer stores are only allowed inside a @T.prim_func kernel");
    return false;
  }
  if (b->reducer && b->reducer_epoch == 1) {
    ts_error(ev->c, loc, "illegal store to reducer '%s' between T.reducer_init and T.finalize_reducer: update it with "
             "T.reducer_update(%s[...], value)", b->name, b->name);
    return false;
  }
  if (bi->lanes) return scatter_lanes(ev, b, bi, v, loc);
  if (bi->any_slice) return store_slice(ev, b, bi, v, loc);
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  if (!e) return false;
  ev_emit(ev, ir_store(ev->c, b, bi->idx, bi->n, ir_cast(ev->c, b->dtype, e, loc), loc));
  return true;
}

/* d[k] = v, lst[i] = v on Python containers. */
static bool py_setitem(Eval *ev, Env *env, Value *base, const AstNode *index, Value *v, SrcLoc loc) {
  Value *key = ev_eval(ev, env, index);
  if (!key) return false;
  if (base->kind == V_DICT) {
    for (int i = 0; i < base->u.dict.keys.n; i++)
      if (ev_values_equal(base->u.dict.keys.items[i], key)) {
        base->u.dict.vals.items[i] = v;
        return true;
      }
    vl_push(ev, &base->u.dict.keys, key);
    vl_push(ev, &base->u.dict.vals, v);
    return true;
  }
  if (base->kind == V_LIST && (key->kind == V_INT || key->kind == V_BOOL)) {
    int64_t j = norm_index(ev_num_i(key), base->u.seq.n);
    if (j < 0 || j >= base->u.seq.n) {
      ts_error(ev->c, loc, "list assignment index out of range");
      return false;
    }
    base->u.seq.items[j] = v;
    return true;
  }
  ts_error(ev->c, loc, "'%s' object does not support item assignment", ev_type_name(base));
  return false;
}

/* Does one of a tuple target's items store to memory (a buffer element, a T.alloc_var)? */
static bool targets_store(Env *env, const AstNode *t) {
  for (int i = 0; i < t->items.n; i++) {
    const AstNode *x = t->items.items[i];
    if (x->kind == AST_SUBSCRIPT) return true;
    if (x->kind == AST_NAME) {
      Value *cur = strmap_get(&env->vars, x->id);
      if (cur && cur->kind == V_BUFFER && cur->u.buf->scope == IR_SCOPE_VAR) return true;
    }
  }
  return false;
}

/* `a[0], a[1] = a[1], a[0]`: Python evaluates every value before the first store, so in a
 * kernel each IR value that may read memory is bound to a LET first when the targets store;
 * otherwise the second store would read what the first one wrote (a swap would copy). */
static void snapshot_ir_items(Eval *ev, Env *env, const AstNode *t, ValList *items, SrcLoc loc) {
  if (!ev->block || items->n < 2 || !targets_store(env, t)) return;
  for (int i = 0; i < items->n; i++) {
    Value *v = items->items[i];
    if (!v || v->kind != V_EXPR) continue;
    IrExpr *e = v->u.expr;
    if (e->kind == IR_INT || e->kind == IR_FLOAT || e->kind == IR_VAR || e->kind == IR_STR) continue;
    IrVar *var = ir_var(ev->c, "unpacked", e->dtype, IR_VAR_LET, loc);
    var->let_value = e;
    ev_define_var(ev, var);
    ev_emit(ev, ir_let(ev->c, var, e, loc));
    items->items[i] = ev_expr(ev, ir_varref(ev->c, var, loc));
  }
}

/* Binds `v` to an assignment target: a name, a (starred) tuple or list of targets, a buffer
 * element (a store) or a dict/list item.  A failed value leaves the targets poison. */
bool ev_assign(Eval *ev, Env *env, const AstNode *t, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_POISON) {
    /* keep names defined so one error does not cascade */
    if (t->kind == AST_NAME) ev_env_set(ev, env, t->id, ev->poison);
    else if (t->kind == AST_STARRED && t->value) ev_assign(ev, env, t->value, NULL, loc);
    else if (t->kind == AST_TUPLE || t->kind == AST_LIST)
      for (int i = 0; i < t->items.n; i++) ev_assign(ev, env, t->items.items[i], NULL, loc);
    return false;
  }
  switch (t->kind) {
  case AST_NAME: return assign_name(ev, env, t->id, v, t->loc);
  case AST_TUPLE:
  case AST_LIST: {
    ValList items = {0};
    if (v->kind == V_EXPR) {
      ts_error(ev->c, t->loc, "cannot unpack an IR expression");
      return false;
    }
    if (!ev_iter_items(ev, v, &items, t->loc)) {
      ev_assign(ev, env, t, NULL, loc); /* targets become silent poison: no cascade */
      return false;
    }
    /* `a, *rest = xs`: one starred target takes the middle as a list */
    int star = -1;
    for (int i = 0; i < t->items.n; i++)
      if (t->items.items[i]->kind == AST_STARRED) star = star < 0 ? i : -2;
    int fixed = t->items.n - (star >= 0);
    if (star == -2 || (star < 0 && items.n != t->items.n) || (star >= 0 && items.n < fixed)) {
      if (star == -2) ts_error(ev->c, t->loc, "multiple starred expressions in assignment");
      else ts_error(ev->c, t->loc, "cannot unpack %d values into %d targets", items.n, t->items.n);
      ev_assign(ev, env, t, NULL, loc);
      return false;
    }
    snapshot_ir_items(ev, env, t, &items, t->loc);
    bool ok = true;
    for (int i = 0, k = 0; i < t->items.n; i++) {
      if (i == star) {
        Value *rest = ev_new(ev, V_LIST);
        for (int n = items.n - fixed; n > 0; n--) vl_push(ev, &rest->u.seq, items.items[k++]);
        ok &= ev_assign(ev, env, t->items.items[i]->value, rest, loc);
        continue;
      }
      ok &= ev_assign(ev, env, t->items.items[i], items.items[k++], loc);
    }
    return ok;
  }
  case AST_SUBSCRIPT: {
    Value *base = eval_raw(ev, env, t->value);
    if (!base) return false;
    if (base->kind == V_BUFFER) {
      BufIndex bi;
      if (!eval_buf_index(ev, env, base->u.buf, t->index, &bi, t->loc)) return false;
      return store_buffer(ev, base->u.buf, &bi, v, t->loc);
    }
    return py_setitem(ev, env, base, t->index, v, t->loc);
  }
  case AST_ATTRIBUTE: {
    Value *base = eval_raw(ev, env, t->value);
    if (!base) return false;
    if (base->kind == V_INSTANCE || base->kind == V_CLASS) return ev_object_setattr(ev, base, t->id, v, t->loc);
    ts_error(ev->c, t->loc, "cannot set attribute '%s' of a %s", t->id, ev_type_name(base));
    return false;
  }
  case AST_STARRED: ts_error(ev->c, t->loc, "starred assignment targets are not supported"); return false;
  default: break;
  }
  ts_error(ev->c, t->loc, "cannot assign to %s", ast_kind_names[t->kind]);
  return false;
}

/* `x += v`, `A[i] += v`, `d[k] += v`: read, operate, store back (a list extends in place). */
bool ev_exec_augassign(Eval *ev, Env *env, const AstNode *s) {
  const AstNode *t = s->target;
  Value *rhs = ev_eval(ev, env, s->value);
  if (!rhs) return false;
  if (t->kind == AST_NAME) {
    Value *cur = eval_name(ev, env, t);
    if (!cur) return false;
    if (cur->kind == V_BUFFER && cur->u.buf->scope == IR_SCOPE_VAR) {
      Value *nv = ev_binop(ev, s->op, ev_expr(ev, ev_load_var(ev, cur->u.buf, t->loc)), rhs, s->loc);
      return nv && assign_name(ev, env, t->id, nv, s->loc);
    }
    if (cur->kind == V_LIST && rhs->kind == V_LIST && s->op == AOP_ADD) { /* list += list extends in place */
      for (int i = 0; i < rhs->u.seq.n; i++) vl_push(ev, &cur->u.seq, rhs->u.seq.items[i]);
      return true;
    }
    Value *nv = ev_binop(ev, s->op, cur, rhs, s->loc);
    if (!nv) return false;
    /* Rebinding an IR value: a fresh LET (TileLang warns; values are immutable). */
    if (!strmap_get(&env->vars, t->id)) {
      /* name from an outer scope: Python would make it local; keep it local too */
    }
    return assign_name(ev, env, t->id, nv, s->loc);
  }
  if (t->kind == AST_SUBSCRIPT) {
    Value *base = eval_raw(ev, env, t->value);
    if (!base) return false;
    if (base->kind == V_BUFFER) {
      BufIndex bi;
      if (!eval_buf_index(ev, env, base->u.buf, t->index, &bi, t->loc)) return false;
      if (bi.any_slice || bi.lanes) {
        ts_error(ev->c, t->loc, "augmented assignment to a buffer slice is not supported");
        return false;
      }
      Value *cur = ev_expr(ev, ir_load(ev->c, base->u.buf, bi.idx, bi.n, t->loc));
      Value *nv = ev_binop(ev, s->op, cur, rhs, s->loc);
      return nv && store_buffer(ev, base->u.buf, &bi, nv, s->loc);
    }
    Value *cur = py_subscript(ev, env, base, t->index, t->loc);
    Value *nv = cur ? ev_binop(ev, s->op, cur, rhs, s->loc) : NULL;
    return nv && py_setitem(ev, env, base, t->index, nv, t->loc);
  }
  ts_error(ev->c, t->loc, "unsupported target of augmented assignment");
  return false;
}

