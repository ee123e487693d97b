/* value.c — the values of the staging interpreter (value.h): constructors, type names and
 * repr, conversions to IR, dtypes and ints, Python truth, equality, iteration, environments,
 * and the limits every evaluation step checks.
 *
 *   value.c  <-  operators.c, stage.c  <-  builtin handlers  <-  eval_expr.c / eval_stmt.c
 *
 * Nothing here evaluates syntax: this is the value interface every other part of the
 * evaluator, the builtin handlers included, is written against. */
#include <stdio.h>
#include <string.h>

#include "value.h"

/* ---- values ----------------------------------------------------------------------- */
Value *ev_new(Eval *ev, ValKind k) {
  Value *v = ARENA_NEW(ev->a, Value);
  v->kind = k;
  return v;
}
Value *ev_int(Eval *ev, int64_t i) {
  Value *v = ev_new(ev, V_INT);
  v->u.i = i;
  return v;
}
Value *ev_float(Eval *ev, double f) {
  Value *v = ev_new(ev, V_FLOAT);
  v->u.f = f;
  return v;
}
Value *ev_bool(Eval *ev, bool b) { return b ? ev->vtrue : ev->vfalse; }
Value *ev_str(Eval *ev, const char *s) {
  Value *v = ev_new(ev, V_STR);
  v->u.str.s = s;
  v->u.str.n = strlen(s);
  return v;
}
Value *ev_expr(Eval *ev, IrExpr *e) {
  if (!e) return NULL;
  Value *v = ev_new(ev, V_EXPR);
  v->u.expr = e;
  return v;
}
/* The memory limit: true when `more` bytes still fit in the arena's budget.  The first
 * failure is reported at `loc` (or, without a location, at the statement being run),
 * later ones are silent and make every loop and call stop (see step). */
bool ev_memory_ok(Eval *ev, int64_t more, SrcLoc loc) {
  if (!ev->out_of_memory && more >= 0 && (int64_t)arena_bytes(ev->a) <= ev->limit_bytes - more) return true;
  if (!ev->out_of_memory) {
    ev->out_of_memory = true;
    ts_error(ev->c, loc.line ? loc : ev->stmt_loc, "evaluation memory limit (%lld MB) exceeded",
             (long long)(ev->limit_bytes >> 20));
  }
  return false;
}

