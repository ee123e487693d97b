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
 * cannot overflow the C stack. */
#include <stdio.h>
#include <string.h>

#include "ast.h"
#include "lex.h"
#if TS_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Deep enough for any real program, shallow enough for a small thread stack: each
 * level costs about 17 C frames (expression -> ... -> atom). */
enum { MAX_DEPTH = 150 };
/* Chains that the parser builds iteratively (a.b.c..., f()()..., a + b + c ...) still nest
 * the tree one level per link, and the evaluator and the passes walk trees recursively:
 * a 50000-term sum overflowed the evaluator's stack.  CPython also refuses such input
 * ("RecursionError during compilation"); no kernel comes near this. */
enum { MAX_CHAIN = 1000 };

/* Tokens are lexed on demand into chunks of TOK_CHUNK, so a Token * stays valid until
 * its chunk is freed, and the parser frees the tokens it is done with as it goes
 * (TokWindow): it holds little more than the current item of the statement at hand, not
 * the file.  (The whole file's array, at 140 bytes a token then, was 28 times the size of
 * a real kernel file and 80 times that of dense code.)  Under ASan the chunks are tiny,
 * so that a Token * used after its chunk was freed is an error in the tests. */
#if TS_ASAN
enum { TOK_CHUNK = 4 };
#else
enum { TOK_CHUNK = 512 };
#endif
typedef struct TokChunk {
  Token t[TOK_CHUNK];
} TokChunk;

typedef struct Parser {
  TsCompiler *c;
  Arena *a;
  const SourceFile *file;
  Lexer lx;          /* the file's lexer, as far ahead as the lookahead needed */
  TokChunk **chunks; /* chunks[i / TOK_CHUNK] holds token i; NULL once released */
  int nchunks;       /* slots of chunks */
  int ntoks, pos;    /* tokens lexed so far; the current one */
  bool eof;          /* the EOF token is lexed: it is the last, and repeats */
  TsOomCleanup oom_cleanup; /* frees the chunks and names on an out-of-memory exit */
  Token *flat;       /* an f-string field's own tokens, parsed instead of the stream */
  int nflat;
  const char **names; /* distinct NAME spellings (tok_str), open addressing */
  uint32_t names_cap, nnames;
  int depth;
  bool panic;      /* an error of the current statement was reported */
  bool too_deep;   /* the depth error was reported (once per file) */
  bool after_error; /* the previous statement ended in an error: a following INDENT is
                       the body of its broken header, not an "unexpected indent" */
  int lex_reported; /* tokens [0, lex_reported) had their deferred lexer errors shown */
  SrcLoc unclosed;  /* a bracket never closed: errors after it are not reported */
} Parser;

/* ---- token helpers ------------------------------------------------------------------ */

static bool starts_expr(TokKind k);

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
 * after that index and before the previous token (which fin() reads): no frame refers to
 * them.  A window remembers how far it has freed, so each chunk is visited once. */
typedef struct TokWindow {
  int next; /* the next chunk the window may free */
} TokWindow;

static TokWindow window_open(Parser *p) { return (TokWindow){p->pos / TOK_CHUNK + 1}; }

static void window_free(Parser *p, TokWindow *w) {
  if (p->flat || p->pos < 1) return;
  for (int end = (p->pos - 1) / TOK_CHUNK; w->next < end; w->next++) {
    ts_free(p->chunks[w->next]);
    p->chunks[w->next] = NULL;
  }
}

/* Scans tokens ahead of the parser (a statement's line, to choose between grammar
 * alternatives) without keeping them: past the tokens already lexed, a copy of the
 * lexer goes on alone, so a scan over a huge line costs no memory. */
typedef struct TokScan {
  Parser *p;
  int i;       /* index of the next token */
  bool cloned; /* lx is in use */
  Lexer lx;
  Token t;
} TokScan;

