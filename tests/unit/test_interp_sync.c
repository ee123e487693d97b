/* test_interp_sync.c — thread_sync's write-after-write ordering, run in the lockstep interpreter
 * (interp.h counts two threads writing one shared element between barriers as a race): a zero
 * fill, then a fill of data through another thread mapping, must get a barrier between them;
 * two writes that give every element to the same thread must not. */
#include <string.h>

#include "../../src/codegen/cuda.h"
#include "../../src/ir/analysis.h"
#include <stdio.h>

#include "interp.h"
#include "test.h"

/* T.fill(S, 0) maps row pairs to threads one way, the T.Parallel nest writing the even rows maps
 * them another way (vectorized): without a barrier, a late zero may land over data. */
static const char FILL_THEN_DATA[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def fill_then_data(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M // 2, N), \"float16\"), B: T.Tensor((M, N), \"float16\")):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            S = T.alloc_shared((M, N), \"float16\")\n"
    "            T.fill(S, 0)\n"
    "            for i, j in T.Parallel(M // 2, N):\n"
    "                S[i * 2, j] = A[i, j]\n"
    "            T.copy(S, B)\n"
    "\n"
    "    return main\n";

/* How many __syncthreads the lowered f holds. */
static void count_sync(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_EVAL && s->u.eval.value->kind == IR_CALL && s->u.eval.value->u.call.op == IRI_SYNCTHREADS)
    ++*(int *)ctx;
}
static int barriers(IrFunc *f) {
  int n = 0;
  IrVisitor v = {count_sync, NULL, &n};
  ir_visit(f->body, &v);
  return n;
}

TEST(interp_write_after_write_other_thread_gets_barrier) {
  enum { M = 64, N = 32 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"fill_then_data.py", FILL_THEN_DATA, sizeof FILL_THEN_DATA - 1};
  const char *params[] = {"M=64", "N=32", NULL};
  IrFunc *f = interp_compile(&c, &file, "fill_then_data", params);
  REQUIRE(f);
  CHECK(barriers(f) == 2); /* fill | data | copy out */
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *b = interp_global(&in, interp_param(f, "B"));
  for (int i = 0; i < M / 2 * N; i++) a[i] = 1 + i % 7;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int r = 0; r < M; r++)
    for (int j = 0; j < N; j++) bad += b[r * N + j] != (r % 2 ? 0 : a[r / 2 * N + j]);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* A loop rewriting the same elements through the same mapping in every iteration, and a
 * thread-0 section writing one flag twice: each element keeps one writer, no barrier there. */
static const char SAME_WRITER[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def same_writer(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, N), \"float32\"), F: T.Tensor((2,), \"int32\")):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            S = T.alloc_shared((M, N), \"float32\")\n"
    "            flag = T.alloc_shared((2,), \"int32\")\n"
    "            tx = T.get_thread_binding()\n"
    "            for i, j in T.Parallel(M, N):\n"
    "                S[i, j] = A[i, j]\n"
    "            for k in T.serial(3):\n"
    "                for i, j in T.Parallel(M, N):\n"
    "                    S[i, j] = A[i, j] + k\n"
    "            if tx == 0:\n"
    "                flag[0] = 1\n"
    "                flag[0] = 2\n"
    "            T.copy(S, B)\n"
    "            F[0] = flag[0]\n"
    "\n"
    "    return main\n";

TEST(interp_write_after_write_same_thread_no_barrier) {
  enum { M = 16, N = 32 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"same_writer.py", SAME_WRITER, sizeof SAME_WRITER - 1};
  const char *params[] = {"M=16", "N=32", NULL};
  IrFunc *f = interp_compile(&c, &file, "same_writer", params);
  REQUIRE(f);
  /* before the loop (the first nest writes 4-wide, the loop's nest one by one: other threads)
   * and before the reads of S and flag by other threads; none in the loop or the branch */
  CHECK(barriers(f) == 2);
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *b = interp_global(&in, interp_param(f, "B"));
  double *fl = interp_global(&in, interp_param(f, "F"));
  for (int i = 0; i < M * N; i++) a[i] = i % 11;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int i = 0; i < M * N; i++) bad += b[i] != a[i] + 2;
  CHECK(bad == 0);
  CHECK(fl[0] == 2);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* Iteration k reads row k + 1, which iteration k + 1 overwrites through other threads: the
 * read of `s[k + 1, i]` recorded in iteration k is `s[k, i]` in iteration k + 1 (the loop's own
 * variable moved on), so the write needs a barrier at the top of each iteration. */
static const char NEXT_ROW[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def next_row(n):\n"
    "    @T.prim_func\n"
    "    def main(P: T.Tensor((n + 1, 128), \"float32\"), A: T.Tensor((n, 128), \"float32\"),\n"
    "             B: T.Tensor((n, 128), \"float32\")):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            s = T.alloc_shared((n + 1, 128), \"float32\")\n"
    "            T.copy(P, s)\n"
    "            for k in T.serial(n):\n"
    "                for i in T.Parallel(128):\n"
    "                    s[k, 127 - i] = A[k, i]\n"
    "                for i in T.Parallel(128):\n"
    "                    B[k, i] = s[k + 1, i]\n"
    "\n"
    "    return main\n";

TEST(interp_loop_carried_access_names_moved_loop_var) {
  enum { N = 4 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"next_row.py", NEXT_ROW, sizeof NEXT_ROW - 1};
  const char *params[] = {"n=4", NULL};
  IrFunc *f = interp_compile(&c, &file, "next_row", params);
  REQUIRE(f);
  Interp in = {0};
  double *p = interp_global(&in, interp_param(f, "P")), *a = interp_global(&in, interp_param(f, "A"));
  double *b = interp_global(&in, interp_param(f, "B"));
  for (int i = 0; i < (N + 1) * 128; i++) p[i] = 1000 + i;
  for (int i = 0; i < N * 128; i++) a[i] = -1 - i;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int k = 0; k < N; k++)
    for (int i = 0; i < 128; i++) bad += b[k * 128 + i] != p[(k + 1) * 128 + i];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* Every thread writes the flag, then thread 5 alone rewrites it: thread 5's store must not be
 * overtaken by another thread's first one (a barrier between), while the branch's own guard
 * (`tx == 5`, evaluated) leaves it one writer. */
static const char GUARDED_REWRITE[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def guarded_rewrite(n):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n,), \"int32\"), B: T.Tensor((n,), \"int32\")):\n"
    "        with T.Kernel(1, threads=n):\n"
    "            tx = T.get_thread_binding()\n"
    "            f = T.alloc_shared((4,), \"int32\")\n"
    "            f[0] = A[0]\n"
    "            if tx == 5:\n"
    "                f[0] = A[tx]\n"
    "            B[tx] = f[0]\n"
    "\n"
    "    return main\n";

TEST(interp_write_after_write_by_one_thread_of_all) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"guarded_rewrite.py", GUARDED_REWRITE, sizeof GUARDED_REWRITE - 1};
  const char *params[] = {"n=64", NULL};
  IrFunc *f = interp_compile(&c, &file, "guarded_rewrite", params);
  REQUIRE(f);
  CHECK(barriers(f) == 2);
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *b = interp_global(&in, interp_param(f, "B"));
  for (int i = 0; i < 64; i++) a[i] = 10 + i;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int i = 0; i < 64; i++) bad += b[i] != a[5];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* Each thread rescales the elements it wrote itself, in place, three times: its reads see only
 * its own stores and its stores overwrite only its own reads, so no barrier goes inside the loop
 * (only around it: the copy in and out map elements to threads another way). */
static const char IN_PLACE[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def in_place(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            S = T.alloc_shared((M, N), \"float32\")\n"
    "            T.copy(A, S)\n"
    "            for k in T.serial(3):\n"
    "                for i, j in T.Parallel(M, N):\n"
    "                    S[i, j] = S[i, j] * 2.0 + k\n"
    "            T.copy(S, B)\n"
    "\n"
    "    return main\n";

TEST(interp_same_thread_read_modify_write_no_barrier) {
  enum { M = 16, N = 32 };
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"in_place.py", IN_PLACE, sizeof IN_PLACE - 1};
  const char *params[] = {"M=16", "N=32", NULL};
  IrFunc *f = interp_compile(&c, &file, "in_place", params);
  REQUIRE(f);
  CHECK(barriers(f) == 2);
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *b = interp_global(&in, interp_param(f, "B"));
  for (int i = 0; i < M * N; i++) a[i] = i % 13;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int i = 0; i < M * N; i++) bad += b[i] != ((a[i] * 2 + 0) * 2 + 1) * 2 + 2;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* TVM's spellings in a T.Kernel: T.launch_thread("threadIdx.x", 128) / ("blockIdx.x", 2) are
 * the kernel's own indices, T.tvm_storage_sync("shared") its block barrier: a block reverses
 * its 128 elements through shared memory, with no race and no second barrier. */
static const char TVM_SPELLINGS[] =
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@T.prim_func\n"
    "def tvm_spellings(A: T.Tensor((256,), \"float32\"), C: T.Tensor((256,), \"float32\")):\n"
    "    with T.Kernel(2, threads=128) as bx:\n"
    "        tx = T.launch_thread(\"threadIdx.x\", 128)\n"
    "        b = T.launch_thread(\"blockIdx.x\", 2)\n"
    "        S = T.alloc_shared((128,), \"float32\")\n"
    "        S[tx] = A[b * 128 + tx]\n"
    "        T.tvm_storage_sync(\"shared\")\n"
    "        C[b * 128 + tx] = S[127 - tx]\n";

TEST(interp_launch_thread_and_storage_sync) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"tvm_spellings.py", TVM_SPELLINGS, sizeof TVM_SPELLINGS - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "tvm_spellings", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *o = interp_global(&in, interp_param(f, "C"));
  for (int e = 0; e < 256; e++) a[e] = e * 3 + 1;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int e = 0; e < 256; e++) bad += o[e] != a[e / 128 * 128 + 127 - e % 128];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.fill / T.copy of regions whose extents are known only at run time (`x[a:b]`, TileLang's
 * issue 1008): the block's threads stride over the flattened region; a 2-D shared tile of r
 * rows, then copied out: every element once, nothing outside the region written, no race. */
static const char RUNTIME_TILES[] =
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@T.prim_func\n"
    "def runtime_tiles(R: T.Tensor((3,), \"int32\"), X: T.Tensor((300,), \"float32\"), Y: T.Tensor((300,), \"float32\"),\n"
    "                  O: T.Tensor((8, 16), \"float32\")):\n"
    "    with T.Kernel(1, threads=64):\n"
    "        a = R[0]\n"
    "        b = R[1]\n"
    "        r = R[2]\n"
    "        S = T.alloc_shared((8, 16), \"float32\")\n"
    "        T.fill(Y[a:b], 7.0)\n"
    "        T.copy(X[a:b], Y[a + 150:b + 150])\n"
    "        T.fill(S[0:r, :], 2.0)\n"
    "        T.copy(S[0:r, :], O[0:r, :])\n";

TEST(interp_runtime_extent_fill_copy) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"runtime_tiles.py", RUNTIME_TILES, sizeof RUNTIME_TILES - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "runtime_tiles", params);
  REQUIRE(f);
  Interp in = {0};
  double *r = interp_global(&in, interp_param(f, "R")), *x = interp_global(&in, interp_param(f, "X"));
  double *y = interp_global(&in, interp_param(f, "Y")), *o = interp_global(&in, interp_param(f, "O"));
  r[0] = 5, r[1] = 140, r[2] = 5; /* 135 elements: more than the 64 threads, not a multiple */
  for (int e = 0; e < 300; e++) x[e] = e + 0.5, y[e] = -1;
  for (int e = 0; e < 128; e++) o[e] = -1;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int e = 0; e < 300; e++) {
    double want = e >= 5 && e < 140 ? 7.0 : e >= 155 && e < 290 ? x[e - 150] : -1;
    if (y[e] != want && bad++ < 5) fprintf(stderr, "Y[%d] = %g, want %g\n", e, y[e], want);
  }
  for (int e = 0; e < 128; e++)
    if (o[e] != (e < 5 * 16 ? 2.0 : -1) && bad++ < 10) fprintf(stderr, "O[%d] = %g\n", e, o[e]);
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.async_copy(global, shared) + T.ptx_wait_group(0), TileLang's explicit form of a cp.async
 * tile copy: the tile is complete for every thread's reads after the wait. */