void vl_push(Eval *ev, ValList *l, Value *v) {
  if (l->n == l->cap) {
    /* A list growing past the memory limit (list(range(10**10))) stops growing: the error
     * is reported and counted (ev_memory_ok), so the truncated list never reaches code.
     * Small lists always grow, so the error is not followed by bogus ones about them. */
    if (l->cap >= 4096 && !ev_memory_ok(ev, (int64_t)l->cap * 2 * (int64_t)sizeof(Value *), SRCLOC_NONE)) return;
    int cap = l->cap ? l->cap * 2 : 4;
    Value **items = ARENA_ARRAY(ev->a, Value *, cap);
    if (l->n) memcpy(items, l->items, sizeof(Value *) * (size_t)l->n);
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = v;
}
Value *ev_tuple(Eval *ev, Value **items, int n) {
  Value *v = ev_new(ev, V_TUPLE);
  for (int i = 0; i < n; i++) vl_push(ev, &v->u.seq, items[i]);
  return v;
}
Value *ev_opaque(Eval *ev, const char *what) {
  Value *v = ev_new(ev, V_OPAQUE);
  v->u.opaque.what = what;
  return v;
}

HostFrame ev_host_enter(Eval *ev) {
  HostFrame f = {ev->block, ev->scope, ev->kernel, ev->staged, ev->loop};
  ev->block = NULL, ev->scope = NULL, ev->kernel = NULL, ev->staged = false, ev->loop = NULL;
  return f;
}

void ev_host_leave(Eval *ev, HostFrame f) {
  ev->block = f.block, ev->scope = f.scope, ev->kernel = f.kernel, ev->staged = f.staged, ev->loop = f.loop;
}

const char *ev_class_name(const Value *v) {
  return v->kind == V_CLASS ? v->u.cls->name : v->kind == V_INSTANCE ? v->u.obj.cls->name : "?";
}

const char *ev_type_name(const Value *v) {
  switch (v->kind) {
  case V_POISON: return "<error>";
  case V_NONE: return "NoneType";
  case V_BOOL: return "bool";
  case V_INT: return "int";
  case V_FLOAT: return "float";
  case V_STR: return "str";
  case V_TUPLE: return "tuple";
  case V_LIST: return "list";
  case V_DICT: return "dict";
  case V_FUNC: return v->u.fn.flavor == FN_PRIM ? "prim_func" : v->u.fn.flavor == FN_MACRO ? "macro" : "function";
  case V_BUILTIN: return "builtin function";
  case V_MODULE: return "module";
  case V_DTYPE: return "dtype";
  case V_TENSORTYPE: return "T.Tensor type";
  case V_BUFFER: return "buffer";
  case V_REGION: return "buffer region";
  case V_EXPR: return "IR expression";
  case V_FRAME: return "loop frame";
  case V_KERNEL: return "T.Kernel frame";
  case V_WS: return "T.ws frame";
  case V_NULLCTX: return "nullcontext";
  case V_LAYOUT: return "T.Layout";
  case V_COMM_REDUCER: return "T.comm_reducer";
  case V_REDUCE_SCOPE: return "T.attr reduce_scope frame";
  case V_HOST_TENSOR: return "torch.Tensor";
  case V_CLASS: return "type";
  case V_INSTANCE: return ev_class_name(v);
  case V_METHOD: return "method";
  case V_OPAQUE: return "opaque object";
  }
  return "?";
}

/* float -> int64 without undefined behaviour for NaN / out-of-range values. */
int64_t ev_f2i(double x) {
  if (x != x) return 0;
  if (x >= 9.2233720368547758e18) return INT64_MAX;
  if (x <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)x;
}

bool ev_is_num(const Value *v) { return v && (v->kind == V_BOOL || v->kind == V_INT || v->kind == V_FLOAT); }
double ev_num_f(const Value *v) {
  return v->kind == V_FLOAT ? v->u.f : v->kind == V_INT ? (double)v->u.i : (double)v->u.b;
}
int64_t ev_num_i(const Value *v) { return v->kind == V_INT ? v->u.i : (int64_t)v->u.b; }

/* Self-containing lists (a.append(a)) and DAGs that double at each level must not recurse
 * forever or build gigabytes: past this depth a container prints as [...] and past this
 * length the text is cut with "...". */
enum { REPR_MAX_DEPTH = 64, REPR_MAX_LEN = 1 << 20 };

static void repr_rec(StrBuf *sb, const Value *v, bool quote, int depth);
void ev_repr_into(StrBuf *sb, const Value *v, bool quote) { repr_rec(sb, v, quote, 0); }

/* repr (quote: strings in quotes) or str of v, into sb. */
static void repr_rec(StrBuf *sb, const Value *v, bool quote, int depth) {
  if (sb->len > REPR_MAX_LEN) return;
  if (depth > REPR_MAX_DEPTH && (v->kind == V_TUPLE || v->kind == V_LIST || v->kind == V_DICT)) {
    sb_append(sb, v->kind == V_TUPLE ? "(...)" : v->kind == V_LIST ? "[...]" : "{...}");
    return;
  }
  switch (v->kind) {
  case V_NONE: sb_append(sb, "None"); break;
  case V_BOOL: sb_append(sb, v->u.b ? "True" : "False"); break;
  case V_INT: sb_printf(sb, "%lld", (long long)v->u.i); break;
  case V_FLOAT: {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.17g", v->u.f);
    if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0"); /* Python prints 2.0, not 2 */
    sb_append(sb, tmp);
    break;
  }
  case V_STR:
    if (quote) sb_putc(sb, '\'');
    sb_appendn(sb, v->u.str.s, v->u.str.n);
    if (quote) sb_putc(sb, '\'');
    break;
  case V_TUPLE:
  case V_LIST:
    sb_putc(sb, v->kind == V_TUPLE ? '(' : '[');
    for (int i = 0; i < v->u.seq.n; i++) {
      if (i) sb_append(sb, ", ");
      repr_rec(sb, v->u.seq.items[i], true, depth + 1);
    }
    if (v->kind == V_TUPLE && v->u.seq.n == 1) sb_putc(sb, ',');
    sb_putc(sb, v->kind == V_TUPLE ? ')' : ']');
    break;
  case V_DICT:
    sb_putc(sb, '{');
    for (int i = 0; i < v->u.dict.keys.n; i++) {
      if (i) sb_append(sb, ", ");
      repr_rec(sb, v->u.dict.keys.items[i], true, depth + 1);
      sb_append(sb, ": ");
      repr_rec(sb, v->u.dict.vals.items[i], true, depth + 1);
    }
    sb_putc(sb, '}');
    break;
  case V_DTYPE: sb_append(sb, dtype_name(v->u.dtype)); break;
  case V_BUFFER: sb_append(sb, v->u.buf->name); break;
  case V_EXPR: ir_print_expr(sb, v->u.expr); break;
  case V_FUNC: sb_printf(sb, "<function %s>", v->u.fn.def->kind == AST_LAMBDA ? "<lambda>" : v->u.fn.def->id); break;
  case V_BUILTIN: sb_printf(sb, "<built-in %s>", v->u.bi.name); break;
  default: sb_printf(sb, "<%s>", ev_type_name(v)); break;
  }
}

char *ev_repr(Eval *ev, const Value *v) {
  StrBuf sb = {0};
  ev_repr_into(&sb, v, true);
  if (sb.len > REPR_MAX_LEN) sb_append(&sb, "...");
  char *s = arena_strdup(ev->a, sb_str(&sb));
  sb_free(&sb);
  return s;
}
char *ev_strval(Eval *ev, const Value *v) {
  StrBuf sb = {0};
  ev_repr_into(&sb, v, false);
  if (sb.len > REPR_MAX_LEN) sb_append(&sb, "...");
  char *s = arena_strdup(ev->a, sb_str(&sb));
  sb_free(&sb);
  return s;
}

/* An opaque value (unknown import, unsupported construct) is an error only when used. */
Value *ev_use_opaque(Eval *ev, Value *v, SrcLoc loc) {
  ts_error(ev->c, loc, "%s", v->u.opaque.what);
  return NULL;
}

/* ---- conversions -------------------------------------------------------------------- */
IrExpr *ev_load_var(Eval *ev, IrBuffer *b, SrcLoc loc) {
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, 1);
  idx[0] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
  return ir_load(ev->c, b, idx, 1, loc);
}

