/* builtins_python.c — the Python builtins host code calls while building a kernel (min, len,
 * range is in builtins_loops.c, ...), the methods of str, list, dict and int, and the math
 * and itertools modules.
 *
 *   registry.c  ->  here  ->  Python values (IR where a builtin also works on IR: min, abs, int)
 *
 * Only what kernel factories use: they compute tile sizes, build config lists and format
 * names.  Errors are worded as CPython's, without the signature (BI_TERSE). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

/* ---- Python builtins ---------------------------------------------------------------------------- */
/* min(*values) / max(*values), or of one iterable: bi->arg is IR_MIN / IR_MAX. */
static Value *py_minmax(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  ValList items = {0};
  if (a->nkw) {
    ts_error(ev->c, loc, "%s() keyword arguments are not supported", bi->arg == IR_MIN ? "min" : "max");
    return NULL;
  }
  if (a->npos == 1) {
    if (!ev_iter_items(ev, a->pos[0], &items, loc)) return NULL;
  } else {
    for (int i = 0; i < a->npos; i++) vl_push(ev, &items, a->pos[i]);
  }
  if (!items.n) {
    ts_error(ev->c, loc, "%s() arg is an empty sequence", bi->arg == IR_MIN ? "min" : "max");
    return NULL;
  }
  Value *acc = items.items[0];
  for (int i = 1; i < items.n && acc; i++) acc = ev_minmax(ev, (IrExprKind)bi->arg, acc, items.items[i], loc);
  return acc;
}

/* abs(x); of IR, the ABS intrinsic. */
static Value *py_abs(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  Value *x = arg[0];
  if (x->kind == V_INT || x->kind == V_BOOL) {
    int64_t i = x->kind == V_INT ? x->u.i : x->u.b;
    return ev_int(ev, i == INT64_MIN ? i : i < 0 ? -i : i);
  }
  if (x->kind == V_FLOAT) return ev_float(ev, fabs(x->u.f));
  IrExpr *e = ev_to_ir(ev, x, NULL, call_loc(a));
  return e ? ev_expr(ev, ir_call(ev->c, IRI_ABS, e->dtype, &e, 1, call_loc(a))) : NULL;
}

/* int(x): numbers, numeric strings; IR folds when constant, else casts to int32. */
static Value *py_int(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
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
    ts_error(ev->c, call_loc(a), "invalid literal for int(): '%s'", x->u.str.s);
    return NULL;
  }
  default: break;
  }
  IrExpr *e = ev_to_ir(ev, x, NULL, call_loc(a));
  if (!e) return NULL;
  int64_t k;
  if (ir_is_const_int(e, &k)) return ev_int(ev, k);
  return ev_expr(ev, ir_cast(ev->c, TS_DTYPE_INT32, e, call_loc(a)));
}

/* float(x): numbers, numeric strings and "inf"; IR folds when constant, else casts to float32. */
static Value *py_float(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  Value *x = arg[0];
  if (!x) return ev_float(ev, 0);
  if (ev_is_num(x)) return ev_float(ev, x->kind == V_FLOAT ? x->u.f : (double)(x->kind == V_INT ? x->u.i : x->u.b));
  if (x->kind == V_STR) {
    char *end;
    double v = strtod(x->u.str.s, &end);
    if (*x->u.str.s && !*end) return ev_float(ev, v);
    if (!strcmp(x->u.str.s, "inf")) return ev_float(ev, INFINITY);
    if (!strcmp(x->u.str.s, "-inf")) return ev_float(ev, -INFINITY);
    ts_error(ev->c, call_loc(a), "could not convert string to float: '%s'", x->u.str.s);
    return NULL;
  }
  IrExpr *e = ev_to_ir(ev, x, NULL, call_loc(a));
  if (!e) return NULL;
  if (e->kind == IR_FLOAT) return ev_float(ev, e->u.fval);
  return ev_expr(ev, ir_cast(ev->c, TS_DTYPE_FLOAT32, e, call_loc(a)));
}

