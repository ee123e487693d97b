/* lex.c — Python 3.11 tokenizer (see lex.h); the first stage of the front end.
 *
 * Produces tokens on demand (lex_next); the parser keeps those of the statement at hand
 * (parse.c), after lex_check_source has checked the whole file's size in one pass.  Logical lines follow CPython: NEWLINE ends a logical line,
 * blank and comment-only lines produce nothing, newlines inside brackets are
 * whitespace, a backslash before the newline joins lines, and indentation (tabs to
 * the next multiple of 8) drives an indent stack that yields INDENT/DEDENT.
 * Every malformed token is reported once and flagged `bad`; lexing always goes on so
 * the parser can report the rest of the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lex.h"

static const char *const tok_names[TOK_KIND_COUNT] = {
#define TOK_NAME(n, s) s,
    TOK_KINDS(TOK_NAME)
#undef TOK_NAME
};

const char *tok_kind_name(TokKind k) {
  return (unsigned)k < TOK_KIND_COUNT ? tok_names[k] : "?";
}

/* ---- cursor helpers ------------------------------------------------------------- */

static SrcLoc here(const Lexer *lx) {
  return (SrcLoc){lx->file, lx->line, (int)(lx->p - lx->line_start) + 1};
}

static char peek(const Lexer *lx, int k) {
  return lx->p + k < lx->end ? lx->p[k] : '\0';
}

/* Consumes a physical newline ("\n", "\r\n" or "\r") at the cursor. */
static bool eat_newline(Lexer *lx) {
  if (lx->p >= lx->end) return false;
  if (*lx->p == '\r') {
    lx->p++;
    if (lx->p < lx->end && *lx->p == '\n') lx->p++;
  } else if (*lx->p == '\n') {
    lx->p++;
  } else {
    return false;
  }
  lx->line++;
  lx->line_start = lx->p;
  return true;
}

static bool is_newline_char(char ch) { return ch == '\n' || ch == '\r'; }

/* Bytes >= 0x80 may start identifiers: UTF-8 names are valid Python.  ident_len then
 * decides, per character, whether it belongs to the name. */
static bool is_ident_start(char ch) {
  unsigned char u = (unsigned char)ch;
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}
static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool is_ident_char(char ch) { return is_ident_start(ch) || is_digit(ch); }

/* Bytes of the identifier character at q (< end), or 0 when there is none: punctuation,
 * symbols, spaces and emoji outside ASCII end a name (CPython: "invalid character"), and
 * so do bytes that are not UTF-8 (lex_check_source reported the file). */
static int ident_len(const char *q, const char *end) {
  unsigned char u = (unsigned char)*q;
  if (u < 0x80) return is_ident_char(*q) ? 1 : 0;
  uint32_t cp;
  int n = ts_utf8_decode(q, end, &cp);
  return n && ts_char_is_identifier(cp) ? n : 0;
}

void lex_init(Lexer *lx, TsCompiler *c, const SourceFile *file) {
  memset(lx, 0, sizeof *lx);
  lx->c = c;
  lx->file = file;
  lx->p = file->text;
  lx->end = file->text + file->len;
  lx->line_start = lx->p;
  lx->line = 1;
  lx->at_line_start = true;
  lx->nindent = 1; /* indents[0] = 0 */
  /* A UTF-8 byte order mark is not part of the program. */
  if (file->len >= 3 && memcmp(file->text, "\xEF\xBB\xBF", 3) == 0) lx->p += 3;
}

void lex_init_fstring_expr(Lexer *lx, TsCompiler *c, const SourceFile *file, size_t off,
                           size_t limit, int line) {
  memset(lx, 0, sizeof *lx);
  lx->c = c;
  lx->file = file;
  lx->p = file->text + off;
  lx->end = file->text + limit;
  lx->line = line;
  /* The field starts mid-line: find the physical line start for column numbers. */
  const char *ls = lx->p;
  while (ls > file->text && !is_newline_char(ls[-1])) ls--;
  lx->line_start = ls;
  lx->nindent = 1;
  lx->fstring_expr = true;
}