static TokKind scan_next(TokScan *s) {
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

static Token *cur(Parser *p) { return tok(p, p->pos); }
static TokKind kind_at(Parser *p, int k) { return tok(p, p->pos + k)->kind; }
static bool at(Parser *p, TokKind k) { return cur(p)->kind == k; }

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

static void advance(Parser *p) {
  if (cur(p)->kind != TOK_EOF) p->pos++;
  report_lex_errors(p);
}
static bool accept(Parser *p, TokKind k) {
  if (!at(p, k)) return false;
  advance(p);
  return true;
}
static bool at_name(Parser *p, const char *s) {
  Token *t = cur(p);
  return t->kind == TOK_NAME && t->len == strlen(s) && !memcmp(t->text, s, t->len);
}

/* Reports the first error of a statement; later ones are consequences of it.  Tokens
 * the lexer already complained about are not reported again. */
TS_PRINTF(3, 4) static void error_at(Parser *p, const Token *t, const char *fmt, ...) {
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

static bool expect(Parser *p, TokKind k, const char *msg) {
  if (accept(p, k)) return true;
  error_at(p, cur(p), "%s", msg);
  return false;
}

/* Closing a display: an expression where the closer should be is most likely a
 * missing comma (CPython's hint), reported at the start of the previous item. */
static void expect_close(Parser *p, TokKind k, const char *msg, SrcLoc last_item) {
  if (accept(p, k)) return;
  if (starts_expr(cur(p)->kind) || at(p, TOK_STRING))
    error_at(p, &(Token){.loc = last_item}, "invalid syntax. Perhaps you forgot a comma?");
  else
    error_at(p, cur(p), "%s", msg);
}

/* A node as large as its kind needs (ast_node_size).  Under ASan it is allocated whole
 * and the rest poisoned, so reading a field the kind does not have fails the tests. */
static AstNode *new_node(Parser *p, AstKind k, SrcLoc loc) {
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
static AstNode *fin(Parser *p, AstNode *n) {
  if (p->pos > 0) n->end = ast_end(tok(p, p->pos - 1)->end);
  return n;
}

/* A display turned out to be another kind (a comprehension, a set): a fresh node, as a
 * node is only as large as its first kind needed.  Only the location was set. */
static AstNode *retag(Parser *p, AstNode *n, AstKind k) { return new_node(p, k, n->loc); }

static AstNode *error_node(Parser *p) {
  AstNode *n = new_node(p, AST_NAME, cur(p)->loc);
  n->id = "<error>";
  return n;
}

/* The spelling of a NAME token.  Names repeat (a kernel says `T` and `block_M` dozens of
 * times), so each distinct one is copied into the arena once; the table is on the heap
 * and stops growing at NAMES_MAX entries, so a file of unique names costs no more than
 * copying each. */
enum { NAMES_MAX = 1 << 16 };
static const char *tok_str(Parser *p, const Token *t) {
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

static AstList to_list(PtrVec *v) { return (AstList){(AstNode **)v->items, v->len}; }

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
    error_at(p, cur(p), "expression nested too deeply");
  }
  p->panic = true;
  return false;
}
static void leave(Parser *p) { p->depth--; }

/* One more link of a chain (see MAX_CHAIN): false, after an error, when too long. */
static bool chain_link(Parser *p, int *links) {
  if (++*links <= MAX_CHAIN) return true;
  error_at(p, cur(p), "expression too long: more than %d chained operations", MAX_CHAIN);
  return false;
}

/* ---- forward declarations ------------------------------------------------------------ */
static AstNode *parse_expr(Parser *p);
static AstNode *parse_named(Parser *p);
static AstNode *parse_star_named(Parser *p);
static AstNode *parse_star_exprs(Parser *p);
static AstNode *parse_disjunction(Parser *p);
static AstNode *parse_bitor(Parser *p);
static AstNode *parse_primary(Parser *p);
static AstNode *parse_yield(Parser *p);
static void parse_stmts_until_dedent(Parser *p, PtrVec *out);
static AstNode *parse_target_list(Parser *p);

/* Tokens that can begin an expression (to know whether an optional one follows). */
static bool starts_expr(TokKind k) {
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
  AstNode *s = new_node(p, AST_CONST_STR, loc);
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
    error_at(p, &err_tok, "f-string: expressions nested too deeply");
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
    error_at(p, &err_tok, "f-string: empty expression not allowed");
    return e;
  }
  /* Parse the field with the same parser state over the field's own tokens. */
  Token *save_flat = p->flat;
  int save_nflat = p->nflat, save_pos = p->pos, save_rep = p->lex_reported;
  p->flat = arr;
  p->nflat = n;
  p->pos = 0;
  p->lex_reported = n; /* the field's lexer reported its errors itself */
  AstNode *value = at(p, TOK_KW_YIELD) ? parse_yield(p) : parse_star_exprs(p);
  if (!at(p, TOK_EOF)) error_at(p, cur(p), "f-string: expecting '}'");
  p->flat = save_flat;
  p->nflat = save_nflat;
  p->pos = save_pos;
  p->lex_reported = save_rep;
  ts_free(arr);

  size_t i = stop;
  AstNode *f = new_node(p, AST_FORMATTED, floc);
  f->value = value;
  bool self_doc = false;
  if (i < e && text[i] == '=') {
    self_doc = true;
    /* Self-documenting {x=}: the text (with its spaces) precedes the value. */
    i++;
    while (i < e && (text[i] == ' ' || text[i] == '\t')) i++;
    AstNode *s = new_node(p, AST_CONST_STR, loc_at(p, t, off));
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
      error_at(p, &err_tok, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
      return e;
    }
  }
  if (i < e && text[i] == ':') {
    i++;
    AstNode *spec = new_node(p, AST_FSTRING, loc_at(p, t, i));
    PtrVec sp = {0};
    i = fstring_parts(p, t, i, e, &sp, true, nest + 1);
    spec->items = to_list(&sp);
    f->format_spec = spec;
    self_doc = false; /* {x=:spec} formats the value itself, not its repr */
  }
  if (self_doc) f->conversion = 'r';
  if (i >= e || text[i] != '}') {
    err_tok.loc = loc_at(p, t, i < e ? i : e);
    error_at(p, &err_tok, "f-string: expecting '}'");
    return e;
  }
  fin(p, f);
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
      error_at(p, &et, "f-string: single '}' is not allowed");
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
  Token *first = cur(p);
  bool any_f = false, any_bytes = false, any_str = false, bad = false;
  int start = p->pos;
  while (at(p, TOK_STRING)) {
    Token *t = cur(p);
    any_f |= (t->str_flags & STR_FMT) != 0;
    if (t->str_flags & STR_BYTES) any_bytes = true;
    else any_str = true;
    bad |= t->bad;
    advance(p);
  }
  int end = p->pos;
  if (any_bytes && any_str) {
    error_at(p, tok(p, start), "cannot mix bytes and nonbytes literals");
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
    AstNode *n = new_node(p, AST_CONST_STR, first->loc);
    n->is_bytes = any_bytes;
    n->slen = sb.len;
    n->sval = arena_strndup(p->a, sb.data ? sb.data : "", sb.len);
    sb_free(&sb);
    return fin(p, n);
  }
  AstNode *n = new_node(p, AST_FSTRING, first->loc);
  PtrVec parts = {0};
  for (int i = start; i < end && !bad; i++) {
    Token *t = tok(p, i);
    size_t body = (size_t)(t->text - p->file->text) + t->body_off;
    if (t->str_flags & STR_FMT) {
      fstring_parts(p, t, body, body + t->body_len, &parts, false, 0);
    } else if (t->body_len) {
      AstNode *s = new_node(p, AST_CONST_STR, t->loc);
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
    AstNode *m = new_node(p, AST_CONST_STR, part->loc);
    m->slen = run.len;
    m->sval = arena_strndup(p->a, run.data ? run.data : "", run.len);
    m->end = ((AstNode *)parts.items[j - 1])->end;
    sb_free(&run);
    vec_push(p->a, &merged, m);
    i = j;
  }
  n->items = to_list(&merged);
  return fin(p, n);
}

/* ---- atoms ------------------------------------------------------------------------- */

/* for_if_clauses: (['async'] 'for' star_targets 'in' disjunction ('if' disjunction)*)+ */
static void parse_comp_clauses(Parser *p, AstNode *n) {
  int cap = 2, len = 0;
  AstComp *comps = ARENA_ARRAY(p->a, AstComp, cap);
  while (at(p, TOK_KW_FOR) || (at(p, TOK_KW_ASYNC) && kind_at(p, 1) == TOK_KW_FOR)) {
    AstComp c = {0};
    if (accept(p, TOK_KW_ASYNC)) c.is_async = true;
    advance(p); /* for */
    c.target = parse_target_list(p);
    expect(p, TOK_KW_IN, "expected 'in'");
    c.iter = parse_disjunction(p);
    PtrVec ifs = {0};
    while (accept(p, TOK_KW_IF)) vec_push(p->a, &ifs, parse_disjunction(p));
    c.ifs = to_list(&ifs);
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
  return at(p, TOK_KW_FOR) || (at(p, TOK_KW_ASYNC) && kind_at(p, 1) == TOK_KW_FOR);
}

/* tuple | group | genexp:
 *   '(' [star_named_expression ',' [star_named_expressions]] ')'
 *   '(' (yield_expr | named_expression) ')'
 *   '(' named_expression for_if_clauses ')' */
static AstNode *parse_paren(Parser *p) {
  TokWindow w = window_open(p);
  Token *open = cur(p);
  advance(p);
  if (accept(p, TOK_RPAREN)) return fin(p, new_node(p, AST_TUPLE, open->loc));
  if (at(p, TOK_KW_YIELD)) {
    AstNode *y = parse_yield(p);
    expect(p, TOK_RPAREN, "expected ')'");
    return y;
  }
  AstNode *first = parse_star_named(p);
  if (at_comp_for(p)) {
    AstNode *g = new_node(p, AST_GENEXP, open->loc);
    g->elt = first;
    parse_comp_clauses(p, g);
    expect(p, TOK_RPAREN, "expected ')'");
    return fin(p, g);
  }
  if (at(p, TOK_COMMA)) {
    AstNode *tup = new_node(p, AST_TUPLE, open->loc);
    PtrVec items = {0};
    vec_push(p->a, &items, first);
    while (accept(p, TOK_COMMA) && !at(p, TOK_RPAREN)) {
      vec_push(p->a, &items, parse_star_named(p));
      window_free(p, &w);
    }
    tup->items = to_list(&items);
    expect_close(p, TOK_RPAREN, "expected ')'", ((AstNode *)vec_last(&items))->loc);
    return fin(p, tup);
  }
  if (first->kind == AST_STARRED) error_at(p, &(Token){.loc = first->loc}, "cannot use starred expression here");
  if (!at(p, TOK_RPAREN) && starts_expr(cur(p)->kind))
    error_at(p, &(Token){.loc = first->loc}, "invalid syntax. Perhaps you forgot a comma?");
  expect(p, TOK_RPAREN, "expected ')'");
  return first;
}

/* list | listcomp: '[' [star_named_expressions] ']' | '[' named_expression for_if_clauses ']' */
static AstNode *parse_list(Parser *p) {
  TokWindow w = window_open(p);
  Token *open = cur(p);
  advance(p);
  AstNode *n = new_node(p, AST_LIST, open->loc);
  if (accept(p, TOK_RBRACKET)) return fin(p, n);
  AstNode *first = parse_star_named(p);
  if (at_comp_for(p)) {
    n = retag(p, n, AST_LISTCOMP);
    n->elt = first;
    parse_comp_clauses(p, n);
    expect(p, TOK_RBRACKET, "expected ']'");
    return fin(p, n);
  }
  PtrVec items = {0};
  vec_push(p->a, &items, first);
  while (accept(p, TOK_COMMA) && !at(p, TOK_RBRACKET)) {
    vec_push(p->a, &items, parse_star_named(p));
    window_free(p, &w);
  }
  n->items = to_list(&items);
  expect_close(p, TOK_RBRACKET, "expected ']'", ((AstNode *)vec_last(&items))->loc);
  return fin(p, n);
}

/* dict | set | dictcomp | setcomp:
 *   '{' [double_starred_kvpairs] '}' | '{' star_named_expressions '}'
 *   '{' kvpair for_if_clauses '}' | '{' named_expression for_if_clauses '}'
 *   kvpair: expression ':' expression;  double_starred_kvpair: '**' bitwise_or | kvpair */
static AstNode *parse_brace(Parser *p) {
  TokWindow w = window_open(p);
  Token *open = cur(p);
  advance(p);
  AstNode *n = new_node(p, AST_DICT, open->loc);
  if (accept(p, TOK_RBRACE)) return fin(p, n);
  PtrVec keys = {0}, items = {0};
  bool is_dict;
  if (accept(p, TOK_DSTAR)) {
    is_dict = true;
    vec_push(p->a, &keys, NULL);
    vec_push(p->a, &items, parse_bitor(p));
  } else {
    AstNode *first = parse_star_named(p);
    is_dict = at(p, TOK_COLON) && first->kind != AST_STARRED;
    if (is_dict) {
      advance(p);
      AstNode *v = parse_expr(p);
      if (at_comp_for(p)) {
        n = retag(p, n, AST_DICTCOMP);
        n->key = first;
        n->elt = v;
        parse_comp_clauses(p, n);
        expect(p, TOK_RBRACE, "expected '}'");
        return fin(p, n);
      }
      vec_push(p->a, &keys, first);
      vec_push(p->a, &items, v);
    } else {
      if (at_comp_for(p)) {
        n = retag(p, n, AST_SETCOMP);
        n->elt = first;
        parse_comp_clauses(p, n);
        expect(p, TOK_RBRACE, "expected '}'");
        return fin(p, n);
      }
      vec_push(p->a, &items, first);
    }
  }
  while (accept(p, TOK_COMMA) && !at(p, TOK_RBRACE)) {
    if (!is_dict) {
      vec_push(p->a, &items, parse_star_named(p));
    } else if (accept(p, TOK_DSTAR)) {
      vec_push(p->a, &keys, NULL);
      vec_push(p->a, &items, parse_bitor(p));
    } else {
      vec_push(p->a, &keys, parse_expr(p));
      expect(p, TOK_COLON, "':' expected after dictionary key");
      vec_push(p->a, &items, parse_expr(p));
    }
    if (p->panic) break;
    window_free(p, &w);
  }
  if (!is_dict) n = retag(p, n, AST_SET);
  n->items = to_list(&items);
  if (is_dict) n->keys = to_list(&keys);
  expect_close(p, TOK_RBRACE, "expected '}'", ((AstNode *)vec_last(&items))->loc);
  return fin(p, n);
}

/* atom: NAME | 'True' | 'False' | 'None' | strings | NUMBER | tuple | group | genexp
 *     | list | listcomp | dict | set | dictcomp | setcomp | '...' */
static AstNode *parse_atom(Parser *p) {
  Token *t = cur(p);
  AstNode *n;
  switch (t->kind) {
  case TOK_NAME:
    n = new_node(p, AST_NAME, t->loc);
    n->id = tok_str(p, t);
    if (t->bad) p->panic = true;
    advance(p);
    return fin(p, n);
  case TOK_NUMBER:
    if (t->is_float) {
      n = new_node(p, AST_CONST_FLOAT, t->loc);
      n->fval = t->fval;
      n->is_imag = t->is_imag;
    } else {
      n = new_node(p, AST_CONST_INT, t->loc);
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
    advance(p);
    return fin(p, n);
  case TOK_STRING: return parse_strings(p);
  case TOK_KW_TRUE: n = new_node(p, AST_CONST_TRUE, t->loc); advance(p); return fin(p, n);
  case TOK_KW_FALSE: n = new_node(p, AST_CONST_FALSE, t->loc); advance(p); return fin(p, n);
  case TOK_KW_NONE: n = new_node(p, AST_CONST_NONE, t->loc); advance(p); return fin(p, n);
  case TOK_ELLIPSIS: n = new_node(p, AST_CONST_ELLIPSIS, t->loc); advance(p); return fin(p, n);
  case TOK_LPAREN: return parse_paren(p);
  case TOK_LBRACKET: return parse_list(p);
  case TOK_LBRACE: return parse_brace(p);
  case TOK_INDENT:
    error_at(p, t, "unexpected indent");
    return error_node(p);
  case TOK_NEWLINE: case TOK_EOF: case TOK_DEDENT:
    error_at(p, t, "invalid syntax");
    return error_node(p);
  default:
    error_at(p, t, "invalid syntax");
    return error_node(p);
  }
}

/* ---- calls and subscripts ---------------------------------------------------------------- */

typedef struct ArgsOut {
  PtrVec pos;
  int nkw, capkw;
  AstKeyword *kw;
} ArgsOut;

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
static void parse_arguments(Parser *p, ArgsOut *o, SrcLoc open_loc) {
  bool seen_kw = false, seen_kwunpack = false;
  SrcLoc last = open_loc;
  TokWindow w = window_open(p);
  while (!at(p, TOK_RPAREN) && !p->panic) {
    Token *t = cur(p);
    last = t->loc;
    if (accept(p, TOK_STAR)) {
      AstNode *s = new_node(p, AST_STARRED, t->loc);
      s->value = parse_expr(p);
      if (seen_kwunpack)
        error_at(p, t, "iterable argument unpacking follows keyword argument unpacking");
      vec_push(p->a, &o->pos, fin(p, s));
    } else if (accept(p, TOK_DSTAR)) {
      push_kw(p, o, NULL, parse_expr(p), t->loc);
      seen_kwunpack = true;
    } else if (t->kind == TOK_NAME && kind_at(p, 1) == TOK_ASSIGN) {
      advance(p);
      advance(p);
      push_kw(p, o, tok_str(p, t), parse_expr(p), t->loc);
      seen_kw = true;
    } else {
      AstNode *e = parse_named(p);
      if (at_comp_for(p)) {
        AstNode *g = new_node(p, AST_GENEXP, e->loc);
        g->elt = e;
        parse_comp_clauses(p, g);
        fin(p, g);
        if (o->pos.len || o->nkw || !(at(p, TOK_RPAREN) || (at(p, TOK_COMMA) && kind_at(p, 1) == TOK_RPAREN)))
          error_at(p, &(Token){.loc = e->loc}, "Generator expression must be parenthesized");
        e = g;
      } else if (at(p, TOK_ASSIGN)) {
        error_at(p, cur(p), "expression cannot contain assignment, perhaps you meant \"==\"?");
      }
      if (seen_kwunpack)
        error_at(p, t, "positional argument follows keyword argument unpacking");
      else if (seen_kw)
        error_at(p, t, "positional argument follows keyword argument");
      vec_push(p->a, &o->pos, e);
    }
    if (!accept(p, TOK_COMMA)) break;
    window_free(p, &w);
  }
  if (!at(p, TOK_RPAREN) && !p->panic) {
    if (at(p, TOK_EOF) || at(p, TOK_NEWLINE))
      error_at(p, cur(p), "'(' was never closed");
    else if (starts_expr(cur(p)->kind))
      error_at(p, &(Token){.loc = last}, "invalid syntax. Perhaps you forgot a comma?");
    else
      error_at(p, cur(p), "invalid syntax");
  }
  accept(p, TOK_RPAREN);
}

/* slice: [expression] ':' [expression] [':' [expression]] | named_expression
 * (also starred_expression inside a tuple of slices, Python 3.11) */
static AstNode *parse_slice(Parser *p) {
  Token *t = cur(p);
  if (accept(p, TOK_STAR)) {
    AstNode *s = new_node(p, AST_STARRED, t->loc);
    s->value = parse_bitor(p);
    return fin(p, s);
  }
  AstNode *lo = NULL;
  if (!at(p, TOK_COLON)) {
    lo = parse_named(p);
    if (!at(p, TOK_COLON)) return lo;
  }
  AstNode *s = new_node(p, AST_SLICE, t->loc);
  s->lo = lo;
  advance(p); /* ':' */
  if (!at(p, TOK_COLON) && !at(p, TOK_RBRACKET) && !at(p, TOK_COMMA)) s->hi = parse_expr(p);
  if (accept(p, TOK_COLON) && !at(p, TOK_RBRACKET) && !at(p, TOK_COMMA)) s->step = parse_expr(p);
  return fin(p, s);
}

/* slices: slice !',' | ','.(slice | starred_expression)+ [','] */
static AstNode *parse_slices(Parser *p) {
  Token *t = cur(p);
  AstNode *first = parse_slice(p);
  if (!at(p, TOK_COMMA) && first->kind != AST_STARRED) return first;
  AstNode *tup = new_node(p, AST_TUPLE, t->loc);
  PtrVec items = {0};
  vec_push(p->a, &items, first);
  TokWindow w = window_open(p);
  while (accept(p, TOK_COMMA) && !at(p, TOK_RBRACKET) && !p->panic) {
    vec_push(p->a, &items, parse_slice(p));
    window_free(p, &w);
  }
  tup->items = to_list(&items);
  return fin(p, tup);
}

/* primary: atom ('.' NAME | genexp | '(' [arguments] ')' | '[' slices ']')* */
static AstNode *parse_primary(Parser *p) {
  SrcLoc start = cur(p)->loc; /* '(' of a parenthesized atom, as in CPython */
  AstNode *n = parse_atom(p);
  int links = 0;
  for (;;) {
    if (p->panic) return n;
    Token *t = cur(p);
    if ((at(p, TOK_DOT) || at(p, TOK_LPAREN) || at(p, TOK_LBRACKET)) && !chain_link(p, &links)) return n;
    if (accept(p, TOK_DOT)) {
      AstNode *a = new_node(p, AST_ATTRIBUTE, start);
      a->value = n;
      if (at(p, TOK_NAME)) {
        a->id = tok_str(p, cur(p));
        advance(p);
      } else {
        error_at(p, cur(p), "invalid syntax");
        a->id = "<error>";
      }
      n = fin(p, a);
    } else if (accept(p, TOK_LPAREN)) {
      AstNode *call = new_node(p, AST_CALL, start);
      call->func = n;
      ArgsOut o = {0};
      parse_arguments(p, &o, t->loc);
      call->items = to_list(&o.pos);
      call->kwargs = o.kw;
      call->nkwargs = o.nkw;
      n = fin(p, call);
    } else if (accept(p, TOK_LBRACKET)) {
      AstNode *s = new_node(p, AST_SUBSCRIPT, start);
      s->value = n;
      if (at(p, TOK_RBRACKET)) {
        error_at(p, cur(p), "invalid syntax");
        s->index = error_node(p);
      } else {
        s->index = parse_slices(p);
      }
      expect(p, TOK_RBRACKET, "expected ']'");
      n = fin(p, s);
    } else {
      return n;
    }
    if (p->panic) return n;
  }
}

/* ---- operators ------------------------------------------------------------------------ */

/* await_primary: 'await' primary | primary */
static AstNode *parse_await(Parser *p) {
  Token *t = cur(p);
  if (!accept(p, TOK_KW_AWAIT)) return parse_primary(p);
  AstNode *n = new_node(p, AST_AWAIT, t->loc);
  n->value = parse_primary(p);
  return fin(p, n);
}

static AstNode *parse_factor(Parser *p);

/* power: await_primary '**' factor   (right-associative; -2**2 == -(2**2)) */
static AstNode *parse_power(Parser *p) {
  SrcLoc start = cur(p)->loc;
  AstNode *base = parse_await(p);
  if (!accept(p, TOK_DSTAR)) return base;
  AstNode *n = new_node(p, AST_BINOP, start);
  n->op = AOP_POW;
  n->left = base;
  /* 2 ** 2 ** 2 ... recurses (right-associative): bounded like any nesting. */
  if (!enter(p)) {
    n->right = error_node(p);
  } else {
    n->right = parse_factor(p);
    leave(p);
  }
  return fin(p, n);
}

/* factor: '+' factor | '-' factor | '~' factor | power */
static AstNode *parse_factor(Parser *p) {
  Token *t = cur(p);
  AstOp op;
  switch (t->kind) {
  case TOK_PLUS: op = AOP_UADD; break;
  case TOK_MINUS: op = AOP_USUB; break;
  case TOK_TILDE: op = AOP_INVERT; break;
  default: return parse_power(p);
  }
  advance(p);
  AstNode *n = new_node(p, AST_UNARYOP, t->loc);
  n->op = op;
  if (!enter(p)) {
    n->value = error_node(p);
  } else {
    n->value = parse_factor(p);
    leave(p);
  }
  return fin(p, n);
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
  SrcLoc start = cur(p)->loc;
  AstNode *left = next(p);
  int links = 0;
  for (;;) {
    int r = 0;
    while (r < nrows && !at(p, rows[r].tok)) r++;
    if (r == nrows || p->panic) return left;
    if (!chain_link(p, &links)) return left;
    advance(p);
    AstNode *n = new_node(p, AST_BINOP, start);
    n->op = rows[r].op;
    n->left = left;
    n->right = next(p);
    left = fin(p, n);
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
  switch (cur(p)->kind) {
  case TOK_EQ: advance(p); return AOP_EQ;
  case TOK_NE: advance(p); return AOP_NOTEQ;
  case TOK_LT: advance(p); return AOP_LT;
  case TOK_LE: advance(p); return AOP_LTE;
  case TOK_GT: advance(p); return AOP_GT;
  case TOK_GE: advance(p); return AOP_GTE;
  case TOK_KW_IN: advance(p); return AOP_IN;
  case TOK_KW_IS:
    advance(p);
    return accept(p, TOK_KW_NOT) ? AOP_ISNOT : AOP_IS;
  case TOK_KW_NOT:
    if (kind_at(p, 1) != TOK_KW_IN) return -1;
    advance(p);
    advance(p);
    return AOP_NOTIN;
  default: return -1;
  }
}

/* comparison: bitwise_or compare_op_bitwise_or_pair+ | bitwise_or
 * (a < b < c is one node with two operators, evaluated pairwise) */
static AstNode *parse_comparison(Parser *p) {
  SrcLoc start = cur(p)->loc;
  AstNode *left = parse_bitor(p);
  int op = accept_compare_op(p);
  if (op < 0) return left;
  AstNode *n = new_node(p, AST_COMPARE, start);
  n->left = left;
  PtrVec items = {0}, ops = {0};
  do {
    vec_push(p->a, &ops, (void *)(intptr_t)op);
    vec_push(p->a, &items, parse_bitor(p));
  } while (!p->panic && (op = accept_compare_op(p)) >= 0);
  n->items = to_list(&items);
  n->ops = ARENA_ARRAY(p->a, AstOp, ops.len);
  for (int i = 0; i < ops.len; i++) n->ops[i] = (AstOp)(intptr_t)ops.items[i];
  return fin(p, n);
}

/* inversion: 'not' inversion | comparison */
static AstNode *parse_inversion(Parser *p) {
  Token *t = cur(p);
  if (!accept(p, TOK_KW_NOT)) return parse_comparison(p);
  AstNode *n = new_node(p, AST_UNARYOP, t->loc);
  n->op = AOP_NOT;
  if (!enter(p)) {
    n->value = error_node(p);
  } else {
    n->value = parse_inversion(p);
    leave(p);
  }
  return fin(p, n);
}

static AstNode *parse_boolop(Parser *p, TokKind tok, AstOp op, ParseFn next) {
  SrcLoc start = cur(p)->loc;
  AstNode *first = next(p);
  if (!at(p, tok)) return first;
  AstNode *n = new_node(p, AST_BOOLOP, start);
  n->op = op;
  PtrVec items = {0};
  vec_push(p->a, &items, first);
  while (!p->panic && accept(p, tok)) vec_push(p->a, &items, next(p));
  n->items = to_list(&items);
  return fin(p, n);
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
static AstParams parse_params(Parser *p, TokKind close, bool annotations) {
  int cap = 4, n = 0;
  AstParam *items = ARENA_ARRAY(p->a, AstParam, cap);
  bool seen_slash = false, seen_star = false, seen_default = false, seen_varkw = false;
  int star_index = -1; /* index of a bare '*' position (number of params before it) */
  Token *bare_star = NULL;
  while (!at(p, close) && !p->panic) {
    Token *t = cur(p);
    if (seen_varkw) {
      error_at(p, t, "arguments cannot follow var-keyword argument");
      break;
    }
    if (accept(p, TOK_SLASH)) {
      if (seen_slash) error_at(p, t, "/ may appear only once");
      else if (seen_star) error_at(p, t, "/ must be ahead of *");
      else if (n == 0) error_at(p, t, "at least one argument must precede /");
      for (int i = 0; i < n; i++) items[i].kind = APARAM_POSONLY;
      seen_slash = true;
      if (!accept(p, TOK_COMMA)) break;
      continue;
    }
    AstParamKind kind = seen_star ? APARAM_KWONLY : APARAM_NORMAL;
    if (accept(p, TOK_STAR)) {
      if (seen_star) {
        error_at(p, t, "* argument may appear only once");
        break;
      }
      seen_star = true;
      if (!at(p, TOK_NAME)) {
        /* bare '*': keyword-only parameters must follow */
        bare_star = t;
        star_index = n;
        if (!accept(p, TOK_COMMA)) break;
        continue;
      }
      kind = APARAM_VARARGS;
    } else if (accept(p, TOK_DSTAR)) {
      kind = APARAM_VARKW;
      seen_varkw = true;
    }
    if (!at(p, TOK_NAME)) {
      error_at(p, cur(p), "invalid syntax");
      break;
    }
    AstParam prm = {0};
    prm.name = tok_str(p, cur(p));
    prm.loc = cur(p)->loc;
    prm.kind = kind;
    advance(p);
    for (int i = 0; i < n; i++)
      if (!strcmp(items[i].name, prm.name)) {
        error_at(p, tok(p, p->pos - 1), "duplicate argument '%s' in function definition", prm.name);
        break;
      }
    if (annotations && accept(p, TOK_COLON)) {
      prm.annotation = (kind == APARAM_VARARGS && at(p, TOK_STAR)) ? parse_star_named(p) : parse_expr(p);
    }
    if (at(p, TOK_ASSIGN)) {
      Token *eq = cur(p);
      advance(p);
      if (kind == APARAM_VARARGS || kind == APARAM_VARKW)
        error_at(p, eq, "var-%s argument cannot have default value",
                 kind == APARAM_VARARGS ? "positional" : "keyword");
      prm.default_value = parse_expr(p);
      if (kind == APARAM_NORMAL) seen_default = true;
    } else if (kind == APARAM_NORMAL && seen_default) {
      error_at(p, t, "non-default argument follows default argument");
    }
    if (n == cap) {
      AstParam *ni = ARENA_ARRAY(p->a, AstParam, cap * 2);
      memcpy(ni, items, sizeof(AstParam) * (size_t)n);
      items = ni;
      cap *= 2;
    }
    items[n++] = prm;
    if (!accept(p, TOK_COMMA)) break;
  }
  if (bare_star && !p->panic && (n == star_index || items[star_index].kind == APARAM_VARKW))
    error_at(p, bare_star, "named arguments must follow bare *");
  return (AstParams){items, n};
}

/* ---- expressions ------------------------------------------------------------------------- */

/* lambdef: 'lambda' [lambda_params] ':' expression */
static AstNode *parse_lambda(Parser *p) {
  Token *t = cur(p);
  advance(p);
  AstNode *n = new_node(p, AST_LAMBDA, t->loc);
  n->params = parse_params(p, TOK_COLON, false);
  expect(p, TOK_COLON, "expected ':'");
  n->value = parse_expr(p);
  return fin(p, n);
}

/* expression: disjunction 'if' disjunction 'else' expression | disjunction | lambdef */
static AstNode *parse_expr(Parser *p) {
  if (!enter(p)) return error_node(p);
  AstNode *r;
  SrcLoc start = cur(p)->loc;
  if (at(p, TOK_KW_LAMBDA)) {
    r = parse_lambda(p);
  } else {
    r = parse_disjunction(p);
    if (at(p, TOK_KW_IF) && !p->panic) {
      advance(p);
      AstNode *n = new_node(p, AST_IFEXP, start);
      n->left = r;
      n->test = parse_disjunction(p);
      if (expect(p, TOK_KW_ELSE, "expected 'else' after 'if' expression")) n->right = parse_expr(p);
      else n->right = error_node(p);
      r = fin(p, n);
    }
  }
  leave(p);
  return r;
}

/* named_expression: NAME ':=' expression | expression !':=' */
static AstNode *parse_named(Parser *p) {
  Token *t = cur(p);
  if (t->kind == TOK_NAME && kind_at(p, 1) == TOK_WALRUS) {
    AstNode *n = new_node(p, AST_NAMEDEXPR, t->loc);
    AstNode *target = new_node(p, AST_NAME, t->loc);
    target->id = tok_str(p, t);
    advance(p);
    fin(p, target);
    advance(p);
    n->left = target;
    n->value = parse_expr(p);
    return fin(p, n);
  }
  AstNode *e = parse_expr(p);
  if (at(p, TOK_WALRUS)) error_at(p, cur(p), "cannot use assignment expressions with %s",
                                  e->kind == AST_ATTRIBUTE ? "attribute" :
                                  e->kind == AST_SUBSCRIPT ? "subscript" : "expression");
  return e;
}

/* star_named_expression: '*' bitwise_or | named_expression */
static AstNode *parse_star_named(Parser *p) {
  Token *t = cur(p);
  if (!accept(p, TOK_STAR)) return parse_named(p);
  AstNode *n = new_node(p, AST_STARRED, t->loc);
  n->value = parse_bitor(p);
  return fin(p, n);
}

/* star_expressions: star_expression (',' star_expression)* [',']
 * star_expression: '*' bitwise_or | expression */
static AstNode *parse_star_exprs(Parser *p) {
  Token *t = cur(p);
  AstNode *first;
  if (accept(p, TOK_STAR)) {
    first = new_node(p, AST_STARRED, t->loc);
    first->value = parse_bitor(p);
    fin(p, first);
  } else {
    first = parse_expr(p);
  }
  if (!at(p, TOK_COMMA)) return first;
  AstNode *tup = new_node(p, AST_TUPLE, t->loc);
  PtrVec items = {0};
  vec_push(p->a, &items, first);
  TokWindow w = window_open(p);
  while (!p->panic && accept(p, TOK_COMMA) && starts_expr(cur(p)->kind)) {
    Token *s = cur(p);
    if (accept(p, TOK_STAR)) {
      AstNode *st = new_node(p, AST_STARRED, s->loc);
      st->value = parse_bitor(p);
      vec_push(p->a, &items, fin(p, st));
    } else {
      vec_push(p->a, &items, parse_expr(p));
    }
    window_free(p, &w);
  }
  tup->items = to_list(&items);
  return fin(p, tup);
}

/* yield_expr: 'yield' 'from' expression | 'yield' [star_expressions] */
static AstNode *parse_yield(Parser *p) {
  Token *t = cur(p);
  advance(p);
  if (accept(p, TOK_KW_FROM)) {
    AstNode *n = new_node(p, AST_YIELDFROM, t->loc);
    n->value = parse_expr(p);
    return fin(p, n);
  }
  AstNode *n = new_node(p, AST_YIELD, t->loc);
  if (starts_expr(cur(p)->kind)) n->value = parse_star_exprs(p);
  return fin(p, n);
}

/* ---- targets --------------------------------------------------------------------------- */

/* What CPython calls an expression that cannot be assigned to, for the message. */
static const char *target_desc(const AstNode *n) {
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
static void check_target(Parser *p, const AstNode *n, const char *verb) {
  switch (n->kind) {
  case AST_NAME: case AST_ATTRIBUTE: case AST_SUBSCRIPT: return;
  case AST_TUPLE: case AST_LIST:
    for (int i = 0; i < n->items.n; i++) check_target(p, n->items.items[i], verb);
    return;
  case AST_STARRED:
    if (!strcmp(verb, "delete")) break;
    check_target(p, n->value, verb);
    return;
  default: break;
  }
  if (n->kind == AST_NAME && !strcmp(n->id, "<error>")) return;
  error_at(p, &(Token){.loc = n->loc}, "cannot %s %s", verb,
           n->kind == AST_STARRED ? "starred" : target_desc(n));
}

/* star_target: '*' star_target | target_with_star_atom
 * star_targets: star_target (',' star_target)* [',']
 * Parsed at `primary` level so that the 'in' of a for loop is not taken as an operator. */
static AstNode *parse_star_target(Parser *p) {
  Token *t = cur(p);
  if (!accept(p, TOK_STAR)) return parse_primary(p);
  AstNode *n = new_node(p, AST_STARRED, t->loc);
  if (!enter(p)) return error_node(p);
  n->value = parse_star_target(p);
  leave(p);
  return fin(p, n);
}

static AstNode *parse_target_list(Parser *p) {
  Token *t = cur(p);
  AstNode *first = parse_star_target(p);
  if (at(p, TOK_COMMA)) {
    AstNode *tup = new_node(p, AST_TUPLE, t->loc);
    PtrVec items = {0};
    vec_push(p->a, &items, first);
    while (!p->panic && accept(p, TOK_COMMA) && (starts_expr(cur(p)->kind)))
      vec_push(p->a, &items, parse_star_target(p));
    tup->items = to_list(&items);
    first = fin(p, tup);
  }
  check_target(p, first, "assign to");
  return first;
}

/* ---- statements -------------------------------------------------------------------------- */

static AstNode *new_stmt(Parser *p, AstKind k) { return new_node(p, k, cur(p)->loc); }

/* Skips the rest of a broken statement: up to and including the next NEWLINE (never
 * past an INDENT/DEDENT, which belong to the block structure). */
static void synchronize(Parser *p) {
  /* The skipped tokens go as they are passed (a 5 MB line after an error is not kept). */
  TokWindow w = window_open(p);
  while (!at(p, TOK_EOF) && !at(p, TOK_NEWLINE) && !at(p, TOK_INDENT) && !at(p, TOK_DEDENT)) {
    advance(p);
    window_free(p, &w);
  }
  accept(p, TOK_NEWLINE);
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
  if (!p->panic && !at(p, TOK_COLON)) error_at(p, cur(p), "%s", colon_msg);
  if (p->panic) {
    synchronize(p);
    if (accept(p, TOK_INDENT)) {
      parse_stmts_until_dedent(p, &out);
      accept(p, TOK_DEDENT);
    }
    return to_list(&out);
  }
  advance(p); /* ':' */
  if (!accept(p, TOK_NEWLINE)) {
    parse_simple_stmts(p, &out);
    return to_list(&out);
  }
  if (!at(p, TOK_INDENT)) {
    error_at(p, cur(p), "expected an indented block after %s on line %d", what, hdr.line);
    p->panic = false; /* we are at the start of the next statement already */
    return to_list(&out);
  }
  advance(p);
  parse_stmts_until_dedent(p, &out);
  accept(p, TOK_DEDENT);
  return to_list(&out);
}

static AstList parse_block(Parser *p, const char *what, SrcLoc hdr) {
  return parse_block_msg(p, what, hdr, "expected ':'");
}

/* dotted_name: NAME ('.' NAME)* */
static const char *parse_dotted_name(Parser *p) {
  StrBuf sb = {0};
  do {
    if (!at(p, TOK_NAME)) {
      error_at(p, cur(p), "invalid syntax");
      break;
    }
    if (sb.len) sb_putc(&sb, '.');
    sb_appendn(&sb, cur(p)->text, cur(p)->len);
    advance(p);
  } while (accept(p, TOK_DOT));
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
  if (!accept(p, TOK_KW_AS)) return NULL;
  if (!at(p, TOK_NAME)) {
    error_at(p, cur(p), "invalid syntax");
    return NULL;
  }
  const char *s = tok_str(p, cur(p));
  advance(p);
  return s;
}

/* import_name: 'import' dotted_as_names;  dotted_as_name: dotted_name ['as' NAME] */
static AstNode *parse_import(Parser *p) {
  AstNode *n = new_stmt(p, AST_IMPORT);
  advance(p);
  AliasVec v = {0};
  do {
    AstAlias al = {0};
    al.loc = cur(p)->loc;
    al.name = parse_dotted_name(p);
    al.asname = parse_as_name(p);
    push_alias(p, &v, al);
  } while (!p->panic && accept(p, TOK_COMMA));
  n->aliases = v.items;
  n->naliases = v.n;
  return fin(p, n);
}

/* import_from: 'from' ('.' | '...')* dotted_name 'import' import_from_targets
 *            | 'from' ('.' | '...')+ 'import' import_from_targets
 * import_from_targets: '(' import_from_as_names [','] ')' | import_from_as_names !',' | '*' */
static AstNode *parse_import_from(Parser *p) {
  AstNode *n = new_stmt(p, AST_IMPORTFROM);
  advance(p);
  for (;;) {
    if (accept(p, TOK_DOT)) n->level += 1;
    else if (accept(p, TOK_ELLIPSIS)) n->level += 3;
    else break;
  }
  if (!at(p, TOK_KW_IMPORT) || n->level == 0) n->id = parse_dotted_name(p);
  if (!expect(p, TOK_KW_IMPORT, "expected 'import'")) return fin(p, n);
  AliasVec v = {0};
  Token *star = cur(p);
  if (accept(p, TOK_STAR)) {
    push_alias(p, &v, (AstAlias){"*", NULL, star->loc});
  } else {
    bool paren = accept(p, TOK_LPAREN);
    do {
      if (paren && at(p, TOK_RPAREN)) break;
      if (!at(p, TOK_NAME)) {
        error_at(p, cur(p), "invalid syntax");
        break;
      }
      AstAlias al = {0};
      al.loc = cur(p)->loc;
      al.name = tok_str(p, cur(p));
      advance(p);
      al.asname = parse_as_name(p);
      push_alias(p, &v, al);
      if (!paren && at(p, TOK_COMMA) && (kind_at(p, 1) == TOK_NEWLINE || kind_at(p, 1) == TOK_SEMI)) {
        error_at(p, cur(p), "trailing comma not allowed without surrounding parentheses");
        break;
      }
    } while (!p->panic && accept(p, TOK_COMMA));
    if (paren) expect(p, TOK_RPAREN, "expected ')'");
  }
  n->aliases = v.items;
  n->naliases = v.n;
  return fin(p, n);
}

/* global_stmt: 'global' ','.NAME+ ;  nonlocal_stmt: 'nonlocal' ','.NAME+ */
static AstNode *parse_global(Parser *p, AstKind k) {
  AstNode *n = new_stmt(p, k);
  advance(p);
  PtrVec names = {0};
  do {
    if (!at(p, TOK_NAME)) {
      error_at(p, cur(p), "invalid syntax");
      break;
    }
    vec_push(p->a, &names, (void *)tok_str(p, cur(p)));
    advance(p);
  } while (accept(p, TOK_COMMA));
  n->names = (const char **)names.items;
  n->nnames = names.len;
  return fin(p, n);
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
  return at(p, TOK_KW_YIELD) ? parse_yield(p) : parse_star_exprs(p);
}

/* assignment: NAME ':' expression ['=' annotated_rhs]
 *           | (single_target) ':' expression ['=' annotated_rhs]
 *           | (star_targets '=')+ (yield_expr | star_expressions)
 *           | single_target augassign (yield_expr | star_expressions)
 * star_expressions (an expression statement) otherwise. */
static AstNode *parse_expr_stmt(Parser *p) {
  Token *t = cur(p);
  AstNode *first = parse_rhs(p);
  AstOp op;
  if (p->panic) return first;
  if (at(p, TOK_COLON)) {
    AstNode *n = new_node(p, AST_ANNASSIGN, t->loc);
    if (first->kind == AST_TUPLE || first->kind == AST_LIST)
      error_at(p, &(Token){.loc = first->loc}, "only single target (not %s) can be annotated",
               first->kind == AST_TUPLE ? "tuple" : "list");
    else if (first->kind != AST_NAME && first->kind != AST_ATTRIBUTE && first->kind != AST_SUBSCRIPT)
      error_at(p, &(Token){.loc = first->loc}, "illegal target for annotation");
    advance(p);
    n->target = first;
    n->annotation = parse_expr(p);
    if (accept(p, TOK_ASSIGN)) n->value = parse_rhs(p);
    return fin(p, n);
  }
  if (augassign_op(cur(p)->kind, &op)) {
    AstNode *n = new_node(p, AST_AUGASSIGN, t->loc);
    if (first->kind != AST_NAME && first->kind != AST_ATTRIBUTE && first->kind != AST_SUBSCRIPT)
      error_at(p, &(Token){.loc = first->loc}, "'%s' is an illegal expression for augmented assignment",
               first->kind == AST_TUPLE ? "tuple" : first->kind == AST_LIST ? "list" : target_desc(first));
    advance(p);
    n->target = first;
    n->op = op;
    n->value = parse_rhs(p);
    return fin(p, n);
  }
  if (at(p, TOK_ASSIGN)) {
    AstNode *n = new_node(p, AST_ASSIGN, t->loc);
    PtrVec targets = {0};
    AstNode *value = first;
    while (!p->panic && accept(p, TOK_ASSIGN)) {
      vec_push(p->a, &targets, value);
      value = parse_rhs(p);
    }
    for (int i = 0; i < targets.len; i++) check_target(p, targets.items[i], "assign to");
    n->items = to_list(&targets);
    n->value = value;
    return fin(p, n);
  }
  AstNode *n = new_node(p, AST_EXPR, t->loc);
  n->value = first;
  return fin(p, n);
}

/* simple_stmt: assignment | star_expressions | return_stmt | import_stmt | raise_stmt
 *            | 'pass' | del_stmt | yield_stmt | assert_stmt | 'break' | 'continue'
 *            | global_stmt | nonlocal_stmt */
static AstNode *parse_simple_stmt(Parser *p) {
  Token *t = cur(p);
  AstNode *n;
  switch (t->kind) {
  case TOK_KW_PASS: n = new_stmt(p, AST_PASS); advance(p); return fin(p, n);
  case TOK_KW_BREAK: n = new_stmt(p, AST_BREAK); advance(p); return fin(p, n);
  case TOK_KW_CONTINUE: n = new_stmt(p, AST_CONTINUE); advance(p); return fin(p, n);
  case TOK_KW_RETURN:
    /* return_stmt: 'return' [star_expressions] */
    n = new_stmt(p, AST_RETURN);
    advance(p);
    if (starts_expr(cur(p)->kind) || at(p, TOK_KW_YIELD)) n->value = parse_rhs(p);
    return fin(p, n);
  case TOK_KW_RAISE:
    /* raise_stmt: 'raise' expression ['from' expression] | 'raise' */
    n = new_stmt(p, AST_RAISE);
    advance(p);
    if (starts_expr(cur(p)->kind)) {
      n->value = parse_expr(p);
      if (accept(p, TOK_KW_FROM)) n->cause = parse_expr(p);
    }
    return fin(p, n);
  case TOK_KW_DEL: {
    /* del_stmt: 'del' del_targets &(';' | NEWLINE);  del_targets: ','.del_target+ [','] */
    n = new_stmt(p, AST_DELETE);
    advance(p);
    PtrVec targets = {0};
    do {
      if (!starts_expr(cur(p)->kind)) break;
      AstNode *d = parse_primary(p);
      check_target(p, d, "delete");
      vec_push(p->a, &targets, d);
    } while (!p->panic && accept(p, TOK_COMMA));
    if (!targets.len) error_at(p, cur(p), "invalid syntax");
    n->items = to_list(&targets);
    return fin(p, n);
  }
  case TOK_KW_ASSERT:
    /* assert_stmt: 'assert' expression [',' expression] */
    n = new_stmt(p, AST_ASSERT);
    advance(p);
    n->test = parse_expr(p);
    if (accept(p, TOK_COMMA)) n->msg = parse_expr(p);
    return fin(p, n);
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
    if (!accept(p, TOK_SEMI) || at(p, TOK_NEWLINE) || at(p, TOK_EOF)) break;
  }
  if (accept(p, TOK_NEWLINE) || at(p, TOK_EOF)) return;
  error_at(p, cur(p), "invalid syntax");
}

/* function_def_raw: ['async'] 'def' NAME '(' [params] ')' ['->' expression] ':' block */
static AstNode *parse_funcdef(Parser *p, AstList decorators, bool is_async, SrcLoc loc) {
  AstNode *n = new_node(p, AST_FUNCTIONDEF, loc);
  n->is_async = is_async;
  n->decorators = decorators;
  advance(p); /* def */
  if (at(p, TOK_NAME)) {
    n->id = tok_str(p, cur(p));
    advance(p);
  } else {
    error_at(p, cur(p), "invalid syntax");
    n->id = "<error>";
  }
  if (expect(p, TOK_LPAREN, "expected '('")) {
    n->params = parse_params(p, TOK_RPAREN, true);
    if (!p->panic) expect(p, TOK_RPAREN, at(p, TOK_EOF) || at(p, TOK_NEWLINE) ? "'(' was never closed" : "invalid syntax");
    if (!p->panic && accept(p, TOK_ARROW)) n->returns = parse_expr(p);
  }
  fin(p, n); /* the node spans the signature; the body is in n->body */
  AstEnd end = n->end;
  n->body = parse_block_msg(p, "function definition", loc, "expected ':' after function signature");
  n->end = end;
  return n;
}

/* class_def_raw: 'class' NAME ['(' [arguments] ')'] ':' block */
static AstNode *parse_classdef(Parser *p, AstList decorators, SrcLoc loc) {
  AstNode *n = new_node(p, AST_CLASSDEF, loc);
  n->decorators = decorators;
  advance(p);
  if (at(p, TOK_NAME)) {
    n->id = tok_str(p, cur(p));
    advance(p);
  } else {
    error_at(p, cur(p), "invalid syntax");
    n->id = "<error>";
  }
  Token *open = cur(p);
  if (accept(p, TOK_LPAREN)) {
    ArgsOut o = {0};
    parse_arguments(p, &o, open->loc);
    n->items = to_list(&o.pos);
    n->kwargs = o.kw;
    n->nkwargs = o.nkw;
  }
  fin(p, n);
  AstEnd end = n->end;
  n->body = parse_block(p, "class definition", loc);
  n->end = end;
  return n;
}

/* else_block: 'else' ':' block */
static AstList parse_else(Parser *p) {
  if (!at(p, TOK_KW_ELSE)) return (AstList){0};
  SrcLoc loc = cur(p)->loc;
  advance(p);
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
  TokWindow w = window_open(p);
  do {
    window_free(p, &w); /* the branches before this one */
    SrcLoc loc = cur(p)->loc;
    bool is_elif = cur(p)->kind == TOK_KW_ELIF;
    AstNode *n = new_stmt(p, AST_IF);
    advance(p);
    n->test = parse_named(p);
    fin(p, n);
    AstEnd end = n->end;
    n->body = parse_block(p, is_elif ? "'elif' statement" : "'if' statement", loc);
    n->end = end;
    if (is_elif && ++elifs == MAX_ELIF + 1)
      diag_error(&p->c->diag, loc, "too many 'elif' branches: more than %d in one 'if' statement", MAX_ELIF);
    if (elifs > MAX_ELIF) continue;
    if (last) {
      PtrVec orelse = {0};
      vec_push(p->a, &orelse, n);
      last->orelse = to_list(&orelse);
    } else {
      first = n;
    }
    last = n;
  } while (at(p, TOK_KW_ELIF));
  last->orelse = parse_else(p);
  return first;
}

/* while_stmt: 'while' named_expression ':' block [else_block] */
static AstNode *parse_while(Parser *p) {
  Token *t = cur(p);
  AstNode *n = new_stmt(p, AST_WHILE);
  advance(p);
  n->test = parse_named(p);
  fin(p, n);
  AstEnd end = n->end;
  n->body = parse_block(p, "'while' statement", t->loc);
  n->orelse = parse_else(p);
  n->end = end;
  return n;
}

/* for_stmt: ['async'] 'for' star_targets 'in' star_expressions ':' block [else_block] */
static AstNode *parse_for(Parser *p, bool is_async, SrcLoc loc) {
  AstNode *n = new_node(p, AST_FOR, loc);
  n->is_async = is_async;
  advance(p);
  n->target = parse_target_list(p);
  if (expect(p, TOK_KW_IN, "expected 'in'")) n->iter = parse_star_exprs(p);
  else n->iter = error_node(p);
  fin(p, n);
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
    TokKind k = scan_next(&s);
    if (k == TOK_LPAREN || k == TOK_LBRACKET || k == TOK_LBRACE) depth++;
    else if (k == TOK_RPAREN || k == TOK_RBRACKET || k == TOK_RBRACE) {
      if (--depth == 0) return scan_next(&s) == TOK_COLON;
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
  AstNode *n = new_node(p, AST_WITH, loc);
  n->is_async = is_async;
  advance(p);
  bool paren = false;
  if (at(p, TOK_LPAREN)) paren = closed_before_colon(p);
  if (paren) advance(p);
  int cap = 2, len = 0;
  AstWithItem *items = ARENA_ARRAY(p->a, AstWithItem, cap);
  do {
    if (paren && at(p, TOK_RPAREN) && len > 0) break;
    AstWithItem it = {0};
    it.context = parse_expr(p);
    if (accept(p, TOK_KW_AS)) {
      it.vars = parse_star_target(p);
      check_target(p, it.vars, "assign to");
    }
    if (len == cap) {
      AstWithItem *ni = ARENA_ARRAY(p->a, AstWithItem, cap * 2);
      memcpy(ni, items, sizeof(AstWithItem) * (size_t)len);
      items = ni;
      cap *= 2;
    }
    items[len++] = it;
  } while (!p->panic && accept(p, TOK_COMMA));
  if (paren) expect(p, TOK_RPAREN, "expected ')'");
  n->withitems = items;
  n->nwithitems = len;
  fin(p, n);
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
  Token *t = cur(p);
  AstNode *n = new_stmt(p, AST_TRY);
  advance(p);
  fin(p, n);
  AstEnd end = n->end;
  n->body = parse_block(p, "'try' statement", t->loc);
  int cap = 2, len = 0;
  AstHandler *hs = ARENA_ARRAY(p->a, AstHandler, cap);
  TokWindow w = window_open(p);
  while (at(p, TOK_KW_EXCEPT)) {
    window_free(p, &w); /* the handlers before this one */
    AstHandler h = {0};
    h.loc = cur(p)->loc;
    advance(p);
    bool star = accept(p, TOK_STAR);
    if (!at(p, TOK_COLON)) {
      h.type = parse_expr(p);
      if (at(p, TOK_COMMA)) {
        error_at(p, cur(p), "multiple exception types must be parenthesized");
      } else if (accept(p, TOK_KW_AS)) {
        if (at(p, TOK_NAME)) {
          h.name = tok_str(p, cur(p));
          advance(p);
        } else {
          error_at(p, cur(p), "invalid syntax");
        }
      }
    } else if (star) {
      error_at(p, cur(p), "expected one or more exception types");
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
  if (at(p, TOK_KW_FINALLY)) {
    SrcLoc fl = cur(p)->loc;
    advance(p);
    n->finalbody = parse_block(p, "'finally' statement", fl);
  } else if (!len) {
    error_at(p, cur(p), "expected 'except' or 'finally' block");
    p->panic = false; /* at a statement boundary already */
  }
  n->end = end;
  return n;
}

/* `match` is a soft keyword: `match = re.match(x)` and `match(x)` are ordinary code.
 * A match statement is `match` + subject on a line ending in ':' with an indented
 * block; only that shape is treated as one (and rejected: kernels never use it). */
static bool at_match_stmt(Parser *p) {
  if (!at_name(p, "match")) return false;
  switch (kind_at(p, 1)) {
  case TOK_NAME: case TOK_NUMBER: case TOK_STRING: case TOK_LPAREN: case TOK_LBRACKET:
  case TOK_LBRACE: case TOK_MINUS: case TOK_STAR: case TOK_KW_NOT: case TOK_TILDE:
  case TOK_KW_TRUE: case TOK_KW_FALSE: case TOK_KW_NONE:
    break;
  default:
    return false;
  }
  TokScan s = {.p = p, .i = p->pos + 1};
  TokKind k, last = TOK_EOF;
  for (int depth = 0; (k = scan_next(&s)) != TOK_NEWLINE && k != TOK_EOF; last = k) {
    if (k == TOK_LPAREN || k == TOK_LBRACKET || k == TOK_LBRACE) depth++;
    if (k == TOK_RPAREN || k == TOK_RBRACKET || k == TOK_RBRACE) depth--;
    if (depth == 0 && (k == TOK_ASSIGN || augassign_op(k, &(AstOp){0}))) return false;
  }
  return k == TOK_NEWLINE && last == TOK_COLON && scan_next(&s) == TOK_INDENT;
}

static void skip_match_stmt(Parser *p) {
  error_at(p, cur(p), "match statements are not supported");
  p->panic = false;
  while (!at(p, TOK_NEWLINE) && !at(p, TOK_EOF)) advance(p);
  accept(p, TOK_NEWLINE);
  if (!accept(p, TOK_INDENT)) return;
  TokWindow w = window_open(p);
  for (int depth = 1; depth > 0 && !at(p, TOK_EOF);) {
    if (at(p, TOK_INDENT)) depth++;
    if (at(p, TOK_DEDENT)) depth--;
    advance(p);
    window_free(p, &w);
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
      out->items[i] = new_node(p, AST_PASS, s->loc); /* nothing downstream walks it */
    }
  }
}

/* compound_stmt: function_def | if_stmt | class_def | with_stmt | for_stmt | try_stmt
 *              | while_stmt | match_stmt
 * decorators: ('@' named_expression NEWLINE)+ */
static void parse_statement_inner(Parser *p, PtrVec *out) {
  Token *t = cur(p);
  PtrVec decos = {0};
  switch (t->kind) {
  case TOK_AT:
    while (accept(p, TOK_AT)) {
      vec_push(p->a, &decos, parse_named(p));
      if (p->panic) return;
      if (!expect(p, TOK_NEWLINE, "invalid syntax")) return;
    }
    if (at(p, TOK_KW_DEF)) {
      vec_push(p->a, out, parse_funcdef(p, to_list(&decos), false, cur(p)->loc));
    } else if (at(p, TOK_KW_ASYNC) && kind_at(p, 1) == TOK_KW_DEF) {
      SrcLoc loc = cur(p)->loc;
      advance(p);
      vec_push(p->a, out, parse_funcdef(p, to_list(&decos), true, loc));
    } else if (at(p, TOK_KW_CLASS)) {
      vec_push(p->a, out, parse_classdef(p, to_list(&decos), cur(p)->loc));
    } else {
      error_at(p, cur(p), "invalid syntax");
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
    advance(p);
    if (at(p, TOK_KW_DEF)) vec_push(p->a, out, parse_funcdef(p, (AstList){0}, true, t->loc));
    else if (at(p, TOK_KW_FOR)) vec_push(p->a, out, parse_for(p, true, t->loc));
    else if (at(p, TOK_KW_WITH)) vec_push(p->a, out, parse_with(p, true, t->loc));
    else error_at(p, cur(p), "invalid syntax");
    return;
  case TOK_KW_ELIF: case TOK_KW_ELSE: case TOK_KW_EXCEPT: case TOK_KW_FINALLY:
    error_at(p, t, "invalid syntax");
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
  TokWindow w = window_open(p);
  while (!at(p, TOK_EOF) && !at(p, TOK_DEDENT)) {
    if (at(p, TOK_INDENT)) {
      /* Indented lines with no header: report, then parse them as if they were at the
       * enclosing level so their own errors are still found. */
      if (!p->after_error) error_at(p, cur(p), "unexpected indent");
      p->panic = false;
      p->after_error = false;
      advance(p);
      parse_stmts_until_dedent(p, out);
      accept(p, TOK_DEDENT);
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
    if (p->pos == start) advance(p); /* never loop on a token nothing consumes */
    window_free(p, &w);
  }
}

/* False (after one diagnostic) when the file is over the limits of lex_check_source:
 * then nothing of it is parsed. */
static void parser_release(void *arg) {
  Parser *p = arg;
  for (int i = 0; i < p->nchunks; i++) ts_free(p->chunks[i]);
  ts_free(p->chunks);
  p->chunks = NULL;
  p->nchunks = 0;
  ts_free(p->names);
  p->names = NULL;
}

static bool parser_init(Parser *p, TsCompiler *c, const SourceFile *file) {
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

static void parser_fini(Parser *p) {
  ts_oom_cleanup_pop(&p->oom_cleanup);
  parser_release(p);
}

/* file: [statements] ENDMARKER */
AstNode *parse_module(TsCompiler *c, const SourceFile *file) {
  if (!file || !file->text) return NULL;
  Parser p;
  if (!parser_init(&p, c, file)) return NULL;
  AstNode *m = new_node(&p, AST_MODULE, (SrcLoc){file, 1, 1});
  PtrVec body = {0};
  while (!at(&p, TOK_EOF)) {
    parse_stmts_until_dedent(&p, &body);
    if (at(&p, TOK_DEDENT)) advance(&p); /* cannot happen with a balanced lexer */
  }
  m->body = to_list(&body);
  m->end = ast_end(cur(&p)->end);
  parser_fini(&p);
  return m;
}

/* eval_input: expressions NEWLINE* ENDMARKER  (a -D value such as `(64, 64)`) */
AstNode *parse_expression(TsCompiler *c, const SourceFile *file) {
  if (!file || !file->text) return NULL;
  int errors = c->diag.errors;
  Parser p;
  if (!parser_init(&p, c, file)) return NULL;
  accept(&p, TOK_INDENT); /* leading spaces are harmless in a value */
  AstNode *e = NULL;
  if (at(&p, TOK_NEWLINE) || at(&p, TOK_EOF)) {
    error_at(&p, cur(&p), "expected an expression");
  } else {
    e = parse_star_exprs(&p);
    while (accept(&p, TOK_NEWLINE) || accept(&p, TOK_DEDENT)) {
    }
    if (!at(&p, TOK_EOF)) error_at(&p, cur(&p), "invalid syntax");
  }
  parser_fini(&p);
  return c->diag.errors > errors ? NULL : e;
}
