/* parse_stmt.c — the statement rules of the recursive-descent parser (parse.c has the
 * tokens and the expressions; parse_int.h is what they share): simple
 * statements and assignments, imports, compound statements (def, class, if, while, for,
 * with, try, match skipped as host code), blocks and their recovery after errors, and
 * parse_module (a file is a list of statements). */
#include <string.h>

#include "parse_int.h"

static void parse_stmts_until_dedent(Parser *p, PtrVec *out);

/* ---- statements -------------------------------------------------------------------------- */

static AstNode *new_stmt(Parser *p, AstKind k) { return ps_new_node(p, k, ps_cur(p)->loc); }

/* Skips the rest of a broken statement: up to and including the next NEWLINE (never
 * past an INDENT/DEDENT, which belong to the block structure). */
static void synchronize(Parser *p) {
  /* The skipped tokens go as they are passed (a 5 MB line after an error is not kept). */
  TokWindow w = ps_window_open(p);
  while (!ps_at(p, TOK_EOF) && !ps_at(p, TOK_NEWLINE) && !ps_at(p, TOK_INDENT) && !ps_at(p, TOK_DEDENT)) {
    ps_advance(p);
    ps_window_free(p, &w);
  }
  ps_accept(p, TOK_NEWLINE);
  p->panic = false;
}


static void parse_simple_stmts(Parser *p, PtrVec *out);
static void parse_statement(Parser *p, PtrVec *out);

/* block: NEWLINE INDENT statements DEDENT | simple_stmts
 * `what` names the header for "expected an indented block after <what> on line N".
 * When the header itself was broken (panic), the rest of its line is skipped and an
 * indented body is still parsed so that its own errors are found too. */
static AstList parse_block_msg(Parser *p, const char *what, SrcLoc hdr, const char *colon_msg) {
  PtrVec out = {0};
  if (!p->panic && !ps_at(p, TOK_COLON)) ps_error_at(p, ps_cur(p), "%s", colon_msg);
  if (p->panic) {
    synchronize(p);
    if (ps_accept(p, TOK_INDENT)) {
      parse_stmts_until_dedent(p, &out);
      ps_accept(p, TOK_DEDENT);
    }
    return ps_to_list(&out);
  }
  ps_advance(p); /* ':' */
  if (!ps_accept(p, TOK_NEWLINE)) {
    parse_simple_stmts(p, &out);
    return ps_to_list(&out);
  }
  if (!ps_at(p, TOK_INDENT)) {
    ps_error_at(p, ps_cur(p), "expected an indented block after %s on line %d", what, hdr.line);
    p->panic = false; /* we are at the start of the next statement already */
    return ps_to_list(&out);
  }
  ps_advance(p);
  parse_stmts_until_dedent(p, &out);
  ps_accept(p, TOK_DEDENT);
  return ps_to_list(&out);
}

static AstList parse_block(Parser *p, const char *what, SrcLoc hdr) {
  return parse_block_msg(p, what, hdr, "expected ':'");
}

/* dotted_name: NAME ('.' NAME)* */
static const char *parse_dotted_name(Parser *p) {
  StrBuf sb = {0};
  do {
    if (!ps_at(p, TOK_NAME)) {
      ps_error_at(p, ps_cur(p), "invalid syntax");
      break;
    }
    if (sb.len) sb_putc(&sb, '.');
    sb_appendn(&sb, ps_cur(p)->text, ps_cur(p)->len);
    ps_advance(p);
  } while (ps_accept(p, TOK_DOT));
  const char *r = arena_strdup(p->a, sb_str(&sb));
  sb_free(&sb);
  return r;
}

typedef struct AliasVec {
  AstAlias *items;
  int n, cap;
} AliasVec;

static void push_alias(Parser *p, AliasVec *v, AstAlias al) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 4;
    AstAlias *ni = ARENA_ARRAY(p->a, AstAlias, cap);
    if (v->n) memcpy(ni, v->items, sizeof(AstAlias) * (size_t)v->n);
    v->items = ni;
    v->cap = cap;
  }
  v->items[v->n++] = al;
}

/* Optional "as NAME" of an import alias. */
static const char *parse_as_name(Parser *p) {
  if (!ps_accept(p, TOK_KW_AS)) return NULL;
  if (!ps_at(p, TOK_NAME)) {
    ps_error_at(p, ps_cur(p), "invalid syntax");
    return NULL;
  }
  const char *s = ps_tok_str(p, ps_cur(p));
  ps_advance(p);
  return s;
}

