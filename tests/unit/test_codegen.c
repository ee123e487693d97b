/* test_codegen.c — unit tests of CUDA code generation (src/codegen/cuda.c) and the
 * device headers (the device/tilescale folder).
 *
 * Each test builds a small thread-level IrFunc by hand, runs cg_cuda, checks the text for
 * the pieces that matter (signature, indexing, helpers), and then compiles the source
 * with nvcc for sm_80 and sm_90a (warnings are errors) to prove it is valid CUDA against
 * our headers.  The compile step is skipped, with a note, where nvcc or the device
 * folder cannot be found. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/codegen/cuda.h"
#include "../../src/rt/kernel.h"
#include "test.h"

/* ---- helpers ----------------------------------------------------------------------- */
#define I32(v) ir_i32(c, (v))
#define NOLOC SRCLOC_NONE

static TsCompiler *new_compiler(void) {
  TsCompiler *c = malloc(sizeof *c);
  ts_compiler_init(c, (TsTarget){90, true});
  return c;
}
static void free_compiler(TsCompiler *c) {
  ts_compiler_fini(c);
  free(c);
}

static IrExpr *var(TsCompiler *c, IrVar *v) { return ir_varref(c, v, NOLOC); }
static IrExpr *bin(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b) { return ir_binary(c, k, a, b, NOLOC); }
static IrExpr *load1(TsCompiler *c, IrBuffer *b, IrExpr *i) { return ir_load(c, b, &i, 1, NOLOC); }
static IrExpr *load2(TsCompiler *c, IrBuffer *b, IrExpr *i, IrExpr *j) {
  IrExpr *idx[2] = {i, j};
  return ir_load(c, b, idx, 2, NOLOC);
}
static IrStmt *store1(TsCompiler *c, IrBuffer *b, IrExpr *i, IrExpr *v) { return ir_store(c, b, &i, 1, v, NOLOC); }
static IrStmt *store2(TsCompiler *c, IrBuffer *b, IrExpr *i, IrExpr *j, IrExpr *v) {
  IrExpr *idx[2] = {i, j};
  return ir_store(c, b, idx, 2, v, NOLOC);
}
static IrStmt *alloc(TsCompiler *c, IrBuffer *b) {
  IrStmt *s = ir_stmt(c, IR_S_ALLOC, NOLOC);
  s->u.alloc.buf = b;
  return s;
}
static IrExpr *call(TsCompiler *c, IrIntrin op, ts_dtype t, IrExpr *a, IrExpr *b) {
  IrExpr *args[2] = {a, b};
  return ir_call(c, op, t, args, b ? 2 : (a ? 1 : 0), NOLOC);
}

static IrBuffer *tensor1(TsCompiler *c, const char *name, ts_dtype t, IrExpr *n) {
  return ir_buffer(c, name, t, IR_SCOPE_GLOBAL, 1, &n, NOLOC);
}
static IrBuffer *tensor2(TsCompiler *c, const char *name, ts_dtype t, IrScope s, IrExpr *m, IrExpr *n) {
  IrExpr *shape[2] = {m, n};
  return ir_buffer(c, name, t, s, 2, shape, NOLOC);
}

/* A function with the given tensor/scalar parameters and one kernel around `body`. */
typedef struct FnBuilder {
  IrFunc *f;
  IrStmt *kernel;
  IrVar *bx, *by, *tx;
} FnBuilder;

static FnBuilder fn_begin(TsCompiler *c, const char *name, int threads, IrExpr *gx, IrExpr *gy) {
  FnBuilder fb = {0};
  fb.f = ARENA_NEW(c->arena, IrFunc);
  fb.f->name = name;
  fb.f->params = ARENA_ARRAY(c->arena, IrParam, 8);
  fb.kernel = ir_stmt(c, IR_S_KERNEL, NOLOC);
  IrKernel *k = &fb.kernel->u.kernel;
  fb.bx = ir_var(c, "bx", TS_DTYPE_INT32, IR_VAR_BLOCK_IDX, NOLOC);
  fb.by = ir_var(c, "by", TS_DTYPE_INT32, IR_VAR_BLOCK_IDX, NOLOC);
  fb.by->axis = 1;
  fb.tx = ir_var(c, "tx", TS_DTYPE_INT32, IR_VAR_THREAD_IDX, NOLOC);
  k->grid[0] = gx;
  k->grid[1] = gy ? gy : I32(1);
  k->grid[2] = I32(1);
  k->threads[0] = threads;
  k->threads[1] = k->threads[2] = 1;
  k->block_var[0] = fb.bx;
  k->block_var[1] = fb.by;
  k->thread_var[0] = fb.tx;
  return fb;
}
static void fn_param_buf(FnBuilder *fb, IrBuffer *b) {
  b->param_index = fb->f->nparams;
  fb->f->params[fb->f->nparams++] = (IrParam){b->name, b, NULL, false};
}
static void fn_param_var(FnBuilder *fb, IrVar *v) { fb->f->params[fb->f->nparams++] = (IrParam){v->name, NULL, v, false}; }
static IrFunc *fn_end(TsCompiler *c, FnBuilder *fb, IrStmt **items, int n) {
  fb->kernel->u.kernel.body = ir_seq(c, items, n, NOLOC);
  fb->f->body = ir_seq(c, &fb->kernel, 1, NOLOC);
  return fb->f;
}

static bool contains(const char *hay, const char *needle) {
  bool ok = hay && strstr(hay, needle);
  if (!ok) fprintf(stderr, "  missing in generated source: %s\n", needle);
  return ok;
}

