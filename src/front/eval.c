/* eval.c — the staging interpreter: runs the chosen function of a parsed kernel file
 * and builds Tile IR (DESIGN.md §4, reference tilelang-core.md §2.2).
 *
 *   parse_module -> [front_compile: module scan, -D binding, factory call, trace] -> IrFunc
 *
 * Values are Python values (folded now) or IR expressions (staged).  Control flow on a
 * Python value is decided here; on an IR value it becomes IR (IF, FOR, WHILE, SELECT).
 * Statements produced while tracing are appended to `ev->block`; entering a loop, an
 * IR `if` or a T.Kernel pushes a fresh block.  Module top-level assignments are
 * evaluated lazily on first use, so torch harnesses and argparse code never run.
 * The T.* namespace and Python builtins live in eval_builtins.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value.h"

#define DEFAULT_LIMIT_DEPTH 200
#define DEFAULT_LIMIT_STEPS 10000000
/* Arena bytes a compilation may use: real kernels need a few MB; `[0] * 10**9` must end in
 * a diagnostic, not in the OOM killer. */
#define DEFAULT_LIMIT_BYTES ((int64_t)1 << 30)

static Value *eval(Eval *ev, Env *env, const AstNode *n);
static Value *eval_raw(Eval *ev, Env *env, const AstNode *n);
static ExecStatus exec_block(Eval *ev, Env *env, const AstList *body);
static ExecStatus exec_stmt(Eval *ev, Env *env, const AstNode *s);
static bool assign(Eval *ev, Env *env, const AstNode *target, Value *v, SrcLoc loc);

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
static double num_f(const Value *v) {
  return v->kind == V_FLOAT ? v->u.f : v->kind == V_INT ? (double)v->u.i : (double)v->u.b;
}
static int64_t num_i(const Value *v) { return v->kind == V_INT ? v->u.i : (int64_t)v->u.b; }

/* Self-containing lists (a.append(a)) and DAGs that double at each level must not recurse
 * forever or build gigabytes: past this depth a container prints as [...] and past this
 * length the text is cut with "...". */
enum { REPR_MAX_DEPTH = 64, REPR_MAX_LEN = 1 << 20 };

static void repr_rec(StrBuf *sb, const Value *v, bool quote, int depth);
static void repr_into(StrBuf *sb, const Value *v, bool quote) { repr_rec(sb, v, quote, 0); }

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
  repr_into(&sb, v, true);
  if (sb.len > REPR_MAX_LEN) sb_append(&sb, "...");
  char *s = arena_strdup(ev->a, sb_str(&sb));
  sb_free(&sb);
  return s;
}
static char *ev_strval(Eval *ev, const Value *v) { /* str(v) */
  StrBuf sb = {0};
  repr_into(&sb, v, false);
  if (sb.len > REPR_MAX_LEN) sb_append(&sb, "...");
  char *s = arena_strdup(ev->a, sb_str(&sb));
  sb_free(&sb);
  return s;
}

/* An opaque value (unknown import, unsupported construct) is an error only when used. */
static Value *use_opaque(Eval *ev, Value *v, SrcLoc loc) {
  ts_error(ev->c, loc, "%s", v->u.opaque.what);
  return NULL;
}

/* ---- conversions -------------------------------------------------------------------- */
static IrExpr *load_var_buffer(Eval *ev, IrBuffer *b, SrcLoc loc) {
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, 1);
  idx[0] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
  return ir_load(ev->c, b, idx, 1, loc);
}

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
    if (v->u.buf->scope == IR_SCOPE_VAR) return load_var_buffer(ev, v->u.buf, loc);
    break;
  case V_OPAQUE: use_opaque(ev, v, loc); return NULL;
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
    use_opaque(ev, v, loc);
    return false;
  }
  ts_error(ev->c, loc, "expected a dtype, got %s", ev_type_name(v));
  return false;
}

bool ev_to_int(Eval *ev, Value *v, int64_t *out, SrcLoc loc) {
  if (!v || v->kind == V_POISON) return false;
  if (v->kind == V_INT || v->kind == V_BOOL) {
    *out = num_i(v);
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
  case V_OPAQUE: use_opaque(ev, v, loc); return -2;
  default: return 1;
  }
}

/* ---- environments --------------------------------------------------------------------- */
static Env *env_new(Eval *ev, Env *parent) {
  Env *e = ARENA_NEW(ev->a, Env);
  e->parent = parent;
  (void)ev;
  return e;
}
static void env_set(Eval *ev, Env *env, const char *name, Value *v) {
  strmap_put(ev->a, &env->vars, name, v ? v : ev->poison);
  if (env->module && strmap_get(&env->module->lazy, name)) strmap_put(ev->a, &env->module->lazy, name, NULL);
}

static Value *env_lookup(Eval *ev, Env *env, const char *name) {
  for (Env *e = env; e; e = e->parent) {
    if (e->module) ev_force_global(ev, e->module, name);
    Value *v = strmap_get(&e->vars, name);
    if (v) return v;
  }
  return NULL;
}

Env *ev_env_new(Eval *ev, Env *parent) { return env_new(ev, parent); }
void ev_env_set(Eval *ev, Env *env, const char *name, Value *v) { env_set(ev, env, name, v); }
Value *ev_env_lookup(Eval *ev, Env *env, const char *name) { return env_lookup(ev, env, name); }

/* ---- IR statement emission -------------------------------------------------------------- */
/* Python code can stage expressions no pass could handle: sum() over 10**5 loads nests
 * 10**5 deep (the recursive passes overflow the C stack), and a helper that doubles
 * `e + e` sixty times is a DAG whose tree has 2**60 nodes (the passes walk trees, so
 * they never finish).  Every expression reaching a statement is checked within a bounded
 * walk: deeper than IR_MAX_DEPTH or larger than IR_MAX_NODES as a tree is an error. */
enum { IR_MAX_DEPTH = 1000, IR_MAX_NODES = 1000000 };

static bool ir_expr_too_big(const IrExpr *e, int depth, int64_t *budget) {
  if (!e) return false;
  if (depth > IR_MAX_DEPTH || --*budget < 0) return true;
  switch (e->kind) {
  case IR_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (ir_expr_too_big(e->u.call.args[i], depth + 1, budget)) return true;
    return false;
  case IR_LOAD:
    for (int i = 0; i < e->u.load.nidx; i++)
      if (ir_expr_too_big(e->u.load.idx[i], depth + 1, budget)) return true;
    return false;
  default:
    for (int i = 0; i < ir_expr_nops[e->kind] && i < 3; i++)
      if (ir_expr_too_big(e->u.ops[i], depth + 1, budget)) return true;
    return false;
  }
}

static bool stmt_exprs_ok(Eval *ev, const IrStmt *s) {
  const IrExpr *es[4] = {0};
  int n = 0;
  switch (s->kind) {
  case IR_S_STORE:
    es[n++] = s->u.store.value;
    for (int i = 0; i < s->u.store.nidx && n < 4; i++) es[n++] = s->u.store.idx[i];
    break;
  case IR_S_LET: es[n++] = s->u.let.value; break;
  case IR_S_EVAL: es[n++] = s->u.eval.value; break;
  case IR_S_IF: es[n++] = s->u.if_.cond; break;
  case IR_S_WHILE: es[n++] = s->u.while_.cond; break;
  case IR_S_ASSERT: es[n++] = s->u.assert_.cond; break;
  case IR_S_FILL: es[n++] = s->u.fill.value; break;
  case IR_S_FOR: es[n++] = s->u.loop.min; es[n++] = s->u.loop.extent; break;
  default: break;
  }
  for (int i = 0; i < n; i++) {
    int64_t budget = IR_MAX_NODES;
    if (ir_expr_too_big(es[i], 0, &budget)) {
      ts_error(ev->c, s->loc, "expression too large to compile (more than %d operations, or nested more than %d deep)",
               IR_MAX_NODES, IR_MAX_DEPTH);
      return false;
    }
  }
  return true;
}

void ev_emit(Eval *ev, IrStmt *s) {
  if (!s) return;
  TS_ASSERT(ev->block);
  if (!stmt_exprs_ok(ev, s)) return;
  vec_push(ev->a, ev->block, s);
}

bool ev_need_kernel(Eval *ev, const char *what, SrcLoc loc) {
  if (ev->block && ev->kernel) return true;
  if (!ev->block)
    ts_error(ev->c, loc, "%s can only be used inside a @T.prim_func kernel", what);
  else
    ts_error(ev->c, loc, "%s must be inside a 'with T.Kernel(...)' block", what);
  return false;
}

/* IR definitions (lets, loop and block variables, allocations) are visible only inside
 * the block that defines them, while Python names outlive it.  Each block records what
 * it defines; when it closes, names still bound to those definitions are replaced by an
 * opaque value, so a later use is a diagnostic instead of malformed IR. */
typedef struct BlockSave {
  PtrVec *block;
  DefScope *scope;
} BlockSave;

void ev_define_var(Eval *ev, IrVar *v) {
  if (ev->scope) vec_push(ev->a, &ev->scope->vars, v);
}
void ev_define_buffer(Eval *ev, IrBuffer *b) {
  if (ev->scope) vec_push(ev->a, &ev->scope->bufs, b);
}

static BlockSave push_block(Eval *ev) {
  BlockSave saved = {ev->block, ev->scope};
  ev->block = ARENA_NEW(ev->a, PtrVec);
  ev->scope = ARENA_NEW(ev->a, DefScope);
  return saved;
}

static bool expr_uses(const IrExpr *e, const DefScope *sc) {
  if (!e) return false;
  switch (e->kind) {
  case IR_VAR:
    for (int i = 0; i < sc->vars.len; i++)
      if (sc->vars.items[i] == e->u.var) return true;
    return false;
  case IR_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (expr_uses(e->u.call.args[i], sc)) return true;
    return false;
  case IR_LOAD:
    for (int i = 0; i < sc->bufs.len; i++)
      if (sc->bufs.items[i] == e->u.load.buf) return true;
    for (int i = 0; i < e->u.load.nidx; i++)
      if (expr_uses(e->u.load.idx[i], sc)) return true;
    return false;
  default:
    for (int i = 0; i < ir_expr_nops[e->kind] && i < 3; i++)
      if (expr_uses(e->u.ops[i], sc)) return true;
    return false;
  }
}

static bool value_uses(const Value *v, const DefScope *sc) {
  if (!v) return false;
  switch (v->kind) {
  case V_EXPR: return expr_uses(v->u.expr, sc);
  case V_BUFFER:
    for (int i = 0; i < sc->bufs.len; i++)
      if (sc->bufs.items[i] == v->u.buf) return true;
    return false;
  case V_TUPLE:
    for (int i = 0; i < v->u.seq.n; i++)
      if (value_uses(v->u.seq.items[i], sc)) return true;
    return false;
  default: return false;
  }
}

static IrStmt *pop_block(Eval *ev, BlockSave saved, Env *env, const char *what, SrcLoc loc) {
  IrStmt *s = ir_seq_vec(ev->c, ev->block, loc);
  DefScope *sc = ev->scope;
  if (sc->vars.len || sc->bufs.len)
    for (Env *e = env; e && e != ev->globals; e = e->parent)
      for (int i = 0; i < e->vars.cap; i++) {
        StrMapEntry *slot = &e->vars.slots[i];
        if (slot->key && value_uses(slot->value, sc)) {
          Value *o = ev_opaque(ev, arena_printf(ev->a, "'%s' is defined inside a %s and cannot be used after it",
                                                slot->key, what));
          o->u.opaque.at_name = true;
          slot->value = o;
        }
      }
  ev->block = saved.block;
  ev->scope = saved.scope;
  return s;
}

/* ---- linear difference (slice extents) ------------------------------------------------ */
/* `bx*64:(bx+1)*64` must give the constant extent 64 even if the simplifier does not
 * distribute; a tiny linear form over opaque atoms settles the common cases. */
typedef struct LinForm {
  const IrExpr *atom[16];
  int64_t coef[16];
  int n;
  int64_t k;
  bool ok;
  int lets;   /* let-bound names expanded so far (H1 - H0 where H1 = H0 + 64: both are names) */
} LinForm;

static int64_t lin_mul(LinForm *l, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) l->ok = false;
  return r;
}