/* A value as IR: numbers become constants (of `like`'s type when given), an alloc_var its load. */
IrExpr *ev_to_ir(Eval *ev, Value *v, const IrExpr *like, SrcLoc loc) {
  if (!v || v->kind == V_POISON) return NULL;
  ts_dtype lt = like ? like->dtype : TS_DTYPE_VOID;
  switch (v->kind) {
  case V_EXPR: return v->u.expr;
  case V_BOOL: return ir_int(ev->c, v->u.b, TS_DTYPE_BOOL, loc);
  case V_INT:
    if (like && dtype_is_float(lt)) return ir_float(ev->c, (double)v->u.i, lt, loc);
    if (like && dtype_is_int(lt)) return ir_int(ev->c, v->u.i, lt, loc);
    return ir_int(ev->c, v->u.i, (v->u.i >= INT32_MIN && v->u.i <= INT32_MAX) ? TS_DTYPE_INT32 : TS_DTYPE_INT64, loc);
  case V_FLOAT:
    return ir_float(ev->c, v->u.f, like && dtype_is_float(lt) ? lt : TS_DTYPE_FLOAT32, loc);
  case V_BUFFER:
    if (v->u.buf->scope == IR_SCOPE_VAR) return ev_load_var(ev, v->u.buf, loc);
    break;
  case V_OPAQUE: ev_use_opaque(ev, v, loc); return NULL;
  default: break;
  }
  ts_error(ev->c, loc, "expected a number or an IR expression, got %s", ev_type_name(v));
  return NULL;
}

