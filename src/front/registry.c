/* registry.c — the one registry of builtins: which rows each namespace has, in which topic
 * file, and how a name is looked up in it.
 *
 *   eval_expr.c / eval_module.c (T.copy, "a".split, min)  ->  here  ->  the rows of builtins_*.c
 *
 * A namespace's rows come from the tables of every topic file (builtin.h); a name is the first
 * row with that name, else the first table's `missing` function that answers it.  A row is a
 * builtin value named with the namespace's prefix ("T.copy"); a BI_VALUE row is its value
 * (T.float16, T.Team.WORLD).  Names are unique within a namespace. */
#include <string.h>

#include "builtin.h"
#include "registry.h"

/* Every topic file's tables, in lookup order. */
static const BuiltinTable *const topics[] = {
    builtins_alloc, builtins_loops,  builtins_tileops, builtins_layout, builtins_scalar,
    builtins_ieee,  builtins_warp,   builtins_logical, builtins_ldst, builtins_dist,   builtins_python,
    builtins_host,  builtins_allreduce, builtins_tensor, builtins_mma, builtins_reducer,
};

static const struct {
  const char *name;   /* in "module 'T.Team' has no attribute 'X'" */
  const char *prefix; /* of its builtins' names: "T." makes "T.copy" */
  const char *alias;  /* a prefix names may carry too (T.Amo.AMO_SIGNAL_SET), or NULL */
} namespaces[MOD_COUNT] = {
    [MOD_TILELANG] = {"tilelang", "tilelang.", NULL},
    [MOD_T] = {"T", "T.", NULL},
    [MOD_MATH] = {"math", "math.", NULL},
    [MOD_PASSCONFIG] = {"tilelang.PassConfigKey", "tilelang.PassConfigKey.", NULL},
    [MOD_WARPPOLICY] = {"T.GemmWarpPolicy", "T.GemmWarpPolicy.", NULL},
    [MOD_AUTOTUNER] = {"tilelang.autotuner", "tilelang.autotuner.", NULL},
    [MOD_LAYOUT] = {"tilelang.layout", "tilelang.layout.", NULL},
    [MOD_TEAM] = {"T.Team", "T.Team.", "TEAM_"},
    [MOD_CMPTYPE] = {"T.CmpType", "T.CmpType.", "CMP_"},
    [MOD_AMO] = {"T.Amo", "T.Amo.", "AMO_"},
    [MOD_ITERTOOLS] = {"itertools", "itertools.", NULL},
    [MOD_PY] = {"module", "", NULL},
    [MOD_TILESCALE] = {"_tilescale", "_tilescale.", NULL},
    [MOD_BUILTINS] = {"builtins", "", NULL},
    [MOD_STR] = {"str", "", NULL},
    [MOD_LIST] = {"list", "", NULL},
    [MOD_DICT] = {"dict", "", NULL},
    [MOD_INT] = {"int", "", NULL},
    [MOD_EXPR] = {"IR expression", "", NULL},
    [MOD_TENSOR] = {"torch.Tensor", "", NULL},
};

/* The first row called `name` among the tables of namespace ns. */
static const Builtin *find_row(ModKind ns, const char *name) {
  for (size_t t = 0; t < TS_ARRAY_LEN(topics); t++)
    for (const BuiltinTable *tab = topics[t]; tab->ns != MOD_COUNT; tab++)
      if (tab->ns == ns) {
        const Builtin *row = builtin_find(tab->rows, tab->n, name);
        if (row) return row;
      }
  return NULL;
}

/* What a name resolves to: a BI_VALUE row's value, else a builtin value named prefix+name. */
static Value *row_value(Eval *ev, ModKind ns, const Builtin *row, Value *self) {
  if (row->flags & BI_VALUE) return row->fn(ev, NULL, NULL, row);
  return builtin_value(ev, row, arena_printf(ev->a, "%s%s", namespaces[ns].prefix, row->name), self);
}

Value *builtin_lookup(Eval *ev, ModKind ns, const char *name) {
  if (ns == MOD_PY) return NULL; /* a module read from a file: eval_module.c */
  const char *alias = namespaces[ns].alias;
  if (alias && !strncmp(name, alias, strlen(alias))) name += strlen(alias);
  const Builtin *row = find_row(ns, name);
  if (row) return row_value(ev, ns, row, NULL);
  for (size_t t = 0; t < TS_ARRAY_LEN(topics); t++)
    for (const BuiltinTable *tab = topics[t]; tab->ns != MOD_COUNT; tab++)
      if (tab->ns == ns && tab->missing) {
        Value *v = tab->missing(ev, name);
        if (v) return v;
      }
  return NULL;
}

Value *builtin_lookup_or_error(Eval *ev, ModKind ns, const char *name, SrcLoc loc) {
  Value *v = builtin_lookup(ev, ns, name);
  if (v) return v;
  ts_error(ev->c, loc, "module '%s' has no attribute '%s'", namespaces[ns].name, name);
  return NULL;
}

Value *builtin_method(Eval *ev, Value *self, const char *name) {
  ModKind ns;
  switch (self->kind) {
  case V_EXPR: ns = MOD_EXPR; break;
  case V_DTYPE: /* a dtype is also its name (TileLang's dtypes are str subclasses) */
    return builtin_method(ev, ev_str(ev, dtype_name(self->u.dtype)), name);
  case V_STR: ns = MOD_STR; break;
  case V_INT: ns = MOD_INT; break;
  case V_LIST: ns = MOD_LIST; break;
  case V_DICT: ns = MOD_DICT; break;
  case V_HOST_TENSOR: ns = MOD_TENSOR; break;
  default: return NULL;
  }
  const Builtin *row = find_row(ns, name);
  return row ? row_value(ev, ns, row, self) : NULL;
}

Value *builtin_subscript(Eval *ev, Value *fn, Value *index, const AstNode *node) {
  const Builtin *row = fn->u.bi.row;
  if (row->flags & BI_INDEX)
    return row->fn(ev, &(CallArgs){.node = node, .pos = &index, .npos = 1}, NULL, row);
  ts_error(ev->c, node->loc, "'%s' is not subscriptable", fn->u.bi.name);
  return NULL;
}

void builtin_install(Eval *ev, Env *env) {
  for (size_t t = 0; t < TS_ARRAY_LEN(topics); t++)
    for (const BuiltinTable *tab = topics[t]; tab->ns != MOD_COUNT; tab++)
      if (tab->ns == MOD_BUILTINS)
        for (int i = 0; i < tab->n; i++)
          strmap_put(ev->a, &env->vars, tab->rows[i].name, row_value(ev, MOD_BUILTINS, &tab->rows[i], NULL));
  strmap_put(ev->a, &env->vars, "__name__", ev_str(ev, "__tilescale__"));
}
