/* ast.h — the Python 3 syntax tree produced by parse.c and walked by the evaluator (eval_*.c).
 *
 * The parser reads the whole kernel file (host code such as torch harnesses and
 * argparse included) so one node type covers all of Python 3.11's grammar; the
 * evaluator only ever runs the function it was asked to compile.  Nodes are tagged
 * unions allocated from the module's arena and never mutated after parsing.
 * Names follow CPython's `ast` module so the mapping is obvious. */
#ifndef TS_AST_H
#define TS_AST_H

#include <stddef.h>

#include "../base/base.h"

/* Node kinds: expressions then statements.  X(name, last): `last` is the last field of
 * AstNode the kind uses (in declaration order); nodes are allocated only up to it (see
 * AstNode).  The comment lists the fields. */
#define AST_KINDS(X)                                                                               \
  /* expressions */                                                                               \
  X(NAME, value)         /* id */                                                                  \
  X(CONST_INT, slen)     /* ival (big literals that overflow int64 set is_big and keep text) */    \
  X(CONST_FLOAT, slen)   /* fval; imaginary literals set is_imag */                                \
  X(CONST_STR, slen)     /* sval/slen (escapes decoded; adjacent literals concatenated; bytes: is_bytes) */ \
  X(CONST_TRUE, value) X(CONST_FALSE, value) X(CONST_NONE, value) X(CONST_ELLIPSIS, value)         \
  X(FSTRING, items)      /* items: CONST_STR and FORMATTED parts */                               \
  X(FORMATTED, format_spec) /* value, conversion ('r','s','a' or 0), format_spec (FSTRING or NULL) */ \
  X(BINOP, right)        /* op, left, right */                                                     \
  X(UNARYOP, value)      /* op, value = operand */                                                 \
  X(BOOLOP, items)       /* op (AND/OR), items (>= 2 values) */                                    \
  X(COMPARE, ops)        /* left, ops[n], items = comparators[n] */                                \
  X(CALL, nkwargs)       /* func, items = positional args (may be STARRED), kwargs (AstKeyword) */ \
  X(ATTRIBUTE, value)    /* value, id = attribute name */                                          \
  X(SUBSCRIPT, index)    /* value, index (a TUPLE when written a[i, j]) */                         \
  X(SLICE, step)         /* lo, hi, step (each may be NULL) */                                     \
  X(STARRED, value)      /* value */                                                               \
  X(TUPLE, items) X(LIST, items) X(SET, items) /* items */                                         \
  X(DICT, keys)          /* keys/items (key NULL = **mapping in items[i]) */                       \
  X(LISTCOMP, ncomps) X(SETCOMP, ncomps) X(GENEXP, ncomps) /* elt, comps */                        \
  X(DICTCOMP, ncomps)    /* key, elt (= value), comps */                                           \
  X(LAMBDA, params)      /* params, value = body */                                                \
  X(IFEXP, test)         /* test, left = body value, right = orelse value */                       \
  X(NAMEDEXPR, left)     /* left = target, value */                                                \
  X(AWAIT, value) X(YIELD, value) X(YIELDFROM, value) /* value (may be NULL for YIELD) */          \
  /* statements */                                                                                \
  X(FUNCTIONDEF, returns) /* id, params, body, decorators, returns, is_async */                 \
  X(CLASSDEF, decorators) /* id, items = bases, kwargs, body, decorators */                        \
  X(RETURN, value)       /* value (NULL = bare return) */                                          \
  X(DELETE, items)       /* items = targets */                                                     \
  X(ASSIGN, items)       /* items = targets (a = b = v has 2), value */                            \
  X(AUGASSIGN, target)   /* target, op, value */                                                   \
  X(ANNASSIGN, annotation) /* target, annotation, value (NULL when only declared) */               \
  X(FOR, orelse)         /* target, iter, body, orelse, is_async */                                \
  X(WHILE, orelse)       /* test, body, orelse */                                                  \
  X(IF, orelse)          /* test, body, orelse (elif = a single IF in orelse) */                   \
  X(WITH, nwithitems)    /* withitems, body, is_async */                                           \
  X(RAISE, cause)        /* value = exc, cause */                                                  \
  X(TRY, nhandlers)      /* body, handlers, orelse, finalbody */                                   \
  X(ASSERT, msg)         /* test, msg */                                                           \
  X(IMPORT, naliases)    /* aliases */                                                             \
  X(IMPORTFROM, naliases) /* module (id, may be NULL for "from . import x"), aliases, level */     \
  X(GLOBAL, nnames) X(NONLOCAL, nnames) /* names */                                                \
  X(EXPR, value)         /* value */                                                               \
  X(PASS, value) X(BREAK, value) X(CONTINUE, value)                                                \
  X(MODULE, body)        /* body */

