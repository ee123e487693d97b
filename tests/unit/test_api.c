/* test_api.c — the public API end to end without a GPU: a kernel file compiled with
 * no_jit, and the attributes recorded from its decorators read back through tilescale.h. */
#include <stdlib.h>
#include <string.h>

#include "../../include/tilescale.h"
#include "test.h"

static ts_kernel *compile_file(TestCtx *t, ts_context *ctx, ts_program **prog, const char *path, const char *func,
                               const ts_param *params, int nparams) {
  ts_kernel *k = NULL;
  if (ts_program_load_file(ctx, path, prog) != TS_OK) {
    fprintf(stderr, "  cannot load %s: %s\n", path, ts_last_error(ctx));
    t->failures++;
    return NULL;
  }
  ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 1, NULL, 0, NULL};
  if (ts_kernel_compile(*prog, func, params, nparams, &o, &k) != TS_OK) {
    fprintf(stderr, "  cannot compile %s: %s\n", path, ts_last_error(ctx));
    t->failures++;
    return NULL;
  }
  return k;
}

TEST(api_autotune_configs_recorded) {
  ts_context *ctx = NULL;
  REQUIRE(ts_context_create(NULL, &ctx) == TS_OK);
  ts_program *prog = NULL;
  ts_param p[] = {{"N", "4096"}, {"block", "256"}, {"threads", "128"}};
  ts_kernel *k = compile_file(t, ctx, &prog, "tests/front/autotune_configs.py", "tuned", p, 3);
  if (k) {
    int n = -1;
    const char *cfg = ts_kernel_autotune_configs(k, &n);
    CHECK(n == 6);
    CHECK(cfg && strstr(cfg, "'block': 512") && strstr(cfg, "'threads': 256"));
    CHECK(ts_kernel_num_pass_configs(k) == 0);
  }
  ts_kernel_destroy(k);
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
}

TEST(api_pass_configs_and_outputs_recorded) {
  ts_context *ctx = NULL;
  REQUIRE(ts_context_create(NULL, &ctx) == TS_OK);
  ts_program *prog = NULL;
  ts_param p[] = {{"N", "2048"}};
  ts_kernel *k = compile_file(t, ctx, &prog, "tests/front/lazy_pass_configs.py", "scaled", p, 1);
  if (k) {
    int n = 0;
    CHECK(ts_kernel_autotune_configs(k, &n) == NULL && n == 0);
    CHECK(ts_kernel_num_pass_configs(k) == 3);
    const char *key = NULL, *value = NULL;
    CHECK(ts_kernel_pass_config(k, 1, &key, &value) == TS_OK);
    CHECK_STR(key, "tl.disable_tma_lower");
    CHECK_STR(value, "True");
    CHECK(ts_kernel_pass_config(k, 3, &key, &value) == TS_ERR_INVALID_ARGUMENT);
    /* out_idx=[1]: the second parameter is an output. */
    ts_arg_info info;
    CHECK(ts_kernel_arg_info(k, 1, &info) == TS_OK && info.is_output == 1);
    CHECK(ts_kernel_arg_info(k, 0, &info) == TS_OK && info.is_output == 0);
  }
  ts_kernel_destroy(k);
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
}

/* pass_configs from the caller (tilelang.compile(func, pass_configs=...)): merged over the
 * decorator's, the caller's value winning; they change what the passes do (no warp
 * specialization); bad arrays are refused with a message. */
