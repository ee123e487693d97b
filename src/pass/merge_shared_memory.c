/* merge_shared_memory.c — last pass: every shared.dyn buffer of a kernel becomes a byte
 * range of the one dynamic shared-memory allocation the kernel is launched with
 * (`extern __shared__ __align__(1024) uchar buf_dyn_shmem[]` in codegen).  Each buffer
 * starts on a 128-byte boundary, which covers 16-byte vector accesses and bank-aligned
 * rows; swizzled tiles (layout.h) on a 1024-byte one.  No reuse across lifetimes yet: offsets simply stack up. */
#include "../layout/layout.h"
#include "passes.h"

typedef struct Merge { TsCompiler *c; int64_t cur; } Merge;

static void merge_stmt(IrStmt *s, void *ctx) {
  Merge *m = ctx;
  if (s->kind != IR_S_ALLOC || s->u.alloc.buf->scope != IR_SCOPE_SHARED_DYN) return;
  IrBuffer *b = s->u.alloc.buf;
  if (b->alias_of) return; /* a view of another buffer's memory (codegen: a cast of its pointer) */
  int64_t n = ir_buffer_numel(b);
  if (n < 0) {
    ts_error(m->c, b->loc, "shared buffer '%s' needs a compile-time constant shape", b->name);
    return;
  }
  int64_t align = b->layout && b->layout->swizzle ? 1024 : 128; /* swizzles use address bits 4..9 */
  m->cur = (m->cur + align - 1) / align * align;
  b->smem_offset = m->cur;
  m->cur += n * dtype_bytes(b->dtype);
}

static void walk(TsCompiler *c, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_KERNEL) {
    Merge m = {c, 0};
    IrVisitor v = {merge_stmt, NULL, &m};
    ir_visit(s->u.kernel.body, &v);
    s->u.kernel.smem_bytes = m.cur;
    /* dynamic shared memory one block may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin) */
    int64_t cap = c->target.sm >= 90 ? 232448 : c->target.sm == 80 || c->target.sm == 87 ? 166912
                : c->target.sm >= 86 ? 101376 : 0;
    if (cap && m.cur > cap)
      ts_error(c, s->loc, "the kernel needs %lld bytes of shared memory; one block on sm_%d may have at most %lld "
               "(fewer pipeline stages or smaller tiles)", (long long)m.cur, c->target.sm, (long long)cap);
    return;
  }
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, s->u.seq.items[i]);
}

void pass_merge_shared_memory(TsCompiler *c, IrFunc *f) { walk(c, f->body); }
