/* eval_module.c — Python modules for the staging interpreter: `import` and `from ... import`,
 * module attributes, and the modules a kernel file can reach (DESIGN.md §4):
 *
 *   import M  ->  1. a native namespace (tilelang, tilelang.language, math, itertools ...)
 *                 2. a module beside the kernel file (M.py or M/__init__.py, a sibling helper)
 *                 3. the embedded host prelude (src/front/prelude/M.py or M/__init__.py)
 *                 4. a lazy stub: importing works, using it is a diagnostic naming the module
 *                    (calling its functions from host code may go to the host: host_call.c)
 *
 * A module read from a file (sibling or prelude) is a PyModule: its own globals, evaluated
 * like the kernel file (imports and defs at once, top-level assignments on first use),
 * loaded once per compilation.  `a.b` on a module is its attribute, else the submodule
 * `a.b`.  A native namespace without the attribute asks the prelude module of the same
 * name (tilelang.cdiv is prelude/tilelang/__init__.py's).  Prelude modules stand for
 * libraries (torch, tvm) of which they cover only a part, so a name they lack is a stub.
 *
 *   eval_expr.c / eval_stmt.c  ->  here  ->  registry.c (native namespaces), parse.c (module text)
 *
 * A module's defs and top-level assignments run through ev->exec_stmt (eval_stmt.c). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "registry.h"
#include "../base/embedded.h"

/* Native namespaces by import name. */
static const struct {
  const char *name;
  ModKind mod;
} native_modules[] = {
    {"tilelang", MOD_TILELANG}, {"tilelang.language", MOD_T},   {"math", MOD_MATH},
    {"tilelang.autotuner", MOD_AUTOTUNER}, {"tilelang.layout", MOD_LAYOUT}, {"itertools", MOD_ITERTOOLS},
    {"_tilescale", MOD_TILESCALE},
};

/* The import name of a native namespace, for its prelude fallback. */
static const char *native_name(ModKind mod) {
  for (size_t i = 0; i < TS_ARRAY_LEN(native_modules); i++)
    if (native_modules[i].mod == mod) return native_modules[i].name;
  return NULL;
}


/* ---- module scan (the kernel file's and every loaded module's top level) ------------------ */
static void record_targets(Eval *ev, PyModule *m, const AstNode *t, const AstNode *stmt) {
  if (t->kind == AST_NAME) {
    strmap_put(ev->a, &m->lazy, t->id, (void *)stmt);
  } else if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
    for (int i = 0; i < t->items.n; i++) record_targets(ev, m, t->items.items[i], stmt);
  }
}

/* `if __name__ == "__main__":` */
static bool is_main_guard(const AstNode *s) {
  const AstNode *t = s->kind == AST_IF ? s->test : NULL;
  if (!t || t->kind != AST_COMPARE || t->items.n != 1 || t->ops[0] != AOP_EQ || !t->left || t->left->kind != AST_NAME ||
      strcmp(t->left->id, "__name__"))
    return false;
  const AstNode *r = t->items.items[0];
  return r->kind == AST_CONST_STR && !strcmp(r->sval, "__main__");
}

/* Records the names of target t (stmt's), or with `check` only tells whether all of them
 * are simple names the module does not assign elsewhere (a statement that would also
 * rebind such a name is left out whole). */
static bool main_targets(Eval *ev, PyModule *m, const AstNode *t, const AstNode *stmt, bool check) {
  if (t->kind == AST_NAME) {
    if (strmap_has(&m->lazy, t->id) || strmap_has(&m->globals->vars, t->id)) return false;
    if (!check) {
      strmap_put(ev->a, &m->lazy, t->id, (void *)stmt);
      strmap_put(ev->a, &m->main_only, t->id, (void *)stmt);
    }
    return true;
  }
  if (t->kind != AST_TUPLE && t->kind != AST_LIST) return false;
  for (int i = 0; i < t->items.n; i++)
    if (!main_targets(ev, m, t->items.items[i], stmt, check)) return false;
  return true;
}

/* The straight-line assignments of the script's main block, for names the module does not
 * assign elsewhere: a kernel file run as a script builds its kernels there, after them, so a
 * factory may read such a global (`B * H` with H set in the main block).  They are recorded
 * like other top-level assignments and run on first use, with a warning naming the line. */