/* import_name: 'import' dotted_as_names;  dotted_as_name: dotted_name ['as' NAME] */
static AstNode *parse_import(Parser *p) {
  AstNode *n = new_stmt(p, AST_IMPORT);
  ps_advance(p);
  AliasVec v = {0};
  do {
    AstAlias al = {0};
    al.loc = ps_cur(p)->loc;
    al.name = parse_dotted_name(p);
    al.asname = parse_as_name(p);
    push_alias(p, &v, al);
  } while (!p->panic && ps_accept(p, TOK_COMMA));
  n->aliases = v.items;
  n->naliases = v.n;
  return ps_fin(p, n);
}

/* import_from: 'from' ('.' | '...')* dotted_name 'import' import_from_targets
 *            | 'from' ('.' | '...')+ 'import' import_from_targets
 * import_from_targets: '(' import_from_as_names [','] ')' | import_from_as_names !',' | '*' */
static AstNode *parse_import_from(Parser *p) {
  AstNode *n = new_stmt(p, AST_IMPORTFROM);
  ps_advance(p);
  for (;;) {
    if (ps_accept(p, TOK_DOT)) n->level += 1;
    else if (ps_accept(p, TOK_ELLIPSIS)) n->level += 3;
    else break;
  }
  if (!ps_at(p, TOK_KW_IMPORT) || n->level == 0) n->id = parse_dotted_name(p);
  if (!ps_expect(p, TOK_KW_IMPORT, "expected 'import'")) return ps_fin(p, n);
  AliasVec v = {0};
  Token *star = ps_cur(p);
  if (ps_accept(p, TOK_STAR)) {
    push_alias(p, &v, (AstAlias){"*", NULL, star->loc});
  } else {
    bool paren = ps_accept(p, TOK_LPAREN);
    do {
      if (paren && ps_at(p, TOK_RPAREN)) break;
      if (!ps_at(p, TOK_NAME)) {
        ps_error_at(p, ps_cur(p), "invalid syntax");
        break;
      }
      AstAlias al = {0};
      al.loc = ps_cur(p)->loc;
      al.name = ps_tok_str(p, ps_cur(p));
      ps_advance(p);
      al.asname = parse_as_name(p);
      push_alias(p, &v, al);
      if (!paren && ps_at(p, TOK_COMMA) && (ps_kind_at(p, 1) == TOK_NEWLINE || ps_kind_at(p, 1) == TOK_SEMI)) {
        ps_error_at(p, ps_cur(p), "trailing comma not allowed without surrounding parentheses");
        break;
      }
    } while (!p->panic && ps_accept(p, TOK_COMMA));
    if (paren) ps_expect(p, TOK_RPAREN, "expected ')'");
  }
  n->aliases = v.items;
  n->naliases = v.n;
  return ps_fin(p, n);
}

/* global_stmt: 'global' ','.NAME+ ;  nonlocal_stmt: 'nonlocal' ','.NAME+ */
static AstNode *parse_global(Parser *p, AstKind k) {
  AstNode *n = new_stmt(p, k);
  ps_advance(p);
  PtrVec names = {0};
  do {
    if (!ps_at(p, TOK_NAME)) {
      ps_error_at(p, ps_cur(p), "invalid syntax");
      break;
    }
    vec_push(p->a, &names, (void *)ps_tok_str(p, ps_cur(p)));
    ps_advance(p);
  } while (ps_accept(p, TOK_COMMA));
  n->names = (const char **)names.items;
  n->nnames = names.len;
  return ps_fin(p, n);
}

static bool augassign_op(TokKind k, AstOp *op) {
  switch (k) {
  case TOK_PLUS_EQ: *op = AOP_ADD; return true;
  case TOK_MINUS_EQ: *op = AOP_SUB; return true;
  case TOK_STAR_EQ: *op = AOP_MUL; return true;
  case TOK_SLASH_EQ: *op = AOP_DIV; return true;
  case TOK_DSLASH_EQ: *op = AOP_FLOORDIV; return true;
  case TOK_PERCENT_EQ: *op = AOP_MOD; return true;
  case TOK_DSTAR_EQ: *op = AOP_POW; return true;
  case TOK_AT_EQ: *op = AOP_MATMUL; return true;
  case TOK_LSHIFT_EQ: *op = AOP_LSHIFT; return true;
  case TOK_RSHIFT_EQ: *op = AOP_RSHIFT; return true;
  case TOK_AMP_EQ: *op = AOP_BITAND; return true;
  case TOK_PIPE_EQ: *op = AOP_BITOR; return true;
  case TOK_CARET_EQ: *op = AOP_BITXOR; return true;
  default: return false;
  }
}

static AstNode *parse_rhs(Parser *p) {
  return ps_at(p, TOK_KW_YIELD) ? parse_yield(p) : parse_star_exprs(p);
}