/* bool(x): Python truth; of IR, x != 0. */
static Value *py_bool(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  if (!arg[0]) return ev_bool(ev, false);
  int t = ev_truth(ev, arg[0], call_loc(a));
  if (t == -2) return NULL;
  if (t == -1) return ev_expr(ev, ev_to_bool_ir(ev, ev_to_ir(ev, arg[0], NULL, call_loc(a)), call_loc(a)));
  return ev_bool(ev, t);
}

static Value *py_str(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)bi;
  if (!arg[0]) return ev_str(ev, "");
  if (arg[0]->kind == V_STR) return arg[0];
  char *r = ev_repr(ev, arg[0]);
  return ev_str(ev, r);
}

/* len(x): also of a range with constant bounds. */
static Value *py_len(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  Value *x = arg[0];
  switch (x->kind) {
  case V_STR: return ev_int(ev, (int64_t)x->u.str.n);
  case V_TUPLE:
  case V_LIST: return ev_int(ev, x->u.seq.n);
  case V_DICT: return ev_int(ev, x->u.dict.keys.n);
  case V_HOST_TENSOR: /* a torch tensor's first dimension */
    if (x->u.tt.shape->u.seq.n) return x->u.tt.shape->u.seq.items[0];
    ts_error(ev->c, call_loc(a), "len() of a 0-d tensor");
    return ev->poison;
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
  ts_error(ev->c, call_loc(a), "object of type '%s' has no len()", ev_type_name(x));
  return NULL;
}

/* tuple(iterable) / list(iterable): bi->arg is the ValKind. */
static Value *py_seq(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  Value *v = ev_new(ev, (ValKind)bi->arg);
  if (arg[0] && !ev_iter_items(ev, arg[0], &v->u.seq, call_loc(a))) return NULL;
  return v;
}

/* dict(mapping), dict(pairs), dict(**kw) */
static Value *py_dict(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  Value *d = ev_new(ev, V_DICT);
  if (a->npos == 1 && a->pos[0]->kind == V_DICT) {
    for (int i = 0; i < a->pos[0]->u.dict.keys.n; i++) {
      vl_push(ev, &d->u.dict.keys, a->pos[0]->u.dict.keys.items[i]);
      vl_push(ev, &d->u.dict.vals, a->pos[0]->u.dict.vals.items[i]);
    }
  } else if (a->npos == 1) { /* dict(zip(keys, values)): an iterable of pairs */
    ValList items = {0};
    if (!ev_iter_items(ev, a->pos[0], &items, call_loc(a))) return NULL;
    for (int i = 0; i < items.n; i++) {
      Value *p = items.items[i];
      if ((p->kind != V_TUPLE && p->kind != V_LIST) || p->u.seq.n != 2) {
        ts_error(ev->c, call_loc(a), "dict(): element %d of the sequence is not a pair", i);
        return NULL;
      }
      vl_push(ev, &d->u.dict.keys, p->u.seq.items[0]);
      vl_push(ev, &d->u.dict.vals, p->u.seq.items[1]);
    }
  } else if (a->npos) {
    ts_error(ev->c, call_loc(a), "dict() takes at most 1 positional argument (%d given)", a->npos);
    return NULL;
  }
  for (int i = 0; i < a->nkw; i++) {
    vl_push(ev, &d->u.dict.keys, ev_str(ev, a->kw[i]));
    vl_push(ev, &d->u.dict.vals, a->kwv[i]);
  }
  return d;
}

/* print(...) in a factory: host output is dropped. */
static Value *py_print(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)arg, (void)bi;
  return ev->none;
}

/* round(x, ndigits=None): half to even, as Python. */
static Value *py_round(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  if (!ev_is_num(arg[0])) {
    ts_error(ev->c, call_loc(a), "round() expects a number");
    return NULL;
  }
  double x = arg[0]->kind == V_FLOAT ? arg[0]->u.f : (double)(arg[0]->kind == V_INT ? arg[0]->u.i : arg[0]->u.b);
  if (arg[1] && arg[1]->kind == V_INT) {
    double p = pow(10.0, (double)arg[1]->u.i);
    return ev_float(ev, nearbyint(x * p) / p);
  }
  return ev_int(ev, ev_f2i(nearbyint(x)));
}

