/* test_base_ir.c — unit tests of the base layer (arena, maps, sha256, diagnostics) and
 * the IR core (typing, folding, simplification, substitution, printing). */
#include <math.h>
#include <stdlib.h>

#include "../../src/base/compiler.h"
#include "../../src/ir/analysis.h"
#include "../../src/ir/ir.h"
#include "test.h"

TEST(base_sha256_known_vectors) {
  char hex[65];
  ts_sha256_hex("", 0, hex);
  CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  ts_sha256_hex("abc", 3, hex);
  CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  /* 56 bytes: the padding spills into a second block. */
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  ts_sha256_hex(m, strlen(m), hex);
  CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(base_strmap_grows_and_finds) {
  Arena *a = arena_new();
  StrMap m = {0};
  char *keys[500];
  for (int i = 0; i < 500; i++) {
    keys[i] = arena_printf(a, "k%d", i);
    strmap_put(a, &m, keys[i], (void *)(intptr_t)(i + 1));
  }
  int ok = 1;
  for (int i = 0; i < 500; i++) ok &= (intptr_t)strmap_get(&m, keys[i]) == i + 1;
  CHECK(ok);
  CHECK(!strmap_has(&m, "missing"));
  strmap_put(a, &m, keys[3], (void *)(intptr_t)99);
  CHECK((intptr_t)strmap_get(&m, "k3") == 99);
  CHECK(m.len == 500);
  arena_destroy(a);
}

TEST(base_diag_caret) {
  SourceFile f = {"k.py", "x = 1\ny = foo(2)\n", 17};
  Diag d = {0};
  diag_error(&d, (SrcLoc){&f, 2, 5}, "name '%s' is not defined", "foo");
  CHECK_STR(sb_str(&d.out), "k.py:2:5: error: name 'foo' is not defined\n  y = foo(2)\n      ^\n");
  CHECK(d.errors == 1);
  diag_free(&d);
}

/* The echoed line and its caret are in display columns: a wide character takes two, a
 * combining mark none, a tab runs to the next multiple of 8; control characters and bytes
 * that are not UTF-8 are replaced; a long line is a window around the caret. */
TEST(base_diag_display_columns) {
  Diag d = {0};
  const char *wide = "s = \"\xE6\xBC\xA2" "e\xCC\x81\" + )\n"; /* CJK (2 columns), e + combining mark (1) */
  SourceFile f = {"k.py", wide, strlen(wide)};
  diag_error(&d, (SrcLoc){&f, 1, (int)(strchr(wide, ')') - wide) + 1}, "x");
  CHECK_STR(sb_str(&d.out), "k.py:1:16: error: x\n  s = \"\xE6\xBC\xA2" "e\xCC\x81\" + )\n              ^\n");
  sb_clear(&d.out);
  SourceFile g = {"k.py", "a\tb\x1b\xFF )", 7}; /* tab to column 8, ESC and a non-UTF-8 byte replaced */
  diag_error(&d, (SrcLoc){&g, 1, 7}, "x");
  CHECK_STR(sb_str(&d.out), "k.py:1:7: error: x\n  a       b?\xEF\xBF\xBD )\n              ^\n");
  sb_clear(&d.out);
  char line[1001];
  memset(line, 'a', 1000);
  line[1000] = 0;
  line[600] = ')';
  SourceFile h = {"k.py", line, 1000};
  diag_error(&d, (SrcLoc){&h, 1, 601}, "x");
  const char *out = sb_str(&d.out);
  const char *echo = strchr(out, '\n') + 1, *caret = strchr(echo, '\n') + 1;
  CHECK(strncmp(echo, "  ...", 5) == 0 && strstr(echo, "a...\n") != NULL);
  CHECK(caret - echo - 1 == 2 + 3 + 200 + 3); /* "  ", "...", 200 columns, "..." */
  CHECK(strchr(caret, '^') - caret == 2 + 3 + 100 && echo[strchr(caret, '^') - caret] == ')');
  diag_free(&d);
}

TEST(ir_typing_and_folding) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  IrVar *x = ir_var(&c, "x", TS_DTYPE_FLOAT16, IR_VAR_LET, SRCLOC_NONE);
  IrVar *i = ir_var(&c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  /* A literal adopts the IR operand's dtype. */
  IrExpr *e = ir_binary(&c, IR_MUL, ir_varref(&c, x, SRCLOC_NONE), ir_i32(&c, 2), SRCLOC_NONE);
  CHECK(e->dtype == TS_DTYPE_FLOAT16);
  CHECK(e->u.ops[1]->kind == IR_FLOAT);
  /* Floor semantics for negative operands, as in Python. */
  IrExpr *q = ir_binary(&c, IR_FLOORDIV, ir_i32(&c, -7), ir_i32(&c, 2), SRCLOC_NONE);
  IrExpr *r = ir_binary(&c, IR_FLOORMOD, ir_i32(&c, -7), ir_i32(&c, 2), SRCLOC_NONE);
  CHECK(q->kind == IR_INT && q->u.ival == -4);
  CHECK(r->kind == IR_INT && r->u.ival == 1);
  /* Comparisons are bool; identities drop. */
  IrExpr *iv = ir_varref(&c, i, SRCLOC_NONE);
  CHECK(ir_binary(&c, IR_LT, iv, ir_i32(&c, 3), SRCLOC_NONE)->dtype == TS_DTYPE_BOOL);
  CHECK(ir_binary(&c, IR_ADD, iv, ir_i32(&c, 0), SRCLOC_NONE) == iv);
  /* (i*8)//4 simplifies to i*2; ((i+3)+5) to i+8. */
  IrExpr *s = ir_simplify(&c, ir_binary(&c, IR_FLOORDIV, ir_binary(&c, IR_MUL, iv, ir_i32(&c, 8), SRCLOC_NONE),
                                         ir_i32(&c, 4), SRCLOC_NONE));
  StrBuf sb = {0};
  ir_print_expr(&sb, s);
  CHECK_STR(sb_str(&sb), "i * 2");
  sb_clear(&sb);
  s = ir_simplify(&c, ir_binary(&c, IR_ADD, ir_binary(&c, IR_ADD, iv, ir_i32(&c, 3), SRCLOC_NONE), ir_i32(&c, 5),
                                 SRCLOC_NONE));
  ir_print_expr(&sb, s);
  CHECK_STR(sb_str(&sb), "i + 8");
  /* Substitution then evaluation. */
  IrExpr *ten = ir_i32(&c, 10);
  IrExpr *sub = ir_subst(&c, ir_binary(&c, IR_SUB, ir_binary(&c, IR_MUL, iv, iv, SRCLOC_NONE), iv, SRCLOC_NONE),
                         &i, &ten, 1);
  int64_t v = 0;
  CHECK(ir_eval_int(sub, NULL, NULL, 0, &v) && v == 90);
  IrVar *vars[1] = {i};
  int64_t vals[1] = {-3};
  CHECK(ir_eval_int(ir_binary(&c, IR_FLOORMOD, iv, ir_i32(&c, 4), SRCLOC_NONE), vars, vals, 1, &v) && v == 1);
  sb_free(&sb);
  ts_compiler_fini(&c);
}

/* ir_range: interval bounds, and "unknown" where a product does not fit in 64 bits (a bound
 * just under the one-sided sentinel, as a clamp leaves it, times a tile size) instead of a
 * wrapped interval that could prove a bounds guard true. */
TEST(ir_range_bounds_and_overflow) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  IrVar *x = ir_var(&c, "x", TS_DTYPE_INT64, IR_VAR_LOOP, SRCLOC_NONE);
  IrExpr *prod = ir_binary(&c, IR_MUL, ir_varref(&c, x, SRCLOC_NONE), ir_int(&c, 128, TS_DTYPE_INT64, SRCLOC_NONE),
                           SRCLOC_NONE);
  IrRangeEnv env = {0};
  int64_t lo = 0, hi = 0;
  ir_range_env_add(&env, x, -2, 10);
  CHECK(ir_range(prod, &env, &lo, &hi) && lo == -256 && hi == 1280);
  env.n = 0;
  ir_range_env_add(&env, x, 0, INT64_MAX / 4 - 1);
  CHECK(!ir_range(prod, &env, &lo, &hi));
  /* (x * 128) mod 8 is in [0, 8) even where x * 128 is unknown */
  IrExpr *mod = ir_binary(&c, IR_FLOORMOD, prod, ir_int(&c, 8, TS_DTYPE_INT64, SRCLOC_NONE), SRCLOC_NONE);
  CHECK(ir_range(mod, &env, &lo, &hi) && lo == 0 && hi == 7);
  ts_compiler_fini(&c);
}

