/* parse.c — recursive-descent parser for Python 3.11: tokens (lex.c) -> AST (ast.h).
 *
 *   source --lex_check_source--> (size, UTF-8, token count)
 *   source --lex_next, on demand--> tokens of one statement --parse_module--> MODULE --evaluator--> Tile IR
 *
 * The whole file is parsed, host code included, so the grammar is the full one used
 * by real files (CPython's Grammar/python.gram, written as one function per rule;
 * each function shows its rule above it).  Tokens are lexed on demand and kept only
 * for the statement at hand (see TokChunk); lookahead is by index, and the few places
 * where Python's PEG grammar backtracks (keyword arguments, parenthesized with-items,
 * soft keyword `match`) are decided by scanning ahead instead (TokScan).
 *
 * Errors: the first error of a statement is reported (file:line:col) and the parser
 * enters panic mode, in which further errors are silent and every parse function still
 * returns a node (a NAME "<error>" placeholder) so nothing downstream sees NULL.  At
 * the end of the statement it skips to the next NEWLINE and resumes, so every broken
 * statement of a file is reported once.  Nesting depth is bounded so hostile input
 * cannot overflow the C stack.
 *
 * This file holds the tokens, strings and expressions and parse_expression; the statement
 * rules and parse_module are in parse_stmt.c, and parse_int.h is what the two share. */
#include <stdio.h>
#include <string.h>

#include "parse_int.h"
#if TS_ASAN
#include <sanitizer/asan_interface.h>
#endif


/* ---- token helpers ------------------------------------------------------------------ */


static void lex_more(Parser *p) {
  int ci = p->ntoks / TOK_CHUNK;
  if (ci >= p->nchunks) {
    int n = p->nchunks ? p->nchunks * 2 : 16;
    p->chunks = ts_realloc(p->chunks, sizeof(TokChunk *) * (size_t)n);
    memset(p->chunks + p->nchunks, 0, sizeof(TokChunk *) * (size_t)(n - p->nchunks));
    p->nchunks = n;
  }
  if (!p->chunks[ci]) p->chunks[ci] = ts_malloc(sizeof(TokChunk));
  Token *t = &p->chunks[ci]->t[p->ntoks % TOK_CHUNK];
  lex_next(&p->lx, t);
  p->ntoks++;
  if (t->kind == TOK_EOF) p->eof = true;
}

/* Token i (past the end: the EOF token). */
static Token *tok(Parser *p, int i) {
  if (p->flat) return &p->flat[i < p->nflat ? i : p->nflat - 1];
  while (i >= p->ntoks && !p->eof) lex_more(p);
  if (i >= p->ntoks) i = p->ntoks - 1;
  TS_ASSERT(p->chunks[i / TOK_CHUNK]); /* not freed by a TokWindow */
  return &p->chunks[i / TOK_CHUNK]->t[i % TOK_CHUNK];
}

/* Freeing tokens safely.  Every Token * a parse function holds was the current token when
 * it was taken, so the functions up the stack hold only tokens at or before the index
 * where the current function started.  A loop over the items of something long (a
 * block's statements, a list's elements, a call's arguments, the rest of a broken
 * statement) opens a window at its start and, between items, frees the chunks wholly
 * after that index and before the previous token (which ps_fin() reads): no frame refers to
 * them.  A window remembers how far it has freed, so each chunk is visited once. */

TokWindow ps_window_open(Parser *p) { return (TokWindow){p->pos / TOK_CHUNK + 1}; }

void ps_window_free(Parser *p, TokWindow *w) {
  if (p->flat || p->pos < 1) return;
  for (int end = (p->pos - 1) / TOK_CHUNK; w->next < end; w->next++) {
    ts_free(p->chunks[w->next]);
    p->chunks[w->next] = NULL;
  }
}


TokKind ps_scan_next(TokScan *s) {
  Parser *p = s->p;
  if (p->flat || s->i < p->ntoks || p->eof) return tok(p, s->i++)->kind;
  if (!s->cloned) {
    TS_ASSERT(s->i == p->ntoks);
    s->lx = p->lx;
    s->lx.quiet = true; /* the parser's own lexer reports these tokens' errors */
    s->cloned = true;
  }
  lex_next(&s->lx, &s->t);
  s->i++;
  return s->t.kind;
}

Token *ps_cur(Parser *p) { return tok(p, p->pos); }
TokKind ps_kind_at(Parser *p, int k) { return tok(p, p->pos + k)->kind; }
bool ps_at(Parser *p, TokKind k) { return ps_cur(p)->kind == k; }

/* Lexer errors are reported when the parser reaches their token, so all messages come
 * out in source order; the statement then stays silent (panic) like any error. */
static void report_lex_errors(Parser *p) {
  for (; p->lex_reported <= p->pos; p->lex_reported++) {
    for (LexError *e = tok(p, p->lex_reported)->errs; e; e = e->next) {
      ts_error(p->c, e->loc, "%s", e->msg);
      p->panic = true;
    }
  }
}

void ps_advance(Parser *p) {
  if (ps_cur(p)->kind != TOK_EOF) p->pos++;
  report_lex_errors(p);
}
bool ps_accept(Parser *p, TokKind k) {
  if (!ps_at(p, k)) return false;
  ps_advance(p);
  return true;
}
bool ps_at_name(Parser *p, const char *s) {
  Token *t = ps_cur(p);
  return t->kind == TOK_NAME && t->len == strlen(s) && !memcmp(t->text, s, t->len);
}

/* Reports the first error of a statement; later ones are consequences of it.  Tokens
 * the lexer already complained about are not reported again. */
TS_PRINTF(3, 4) void ps_error_at(Parser *p, const Token *t, const char *fmt, ...) {
  if (p->panic) return;
  p->panic = true;
  if (t->bad) return;
  if (p->unclosed.line && (t->loc.line > p->unclosed.line ||
                           (t->loc.line == p->unclosed.line && t->loc.col > p->unclosed.col)))
    return;
  va_list ap;
  va_start(ap, fmt);
  diag_verror(&p->c->diag, t->loc, "error", fmt, ap);
  va_end(ap);
}

bool ps_expect(Parser *p, TokKind k, const char *msg) {
  if (ps_accept(p, k)) return true;
  ps_error_at(p, ps_cur(p), "%s", msg);
  return false;
}

/* Closing a display: an expression where the closer should be is most likely a
 * missing comma (CPython's hint), reported at the start of the previous item. */
static void expect_close(Parser *p, TokKind k, const char *msg, SrcLoc last_item) {
  if (ps_accept(p, k)) return;
  if (ps_starts_expr(ps_cur(p)->kind) || ps_at(p, TOK_STRING))
    ps_error_at(p, &(Token){.loc = last_item}, "invalid syntax. Perhaps you forgot a comma?");
  else
    ps_error_at(p, ps_cur(p), "%s", msg);
}

/* A node as large as its kind needs (ast_node_size).  Under ASan it is allocated whole
 * and the rest poisoned, so reading a field the kind does not have fails the tests. */
AstNode *ps_new_node(Parser *p, AstKind k, SrcLoc loc) {
#if TS_ASAN
  AstNode *n = ARENA_NEW(p->a, AstNode);
  ASAN_POISON_MEMORY_REGION((char *)n + ast_node_size[k], sizeof(AstNode) - ast_node_size[k]);
#else
  AstNode *n = arena_alloc8(p->a, ast_node_size[k]);
#endif
  n->kind = k;
  n->loc = loc;
  n->end = ast_end(loc);
  return n;
}

/* Closes a node: it ends just past the last token consumed. */
AstNode *ps_fin(Parser *p, AstNode *n) {
  if (p->pos > 0) n->end = ast_end(tok(p, p->pos - 1)->end);
  return n;
}

/* A display turned out to be another kind (a comprehension, a set): a fresh node, as a
 * node is only as large as its first kind needed.  Only the location was set. */