static void lex_error_at(Lexer *lx, SrcLoc loc, Token *t, const char *msg) {
  if (t) t->bad = true;
  if (lx->quiet) return;
  if (!lx->defer_errors) {
    ts_error(lx->c, loc, "%s", msg);
    return;
  }
  if (++lx->deferred > LEX_MAX_DEFERRED) return;
  LexError *e = ARENA_NEW(lx->c->arena, LexError);
  e->loc = loc;
  e->msg = arena_strdup(lx->c->arena, msg);
  if (!lx->pending_tail) lx->pending_tail = &lx->pending;
  *lx->pending_tail = e;
  lx->pending_tail = &e->next;
}

/* ---- numbers ------------------------------------------------------------------- */

static bool is_digit_in_base(char ch, int base) {
  if (base == 16) return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
  if (base == 8) return ch >= '0' && ch <= '7';
  if (base == 2) return ch == '0' || ch == '1';
  return is_digit(ch);
}

/* Scans digits of `base` with single underscores between them into buf (without the
 * underscores).  Returns false (after reporting) on a misplaced underscore. */
static bool scan_digits(Lexer *lx, Token *t, int base, StrBuf *buf, bool need_one) {
  bool any = false;
  for (;;) {
    char ch = peek(lx, 0);
    if (is_digit_in_base(ch, base)) {
      sb_putc(buf, ch);
      lx->p++;
      any = true;
    } else if (ch == '_' && any && is_digit_in_base(peek(lx, 1), base)) {
      lx->p++;
    } else if (ch == '_') {
      lex_error_at(lx, here(lx), t, "invalid decimal literal");
      lx->p++;
      return false;
    } else {
      break;
    }
  }
  if (need_one && !any) {
    static const char *const names[17] = {[2] = "binary", [8] = "octal", [10] = "decimal",
                                          [16] = "hexadecimal"};
    char msg[64];
    snprintf(msg, sizeof msg, "invalid %s literal", names[base]);
    lex_error_at(lx, here(lx), t, msg);
    return false;
  }
  return true;
}

/* After a literal, a letter glued to it is a typo ("1abc"), except a keyword that may
 * follow a number ("1if x else 2" is valid, if deprecated, Python). */
static void check_number_end(Lexer *lx, Token *t, const char *kind) {
  if (t->bad || !is_ident_start(peek(lx, 0))) return;
  static const char *const ok[] = {"and", "else", "for", "if", "in", "is", "not", "or"};
  const char *q = lx->p;
  while (q < lx->end && is_ident_char(*q)) q++;
  for (int i = 0; i < TS_ARRAY_LEN(ok); i++)
    if ((size_t)(q - lx->p) == strlen(ok[i]) && !memcmp(lx->p, ok[i], (size_t)(q - lx->p)))
      return;
  char msg[64];
  snprintf(msg, sizeof msg, "invalid %s literal", kind);
  lex_error_at(lx, here(lx), t, msg);
  lx->p = q; /* swallow the glued name so it does not become a second error */
}

/* Converts digits (no underscores) of `base` into t->ival, or flags is_big. */
static void set_int_value(Token *t, const char *digits, int base) {
  uint64_t v = 0;
  for (const char *d = digits; *d; d++) {
    int dv = is_digit(*d) ? *d - '0' : (*d | 0x20) - 'a' + 10;
    if (v > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base) {
      t->is_big = true;
      return;
    }
    v = v * (uint64_t)base + (uint64_t)dv;
  }
  if (v > (uint64_t)INT64_MAX) {
    t->is_big = true;
    return;
  }
  t->ival = (int64_t)v;
}