TEST(ir_print_precedence) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  IrVar *a = ir_var(&c, "a", TS_DTYPE_INT32, IR_VAR_PARAM, SRCLOC_NONE);
  IrVar *b = ir_var(&c, "b", TS_DTYPE_INT32, IR_VAR_PARAM, SRCLOC_NONE);
  IrExpr *ea = ir_varref(&c, a, SRCLOC_NONE), *eb = ir_varref(&c, b, SRCLOC_NONE);
  IrExpr *e = ir_binary(&c, IR_MUL, ir_binary(&c, IR_ADD, ea, eb, SRCLOC_NONE),
                        ir_binary(&c, IR_SUB, ea, eb, SRCLOC_NONE), SRCLOC_NONE);
  StrBuf sb = {0};
  ir_print_expr(&sb, e);
  CHECK_STR(sb_str(&sb), "(a + b) * (a - b)");
  sb_clear(&sb);
  ir_print_expr(&sb, ir_binary(&c, IR_SUB, ea, ir_binary(&c, IR_SUB, eb, ea, SRCLOC_NONE), SRCLOC_NONE));
  CHECK_STR(sb_str(&sb), "a - (b - a)");
  sb_free(&sb);
  ts_compiler_fini(&c);
}

/* IrIntProg (int_eval.c) gives what ir_eval_int gives, at every point: floor division and
 * modulo by powers of two (shifts, masks) and by other numbers over negative values too, XOR,
 * shifts, a LET expanded through its value; a division by zero fails in both; a SELECT is not
 * compiled (only one side of it is evaluated by the tree walk). */
