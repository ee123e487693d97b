/* registry.h — the builtin registry as the interpreter sees it (registry.c): names of the
 * native namespaces, methods of values, the Python builtins.  Handlers do not include it. */
#ifndef TS_FRONT_REGISTRY_H
#define TS_FRONT_REGISTRY_H

#include "value.h"

/* Attribute `name` of native namespace `ns`: a builtin, or a value (dtype, enum member,
 * namespace); NULL when the namespace has no such name. */
Value *builtin_lookup(Eval *ev, ModKind ns, const char *name);
/* The same, reporting "module 'T' has no attribute 'x'" at loc when there is none. */
Value *builtin_lookup_or_error(Eval *ev, ModKind ns, const char *name, SrcLoc loc);
/* Method `name` of a str, list, dict, int or IR value, bound to it; NULL when it has none. */
Value *builtin_method(Eval *ev, Value *self, const char *name);
/* builtin[index] (T.Tensor[shape, dtype]) at the subscript `node`; reports a builtin that is
 * not subscriptable. */
Value *builtin_subscript(Eval *ev, Value *fn, Value *index, const AstNode *node);
/* Binds the Python builtins (min, len, range ...) in env. */
void builtin_install(Eval *ev, Env *env);

#endif
