/* parse_int.h — what the two halves of the parser share: the Parser state, the token
 * helpers (ps_*) and the expression rules of parse.c that the statement rules of
 * parse_stmt.c call (parse_stmt.c also has parse_module; nothing in parse.c calls back).
 * Internal to src/front/parse*.c. */
#ifndef TS_FRONT_PARSE_INT_H
#define TS_FRONT_PARSE_INT_H

#include "ast.h"
#include "lex.h"

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

typedef struct TokWindow {
  int next; /* the next chunk the window may free */
} TokWindow;

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

typedef struct ArgsOut {
  PtrVec pos;
  int nkw, capkw;
  AstKeyword *kw;
} ArgsOut;

/* ---- token helpers and shared rules (parse.c) ---------------------------------------- */
TokWindow ps_window_open(Parser *p);
void ps_window_free(Parser *p, TokWindow *w);
TokKind ps_scan_next(TokScan *s);
Token *ps_cur(Parser *p);
TokKind ps_kind_at(Parser *p, int k);
bool ps_at(Parser *p, TokKind k);
void ps_advance(Parser *p);
bool ps_accept(Parser *p, TokKind k);
bool ps_at_name(Parser *p, const char *s);
TS_PRINTF(3, 4) void ps_error_at(Parser *p, const Token *t, const char *fmt, ...);
bool ps_expect(Parser *p, TokKind k, const char *msg);
AstNode *ps_new_node(Parser *p, AstKind k, SrcLoc loc);
AstNode *ps_fin(Parser *p, AstNode *n);
AstNode *ps_error_node(Parser *p);
const char *ps_tok_str(Parser *p, const Token *t);
AstList ps_to_list(PtrVec *v);
bool ps_starts_expr(TokKind k);
void parse_arguments(Parser *p, ArgsOut *o, SrcLoc open_loc);
AstNode *parse_primary(Parser *p);
AstParams parse_params(Parser *p, TokKind close, bool annotations);
AstNode *parse_expr(Parser *p);
AstNode *parse_named(Parser *p);
AstNode *parse_star_exprs(Parser *p);
AstNode *parse_yield(Parser *p);
const char *ps_target_desc(const AstNode *n);
void ps_check_target(Parser *p, const AstNode *n, const char *verb);
AstNode *parse_star_target(Parser *p);
AstNode *parse_target_list(Parser *p);
/* A Parser over `file` (false: the source was refused, reported); fini releases it. */
bool ps_parser_init(Parser *p, TsCompiler *c, const SourceFile *file);
void ps_parser_fini(Parser *p);

#endif
