/* eval_entry.c — where a compilation enters the evaluator: front_compile picks the
 * function, binds the -D parameters, runs a lazy factory, an eager @tilelang.jit body or a
 * top-level @T.prim_func, traces the prim_func into an IrFunc and reads the decorators'
 * options (out_idx, pass_configs, autotune configs).
 *
 *   parse_module -> front_compile (here) -> ev_exec_block / ev_call_function -> IrFunc
 */
#include <string.h>

#include "builtin.h"
#include "registry.h"

#define DEFAULT_LIMIT_DEPTH 200
#define DEFAULT_LIMIT_STEPS 10000000
/* Arena bytes a compilation may use: real kernels need a few MB; `[0] * 10**9` must end in
 * a diagnostic, not in the OOM killer. */
#define DEFAULT_LIMIT_BYTES ((int64_t)1 << 30)

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
  ev->exec_stmt = ev_exec_stmt;
  ev->call = ev_call;
  ev->eval = ev_eval;
  ev->attr = ev_attr;
  ev->builtins = ev_env_new(ev, NULL);
  builtin_install(ev, ev->builtins);
  ev->main_module = ev_module_new(ev, "__main__", false);
  ev->globals = ev->main_module->globals;
}

/* The last top-level def called `name` (a later def rebinds it, as in Python). */
static const AstNode *find_def(const AstNode *module, const char *name) {
  const AstNode *found = NULL;
  for (int i = 0; i < module->body.n; i++) {
    const AstNode *s = module->body.items[i];
    if (s->kind == AST_FUNCTIONDEF && !strcmp(s->id, name)) found = s;
  }
  return found;
}

/* A body that defines a @T.prim_func somewhere: a lazy factory.  Nested helper defs count
 * (`def kernel_func(block_M, ...): @T.prim_func def main(...)` returned through
 * `return kernel_func(...)`), as TileLang's jit only looks at what the factory returns. */
static bool contains_prim_func(const AstList *body) {
  for (int i = 0; i < body->n; i++) {
    const AstNode *s = body->items[i];
    if (s->kind == AST_FUNCTIONDEF && ev_decorator_flavor(s) == FN_PRIM) return true;
    if (s->kind == AST_FUNCTIONDEF && contains_prim_func(&s->body)) return true;
    if ((s->kind == AST_IF || s->kind == AST_FOR || s->kind == AST_WHILE || s->kind == AST_WITH || s->kind == AST_TRY) &&
        (contains_prim_func(&s->body) || contains_prim_func(&s->orelse)))
      return true;
  }
  return false;
}

/* A decorator spelled ...suffix or ...suffix(...): @tilelang.jit, @autotune. */
static bool decorated_as(const AstNode *def, const char *suffix) {
  for (int i = 0; i < def->decorators.n; i++) {
    const AstNode *d = def->decorators.items[i];
    if (d->kind == AST_CALL) d = d->func;
    if ((d->kind == AST_NAME || d->kind == AST_ATTRIBUTE) && d->id && !strcmp(d->id, suffix)) return true;
  }
  return false;
}

/* Top-level functions front_compile can compile: prim_funcs, jit/autotune factories and defs
 * that contain a prim_func. */
