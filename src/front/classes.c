/* classes.c — Python classes in the interpreter's subset: what host helper objects such as
 * TileLang's MMA emitters (prelude tilelang/cuda/intrinsics/macro/) need while building a
 * kernel.
 *
 *   eval_stmt.c (class statement) -> ev_class_new;  eval_expr.c (calls, attributes,
 *   `obj.x = v`) -> ev_class_call, ev_object_attr, ev_object_setattr;  methods run through
 *   ev->call like any def.
 *
 * A class statement makes a V_CLASS whose body runs lazily, at the class's first use (a
 * call or an attribute): kernel files define torch modules and dataclasses around their
 * kernels, and those bodies never run unless the kernel uses the class.  The body runs as
 * plain Python in a scope of its own; the names it binds are the class's attributes, and
 * its defs keep the enclosing scope as their closure (Python's methods do not see the class
 * scope).  Bases must be classes of this subset (single or multiple inheritance, looked up
 * depth first, which agrees with Python's MRO for the hierarchies helpers use).
 *
 * An instance (V_INSTANCE) holds its own attributes; reading one looks at the instance,
 * then at the class and its bases, and a def found on the class comes back bound to the
 * instance (V_METHOD) unless it is a @staticmethod.  Calling the class makes an instance and
 * runs __init__ on it.  Not supported (a diagnostic): class decorators, metaclasses and
 * keyword arguments of the class statement, super(), properties. */
#include <string.h>

#include "value.h"

/* `class C(bases): body` -> a V_CLASS whose body runs at first use.  Decorated classes
 * (dataclasses) and classes with keywords (metaclass=...) stay opaque: their use is an error. */
Value *ev_class_new(Eval *ev, Env *env, const AstNode *def) {
  if (def->decorators.n || def->nkwargs)
    return ev_opaque(ev, arena_printf(ev->a, "class '%s' (with %s) cannot be used while building a kernel", def->id,
                                      def->decorators.n ? "a class decorator" : "class keywords"));
  PyClass *k = ARENA_NEW(ev->a, PyClass);
  k->name = def->id;
  k->def = def;
  k->env = env;
  Value *v = ev_new(ev, V_CLASS);
  v->u.cls = k;
  return v;
}

/* Runs the class body once (no staging, no IR block: it is host code even when the class is
 * first used inside a kernel).  False when it failed (reported). */
static bool class_ready(Eval *ev, PyClass *k, SrcLoc loc) {
  if (k->ready) return !k->failed;
  if (k->busy) {
    ts_error(ev->c, loc, "class '%s' is used while its own body runs", k->name);
    return false;
  }
  k->busy = true;
  int errors = ev->c->diag.errors;
  for (int i = 0; i < k->def->items.n; i++) {
    Value *b = ev->eval(ev, k->env, k->def->items.items[i]);
    if (!b) continue;
    if (b->kind != V_CLASS) {
      ts_error(ev->c, k->def->items.items[i]->loc, "class '%s' derives from %s, which is not a class of this file or "
                                                   "the prelude: such classes cannot be used while building a kernel",
               k->name, b->kind == V_OPAQUE ? "an unsupported library object" : ev_type_name(b));
      continue;
    }
    if (class_ready(ev, b->u.cls, loc)) vl_push(ev, &k->bases, b);
  }
  k->attrs = ev_env_new(ev, NULL);
  HostFrame host = ev_host_enter(ev);
  Env *body_env = ev_env_new(ev, k->env);
  ev_exec_block(ev, body_env, &k->def->body);
  ev_host_leave(ev, host);
  /* the body's names become attributes; its defs close over the enclosing scope */
  for (int i = 0; i < body_env->vars.cap; i++) {
    StrMapEntry *e = &body_env->vars.slots[i];
    if (!e->key || !e->value) continue;
    Value *v = e->value;
    if (v->kind == V_FUNC && v->u.fn.env == body_env) {
      Value *f = ev_new(ev, V_FUNC);
      *f = *v;
      f->u.fn.env = k->env;
      v = f;
    }
    ev_env_set(ev, k->attrs, e->key, v);
  }
  k->busy = false;
  k->ready = true;
  k->failed = ev->c->diag.errors > errors;
  return !k->failed;
}