/* assignment: NAME ':' expression ['=' annotated_rhs]
 *           | (single_target) ':' expression ['=' annotated_rhs]
 *           | (star_targets '=')+ (yield_expr | star_expressions)
 *           | single_target augassign (yield_expr | star_expressions)
 * star_expressions (an expression statement) otherwise. */
static AstNode *parse_expr_stmt(Parser *p) {
  Token *t = ps_cur(p);
  AstNode *first = parse_rhs(p);
  AstOp op;
  if (p->panic) return first;
  if (ps_at(p, TOK_COLON)) {
    AstNode *n = ps_new_node(p, AST_ANNASSIGN, t->loc);
    if (first->kind == AST_TUPLE || first->kind == AST_LIST)
      ps_error_at(p, &(Token){.loc = first->loc}, "only single target (not %s) can be annotated",
               first->kind == AST_TUPLE ? "tuple" : "list");
    else if (first->kind != AST_NAME && first->kind != AST_ATTRIBUTE && first->kind != AST_SUBSCRIPT)
      ps_error_at(p, &(Token){.loc = first->loc}, "illegal target for annotation");
    ps_advance(p);
    n->target = first;
    n->annotation = parse_expr(p);
    if (ps_accept(p, TOK_ASSIGN)) n->value = parse_rhs(p);
    return ps_fin(p, n);
  }
  if (augassign_op(ps_cur(p)->kind, &op)) {
    AstNode *n = ps_new_node(p, AST_AUGASSIGN, t->loc);
    if (first->kind != AST_NAME && first->kind != AST_ATTRIBUTE && first->kind != AST_SUBSCRIPT)
      ps_error_at(p, &(Token){.loc = first->loc}, "'%s' is an illegal expression for augmented assignment",
               first->kind == AST_TUPLE ? "tuple" : first->kind == AST_LIST ? "list" : ps_target_desc(first));
    ps_advance(p);
    n->target = first;
    n->op = op;
    n->value = parse_rhs(p);
    return ps_fin(p, n);
  }
  if (ps_at(p, TOK_ASSIGN)) {
    AstNode *n = ps_new_node(p, AST_ASSIGN, t->loc);
    PtrVec targets = {0};
    AstNode *value = first;
    while (!p->panic && ps_accept(p, TOK_ASSIGN)) {
      vec_push(p->a, &targets, value);
      value = parse_rhs(p);
    }
    for (int i = 0; i < targets.len; i++) ps_check_target(p, targets.items[i], "assign to");
    n->items = ps_to_list(&targets);
    n->value = value;
    return ps_fin(p, n);
  }
  AstNode *n = ps_new_node(p, AST_EXPR, t->loc);
  n->value = first;
  return ps_fin(p, n);
}

/* simple_stmt: assignment | star_expressions | return_stmt | import_stmt | raise_stmt
 *            | 'pass' | del_stmt | yield_stmt | assert_stmt | 'break' | 'continue'
 *            | global_stmt | nonlocal_stmt */
static AstNode *parse_simple_stmt(Parser *p) {
  Token *t = ps_cur(p);
  AstNode *n;
  switch (t->kind) {
  case TOK_KW_PASS: n = new_stmt(p, AST_PASS); ps_advance(p); return ps_fin(p, n);
  case TOK_KW_BREAK: n = new_stmt(p, AST_BREAK); ps_advance(p); return ps_fin(p, n);
  case TOK_KW_CONTINUE: n = new_stmt(p, AST_CONTINUE); ps_advance(p); return ps_fin(p, n);
  case TOK_KW_RETURN:
    /* return_stmt: 'return' [star_expressions] */
    n = new_stmt(p, AST_RETURN);
    ps_advance(p);
    if (ps_starts_expr(ps_cur(p)->kind) || ps_at(p, TOK_KW_YIELD)) n->value = parse_rhs(p);
    return ps_fin(p, n);
  case TOK_KW_RAISE:
    /* raise_stmt: 'raise' expression ['from' expression] | 'raise' */
    n = new_stmt(p, AST_RAISE);
    ps_advance(p);
    if (ps_starts_expr(ps_cur(p)->kind)) {
      n->value = parse_expr(p);
      if (ps_accept(p, TOK_KW_FROM)) n->cause = parse_expr(p);
    }
    return ps_fin(p, n);
  case TOK_KW_DEL: {
    /* del_stmt: 'del' del_targets &(';' | NEWLINE);  del_targets: ','.del_target+ [','] */
    n = new_stmt(p, AST_DELETE);
    ps_advance(p);
    PtrVec targets = {0};
    do {
      if (!ps_starts_expr(ps_cur(p)->kind)) break;
      AstNode *d = parse_primary(p);
      ps_check_target(p, d, "delete");
      vec_push(p->a, &targets, d);
    } while (!p->panic && ps_accept(p, TOK_COMMA));
    if (!targets.len) ps_error_at(p, ps_cur(p), "invalid syntax");
    n->items = ps_to_list(&targets);
    return ps_fin(p, n);
  }
  case TOK_KW_ASSERT:
    /* assert_stmt: 'assert' expression [',' expression] */
    n = new_stmt(p, AST_ASSERT);
    ps_advance(p);
    n->test = parse_expr(p);
    if (ps_accept(p, TOK_COMMA)) n->msg = parse_expr(p);
    return ps_fin(p, n);
  case TOK_KW_GLOBAL: return parse_global(p, AST_GLOBAL);
  case TOK_KW_NONLOCAL: return parse_global(p, AST_NONLOCAL);
  case TOK_KW_IMPORT: return parse_import(p);
  case TOK_KW_FROM: return parse_import_from(p);
  default: return parse_expr_stmt(p);
  }
}