/* Finds device/tilescale relative to the working directory (the repo root under make). */
static const char *device_dir(void) {
  static const char *const candidates[] = {"device", "../device", "../../device"};
  for (int i = 0; i < TS_ARRAY_LEN(candidates); i++) {
    char p[256];
    snprintf(p, sizeof p, "%s/tilescale/common.cuh", candidates[i]);
    if (access(p, R_OK) == 0) return candidates[i];
  }
  return NULL;
}

/* Compiles src with nvcc for sm_80 and sm_90a.  Returns 1 on success, 0 on failure (the
 * log goes to stderr), -1 when the compile was skipped. */
static int nvcc_compile(const char *test, const char *src) {
  const char *dev = device_dir();
  if (!dev || system("command -v nvcc >/dev/null 2>&1") != 0) {
    fprintf(stderr, "  %s: nvcc or device/ not found, compile step skipped\n", test);
    return -1;
  }
  char dir[] = "/tmp/ts_cg_XXXXXX";
  if (!mkdtemp(dir)) return 0;
  char path[512], cmd[2048];
  snprintf(path, sizeof path, "%s/%s.cu", dir, test);
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  fputs(src, f);
  fclose(f);
  int ok = 1;
  static const char *const archs[] = {"sm_80", "sm_90a"};
  for (int i = 0; i < 2 && ok; i++) {
    snprintf(cmd, sizeof cmd, "nvcc -std=c++17 -arch=%s -cubin -Werror all-warnings -diag-suppress 177,550 -I %s -o %s/k.cubin %s > %s/log 2>&1",
             archs[i], dev, dir, path, dir);
    if (system(cmd) != 0) {
      snprintf(cmd, sizeof cmd, "cat %s/log >&2; echo '  --- source ---' >&2; cat -n %s >&2", dir, path);
      if (system(cmd)) {}
      fprintf(stderr, "  %s: nvcc failed for %s\n", test, archs[i]);
      ok = 0;
    }
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) {}
  return ok;
}

/* ---- element-wise add: the basic shape of a kernel --------------------------------- */
TEST(codegen_elementwise_add) {
  TsCompiler *c = new_compiler();
  FnBuilder fb = fn_begin(c, "add", 256, I32(4), NULL);
  IrBuffer *A = tensor1(c, "A", TS_DTYPE_FLOAT32, I32(1000));
  IrBuffer *B = tensor1(c, "B", TS_DTYPE_FLOAT32, I32(1000));
  IrBuffer *C = tensor1(c, "C", TS_DTYPE_FLOAT32, I32(1000));
  fn_param_buf(&fb, A);
  fn_param_buf(&fb, B);
  fn_param_buf(&fb, C);
  IrVar *i = ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrExpr *iv = var(c, i);
  IrStmt *items[] = {
      ir_let(c, i, bin(c, IR_ADD, bin(c, IR_MUL, var(c, fb.bx), I32(256)), var(c, fb.tx)), NOLOC),
      ir_if(c, bin(c, IR_LT, iv, I32(1000)),
            store1(c, C, iv, bin(c, IR_ADD, load1(c, A, iv), load1(c, B, iv))), NULL, NOLOC),
  };
  IrFunc *f = fn_end(c, &fb, items, 2);
  CgOutput out;
  REQUIRE(cg_cuda(c, f, &out));
  const char *s = out.source;
  CHECK(contains(s, "#include <tilescale/common.cuh>"));
  CHECK(contains(s, "extern \"C\" __global__ void __launch_bounds__(256) add_kernel(float* __restrict__ A, "
                    "float* __restrict__ B, float* __restrict__ C) {"));
  CHECK(contains(s, "const int i = (int)blockIdx.x * 256 + (int)threadIdx.x;"));
  CHECK(contains(s, "if (i < 1000) {"));
  CHECK(contains(s, "C[i] = A[i] + B[i];"));
  CHECK(!strstr(s, "ts_smem")); /* no dynamic shared memory requested */
  REQUIRE(out.nkernels == 1);
  CHECK_STR(out.kernels[0].name, "add_kernel");
  CHECK(out.kernels[0].block[0] == 256 && out.kernels[0].block[1] == 1 && out.kernels[0].block[2] == 1);
  int64_t gx = 0;
  CHECK(out.kernels[0].grid[0] == fb.kernel->u.kernel.grid[0] && ir_is_const_int(out.kernels[0].grid[0], &gx) &&
        gx == 4);
  CHECK(out.kernels[0].smem_bytes == 0);
  CHECK(nvcc_compile("elementwise_add", s) != 0);
  free_compiler(c);
}

