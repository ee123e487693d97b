/* ast.h — the Python 3 syntax tree produced by parse.c and walked by eval.c.
 *
 * The parser reads the whole kernel file (host code such as torch harnesses and
 * argparse included) so one node type covers all of Python 3.11's grammar; the
 * evaluator only ever runs the function it was asked to compile.  Nodes are tagged
 * unions allocated from the module's arena and never mutated after parsing.
 * Names follow CPython's `ast` module so the mapping is obvious. */
#ifndef TS_AST_H
#define TS_AST_H

#include "../base/base.h"

/* Node kinds: expressions then statements.  X(name) */
#define AST_KINDS(X)                                                                               \
  /* expressions */                                                                               \
  X(NAME)          /* id */                                                                        \
  X(CONST_INT)     /* ival (big literals that overflow int64 set is_big and keep text) */          \
  X(CONST_FLOAT)   /* fval; imaginary literals set is_imag */                                      \
  X(CONST_STR)     /* sval/slen (escapes decoded; adjacent literals concatenated; bytes: is_bytes) */ \
  X(CONST_TRUE) X(CONST_FALSE) X(CONST_NONE) X(CONST_ELLIPSIS)                                     \
  X(FSTRING)       /* items: CONST_STR and FORMATTED parts */                                     \
  X(FORMATTED)     /* value, conversion ('r','s','a' or 0), format_spec (FSTRING or NULL) */       \
  X(BINOP)         /* op, left, right */                                                           \
  X(UNARYOP)       /* op, operand */                                                               \
  X(BOOLOP)        /* op (AND/OR), items (>= 2 values) */                                          \
  X(COMPARE)       /* left, ops[n], items = comparators[n] */                                      \
  X(CALL)          /* func, items = positional args (may be STARRED), kwargs (AstKeyword) */       \
  X(ATTRIBUTE)     /* value, id = attribute name */                                                \
  X(SUBSCRIPT)     /* value, index (a TUPLE when written a[i, j]) */                               \
  X(SLICE)         /* lo, hi, step (each may be NULL) */                                           \
  X(STARRED)       /* value */                                                                     \
  X(TUPLE) X(LIST) X(SET) /* items */                                                             \
  X(DICT)          /* keys/items (key NULL = **mapping in items[i]) */                             \
  X(LISTCOMP) X(SETCOMP) X(GENEXP) /* elt, comps */                                                \
  X(DICTCOMP)      /* key, elt (= value), comps */                                                 \
  X(LAMBDA)        /* params, value = body */                                                      \
  X(IFEXP)         /* test, body (=left), orelse (=right) */                                       \
  X(NAMEDEXPR)     /* target (=left), value */                                                     \
  X(AWAIT) X(YIELD) X(YIELDFROM) /* value (may be NULL for YIELD) */                               \
  /* statements */                                                                                \
  X(FUNCTIONDEF)   /* id, params, body, decorators, returns, is_async */                           \
  X(CLASSDEF)      /* id, items = bases, kwargs, body, decorators */                               \
  X(RETURN)        /* value (NULL = bare return) */                                                \
  X(DELETE)        /* items = targets */                                                           \
  X(ASSIGN)        /* items = targets (a = b = v has 2), value */                                  \
  X(AUGASSIGN)     /* target, op, value */                                                         \
  X(ANNASSIGN)     /* target, annotation, value (NULL when only declared) */                      \
  X(FOR)           /* target, iter, body, orelse, is_async */                                      \
  X(WHILE)         /* test, body, orelse */                                                        \
  X(IF)            /* test, body, orelse (elif = a single IF in orelse) */                         \
  X(WITH)          /* withitems, body, is_async */                                                 \
  X(RAISE)         /* value = exc, cause */                                                        \
  X(TRY)           /* body, handlers, orelse, finalbody */                                         \
  X(ASSERT)        /* test, msg */                                                                 \
  X(IMPORT)        /* aliases */                                                                   \
  X(IMPORTFROM)    /* module (may be NULL for "from . import x"), aliases, level */                \
  X(GLOBAL) X(NONLOCAL) /* names */                                                                \
  X(EXPR)          /* value */                                                                     \
  X(PASS) X(BREAK) X(CONTINUE)                                                                     \
  X(MODULE)        /* body */

typedef enum AstKind {
#define AST_ENUM(n) AST_##n,
  AST_KINDS(AST_ENUM)
#undef AST_ENUM
      AST_KIND_COUNT
} AstKind;
extern const char *const ast_kind_names[AST_KIND_COUNT];

