/* test_eval.c — unit tests of the staging evaluator (src/front/eval*.c): small kernel
 * files are parsed and compiled with front_compile, then the resulting IrFunc is checked
 * both structurally (params, buffers, statement kinds, regions) and through the printed
 * IR; error cases check the exact diagnostic text and its line:col; -D parameters of
 * every kind are bound and checked. */
#include <stdlib.h>

#include "../../src/front/front.h"
#include "test.h"

typedef struct EvalFixture {
  TsCompiler c;
  SourceFile file;
  StrBuf ir;
  IrFunc *f;
} EvalFixture;

/* Compiles `func` of `src` with "name=value" parameters (NULL-terminated list). */
static IrFunc *compile_src(EvalFixture *fx, const char *src, const char *func, const char *const *params) {
  ts_compiler_init(&fx->c, (TsTarget){90, true});
  fx->file = (SourceFile){"k.py", src, strlen(src)};
  fx->ir = (StrBuf){0};
  ts_param ps[16];
  char buf[16][128];
  int np = 0;
  for (; params && params[np]; np++) {
    snprintf(buf[np], sizeof buf[np], "%s", params[np]);
    char *eq = strchr(buf[np], '=');
    *eq = 0;
    ps[np].name = buf[np];
    ps[np].value = eq + 1;
  }
  AstNode *m = parse_module(&fx->c, &fx->file);
  fx->f = m ? front_compile(&fx->c, m, func, ps, np) : NULL;
  if (fx->f) {
    ir_print_func(&fx->ir, fx->f);
    ir_verify(&fx->c, fx->f, "front");
  }
  return fx->f;
}
static const char *ir_text(EvalFixture *fx) { return sb_str(&fx->ir); }
static const char *diag_text(EvalFixture *fx) { return sb_str(&fx->c.diag.out); }
static void fini(EvalFixture *fx) {
  sb_free(&fx->ir);
  ts_compiler_fini(&fx->c);
}

#define CHECK_HAS(text, sub)                                                                  \
  do {                                                                                        \
    const char *t_ = (text);                                                                  \
    if (!strstr(t_, sub)) {                                                                   \
      fprintf(stderr, "  %s:%d: %s: missing \"%s\" in:\n%s\n", __FILE__, __LINE__, t->name, sub, t_); \
      t->failures++;                                                                          \
    }                                                                                         \
  } while (0)

/* Finds the first statement of kind k in a tree (depth-first). */
static const IrStmt *find_stmt(const IrStmt *s, IrStmtKind k) {
  if (!s) return NULL;
  if (s->kind == k) return s;
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      const IrStmt *r = find_stmt(s->u.seq.items[i], k);
      if (r) return r;
    }
    return NULL;
  case IR_S_FOR: return find_stmt(s->u.loop.body, k);
  case IR_S_IF: {
    const IrStmt *r = find_stmt(s->u.if_.then_s, k);
    return r ? r : find_stmt(s->u.if_.else_s, k);
  }
  case IR_S_WHILE: return find_stmt(s->u.while_.body, k);
  case IR_S_KERNEL: return find_stmt(s->u.kernel.body, k);
  default: return NULL;
  }
}
static int count_stmt(const IrStmt *s, IrStmtKind k) {
  if (!s) return 0;
  int n = s->kind == k;
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) n += count_stmt(s->u.seq.items[i], k);
    break;
  case IR_S_FOR: n += count_stmt(s->u.loop.body, k); break;
  case IR_S_IF: n += count_stmt(s->u.if_.then_s, k) + count_stmt(s->u.if_.else_s, k); break;
  case IR_S_WHILE: n += count_stmt(s->u.while_.body, k); break;
  case IR_S_KERNEL: n += count_stmt(s->u.kernel.body, k); break;
  default: break;
  }
  return n;
}
static int64_t cint(const IrExpr *e) {
  int64_t v = -999;
  ir_is_const_int(e, &v);
  return v;
}

static const char *const SOFTMAX =
    "import torch\n"
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit(out_idx=[-1], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})\n"
    "def softmax(M, N, block_M=2, threads=128, dtype=\"float16\", accum_dtype=\"float32\"):\n"
    "    log2e = 1.44269504088896\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:\n"
    "            x = T.alloc_fragment((block_M, N), accum_dtype)\n"
    "            row_max = T.alloc_fragment((block_M,), accum_dtype)\n"
    "            row_sum = T.alloc_fragment((block_M,), accum_dtype)\n"
    "            T.copy(X[bx * block_M, 0], x)\n"
    "            T.reduce_max(x, row_max, dim=1, clear=True)\n"
    "            for i, j in T.Parallel(block_M, N):\n"
    "                x[i, j] = T.exp2(x[i, j] * log2e - row_max[i] * log2e)\n"
    "            T.reduce_sum(x, row_sum, dim=-1)\n"
    "            for i, j in T.Parallel(block_M, N):\n"
    "                x[i, j] = x[i, j] / row_sum[i]\n"
    "            T.copy(x, Y[bx * block_M, 0])\n"
    "    return main\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    x = torch.randn(4, 4)\n"
    "    kernel = softmax(4, 4)\n";

TEST(eval_lazy_factory_softmax) {
  EvalFixture fx;
  const char *ps[] = {"M=256", "N=1024", NULL};
  IrFunc *f = compile_src(&fx, SOFTMAX, "softmax", ps);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_STR(f->name, "softmax");
  REQUIRE(f->nparams == 2);
  CHECK_STR(f->params[0].name, "X");
  REQUIRE(f->params[0].buf);
  CHECK(f->params[0].buf->scope == IR_SCOPE_GLOBAL);
  CHECK(f->params[0].buf->param_index == 0);
  CHECK(f->params[1].buf->param_index == 1);
  CHECK(f->params[0].buf->dtype == TS_DTYPE_FLOAT16);
  CHECK(cint(f->params[0].buf->shape[0]) == 256 && cint(f->params[0].buf->shape[1]) == 1024);
  /* out_idx=[-1] normalised against 2 params; pass config recorded */
  CHECK(f->nout_idx == 1 && f->out_idx[0] == 1);
  REQUIRE(f->npass_configs == 1);
  CHECK_STR(f->pass_configs[0].key, "tl.enable_fast_math");
  CHECK_STR(f->pass_configs[0].value, "True");
  CHECK(fx.c.fast_math);
  const IrStmt *k = find_stmt(f->body, IR_S_KERNEL);
  REQUIRE(k);
  CHECK(cint(k->u.kernel.grid[0]) == 128); /* ceildiv(256, 2) */
  CHECK(cint(k->u.kernel.grid[1]) == 1);
  CHECK(k->u.kernel.threads[0] == 128 && k->u.kernel.threads[1] == 1);
  REQUIRE(k->u.kernel.block_var[0]);
  CHECK_STR(k->u.kernel.block_var[0]->name, "bx");
  CHECK(k->u.kernel.block_var[0]->kind == IR_VAR_BLOCK_IDX && k->u.kernel.block_var[0]->axis == 0);
  CHECK(count_stmt(f->body, IR_S_ALLOC) == 3);
  CHECK(count_stmt(f->body, IR_S_COPY) == 2);
  CHECK(count_stmt(f->body, IR_S_REDUCE) == 2);
  /* the corner X[bx*2, 0] takes the fragment's extents */
  const IrStmt *cp = find_stmt(f->body, IR_S_COPY);
  REQUIRE(cp);
  CHECK(cp->u.copy.src.buf == f->params[0].buf);
  CHECK(cint(cp->u.copy.src.extent[0]) == 2 && cint(cp->u.copy.src.extent[1]) == 1024);
  CHECK(cp->u.copy.dst.buf->scope == IR_SCOPE_FRAGMENT);
  CHECK_STR(cp->u.copy.dst.buf->name, "x");
  const IrStmt *red = find_stmt(f->body, IR_S_REDUCE);
  CHECK(red->u.reduce.op == IR_RED_MAX && red->u.reduce.dim == 1 && red->u.reduce.clear);
  /* T.Parallel(block_M, N) with a tuple target -> two nested parallel loops */
  const IrStmt *loop = find_stmt(f->body, IR_S_FOR);
  REQUIRE(loop);
  CHECK(loop->u.loop.kind == IR_FOR_PARALLEL && cint(loop->u.loop.extent) == 2);
  CHECK_STR(loop->u.loop.var->name, "i");
  REQUIRE(loop->u.loop.body->kind == IR_S_FOR);
  CHECK(cint(loop->u.loop.body->u.loop.extent) == 1024);
  CHECK_HAS(ir_text(&fx), "T.exp2(");
  CHECK_HAS(ir_text(&fx), "x[i, j] / row_sum[i]");
  fini(&fx);
}

