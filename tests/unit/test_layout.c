/* test_layout.c — unit tests of the tensor-core layouts (src/layout) and of the GEMM
 * lowering as far as it can be checked without a GPU: the accumulator fragment against
 * the register contract of device/tilescale/gemm.cuh, the shared-memory swizzles (bijective,
 * 16-byte chunks intact, the XOR pattern TMA/wgmma use, the IR form equal to the constant
 * form), and the PTX of examples/gemm.py (wgmma + cp.async on sm_90a, mma.sync + ldmatrix
 * on sm_80). */
#include <stdlib.h>

#include "../../src/layout/layout.h"
#include "test.h"
#include "tilescale.h"

/* Every element of a rows x cols accumulator maps to a distinct (thread, register), the
 * mapping is the one gemm.cuh assumes, and every slot is used. */
static void check_acc(TestCtx *t, int64_t rows, int64_t cols, int64_t wm, int64_t wn) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  int64_t T = wm * wn * 32;
  Fragment *f = fragment_gemm_acc(&c, rows, cols, wm, wn, T);
  REQUIRE(f != NULL);
  int64_t regs = fragment_local_size(f), NJ = cols / (8 * wn);
  CHECK(regs * T == rows * cols);
  char *seen = calloc((size_t)(regs * T), 1);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      int64_t idx[2] = {i, j};
      int64_t th = fragment_thread_of(f, idx), r = fragment_reg_of(f, idx);
      /* gemm.cuh: lane = 4*(row%8) + (col%8)/2; 16-row strip s belongs to warp row s % wm;
       * warp column = col / (cols/wn); register (2*(s/wm) + (row%16)/8) * 2NJ + 2*block8 + col%2. */
      int64_t s = i / 16, lane = 4 * (i % 8) + (j % 8) / 2, warp = s % wm + wm * (j / (cols / wn));
      int64_t reg = (2 * (s / wm) + (i % 16) / 8) * (2 * NJ) + 2 * ((j % (cols / wn)) / 8) + j % 2;
      CHECK(th == lane + 32 * warp);
      CHECK(r == reg);
      if (th >= 0 && th < T && r >= 0 && r < regs) seen[th * regs + r]++;
    }
  for (int64_t k = 0; k < regs * T; k++) CHECK(seen[k] == 1);
  free(seen);
  /* Reducing the columns away (row sums of C, as in attention) replicates over the lanes
   * and warp columns that split them. */
  Fragment *red = fragment_reduce(&c, f, 1, false);
  CHECK(fragment_replicas(red) == 4 * wn);
  ts_compiler_fini(&c);
}

TEST(layout_gemm_accumulator) {
  check_acc(t, 16, 8, 1, 1);     /* one mma.sync tile */
  check_acc(t, 128, 128, 2, 2);  /* mma.sync, 4 warps, Square */
  check_acc(t, 64, 128, 2, 4);   /* mma.sync, 8 warps */
  check_acc(t, 128, 128, 4, 1);  /* wgmma: one warpgroup, two 64-row atoms */
  check_acc(t, 256, 128, 8, 1);  /* wgmma: two warpgroups along M */
  check_acc(t, 64, 256, 4, 2);   /* wgmma: two warpgroups along N */
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  CHECK(fragment_gemm_acc(&c, 48, 64, 2, 1, 64) == NULL); /* 48 rows do not tile 2 warps x 16 */
  ts_compiler_fini(&c);
}

/* A window of a fragment (fragment_crop) names the same thread and register, offset by
 * reg_off, as the full fragment for every element; windows that cut across thread fields
 * are refused. */
static void check_window(TestCtx *t, const Fragment *f, const int64_t *off, const int64_t *ext, bool ok) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  int64_t roff = -1;
  Fragment *w = fragment_crop(&c, f, off, ext, &roff);
  CHECK((w != NULL) == ok);
  if (w) {
    for (int64_t i = 0; i < ext[0]; i++)
      for (int64_t j = 0; j < ext[1]; j++) {
        int64_t wi[2] = {i, j}, fi[2] = {i + off[0], j + off[1]};
        CHECK(fragment_thread_of(w, wi) == fragment_thread_of(f, fi));
        /* the lowering's formula: the window's register coordinates through f's strides,
         * which for an element inside the window is f's own register of that element */
        CHECK(fragment_reg_of(f, wi) + roff == fragment_reg_of(f, fi));
      }
  }
  ts_compiler_fini(&c);
}

TEST(layout_fragment_window) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  /* wgmma accumulator 128 x 256, two warpgroups along M: column atoms of 64 (a run of mid) */
  Fragment *acc = fragment_gemm_acc(&c, 128, 256, 8, 1, 256);
  REQUIRE(acc != NULL);
  for (int64_t a = 0; a < 4; a++) check_window(t, acc, (int64_t[]){0, 64 * a}, (int64_t[]){128, 64}, true);
  check_window(t, acc, (int64_t[]){0, 32}, (int64_t[]){128, 32}, true);  /* 32 = 4 of the 8-column blocks */
  check_window(t, acc, (int64_t[]){0, 4}, (int64_t[]){128, 64}, false);  /* not on an 8-column block */
  check_window(t, acc, (int64_t[]){64, 0}, (int64_t[]){64, 256}, false); /* rows cut the warp field */
  check_window(t, acc, (int64_t[]){0, 200}, (int64_t[]){128, 64}, false); /* past the edge */
  /* outer repetitions: a 256 x 128 accumulator of one warpgroup has two 64-row atoms... */
  Fragment *acc2 = fragment_gemm_acc(&c, 256, 128, 4, 1, 128);
  REQUIRE(acc2 != NULL);
  check_window(t, acc2, (int64_t[]){128, 0}, (int64_t[]){128, 128}, true);
  check_window(t, acc2, (int64_t[]){64, 64}, (int64_t[]){64, 64}, true);
  /* the whole fragment is its own window, at register 0 */
  int64_t roff = -1;
  CHECK(fragment_crop(&c, acc, (int64_t[]){0, 0}, (int64_t[]){128, 256}, &roff) != NULL && roff == 0);
  ts_compiler_fini(&c);
}

/* Does thread th hold element idx of f?  Thread fields and replicate fields form one mixed
 * radix of the thread index: th holds it when th without its replicate digits is the
 * owner that fragment_thread_of names. */
static bool holds(const Fragment *f, const int64_t *idx, int64_t th) {
  int64_t base = th;
  for (int i = 0; i < f->nrep; i++) base -= ((th / f->rep_stride[i]) % f->rep_count[i]) * f->rep_stride[i];
  return base == fragment_thread_of(f, idx);
}

/* A 2-D loop layout L read as b[i, j // c] (fragment_derive_div on the last dim): every
 * thread running loop element (i, j) holds b[i, j / c], in the register the lowering names
 * ((o M + m) V' + u / c of the loop's coordinates); NULL exactly when `ok` is false. */
static void check_divided(TestCtx *t, const Fragment *L, int64_t c, bool ok) {
  TsCompiler cc;
  ts_compiler_init(&cc, (TsTarget){90, true});
  int map[2] = {0, 1};
  int64_t div[2] = {1, c};
  Fragment *b = fragment_derive_div(&cc, L, 2, map, NULL, div);
  CHECK((b != NULL) == ok);
  if (b) {
    const FragDim *d = &L->dim[1];
    CHECK(b->dim[1].extent * c == d->extent && b->dim[0].extent == L->dim[0].extent);
    /* no more registers than the elements each thread needs: 1/c of the loop's on that dim */
    CHECK(fragment_local_extent(b, 1) * c == fragment_local_extent(L, 1) || b->dim[1].vec == 1);
    for (int64_t i = 0; i < L->dim[0].extent; i++)
      for (int64_t j = 0; j < d->extent; j++) {
        int64_t li[2] = {i, j}, bi[2] = {i, j / c};
        int64_t M = fragdim_mid(d), u = j % d->vec, m = (j / (d->vec * d->threads)) % M, o = j / fragdim_span(d);
        int64_t want = (o * M + m) * b->dim[1].vec + u / c;
        int64_t reg = (fragment_reg_of(L, li) / fragment_local_extent(L, 1)) * fragment_local_extent(b, 1) + want;
        CHECK(fragment_reg_of(b, bi) == reg);
        for (int64_t th = 0; th < L->nthreads; th++)
          if (holds(L, li, th)) CHECK(holds(b, bi, th));
      }
  }
  ts_compiler_fini(&cc);
}