int front_list_functions(const AstNode *module, const char **names, int max) {
  int n = 0;
  if (!module) return 0;
  for (int i = 0; i < module->body.n; i++) {
    const AstNode *s = module->body.items[i];
    if (s->kind != AST_FUNCTIONDEF) continue;
    if (ev_decorator_flavor(s) == FN_PRIM || decorated_as(s, "jit") || decorated_as(s, "autotune") ||
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
  Env *e = ev_env_new(ev, ev->builtins);
  ev_env_set(ev, e, "T", ev_namespace(ev, MOD_T));
  ev_env_set(ev, e, "tilelang", ev_namespace(ev, MOD_TILELANG));
  ev_env_set(ev, e, "_tilescale", ev_namespace(ev, MOD_TILESCALE)); /* host_object: a value Python keeps */
  for (int i = 0; i < TS_ARRAY_LEN(dtypes); i++) {
    Value *v = builtin_lookup_or_error(ev, MOD_T, dtypes[i], SRCLOC_NONE);
    if (v && v->kind == V_DTYPE) ev_env_set(ev, e, dtypes[i], v);
  }
  return e;
}

/* T.dynamic("m") / T.symbolic("m") passed as a factory argument (matmul(T.dynamic("m"), 256,
 * ...)): a dimension bound from the tensors at launch, like one the body declares. */
static bool is_dynamic_dim(const Value *v) {
  return v->kind == V_EXPR && v->u.expr->kind == IR_VAR && v->u.expr->u.var->kind == IR_VAR_DYNAMIC;
}

/* Parses every -D value as a Python expression over builtins, T, tilelang and dtype names
 * (constants, and tuples, lists and dicts of them: a factory's target={"kind": "cuda"}).  A
 * T.* function (make_kernel(reduce_fn=T.reduce_max)) and a lambda (T.Layout(shape, lambda i:
 * i % 64) in the factory) are values too: the kernel calls them; so is a layout made by a
 * T.Fragment / T.Layout call (a host-built fragment passed as loop_layout=). */
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
    Value *v = e ? ev_eval(ev, denv, e) : NULL;
    if (v && v->kind != V_POISON && v->kind != V_BOOL && v->kind != V_INT && v->kind != V_FLOAT && v->kind != V_STR &&
        v->kind != V_DTYPE && v->kind != V_TUPLE && v->kind != V_LIST && v->kind != V_NONE &&
        !(v->kind == V_DICT && e->kind == AST_DICT) &&
        !(v->kind == V_BUILTIN && e->kind == AST_ATTRIBUTE) && !(v->kind == V_FUNC && e->kind == AST_LAMBDA) &&
        !(v->kind == V_LAYOUT && e->kind == AST_CALL) && !is_dynamic_dim(v) &&
        !(v->kind == V_OPAQUE && e->kind == AST_CALL)) {
      ts_error(ev->c, e->loc, "-D %s: expected a constant (int, float, bool, str, dtype, tuple, list or dict), got %s",
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
/* The names of the T.const("M, N") calls in n. */
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

/* An empty IrFunc named after the def. */
static IrFunc *new_func(Eval *ev, const AstNode *def) {
  IrFunc *f = ARENA_NEW(ev->a, IrFunc);
  f->name = def->id;
  f->loc = def->loc;
  return f;
}

/* Copies the T.dynamic variables into f. */
static void finish_func(Eval *ev, IrFunc *f) {
  f->ndyn = ev->dyn_vars.len;
  f->dyn_vars = ARENA_ARRAY(ev->a, IrVar *, f->ndyn);
  for (int i = 0; i < f->ndyn; i++) f->dyn_vars[i] = ev->dyn_vars.items[i];
}

/* `p: T.handle` or `p: T.ptr`: a pointer parameter (its tensor made by T.match_buffer or
 * T.make_tensor), in a @T.prim_func's signature or an eager kernel's. */
static bool is_pointer_annotation(const Value *ann) {
  return ann && (bi_is_handle_annotation(ann) || ev_is_ptr_dtype(ann));
}
static void bind_pointer_param(Eval *ev, Env *env, IrParam *ip, const AstParam *p, const Value *ann) {
  ip->var = ir_var(ev->c, p->name, TS_DTYPE_HANDLE, IR_VAR_PARAM, p->loc);
  ip->pointer = ev_is_ptr_dtype(ann);
  ev_env_set(ev, env, p->name, ev_expr(ev, ir_varref(ev->c, ip->var, p->loc)));
}

/* A @T.prim_func written as an eager kernel: a parameter annotated in the body (`def k(A):
 * A: T.Tensor[...]`) or a returned value (`B = T.empty(...)` ... `return B`, TileLang's
 * out_idx by T.empty). */
static bool annotated_in_body(const AstNode *def, const char *name) {
  for (int i = 0; i < def->body.n; i++) {
    const AstNode *s = def->body.items[i];
    if (s->kind == AST_ANNASSIGN && !s->value && s->target->kind == AST_NAME && !strcmp(s->target->id, name)) return true;
  }
  return false;
}
static bool eager_style_prim_func(const AstNode *def) {
  bool body_params = false;
  for (int i = 0; i < def->params.n; i++)
    if (!def->params.items[i].annotation) {
      if (!annotated_in_body(def, def->params.items[i].name)) return false; /* the signature's error */
      body_params = true;
    }
  if (body_params) return true;
  for (int i = 0; i < def->body.n; i++)
    if (def->body.items[i]->kind == AST_RETURN && def->body.items[i]->value) return true;
  return false;
}

static IrFunc *trace_eager(Eval *ev, const AstNode *def, Value *fn, bool bind_dparams);

/* Traces a @T.prim_func: parameter annotations become buffers/scalars, the body IR. */
static IrFunc *trace_prim_func(Eval *ev, Value *fn) {
  const AstNode *def = fn->u.fn.def;
  if (eager_style_prim_func(def)) return trace_eager(ev, def, fn, false);
  IrFunc *f = new_func(ev, def);
  Env *env = ev_env_new(ev, fn->u.fn.env);
  ev->outer_views = (PtrVec){0};
  f->nparams = def->params.n;
  f->params = ARENA_ARRAY(ev->a, IrParam, f->nparams);
  for (int i = 0; i < def->params.n; i++) {
    const AstParam *p = &def->params.items[i];
    IrParam *ip = &f->params[i];
    ip->name = p->name;
    if (!p->annotation) {
      ts_error(ev->c, p->loc, "parameter '%s' of a @T.prim_func needs an annotation: T.Tensor(shape, dtype) or a dtype",
               p->name);
      ev_env_set(ev, env, p->name, ev->poison);
      continue;
    }
    Value *ann = ev_eval(ev, fn->u.fn.env, p->annotation);
    if (!ann) {
      ev_env_set(ev, env, p->name, ev->poison);
      continue;
    }
    if (is_pointer_annotation(ann)) { /* T.handle: bound by T.match_buffer */
      bind_pointer_param(ev, env, ip, p, ann);
    } else if (ann->kind == V_TENSORTYPE) {
      if (!(ip->buf = ev_tensor_param(ev, p->name, ann, p->loc))) {
        ev_env_set(ev, env, p->name, ev->poison);
        continue;
      }
      ip->buf->param_index = i;
      Value *bv = ev_new(ev, V_BUFFER);
      bv->u.buf = ip->buf;
      ev_env_set(ev, env, p->name, bv);
    } else if (ann->kind == V_DTYPE || ann->kind == V_STR) {
      ts_dtype t;
      if (!ev_to_dtype(ev, ann, &t, p->annotation->loc)) { ev_env_set(ev, env, p->name, ev->poison); continue; }
      ip->var = ir_var(ev->c, p->name, t, IR_VAR_PARAM, p->loc);
      ev_env_set(ev, env, p->name, ev_expr(ev, ir_varref(ev->c, ip->var, p->loc)));
    } else {
      ts_error(ev->c, p->annotation->loc, "parameter '%s': expected T.Tensor(shape, dtype) or a dtype, got %s", p->name,
               ev_type_name(ann));
      ev_env_set(ev, env, p->name, ev->poison);
    }
  }
  PtrVec top = {0};
  ev->block = &top;
  ev->scope = ARENA_NEW(ev->a, DefScope);
  ev->func = f;
  ev->staged = true;
  ev->loop = NULL;
  ev_exec_block(ev, env, &def->body);
  ev->block = NULL;
  ev->staged = false;
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i].var && f->params[i].var->dtype == TS_DTYPE_HANDLE && !f->params[i].pointer)
      ts_error(ev->c, def->params.items[i].loc, "parameter '%s' is a T.handle that no T.match_buffer(%s, shape, dtype) "
               "binds", f->params[i].name, f->params[i].name);
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
    Value *v = ev_eval(ev, ev->globals, kw->value);
    ValList items = {0};
    bool ok = v && ev->c->diag.errors == 0 && ev_iter_items(ev, v, &items, kw->value->loc);
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

/* An @autotune factory compiled without a value for a tuned parameter (one that defaults
 * to None or has no default, and is a key of the configs): the first config's value, as
 * the tuner's first candidate builds it.  The Python tuner passes every config's values
 * explicitly, so this only decides what a plain compile (the CLI, the corpus check) builds
 * instead of multiplying None.  Configs that cannot be evaluated bind nothing. */
static bool tuned_param_unbound(const Eval *ev, const AstParam *p) {
  bool tuned = !p->default_value || p->default_value->kind == AST_CONST_NONE;
  if (!tuned || p->kind == APARAM_VARARGS || p->kind == APARAM_VARKW) return false;
  for (int k = 0; k < ev->nd; k++)
    if (!strcmp(ev->dnames[k], p->name)) return false;
  return true;
}

static void bind_autotune_defaults(Eval *ev, const AstNode *def) {
  bool needed = false;
  for (int i = 0; i < def->params.n && !needed; i++) needed = tuned_param_unbound(ev, &def->params.items[i]);
  if (!needed) return; /* (the configs are evaluated once more, by read_autotune, for the runtime) */
  const AstNode *d = NULL;
  for (int i = 0; i < def->decorators.n; i++) {
    const AstNode *x = def->decorators.items[i];
    if (x->kind == AST_CALL && x->func && x->func->id && !strcmp(x->func->id, "autotune")) d = x;
  }
  const AstNode *configs = NULL;
  for (int k = 0; d && k < d->nkwargs; k++)
    if (d->kwargs[k].name && !strcmp(d->kwargs[k].name, "configs")) configs = d->kwargs[k].value;
  if (!configs) return;
  Diag saved = ev->c->diag, quiet = {0};
  ev->c->diag = quiet;
  Value *v = ev_eval(ev, ev->globals, configs);
  ValList items = {0};
  bool ok = v && ev->c->diag.errors == 0 && ev_iter_items(ev, v, &items, configs->loc) && items.n > 0 &&
            items.items[0]->kind == V_DICT;
  diag_free(&ev->c->diag);
  ev->c->diag = saved;
  if (!ok) return;
  const Value *first = items.items[0];
  int nd = ev->nd;
  const char **names = ARENA_ARRAY(ev->a, const char *, nd + def->params.n);
  Value **vals = ARENA_ARRAY(ev->a, Value *, nd + def->params.n);
  bool *used = ARENA_ARRAY(ev->a, bool, nd + def->params.n);
  memcpy(names, ev->dnames, sizeof(*names) * (size_t)nd);
  memcpy(vals, ev->dvals, sizeof(*vals) * (size_t)nd);
  for (int i = 0; i < def->params.n; i++) {
    const AstParam *p = &def->params.items[i];
    if (!tuned_param_unbound(ev, p)) continue;
    for (int k = 0; k < first->u.dict.keys.n; k++) {
      const Value *key = first->u.dict.keys.items[k];
      if (key->kind == V_STR && !strcmp(key->u.str.s, p->name)) {
        names[nd] = p->name;
        vals[nd++] = first->u.dict.vals.items[k];
        break;
      }
    }
  }
  ev->dnames = names, ev->dvals = vals, ev->dused = used, ev->nd = nd;
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
        Value *v = ev_eval(ev, ev->globals, kw->value);
        if (!v || v->kind == V_NONE || v->kind == V_POISON) continue;
        ValList items = {0};
        if (v->kind == V_INT) vl_push(ev, &items, v);
        else if (!ev_iter_items(ev, v, &items, kw->value->loc)) continue;
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
        Value *v = ev_eval(ev, ev->globals, kw->value);
        if (!v || v->kind != V_DICT) continue;
        f->npass_configs = v->u.dict.keys.n;
        f->pass_configs = ARENA_ARRAY(ev->a, IrKV, f->npass_configs);
        for (int j = 0; j < v->u.dict.keys.n; j++) {
          Value *key = v->u.dict.keys.items[j], *val = v->u.dict.vals.items[j];
          f->pass_configs[j].key = ev_strval(ev, key);
          f->pass_configs[j].value = ev_strval(ev, val);
        }
      }
    }
  }
}