static int slot_of_xy(const IrVar *v, void *ctx) {
  IrVar *const *xy = ctx;
  return v == xy[0] ? 0 : v == xy[1] ? 1 : -1;
}
static const IrExpr *value_of_let(const IrVar *v, void *ctx) {
  IrVar *const *xy = ctx;
  return v == xy[2] ? xy[2]->let_value : NULL;
}
TEST(ir_int_prog_matches_tree_evaluation) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  SrcLoc L = SRCLOC_NONE;
  IrVar *x = ir_var(&c, "x", TS_DTYPE_INT32, IR_VAR_LOOP, L), *y = ir_var(&c, "y", TS_DTYPE_INT32, IR_VAR_LOOP, L);
  IrExpr *X = ir_varref(&c, x, L), *Y = ir_varref(&c, y, L);
  IrVar *tv = ir_var(&c, "t", TS_DTYPE_INT32, IR_VAR_LET, L);
  tv->let_value = ir_binary(&c, IR_FLOORMOD, ir_binary(&c, IR_SUB, X, Y, L), ir_i32(&c, 6), L);
  IrExpr *T = ir_varref(&c, tv, L);
  IrExpr *es[] = {
      ir_binary(&c, IR_FLOORDIV, ir_binary(&c, IR_SUB, X, ir_i32(&c, 40), L), ir_i32(&c, 8), L),
      ir_binary(&c, IR_FLOORMOD, ir_binary(&c, IR_SUB, X, ir_i32(&c, 40), L), ir_i32(&c, 16), L),
      ir_binary(&c, IR_FLOORDIV, ir_binary(&c, IR_MUL, X, ir_i32(&c, -3), L), ir_i32(&c, 7), L),
      ir_binary(&c, IR_BITXOR, ir_binary(&c, IR_FLOORMOD, X, ir_i32(&c, 8), L), ir_binary(&c, IR_SHR, Y, ir_i32(&c, 2), L), L),
      ir_binary(&c, IR_ADD, ir_binary(&c, IR_MUL, T, ir_i32(&c, 64), L), ir_binary(&c, IR_TRUNCMOD, X, Y, L), L),
      ir_binary(&c, IR_LT, ir_binary(&c, IR_MIN, X, Y, L), ir_binary(&c, IR_SHL, Y, ir_i32(&c, 1), L), L),
  };
  IrVar *ctx[3] = {x, y, tv};
  IrIntSlots slots = {slot_of_xy, value_of_let, ctx};
  int bad = 0;
  for (size_t k = 0; k < sizeof es / sizeof es[0]; k++) {
    IrIntProg *p = ir_int_prog(es[k], &slots);
    REQUIRE(p);
    for (int64_t vx = -70; vx <= 70; vx += 3)
      for (int64_t vy = -9; vy <= 9; vy++) {
        int64_t vals[3] = {vx, vy, 0}, a = 0, b = 0;
        vals[2] = ((vx - vy) % 6 + 6) % 6;
        IrVar *vars[3] = {x, y, tv};
        bool ta = ir_eval_int(es[k], vars, vals, 3, &a), pa = ir_int_prog_run(p, vals, &b);
        bad += ta != pa || (ta && a != b);
      }
    ir_int_prog_free(p);
  }
  CHECK(bad == 0);
  IrExpr *sel = ir_select(&c, IR_SELECT, ir_binary(&c, IR_LT, X, Y, L), X, Y, L);
  CHECK(ir_int_prog(sel, &slots) == NULL);
  ts_compiler_fini(&c);
}
