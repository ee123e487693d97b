/* test_limits.c — the evaluator's resource limits (TsCompiler.limit_steps / limit_depth /
 * limit_bytes, enforced in src/front/value.c and eval_entry.c): runaway programs run at compile time
 * (infinite `while True`, unbounded recursion, `[0] * 10**9`, a huge Python `range`
 * loop, a list grown without end) must end in one diagnostic at the user's line, never
 * in a hang, a stack overflow or the OOM killer.  Each case runs with small limits so
 * the suite stays fast, and checks the exact message and line:col.  The parser's own
 * nesting limit is checked here too (deeply nested input must not overflow the C stack). */
#include "../../src/front/front.h"
#include "test.h"

typedef struct LimitRun {
  TsCompiler c;
  SourceFile file;
  IrFunc *f;
} LimitRun;

/* The kernel all cases share after their runaway prologue: reaching it means the
 * factory body ran to the end. */
#define KERNEL_TAIL                                     \
  "    @T.prim_func\n"                                  \
  "    def main(A: T.Tensor((N,), \"float32\")):\n"     \
  "        with T.Kernel(1, threads=32) as bx:\n"       \
  "            A[bx] = 1.0\n"                           \
  "    return main\n"

static void run_limited(LimitRun *r, const char *src, int steps, int depth, int64_t bytes) {
  ts_compiler_init(&r->c, (TsTarget){90, true});
  r->c.limit_steps = steps;
  r->c.limit_depth = depth;
  r->c.limit_bytes = bytes;
  r->file = (SourceFile){"k.py", src, strlen(src)};
  ts_param p = {"N", "64"};
  AstNode *m = parse_module(&r->c, &r->file);
  r->f = m ? front_compile(&r->c, m, "k", &p, 1) : NULL;
}

/* The first line of the diagnostics ("k.py:L:C: error: ..."). */
static const char *first_line(LimitRun *r, char *buf, size_t n) {
  const char *s = sb_str(&r->c.diag.out);
  size_t i = 0;
  while (s[i] && s[i] != '\n' && i + 1 < n) {
    buf[i] = s[i];
    i++;
  }
  buf[i] = 0;
  return buf;
}

TEST(limit_steps_while_true) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    x = 0\n"
              "    while True:\n"
              "        x += 1\n" KERNEL_TAIL,
              5000, 0, 0);
  char buf[256];
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 1);
  CHECK_STR(first_line(&r, buf, sizeof buf), "k.py:4:5: error: evaluation step limit (5000) exceeded");
  ts_compiler_fini(&r.c);
}

TEST(limit_steps_huge_range) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    total = 0\n"
              "    for i in range(10**12):\n"
              "        total += i\n" KERNEL_TAIL,
              5000, 0, 0);
  char buf[256];
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 1);
  CHECK_STR(first_line(&r, buf, sizeof buf), "k.py:4:14: error: evaluation step limit (5000) exceeded");
  ts_compiler_fini(&r.c);
}

/* A loop that finishes within the limit is not affected by it. */
TEST(limit_steps_bounded_loop_ok) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    total = 0\n"
              "    for i in range(1000):\n"
              "        total += i\n"
              "    assert total == 499500\n" KERNEL_TAIL,
              5000, 0, 0);
  CHECK(r.f != NULL);
  CHECK(r.c.diag.errors == 0);
  ts_compiler_fini(&r.c);
}

TEST(limit_depth_recursion) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def fact(n):\n"
              "    return n * fact(n - 1)\n"
              "def k(N):\n"
              "    f = fact(N)\n" KERNEL_TAIL,
              0, 30, 0);
  char buf[256];
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 1);
  CHECK_STR(first_line(&r, buf, sizeof buf), "k.py:3:16: error: maximum recursion depth (30) exceeded");
  ts_compiler_fini(&r.c);
}

/* Mutual recursion through lambdas and a recursion that ends in time are both fine. */
TEST(limit_depth_bounded_recursion_ok) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def fact(n):\n"
              "    return 1 if n <= 1 else n * fact(n - 1)\n"
              "def k(N):\n"
              "    assert fact(10) == 3628800\n" KERNEL_TAIL,
              0, 30, 0);
  CHECK(r.f != NULL);
  CHECK(r.c.diag.errors == 0);
  ts_compiler_fini(&r.c);
}

TEST(limit_bytes_list_repeat) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    zeros = [0] * 10**9\n" KERNEL_TAIL,
              0, 0, 0 /* the default limit: the size is checked before anything is built */);
  char buf[256];
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 1);
  CHECK_STR(first_line(&r, buf, sizeof buf), "k.py:3:13: error: evaluation memory limit (1024 MB) exceeded");
  ts_compiler_fini(&r.c);
}

TEST(limit_bytes_string_repeat) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    s = 'ab' * 10**12\n" KERNEL_TAIL,
              0, 0, (int64_t)16 << 20);
  char buf[256];
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 1);
  CHECK_STR(first_line(&r, buf, sizeof buf), "k.py:3:9: error: evaluation memory limit (16 MB) exceeded");
  ts_compiler_fini(&r.c);
}

/* Growth one append at a time: caught by the arena check on each loop step, reported
 * once at the loop's line. */
TEST(limit_bytes_gradual_growth) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    rows = []\n"
              "    for i in range(10**9):\n"
              "        rows.append([i] * 1000)\n" KERNEL_TAIL,
              0, 0, (int64_t)16 << 20);
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 1);
  CHECK(strstr(sb_str(&r.c.diag.out), "error: evaluation memory limit (16 MB) exceeded") != NULL);
  CHECK(strncmp(sb_str(&r.c.diag.out), "k.py:", 5) == 0);
  ts_compiler_fini(&r.c);
}