/* The caller's pass_configs (ts_compile_options) over the decorator's: a name given by
 * both takes the caller's value. */
static void merge_call_pass_configs(Eval *ev, IrFunc *f) {
  TsCompiler *c = ev->c;
  if (!c->ncall_pc) return;
  IrKV *kv = ARENA_ARRAY(ev->a, IrKV, f->npass_configs + c->ncall_pc);
  int n = f->npass_configs;
  if (n) memcpy(kv, f->pass_configs, (size_t)n * sizeof *kv);
  for (int i = 0; i < c->ncall_pc; i++) {
    int j = 0;
    while (j < n && strcmp(kv[j].key, c->call_pc_keys[i])) j++;
    if (j == n) kv[n++].key = c->call_pc_keys[i];
    kv[j].value = c->call_pc_values[i];
  }
  f->pass_configs = kv, f->npass_configs = n;
}

/* @tilelang.jit's options, then the caller's pass_configs; tl.enable_fast_math from either. */
static void read_jit_options(Eval *ev, const AstNode *def, IrFunc *f) {
  read_jit_decorator(ev, def, f);
  merge_call_pass_configs(ev, f);
  for (int i = 0; i < f->npass_configs; i++)
    if (!strcmp(f->pass_configs[i].key, "tl.enable_fast_math")) ev->c->fast_math = ir_config_true(f->pass_configs[i].value);
}