static void lin_add(LinForm *l, const IrExpr *e, int64_t scale) {
  int64_t cv;
  if (!l->ok) return;
  if (ir_is_const_int(e, &cv)) {
    if (__builtin_add_overflow(l->k, lin_mul(l, scale, cv), &l->k)) l->ok = false;
    return;
  }
  switch (e->kind) {
  case IR_ADD: lin_add(l, e->u.ops[0], scale); lin_add(l, e->u.ops[1], scale); return;
  case IR_SUB: lin_add(l, e->u.ops[0], scale); lin_add(l, e->u.ops[1], lin_mul(l, scale, -1)); return;
  case IR_NEG: lin_add(l, e->u.ops[0], lin_mul(l, scale, -1)); return;
  case IR_MUL:
    if (ir_is_const_int(e->u.ops[0], &cv)) { lin_add(l, e->u.ops[1], lin_mul(l, scale, cv)); return; }
    if (ir_is_const_int(e->u.ops[1], &cv)) { lin_add(l, e->u.ops[0], lin_mul(l, scale, cv)); return; }
    break;
  case IR_VAR:
    if (e->u.var->kind == IR_VAR_LET && e->u.var->let_value && e->u.var->let_value->dtype == e->dtype &&
        l->lets++ < 64) {
      lin_add(l, e->u.var->let_value, scale);
      return;
    }
    break;
  default: break;
  }
  for (int i = 0; i < l->n; i++)
    if (ir_expr_equal(l->atom[i], e)) {
      if (__builtin_add_overflow(l->coef[i], scale, &l->coef[i])) l->ok = false;
      return;
    }
  if (l->n == TS_ARRAY_LEN(l->atom)) {
    l->ok = false;
    return;
  }
  l->atom[l->n] = e;
  l->coef[l->n++] = scale;
}

IrExpr *ev_linear_diff(Eval *ev, IrExpr *hi, IrExpr *lo, SrcLoc loc) {
  LinForm l = {.ok = true};
  lin_add(&l, hi, 1);
  lin_add(&l, lo, -1);
  bool constant = l.ok;
  for (int i = 0; constant && i < l.n; i++) constant = l.coef[i] == 0;
  if (constant) return ir_int(ev->c, l.k, hi->dtype == TS_DTYPE_INT64 ? TS_DTYPE_INT64 : TS_DTYPE_INT32, loc);
  return ir_simplify(ev->c, ir_binary(ev->c, IR_SUB, hi, lo, loc));
}

/* ---- operators ---------------------------------------------------------------------------- */
static bool values_equal(const Value *a, const Value *b);

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

static bool values_equal(const Value *a, const Value *b) {
  int64_t visits = EQ_MAX_VISITS;
  return values_equal_rec(a, b, 0, &visits);
}

static bool values_equal_rec(const Value *a, const Value *b, int depth, int64_t *visits) {
  if (--*visits < 0 || depth > EQ_MAX_DEPTH) return a == b;
  if (ev_is_num(a) && ev_is_num(b)) {
    if (a->kind == V_FLOAT || b->kind == V_FLOAT) return num_f(a) == num_f(b);
    return num_i(a) == num_i(b);
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
  case V_BUILTIN: return a->u.bi.fn == b->u.bi.fn && a->u.bi.arg == b->u.bi.arg;
  case V_MODULE: return a->u.mod.mod == b->u.mod.mod && a->u.mod.py == b->u.mod.py;
  default: return a == b;
  }
}

static Value *py_arith(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc) {
  bool isf = l->kind == V_FLOAT || r->kind == V_FLOAT;
  if (isf) {
    double a = num_f(l), b = num_f(r);
    switch (op) {
    case AOP_ADD: return ev_float(ev, a + b);
    case AOP_SUB: return ev_float(ev, a - b);
    case AOP_MUL: return ev_float(ev, a * b);
    case AOP_DIV:
      if (b == 0) break;
      return ev_float(ev, a / b);
    case AOP_FLOORDIV:
      if (b == 0) break;
      return ev_float(ev, floor(a / b));
    case AOP_MOD:
      if (b == 0) break;
      return ev_float(ev, a - floor(a / b) * b);
    case AOP_POW: return ev_float(ev, pow(a, b));
    default:
      ts_error(ev->c, loc, "unsupported operand types for %s: '%s' and '%s'", ast_op_names[op], ev_type_name(l),
               ev_type_name(r));
      return NULL;
    }
    ts_error(ev->c, loc, "division by zero");
    return NULL;
  }
  int64_t a = num_i(l), b = num_i(r), res;
  switch (op) {
  /* Python ints are unbounded; ours are int64 and overflow is reported, never wrapped. */
  case AOP_ADD:
    if (__builtin_add_overflow(a, b, &res)) goto overflow;
    return ev_int(ev, res);
  case AOP_SUB:
    if (__builtin_sub_overflow(a, b, &res)) goto overflow;
    return ev_int(ev, res);
  case AOP_MUL:
    if (__builtin_mul_overflow(a, b, &res)) goto overflow;
    return ev_int(ev, res);
  case AOP_DIV:
    if (b == 0) break;
    return ev_float(ev, (double)a / (double)b);
  case AOP_FLOORDIV: {
    if (b == 0) break;
    if (b == -1 && a == INT64_MIN) goto overflow;
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return ev_int(ev, q);
  }
  case AOP_MOD: {
    if (b == 0) break;
    if (b == -1) return ev_int(ev, 0);
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return ev_int(ev, m);
  }
  case AOP_POW:
    if (b < 0) return ev_float(ev, pow((double)a, (double)b));
    /* By squaring: O(log b) steps, exact sign for negative bases. */
    res = 1;
    for (int64_t base = a, e = b; e > 0; e >>= 1) {
      if ((e & 1) && __builtin_mul_overflow(res, base, &res)) goto overflow;
      if (e > 1 && __builtin_mul_overflow(base, base, &base)) goto overflow;
    }
    return ev_int(ev, res);
  /* Python shifts: a negative count is an error, bits shifted out of 64 are an overflow
   * (1 << 200 used to wrap to 256), a right shift past the width leaves the sign. */
  case AOP_LSHIFT:
  case AOP_RSHIFT:
    if (b < 0) {
      ts_error(ev->c, loc, "negative shift count");
      return NULL;
    }
    if (op == AOP_RSHIFT) return ev_int(ev, b >= 63 ? (a < 0 ? -1 : 0) : a >> b);
    if (a == 0) return ev_int(ev, 0);
    if (b > 63 || (a > 0 ? a > (INT64_MAX >> b) : a < (INT64_MIN >> b))) goto overflow;
    return ev_int(ev, (int64_t)((uint64_t)a << b));
  case AOP_BITOR: return ev_int(ev, a | b);
  case AOP_BITXOR: return ev_int(ev, a ^ b);
  case AOP_BITAND:
    if (l->kind == V_BOOL && r->kind == V_BOOL) return ev_bool(ev, a & b);
    return ev_int(ev, a & b);
  default:
    ts_error(ev->c, loc, "unsupported operand types for %s: '%s' and '%s'", ast_op_names[op], ev_type_name(l),
             ev_type_name(r));
    return NULL;
  }
  ts_error(ev->c, loc, "integer division or modulo by zero");
  return NULL;
overflow:
  ts_error(ev->c, loc, "integer overflow in '%s' (values are limited to 64 bits)", ast_op_names[op]);
  return NULL;
}

static Value *seq_concat(Eval *ev, Value *l, Value *r) {
  Value *v = ev_new(ev, l->kind);
  for (int i = 0; i < l->u.seq.n; i++) vl_push(ev, &v->u.seq, l->u.seq.items[i]);
  for (int i = 0; i < r->u.seq.n; i++) vl_push(ev, &v->u.seq, r->u.seq.items[i]);
  return v;
}

static Value *ir_arith(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc) {
  const IrExpr *le = l->kind == V_EXPR ? l->u.expr : NULL, *re = r->kind == V_EXPR ? r->u.expr : NULL;
  IrExpr *a = ev_to_ir(ev, l, re, loc);
  if (!a) return NULL;
  IrExpr *b = ev_to_ir(ev, r, le ? le : a, loc);
  if (!b) return NULL;
  IrExprKind k;
  switch (op) {
  case AOP_ADD: k = IR_ADD; break;
  case AOP_SUB: k = IR_SUB; break;
  case AOP_MUL: k = IR_MUL; break;
  case AOP_DIV:
    if (!dtype_is_float(a->dtype) && !dtype_is_float(b->dtype)) {
      ts_error(ev->c, loc, "'/' between integer values is ambiguous: use // for integer division");
      return NULL;
    }
    k = IR_DIV;
    break;
  case AOP_FLOORDIV: k = IR_FLOORDIV; break;
  case AOP_MOD: k = IR_FLOORMOD; break;
  case AOP_LSHIFT: k = IR_SHL; break;
  case AOP_RSHIFT: k = IR_SHR; break;
  case AOP_BITOR: k = IR_BITOR; break;
  case AOP_BITXOR: k = IR_BITXOR; break;
  case AOP_BITAND: k = IR_BITAND; break;
  case AOP_EQ: k = IR_EQ; break;
  case AOP_NOTEQ: k = IR_NE; break;
  case AOP_LT: k = IR_LT; break;
  case AOP_LTE: k = IR_LE; break;
  case AOP_GT: k = IR_GT; break;
  case AOP_GTE: k = IR_GE; break;
  case AOP_POW: {
    ts_dtype t = dtype_is_float(a->dtype) ? a->dtype : dtype_is_float(b->dtype) ? b->dtype : TS_DTYPE_FLOAT32;
    IrExpr **args = ARENA_ARRAY(ev->a, IrExpr *, 2);
    args[0] = ir_cast(ev->c, t, a, loc);
    args[1] = ir_cast(ev->c, t, b, loc);
    return ev_expr(ev, ir_call(ev->c, IRI_POW, t, args, 2, loc));
  }
  default:
    ts_error(ev->c, loc, "operator '%s' is not supported on IR values", ast_op_names[op]);
    return NULL;
  }
  return ev_expr(ev, ir_binary(ev->c, k, a, b, loc));
}

static bool is_ir_operand(const Value *v) {
  return v->kind == V_EXPR || (v->kind == V_BUFFER && v->u.buf->scope == IR_SCOPE_VAR);
}

Value *ev_binop(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc) {
  if (!l || !r || l->kind == V_POISON || r->kind == V_POISON) return NULL;
  if (l->kind == V_OPAQUE) return use_opaque(ev, l, loc);
  if (r->kind == V_OPAQUE) return use_opaque(ev, r, loc);
  switch (op) {
  case AOP_EQ: case AOP_NOTEQ:
    if (!is_ir_operand(l) && !is_ir_operand(r)) return ev_bool(ev, values_equal(l, r) == (op == AOP_EQ));
    break;
  case AOP_IS: case AOP_ISNOT: {
    bool same = l == r || (l->kind == V_NONE && r->kind == V_NONE) ||
                (l->kind == V_BOOL && r->kind == V_BOOL && l->u.b == r->u.b) ||
                (l->kind == V_DTYPE && r->kind == V_DTYPE && l->u.dtype == r->u.dtype);
    return ev_bool(ev, same == (op == AOP_IS));
  }
  case AOP_IN: case AOP_NOTIN: {
    bool found = false;
    if (r->kind == V_TUPLE || r->kind == V_LIST) {
      for (int i = 0; i < r->u.seq.n && !found; i++) found = values_equal(l, r->u.seq.items[i]);
    } else if (r->kind == V_DICT) {
      for (int i = 0; i < r->u.dict.keys.n && !found; i++) found = values_equal(l, r->u.dict.keys.items[i]);
    } else if (r->kind == V_STR && l->kind == V_STR) {
      found = memmem(r->u.str.s, r->u.str.n, l->u.str.s, l->u.str.n) != NULL;
    } else {
      ts_error(ev->c, loc, "argument of type '%s' is not iterable", ev_type_name(r));
      return NULL;
    }
    return ev_bool(ev, found == (op == AOP_IN));
  }
  default: break;
  }
  if (is_ir_operand(l) || is_ir_operand(r)) {
    if ((is_ir_operand(l) || ev_is_num(l)) && (is_ir_operand(r) || ev_is_num(r))) return ir_arith(ev, op, l, r, loc);
  } else if (ev_is_num(l) && ev_is_num(r)) {
    switch (op) {
    case AOP_LT: return ev_bool(ev, num_f(l) < num_f(r));
    case AOP_LTE: return ev_bool(ev, num_f(l) <= num_f(r));
    case AOP_GT: return ev_bool(ev, num_f(l) > num_f(r));
    case AOP_GTE: return ev_bool(ev, num_f(l) >= num_f(r));
    default: return py_arith(ev, op, l, r, loc);
    }
  } else if (l->kind == V_STR && r->kind == V_STR) {
    int cmp = strcmp(l->u.str.s, r->u.str.s);
    switch (op) {
    case AOP_ADD: return ev_str(ev, arena_printf(ev->a, "%s%s", l->u.str.s, r->u.str.s));
    case AOP_LT: return ev_bool(ev, cmp < 0);
    case AOP_LTE: return ev_bool(ev, cmp <= 0);
    case AOP_GT: return ev_bool(ev, cmp > 0);
    case AOP_GTE: return ev_bool(ev, cmp >= 0);
    default: break;
    }
  } else if ((l->kind == V_TUPLE || l->kind == V_LIST) && l->kind == r->kind && op == AOP_ADD) {
    return seq_concat(ev, l, r);
  } else if ((l->kind == V_TUPLE || l->kind == V_LIST || l->kind == V_STR) && r->kind == V_INT && op == AOP_MUL) {
    /* Check the size first: `[0] * 10**9` must not run a billion pushes to find out. */
    int64_t unit = l->kind == V_STR ? (int64_t)l->u.str.n : (int64_t)l->u.seq.n * (int64_t)sizeof(Value *);
    if (r->u.i > 0 && unit > 0 && !ev_memory_ok(ev, r->u.i > INT64_MAX / unit ? INT64_MAX : r->u.i * unit, loc))
      return NULL;
    if (l->kind == V_STR) {
      StrBuf sb = {0};
      for (int64_t i = 0; i < r->u.i; i++) sb_append(&sb, l->u.str.s);
      Value *v = ev_str(ev, arena_strdup(ev->a, sb_str(&sb)));
      sb_free(&sb);
      return v;
    }
    Value *v = ev_new(ev, l->kind);
    for (int64_t k = 0; k < r->u.i; k++)
      for (int i = 0; i < l->u.seq.n; i++) vl_push(ev, &v->u.seq, l->u.seq.items[i]);
    return v;
  }
  ts_error(ev->c, loc, "unsupported operand types for %s: '%s' and '%s'", ast_op_names[op], ev_type_name(l),
           ev_type_name(r));
  return NULL;
}