static AstNode *retag(Parser *p, AstNode *n, AstKind k) { return ps_new_node(p, k, n->loc); }

AstNode *ps_error_node(Parser *p) {
  AstNode *n = ps_new_node(p, AST_NAME, ps_cur(p)->loc);
  n->id = "<error>";
  return n;
}

/* The spelling of a NAME token.  Names repeat (a kernel says `T` and `block_M` dozens of
 * times), so each distinct one is copied into the arena once; the table is on the heap
 * and stops growing at NAMES_MAX entries, so a file of unique names costs no more than
 * copying each. */
enum { NAMES_MAX = 1 << 16 };
const char *ps_tok_str(Parser *p, const Token *t) {
  uint64_t h = ts_fnv1a(t->text, t->len, 0);
  for (uint32_t i = 0; p->names_cap && i < p->names_cap; i++) {
    const char **slot = &p->names[(h + i) & (p->names_cap - 1)];
    if (!*slot) break;
    if (!strncmp(*slot, t->text, t->len) && (*slot)[t->len] == 0) return *slot;
  }
  const char *s = arena_strndup(p->a, t->text, t->len);
  if (p->nnames >= NAMES_MAX) return s;
  if (2 * (p->nnames + 1) > p->names_cap) { /* rehash into a table twice as large */
    uint32_t cap = p->names_cap ? p->names_cap * 2 : 256;
    const char **tab = ts_calloc(cap, sizeof *tab);
    for (uint32_t i = 0; i < p->names_cap; i++) {
      const char *k = p->names[i];
      if (!k) continue;
      uint32_t j = (uint32_t)ts_fnv1a(k, strlen(k), 0) & (cap - 1);
      while (tab[j]) j = (j + 1) & (cap - 1);
      tab[j] = k;
    }
    ts_free(p->names);
    p->names = tab;
    p->names_cap = cap;
  }
  uint32_t j = (uint32_t)h & (p->names_cap - 1);
  while (p->names[j]) j = (j + 1) & (p->names_cap - 1);
  p->names[j] = s;
  p->nnames++;
  return s;
}

AstList ps_to_list(PtrVec *v) { return (AstList){(AstNode **)v->items, v->len}; }

/* Depth guard around the recursive rules: true (then call leave) or, when too deep,
 * false after one report per file. */
static bool enter(Parser *p) {
  if (p->depth < MAX_DEPTH) {
    p->depth++;
    return true;
  }
  if (!p->too_deep) {
    p->too_deep = true;
    p->panic = false;
    ps_error_at(p, ps_cur(p), "expression nested too deeply");
  }
  p->panic = true;
  return false;
}
static void leave(Parser *p) { p->depth--; }

/* One more link of a chain (see MAX_CHAIN): false, after an error, when too long. */
static bool chain_link(Parser *p, int *links) {
  if (++*links <= MAX_CHAIN) return true;
  ps_error_at(p, ps_cur(p), "expression too long: more than %d chained operations", MAX_CHAIN);
  return false;
}

/* ---- forward declarations ------------------------------------------------------------ */
static AstNode *parse_star_named(Parser *p);
static AstNode *parse_disjunction(Parser *p);
static AstNode *parse_bitor(Parser *p);

/* Tokens that can begin an expression (to know whether an optional one follows). */
bool ps_starts_expr(TokKind k) {
  switch (k) {
  case TOK_NAME: case TOK_NUMBER: case TOK_STRING: case TOK_LPAREN: case TOK_LBRACKET:
  case TOK_LBRACE: case TOK_MINUS: case TOK_PLUS: case TOK_TILDE: case TOK_ELLIPSIS:
  case TOK_KW_NOT: case TOK_KW_LAMBDA: case TOK_KW_AWAIT: case TOK_KW_TRUE:
  case TOK_KW_FALSE: case TOK_KW_NONE: case TOK_STAR:
    return true;
  default:
    return false;
  }
}

/* ---- strings and f-strings ------------------------------------------------------------- */

/* Source location of absolute text offset `off`, which lies inside token t. */
static SrcLoc loc_at(Parser *p, const Token *t, size_t off) {
  const char *text = p->file->text, *s = t->text, *q = text + off;
  int line = t->loc.line;
  const char *ls = s - (t->loc.col - 1);
  for (const char *r = s; r < q; r++) {
    if (*r == '\n' || (*r == '\r' && r + 1 < q && r[1] != '\n') || (*r == '\r' && r + 1 == q)) {
      line++;
      ls = r + 1;
    }
  }
  return (SrcLoc){p->file, line, (int)(q - ls) + 1};
}

static void push_str_part(Parser *p, PtrVec *parts, StrBuf *lit, int flags, SrcLoc loc) {
  if (!lit->len) return;
  AstNode *s = ps_new_node(p, AST_CONST_STR, loc);
  s->sval = lex_decode_string(p->c, lit->data, lit->len, flags & (STR_RAW | STR_BYTES), loc,
                              &s->slen);
  vec_push(p->a, parts, s);
  sb_clear(lit);
}

static size_t fstring_parts(Parser *p, const Token *t, size_t s, size_t e, PtrVec *parts,
                            bool in_spec, int nest);

/* replacement_field: '{' (yield_expr | star_expressions) ['='] ['!' conversion]
 *                    [':' format_spec] '}'
 * `off` is just after '{'.  The expression is re-lexed from the source text so its
 * nodes carry exact locations.  Returns the offset after the closing '}'. */
