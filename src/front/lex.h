/* lex.h — the Python 3.11 tokenizer, first stage of the front end.
 *
 *   source text --lex.c--> tokens --parse.c--> AST (ast.h)
 *
 * The lexer turns a SourceFile into a stream of tokens with INDENT/DEDENT/NEWLINE
 * synthesised the way CPython's tokenizer does (indent stack, implicit joining inside
 * brackets, backslash continuation).  Literals are recognised here: numbers are
 * converted, strings are delimited and their prefix recorded; escape decoding and
 * f-string splitting happen on demand (lex_decode_string, and parse.c re-lexes the
 * expressions inside an f-string with lex_init_fstring_expr).  Malformed input is
 * reported through c->diag and the offending token is flagged `bad` so the parser
 * does not report the same spot twice. */
#ifndef TS_LEX_H
#define TS_LEX_H

#include "../base/compiler.h"

/* Token kinds: X(name, spelling).  Operators are listed longest-first within each
 * leading character by lex.c's matcher, not by this table. */
#define TOK_KINDS(X)                                                                      \
  X(EOF, "end of file") X(NEWLINE, "newline") X(INDENT, "indent") X(DEDENT, "dedent")    \
  X(NAME, "name") X(NUMBER, "number") X(STRING, "string")                                \
  X(LPAREN, "(") X(RPAREN, ")") X(LBRACKET, "[") X(RBRACKET, "]") X(LBRACE, "{")         \
  X(RBRACE, "}") X(COMMA, ",") X(COLON, ":") X(SEMI, ";") X(DOT, ".") X(ELLIPSIS, "...") \
  X(ARROW, "->") X(ASSIGN, "=") X(WALRUS, ":=") X(BANG, "!")                             \
  X(PLUS, "+") X(MINUS, "-") X(STAR, "*") X(SLASH, "/") X(DSLASH, "//") X(PERCENT, "%")  \
  X(DSTAR, "**") X(AT, "@") X(LSHIFT, "<<") X(RSHIFT, ">>") X(AMP, "&") X(PIPE, "|")     \
  X(CARET, "^") X(TILDE, "~") X(LT, "<") X(GT, ">") X(LE, "<=") X(GE, ">=") X(EQ, "==")  \
  X(NE, "!=")                                                                            \
  X(PLUS_EQ, "+=") X(MINUS_EQ, "-=") X(STAR_EQ, "*=") X(SLASH_EQ, "/=")                 \
  X(DSLASH_EQ, "//=") X(PERCENT_EQ, "%=") X(DSTAR_EQ, "**=") X(AT_EQ, "@=")              \
  X(LSHIFT_EQ, "<<=") X(RSHIFT_EQ, ">>=") X(AMP_EQ, "&=") X(PIPE_EQ, "|=")                \
  X(CARET_EQ, "^=")                                                                      \
  /* keywords (soft keywords match/case/_ stay NAME) */                                  \
  X(KW_FALSE, "False") X(KW_NONE, "None") X(KW_TRUE, "True") X(KW_AND, "and")            \
  X(KW_AS, "as") X(KW_ASSERT, "assert") X(KW_ASYNC, "async") X(KW_AWAIT, "await")        \
  X(KW_BREAK, "break") X(KW_CLASS, "class") X(KW_CONTINUE, "continue") X(KW_DEF, "def")  \
  X(KW_DEL, "del") X(KW_ELIF, "elif") X(KW_ELSE, "else") X(KW_EXCEPT, "except")          \
  X(KW_FINALLY, "finally") X(KW_FOR, "for") X(KW_FROM, "from") X(KW_GLOBAL, "global")    \
  X(KW_IF, "if") X(KW_IMPORT, "import") X(KW_IN, "in") X(KW_IS, "is")                    \
  X(KW_LAMBDA, "lambda") X(KW_NONLOCAL, "nonlocal") X(KW_NOT, "not") X(KW_OR, "or")      \
  X(KW_PASS, "pass") X(KW_RAISE, "raise") X(KW_RETURN, "return") X(KW_TRY, "try")        \
  X(KW_WHILE, "while") X(KW_WITH, "with") X(KW_YIELD, "yield")

typedef enum TokKind {
#define TOK_ENUM(n, s) TOK_##n,
  TOK_KINDS(TOK_ENUM)
#undef TOK_ENUM
      TOK_KIND_COUNT
} TokKind;

/* String prefix letters, any case and order CPython accepts (r, u, b, f, br, rb, fr, rf). */
enum { STR_RAW = 1, STR_BYTES = 2, STR_FMT = 4, STR_UNICODE = 8 };

/* A lexical error waiting for the parser to reach its token (see Lexer.defer_errors). */
typedef struct LexError {
  SrcLoc loc;
  const char *msg;
  struct LexError *next;
} LexError;

/* The parser holds one statement's tokens at a time (parse.c), so a token is kept small:
 * 80 bytes (lengths fit 32 bits: a file is at most LEX_MAX_SOURCE_BYTES). */