TEST(layout_fragment_divided) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  /* wgmma A operand in registers (the dequant GEMM's B_dequantize_local): pairs per lane */
  Fragment *a = fragment_gemm_acc(&c, 128, 128, 8, 1, 256);
  REQUIRE(a != NULL);
  check_divided(t, a, 2, true);
  check_divided(t, a, 4, true); /* 2 lanes of 2 adjacent threads: a copy in each */
  /* block layouts: vectors of 4 split by 2 and 4; scalars over 64 threads split by 2 and 8 */
  check_divided(t, fragment_block(&c, 2, (int64_t[]){8, 64}, 64, 4), 2, true);
  check_divided(t, fragment_block(&c, 2, (int64_t[]){8, 64}, 64, 4), 4, true);
  check_divided(t, fragment_block(&c, 2, (int64_t[]){8, 64}, 64, 4), 8, true);
  check_divided(t, fragment_block(&c, 2, (int64_t[]){4, 64}, 128, 1), 2, true);
  check_divided(t, fragment_block(&c, 2, (int64_t[]){4, 64}, 128, 1), 8, true);
  check_divided(t, fragment_block(&c, 2, (int64_t[]){16, 16}, 32, 2), 2, true);
  /* refused: c = 3 cuts vectors of 2 (and 3 is no whole number of them); c = 128 is more
   * than the dim of 64; vectors of 6 split by 4 */
  check_divided(t, fragment_block(&c, 2, (int64_t[]){16, 48}, 32, 2), 3, false);
  check_divided(t, fragment_block(&c, 2, (int64_t[]){2, 64}, 16, 4), 128, false);
  check_divided(t, fragment_block(&c, 2, (int64_t[]){2, 48}, 8, 6), 4, false);
  ts_compiler_fini(&c);
}

TEST(layout_swizzle) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  static const int64_t shapes[][3] = {{128, 64, 2}, {64, 128, 2}, {64, 32, 2}, {32, 16, 2}, {64, 256, 2}, {16, 64, 4}};
  for (int s = 0; s < 6; s++) {
    int64_t R = shapes[s][0], C = shapes[s][1];
    int eb = (int)shapes[s][2];
    Layout *l = layout_swizzled(&c, R, C, eb);
    REQUIRE(l != NULL);
    int64_t W = C * eb % 128 == 0 ? 128 : C * eb % 64 == 0 ? 64 : 32;
    CHECK(l->swizzle == W);
    int64_t vec = 16 / eb, A = W / eb;
    char *seen = calloc((size_t)(R * C), 1);
    for (int64_t r = 0; r < R; r++)
      for (int64_t col = 0; col < C; col++) {
        int64_t o = layout_offset_const(l, r, col);
        REQUIRE(o >= 0 && o < R * C);
        seen[o]++;
        /* 16-byte chunks stay contiguous (vector copies, ldmatrix rows) ... */
        CHECK(o % vec == col % vec);
        /* ... and the chunk index is XORed with the row bits 7.. of its byte offset */
        int64_t byte = (o % (R * A)) * eb, row = byte / W, chunk = (byte % W) / 16;
        CHECK(row == r);
        CHECK(chunk == (((col % A) / vec) ^ (((r * W) >> 7) & (W / 16 - 1))));
      }
    for (int64_t k = 0; k < R * C; k++) CHECK(seen[k] == 1);
    free(seen);
    /* The IR form (used by lower_tile_ops) computes the same offsets, stages included. */
    IrExpr *shape[3] = {ir_i32(&c, 3), ir_i32(&c, R), ir_i32(&c, C)};
    IrBuffer *b = ir_buffer(&c, "tile", eb == 2 ? TS_DTYPE_FLOAT16 : TS_DTYPE_FLOAT32, IR_SCOPE_SHARED_DYN, 3, shape,
                            SRCLOC_NONE);
    IrVar *v[3] = {ir_var(&c, "s", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE),
                   ir_var(&c, "r", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE),
                   ir_var(&c, "c", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE)};
    IrExpr *idx[3] = {ir_varref(&c, v[0], SRCLOC_NONE), ir_varref(&c, v[1], SRCLOC_NONE), ir_varref(&c, v[2], SRCLOC_NONE)};
    IrExpr *e = layout_offset(&c, l, b, idx, 3);
    for (int64_t st = 0; st < 3; st++)
      for (int64_t r = 0; r < R; r += 3)
        for (int64_t col = 0; col < C; col += 5) {
          int64_t vals[3] = {st, r, col}, got = -1;
          CHECK(ir_eval_int(e, v, vals, 3, &got));
          CHECK(got == st * R * C + layout_offset_const(l, r, col));
        }
  }
  CHECK(layout_swizzled(&c, 12, 64, 2) == NULL); /* rows must come in groups of 8 */
  CHECK(layout_swizzled(&c, 64, 8, 2) == NULL);  /* 16-byte rows: no swizzle */
  ts_compiler_fini(&c);
}

/* The PTX of the GEMM example uses the tensor-core path of each target. */
static const char *gemm_ptx(TestCtx *t, ts_context *ctx, ts_program *p, const char *arch, const char *ta,
                            const char *K, ts_kernel **k) {
  ts_param ps[] = {{"M", "256"}, {"N", "192"}, {"K", K}, {"trans_A", ta}, {"num_stages", "4"}};
  ts_compile_options o = {.size = sizeof o, .arch = arch};
  ts_status s = ts_kernel_compile(p, "matmul", ps, 5, &o, k);
  if (s != TS_OK) fprintf(stderr, "  %s\n", ts_last_error(ctx));
  CHECK(s == TS_OK);
  return s == TS_OK ? ts_kernel_text(*k, TS_EMIT_PTX) : NULL;
}

/* T.rng_init's generators: Philox is our own code (rng.cuh); XORWOW and MRG32k3a are cuRAND's
 * (rng_curand.cuh over curand_kernel.h, whose libcu++ integer names must not clash with
 * common.cuh's): each builds to PTX with NVRTC, cuRAND's only when asked for. */
TEST(rng_generators_ptx) {
  static const char src[] =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "\n"
      "@tilelang.jit\n"
      "def k(generator):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((256,), \"uint32\"), B: T.Tensor((256,), \"float32\"),\n"
      "             C: T.Tensor((256,), \"float64\")):\n"
      "        with T.Kernel(2, threads=128) as bx:\n"
      "            i = bx * 128 + T.get_thread_binding()\n"
      "            T.rng_init(42, 0, i, generator=generator)\n"
      "            A[i] = T.rng_rand()\n"
      "            B[i] = T.rng_rand_float(dist=\"normal\")\n"
      "            C[i] = T.rng_rand_float(bit=64)\n"
      "    return main\n";
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "rng.py", src, &p) == TS_OK);
  static const char *const gens[] = {"'curandStatePhilox4_32_10_t'", "'curandStateXORWOW_t'", "'curandStateMRG32k3a_t'"};
  static const char *const draws[] = {"ts::rng_normal(&rng_state[0])", "ts::rng_curand_draw<1, 3>(&rng_state[0])",
                                      "ts::rng_curand_draw<2, 3>(&rng_state[0])"};
  for (int g = 0; g < 3; g++) {
    ts_param ps[] = {{"generator", gens[g]}};
    ts_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
    ts_kernel *k = NULL;
    ts_status s = ts_kernel_compile(p, "k", ps, 1, &o, &k);
    if (s != TS_OK) fprintf(stderr, "  %s\n", ts_last_error(ctx));
    CHECK(s == TS_OK);
    const char *cu = s == TS_OK ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
    const char *ptx = s == TS_OK ? ts_kernel_text(k, TS_EMIT_PTX) : NULL;
    CHECK(cu && strstr(cu, draws[g]) && (strstr(cu, "rng_curand.cuh") != NULL) == (g > 0));
    CHECK(ptx && strstr(ptx, ".entry") != NULL);
    ts_kernel_destroy(k);
  }
  ts_param bad[] = {{"generator", "'curandStateSobol32_t'"}};
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
  ts_kernel *k = NULL;
  CHECK(ts_kernel_compile(p, "k", bad, 1, &o, &k) != TS_OK && !k);
  CHECK(strstr(ts_last_error(ctx), "rng.py:11:13: error: T.rng_init: generator must be") != NULL);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