static void scan_main_block(Eval *ev, PyModule *m, const AstNode *guard) {
  for (int i = 0; i < guard->body.n; i++) {
    const AstNode *s = guard->body.items[i];
    if (s->kind != AST_ASSIGN) continue;
    bool fresh = true;
    for (int k = 0; k < s->items.n && fresh; k++) fresh = main_targets(ev, m, s->items.items[k], s, true);
    for (int k = 0; k < s->items.n && fresh; k++) main_targets(ev, m, s->items.items[k], s, false);
  }
}

/* Imports and defs run now; assignments are recorded and run when their name is first
 * used, so torch harnesses and argparse code never run; other top-level control flow never
 * runs (the main block only supplies names nothing else assigns: scan_main_block). */
void ev_scan_module(Eval *ev, PyModule *m, const AstNode *module) {
  for (int i = 0; i < module->body.n; i++) {
    const AstNode *s = module->body.items[i];
    switch (s->kind) {
    case AST_IMPORT:
    case AST_IMPORTFROM: ev_exec_import(ev, m->globals, s); break;
    case AST_FUNCTIONDEF:
    case AST_CLASSDEF: ev->exec_stmt(ev, m->globals, s); break;
    case AST_ASSIGN:
      for (int k = 0; k < s->items.n; k++) record_targets(ev, m, s->items.items[k], s);
      break;
    case AST_ANNASSIGN:
      if (s->value) record_targets(ev, m, s->target, s);
      break;
    default: break;
    }
  }
  for (int i = 0; i < module->body.n; i++)
    if (is_main_guard(module->body.items[i])) scan_main_block(ev, m, module->body.items[i]);
}

/* A module-path module's top-level assignment the interpreter could not run (a value only
 * Python has: `ep_ext = load_inline(...)`, an object of a library): its diagnostics are
 * withdrawn and every name it assigns becomes a stub of the module's attribute, as the whole
 * module was before the module path; using one in a kernel is the error, and host code calls
 * through it in the host (which imported the module itself).  Only for the module path: a
 * helper beside the kernel file is the user's kernel code and its errors stand. */
static Value *stub_name(Eval *ev, const char *name, const char *module);
static void stub_targets(Eval *ev, PyModule *m, const AstNode *t) {
  if (t->kind == AST_NAME) {
    strmap_put(ev->a, &m->lazy, t->id, NULL);
    strmap_put(ev->a, &m->globals->vars, t->id, stub_name(ev, t->id, m->name));
  } else if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
    for (int i = 0; i < t->items.n; i++) stub_targets(ev, m, t->items.items[i]);
  }
}
static void path_global_stub(Eval *ev, PyModule *m, const AstNode *s, DiagMark mark) {
  diag_rewind(&ev->c->diag, mark);
  if (s->kind == AST_ANNASSIGN) {
    stub_targets(ev, m, s->target);
  } else {
    for (int k = 0; k < s->items.n; k++) stub_targets(ev, m, s->items.items[k]);
  }
}

/* Runs top-level statement s of module m; true when it failed in a module-path module and its
 * names became stubs (its diagnostics, held back from echo until then, withdrawn). */
static bool run_toplevel(Eval *ev, PyModule *m, const AstNode *s) {
  Diag *d = &ev->c->diag;
  DiagMark mark = diag_mark(d);
  bool echo = d->echo;
  d->echo = echo && !m->from_path;
  ev->path_toplevel += m->from_path;
  ev->exec_stmt(ev, m->globals, s);
  ev->path_toplevel -= m->from_path;
  d->echo = echo;
  if (m->from_path && d->errors > mark.errors && !ev->out_of_memory) {
    path_global_stub(ev, m, s, mark);
    return true;
  }
  if (m->from_path && echo && d->out.len > mark.out_len) fputs(d->out.data + mark.out_len, stderr);
  return false;
}

/* Evaluates the top-level assignment of module m that defines `name`. */
void ev_force_global(Eval *ev, PyModule *m, const char *name) {
  const AstNode *s = strmap_get(&m->lazy, name);
  if (!s) return;
  if (strmap_get(&m->lazy_busy, name)) {
    ts_error(ev->c, s->loc, "module-level name '%s' depends on itself", name);
    strmap_put(ev->a, &m->lazy, name, NULL);
    return;
  }
  strmap_put(ev->a, &m->lazy_busy, name, (void *)1);
  if (strmap_get(&m->main_only, name))
    diag_warning(&ev->c->diag, s->loc, "'%s' is assigned only under `if __name__ == \"__main__\":`; using that value",
                 name);
  /* Top-level code is plain Python: no staging, no statement block. */
  HostFrame host = ev_host_enter(ev);
  bool stubbed = run_toplevel(ev, m, s);
  ev_host_leave(ev, host);
  strmap_put(ev->a, &m->lazy_busy, name, NULL);
  if (!stubbed && strmap_get(&m->lazy, name)) { /* the statement did not bind it (error) */
    strmap_put(ev->a, &m->lazy, name, NULL);
    strmap_put(ev->a, &m->globals->vars, name, ev->poison);
  }
}