static Value *py_sum(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  ValList items = {0};
  if (!ev_iter_items(ev, arg[0], &items, call_loc(a))) return NULL;
  Value *acc = arg[1] ? arg[1] : ev_int(ev, 0);
  for (int i = 0; i < items.n && acc; i++) acc = ev_binop(ev, AOP_ADD, acc, items.items[i], call_loc(a));
  return acc;
}

static Value *py_enumerate(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  ValList items = {0};
  if (!ev_iter_items(ev, arg[0], &items, call_loc(a))) return NULL;
  int64_t start = arg[1] && arg[1]->kind == V_INT ? arg[1]->u.i : 0;
  Value *out = ev_new(ev, V_LIST);
  for (int i = 0; i < items.n; i++) {
    Value *pair[2] = {ev_int(ev, start + i), items.items[i]};
    vl_push(ev, &out->u.seq, ev_tuple(ev, pair, 2));
  }
  return out;
}

/* zip(*iterables): up to 8, as a list of tuples. */
static Value *py_zip(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  ValList lists[8];
  int n = a->npos, len = -1;
  if (n > 8 || a->nkw) {
    ts_error(ev->c, call_loc(a), "zip() supports at most 8 iterables");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    lists[i] = (ValList){0};
    if (!ev_iter_items(ev, a->pos[i], &lists[i], call_loc(a))) return NULL;
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

/* ValueError(msg) ...: the text `raise` reports ("ValueError: msg"). */
static Value *py_exception(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  const char *name = a->node && a->node->func && a->node->func->id ? a->node->func->id : "Exception";
  const char *msg = a->npos && a->pos[0]->kind == V_STR ? a->pos[0]->u.str.s : a->npos ? ev_repr(ev, a->pos[0]) : "";
  return ev_str(ev, arena_printf(ev->a, "%s: %s", name, msg));
}

/* isinstance(x, T) for one type T: the builtins int, float, bool, str, tuple, list, dict. */
static bool isinstance1(const Value *x, const Value *ty) {
  if (ty->kind != V_BUILTIN) return false;
  BuiltinFn f = ty->u.bi.row->fn;
  if (f == py_int) return x->kind == V_INT || x->kind == V_BOOL;
  if (f == py_float) return x->kind == V_FLOAT;
  if (f == py_bool) return x->kind == V_BOOL;
  if (f == py_str) return x->kind == V_STR;
  if (f == py_seq) return x->kind == (ValKind)ty->u.bi.row->arg;
  if (f == py_dict) return x->kind == V_DICT;
  return false;
}

/* base.name if it exists, else NULL with no diagnostic left behind (getattr's default, hasattr). */
static Value *try_attr(Eval *ev, Value *base, const char *name, SrcLoc loc) {
  Diag *d = &ev->c->diag;
  DiagMark mark = diag_mark(d);
  bool echo = d->echo;
  d->echo = false;
  Value *v = ev->attr(ev, base, name, loc);
  d->echo = echo;
  if (!v || v->kind == V_POISON || d->errors > mark.errors) {
    diag_rewind(d, mark);
    return NULL;
  }
  return v;
}

/* getattr(obj, name[, default]) / hasattr(obj, name) (bi->arg 1). */
static Value *py_getattr(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (arg[1]->kind != V_STR) {
    ts_error(ev->c, loc, "%s(): attribute name must be string, not '%s'", bi->name, ev_type_name(arg[1]));
    return NULL;
  }
  if (bi->arg) return ev_bool(ev, try_attr(ev, arg[0], arg[1]->u.str.s, loc) != NULL);
  if (!arg[2]) return ev->attr(ev, arg[0], arg[1]->u.str.s, loc);
  Value *v = try_attr(ev, arg[0], arg[1]->u.str.s, loc);
  return v ? v : arg[2];
}

static Value *py_isinstance(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)bi;
  Value *ty = arg[1];
  if (ty->kind == V_TUPLE) {
    for (int i = 0; i < ty->u.seq.n; i++)
      if (isinstance1(arg[0], ty->u.seq.items[i])) return ev_bool(ev, true);
    return ev_bool(ev, false);
  }
  if (ty->kind == V_OPAQUE) return ev_bool(ev, false); /* isinstance(x, torch.Tensor) */
  return ev_bool(ev, isinstance1(arg[0], ty));
}

/* itertools.product(*iterables, repeat=1): the cartesian product as a list of tuples (autotune
 * config spaces; product(sizes, repeat=2) is product(sizes, sizes)); the size is bounded by
 * the evaluation step limit through ev_memory_ok. */
static Value *py_product(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  SrcLoc loc = call_loc(a);
  int64_t repeat = 1;
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "repeat")) {
      ts_error(ev->c, loc, "itertools.product() got an unexpected keyword argument '%s'", a->kw[k]);
      return NULL;
    }
    if (!ev_to_int(ev, a->kwv[k], &repeat, loc)) return NULL;
    if (repeat < 0 || repeat > 64) {
      ts_error(ev->c, loc, "itertools.product(): repeat must be between 0 and 64, got %lld", (long long)repeat);
      return NULL;
    }
  }
  ValList *pools = ARENA_ARRAY(ev->a, ValList, a->npos ? a->npos : 1); /* each iterable read once */
  for (int i = 0; i < a->npos; i++)
    if (!ev_iter_items(ev, a->pos[i], &pools[i], loc)) return NULL;
  Value *out = ev_new(ev, V_LIST);
  vl_push(ev, &out->u.seq, ev_new(ev, V_TUPLE));
  for (int i = 0; i < a->npos * repeat; i++) {
    ValList items = pools[i % a->npos];
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

/* ---- methods -------------------------------------------------------------------------------------- */
enum { STARTS, ENDS, SPLIT, JOIN, REPLACE, STRIP, LOWER, UPPER, ISDIGIT }; /* the str methods (bi->arg) */

/* str methods: bi->arg picks one; they check their own arguments. */
static Value *m_str(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  const char *s = a->self->u.str.s;
  Value *x = a->npos > 0 ? a->pos[0] : NULL;
  switch (bi->arg) {
  case STARTS:
  case ENDS: {
    if (!x || x->kind != V_STR) break;
    size_t n = strlen(s), m = x->u.str.n;
    bool r = m <= n && !memcmp(bi->arg == STARTS ? s : s + n - m, x->u.str.s, m);
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
      if (bi->arg == LOWER && *p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
      else if (bi->arg == UPPER && *p >= 'a' && *p <= 'z') *p = (char)(*p - 32);
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

/* list.append(x) (bi->arg 0) / list.extend(iterable) (1) */
static Value *m_list(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  if (bi->arg == 0) { /* append */
    if (a->npos != 1) { ts_error(ev->c, loc, "append() takes exactly one argument"); return NULL; }
    vl_push(ev, &a->self->u.seq, a->pos[0]);
    return ev->none;
  }
  ValList items = {0}; /* extend */
  if (a->npos != 1 || !ev_iter_items(ev, a->pos[0], &items, loc)) return NULL;
  for (int i = 0; i < items.n; i++) vl_push(ev, &a->self->u.seq, items.items[i]);
  return ev->none;
}

/* dict.get / items / keys / values */
static Value *m_dict(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  enum { GET, ITEMS, KEYS, VALUES };
  Value *out;
  switch (bi->arg) {
  case GET: {
    if (a->npos < 1 || a->npos > 2) { ts_error(ev->c, call_loc(a), "get() takes 1 or 2 arguments"); return NULL; }
    for (int i = 0; i < a->self->u.dict.keys.n; i++) {
      Value *k = a->self->u.dict.keys.items[i];
      Value *eq = ev_binop(ev, AOP_EQ, k, a->pos[0], call_loc(a));
      if (eq && eq->kind == V_BOOL && eq->u.b) return a->self->u.dict.vals.items[i];
    }
    return a->npos == 2 ? a->pos[1] : ev->none;
  }
  case ITEMS:
    out = ev_new(ev, V_LIST);
    for (int i = 0; i < a->self->u.dict.keys.n; i++) {
      Value *pair[2] = {a->self->u.dict.keys.items[i], a->self->u.dict.vals.items[i]};
      vl_push(ev, &out->u.seq, ev_tuple(ev, pair, 2));
    }
    return out;
  case KEYS:
  case VALUES:
    out = ev_new(ev, V_LIST);
    for (int i = 0; i < a->self->u.dict.keys.n; i++)
      vl_push(ev, &out->u.seq, bi->arg == KEYS ? a->self->u.dict.keys.items[i] : a->self->u.dict.vals.items[i]);
    return out;
  default: return NULL;
  }
}

/* int.bit_length() */
static Value *m_int_bit_length(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  if (a->npos || a->nkw) {
    ts_error(ev->c, call_loc(a), "int.bit_length() takes no arguments");
    return NULL;
  }
  uint64_t n = a->self->u.i < 0 ? -(uint64_t)a->self->u.i : (uint64_t)a->self->u.i;
  int bits = 0;
  for (; n; n >>= 1) bits++;
  return ev_int(ev, bits);
}

/* ---- math module ---------------------------------------------------------------------------------- */
/* math.sqrt(x) ...: on Python numbers only (bi->arg picks the function). */
static Value *math_fn(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  int want = bi->arg == 6 ? 2 : 1;
  if (a->npos != want || a->nkw) {
    ts_error(ev->c, loc, "math.%s() takes %d argument%s", bi->name, want, want == 1 ? "" : "s");
    return NULL;
  }
  for (int i = 0; i < want; i++)
    if (!ev_is_num(a->pos[i])) {
      ts_error(ev->c, loc, "math.%s() expects Python numbers, got %s", bi->name, ev_type_name(a->pos[i]));
      return NULL;
    }
  double x = a->pos[0]->kind == V_FLOAT ? a->pos[0]->u.f : (double)(a->pos[0]->kind == V_INT ? a->pos[0]->u.i : a->pos[0]->u.b);
  switch (bi->arg) {
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

/* math.pi, math.e, math.inf */
static Value *math_const(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)arg;
  return ev_float(ev, bi->arg == 0 ? M_PI : bi->arg == 1 ? M_E : INFINITY);
}

/* ---- rows -------------------------------------------------------------------------------------- */
static const Builtin python_rows[] = {
    {"min", "*args, **kwargs", py_minmax, IR_MIN, BI_TERSE},
    {"max", "*args, **kwargs", py_minmax, IR_MAX, BI_TERSE},
    {"abs", "x", py_abs, 0, BI_TERSE},
    {"int", "x=0, base=10", py_int, 0, BI_TERSE},
    {"float", "x=0.0", py_float, 0, BI_TERSE},
    {"bool", "x=False", py_bool, 0, BI_TERSE},
    {"str", "x=\"\"", py_str, 0, BI_TERSE},
    {"len", "x", py_len, 0, BI_TERSE},
    {"isinstance", "obj, classinfo", py_isinstance, 0, BI_TERSE},
    {"getattr", "obj, name, default=None", py_getattr, 0, BI_TERSE},
    {"hasattr", "obj, name", py_getattr, 1, BI_TERSE},
    {"tuple", "iterable=()", py_seq, V_TUPLE, BI_TERSE},
    {"list", "iterable=()", py_seq, V_LIST, BI_TERSE},
    {"dict", "*args, **kwargs", py_dict, 0, BI_TERSE},
    {"print", "*args, **kwargs", py_print, 0, BI_TERSE},
    {"round", "x, ndigits=None", py_round, 0, BI_TERSE},
    {"sum", "iterable, start=0", py_sum, 0, BI_TERSE},
    {"enumerate", "iterable, start=0", py_enumerate, 0, BI_TERSE},
    {"zip", "*args, **kwargs", py_zip, 0, BI_TERSE},
    {"ValueError", "*args, **kwargs", py_exception, 0, BI_TERSE},
    {"TypeError", "*args, **kwargs", py_exception, 0, BI_TERSE},
    {"RuntimeError", "*args, **kwargs", py_exception, 0, BI_TERSE},
    {"NotImplementedError", "*args, **kwargs", py_exception, 0, BI_TERSE},
    {"AssertionError", "*args, **kwargs", py_exception, 0, BI_TERSE},
    {"Exception", "*args, **kwargs", py_exception, 0, BI_TERSE},
    {"KeyError", "*args, **kwargs", py_exception, 0, BI_TERSE},
    {"IndexError", "*args, **kwargs", py_exception, 0, BI_TERSE},
};

static const Builtin str_methods[] = {
    {"startswith", "*args, **kwargs", m_str, STARTS, BI_TERSE},
    {"endswith", "*args, **kwargs", m_str, ENDS, BI_TERSE},
    {"split", "*args, **kwargs", m_str, SPLIT, BI_TERSE},
    {"join", "*args, **kwargs", m_str, JOIN, BI_TERSE},
    {"replace", "*args, **kwargs", m_str, REPLACE, BI_TERSE},
    {"strip", "*args, **kwargs", m_str, STRIP, BI_TERSE},
    {"lower", "*args, **kwargs", m_str, LOWER, BI_TERSE},
    {"upper", "*args, **kwargs", m_str, UPPER, BI_TERSE},
    {"isdigit", "*args, **kwargs", m_str, ISDIGIT, BI_TERSE},
};

static const Builtin list_methods[] = {
    {"append", "*args, **kwargs", m_list, 0, BI_TERSE},
    {"extend", "*args, **kwargs", m_list, 1, BI_TERSE},
};

static const Builtin dict_methods[] = {
    {"get", "*args, **kwargs", m_dict, 0, BI_TERSE},
    {"items", "*args, **kwargs", m_dict, 1, BI_TERSE},
    {"keys", "*args, **kwargs", m_dict, 2, BI_TERSE},
    {"values", "*args, **kwargs", m_dict, 3, BI_TERSE},
};

static const Builtin int_methods[] = {
    {"bit_length", "*args, **kwargs", m_int_bit_length, 0, BI_TERSE},
};

static const Builtin math_rows[] = {
    {"sqrt", "*args, **kwargs", math_fn, 0, BI_TERSE},
    {"log", "*args, **kwargs", math_fn, 1, BI_TERSE},
    {"log2", "*args, **kwargs", math_fn, 2, BI_TERSE},
    {"exp", "*args, **kwargs", math_fn, 3, BI_TERSE},
    {"ceil", "*args, **kwargs", math_fn, 4, BI_TERSE},
    {"floor", "*args, **kwargs", math_fn, 5, BI_TERSE},
    {"pow", "*args, **kwargs", math_fn, 6, BI_TERSE},
    {"log10", "*args, **kwargs", math_fn, 7, BI_TERSE},
    {"exp2", "*args, **kwargs", math_fn, 8, BI_TERSE},
    {"pi", NULL, math_const, 0, BI_VALUE},
    {"e", NULL, math_const, 1, BI_VALUE},
    {"inf", NULL, math_const, 2, BI_VALUE},
};

static const Builtin itertools_rows[] = {
    {"product", "*args, **kwargs", py_product, 0, BI_TERSE},
};

const BuiltinTable builtins_python[] = {
    {MOD_BUILTINS, python_rows, TS_ARRAY_LEN(python_rows), NULL},
    {MOD_STR, str_methods, TS_ARRAY_LEN(str_methods), NULL},
    {MOD_LIST, list_methods, TS_ARRAY_LEN(list_methods), NULL},
    {MOD_DICT, dict_methods, TS_ARRAY_LEN(dict_methods), NULL},
    {MOD_INT, int_methods, TS_ARRAY_LEN(int_methods), NULL},
    {MOD_MATH, math_rows, TS_ARRAY_LEN(math_rows), NULL},
    {MOD_ITERTOOLS, itertools_rows, TS_ARRAY_LEN(itertools_rows), NULL},
    BUILTIN_TABLE_END,
};
