/* test_view_layouts.c — T.view / T.reshape of a swizzled shared buffer (pass view_layouts):
 * the view reads the bytes its base wrote, in the base's swizzle.  Kernels in TileLang syntax
 * go through the front end and the whole pass pipeline; the same-dtype case runs in the
 * interpreter (interp.h) against the input, the dtype-changing case (bits the interpreter does
 * not model) is checked byte by byte through both buffers' layouts. */
#include <stdlib.h>
#include <string.h>

#include "../../src/ir/analysis.h"
#include "../../src/layout/layout.h"
#include "interp.h"
#include "test.h"

#define HEAD "import tilelang\nimport tilelang.language as T\n\n\n@tilelang.jit\n"

/* A [64 x 64] tile annotated swizzled, filled by T.copy and read back through a view. */
static const char VIEWS[] =
    HEAD
    "def regroup():\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((64, 64), T.float16), B: T.Tensor((2, 32, 64), T.float16)):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            S = T.alloc_shared((64, 64), T.float16)\n"
    "            V = T.view(S, (2, 32, 64))\n"
    "            T.annotate_layout({S: tilelang.layout.make_swizzled_layout(S)})\n"
    "            T.copy(A, S)\n"
    "            T.copy(V, B)\n"
    "    return main\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def narrow():\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64, 128), T.bfloat16)):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            S = T.alloc_shared((64, 64), T.float32)\n"
    "            V = T.view(S, (64, 128), dtype=T.bfloat16)\n"
    "            T.annotate_layout({S: tilelang.layout.make_swizzled_layout(S)})\n"
    "            T.copy(A, S)\n"
    "            T.copy(V, B)\n"
    "    return main\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def flat():\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((64, 64), T.float16), B: T.Tensor((4096,), T.float16)):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            S = T.alloc_shared((64, 64), T.float16)\n"
    "            V = T.view(S, (4096,))\n"
    "            T.annotate_layout({S: tilelang.layout.make_swizzled_layout(S)})\n"
    "            T.copy(A, S)\n"
    "            T.copy(V, B)\n"
    "    return main\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def pinned_view():\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16)):\n"
    "        with T.Kernel(1, threads=128):\n"
    "            S = T.alloc_shared((64, 64), T.float16)\n"
    "            V = T.view(S, (2, 32, 64))\n"
    "            T.annotate_layout({V: tilelang.layout.make_swizzled_layout(V)})\n"
    "            T.copy(A, S)\n"
    "            T.copy(S, B)\n"
    "    return main\n";

static IrFunc *compile(TsCompiler *c, const char *func) {
  ts_compiler_init(c, (TsTarget){90, true});
  c->debug = true;
  SourceFile file = {"views.py", VIEWS, sizeof VIEWS - 1};
  const char *none[] = {NULL};
  return interp_compile(c, &file, func, none);
}

static IrBuffer *param(IrFunc *f, const char *name) {
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i].buf && !strcmp(f->params[i].buf->name, name)) return f->params[i].buf;
  return NULL;
}

typedef struct Find { const char *name; IrBuffer *b; } Find;
static void find_alloc(IrStmt *s, void *ctx) {
  Find *f = ctx;
  if (s->kind == IR_S_ALLOC && !strcmp(s->u.alloc.buf->name, f->name)) f->b = s->u.alloc.buf;
}
static IrBuffer *local(IrFunc *f, const char *name) {
  Find fd = {name, NULL};
  IrVisitor v = {find_alloc, NULL, &fd};
  ir_visit(f->body, &v);
  return fd.b;
}

/* Through a view of another shape of a swizzled [64 x 64] float16 tile, B must be A, read
 * from the swizzled bytes (before view_layouts, the view read them row-major). */
static void same_dtype_view(TestCtx *t, const char *func) {
  TsCompiler c;
  IrFunc *f = compile(&c, func);
  REQUIRE(f);
  IrBuffer *S = local(f, "S"), *V = local(f, "V");
  REQUIRE(S && V && S->layout && V->layout);
  CHECK(S->layout->swizzle == 128 && V->layout->swizzle == 128);
  Interp in = {0};
  double *a = interp_global(&in, param(f, "A")), *b = interp_global(&in, param(f, "B"));
  for (int e = 0; e < 64 * 64; e++) a[e] = (double)((e * 37) % 1009);
  interp_run(&in, f);
  CHECK(in.errors == 0 && in.races == 0);
  int bad = 0;
  for (int e = 0; e < 64 * 64; e++) bad += b[e] != a[e];
  CHECK(bad == 0);
  Mem *m = interp_mem(&in, S); /* the tile really is stored swizzled */
  int misplaced = 0;
  for (int r = 0; r < 64; r++)
    for (int col = 0; col < 64; col++) misplaced += m->data[layout_offset_const(S->layout, r, col)] != a[r * 64 + col];
  CHECK(misplaced == 0);
  interp_free(&in);
  ts_compiler_fini(&c);
}

TEST(view_of_swizzled_tile_regrouped) { same_dtype_view(t, "regroup"); }
TEST(view_of_swizzled_tile_flattened) { same_dtype_view(t, "flat"); }

/* A bfloat16 view of a swizzled float32 tile: every bfloat16 element of the view sits in the
 * bytes of the float32 element (and half) it reinterprets. */
TEST(view_of_swizzled_tile_retyped) {
  TsCompiler c;
  IrFunc *f = compile(&c, "narrow");
  REQUIRE(f);
  IrBuffer *S = local(f, "S"), *V = local(f, "V");
  REQUIRE(S && V && S->layout && V->layout);
  CHECK(V->layout->swizzle == S->layout->swizzle && V->layout->elem_bytes == 2);
  int bad = 0;
  for (int r = 0; r < 64; r++)
    for (int col = 0; col < 128; col++) {
      int64_t view_byte = layout_offset_const(V->layout, r, col) * 2;
      int64_t base_byte = layout_offset_const(S->layout, r, col / 2) * 4 + (col % 2) * 2;
      bad += view_byte != base_byte;
    }
  CHECK(bad == 0);
  ts_compiler_fini(&c);
}

/* A swizzle pinned on a view whose rows are not its base's cannot be given to the base (whose
 * own accesses keep its shape): an error at the view. */
TEST(view_with_swizzle_for_base_of_other_rows_is_an_error) {
  TsCompiler c;
  IrFunc *f = compile(&c, "pinned_view");
  CHECK(f == NULL);
  const char *d = sb_str(&c.diag.out);
  CHECK(strstr(d, "views.py:50:17: error: shared buffer 'V' is a view of 'S', which has a 128-byte swizzled layout, "
                  "but its rows differ from the base's") != NULL);
  ts_compiler_fini(&c);
}
