/* host_call.c — the fourth way host code reaches a function (DESIGN.md §4): a call of a
 * name the interpreter cannot resolve — from a module that is neither beside the kernel
 * file nor in the prelude, or one the prelude's partial libraries lack — handed to the
 * embedding interpreter when there is one (TsCompiler.host_call, set by
 * ts_context_set_host_call; the `tilelang` package registers CPython).  A top-level function
 * of a sibling helper module that the interpreter fails on (a class, a generator, ...) is
 * called again there, and the interpreter's errors are dropped when that works.
 *
 *   eval_expr.c: ev_call of an opaque stub -> ev_host_call (here)
 *                ev_call of a module-path module's def from host code -> ev_host_first
 *                ev_call of a sibling's def -> ev_host_retry_arm, interpret, ev_host_retry
 *       arguments -> Python literal text (ev_literal_text) -> host_call(module, qualname, args)
 *       result text -> parse_expression -> ev_literal_value -> Value
 *
 * Only plain values cross, both ways: None, bool, int (64 bits), float, str, dtypes
 * (written T.NAME) and tuples and lists of them, so the other side decodes them with a
 * literal reader (ast.literal_eval's rules plus T.NAME) and nothing is ever evaluated as
 * code.  Kernel bodies never call out: while a kernel is being traced (ev->block) the call
 * stays the stub's diagnostic, as it does with no host_call (the CLI, the plain C API). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "value.h"

/* Containers nested deeper than this are not plain values (and would make deep C recursion). */
enum { LITERAL_MAX_DEPTH = 32 };

/* ---- values -> literal text ------------------------------------------------------------------ */
/* A str as a single-quoted Python literal: quotes, backslashes and control bytes escaped,
 * other bytes (UTF-8) as they are. */
static void quote_str(StrBuf *sb, const char *s, size_t n) {
  sb_putc(sb, '\'');
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '\'' || ch == '\\') {
      sb_putc(sb, '\\');
      sb_putc(sb, (char)ch);
    } else if (ch == '\n') {
      sb_append(sb, "\\n");
    } else if (ch < 0x20 || ch == 0x7f) {
      sb_printf(sb, "\\x%02x", ch);
    } else {
      sb_putc(sb, (char)ch);
    }
  }
  sb_putc(sb, '\'');
}

/* A float as Python's repr reads it back; infinities as 1e999 (a literal that overflows to
 * inf), NaN as float('nan'), the one float that has no literal. */
static void float_text(StrBuf *sb, double f) {
  if (f != f) {
    sb_append(sb, "float('nan')");
  } else if (isinf(f)) {
    sb_append(sb, f > 0 ? "1e999" : "-1e999");
  } else {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.17g", f);
    if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0"); /* 2.0, not the int 2 */
    sb_append(sb, tmp);
  }
}

static bool literal_rec(StrBuf *sb, const Value *v, int depth, const char **why) {
  switch (v->kind) {
  case V_NONE: sb_append(sb, "None"); return true;
  case V_BOOL: sb_append(sb, v->u.b ? "True" : "False"); return true;
  case V_INT: sb_printf(sb, "%lld", (long long)v->u.i); return true;
  case V_FLOAT: float_text(sb, v->u.f); return true;
  case V_STR: quote_str(sb, v->u.str.s, v->u.str.n); return true;
  case V_DTYPE: sb_printf(sb, "T.%s", dtype_name(v->u.dtype)); return true;
  case V_TUPLE:
  case V_LIST:
    if (depth >= LITERAL_MAX_DEPTH) {
      *why = "a tuple or list nested too deeply";
      return false;
    }
    sb_putc(sb, v->kind == V_TUPLE ? '(' : '[');
    for (int i = 0; i < v->u.seq.n; i++) {
      if (i) sb_append(sb, ", ");
      if (!literal_rec(sb, v->u.seq.items[i], depth + 1, why)) return false;
    }
    if (v->kind == V_TUPLE && v->u.seq.n == 1) sb_putc(sb, ',');
    sb_putc(sb, v->kind == V_TUPLE ? ')' : ']');
    return true;
  case V_EXPR: *why = "an IR expression (a value known only when the kernel runs)"; return false;
  default: *why = ev_type_name(v); return false;
  }
}