static Value *unop(Eval *ev, AstOp op, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_POISON) return NULL;
  if (v->kind == V_OPAQUE) return use_opaque(ev, v, loc);
  if (op == AOP_NOT) {
    int t = ev_truth(ev, v, loc);
    if (t == -2) return NULL;
    if (t >= 0) return ev_bool(ev, !t);
    IrExpr *e = ev_to_ir(ev, v, NULL, loc);
    return e ? ev_expr(ev, ir_unary(ev->c, IR_NOT, ev_to_bool_ir(ev, e, loc), loc)) : NULL;
  }
  if (ev_is_num(v)) {
    switch (op) {
    case AOP_UADD: return v->kind == V_BOOL ? ev_int(ev, v->u.b) : v;
    case AOP_USUB:
      if (v->kind == V_FLOAT) return ev_float(ev, -v->u.f);
      if (num_i(v) == INT64_MIN) {
        ts_error(ev->c, loc, "integer overflow in unary '-'");
        return NULL;
      }
      return ev_int(ev, -num_i(v));
    case AOP_INVERT:
      if (v->kind != V_FLOAT) return ev_int(ev, ~num_i(v));
      break;
    default: break;
    }
  } else if (is_ir_operand(v)) {
    IrExpr *e = ev_to_ir(ev, v, NULL, loc);
    if (!e) return NULL;
    if (op == AOP_UADD) return ev_expr(ev, e);
    if (op == AOP_USUB) return ev_expr(ev, ir_unary(ev->c, IR_NEG, e, loc));
    if (op == AOP_INVERT) return ev_expr(ev, ir_unary(ev->c, IR_BITNOT, e, loc));
  }
  ts_error(ev->c, loc, "bad operand type for unary %s: '%s'", ast_op_names[op], ev_type_name(v));
  return NULL;
}

/* `a and b` / `a or b`: Python short-circuit on Python values, logical IR otherwise. */
static Value *eval_boolop(Eval *ev, Env *env, const AstNode *n) {
  Value *acc = eval(ev, env, n->items.items[0]);
  for (int i = 1; i < n->items.n; i++) {
    int t = ev_truth(ev, acc, n->loc);
    if (t == -2) return NULL;
    if (t >= 0) {
      if ((n->op == AOP_AND) != (t == 1)) return acc; /* decided */
      acc = eval(ev, env, n->items.items[i]);
      continue;
    }
    /* acc is IR */
    Value *r = eval(ev, env, n->items.items[i]);
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

static Value *eval_compare(Eval *ev, Env *env, const AstNode *n) {
  Value *left = eval(ev, env, n->left);
  Value *result = NULL;
  for (int i = 0; i < n->items.n; i++) {
    Value *right = eval(ev, env, n->items.items[i]);
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
    int t = ev_truth(ev, result, n->loc);
    if (t == 0) return result; /* Python short-circuit */
    left = right;
  }
  return result;
}

/* Unifies two branch values of a select: Python literals take the IR side's dtype. */
static Value *make_select(Eval *ev, IrExprKind k, IrExpr *cond, Value *a, Value *b, SrcLoc loc) {
  const IrExpr *la = a && a->kind == V_EXPR ? a->u.expr : NULL, *lb = b && b->kind == V_EXPR ? b->u.expr : NULL;
  IrExpr *x = ev_to_ir(ev, a, lb, loc);
  IrExpr *y = ev_to_ir(ev, b, la ? la : x, loc);
  if (!x || !y) return NULL;
  if (x->dtype != y->dtype) {
    /* the wider / float type wins */
    ts_dtype t = dtype_is_float(x->dtype) && !dtype_is_float(y->dtype) ? x->dtype
                 : dtype_is_float(y->dtype) && !dtype_is_float(x->dtype) ? y->dtype
                 : dtype_bits(x->dtype) >= dtype_bits(y->dtype) ? x->dtype : y->dtype;
    x = ir_cast(ev->c, t, x, loc);
    y = ir_cast(ev->c, t, y, loc);
  }
  return ev_expr(ev, ir_select(ev->c, k, cond, x, y, loc));
}


Value *ev_select(Eval *ev, IrExprKind k, IrExpr *cond, Value *a, Value *b, SrcLoc loc) {
  return make_select(ev, k, cond, a, b, loc);
}

/* ---- calls ---------------------------------------------------------------------------- */
static bool step(Eval *ev, SrcLoc loc) {
  if (!ev_memory_ok(ev, 0, loc)) return false;
  if (++ev->steps <= ev->limit_steps) return true;
  if (ev->steps == ev->limit_steps + 1)
    ts_error(ev->c, loc, "evaluation step limit (%lld) exceeded", (long long)ev->limit_steps);
  return false;
}

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
      env_set(ev, fenv, ps->items[pi].name, a->pos[k]);
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
    env_set(ev, fenv, ps->items[j].name, a->kwv[k]);
    set[j] = true;
  }
  for (int i = 0; i < ps->n; i++) {
    const AstParam *p = &ps->items[i];
    if (p->kind == APARAM_VARARGS) { env_set(ev, fenv, p->name, varargs); continue; }
    if (p->kind == APARAM_VARKW) { env_set(ev, fenv, p->name, varkw); continue; }
    if (set[i]) continue;
    if (!p->default_value) {
      ts_error(ev->c, loc, "%s() missing required argument '%s' (parameters: %s)", func_name(def), p->name,
               param_list(ev, ps));
      return false;
    }
    /* Defaults are evaluated in the defining scope (Python does it at def time). */
    env_set(ev, fenv, p->name, eval(ev, defenv, p->default_value));
  }
  return true;
}

static Value *call_func(Eval *ev, Value *fn, CallArgs *a) {
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
  if (!step(ev, loc)) return NULL;
  Env *fenv = env_new(ev, fn->u.fn.env);
  if (!bind_params(ev, fenv, fn->u.fn.env, def, a)) return NULL;
  if (def->kind == AST_LAMBDA) {
    ev->depth++;
    Value *r = eval(ev, fenv, def->value);
    ev->depth--;
    return r;
  }
  bool staged = ev->staged;
  LoopCtx *loop = ev->loop;
  ev->staged = fn->u.fn.flavor == FN_MACRO;
  ev->loop = NULL;
  ev->depth++;
  ev->ret = NULL;
  ExecStatus st = exec_block(ev, fenv, &def->body);
  ev->depth--;
  ev->staged = staged;
  ev->loop = loop;
  Value *r = st == EX_RETURN ? ev->ret : ev->none;
  ev->ret = NULL;
  return r;
}

static Value *call_dtype(Eval *ev, ts_dtype t, CallArgs *a) {
  SrcLoc loc = a->node->loc;
  if (a->npos != 1 || a->nkw) {
    ts_error(ev->c, loc, "%s() takes exactly one argument", dtype_name(t));
    return NULL;
  }
  Value *v = a->pos[0];
  if (!v || v->kind == V_POISON) return NULL;
  if (ev_is_num(v)) {
    if (dtype_is_float(t)) return ev_expr(ev, ir_float(ev->c, num_f(v), t, loc));
    return ev_expr(ev, ir_int(ev->c, v->kind == V_FLOAT ? ev_f2i(v->u.f) : num_i(v), t, loc));
  }
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  return e ? ev_expr(ev, ir_cast(ev->c, t, e, loc)) : NULL;
}

Value *ev_call(Eval *ev, Value *fn, CallArgs *a) {
  SrcLoc loc = a->node ? a->node->loc : SRCLOC_NONE;
  if (!fn || fn->kind == V_POISON) return NULL;
  switch (fn->kind) {
  case V_FUNC: return call_func(ev, fn, a);
  case V_BUILTIN: return fn->u.bi.fn(ev, a, fn->u.bi.self, fn->u.bi.arg);
  case V_DTYPE: return call_dtype(ev, fn->u.dtype, a);
  case V_OPAQUE: return use_opaque(ev, fn, loc);
  default: break;
  }
  ts_error(ev->c, loc, "'%s' object is not callable", ev_type_name(fn));
  return NULL;
}