TEST(eval_dparam_defaults_and_override) {
  EvalFixture fx;
  const char *ps[] = {"M=64", "N=128", "block_M=4", "threads=(64,)", NULL};
  /* threads as a 1-tuple: T.Kernel accepts tuples */
  IrFunc *f = compile_src(&fx, SOFTMAX, "softmax", ps);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  const IrStmt *k = find_stmt(f->body, IR_S_KERNEL);
  CHECK(cint(k->u.kernel.grid[0]) == 16);
  CHECK(k->u.kernel.threads[0] == 64);
  CHECK(cint(f->params[0].buf->shape[1]) == 128);
  fini(&fx);

  const char *ps2[] = {"M=64", "N=128", "dtype=bfloat16", NULL};
  f = compile_src(&fx, SOFTMAX, "softmax", ps2);
  REQUIRE(f);
  CHECK(f->params[0].buf->dtype == TS_DTYPE_BFLOAT16);
  fini(&fx);

  const char *ps3[] = {"M=64", "N=128", "dtype=T.float32", "accum_dtype='float64'", NULL};
  f = compile_src(&fx, SOFTMAX, "softmax", ps3);
  REQUIRE(f);
  CHECK(f->params[1].buf->dtype == TS_DTYPE_FLOAT32);
  const IrStmt *al = find_stmt(f->body, IR_S_ALLOC);
  CHECK(al->u.alloc.buf->dtype == TS_DTYPE_FLOAT64);
  fini(&fx);
}

static const char *const KINDS =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "@tilelang.jit\n"
    "def kinds(n, scale, flag, name, dt, shape):\n"
    "    assert isinstance(n, int) and isinstance(scale, float) and isinstance(name, str)\n"
    "    assert len(shape) == 2, 'shape must be 2-d'\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor(shape, dt)):\n"
    "        with T.Kernel(1, threads=32) as bx:\n"
    "            for i in T.serial(n):\n"
    "                if flag:\n"
    "                    A[i, 0] = scale\n"
    "                else:\n"
    "                    A[i, 1] = 7\n"
    "            if name == 'fill':\n"
    "                A[0, 0] = 1\n"
    "    return main\n";

TEST(eval_dparam_kinds) {
  EvalFixture fx;
  const char *ps[] = {"n=3", "scale=0.25", "flag=True", "name='fill'", "dt=float16", "shape=(8, 4)", NULL};
  IrFunc *f = compile_src(&fx, KINDS, "kinds", ps);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  IrBuffer *a = f->params[0].buf;
  CHECK(a->dtype == TS_DTYPE_FLOAT16 && a->ndim == 2 && cint(a->shape[0]) == 8 && cint(a->shape[1]) == 4);
  const IrStmt *loop = find_stmt(f->body, IR_S_FOR);
  REQUIRE(loop);
  CHECK(loop->u.loop.kind == IR_FOR_SERIAL && cint(loop->u.loop.extent) == 3);
  /* flag=True folded the Python `if`: only the then-branch store exists, and no IR IF */
  CHECK(count_stmt(f->body, IR_S_IF) == 0);
  CHECK(count_stmt(f->body, IR_S_STORE) == 2);
  const IrStmt *st = find_stmt(loop->u.loop.body, IR_S_STORE);
  REQUIRE(st);
  CHECK(st->u.store.value->kind == IR_FLOAT && st->u.store.value->dtype == TS_DTYPE_FLOAT16);
  CHECK(st->u.store.value->u.fval == 0.25);
  CHECK(cint(st->u.store.idx[1]) == 0);
  fini(&fx);

  const char *ps2[] = {"n=3", "scale=1.5", "flag=False", "name='x'", "dt=T.int32", "shape=[8, 4]", NULL};
  f = compile_src(&fx, KINDS, "kinds", ps2);
  REQUIRE(f);
  CHECK(f->params[0].buf->dtype == TS_DTYPE_INT32);
  CHECK(count_stmt(f->body, IR_S_STORE) == 1);
  st = find_stmt(f->body, IR_S_STORE);
  CHECK(cint(st->u.store.idx[1]) == 1 && cint(st->u.store.value) == 7);
  fini(&fx);

  /* Python assert on a parameter fails with its message */
  const char *ps3[] = {"n=3", "scale=1.5", "flag=False", "name='x'", "dt=T.int32", "shape=(8,)", NULL};
  f = compile_src(&fx, KINDS, "kinds", ps3);
  CHECK(!f);
  CHECK_HAS(diag_text(&fx), "k.py:6:5: error: assertion failed: shape must be 2-d");
  fini(&fx);
}

TEST(eval_dparam_errors) {
  EvalFixture fx;
  const char *ps[] = {"M=64", "N=128", "blockM=4", NULL};
  CHECK(!compile_src(&fx, SOFTMAX, "softmax", ps));
  CHECK_HAS(diag_text(&fx), "k.py:6:1: error: unknown parameter 'blockM' for 'softmax' (parameters: M, N, block_M=..., "
                            "threads=..., dtype=..., accum_dtype=...)");
  fini(&fx);

  const char *ps2[] = {"M=64", NULL};
  CHECK(!compile_src(&fx, SOFTMAX, "softmax", ps2));
  CHECK_HAS(diag_text(&fx), "error: missing value for parameter 'N' of 'softmax': pass -D N=...");
  fini(&fx);

  const char *ps3[] = {"M=64", "N=(1,", NULL};
  CHECK(!compile_src(&fx, SOFTMAX, "softmax", ps3));
  CHECK_HAS(diag_text(&fx), "-D N:1:1: error:");
  fini(&fx);

  const char *ps4[] = {"M=64", "N=nosuch", NULL};
  CHECK(!compile_src(&fx, SOFTMAX, "softmax", ps4));
  CHECK_HAS(diag_text(&fx), "-D N:1:1: error: name 'nosuch' is not defined");
  fini(&fx);

  CHECK(!compile_src(&fx, SOFTMAX, "nosuch", NULL));
  CHECK_HAS(diag_text(&fx), "error: no function named 'nosuch' in the file (compilable functions: softmax)");
  fini(&fx);
}

static const char *const EAGER =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "@tilelang.jit\n"
    "def matmul(A, B, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32):\n"
    "    M, N, K = T.const('M, N, K')\n"
    "    A: T.Tensor((M, K), dtype)\n"
    "    B: T.Tensor((K, N), dtype)\n"
    "    C = T.empty((M, N), dtype)\n"
    "    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "        A_shared = T.alloc_shared((block_M, block_K), dtype)\n"
    "        B_shared = T.alloc_shared((block_K, block_N), dtype)\n"
    "        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)\n"
    "        T.clear(C_local)\n"
    "        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):\n"
    "            T.copy(A[by * block_M, ko * block_K], A_shared)\n"
    "            T.copy(B[ko * block_K, bx * block_N], B_shared)\n"
    "            T.gemm(A_shared, B_shared, C_local, transpose_B=False, policy=T.GemmWarpPolicy.FullRow)\n"
    "        T.copy(C_local, C[by * block_M, bx * block_N])\n"
    "    return C\n";