/* ---- dynamic dims, 2-D indexing in 64 bits, casts, float constants ------------------ */
TEST(codegen_scale_cast_dynamic) {
  TsCompiler *c = new_compiler();
  IrVar *M = ir_var(c, "M", TS_DTYPE_INT32, IR_VAR_DYNAMIC, NOLOC);
  FnBuilder fb = fn_begin(c, "scale", 128, var(c, M), NULL);
  fb.f->dyn_vars = ARENA_ARRAY(c->arena, IrVar *, 1);
  fb.f->dyn_vars[0] = M;
  fb.f->ndyn = 1;
  IrBuffer *X = tensor2(c, "X", TS_DTYPE_FLOAT32, IR_SCOPE_GLOBAL, var(c, M), I32(4096));
  IrBuffer *Y = tensor2(c, "Y", TS_DTYPE_FLOAT16, IR_SCOPE_GLOBAL, var(c, M), I32(4096));
  IrVar *scale = ir_var(c, "scale", TS_DTYPE_FLOAT32, IR_VAR_PARAM, NOLOC);
  fn_param_buf(&fb, X);
  fn_param_buf(&fb, Y);
  fn_param_var(&fb, scale);
  IrVar *j = ir_var(c, "j", TS_DTYPE_INT32, IR_VAR_LOOP, NOLOC);
  IrExpr *col = bin(c, IR_ADD, bin(c, IR_MUL, var(c, j), I32(128)), var(c, fb.tx));
  IrExpr *x = load2(c, X, var(c, fb.bx), col);
  IrExpr *v = bin(c, IR_ADD, bin(c, IR_MUL, x, var(c, scale)), ir_float(c, 0.1, TS_DTYPE_FLOAT32, NOLOC));
  IrStmt *body = store2(c, Y, var(c, fb.bx), col, ir_cast(c, TS_DTYPE_FLOAT16, v, NOLOC));
  IrStmt *loop = ir_for(c, j, I32(0), I32(32), IR_FOR_UNROLLED, body, NOLOC);
  IrFunc *f = fn_end(c, &fb, &loop, 1);
  CgOutput out;
  REQUIRE(cg_cuda(c, f, &out));
  const char *s = out.source;
  CHECK(contains(s, "scale_kernel(float* __restrict__ X, half* __restrict__ Y, float scale, int64_t M)"));
  CHECK(contains(s, "#pragma unroll\n"));
  CHECK(contains(s, "for (int j = 0; j < 32; ++j) {"));
  /* M * 4096 elements may exceed 2^31: the row offset is computed in 64 bits. */
  CHECK(contains(s, "Y[(int64_t)(int)blockIdx.x * 4096 + j * 128 + (int)threadIdx.x] = "
                    "ts::cast<half>(X[(int64_t)(int)blockIdx.x * 4096 + j * 128 + (int)threadIdx.x] * scale + 0.1f);"));
  CHECK(out.kernels[0].grid[0]->kind == IR_VAR && out.kernels[0].grid[0]->u.var == M);
  CHECK(nvcc_compile("scale_cast", s) != 0);
  free_compiler(c);
}

