/* test_lex.c — unit tests of the tokenizer (src/front/lex.c): token streams for
 * indentation, continuation, numbers, strings and operators, and lexical errors with
 * their exact file:line:col text. */
#include <stdlib.h>

#include "../../src/front/lex.h"
#include "test.h"

typedef struct LexFixture {
  TsCompiler c;
  SourceFile file;
  StrBuf out;
} LexFixture;

/* Tokenises src and renders the stream compactly: the source spelling of each token,
 * NL / IN / DE / EOF for the synthetic ones, numbers as #value. */
static const char *lex_render(LexFixture *fx, const char *src) {
  ts_compiler_init(&fx->c, (TsTarget){90, true});
  fx->file = (SourceFile){"t.py", src, strlen(src)};
  fx->out = (StrBuf){0};
  Lexer lx;
  lex_init(&lx, &fx->c, &fx->file);
  for (int guard = 0; guard < 10000; guard++) {
    Token t;
    lex_next(&lx, &t);
    if (fx->out.len) sb_putc(&fx->out, ' ');
    switch (t.kind) {
    case TOK_NEWLINE: sb_append(&fx->out, "NL"); break;
    case TOK_INDENT: sb_append(&fx->out, "IN"); break;
    case TOK_DEDENT: sb_append(&fx->out, "DE"); break;
    case TOK_EOF: sb_append(&fx->out, "EOF"); break;
    case TOK_NUMBER:
      if (t.is_big) sb_append(&fx->out, "#big");
      else if (t.is_float) sb_printf(&fx->out, "#%g%s", t.fval, t.is_imag ? "j" : "");
      else sb_printf(&fx->out, "#%lld", (long long)t.ival);
      break;
    default: sb_appendn(&fx->out, t.text, t.len); break;
    }
    if (t.kind == TOK_EOF) break;
  }
  return sb_str(&fx->out);
}

static void lex_fini(LexFixture *fx) {
  sb_free(&fx->out);
  ts_compiler_fini(&fx->c);
}

TEST(lex_indentation) {
  LexFixture fx;
  CHECK_STR(lex_render(&fx, "if x:\n    y = 1\n\n  # comment\n    z\nw\n"),
            "if x : NL IN y = #1 NL z NL DE w NL EOF");
  CHECK(fx.c.diag.errors == 0);
  lex_fini(&fx);
  /* A tab advances to the next multiple of 8, so it matches eight spaces. */
  CHECK_STR(lex_render(&fx, "if x:\n\ty\n        z\n"), "if x : NL IN y NL z NL DE EOF");
  lex_fini(&fx);
  /* Nested blocks closed at end of file without a final newline. */
  CHECK_STR(lex_render(&fx, "def f():\n  if a:\n    return 1"),
            "def f ( ) : NL IN if a : NL IN return #1 NL DE DE EOF");
  lex_fini(&fx);
  /* \r\n line endings behave like \n. */
  CHECK_STR(lex_render(&fx, "a = 1\r\nif a:\r\n  b\r\n"), "a = #1 NL if a : NL IN b NL DE EOF");
  lex_fini(&fx);
}

TEST(lex_line_joining) {
  LexFixture fx;
  /* Newlines inside brackets and after a backslash do not end the logical line, and
   * indentation inside them is ignored. */
  CHECK_STR(lex_render(&fx, "x = (1,\n        2) + \\\n 3\ny = [\n]\n"),
            "x = ( #1 , #2 ) + #3 NL y = [ ] NL EOF");
  CHECK(fx.c.diag.errors == 0);
  lex_fini(&fx);
}

TEST(lex_numbers) {
  LexFixture fx;
  CHECK_STR(lex_render(&fx, "0x_ff 0o17 0b101 1_000 1.5e3 .5 1. 2j 1E-2 0 00 9223372036854775807\n"),
            "#255 #15 #5 #1000 #1500 #0.5 #1 #2j #0.01 #0 #0 #9223372036854775807 NL EOF");
  CHECK(fx.c.diag.errors == 0);
  lex_fini(&fx);
  CHECK_STR(lex_render(&fx, "99999999999999999999999 0xFFFFFFFFFFFFFFFFF\n"), "#big #big NL EOF");
  lex_fini(&fx);

  /* The value of a big literal is kept as text by the parser; the token keeps it raw. */
  ts_compiler_init(&fx.c, (TsTarget){90, true});
  const char *src = "1_0 1__0 09 0x 1abc\n";
  fx.file = (SourceFile){"t.py", src, strlen(src)};
  Lexer lx;
  lex_init(&lx, &fx.c, &fx.file);
  Token tk;
  lex_next(&lx, &tk);
  CHECK(tk.kind == TOK_NUMBER && tk.ival == 10 && !tk.bad);
  lex_next(&lx, &tk);
  CHECK(tk.bad);
  CHECK(fx.c.diag.errors == 1);
  for (int i = 0; i < 10 && tk.kind != TOK_EOF; i++) lex_next(&lx, &tk);
  CHECK(fx.c.diag.errors == 4);
  const char *d = sb_str(&fx.c.diag.out);
  CHECK(strstr(d, "t.py:1:6: error: invalid decimal literal") != NULL);
  CHECK(strstr(d, "t.py:1:10: error: leading zeros in decimal integer literals are not permitted") != NULL);
  CHECK(strstr(d, "t.py:1:15: error: invalid hexadecimal literal") != NULL);
  CHECK(strstr(d, "t.py:1:17: error: invalid decimal literal") != NULL);
  ts_compiler_fini(&fx.c);
}