static size_t fstring_field(Parser *p, const Token *t, size_t off, size_t e, PtrVec *parts,
                            int nest) {
  const char *text = p->file->text;
  SrcLoc floc = loc_at(p, t, off - 1);
  Token err_tok = *t;
  err_tok.loc = floc;
  if (nest >= 2) {
    ps_error_at(p, &err_tok, "f-string: expressions nested too deeply");
    return e;
  }
  Lexer lx;
  lex_init_fstring_expr(&lx, p->c, p->file, off, e, loc_at(p, t, off).line);
  /* The field's tokens live on the heap while it is parsed (nodes copy what they keep). */
  int n = 0, cap = 16;
  Token *arr = ts_malloc(sizeof(Token) * (size_t)cap);
  for (;;) {
    if (n == cap) arr = ts_realloc(arr, sizeof(Token) * (size_t)(cap *= 2));
    lex_next(&lx, &arr[n]);
    if (arr[n++].kind == TOK_EOF) break;
  }
  size_t stop = lx.stop ? (size_t)(lx.stop - text) : e;
  if (n == 1) {
    ts_free(arr);
    ps_error_at(p, &err_tok, "f-string: empty expression not allowed");
    return e;
  }
  /* Parse the field with the same parser state over the field's own tokens. */
  Token *save_flat = p->flat;
  int save_nflat = p->nflat, save_pos = p->pos, save_rep = p->lex_reported;
  p->flat = arr;
  p->nflat = n;
  p->pos = 0;
  p->lex_reported = n; /* the field's lexer reported its errors itself */
  AstNode *value = ps_at(p, TOK_KW_YIELD) ? parse_yield(p) : parse_star_exprs(p);
  if (!ps_at(p, TOK_EOF)) ps_error_at(p, ps_cur(p), "f-string: expecting '}'");
  p->flat = save_flat;
  p->nflat = save_nflat;
  p->pos = save_pos;
  p->lex_reported = save_rep;
  ts_free(arr);

  size_t i = stop;
  AstNode *f = ps_new_node(p, AST_FORMATTED, floc);
  f->value = value;
  bool self_doc = false;
  if (i < e && text[i] == '=') {
    self_doc = true;
    /* Self-documenting {x=}: the text (with its spaces) precedes the value. */
    i++;
    while (i < e && (text[i] == ' ' || text[i] == '\t')) i++;
    AstNode *s = ps_new_node(p, AST_CONST_STR, loc_at(p, t, off));
    s->sval = arena_strndup(p->a, text + off, i - off);
    s->slen = i - off;
    vec_push(p->a, parts, s);
  }
  if (i < e && text[i] == '!') {
    i++;
    if (i < e && (text[i] == 'r' || text[i] == 's' || text[i] == 'a')) {
      f->conversion = text[i++];
      self_doc = false; /* an explicit conversion wins */
    } else {
      err_tok.loc = loc_at(p, t, i);
      ps_error_at(p, &err_tok, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
      return e;
    }
  }
  if (i < e && text[i] == ':') {
    i++;
    AstNode *spec = ps_new_node(p, AST_FSTRING, loc_at(p, t, i));
    PtrVec sp = {0};
    i = fstring_parts(p, t, i, e, &sp, true, nest + 1);
    spec->items = ps_to_list(&sp);
    f->format_spec = spec;
    self_doc = false; /* {x=:spec} formats the value itself, not its repr */
  }
  if (self_doc) f->conversion = 'r';
  if (i >= e || text[i] != '}') {
    err_tok.loc = loc_at(p, t, i < e ? i : e);
    ps_error_at(p, &err_tok, "f-string: expecting '}'");
    return e;
  }
  ps_fin(p, f);
  f->end = ast_end(loc_at(p, t, i + 1));
  vec_push(p->a, parts, f);
  return i + 1;
}

/* fstring_middle: (literal | '{{' | '}}' | replacement_field)*
 * In a format spec, stops at the '}' that closes the enclosing field. */
static size_t fstring_parts(Parser *p, const Token *t, size_t s, size_t e, PtrVec *parts,
                            bool in_spec, int nest) {
  const char *text = p->file->text;
  bool raw = t->str_flags & STR_RAW;
  StrBuf lit = {0};
  size_t lit_start = s, i = s;
  while (i < e) {
    char ch = text[i];
    if (ch == '{') {
      if (!in_spec && i + 1 < e && text[i + 1] == '{') {
        if (!lit.len) lit_start = i;
        sb_putc(&lit, '{');
        i += 2;
        continue;
      }
      push_str_part(p, parts, &lit, t->str_flags, loc_at(p, t, lit_start));
      i = fstring_field(p, t, i + 1, e, parts, nest);
      lit_start = i;
      continue;
    }
    if (ch == '}') {
      if (in_spec) break;
      if (i + 1 < e && text[i + 1] == '}') {
        if (!lit.len) lit_start = i;
        sb_putc(&lit, '}');
        i += 2;
        continue;
      }
      Token et = *t;
      et.loc = loc_at(p, t, i);
      ps_error_at(p, &et, "f-string: single '}' is not allowed");
      i++;
      continue;
    }
    if (!lit.len) lit_start = i;
    if (ch == '\\' && !raw && i + 1 < e) {
      /* Keep escapes whole for lex_decode_string; \N{...} braces are not a field. */
      if (text[i + 1] == 'N' && i + 2 < e && text[i + 2] == '{') {
        size_t j = i + 2;
        while (j < e && text[j] != '}') j++;
        size_t stop = j < e ? j + 1 : e;
        sb_appendn(&lit, text + i, stop - i);
        i = stop;
      } else {
        sb_appendn(&lit, text + i, 2);
        i += 2;
      }
      continue;
    }
    sb_putc(&lit, ch);
    i++;
  }
  push_str_part(p, parts, &lit, t->str_flags, loc_at(p, t, lit_start));
  sb_free(&lit);
  return i;
}

/* strings: STRING+  (adjacent literals concatenate; any f-string makes an FSTRING) */
static AstNode *parse_strings(Parser *p) {
  Token *first = ps_cur(p);
  bool any_f = false, any_bytes = false, any_str = false, bad = false;
  int start = p->pos;
  while (ps_at(p, TOK_STRING)) {
    Token *t = ps_cur(p);
    any_f |= (t->str_flags & STR_FMT) != 0;
    if (t->str_flags & STR_BYTES) any_bytes = true;
    else any_str = true;
    bad |= t->bad;
    ps_advance(p);
  }
  int end = p->pos;
  if (any_bytes && any_str) {
    ps_error_at(p, tok(p, start), "cannot mix bytes and nonbytes literals");
  }
  if (!any_f) {
    StrBuf sb = {0};
    for (int i = start; i < end; i++) {
      Token *t = tok(p, i);
      size_t n;
      char *s = bad ? "" : lex_decode_string(p->c, t->text + t->body_off, t->body_len,
                                             t->str_flags, t->loc, &n);
      if (!bad) sb_appendn(&sb, s, n);
    }
    AstNode *n = ps_new_node(p, AST_CONST_STR, first->loc);
    n->is_bytes = any_bytes;
    n->slen = sb.len;
    n->sval = arena_strndup(p->a, sb.data ? sb.data : "", sb.len);
    sb_free(&sb);
    return ps_fin(p, n);
  }
  AstNode *n = ps_new_node(p, AST_FSTRING, first->loc);
  PtrVec parts = {0};
  for (int i = start; i < end && !bad; i++) {
    Token *t = tok(p, i);
    size_t body = (size_t)(t->text - p->file->text) + t->body_off;
    if (t->str_flags & STR_FMT) {
      fstring_parts(p, t, body, body + t->body_len, &parts, false, 0);
    } else if (t->body_len) {
      AstNode *s = ps_new_node(p, AST_CONST_STR, t->loc);
      s->sval = lex_decode_string(p->c, t->text + t->body_off, t->body_len, t->str_flags,
                                  t->loc, &s->slen);
      vec_push(p->a, &parts, s);
    }
  }
  /* Merge neighbouring literal parts ("a" f"b{x}" has one literal "ab"): each run is
   * joined once (joining pairwise copied the run again per literal, quadratic in it). */
  PtrVec merged = {0};
  for (int i = 0; i < parts.len;) {
    AstNode *part = parts.items[i];
    int j = i + 1;
    while (j < parts.len && part->kind == AST_CONST_STR && ((AstNode *)parts.items[j])->kind == AST_CONST_STR) j++;
    if (j == i + 1) {
      vec_push(p->a, &merged, part);
      i = j;
      continue;
    }
    StrBuf run = {0};
    for (int k = i; k < j; k++) sb_appendn(&run, ((AstNode *)parts.items[k])->sval, ((AstNode *)parts.items[k])->slen);
    AstNode *m = ps_new_node(p, AST_CONST_STR, part->loc);
    m->slen = run.len;
    m->sval = arena_strndup(p->a, run.data ? run.data : "", run.len);
    m->end = ((AstNode *)parts.items[j - 1])->end;
    sb_free(&run);
    vec_push(p->a, &merged, m);
    i = j;
  }
  n->items = ps_to_list(&merged);
  return ps_fin(p, n);
}

/* ---- atoms ------------------------------------------------------------------------- */

/* for_if_clauses: (['async'] 'for' star_targets 'in' disjunction ('if' disjunction)*)+ */
static void parse_comp_clauses(Parser *p, AstNode *n) {
  int cap = 2, len = 0;
  AstComp *comps = ARENA_ARRAY(p->a, AstComp, cap);
  while (ps_at(p, TOK_KW_FOR) || (ps_at(p, TOK_KW_ASYNC) && ps_kind_at(p, 1) == TOK_KW_FOR)) {
    AstComp c = {0};
    if (ps_accept(p, TOK_KW_ASYNC)) c.is_async = true;
    ps_advance(p); /* for */
    c.target = parse_target_list(p);
    ps_expect(p, TOK_KW_IN, "expected 'in'");
    c.iter = parse_disjunction(p);
    PtrVec ifs = {0};
    while (ps_accept(p, TOK_KW_IF)) vec_push(p->a, &ifs, parse_disjunction(p));
    c.ifs = ps_to_list(&ifs);
    if (len == cap) {
      AstComp *nc = ARENA_ARRAY(p->a, AstComp, cap * 2);
      memcpy(nc, comps, sizeof(AstComp) * (size_t)len);
      comps = nc;
      cap *= 2;
    }
    comps[len++] = c;
    if (p->panic) break;
  }
  n->comps = comps;
  n->ncomps = len;
}

static bool at_comp_for(Parser *p) {
  return ps_at(p, TOK_KW_FOR) || (ps_at(p, TOK_KW_ASYNC) && ps_kind_at(p, 1) == TOK_KW_FOR);
}

/* tuple | group | genexp:
 *   '(' [star_named_expression ',' [star_named_expressions]] ')'
 *   '(' (yield_expr | named_expression) ')'
 *   '(' named_expression for_if_clauses ')' */
static AstNode *parse_paren(Parser *p) {
  TokWindow w = ps_window_open(p);
  Token *open = ps_cur(p);
  ps_advance(p);
  if (ps_accept(p, TOK_RPAREN)) return ps_fin(p, ps_new_node(p, AST_TUPLE, open->loc));
  if (ps_at(p, TOK_KW_YIELD)) {
    AstNode *y = parse_yield(p);
    ps_expect(p, TOK_RPAREN, "expected ')'");
    return y;
  }
  AstNode *first = parse_star_named(p);
  if (at_comp_for(p)) {
    AstNode *g = ps_new_node(p, AST_GENEXP, open->loc);
    g->elt = first;
    parse_comp_clauses(p, g);
    ps_expect(p, TOK_RPAREN, "expected ')'");
    return ps_fin(p, g);
  }
  if (ps_at(p, TOK_COMMA)) {
    AstNode *tup = ps_new_node(p, AST_TUPLE, open->loc);
    PtrVec items = {0};
    vec_push(p->a, &items, first);
    while (ps_accept(p, TOK_COMMA) && !ps_at(p, TOK_RPAREN)) {
      vec_push(p->a, &items, parse_star_named(p));
      ps_window_free(p, &w);
    }
    tup->items = ps_to_list(&items);
    expect_close(p, TOK_RPAREN, "expected ')'", ((AstNode *)vec_last(&items))->loc);
    return ps_fin(p, tup);
  }
  if (first->kind == AST_STARRED) ps_error_at(p, &(Token){.loc = first->loc}, "cannot use starred expression here");
  if (!ps_at(p, TOK_RPAREN) && ps_starts_expr(ps_cur(p)->kind))
    ps_error_at(p, &(Token){.loc = first->loc}, "invalid syntax. Perhaps you forgot a comma?");
  ps_expect(p, TOK_RPAREN, "expected ')'");
  return first;
}

/* list | listcomp: '[' [star_named_expressions] ']' | '[' named_expression for_if_clauses ']' */
static AstNode *parse_list(Parser *p) {
  TokWindow w = ps_window_open(p);
  Token *open = ps_cur(p);
  ps_advance(p);
  AstNode *n = ps_new_node(p, AST_LIST, open->loc);
  if (ps_accept(p, TOK_RBRACKET)) return ps_fin(p, n);
  AstNode *first = parse_star_named(p);
  if (at_comp_for(p)) {
    n = retag(p, n, AST_LISTCOMP);
    n->elt = first;
    parse_comp_clauses(p, n);
    ps_expect(p, TOK_RBRACKET, "expected ']'");
    return ps_fin(p, n);
  }
  PtrVec items = {0};
  vec_push(p->a, &items, first);
  while (ps_accept(p, TOK_COMMA) && !ps_at(p, TOK_RBRACKET)) {
    vec_push(p->a, &items, parse_star_named(p));
    ps_window_free(p, &w);
  }
  n->items = ps_to_list(&items);
  expect_close(p, TOK_RBRACKET, "expected ']'", ((AstNode *)vec_last(&items))->loc);
  return ps_fin(p, n);
}

/* dict | set | dictcomp | setcomp:
 *   '{' [double_starred_kvpairs] '}' | '{' star_named_expressions '}'
 *   '{' kvpair for_if_clauses '}' | '{' named_expression for_if_clauses '}'
 *   kvpair: expression ':' expression;  double_starred_kvpair: '**' bitwise_or | kvpair */
static AstNode *parse_brace(Parser *p) {
  TokWindow w = ps_window_open(p);
  Token *open = ps_cur(p);
  ps_advance(p);
  AstNode *n = ps_new_node(p, AST_DICT, open->loc);
  if (ps_accept(p, TOK_RBRACE)) return ps_fin(p, n);
  PtrVec keys = {0}, items = {0};
  bool is_dict;
  if (ps_accept(p, TOK_DSTAR)) {
    is_dict = true;
    vec_push(p->a, &keys, NULL);
    vec_push(p->a, &items, parse_bitor(p));
  } else {
    AstNode *first = parse_star_named(p);
    is_dict = ps_at(p, TOK_COLON) && first->kind != AST_STARRED;
    if (is_dict) {
      ps_advance(p);
      AstNode *v = parse_expr(p);
      if (at_comp_for(p)) {
        n = retag(p, n, AST_DICTCOMP);
        n->key = first;
        n->elt = v;
        parse_comp_clauses(p, n);
        ps_expect(p, TOK_RBRACE, "expected '}'");
        return ps_fin(p, n);
      }
      vec_push(p->a, &keys, first);
      vec_push(p->a, &items, v);
    } else {
      if (at_comp_for(p)) {
        n = retag(p, n, AST_SETCOMP);
        n->elt = first;
        parse_comp_clauses(p, n);
        ps_expect(p, TOK_RBRACE, "expected '}'");
        return ps_fin(p, n);
      }
      vec_push(p->a, &items, first);
    }
  }
  while (ps_accept(p, TOK_COMMA) && !ps_at(p, TOK_RBRACE)) {
    if (!is_dict) {
      vec_push(p->a, &items, parse_star_named(p));
    } else if (ps_accept(p, TOK_DSTAR)) {
      vec_push(p->a, &keys, NULL);
      vec_push(p->a, &items, parse_bitor(p));
    } else {
      vec_push(p->a, &keys, parse_expr(p));
      ps_expect(p, TOK_COLON, "':' expected after dictionary key");
      vec_push(p->a, &items, parse_expr(p));
    }
    if (p->panic) break;
    ps_window_free(p, &w);
  }
  if (!is_dict) n = retag(p, n, AST_SET);
  n->items = ps_to_list(&items);
  if (is_dict) n->keys = ps_to_list(&keys);
  expect_close(p, TOK_RBRACE, "expected '}'", ((AstNode *)vec_last(&items))->loc);
  return ps_fin(p, n);
}

/* atom: NAME | 'True' | 'False' | 'None' | strings | NUMBER | tuple | group | genexp
 *     | list | listcomp | dict | set | dictcomp | setcomp | '...' */
static AstNode *parse_atom(Parser *p) {
  Token *t = ps_cur(p);
  AstNode *n;
  switch (t->kind) {
  case TOK_NAME:
    n = ps_new_node(p, AST_NAME, t->loc);
    n->id = ps_tok_str(p, t);
    if (t->bad) p->panic = true;
    ps_advance(p);
    return ps_fin(p, n);
  case TOK_NUMBER:
    if (t->is_float) {
      n = ps_new_node(p, AST_CONST_FLOAT, t->loc);
      n->fval = t->fval;
      n->is_imag = t->is_imag;
    } else {
      n = ps_new_node(p, AST_CONST_INT, t->loc);
      n->ival = t->ival;
      if (t->is_big) {
        /* Keep the digits (without underscores) for whoever needs the exact value. */
        char *s = arena_alloc(p->a, t->len + 1);
        size_t k = 0;
        for (size_t i = 0; i < t->len; i++)
          if (t->text[i] != '_') s[k++] = t->text[i];
        n->is_big = true;
        n->sval = s;
        n->slen = k;
      }
    }
    if (t->bad) p->panic = true;
    ps_advance(p);
    return ps_fin(p, n);
  case TOK_STRING: return parse_strings(p);
  case TOK_KW_TRUE: n = ps_new_node(p, AST_CONST_TRUE, t->loc); ps_advance(p); return ps_fin(p, n);
  case TOK_KW_FALSE: n = ps_new_node(p, AST_CONST_FALSE, t->loc); ps_advance(p); return ps_fin(p, n);
  case TOK_KW_NONE: n = ps_new_node(p, AST_CONST_NONE, t->loc); ps_advance(p); return ps_fin(p, n);
  case TOK_ELLIPSIS: n = ps_new_node(p, AST_CONST_ELLIPSIS, t->loc); ps_advance(p); return ps_fin(p, n);
  case TOK_LPAREN: return parse_paren(p);
  case TOK_LBRACKET: return parse_list(p);
  case TOK_LBRACE: return parse_brace(p);
  case TOK_INDENT:
    ps_error_at(p, t, "unexpected indent");
    return ps_error_node(p);
  case TOK_NEWLINE: case TOK_EOF: case TOK_DEDENT:
    ps_error_at(p, t, "invalid syntax");
    return ps_error_node(p);
  default:
    ps_error_at(p, t, "invalid syntax");
    return ps_error_node(p);
  }
}

/* ---- calls and subscripts ---------------------------------------------------------------- */


static void push_kw(Parser *p, ArgsOut *o, const char *name, AstNode *v, SrcLoc loc) {
  if (o->nkw == o->capkw) {
    int cap = o->capkw ? o->capkw * 2 : 4;
    AstKeyword *nk = ARENA_ARRAY(p->a, AstKeyword, cap);
    if (o->nkw) memcpy(nk, o->kw, sizeof(AstKeyword) * (size_t)o->nkw);
    o->kw = nk;
    o->capkw = cap;
  }
  o->kw[o->nkw++] = (AstKeyword){name, v, loc};
}

/* arguments: ','.(starred_expression | (assignment_expression | expression !':=') !'='
 *                 | NAME '=' expression | '**' expression)+ [',']
 * A lone generator argument f(x for x in y) needs no extra parentheses.  `close` is
 * the closing token; the opening one was consumed. */
void parse_arguments(Parser *p, ArgsOut *o, SrcLoc open_loc) {
  bool seen_kw = false, seen_kwunpack = false;
  SrcLoc last = open_loc;
  TokWindow w = ps_window_open(p);
  while (!ps_at(p, TOK_RPAREN) && !p->panic) {
    Token *t = ps_cur(p);
    last = t->loc;
    if (ps_accept(p, TOK_STAR)) {
      AstNode *s = ps_new_node(p, AST_STARRED, t->loc);
      s->value = parse_expr(p);
      if (seen_kwunpack)
        ps_error_at(p, t, "iterable argument unpacking follows keyword argument unpacking");
      vec_push(p->a, &o->pos, ps_fin(p, s));
    } else if (ps_accept(p, TOK_DSTAR)) {
      push_kw(p, o, NULL, parse_expr(p), t->loc);
      seen_kwunpack = true;
    } else if (t->kind == TOK_NAME && ps_kind_at(p, 1) == TOK_ASSIGN) {
      ps_advance(p);
      ps_advance(p);
      push_kw(p, o, ps_tok_str(p, t), parse_expr(p), t->loc);
      seen_kw = true;
    } else {
      AstNode *e = parse_named(p);
      if (at_comp_for(p)) {
        AstNode *g = ps_new_node(p, AST_GENEXP, e->loc);
        g->elt = e;
        parse_comp_clauses(p, g);
        ps_fin(p, g);
        if (o->pos.len || o->nkw || !(ps_at(p, TOK_RPAREN) || (ps_at(p, TOK_COMMA) && ps_kind_at(p, 1) == TOK_RPAREN)))
          ps_error_at(p, &(Token){.loc = e->loc}, "Generator expression must be parenthesized");
        e = g;
      } else if (ps_at(p, TOK_ASSIGN)) {
        ps_error_at(p, ps_cur(p), "expression cannot contain assignment, perhaps you meant \"==\"?");
      }
      if (seen_kwunpack)
        ps_error_at(p, t, "positional argument follows keyword argument unpacking");
      else if (seen_kw)
        ps_error_at(p, t, "positional argument follows keyword argument");
      vec_push(p->a, &o->pos, e);
    }
    if (!ps_accept(p, TOK_COMMA)) break;
    ps_window_free(p, &w);
  }
  if (!ps_at(p, TOK_RPAREN) && !p->panic) {
    if (ps_at(p, TOK_EOF) || ps_at(p, TOK_NEWLINE))
      ps_error_at(p, ps_cur(p), "'(' was never closed");
    else if (ps_starts_expr(ps_cur(p)->kind))
      ps_error_at(p, &(Token){.loc = last}, "invalid syntax. Perhaps you forgot a comma?");
    else
      ps_error_at(p, ps_cur(p), "invalid syntax");
  }
  ps_accept(p, TOK_RPAREN);
}

/* slice: [expression] ':' [expression] [':' [expression]] | named_expression
 * (also starred_expression inside a tuple of slices, Python 3.11) */
static AstNode *parse_slice(Parser *p) {
  Token *t = ps_cur(p);
  if (ps_accept(p, TOK_STAR)) {
    AstNode *s = ps_new_node(p, AST_STARRED, t->loc);
    s->value = parse_bitor(p);
    return ps_fin(p, s);
  }
  AstNode *lo = NULL;
  if (!ps_at(p, TOK_COLON)) {
    lo = parse_named(p);
    if (!ps_at(p, TOK_COLON)) return lo;
  }
  AstNode *s = ps_new_node(p, AST_SLICE, t->loc);
  s->lo = lo;
  ps_advance(p); /* ':' */
  if (!ps_at(p, TOK_COLON) && !ps_at(p, TOK_RBRACKET) && !ps_at(p, TOK_COMMA)) s->hi = parse_expr(p);
  if (ps_accept(p, TOK_COLON) && !ps_at(p, TOK_RBRACKET) && !ps_at(p, TOK_COMMA)) s->step = parse_expr(p);
  return ps_fin(p, s);
}

/* slices: slice !',' | ','.(slice | starred_expression)+ [','] */
static AstNode *parse_slices(Parser *p) {
  Token *t = ps_cur(p);
  AstNode *first = parse_slice(p);
  if (!ps_at(p, TOK_COMMA) && first->kind != AST_STARRED) return first;
  AstNode *tup = ps_new_node(p, AST_TUPLE, t->loc);
  PtrVec items = {0};
  vec_push(p->a, &items, first);
  TokWindow w = ps_window_open(p);
  while (ps_accept(p, TOK_COMMA) && !ps_at(p, TOK_RBRACKET) && !p->panic) {
    vec_push(p->a, &items, parse_slice(p));
    ps_window_free(p, &w);
  }
  tup->items = ps_to_list(&items);
  return ps_fin(p, tup);
}

/* primary: atom ('.' NAME | genexp | '(' [arguments] ')' | '[' slices ']')* */
AstNode *parse_primary(Parser *p) {
  SrcLoc start = ps_cur(p)->loc; /* '(' of a parenthesized atom, as in CPython */
  AstNode *n = parse_atom(p);
  int links = 0;
  for (;;) {
    if (p->panic) return n;
    Token *t = ps_cur(p);
    if ((ps_at(p, TOK_DOT) || ps_at(p, TOK_LPAREN) || ps_at(p, TOK_LBRACKET)) && !chain_link(p, &links)) return n;
    if (ps_accept(p, TOK_DOT)) {
      AstNode *a = ps_new_node(p, AST_ATTRIBUTE, start);
      a->value = n;
      if (ps_at(p, TOK_NAME)) {
        a->id = ps_tok_str(p, ps_cur(p));
        ps_advance(p);
      } else {
        ps_error_at(p, ps_cur(p), "invalid syntax");
        a->id = "<error>";
      }
      n = ps_fin(p, a);
    } else if (ps_accept(p, TOK_LPAREN)) {
      AstNode *call = ps_new_node(p, AST_CALL, start);
      call->func = n;
      ArgsOut o = {0};
      parse_arguments(p, &o, t->loc);
      call->items = ps_to_list(&o.pos);
      call->kwargs = o.kw;
      call->nkwargs = o.nkw;
      n = ps_fin(p, call);
    } else if (ps_accept(p, TOK_LBRACKET)) {
      AstNode *s = ps_new_node(p, AST_SUBSCRIPT, start);
      s->value = n;
      if (ps_at(p, TOK_RBRACKET)) {
        ps_error_at(p, ps_cur(p), "invalid syntax");
        s->index = ps_error_node(p);
      } else {
        s->index = parse_slices(p);
      }
      ps_expect(p, TOK_RBRACKET, "expected ']'");
      n = ps_fin(p, s);
    } else {
      return n;
    }
    if (p->panic) return n;
  }
}

/* ---- operators ------------------------------------------------------------------------ */

/* await_primary: 'await' primary | primary */
static AstNode *parse_await(Parser *p) {
  Token *t = ps_cur(p);
  if (!ps_accept(p, TOK_KW_AWAIT)) return parse_primary(p);
  AstNode *n = ps_new_node(p, AST_AWAIT, t->loc);
  n->value = parse_primary(p);
  return ps_fin(p, n);
}

static AstNode *parse_factor(Parser *p);

/* power: await_primary '**' factor   (right-associative; -2**2 == -(2**2)) */
static AstNode *parse_power(Parser *p) {
  SrcLoc start = ps_cur(p)->loc;
  AstNode *base = parse_await(p);
  if (!ps_accept(p, TOK_DSTAR)) return base;
  AstNode *n = ps_new_node(p, AST_BINOP, start);
  n->op = AOP_POW;
  n->left = base;
  /* 2 ** 2 ** 2 ... recurses (right-associative): bounded like any nesting. */
  if (!enter(p)) {
    n->right = ps_error_node(p);
  } else {
    n->right = parse_factor(p);
    leave(p);
  }
  return ps_fin(p, n);
}

/* factor: '+' factor | '-' factor | '~' factor | power */
static AstNode *parse_factor(Parser *p) {
  Token *t = ps_cur(p);
  AstOp op;
  switch (t->kind) {
  case TOK_PLUS: op = AOP_UADD; break;
  case TOK_MINUS: op = AOP_USUB; break;
  case TOK_TILDE: op = AOP_INVERT; break;
  default: return parse_power(p);
  }
  ps_advance(p);
  AstNode *n = ps_new_node(p, AST_UNARYOP, t->loc);
  n->op = op;
  if (!enter(p)) {
    n->value = ps_error_node(p);
  } else {
    n->value = parse_factor(p);
    leave(p);
  }
  return ps_fin(p, n);
}

/* Left-associative binary levels: each row maps a token to an operator. */
typedef struct BinRow {
  TokKind tok;
  AstOp op;
} BinRow;

static const BinRow term_ops[] = {{TOK_STAR, AOP_MUL},         {TOK_SLASH, AOP_DIV},
                                  {TOK_DSLASH, AOP_FLOORDIV},  {TOK_PERCENT, AOP_MOD},
                                  {TOK_AT, AOP_MATMUL}};
static const BinRow sum_ops[] = {{TOK_PLUS, AOP_ADD}, {TOK_MINUS, AOP_SUB}};
static const BinRow shift_ops[] = {{TOK_LSHIFT, AOP_LSHIFT}, {TOK_RSHIFT, AOP_RSHIFT}};
static const BinRow band_ops[] = {{TOK_AMP, AOP_BITAND}};
static const BinRow bxor_ops[] = {{TOK_CARET, AOP_BITXOR}};
static const BinRow bor_ops[] = {{TOK_PIPE, AOP_BITOR}};

typedef AstNode *(*ParseFn)(Parser *p);

static AstNode *parse_binary(Parser *p, const BinRow *rows, int nrows, ParseFn next) {
  SrcLoc start = ps_cur(p)->loc;
  AstNode *left = next(p);
  int links = 0;
  for (;;) {
    int r = 0;
    while (r < nrows && !ps_at(p, rows[r].tok)) r++;
    if (r == nrows || p->panic) return left;
    if (!chain_link(p, &links)) return left;
    ps_advance(p);
    AstNode *n = ps_new_node(p, AST_BINOP, start);
    n->op = rows[r].op;
    n->left = left;
    n->right = next(p);
    left = ps_fin(p, n);
  }
}

/* term: term ('*' | '/' | '//' | '%' | '@') factor | factor */
static AstNode *parse_term(Parser *p) { return parse_binary(p, term_ops, TS_ARRAY_LEN(term_ops), parse_factor); }
/* sum: sum ('+' | '-') term | term */
static AstNode *parse_sum(Parser *p) { return parse_binary(p, sum_ops, TS_ARRAY_LEN(sum_ops), parse_term); }
/* shift_expr: shift_expr ('<<' | '>>') sum | sum */
static AstNode *parse_shift(Parser *p) { return parse_binary(p, shift_ops, TS_ARRAY_LEN(shift_ops), parse_sum); }
/* bitwise_and: bitwise_and '&' shift_expr | shift_expr */
static AstNode *parse_band(Parser *p) { return parse_binary(p, band_ops, 1, parse_shift); }
/* bitwise_xor: bitwise_xor '^' bitwise_and | bitwise_and */
static AstNode *parse_bxor(Parser *p) { return parse_binary(p, bxor_ops, 1, parse_band); }
/* bitwise_or: bitwise_or '|' bitwise_xor | bitwise_xor */
static AstNode *parse_bitor(Parser *p) { return parse_binary(p, bor_ops, 1, parse_bxor); }

/* Returns the comparison operator at the cursor (consuming it), or -1. */
static int accept_compare_op(Parser *p) {
  switch (ps_cur(p)->kind) {
  case TOK_EQ: ps_advance(p); return AOP_EQ;
  case TOK_NE: ps_advance(p); return AOP_NOTEQ;
  case TOK_LT: ps_advance(p); return AOP_LT;
  case TOK_LE: ps_advance(p); return AOP_LTE;
  case TOK_GT: ps_advance(p); return AOP_GT;
  case TOK_GE: ps_advance(p); return AOP_GTE;
  case TOK_KW_IN: ps_advance(p); return AOP_IN;
  case TOK_KW_IS:
    ps_advance(p);
    return ps_accept(p, TOK_KW_NOT) ? AOP_ISNOT : AOP_IS;
  case TOK_KW_NOT:
    if (ps_kind_at(p, 1) != TOK_KW_IN) return -1;
    ps_advance(p);
    ps_advance(p);
    return AOP_NOTIN;
  default: return -1;
  }
}

/* comparison: bitwise_or compare_op_bitwise_or_pair+ | bitwise_or
 * (a < b < c is one node with two operators, evaluated pairwise) */
static AstNode *parse_comparison(Parser *p) {
  SrcLoc start = ps_cur(p)->loc;
  AstNode *left = parse_bitor(p);
  int op = accept_compare_op(p);
  if (op < 0) return left;
  AstNode *n = ps_new_node(p, AST_COMPARE, start);
  n->left = left;
  PtrVec items = {0}, ops = {0};
  do {
    vec_push(p->a, &ops, (void *)(intptr_t)op);
    vec_push(p->a, &items, parse_bitor(p));
  } while (!p->panic && (op = accept_compare_op(p)) >= 0);
  n->items = ps_to_list(&items);
  n->ops = ARENA_ARRAY(p->a, AstOp, ops.len);
  for (int i = 0; i < ops.len; i++) n->ops[i] = (AstOp)(intptr_t)ops.items[i];
  return ps_fin(p, n);
}

/* inversion: 'not' inversion | comparison */
static AstNode *parse_inversion(Parser *p) {
  Token *t = ps_cur(p);
  if (!ps_accept(p, TOK_KW_NOT)) return parse_comparison(p);
  AstNode *n = ps_new_node(p, AST_UNARYOP, t->loc);
  n->op = AOP_NOT;
  if (!enter(p)) {
    n->value = ps_error_node(p);
  } else {
    n->value = parse_inversion(p);
    leave(p);
  }
  return ps_fin(p, n);
}

static AstNode *parse_boolop(Parser *p, TokKind tok, AstOp op, ParseFn next) {
  SrcLoc start = ps_cur(p)->loc;
  AstNode *first = next(p);
  if (!ps_at(p, tok)) return first;
  AstNode *n = ps_new_node(p, AST_BOOLOP, start);
  n->op = op;
  PtrVec items = {0};
  vec_push(p->a, &items, first);
  while (!p->panic && ps_accept(p, tok)) vec_push(p->a, &items, next(p));
  n->items = ps_to_list(&items);
  return ps_fin(p, n);
}

/* conjunction: inversion ('and' inversion)+ | inversion */
static AstNode *parse_conjunction(Parser *p) { return parse_boolop(p, TOK_KW_AND, AOP_AND, parse_inversion); }
/* disjunction: conjunction ('or' conjunction)+ | conjunction */
static AstNode *parse_disjunction(Parser *p) { return parse_boolop(p, TOK_KW_OR, AOP_OR, parse_conjunction); }

/* ---- parameters (def and lambda) ---------------------------------------------------------- */

/* parameters / lambda_parameters, flattened into one loop with CPython's checks:
 *   [posonly ',' '/'] [normal params] ['*' [NAME [':' ann]] kwonly...] ['**' NAME]
 * each param: NAME [':' expression] ['=' expression] (annotations only for def).
 * Stops before `close` (')' for def, ':' for lambda). */
AstParams parse_params(Parser *p, TokKind close, bool annotations) {
  int cap = 4, n = 0;
  AstParam *items = ARENA_ARRAY(p->a, AstParam, cap);
  bool seen_slash = false, seen_star = false, seen_default = false, seen_varkw = false;
  int star_index = -1; /* index of a bare '*' position (number of params before it) */
  Token *bare_star = NULL;
  while (!ps_at(p, close) && !p->panic) {
    Token *t = ps_cur(p);
    if (seen_varkw) {
      ps_error_at(p, t, "arguments cannot follow var-keyword argument");
      break;
    }
    if (ps_accept(p, TOK_SLASH)) {
      if (seen_slash) ps_error_at(p, t, "/ may appear only once");
      else if (seen_star) ps_error_at(p, t, "/ must be ahead of *");
      else if (n == 0) ps_error_at(p, t, "at least one argument must precede /");
      for (int i = 0; i < n; i++) items[i].kind = APARAM_POSONLY;
      seen_slash = true;
      if (!ps_accept(p, TOK_COMMA)) break;
      continue;
    }
    AstParamKind kind = seen_star ? APARAM_KWONLY : APARAM_NORMAL;
    if (ps_accept(p, TOK_STAR)) {
      if (seen_star) {
        ps_error_at(p, t, "* argument may appear only once");
        break;
      }
      seen_star = true;
      if (!ps_at(p, TOK_NAME)) {
        /* bare '*': keyword-only parameters must follow */
        bare_star = t;
        star_index = n;
        if (!ps_accept(p, TOK_COMMA)) break;
        continue;
      }
      kind = APARAM_VARARGS;
    } else if (ps_accept(p, TOK_DSTAR)) {
      kind = APARAM_VARKW;
      seen_varkw = true;
    }
    if (!ps_at(p, TOK_NAME)) {
      ps_error_at(p, ps_cur(p), "invalid syntax");
      break;
    }
    AstParam prm = {0};
    prm.name = ps_tok_str(p, ps_cur(p));
    prm.loc = ps_cur(p)->loc;
    prm.kind = kind;
    ps_advance(p);
    for (int i = 0; i < n; i++)
      if (!strcmp(items[i].name, prm.name)) {
        ps_error_at(p, tok(p, p->pos - 1), "duplicate argument '%s' in function definition", prm.name);
        break;
      }
    if (annotations && ps_accept(p, TOK_COLON)) {
      prm.annotation = (kind == APARAM_VARARGS && ps_at(p, TOK_STAR)) ? parse_star_named(p) : parse_expr(p);
    }
    if (ps_at(p, TOK_ASSIGN)) {
      Token *eq = ps_cur(p);
      ps_advance(p);
      if (kind == APARAM_VARARGS || kind == APARAM_VARKW)
        ps_error_at(p, eq, "var-%s argument cannot have default value",
                 kind == APARAM_VARARGS ? "positional" : "keyword");
      prm.default_value = parse_expr(p);
      if (kind == APARAM_NORMAL) seen_default = true;
    } else if (kind == APARAM_NORMAL && seen_default) {
      ps_error_at(p, t, "non-default argument follows default argument");
    }
    if (n == cap) {
      AstParam *ni = ARENA_ARRAY(p->a, AstParam, cap * 2);
      memcpy(ni, items, sizeof(AstParam) * (size_t)n);
      items = ni;
      cap *= 2;
    }
    items[n++] = prm;
    if (!ps_accept(p, TOK_COMMA)) break;
  }
  if (bare_star && !p->panic && (n == star_index || items[star_index].kind == APARAM_VARKW))
    ps_error_at(p, bare_star, "named arguments must follow bare *");
  return (AstParams){items, n};
}

/* ---- expressions ------------------------------------------------------------------------- */

/* lambdef: 'lambda' [lambda_params] ':' expression */
static AstNode *parse_lambda(Parser *p) {
  Token *t = ps_cur(p);
  ps_advance(p);
  AstNode *n = ps_new_node(p, AST_LAMBDA, t->loc);
  n->params = parse_params(p, TOK_COLON, false);
  ps_expect(p, TOK_COLON, "expected ':'");
  n->value = parse_expr(p);
  return ps_fin(p, n);
}

/* expression: disjunction 'if' disjunction 'else' expression | disjunction | lambdef */
AstNode *parse_expr(Parser *p) {
  if (!enter(p)) return ps_error_node(p);
  AstNode *r;
  SrcLoc start = ps_cur(p)->loc;
  if (ps_at(p, TOK_KW_LAMBDA)) {
    r = parse_lambda(p);
  } else {
    r = parse_disjunction(p);
    if (ps_at(p, TOK_KW_IF) && !p->panic) {
      ps_advance(p);
      AstNode *n = ps_new_node(p, AST_IFEXP, start);
      n->left = r;
      n->test = parse_disjunction(p);
      if (ps_expect(p, TOK_KW_ELSE, "expected 'else' after 'if' expression")) n->right = parse_expr(p);
      else n->right = ps_error_node(p);
      r = ps_fin(p, n);
    }
  }
  leave(p);
  return r;
}

/* named_expression: NAME ':=' expression | expression !':=' */
AstNode *parse_named(Parser *p) {
  Token *t = ps_cur(p);
  if (t->kind == TOK_NAME && ps_kind_at(p, 1) == TOK_WALRUS) {
    AstNode *n = ps_new_node(p, AST_NAMEDEXPR, t->loc);
    AstNode *target = ps_new_node(p, AST_NAME, t->loc);
    target->id = ps_tok_str(p, t);
    ps_advance(p);
    ps_fin(p, target);
    ps_advance(p);
    n->left = target;
    n->value = parse_expr(p);
    return ps_fin(p, n);
  }
  AstNode *e = parse_expr(p);
  if (ps_at(p, TOK_WALRUS)) ps_error_at(p, ps_cur(p), "cannot use assignment expressions with %s",
                                  e->kind == AST_ATTRIBUTE ? "attribute" :
                                  e->kind == AST_SUBSCRIPT ? "subscript" : "expression");
  return e;
}

/* star_named_expression: '*' bitwise_or | named_expression */
static AstNode *parse_star_named(Parser *p) {
  Token *t = ps_cur(p);
  if (!ps_accept(p, TOK_STAR)) return parse_named(p);
  AstNode *n = ps_new_node(p, AST_STARRED, t->loc);
  n->value = parse_bitor(p);
  return ps_fin(p, n);
}

/* star_expressions: star_expression (',' star_expression)* [',']
 * star_expression: '*' bitwise_or | expression */
AstNode *parse_star_exprs(Parser *p) {
  Token *t = ps_cur(p);
  AstNode *first;
  if (ps_accept(p, TOK_STAR)) {
    first = ps_new_node(p, AST_STARRED, t->loc);
    first->value = parse_bitor(p);
    ps_fin(p, first);
  } else {
    first = parse_expr(p);
  }
  if (!ps_at(p, TOK_COMMA)) return first;
  AstNode *tup = ps_new_node(p, AST_TUPLE, t->loc);
  PtrVec items = {0};
  vec_push(p->a, &items, first);
  TokWindow w = ps_window_open(p);
  while (!p->panic && ps_accept(p, TOK_COMMA) && ps_starts_expr(ps_cur(p)->kind)) {
    Token *s = ps_cur(p);
    if (ps_accept(p, TOK_STAR)) {
      AstNode *st = ps_new_node(p, AST_STARRED, s->loc);
      st->value = parse_bitor(p);
      vec_push(p->a, &items, ps_fin(p, st));
    } else {
      vec_push(p->a, &items, parse_expr(p));
    }
    ps_window_free(p, &w);
  }
  tup->items = ps_to_list(&items);
  return ps_fin(p, tup);
}

/* yield_expr: 'yield' 'from' expression | 'yield' [star_expressions] */
AstNode *parse_yield(Parser *p) {
  Token *t = ps_cur(p);
  ps_advance(p);
  if (ps_accept(p, TOK_KW_FROM)) {
    AstNode *n = ps_new_node(p, AST_YIELDFROM, t->loc);
    n->value = parse_expr(p);
    return ps_fin(p, n);
  }
  AstNode *n = ps_new_node(p, AST_YIELD, t->loc);
  if (ps_starts_expr(ps_cur(p)->kind)) n->value = parse_star_exprs(p);
  return ps_fin(p, n);
}

/* ---- targets --------------------------------------------------------------------------- */

/* What CPython calls an expression that cannot be assigned to, for the message. */
const char *ps_target_desc(const AstNode *n) {
  switch (n->kind) {
  case AST_CALL: return "function call";
  case AST_CONST_INT: case AST_CONST_FLOAT: case AST_CONST_STR: return "literal";
  case AST_FSTRING: return "f-string expression";
  case AST_CONST_TRUE: return "True";
  case AST_CONST_FALSE: return "False";
  case AST_CONST_NONE: return "None";
  case AST_CONST_ELLIPSIS: return "ellipsis";
  case AST_COMPARE: return "comparison";
  case AST_LAMBDA: return "lambda";
  case AST_IFEXP: return "conditional expression";
  case AST_NAMEDEXPR: return "named expression";
  case AST_LISTCOMP: return "list comprehension";
  case AST_SETCOMP: return "set comprehension";
  case AST_DICTCOMP: return "dict comprehension";
  case AST_GENEXP: return "generator expression";
  case AST_DICT: return "dict literal";
  case AST_SET: return "set display";
  case AST_AWAIT: return "await expression";
  case AST_YIELD: case AST_YIELDFROM: return "yield expression";
  default: return "expression";
  }
}

/* Checks that n may be assigned (verb "assign to") or deleted ("delete"); reports the
 * first offending sub-expression at its own location. */
void ps_check_target(Parser *p, const AstNode *n, const char *verb) {
  switch (n->kind) {
  case AST_NAME: case AST_ATTRIBUTE: case AST_SUBSCRIPT: return;
  case AST_TUPLE: case AST_LIST:
    for (int i = 0; i < n->items.n; i++) ps_check_target(p, n->items.items[i], verb);
    return;
  case AST_STARRED:
    if (!strcmp(verb, "delete")) break;
    ps_check_target(p, n->value, verb);
    return;
  default: break;
  }
  if (n->kind == AST_NAME && !strcmp(n->id, "<error>")) return;
  ps_error_at(p, &(Token){.loc = n->loc}, "cannot %s %s", verb,
           n->kind == AST_STARRED ? "starred" : ps_target_desc(n));
}

/* star_target: '*' star_target | target_with_star_atom
 * star_targets: star_target (',' star_target)* [',']
 * Parsed at `primary` level so that the 'in' of a for loop is not taken as an operator. */
AstNode *parse_star_target(Parser *p) {
  Token *t = ps_cur(p);
  if (!ps_accept(p, TOK_STAR)) return parse_primary(p);
  AstNode *n = ps_new_node(p, AST_STARRED, t->loc);
  if (!enter(p)) return ps_error_node(p);
  n->value = parse_star_target(p);
  leave(p);
  return ps_fin(p, n);
}

AstNode *parse_target_list(Parser *p) {
  Token *t = ps_cur(p);
  AstNode *first = parse_star_target(p);
  if (ps_at(p, TOK_COMMA)) {
    AstNode *tup = ps_new_node(p, AST_TUPLE, t->loc);
    PtrVec items = {0};
    vec_push(p->a, &items, first);
    while (!p->panic && ps_accept(p, TOK_COMMA) && (ps_starts_expr(ps_cur(p)->kind)))
      vec_push(p->a, &items, parse_star_target(p));
    tup->items = ps_to_list(&items);
    first = ps_fin(p, tup);
  }
  ps_check_target(p, first, "assign to");
  return first;
}

static void parser_release(void *arg) {
  Parser *p = arg;
  for (int i = 0; i < p->nchunks; i++) ts_free(p->chunks[i]);
  ts_free(p->chunks);
  p->chunks = NULL;
  p->nchunks = 0;
  ts_free(p->names);
  p->names = NULL;
}

bool ps_parser_init(Parser *p, TsCompiler *c, const SourceFile *file) {
  memset(p, 0, sizeof *p);
  /* an out-of-memory exit while parsing frees the token chunks and the name table */
  ts_oom_cleanup_push(&p->oom_cleanup, parser_release, p);
  p->c = c;
  p->a = c->arena;
  p->file = file;
  if (!lex_check_source(c, file, &p->unclosed)) {
    ts_oom_cleanup_pop(&p->oom_cleanup);
    return false;
  }
  lex_init(&p->lx, c, file);
  p->lx.defer_errors = true; /* reported in source order as the parser reaches them */
  report_lex_errors(p);
  return true;
}

void ps_parser_fini(Parser *p) {
  ts_oom_cleanup_pop(&p->oom_cleanup);
  parser_release(p);
}

/* eval_input: expressions NEWLINE* ENDMARKER  (a -D value such as `(64, 64)`) */
AstNode *parse_expression(TsCompiler *c, const SourceFile *file) {
  if (!file || !file->text) return NULL;
  int errors = c->diag.errors;
  Parser p;
  if (!ps_parser_init(&p, c, file)) return NULL;
  ps_accept(&p, TOK_INDENT); /* leading spaces are harmless in a value */
  AstNode *e = NULL;
  if (ps_at(&p, TOK_NEWLINE) || ps_at(&p, TOK_EOF)) {
    ps_error_at(&p, ps_cur(&p), "expected an expression");
  } else {
    e = parse_star_exprs(&p);
    while (ps_accept(&p, TOK_NEWLINE) || ps_accept(&p, TOK_DEDENT)) {
    }
    if (!ps_at(&p, TOK_EOF)) ps_error_at(&p, ps_cur(&p), "invalid syntax");
  }
  ps_parser_fini(&p);
  return c->diag.errors > errors ? NULL : e;
}