/* A factory: -D values bind its parameters, its call returns the @T.prim_func to trace. */
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
  Value *r = ev_call_function(ev, fn, &a);
  if (!r || r->kind == V_POISON) return NULL;
  if (r->kind != V_FUNC || r->u.fn.flavor != FN_PRIM) {
    ts_error(ev->c, def->loc, "'%s' returned %s, expected a @T.prim_func", def->id, ev_type_name(r));
    return NULL;
  }
  IrFunc *f = trace_prim_func(ev, r);
  f->name = def->id;
  read_jit_options(ev, def, f);
  return f;
}

/* A top-level @T.prim_func: -D values override module-level constants. */
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
    ev_env_set(ev, ev->globals, n, ev->dvals[i]);
  }
  if (!ok) return NULL;
  IrFunc *f = trace_prim_func(ev, fn);
  read_jit_options(ev, def, f);
  return f;
}

/* An eager parameter annotated in the signature (`def k(A: T.Tensor((64,), T.float16), n: T.int32)`,
 * the prim_func-like form): declared there as a tensor or scalar kernel parameter.  False for
 * any other annotation (then the body may declare it). */
static bool eager_signature_param(Eval *ev, Env *env, Value *fn, const AstParam *p) {
  Value *ann = ev_eval(ev, fn->u.fn.env, p->annotation);
  IrParam *ip = ARENA_NEW(ev->a, IrParam);
  ip->name = p->name;
  if (is_pointer_annotation(ann)) { /* `A: T.ptr`: T.make_tensor's address */
    bind_pointer_param(ev, env, ip, p, ann);
  } else if (ann && ann->kind == V_TENSORTYPE) {
    if (!(ip->buf = ev_tensor_param(ev, p->name, ann, p->loc))) return false;
    Value *bv = ev_new(ev, V_BUFFER);
    bv->u.buf = ip->buf;
    ev_env_set(ev, env, p->name, bv);
  } else if (ann && ann->kind == V_DTYPE) {
    ts_dtype t;
    if (!ev_to_dtype(ev, ann, &t, p->annotation->loc)) return false;
    ip->var = ir_var(ev->c, p->name, t, IR_VAR_PARAM, p->loc);
    ev_env_set(ev, env, p->name, ev_expr(ev, ir_varref(ev->c, ip->var, p->loc)));
  } else {
    return false;
  }
  vec_push(ev->a, &ev->eager_params, ip);
  return true;
}