/* Decodes the first token of src, which must be a string. */
static char *decode_first(TsCompiler *c, const char *src, size_t *len, int *flags) {
  SourceFile f = {"s.py", src, strlen(src)}; /* only the token below refers to it */
  Lexer lx;
  lex_init(&lx, c, &f);
  Token t;
  lex_next(&lx, &t);
  if (t.kind != TOK_STRING) return NULL;
  *flags = t.str_flags;
  return lex_decode_string(c, t.text + t.body_off, t.body_len, t.str_flags, t.loc, len);
}

TEST(lex_strings) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  size_t n;
  int flags;
  char *s = decode_first(&c, "'\\x41\\u00e9\\n\\t\\101\\'q'", &n, &flags);
  REQUIRE(s);
  CHECK(n == 8 && !memcmp(s, "A\xC3\xA9\n\tA'q", 8));
  s = decode_first(&c, "r'\\n\\''", &n, &flags);
  CHECK(s && flags == STR_RAW && n == 4 && !memcmp(s, "\\n\\'", 4));
  s = decode_first(&c, "Rb'\\x00\\xff\\u1234'", &n, &flags);
  CHECK(s && flags == (STR_RAW | STR_BYTES) && n == 14);
  s = decode_first(&c, "b'\\x00\\xff\\u12'", &n, &flags);
  CHECK(s && flags == STR_BYTES && n == 6 && s[0] == 0 && (unsigned char)s[1] == 0xff &&
        !memcmp(s + 2, "\\u12", 4));
  s = decode_first(&c, "'''a\n\"b\"\\\nc'''", &n, &flags);
  CHECK(s && n == 6 && !memcmp(s, "a\n\"b\"c", 6));
  s = decode_first(&c, "\"\\N{EM DASH}!\"", &n, &flags);
  CHECK_STR(s, "\\N{EM DASH}!");
  s = decode_first(&c, "fR'{x}'", &n, &flags);
  CHECK(s && flags == (STR_FMT | STR_RAW));
  s = decode_first(&c, "U'x'", &n, &flags);
  CHECK(s && flags == STR_UNICODE);
  CHECK(c.diag.errors == 0);
  /* "ub" is not a prefix: a name followed by a string. */
  CHECK(decode_first(&c, "ub'x'", &n, &flags) == NULL);
  ts_compiler_fini(&c);
}

TEST(lex_operators_and_keywords) {
  LexFixture fx;
  CHECK_STR(lex_render(&fx, "a := b -> c **= d //= e @= ... != <<= >>= ** // ~ ^ | & % @\n"),
            "a := b -> c **= d //= e @= ... != <<= >>= ** // ~ ^ | & % @ NL EOF");
  lex_fini(&fx);
  /* Soft keywords stay names; real keywords get their own kinds. */
  ts_compiler_init(&fx.c, (TsTarget){90, true});
  const char *src = "match case _ lambda not is";
  fx.file = (SourceFile){"t.py", src, strlen(src)};
  Lexer lx;
  lex_init(&lx, &fx.c, &fx.file);
  TokKind want[] = {TOK_NAME, TOK_NAME, TOK_NAME, TOK_KW_LAMBDA, TOK_KW_NOT, TOK_KW_IS, TOK_NEWLINE, TOK_EOF};
  for (int i = 0; i < TS_ARRAY_LEN(want); i++) {
    Token tk;
    lex_next(&lx, &tk);
    CHECK(tk.kind == want[i]);
    if (i == 3) CHECK(tk.loc.line == 1 && tk.loc.col == 14 && tk.end.col == 20);
  }
  CHECK_STR(tok_kind_name(TOK_DSLASH_EQ), "//=");
  ts_compiler_fini(&fx.c);
}

TEST(lex_errors) {
  LexFixture fx;
  lex_render(&fx, "if x:\n    y\n  z\n");
  CHECK_STR(sb_str(&fx.c.diag.out),
            "t.py:3:3: error: unindent does not match any outer indentation level\n    z\n    ^\n");
  lex_fini(&fx);
  lex_render(&fx, "s = 'abc\nt = 1\n");
  CHECK_STR(sb_str(&fx.c.diag.out),
            "t.py:1:5: error: unterminated string literal (detected at line 1)\n  s = 'abc\n      ^\n");
  lex_fini(&fx);
  lex_render(&fx, "s = '''abc\n\n");
  CHECK(strstr(sb_str(&fx.c.diag.out),
               "t.py:1:5: error: unterminated triple-quoted string literal (detected at line 3)") != NULL);
  lex_fini(&fx);
  lex_render(&fx, "x = (1, 2]\ny = $\n");
  const char *d = sb_str(&fx.c.diag.out);
  CHECK(strstr(d, "t.py:1:10: error: closing parenthesis ']' does not match opening parenthesis '('") != NULL);
  CHECK(strstr(d, "t.py:2:5: error: invalid character '$' (U+0024)") != NULL);
  lex_fini(&fx);
  CHECK_STR(lex_render(&fx, "f(a,\n  b"), "f ( a , b NL EOF");
  CHECK(strstr(sb_str(&fx.c.diag.out), "t.py:1:2: error: '(' was never closed") != NULL);
  lex_fini(&fx);
  lex_render(&fx, "x = 1 \\ y\n");
  CHECK(strstr(sb_str(&fx.c.diag.out),
               "t.py:1:7: error: unexpected character after line continuation character") != NULL);
  lex_fini(&fx);
}