TEST(eval_eager_style) {
  EvalFixture fx;
  const char *ps[] = {"M=256", "N=512", "K=64", "block_M=128", "block_N=128", "block_K=32", NULL};
  IrFunc *f = compile_src(&fx, EAGER, "matmul", ps);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  REQUIRE(f->nparams == 3);
  CHECK_STR(f->params[0].name, "A");
  CHECK_STR(f->params[1].name, "B");
  CHECK_STR(f->params[2].name, "C");
  CHECK(cint(f->params[0].buf->shape[0]) == 256 && cint(f->params[0].buf->shape[1]) == 64);
  CHECK(cint(f->params[2].buf->shape[1]) == 512);
  CHECK(f->params[2].buf->param_index == 2);
  CHECK(f->nout_idx == 1 && f->out_idx[0] == 2);
  const IrStmt *k = find_stmt(f->body, IR_S_KERNEL);
  CHECK(cint(k->u.kernel.grid[0]) == 4 && cint(k->u.kernel.grid[1]) == 2);
  CHECK_STR(k->u.kernel.block_var[1]->name, "by");
  CHECK(k->u.kernel.block_var[1]->axis == 1);
  const IrStmt *loop = find_stmt(f->body, IR_S_FOR);
  CHECK(loop->u.loop.kind == IR_FOR_PIPELINED && loop->u.loop.num_stages == 3 && cint(loop->u.loop.extent) == 2);
  const IrStmt *g = find_stmt(f->body, IR_S_GEMM);
  REQUIRE(g);
  CHECK(g->u.gemm.policy == 1 && !g->u.gemm.trans_b);
  CHECK_STR(g->u.gemm.c.buf->name, "C_local");
  const IrStmt *fill = find_stmt(f->body, IR_S_FILL);
  CHECK(fill && fill->u.fill.value->kind == IR_FLOAT && fill->u.fill.value->u.fval == 0.0);
  fini(&fx);

  /* a T.const without a value is reported; unknown -D names list params and consts */
  const char *ps2[] = {"M=256", "N=512", "block_M=128", "block_N=128", "block_K=32", NULL};
  CHECK(!compile_src(&fx, EAGER, "matmul", ps2));
  CHECK_HAS(diag_text(&fx), "k.py:5:15: error: T.const 'K' has no value: pass -D K=<int>");
  fini(&fx);
  const char *ps3[] = {"M=256", "N=512", "K=64", "block_M=128", "block_N=128", "block_K=32", "Z=1", NULL};
  CHECK(!compile_src(&fx, EAGER, "matmul", ps3));
  CHECK_HAS(diag_text(&fx), "unknown parameter 'Z' for 'matmul' (parameters: A, B, block_M, block_N, block_K, "
                            "dtype=..., accum_dtype=..., M, N, K)");
  fini(&fx);
}

static const char *const TOPLEVEL =
    "import tilelang.language as T\n"
    "import torch\n"
    "import argparse\n"
    "parser = argparse.ArgumentParser()\n"
    "args = parser.parse_args()\n"
    "M = 128\n"
    "N = M * 2\n"
    "dtype = 'float32'\n"
    "@T.prim_func\n"
    "def kern(A: T.Tensor((M, N), dtype), B: T.Buffer((N, M), dtype), n: T.int32):\n"
    "    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=[32, 8]) as (bx, by):\n"
    "        s = T.alloc_shared((32, 32), dtype)\n"
    "        acc = T.alloc_var(T.float32, init=1.5)\n"
    "        T.copy(A[by * 32:(by + 1) * 32, bx * 32:bx * 32 + 32], s)\n"
    "        for i in range(32):\n"
    "            for j in T.unroll(0, 32, 4):\n"
    "                if i < n and not (j == 4):\n"
    "                    acc += s[i, j]\n"
    "                B[bx * 32 + j, by * 32 + i] = s[i, j] if i > 2 else -T.infinity(s.dtype)\n"
    "        acc = acc * 2\n"
    "        T.atomic_add(B[0, 0], acc)\n"
    "if __name__ == '__main__':\n"
    "    kern(torch.zeros(4))\n";

TEST(eval_toplevel_prim_func) {
  EvalFixture fx;
  IrFunc *f = compile_src(&fx, TOPLEVEL, "kern", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  REQUIRE(f->nparams == 3);
  CHECK(cint(f->params[0].buf->shape[1]) == 256);
  CHECK(f->params[1].buf && cint(f->params[1].buf->shape[0]) == 256);
  REQUIRE(f->params[2].var);
  CHECK(f->params[2].var->kind == IR_VAR_PARAM && f->params[2].var->dtype == TS_DTYPE_INT32);
  const IrStmt *k = find_stmt(f->body, IR_S_KERNEL);
  CHECK(k->u.kernel.threads[0] == 32 && k->u.kernel.threads[1] == 8 && k->u.kernel.threads[2] == 1);
  /* explicit slices: extents are the constant 32 even with symbolic starts */
  const IrStmt *cp = find_stmt(f->body, IR_S_COPY);
  REQUIRE(cp);
  CHECK(cint(cp->u.copy.src.extent[0]) == 32 && cint(cp->u.copy.src.extent[1]) == 32);
  /* alloc_var: scope VAR, init converted, `acc += v` and `acc = ...` are stores */
  const IrStmt *al = find_stmt(f->body, IR_S_ALLOC);
  int nalloc = 0;
  for (int i = 0; i < k->u.kernel.body->u.seq.n; i++) {
    const IrStmt *s = k->u.kernel.body->u.seq.items[i];
    if (s->kind == IR_S_ALLOC && s->u.alloc.buf->scope == IR_SCOPE_VAR) {
      al = s;
      nalloc++;
    }
  }
  CHECK(nalloc == 1);
  CHECK(al->u.alloc.buf->init && al->u.alloc.buf->init->u.fval == 1.5);
  CHECK_HAS(ir_text(&fx), "acc[0] = acc[0] + s[i, j * 4]");
  CHECK_HAS(ir_text(&fx), "acc[0] = acc[0] * 2.0f");
  CHECK_HAS(ir_text(&fx), "select(i > 2, s[i, j * 4], -inff)");
  CHECK(count_stmt(f->body, IR_S_IF) == 1);
  const IrStmt *ifs = find_stmt(f->body, IR_S_IF);
  CHECK(ifs->u.if_.cond->kind == IR_AND && ifs->u.if_.cond->dtype == TS_DTYPE_BOOL);
  /* unroll with step 4: 8 iterations */
  const IrStmt *outer = find_stmt(f->body, IR_S_FOR);
  REQUIRE(outer && outer->u.loop.kind == IR_FOR_SERIAL);
  const IrStmt *inner = find_stmt(outer->u.loop.body, IR_S_FOR);
  CHECK(inner && inner->u.loop.kind == IR_FOR_UNROLLED && cint(inner->u.loop.extent) == 8);
  const IrStmt *at = find_stmt(f->body, IR_S_ATOMIC);
  REQUIRE(at);
  CHECK(!at->u.atomic.tile && at->u.atomic.op == IR_ATOMIC_ADD && at->u.atomic.dst.buf == f->params[1].buf);
  CHECK(cint(at->u.atomic.dst.extent[0]) == 1 && cint(at->u.atomic.dst.extent[1]) == 1);
  fini(&fx);

  /* -D overrides a module constant of a top-level prim_func */
  const char *ps[] = {"M=64", NULL};
  f = compile_src(&fx, TOPLEVEL, "kern", ps);
  REQUIRE(f);
  CHECK(cint(f->params[0].buf->shape[0]) == 64 && cint(f->params[0].buf->shape[1]) == 128); /* N = M * 2 follows */
  fini(&fx);
  const char *ps2[] = {"Q=64", NULL};
  CHECK(!compile_src(&fx, TOPLEVEL, "kern", ps2));
  CHECK_HAS(diag_text(&fx), "unknown parameter 'Q'");
  fini(&fx);
}

static const char *const ERRORS =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "import torch\n"
    "@tilelang.jit\n"
    "def f(M, N, block=64):\n"
    "    lst = [1, 2, 3]\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), 'float32'), B: T.Tensor((M, N), 'float32')):\n"
    "        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:\n"
    "            s = T.alloc_shared((block, N), 'float32')\n"
    "            r = T.alloc_fragment((block,), 'float32')\n"
    "            for x in lst:\n"
    "                pass\n"
    "            for i in T.Parallel(block):\n"
    "                B[i] = A[i, 0]\n"
    "                B[i, 0] = undefined_name + 1\n"
    "                q = i / 2\n"
    "            T.copy(s, B[0:32, 0:N])\n"
    "            T.reduce_sum(s, r, dim=0)\n"
    "            T.foo(1)\n"
    "            T.copy(s)\n"
    "            T.fill(s, 0, bad=1)\n"
    "            y = torch.matmul(3)\n"
    "            T.use_swizzle(10)\n"
    "    return main\n";

TEST(eval_diagnostics) {
  EvalFixture fx;
  const char *ps[] = {"M=256", "N=128", NULL};
  CHECK(!compile_src(&fx, ERRORS, "f", ps));
  const char *d = diag_text(&fx);
  CHECK_HAS(d, "k.py:12:22: error: cannot iterate over a Python list inside a kernel");
  CHECK_HAS(d, "k.py:15:17: error: buffer 'B' has 2 dimensions but is indexed with 1");
  CHECK_HAS(d, "k.py:16:27: error: name 'undefined_name' is not defined");
  CHECK_HAS(d, "k.py:17:21: error: '/' between integer values is ambiguous: use // for integer division");
  CHECK_HAS(d, "k.py:18:13: error: T.copy(): extents do not match: s [64, 128] vs B [32, 128]");
  CHECK_HAS(d, "k.py:19:13: error: T.reduce_sum(): output 'r' must have the shape of 's' without dimension 0");
  CHECK_HAS(d, "k.py:20:13: error: module 'T' has no attribute 'foo'");
  CHECK_HAS(d, "k.py:21:13: error: T.copy() missing required argument 'dst'");
  CHECK_HAS(d, "k.py:22:13: error: T.fill() got an unexpected keyword argument 'bad'");
  CHECK_HAS(d, "k.py:23:17: error: 'matmul' (from module 'torch') is not available in kernels");
  CHECK(fx.c.diag.errors == 10); /* recognised-but-unsupported T.use_swizzle is not an error here */
  fini(&fx);
}

TEST(eval_unsupported_and_limits) {
  EvalFixture fx;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        T.use_swizzle(10)\n"
      "        A[0] = 1.0\n";
  /* T.use_swizzle only changes the block schedule: accepted, no statement */
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  REQUIRE(f);
  CHECK(!find_stmt(f->body, IR_S_UNSUPPORTED));
  CHECK(count_stmt(f->body, IR_S_STORE) == 1);
  fini(&fx);

  /* a construct without lowering is reported once, at its call; its result is silent */
  const char *src2 =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        lane = T.alloc_descriptor()\n"
      "        A[0] = lane + 1\n";
  CHECK(!compile_src(&fx, src2, "k", NULL));
  CHECK_HAS(diag_text(&fx), "k.py:5:16: error: T.alloc_descriptor is not supported yet");
  CHECK(fx.c.diag.errors == 1);
  fini(&fx);

  /* runaway recursion in factory code is a diagnostic, not a crash */
  const char *src3 =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "def rec(n):\n"
      "    return rec(n + 1)\n"
      "@tilelang.jit\n"
      "def f(n):\n"
      "    x = rec(n)\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((4,), 'float32')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            A[0] = 1.0\n"
      "    return main\n";
  const char *ps[] = {"n=1", NULL};
  CHECK(!compile_src(&fx, src3, "f", ps));
  CHECK_HAS(diag_text(&fx), "maximum recursion depth (200) exceeded");
  fini(&fx);
}

TEST(eval_python_subset) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "import math\n"
      "BASE = 3\n"
      "def helper(a, b=2, *rest, **kw):\n"
      "    return a * b + len(rest) + kw.get('z', 0)\n"
      "@tilelang.jit(out_idx=[1])\n"
      "def f(n, mode='sum'):\n"
      "    vals = [helper(i) for i in range(n) if i % 2 == 0]\n"
      "    total = sum(vals) + helper(1, 1, 9, 9, z=5)\n"  /* 0+4+8 + (1+2+5) = 20 */
      "    d = {'a': 1, 'b': 2}\n"
      "    d['c'] = d['a'] + d['b']\n"
      "    tup = (1, 2, 3)[1:]\n"
      "    s = f'{mode}-{total}'\n"
      "    k = 0\n"
      "    while k < 10:\n"
      "        k += 3\n"
      "        if k > 7:\n"
      "            break\n"
      "    for x in range(3):\n"
      "        if x == 1:\n"
      "            continue\n"
      "        k += x\n"  /* 9 + 0 + 2 = 11 */
      "    e = -7 // 2 + (-7 % 3) + 2 ** 10 + int(math.sqrt(16.0))\n"  /* -4 + 2 + 1024 + 4 = 1026 */
      "    scale = (1.0 / 4) ** 0.5\n"
      "    size = total if s == 'sum-20' else 0\n"
      "    size2 = max(BASE, min(d['c'], 10), tup[0])\n"  /* max(3, 3, 2) = 3 */
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((size, size2), 'float32'), B: T.Tensor((k, e), 'float16')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            A[0, 0] = scale\n"
      "    return main\n";
  const char *ps[] = {"n=5", NULL};
  IrFunc *f = compile_src(&fx, src, "f", ps);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK(cint(f->params[0].buf->shape[0]) == 20);
  CHECK(cint(f->params[0].buf->shape[1]) == 3);
  CHECK(cint(f->params[1].buf->shape[0]) == 11);
  CHECK(cint(f->params[1].buf->shape[1]) == 1026);
  const IrStmt *st = find_stmt(f->body, IR_S_STORE);
  REQUIRE(st);
  CHECK(st->u.store.value->kind == IR_FLOAT && st->u.store.value->u.fval == 0.5);
  CHECK(f->nout_idx == 1 && f->out_idx[0] == 1);
  fini(&fx);
}