TEST(api_call_pass_configs_applied) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *prog = NULL;
  REQUIRE(ts_program_load_file(ctx, "examples/gemm_shared_epilogue.py", &prog) == TS_OK);
  ts_param p[] = {{"M", "512"}, {"N", "512"}, {"K", "512"}};
  for (int off = 0; off < 2; off++) {
    ts_param pc[] = {{"tl.disable_warp_specialized", off ? "True" : "False"}, {"tl.my_note", "1"}};
    ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, pc, 2, NULL};
    ts_kernel *k = NULL;
    REQUIRE(ts_kernel_compile(prog, "matmul", p, 3, &o, &k) == TS_OK);
    CHECK((strstr(ts_kernel_text(k, TS_EMIT_CUDA), "setmaxnreg") == NULL) == (off == 1));
    CHECK(ts_kernel_num_pass_configs(k) == 2);
    const char *key = NULL, *value = NULL;
    CHECK(ts_kernel_pass_config(k, 0, &key, &value) == TS_OK);
    CHECK_STR(key, "tl.disable_warp_specialized");
    CHECK_STR(value, off ? "True" : "False");
    ts_kernel_destroy(k);
  }
  ts_program_destroy(prog);
  /* the decorator's value is overridden, its other keys kept */
  REQUIRE(ts_program_load_file(ctx, "tests/front/lazy_pass_configs.py", &prog) == TS_OK);
  ts_param n[] = {{"N", "2048"}};
  ts_param pc[] = {{"tl.disable_tma_lower", "False"}};
  ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, pc, 1, NULL};
  ts_kernel *k = NULL;
  REQUIRE(ts_kernel_compile(prog, "scaled", n, 1, &o, &k) == TS_OK);
  CHECK(ts_kernel_num_pass_configs(k) == 3);
  const char *key = NULL, *value = NULL;
  CHECK(ts_kernel_pass_config(k, 1, &key, &value) == TS_OK);
  CHECK_STR(key, "tl.disable_tma_lower");
  CHECK_STR(value, "False");
  ts_kernel_destroy(k);
  k = NULL;
  o.pass_configs = NULL;
  CHECK(ts_kernel_compile(prog, "scaled", n, 1, &o, &k) == TS_ERR_INVALID_ARGUMENT && !k);
  CHECK(strstr(ts_last_error(ctx), "npass_configs is 1 but pass_configs is NULL") != NULL);
  ts_param bad[] = {{"tl.x", NULL}};
  o.pass_configs = bad;
  CHECK(ts_kernel_compile(prog, "scaled", n, 1, &o, &k) == TS_ERR_INVALID_ARGUMENT && !k);
  CHECK(strstr(ts_last_error(ctx), "pass_configs[0] has a NULL value") != NULL);
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
}

/* The integer after `key` in text, or -1. */
static long number_after(const char *text, const char *key) {
  const char *p = strstr(text, key);
  return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* Warp-specialized kernels of 1 to 4 consumer warpgroups (tests/front/ws_register_pool.py):
 * what the consumers' setmaxnreg.inc takes fits in what the producer's setmaxnreg.dec gives
 * back from the block's launch registers (65536 / (threads * blocks), a multiple of 8), else
 * the inc waits forever (TileLang issue 2522's GEMM of 512 threads hung on an H200). */
TEST(api_ws_register_pool) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *prog = NULL;
  REQUIRE(ts_program_load_file(ctx, "tests/front/ws_register_pool.py", &prog) == TS_OK);
  const char *cases[][4] = {{"gemm", "128", "256", "256"}, {"gemm", "128", "256", "512"}, {"gemm", "256", "128", "256"},
                            {"gemm", "256", "256", "512"}, {"scaled_rows", "128", NULL, NULL},
                            {"scaled_rows", "256", NULL, NULL}};
  int specialized = 0, wide = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_param gp[] = {{"block_M", cases[i][1]}, {"block_N", cases[i][2]}, {"threads", cases[i][3]}};
    ts_param sp[] = {{"threads", cases[i][1]}};
    int g = !strcmp(cases[i][0], "gemm");
    ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, NULL, 0, NULL};
    ts_kernel *k = NULL;
    CHECK(ts_kernel_compile(prog, cases[i][0], g ? gp : sp, g ? 3 : 1, &o, &k) == TS_OK);
    const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : "";
    long threads = number_after(cu, "__launch_bounds__("), dec = number_after(cu, "setmaxnreg_dec<"),
         inc = number_after(cu, "setmaxnreg_inc<");
    const char *comma = strstr(cu, "__launch_bounds__(") ? strchr(strstr(cu, "__launch_bounds__("), ',') : NULL;
    long blocks = comma ? strtol(comma + 1, NULL, 10) : 1;
    if (dec > 0 && inc > 0 && threads > 128 && blocks > 0) {
      long launch = 65536 / (threads * blocks) / 8 * 8;
      CHECK(inc * (threads - 128) + dec * 128 <= launch * threads);
      specialized++;
      wide += threads == 640;
    }
    ts_kernel_destroy(k);
  }
  CHECK(specialized >= 4 && wide >= 2);
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
}

/* $TILESCALE_PASS_CONFIGS: KEY=VALUE pairs applied over every compile's pass_configs, the
 * call's included (here it turns warp specialization off over the call's False); a pair
 * without '=' is refused, naming it. */