static bool eval_args(Eval *ev, Env *env, const AstNode *n, CallArgs *a) {
  PtrVec pos = {0}, kw = {0}, kwv = {0};
  bool ok = true;
  a->node = n;
  for (int i = 0; i < n->items.n; i++) {
    const AstNode *x = n->items.items[i];
    if (x->kind == AST_STARRED) {
      Value *s = eval(ev, env, x->value);
      if (!s) { ok = false; continue; }
      if (s->kind != V_TUPLE && s->kind != V_LIST) {
        ts_error(ev->c, x->loc, "argument after * must be a tuple or list, not %s", ev_type_name(s));
        ok = false;
        continue;
      }
      for (int k = 0; k < s->u.seq.n; k++) vec_push(ev->a, &pos, s->u.seq.items[k]);
    } else {
      Value *v = eval(ev, env, x);
      if (!v) ok = false;
      vec_push(ev->a, &pos, v ? v : ev->poison);
    }
  }
  for (int i = 0; i < n->nkwargs; i++) {
    const AstKeyword *k = &n->kwargs[i];
    Value *v = eval(ev, env, k->value);
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

static Value *py_subscript(Eval *ev, Env *env, Value *base, const AstNode *index, SrcLoc loc) {
  if (index->kind == AST_SLICE && (base->kind == V_TUPLE || base->kind == V_LIST || base->kind == V_STR)) {
    int n = base->kind == V_STR ? (int)base->u.str.n : base->u.seq.n;
    int64_t lo = 0, hi = n, st = 1;
    Value *v;
    if (index->step && !ev_to_int(ev, eval(ev, env, index->step), &st, index->loc)) return NULL;
    if (st == 0) { ts_error(ev->c, loc, "slice step cannot be zero"); return NULL; }
    if (st < 0) { lo = n - 1; hi = -1; }
    if (index->lo) {
      if (!ev_to_int(ev, eval(ev, env, index->lo), &lo, index->loc)) return NULL;
      lo = norm_index(lo, n);
    }
    if (index->hi) {
      if (!ev_to_int(ev, eval(ev, env, index->hi), &hi, index->loc)) return NULL;
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
  Value *key = eval(ev, env, index);
  if (!key) return NULL;
  if (base->kind == V_DICT) {
    for (int i = 0; i < base->u.dict.keys.n; i++)
      if (values_equal(base->u.dict.keys.items[i], key)) return base->u.dict.vals.items[i];
    ts_error(ev->c, loc, "key %s not found in dict", ev_repr(ev, key));
    return NULL;
  }
  int64_t i;
  if (key->kind != V_INT && key->kind != V_BOOL) {
    ts_error(ev->c, loc, "%s indices must be integers, not %s", ev_type_name(base), ev_type_name(key));
    return NULL;
  }
  i = num_i(key);
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
} BufIndex;

/* An index known at compile time into a dimension of known size of an on-chip buffer
 * (fragment, shared, local) must be inside it: nothing guards these accesses, and a
 * register array indexed out of bounds is not even memory.  Negative indices do not wrap
 * around as in Python (TileLang indexes buffers as C does).  `is_end`: the bound of a
 * slice, which may equal the size. */
static bool check_const_index(Eval *ev, const IrBuffer *b, int d, const IrExpr *idx, bool is_end, SrcLoc loc) {
  int64_t i, n;
  if (b->scope != IR_SCOPE_FRAGMENT && b->scope != IR_SCOPE_SHARED_DYN && b->scope != IR_SCOPE_SHARED &&
      b->scope != IR_SCOPE_LOCAL)
    return true;
  if (!idx || !ir_is_const_int(idx, &i) || !ir_is_const_int(b->shape[d], &n)) return true;
  if (i >= 0 && (i < n || (is_end && i == n))) return true;
  const char *what = b->scope == IR_SCOPE_FRAGMENT ? "fragment" : b->scope == IR_SCOPE_LOCAL ? "local buffer" : "shared buffer";
  ts_error(ev->c, loc, "%s %lld is out of range for dimension %d of %s '%s' (size %lld%s)", is_end ? "slice end" : "index",
           (long long)i, d, what, b->name, (long long)n, i < 0 ? "; buffer indices do not wrap around" : "");
  return false;
}

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
    Value *v = eval(ev, env, x);
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
  for (int d = 0; d < n; d++) {
    Value *v = vals.items[d];
    const AstNode *sl = slices.items[d];
    if (!sl) {
      out->idx[d] = ev_to_ir(ev, v, NULL, loc);
      if (!out->idx[d]) return false;
      if (!dtype_is_int(out->idx[d]->dtype)) {
        ts_error(ev->c, loc, "index %d of buffer '%s' must be an integer, got %s", d, b->name,
                 dtype_name(out->idx[d]->dtype));
        return false;
      }
      if (!check_const_index(ev, b, d, out->idx[d], false, ((const AstNode *)where.items[d])->loc)) return false;
      continue;
    }
    if (sl->step) {
      ts_error(ev->c, sl->loc, "slices with a step are not supported in buffer regions");
      return false;
    }
    IrExpr *lo = sl->lo ? ev_to_ir(ev, eval(ev, env, sl->lo), NULL, sl->loc) : ir_int(ev->c, 0, TS_DTYPE_INT32, sl->loc);
    IrExpr *hi = sl->hi ? ev_to_ir(ev, eval(ev, env, sl->hi), NULL, sl->loc) : b->shape[d];
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

static Value *eval_subscript(Eval *ev, Env *env, const AstNode *n) {
  Value *base = eval_raw(ev, env, n->value);
  if (!base || base->kind == V_POISON) return NULL;
  switch (base->kind) {
  case V_BUFFER: {
    BufIndex bi;
    if (!eval_buf_index(ev, env, base->u.buf, n->index, &bi, n->loc)) return NULL;
    if (bi.any_slice) {
      Value *v = ev_new(ev, V_REGION);
      v->u.region.buf = base->u.buf;
      v->u.region.min = bi.idx;
      for (int d = 0; d < bi.n; d++)
        if (!bi.extent[d]) bi.extent[d] = ir_int(ev->c, 1, TS_DTYPE_INT32, n->loc);
      v->u.region.extent = bi.extent;
      return v;
    }
    return ev_expr(ev, ir_load(ev->c, base->u.buf, bi.idx, bi.n, n->loc));
  }
  case V_TUPLE:
  case V_LIST:
  case V_STR:
  case V_DICT: return py_subscript(ev, env, base, n->index, n->loc);
  case V_BUILTIN: {
    Value *idx = eval(ev, env, n->index);
    return idx ? bi_subscript_builtin(ev, base, idx, n->loc) : NULL;
  }
  case V_OPAQUE: return use_opaque(ev, base, n->loc);
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

static Value *eval_attribute(Eval *ev, Env *env, const AstNode *n) {
  Value *base = eval_raw(ev, env, n->value);
  const char *name = n->id;
  if (!base || base->kind == V_POISON) return NULL;
  switch (base->kind) {
  case V_MODULE: return ev_module_attr(ev, base, name, n->loc);
  case V_OPAQUE: {
    /* torch.float16 is a dtype (factories pass them around); anything else stays
     * opaque and only its use is an error. */
    ts_dtype t;
    if (base->u.opaque.module && !strcmp(base->u.opaque.module, "torch") && dtype_parse(name, &t) &&
        strcmp(name, "int") && strcmp(name, "float"))
      return bi_dtype(ev, t);
    return ev_opaque(ev, base->u.opaque.what);
  }
  case V_BUFFER: {
    IrBuffer *b = base->u.buf;
    if (!strcmp(name, "shape")) return shape_tuple(ev, b->shape, b->ndim);
    if (!strcmp(name, "dtype")) return bi_dtype(ev, b->dtype);
    if (!strcmp(name, "name")) return ev_str(ev, b->name);
    /* buf.data: the buffer's memory, for T.Tensor(shape, dtype, buf.data) views */
    if (!strcmp(name, "data") && b->scope != IR_SCOPE_VAR) return base;
    if (!strcmp(name, "ndim")) return ev_int(ev, b->ndim);
    if (!strcmp(name, "scope")) return ev_str(ev, ir_scope_names[b->scope]);
    if (b->scope == IR_SCOPE_VAR) {
      Value *m = bi_method(ev, ev_expr(ev, load_var_buffer(ev, b, n->loc)), name, n->loc);
      if (m) return m;
    }
    break;
  }
  case V_EXPR:
    if (!strcmp(name, "dtype")) return bi_dtype(ev, base->u.expr->dtype);
    break;
  case V_DTYPE:
    if (!strcmp(name, "bits")) return ev_int(ev, dtype_bits(base->u.dtype));
    if (!strcmp(name, "bytes") || !strcmp(name, "itemsize")) return ev_int(ev, dtype_bytes(base->u.dtype));
    if (!strcmp(name, "name")) return ev_str(ev, dtype_name(base->u.dtype));
    if (!strcmp(name, "lanes")) return ev_int(ev, 1);
    break;
  case V_TENSORTYPE:
    if (!strcmp(name, "shape")) return base->u.tt.shape;
    if (!strcmp(name, "dtype")) return bi_dtype(ev, base->u.tt.dtype);
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
  Value *m = bi_method(ev, base, name, n->loc);
  if (m) return m;
  ts_error(ev->c, n->loc, "'%s' object has no attribute '%s'", ev_type_name(base), name);
  return NULL;
}

/* ---- comprehensions ------------------------------------------------------------------------ */
static bool py_iter_items(Eval *ev, Value *it, ValList *out, SrcLoc loc);

static bool comp_rec(Eval *ev, Env *env, const AstNode *n, int ci, Value *acc) {
  if (ci == n->ncomps) {
    if (n->kind == AST_DICTCOMP) {
      Value *k = eval(ev, env, n->key), *v = eval(ev, env, n->elt);
      if (!k || !v) return false;
      vl_push(ev, &acc->u.dict.keys, k);
      vl_push(ev, &acc->u.dict.vals, v);
    } else {
      Value *v = eval(ev, env, n->elt);
      if (!v) return false;
      vl_push(ev, &acc->u.seq, v);
    }
    return true;
  }
  const AstComp *c = &n->comps[ci];
  ValList items = {0};
  if (!py_iter_items(ev, eval(ev, env, c->iter), &items, n->loc)) return false;
  for (int i = 0; i < items.n; i++) {
    if (!step(ev, n->loc)) return false;
    if (!assign(ev, env, c->target, items.items[i], n->loc)) return false;
    bool keep = true;
    for (int k = 0; k < c->ifs.n && keep; k++) {
      int t = ev_truth(ev, eval(ev, env, c->ifs.items[k]), c->ifs.items[k]->loc);
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
static Value *eval_name(Eval *ev, Env *env, const AstNode *n) {
  Value *v = env_lookup(ev, env, n->id);
  if (!v) {
    ts_error(ev->c, n->loc, "name '%s' is not defined", n->id);
    env_set(ev, env, n->id, ev->poison); /* report once */
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
  return eval(ev, env, n);
}

static Value *eval_seq(Eval *ev, Env *env, const AstNode *n, ValKind k) {
  Value *v = ev_new(ev, k);
  for (int i = 0; i < n->items.n; i++) {
    const AstNode *x = n->items.items[i];
    if (x->kind == AST_STARRED) {
      ValList items = {0};
      if (!py_iter_items(ev, eval(ev, env, x->value), &items, x->loc)) return NULL;
      for (int j = 0; j < items.n; j++) vl_push(ev, &v->u.seq, items.items[j]);
      continue;
    }
    Value *e = eval(ev, env, x);
    if (!e) return NULL;
    vl_push(ev, &v->u.seq, e);
  }
  return v;
}

static Value *eval(Eval *ev, Env *env, const AstNode *n) {
  if (!n) return ev->none;
  switch (n->kind) {
  case AST_NAME: {
    Value *v = eval_name(ev, env, n);
    if (v && v->kind == V_BUFFER && v->u.buf->scope == IR_SCOPE_VAR) return ev_expr(ev, load_var_buffer(ev, v->u.buf, n->loc));
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
        Value *v = eval(ev, env, p->kind == AST_FORMATTED ? p->value : p);
        if (v) repr_into(&sb, v, p->kind == AST_FORMATTED && p->conversion == 'r');
      }
    }
    Value *v = ev_str(ev, arena_strdup(ev->a, sb_str(&sb)));
    sb_free(&sb);
    return v;
  }
  case AST_BINOP: {
    Value *l = eval(ev, env, n->left);
    Value *r = eval(ev, env, n->right);
    return ev_binop(ev, n->op, l, r, n->loc);
  }
  case AST_UNARYOP: return unop(ev, n->op, eval(ev, env, n->value), n->loc);
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
      Value *v = eval(ev, env, n->items.items[i]);
      if (!v) return NULL;
      if (!n->keys.items[i]) { /* {**other} */
        if (v->kind != V_DICT) { ts_error(ev->c, n->loc, "'%s' object is not a mapping", ev_type_name(v)); return NULL; }
        for (int j = 0; j < v->u.dict.keys.n; j++) {
          vl_push(ev, &d->u.dict.keys, v->u.dict.keys.items[j]);
          vl_push(ev, &d->u.dict.vals, v->u.dict.vals.items[j]);
        }
        continue;
      }
      Value *k = eval(ev, env, n->keys.items[i]);
      if (!k) return NULL;
      int j;
      for (j = 0; j < d->u.dict.keys.n; j++)
        if (values_equal(d->u.dict.keys.items[j], k)) break;
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
    Env *cenv = env_new(ev, env);
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
    Value *t = eval(ev, env, n->test);
    int tv = ev_truth(ev, t, n->test->loc);
    if (tv == -2) return NULL;
    if (tv >= 0) return eval(ev, env, tv ? n->left : n->right);
    Value *a = eval(ev, env, n->left), *b = eval(ev, env, n->right);
    if (!a || !b) return NULL;
    return make_select(ev, IR_SELECT, ev_to_bool_ir(ev, ev_to_ir(ev, t, NULL, n->loc), n->loc), a, b, n->loc);
  }
  case AST_NAMEDEXPR: {
    Value *v = eval(ev, env, n->value);
    if (!v || !assign(ev, env, n->left, v, n->loc)) return NULL;
    return v;
  }
  default: break;
  }
  ts_error(ev->c, n->loc, "%s expressions are not supported", ast_kind_names[n->kind]);
  return NULL;
}

/* ---- iteration --------------------------------------------------------------------------- */
static bool py_iter_items(Eval *ev, Value *it, ValList *out, SrcLoc loc) {
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
    return py_iter_items(ev, ev_str(ev, dtype_name(it->u.dtype)), out, loc);
  case V_FRAME: {
    LoopFrame *f = it->u.frame;
    if (f->py_ok) {
      for (int64_t i = f->py_start; f->py_step > 0 ? i < f->py_stop : i > f->py_stop; i += f->py_step) {
        if (!step(ev, loc)) return false;
        vl_push(ev, out, ev_int(ev, i));
      }
      return true;
    }
    ts_error(ev->c, loc, "this loop can only be used inside a @T.prim_func kernel (its bounds are not constants)");
    return false;
  }
  case V_OPAQUE: use_opaque(ev, it, loc); return false;
  default: break;
  }
  ts_error(ev->c, loc, "'%s' object is not iterable", ev_type_name(it));
  return false;
}

bool ev_iter_items(Eval *ev, Value *it, ValList *out, SrcLoc loc) { return py_iter_items(ev, it, out, loc); }

/* ---- statements ------------------------------------------------------------------------------ */
/* `x = v`: Python values bind; IR values become a LET; an alloc_var is stored to. */
static bool assign_name(Eval *ev, Env *env, const char *name, Value *v, SrcLoc loc) {
  Value *cur = strmap_get(&env->vars, name);
  if (cur && cur->kind == V_BUFFER && cur->u.buf->scope == IR_SCOPE_VAR && v->kind != V_BUFFER) {
    if (!ev->block) {
      ts_error(ev->c, loc, "cannot assign to T.alloc_var '%s' outside a kernel", name);
      return false;
    }
    IrBuffer *b = cur->u.buf;
    IrExpr *e = ev_to_ir(ev, v, NULL, loc);
    if (!e) return false;
    IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, 1);
    idx[0] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
    ev_emit(ev, ir_store(ev->c, b, idx, 1, ir_cast(ev->c, b->dtype, e, loc), loc));
    return true;
  }
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
  env_set(ev, env, name, v);
  return true;
}

static bool store_buffer(Eval *ev, IrBuffer *b, BufIndex *bi, Value *v, SrcLoc loc) {
  if (!ev->block) {
    ts_error(ev->c, loc, "buffer stores are only allowed inside a @T.prim_func kernel");
    return false;
  }
  if (bi->any_slice) {
    ts_error(ev->c, loc, "assigning to a buffer slice is not supported: use T.fill or T.copy");
    return false;
  }
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  if (!e) return false;
  ev_emit(ev, ir_store(ev->c, b, bi->idx, bi->n, ir_cast(ev->c, b->dtype, e, loc), loc));
  return true;
}

static bool py_setitem(Eval *ev, Env *env, Value *base, const AstNode *index, Value *v, SrcLoc loc) {
  Value *key = eval(ev, env, index);
  if (!key) return false;
  if (base->kind == V_DICT) {
    for (int i = 0; i < base->u.dict.keys.n; i++)
      if (values_equal(base->u.dict.keys.items[i], key)) {
        base->u.dict.vals.items[i] = v;
        return true;
      }
    vl_push(ev, &base->u.dict.keys, key);
    vl_push(ev, &base->u.dict.vals, v);
    return true;
  }
  if (base->kind == V_LIST && (key->kind == V_INT || key->kind == V_BOOL)) {
    int64_t j = norm_index(num_i(key), base->u.seq.n);
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

static bool assign(Eval *ev, Env *env, const AstNode *t, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_POISON) {
    /* keep names defined so one error does not cascade */
    if (t->kind == AST_NAME) env_set(ev, env, t->id, ev->poison);
    else if (t->kind == AST_STARRED && t->value) assign(ev, env, t->value, NULL, loc);
    else if (t->kind == AST_TUPLE || t->kind == AST_LIST)
      for (int i = 0; i < t->items.n; i++) assign(ev, env, t->items.items[i], NULL, loc);
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
    if (!py_iter_items(ev, v, &items, t->loc)) {
      assign(ev, env, t, NULL, loc); /* targets become silent poison: no cascade */
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
      assign(ev, env, t, NULL, loc);
      return false;
    }
    bool ok = true;
    for (int i = 0, k = 0; i < t->items.n; i++) {
      if (i == star) {
        Value *rest = ev_new(ev, V_LIST);
        for (int n = items.n - fixed; n > 0; n--) vl_push(ev, &rest->u.seq, items.items[k++]);
        ok &= assign(ev, env, t->items.items[i]->value, rest, loc);
        continue;
      }
      ok &= assign(ev, env, t->items.items[i], items.items[k++], loc);
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
  case AST_STARRED: ts_error(ev->c, t->loc, "starred assignment targets are not supported"); return false;
  default: break;
  }
  ts_error(ev->c, t->loc, "cannot assign to %s", ast_kind_names[t->kind]);
  return false;
}

static bool exec_augassign(Eval *ev, Env *env, const AstNode *s) {
  const AstNode *t = s->target;
  Value *rhs = eval(ev, env, s->value);
  if (!rhs) return false;
  if (t->kind == AST_NAME) {
    Value *cur = eval_name(ev, env, t);
    if (!cur) return false;
    if (cur->kind == V_BUFFER && cur->u.buf->scope == IR_SCOPE_VAR) {
      Value *nv = ev_binop(ev, s->op, ev_expr(ev, load_var_buffer(ev, cur->u.buf, t->loc)), rhs, s->loc);
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
      if (bi.any_slice) {
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

static FuncFlavor decorator_flavor(const AstNode *def) {
  FuncFlavor fl = FN_PLAIN;
  for (int i = 0; i < def->decorators.n; i++) {
    const AstNode *d = def->decorators.items[i];
    if (d->kind == AST_CALL) d = d->func;
    const char *name = d->kind == AST_NAME || d->kind == AST_ATTRIBUTE ? d->id : NULL;
    if (!name) continue;
    if (!strcmp(name, "prim_func")) fl = FN_PRIM;
    else if (!strcmp(name, "macro")) fl = FN_MACRO;
  }
  return fl;
}

/* One loop frame as IR: nested FORs, target names bound to the loop variables. */
/* for i, j in T.Persistent([D0, D1], wave, index, group):
 *   for w in serial(0, ceildiv(D0*D1, wave)):
 *     let tile = index + w*wave
 *     let i = first + (tile % (group*D1)) % rows;  j = (tile % (group*D1)) / rows
 *         (first = tile / (group*D1) * group, rows = min(D0 - first, group): panels of
 *          `group` rows walked column by column, so blocks running together share tiles)
 *     if tile < D0*D1: body
 * A 1-D domain has i = tile. */
static ExecStatus exec_persistent_for(Eval *ev, Env *env, const AstNode *s, LoopFrame *f) {
  TsCompiler *c = ev->c;
  SrcLoc loc = s->loc;
  const AstNode *t = s->target;
  int nt = t->kind == AST_TUPLE || t->kind == AST_LIST ? t->items.n : 1;
  if (nt != f->ndim) {
    ts_error(c, t->loc, "T.Persistent: the domain has %d dimension%s but the loop has %d target%s", f->ndim,
             f->ndim == 1 ? "" : "s", nt, nt == 1 ? "" : "s");
    return EX_NORMAL;
  }
  for (int d = 0; d < nt; d++) {
    const AstNode *x = nt == 1 && t->kind != AST_TUPLE && t->kind != AST_LIST ? t : t->items.items[d];
    if (x->kind != AST_NAME) {
      ts_error(c, x->loc, "loop targets must be names");
      return EX_NORMAL;
    }
  }
  IrExpr *total = f->extent[0];
  if (f->ndim == 2) total = ir_binary(c, IR_MUL, total, f->extent[1], loc);
  IrVar *w = ir_var(c, "wave", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *nw = ir_binary(c, IR_FLOORDIV, ir_binary(c, IR_ADD, total, ir_binary(c, IR_SUB, f->wave, ir_i32(c, 1), loc), loc),
                         f->wave, loc);
  BlockSave outer = push_block(ev);
  ev_define_var(ev, w);
  IrVar *tv = ir_var(c, "tile", TS_DTYPE_INT32, IR_VAR_LET, loc);
  ev_define_var(ev, tv);
  ev_emit(ev, ir_let(c, tv, ir_binary(c, IR_ADD, f->index, ir_binary(c, IR_MUL, ir_varref(c, w, loc), f->wave, loc), loc), loc));
  IrExpr *tile = ir_varref(c, tv, loc), *coord[2];
  if (f->ndim == 1) {
    coord[0] = tile;
  } else {
    IrExpr *g = ir_i32(c, f->group), *gsize = ir_binary(c, IR_MUL, g, f->extent[1], loc);
    IrExpr *first = ir_binary(c, IR_MUL, ir_binary(c, IR_FLOORDIV, tile, gsize, loc), g, loc);
    IrExpr *rows = ir_binary(c, IR_MIN, ir_binary(c, IR_SUB, f->extent[0], first, loc), g, loc);
    IrExpr *local = ir_binary(c, IR_FLOORMOD, tile, gsize, loc);
    coord[0] = ir_binary(c, IR_ADD, first, ir_binary(c, IR_FLOORMOD, local, rows, loc), loc);
    coord[1] = ir_binary(c, IR_FLOORDIV, local, rows, loc);
  }
  for (int d = 0; d < f->ndim; d++) {
    const AstNode *x = nt == 1 && t->kind != AST_TUPLE && t->kind != AST_LIST ? t : t->items.items[d];
    IrVar *v = ir_var(c, x->id, TS_DTYPE_INT32, IR_VAR_LET, x->loc);
    ev_define_var(ev, v);
    ev_emit(ev, ir_let(c, v, coord[d], x->loc));
    env_set(ev, env, x->id, ev_expr(ev, ir_varref(c, v, x->loc)));
  }
  BlockSave inner = push_block(ev);
  LoopCtx lc = {true, ev->loop};
  ev->loop = &lc;
  ExecStatus st = exec_block(ev, env, &s->body);
  ev->loop = lc.outer;
  IrStmt *body = pop_block(ev, inner, env, "loop", loc);
  if (st == EX_RETURN) ts_error(c, loc, "'return' inside a kernel loop is not supported");
  ev_emit(ev, ir_if(c, ir_binary(c, IR_LT, tile, total, loc), body, NULL, loc));
  IrStmt *wb = pop_block(ev, outer, env, "loop", loc);
  ev_emit(ev, ir_for(c, w, ir_i32(c, 0), nw, IR_FOR_SERIAL, wb, loc));
  return EX_NORMAL;
}

static ExecStatus exec_ir_for(Eval *ev, Env *env, const AstNode *s, LoopFrame *f) {
  if (f->persistent) return exec_persistent_for(ev, env, s, f);
  const AstNode *t = s->target;
  int nt = t->kind == AST_TUPLE || t->kind == AST_LIST ? t->items.n : 1;
  if (nt != f->ndim) {
    ts_error(ev->c, t->loc, "loop has %d dimension%s but %d target%s", f->ndim, f->ndim == 1 ? "" : "s", nt,
             nt == 1 ? "" : "s");
    return EX_NORMAL;
  }
  BlockSave saved = push_block(ev);
  IrVar **vars = ARENA_ARRAY(ev->a, IrVar *, f->ndim);
  for (int d = 0; d < f->ndim; d++) {
    const AstNode *x = nt == 1 && t->kind != AST_TUPLE && t->kind != AST_LIST ? t : t->items.items[d];
    if (x->kind != AST_NAME) {
      ts_error(ev->c, x->loc, "loop targets must be names");
      pop_block(ev, saved, env, "loop", s->loc);
      return EX_NORMAL;
    }
    ts_dtype it = f->extent[d]->dtype == TS_DTYPE_INT64 || f->min[d]->dtype == TS_DTYPE_INT64 ? TS_DTYPE_INT64 : TS_DTYPE_INT32;
    vars[d] = ir_var(ev->c, x->id, it, IR_VAR_LOOP, x->loc);
    ev_define_var(ev, vars[d]);
    IrExpr *ref = ir_varref(ev->c, vars[d], x->loc);
    if (f->step) /* for i in range(a, b, s): loop over 0..n, i = a + k*s */
      ref = ir_binary(ev->c, IR_ADD, f->min[d], ir_binary(ev->c, IR_MUL, ref, f->step, x->loc), x->loc);
    env_set(ev, env, x->id, ev_expr(ev, ref));
  }
  LoopCtx lc = {true, ev->loop};
  ev->loop = &lc;
  ExecStatus st = exec_block(ev, env, &s->body);
  ev->loop = lc.outer;
  IrStmt *body = pop_block(ev, saved, env, "loop", s->loc);
  if (st == EX_RETURN) ts_error(ev->c, s->loc, "'return' inside a kernel loop is not supported");
  for (int d = f->ndim - 1; d >= 0; d--) {
    IrExpr *mn = f->step ? ir_int(ev->c, 0, vars[d]->dtype, s->loc) : f->min[d];
    body = ir_for(ev->c, vars[d], mn, f->extent[d], f->kind, body, s->loc);
    body->u.loop.num_stages = f->num_stages;
    body->u.loop.unroll_factor = f->unroll_factor;
    body->u.loop.order = f->order;
    body->u.loop.stage = f->stage;
    body->u.loop.norder = f->norder;
  }
  ev_emit(ev, body);
  return EX_NORMAL;
}

static ExecStatus exec_for(Eval *ev, Env *env, const AstNode *s) {
  Value *it = eval(ev, env, s->iter);
  if (!it) return EX_NORMAL;
  if (it->kind == V_FRAME && ev->block) return exec_ir_for(ev, env, s, it->u.frame);
  if (ev->staged && (it->kind == V_TUPLE || it->kind == V_LIST || it->kind == V_DICT || it->kind == V_STR)) {
    ts_error(ev->c, s->iter->loc,
             "cannot iterate over a Python %s inside a kernel: use T.serial(...), T.unroll(...) or range(...)",
             ev_type_name(it));
    return EX_NORMAL;
  }
  if (it->kind == V_FRAME && it->u.frame->kind != IR_FOR_SERIAL && !ev->block) {
    ts_error(ev->c, s->iter->loc, "this loop can only be used inside a @T.prim_func kernel");
    return EX_NORMAL;
  }
  ValList items = {0};
  if (!py_iter_items(ev, it, &items, s->iter->loc)) return EX_NORMAL;
  LoopCtx lc = {false, ev->loop};
  ev->loop = &lc;
  ExecStatus res = EX_NORMAL;
  bool broke = false;
  for (int i = 0; i < items.n; i++) {
    if (!step(ev, s->loc)) break;
    assign(ev, env, s->target, items.items[i], s->loc);
    ExecStatus st = exec_block(ev, env, &s->body);
    if (st == EX_BREAK) { broke = true; break; }
    if (st == EX_RETURN) { res = st; break; }
    if (ev->c->diag.errors > 50) break;
  }
  ev->loop = lc.outer;
  if (res == EX_NORMAL && !broke && s->orelse.n) res = exec_block(ev, env, &s->orelse);
  return res;
}

static ExecStatus exec_while(Eval *ev, Env *env, const AstNode *s) {
  for (;;) {
    Value *t = eval(ev, env, s->test);
    int tv = ev_truth(ev, t, s->test->loc);
    if (tv == -2) return EX_NORMAL;
    if (tv == -1) {
      if (!ev->block) {
        ts_error(ev->c, s->test->loc, "a while loop on an IR condition is only allowed inside a kernel");
        return EX_NORMAL;
      }
      IrExpr *cond = ev_to_bool_ir(ev, ev_to_ir(ev, t, NULL, s->loc), s->loc);
      BlockSave saved = push_block(ev);
      LoopCtx lc = {true, ev->loop};
      ev->loop = &lc;
      exec_block(ev, env, &s->body);
      ev->loop = lc.outer;
      IrStmt *body = pop_block(ev, saved, env, "loop", s->loc);
      IrStmt *w = ir_stmt(ev->c, IR_S_WHILE, s->loc);
      w->u.while_.cond = cond;
      w->u.while_.body = body;
      ev_emit(ev, w);
      return EX_NORMAL;
    }
    if (!tv) return s->orelse.n ? exec_block(ev, env, &s->orelse) : EX_NORMAL;
    if (!step(ev, s->loc)) return EX_NORMAL;
    LoopCtx lc = {false, ev->loop};
    ev->loop = &lc;
    ExecStatus st = exec_block(ev, env, &s->body);
    ev->loop = lc.outer;
    if (st == EX_BREAK) return EX_NORMAL;
    if (st == EX_RETURN) return st;
  }
}

static ExecStatus exec_if(Eval *ev, Env *env, const AstNode *s) {
  Value *t = eval(ev, env, s->test);
  int tv = ev_truth(ev, t, s->test->loc);
  if (tv == -2) return EX_NORMAL;
  if (tv >= 0) return exec_block(ev, env, tv ? &s->body : &s->orelse);
  if (!ev->block) {
    ts_error(ev->c, s->test->loc, "an 'if' on an IR value is only allowed inside a kernel");
    return EX_NORMAL;
  }
  IrExpr *cond = ev_to_bool_ir(ev, ev_to_ir(ev, t, NULL, s->loc), s->loc);
  if (!cond) return EX_NORMAL;
  BlockSave saved = push_block(ev);
  ExecStatus a = exec_block(ev, env, &s->body);
  IrStmt *then_s = pop_block(ev, saved, env, "branch of an IR 'if'", s->loc);
  IrStmt *else_s = NULL;
  ExecStatus b = EX_NORMAL;
  if (s->orelse.n) {
    saved = push_block(ev);
    b = exec_block(ev, env, &s->orelse);
    else_s = pop_block(ev, saved, env, "branch of an IR 'if'", s->loc);
  }
  if (a == EX_RETURN || b == EX_RETURN) ts_error(ev->c, s->loc, "'return' inside an IR 'if' is not supported");
  ev_emit(ev, ir_if(ev->c, cond, then_s, else_s, s->loc));
  return EX_NORMAL;
}

static ExecStatus exec_kernel(Eval *ev, Env *env, const AstNode *s, const AstNode *target, KernelFrame *kf) {
  SrcLoc loc = s->loc;
  if (!ev->block) {
    ts_error(ev->c, loc, "T.Kernel can only be used inside a @T.prim_func");
    return EX_NORMAL;
  }
  if (ev->kernel) {
    ts_error(ev->c, loc, "T.Kernel blocks cannot be nested");
    return EX_NORMAL;
  }
  IrStmt *k = ir_stmt(ev->c, IR_S_KERNEL, loc);
  static const char *const dflt[3] = {"bx", "by", "bz"};
  int nt = !target ? 0 : (target->kind == AST_TUPLE || target->kind == AST_LIST) ? target->items.n : 1;
  bool tuple_target = target && (target->kind == AST_TUPLE || target->kind == AST_LIST);
  if (tuple_target && nt != kf->ngrid) {
    ts_error(ev->c, target->loc, "T.Kernel has %d grid dimension%s but %d names are bound", kf->ngrid,
             kf->ngrid == 1 ? "" : "s", nt);
    return EX_NORMAL;
  }
  Value *vars = ev_new(ev, V_TUPLE);
  for (int i = 0; i < 3; i++) {
    k->u.kernel.grid[i] = i < kf->ngrid ? kf->grid[i] : ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
    k->u.kernel.threads[i] = kf->threads[i];
    if (i >= kf->ngrid) continue;
    const char *name = dflt[i];
    SrcLoc vloc = loc;
    if (tuple_target && target->items.items[i]->kind == AST_NAME) {
      name = target->items.items[i]->id;
      vloc = target->items.items[i]->loc;
    } else if (target && !tuple_target && target->kind == AST_NAME && kf->ngrid == 1) {
      name = target->id;
      vloc = target->loc;
    }
    IrVar *v = ir_var(ev->c, name, TS_DTYPE_INT32, IR_VAR_BLOCK_IDX, vloc);
    v->axis = i;
    k->u.kernel.block_var[i] = v;
    vl_push(ev, &vars->u.seq, ev_expr(ev, ir_varref(ev->c, v, vloc)));
  }
  k->u.kernel.prelude = kf->prelude;
  if (target) {
    if (!tuple_target && kf->ngrid == 1) assign(ev, env, target, vars->u.seq.items[0], loc);
    else assign(ev, env, target, vars, loc);
  }
  ev->kernel = k;
  BlockSave saved = push_block(ev);
  for (int i = 0; i < 3; i++)
    if (k->u.kernel.block_var[i]) ev_define_var(ev, k->u.kernel.block_var[i]);
  ExecStatus st = exec_block(ev, env, &s->body);
  for (int i = 0; i < 3; i++)
    if (k->u.kernel.thread_var[i]) ev_define_var(ev, k->u.kernel.thread_var[i]);
  k->u.kernel.body = pop_block(ev, saved, env, "T.Kernel block", loc);
  ev->kernel = NULL;
  ev_emit(ev, k);
  if (st == EX_RETURN) ts_error(ev->c, loc, "'return' inside T.Kernel is not supported");
  return EX_NORMAL;
}

/* `with T.Kernel(...)` (or `with Kernel(...)` imported from tilelang.language), by syntax:
 * its value is unknown when its arguments were wrong. */
static bool is_kernel_call(const AstNode *e) {
  if (!e || e->kind != AST_CALL || !e->func) return false;
  const AstNode *f = e->func;
  return (f->kind == AST_ATTRIBUTE || f->kind == AST_NAME) && f->id && !strcmp(f->id, "Kernel");
}

/* A T.Kernel whose arguments were wrong (reported): its body still runs, inside a stand-in
 * kernel whose IR is dropped, so that the body's own errors are found but nothing in it is
 * reported again for not being inside a kernel (one mistake, one diagnostic).  The
 * `as` names are poison, which every use passes on silently. */
static ExecStatus exec_failed_kernel(Eval *ev, Env *env, const AstNode *s) {
  if (s->withitems[0].vars) assign(ev, env, s->withitems[0].vars, NULL, s->loc);
  IrStmt *k = ir_stmt(ev->c, IR_S_KERNEL, s->loc);
  for (int i = 0; i < 3; i++) {
    k->u.kernel.grid[i] = ir_int(ev->c, 1, TS_DTYPE_INT32, s->loc);
    k->u.kernel.threads[i] = i ? 1 : 128;
  }
  ev->kernel = k;
  BlockSave saved = push_block(ev);
  exec_block(ev, env, &s->body);
  (void)pop_block(ev, saved, env, "T.Kernel block", s->loc);
  ev->kernel = NULL;
  return EX_NORMAL;
}

static ExecStatus exec_with(Eval *ev, Env *env, const AstNode *s) {
  if (s->nwithitems != 1) {
    ts_error(ev->c, s->loc, "only one context per 'with' is supported");
    return EX_NORMAL;
  }
  Value *ctx = eval(ev, env, s->withitems[0].context);
  if ((!ctx || ctx->kind == V_POISON) && ev->block && !ev->kernel && is_kernel_call(s->withitems[0].context))
    return exec_failed_kernel(ev, env, s);
  if (!ctx || ctx->kind == V_POISON) { /* keep reporting errors inside; `as` names stay silent */
    if (s->withitems[0].vars) assign(ev, env, s->withitems[0].vars, NULL, s->loc);
    return exec_block(ev, env, &s->body);
  }
  if (ctx->kind == V_KERNEL) return exec_kernel(ev, env, s, s->withitems[0].vars, ctx->u.kernel);
  if (ctx->kind == V_OPAQUE && ev->block) {
    /* An unsupported frame (T.ws, T.attr...): its UNSUPPORTED statement is already emitted. */
    if (s->withitems[0].vars) assign(ev, env, s->withitems[0].vars, ctx, s->loc);
    return exec_block(ev, env, &s->body);
  }
  if (ctx->kind == V_OPAQUE) {
    use_opaque(ev, ctx, s->loc);
    return EX_NORMAL;
  }
  ts_error(ev->c, s->loc, "'%s' object cannot be used in a 'with' statement", ev_type_name(ctx));
  return EX_NORMAL;
}

static ExecStatus exec_stmt(Eval *ev, Env *env, const AstNode *s) {
  ev->stmt_loc = s->loc;
  switch (s->kind) {
  case AST_EXPR: {
    Value *v = eval(ev, env, s->value);
    (void)v;
    return EX_NORMAL;
  }
  case AST_ASSIGN: {
    const char *pending = NULL;
    if (s->items.n == 1 && s->items.items[0]->kind == AST_NAME) pending = s->items.items[0]->id;
    ev->pending_name = pending;
    Value *v = eval(ev, env, s->value);
    ev->pending_name = NULL;
    for (int i = 0; i < s->items.n; i++) assign(ev, env, s->items.items[i], v, s->loc);
    return EX_NORMAL;
  }
  case AST_AUGASSIGN: exec_augassign(ev, env, s); return EX_NORMAL;
  case AST_ANNASSIGN: {
    const AstNode *t = s->target;
    if (s->value) {
      if (t->kind == AST_NAME) ev->pending_name = t->id;
      Value *v = eval(ev, env, s->value);
      ev->pending_name = NULL;
      assign(ev, env, t, v, s->loc);
      return EX_NORMAL;
    }
    /* Eager style: `A: T.Tensor((M, K), dtype)` declares a tensor parameter. */
    if (ev->eager && t->kind == AST_NAME) {
      for (int i = 0; i < ev->eager_pending.len; i++)
        if (!strcmp(ev->eager_pending.items[i], t->id)) {
          Value *ann = eval(ev, env, s->annotation);
          if (!ann || ann->kind != V_TENSORTYPE) {
            if (ann && ann->kind != V_POISON)
              ts_error(ev->c, s->annotation->loc, "parameter '%s' must be declared with T.Tensor(shape, dtype), got %s",
                       t->id, ev_type_name(ann));
            /* declared, but unusable: later uses and the missing-value check stay silent */
            ev->eager_pending.items[i] = (void *)"";
            env_set(ev, env, t->id, ev->poison);
            return EX_NORMAL;
          }
          IrExpr **shape = ARENA_ARRAY(ev->a, IrExpr *, ann->u.tt.shape->u.seq.n);
          for (int d = 0; d < ann->u.tt.shape->u.seq.n; d++)
            if (!(shape[d] = ev_to_ir(ev, ann->u.tt.shape->u.seq.items[d], NULL, s->loc))) return EX_NORMAL;
          IrBuffer *b = ir_buffer(ev->c, t->id, ann->u.tt.dtype, IR_SCOPE_GLOBAL, ann->u.tt.shape->u.seq.n, shape, t->loc);
          IrParam *p = ARENA_NEW(ev->a, IrParam);
          p->name = t->id;
          p->buf = b;
          vec_push(ev->a, &ev->eager_params, p);
          ev->eager_pending.items[i] = (void *)""; /* declared */
          Value *bv = ev_new(ev, V_BUFFER);
          bv->u.buf = b;
          env_set(ev, env, t->id, bv);
          return EX_NORMAL;
        }
    }
    return EX_NORMAL; /* `x: T.int32` without a value declares nothing */
  }
  case AST_FOR: return exec_for(ev, env, s);
  case AST_WHILE: return exec_while(ev, env, s);
  case AST_IF: return exec_if(ev, env, s);
  case AST_WITH: return exec_with(ev, env, s);
  case AST_RETURN:
    ev->ret = s->value ? eval(ev, env, s->value) : ev->none;
    if (!ev->ret) ev->ret = ev->poison;
    return EX_RETURN;
  case AST_PASS: return EX_NORMAL;
  case AST_BREAK:
  case AST_CONTINUE:
    if (!ev->loop) {
      ts_error(ev->c, s->loc, "'%s' outside loop", s->kind == AST_BREAK ? "break" : "continue");
      return EX_NORMAL;
    }
    if (ev->loop->is_ir) {
      ev_emit(ev, ir_stmt(ev->c, s->kind == AST_BREAK ? IR_S_BREAK : IR_S_CONTINUE, s->loc));
      return EX_NORMAL;
    }
    return s->kind == AST_BREAK ? EX_BREAK : EX_CONTINUE;
  case AST_FUNCTIONDEF: {
    Value *f = ev_new(ev, V_FUNC);
    f->u.fn.def = s;
    f->u.fn.env = env;
    f->u.fn.flavor = decorator_flavor(s);
    env_set(ev, env, s->id, f);
    return EX_NORMAL;
  }
  case AST_CLASSDEF:
    env_set(ev, env, s->id, ev_opaque(ev, arena_printf(ev->a, "class '%s' cannot be used in kernels", s->id)));
    return EX_NORMAL;
  case AST_ASSERT: {
    Value *t = eval(ev, env, s->test);
    int tv = ev_truth(ev, t, s->test->loc);
    if (tv == -2) return EX_NORMAL;
    const char *msg = NULL;
    if (s->msg) {
      Value *m = eval(ev, env, s->msg);
      if (m) msg = ev_strval(ev, m);
    }
    if (tv == 0) {
      ts_error(ev->c, s->loc, "assertion failed%s%s", msg ? ": " : "", msg ? msg : "");
      return EX_NORMAL;
    }
    if (tv == -1 && ev->block) {
      IrStmt *a = ir_stmt(ev->c, IR_S_ASSERT, s->loc);
      a->u.assert_.cond = ev_to_bool_ir(ev, ev_to_ir(ev, t, NULL, s->loc), s->loc);
      a->u.assert_.msg = msg ? msg : "assertion failed";
      ev_emit(ev, a);
    }
    return EX_NORMAL;
  }
  case AST_RAISE: {
    Value *v = s->value ? eval(ev, env, s->value) : NULL;
    ts_error(ev->c, s->loc, "exception raised%s%s", v ? ": " : "", v ? ev_strval(ev, v) : "");
    return EX_RETURN;
  }
  case AST_IMPORT:
  case AST_IMPORTFROM: ev_exec_import(ev, env, s); return EX_NORMAL;
  case AST_TRY: return exec_block(ev, env, &s->body);
  case AST_DELETE:
  case AST_GLOBAL:
  case AST_NONLOCAL: return EX_NORMAL;
  default: break;
  }
  ts_error(ev->c, s->loc, "%s statements are not supported", ast_kind_names[s->kind]);
  return EX_NORMAL;
}

ExecStatus ev_exec_stmt(Eval *ev, Env *env, const AstNode *s) { return exec_stmt(ev, env, s); }

static ExecStatus exec_block(Eval *ev, Env *env, const AstList *body) {
  for (int i = 0; i < body->n; i++) {
    ExecStatus st = exec_stmt(ev, env, body->items[i]);
    if (st != EX_NORMAL) return st;
    if (ev->c->diag.errors >= 50) return EX_RETURN; /* runaway: stop producing noise */
  }
  return EX_NORMAL;
}

/* ---- setup ---------------------------------------------------------------------------------- */
static void eval_init(Eval *ev, TsCompiler *c) {
  memset(ev, 0, sizeof *ev);
  ev->c = c;
  ev->a = c->arena;
  ev->none = ev_new(ev, V_NONE);
  ev->vtrue = ev_new(ev, V_BOOL);
  ev->vtrue->u.b = true;
  ev->vfalse = ev_new(ev, V_BOOL);
  ev->poison = ev_new(ev, V_POISON);
  ev->limit_depth = c->limit_depth > 0 ? c->limit_depth : DEFAULT_LIMIT_DEPTH;
  ev->limit_steps = c->limit_steps > 0 ? c->limit_steps : DEFAULT_LIMIT_STEPS;
  ev->limit_bytes = c->limit_bytes > 0 ? c->limit_bytes : DEFAULT_LIMIT_BYTES;
  ev->builtins = env_new(ev, NULL);
  bi_install_builtins(ev, ev->builtins);
  ev->main_module = ev_module_new(ev, "__main__", false);
  ev->globals = ev->main_module->globals;
}

static const AstNode *find_def(const AstNode *module, const char *name) {
  const AstNode *found = NULL;
  for (int i = 0; i < module->body.n; i++) {
    const AstNode *s = module->body.items[i];
    if (s->kind == AST_FUNCTIONDEF && !strcmp(s->id, name)) found = s;
  }
  return found;
}

static bool contains_prim_func(const AstList *body) {
  for (int i = 0; i < body->n; i++) {
    const AstNode *s = body->items[i];
    if (s->kind == AST_FUNCTIONDEF && decorator_flavor(s) == FN_PRIM) return true;
    if ((s->kind == AST_IF || s->kind == AST_FOR || s->kind == AST_WHILE || s->kind == AST_WITH || s->kind == AST_TRY) &&
        (contains_prim_func(&s->body) || contains_prim_func(&s->orelse)))
      return true;
  }
  return false;
}

static bool decorated_as(const AstNode *def, const char *suffix) {
  for (int i = 0; i < def->decorators.n; i++) {
    const AstNode *d = def->decorators.items[i];
    if (d->kind == AST_CALL) d = d->func;
    if ((d->kind == AST_NAME || d->kind == AST_ATTRIBUTE) && d->id && !strcmp(d->id, suffix)) return true;
  }
  return false;
}

int front_list_functions(const AstNode *module, const char **names, int max) {
  int n = 0;
  if (!module) return 0;
  for (int i = 0; i < module->body.n; i++) {
    const AstNode *s = module->body.items[i];
    if (s->kind != AST_FUNCTIONDEF) continue;
    if (decorator_flavor(s) == FN_PRIM || decorated_as(s, "jit") || decorated_as(s, "autotune") ||
        contains_prim_func(&s->body)) {
      if (n < max && names) names[n] = s->id;
      n++;
    }
  }
  return n < max || !names ? n : max;
}

/* Scope for -D values: builtins plus T, tilelang and bare dtype names. */
static Env *dparam_env(Eval *ev) {
  static const char *const dtypes[] = {"float16", "half", "bfloat16", "float32", "float64", "double", "int8",
                                       "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                       "float8_e4m3", "float8_e4m3fn", "float8_e5m2"};
  Env *e = env_new(ev, ev->builtins);
  env_set(ev, e, "T", bi_module(ev, MOD_T));
  env_set(ev, e, "tilelang", bi_module(ev, MOD_TILELANG));
  for (int i = 0; i < TS_ARRAY_LEN(dtypes); i++) {
    Value *v = bi_module_attr(ev, MOD_T, dtypes[i], SRCLOC_NONE);
    if (v && v->kind == V_DTYPE) env_set(ev, e, dtypes[i], v);
  }
  return e;
}

static bool parse_dparams(Eval *ev, const ts_param *params, int nparams) {
  Env *denv = dparam_env(ev);
  bool ok = true;
  ev->nd = nparams;
  ev->dnames = ARENA_ARRAY(ev->a, const char *, nparams);
  ev->dvals = ARENA_ARRAY(ev->a, Value *, nparams);
  ev->dused = ARENA_ARRAY(ev->a, bool, nparams);
  for (int i = 0; i < nparams; i++) {
    SourceFile *sf = ARENA_NEW(ev->a, SourceFile);
    sf->name = arena_printf(ev->a, "-D %s", params[i].name);
    sf->text = arena_strdup(ev->a, params[i].value ? params[i].value : "");
    sf->len = strlen(sf->text);
    ev->dnames[i] = arena_strdup(ev->a, params[i].name);
    AstNode *e = parse_expression(ev->c, sf);
    Value *v = e ? eval(ev, denv, e) : NULL;
    if (v && v->kind != V_POISON && v->kind != V_BOOL && v->kind != V_INT && v->kind != V_FLOAT && v->kind != V_STR &&
        v->kind != V_DTYPE && v->kind != V_TUPLE && v->kind != V_LIST && v->kind != V_NONE) {
      ts_error(ev->c, e->loc, "-D %s: expected a constant (int, float, bool, str, dtype or tuple), got %s",
               params[i].name, ev_type_name(v));
      v = NULL;
    }
    if (!v) ok = false;
    ev->dvals[i] = v ? v : ev->poison;
  }
  return ok;
}

/* Parameter list of a def for messages: "M, N, block_M=128". */
static const char *param_list_defaults(Eval *ev, const AstNode *def) {
  StrBuf sb = {0};
  for (int i = 0; i < def->params.n; i++) {
    const AstParam *p = &def->params.items[i];
    if (i) sb_append(&sb, ", ");
    sb_append(&sb, p->name);
    if (p->default_value) sb_append(&sb, "=...");
  }
  if (!def->params.n) sb_append(&sb, "(none)");
  const char *s = arena_strdup(ev->a, sb_str(&sb));
  sb_free(&sb);
  return s;
}

static bool has_param(const AstNode *def, const char *name) {
  for (int i = 0; i < def->params.n; i++)
    if (!strcmp(def->params.items[i].name, name)) return true;
  return false;
}

/* T.const("M, N") names in an eager body (they may be bound by -D too). */
static void collect_tconst(const AstNode *n, Eval *ev, PtrVec *out);
static void collect_tconst_list(const AstList *l, Eval *ev, PtrVec *out) {
  for (int i = 0; i < l->n; i++) collect_tconst(l->items[i], ev, out);
}
static void collect_tconst(const AstNode *n, Eval *ev, PtrVec *out) {
  if (!n) return;
  if (n->kind == AST_CALL && n->func && n->func->kind == AST_ATTRIBUTE && !strcmp(n->func->id, "const") &&
      n->items.n >= 1 && n->items.items[0]->kind == AST_CONST_STR) {
    const char *s = n->items.items[0]->sval;
    while (s && *s) {
      while (*s == ' ' || *s == ',') s++;
      const char *b = s;
      while (*s && *s != ' ' && *s != ',') s++;
      if (s > b) vec_push(ev->a, out, arena_strndup(ev->a, b, (size_t)(s - b)));
    }
    return;
  }
  if (AST_IS_CONST(n)) return;
  /* Only the fields n's kind has: nodes are allocated up to their kind's last field. */
  collect_tconst(n->value, ev, out);
  if (AST_HAS(n, func)) collect_tconst(n->func, ev, out);
  if (AST_HAS(n, left)) collect_tconst(n->left, ev, out);
  if (AST_HAS(n, right)) collect_tconst(n->right, ev, out);
  if (AST_HAS(n, items)) collect_tconst_list(&n->items, ev, out);
  if (AST_HAS(n, body)) collect_tconst_list(&n->body, ev, out);
  if (AST_HAS(n, orelse)) collect_tconst_list(&n->orelse, ev, out);
}

static IrFunc *new_func(Eval *ev, const AstNode *def) {
  IrFunc *f = ARENA_NEW(ev->a, IrFunc);
  f->name = def->id;
  f->loc = def->loc;
  return f;
}

static void finish_func(Eval *ev, IrFunc *f) {
  f->ndyn = ev->dyn_vars.len;
  f->dyn_vars = ARENA_ARRAY(ev->a, IrVar *, f->ndyn);
  for (int i = 0; i < f->ndyn; i++) f->dyn_vars[i] = ev->dyn_vars.items[i];
}

/* Traces a @T.prim_func: parameter annotations become buffers/scalars, the body IR. */
static IrFunc *trace_prim_func(Eval *ev, Value *fn) {
  const AstNode *def = fn->u.fn.def;
  IrFunc *f = new_func(ev, def);
  Env *env = env_new(ev, fn->u.fn.env);
  f->nparams = def->params.n;
  f->params = ARENA_ARRAY(ev->a, IrParam, f->nparams);
  for (int i = 0; i < def->params.n; i++) {
    const AstParam *p = &def->params.items[i];
    IrParam *ip = &f->params[i];
    ip->name = p->name;
    if (!p->annotation) {
      ts_error(ev->c, p->loc, "parameter '%s' of a @T.prim_func needs an annotation: T.Tensor(shape, dtype) or a dtype",
               p->name);
      env_set(ev, env, p->name, ev->poison);
      continue;
    }
    Value *ann = eval(ev, fn->u.fn.env, p->annotation);
    if (!ann) {
      env_set(ev, env, p->name, ev->poison);
      continue;
    }
    if (ann->kind == V_TENSORTYPE) {
      int nd = ann->u.tt.shape->u.seq.n;
      IrExpr **shape = ARENA_ARRAY(ev->a, IrExpr *, nd);
      bool ok = true;
      for (int d = 0; d < nd; d++) ok &= (shape[d] = ev_to_ir(ev, ann->u.tt.shape->u.seq.items[d], NULL, p->loc)) != NULL;
      if (!ok) { env_set(ev, env, p->name, ev->poison); continue; }
      ip->buf = ir_buffer(ev->c, p->name, ann->u.tt.dtype, IR_SCOPE_GLOBAL, nd, shape, p->loc);
      ip->buf->param_index = i;
      if (ann->u.tt.strides) { /* T.StridedTensor */
        ip->buf->strides = ARENA_ARRAY(ev->a, IrExpr *, nd);
        for (int d = 0; d < nd; d++)
          ok &= (ip->buf->strides[d] = ev_to_ir(ev, ann->u.tt.strides->u.seq.items[d], NULL, p->loc)) != NULL;
      }
      Value *bv = ev_new(ev, V_BUFFER);
      bv->u.buf = ip->buf;
      env_set(ev, env, p->name, bv);
    } else if (ann->kind == V_DTYPE || ann->kind == V_STR) {
      ts_dtype t;
      if (!ev_to_dtype(ev, ann, &t, p->annotation->loc)) { env_set(ev, env, p->name, ev->poison); continue; }
      ip->var = ir_var(ev->c, p->name, t, IR_VAR_PARAM, p->loc);
      env_set(ev, env, p->name, ev_expr(ev, ir_varref(ev->c, ip->var, p->loc)));
    } else {
      ts_error(ev->c, p->annotation->loc, "parameter '%s': expected T.Tensor(shape, dtype) or a dtype, got %s", p->name,
               ev_type_name(ann));
      env_set(ev, env, p->name, ev->poison);
    }
  }
  PtrVec top = {0};
  ev->block = &top;
  ev->scope = ARENA_NEW(ev->a, DefScope);
  ev->func = f;
  ev->staged = true;
  ev->loop = NULL;
  exec_block(ev, env, &def->body);
  ev->block = NULL;
  ev->staged = false;
  f->body = ir_seq_vec(ev->c, &top, def->loc);
  finish_func(ev, f);
  return f;
}

/* @autotune(configs=...): the config list is evaluated for the runtime's tuner.  It is
 * host-side Python (often get_configs() with itertools.product); if it cannot be
 * evaluated here the kernel still compiles, with a warning instead of the list. */
static void read_autotune(Eval *ev, const AstNode *d, IrFunc *f) {
  for (int k = 0; k < d->nkwargs; k++) {
    const AstKeyword *kw = &d->kwargs[k];
    if (!kw->name || strcmp(kw->name, "configs")) continue;
    Diag saved = ev->c->diag, quiet = {0};
    ev->c->diag = quiet;
    Value *v = eval(ev, ev->globals, kw->value);
    ValList items = {0};
    bool ok = v && ev->c->diag.errors == 0 && py_iter_items(ev, v, &items, kw->value->loc);
    char *first = NULL;
    if (!ok && ev->c->diag.errors) { /* keep the first line of the first error for the warning */
      const char *msg = strstr(sb_str(&ev->c->diag.out), "error: ");
      if (msg) first = arena_strndup(ev->a, msg + 7, strcspn(msg + 7, "\n"));
    }
    diag_free(&ev->c->diag);
    ev->c->diag = saved;
    if (!ok) {
      diag_warning(&ev->c->diag, kw->value->loc, "@autotune configs could not be evaluated%s%s; tuning is disabled",
                   first ? ": " : "", first ? first : "");
      continue;
    }
    Value *list = ev_new(ev, V_LIST);
    list->u.seq = items;
    f->autotune_configs = ev_repr(ev, list);
    f->nautotune_configs = items.n;
  }
}

/* Reads out_idx and pass_configs from @tilelang.jit(...), configs from @autotune(...). */
static void read_jit_decorator(Eval *ev, const AstNode *def, IrFunc *f) {
  for (int i = 0; i < def->decorators.n; i++) {
    const AstNode *d = def->decorators.items[i];
    if (d->kind == AST_CALL && d->func && d->func->id && !strcmp(d->func->id, "autotune")) {
      read_autotune(ev, d, f);
      continue;
    }
    if (d->kind != AST_CALL || !d->func || !d->func->id || strcmp(d->func->id, "jit")) continue;
    for (int k = 0; k < d->nkwargs; k++) {
      const AstKeyword *kw = &d->kwargs[k];
      if (!kw->name) continue;
      if (!strcmp(kw->name, "out_idx")) {
        Value *v = eval(ev, ev->globals, kw->value);
        if (!v || v->kind == V_NONE || v->kind == V_POISON) continue;
        ValList items = {0};
        if (v->kind == V_INT) vl_push(ev, &items, v);
        else if (!py_iter_items(ev, v, &items, kw->value->loc)) continue;
        f->out_idx = ARENA_ARRAY(ev->a, int, items.n);
        f->nout_idx = 0;
        for (int j = 0; j < items.n; j++) {
          int64_t x;
          if (!ev_to_int(ev, items.items[j], &x, kw->value->loc)) continue;
          int64_t norm = x < 0 ? x + f->nparams : x;
          if (norm < 0 || norm >= f->nparams) {
            ts_error(ev->c, kw->value->loc, "out_idx %lld is out of range for %d parameters", (long long)x, f->nparams);
            continue;
          }
          f->out_idx[f->nout_idx++] = (int)norm;
        }
      } else if (!strcmp(kw->name, "pass_configs")) {
        Value *v = eval(ev, ev->globals, kw->value);
        if (!v || v->kind != V_DICT) continue;
        f->npass_configs = v->u.dict.keys.n;
        f->pass_configs = ARENA_ARRAY(ev->a, IrKV, f->npass_configs);
        for (int j = 0; j < v->u.dict.keys.n; j++) {
          Value *key = v->u.dict.keys.items[j], *val = v->u.dict.vals.items[j];
          f->pass_configs[j].key = ev_strval(ev, key);
          f->pass_configs[j].value = ev_strval(ev, val);
          if (!strcmp(f->pass_configs[j].key, "tl.enable_fast_math") && ev_truth(ev, val, kw->value->loc) == 1)
            ev->c->fast_math = true;
        }
      }
    }
  }
}

static IrFunc *compile_lazy(Eval *ev, const AstNode *def, Value *fn) {
  /* -D names must be parameters of the factory; every required one needs a value. */
  bool ok = true;
  for (int i = 0; i < ev->nd; i++)
    if (!has_param(def, ev->dnames[i])) {
      ts_error(ev->c, def->loc, "unknown parameter '%s' for '%s' (parameters: %s)", ev->dnames[i], def->id,
               param_list_defaults(ev, def));
      ok = false;
    }
  CallArgs a = {0};
  a.kw = ARENA_ARRAY(ev->a, const char *, def->params.n);
  a.kwv = ARENA_ARRAY(ev->a, Value *, def->params.n);
  for (int i = 0; i < def->params.n; i++) {
    const AstParam *p = &def->params.items[i];
    int j = -1;
    for (int k = 0; k < ev->nd; k++)
      if (!strcmp(ev->dnames[k], p->name)) j = k;
    if (j >= 0) {
      a.kw[a.nkw] = p->name;
      a.kwv[a.nkw++] = ev->dvals[j];
    } else if (!p->default_value && p->kind != APARAM_VARARGS && p->kind != APARAM_VARKW) {
      ts_error(ev->c, def->loc, "missing value for parameter '%s' of '%s': pass -D %s=... (parameters: %s)", p->name,
               def->id, p->name, param_list_defaults(ev, def));
      ok = false;
    }
  }
  if (!ok) return NULL;
  Value *r = call_func(ev, fn, &a);
  if (!r || r->kind == V_POISON) return NULL;
  if (r->kind != V_FUNC || r->u.fn.flavor != FN_PRIM) {
    ts_error(ev->c, def->loc, "'%s' returned %s, expected a @T.prim_func", def->id, ev_type_name(r));
    return NULL;
  }
  IrFunc *f = trace_prim_func(ev, r);
  f->name = def->id;
  read_jit_decorator(ev, def, f);
  return f;
}

static IrFunc *compile_prim(Eval *ev, const AstNode *def, Value *fn) {
  bool ok = true;
  for (int i = 0; i < ev->nd; i++) {
    const char *n = ev->dnames[i];
    if (!strmap_has(&ev->main_module->lazy, n) && !strmap_has(&ev->globals->vars, n)) {
      ts_error(ev->c, def->loc, "unknown parameter '%s': '%s' is a @T.prim_func, -D can only override module-level constants",
               n, def->id);
      ok = false;
      continue;
    }
    env_set(ev, ev->globals, n, ev->dvals[i]);
  }
  if (!ok) return NULL;
  IrFunc *f = trace_prim_func(ev, fn);
  read_jit_decorator(ev, def, f);
  return f;
}

/* Eager @tilelang.jit: the body is the kernel; parameters without a value are tensors
 * declared by annotation; T.empty results become trailing output parameters. */
static IrFunc *compile_eager(Eval *ev, const AstNode *def, Value *fn) {
  PtrVec consts = {0};
  collect_tconst_list(&def->body, ev, &consts);
  bool ok = true;
  for (int i = 0; i < ev->nd; i++) {
    bool known = has_param(def, ev->dnames[i]);
    for (int k = 0; k < consts.len && !known; k++) known = !strcmp(consts.items[k], ev->dnames[i]);
    if (!known) {
      StrBuf sb = {0};
      sb_append(&sb, param_list_defaults(ev, def));
      for (int k = 0; k < consts.len; k++) sb_printf(&sb, ", %s", (const char *)consts.items[k]);
      ts_error(ev->c, def->loc, "unknown parameter '%s' for '%s' (parameters: %s)", ev->dnames[i], def->id, sb_str(&sb));
      sb_free(&sb);
      ok = false;
    }
  }
  if (!ok) return NULL;
  IrFunc *f = new_func(ev, def);
  Env *env = env_new(ev, fn->u.fn.env);
  ev->eager = true;
  for (int i = 0; i < def->params.n; i++) {
    const AstParam *p = &def->params.items[i];
    int j = -1;
    for (int k = 0; k < ev->nd; k++)
      if (!strcmp(ev->dnames[k], p->name)) j = k;
    if (j >= 0) env_set(ev, env, p->name, ev->dvals[j]);
    else if (p->default_value) env_set(ev, env, p->name, eval(ev, fn->u.fn.env, p->default_value));
    else vec_push(ev->a, &ev->eager_pending, (void *)p->name);
  }
  PtrVec top = {0};
  ev->block = &top;
  ev->scope = ARENA_NEW(ev->a, DefScope);
  ev->func = f;
  ev->staged = true;
  ev->ret = NULL;
  exec_block(ev, env, &def->body);
  ev->block = NULL;
  ev->staged = false;
  f->body = ir_seq_vec(ev->c, &top, def->loc);
  for (int i = 0; i < ev->eager_pending.len; i++) {
    const char *n = ev->eager_pending.items[i];
    if (*n)
      ts_error(ev->c, def->loc, "parameter '%s' of '%s' has no value: pass -D %s=... or declare it with '%s: T.Tensor(shape, dtype)'",
               n, def->id, n, n);
  }
  /* params: declared tensors in signature order, then outputs */
  int np = ev->eager_params.len + ev->outputs.len;
  f->params = ARENA_ARRAY(ev->a, IrParam, np);
  for (int i = 0; i < def->params.n; i++)
    for (int k = 0; k < ev->eager_params.len; k++) {
      IrParam *p = ev->eager_params.items[k];
      if (!strcmp(p->name, def->params.items[i].name)) {
        p->buf->param_index = f->nparams;
        f->params[f->nparams++] = *p;
      }
    }
  f->out_idx = ARENA_ARRAY(ev->a, int, ev->outputs.len);
  for (int k = 0; k < ev->outputs.len; k++) {
    IrBuffer *b = ev->outputs.items[k];
    b->param_index = f->nparams;
    f->out_idx[f->nout_idx++] = f->nparams;
    f->params[f->nparams].name = b->name;
    f->params[f->nparams++].buf = b;
  }
  finish_func(ev, f);
  read_jit_decorator(ev, def, f);
  return f;
}

/* The kernel file's folder: its sibling modules are imported from there. */
static void ev_module_dirs(Eval *ev, const AstNode *module) {
  const char *path = module->loc.file ? module->loc.file->name : NULL;
  if (!path) return;
  const char *slash = strrchr(path, '/');
  ev->main_dir = slash ? arena_strndup(ev->a, path, (size_t)(slash - path)) : ".";
  ev->main_module->dir = ev->main_dir;
}

IrFunc *front_compile(TsCompiler *c, const AstNode *module, const char *func_name, const ts_param *params,
                      int nparams) {
  if (!module) return NULL;
  int errors0 = c->diag.errors;
  Eval evs, *ev = &evs;
  eval_init(ev, c);
  ev_module_dirs(ev, module);
  ev_scan_module(ev, ev->main_module, module);
  const AstNode *def = find_def(module, func_name);
  if (!def) {
    const char *names[64];
    int n = front_list_functions(module, names, 64);
    StrBuf sb = {0};
    for (int i = 0; i < n; i++) sb_printf(&sb, "%s%s", i ? ", " : "", names[i]);
    SrcLoc loc = {module->loc.file, 0, 0};
    ts_error(c, loc, "no function named '%s' in the file (compilable functions: %s)", func_name, n ? sb_str(&sb) : "none");
    sb_free(&sb);
    return NULL;
  }
  if (!parse_dparams(ev, params, nparams)) return NULL;
  Value *fn = env_lookup(ev, ev->globals, def->id);
  if (!fn || fn->kind != V_FUNC || fn->u.fn.def != def) { /* rebound later at top level */
    fn = ev_new(ev, V_FUNC);
    fn->u.fn.def = def;
    fn->u.fn.env = ev->globals;
    fn->u.fn.flavor = decorator_flavor(def);
  }
  IrFunc *f;
  if (fn->u.fn.flavor == FN_PRIM) f = compile_prim(ev, def, fn);
  else if (contains_prim_func(&def->body)) f = compile_lazy(ev, def, fn);
  else f = compile_eager(ev, def, fn);
  if (c->diag.errors > errors0) return NULL;
  return f;
}