/* simple_stmts: simple_stmt !';' NEWLINE | ';'.simple_stmt+ [';'] NEWLINE */
static void parse_simple_stmts(Parser *p, PtrVec *out) {
  for (;;) {
    vec_push(p->a, out, parse_simple_stmt(p));
    if (p->panic) return;
    if (!ps_accept(p, TOK_SEMI) || ps_at(p, TOK_NEWLINE) || ps_at(p, TOK_EOF)) break;
  }
  if (ps_accept(p, TOK_NEWLINE) || ps_at(p, TOK_EOF)) return;
  ps_error_at(p, ps_cur(p), "invalid syntax");
}

/* function_def_raw: ['async'] 'def' NAME '(' [params] ')' ['->' expression] ':' block */
static AstNode *parse_funcdef(Parser *p, AstList decorators, bool is_async, SrcLoc loc) {
  AstNode *n = ps_new_node(p, AST_FUNCTIONDEF, loc);
  n->is_async = is_async;
  n->decorators = decorators;
  ps_advance(p); /* def */
  if (ps_at(p, TOK_NAME)) {
    n->id = ps_tok_str(p, ps_cur(p));
    ps_advance(p);
  } else {
    ps_error_at(p, ps_cur(p), "invalid syntax");
    n->id = "<error>";
  }
  if (ps_expect(p, TOK_LPAREN, "expected '('")) {
    n->params = parse_params(p, TOK_RPAREN, true);
    if (!p->panic) ps_expect(p, TOK_RPAREN, ps_at(p, TOK_EOF) || ps_at(p, TOK_NEWLINE) ? "'(' was never closed" : "invalid syntax");
    if (!p->panic && ps_accept(p, TOK_ARROW)) n->returns = parse_expr(p);
  }
  ps_fin(p, n); /* the node spans the signature; the body is in n->body */
  AstEnd end = n->end;
  n->body = parse_block_msg(p, "function definition", loc, "expected ':' after function signature");
  n->end = end;
  return n;
}

/* class_def_raw: 'class' NAME ['(' [arguments] ')'] ':' block */
static AstNode *parse_classdef(Parser *p, AstList decorators, SrcLoc loc) {
  AstNode *n = ps_new_node(p, AST_CLASSDEF, loc);
  n->decorators = decorators;
  ps_advance(p);
  if (ps_at(p, TOK_NAME)) {
    n->id = ps_tok_str(p, ps_cur(p));
    ps_advance(p);
  } else {
    ps_error_at(p, ps_cur(p), "invalid syntax");
    n->id = "<error>";
  }
  Token *open = ps_cur(p);
  if (ps_accept(p, TOK_LPAREN)) {
    ArgsOut o = {0};
    parse_arguments(p, &o, open->loc);
    n->items = ps_to_list(&o.pos);
    n->kwargs = o.kw;
    n->nkwargs = o.nkw;
  }
  ps_fin(p, n);
  AstEnd end = n->end;
  n->body = parse_block(p, "class definition", loc);
  n->end = end;
  return n;
}

/* else_block: 'else' ':' block */
static AstList parse_else(Parser *p) {
  if (!ps_at(p, TOK_KW_ELSE)) return (AstList){0};
  SrcLoc loc = ps_cur(p)->loc;
  ps_advance(p);
  return parse_block(p, "'else' statement", loc);
}

/* if_stmt: 'if' named_expression ':' block (elif_stmt | [else_block])
 * elif_stmt: 'elif' named_expression ':' block (elif_stmt | [else_block])
 * (an elif is an IF alone in its parent's orelse, as in CPython's ast)
 * The chain is parsed in a loop, but the tree it builds nests one level per elif, and the
 * evaluator and the passes walk it recursively: 20000 elifs in a kernel took 1.3 GB and
 * then overflowed the stack.  Past MAX_ELIF branches the chain is reported once and the
 * further branches are parsed (for their own errors) but dropped. */