/* ---- shared memory: dynamic and static, barriers, vector copies ------------------- */
TEST(codegen_transpose_shared) {
  TsCompiler *c = new_compiler();
  FnBuilder fb = fn_begin(c, "transpose", 256, I32(16), I32(16));
  IrBuffer *A = tensor2(c, "A", TS_DTYPE_FLOAT16, IR_SCOPE_GLOBAL, I32(512), I32(512));
  IrBuffer *B = tensor2(c, "B", TS_DTYPE_FLOAT16, IR_SCOPE_GLOBAL, I32(512), I32(512));
  fn_param_buf(&fb, A);
  fn_param_buf(&fb, B);
  IrBuffer *tile = tensor2(c, "A_shared", TS_DTYPE_FLOAT16, IR_SCOPE_SHARED_DYN, I32(32), I32(32));
  tile->smem_offset = 0;
  IrBuffer *stat = tensor2(c, "flags", TS_DTYPE_INT32, IR_SCOPE_SHARED, I32(1), I32(4));
  IrExpr *four = I32(4);
  IrBuffer *frag = ir_buffer(c, "A_local", TS_DTYPE_FLOAT32, IR_SCOPE_FRAGMENT, 1, &four, NOLOC);
  frag->local_size = 4;
  /* Each thread: row r = tx / 8, 4 columns from c0 = (tx % 8) * 4. */
  IrVar *r = ir_var(c, "r", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrVar *c0 = ir_var(c, "c0", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrExpr *grow = bin(c, IR_ADD, bin(c, IR_MUL, var(c, fb.by), I32(32)), var(c, r));
  IrExpr *gcol = bin(c, IR_ADD, bin(c, IR_MUL, var(c, fb.bx), I32(32)), var(c, c0));
  IrStmt *ld = store2(c, tile, var(c, r), var(c, c0), load2(c, A, grow, gcol));
  ld->u.store.lanes = 4;
  ld->u.store.value->lanes = 4;
  /* shared (half) -> fragment (float): a converting vector copy. */
  IrStmt *to_frag = store1(c, frag, I32(0), ir_cast(c, TS_DTYPE_FLOAT32, load2(c, tile, var(c, r), var(c, c0)), NOLOC));
  to_frag->u.store.lanes = 4;
  to_frag->u.store.value->lanes = 4;
  to_frag->u.store.value->u.ops[0]->lanes = 4;
  /* Element-wise store back, transposed: a serial loop over the 4 registers. */
  IrVar *k = ir_var(c, "k", TS_DTYPE_INT32, IR_VAR_LOOP, NOLOC);
  IrExpr *orow = bin(c, IR_ADD, bin(c, IR_MUL, var(c, fb.bx), I32(32)), bin(c, IR_ADD, var(c, c0), var(c, k)));
  IrExpr *ocol = bin(c, IR_ADD, bin(c, IR_MUL, var(c, fb.by), I32(32)), var(c, r));
  IrStmt *st = store2(c, B, orow, ocol, ir_cast(c, TS_DTYPE_FLOAT16, load1(c, frag, var(c, k)), NOLOC));
  IrStmt *items[] = {
      alloc(c, tile), alloc(c, stat), alloc(c, frag),
      ir_let(c, r, bin(c, IR_FLOORDIV, var(c, fb.tx), I32(8)), NOLOC),
      ir_let(c, c0, bin(c, IR_MUL, bin(c, IR_FLOORMOD, var(c, fb.tx), I32(8)), I32(4)), NOLOC),
      ld,
      ir_eval(c, call(c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, NULL), NOLOC),
      to_frag,
      store2(c, stat, I32(0), I32(0), I32(1)),
      ir_for(c, k, I32(0), I32(4), IR_FOR_SERIAL, st, NOLOC),
  };
  IrFunc *f = fn_end(c, &fb, items, TS_ARRAY_LEN(items));
  CgOutput out;
  REQUIRE(cg_cuda(c, f, &out));
  const char *s = out.source;
  CHECK(contains(s, "extern __shared__ __align__(128) unsigned char ts_smem[];"));
  CHECK(contains(s, "half* A_shared = reinterpret_cast<half*>(ts_smem + 0);"));
  CHECK(contains(s, "__shared__ __align__(16) int flags[4];"));
  CHECK(contains(s, "__align__(16) float A_local[4];"));
  /* tx is non-negative: // and % print as C operators. */
  CHECK(contains(s, "const int r = (int)threadIdx.x / 8;"));
  CHECK(contains(s, "const int c0 = (int)threadIdx.x % 8 * 4;"));
  CHECK(contains(s, "ts::copy_vec<4>(&A_shared[r * 32 + c0], &A[((int)blockIdx.y * 32 + r) * 512 + "
                    "(int)blockIdx.x * 32 + c0]);"));
  CHECK(contains(s, "__syncthreads();"));
  CHECK(contains(s, "ts::copy_vec<4>(&A_local[0], &A_shared[r * 32 + c0]);"));
  CHECK(contains(s, "flags[0] = 1;"));
  CHECK(contains(s, "B[((int)blockIdx.x * 32 + (c0 + k)) * 512 + (int)blockIdx.y * 32 + r] = "
                    "ts::cast<half>(A_local[k]);"));
  /* smem_bytes was not set by a pass: codegen derives it from the buffers. */
  CHECK(out.kernels[0].smem_bytes == 32 * 32 * 2);
  CHECK(out.kernels[0].block[0] == 256);
  CHECK(nvcc_compile("transpose", s) != 0);
  free_compiler(c);
}

/* ---- reductions: shuffles, atomics, vars, math, floor division, assertions --------- */
TEST(codegen_reduce_atomics_math) {
  TsCompiler *c = new_compiler();
  FnBuilder fb = fn_begin(c, "block_sum", 128, I32(8), NULL);
  IrBuffer *X = tensor1(c, "X", TS_DTYPE_FLOAT16, I32(1024));
  IrBuffer *S = tensor1(c, "S", TS_DTYPE_FLOAT32, I32(1));
  IrBuffer *N = tensor1(c, "N", TS_DTYPE_INT64, I32(1));
  IrBuffer *H = tensor1(c, "H", TS_DTYPE_FLOAT16, I32(1));
  IrVar *off = ir_var(c, "off", TS_DTYPE_INT32, IR_VAR_PARAM, NOLOC);
  fn_param_buf(&fb, X);
  fn_param_buf(&fb, S);
  fn_param_buf(&fb, N);
  fn_param_buf(&fb, H);
  fn_param_var(&fb, off);
  IrBuffer *acc = ir_buffer(c, "acc", TS_DTYPE_FLOAT32, IR_SCOPE_VAR, 0, NULL, NOLOC);
  acc->init = ir_float(c, 0.0, TS_DTYPE_FLOAT32, NOLOC);
  IrBuffer *cnt = ir_buffer(c, "cnt", TS_DTYPE_INT64, IR_SCOPE_VAR, 0, NULL, NOLOC);
  IrExpr *zero = I32(0);
  IrExpr *accv = ir_load(c, acc, &zero, 1, NOLOC);
  IrExpr *cntv = ir_load(c, cnt, &zero, 1, NOLOC);
  IrVar *i = ir_var(c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, NOLOC);
  /* x = X[(bx*128 + tx + off) // 2 % 1024]: `off` may be negative -> floor helpers. */
  IrExpr *idx = bin(c, IR_FLOORMOD,
                    bin(c, IR_FLOORDIV, bin(c, IR_ADD, bin(c, IR_ADD, bin(c, IR_MUL, var(c, fb.bx), I32(128)),
                                                             var(c, fb.tx)), var(c, off)), I32(2)),
                    I32(1024));
  IrExpr *xf = ir_cast(c, TS_DTYPE_FLOAT32, load1(c, X, idx), NOLOC);
  IrExpr *ex = call(c, IRI_EXP2, TS_DTYPE_FLOAT32, xf, NULL);
  IrExpr *guarded = ir_select(c, IR_IF_THEN_ELSE, bin(c, IR_GE, var(c, off), I32(0)), ex,
                              ir_float(c, -INFINITY, TS_DTYPE_FLOAT32, NOLOC), NOLOC);
  IrStmt *shfl_body = ir_store(c, acc, &zero, 1,
                               bin(c, IR_ADD, accv, call(c, IRI_SHFL_XOR, TS_DTYPE_FLOAT32, accv, var(c, i))), NOLOC);
  IrExpr *mask = bin(c, IR_SHL, I32(1), var(c, i));
  (void)mask;
  IrStmt *cnt_shfl = ir_store(c, cnt, &zero, 1, call(c, IRI_SHFL_XOR, TS_DTYPE_INT64, cntv, I32(1)), NOLOC);
  IrExpr *half_v = load1(c, X, I32(3));
  IrExpr *hmath = call(c, IRI_SQRT, TS_DTYPE_FLOAT16, call(c, IRI_ABS, TS_DTYPE_FLOAT16, half_v, NULL), NULL);
  IrExpr *dmath = call(c, IRI_LOG, TS_DTYPE_FLOAT64, ir_cast(c, TS_DTYPE_FLOAT64, accv, NOLOC), NULL);
  IrVar *w = ir_var(c, "w", TS_DTYPE_INT32, IR_VAR_LOOP, NOLOC);
  IrStmt *items[] = {
      alloc(c, acc),
      alloc(c, cnt),
      ir_store(c, acc, &zero, 1, guarded, NOLOC),
      ir_for(c, i, I32(1), I32(4), IR_FOR_UNROLLED, shfl_body, NOLOC),
      ir_store(c, cnt, &zero, 1, bin(c, IR_ADD, cntv, ir_int(c, 1, TS_DTYPE_INT64, NOLOC)), NOLOC),
      cnt_shfl,
      ir_for(c, w, I32(0), I32(10), IR_FOR_SERIAL,
             ir_if(c, bin(c, IR_EQ, var(c, w), I32(3)), ir_stmt(c, IR_S_BREAK, NOLOC),
                   ir_stmt(c, IR_S_CONTINUE, NOLOC), NOLOC), NOLOC),
      ir_if(c, bin(c, IR_EQ, bin(c, IR_FLOORMOD, var(c, fb.tx), I32(32)), I32(0)),
            ir_seq(c, (IrStmt *[]){
                          ir_eval(c, call(c, IRI_ATOMIC_ADD, TS_DTYPE_FLOAT32,
                                          call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, load1(c, S, I32(0)), NULL), accv),
                                  NOLOC),
                          ir_eval(c, call(c, IRI_ATOMIC_ADD, TS_DTYPE_INT64,
                                          call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, load1(c, N, I32(0)), NULL), cntv),
                                  NOLOC),
                          ir_eval(c, call(c, IRI_ATOMIC_MAX, TS_DTYPE_FLOAT16,
                                          call(c, IRI_ADDRESS_OF, TS_DTYPE_HANDLE, load1(c, H, I32(0)), NULL),
                                          hmath), NOLOC),
                      }, 3, NOLOC),
            NULL, NOLOC),
      store1(c, S, I32(0), ir_cast(c, TS_DTYPE_FLOAT32, dmath, NOLOC)),
  };
  IrStmt *as = ir_stmt(c, IR_S_ASSERT, NOLOC);
  as->u.assert_.cond = bin(c, IR_LT, var(c, off), I32(100));
  as->u.assert_.msg = "offset \"too\" large";
  IrStmt *all[TS_ARRAY_LEN(items) + 1];
  memcpy(all, items, sizeof items);
  all[TS_ARRAY_LEN(items)] = as;
  IrFunc *f = fn_end(c, &fb, all, TS_ARRAY_LEN(all));
  CgOutput out;
  REQUIRE(cg_cuda(c, f, &out));
  const char *s = out.source;
  CHECK(contains(s, "#include <tilescale/reduce.cuh>"));
  CHECK(contains(s, "#include <tilescale/atomic.cuh>"));
  CHECK(contains(s, "float acc = 0.0f;"));
  CHECK(contains(s, "int64_t cnt = (int64_t)0;"));
  CHECK(contains(s, "ts::floormod(ts::floordiv((int)blockIdx.x * 128 + (int)threadIdx.x + off, 2), 1024)"));
  CHECK(contains(s, "acc = off >= 0 ? exp2f(ts::cast<float>(X["));
  CHECK(contains(s, " : __int_as_float(0xff800000);"));
  CHECK(contains(s, "for (int i = 1; i < 1 + 4; ++i) {"));
  CHECK(contains(s, "acc = acc + __shfl_xor_sync(0xffffffffu, acc, i);"));
  CHECK(contains(s, "cnt = ts::shfl_xor(cnt, 1);"));
  CHECK(contains(s, "break;"));
  CHECK(contains(s, "} else {\n      continue;"));
  CHECK(contains(s, "if ((int)threadIdx.x % 32 == 0) {"));
  CHECK(contains(s, "atomicAdd(&S[0], acc);"));
  CHECK(contains(s, "ts::atomic_add(&N[0], cnt);"));
  CHECK(contains(s, "ts::atomic_max(&H[0], ts::cast<half>(sqrtf(ts::cast<float>(ts::abs(X[3])))));"));
  CHECK(contains(s, "S[0] = (float)log((double)acc);"));
  CHECK(contains(s, "if (!(off < 100)) ts::assert_fail(\"offset \\\"too\\\" large\", \"?:0:0\");"));
  CHECK(nvcc_compile("reduce_atomics", s) != 0);
  free_compiler(c);
}