static const char ASYNC_COPY[] =
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@T.prim_func\n"
    "def async_copy(A: T.Tensor((32, 64), \"float16\"), C: T.Tensor((32, 64), \"float16\")):\n"
    "    with T.Kernel(1, threads=128):\n"
    "        S = T.alloc_shared((32, 64), \"float16\")\n"
    "        T.async_copy(A[0:32, 0:64], S)\n"
    "        T.ptx_wait_group(0)\n"
    "        for i, j in T.Parallel(32, 64):\n"
    "            C[i, j] = S[31 - i, 63 - j]\n";

TEST(interp_async_copy_then_wait) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"async_copy.py", ASYNC_COPY, sizeof ASYNC_COPY - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "async_copy", params);
  REQUIRE(f);
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *o = interp_global(&in, interp_param(f, "C"));
  for (int e = 0; e < 32 * 64; e++) a[e] = e % 251;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int e = 0; e < 32 * 64; e++) bad += o[e] != a[32 * 64 - 1 - e];
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* A shared buffer sized by a dynamic dimension (T.alloc_shared((len,), ...), TileLang's
 * dynamic shared memory test) goes after the constant ones, and the launch adds its bytes:
 * the kernel's metadata holds them as an expression of `len` (4 len for int32 after a 1024-
 * byte constant buffer here), and the interpreter runs the kernel on len = 100. */