/* Appends plain value v as Python literal text; false with *why (what v is) otherwise. */
bool ev_literal_text(StrBuf *sb, const Value *v, const char **why) { return literal_rec(sb, v, 0, why); }

/* "((a, b), {'k': c})": the call's arguments; false with *why naming the first that is not
 * a plain value. */
static bool args_text(Eval *ev, StrBuf *sb, const CallArgs *a, const char **why) {
  const char *what = NULL;
  sb_append(sb, "((");
  for (int i = 0; i < a->npos; i++) {
    if (i) sb_append(sb, ", ");
    if (!ev_literal_text(sb, a->pos[i], &what)) {
      *why = arena_printf(ev->a, "argument %d is %s", i + 1, what);
      return false;
    }
  }
  sb_append(sb, a->npos == 1 ? ",), {" : "), {");
  for (int i = 0; i < a->nkw; i++) {
    if (i) sb_append(sb, ", ");
    quote_str(sb, a->kw[i], strlen(a->kw[i]));
    sb_append(sb, ": ");
    if (!ev_literal_text(sb, a->kwv[i], &what)) {
      *why = arena_printf(ev->a, "argument '%s' is %s", a->kw[i], what);
      return false;
    }
  }
  sb_append(sb, "})");
  return true;
}

/* ---- literal text -> values ------------------------------------------------------------------ */
static Value *literal_value(Eval *ev, const AstNode *n, int depth, const char **why);

/* -x / +x of a number literal.  -9223372036854775808 is read as one literal: its digits alone
 * do not fit. */
static Value *signed_literal(Eval *ev, const AstNode *n, int depth, const char **why) {
  const AstNode *x = n->value;
  bool neg = n->op == AOP_USUB;
  if (!neg && n->op != AOP_UADD) {
    *why = "not a plain literal (an operator)";
    return NULL;
  }
  if (neg && x->kind == AST_CONST_INT && x->is_big && x->sval && !strcmp(x->sval, "9223372036854775808"))
    return ev_int(ev, INT64_MIN);
  Value *v = literal_value(ev, x, depth, why);
  if (!v) return NULL;
  if (v->kind == V_INT) return neg ? ev_int(ev, v->u.i == INT64_MIN ? INT64_MIN : -v->u.i) : v;
  if (v->kind == V_FLOAT) return neg ? ev_float(ev, -v->u.f) : v;
  *why = "a sign before something that is not a number";
  return NULL;
}

/* T.NAME (a dtype) or float('nan' | 'inf' | '-inf'). */
static Value *named_literal(Eval *ev, const AstNode *n) {
  ts_dtype t;
  if (n->kind == AST_ATTRIBUTE && n->value->kind == AST_NAME && !strcmp(n->value->id, "T") && dtype_parse(n->id, &t))
    return ev_dtype(ev, t);
  if (n->kind != AST_CALL || n->func->kind != AST_NAME || strcmp(n->func->id, "float") || n->items.n != 1 ||
      n->nkwargs || n->items.items[0]->kind != AST_CONST_STR)
    return NULL;
  const char *s = n->items.items[0]->sval;
  if (!strcmp(s, "nan")) return ev_float(ev, NAN);
  if (!strcmp(s, "inf") || !strcmp(s, "-inf")) return ev_float(ev, s[0] == '-' ? -INFINITY : INFINITY);
  return NULL;
}

static Value *literal_value(Eval *ev, const AstNode *n, int depth, const char **why) {
  switch (n->kind) {
  case AST_CONST_NONE: return ev->none;
  case AST_CONST_TRUE: return ev->vtrue;
  case AST_CONST_FALSE: return ev->vfalse;
  case AST_CONST_INT:
    if (!n->is_big) return ev_int(ev, n->ival);
    *why = "an integer that does not fit in 64 bits";
    return NULL;
  case AST_CONST_FLOAT:
    if (!n->is_imag) return ev_float(ev, n->fval);
    *why = "a complex number";
    return NULL;
  case AST_CONST_STR: {
    if (n->is_bytes) {
      *why = "a bytes object";
      return NULL;
    }
    Value *v = ev_new(ev, V_STR);
    v->u.str.s = n->sval;
    v->u.str.n = n->slen;
    return v;
  }
  case AST_UNARYOP: return signed_literal(ev, n, depth, why);
  case AST_TUPLE:
  case AST_LIST: {
    if (depth >= LITERAL_MAX_DEPTH) {
      *why = "a tuple or list nested too deeply";
      return NULL;
    }
    Value *v = ev_new(ev, n->kind == AST_TUPLE ? V_TUPLE : V_LIST);
    for (int i = 0; i < n->items.n; i++) {
      Value *x = literal_value(ev, n->items.items[i], depth + 1, why);
      if (!x) return NULL;
      vl_push(ev, &v->u.seq, x);
    }
    return v;
  }
  default: {
    Value *v = named_literal(ev, n);
    if (!v) *why = arena_printf(ev->a, "not a plain literal (a %s)", ast_kind_names[n->kind]);
    return v;
  }
  }
}

