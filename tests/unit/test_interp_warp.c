/* test_interp_warp.c — T.shfl_*, the warp votes and matches, the block barriers with a
 * predicate, T.__ffs / T.__fns and the lane and warp numbers, compiled from TileLang source
 * through the whole pass pipeline and run in the lockstep interpreter (interp.h) over two
 * warps; the expected values are CUDA's documented results, written out here per thread. */
#include <string.h>

#include "interp.h"
#include "test.h"

static const char WARP_OPS[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def warp_ops(n):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n,), \"float32\"), F: T.Tensor((n, 4), \"float32\"), O: T.Tensor((n, 12), \"int64\")):\n"
    "        with T.Kernel(1, threads=n):\n"
    "            tx = T.get_thread_binding()\n"
    "            a = A[tx]\n"
    "            F[tx, 0] = T.shfl_down(a, 1)\n"
    "            F[tx, 1] = T.shfl_up(a, 2, 16)\n"
    "            F[tx, 2] = T.shfl_sync(a, 5)\n"
    "            F[tx, 3] = T.shfl_xor(a, 4, 8)\n"
    "            O[tx, 0] = T.any_sync(tx == 3)\n"
    "            O[tx, 1] = T.all_sync(tx < 40)\n"
    "            O[tx, 2] = T.ballot_sync(tx % 3 == 0)\n"
    "            O[tx, 3] = T.syncthreads_count(tx < 10)\n"
    "            O[tx, 4] = T.syncthreads_and(tx != n - 1)\n"
    "            O[tx, 5] = T.syncthreads_or(tx == n - 1)\n"
    "            O[tx, 6] = T.match_any_sync(tx // 8)\n"
    "            O[tx, 7] = T.__ffs(T.ballot_sync(tx >= 7)) - 1\n"
    "            O[tx, 8] = T.__fns(T.cast(T.ballot(tx >= 7), \"uint32\"), 0, 3)\n"
    "            O[tx, 9] = T.get_lane_idx(16) + 100 * T.get_warp_idx(16)\n"
    "            O[tx, 10] = T.get_warp_group_idx(8, 3)\n"
    "            O[tx, 11] = T.match_all_sync(7, 0xffff)\n"
    "\n"
    "    return main\n";


/* CUDA's results for thread t (lane l of the warp starting at w0) of a 64-thread block. */
static void expected(int t, const double *a, double *f, int64_t *o) {
  int l = t % 32, w0 = t - l;
  f[0] = l < 31 ? a[t + 1] : a[t];
  f[1] = l % 16 >= 2 ? a[t - 2] : a[t];
  f[2] = a[w0 + 5];
  f[3] = a[w0 + (l ^ 4)];
  int64_t ballot = 0;
  for (int u = 0; u < 32; u++) ballot |= (int64_t)((w0 + u) % 3 == 0) << u;
  int64_t want[12] = {w0 == 0,    w0 == 0, ballot,   10, 0, 1, 0xffLL << (8 * (l / 8)),
                      w0 ? 0 : 7, w0 ? 2 : 9, t % 16 + 100 * (t / 16), t / 24, 0xffff};
  memcpy(o, want, sizeof want);
}

TEST(interp_warp_votes_shuffles_and_lane_numbers) {
  enum { N = 64 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"warp_ops.py", WARP_OPS, sizeof WARP_OPS - 1};
  const char *params[] = {"n=64", NULL};
  IrFunc *f = interp_compile(&c, &file, "warp_ops", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *fo = interp_global(&in, interp_param(f, "F"));
  double *oo = interp_global(&in, interp_param(f, "O"));
  for (int i = 0; i < N; i++) a[i] = i * 1.5 - 7;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  int bad = 0;
  for (int th = 0; th < N; th++) {
    double fw[4];
    int64_t ow[12];
    expected(th, a, fw, ow);
    for (int k = 0; k < 4; k++) bad += fo[th * 4 + k] != fw[k];
    for (int k = 0; k < 12; k++)
      if ((int64_t)oo[th * 12 + k] != ow[k] && bad++ < 8)
        fprintf(stderr, "thread %d O[%d] = %.0f, want %lld\n", th, k, oo[th * 12 + k], (long long)ow[k]);
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}