static const char DYN_SMEM[] =
    "import tilelang.language as T\n"
    "\n"
    "length = T.symbolic(\"len\", dtype=T.int32)\n"
    "\n"
    "\n"
    "@T.prim_func\n"
    "def dyn_smem(G: T.Tensor[(length,), T.int32], H: T.Tensor((256,), T.int32)):\n"
    "    with T.Kernel(1, threads=32):\n"
    "        fixed = T.alloc_shared((256,), T.int32)\n"
    "        buf = T.alloc_shared((length,), T.int32)\n"
    "        T.copy(G[0:length], buf[0:length])\n"
    "        T.copy(H, fixed)\n"
    "        for i in T.serial(8):\n"
    "            H[i * 32 + T.get_thread_binding()] = fixed[i * 32 + T.get_thread_binding()] + 1\n"
    "        T.copy(buf[0:length], G[0:length])\n";

TEST(dynamic_shared_buffer_sized_at_launch) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"dyn_smem.py", DYN_SMEM, sizeof DYN_SMEM - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "dyn_smem", params);
  REQUIRE(f);
  CgOutput out;
  REQUIRE(cg_cuda(&c, f, &out));
  REQUIRE(out.nkernels == 1 && f->ndyn == 1);
  int64_t extra = -1, len = 100;
  CHECK(out.kernels[0].smem_bytes == 1024);
  CHECK(out.kernels[0].smem_dyn && ir_eval_int(out.kernels[0].smem_dyn, f->dyn_vars, &len, 1, &extra) && extra == 400);
  CHECK(strstr(out.source, "ts_smem + 1024") != NULL);
  Interp in = {0};
  interp_set_scalar(&in, f->dyn_vars[0], (double)len);
  double *g = interp_global(&in, interp_param(f, "G")), *h = interp_global(&in, interp_param(f, "H"));
  for (int e = 0; e < len; e++) g[e] = 3 * e;
  for (int e = 0; e < 256; e++) h[e] = e;
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int e = 0; e < len; e++) bad += g[e] != 3 * e;
  for (int e = 0; e < 256; e++) bad += h[e] != e + 1;
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

