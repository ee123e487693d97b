/* test_host_call.c — host calls (src/front/host_call.c, ts_context_set_host_call): a factory's
 * call of a stub module's function with plain arguments reaches TsCompiler.host_call as
 * Python literal text (checked exactly, escapes and dtypes included), the answer's literal
 * text comes back as values (round trip through an echoing host), a failing host or a text
 * that is not a plain literal is a diagnostic at the call, and kernel bodies, non-plain
 * arguments and compilations without a host keep the stub's diagnostic. */
#include <stdlib.h>
#include <unistd.h>

#include "../../include/tilescale.h"
#include "../../src/front/front.h"
#include "test.h"

/* What the fake host saw, and its answers: one call record per test. */
typedef struct FakeHost {
  int calls;
  char module[64], qualname[64], args[512];
  char answer[512];
} FakeHost;

/* echo(*args) answers its positional arguments; fail raises; junk, big and dict answer text
 * that is no plain value; anything else answers 128. */
static int fake_host(void *user, const char *module, const char *qualname, const char *args, const char **result) {
  FakeHost *h = user;
  h->calls++;
  snprintf(h->module, sizeof h->module, "%s", module);
  snprintf(h->qualname, sizeof h->qualname, "%s", qualname);
  snprintf(h->args, sizeof h->args, "%s", args);
  *result = h->answer;
  if (!strcmp(qualname, "echo")) {
    size_t n = strlen(args); /* "((a, b), {})" -> "(a, b)" */
    snprintf(h->answer, sizeof h->answer, "%.*s", (int)(n - 6), args + 1);
  } else if (!strcmp(qualname, "fail")) {
    snprintf(h->answer, sizeof h->answer, "ValueError: no block fits");
    return 1;
  } else if (!strcmp(qualname, "junk")) {
    snprintf(h->answer, sizeof h->answer, "__import__('os').getcwd()");
  } else if (!strcmp(qualname, "big")) {
    snprintf(h->answer, sizeof h->answer, "[1, 123456789012345678901234567890]");
  } else {
    snprintf(h->answer, sizeof h->answer, "128");
  }
  return 0;
}

typedef struct HostFixture {
  TsCompiler c;
  SourceFile file;
  FakeHost host;
} HostFixture;

static IrFunc *compile_with_host(HostFixture *fx, const char *src, bool with_host) {
  ts_compiler_init(&fx->c, (TsTarget){90, true});
  memset(&fx->host, 0, sizeof fx->host);
  if (with_host) {
    fx->c.host_call = fake_host;
    fx->c.host_call_user = &fx->host;
  }
  fx->file = (SourceFile){"k.py", src, strlen(src)};
  ts_param p = {"M", "1024"};
  AstNode *m = parse_module(&fx->c, &fx->file);
  return m ? front_compile(&fx->c, m, "f", &p, 1) : NULL;
}

#define CHECK_DIAG(fx, sub)                                                                   \
  do {                                                                                        \
    const char *d_ = sb_str(&(fx)->c.diag.out);                                               \
    if (!strstr(d_, sub)) {                                                                   \
      fprintf(stderr, "  %s:%d: %s: missing \"%s\" in:\n%s\n", __FILE__, __LINE__, t->name, sub, d_); \
      t->failures++;                                                                          \
    }                                                                                         \
  } while (0)

/* The kernel every case returns: its thread count is the host's answer. */
#define KERNEL_TAIL                                                                           \
  "    @T.prim_func\n"                                                                        \
  "    def main(A: T.Tensor((M,), 'float32')):\n"                                             \
  "        with T.Kernel(1, threads=b) as bx:\n"                                              \
  "            A[bx] = 1.0\n"                                                                 \
  "    return main\n"