TEST(eval_list_functions) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  SourceFile sf = {"k.py", TOPLEVEL, strlen(TOPLEVEL)};
  AstNode *m = parse_module(&c, &sf);
  const char *names[8];
  REQUIRE(m);
  CHECK(front_list_functions(m, names, 8) == 1);
  CHECK_STR(names[0], "kern");
  ts_compiler_fini(&c);
  ts_compiler_init(&c, (TsTarget){90, true});
  SourceFile sf2 = {"k.py", EAGER, strlen(EAGER)};
  m = parse_module(&c, &sf2);
  REQUIRE(m);
  CHECK(front_list_functions(m, names, 8) == 1);
  CHECK_STR(names[0], "matmul");
  ts_compiler_fini(&c);
}

TEST(eval_macro_closure_kernels) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "def make_idx(a, b):\n"
      "    return a * 4 + b\n"
      "@tilelang.jit(out_idx=-1)\n"
      "def two(n, use_macro=True):\n"
      "    sq = lambda v: v * v\n"
      "    @T.macro\n"
      "    def scale_row(buf, row, factor):\n"
      "        for j in T.Parallel(4):\n"
      "            buf[row, j] = buf[row, j] * factor\n"
      "        return factor + 1\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((n, 4), 'float32'), B: T.Tensor((n, 4), 'float32')):\n"
      "        with T.Kernel(n, threads=32) as bx:\n"
      "            t = T.alloc_fragment((4, 4), 'float32')\n"
      "            T.copy(A[bx, 0], t[0, 0])\n"
      "            k = scale_row(t, 0, sq(2.0)) if use_macro else 0\n"
      "            i = T.alloc_var('int32')\n"
      "            i = 0\n"
      "            while i < 4:\n"
      "                t[0, i] = k\n"
      "                i += 1\n"
      "            for z in T.serial(8):\n"
      "                if z > 3:\n"
      "                    break\n"
      "                t[1, make_idx(0, z) % 4] = 0\n"
      "        with T.Kernel(n // 2, 2) as (bx, by):\n"
      "            B[bx * 2 + by, 0] = A[bx, 0]\n"
      "    return main\n";
  const char *ps[] = {"n=8", NULL};
  IrFunc *f = compile_src(&fx, src, "two", ps);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK(count_stmt(f->body, IR_S_KERNEL) == 2);
  CHECK(f->nout_idx == 1 && f->out_idx[0] == 1);
  /* copy of two single elements is a plain store */
  CHECK(count_stmt(f->body, IR_S_COPY) == 0);
  CHECK_HAS(ir_text(&fx), "t[0, 0] = A[bx, 0]");
  /* the macro was inlined with factor = 4.0 and returned 5.0 */
  CHECK_HAS(ir_text(&fx), "t[0, j] = t[0, j] * 4.0f");
  CHECK_HAS(ir_text(&fx), "t[0, i[0]] = 5.0f");
  const IrStmt *w = find_stmt(f->body, IR_S_WHILE);
  REQUIRE(w);
  CHECK(w->u.while_.cond->kind == IR_LT);
  CHECK(count_stmt(f->body, IR_S_BREAK) == 1);
  CHECK_HAS(ir_text(&fx), "t[1, z % 4] = 0.0f");
  /* the second kernel's block vars are fresh variables */
  const IrStmt *k1 = find_stmt(f->body, IR_S_KERNEL);
  const IrStmt *k2 = f->body->u.seq.items[f->body->u.seq.n - 1];
  REQUIRE(k2->kind == IR_S_KERNEL && k1 != k2);
  CHECK(k2->u.kernel.block_var[0] != k1->u.kernel.block_var[0]);
  CHECK(cint(k2->u.kernel.grid[0]) == 4 && cint(k2->u.kernel.grid[1]) == 2);
  CHECK(k2->u.kernel.threads[0] == 128); /* default */
  fini(&fx);
}