/* ---- names are kept, made legal and unique ---------------------------------------- */
TEST(codegen_names_unique_and_legal) {
  TsCompiler *c = new_compiler();
  FnBuilder fb = fn_begin(c, "my-func", 32, I32(1), NULL);
  IrBuffer *A = tensor1(c, "A.data", TS_DTYPE_INT32, I32(32));
  fn_param_buf(&fb, A);
  IrVar *x1 = ir_var(c, "x", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrVar *x2 = ir_var(c, "x", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrVar *kw = ir_var(c, "int", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrVar *dig = ir_var(c, "3d", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrVar *neg = ir_var(c, "n", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrStmt *items[] = {
      ir_let(c, x1, var(c, fb.tx), NOLOC),
      ir_let(c, x2, bin(c, IR_ADD, var(c, x1), I32(1)), NOLOC),
      ir_let(c, kw, bin(c, IR_SUB, var(c, x2), var(c, x1)), NOLOC),
      ir_let(c, dig, bin(c, IR_SUB, var(c, kw), bin(c, IR_SUB, var(c, x1), var(c, x2))), NOLOC),
      ir_let(c, neg, ir_unary(c, IR_NEG, bin(c, IR_MUL, var(c, dig), I32(-2)), NOLOC), NOLOC),
      store1(c, A, var(c, fb.tx), bin(c, IR_FLOORDIV, var(c, neg), I32(3))),
  };
  IrFunc *f = fn_end(c, &fb, items, TS_ARRAY_LEN(items));
  CgOutput out;
  REQUIRE(cg_cuda(c, f, &out));
  const char *s = out.source;
  CHECK(contains(s, "my_func_kernel(int* __restrict__ A_data)"));
  CHECK(contains(s, "const int x = (int)threadIdx.x;"));
  CHECK(contains(s, "const int x_1 = x + 1;"));
  CHECK(contains(s, "const int int_1 = x_1 - x;"));
  /* a - (b - c) keeps its parentheses; a - b - c would not need them. */
  CHECK(contains(s, "const int v3d = int_1 - (x - x_1);"));
  CHECK(contains(s, "const int n = -(v3d * -2);"));
  CHECK(contains(s, "A_data[(int)threadIdx.x] = ts::floordiv(n, 3);"));
  CHECK_STR(out.kernels[0].name, "my_func_kernel");
  CHECK(nvcc_compile("names", s) != 0);
  free_compiler(c);
}

/* ---- two kernels, a host let between them, constants of every kind ---------------- */
TEST(codegen_two_kernels_and_constants) {
  TsCompiler *c = new_compiler();
  IrVar *n = ir_var(c, "n", TS_DTYPE_INT32, IR_VAR_DYNAMIC, NOLOC);
  FnBuilder fb = fn_begin(c, "two", 64, I32(2), NULL);
  fb.f->dyn_vars = ARENA_ARRAY(c->arena, IrVar *, 1);
  fb.f->dyn_vars[0] = n;
  fb.f->ndyn = 1;
  IrBuffer *D = tensor1(c, "D", TS_DTYPE_FLOAT64, var(c, n));
  IrBuffer *Bf = tensor1(c, "Bf", TS_DTYPE_BFLOAT16, var(c, n));
  IrBuffer *U = tensor1(c, "U", TS_DTYPE_UINT32, var(c, n));
  fn_param_buf(&fb, D);
  fn_param_buf(&fb, Bf);
  fn_param_buf(&fb, U);
  IrVar *half_n = ir_var(c, "half_n", TS_DTYPE_INT32, IR_VAR_LET, NOLOC);
  IrStmt *host_let = ir_let(c, half_n, bin(c, IR_FLOORDIV, var(c, n), I32(2)), NOLOC);
  IrExpr *tid = var(c, fb.tx);
  IrStmt *k1_items[] = {
      store1(c, D, tid, bin(c, IR_MUL, ir_float(c, 1.0 / 3.0, TS_DTYPE_FLOAT64, NOLOC),
                          ir_cast(c, TS_DTYPE_FLOAT64, var(c, half_n), NOLOC))),
      store1(c, Bf, tid, ir_float(c, INFINITY, TS_DTYPE_BFLOAT16, NOLOC)),
      store1(c, U, tid, ir_int(c, 4000000000LL, TS_DTYPE_UINT32, NOLOC)),
  };
  IrStmt *k1 = fb.kernel;
  k1->u.kernel.body = ir_seq(c, k1_items, 3, NOLOC);
  IrStmt *k2 = ir_stmt(c, IR_S_KERNEL, NOLOC);
  k2->u.kernel = k1->u.kernel;
  k2->u.kernel.threads[0] = 32;
  k2->u.kernel.body = store1(c, D, tid, bin(c, IR_ADD, load1(c, D, tid), ir_float(c, NAN, TS_DTYPE_FLOAT64, NOLOC)));
  IrStmt *top[] = {host_let, k1, k2};
  fb.f->body = ir_seq(c, top, 3, NOLOC);
  CgOutput out;
  REQUIRE(cg_cuda(c, fb.f, &out));
  const char *s = out.source;
  REQUIRE(out.nkernels == 2);
  CHECK_STR(out.kernels[0].name, "two_kernel_0");
  CHECK_STR(out.kernels[1].name, "two_kernel_1");
  CHECK(out.kernels[1].block[0] == 32);
  CHECK(contains(s, "__launch_bounds__(64) two_kernel_0(double* __restrict__ D, __nv_bfloat16* __restrict__ Bf, "
                    "uint32_t* __restrict__ U, int64_t n)"));
  CHECK(contains(s, "const int half_n = n / 2;"));
  CHECK(contains(s, "D[(int)threadIdx.x] = 0.3333333333333333 * (double)half_n;"));
  CHECK(contains(s, "Bf[(int)threadIdx.x] = ts::cast<__nv_bfloat16>(__int_as_float(0x7f800000));"));
  CHECK(contains(s, "U[(int)threadIdx.x] = 4000000000u;"));
  CHECK(contains(s, "D[(int)threadIdx.x] + __longlong_as_double(0x7ff8000000000000LL);"));
  CHECK(nvcc_compile("two_kernels", s) != 0);
  free_compiler(c);
}

/* ---- a general vector expression is printed lane by lane --------------------------- */
TEST(codegen_vector_expression_lanes) {
  TsCompiler *c = new_compiler();
  FnBuilder fb = fn_begin(c, "vexpr", 32, I32(1), NULL);
  IrBuffer *A = tensor1(c, "A", TS_DTYPE_FLOAT32, I32(128));
  IrBuffer *B = tensor1(c, "B", TS_DTYPE_FLOAT32, I32(128));
  fn_param_buf(&fb, A);
  fn_param_buf(&fb, B);
  IrExpr *base = bin(c, IR_MUL, var(c, fb.tx), I32(4));
  IrExpr *ld = load1(c, A, base);
  ld->lanes = 4;
  IrStmt *st = store1(c, B, base, bin(c, IR_MUL, ld, ir_float(c, 2.0, TS_DTYPE_FLOAT32, NOLOC)));
  st->u.store.lanes = 4;
  /* A typed zero broadcast to 4 half lanes (the lowering's out-of-bounds fill). */
  IrBuffer *H = tensor1(c, "H", TS_DTYPE_FLOAT16, I32(128));
  fn_param_buf(&fb, H);
  IrStmt *zero = store1(c, H, base, ir_int(c, 0, TS_DTYPE_FLOAT16, NOLOC));
  zero->u.store.lanes = 4;
  IrStmt *items[] = {st, zero};
  IrFunc *f = fn_end(c, &fb, items, 2);
  CgOutput out;
  REQUIRE(cg_cuda(c, f, &out));
  const char *s = out.source;
  CHECK(contains(s, "for (int vec = 0; vec < 4; ++vec) {"));
  CHECK(contains(s, "for (int vec_1 = 0; vec_1 < 4; ++vec_1) {"));
  CHECK(contains(s, "H[(int)threadIdx.x * 4 + vec_1] = ts::cast<half>(0.0f);"));
  CHECK(contains(s, "B[(int)threadIdx.x * 4 + vec] = A[(int)threadIdx.x * 4 + vec] * 2.0f;"));
  CHECK(nvcc_compile("vector_expr", s) != 0);
  free_compiler(c);
}

/* ---- IR that was not lowered is reported, not printed ------------------------------ */
TEST(codegen_rejects_tile_ops) {
  TsCompiler *c = new_compiler();
  SourceFile file = {"k.py", "T.copy(A, B)\n", 13};
  FnBuilder fb = fn_begin(c, "bad", 32, I32(1), NULL);
  IrBuffer *A = tensor1(c, "A", TS_DTYPE_FLOAT32, I32(32));
  fn_param_buf(&fb, A);
  IrStmt *cp = ir_stmt(c, IR_S_COPY, (SrcLoc){&file, 1, 1});
  cp->u.copy.src = ir_region_full(c, A, NOLOC);
  cp->u.copy.dst = ir_region_full(c, A, NOLOC);
  IrStmt *un = ir_stmt(c, IR_S_UNSUPPORTED, (SrcLoc){&file, 1, 3});
  un->u.unsupported.what = "T.gemm_sp";
  IrStmt *items[] = {cp, un};
  IrFunc *f = fn_end(c, &fb, items, 2);
  CgOutput out;
  CHECK(!cg_cuda(c, f, &out));
  CHECK(c->diag.errors == 2);
  CHECK(contains(sb_str(&c->diag.out), "k.py:1:1: error: internal error: tile operation 'copy'"));
  CHECK(contains(sb_str(&c->diag.out), "k.py:1:3: error: T.gemm_sp is not supported yet"));
  free_compiler(c);

  /* No kernel at all. */
  c = new_compiler();
  IrFunc *empty = ARENA_NEW(c->arena, IrFunc);
  empty->name = "nothing";
  empty->body = ir_seq(c, NULL, 0, NOLOC);
  CHECK(!cg_cuda(c, empty, &out));
  CHECK(contains(sb_str(&c->diag.out), "'nothing' launches no kernel"));
  free_compiler(c);
}

/* T.import_source puts the user's device code into the translation unit, once per distinct
 * text, before the kernels; a T.call_extern statement (its value unused) stays a call, with
 * T.access_ptr pointers to local buffers (the dequantize kernels' fast decoders). */
TEST(codegen_import_source_call_extern) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "SRC = '__device__ void twice(const float *a, float *b, int n) { for (int i = 0; i < n; ++i) b[i] = 2 * a[i]; }'\n"
                    "@T.prim_func\n"
                    "def k(A: T.Tensor((512,), 'float32'), B: T.Tensor((512,), 'float32')):\n"
                    "    with T.Kernel(1, threads=128) as bx:\n"
                    "        a = T.alloc_local((4,), 'float32')\n"
                    "        b = T.alloc_local((2, 2), 'float32')\n"
                    "        T.import_source(SRC)\n"
                    "        T.import_source(SRC)\n"
                    "        T.import_source(None)\n"
                    "        tx = T.get_thread_binding()\n"
                    "        for v in T.vectorized(4):\n"
                    "            a[v] = A[tx * 4 + v]\n"
                    "        T.call_extern('twice', T.access_ptr(a, 'r'), T.access_ptr(b, 'w', offset=1), 3)\n"
                    "        for v in T.vectorized(4):\n"
                    "            B[tx * 4 + v] = b[v // 2, v % 2]\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a", .no_jit = 1};
  ts_kernel *k = NULL;
  CHECK(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
  REQUIRE(cu != NULL);
  const char *def = strstr(cu, "__device__ void twice("), *kern = strstr(cu, "__global__");
  CHECK(def && kern && def < kern);
  CHECK(def && !strstr(def + 1, "__device__ void twice(")); /* once */
  CHECK(strstr(cu, "twice(&a[0], &b[") != NULL);           /* the statement call is kept */
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* T.alloc_global in the prim_func outside its kernels (split-KV partial results): one module
 * symbol, declared by the first kernel that uses it, which the later kernels point at to read
 * what it wrote.  That kernel only stores to it, so no launch zeroes it (as in TileLang, its
 * contents are undefined until written); a workspace the first kernel reads is zeroed. */
TEST(codegen_function_level_workspace) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "@T.prim_func\n"
                    "def k(A: T.Tensor((256,), 'float32'), B: T.Tensor((128,), 'float32')):\n"
                    "    part = T.alloc_global([2, 128], 'float32')\n"
                    "    with T.Kernel(2, threads=128) as bx:\n"
                    "        tx = T.get_thread_binding()\n"
                    "        part[bx, tx] = A[bx * 128 + tx] * 2\n"
                    "    with T.Kernel(1, threads=128) as bx:\n"
                    "        tx = T.get_thread_binding()\n"
                    "        B[tx] = part[0, tx] + part[1, tx]\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a", .no_jit = 1};
  ts_kernel *k = NULL;
  CHECK(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
  REQUIRE(cu != NULL);
  const char *decl = strstr(cu, "__device__ __align__(16) float k_kernel_0_ws_part[256];");
  const char *k1 = strstr(cu, "k_kernel_1(");
  CHECK(decl && !strstr(decl + 50, "ws_part[256]")); /* declared once */
  CHECK(k1 && strstr(k1, "float* part = k_kernel_0_ws_part;") != NULL);
  REQUIRE(k->nlaunches == 2);
  CHECK(k->launches[0].nworkspaces == 1 && !k->launches[0].workspaces[0].zero);
  CHECK(k->launches[1].nworkspaces == 0);
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* T.round rounds halfway cases to even (TVM's tir.round: nearbyint), or away from zero with
 * rounding_mode="ties-away-from-zero" (roundf); fp8 arithmetic is computed in float. */
TEST(codegen_round_modes_and_fp8_arithmetic) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "@T.prim_func\n"
                    "def k(A: T.Tensor((32,), 'float32'), B: T.Tensor((32,), 'float32'),\n"
                    "      C: T.Tensor((32,), 'float8_e4m3'), D: T.Tensor((32,), 'float8_e4m3')):\n"
                    "    with T.Kernel(1, threads=32) as bx:\n"
                    "        for i in T.Parallel(32):\n"
                    "            B[i] = T.round(A[i]) + T.round(A[i], 'ties-away-from-zero')\n"
                    "            D[i] = C[i] * C[i]\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a", .no_jit = 1};
  ts_kernel *k = NULL;
  CHECK(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
  REQUIRE(cu != NULL);
  CHECK(strstr(cu, "nearbyintf(A[") != NULL);
  CHECK(strstr(cu, "roundf(A[") != NULL);
  CHECK(strstr(cu, "ts::cast<__nv_fp8_e4m3>(ts::cast<float>(C[") != NULL);
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* 16-bit register arrays a thread indexes at run time are held in 32-bit words (ptxas of
 * CUDA 13.0 splits their 16-bit read-modify-writes into byte stores and loses the low byte:
 * cuda_wide16.c); arrays indexed statically or copied by vectors stay 16-bit. */
TEST(codegen_wide16_register_arrays) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "@T.prim_func\n"
                    "def k(A: T.Tensor((64, 8), 'float16'), B: T.Tensor((64,), 'float16')):\n"
                    "    with T.Kernel(1, threads=64) as bx:\n"
                    "        tx = T.get_thread_binding()\n"
                    "        row = T.alloc_local((64,), 'float16')\n"
                    "        st = T.alloc_local((8,), 'float16')\n"
                    "        vec = T.alloc_local((8,), 'float16')\n"
                    "        for e in T.serial(64):\n"
                    "            row[e] = 0.0\n"
                    "        for j in T.unroll(8):\n"
                    "            st[j] = A[tx, j]\n"
                    "            row[tx] = T.max(row[tx], st[j])\n"
                    "        for v in T.vectorized(8):\n"
                    "            vec[v] = A[tx, v]\n"
                    "        B[tx] = row[tx] + vec[tx % 8]\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a", .no_jit = 1};
  ts_kernel *k = NULL;
  CHECK(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  const char *cu = k ? ts_kernel_text(k, TS_EMIT_CUDA) : NULL;
  REQUIRE(cu != NULL);
  CHECK(strstr(cu, "unsigned int row[64]; /* half elements */") != NULL);
  CHECK(strstr(cu, "row[(int)threadIdx.x] = ts::to_word(ts::max(ts::from_word<half>(row[(int)threadIdx.x]),") != NULL);
  CHECK(strstr(cu, "half st[8];") != NULL);  /* statically indexed */
  CHECK(strstr(cu, "half vec[8];") != NULL); /* copied by a vector (and indexed by tx % 8) */
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}