IrExpr *ev_to_bool_ir(Eval *ev, IrExpr *e, SrcLoc loc) {
  if (!e || e->dtype == TS_DTYPE_BOOL) return e;
  IrExpr *zero = dtype_is_float(e->dtype) ? ir_float(ev->c, 0, e->dtype, loc) : ir_int(ev->c, 0, e->dtype, loc);
  return ir_binary(ev->c, IR_NE, e, zero, loc);
}

/* A dtype or its name ("float16", and the C names float, half, int, double, uint). */
bool ev_to_dtype(Eval *ev, Value *v, ts_dtype *out, SrcLoc loc) {
  if (!v || v->kind == V_POISON) return false;
  if (v->kind == V_DTYPE) {
    *out = v->u.dtype;
    return true;
  }
  if (v->kind == V_STR) {
    const char *s = v->u.str.s;
    if (!strcmp(s, "float")) s = "float32";
    else if (!strcmp(s, "half")) s = "float16";
    else if (!strcmp(s, "int")) s = "int32";
    else if (!strcmp(s, "double")) s = "float64";
    else if (!strcmp(s, "uint")) s = "uint32";
    if (dtype_parse(s, out)) return true;
    ts_error(ev->c, loc, "unknown dtype '%s'", v->u.str.s);
    return false;
  }
  if (v->kind == V_OPAQUE) {
    ev_use_opaque(ev, v, loc);
    return false;
  }
  if (ev_is_ptr_dtype(v)) {
    /* T.Tensor([n], T.ptr): a tensor of device addresses, which torch passes as int64
     * (data_ptr()s); T.make_tensor turns an element back into a typed tensor. */
    *out = TS_DTYPE_INT64;
    return true;
  }
  ts_error(ev->c, loc, "expected a dtype, got %s", ev_type_name(v));
  return false;
}

/* T.ptr, a device address: the dtype of a `p: T.ptr` parameter (a scalar the caller passes as
 * a tensor, whose data pointer goes, or as an int) and of T.Tensor([n], T.ptr) elements. */
bool ev_is_ptr_dtype(const Value *v) {
  return v && v->kind == V_BUILTIN && v->u.bi.name && !v->u.bi.self && !strcmp(v->u.bi.name, "T.ptr");
}

/* A Python int or bool, or a constant integer IR expression. */
bool ev_to_int(Eval *ev, Value *v, int64_t *out, SrcLoc loc) {
  if (!v || v->kind == V_POISON) return false;
  if (v->kind == V_INT || v->kind == V_BOOL) {
    *out = ev_num_i(v);
    return true;
  }
  if (v->kind == V_EXPR && ir_is_const_int(v->u.expr, out)) return true;
  ts_error(ev->c, loc, "expected a constant integer, got %s", ev_type_name(v));
  return false;
}