enum { MAX_ELIF = 1000 };
static AstNode *parse_if(Parser *p) {
  AstNode *first = NULL, *last = NULL;
  int elifs = 0;
  TokWindow w = ps_window_open(p);
  do {
    ps_window_free(p, &w); /* the branches before this one */
    SrcLoc loc = ps_cur(p)->loc;
    bool is_elif = ps_cur(p)->kind == TOK_KW_ELIF;
    AstNode *n = new_stmt(p, AST_IF);
    ps_advance(p);
    n->test = parse_named(p);
    ps_fin(p, n);
    AstEnd end = n->end;
    n->body = parse_block(p, is_elif ? "'elif' statement" : "'if' statement", loc);
    n->end = end;
    if (is_elif && ++elifs == MAX_ELIF + 1)
      diag_error(&p->c->diag, loc, "too many 'elif' branches: more than %d in one 'if' statement", MAX_ELIF);
    if (elifs > MAX_ELIF) continue;
    if (last) {
      PtrVec orelse = {0};
      vec_push(p->a, &orelse, n);
      last->orelse = ps_to_list(&orelse);
    } else {
      first = n;
    }
    last = n;
  } while (ps_at(p, TOK_KW_ELIF));
  last->orelse = parse_else(p);
  return first;
}

/* while_stmt: 'while' named_expression ':' block [else_block] */
static AstNode *parse_while(Parser *p) {
  Token *t = ps_cur(p);
  AstNode *n = new_stmt(p, AST_WHILE);
  ps_advance(p);
  n->test = parse_named(p);
  ps_fin(p, n);
  AstEnd end = n->end;
  n->body = parse_block(p, "'while' statement", t->loc);
  n->orelse = parse_else(p);
  n->end = end;
  return n;
}

/* for_stmt: ['async'] 'for' star_targets 'in' star_expressions ':' block [else_block] */
static AstNode *parse_for(Parser *p, bool is_async, SrcLoc loc) {
  AstNode *n = ps_new_node(p, AST_FOR, loc);
  n->is_async = is_async;
  ps_advance(p);
  n->target = parse_target_list(p);
  if (ps_expect(p, TOK_KW_IN, "expected 'in'")) n->iter = parse_star_exprs(p);
  else n->iter = ps_error_node(p);
  ps_fin(p, n);
  AstEnd end = n->end;
  n->body = parse_block(p, "'for' statement", loc);
  n->orelse = parse_else(p);
  n->end = end;
  return n;
}

/* Whether the bracket at the current token is closed on its logical line and the token
 * after its closer is ':'. */
static bool closed_before_colon(Parser *p) {
  TokScan s = {.p = p, .i = p->pos};
  for (int depth = 0;;) {
    TokKind k = ps_scan_next(&s);
    if (k == TOK_LPAREN || k == TOK_LBRACKET || k == TOK_LBRACE) depth++;
    else if (k == TOK_RPAREN || k == TOK_RBRACKET || k == TOK_RBRACE) {
      if (--depth == 0) return ps_scan_next(&s) == TOK_COLON;
    } else if (k == TOK_NEWLINE || k == TOK_EOF) {
      return false;
    }
  }
}

/* with_stmt: ['async'] 'with' '(' ','.with_item+ ','? ')' ':' block
 *          | ['async'] 'with' ','.with_item+ ':' block
 * with_item: expression 'as' star_target | expression
 * The parenthesized form is chosen when the ')' matching the first '(' is followed by
 * ':' (as CPython's PEG alternative order does: `with (a, b):` has two items). */
static AstNode *parse_with(Parser *p, bool is_async, SrcLoc loc) {
  AstNode *n = ps_new_node(p, AST_WITH, loc);
  n->is_async = is_async;
  ps_advance(p);
  bool paren = false;
  if (ps_at(p, TOK_LPAREN)) paren = closed_before_colon(p);
  if (paren) ps_advance(p);
  int cap = 2, len = 0;
  AstWithItem *items = ARENA_ARRAY(p->a, AstWithItem, cap);
  do {
    if (paren && ps_at(p, TOK_RPAREN) && len > 0) break;
    AstWithItem it = {0};
    it.context = parse_expr(p);
    if (ps_accept(p, TOK_KW_AS)) {
      it.vars = parse_star_target(p);
      ps_check_target(p, it.vars, "assign to");
    }
    if (len == cap) {
      AstWithItem *ni = ARENA_ARRAY(p->a, AstWithItem, cap * 2);
      memcpy(ni, items, sizeof(AstWithItem) * (size_t)len);
      items = ni;
      cap *= 2;
    }
    items[len++] = it;
  } while (!p->panic && ps_accept(p, TOK_COMMA));
  if (paren) ps_expect(p, TOK_RPAREN, "expected ')'");
  n->withitems = items;
  n->nwithitems = len;
  ps_fin(p, n);
  AstEnd end = n->end;
  n->body = parse_block(p, "'with' statement", loc);
  n->end = end;
  return n;
}