TEST(eval_scoping_and_step_limit) {
  EvalFixture fx;
  /* IR definitions do not outlive their block: a diagnostic, not malformed IR */
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((4, 4), 'float32')):\n"
      "    with T.Kernel(1) as bx:\n"
      "        for i in T.serial(4):\n"
      "            x = A[i, 0] + 1.0\n"
      "        A[0, 0] = x\n"
      "        A[1, 1] = i\n"
      "    with T.Kernel(1) as bx:\n"
      "        A[0, 1] = bx\n";
  CHECK(!compile_src(&fx, src, "k", NULL));
  CHECK_HAS(diag_text(&fx), "k.py:7:19: error: 'x' is defined inside a loop and cannot be used after it");
  CHECK_HAS(diag_text(&fx), "k.py:8:19: error: 'i' is defined inside a loop and cannot be used after it");
  CHECK(fx.c.diag.errors == 2); /* the rebound bx of the second kernel is fine */
  fini(&fx);

  /* an endless factory loop stops at the step limit */
  const char *src2 =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def f(n):\n"
      "    while n > 0:\n"
      "        n = n + 1\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((4,), 'float32')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            A[0] = 1.0\n"
      "    return main\n";
  ts_compiler_init(&fx.c, (TsTarget){90, true});
  fx.c.limit_steps = 1000;
  fx.file = (SourceFile){"k.py", src2, strlen(src2)};
  fx.ir = (StrBuf){0};
  ts_param p = {"n", "1"};
  AstNode *m = parse_module(&fx.c, &fx.file);
  REQUIRE(m);
  CHECK(!front_compile(&fx.c, m, "f", &p, 1));
  CHECK_HAS(diag_text(&fx), "k.py:5:5: error: evaluation step limit (1000) exceeded");
  CHECK(fx.c.diag.errors == 1);
  fini(&fx);
}

TEST(eval_torch_dtype_and_opaque) {
  EvalFixture fx;
  const char *src =
      "import torch\n"
      "import tilelang.language as T\n"
      "dtype = torch.bfloat16\n"
      "unused = torch.cuda.current_device()\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((4,), dtype)):\n"
      "    with T.Kernel(1) as bx:\n"
      "        A[0] = 1\n";
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK(f->params[0].buf->dtype == TS_DTYPE_BFLOAT16);
  fini(&fx);
  const char *src2 =
      "import torch\n"
      "import tilelang.language as T\n"
      "n = torch.cuda.device_count() + torch.matmul(3)\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((4,), 'float32')):\n"
      "    with T.Kernel(n) as bx:\n"
      "        A[0] = 1\n";
  CHECK(!compile_src(&fx, src2, "k", NULL));
  /* torch.cuda's device queries are the prelude's; tensor math stays unavailable (factories
   * give shape-only tensors: host_tensor.c) */
  CHECK_HAS(diag_text(&fx), "k.py:3:33: error: 'matmul' (from module 'torch') is not available in kernels");
  fini(&fx);
}

TEST(eval_range_steps) {
  EvalFixture fx;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((16,), 'float32'), n: T.int32):\n"
      "    with T.Kernel(1) as bx:\n"
      "        for i in range(15, -1, -2):\n"
      "            A[i] = 1\n"
      "        for j in range(1, 16, 5):\n"
      "            A[j] = 2\n";
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  const IrStmt *kb = find_stmt(f->body, IR_S_KERNEL)->u.kernel.body;
  REQUIRE(kb->kind == IR_S_SEQ && kb->u.seq.n == 2);
  const IrStmt *l1 = kb->u.seq.items[0], *l2 = kb->u.seq.items[1];
  CHECK(cint(l1->u.loop.extent) == 8 && cint(l1->u.loop.min) == 0); /* 15, 13, ..., 1 */
  CHECK(cint(l2->u.loop.extent) == 3);                              /* 1, 6, 11 */
  /* the index is start + k*step: evaluate it for the last iteration */
  const IrStmt *st = find_stmt(l1, IR_S_STORE);
  int64_t v = -1;
  IrVar *var = l1->u.loop.var;
  int64_t seven = 7;
  CHECK(ir_eval_int(st->u.store.idx[0], &var, &seven, 1, &v) && v == 1);
  st = find_stmt(l2, IR_S_STORE);
  var = l2->u.loop.var;
  int64_t two = 2;
  CHECK(ir_eval_int(st->u.store.idx[0], &var, &two, 1, &v) && v == 11);
  fini(&fx);
}

/* @autotune(configs=...) is evaluated (itertools.product, dict(zip(...))) and recorded on the
 * IrFunc as literal text; out_idx lists with negatives are normalised. */
TEST(eval_autotune_configs_recorded) {
  EvalFixture fx;
  const char *src =
      "import itertools\n"
      "import tilelang\n"
      "import tilelang.language as T\n"
      "from tilelang.autotuner import autotune\n"
      "def get_configs():\n"
      "    space = dict(block=[64, 128], threads=[128, 256])\n"
      "    pairs = list(itertools.product((b for b in [1, 2]), repeat=2))\n"
      "    assert pairs == [(1, 1), (1, 2), (2, 1), (2, 2)], pairs\n"
      "    return [dict(zip(space, v)) for v in itertools.product(*space.values())]\n"
      "@autotune(configs=get_configs(), warmup=10)\n"
      "@tilelang.jit(out_idx=[0, -1])\n"
      "def f(N, block=64, threads=128):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32'), C: T.Tensor((N,), 'float32')):\n"
      "        with T.Kernel(N // block, threads=threads) as bx:\n"
      "            for i in T.Parallel(block):\n"
      "                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]\n"
      "    return main\n";
  const char *ps[] = {"N=1024", NULL};
  IrFunc *f = compile_src(&fx, src, "f", ps);
  REQUIRE(f);
  CHECK(f->nautotune_configs == 4);
  CHECK_STR(f->autotune_configs, "[{'block': 64, 'threads': 128}, {'block': 64, 'threads': 256}, "
                                 "{'block': 128, 'threads': 128}, {'block': 128, 'threads': 256}]");
  CHECK(f->nout_idx == 2 && f->out_idx[0] == 0 && f->out_idx[1] == 2);
  fini(&fx);

  /* a config list that cannot be evaluated is a warning, not an error */
  const char *src2 =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.autotune(configs=missing_helper())\n"
      "@tilelang.jit\n"
      "def g(N):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'float32')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            A[0] = 1.0\n"
      "    return main\n";
  const char *ps2[] = {"N=4", NULL};
  f = compile_src(&fx, src2, "g", ps2);
  REQUIRE(f);
  CHECK(!f->autotune_configs);
  CHECK(fx.c.diag.warnings == 1);
  CHECK_HAS(diag_text(&fx), "warning: @autotune configs could not be evaluated: name 'missing_helper' is not defined");
  fini(&fx);
}

/* T.* constructs (builtins_*.c): signatures are checked (count, keywords, required), enums have
 * their documented values, views alias their source, strided tensors keep their strides. */
