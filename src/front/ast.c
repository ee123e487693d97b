/* ast.c — names of AST kinds and operators, and ast_dump, the S-expression printer
 * the parser's unit tests compare against (parse.c builds the trees; the evaluator, eval_*.c, walks them).
 *
 * Dump format (one line, deterministic, no locations):
 *   leaves      (Name x) (Int 42) (BigInt 123456789012345678901) (Float 0.5) (Imag 2)
 *               (Str "a\n") (Bytes "xy") True False None ...
 *   f-strings   (FString (Str "a=") (Fmt (Name a) !r (FString (Str ">10"))))
 *   operators   (BinOp + l r) (UnaryOp - x) (BoolOp and a b) (Compare a < b not in c)
 *   access      (Attr v name) (Sub v index) (Slice lo hi step)   -- `_` for an absent part
 *   calls       (Call f arg... (kw name v) (kw ** v))
 *   displays    (Tuple ...) (List ...) (Set ...) (Dict (k v) (** m)) (Starred v)
 *   comps       (ListComp elt (for target iter (if c)...)...)  SetComp, GenExp,
 *               (DictComp k v (for ...)); an async clause prints `async-for`
 *   others      (Lambda (Params ...) body) (IfExp test body orelse) (NamedExpr t v)
 *               (Await v) (Yield v|_) (YieldFrom v)
 *   params      (Params a pos:b *args kw:c **kw (d : ann = default))   -- prefixes give
 *               the kind (pos: positional-only, kw: keyword-only, * and **); a parameter
 *               with annotation or default is parenthesized
 *   statements  (FunctionDef name (Params ...) (returns X) (decorators ...) (body ...))
 *               AsyncFunctionDef; (ClassDef name (bases ...) (keywords ...) (decorators ...)
 *               (body ...)); (Return v) (Delete t...) (Assign t... = v) (AugAssign t += v)
 *               (AnnAssign t ann [v]) (For t iter (body ...) (orelse ...)) AsyncFor
 *               (While test (body) (orelse)) (If test (body) (orelse))
 *               (With (item ctx [vars])... (body)) AsyncWith (Raise [exc] [(from c)])
 *               (Try (body) (except [type] [as name] (body))... (orelse) (finally))
 *               (Assert test [msg]) (Import a (a.b as c)) (ImportFrom ..mod a (b as c))
 *               (Global a b) (Nonlocal a) (Expr v) Pass Break Continue (Module stmt...)
 *   Optional parts that are empty (orelse, decorators, returns) are omitted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

const char *const ast_kind_names[AST_KIND_COUNT] = {
#define AST_NAME_ROW(n, last) #n,
    AST_KINDS(AST_NAME_ROW)
#undef AST_NAME_ROW
};

/* Up to the end of each kind's last field, rounded to 8 so ASan can poison the rest. */
#define AST_FIELD_END(f) (offsetof(AstNode, f) + sizeof(((AstNode *)0)->f))
#define AST_SIZE_ROW(n, last) (unsigned short)((AST_FIELD_END(last) + 7) & ~(size_t)7),
const unsigned short ast_node_size[AST_KIND_COUNT] = {AST_KINDS(AST_SIZE_ROW)};
#undef AST_SIZE_ROW
_Static_assert(sizeof(AstNode) < 65536, "ast_node_size holds 16-bit sizes");
_Static_assert(AST_KIND_COUNT <= 128 && AOP_COUNT <= 128, "AstNode.kind and .op are 8-bit fields");
_Static_assert(_Alignof(AstNode) <= 8, "nodes come from arena_alloc8");

const char *const ast_op_names[AOP_COUNT] = {
    [AOP_ADD] = "+",      [AOP_SUB] = "-",       [AOP_MUL] = "*",       [AOP_MATMUL] = "@",
    [AOP_DIV] = "/",      [AOP_FLOORDIV] = "//", [AOP_MOD] = "%",       [AOP_POW] = "**",
    [AOP_LSHIFT] = "<<",  [AOP_RSHIFT] = ">>",   [AOP_BITOR] = "|",     [AOP_BITXOR] = "^",
    [AOP_BITAND] = "&",   [AOP_UADD] = "+",      [AOP_USUB] = "-",      [AOP_NOT] = "not",
    [AOP_INVERT] = "~",   [AOP_AND] = "and",     [AOP_OR] = "or",       [AOP_EQ] = "==",
    [AOP_NOTEQ] = "!=",   [AOP_LT] = "<",        [AOP_LTE] = "<=",      [AOP_GT] = ">",
    [AOP_GTE] = ">=",     [AOP_IS] = "is",       [AOP_ISNOT] = "is not", [AOP_IN] = "in",
    [AOP_NOTIN] = "not in",
};