/* Operators of BINOP, AUGASSIGN, UNARYOP, BOOLOP and COMPARE. */
typedef enum AstOp {
  AOP_ADD, AOP_SUB, AOP_MUL, AOP_MATMUL, AOP_DIV, AOP_FLOORDIV, AOP_MOD, AOP_POW,
  AOP_LSHIFT, AOP_RSHIFT, AOP_BITOR, AOP_BITXOR, AOP_BITAND,
  AOP_UADD, AOP_USUB, AOP_NOT, AOP_INVERT,
  AOP_AND, AOP_OR,
  AOP_EQ, AOP_NOTEQ, AOP_LT, AOP_LTE, AOP_GT, AOP_GTE, AOP_IS, AOP_ISNOT, AOP_IN, AOP_NOTIN,
  AOP_COUNT
} AstOp;
extern const char *const ast_op_names[AOP_COUNT]; /* "+", "//", "not in", ... */

typedef struct AstNode AstNode;

typedef struct AstList {
  AstNode **items;
  int n;
} AstList;

typedef enum AstParamKind {
  APARAM_POSONLY, /* before "/" */
  APARAM_NORMAL,
  APARAM_VARARGS, /* *args */
  APARAM_KWONLY,  /* after * or *args */
  APARAM_VARKW    /* **kwargs */
} AstParamKind;

typedef struct AstParam {
  const char *name;
  AstNode *annotation;    /* may be NULL */
  AstNode *default_value; /* may be NULL */
  AstParamKind kind;
  SrcLoc loc;
} AstParam;

typedef struct AstParams {
  AstParam *items; /* in source order */
  int n;
} AstParams;

typedef struct AstKeyword { /* f(x=1) or f(**kw) */
  const char *name;          /* NULL for **value */
  AstNode *value;
  SrcLoc loc;
} AstKeyword;

typedef struct AstComp { /* for target in iter if c1 if c2 */
  AstNode *target, *iter;
  AstList ifs;
  bool is_async;
} AstComp;

typedef struct AstWithItem {
  AstNode *context;
  AstNode *vars; /* may be NULL */
} AstWithItem;

typedef struct AstHandler { /* except type as name: body */
  AstNode *type;   /* NULL for bare except */
  const char *name;
  AstList body;
  SrcLoc loc;
} AstHandler;

typedef struct AstAlias { /* import a.b.c as d */
  const char *name;   /* dotted name, or "*" */
  const char *asname; /* NULL when absent */
  SrcLoc loc;
} AstAlias;

struct AstNode {
  AstKind kind;
  SrcLoc loc;      /* first token of the node */
  SrcLoc end;      /* just past the last token (for carets spanning an expression) */
  AstOp op;
  bool is_async, is_big, is_imag, is_bytes;
  const char *id;  /* NAME, ATTRIBUTE attr, FUNCTIONDEF/CLASSDEF name, IMPORTFROM module */
  int64_t ival;
  double fval;
  const char *sval; size_t slen;   /* CONST_STR; also the literal text when is_big */
  int conversion;  /* FORMATTED */
  int level;       /* IMPORTFROM */
  AstNode *value, *left, *right, *test, *target, *iter, *annotation, *returns;
  AstNode *lo, *hi, *step, *index, *func, *key, *elt, *cause, *msg, *format_spec;
  AstOp *ops;      /* COMPARE: ops[items.n] */
  AstList items;   /* elements / args / comparators / targets / values / bases / parts */
  AstList keys;    /* DICT keys, parallel to items */
  AstList body, orelse, finalbody, decorators;
  AstParams params;
  AstKeyword *kwargs; int nkwargs;
  AstComp *comps; int ncomps;
  AstWithItem *withitems; int nwithitems;
  AstHandler *handlers; int nhandlers;
  AstAlias *aliases; int naliases;
  const char **names; int nnames; /* GLOBAL / NONLOCAL */
};

/* IFEXP uses: test, left = body value, right = orelse value.  NAMEDEXPR: left = target. */

/* ---- entry points --------------------------------------------------------------- */
typedef struct TsCompiler TsCompiler;

/* Parse a whole file into a MODULE node.  Syntax errors are reported through c->diag
 * with file:line:col and the parser recovers at the next statement, so every error
 * of the file is reported; returns NULL only when nothing could be built. */
AstNode *parse_module(TsCompiler *c, const SourceFile *file);

/* Parse a single expression (used for -D values such as `(64, 64)` or `T.float16`). */
AstNode *parse_expression(TsCompiler *c, const SourceFile *file);

/* Debug printer: an S-expression-like dump used by the parser's unit tests. */
void ast_dump(StrBuf *out, const AstNode *n);

#endif