TEST(eval_tl_constructs) {
  EvalFixture fx;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.StridedTensor((4, 8), (16, 1), 'float32'), B: T.Tensor((32,), 'int32')):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        s = T.alloc_shared((4, 8), 'float32')\n"
      "        T.copy(A, s)\n"
      "        flat = T.view(s, (32,), dtype='int32')\n"
      "        codes = [T.Team.WORLD, T.CmpType.GT, T.CmpType.GE, T.Amo.SIGNAL_SET, T.Amo.AMO_SIGNAL_ADD]\n"
      "        tx = T.get_thread_binding()\n"
      "        B[tx] = flat[tx] + codes[0] + codes[1] * 10 + codes[2] * 100 + codes[3] * 1000 + codes[4]\n";
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  REQUIRE(f);
  REQUIRE(f->params[0].buf && f->params[0].buf->strides);
  int64_t st;
  CHECK(ir_is_const_int(f->params[0].buf->strides[0], &st) && st == 16);
  const IrStmt *k = find_stmt(f->body, IR_S_KERNEL);
  REQUIRE(k);
  const IrBuffer *view = NULL;
  for (const IrStmt *s = k->u.kernel.body; s && s->kind == IR_S_SEQ; s = NULL)
    for (int i = 0; i < s->u.seq.n; i++)
      if (s->u.seq.items[i]->kind == IR_S_ALLOC && s->u.seq.items[i]->u.alloc.buf->alias_of)
        view = s->u.seq.items[i]->u.alloc.buf;
  REQUIRE(view);
  CHECK_STR(view->name, "flat");
  CHECK(view->dtype == TS_DTYPE_INT32 && view->alias_of->scope == IR_SCOPE_SHARED_DYN);
  /* WORLD 0, GT 2 (NVSHMEM order), GE 5, SIGNAL_SET 9, SIGNAL_ADD 10 */
  CHECK_HAS(ir_text(&fx), "B[tx] = flat[tx] + 20 + 500 + 9000 + 10");
  fini(&fx);

  const char *bad =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((32,), 'int32')):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        T.put_block(T.address_of(A[0]), T.address_of(A[16]))\n"
      "        T.ld(A[0], 1, scope='device')\n"
      "        T.use_swizzle(8, panel=3)\n"
      "        T.fence_gpu(1)\n"
      "        T.view(A, (16,))\n"
      "        x = T.Amo.NOPE\n"
      "        T.put_warp(A[0], T.address_of(A[1]), 4)\n";
  CHECK(!compile_src(&fx, bad, "k", NULL));
  const char *d = diag_text(&fx);
  CHECK_HAS(d, "k.py:5:9: error: T.put_block() missing required argument 'size'; signature: T.put_block(src, dst, size, dst_pe=-1)");
  CHECK_HAS(d, "k.py:6:9: error: T.ld: scope must be one of \"cta\", \"gpu\", \"sys\", got 'device'");
  CHECK_HAS(d, "k.py:7:9: error: T.use_swizzle() got an unexpected keyword argument 'panel'");
  CHECK_HAS(d, "k.py:8:9: error: T.fence_gpu() takes no arguments (1 given)");
  CHECK_HAS(d, "k.py:9:9: error: T.view: 'A' has 1024 bits but the view has 512");
  CHECK_HAS(d, "k.py:10:13: error: module 'T.Amo' has no attribute 'NOPE'");
  CHECK_HAS(d, "k.py:11:9: error: T.put_warp: src must be T.address_of(buf[...]), got IR expression");
  CHECK(fx.c.diag.errors == 7);
  fini(&fx);
}

/* `first, *rest = xs` binds the middle as a list; a failed unpacking leaves its targets
 * silent instead of undefined. */
TEST(eval_starred_unpacking) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def f(N):\n"
      "    a, *mid, z = (1, 2, 3, 4, 5)\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'int32')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            A[0] = a * 100 + len(mid) * 10 + z + mid[1]\n"
      "    return main\n";
  const char *ps[] = {"N=4", NULL};
  REQUIRE(compile_src(&fx, src, "f", ps));
  CHECK_HAS(ir_text(&fx), "A[0] = 138");
  fini(&fx);

  const char *bad =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def f(N):\n"
      "    a, b = (1, 2, 3)\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'int32')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            A[0] = a + b\n"
      "    return main\n";
  CHECK(!compile_src(&fx, bad, "f", ps));
  CHECK_HAS(diag_text(&fx), "k.py:5:5: error: cannot unpack 3 values into 2 targets");
  CHECK(fx.c.diag.errors == 1);
  fini(&fx);
}

/* A while test whose evaluation emits statements (T.warp_any is bound to a let) is re-evaluated
 * on every iteration: while true { let vote = warp_any(..); if !vote: break; body }.  It was
 * evaluated once before the loop, so a spin on it never ended (DeepEP's combine receiver). */
TEST(eval_while_test_with_statements_runs_every_iteration) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def spin(n):\n"
      "    @T.prim_func\n"
      "    def main(flag: T.Tensor((n,), 'int32')):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            tx = T.get_thread_binding()\n"
      "            while T.warp_any(flag[tx] == 0):\n"
      "                continue\n"
      "    return main\n";
  const char *ps[] = {"n=32", NULL};
  IrFunc *f = compile_src(&fx, src, "spin", ps);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  const IrStmt *w = find_stmt(f->body, IR_S_WHILE);
  REQUIRE(w);
  CHECK(cint(w->u.while_.cond) == 1);
  /* the vote's let is inside the loop, ahead of the test that breaks out */
  CHECK(find_stmt(w->u.while_.body, IR_S_LET) != NULL && count_stmt(f->body, IR_S_LET) == count_stmt(w->u.while_.body, IR_S_LET));
  CHECK(count_stmt(w->u.while_.body, IR_S_BREAK) == 1 && count_stmt(w->u.while_.body, IR_S_CONTINUE) == 1);
  fini(&fx);
}

/* Block indices of kernels over more than 2^31 - 1 elements are 64-bit (TileLang's rule: the
 * grid extent's type, here an int64 T.symbolic size, or a tensor past 2^31 - 1 elements), so
 * bx * 512 + i does not wrap; a kernel over smaller tensors keeps 32-bit ones. */
static int block_index_bits(EvalFixture *fx, const char *src, const char *func, const char *const *ps) {
  IrFunc *f = compile_src(fx, src, func, ps);
  if (!f) fprintf(stderr, "%s", diag_text(fx));
  const IrStmt *k = f ? find_stmt(f->body, IR_S_KERNEL) : NULL;
  int bits = k ? dtype_bits(k->u.kernel.block_var[0]->dtype) : 0;
  fini(fx);
  return bits;
}

TEST(eval_block_index_64_bit_for_large_tensors) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def fill_static(n):\n"
      "    @T.prim_func\n"
      "    def main(x: T.Tensor[n, T.bfloat16]):\n"
      "        with T.Kernel(T.ceildiv(n, 512), threads=128) as bx:\n"
      "            for i in T.Parallel(512):\n"
      "                x[bx * 512 + i] = 1.0\n"
      "    return main\n"
      "@tilelang.jit\n"
      "def fill_symbolic(width):\n"
      "    n = T.symbolic('n', width)\n"
      "    @T.prim_func\n"
      "    def main(x: T.Tensor[n, T.bfloat16]):\n"
      "        with T.Kernel(T.ceildiv(n, 512), threads=128) as bx:\n"
      "            for i in T.Parallel(512):\n"
      "                x[bx * 512 + i] = 1.0\n"
      "    return main\n";
  const char *big[] = {"n=4294967296", NULL}, *small[] = {"n=1048576", NULL};
  const char *i64[] = {"width='int64'", NULL}, *i32[] = {"width='int32'", NULL};
  CHECK(block_index_bits(&fx, src, "fill_static", big) == 64);
  CHECK(block_index_bits(&fx, src, "fill_static", small) == 32);
  CHECK(block_index_bits(&fx, src, "fill_symbolic", i64) == 64);
  CHECK(block_index_bits(&fx, src, "fill_symbolic", i32) == 32);
}

/* T.ieee_*(x, ..., rounding_mode): the device operation ieee_<op> with the mode as its attribute
 * (0 rn, 1 rz, 2 ru, 3 rd; device/tilescale/ieee.cuh) in the operands' float type; a mode CUDA
 * lacks for the type is an error at the call. */
TEST(eval_ieee_rounding_intrinsics) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(rm, dtype):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((32,), dtype), C: T.Tensor((32,), dtype)):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            for i in T.Parallel(32):\n"
      "                C[i] = T.ieee_fmaf(A[i], A[i], 1.0, rm) + T.ieee_frcp(A[i], rounding_mode=rm)\n"
      "    return main\n";
  const char *f64[] = {"rm='rd'", "dtype=T.float64", NULL};
  IrFunc *f = compile_src(&fx, src, "k", f64);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "T.device.ieee_fmaf<3>(A[i], A[i], 1.0)->float64");
  CHECK_HAS(ir_text(&fx), "T.device.ieee_frcp<3>(A[i])->float64");
  fini(&fx);
  const char *f16[] = {"rm='rz'", "dtype=T.float16", NULL};
  CHECK(compile_src(&fx, src, "k", f16) == NULL);
  CHECK_HAS(diag_text(&fx),
            "k.py:9:24: error: T.ieee_fmaf: Only rounding mode 'rn' is available for half precision (float16), not 'rz'");
  fini(&fx);
  /* T.ieee_frsqrt: float32 and the half types (hrsqrt), not float64 */
  static const char rsqrt[] =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "\n"
      "@tilelang.jit\n"
      "def k(dtype):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((32,), dtype), C: T.Tensor((32,), dtype)):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            for i in T.Parallel(32):\n"
      "                C[i] = T.ieee_frsqrt(A[i])\n"
      "    return main\n";
  const char *bf16[] = {"dtype=T.bfloat16", NULL};
  REQUIRE(compile_src(&fx, rsqrt, "k", bf16));
  CHECK_HAS(ir_text(&fx), "T.device.ieee_frsqrt<0>(A[i])->bfloat16");
  fini(&fx);
  const char *f64rs[] = {"dtype=T.float64", NULL};
  CHECK(compile_src(&fx, rsqrt, "k", f64rs) == NULL);
  CHECK_HAS(diag_text(&fx), "k.py:10:24: error: T.ieee_frsqrt: frsqrt is not supported for float64");
  fini(&fx);
  const char *bad[] = {"rm='up'", "dtype=T.float32", NULL};
  CHECK(compile_src(&fx, src, "k", bad) == NULL);
  CHECK_HAS(diag_text(&fx), "error: T.ieee_fmaf: rounding_mode must be one of 'rn', 'rz', 'ru', 'rd', got up");
  fini(&fx);
}