typedef struct Token {
  TokKind kind;
  bool bad;          /* malformed; the lexer reports it (now or via errs) */
  bool is_float, is_imag, is_big; /* NUMBER; is_big: an integer that does not fit int64 */
  SrcLoc loc;        /* first character */
  SrcLoc end;        /* just past the last character */
  const char *text;  /* raw spelling in the source (NAME, NUMBER, STRING, operators) */
  LexError *errs;    /* deferred errors to report when the parser reaches this token */
  union {            /* NUMBER: ival, or fval when is_float */
    int64_t ival;
    double fval;
  };
  uint32_t len;      /* bytes of text */
  /* STRING: body = text[body_off, body_off+body_len), between the quotes */
  uint32_t body_len;
  uint8_t body_off;  /* prefix and opening quotes: at most 5 */
  uint8_t str_flags;
  uint8_t quote_len; /* 1 or 3 */
} Token;

enum { LEX_MAX_INDENT = 100, LEX_MAX_BRACKETS = 200 };

/* Whole-file limits, checked by lex_check_source before anything is parsed.  The largest
 * kernel file of the TileLang and TileScale corpora is 78 KB and 16k tokens; the limits
 * are about 200x and 60x that, far above any real file, and keep a hostile one to a
 * parse of bounded size (the AST takes about ten times the source's bytes). */
#define LEX_MAX_SOURCE_BYTES ((size_t)16 << 20)
enum { LEX_MAX_TOKENS = 1 << 20 };
/* Only so many lexical errors are kept for the parser to report in order: the
 * diagnostics stop at 50 anyway, and a file of a million bad characters must not keep a
 * million messages. */
enum { LEX_MAX_DEFERRED = 200 };

typedef struct Lexer {
  TsCompiler *c;
  const SourceFile *file;
  const char *p, *end;      /* cursor and limit in file->text */
  const char *line_start;   /* for column numbers */
  int line;
  bool at_line_start;       /* next token is the first of a logical line */
  bool line_has_tokens;     /* a NEWLINE is owed at the end of this line */
  int indents[LEX_MAX_INDENT];
  /* The same levels measured with tabs as one column: CPython's TabError rule is that
   * both measures must order the lines alike, or the indentation depends on tab size. */
  int altindents[LEX_MAX_INDENT];
  bool phantom[LEX_MAX_INDENT]; /* level pushed to recover from a bad dedent: no DEDENT */
  int nindent;
  bool indent_overflow;     /* "too many levels of indentation" was reported */
  int pending_dedents;
  bool pending_indent;
  bool done;                /* EOF already returned */
  /* Open brackets: kind and location, for "'(' was never closed". */
  TokKind brackets[LEX_MAX_BRACKETS];
  SrcLoc bracket_locs[LEX_MAX_BRACKETS];
  int depth;                /* may exceed LEX_MAX_BRACKETS; only the first ones are kept */
  /* f-string replacement field mode: stop (EOF) at a top-level '}', '!', ':' or '='. */
  bool fstring_expr;
  const char *stop;         /* where an f-string expression stopped */
  /* The parser sets this so errors come out in source order, interleaved with its
   * own: each is attached to the token being produced instead of reported. */
  bool defer_errors;
  LexError *pending, **pending_tail;
  int deferred;             /* errors deferred so far (only the first LEX_MAX_DEFERRED are kept) */
  bool quiet;               /* lex_check_source's pass: flag bad tokens, report nothing */
  SrcLoc unclosed;          /* at EOF: the bracket that was never closed (line 0 if none) */
} Lexer;

void lex_init(Lexer *lx, TsCompiler *c, const SourceFile *file);
/* Lex the expression of an f-string replacement field starting at text offset `off`
 * (just after '{') and never beyond `limit` (the end of the string body). */
void lex_init_fstring_expr(Lexer *lx, TsCompiler *c, const SourceFile *file, size_t off,
                           size_t limit, int line);
void lex_next(Lexer *lx, Token *t);

/* Checks a whole source before it is parsed, in one pass that keeps no tokens: its
 * size, that it is UTF-8, and its token count against the limits above.  Returns false
 * after one diagnostic when the file must not be parsed (too big); a file that is not
 * UTF-8 is reported and may still be parsed, as every other lexical error.  *unclosed
 * gets the bracket that is never closed (line 0 if none): the parser stays silent after
 * it, as everything from there on is one logical line. */
bool lex_check_source(TsCompiler *c, const SourceFile *file, SrcLoc *unclosed);

const char *tok_kind_name(TokKind k); /* spelling: "(", "def", "name", ... */

/* Decode the escapes of a string body (s, n) per flags (STR_RAW keeps them; STR_BYTES
 * forbids non-ASCII and \u escapes).  \N{...} is kept as written.  Returns an arena
 * copy (NUL-terminated) and its length in *out_len.  Errors go to c->diag at `loc`. */
char *lex_decode_string(TsCompiler *c, const char *s, size_t n, int flags, SrcLoc loc,
                        size_t *out_len);

#endif