/* Eager @tilelang.jit: the body is the kernel; parameters without a value are tensors
 * declared by annotation (in the body, or in the signature); T.empty results become trailing
 * output parameters. */
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
  IrFunc *f = trace_eager(ev, def, fn, true);
  read_jit_options(ev, def, f);
  return f;
}

/* `return C, B`: the call gives the outputs back in the order returned, so the T.empty
 * results become output parameters in that order.  What is returned must be those results,
 * each once, all of them (a T.empty left out would be an output the call never gives back).
 * Without a return (or `return None`) they stay in the order they were made. */
static void order_outputs_by_return(Eval *ev, const AstNode *def) {
  Value *r = ev->ret;
  if (!r || r->kind == V_NONE || r->kind == V_POISON) return;
  SrcLoc loc = def->loc;
  for (int i = 0; i < def->body.n; i++)
    if (def->body.items[i]->kind == AST_RETURN) loc = def->body.items[i]->loc;
  bool seq = r->kind == V_TUPLE || r->kind == V_LIST;
  int n = seq ? r->u.seq.n : 1, nout = ev->outputs.len;
  bool *returned = ARENA_ARRAY(ev->a, bool, nout > 0 ? nout : 1);
  PtrVec ordered = {0};
  for (int i = 0; i < n; i++) {
    Value *v = seq ? r->u.seq.items[i] : r;
    int k = -1;
    for (int j = 0; v->kind == V_BUFFER && j < nout; j++)
      if (ev->outputs.items[j] == v->u.buf) k = j;
    if (k < 0) {
      const char *what = v->kind != V_BUFFER ? ev_type_name(v)
                         : v->u.buf->scope == IR_SCOPE_GLOBAL
                             ? arena_printf(ev->a, "tensor %s", v->u.buf->name)
                             : arena_printf(ev->a, "%s buffer %s", ir_scope_names[v->u.buf->scope], v->u.buf->name);
      ts_error(ev->c, loc, "'%s' returns %s; a kernel returns the tensors it makes with T.empty (its outputs)", def->id,
               what);
      return;
    }
    if (returned[k]) {
      ts_error(ev->c, loc, "'%s' returns '%s' twice", def->id, ((IrBuffer *)ev->outputs.items[k])->name);
      return;
    }
    returned[k] = true;
    vec_push(ev->a, &ordered, ev->outputs.items[k]);
  }
  for (int j = 0; j < nout; j++)
    if (!returned[j])
      ts_error(ev->c, loc, "'%s' does not return '%s', which it makes with T.empty: every T.empty tensor is an output; "
               "return it too (or use T.alloc_global for a workspace)", def->id, ((IrBuffer *)ev->outputs.items[j])->name);
  if (ordered.len == nout) ev->outputs = ordered;
}