typedef enum AstKind {
#define AST_ENUM(n, last) AST_##n,
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

/* Where a node ends, in the file of its loc. */
typedef struct AstEnd {
  int line, col;
} AstEnd;
static inline AstEnd ast_end(SrcLoc l) { return (AstEnd){l.line, l.col}; }

/* One struct for every kind; a node is allocated only up to the last field its kind
 * uses (ast_node_size, from AST_KINDS), and the constants' fields share storage with
 * the others.  Fields are ordered by how many nodes need them: a name or an attribute
 * takes 48 bytes, a call 88, where every node took 456 (the AST of 5 MB of real kernel
 * code took 50 times its size; now 9).  So: read only the fields of the node's kind (a
 * switch on kind, or AST_HAS in a walker over every kind).  Under ASan the bytes past a
 * node's kind are poisoned, which makes a wrong read an error in the tests. */
struct AstNode {
  AstKind kind : 8;
  AstOp op : 8;    /* BINOP, UNARYOP, BOOLOP, AUGASSIGN */
  bool is_async, is_big, is_imag, is_bytes;
  AstEnd end;      /* just past the last token (for carets spanning an expression) */
  SrcLoc loc;      /* first token of the node */
  const char *id;  /* NAME, ATTRIBUTE attr, FUNCTIONDEF/CLASSDEF name, IMPORTFROM module */
  AstNode *value;
  union {
    struct {       /* CONST_INT, CONST_FLOAT, CONST_STR only */
      int64_t ival;
      double fval;
      const char *sval; size_t slen; /* CONST_STR; also the literal text when is_big */
    };
    struct {       /* every other kind, in AST_KINDS' order of `last` */
      AstList items;   /* elements / args / comparators / targets / values / bases / parts */
      AstNode *func;
      AstKeyword *kwargs; int nkwargs;
      int conversion;  /* FORMATTED */
      AstNode *index;
      AstNode *left, *right;
      AstOp *ops;      /* COMPARE: ops[items.n] */
      AstNode *test;
      AstNode *lo, *hi, *step;
      AstList keys;    /* DICT keys, parallel to items */
      AstNode *key, *elt;
      AstComp *comps; int ncomps;
      int level;       /* IMPORTFROM */
      AstNode *format_spec;
      AstParams params;
      AstNode *target, *annotation, *msg, *cause;
      AstNode *iter;
      AstList body, orelse, decorators;
      AstNode *returns;
      AstList finalbody;
      AstWithItem *withitems; int nwithitems;
      AstHandler *handlers; int nhandlers;
      AstAlias *aliases; int naliases;
      const char **names; int nnames; /* GLOBAL / NONLOCAL */
    };
  };
};

/* Bytes allocated for a node of each kind, and whether a node has field f.  Walkers that
 * visit the children of any kind use AST_HAS; constants have no children. */
extern const unsigned short ast_node_size[AST_KIND_COUNT];
#define AST_IS_CONST(n) ((n)->kind == AST_CONST_INT || (n)->kind == AST_CONST_FLOAT || (n)->kind == AST_CONST_STR)
#define AST_HAS(n, f) (!AST_IS_CONST(n) && offsetof(AstNode, f) + sizeof((n)->f) <= ast_node_size[(n)->kind])

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