/* try_stmt: 'try' ':' block finally_block
 *         | 'try' ':' block except_block+ [else_block] [finally_block]
 * except_block: 'except' ['*'] expression ['as' NAME] ':' block | 'except' ':' block
 * finally_block: 'finally' ':' block */
static AstNode *parse_try(Parser *p) {
  Token *t = ps_cur(p);
  AstNode *n = new_stmt(p, AST_TRY);
  ps_advance(p);
  ps_fin(p, n);
  AstEnd end = n->end;
  n->body = parse_block(p, "'try' statement", t->loc);
  int cap = 2, len = 0;
  AstHandler *hs = ARENA_ARRAY(p->a, AstHandler, cap);
  TokWindow w = ps_window_open(p);
  while (ps_at(p, TOK_KW_EXCEPT)) {
    ps_window_free(p, &w); /* the handlers before this one */
    AstHandler h = {0};
    h.loc = ps_cur(p)->loc;
    ps_advance(p);
    bool star = ps_accept(p, TOK_STAR);
    if (!ps_at(p, TOK_COLON)) {
      h.type = parse_expr(p);
      if (ps_at(p, TOK_COMMA)) {
        ps_error_at(p, ps_cur(p), "multiple exception types must be parenthesized");
      } else if (ps_accept(p, TOK_KW_AS)) {
        if (ps_at(p, TOK_NAME)) {
          h.name = ps_tok_str(p, ps_cur(p));
          ps_advance(p);
        } else {
          ps_error_at(p, ps_cur(p), "invalid syntax");
        }
      }
    } else if (star) {
      ps_error_at(p, ps_cur(p), "expected one or more exception types");
    }
    h.body = parse_block(p, star ? "'except*' statement" : "'except' statement", h.loc);
    if (len == cap) {
      AstHandler *nh = ARENA_ARRAY(p->a, AstHandler, cap * 2);
      memcpy(nh, hs, sizeof(AstHandler) * (size_t)len);
      hs = nh;
      cap *= 2;
    }
    hs[len++] = h;
  }
  n->handlers = hs;
  n->nhandlers = len;
  if (len) n->orelse = parse_else(p);
  if (ps_at(p, TOK_KW_FINALLY)) {
    SrcLoc fl = ps_cur(p)->loc;
    ps_advance(p);
    n->finalbody = parse_block(p, "'finally' statement", fl);
  } else if (!len) {
    ps_error_at(p, ps_cur(p), "expected 'except' or 'finally' block");
    p->panic = false; /* at a statement boundary already */
  }
  n->end = end;
  return n;
}

/* `match` is a soft keyword: `match = re.match(x)` and `match(x)` are ordinary code.
 * A match statement is `match` + subject on a line ending in ':' with an indented
 * block; only that shape is treated as one (and rejected: kernels never use it). */
static bool at_match_stmt(Parser *p) {
  if (!ps_at_name(p, "match")) return false;
  switch (ps_kind_at(p, 1)) {
  case TOK_NAME: case TOK_NUMBER: case TOK_STRING: case TOK_LPAREN: case TOK_LBRACKET:
  case TOK_LBRACE: case TOK_MINUS: case TOK_STAR: case TOK_KW_NOT: case TOK_TILDE:
  case TOK_KW_TRUE: case TOK_KW_FALSE: case TOK_KW_NONE:
    break;
  default:
    return false;
  }
  TokScan s = {.p = p, .i = p->pos + 1};
  TokKind k, last = TOK_EOF;
  for (int depth = 0; (k = ps_scan_next(&s)) != TOK_NEWLINE && k != TOK_EOF; last = k) {
    if (k == TOK_LPAREN || k == TOK_LBRACKET || k == TOK_LBRACE) depth++;
    if (k == TOK_RPAREN || k == TOK_RBRACKET || k == TOK_RBRACE) depth--;
    if (depth == 0 && (k == TOK_ASSIGN || augassign_op(k, &(AstOp){0}))) return false;
  }
  return k == TOK_NEWLINE && last == TOK_COLON && ps_scan_next(&s) == TOK_INDENT;
}