/* The body of an eager kernel traced (compile_eager; a @T.prim_func written that way,
 * trace_prim_func): parameters bound to -D values (bind_dparams), declared in the signature,
 * or pending until the body annotates them; T.empty results appended as outputs. */
static IrFunc *trace_eager(Eval *ev, const AstNode *def, Value *fn, bool bind_dparams) {
  IrFunc *f = new_func(ev, def);
  Env *env = ev_env_new(ev, fn->u.fn.env);
  bool was_eager = ev->eager;
  ev->eager = true;
  for (int i = 0; i < def->params.n; i++) {
    const AstParam *p = &def->params.items[i];
    int j = -1;
    for (int k = 0; k < ev->nd && bind_dparams; k++)
      if (!strcmp(ev->dnames[k], p->name)) j = k;
    if (j >= 0) ev_env_set(ev, env, p->name, ev->dvals[j]);
    else if (p->default_value) ev_env_set(ev, env, p->name, ev_eval(ev, fn->u.fn.env, p->default_value));
    else if (!p->annotation || !eager_signature_param(ev, env, fn, p)) vec_push(ev->a, &ev->eager_pending, (void *)p->name);
  }
  PtrVec top = {0};
  ev->block = &top;
  ev->scope = ARENA_NEW(ev->a, DefScope);
  ev->func = f;
  ev->staged = true;
  ev->ret = NULL;
  ev_exec_block(ev, env, &def->body);
  ev->block = NULL;
  ev->staged = false;
  f->body = ir_seq_vec(ev->c, &top, def->loc);
  for (int i = 0; i < ev->eager_pending.len; i++) {
    const char *n = ev->eager_pending.items[i];
    if (*n && bind_dparams)
      ts_error(ev->c, def->loc, "parameter '%s' of '%s' has no value: pass -D %s=... or declare it with '%s: T.Tensor(shape, dtype)'",
               n, def->id, n, n);
    else if (*n) /* a @T.prim_func's (eager_style_prim_func saw its annotation in the body) */
      ts_error(ev->c, def->loc, "parameter '%s' of a @T.prim_func needs an annotation: T.Tensor(shape, dtype) or a dtype", n);
  }
  order_outputs_by_return(ev, def);
  /* params: declared tensors in signature order, then outputs (in the order returned) */
  int np = ev->eager_params.len + ev->outputs.len;
  f->params = ARENA_ARRAY(ev->a, IrParam, np);
  for (int i = 0; i < def->params.n; i++)
    for (int k = 0; k < ev->eager_params.len; k++) {
      IrParam *p = ev->eager_params.items[k];
      if (!strcmp(p->name, def->params.items[i].name)) {
        if (p->buf) p->buf->param_index = f->nparams;
        f->params[f->nparams++] = *p;
      }
    }
  f->out_idx = ARENA_ARRAY(ev->a, int, ev->outputs.len);
  f->returns_outputs = ev->outputs.len > 0;
  for (int k = 0; k < ev->outputs.len; k++) {
    IrBuffer *b = ev->outputs.items[k];
    b->param_index = f->nparams;
    f->out_idx[f->nout_idx++] = f->nparams;
    f->params[f->nparams].name = b->name;
    f->params[f->nparams++].buf = b;
  }
  finish_func(ev, f);
  ev->eager = was_eager;
  return f;
}

/* The kernel file's folder: its sibling modules are imported from there. */
static void module_dirs(Eval *ev, const AstNode *module) {
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
  module_dirs(ev, module);
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
  if (decorated_as(def, "autotune")) bind_autotune_defaults(ev, def);
  Value *fn = ev_env_lookup(ev, ev->globals, def->id);
  if (!fn || fn->kind != V_FUNC || fn->u.fn.def != def) { /* rebound later at top level */
    fn = ev_new(ev, V_FUNC);
    fn->u.fn.def = def;
    fn->u.fn.env = ev->globals;
    fn->u.fn.flavor = ev_decorator_flavor(def);
  }
  IrFunc *f;
  if (fn->u.fn.flavor == FN_PRIM) f = compile_prim(ev, def, fn);
  else if (contains_prim_func(&def->body)) f = compile_lazy(ev, def, fn);
  else f = compile_eager(ev, def, fn);
  if (c->diag.errors > errors0) return NULL;
  return f;
}
