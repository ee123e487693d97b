/* main.c — runs every registered unit test; prints "N passed, N failed". */
#include <stdlib.h>

#include "test.h"

typedef struct { const char *name; TestFn fn; } TestEntry;
static TestEntry tests[1024];
static int ntests;

void test_register(const char *name, TestFn fn) {
  if (ntests < (int)(sizeof tests / sizeof tests[0])) tests[ntests++] = (TestEntry){name, fn};
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0;
  for (int i = 0; i < ntests; i++) {
    if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
    TestCtx t = {tests[i].name, 0};
    tests[i].fn(&t);
    if (t.failures) {
      fprintf(stderr, "FAIL %s\n", tests[i].name);
      failed++;
    } else {
      passed++;
    }
  }
  printf("unit: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