TEST(api_env_pass_configs) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *prog = NULL;
  REQUIRE(ts_program_load_file(ctx, "examples/gemm_shared_epilogue.py", &prog) == TS_OK);
  ts_param p[] = {{"M", "512"}, {"N", "512"}, {"K", "512"}};
  ts_param pc[] = {{"tl.disable_warp_specialized", "False"}};
  ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, pc, 1, NULL};
  ts_kernel *k = NULL;
  setenv("TILESCALE_PASS_CONFIGS", "tl.disable_warp_specialized=True, ts.note=1", 1);
  CHECK(ts_kernel_compile(prog, "matmul", p, 3, &o, &k) == TS_OK);
  if (k) {
    CHECK(strstr(ts_kernel_text(k, TS_EMIT_CUDA), "setmaxnreg") == NULL);
    CHECK(ts_kernel_num_pass_configs(k) == 2);
    const char *key = NULL, *value = NULL;
    CHECK(ts_kernel_pass_config(k, 1, &key, &value) == TS_OK);
    CHECK_STR(key, "ts.note");
    CHECK_STR(value, "1");
  }
  ts_kernel_destroy(k);
  k = NULL;
  setenv("TILESCALE_PASS_CONFIGS", "tl.disable_warp_specialized", 1);
  CHECK(ts_kernel_compile(prog, "matmul", p, 3, &o, &k) == TS_ERR_INVALID_ARGUMENT && !k);
  CHECK(strstr(ts_last_error(ctx), "TILESCALE_PASS_CONFIGS: 'tl.disable_warp_specialized' is not KEY=VALUE") != NULL);
  unsetenv("TILESCALE_PASS_CONFIGS");
  CHECK(ts_kernel_compile(prog, "matmul", p, 3, &o, &k) == TS_OK);
  CHECK(k && strstr(ts_kernel_text(k, TS_EMIT_CUDA), "setmaxnreg") != NULL);
  ts_kernel_destroy(k);
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
}

/* pass_configs ts.occupancy_launch_bounds (opt-in): a kernel without a producer warpgroup gets
 * __launch_bounds__(threads, the blocks per SM its shared memory and threads allow); without
 * it, no minimum; a warp-specialized kernel keeps its one block per SM. */
TEST(api_occupancy_launch_bounds) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *prog = NULL;
  REQUIRE(ts_program_load_file(ctx, "examples/gemm.py", &prog) == TS_OK);
  ts_param p[] = {{"M", "512"}, {"N", "512"}, {"K", "512"}};
  static const struct { const char *occ, *no_ws, *want; } cases[] = {
      {"True", "True", "__launch_bounds__(128, 2) "},  /* 3 stages of 32 KB: 2 blocks in 228 KB */
      {"False", "True", "__launch_bounds__(128) "},
      {"True", "False", "__launch_bounds__(256, 1) "}, /* the producer warpgroup's kernel */
  };
  for (int i = 0; i < 3; i++) {
    ts_param pc[] = {{"ts.occupancy_launch_bounds", cases[i].occ}, {"tl.disable_warp_specialized", cases[i].no_ws}};
    ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, pc, 2, NULL};
    ts_kernel *k = NULL;
    CHECK(ts_kernel_compile(prog, "matmul", p, 3, &o, &k) == TS_OK);
    CHECK(k && strstr(ts_kernel_text(k, TS_EMIT_CUDA), cases[i].want) != NULL);
    ts_kernel_destroy(k);
  }
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
}

/* Objects may be destroyed in any order: the context lives on until its last program and
 * kernel are gone (a Python interpreter's shutdown frees them in no particular order; this
 * once crashed every TileLang script at exit). */
TEST(api_context_destroyed_before_its_objects) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *p = NULL;
  const char *src = "import tilelang.language as T\n"
                    "@T.prim_func\n"
                    "def k(A: T.Tensor((64,), 'float32')):\n"
                    "    with T.Kernel(1, threads=64) as bx:\n"
                    "        for i in T.Parallel(64):\n"
                    "            A[i] = A[i] + 1\n";
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, NULL, 0, NULL};
  ts_kernel *k = NULL;
  REQUIRE(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  ts_context_destroy(ctx);     /* first: the program and kernel still work */
  CHECK(ts_kernel_text(k, TS_EMIT_CUDA) != NULL);
  ts_kernel *k2 = NULL;
  CHECK(ts_kernel_compile(p, "k", NULL, 0, &o, &k2) == TS_OK);
  ts_program_destroy(p);
  ts_kernel_destroy(k);
  ts_kernel_destroy(k2);       /* the context is freed here (ASan checks the order) */
}

/* Options are checked alone (no file): the CLI reports `--arch sm_999` or `--dump-after
 * bogus` as a usage error for every --emit, and the message names what is valid. */