/* T.copy between regions of different extents, as TileLang takes them: the loop runs over the
 * region of the lower-level memory (src when the levels tie), which may not be smaller than
 * src's; so a larger dst region is filled from its start, and a larger register region than
 * its global source (a loop past the source's region) is refused. */
TEST(eval_copy_regions_of_different_extents) {
  EvalFixture fx;
  static const char src[] =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "\n"
      "@tilelang.jit\n"
      "def k(w):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((128, 128), 'float16'), B: T.Tensor((128, 128), 'float16')):\n"
      "        with T.Kernel(1, threads=128):\n"
      "            f = T.alloc_fragment((128, w), 'float16')\n"
      "            T.copy(A[:, :2], B[:, :3])\n"
      "            T.copy(A[:, :2], f)\n"
      "    return main\n";
  const char *two[] = {"w=2", NULL};
  REQUIRE(compile_src(&fx, src, "k", two));
  CHECK_HAS(ir_text(&fx), "T.copy A[0:+128, 0:+2] -> B[0:+128, 0:+2]");
  fini(&fx);
  const char *four[] = {"w=4", NULL};
  CHECK(compile_src(&fx, src, "k", four) == NULL);
  CHECK_HAS(diag_text(&fx), "k.py:11:13: error: T.copy(): extents do not match: A [128, 2] vs f [128, 4]");
  fini(&fx);
}

/* A factory argument may be a T.* function (reduce_fn=T.reduce_max) or a dynamic dimension
 * (matmul(T.dynamic("m"), 256)); a bare Python builtin is still not a constant. */
TEST(eval_dparam_function_and_dynamic_dim) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(M, N, reduce_fn):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M,), T.float32)):\n"
      "        with T.Kernel(T.ceildiv(M, 4), threads=128) as bx:\n"
      "            f = T.alloc_fragment((4, N), T.float32)\n"
      "            o = T.alloc_fragment((4,), T.float32)\n"
      "            T.copy(A[bx * 4, 0], f)\n"
      "            reduce_fn(f, o, dim=1)\n"
      "            T.copy(o, B[bx * 4])\n"
      "    return main\n";
  const char *ok[] = {"M=T.dynamic('m')", "N=64", "reduce_fn=T.reduce_max", NULL};
  IrFunc *f = compile_src(&fx, src, "k", ok);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "func k(A: float32[m, 64], B: float32[m]) dynamic m:");
  CHECK_HAS(ir_text(&fx), "T.reduce_max f -> o dim=1");
  fini(&fx);
  const char *bad[] = {"M=64", "N=64", "reduce_fn=abs", NULL};
  CHECK(compile_src(&fx, src, "k", bad) == NULL);
  CHECK_HAS(diag_text(&fx), "-D reduce_fn: expected a constant (int, float, bool, str, dtype, tuple, list or dict), got builtin function");
  fini(&fx);
}

/* T.any_of / T.all_of: an || (&&) chain of the region's elements, each tested against zero;
 * a fragment (elements spread over threads) and an unknown extent are errors. */
TEST(eval_any_of_all_of_regions) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(frag):\n"
      "    @T.prim_func\n"
      "    def main(M: T.Tensor((4, 3), 'bool'), W: T.Tensor((4, 2), 'int32'), O: T.Tensor((4,), 'int32')):\n"
      "        with T.Kernel(4, threads=32) as bx:\n"
      "            f = T.alloc_fragment((2,), 'int32')\n"
      "            if T.any_of(M[bx, :]) and T.all_of(W[bx, 0:2]):\n"
      "                O[bx] = 1\n"
      "            if frag and T.any_of(f):\n"
      "                O[bx] = 2\n"
      "    return main\n";
  const char *ok[] = {"frag=False", NULL};
  IrFunc *f = compile_src(&fx, src, "k", ok);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "(M[bx, 0] or M[bx, 1] or M[bx, 2]) and (W[bx, 0] != 0 and W[bx, 1] != 0)");
  fini(&fx);
  const char *bad[] = {"frag=True", NULL};
  CHECK(compile_src(&fx, src, "k", bad) == NULL);
  CHECK_HAS(diag_text(&fx), "k.py:11:25: error: T.any_of of fragment 'f': its elements live in different threads");
  fini(&fx);
}

/* T.atomic_load / atomic_store / atomic_or: device operations with the memory order as their
 * attribute (C++'s numbering); the load is bound where it is written; an order the operation
 * cannot have is an error naming the allowed ones. */
TEST(eval_atomic_memory_orders) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(mo):\n"
      "    @T.prim_func\n"
      "    def main(S: T.Tensor((4,), 'int32'), F: T.Tensor((1,), 'int64')):\n"
      "        with T.Kernel(4, threads=32) as bx:\n"
      "            v = T.atomic_load(S[bx], memory_order=mo)\n"
      "            T.atomic_store(S[bx], v + 1, memory_order='release')\n"
      "            T.atomic_or(F[0], 4)\n"
      "    return main\n";
  const char *ok[] = {"mo='acquire'", NULL};
  IrFunc *f = compile_src(&fx, src, "k", ok);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "T.device.atomic_load<2>(T.address_of(S[bx]))->int32");
  CHECK_HAS(ir_text(&fx), "T.device.atomic_store<3>(T.address_of(S[bx]), loaded + 1)");
  CHECK_HAS(ir_text(&fx), "T.device.atomic_or<0>(T.address_of(F[0]), int64(4))");
  fini(&fx);
  const char *bad[] = {"mo='release'", NULL};
  CHECK(compile_src(&fx, src, "k", bad) == NULL);
  CHECK_HAS(diag_text(&fx),
            "k.py:8:17: error: T.atomic_load does not support memory_order release (one of 'relaxed', 'consume', "
            "'acquire', 'seq_cst')");
  fini(&fx);
}

/* T.Kernel() with no grid extents is one block (TileLang's issue 1690). */
TEST(eval_kernel_without_grid_is_one_block) {
  EvalFixture fx;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((16,), 'float32')):\n"
      "    with T.Kernel(threads=32):\n"
      "        A[0] = 1.0\n";
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "kernel grid=(1, 1, 1) threads=(32, 1, 1)");
  fini(&fx);
}

/* Small TileLang constructs: T.grid (a serial nest), T.align_up, T.assume (a hint),
 * T.named_barrier_arrive (bar.arrive), T.annotate_min_blocks_per_sm, getattr / hasattr. */
TEST(eval_grid_align_assume_arrive_getattr) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(op):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((4, 8), 'float32'), B: T.Tensor((8,), 'float32'), N: T.int32):\n"
      "        with T.Kernel(1, threads=64) as bx:\n"
      "            T.annotate_min_blocks_per_sm(3)\n"
      "            f = T.alloc_fragment((4, 8), 'float32')\n"
      "            r = T.alloc_fragment((8,), 'float32')\n"
      "            T.copy(A, f)\n"
      "            getattr(T, 'reduce_' + op)(f, r, dim=0)\n"
      "            if hasattr(T, 'no_such_name') or getattr(T, 'nope', None) is not None:\n"
      "                T.clear(r)\n"
      "            T.copy(r, B)\n"
      "            for i, j in T.grid(4, 8):\n"
      "                T.assume(i < N)\n"
      "                A[i, j] = T.align_up(N, 16)\n"
      "            T.named_barrier_arrive(3, 64)\n"
      "    return main\n";
  const char *p[] = {"op='max'", NULL};
  IrFunc *f = compile_src(&fx, src, "k", p);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  const char *ir = ir_text(&fx);
  CHECK_HAS(ir, "T.reduce_max f -> r dim=0");
  CHECK(!strstr(ir, "T.fill") && !strstr(ir, "T.clear"));
  CHECK_HAS(ir, "for i in serial(0, 4):\n      for j in serial(0, 8):");
  CHECK_HAS(ir, "(N + 15) // 16 * 16");
  CHECK_HAS(ir, "T.device.bar_arrive(3, 64)");
  const IrStmt *ks = find_stmt(f->body, IR_S_KERNEL);
  CHECK(ks && ks->u.kernel.min_blocks == 3);
  fini(&fx);
}