/* list(range(huge)) builds its list inside a builtin: the step limit stops it. */
TEST(limit_list_of_huge_range) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    big = list(range(10**10))\n" KERNEL_TAIL,
              5000, 0, (int64_t)64 << 20);
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 1);
  CHECK(strstr(sb_str(&r.c.diag.out), "k.py:3:") != NULL);
  CHECK(strstr(sb_str(&r.c.diag.out), "limit") != NULL);
  ts_compiler_fini(&r.c);
}

/* Integer powers are computed by squaring: exact, fast for huge exponents of 0/1/-1,
 * and overflow is a diagnostic. */
TEST(limit_int_pow) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    assert (-1) ** 3 == -1\n"
              "    assert (-1) ** (10**18) == 1\n"
              "    assert 1 ** (10**18) == 1\n"
              "    assert 3 ** 39 == 4052555153018976267\n"
              "    assert (-2) ** 63 == -9223372036854775807 - 1\n"
              "    x = 2 ** 64\n" KERNEL_TAIL,
              5000, 0, 0);
  char buf[256];
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 1);
  CHECK_STR(first_line(&r, buf, sizeof buf),
            "k.py:8:9: error: integer overflow in '**' (values are limited to 64 bits)");
  ts_compiler_fini(&r.c);
}

/* Deeply nested input (10k parentheses, unary operators, lambdas) is one diagnostic,
 * not a stack overflow. */
TEST(limit_parser_nesting) {
  static const char *const opens[] = {"(", "-", "[", "lambda: ", "not ", "{1: "};
  for (int k = 0; k < TS_ARRAY_LEN(opens); k++) {
    StrBuf sb = {0};
    sb_append(&sb, "x = ");
    for (int i = 0; i < 10000; i++) sb_append(&sb, opens[k]);
    sb_append(&sb, "1\n");
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    SourceFile f = {"deep.py", sb_str(&sb), sb.len};
    (void)parse_module(&c, &f);
    CHECK(c.diag.errors >= 1);
    CHECK(strstr(sb_str(&c.diag.out), "nested too deeply") != NULL || strstr(sb_str(&c.diag.out), "too many") != NULL);
    ts_compiler_fini(&c);
    sb_free(&sb);
  }
}

/* A list that contains itself, and a DAG that doubles 60 times: comparing and printing
 * them must terminate (bounded depth, visits and text), and the kernel still compiles. */
TEST(limit_self_referential_values) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    a = []\n"
              "    a.append(a)\n"
              "    b = []\n"
              "    b.append(b)\n"
              "    same = a == b\n"
              "    s = f'{a}'\n"
              "    assert s.startswith('[[[[')\n"
              "    d = [1]\n"
              "    e = [1]\n"
              "    for i in range(60):\n"
              "        d = [d, d]\n"
              "        e = [e, e]\n"
              "    t = str(d)\n"
              "    assert len(t) > 1000000 and len(t) < 1100000\n"
              "    c = d in [e, e]\n" KERNEL_TAIL,
              5000, 0, 0);
  CHECK(r.c.diag.errors == 0);
  CHECK(r.f != NULL);
  if (r.c.diag.errors) fprintf(stderr, "%s", sb_str(&r.c.diag.out));
  ts_compiler_fini(&r.c);
}

/* Staged expressions no pass could handle: 5000 nested additions from sum(), and a DAG
 * doubled 60 times by a helper (2**60 nodes as a tree).  Both are one diagnostic at the
 * store, in bounded time. */
TEST(limit_ir_expression_size) {
  static const char *const bodies[] = {
      "import tilelang.language as T\n"
      "def k(N):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), \"float32\")):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            A[bx] = sum([A[i % 4] for i in range(5000)])\n"
      "    return main\n",
      "import tilelang.language as T\n"
      "def dbl(e, n):\n"
      "    return e if n == 0 else dbl(e + e, n - 1)\n"
      "def k(N):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), \"float32\")):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            A[bx] = dbl(A[0], 60)\n"
      "    return main\n",
  };
  static const char *const want[] = {
      "k.py:6:13: error: expression too large to compile (more than 1000000 operations, or nested more than 1000 deep)",
      "k.py:8:13: error: expression too large to compile (more than 1000000 operations, or nested more than 1000 deep)",
  };
  for (int i = 0; i < 2; i++) {
    LimitRun r;
    run_limited(&r, bodies[i], 0, 0, 0);
    char buf[256];
    CHECK(r.f == NULL);
    CHECK(r.c.diag.errors == 1);
    CHECK_STR(first_line(&r, buf, sizeof buf), want[i]);
    ts_compiler_fini(&r.c);
  }
}

/* Shifts follow Python on 64-bit values: exact when the result fits, an overflow error
 * when bits would be lost (1 << 200 used to wrap to 256), an error for negative counts. */
TEST(limit_int_shift) {
  LimitRun r;
  run_limited(&r,
              "import tilelang.language as T\n"
              "def k(N):\n"
              "    assert 1 << 62 == 4611686018427387904\n"
              "    assert -1 << 63 == -9223372036854775807 - 1\n"
              "    assert -8 >> 100 == -1 and 8 >> 100 == 0 and 5 >> 1 == 2\n"
              "    assert 0 << 1000 == 0\n"
              "    a = 1 << 200\n"
              "    b = 1 << -1\n" KERNEL_TAIL,
              5000, 0, 0);
  CHECK(r.f == NULL);
  CHECK(r.c.diag.errors == 2);
  const char *d = sb_str(&r.c.diag.out);
  CHECK(strstr(d, "k.py:7:9: error: integer overflow in '<<' (values are limited to 64 bits)") != NULL);
  CHECK(strstr(d, "k.py:8:9: error: negative shift count") != NULL);
  ts_compiler_fini(&r.c);
}