/* T.ClusterKernel(cluster_dims=(4, 1, 1)) (TileLang's cluster test): __cluster_dims__(4, 1, 1)
 * on the kernel, T.block_rank_in_cluster() the block's rank (blockIdx.x % 4 for a cluster
 * along x), the split cluster barrier (T.cluster_arrive / T.cluster_wait) and T.cluster_sync
 * ordering shared memory like a block barrier. */
static const char CLUSTER_RANK[] =
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@T.prim_func\n"
    "def cluster_rank(A: T.Tensor((128,), \"int32\"), B: T.Tensor((128, 32), \"int32\")):\n"
    "    with T.ClusterKernel(128, threads=32, cluster_dims=(4, 1, 1)) as bx:\n"
    "        S = T.alloc_shared((32,), \"int32\")\n"
    "        T.cluster_arrive()\n"
    "        T.cluster_wait()\n"
    "        r = T.block_rank_in_cluster()\n"
    "        tx = T.get_thread_binding()\n"
    "        S[tx] = r * 100 + tx\n"
    "        T.cluster_sync()\n"
    "        B[bx, tx] = S[31 - tx]\n"
    "        if tx == 0:\n"
    "            A[bx] = r\n";

TEST(interp_cluster_kernel_rank_and_barriers) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  c.debug = true;
  SourceFile file = {"cluster_rank.py", CLUSTER_RANK, sizeof CLUSTER_RANK - 1};
  const char *params[] = {NULL};
  IrFunc *f = interp_compile(&c, &file, "cluster_rank", params);
  REQUIRE(f);
  CgOutput out;
  REQUIRE(cg_cuda(&c, f, &out));
  CHECK(out.kernels[0].cluster_x == 4);
  CHECK(strstr(out.source, "__cluster_dims__(4, 1, 1)") != NULL);
  Interp in = {0};
  double *a = interp_global(&in, interp_param(f, "A")), *b = interp_global(&in, interp_param(f, "B"));
  interp_run(&in, f);
  CHECK(in.errors == 0);
  CHECK(in.races == 0);
  int bad = 0;
  for (int blk = 0; blk < 128; blk++) {
    bad += a[blk] != blk % 4;
    for (int x = 0; x < 32; x++) bad += b[blk * 32 + x] != (blk % 4) * 100 + 31 - x;
  }
  CHECK(bad == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}