/* A name through the chain of environments; a module's globals first run the lazy
 * top-level assignment of that name, if any. */
Value *ev_env_lookup(Eval *ev, Env *env, const char *name) {
  for (Env *e = env; e; e = e->parent) {
    if (e->module) ev_force_global(ev, e->module, name);
    Value *v = strmap_get(&e->vars, name);
    if (v) return v;
  }
  return NULL;
}

/* ---- finding and loading modules ------------------------------------------------------------ */
/* "a.b.c" -> "a/b/c" */
static char *module_path(Eval *ev, const char *name) {
  char *p = arena_strdup(ev->a, name);
  for (char *q = p; *q; q++)
    if (*q == '.') *q = '/';
  return p;
}

/* The embedded prelude file at `rel` ("tilelang/math.py"), or NULL. */
static const TsEmbeddedFile *prelude_file(const char *rel) {
  for (int i = 0; i < ts_prelude_files_count; i++)
    if (!strcmp(ts_prelude_files[i].name, rel)) return &ts_prelude_files[i];
  return NULL;
}

/* A prelude folder with no __init__.py (a namespace package such as tilelang.carver). */
static bool prelude_folder(const char *rel) {
  size_t n = strlen(rel);
  for (int i = 0; i < ts_prelude_files_count; i++)
    if (!strncmp(ts_prelude_files[i].name, rel, n) && ts_prelude_files[i].name[n] == '/') return true;
  return false;
}

static bool is_regular(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Parses and scans a module's text; the module is cached before its scan so that an import
 * cycle finds it (partly initialised, as in Python). */
static Value *load_source(Eval *ev, const char *name, const char *key, const char *shown, const char *text,
                          size_t len, bool stub, const char *dir) {
  PyModule *m = ev_module_new(ev, name, stub);
  m->dir = dir;
  Value *v = ev_module_value(ev, m);
  strmap_put(ev->a, &ev->modules, key, v);
  SourceFile *f = ARENA_NEW(ev->a, SourceFile);
  f->name = shown;
  f->text = text;
  f->len = len;
  const AstNode *ast = parse_module(ev->c, f);
  if (ast) ev_scan_module(ev, m, ast);
  return v;
}

/* A module beside the kernel file (or beside the module importing it): NAME.py or
 * NAME/__init__.py, or a folder (a namespace package). */
static Value *load_sibling(Eval *ev, const char *dir, const char *name, SrcLoc loc) {
  if (!dir) return NULL;
  const char *rel = module_path(ev, name);
  const char *candidates[2] = {arena_printf(ev->a, "%s/%s.py", dir, rel),
                               arena_printf(ev->a, "%s/%s/__init__.py", dir, rel)};
  for (int i = 0; i < 2; i++) {
    if (!is_regular(candidates[i])) continue;
    StrBuf why = {0};
    size_t len = 0;
    char *text = ts_read_file_max(candidates[i], TS_READ_DEFAULT_MAX, 0, &len, &why);
    if (!text) {
      ts_error(ev->c, loc, "cannot read module '%s': %s", name, sb_str(&why));
      sb_free(&why);
      return ev->poison;
    }
    sb_free(&why);
    char *copy = arena_memdup(ev->a, text, len + 1);
    ts_free(text);
    const char *pkg_dir = i == 1 ? arena_printf(ev->a, "%s/%s", dir, rel) : dir;
    return load_source(ev, name, name, candidates[i], copy, len, false, pkg_dir);
  }
  const char *folder = arena_printf(ev->a, "%s/%s", dir, rel);
  if (is_dir(folder)) {
    PyModule *m = ev_module_new(ev, name, false);
    m->dir = folder;
    Value *v = ev_module_value(ev, m);
    strmap_put(ev->a, &ev->modules, name, v);
    return v;
  }
  return NULL;
}

/* A module in a folder of the compile's module path (TsCompiler.module_path), or NULL.  Those
 * folders hold whatever the user's Python can import, much of it host code the kernel never
 * calls: a module that does not parse is left to be a stub (an error only where a kernel
 * uses it), its diagnostics withdrawn; one that does is interpreted where a kernel body calls
 * it, and called in the host first from host code (PyModule.from_path, ev_host_first). */
static Value *load_from_path(Eval *ev, const char *name, SrcLoc loc) {
  const char *p = ev->c->module_path;
  while (p && *p) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n) {
      const char *dir = arena_strndup(ev->a, p, n);
      Diag *d = &ev->c->diag;
      DiagMark mark = diag_mark(d);
      Value *v = load_sibling(ev, dir, name, loc);
      if (v && d->errors > mark.errors) { /* withdrawn: the module is a stub after all */
        diag_rewind(d, mark);
        strmap_put(ev->a, &ev->modules, name, NULL);
        return NULL;
      }
      if (v) {
        if (v->kind == V_MODULE && v->u.mod.mod == MOD_PY) v->u.mod.py->from_path = true;
        return v;
      }
    }
    p = end ? end + 1 : NULL;
  }
  return NULL;
}

