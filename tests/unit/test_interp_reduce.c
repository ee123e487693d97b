/* test_interp_reduce.c — T.reduce_bitand / bitor / bitxor and T.reduce_max / min
 * (nan_propagate=True) through the whole pass pipeline (fragment layouts, the per-thread
 * fold, the shuffles and the cross-warp step), run in the lockstep interpreter (interp.h)
 * against row results computed here. */
#include <math.h>
#include <string.h>

#include "../../src/ir/analysis.h"
#include "../../src/layout/fragment.h"
#include "interp.h"
#include "test.h"

static const char REDUCE_OPS[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def reduce_ops(M, N, threads):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"int32\"), F: T.Tensor((M, N), \"float32\"), O: T.Tensor((M, 3), \"int32\"),\n"
    "             P: T.Tensor((M, 3), \"float32\")):\n"
    "        with T.Kernel(1, threads=threads):\n"
    "            x = T.alloc_fragment((M, N), \"int32\")\n"
    "            f = T.alloc_fragment((M, N), \"float32\")\n"
    "            ra = T.alloc_fragment((M,), \"int32\")\n"
    "            ro = T.alloc_fragment((M,), \"int32\")\n"
    "            rx = T.alloc_fragment((M,), \"int32\")\n"
    "            mx = T.alloc_fragment((M,), \"float32\")\n"
    "            mn = T.alloc_fragment((M,), \"float32\")\n"
    "            am = T.alloc_fragment((M,), \"float32\")\n"
    "            T.copy(X, x)\n"
    "            T.copy(F, f)\n"
    "            T.reduce_bitand(x, ra, dim=1)\n"
    "            T.reduce_bitor(x, ro, dim=1)\n"
    "            T.reduce_bitxor(x, rx, dim=1)\n"
    "            T.reduce_max(f, mx, dim=1, nan_propagate=True)\n"
    "            T.reduce_min(f, mn, dim=1, nan_propagate=True)\n"
    "            T.reduce_max(f, am, dim=1)\n"
    "            for i in T.Parallel(M):\n"
    "                O[i, 0] = ra[i]\n"
    "                O[i, 1] = ro[i]\n"
    "                O[i, 2] = rx[i]\n"
    "                P[i, 0] = mx[i]\n"
    "                P[i, 1] = mn[i]\n"
    "                P[i, 2] = am[i]\n"
    "\n"
    "    return main\n";


/* Same float, NaN equal to NaN. */
static bool same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

TEST(interp_reduce_bitwise_and_nan_propagate) {
  enum { M = 4, N = 64 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"reduce_ops.py", REDUCE_OPS, sizeof REDUCE_OPS - 1};
  const char *params[] = {"M=4", "N=64", "threads=128", NULL};
  IrFunc *f = interp_compile(&c, &file, "reduce_ops", params);
  REQUIRE(f);
  Interp in = {0};
  double *x = interp_global(&in, interp_param(f, "X")), *fl = interp_global(&in, interp_param(f, "F"));
  double *o = interp_global(&in, interp_param(f, "O")), *p = interp_global(&in, interp_param(f, "P"));
  unsigned s = 11;
  for (int e = 0; e < M * N; e++) {
    s = s * 1103515245u + 12345u;
    x[e] = (double)(int32_t)(s >> 1 | 0x01010101u); /* bits set in every element: a non-zero and */
    fl[e] = (double)(int)(s >> 20) - 2000;
  }
  fl[1 * N + 37] = NAN; /* row 1: NaN in the middle; row 3: NaN last */
  fl[3 * N + N - 1] = NAN;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int i = 0; i < M; i++) {
    int32_t a = -1, orr = 0, xr = 0;
    double mx = -INFINITY, mn = INFINITY, am = -INFINITY;
    bool has_nan = false;
    for (int j = 0; j < N; j++) {
      int32_t v = (int32_t)x[i * N + j];
      a &= v, orr |= v, xr ^= v;
      double y = fl[i * N + j];
      has_nan |= isnan(y);
      if (!isnan(y)) mx = fmax(mx, y), mn = fmin(mn, y), am = fmax(am, y);
    }
    bad += (int32_t)o[i * 3] != a || (int32_t)o[i * 3 + 1] != orr || (int32_t)o[i * 3 + 2] != xr;
    bad += !same(p[i * 3], has_nan ? NAN : mx) || !same(p[i * 3 + 1], has_nan ? NAN : mn);
    bad += !same(p[i * 3 + 2], am); /* without nan_propagate the NaN is dropped */
    CHECK(a != 0 && a != orr); /* the data exercise both operations */
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* TileLang's reducer epoch (T.reducer_init / reducer_update / finalize_reducer(acc, dst)):
 * 128 threads over T.Parallel(8) contribute each iteration once (replication must not multiply
 * contributions: TileLang's issue 2408), across two serial tiles, with a starting value
 * combined once; max and bitxor reducers beside it. */
static const char REDUCER_EPOCH[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def epoch(n):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((2, n), \"float32\"), X: T.Tensor((n,), \"int32\"), B: T.Tensor((3,), \"float32\")):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            acc = T.alloc_reducer((1,), T.float32, op=\"sum\")\n"
    "            mx = T.alloc_reducer((1,), T.float32, op=\"max\")\n"
    "            bx = T.alloc_reducer((1,), T.int32, op=\"bitxor\")\n"
    "            T.reducer_init(acc, 100.0)\n"
    "            T.reducer_init(mx)\n"
    "            T.reducer_init(bx)\n"
    "            for t in T.serial(2):\n"
    "                for i in T.Parallel(n):\n"
    "                    T.reducer_update(acc[0], A[t, i])\n"
    "                    T.reducer_update(mx[0], A[t, i])\n"
    "            for i in T.Parallel(n):\n"
    "                T.reducer_update(bx[0], X[i])\n"
    "            r = T.alloc_fragment((1,), T.float32)\n"
    "            m = T.alloc_fragment((1,), T.float32)\n"
    "            x = T.alloc_fragment((1,), T.int32)\n"
    "            T.finalize_reducer(acc, r)\n"
    "            T.finalize_reducer(mx, m)\n"
    "            T.finalize_reducer(bx, x)\n"
    "            if T.get_thread_binding() == 0:\n"
    "                B[0] = r[0]\n"
    "                B[1] = m[0]\n"
    "                B[2] = x[0]\n"
    "\n"
    "    return main\n";

TEST(interp_reducer_epoch_contributes_once) {
  enum { N = 8 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"epoch.py", REDUCER_EPOCH, sizeof REDUCER_EPOCH - 1};
  const char *params[] = {"n=8", NULL};
  IrFunc *f = interp_compile(&c, &file, "epoch", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *x = interp_global(&in, interp_param(f, "X"));
  double *b = interp_global(&in, interp_param(f, "B"));
  double sum = 100, mx = -INFINITY;
  int xr = 0;
  for (int i = 0; i < 2 * N; i++) a[i] = i * 0.5 - 3, sum += a[i], mx = fmax(mx, a[i]);
  for (int i = 0; i < N; i++) x[i] = 3 * i + 1, xr ^= 3 * i + 1;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(b[0] == sum);
  CHECK(b[1] == mx);
  CHECK((int)b[2] == xr);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.reduce_* of a thread's own registers (T.alloc_local source; local or T.alloc_var
 * destination, TileLang's "reduce local" form): each of 32 threads folds its row, along the
 * last dimension and along the first, with clear=False continuing from the value held. */
static const char REDUCE_REGS[] =
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@T.prim_func\n"
    "def reduce_regs(X: T.Tensor((32, 4, 6), \"float32\"), O: T.Tensor((32, 4), \"float32\"),\n"
    "                P: T.Tensor((32, 6), \"float32\"), S: T.Tensor((32, 3), \"float32\")):\n"
    "    with T.Kernel(1, threads=32):\n"
    "        tx = T.get_thread_binding()\n"
    "        m = T.alloc_local((4, 6), \"float32\")\n"
    "        rows = T.alloc_local((4,), \"float32\")\n"
    "        cols = T.alloc_local((1, 6), \"float32\")\n"
    "        v = T.alloc_var(\"float32\")\n"
    "        for i, j in T.grid(4, 6):\n"
    "            m[i, j] = X[tx, i, j]\n"
    "        T.reduce_max(m, rows, dim=1)\n"
    "        T.reduce_abssum(m, cols, dim=0)\n"
    "        v = 1.0\n"
    "        T.reduce_sum(rows, v, dim=0, clear=False)\n"
    "        for i in T.serial(4):\n"
    "            O[tx, i] = rows[i]\n"
    "        for j in T.serial(6):\n"
    "            P[tx, j] = cols[0, j]\n"
    "        S[tx, 0] = v\n";

TEST(interp_reduce_registers_per_thread) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"reduce_regs.py", REDUCE_REGS, sizeof REDUCE_REGS - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "reduce_regs", params);
  REQUIRE(f);
  Interp in = {0};
  double *x = interp_global(&in, interp_param(f, "X")), *o = interp_global(&in, interp_param(f, "O"));
  double *p = interp_global(&in, interp_param(f, "P")), *sv = interp_global(&in, interp_param(f, "S"));
  unsigned s = 7;
  for (int e = 0; e < 32 * 24; e++) {
    s = s * 1103515245u + 12345u;
    x[e] = (double)(int)(s >> 22) - 512;
  }
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int th = 0; th < 32; th++) {
    double total = 1.0;
    for (int i = 0; i < 4; i++) {
      double mx = -INFINITY;
      for (int j = 0; j < 6; j++) mx = fmax(mx, x[th * 24 + i * 6 + j]);
      bad += o[th * 4 + i] != mx;
      total += mx;
    }
    for (int j = 0; j < 6; j++) {
      double a = 0;
      for (int i = 0; i < 4; i++) a += fabs(x[th * 24 + i * 6 + j]);
      bad += p[th * 6 + j] != a;
    }
    bad += sv[th * 3] != total;
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.Fragment annotations (TileLang's reduce tests): x laid out by a user map over 64 of the
 * block's 128 threads (rows in registers, 8 columns a thread), the row sums replicated on
 * those 64 threads (replicate=64; threads 64..127 hold copies, as the fitted layout adds);
 * and two row groups of 64 threads each summing their row.  Both divide by / store the sums. */
static const char FRAGMENT_MAPS[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def maps(two_groups):\n"
    "    rows = 2 if two_groups else 4\n"
    "\n"
    "    def x_layout(i, j):\n"
    "        if two_groups:\n"
    "            return i * 64 + j // 8, j % 8\n"
    "        return j // 8, i * 8 + j % 8\n"
    "\n"
    "    def sum_layout(i, rep):\n"
    "        return (i * 64 + rep, 0) if two_groups else (rep, i)\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(x: T.Tensor((rows, 512), \"float32\"), out: T.Tensor((rows, 512), \"float32\")):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            x_frag = T.alloc_fragment((rows, 512), \"float32\")\n"
    "            s = T.alloc_fragment((rows,), \"float32\")\n"
    "            T.annotate_layout({x_frag: T.Fragment(x_frag.shape, forward_fn=x_layout),\n"
    "                               s: T.Fragment(s.shape, forward_fn=sum_layout, replicate=64)})\n"
    "            for i, j in T.Parallel(rows, 512):\n"
    "                x_frag[i, j] = x[i, j]\n"
    "            T.reduce_sum(x_frag, s, dim=1)\n"
    "            for i, j in T.Parallel(rows, 512):\n"
    "                out[i, j] = x_frag[i, j] / s[i]\n"
    "\n"
    "    return main\n";

static void find_x_frag(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_ALLOC && !strcmp(s->u.alloc.buf->name, "x_frag")) *(IrBuffer **)ctx = s->u.alloc.buf;
}

static void fragment_case(TestCtx *t, bool two_groups) {
  int M = two_groups ? 2 : 4, N = 512;
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"maps.py", FRAGMENT_MAPS, sizeof FRAGMENT_MAPS - 1};
  const char *params[] = {two_groups ? "two_groups=True" : "two_groups=False", NULL};
  IrFunc *f = interp_compile(&c, &file, "maps", params);
  REQUIRE(f);
  IrBuffer *xf = NULL; /* the map's owners: element (1, 8) on thread 65 or 1, (0, 9) beside (0, 8) */
  IrVisitor v = {find_x_frag, NULL, &xf};
  ir_visit(f->body, &v);
  REQUIRE(xf && xf->fragment);
  CHECK(fragment_thread_of(xf->fragment, (int64_t[]){1, 8}) == (two_groups ? 65 : 1));
  CHECK(fragment_thread_of(xf->fragment, (int64_t[]){0, 9}) == fragment_thread_of(xf->fragment, (int64_t[]){0, 8}));
  CHECK(fragment_replicas(xf->fragment) == (two_groups ? 1 : 2));
  Interp in = {0};
  double *x = interp_global(&in, interp_param(f, "x")), *o = interp_global(&in, interp_param(f, "out"));
  for (int e = 0; e < M * N; e++) x[e] = 1 + (e * 7919 % 101) / 16.0;
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int i = 0; i < M; i++) {
    double sum = 0;
    for (int j = 0; j < N; j++) sum += x[i * N + j];
    for (int j = 0; j < N; j++) bad += fabs(o[i * N + j] - x[i * N + j] / sum) > 1e-6;
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}
TEST(interp_fragment_annotation_rows_in_registers) { fragment_case(t, false); }
TEST(interp_fragment_annotation_two_thread_groups) { fragment_case(t, true); }