TEST(host_call_arguments_and_result) {
  HostFixture fx;
  const char *src = "import tilelang.language as T\n"
                    "from hostmod import pick\n"
                    "import hostmod.sub as hs\n"
                    "def f(M):\n"
                    "    b = pick(M, 'q\\'\"\\\\\\n\\t', -2.5, None, [True, (1,)], dtype=T.bfloat16)\n"
                    KERNEL_TAIL;
  IrFunc *f = compile_with_host(&fx, src, true);
  if (!f) fprintf(stderr, "%s", sb_str(&fx.c.diag.out));
  REQUIRE(f);
  CHECK(fx.host.calls == 1);
  CHECK_STR(fx.host.module, "hostmod");
  CHECK_STR(fx.host.qualname, "pick");
  CHECK_STR(fx.host.args, "((1024, 'q\\'\"\\\\\\n\\x09', -2.5, None, [True, (1,)]), {'dtype': T.bfloat16})");
  StrBuf ir = {0};
  ir_print_func(&ir, f);
  CHECK(strstr(sb_str(&ir), "threads=(128, 1, 1)"));
  sb_free(&ir);
  ts_compiler_fini(&fx.c);
}

/* What goes out comes back equal: the encoder's text is the decoder's input. */
TEST(host_call_round_trip) {
  HostFixture fx;
  const char *src = "import tilelang.language as T\n"
                    "import hostmod as h\n"
                    "def f(M):\n"
                    "    v = ('a\\'b\"\\\\\\n\\x01', -1.5, 1e300 * 10, -1e300 * 10, 0.1, None, False, [1, (2,)],\n"
                    "         T.float8_e4m3, -9223372036854775807 - 1, 9223372036854775807, (), [])\n"
                    "    assert h.echo(*v) == v\n"
                    "    x = h.echo(float('nan'))[0]\n"
                    "    assert x != x\n"
                    "    b = h.echo(64, 2)[0] * h.echo(2)[0]\n"
                    KERNEL_TAIL;
  IrFunc *f = compile_with_host(&fx, src, true);
  if (!f) fprintf(stderr, "%s", sb_str(&fx.c.diag.out));
  CHECK(f);
  CHECK(fx.host.calls == 4);
  ts_compiler_fini(&fx.c);
}

TEST(host_call_errors) {
  HostFixture fx;
  const char *src = "import tilelang.language as T\n"
                    "import hostmod as h\n"
                    "def f(M):\n"
                    "    a = h.fail(M)\n"
                    "    c = h.junk()\n"
                    "    d = h.big()\n"
                    "    e = h.pick(f)\n"
                    "    b = 128\n"
                    "    @T.prim_func\n"
                    "    def main(A: T.Tensor((M,), 'float32')):\n"
                    "        with T.Kernel(1, threads=b) as bx:\n"
                    "            A[bx] = h.pick(1)\n"
                    "    return main\n";
  CHECK(!compile_with_host(&fx, src, true));
  CHECK_DIAG(&fx, "k.py:4:9: error: calling hostmod.fail in Python failed: ValueError: no block fits");
  CHECK_DIAG(&fx, "k.py:5:9: error: hostmod.junk (called in Python) returned not a plain literal");
  CHECK_DIAG(&fx, "k.py:6:9: error: hostmod.big (called in Python) returned an integer that does not fit in 64 bits");
  CHECK_DIAG(&fx, "k.py:7:9: error: module 'hostmod' is not available in kernels: hostmod.pick is called in Python "
                  "only with plain arguments");
  CHECK_DIAG(&fx, "argument 1 is function");
  CHECK_DIAG(&fx, "k.py:12:21: error: module 'hostmod' is not available in kernels (a host function is called in "
                  "Python only outside kernel bodies)");
  CHECK(fx.host.calls == 3); /* fail, junk, big: never the kernel body's call nor the non-plain one */
  ts_compiler_fini(&fx.c);

  /* no host (the CLI, the C API without ts_context_set_host_call): the stub's diagnostic */
  CHECK(!compile_with_host(&fx, src, false));
  CHECK_DIAG(&fx, "k.py:4:9: error: module 'hostmod' is not available in kernels\n");
  ts_compiler_fini(&fx.c);
}

/* The public call: a context passes its host to every compile; NULL removes it. */
static int api_host(void *user, const char *module, const char *qualname, const char *args, const char **result) {
  (void)module, (void)qualname, (void)args;
  ++*(int *)user;
  *result = "32";
  return 0;
}