/* A prelude module, or NULL.  Cached under "prelude:NAME" so that a native namespace's
 * fallback and an import of the same name share one module. */
static Value *load_prelude(Eval *ev, const char *name) {
  const char *key = arena_printf(ev->a, "prelude:%s", name);
  Value *v = strmap_get(&ev->modules, key);
  if (v) return v;
  const char *rel = module_path(ev, name);
  const TsEmbeddedFile *f = prelude_file(arena_printf(ev->a, "%s.py", rel));
  if (!f) f = prelude_file(arena_printf(ev->a, "%s/__init__.py", rel));
  if (f) {
    v = load_source(ev, name, key, arena_printf(ev->a, "<prelude>/%s", f->name), f->contents, f->size, true, NULL);
  } else if (prelude_folder(rel)) {
    v = ev_module_value(ev, ev_module_new(ev, name, true));
  }
  if (v) strmap_put(ev->a, &ev->modules, key, v);
  return v;
}

/* A module known only by name: using any attribute of it is the error. */
static Value *stub_module(Eval *ev, const char *name) {
  Value *v = ev_opaque(ev, arena_printf(ev->a, "module '%s' is not available in kernels", name));
  v->u.opaque.module = name;
  return v;
}

/* A name a module does not provide (or a stub module's name): an error only when used. */
static Value *stub_name(Eval *ev, const char *name, const char *module) {
  Value *v = ev_opaque(ev, arena_printf(ev->a, "'%s' (from module '%s') is not available in kernels", name, module));
  v->u.opaque.module = module;
  v->u.opaque.qualname = name;
  return v;
}

/* Older spellings of the same modules: BitBLAS's vendored TVM carried TileLang as `tvm.tl`
 * (`import tvm.tl.language as T`), and BitBLAS re-exported TileLang's MMA helpers as
 * `bitblas.tl.*` and its prim_func simplifier as `bitblas.base`.  A name equal to `from`, or
 * under it, imports the module `to` names (BitBLAS's kernel benchmarks run unchanged). */
static const struct {
  const char *from, *to;
} module_aliases[] = {
    {"tvm.tl", "tilelang"},
    {"bitblas.tvm", "tvm"},
    {"bitblas.tl.utils", "tilelang.intrinsics"},
    {"bitblas.tl.mma_macro_generator", "tilelang.intrinsics.mma_macro_generator"},
    {"bitblas.base", "tilelang.transform"},
};

static const char *unalias(Eval *ev, const char *name) {
  for (size_t i = 0; i < TS_ARRAY_LEN(module_aliases); i++) {
    size_t n = strlen(module_aliases[i].from);
    if (!strncmp(name, module_aliases[i].from, n) && (name[n] == 0 || name[n] == '.'))
      return arena_printf(ev->a, "%s%s", module_aliases[i].to, name + n);
  }
  return name;
}

/* The module an import of `name` binds (never NULL).  `from_dir`: the folder of the module
 * that imports (siblings are looked for there, then beside the kernel file). */
Value *ev_import_module(Eval *ev, const char *name, const char *from_dir, SrcLoc loc) {
  name = unalias(ev, name);
  for (size_t i = 0; i < TS_ARRAY_LEN(native_modules); i++)
    if (!strcmp(native_modules[i].name, name)) return ev_namespace(ev, native_modules[i].mod);
  Value *v = strmap_get(&ev->modules, name);
  if (v) return v;
  if (!v && from_dir) v = load_sibling(ev, from_dir, name, loc);
  if (!v && ev->main_dir && (!from_dir || strcmp(from_dir, ev->main_dir))) v = load_sibling(ev, ev->main_dir, name, loc);
  if (!v) v = load_prelude(ev, name);
  if (!v) v = load_from_path(ev, name, loc);
  if (!v) v = stub_module(ev, name);
  strmap_put(ev->a, &ev->modules, name, v);
  return v;
}