/* number: hex/oct/bin integer | decinteger | floatnumber | imagnumber (Python 3 reference) */
static void lex_number(Lexer *lx, Token *t) {
  StrBuf buf = {0};
  t->kind = TOK_NUMBER;
  char c0 = peek(lx, 0), c1 = (char)(peek(lx, 1) | 0x20);
  if (c0 == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
    int base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
    lx->p += 2;
    if (peek(lx, 0) == '_') lx->p++; /* 0x_ff is valid */
    if (scan_digits(lx, t, base, &buf, true)) set_int_value(t, sb_str(&buf), base);
    if (!t->bad && is_digit(peek(lx, 0))) {
      lex_error_at(lx, here(lx), t,
                   base == 8 ? "invalid digit in octal literal" : "invalid digit in binary literal");
      while (is_ident_char(peek(lx, 0))) lx->p++;
    }
    check_number_end(lx, t, base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary");
    sb_free(&buf);
    return;
  }
  bool is_float = false;
  if (c0 != '.') scan_digits(lx, t, 10, &buf, true);
  if (peek(lx, 0) == '.') {
    is_float = true;
    sb_putc(&buf, '.');
    lx->p++;
    if (is_digit(peek(lx, 0))) scan_digits(lx, t, 10, &buf, true);
  }
  char e = (char)(peek(lx, 0) | 0x20);
  if (e == 'e' && (is_digit(peek(lx, 1)) || ((peek(lx, 1) == '+' || peek(lx, 1) == '-') &&
                                             is_digit(peek(lx, 2))))) {
    is_float = true;
    sb_putc(&buf, 'e');
    lx->p++;
    if (peek(lx, 0) == '+' || peek(lx, 0) == '-') sb_putc(&buf, *lx->p++);
    scan_digits(lx, t, 10, &buf, true);
  }
  if ((peek(lx, 0) | 0x20) == 'j') {
    lx->p++;
    t->is_imag = true;
    is_float = true;
  }
  if (t->bad) {
    sb_free(&buf);
    return;
  }
  t->is_float = is_float;
  if (is_float) {
    t->fval = strtod(sb_str(&buf), NULL);
  } else {
    /* "0777" was octal in Python 2; Python 3 rejects nonzero leading zeros. */
    const char *d = sb_str(&buf);
    bool all_zero = true;
    for (const char *q = d; *q; q++) all_zero &= *q == '0';
    if (d[0] == '0' && !all_zero) {
      lex_error_at(lx, t->loc, t,
                   "leading zeros in decimal integer literals are not permitted; use an 0o "
                   "prefix for octal integers");
    } else {
      set_int_value(t, d, 10);
    }
  }
  check_number_end(lx, t, t->is_imag ? "imaginary" : "decimal");
  sb_free(&buf);
}

/* ---- strings -------------------------------------------------------------------- */

/* Returns the prefix flags if [s, s+n) is a valid string prefix, else -1. */
static int string_prefix(const char *s, size_t n) {
  if (n == 0 || n > 2) return -1;
  int flags = 0;
  for (size_t i = 0; i < n; i++) {
    int f;
    switch (s[i] | 0x20) {
    case 'r': f = STR_RAW; break;
    case 'b': f = STR_BYTES; break;
    case 'f': f = STR_FMT; break;
    case 'u': f = STR_UNICODE; break;
    default: return -1;
    }
    if (flags & f) return -1;
    flags |= f;
  }
  if ((flags & STR_UNICODE) && n > 1) return -1;
  if ((flags & STR_BYTES) && (flags & STR_FMT)) return -1;
  return flags;
}

/* Delimits a string literal whose opening quote is at the cursor.  The body is kept
 * raw; escapes are decoded by lex_decode_string when the parser needs the value. */
static void lex_string(Lexer *lx, Token *t, int flags) {
  t->kind = TOK_STRING;
  t->str_flags = flags;
  char q = *lx->p;
  int ql = (peek(lx, 1) == q && peek(lx, 2) == q) ? 3 : 1;
  t->quote_len = ql;
  lx->p += ql;
  t->body_off = (uint8_t)(lx->p - t->text);
  for (;;) {
    if (lx->p >= lx->end || (ql == 1 && is_newline_char(*lx->p))) {
      char msg[96];
      snprintf(msg, sizeof msg, "unterminated %sstring literal (detected at line %d)",
               ql == 3 ? "triple-quoted " : "", lx->line);
      lex_error_at(lx, t->loc, t, msg);
      t->body_len = (uint32_t)((size_t)(lx->p - t->text) - t->body_off);
      return;
    }
    char ch = *lx->p;
    if (ch == '\\') {
      /* An escaped character (raw strings too: r"\"" does not end at the 2nd quote). */
      lx->p++;
      if (lx->p < lx->end && !eat_newline(lx)) lx->p++;
      continue;
    }
    if (ch == q && (ql == 1 || (peek(lx, 1) == q && peek(lx, 2) == q))) {
      t->body_len = (uint32_t)((size_t)(lx->p - t->text) - t->body_off);
      lx->p += ql;
      return;
    }
    if (!eat_newline(lx)) lx->p++;
  }
}

static void put_utf8(StrBuf *sb, uint32_t cp) {
  if (cp < 0x80) {
    sb_putc(sb, (char)cp);
  } else if (cp < 0x800) {
    sb_putc(sb, (char)(0xC0 | (cp >> 6)));
    sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    sb_putc(sb, (char)(0xE0 | (cp >> 12)));
    sb_putc(sb, (char)(0x80 | ((cp >> 6) & 0x3F)));
    sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
  } else {
    sb_putc(sb, (char)(0xF0 | (cp >> 18)));
    sb_putc(sb, (char)(0x80 | ((cp >> 12) & 0x3F)));
    sb_putc(sb, (char)(0x80 | ((cp >> 6) & 0x3F)));
    sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
  }
}

static int hex_val(char ch) {
  if (is_digit(ch)) return ch - '0';
  ch = (char)(ch | 0x20);
  return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

char *lex_decode_string(TsCompiler *c, const char *s, size_t n, int flags, SrcLoc loc,
                        size_t *out_len) {
  StrBuf sb = {0};
  bool bytes = flags & STR_BYTES, raw = flags & STR_RAW;
  bool reported_ascii = false;
  for (size_t i = 0; i < n;) {
    char ch = s[i];
    if (bytes && (unsigned char)ch >= 0x80 && !reported_ascii) {
      ts_error(c, loc, "bytes can only contain ASCII literal characters");
      reported_ascii = true;
    }
    if (ch == '\r') { /* newlines inside triple-quoted strings are normalised to \n */
      sb_putc(&sb, '\n');
      i += (i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
      continue;
    }
    if (ch != '\\' || raw || i + 1 >= n) {
      sb_putc(&sb, ch);
      i++;
      continue;
    }
    char e = s[i + 1];
    i += 2;
    switch (e) {
    case '\n': break; /* backslash-newline: line continuation inside the literal */
    case '\r':
      if (i < n && s[i] == '\n') i++;
      break;
    case '\\': sb_putc(&sb, '\\'); break;
    case '\'': sb_putc(&sb, '\''); break;
    case '"': sb_putc(&sb, '"'); break;
    case 'a': sb_putc(&sb, '\a'); break;
    case 'b': sb_putc(&sb, '\b'); break;
    case 'f': sb_putc(&sb, '\f'); break;
    case 'n': sb_putc(&sb, '\n'); break;
    case 'r': sb_putc(&sb, '\r'); break;
    case 't': sb_putc(&sb, '\t'); break;
    case 'v': sb_putc(&sb, '\v'); break;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
      uint32_t v = (uint32_t)(e - '0');
      for (int k = 0; k < 2 && i < n && s[i] >= '0' && s[i] <= '7'; k++) v = v * 8 + (uint32_t)(s[i++] - '0');
      if (bytes) sb_putc(&sb, (char)(v & 0xFF));
      else put_utf8(&sb, v);
      break;
    }
    case 'x': case 'u': case 'U': {
      if (bytes && e != 'x') { /* \u is not an escape in bytes */
        sb_putc(&sb, '\\');
        sb_putc(&sb, e);
        break;
      }
      int nd = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      uint32_t v = 0;
      int k = 0;
      for (; k < nd && i < n && hex_val(s[i]) >= 0; k++) v = v * 16 + (uint32_t)hex_val(s[i++]);
      if (k < nd) {
        ts_error(c, loc, "(unicode error) truncated \\%c%s escape", e,
                 e == 'x' ? "XX" : e == 'u' ? "XXXX" : "XXXXXXXX");
      } else if (v > 0x10FFFF) {
        ts_error(c, loc, "(unicode error) illegal Unicode character");
      } else if (bytes) {
        sb_putc(&sb, (char)v);
      } else {
        put_utf8(&sb, v);
      }
      break;
    }
    case 'N':
      /* Named characters would need the Unicode database; the text is kept as written. */
      if (!bytes && i < n && s[i] == '{') {
        size_t j = i;
        while (j < n && s[j] != '}') j++;
        if (j >= n) {
          ts_error(c, loc, "(unicode error) malformed \\N character escape");
          i = n;
          break;
        }
        sb_appendn(&sb, "\\N", 2);
        sb_appendn(&sb, s + i, j + 1 - i);
        i = j + 1;
        break;
      }
      sb_putc(&sb, '\\');
      sb_putc(&sb, e);
      break;
    default: /* unknown escapes stay as written (Python only warns) */
      sb_putc(&sb, '\\');
      sb_putc(&sb, e);
      break;
    }
  }
  *out_len = sb.len;
  char *r = arena_strndup(c->arena, sb.data ? sb.data : "", sb.len);
  sb_free(&sb);
  return r;
}

/* ---- operators ------------------------------------------------------------------ */

typedef struct OpSpelling {
  const char *s;
  TokKind kind;
} OpSpelling;

/* Longest first so that "**=" wins over "**" and "*". */
static const OpSpelling ops[] = {
    {"**=", TOK_DSTAR_EQ}, {"//=", TOK_DSLASH_EQ}, {"<<=", TOK_LSHIFT_EQ}, {">>=", TOK_RSHIFT_EQ},
    {"...", TOK_ELLIPSIS}, {"->", TOK_ARROW},      {":=", TOK_WALRUS},     {"**", TOK_DSTAR},
    {"//", TOK_DSLASH},    {"<<", TOK_LSHIFT},     {">>", TOK_RSHIFT},     {"<=", TOK_LE},
    {">=", TOK_GE},        {"==", TOK_EQ},         {"!=", TOK_NE},         {"+=", TOK_PLUS_EQ},
    {"-=", TOK_MINUS_EQ},  {"*=", TOK_STAR_EQ},    {"/=", TOK_SLASH_EQ},   {"%=", TOK_PERCENT_EQ},
    {"@=", TOK_AT_EQ},     {"&=", TOK_AMP_EQ},     {"|=", TOK_PIPE_EQ},    {"^=", TOK_CARET_EQ},
    {"(", TOK_LPAREN},     {")", TOK_RPAREN},      {"[", TOK_LBRACKET},    {"]", TOK_RBRACKET},
    {"{", TOK_LBRACE},     {"}", TOK_RBRACE},      {",", TOK_COMMA},       {":", TOK_COLON},
    {";", TOK_SEMI},       {".", TOK_DOT},         {"=", TOK_ASSIGN},      {"+", TOK_PLUS},
    {"-", TOK_MINUS},      {"*", TOK_STAR},        {"/", TOK_SLASH},       {"%", TOK_PERCENT},
    {"@", TOK_AT},         {"&", TOK_AMP},         {"|", TOK_PIPE},        {"^", TOK_CARET},
    {"~", TOK_TILDE},      {"<", TOK_LT},          {">", TOK_GT},          {"!", TOK_BANG},
};

static TokKind keyword_kind(const char *s, size_t n) {
  for (int k = TOK_KW_FALSE; k < TOK_KIND_COUNT; k++)
    if (strlen(tok_names[k]) == n && !memcmp(tok_names[k], s, n)) return (TokKind)k;
  return TOK_NAME;
}

static TokKind closer_of(TokKind open) {
  return open == TOK_LPAREN ? TOK_RPAREN : open == TOK_LBRACKET ? TOK_RBRACKET : TOK_RBRACE;
}

/* Tracks bracket nesting: newlines are insignificant inside brackets, and a closer
 * that does not match is reported here with CPython's wording. */
static void track_bracket(Lexer *lx, Token *t) {
  TokKind k = t->kind;
  if (k == TOK_LPAREN || k == TOK_LBRACKET || k == TOK_LBRACE) {
    /* Deeper nesting is not recorded; the parser reports it ("nested too deeply"). */
    if (lx->depth < LEX_MAX_BRACKETS) {
      lx->brackets[lx->depth] = k;
      lx->bracket_locs[lx->depth] = t->loc;
    }
    lx->depth++;
    return;
  }
  if (k != TOK_RPAREN && k != TOK_RBRACKET && k != TOK_RBRACE) return;
  char msg[96];
  if (lx->depth == 0) {
    snprintf(msg, sizeof msg, "unmatched '%s'", tok_names[k]);
    lex_error_at(lx, t->loc, t, msg);
    return;
  }
  lx->depth--;
  if (lx->depth < LEX_MAX_BRACKETS && closer_of(lx->brackets[lx->depth]) != k) {
    TokKind open = lx->brackets[lx->depth];
    SrcLoc ol = lx->bracket_locs[lx->depth];
    if (ol.line != t->loc.line)
      snprintf(msg, sizeof msg, "closing parenthesis '%s' does not match opening parenthesis '%s' on line %d",
               tok_names[k], tok_names[open], ol.line);
    else
      snprintf(msg, sizeof msg, "closing parenthesis '%s' does not match opening parenthesis '%s'",
               tok_names[k], tok_names[open]);
    lex_error_at(lx, t->loc, t, msg);
  }
}

/* ---- indentation ------------------------------------------------------------------- */

/* Compares a logical line's indentation (col with tabs to multiples of 8, alt with tabs
 * as one column) with the indent stack and queues INDENT/DEDENT.  CPython's TabError
 * rule: when the two measures disagree on whether the line is deeper, level or
 * shallower than the block, the meaning depends on the tab size; the line is still
 * read with tabs of 8, so the rest of the file is checked as Python 2 would. */
static void set_indent(Lexer *lx, int col, int alt) {
  static const char tab_error[] = "inconsistent use of tabs and spaces in indentation";
  int top = lx->indents[lx->nindent - 1];
  bool inconsistent = false;
  if (col > top) {
    inconsistent = alt <= lx->altindents[lx->nindent - 1];
    if (lx->nindent == LEX_MAX_INDENT) {
      if (!lx->indent_overflow)
        lex_error_at(lx, here(lx), NULL, "too many levels of indentation");
      lx->indent_overflow = true;
    } else {
      lx->phantom[lx->nindent] = false;
      lx->altindents[lx->nindent] = alt;
      lx->indents[lx->nindent++] = col;
      lx->pending_indent = true;
    }
  } else if (col < top) {
    while (lx->nindent > 1 && lx->indents[lx->nindent - 1] > col) {
      if (!lx->phantom[lx->nindent - 1]) lx->pending_dedents++;
      lx->nindent--;
    }
    if (lx->indents[lx->nindent - 1] != col) {
      lex_error_at(lx, here(lx), NULL, "unindent does not match any outer indentation level");
      /* Recover: treat this column as a level of its own that closes silently. */
      if (lx->nindent < LEX_MAX_INDENT) {
        lx->phantom[lx->nindent] = true;
        lx->altindents[lx->nindent] = alt;
        lx->indents[lx->nindent++] = col;
      }
      return;
    }
    inconsistent = alt != lx->altindents[lx->nindent - 1];
  } else {
    inconsistent = alt != lx->altindents[lx->nindent - 1];
  }
  if (inconsistent) lex_error_at(lx, here(lx), NULL, tab_error);
}

/* At the start of a logical line: measures the indentation, skips blank and comment
 * lines, and queues INDENT/DEDENT.  Returns false at end of input. */
static bool start_line(Lexer *lx) {
  for (;;) {
    int col = 0, alt = 0; /* tabs to the next multiple of 8, and tabs as one column */
    const char *p = lx->p;
    for (; p < lx->end; p++) {
      if (*p == ' ') col++, alt++;
      else if (*p == '\t') col = (col / 8 + 1) * 8, alt++;
      else if (*p == '\f') col = alt = 0;
      else break;
    }
    lx->p = p;
    if (p >= lx->end) return false;
    if (*p == '#') {
      while (lx->p < lx->end && !is_newline_char(*lx->p)) lx->p++;
    }
    if (lx->p >= lx->end) return false;
    if (eat_newline(lx)) continue; /* blank or comment-only line */
    if (*lx->p == '\\' && lx->p + 1 < lx->end && is_newline_char(lx->p[1])) {
      /* A continuation on an otherwise empty line: CPython joins it with the next. */
      lx->p++;
      eat_newline(lx);
      continue;
    }
    set_indent(lx, col, alt);
    return true;
  }
}

/* ---- main entry ------------------------------------------------------------------- */

static void make_simple(Lexer *lx, Token *t, TokKind k) {
  t->kind = k;
  t->loc = t->end = here(lx);
  t->text = lx->p;
  t->len = 0;
}

static void lex_token(Lexer *lx, Token *t);

/* A non-ASCII character that cannot be part of a token, reported with CPython's words
 * and skipped.  Bytes that are not UTF-8 are skipped silently: lex_check_source has
 * reported the file. */
static void lex_bad_char(Lexer *lx, Token *t) {
  uint32_t cp;
  int n = ts_utf8_decode(lx->p, lx->end, &cp);
  t->kind = TOK_NAME;
  t->bad = true;
  if (!n) {
    lx->p++;
    return;
  }
  char msg[80];
  if (ts_char_is_printable(cp))
    snprintf(msg, sizeof msg, "invalid character '%.*s' (U+%04X)", n, lx->p, (unsigned)cp);
  else
    snprintf(msg, sizeof msg, "invalid non-printable character U+%04X", (unsigned)cp);
  lex_error_at(lx, t->loc, t, msg);
  lx->p += n;
}

void lex_next(Lexer *lx, Token *t) {
  lex_token(lx, t);
  if (lx->pending) {
    t->errs = lx->pending;
    lx->pending = NULL;
    lx->pending_tail = &lx->pending;
  }
}

static void lex_token(Lexer *lx, Token *t) {
  memset(t, 0, sizeof *t);
  if (lx->pending_dedents > 0) {
    lx->pending_dedents--;
    make_simple(lx, t, TOK_DEDENT);
    return;
  }
  if (lx->pending_indent) {
    lx->pending_indent = false;
    make_simple(lx, t, TOK_INDENT);
    return;
  }
  if (lx->done) {
    make_simple(lx, t, TOK_EOF);
    return;
  }
  if (lx->at_line_start && !lx->fstring_expr) {
    lx->at_line_start = false;
    if (start_line(lx)) {
      if (lx->pending_dedents || lx->pending_indent) {
        lex_token(lx, t);
        return;
      }
    }
  }
  /* Whitespace, comments, continuations, and newlines inside brackets. */
  for (;;) {
    if (lx->p >= lx->end) break;
    char ch = *lx->p;
    if (ch == ' ' || ch == '\t' || ch == '\f') {
      lx->p++;
    } else if (ch == '#' && !lx->fstring_expr) {
      while (lx->p < lx->end && !is_newline_char(*lx->p)) lx->p++;
    } else if (ch == '\\' && !lx->fstring_expr) {
      SrcLoc bl = here(lx);
      lx->p++;
      if (lx->p >= lx->end) {
        lex_error_at(lx, bl, NULL, "unexpected EOF while parsing");
      } else if (!eat_newline(lx)) {
        make_simple(lx, t, TOK_NAME);
        t->loc = bl;
        lex_error_at(lx, bl, t, "unexpected character after line continuation character");
        /* Skip the rest of the line so recovery resumes at the next statement. */
        while (lx->p < lx->end && !is_newline_char(*lx->p)) lx->p++;
      }
    } else if (is_newline_char(ch) && (lx->depth > 0 || lx->fstring_expr)) {
      eat_newline(lx);
    } else if (is_newline_char(ch)) {
      SrcLoc nl = here(lx);
      eat_newline(lx);
      lx->at_line_start = true;
      if (lx->line_has_tokens) {
        lx->line_has_tokens = false;
        t->kind = TOK_NEWLINE;
        t->loc = nl;
        t->end = (SrcLoc){lx->file, nl.line, nl.col + 1};
        t->text = lx->p;
        return;
      }
      if (!start_line(lx)) break;
      lx->at_line_start = false;
      if (lx->pending_dedents || lx->pending_indent) {
        lex_token(lx, t);
        return;
      }
    } else {
      break;
    }
  }
  if (lx->p >= lx->end) {
    if (lx->fstring_expr) {
      make_simple(lx, t, TOK_EOF);
      lx->stop = lx->p;
      lx->done = true;
      return;
    }
    /* End of input: close the logical line, then every open block. */
    if (lx->line_has_tokens) {
      lx->line_has_tokens = false;
      make_simple(lx, t, TOK_NEWLINE);
      return;
    }
    if (lx->depth > 0) {
      int d = lx->depth < LEX_MAX_BRACKETS ? lx->depth : LEX_MAX_BRACKETS;
      char msg[48];
      snprintf(msg, sizeof msg, "'%s' was never closed", tok_names[lx->brackets[d - 1]]);
      make_simple(lx, t, TOK_EOF);
      /* The parser stays silent from the bracket on (see parse.c): everything after
       * it was one logical line, so its own errors would be noise. */
      lex_error_at(lx, lx->bracket_locs[d - 1], t, msg);
      lx->unclosed = lx->bracket_locs[d - 1];
      lx->depth = 0;
      lx->done = true;
      return;
    }
    for (; lx->nindent > 1; lx->nindent--)
      if (!lx->phantom[lx->nindent - 1]) lx->pending_dedents++;
    if (lx->pending_dedents) {
      lex_token(lx, t);
      return;
    }
    lx->done = true;
    make_simple(lx, t, TOK_EOF);
    return;
  }

  t->loc = here(lx);
  t->text = lx->p;
  char ch = *lx->p;
  if (lx->fstring_expr && lx->depth == 0 &&
      (ch == '}' || (ch == '!' && peek(lx, 1) != '=') || ch == ':' ||
       (ch == '=' && peek(lx, 1) != '='))) {
    /* End of a replacement field's expression: the parser takes over. */
    lx->stop = lx->p;
    lx->done = true;
    make_simple(lx, t, TOK_EOF);
    return;
  }
  lx->line_has_tokens = true;
  if ((unsigned char)ch >= 0x80 && !ident_len(lx->p, lx->end)) {
    lex_bad_char(lx, t);
  } else if (is_ident_start(ch)) {
    const char *s = lx->p;
    for (int k; lx->p < lx->end && (k = ident_len(lx->p, lx->end)) > 0;) lx->p += k;
    size_t n = (size_t)(lx->p - s);
    int flags = string_prefix(s, n);
    if (flags >= 0 && lx->p < lx->end && (*lx->p == '\'' || *lx->p == '"')) {
      lex_string(lx, t, flags);
    } else {
      t->kind = keyword_kind(s, n);
    }
  } else if (is_digit(ch) || (ch == '.' && is_digit(peek(lx, 1)))) {
    lex_number(lx, t);
  } else if (ch == '\'' || ch == '"') {
    lex_string(lx, t, 0);
  } else {
    bool found = false;
    for (int i = 0; i < TS_ARRAY_LEN(ops); i++) {
      size_t n = strlen(ops[i].s);
      if (lx->p + n <= lx->end && !memcmp(lx->p, ops[i].s, n)) {
        t->kind = ops[i].kind;
        lx->p += n;
        found = true;
        break;
      }
    }
    if (!found || (t->kind == TOK_BANG && !lx->fstring_expr)) {
      /* Report once and drop the character: it is not part of any Python token. */
      unsigned char u = (unsigned char)ch;
      char msg[64];
      if (u >= 0x20 && u < 0x7F)
        snprintf(msg, sizeof msg, "invalid character '%c' (U+%04X)", ch, u);
      else
        snprintf(msg, sizeof msg, "invalid non-printable character U+%04X", u);
      if (!found) lx->p++;
      t->kind = TOK_NAME;
      lex_error_at(lx, t->loc, t, msg);
    } else {
      track_bracket(lx, t);
    }
  }
  t->len = (uint32_t)(lx->p - t->text);
  t->end = here(lx);
}

/* Line and column (1-based, bytes) of text offset off, counting line breaks as the
 * lexer does. */
static SrcLoc loc_of_offset(const SourceFile *file, size_t off) {
  int line = 1;
  size_t ls = 0;
  for (size_t i = 0; i < off; i++) {
    char ch = file->text[i];
    if (ch == '\n' || (ch == '\r' && !(i + 1 < file->len && file->text[i + 1] == '\n'))) {
      line++;
      ls = i + 1;
    }
  }
  return (SrcLoc){file, line, (int)(off - ls) + 1};
}

bool lex_check_source(TsCompiler *c, const SourceFile *file, SrcLoc *unclosed) {
  *unclosed = SRCLOC_NONE;
  if (file->len > LEX_MAX_SOURCE_BYTES) {
    SrcLoc whole_file = {file, 0, 0};
    ts_error(c, whole_file, "file too large: %zu bytes (the limit is %zu MiB)", file->len,
             LEX_MAX_SOURCE_BYTES >> 20);
    return false;
  }
  size_t bad = ts_utf8_invalid(file->text, file->len);
  if (bad < file->len)
    ts_error(c, loc_of_offset(file, bad),
             "Non-UTF-8 code starting with '\\x%02x': the file must be UTF-8 (no other encoding is supported)",
             (unsigned char)file->text[bad]);
  /* Count the tokens without keeping them: the parser lexes again, on demand. */
  Lexer lx;
  lex_init(&lx, c, file);
  lx.quiet = true;
  Token t;
  for (int n = 0;; n++) {
    lex_next(&lx, &t);
    if (t.kind == TOK_EOF) break;
    if (n == LEX_MAX_TOKENS) {
      ts_error(c, t.loc, "too many tokens: more than %d in one file (kernel files have a few thousand)",
               LEX_MAX_TOKENS);
      return false;
    }
  }
  *unclosed = lx.unclosed;
  return true;
}