/* The attribute `name` of class k or its bases (depth first), or NULL. */
static Value *class_lookup(Eval *ev, PyClass *k, const char *name, SrcLoc loc) {
  if (!class_ready(ev, k, loc)) return NULL;
  Value *v = strmap_get(&k->attrs->vars, name);
  if (v) return v;
  for (int i = 0; i < k->bases.n; i++)
    if ((v = class_lookup(ev, k->bases.items[i]->u.cls, name, loc))) return v;
  return NULL;
}

static bool decorated_static(const Value *fn) {
  const AstList *ds = &fn->u.fn.def->decorators;
  for (int i = 0; i < ds->n; i++) {
    const AstNode *d = ds->items[i];
    if ((d->kind == AST_NAME || d->kind == AST_ATTRIBUTE) && !strcmp(d->id, "staticmethod")) return true;
  }
  return false;
}

static Value *bind_method(Eval *ev, Value *fn, Value *self) {
  if (fn->kind != V_FUNC || fn->u.fn.def->kind != AST_FUNCTIONDEF || decorated_static(fn)) return fn;
  Value *m = ev_new(ev, V_METHOD);
  m->u.meth.fn = fn;
  m->u.meth.self = self;
  return m;
}

/* obj.name / Class.name: NULL when there is none (not reported: the caller reports it) or
 * when the class body failed (reported). */
Value *ev_object_attr(Eval *ev, Value *base, const char *name, SrcLoc loc) {
  if (base->kind == V_CLASS) {
    if (!strcmp(name, "__name__")) return ev_str(ev, base->u.cls->name);
    return class_lookup(ev, base->u.cls, name, loc);
  }
  Value *v = strmap_get(&base->u.obj.attrs->vars, name);
  if (v) return v;
  if (!strcmp(name, "__class__")) {
    Value *c = ev_new(ev, V_CLASS);
    c->u.cls = base->u.obj.cls;
    return c;
  }
  v = class_lookup(ev, base->u.obj.cls, name, loc);
  return v ? bind_method(ev, v, base) : NULL;
}

/* obj.name = v / Class.name = v. */
bool ev_object_setattr(Eval *ev, Value *base, const char *name, Value *v, SrcLoc loc) {
  if (base->kind == V_CLASS) {
    if (!class_ready(ev, base->u.cls, loc)) return false;
    ev_env_set(ev, base->u.cls->attrs, name, v);
  } else {
    ev_env_set(ev, base->u.obj.attrs, name, v);
  }
  return true;
}

/* A bound method's call: self first. */
Value *ev_method_call(Eval *ev, Value *m, CallArgs *a) {
  CallArgs b = *a;
  b.pos = ARENA_ARRAY(ev->a, Value *, a->npos + 1);
  b.pos[0] = m->u.meth.self;
  for (int i = 0; i < a->npos; i++) b.pos[i + 1] = a->pos[i];
  b.npos = a->npos + 1;
  return ev->call(ev, m->u.meth.fn, &b);
}

/* Class(args): a new instance, initialised by __init__ when the class has one. */
Value *ev_class_call(Eval *ev, Value *cls, CallArgs *a) {
  SrcLoc loc = a->node ? a->node->loc : cls->u.cls->def->loc;
  if (!class_ready(ev, cls->u.cls, loc)) return NULL;
  Value *obj = ev_new(ev, V_INSTANCE);
  obj->u.obj.cls = cls->u.cls;
  obj->u.obj.attrs = ev_env_new(ev, NULL);
  Value *init = class_lookup(ev, cls->u.cls, "__init__", loc);
  if (!init) {
    if (a->npos || a->nkw) {
      ts_error(ev->c, loc, "%s() takes no arguments (the class has no __init__)", cls->u.cls->name);
      return NULL;
    }
    return obj;
  }
  Value *r = ev_method_call(ev, bind_method(ev, init, obj), a);
  if (!r) return NULL;
  if (r->kind != V_NONE) {
    ts_error(ev->c, loc, "%s.__init__() should return None, not '%s'", cls->u.cls->name, ev_type_name(r));
    return NULL;
  }
  return obj;
}