static void dump(StrBuf *out, const AstNode *n);

static const char *op_name(AstOp op) {
  return (unsigned)op < AOP_COUNT ? ast_op_names[op] : "?";
}

/* Quotes s with C-style escapes so that every dump is one printable line. */
static void dump_quoted(StrBuf *out, const char *s, size_t n) {
  sb_putc(out, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    switch (ch) {
    case '"': sb_append(out, "\\\""); break;
    case '\\': sb_append(out, "\\\\"); break;
    case '\n': sb_append(out, "\\n"); break;
    case '\t': sb_append(out, "\\t"); break;
    case '\r': sb_append(out, "\\r"); break;
    default:
      if (ch < 0x20 || ch == 0x7F) sb_printf(out, "\\x%02x", ch);
      else sb_putc(out, (char)ch);
    }
  }
  sb_putc(out, '"');
}

/* Shortest %g form that reads back as the same double. */
static void dump_double(StrBuf *out, double v) {
  char buf[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  sb_append(out, buf);
}

static void dump_opt(StrBuf *out, const AstNode *n) {
  if (n) dump(out, n);
  else sb_putc(out, '_');
}

static void dump_list(StrBuf *out, AstList l) {
  for (int i = 0; i < l.n; i++) {
    sb_putc(out, ' ');
    dump(out, l.items[i]);
  }
}

/* (tag item...) — omitted entirely when `skip_empty` and the list is empty. */
static void dump_tagged_list(StrBuf *out, const char *tag, AstList l, bool skip_empty) {
  if (skip_empty && l.n == 0) return;
  sb_printf(out, " (%s", tag);
  dump_list(out, l);
  sb_putc(out, ')');
}

static void dump_params(StrBuf *out, AstParams ps) {
  sb_append(out, "(Params");
  for (int i = 0; i < ps.n; i++) {
    const AstParam *pr = &ps.items[i];
    static const char *const prefix[] = {"pos:", "", "*", "kw:", "**"};
    bool wrap = pr->annotation || pr->default_value;
    sb_putc(out, ' ');
    if (wrap) sb_putc(out, '(');
    sb_printf(out, "%s%s", prefix[pr->kind], pr->name);
    if (pr->annotation) {
      sb_append(out, " : ");
      dump(out, pr->annotation);
    }
    if (pr->default_value) {
      sb_append(out, " = ");
      dump(out, pr->default_value);
    }
    if (wrap) sb_putc(out, ')');
  }
  sb_putc(out, ')');
}

static void dump_keywords(StrBuf *out, const AstKeyword *kw, int n) {
  for (int i = 0; i < n; i++) {
    sb_printf(out, " (kw %s ", kw[i].name ? kw[i].name : "**");
    dump(out, kw[i].value);
    sb_putc(out, ')');
  }
}

static void dump_comps(StrBuf *out, const AstNode *n) {
  for (int i = 0; i < n->ncomps; i++) {
    const AstComp *c = &n->comps[i];
    sb_printf(out, " (%s ", c->is_async ? "async-for" : "for");
    dump(out, c->target);
    sb_putc(out, ' ');
    dump(out, c->iter);
    for (int j = 0; j < c->ifs.n; j++) {
      sb_append(out, " (if ");
      dump(out, c->ifs.items[j]);
      sb_putc(out, ')');
    }
    sb_putc(out, ')');
  }
}

static void dump_aliases(StrBuf *out, const AstNode *n) {
  for (int i = 0; i < n->naliases; i++) {
    const AstAlias *a = &n->aliases[i];
    if (a->asname) sb_printf(out, " (%s as %s)", a->name, a->asname);
    else sb_printf(out, " %s", a->name);
  }
}

/* " x": a space, then the dump of n. */
static void dump_sp(StrBuf *out, const AstNode *n) {
  sb_putc(out, ' ');
  dump(out, n);
}

/* "(Tag x)" for a node whose one child may be absent ("_"). */
static void dump_wrapped(StrBuf *out, const char *open, const AstNode *n) {
  sb_append(out, open);
  dump_opt(out, n);
  sb_putc(out, ')');
}

/* "(Tag a b c)" for the list forms. */
static void dump_listed(StrBuf *out, const char *open, AstList l) {
  sb_append(out, open);
  dump_list(out, l);
  sb_putc(out, ')');
}

/* Names, literals and f-strings. */
static void dump_leaf(StrBuf *out, const AstNode *n) {
  switch (n->kind) {
  case AST_NAME: sb_printf(out, "(Name %s)", n->id); return;
  case AST_CONST_INT:
    if (!n->is_big) {
      sb_printf(out, "(Int %lld)", (long long)n->ival);
      return;
    }
    sb_append(out, "(BigInt ");
    sb_appendn(out, n->sval, n->slen);
    sb_putc(out, ')');
    return;
  case AST_CONST_FLOAT:
    sb_append(out, n->is_imag ? "(Imag " : "(Float ");
    dump_double(out, n->fval);
    sb_putc(out, ')');
    return;
  case AST_CONST_STR:
    sb_append(out, n->is_bytes ? "(Bytes " : "(Str ");
    dump_quoted(out, n->sval, n->slen);
    sb_putc(out, ')');
    return;
  case AST_CONST_TRUE: sb_append(out, "True"); return;
  case AST_CONST_FALSE: sb_append(out, "False"); return;
  case AST_CONST_NONE: sb_append(out, "None"); return;
  case AST_CONST_ELLIPSIS: sb_append(out, "..."); return;
  case AST_FSTRING: dump_listed(out, "(FString", n->items); return;
  default: /* AST_FORMATTED */
    sb_append(out, "(Fmt ");
    dump(out, n->value);
    if (n->conversion) sb_printf(out, " !%c", n->conversion);
    if (n->format_spec) dump_sp(out, n->format_spec);
    sb_putc(out, ')');
    return;
  }
}

/* Operators, calls, attribute and subscript access, slices. */
static void dump_operation(StrBuf *out, const AstNode *n) {
  switch (n->kind) {
  case AST_BINOP:
    sb_printf(out, "(BinOp %s ", op_name(n->op));
    dump(out, n->left);
    dump_sp(out, n->right);
    break;
  case AST_UNARYOP:
    sb_printf(out, "(UnaryOp %s ", op_name(n->op));
    dump(out, n->value);
    break;
  case AST_BOOLOP:
    sb_printf(out, "(BoolOp %s", op_name(n->op));
    dump_list(out, n->items);
    break;
  case AST_COMPARE:
    sb_append(out, "(Compare ");
    dump(out, n->left);
    for (int i = 0; i < n->items.n; i++) {
      sb_printf(out, " %s", op_name(n->ops[i]));
      dump_sp(out, n->items.items[i]);
    }
    break;
  case AST_CALL:
    sb_append(out, "(Call ");
    dump(out, n->func);
    dump_list(out, n->items);
    dump_keywords(out, n->kwargs, n->nkwargs);
    break;
  case AST_ATTRIBUTE:
    sb_append(out, "(Attr ");
    dump(out, n->value);
    sb_printf(out, " %s", n->id);
    break;
  case AST_SUBSCRIPT:
    sb_append(out, "(Sub ");
    dump(out, n->value);
    dump_sp(out, n->index);
    break;
  default: /* AST_SLICE */
    sb_append(out, "(Slice ");
    dump_opt(out, n->lo);
    sb_putc(out, ' ');
    dump_opt(out, n->hi);
    sb_putc(out, ' ');
    dump_opt(out, n->step);
    break;
  }
  sb_putc(out, ')');
}

/* Displays (tuple, list, set, dict) and comprehensions. */
static void dump_display(StrBuf *out, const AstNode *n) {
  switch (n->kind) {
  case AST_TUPLE: dump_listed(out, "(Tuple", n->items); return;
  case AST_LIST: dump_listed(out, "(List", n->items); return;
  case AST_SET: dump_listed(out, "(Set", n->items); return;
  case AST_DICT:
    sb_append(out, "(Dict");
    for (int i = 0; i < n->items.n; i++) {
      const AstNode *k = i < n->keys.n ? n->keys.items[i] : NULL;
      sb_append(out, " (");
      if (k) dump(out, k);
      else sb_append(out, "**");
      dump_sp(out, n->items.items[i]);
      sb_putc(out, ')');
    }
    sb_putc(out, ')');
    return;
  default: /* the comprehensions */
    sb_append(out, n->kind == AST_LISTCOMP  ? "(ListComp "
                   : n->kind == AST_SETCOMP ? "(SetComp "
                   : n->kind == AST_GENEXP  ? "(GenExp "
                                            : "(DictComp ");
    if (n->kind == AST_DICTCOMP) {
      dump(out, n->key);
      sb_putc(out, ' ');
    }
    dump(out, n->elt);
    dump_comps(out, n);
    sb_putc(out, ')');
    return;
  }
}

/* Every expression kind. */
static void dump_expr(StrBuf *out, const AstNode *n) {
  switch (n->kind) {
  case AST_NAME: case AST_CONST_INT: case AST_CONST_FLOAT: case AST_CONST_STR: case AST_CONST_TRUE:
  case AST_CONST_FALSE: case AST_CONST_NONE: case AST_CONST_ELLIPSIS: case AST_FSTRING: case AST_FORMATTED:
    dump_leaf(out, n);
    return;
  case AST_BINOP: case AST_UNARYOP: case AST_BOOLOP: case AST_COMPARE: case AST_CALL: case AST_ATTRIBUTE:
  case AST_SUBSCRIPT: case AST_SLICE:
    dump_operation(out, n);
    return;
  case AST_TUPLE: case AST_LIST: case AST_SET: case AST_DICT: case AST_LISTCOMP: case AST_SETCOMP:
  case AST_GENEXP: case AST_DICTCOMP:
    dump_display(out, n);
    return;
  case AST_STARRED:
    sb_append(out, "(Starred ");
    dump(out, n->value);
    sb_putc(out, ')');
    return;
  case AST_LAMBDA:
    sb_append(out, "(Lambda ");
    dump_params(out, n->params);
    dump_sp(out, n->value);
    sb_putc(out, ')');
    return;
  case AST_IFEXP:
    sb_append(out, "(IfExp ");
    dump(out, n->test);
    dump_sp(out, n->left);
    dump_sp(out, n->right);
    sb_putc(out, ')');
    return;
  case AST_NAMEDEXPR:
    sb_append(out, "(NamedExpr ");
    dump(out, n->left);
    dump_sp(out, n->value);
    sb_putc(out, ')');
    return;
  case AST_AWAIT: dump_wrapped(out, "(Await ", n->value); return;
  case AST_YIELD: dump_wrapped(out, "(Yield ", n->value); return;
  case AST_YIELDFROM: dump_wrapped(out, "(YieldFrom ", n->value); return;
  default: sb_printf(out, "(?%d)", (int)n->kind); return;
  }
}

/* def, class, with, try and import: the statements with parts of their own. */
static void dump_compound(StrBuf *out, const AstNode *n) {
  switch (n->kind) {
  case AST_FUNCTIONDEF:
    sb_printf(out, "(%s %s ", n->is_async ? "AsyncFunctionDef" : "FunctionDef", n->id);
    dump_params(out, n->params);
    if (n->returns) {
      sb_append(out, " (returns ");
      dump(out, n->returns);
      sb_putc(out, ')');
    }
    dump_tagged_list(out, "decorators", n->decorators, true);
    dump_tagged_list(out, "body", n->body, false);
    break;
  case AST_CLASSDEF:
    sb_printf(out, "(ClassDef %s", n->id);
    dump_tagged_list(out, "bases", n->items, true);
    if (n->nkwargs) {
      sb_append(out, " (keywords");
      dump_keywords(out, n->kwargs, n->nkwargs);
      sb_putc(out, ')');
    }
    dump_tagged_list(out, "decorators", n->decorators, true);
    dump_tagged_list(out, "body", n->body, false);
    break;
  case AST_WITH:
    sb_append(out, n->is_async ? "(AsyncWith" : "(With");
    for (int i = 0; i < n->nwithitems; i++) {
      sb_append(out, " (item ");
      dump(out, n->withitems[i].context);
      if (n->withitems[i].vars) dump_sp(out, n->withitems[i].vars);
      sb_putc(out, ')');
    }
    dump_tagged_list(out, "body", n->body, false);
    break;
  case AST_TRY:
    sb_append(out, "(Try");
    dump_tagged_list(out, "body", n->body, false);
    for (int i = 0; i < n->nhandlers; i++) {
      const AstHandler *h = &n->handlers[i];
      sb_append(out, " (except");
      if (h->type) dump_sp(out, h->type);
      if (h->name) sb_printf(out, " as %s", h->name);
      dump_tagged_list(out, "body", h->body, false);
      sb_putc(out, ')');
    }
    dump_tagged_list(out, "orelse", n->orelse, true);
    dump_tagged_list(out, "finally", n->finalbody, true);
    break;
  case AST_IMPORT:
    sb_append(out, "(Import");
    dump_aliases(out, n);
    break;
  default: /* AST_IMPORTFROM */
    sb_append(out, "(ImportFrom ");
    for (int i = 0; i < n->level; i++) sb_putc(out, '.');
    sb_append(out, n->id ? n->id : "");
    dump_aliases(out, n);
    break;
  }
  sb_putc(out, ')');
}

/* Assignments, control flow and the simple statements. */
static void dump_stmt(StrBuf *out, const AstNode *n) {
  switch (n->kind) {
  case AST_FUNCTIONDEF: case AST_CLASSDEF: case AST_WITH: case AST_TRY: case AST_IMPORT: case AST_IMPORTFROM:
    dump_compound(out, n);
    return;
  case AST_RETURN:
    sb_append(out, "(Return");
    if (n->value) dump_sp(out, n->value);
    break;
  case AST_DELETE: sb_append(out, "(Delete"); dump_list(out, n->items); break;
  case AST_ASSIGN:
    sb_append(out, "(Assign");
    dump_list(out, n->items);
    sb_append(out, " = ");
    dump(out, n->value);
    break;
  case AST_AUGASSIGN:
    sb_append(out, "(AugAssign ");
    dump(out, n->target);
    sb_printf(out, " %s= ", op_name(n->op));
    dump(out, n->value);
    break;
  case AST_ANNASSIGN:
    sb_append(out, "(AnnAssign ");
    dump(out, n->target);
    dump_sp(out, n->annotation);
    if (n->value) dump_sp(out, n->value);
    break;
  case AST_FOR:
    sb_append(out, n->is_async ? "(AsyncFor " : "(For ");
    dump(out, n->target);
    dump_sp(out, n->iter);
    dump_tagged_list(out, "body", n->body, false);
    dump_tagged_list(out, "orelse", n->orelse, true);
    break;
  case AST_WHILE: case AST_IF:
    sb_append(out, n->kind == AST_WHILE ? "(While " : "(If ");
    dump(out, n->test);
    dump_tagged_list(out, "body", n->body, false);
    dump_tagged_list(out, "orelse", n->orelse, true);
    break;
  case AST_RAISE:
    sb_append(out, "(Raise");
    if (n->value) dump_sp(out, n->value);
    if (n->cause) {
      sb_append(out, " (from ");
      dump(out, n->cause);
      sb_putc(out, ')');
    }
    break;
  case AST_ASSERT:
    sb_append(out, "(Assert ");
    dump(out, n->test);
    if (n->msg) dump_sp(out, n->msg);
    break;
  case AST_GLOBAL: case AST_NONLOCAL:
    sb_append(out, n->kind == AST_GLOBAL ? "(Global" : "(Nonlocal");
    for (int i = 0; i < n->nnames; i++) sb_printf(out, " %s", n->names[i]);
    break;
  case AST_EXPR: sb_append(out, "(Expr "); dump(out, n->value); break;
  case AST_PASS: sb_append(out, "Pass"); return;
  case AST_BREAK: sb_append(out, "Break"); return;
  case AST_CONTINUE: sb_append(out, "Continue"); return;
  case AST_MODULE: sb_append(out, "(Module"); dump_list(out, n->body); break;
  default: sb_printf(out, "(?%d)", (int)n->kind); return;
  }
  sb_putc(out, ')');
}

static void dump(StrBuf *out, const AstNode *n) {
  if (!n) sb_append(out, "<null>");
  else if (n->kind < AST_FUNCTIONDEF) dump_expr(out, n);
  else dump_stmt(out, n);
}

void ast_dump(StrBuf *out, const AstNode *n) { dump(out, n); }