TEST(api_compile_options_check) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, "layout_inference", 0, NULL, 0, NULL};
  CHECK(ts_compile_options_check(ctx, &o) == TS_OK);
  o.dump_after = "all";
  CHECK(ts_compile_options_check(ctx, &o) == TS_OK);
  o.dump_after = "bogus";
  CHECK(ts_compile_options_check(ctx, &o) == TS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "no pass named 'bogus'") && strstr(ts_last_error(ctx), "thread_sync"));
  o.dump_after = NULL;
  o.arch = "sm_999";
  CHECK(ts_compile_options_check(ctx, &o) == TS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "unknown GPU architecture 'sm_999'"));
  o.arch = NULL;
  o.compiler = (ts_compiler_kind)7;
  CHECK(ts_compile_options_check(ctx, &o) == TS_ERR_INVALID_ARGUMENT);
  /* ts_kernel_compile makes the same check, for callers that skip this one. */
  ts_program *prog = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", "x = 1\n", &prog) == TS_OK);
  ts_kernel *k = NULL;
  o.compiler = TS_COMPILER_NVRTC;
  o.dump_after = "bogus";
  CHECK(ts_kernel_compile(prog, "f", NULL, 0, &o, &k) == TS_ERR_INVALID_ARGUMENT && !k);
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
}

/* Kernel files: regular files only, at most TS_MAX_SOURCE_BYTES; text likewise. */
TEST(api_load_refuses_special_and_huge) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *prog = NULL;
  CHECK(ts_program_load_file(ctx, "/dev/zero", &prog) == TS_ERR_IO && !prog);
  CHECK(!strcmp(ts_last_error(ctx), "cannot read /dev/zero: is a character device"));
  CHECK(ts_program_load_file(ctx, "/", &prog) == TS_ERR_IO);
  CHECK(!strcmp(ts_last_error(ctx), "cannot read /: is a directory"));
  size_t n = TS_MAX_SOURCE_BYTES + 1;
  char *text = malloc(n + 1);
  REQUIRE(text);
  memset(text, '#', n);
  text[n] = 0;
  CHECK(ts_program_load_source(ctx, "big.py", text, &prog) == TS_ERR_INVALID_ARGUMENT && !prog);
  CHECK(strstr(ts_last_error(ctx), "over the 16.0 MiB limit"));
  free(text);
  ts_context_destroy(ctx);
}

/* TS_EMIT_STATS: the work counted from the tile-level IR, as JSON, read with ts_kernel_text
 * like every other artifact (tests/stats/ holds the CLI goldens). */