/* Python truth value: 1/0; -1 = an IR value (stage it); -2 = error already reported. */
int ev_truth(Eval *ev, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_POISON) return -2;
  switch (v->kind) {
  case V_NONE: return 0;
  case V_BOOL: return v->u.b;
  case V_INT: return v->u.i != 0;
  case V_FLOAT: return v->u.f != 0;
  case V_STR: return v->u.str.n != 0;
  case V_TUPLE:
  case V_LIST: return v->u.seq.n != 0;
  case V_DICT: return v->u.dict.keys.n != 0;
  case V_EXPR: {
    int64_t k;
    if (ir_is_const_int(v->u.expr, &k)) return k != 0;
    if (v->u.expr->kind == IR_FLOAT) return v->u.expr->u.fval != 0;
    return -1;
  }
  case V_BUFFER: return v->u.buf->scope == IR_SCOPE_VAR ? -1 : 1;
  case V_OPAQUE: ev_use_opaque(ev, v, loc); return -2;
  case V_HOST_TENSOR: /* a shape-only tensor (host_tensor.c): its data exists only when the program runs */
    ts_error(ev->c, loc, "the truth value of a torch tensor made while building a kernel is unknown (its data exists "
             "when the program runs)");
    return -2;
  default: return 1;
  }
}

/* ---- environments --------------------------------------------------------------------- */
Env *ev_env_new(Eval *ev, Env *parent) {
  Env *e = ARENA_NEW(ev->a, Env);
  e->parent = parent;
  return e;
}

/* Binding a module-level name also drops its pending lazy assignment (eval_module.c). */
void ev_env_set(Eval *ev, Env *env, const char *name, Value *v) {
  strmap_put(ev->a, &env->vars, name, v ? v : ev->poison);
  if (env->module && strmap_get(&env->module->lazy, name)) strmap_put(ev->a, &env->module->lazy, name, NULL);
}

/* ---- dtypes, namespaces and modules ----------------------------------------------------- */
Value *ev_dtype(Eval *ev, ts_dtype t) {
  Value *v = ev_new(ev, V_DTYPE);
  v->u.dtype = t;
  return v;
}

/* A native namespace (T, tilelang, math ...): its attributes are registry rows. */
Value *ev_namespace(Eval *ev, ModKind mod) {
  Value *v = ev_new(ev, V_MODULE);
  v->u.mod.mod = mod;
  return v;
}

/* A module with its own globals (a file's, or a namespace a builtin builds); stub_missing:
 * a name it lacks is a stub, not an AttributeError (eval_module.c). */
PyModule *ev_module_new(Eval *ev, const char *name, bool stub_missing) {
  PyModule *m = ARENA_NEW(ev->a, PyModule);
  m->name = name;
  m->stub_missing = stub_missing;
  m->globals = ev_env_new(ev, ev->builtins);
  m->globals->module = m;
  return m;
}

Value *ev_module_value(Eval *ev, PyModule *m) {
  Value *v = ev_new(ev, V_MODULE);
  v->u.mod.mod = MOD_PY;
  v->u.mod.py = m;
  return v;
}

/* ---- equality ---------------------------------------------------------------------------- */
static bool dtype_eq_str(ts_dtype t, const Value *s) {
  ts_dtype u;
  const char *name = s->u.str.s;
  if (!strcmp(name, dtype_name(t))) return true;
  return dtype_parse(name, &u) && u == t;
}

/* Structural equality.  A self-containing list (a.append(a)) or a DAG that doubles at each
 * level would recurse forever or for 2^n steps: past a depth or a visit budget, containers
 * compare by identity (Python raises RecursionError there; either way no program that
 * compiles depends on it). */
enum { EQ_MAX_DEPTH = 64, EQ_MAX_VISITS = 1 << 20 };
static bool values_equal_rec(const Value *a, const Value *b, int depth, int64_t *visits);

/* Python == on two Python values; a dtype equals its name. */
bool ev_values_equal(const Value *a, const Value *b) {
  int64_t visits = EQ_MAX_VISITS;
  return values_equal_rec(a, b, 0, &visits);
}

