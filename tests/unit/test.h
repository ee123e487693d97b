/* test.h — a minimal unit-test registry.  Each TEST registers itself at start-up;
 * tests/unit/main.c runs them all (or those whose name contains argv[1]) and prints
 * "N passed, N failed".  CHECK records a failure and continues; REQUIRE returns. */
#ifndef TS_TEST_H
#define TS_TEST_H

#include <stdio.h>
#include <string.h>

typedef struct TestCtx {
  const char *name;
  int failures;
} TestCtx;
typedef void (*TestFn)(TestCtx *t);
void test_register(const char *name, TestFn fn);

#define TEST(fn)                                                                   \
  static void fn(TestCtx *t);                                                      \
  __attribute__((constructor)) static void test_reg_##fn(void) { test_register(#fn, fn); } \
  static void fn(TestCtx *t)

#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "  %s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, t->name, #cond); \
      t->failures++;                                                               \
    }                                                                              \
  } while (0)
#define REQUIRE(cond)                                                              \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "  %s:%d: %s: REQUIRE(%s) failed\n", __FILE__, __LINE__, t->name, #cond); \
      t->failures++;                                                               \
      return;                                                                      \
    }                                                                              \
  } while (0)
#define CHECK_STR(a, b)                                                            \
  do {                                                                             \
    const char *a_ = (a), *b_ = (b);                                               \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                       \
      fprintf(stderr, "  %s:%d: %s: strings differ:\n    got:  %s\n    want: %s\n", __FILE__, \
              __LINE__, t->name, a_ ? a_ : "(null)", b_ ? b_ : "(null)");          \
      t->failures++;                                                               \
    }                                                                              \
  } while (0)

#endif