TEST(api_emit_stats) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "@T.prim_func\n"
                    "def k(A: T.Tensor((256, 128), 'float16'), B: T.Tensor((128, 64), 'float16'),\n"
                    "      C: T.Tensor((256, 64), 'float32')):\n"
                    "    with T.Kernel(1, 4, threads=128) as (bx, by):\n"
                    "        a = T.alloc_shared((64, 32), 'float16')\n"
                    "        b = T.alloc_shared((32, 64), 'float16')\n"
                    "        c = T.alloc_fragment((64, 64), 'float32')\n"
                    "        T.clear(c)\n"
                    "        for k in T.serial(4):\n"
                    "            T.copy(A[by * 64, k * 32], a)\n"
                    "            T.copy(B[k * 32, 0], b)\n"
                    "            T.gemm(a, b, c)\n"
                    "        T.copy(c, C[by * 64, 0])\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, NULL, 0, NULL};
  ts_kernel *k = NULL;
  REQUIRE(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  const char *stats = ts_kernel_text(k, TS_EMIT_STATS);
  REQUIRE(stats != NULL);
  /* 2*256*64*128 FLOPs; loads 4 blocks * 4 steps * (64*32 + 32*64) * 2 bytes; C: 256*64*4 */
  CHECK(strstr(stats, "\"total_flops\": 4194304,") != NULL);
  CHECK(strstr(stats, "\"flops_status\": \"exact\"") != NULL);
  CHECK(strstr(stats, "\"total_global_load_bytes\": 131072,") != NULL);
  CHECK(strstr(stats, "\"total_global_store_bytes\": 65536,") != NULL);
  CHECK(strstr(stats, "\"bytes_status\": \"exact\"") != NULL);
  CHECK(strstr(stats, "\"grid\": [1, 4, 1]") != NULL);
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* A wgmma GEMM's CUDA lists exactly the width it issues (N / WGN of the call) in
 * TS_WGMMA_N_LIST before including gemm.cuh, whose dispatchers expand only those widths
 * (NVRTC parse time) and static_assert on any other. */
TEST(api_cuda_lists_wgmma_widths) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "@T.prim_func\n"
                    "def k(A: T.Tensor((256, 256), 'float16'), B: T.Tensor((256, 256), 'float16'),\n"
                    "      C: T.Tensor((256, 256), 'float32')):\n"
                    "    with T.Kernel(2, 2, threads=256) as (bx, by):\n"
                    "        a = T.alloc_shared((128, 64), 'float16')\n"
                    "        b = T.alloc_shared((64, 128), 'float16')\n"
                    "        c = T.alloc_fragment((128, 128), 'float32')\n"
                    "        T.clear(c)\n"
                    "        for k in T.Pipelined(4, num_stages=2):\n"
                    "            T.copy(A[by * 128, k * 64], a)\n"
                    "            T.copy(B[k * 64, bx * 128], b)\n"
                    "            T.gemm(a, b, c)\n"
                    "        T.copy(c, C[by * 128, bx * 128])\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, NULL, 0, NULL};
  ts_kernel *k = NULL;
  REQUIRE(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  const char *cuda = ts_kernel_text(k, TS_EMIT_CUDA);
  REQUIRE(cuda != NULL);
  const char *list = strstr(cuda, "#define TS_WGMMA_N_LIST(X, A)");
  const char *inc = strstr(cuda, "#include <tilescale/gemm.cuh>");
  const char *call = strstr(cuda, "ts::gemm_ss_wgmma");
  REQUIRE(list && inc && call);
  CHECK(list < inc);
  int m = 0, n = 0, kk = 0, wgm = 0, wgn = 0, width = 0;
  REQUIRE(sscanf(strchr(call, '<'), "<%d, %d, %d, %d, %d,", &m, &n, &kk, &wgm, &wgn) == 5);
  REQUIRE(sscanf(list + strlen("#define TS_WGMMA_N_LIST(X, A)"), " X(%d, A)", &width) == 1);
  CHECK(wgn > 0 && width == n / wgn);
  int widths = 0; /* one GEMM, one width */
  for (const char *q = strstr(list, " X("); q && q < strchr(list, '\n'); q = strstr(q + 1, " X(")) widths++;
  CHECK(widths == 1);
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* ---- imports from the module path (ts_compile_options.module_path) ------------------------- */
static void put_file(const char *dir, const char *name, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* A kernel file imports a helper from a package outside its folder: found through the module
 * path (TileLang's tests import `examples.dequantize_gemm.quantize...` from the repository root),
 * not without it; a module there that does not parse stays a stub (the kernel does not use it)
 * and its diagnostics are withdrawn. */
TEST(api_imports_from_the_module_path) {
  char root[] = "/tmp/ts_modpath_XXXXXX";
  REQUIRE(mkdtemp(root) != NULL);
  char pkg[600], kdir[600], bad[600];
  snprintf(pkg, sizeof pkg, "%s/lib/helpers", root);
  snprintf(kdir, sizeof kdir, "%s/kernels", root);
  snprintf(bad, sizeof bad, "%s/lib", root);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "mkdir -p %s %s", pkg, kdir);
  REQUIRE(system(cmd) == 0);
  put_file(pkg, "__init__.py", "");
  put_file(pkg, "scale.py", "def twice(x):\n    return x * 2\n");
  put_file(bad, "hostonly.py", "def f(:\n    pass\n");
  put_file(kdir, "k.py",
           "import tilelang.language as T\n"
           "import hostonly\n"
           "from helpers.scale import twice\n"
           "\n"
           "@T.prim_func\n"
           "def k(A: T.Tensor((64,), 'float32')):\n"
           "    with T.Kernel(1, threads=64) as bx:\n"
           "        for i in T.Parallel(64):\n"
           "            A[i] = twice(A[i])\n");
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  char kfile[700];
  snprintf(kfile, sizeof kfile, "%s/k.py", kdir);
  ts_program *p = NULL;
  REQUIRE(ts_program_load_file(ctx, kfile, &p) == TS_OK);
  char path[1300];
  snprintf(path, sizeof path, "/nonexistent:%s", bad);
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a", .no_jit = 1, .module_path = path};
  ts_kernel *k = NULL;
  ts_status s = ts_kernel_compile(p, "k", NULL, 0, &o, &k);
  if (s != TS_OK) fprintf(stderr, "  %s\n", ts_last_error(ctx));
  CHECK(s == TS_OK);
  CHECK(k && strstr(ts_kernel_text(k, TS_EMIT_CUDA), "* 2.0") != NULL);
  ts_kernel_destroy(k);
  k = NULL;
  o.module_path = "";  /* none: the helper is not found, and calling it says so */
  CHECK(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_ERR_COMPILE && !k);
  CHECK(strstr(ts_last_error(ctx), "k.py:9:20: error: 'twice' (from module 'helpers.scale') is not available") != NULL);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  CHECK(system(cmd) == 0);
}