static bool values_equal_rec(const Value *a, const Value *b, int depth, int64_t *visits) {
  if (--*visits < 0 || depth > EQ_MAX_DEPTH) return a == b;
  if (ev_is_num(a) && ev_is_num(b)) {
    if (a->kind == V_FLOAT || b->kind == V_FLOAT) return ev_num_f(a) == ev_num_f(b);
    return ev_num_i(a) == ev_num_i(b);
  }
  if (a->kind == V_DTYPE && b->kind == V_DTYPE) return a->u.dtype == b->u.dtype;
  if (a->kind == V_DTYPE && b->kind == V_STR) return dtype_eq_str(a->u.dtype, b);
  if (a->kind == V_STR && b->kind == V_DTYPE) return dtype_eq_str(b->u.dtype, a);
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case V_NONE: return true;
  case V_STR: return a->u.str.n == b->u.str.n && !memcmp(a->u.str.s, b->u.str.s, a->u.str.n);
  case V_TUPLE:
  case V_LIST:
    if (a->u.seq.n != b->u.seq.n) return false;
    for (int i = 0; i < a->u.seq.n; i++)
      if (!values_equal_rec(a->u.seq.items[i], b->u.seq.items[i], depth + 1, visits)) return false;
    return true;
  case V_BUFFER: return a->u.buf == b->u.buf;
  case V_FUNC: return a->u.fn.def == b->u.fn.def;
  case V_BUILTIN: return a->u.bi.row == b->u.bi.row; /* the same construct (bound methods: whatever object) */
  case V_MODULE: return a->u.mod.mod == b->u.mod.mod && a->u.mod.py == b->u.mod.py;
  default: return a == b;
  }
}
/* ---- evaluation limits ------------------------------------------------------------------ */
/* One step of evaluation (a call, a loop iteration): false once the step or memory limit is
 * exceeded (reported once), so runaway loops and recursion end in a diagnostic. */
bool ev_step(Eval *ev, SrcLoc loc) {
  if (!ev_memory_ok(ev, 0, loc)) return false;
  if (++ev->steps <= ev->limit_steps) return true;
  if (ev->steps == ev->limit_steps + 1)
    ts_error(ev->c, loc, "evaluation step limit (%lld) exceeded", (long long)ev->limit_steps);
  return false;
}
/* ---- iteration --------------------------------------------------------------------------- */
/* The items of a Python iterable (a dtype iterates as its name; a range-like loop frame with
 * constant bounds as its ints). */
bool ev_iter_items(Eval *ev, Value *it, ValList *out, SrcLoc loc) {
  if (!it || it->kind == V_POISON) return false;
  switch (it->kind) {
  case V_TUPLE:
  case V_LIST:
    for (int i = 0; i < it->u.seq.n; i++) vl_push(ev, out, it->u.seq.items[i]);
    return true;
  case V_DICT:
    for (int i = 0; i < it->u.dict.keys.n; i++) vl_push(ev, out, it->u.dict.keys.items[i]);
    return true;
  case V_STR:
    for (size_t i = 0; i < it->u.str.n; i++) vl_push(ev, out, ev_str(ev, arena_strndup(ev->a, it->u.str.s + i, 1)));
    return true;
  case V_DTYPE: /* a dtype is also its name (TileLang's dtypes are str subclasses) */
    return ev_iter_items(ev, ev_str(ev, dtype_name(it->u.dtype)), out, loc);
  case V_FRAME: {
    LoopFrame *f = it->u.frame;
    if (f->py_ok) {
      for (int64_t i = f->py_start; f->py_step > 0 ? i < f->py_stop : i > f->py_stop; i += f->py_step) {
        if (!ev_step(ev, loc)) return false;
        vl_push(ev, out, ev_int(ev, i));
      }
      return true;
    }
    ts_error(ev->c, loc, "this loop can only be used inside a @T.prim_func kernel (its bounds are not constants)");
    return false;
  }
  case V_OPAQUE: ev_use_opaque(ev, it, loc); return false;
  default: break;
  }
  ts_error(ev->c, loc, "'%s' object is not iterable", ev_type_name(it));
  return false;
}