static void skip_match_stmt(Parser *p) {
  ps_error_at(p, ps_cur(p), "match statements are not supported");
  p->panic = false;
  while (!ps_at(p, TOK_NEWLINE) && !ps_at(p, TOK_EOF)) ps_advance(p);
  ps_accept(p, TOK_NEWLINE);
  if (!ps_accept(p, TOK_INDENT)) return;
  TokWindow w = ps_window_open(p);
  for (int depth = 1; depth > 0 && !ps_at(p, TOK_EOF);) {
    if (ps_at(p, TOK_INDENT)) depth++;
    if (ps_at(p, TOK_DEDENT)) depth--;
    ps_advance(p);
    ps_window_free(p, &w);
  }
}

/* Depth of a statement's expression trees, not descending into nested statements (they
 * are checked when parsed); the walk stops at limit + 1 so it recurses at most that deep.
 * Chain lengths are bounded where chains are parsed (MAX_CHAIN), but chains nested in
 * chains ((a + ... + b) + ... + c, repeated) multiply; this bounds the whole tree. */
enum { MAX_EXPR_DEPTH = 2000 };
static int expr_depth(const AstNode *n, int limit);
static int list_depth(const AstList *l, int limit) {
  int d = 0;
  for (int i = 0; i < l->n && d <= limit; i++) {
    int k = expr_depth(l->items[i], limit);
    if (k > d) d = k;
  }
  return d;
}
static int expr_depth(const AstNode *n, int limit) {
  if (!n) return 0;
  if (limit <= 0 || AST_IS_CONST(n)) return 1;
  bool is_stmt = n->kind >= AST_FUNCTIONDEF;
  int d = 0, k;
  /* Only the fields n's kind has (nodes are allocated up to their kind's last field). */
#define KID(f) \
  if (AST_HAS(n, f) && d < limit && (k = expr_depth(n->f, limit - 1)) > d) d = k
#define KIDS(f) \
  if (AST_HAS(n, f) && (k = list_depth(&n->f, limit - 1)) > d) d = k
  KID(value); KID(left); KID(right); KID(test); KID(target); KID(iter); KID(lo); KID(hi);
  KID(step); KID(index); KID(func); KID(key); KID(elt); KID(format_spec); KID(msg); KID(cause);
  KIDS(items);
  KIDS(keys);
#undef KID
#undef KIDS
  for (int i = 0; AST_HAS(n, kwargs) && i < n->nkwargs && d < limit; i++)
    if ((k = expr_depth(n->kwargs[i].value, limit - 1)) > d) d = k;
  for (int i = 0; AST_HAS(n, comps) && i < n->ncomps && d < limit; i++) {
    if ((k = expr_depth(n->comps[i].target, limit - 1)) > d) d = k;
    if ((k = expr_depth(n->comps[i].iter, limit - 1)) > d) d = k;
    if ((k = list_depth(&n->comps[i].ifs, limit - 1)) > d) d = k;
  }
  for (int i = 0; AST_HAS(n, params) && i < n->params.n && d < limit; i++) {
    if ((k = expr_depth(n->params.items[i].default_value, limit - 1)) > d) d = k;
    if ((k = expr_depth(n->params.items[i].annotation, limit - 1)) > d) d = k;
  }
  for (int i = 0; AST_HAS(n, withitems) && i < n->nwithitems && d < limit; i++) {
    if ((k = expr_depth(n->withitems[i].context, limit - 1)) > d) d = k;
    if ((k = expr_depth(n->withitems[i].vars, limit - 1)) > d) d = k;
  }
  /* A statement's own node does not count; an expression's does. */
  return is_stmt ? d : d + 1;
}

static void parse_statement_inner(Parser *p, PtrVec *out);

/* statement: compound_stmt | simple_stmts, each checked against MAX_EXPR_DEPTH. */
static void parse_statement(Parser *p, PtrVec *out) {
  int first = out->len;
  parse_statement_inner(p, out);
  for (int i = first; i < out->len; i++) {
    const AstNode *s = out->items[i];
    if (s && expr_depth(s, MAX_EXPR_DEPTH) >= MAX_EXPR_DEPTH) { /* saturates at the limit */
      diag_error(&p->c->diag, s->loc, "statement too complex: expressions nested more than %d deep", MAX_EXPR_DEPTH);
      out->items[i] = ps_new_node(p, AST_PASS, s->loc); /* nothing downstream walks it */
    }
  }
}

/* compound_stmt: function_def | if_stmt | class_def | with_stmt | for_stmt | try_stmt
 *              | while_stmt | match_stmt
 * decorators: ('@' named_expression NEWLINE)+ */