/* The value of literal text n; NULL with *why when n is not one. */
Value *ev_literal_value(Eval *ev, const AstNode *n, const char **why) { return literal_value(ev, n, 0, why); }

/* ---- the call ----------------------------------------------------------------------------------- */
/* The host's answer `text` for module.qualname, read back: the value, or NULL after a
 * diagnostic at loc. */
static Value *read_result(Eval *ev, const char *full, const char *text, SrcLoc loc) {
  SourceFile *sf = ARENA_NEW(ev->a, SourceFile);
  sf->name = arena_printf(ev->a, "<result of %s>", full);
  sf->text = text;
  sf->len = strlen(text);
  int errors = ev->c->diag.errors;
  const AstNode *n = parse_expression(ev->c, sf);
  const char *why = "text that is not a Python literal";
  Value *v = n && ev->c->diag.errors == errors ? ev_literal_value(ev, n, &why) : NULL;
  if (!v) ts_error(ev->c, loc, "%s (called in Python) returned %s", full, why);
  return v;
}

/* Calls module.qualname in the host with the arguments' text (freed here): its value, or NULL
 * with *failure the host's message (nothing reported) or after a diagnostic at loc (an answer
 * that is no plain literal). */
static Value *ask_host(Eval *ev, const char *module, const char *qualname, StrBuf *args, SrcLoc loc,
                       const char **failure) {
  TsCompiler *c = ev->c;
  const char *answer = NULL;
  int rc = c->host_call(c->host_call_user, module, qualname, sb_str(args), &answer);
  sb_free(args);
  const char *text = arena_strdup(ev->a, answer ? answer : ""); /* the host's buffer is only lent */
  if (rc) {
    *failure = *text ? text : "(no message)";
    return NULL;
  }
  return read_result(ev, arena_printf(ev->a, "%s.%s", module, qualname), text, loc);
}

/* ask_host, its failure reported at loc as the error of the call. */
static Value *call_in_host(Eval *ev, const char *module, const char *qualname, StrBuf *args, SrcLoc loc) {
  const char *failure = NULL;
  Value *v = ask_host(ev, module, qualname, args, loc, &failure);
  if (failure) ts_error(ev->c, loc, "calling %s.%s in Python failed: %s", module, qualname, failure);
  return v;
}

/* Calls opaque value fn: through the host when it stands for a function of a module, a host
 * is registered, no kernel is being traced and every argument is plain; else the stub's own
 * diagnostic (saying why the host was not asked, when there is one). */
Value *ev_host_call(Eval *ev, Value *fn, CallArgs *a) {
  SrcLoc loc = a->node ? a->node->loc : SRCLOC_NONE;
  TsCompiler *c = ev->c;
  const char *module = fn->u.opaque.module, *qualname = fn->u.opaque.qualname;
  if (!c->host_call || !module || !qualname) return ev_use_opaque(ev, fn, loc);
  const char *full = arena_printf(ev->a, "%s.%s", module, qualname);
  if (ev->block) {
    ts_error(c, loc, "%s (a host function is called in Python only outside kernel bodies)", fn->u.opaque.what);
    return NULL;
  }
  if (ev->path_toplevel) { /* withdrawn by ev_force_global: the name becomes a stub */
    ts_error(c, loc, "%s (not called again at the top level of a module Python imported itself)", fn->u.opaque.what);
    return NULL;
  }
  for (int i = 0; i < a->npos; i++)
    if (a->pos[i]->kind == V_POISON) return NULL; /* already reported */
  for (int i = 0; i < a->nkw; i++)
    if (a->kwv[i]->kind == V_POISON) return NULL;
  StrBuf args = {0};
  const char *why = NULL;
  if (!args_text(ev, &args, a, &why)) {
    sb_free(&args);
    ts_error(c, loc,
             "%s: %s is called in Python only with plain arguments (None, bool, int, float, str, dtype, "
             "tuples and lists of them); %s",
             fn->u.opaque.what, full, why);
    return NULL;
  }
  return call_in_host(ev, module, qualname, &args, loc);
}