/* T.atomic_add(tile, scalar): every element of the tile gets the scalar (a T.Parallel nest of
 * element atomics); a tile and a tile stay a tile atomic. */
TEST(eval_atomic_tile_scalar_broadcast) {
  EvalFixture fx;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((64, 64), 'float32'), B: T.Tensor((1,), 'float32')):\n"
      "    with T.Kernel(4, 4, threads=32) as (bx, by):\n"
      "        T.atomic_add(A[bx * 16 : (bx + 1) * 16, by * 16 : (by + 1) * 16], 1.0)\n"
      "        T.atomic_max(B, bx * 2.0)\n";
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "for i0 in parallel(0, 16):\n      for i1 in parallel(0, 16):\n"
                          "        T.atomic_add A[bx * 16 + i0:+1, by * 16 + i1:+1] <- 1.0f");
  CHECK_HAS(ir_text(&fx), "T.atomic_max B[i0:+1] <-");
  fini(&fx);
}

/* T.print(buffer): every element, by thread 0 for shared memory, by each thread for its own
 * registers; a fragment is refused.  T.Select evaluates both sides (a SELECT). */
TEST(eval_print_buffer_and_select) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(frag):\n"
      "    @T.prim_func\n"
      "    def main(Q: T.Tensor((4, 8), 'float32')):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            s = T.alloc_shared((4, 8), 'float32')\n"
      "            f = T.alloc_fragment((4, 8), 'float32')\n"
      "            T.copy(Q, s)\n"
      "            T.print(s, msg='smem')\n"
      "            if frag:\n"
      "                T.print(f)\n"
      "            Q[0, 0] = T.Select(Q[0, 1] > 0, Q[0, 2], 1.0)\n"
      "    return main\n";
  const char *ok[] = {"frag=False", NULL};
  IrFunc *f = compile_src(&fx, src, "k", ok);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "if tx == 0:\n      for e in serial(0, 32):\n        T.print(\"smem buffer=s index=\", e, "
                          "\"value=\", s[e // 8, e % 8])");
  CHECK_HAS(ir_text(&fx), "select(Q[0, 1] > 0.0f, Q[0, 2], 1.0f)");
  fini(&fx);
  const char *bad[] = {"frag=True", NULL};
  CHECK(compile_src(&fx, src, "k", bad) == NULL);
  CHECK_HAS(diag_text(&fx), "k.py:13:17: error: T.print of fragment 'f': its elements live in different threads");
  fini(&fx);
}

/* T.pdl_sync / T.pdl_trigger: programmatic dependent launch's wait and signal, device
 * operations (griddepcontrol in common.cuh). */
TEST(eval_pdl_wait_and_trigger) {
  EvalFixture fx;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((64,), 'float32')):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        T.pdl_sync()\n"
      "        A[0] = 1.0\n"
      "        T.pdl_trigger()\n";
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "T.device.pdl_sync()\n    A[0] = 1.0f\n    T.device.pdl_trigger()");
  fini(&fx);
}

/* T.transpose(src, dst): a T.Parallel nest storing dst[j, i] = src[i, j]; dst must have the
 * swapped extents. */
TEST(eval_transpose_tiles) {
  EvalFixture fx;
  const char *src =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(n):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((64, 32), 'float16')):\n"
      "        with T.Kernel(1, threads=128) as bx:\n"
      "            s = T.alloc_shared((64, 32), 'float16')\n"
      "            t = T.alloc_shared((n, 64), 'float16')\n"
      "            T.copy(A, s)\n"
      "            T.transpose(s, t)\n"
      "    return main\n";
  const char *ok[] = {"n=32", NULL};
  IrFunc *f = compile_src(&fx, src, "k", ok);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "for i in parallel(0, 64):\n      for j in parallel(0, 32):\n        t[j, i] = s[i, j]");
  fini(&fx);
  const char *bad[] = {"n=16", NULL};
  CHECK(compile_src(&fx, src, "k", bad) == NULL);
  CHECK_HAS(diag_text(&fx), "error: T.transpose(): dst must have src's extents swapped");
  fini(&fx);
}

/* T.StridedTensor[shape, strides, dtype] is T.StridedTensor(shape, strides, dtype). */
TEST(eval_strided_tensor_subscript_form) {
  EvalFixture fx;
  const char *src =
      "import tilelang.language as T\n"
      "NN = T.dynamic('NN')\n"
      "@T.prim_func\n"
      "def k(A: T.StridedTensor[[64, 32], [NN, 1], 'float16'], B: T.StridedTensor((64, 32), (NN, 1), 'float16')):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        for i, j in T.Parallel(64, 32):\n"
      "            B[i, j] = A[i, j]\n";
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  REQUIRE(f->nparams >= 2 && f->params[0].buf && f->params[1].buf);
  IrBuffer *a = f->params[0].buf, *b = f->params[1].buf;
  CHECK(a->strides && b->strides && a->dtype == TS_DTYPE_FLOAT16);
  CHECK(a->strides && b->strides && ir_expr_equal(a->strides[0], b->strides[0]));
  fini(&fx);

  /* an eager function may declare its tensors and scalars in the signature (TileLang's
   * prim_func-like form), in signature order */
  EvalFixture fs;
  const char *sig =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(A: T.Tensor((64,), T.float16), n: T.int32, B: T.Tensor((64,), T.float16)):\n"
      "    with T.Kernel(1, threads=32):\n"
      "        for i in T.Parallel(64):\n"
      "            B[i] = A[i] + n\n";
  f = compile_src(&fs, sig, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fs));
  REQUIRE(f);
  REQUIRE(f->nparams == 3);
  CHECK(f->params[0].buf && !strcmp(f->params[0].name, "A") && f->params[0].buf->param_index == 0);
  CHECK(f->params[1].var && f->params[1].var->dtype == TS_DTYPE_INT32 && !strcmp(f->params[1].name, "n"));
  CHECK(f->params[2].buf && f->params[2].buf->param_index == 2 && f->params[2].buf->dtype == TS_DTYPE_FLOAT16);
  fini(&fs);

  /* the eager style's body annotation keeps the strides too (they bind `s` at launch) */
  EvalFixture fe;
  const char *eager =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def k(x):\n"
      "    m = T.dynamic('m')\n"
      "    s = T.dynamic('s')\n"
      "    x: T.StridedTensor[[m, 16], [s, 1], T.float4_e2m1fn]\n"
      "    with T.Kernel(1, threads=32):\n"
      "        pass\n";
  f = compile_src(&fe, eager, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fe));
  REQUIRE(f);
  REQUIRE(f->nparams == 1 && f->params[0].buf);
  a = f->params[0].buf;
  CHECK(a->strides && a->strides[0]->kind == IR_VAR && !strcmp(a->strides[0]->u.var->name, "s"));
  fini(&fe);
}

/* TVM's (TileLang's) arithmetic with Python floats: the literal is float32 and a float16 /
 * bfloat16 operand is promoted (h * 0.5 computes in float32, as TileLang's test_bind_kernel
 * expects `float x` for `x = A_shared[i] + 1.0`); a Python int takes the IR side's type;
 * comparisons keep the IR side's type. */
TEST(eval_python_float_promotes_half_arithmetic) {
  EvalFixture fx;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k(A: T.Tensor((4,), 'float16'), B: T.Tensor((4,), 'float16'), C: T.Tensor((4,), 'bool')):\n"
      "    with T.Kernel(1, threads=4) as bx:\n"
      "        tx = T.get_thread_binding()\n"
      "        x = A[tx] * 0.5\n"
      "        y = A[tx] + 2\n"
      "        B[tx] = x + y\n"
      "        C[tx] = A[tx] < 0.5\n";
  IrFunc *f = compile_src(&fx, src, "k", NULL);
  if (!f) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(f);
  CHECK_HAS(ir_text(&fx), "let x: float32 = float32(A[tx]) * 0.5");
  CHECK_HAS(ir_text(&fx), "let y: float16 = A[tx] + float16(2.0)");
  CHECK_HAS(ir_text(&fx), "C[tx] = A[tx] < float16(0.5)");
  fini(&fx);
}