static void parse_statement_inner(Parser *p, PtrVec *out) {
  Token *t = ps_cur(p);
  PtrVec decos = {0};
  switch (t->kind) {
  case TOK_AT:
    while (ps_accept(p, TOK_AT)) {
      vec_push(p->a, &decos, parse_named(p));
      if (p->panic) return;
      if (!ps_expect(p, TOK_NEWLINE, "invalid syntax")) return;
    }
    if (ps_at(p, TOK_KW_DEF)) {
      vec_push(p->a, out, parse_funcdef(p, ps_to_list(&decos), false, ps_cur(p)->loc));
    } else if (ps_at(p, TOK_KW_ASYNC) && ps_kind_at(p, 1) == TOK_KW_DEF) {
      SrcLoc loc = ps_cur(p)->loc;
      ps_advance(p);
      vec_push(p->a, out, parse_funcdef(p, ps_to_list(&decos), true, loc));
    } else if (ps_at(p, TOK_KW_CLASS)) {
      vec_push(p->a, out, parse_classdef(p, ps_to_list(&decos), ps_cur(p)->loc));
    } else {
      ps_error_at(p, ps_cur(p), "invalid syntax");
    }
    return;
  case TOK_KW_DEF: vec_push(p->a, out, parse_funcdef(p, (AstList){0}, false, t->loc)); return;
  case TOK_KW_CLASS: vec_push(p->a, out, parse_classdef(p, (AstList){0}, t->loc)); return;
  case TOK_KW_IF: vec_push(p->a, out, parse_if(p)); return;
  case TOK_KW_WHILE: vec_push(p->a, out, parse_while(p)); return;
  case TOK_KW_FOR: vec_push(p->a, out, parse_for(p, false, t->loc)); return;
  case TOK_KW_WITH: vec_push(p->a, out, parse_with(p, false, t->loc)); return;
  case TOK_KW_TRY: vec_push(p->a, out, parse_try(p)); return;
  case TOK_KW_ASYNC:
    ps_advance(p);
    if (ps_at(p, TOK_KW_DEF)) vec_push(p->a, out, parse_funcdef(p, (AstList){0}, true, t->loc));
    else if (ps_at(p, TOK_KW_FOR)) vec_push(p->a, out, parse_for(p, true, t->loc));
    else if (ps_at(p, TOK_KW_WITH)) vec_push(p->a, out, parse_with(p, true, t->loc));
    else ps_error_at(p, ps_cur(p), "invalid syntax");
    return;
  case TOK_KW_ELIF: case TOK_KW_ELSE: case TOK_KW_EXCEPT: case TOK_KW_FINALLY:
    ps_error_at(p, t, "invalid syntax");
    return;
  case TOK_NAME:
    if (at_match_stmt(p)) {
      skip_match_stmt(p);
      return;
    }
    parse_simple_stmts(p, out);
    return;
  default:
    parse_simple_stmts(p, out);
    return;
  }
}

/* statements: statement+  (until the DEDENT closing the block, or end of file) */
static void parse_stmts_until_dedent(Parser *p, PtrVec *out) {
  TokWindow w = ps_window_open(p);
  while (!ps_at(p, TOK_EOF) && !ps_at(p, TOK_DEDENT)) {
    if (ps_at(p, TOK_INDENT)) {
      /* Indented lines with no header: report, then parse them as if they were at the
       * enclosing level so their own errors are still found. */
      if (!p->after_error) ps_error_at(p, ps_cur(p), "unexpected indent");
      p->panic = false;
      p->after_error = false;
      ps_advance(p);
      parse_stmts_until_dedent(p, out);
      ps_accept(p, TOK_DEDENT);
      continue;
    }
    int start = p->pos;
    parse_statement(p, out);
    if (p->panic) {
      synchronize(p);
      p->after_error = true;
    } else {
      p->after_error = false;
    }
    if (p->pos == start) ps_advance(p); /* never loop on a token nothing consumes */
    ps_window_free(p, &w);
  }
}

/* False (after one diagnostic) when the file is over the limits of lex_check_source:
 * then nothing of it is parsed. */

/* file: [statements] ENDMARKER */
AstNode *parse_module(TsCompiler *c, const SourceFile *file) {
  if (!file || !file->text) return NULL;
  Parser p;
  if (!ps_parser_init(&p, c, file)) return NULL;
  AstNode *m = ps_new_node(&p, AST_MODULE, (SrcLoc){file, 1, 1});
  PtrVec body = {0};
  while (!ps_at(&p, TOK_EOF)) {
    parse_stmts_until_dedent(&p, &body);
    if (ps_at(&p, TOK_DEDENT)) ps_advance(&p); /* cannot happen with a balanced lexer */
  }
  m->body = ps_to_list(&body);
  m->end = ast_end(ps_cur(&p)->end);
  ps_parser_fini(&p);
  return m;
}