TEST(host_call_api) {
  ts_context *ctx = NULL;
  ts_context_options o = {.size = sizeof o, .disable_cache = 1};
  REQUIRE(ts_context_create(&o, &ctx) == TS_OK);
  CHECK(ts_context_set_host_call(NULL, api_host, NULL) == TS_ERR_INVALID_ARGUMENT);
  int calls = 0;
  CHECK(ts_context_set_host_call(ctx, api_host, &calls) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "from hostmod import pick\n"
                    "def f(M):\n"
                    "    b = pick(M)\n" KERNEL_TAIL;
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_param prm = {"M", "64"};
  ts_compile_options co = {.size = sizeof co, .arch = "sm_90a", .no_jit = 1};
  ts_kernel *k = NULL;
  CHECK(ts_kernel_compile(p, "f", &prm, 1, &co, &k) == TS_OK);
  CHECK(calls == 1);
  CHECK(k && strstr(ts_kernel_text(k, TS_EMIT_CUDA), "__launch_bounds__(32)"));
  ts_kernel_destroy(k);
  k = NULL;
  CHECK(ts_context_set_host_call(ctx, NULL, NULL) == TS_OK);
  CHECK(ts_kernel_compile(p, "f", &prm, 1, &co, &k) == TS_ERR_COMPILE);
  CHECK(strstr(ts_last_error(ctx), "'pick' (from module 'hostmod') is not available in kernels"));
  CHECK(calls == 1);
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* A sibling helper module the interpreter fails on (a class) is retried in the host: its
 * answer replaces the interpreter's errors; when the host fails too, they stay, with a note. */
TEST(host_call_sibling_retry) {
  char dir[] = "/tmp/ts_host_call_XXXXXX";
  REQUIRE(mkdtemp(dir));
  char helper[128], kernel[128];
  snprintf(helper, sizeof helper, "%s/sibmod.py", dir);
  snprintf(kernel, sizeof kernel, "%s/k.py", dir);
  FILE *fp = fopen(helper, "w");
  REQUIRE(fp);
  fputs("class Plan:\n"
        "    pass\n"
        "def plan(m):\n"
        "    return Plan(m)\n"
        "def fail(m):\n"
        "    return Plan(m)\n"
        "def fine(m):\n"
        "    return m // 4\n",
        fp);
  fclose(fp);
  const char *src = "import tilelang.language as T\n"
                    "from sibmod import plan, fail, fine\n"
                    "def f(M):\n"
                    "    b = plan(M) + fine(0)\n" KERNEL_TAIL;
  HostFixture fx;
  ts_compiler_init(&fx.c, (TsTarget){90, true});
  memset(&fx.host, 0, sizeof fx.host);
  fx.c.host_call = fake_host;
  fx.c.host_call_user = &fx.host;
  fx.file = (SourceFile){kernel, src, strlen(src)};
  ts_param p = {"M", "1024"};
  AstNode *m = parse_module(&fx.c, &fx.file);
  IrFunc *f = m ? front_compile(&fx.c, m, "f", &p, 1) : NULL;
  if (!f) fprintf(stderr, "%s", sb_str(&fx.c.diag.out));
  CHECK(f);
  CHECK(fx.host.calls == 1); /* plan only: fine() runs in the interpreter */
  CHECK_STR(fx.host.module, "sibmod");
  CHECK_STR(fx.host.args, "((1024,), {})");
  CHECK(fx.c.diag.errors == 0 && !strstr(sb_str(&fx.c.diag.out), "Plan"));
  ts_compiler_fini(&fx.c);

  const char *src2 = "import tilelang.language as T\n"
                     "from sibmod import fail\n"
                     "def f(M):\n"
                     "    b = fail(M)\n" KERNEL_TAIL;
  ts_compiler_init(&fx.c, (TsTarget){90, true});
  fx.c.host_call = fake_host;
  fx.c.host_call_user = &fx.host;
  fx.file = (SourceFile){kernel, src2, strlen(src2)};
  m = parse_module(&fx.c, &fx.file);
  CHECK(m && !front_compile(&fx.c, m, "f", &p, 1));
  CHECK_DIAG(&fx, "sibmod.py:6:12: error: Plan() takes no arguments (the class has no __init__)");
  CHECK_DIAG(&fx, "k.py:4:9: note: sibmod.fail could not be run in Python either: ValueError: no block fits");
  ts_compiler_fini(&fx.c);
  remove(helper);
  rmdir(dir);
}
