/* front.h — entry of the front end: from a parsed module and -D parameters to Tile IR.
 *
 *   parse_module (parse.c)  ->  front_compile (eval_entry.c)  ->  IrFunc
 *
 * front_compile runs the staging interpreter (DESIGN.md §4) over the chosen function:
 * a lazy factory (returns a nested @T.prim_func), an eager @tilelang.jit body, or a
 * top-level @T.prim_func.  Parameters are bound from `params` (values in Python
 * syntax, parsed by front_parse_value).  Errors go to c->diag; returns NULL if any. */
#ifndef TS_FRONT_H
#define TS_FRONT_H

#include "../ir/ir.h"
#include "ast.h"

IrFunc *front_compile(TsCompiler *c, const AstNode *module, const char *func_name,
                      const ts_param *params, int nparams);

/* Names of the functions in a module that front_compile can compile (for --help/listing). */
int front_list_functions(const AstNode *module, const char **names, int max);

#endif