/* ---- attributes ------------------------------------------------------------------------------ */
static bool is_stub(const Value *v) { return !v || v->kind == V_OPAQUE; }

/* A top-level name of module py (evaluated now if still lazy), not a builtin; NULL if none. */
static Value *own_global(Eval *ev, PyModule *py, const char *name) {
  ev_force_global(ev, py, name);
  return strmap_get(&py->globals->vars, name);
}

/* Attribute `name` of module value m, else its submodule, else NULL. */
static Value *module_attr_quiet(Eval *ev, Value *m, const char *name, SrcLoc loc) {
  const char *full;
  if (m->u.mod.mod == MOD_PY) {
    PyModule *py = m->u.mod.py;
    Value *v = own_global(ev, py, name);
    if (v) return v;
    full = arena_printf(ev->a, "%s.%s", py->name, name);
  } else {
    Value *v = builtin_lookup(ev, m->u.mod.mod, name);
    const char *nn = native_name(m->u.mod.mod);
    if (!is_stub(v) || !nn) return v;
    /* the prelude module of the same name, then a prelude submodule */
    Value *p = load_prelude(ev, nn);
    Value *w = p ? own_global(ev, p->u.mod.py, name) : NULL;
    if (w) return w;
    Value *sub = load_prelude(ev, arena_printf(ev->a, "%s.%s", nn, name));
    return sub ? sub : v;
  }
  Value *sub = ev_import_module(ev, full, m->u.mod.py->dir, loc);
  return is_stub(sub) ? NULL : sub;
}

/* m.name, reporting a missing name (a stub for the libraries the prelude covers in part). */
Value *ev_module_attr(Eval *ev, Value *m, const char *name, SrcLoc loc) {
  if (m->u.mod.mod != MOD_PY) {
    Value *v = module_attr_quiet(ev, m, name, loc);
    return v ? v : builtin_lookup_or_error(ev, m->u.mod.mod, name, loc);
  }
  Value *v = module_attr_quiet(ev, m, name, loc);
  if (v) return v;
  PyModule *py = m->u.mod.py;
  if (py->stub_missing) return stub_name(ev, name, py->name);
  ts_error(ev->c, loc, "module '%s' has no attribute '%s'", py->name, name);
  return ev->poison;
}

/* ---- import statements ----------------------------------------------------------------------- */
/* The folder of the module whose globals are (or enclose) env, for its sibling imports. */
static const char *env_dir(Eval *ev, Env *env) {
  for (Env *e = env; e; e = e->parent)
    if (e->module) return e->module->dir;
  return ev->main_dir;
}

/* import a.b.c [as x] / from m import x [as y]: binds the names in env. */
void ev_exec_import(Eval *ev, Env *env, const AstNode *s) {
  const char *dir = env_dir(ev, env);
  for (int i = 0; i < s->naliases; i++) {
    const AstAlias *al = &s->aliases[i];
    const char *bind = al->asname;
    Value *v;
    if (s->kind == AST_IMPORT) {
      const char *full = al->name;
      Value *whole = ev_import_module(ev, full, dir, al->loc); /* import a.b.c loads a.b.c ... */
      if (!bind) {                                              /* ... and binds a */
        const char *dot = strchr(full, '.');
        bind = dot ? arena_strndup(ev->a, full, (size_t)(dot - full)) : full;
        v = dot ? ev_import_module(ev, bind, dir, al->loc) : whole;
      } else {
        v = whole;
      }
    } else {
      if (!strcmp(al->name, "*")) continue;
      /* `from . import x` imports the sibling x; `from .m import x` is m's x (both relative
         to the importing module's folder, which is searched first anyway) */
      const char *mod = s->id ? s->id : al->name;
      Value *m = ev_import_module(ev, mod, dir, s->loc);
      v = NULL;
      if (!s->id && s->level > 0) v = is_stub(m) ? NULL : m;
      else if (m->kind == V_MODULE) v = module_attr_quiet(ev, m, al->name, al->loc);
      /* an unknown name of a known module must not fail at import time */
      if (!v) v = stub_name(ev, al->name, mod);
      if (!bind) bind = al->name;
    }
    ev_env_set(ev, env, bind, v);
  }
}