/* ---- a sibling module's function the interpreter could not run ------------------------------ */
/* The module of a top-level def of a helper module beside the kernel file or on the module
 * path (not the kernel file, not the prelude), or NULL. */
static const PyModule *sibling_of(const Value *fn) {
  const Env *env = fn->u.fn.env;
  const PyModule *m = env ? env->module : NULL;
  const AstNode *def = fn->u.fn.def;
  if (!m || !m->dir || !strcmp(m->name, "__main__") || def->kind != AST_FUNCTIONDEF || fn->u.fn.flavor != FN_PLAIN)
    return NULL;
  return m;
}

/* A top-level def of a module found through the module path (PyModule.from_path), called from
 * host code with a host registered and plain arguments, runs in the host, which is where the
 * user's Python runs it (such modules were stubs before the module path, always called there);
 * NULL when that does not apply (*handled false: interpret it), else its value or NULL after
 * the host's error. */
Value *ev_host_first(Eval *ev, const Value *fn, CallArgs *a, bool *handled) {
  *handled = false;
  const PyModule *m = sibling_of(fn);
  if (!m || !m->from_path || !ev->c->host_call || ev->block || ev->path_toplevel) return NULL;
  StrBuf args = {0};
  const char *why = NULL;
  if (!args_text(ev, &args, a, &why)) { /* a kernel value: the interpreter's to run */
    sb_free(&args);
    return NULL;
  }
  *handled = true;
  return call_in_host(ev, m->name, fn->u.fn.def->id, &args, a->node ? a->node->loc : fn->u.fn.def->loc);
}

/* Before a def is interpreted: whether a failure may be retried in the host (a sibling
 * module's top-level function called from host code, with a host registered), and where the
 * diagnostics stand. */
HostRetry ev_host_retry_arm(Eval *ev, const Value *fn) {
  HostRetry r = {0};
  TsCompiler *c = ev->c;
  r.armed = c->host_call && !ev->block && !ev->path_toplevel && !c->diag.echo && !ev->out_of_memory && sibling_of(fn);
  r.diag = diag_mark(&c->diag);
  return r;
}

/* After a def was interpreted into `interpreted`: when that reported errors and the retry is
 * armed, the same call is made in the host (Python runs the helper module the interpreter
 * could not: classes, generators, libraries).  Its value replaces the interpreter's and the
 * interpreter's diagnostics are dropped; if the host cannot do it either, they stay, with a
 * note saying what the host answered. */
Value *ev_host_retry(Eval *ev, const Value *fn, CallArgs *a, const HostRetry *mark, Value *interpreted) {
  Diag *d = &ev->c->diag;
  if (!mark->armed || d->errors == mark->diag.errors || ev->out_of_memory) return interpreted;
  const PyModule *m = sibling_of(fn);
  const char *qualname = fn->u.fn.def->id;
  SrcLoc loc = a->node ? a->node->loc : fn->u.fn.def->loc;
  StrBuf args = {0};
  const char *why = NULL;
  if (!args_text(ev, &args, a, &why)) {
    sb_free(&args);
    return interpreted;
  }
  /* the interpreter's diagnostics, set aside while the host runs */
  const char *said = arena_strdup(ev->a, d->out.data + mark->diag.out_len);
  int errors = d->errors, warnings = d->warnings;
  diag_rewind(d, mark->diag);
  const char *failure = NULL;
  int before = d->errors;
  Value *v = ask_host(ev, m->name, qualname, &args, loc, &failure);
  if (v || d->errors > before) return v;
  sb_append(&d->out, said);
  d->errors = errors, d->warnings = warnings;
  diag_note(d, loc, "%s.%s could not be run in Python either: %s", m->name, qualname, failure);
  return interpreted;
}