TEST(layout_gemm_ptx) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *p = NULL;
  if (ts_program_load_file(ctx, "examples/gemm.py", &p) != TS_OK) {
    fprintf(stderr, "  %s\n", ts_last_error(ctx));
    ts_context_destroy(ctx);
    CHECK(0);
    return;
  }
  ts_kernel *k = NULL;
  /* sm_90a, rows 16-byte aligned: warp-specialized, TMA loads on mbarriers, wgmma. */
  const char *ptx = gemm_ptx(t, ctx, p, "sm_90a", "False", "200", &k);
  if (ptx) {
    CHECK(strstr(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") != NULL);
    CHECK(strstr(ptx, "wgmma.wait_group.sync.aligned 1") != NULL); /* one group stays in flight */
    CHECK(strstr(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") != NULL);
    CHECK(strstr(ptx, "mbarrier.try_wait.parity") != NULL);
    CHECK(strstr(ptx, "mbarrier.arrive.expect_tx") != NULL);
    CHECK(strstr(ptx, "setmaxnreg.inc.sync.aligned.u32 240") != NULL);
    CHECK(strstr(ptx, "setmaxnreg.dec.sync.aligned.u32 40") != NULL);
    CHECK(strstr(ptx, "cp.async.cg.shared.global") == NULL);
    CHECK(strstr(ptx, "mma.sync") == NULL);
    CHECK(strstr(ptx, ".multicast::cluster") == NULL); /* multicast is opt-in */
  }
  ts_kernel_destroy(k);
  k = NULL;
  /* K = 100 halves: 200-byte rows of A, which TMA cannot address: cp.async + wgmma. */
  ptx = gemm_ptx(t, ctx, p, "sm_90a", "False", "100", &k);
  if (ptx) {
    CHECK(strstr(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") != NULL);
    CHECK(strstr(ptx, "cp.async.cg.shared.global") != NULL);
    CHECK(strstr(ptx, "cp.async.bulk.tensor") == NULL);
    /* B's rows past K = 100 are zero-filled by a cp.async with a source size of 0, no branch */
    const char *cu = ts_kernel_text(k, TS_EMIT_CUDA);
    CHECK(cu && strstr(cu, "ts::cp_async_zfill<16>(&B_shared[") != NULL);
  }
  ts_kernel_destroy(k);
  k = NULL;
  ptx = gemm_ptx(t, ctx, p, "sm_80", "True", "200", &k);
  if (ptx) {
    CHECK(strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") != NULL);
    CHECK(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") != NULL);
    CHECK(strstr(ptx, "cp.async") != NULL);
    CHECK(strstr(ptx, "wgmma") == NULL);
  }
  ts_kernel_destroy(k);
  k = NULL;
  /* pass_configs tl.enable_tma_multicast: 2-block clusters along M share the B tile; each
   * block multicasts half of its boxes, consumers release stages on both blocks' barriers,
   * cluster barriers after the barrier init and before exit. */
  ts_program *pm = NULL;
  static const char *const MC =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(out_idx=[-1], pass_configs={\"tl.enable_tma_multicast\": True})\n"
      "def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=4, threads=128, trans_A=False,\n"
      "           dtype=\"float16\"):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):\n"
      "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):\n"
      "            A_s = T.alloc_shared((block_M, block_K), dtype)\n"
      "            B_s = T.alloc_shared((block_K, block_N), dtype)\n"
      "            C_l = T.alloc_fragment((block_M, block_N), \"float32\")\n"
      "            T.clear(C_l)\n"
      "            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):\n"
      "                T.copy(A[by * block_M, k * block_K], A_s)\n"
      "                T.copy(B[k * block_K, bx * block_N], B_s)\n"
      "                T.gemm(A_s, B_s, C_l)\n"
      "            T.copy(C_l, C[by * block_M, bx * block_N])\n"
      "    return main\n";
  REQUIRE(ts_program_load_source(ctx, "mc.py", MC, &pm) == TS_OK);
  ptx = gemm_ptx(t, ctx, pm, "sm_90a", "False", "200", &k);
  if (ptx) {
    CHECK(strstr(ptx, ".multicast::cluster") != NULL);
    CHECK(strstr(ptx, "mapa.shared::cluster.u32") != NULL);
    CHECK(strstr(ptx, "mbarrier.arrive.shared::cluster.b64") != NULL);
    CHECK(strstr(ptx, "barrier.cluster.wait.acquire") != NULL);
    CHECK(strstr(ptx, ".reqnctapercluster 2, 1, 1") != NULL);
    const char *cu = ts_kernel_text(k, TS_EMIT_CUDA);
    CHECK(cu && strstr(cu, "__cluster_dims__(2, 1, 1)") != NULL);
    CHECK(cu && strstr(cu, "ts::mbar_init(&pipe_bar[bi + 5], 8)") != NULL); /* 4 consumer warps x 2 blocks; 4 stages + 1 (spec_deepen) */
  }
  ts_kernel_destroy(k);
  k = NULL;
  /* 4 stages of 128x256x64 leave no room for the whole 128x256 epilogue tile: the store
   * goes through a ring of 2 column atoms [128 x 64], one TMA store per atom, and an atom's
   * slot is reused once the store two atoms back has read it.  A ring epilogue overlaps the
   * next tile's K loop by default. */
  {
    ts_param ps[] = {{"M", "256"}, {"N", "512"}, {"K", "256"}, {"block_N", "256"}, {"num_stages", "4"},
                     {"threads", "256"}};
    ts_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
    ts_status st = ts_kernel_compile(p, "matmul", ps, 6, &o, &k);
    if (st != TS_OK) fprintf(stderr, "  %s\n", ts_last_error(ctx));
    CHECK(st == TS_OK);
    const char *cu = st == TS_OK ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
    int stores = 0;
    for (const char *q = cu; q && (q = strstr(q, "ts::tma_store_2d(")); q++) stores++;
    /* the overlapped epilogue: the previous tile's atoms in K steps 0..3 of the next tile
     * (from the packed fp16 copy of the accumulators), the last tile's after the tile loop */
    CHECK(stores == 8);
    CHECK(cu && strstr(cu, "ts::tma_store_wait_read<1>()") != NULL);
    CHECK(cu && strstr(cu, "&C_epi[8192], bx_p * 256 + 192") != NULL); /* atom 3 from slot 1 */
    CHECK(cu && strstr(cu, "&C_epi[8192], bx_l * 256 + 192") != NULL);
    CHECK(cu && strstr(cu, "if (tile_iter_1 > 0 && k_1 == 3)") != NULL);
    CHECK(cu && strstr(cu, "ts::copy_vec<2>(&C_local_pack[") != NULL); /* the packing */
    CHECK(cu && strstr(cu, "sk_") == NULL); /* stream-K is opt-in */
    const char *px = st == TS_OK ? ts_kernel_text(k, TS_EMIT_PTX) : NULL;
    CHECK(px && strstr(px, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") != NULL);
  }
  ts_kernel_destroy(k);
  k = NULL;
  ts_program_destroy(pm);
  pm = NULL;
  /* pass_configs tl.enable_stream_k: the tile-by-tile loop plus the stream-K segments, whose
   * partials (128 x 256 fp32 over 256 consumer threads) the finisher adds before its epilogue;
   * the grid asks for more blocks than any GPU holds (the runtime keeps the resident ones). */
  {
    char *sk = malloc(strlen(MC) + 16);
    const char *at = strstr(MC, "tl.enable_tma_multicast");
    REQUIRE(sk && at);
    snprintf(sk, strlen(MC) + 16, "%.*stl.enable_stream_k%s", (int)(at - MC), MC, at + strlen("tl.enable_tma_multicast"));
    REQUIRE(ts_program_load_source(ctx, "sk.py", sk, &pm) == TS_OK);
    free(sk);
    ts_param ps[] = {{"M", "256"}, {"N", "512"}, {"K", "256"}, {"block_N", "256"}, {"threads", "256"}};
    ts_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
    ts_status st = ts_kernel_compile(pm, "matmul", ps, 5, &o, &k);
    if (st != TS_OK) fprintf(stderr, "  %s\n", ts_last_error(ctx));
    CHECK(st == TS_OK);
    const char *cu = st == TS_OK ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
    int stores = 0;
    for (const char *q = cu; q && (q = strstr(q, "ts::tma_store_2d(")); q++) stores++;
    CHECK(stores == 8); /* the tile-by-tile epilogue and the finisher's */
    CHECK(cu && strstr(cu, "ts::sk_store_partial<128, 256>(&C_l[0], ts::block_idx_x(), (int)threadIdx.x)") != NULL);
    CHECK(cu && strstr(cu, "ts::sk_fixup<128, 256>(&C_l[0], ts::block_idx_x(), ts::grid_dim_x(), sk_iters") != NULL);
    CHECK(cu && strstr(cu, "const int sk_dp = ts::sk_dp_tiles(4, ts::grid_dim_x());") != NULL);
    CHECK(cu && strstr(cu, "ts::mbar_arrive_cluster") == NULL); /* no cluster with stream-K */
    const char *px = st == TS_OK ? ts_kernel_text(k, TS_EMIT_PTX) : NULL;
    CHECK(px && strstr(px, "ld.acquire.gpu.global.u32") != NULL);
  }
  ts_kernel_destroy(k);
  ts_program_destroy(pm);
  k = NULL;
  pm = NULL;
  /* pass_configs tl.disable_epilogue_overlap: every tile stores its own ring of atoms right
   * after its K loop, from the accumulators themselves */
  {
    const char *key = "tl.disable_epilogue_overlap";
    char *src = malloc(strlen(MC) + strlen(key) + 1);
    const char *at = strstr(MC, "tl.enable_tma_multicast");
    REQUIRE(src && at);
    sprintf(src, "%.*s%s%s", (int)(at - MC), MC, key, at + strlen("tl.enable_tma_multicast"));
    REQUIRE(ts_program_load_source(ctx, "noov.py", src, &pm) == TS_OK);
    free(src);
    ts_param ps[] = {{"M", "256"}, {"N", "512"}, {"K", "256"}, {"block_N", "256"}, {"threads", "256"}};
    ts_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
    ts_status st = ts_kernel_compile(pm, "matmul", ps, 5, &o, &k);
    if (st != TS_OK) fprintf(stderr, "  %s\n", ts_last_error(ctx));
    CHECK(st == TS_OK);
    const char *cu = st == TS_OK ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
    int stores = 0;
    for (const char *q = cu; q && (q = strstr(q, "ts::tma_store_2d(")); q++) stores++;
    CHECK(stores == 4);
    CHECK(cu && strstr(cu, "&C_epi[8192], bx_t_1 * 256 + 192") != NULL);
    CHECK(cu && strstr(cu, "_pack") == NULL);
  }
  ts_kernel_destroy(k);
  ts_program_destroy(pm);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* The other tensor-core types and A in registers: the PTX uses the right instruction on
 * each path, and unsupported combinations are diagnosed at the T.gemm line. */
static const char *dt_ptx(TestCtx *t, ts_context *ctx, ts_program *p, const char *arch, const char *in, const char *acc,
                          const char *tb, ts_kernel **k) {
  /* fp32 tiles of 128x128x64 in 3 stages need 192 KB of shared memory, more than sm_80 has */
  ts_param ps[] = {{"M", "256"},          {"N", "256"},        {"K", "256"},
                   {"in_dtype", in},      {"accum_dtype", acc}, {"trans_B", tb},
                   {"block_K", strcmp(in, "float32") ? "64" : "32"}};
  ts_compile_options o = {.size = sizeof o, .arch = arch};
  ts_status s = ts_kernel_compile(p, "matmul", ps, 7, &o, k);
  if (s != TS_OK) fprintf(stderr, "  %s %s %s: %s\n", arch, in, acc, ts_last_error(ctx));
  CHECK(s == TS_OK);
  return s == TS_OK ? ts_kernel_text(*k, TS_EMIT_PTX) : NULL;
}

/* spec_deepen: a warp-specialized GEMM (one block an SM) gets the shared memory left beside
 * its epilogue as extra stages, up to max(num_stages + 1, 4), since its consumers release a
 * stage one wgmma late; ts.disable_extra_stages keeps num_stages; a pipeline that fills shared
 * memory already (4 stages of 128x256x64 beside a ring epilogue) keeps its count. */
static int ws_stage_count(TestCtx *t, ts_context *ctx, const char *configs, const char *stages, const char *bn) {
  char src[1024];
  snprintf(src, sizeof src,
           "import tilelang\n"
           "import tilelang.language as T\n"
           "@tilelang.jit(out_idx=[-1], pass_configs={%s})\n"
           "def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=2, threads=256):\n"
           "    @T.prim_func\n"
           "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float16\")):\n"
           "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):\n"
           "            A_s = T.alloc_shared((block_M, block_K), \"float16\")\n"
           "            B_s = T.alloc_shared((block_K, block_N), \"float16\")\n"
           "            C_l = T.alloc_fragment((block_M, block_N), \"float32\")\n"
           "            T.clear(C_l)\n"
           "            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):\n"
           "                T.copy(A[by * block_M, k * block_K], A_s)\n"
           "                T.copy(B[k * block_K, bx * block_N], B_s)\n"
           "                T.gemm(A_s, B_s, C_l)\n"
           "            T.copy(C_l, C[by * block_M, bx * block_N])\n"
           "    return main\n",
           configs);
  ts_program *p = NULL;
  ts_kernel *k = NULL;
  int n = -1;
  CHECK(ts_program_load_source(ctx, "stages.py", src, &p) == TS_OK);
  ts_param ps[] = {{"M", "512"}, {"N", "512"}, {"K", "1024"}, {"num_stages", stages}, {"block_N", bn}};
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
  if (p && ts_kernel_compile(p, "matmul", ps, 5, &o, &k) == TS_OK) {
    const char *cu = ts_kernel_text(k, TS_EMIT_CUDA), *at = cu ? strstr(cu, "for (int bi = 0; bi < ") : NULL;
    if (at) n = atoi(at + strlen("for (int bi = 0; bi < "));
  } else if (p) {
    fprintf(stderr, "  %s\n", ts_last_error(ctx));
  }
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  return n;
}

TEST(layout_gemm_extra_stages) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  CHECK(ws_stage_count(t, ctx, "", "2", "128") == 4);
  CHECK(ws_stage_count(t, ctx, "", "4", "128") == 5);
  CHECK(ws_stage_count(t, ctx, "\"ts.disable_extra_stages\": True", "2", "128") == 2);
  CHECK(ws_stage_count(t, ctx, "", "4", "256") == 4); /* 4 x 48 KB beside a ring of 2 x 16 KB */
  ts_context_destroy(ctx);
}

/* The CUDA of kernel factory `kern` in SRC compiled for sm_90a (cu NULL, the error printed,
 * when it does not compile); sm_cuda_free releases it. */
typedef struct SmCuda { ts_context *ctx; ts_program *p; ts_kernel *k; const char *cu; } SmCuda;
static SmCuda arch_cuda(const char *file, const char *src, const char *arch) {
  SmCuda r = {0};
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  ts_compile_options o = {.size = sizeof o, .arch = arch};
  if (ts_context_create(&co, &r.ctx) != TS_OK || ts_program_load_source(r.ctx, file, src, &r.p) != TS_OK ||
      ts_kernel_compile(r.p, "kern", NULL, 0, &o, &r.k) != TS_OK) {
    fprintf(stderr, "  %s\n", r.ctx ? ts_last_error(r.ctx) : "no context");
    return r;
  }
  r.cu = ts_kernel_text(r.k, TS_EMIT_CUDA);
  return r;
}
static SmCuda sm90a_cuda(const char *file, const char *src) { return arch_cuda(file, src, "sm_90a"); }
static void sm_cuda_free(SmCuda *r) {
  ts_kernel_destroy(r->k);
  ts_program_destroy(r->p);
  ts_context_destroy(r->ctx);
}

/* inject_pipeline: a body with more than a lone T.gemm refills its stage after a barrier at the
 * end of the iteration, S stages ahead, and its leading register fills (a fragment copied from
 * a tensor the kernel never writes, T.clear) run before the wait. */
TEST(layout_pipeline_refill_and_early_fills) {
  static const char *const SRC =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(pass_configs={\"tl.disable_warp_specialized\": True})\n"
      "def kern(N=256):\n"
      "    @T.prim_func\n"
      "    def main(Q: T.Tensor((64, 64), \"float16\"), K: T.Tensor((N, 64), \"float16\"), M: T.Tensor((N,), \"float32\"),\n"
      "             O: T.Tensor((64, 64), \"float32\")):\n"
      "        with T.Kernel(1, threads=128) as bx:\n"
      "            Q_s = T.alloc_shared((64, 64), \"float16\")\n"
      "            K_s = T.alloc_shared((64, 64), \"float16\")\n"
      "            m = T.alloc_fragment((64,), \"float32\")\n"
      "            s = T.alloc_fragment((64, 64), \"float32\")\n"
      "            acc = T.alloc_fragment((64, 64), \"float32\")\n"
      "            T.copy(Q, Q_s)\n"
      "            T.clear(acc)\n"
      "            for k in T.Pipelined(N // 64, num_stages=2):\n"
      "                T.copy(K[k * 64, 0], K_s)\n"
      "                T.copy(M[k * 64], m)\n"
      "                T.clear(s)\n"
      "                T.gemm(Q_s, K_s, s, transpose_B=True)\n"
      "                for i, j in T.Parallel(64, 64):\n"
      "                    acc[i, j] += s[i, j] * m[j]\n"
      "            T.copy(acc, O)\n"
      "    return main\n";
  SmCuda sc = sm90a_cuda("pipe.py", SRC);
  const char *cu = sc.cu;
  CHECK(cu != NULL);
  const char *loop = cu ? strstr(cu, "for (int k = 0; k < 4; ++k) {") : NULL;
  CHECK(loop != NULL);
  if (loop) {
    const char *mask = strstr(loop, "&M[k * 64"), *wait = strstr(loop, "ts::cp_async_wait<1>();");
    const char *gemm = strstr(loop, "ts::gemm_ss_wgmma"), *refill = gemm ? strstr(gemm, "__syncthreads();") : NULL;
    CHECK(mask && wait && mask < wait); /* the mask's loads are in flight during the wait */
    CHECK(refill && strstr(refill, "if (k + 2 < 4) {") != NULL); /* 2 stages ahead, after a barrier */
  }
  CHECK(cu && strstr(cu, "for (int stage = 0; stage < 2; ++stage) {") != NULL); /* both stages in the prologue */
  sm_cuda_free(&sc);
}

/* inject_pipeline: tiles used at different GEMMs (K by QKᵀ, V by PV) get a cp.async group
 * each: the loop waits for K alone before QKᵀ and for V before PV, and refills K right after
 * QKᵀ (S groups of 2 per stage: wait_group 3 means "landed"). */
TEST(layout_pipeline_tile_groups) {
  static const char *const SRC =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(pass_configs={\"tl.disable_warp_specialized\": True})\n"
      "def kern(N=512):\n"
      "    @T.prim_func\n"
      "    def main(Q: T.Tensor((64, 64), \"float16\"), K: T.Tensor((N, 64), \"float16\"), V: T.Tensor((N, 64), \"float16\"),\n"
      "             O: T.Tensor((64, 64), \"float32\")):\n"
      "        with T.Kernel(1, threads=128) as bx:\n"
      "            Q_s = T.alloc_shared((64, 64), \"float16\")\n"
      "            K_s = T.alloc_shared((64, 64), \"float16\")\n"
      "            V_s = T.alloc_shared((64, 64), \"float16\")\n"
      "            s = T.alloc_fragment((64, 64), \"float32\")\n"
      "            p = T.alloc_fragment((64, 64), \"float16\")\n"
      "            acc = T.alloc_fragment((64, 64), \"float32\")\n"
      "            T.copy(Q, Q_s)\n"
      "            T.clear(acc)\n"
      "            for k in T.Pipelined(N // 64, num_stages=2):\n"
      "                T.copy(K[k * 64, 0], K_s)\n"
      "                T.copy(V[k * 64, 0], V_s)\n"
      "                T.clear(s)\n"
      "                T.gemm(Q_s, K_s, s, transpose_B=True)\n"
      "                for i, j in T.Parallel(64, 64):\n"
      "                    s[i, j] = T.exp2(s[i, j])\n"
      "                T.copy(s, p)\n"
      "                T.gemm(p, V_s, acc)\n"
      "            T.copy(acc, O)\n"
      "    return main\n";
  SmCuda sc = sm90a_cuda("groups.py", SRC);
  const char *cu = sc.cu;
  CHECK(cu != NULL);
  const char *loop = cu ? strstr(cu, "for (int k = 0; k < 8; ++k) {") : NULL;
  CHECK(loop != NULL);
  if (loop) {
    const char *w1 = strstr(loop, "ts::cp_async_wait<3>();"), *qk = strstr(loop, "ts::gemm_ss_wgmma");
    const char *krefill = qk ? strstr(qk, "&K_s[(k + 2) % 2") : NULL, *w2 = qk ? strstr(qk, "ts::cp_async_wait<3>();") : NULL;
    const char *pv = strstr(loop, "ts::gemm_rs_wgmma"), *vrefill = pv ? strstr(pv, "&V_s[(k + 2) % 2") : NULL;
    CHECK(w1 && qk && w1 < qk);                    /* K waited for before QKᵀ */
    CHECK(krefill && pv && krefill < pv);          /* K refilled between the GEMMs */
    CHECK(w2 && pv && w2 < pv && krefill < w2);    /* V waited for before PV */
    CHECK(vrefill != NULL);                        /* V refilled after PV */
    CHECK(!strstr(loop, "&V_s[(k + 2) % 2") || strstr(loop, "&V_s[(k + 2) % 2") > pv);
  }
  /* the prologue commits K and V of each stage as groups of their own */
  const char *pro = cu ? strstr(cu, "for (int stage = 0; stage < 2; ++stage) {") : NULL;
  CHECK(pro && loop && strstr(pro, "ts::cp_async_commit();") < strstr(pro, "&V[") && strstr(pro, "&V[") < loop);
  sm_cuda_free(&sc);
}

/* A pipelined copy of one 4-byte element per thread (an lse row of 32 floats) is a 4-byte
 * cp.async, not a synchronous load that stalls its warp at the refill. */
TEST(layout_pipeline_scalar_cp_async) {
  static const char *const SRC =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit(pass_configs={\"tl.disable_warp_specialized\": True})\n"
      "def kern(N=256):\n"
      "    @T.prim_func\n"
      "    def main(L: T.Tensor((N,), \"float32\"), O: T.Tensor((32,), \"float32\")):\n"
      "        with T.Kernel(1, threads=128) as bx:\n"
      "            l_s = T.alloc_shared((32,), \"float32\")\n"
      "            acc = T.alloc_fragment((32,), \"float32\")\n"
      "            T.clear(acc)\n"
      "            for k in T.Pipelined(N // 32, num_stages=2):\n"
      "                T.copy(L[k * 32], l_s)\n"
      "                for i in T.Parallel(32):\n"
      "                    acc[i] += l_s[i]\n"
      "            T.copy(acc, O)\n"
      "    return main\n";
  SmCuda sc = sm90a_cuda("scalar.py", SRC);
  const char *cu = sc.cu;
  CHECK(cu != NULL);
  const char *loop = cu ? strstr(cu, "for (int k = 0; k < 8; ++k) {") : NULL;
  CHECK(loop && strstr(loop, "ts::cp_async<4>(&l_s[(k + 2) % 2 * 32") != NULL);
  CHECK(loop && !strstr(loop, "] = L["));
  sm_cuda_free(&sc);
}

/* The copies into shared memory that open a kernel (layernorm's row, gamma, beta) are issued
 * as cp.async together and waited for once, before the first read; a later copy into a tile
 * that was already read stays synchronous. */
TEST(layout_async_prologue_copies) {
  static const char *const SRC =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def kern(D=2048):\n"
      "    @T.prim_func\n"
      "    def main(X: T.Tensor((D,), \"float16\"), G: T.Tensor((D,), \"float16\"), Y: T.Tensor((D,), \"float16\")):\n"
      "        with T.Kernel(1, threads=128) as bx:\n"
      "            x_s = T.alloc_shared((D,), \"float16\")\n"
      "            g_s = T.alloc_shared((D,), \"float16\")\n"
      "            acc = T.alloc_fragment((D,), \"float32\")\n"
      "            T.clear(acc)\n"
      "            T.copy(X, x_s)\n"
      "            T.copy(G, g_s)\n"
      "            for i in T.Parallel(D):\n"
      "                acc[i] = x_s[i] * g_s[i]\n"
      "            T.copy(Y, x_s)\n"
      "            for i in T.Parallel(D):\n"
      "                acc[i] += x_s[i]\n"
      "            T.copy(acc, Y)\n"
      "    return main\n";
  SmCuda sc = sm90a_cuda("prologue.py", SRC);
  const char *cu = sc.cu;
  CHECK(cu != NULL);
  const char *x = cu ? strstr(cu, "ts::cp_async<16>(&x_s[") : NULL, *g = cu ? strstr(cu, "ts::cp_async<16>(&g_s[") : NULL;
  const char *wait = cu ? strstr(cu, "ts::cp_async_wait<0>();") : NULL, *use = cu ? strstr(cu, "g_s[") : NULL;
  CHECK(x && g && wait && x < g && g < wait);         /* both in flight, one wait */
  CHECK(wait && strstr(wait, "__syncthreads();") != NULL);
  CHECK(use && g && use == g + strlen("ts::cp_async<16>(&")); /* nothing reads g_s before it */
  CHECK(cu && strstr(cu, "ts::copy_vec<8>(&x_s[") != NULL); /* the refill of the read tile: synchronous */
  sm_cuda_free(&sc);
}

/* widen_consumers: a 128 x 256 fp32 accumulator on 128 threads (256 registers a thread) runs
 * on two consumer warpgroups (384 threads with the producer); not when the kernel names a
 * thread or syncs a named barrier over a count, nor under ts.keep_threads (256: one consumer
 * warpgroup and the producer). */
TEST(layout_widen_consumers) {
  static const char *const SRC =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit%s\n"
      "def kern(named=%s):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((1024, 1024), \"float16\"), B: T.Tensor((1024, 1024), \"float16\"), C: T.Tensor((1024, 1024), \"float16\")):\n"
      "        with T.Kernel(4, 8, threads=128) as (bx, by):\n"
      "            a = T.alloc_shared((128, 64), \"float16\")\n"
      "            b = T.alloc_shared((64, 256), \"float16\")\n"
      "            acc = T.alloc_fragment((128, 256), \"float32\")\n"
      "            T.clear(acc)\n"
      "            if named == 1:\n"
      "                tx = T.get_thread_binding()\n"
      "                C[by * 128, bx * 256 + tx] = T.float16(0)\n"
      "            if named == 2:\n"
      "                T.sync_threads(1, 128)\n"
      "            for k in T.Pipelined(16, num_stages=2):\n"
      "                T.copy(A[by * 128, k * 64], a)\n"
      "                T.copy(B[k * 64, bx * 256], b)\n"
      "                T.gemm(a, b, acc)\n"
      "            T.copy(acc, C[by * 128, bx * 256])\n"
      "    return main\n";
  char plain[2048], named[2048], synced[2048], keep[2048];
  snprintf(plain, sizeof plain, SRC, "", "0");
  snprintf(named, sizeof named, SRC, "", "1");
  snprintf(synced, sizeof synced, SRC, "", "2");
  snprintf(keep, sizeof keep, SRC, "(pass_configs={\"ts.keep_threads\": True})", "0");
  const char *const srcs[4] = {plain, named, synced, keep};
  for (int i = 0; i < 4; i++) {
    const char *want = i ? "__launch_bounds__(256, 1)" : "__launch_bounds__(384, 1)";
    SmCuda r = sm90a_cuda("widen.py", srcs[i]);
    CHECK(r.cu && strstr(r.cu, want));
    sm_cuda_free(&r);
  }
}

/* A tile T.atomic_add from shared memory onto a global tensor adds vectors: float4 on sm_90
 * (float atomics on sm_80 stay scalar), half2 from sm_80. */
TEST(layout_atomic_add_from_shared_vectors) {
  static const char *const SRC =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "@tilelang.jit\n"
      "def kern(dtype=\"%s\"):\n"
      "    @T.prim_func\n"
      "    def main(X: T.Tensor((256, 64), dtype), Y: T.Tensor((256, 64), dtype)):\n"
      "        with T.Kernel(4, threads=128) as bx:\n"
      "            s = T.alloc_shared((64, 64), dtype)\n"
      "            T.copy(X[bx * 64, 0], s)\n"
      "            T.atomic_add(Y[bx * 64 : (bx + 1) * 64, :], s)\n"
      "    return main\n";
  char f32[1024], f16[1024];
  snprintf(f32, sizeof f32, SRC, "float32");
  snprintf(f16, sizeof f16, SRC, "float16");
  SmCuda a = arch_cuda("atomic.py", f32, "sm_90a");
  CHECK(a.cu && strstr(a.cu, "ts::atomic_add_x<4>(&Y[") && !strstr(a.cu, "atomicAdd("));
  sm_cuda_free(&a);
  SmCuda b = arch_cuda("atomic.py", f32, "sm_80");
  CHECK(b.cu && !strstr(b.cu, "atomic_add_x") && strstr(b.cu, "atomicAdd(&Y["));
  sm_cuda_free(&b);
  SmCuda h = arch_cuda("atomic.py", f16, "sm_80");
  CHECK(h.cu && strstr(h.cu, "ts::atomic_add_x<2>(&Y["));
  sm_cuda_free(&h);
}

TEST(layout_gemm_dtypes_ptx) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *p = NULL;
  REQUIRE(ts_program_load_file(ctx, "examples/gemm_dtypes.py", &p) == TS_OK);
  static const struct { const char *arch, *in, *acc, *tb, *want; } cases[] = {
      {"sm_90a", "float16", "float16", "False", "wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16"},
      {"sm_90a", "float32", "float32", "True", "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"},
      {"sm_90a", "int8", "int32", "True", "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"},
      {"sm_90a", "float8_e4m3", "float32", "True", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
      {"sm_90a", "float8_e5m2", "float16", "True", "wgmma.mma_async.sync.aligned.m64n128k32.f16.e5m2.e5m2"},
      {"sm_80", "float16", "float16", "True", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"},
      {"sm_80", "float32", "float32", "True", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"},
      /* MN-major tf32: wgmma cannot read it, mma.sync with per-thread fragment loads can */
      {"sm_90a", "float32", "float32", "False", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"},
      {"sm_80", "int8", "int32", "True", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"},
      {"sm_90", "float8_e4m3", "float32", "True", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"},
  };
  for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    ts_kernel *k = NULL;
    const char *ptx = dt_ptx(t, ctx, p, cases[i].arch, cases[i].in, cases[i].acc, cases[i].tb, &k);
    if (ptx && !strstr(ptx, cases[i].want)) fprintf(stderr, "  missing %s\n", cases[i].want);
    CHECK(ptx && strstr(ptx, cases[i].want) != NULL);
    if (ptx && cases[i].want[0] == 'w') CHECK(strstr(ptx, "mma.sync") == NULL);
    ts_kernel_destroy(k);
  }
  /* No tensor-core instruction: MN-major int8, fp8 on sm_80, bf16 -> fp16 are computed with FMA
   * (front/gemm_fma.c; tests/codegen/gemm_fma.py checks the results), never miscompiled. */
  static const struct { const char *arch, *in, *acc, *tb; } fma[] = {
      {"sm_90a", "int8", "int32", "False"},
      {"sm_80", "float8_e4m3", "float32", "True"},
      {"sm_90a", "bfloat16", "float16", "False"},
  };
  for (int i = 0; i < (int)(sizeof fma / sizeof fma[0]); i++) {
    ts_kernel *k = NULL;
    const char *ptx = dt_ptx(t, ctx, p, fma[i].arch, fma[i].in, fma[i].acc, fma[i].tb, &k);
    CHECK(ptx && !strstr(ptx, "mma.sync") && !strstr(ptx, "wgmma"));
    ts_kernel_destroy(k);
  }
  ts_program_destroy(p);
  /* A in registers: wgmma RS on sm_90a, mma.sync from registers on sm_80. */
  REQUIRE(ts_program_load_file(ctx, "examples/gemm_rs.py", &p) == TS_OK);
  ts_param rs[] = {{"M", "256"}, {"N", "128"}, {"D", "64"}};
  static const char *const arches[] = {"sm_90a", "sm_80"};
  for (int a = 0; a < 2; a++) {
    ts_compile_options o = {.size = sizeof o, .arch = arches[a]};
    ts_kernel *k = NULL;
    CHECK(ts_kernel_compile(p, "chain", rs, 3, &o, &k) == TS_OK);
    const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
    const char *ptx = k ? ts_kernel_text(k, TS_EMIT_PTX) : NULL;
    CHECK(cu && strstr(cu, a ? "ts::gemm_rs_mma<" : "ts::gemm_rs_wgmma<") != NULL);
    /* RS: the A operand is a register list, not a descriptor */
    if (a == 0) CHECK(ptx && strstr(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") != NULL);
    if (a == 1) CHECK(ptx && strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") != NULL);
    ts_kernel_destroy(k);
  }
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* tilelang.layout helpers: the swizzle each kind pins, and the tiles it cannot take. */
TEST(layout_pinned_kinds) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  const char *why;
  static const struct { LayoutKind kind; int64_t rows, cols; int eb, want; } ok[] = {
      {LAYOUT_AUTO, 128, 64, 2, 128}, {LAYOUT_AUTO, 64, 32, 2, 64},    {LAYOUT_AUTO, 12, 64, 2, 0},
      {LAYOUT_FULL, 64, 64, 2, 128},  {LAYOUT_HALF, 64, 64, 2, 64},    {LAYOUT_QUARTER, 64, 64, 2, 32},
      {LAYOUT_QUARTER, 8, 16, 2, 32}, {LAYOUT_LINEAR, 64, 64, 2, 0},   {LAYOUT_HALF, 32, 16, 4, 64},
  };
  for (int i = 0; i < (int)(sizeof ok / sizeof ok[0]); i++) {
    Layout *l = layout_pinned(&c, ok[i].kind, ok[i].rows, ok[i].cols, ok[i].eb, SRCLOC_NONE, &why);
    REQUIRE(l != NULL);
    CHECK(l->swizzle == ok[i].want && l->pinned && l->rows == ok[i].rows && l->cols == ok[i].cols);
    /* every pinned layout is a bijection of the tile */
    char *seen = calloc((size_t)(ok[i].rows * ok[i].cols), 1);
    for (int64_t r = 0; r < ok[i].rows; r++)
      for (int64_t col = 0; col < ok[i].cols; col++) seen[layout_offset_const(l, r, col)]++;
    for (int64_t k = 0; k < ok[i].rows * ok[i].cols; k++) CHECK(seen[k] == 1);
    free(seen);
  }
  CHECK(layout_pinned(&c, LAYOUT_FULL, 64, 48, 2, SRCLOC_NONE, &why) == NULL); /* 96-byte rows */
  CHECK(why && strstr(why, "rows of 96 bytes are not a multiple of the 128-byte swizzle"));
  CHECK(layout_pinned(&c, LAYOUT_QUARTER, 12, 64, 2, SRCLOC_NONE, &why) == NULL);
  CHECK(why && strstr(why, "12 rows"));
  CHECK(layout_pinned(&c, LAYOUT_HALF, 64, 64, 8, SRCLOC_NONE, &why) == NULL);
  ts_compiler_fini(&c);
}

/* Compiles `src` (a kernel named `fn` with M, N, K parameters at 256 plus `extra`) and
 * returns the error text, or NULL when it compiled; *k gets the kernel. */
static const char *compile_src(ts_context *ctx, const char *src, const char *arch, const ts_param *extra, int nextra,
                               ts_kernel **k) {
  ts_program *p = NULL;
  *k = NULL;
  if (ts_program_load_source(ctx, "kern.py", src, &p) != TS_OK) return ts_last_error(ctx);
  ts_param ps[8] = {{"M", "256"}, {"N", "256"}, {"K", "256"}};
  for (int i = 0; i < nextra && i < 5; i++) ps[3 + i] = extra[i];
  ts_compile_options o = {.size = sizeof o, .arch = arch};
  ts_status s = ts_kernel_compile(p, "matmul", ps, 3 + nextra, &o, k);
  ts_program_destroy(p);
  return s == TS_OK ? NULL : ts_last_error(ctx);
}

/* T.wgmma_gemm + T.wait_wgmma and pinned layouts (examples/gemm_wgmma.py): the issue and
 * the waits reach the PTX, the pinned swizzle reaches the GEMM template and the TMA boxes,
 * a linear layout falls back to mma.sync for T.gemm. */
TEST(layout_wgmma_async_and_pinned) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_program *p = NULL;
  REQUIRE(ts_program_load_file(ctx, "examples/gemm_wgmma.py", &p) == TS_OK);
  static const struct { const char *sw, *async_, *arch, *want_cu, *want_ptx; } cases[] = {
      {"64", "True", "sm_90a", "ts::gemm_ss_wgmma_issue<128, 128, 64, 1, 1, false, false, 64, 64, false, half>",
       "wgmma.wait_group.sync.aligned 0"},
      {"32", "True", "sm_90a", "ts::gemm_wgmma_wait<128, 0>", "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"},
      {"-1", "True", "sm_90a", "false, false, 128, 128, false, half>", "wgmma.commit_group.sync.aligned"},
      {"32", "False", "sm_90a", "ts::tma_load_2d", "cp.async.bulk.tensor.2d"}, /* TMA boxes of the 32-byte atoms */
      {"0", "False", "sm_90a", "ts::gemm_ss_mma<128, 128, 64, 2, 2, false, false, 0, 0, false, half>",
       "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"},
      {"64", "False", "sm_80", "ts::gemm_ss_mma<128, 128, 64, 2, 2, false, false, 64, 64, false, half>",
       "ldmatrix.sync.aligned.m8n8.x4"},
  };
  for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    ts_param ps[] = {{"M", "256"}, {"N", "256"}, {"K", "256"}, {"swizzle", cases[i].sw}, {"async_wgmma", cases[i].async_}};
    ts_compile_options o = {.size = sizeof o, .arch = cases[i].arch};
    ts_kernel *k = NULL;
    ts_status s = ts_kernel_compile(p, "matmul", ps, 5, &o, &k);
    if (s != TS_OK) fprintf(stderr, "  case %d: %s\n", i, ts_last_error(ctx));
    CHECK(s == TS_OK);
    const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL, *ptx = k ? ts_kernel_text(k, TS_EMIT_PTX) : NULL;
    if (cu && !strstr(cu, cases[i].want_cu)) fprintf(stderr, "  case %d: missing %s\n", i, cases[i].want_cu);
    CHECK(cu && strstr(cu, cases[i].want_cu));
    CHECK(ptx && strstr(ptx, cases[i].want_ptx));
    if (i == 3) CHECK(cu && strstr(cu, "ts::tma_load_2d(B_tma1, &B_shared[stage * 8192 + 7168]") != NULL); /* 8th atom */
    ts_kernel_destroy(k);
  }
  /* The TMA maps follow the pinned 32-byte swizzle: boxes of 16 halves. */
  {
    ts_param ps[] = {{"M", "256"}, {"N", "256"}, {"K", "256"}, {"swizzle", "32"}, {"async_wgmma", "False"}};
    ts_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
    ts_kernel *k = NULL;
    CHECK(ts_kernel_compile(p, "matmul", ps, 5, &o, &k) == TS_OK);
    const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
    /* 4 boxes of 16 columns (2048 halves each) for the 128x64 A tile */
    CHECK(cu && strstr(cu, "&A_shared[stage * 8192 + 6144], &pipe_bar[stage], k * 64 + 48,") != NULL);
    ts_kernel_destroy(k);
  }
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* Illegal uses are diagnosed at the user's line. */
TEST(layout_wgmma_and_annotate_diagnostics) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  static const char *const HEAD =
      "import tilelang\n"
      "import tilelang.language as T\n"
      "from tilelang.layout import make_swizzled_layout, make_full_bank_swizzled_layout, make_linear_layout\n"
      "@tilelang.jit(out_idx=[-1])\n"
      "def matmul(M, N, K, threads=128, bk=64):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float32\")):\n"
      "        with T.Kernel(2, 2, threads=threads) as (bx, by):\n"
      "            A_s = T.alloc_shared((128, bk), \"float16\")\n"
      "            B_s = T.alloc_shared((bk, 128), \"float16\")\n"
      "            C_l = T.alloc_fragment((128, 128), \"float32\")\n"; /* line 11 */
  static const char *const TAIL = "            T.copy(C_l, C[0, 0])\n    return main\n";
  static const struct { const char *body, *arch, *bk, *threads, *msg; } bad[] = {
      {"            T.wgmma_gemm(A_s, B_s, C_l)\n            T.wait_wgmma(0)\n", "sm_80", "64", "128",
       "kern.py:12:13: error: T.wgmma_gemm needs wgmma, which only sm_90a has (the target is sm_80)"},
      {"            T.wgmma_gemm(A_s, B_s, C_l)\n            T.wait_wgmma(0)\n", "sm_90a", "64", "64",
       "kern.py:12:13: error: T.wgmma_gemm: this 128x128x64 GEMM over 64 threads cannot run as wgmma (wgmma needs "
       "whole warpgroups"},
      {"            T.annotate_layout({A_s: make_linear_layout(A_s)})\n            T.wgmma_gemm(A_s, B_s, C_l)\n"
       "            T.wait_wgmma(0)\n", "sm_90a", "64", "128",
       "kern.py:13:13: error: T.wgmma_gemm: this 128x128x64 GEMM over 128 threads cannot run as wgmma (wgmma reads "
       "swizzled shared tiles"},
      {"            T.gemm(A_s, B_s, C_l)\n            T.wait_wgmma(1)\n", "sm_90a", "64", "128",
       "kern.py:13:13: error: T.wait_wgmma: no T.wgmma_gemm is issued before it"},
      {"            T.annotate_layout({A_s: make_full_bank_swizzled_layout(A_s)})\n", "sm_90a", "48", "128",
       "kern.py:12:37: error: tilelang.layout.make_full_bank_swizzled_layout('A_s'): a 128x48 float16 tile cannot "
       "take it: rows of 96 bytes are not a multiple of the 128-byte swizzle"},
      {"            T.annotate_layout({C_l: make_swizzled_layout(A_s)})\n", "sm_90a", "64", "128",
       "kern.py:12:13: error: T.annotate_layout: 'C_l' is a local.fragment buffer"},
      {"            T.annotate_layout({A_s: make_swizzled_layout(B_s)})\n", "sm_90a", "64", "128",
       "kern.py:12:13: error: T.annotate_layout: the layout made for 'B_s' (64x128 float16) does not fit 'A_s'"},
      {"            T.annotate_layout({A_s: lambda i, j: i * 64 + j})\n", "sm_90a", "64", "128",
       "T.annotate_layout: a function is not a layout; use T.Fragment"},
      {"            T.annotate_layout({A_s: make_swizzled_layout(A_s)})\n"
       "            T.annotate_layout({A_s: make_linear_layout(A_s)})\n", "sm_90a", "64", "128",
       "kern.py:13:13: error: layout conflict for shared buffer 'A_s': already annotated with another layout at line 12"},
  };
  for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
    char src[4096];
    snprintf(src, sizeof src, "%s%s%s", HEAD, bad[i].body, TAIL);
    ts_param extra[] = {{"bk", bad[i].bk}, {"threads", bad[i].threads}};
    ts_kernel *k = NULL;
    const char *e = compile_src(ctx, src, bad[i].arch, extra, 2, &k);
    if (!e || !strstr(e, bad[i].msg)) fprintf(stderr, "  case %d: got %s\n", i, e ? e : "(compiled)");
    CHECK(e && strstr(e, bad[i].msg) != NULL);
    ts_kernel_destroy(k);
  }
  /* ... and legal ones compile: a pinned swizzle on a tile no GEMM uses, read by T.Parallel. */
  {
    char src[4096];
    snprintf(src, sizeof src, "%s%s%s", HEAD,
             "            T.annotate_layout({A_s: make_full_bank_swizzled_layout(A_s)})\n"
             "            T.copy(A[0, 0], A_s)\n"
             "            for i, j in T.Parallel(128, 128):\n"
             "                C_l[i, j] = A_s[i, j % 64]\n", TAIL);
    ts_kernel *k = NULL;
    const char *e = compile_src(ctx, src, "sm_90a", NULL, 0, &k);
    if (e) fprintf(stderr, "  %s\n", e);
    CHECK(e == NULL);
    const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
    CHECK(cu && strstr(cu, "__align__(1024)") != NULL); /* the swizzle XORs address bits 4..6 */
    ts_kernel_destroy(k);
  }
  ts_context_destroy(ctx);
}

/* fragment_from_read: every thread that runs loop element (i, k) of the loop layout holds
 * f[i] (rows read by a loop over rows x cols), whatever copies f keeps. */
static void check_from_read(TestCtx *t, const Fragment *f, int64_t cols) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  int map[1] = {0};
  int64_t ext[2] = {f->dim[0].extent, cols};
  Fragment *L = fragment_from_read(&c, f, 2, ext, map);
  REQUIRE(L != NULL);
  /* loop layout and f agree again through fragment_derive (what layout_inference checks) */
  CHECK(fragment_equal(fragment_derive(&c, L, 1, map), f));
  for (int64_t i = 0; i < ext[0]; i++)
    for (int64_t k = 0; k < cols; k++)
      for (int64_t th = 0; th < L->nthreads; th++)
        if (holds(L, (int64_t[]){i, k}, th)) CHECK(holds(f, (int64_t[]){i}, th));
  ts_compiler_fini(&c);
}

TEST(layout_fragment_from_read) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  /* a row reduction of a wgmma accumulator (4 lanes of a quad hold each row; split k) */
  Fragment *acc = fragment_gemm_acc(&c, 64, 64, 4, 1, 128);
  REQUIRE(acc != NULL);
  Fragment *rows = fragment_reduce(&c, acc, 1, false);
  check_from_read(t, rows, 64);
  check_from_read(t, rows, 6); /* 4 does not divide 6: the quad repeats the loop */
  /* two warpgroups along N: copies in both warpgroups and in the quad */
  Fragment *acc2 = fragment_gemm_acc(&c, 64, 64, 4, 2, 256);
  REQUIRE(acc2 != NULL);
  check_from_read(t, fragment_reduce(&c, acc2, 1, false), 64);
  check_from_read(t, fragment_reduce(&c, fragment_block(&c, 2, (int64_t[]){32, 16}, 128, 4), 1, false), 16);
  /* a fragment no thread split cannot lead a loop */
  CHECK(fragment_from_read(&c, fragment_replicated(&c, 1, (int64_t[]){64}, 128), 2, (int64_t[]){64, 8},
                           (int[]){0}) == NULL);
  ts_compiler_fini(&c);
}

/* Shifting dim k by s (a multiple of fragment_shift_period) keeps the thread and adds
 * s / fragment_shift_divisor to the register coordinate, for every element that stays inside. */
static void check_shift(TestCtx *t, const Fragment *f, int k, int64_t s) {
  int64_t P = fragment_shift_period(f, k), D = fragment_shift_divisor(f, k);
  CHECK(s % P == 0);
  for (int64_t i = 0; i < f->dim[0].extent; i++)
    for (int64_t j = 0; j < f->dim[1].extent; j++) {
      int64_t a[2] = {i, j}, b[2] = {i, j};
      b[k] += s;
      if (b[k] >= f->dim[k].extent) continue;
      CHECK(fragment_thread_of(f, a) == fragment_thread_of(f, b));
      CHECK(fragment_reg_of(f, a) + s / D * fragment_reg_stride(f, k) == fragment_reg_of(f, b));
    }
}

TEST(layout_fragment_shift) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  Fragment *mma = fragment_gemm_acc(&c, 32, 512, 1, 8, 256); /* sparse MLA bwd's dKV: one warp row */
  Fragment *wg = fragment_gemm_acc(&c, 128, 64, 8, 1, 256);  /* two warpgroups along M */
  REQUIRE(mma && wg);
  CHECK(fragment_shift_period(mma, 0) == 8 && fragment_shift_period(wg, 1) == 8);
  CHECK(fragment_shift_period(wg, 0) == 128); /* warp strips interleave: whole repetitions only */
  check_shift(t, mma, 0, 16);
  check_shift(t, mma, 0, 8);
  check_shift(t, wg, 1, 8);
  check_shift(t, wg, 1, 24);
  Fragment *blk = fragment_block(&c, 2, (int64_t[]){16, 64}, 128, 4);
  check_shift(t, blk, 1, fragment_shift_period(blk, 1));
  check_shift(t, blk, 0, fragment_shift_period(blk, 0));
  ts_compiler_fini(&c);
}

/* fragment_reshape: unit dims added or removed and dims split at level boundaries keep every
 * element's thread and register (row-major flat index x of both shapes names one element). */
static void check_reshape(TestCtx *t, const Fragment *f, int ndim, const int64_t *shape, bool ok) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  Fragment *v = fragment_reshape(&c, f, ndim, shape);
  CHECK((v != NULL) == ok);
  int64_t n = 1;
  for (int k = 0; k < f->ndim; k++) n *= f->dim[k].extent;
  for (int64_t x = 0; v && x < n; x++) {
    int64_t a[FRAG_MAX_DIMS], b[FRAG_MAX_DIMS], r = x;
    for (int k = f->ndim - 1; k >= 0; k--) a[k] = r % f->dim[k].extent, r /= f->dim[k].extent;
    r = x;
    for (int k = ndim - 1; k >= 0; k--) b[k] = r % shape[k], r /= shape[k];
    CHECK(fragment_thread_of(f, a) == fragment_thread_of(v, b));
    CHECK(fragment_reg_of(f, a) == fragment_reg_of(v, b));
  }
  CHECK(!v || fragment_local_size(v) == fragment_local_size(f));
  ts_compiler_fini(&c);
}

TEST(layout_fragment_reshape) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  Fragment *acc = fragment_gemm_acc(&c, 64, 64, 4, 2, 256);
  Fragment *acc2 = fragment_gemm_acc(&c, 256, 128, 4, 4, 512); /* the lightning indexer's scores */
  REQUIRE(acc && acc2);
  check_reshape(t, acc, 3, (int64_t[]){64, 1, 64}, true);
  check_reshape(t, acc, 3, (int64_t[]){64, 8, 8}, true);
  check_reshape(t, acc, 3, (int64_t[]){64, 16, 4}, true);
  check_reshape(t, acc, 3, (int64_t[]){32, 2, 64}, true);
  check_reshape(t, acc, 4, (int64_t[]){2, 32, 4, 16}, true);
  check_reshape(t, acc2, 3, (int64_t[]){256, 4, 32}, true);
  check_reshape(t, acc2, 3, (int64_t[]){256, 2, 64}, true);
  check_reshape(t, acc, 1, (int64_t[]){4096}, false); /* three thread levels in one dim */
  /* merges: the inner dim's levels then the outer's, at most two thread levels (adjacent
   * thread levels with following strides are one), registers between them as mid registers */
  Fragment *b32 = fragment_block(&c, 2, (int64_t[]){32, 32}, 32, 4); /* t(4@8,8@1)/v(1,4) */
  check_reshape(t, b32, 1, (int64_t[]){1024}, true);
  check_reshape(t, b32, 2, (int64_t[]){8, 128}, false); /* a split and a merge across it */
  Fragment *b3 = fragment_block(&c, 3, (int64_t[]){4, 8, 32}, 128, 4);
  check_reshape(t, b3, 2, (int64_t[]){4, 256}, true);
  check_reshape(t, b3, 1, (int64_t[]){1024}, true);
  check_reshape(t, b3, 2, (int64_t[]){32, 32}, true);
  check_reshape(t, fragment_block(&c, 2, (int64_t[]){64, 16}, 32, 2), 1, (int64_t[]){1024}, true);
  check_reshape(t, fragment_block(&c, 2, (int64_t[]){4, 48}, 16, 4), 1, (int64_t[]){192}, true); /* mid regs */
  check_reshape(t, fragment_block(&c, 2, (int64_t[]){4, 40}, 16, 4), 1, (int64_t[]){160}, false); /* padding */
  check_reshape(t, fragment_block(&c, 2, (int64_t[]){6, 4}, 8, 1), 2, (int64_t[]){4, 6}, false); /* no merge, no split */
  check_reshape(t, fragment_block(&c, 2, (int64_t[]){4, 48}, 16, 4), 3, (int64_t[]){4, 4, 12}, false); /* padding */
  Fragment *v = fragment_reshape(&c, acc, 3, (int64_t[]){64, 1, 64});
  CHECK(v && fragment_equal(fragment_reshape(&c, v, 2, (int64_t[]){64, 64}), acc));
  /* whole in every thread, registers row-major: any shape of the same size */
  check_reshape(t, fragment_replicated(&c, 2, (int64_t[]){8, 8}, 128), 1, (int64_t[]){64}, true);
  ts_compiler_fini(&c);
}
