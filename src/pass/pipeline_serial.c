/* pipeline_serial.c — ts.pipeline_serial_loops (on unless pass_configs set it False): a
 * T.serial loop (or a T.Pipelined one of num_stages=0, which TileLang runs serially) whose
 * body copies tiles from global to shared memory becomes T.Pipelined(num_stages=2), so that
 * inject_pipeline loads iteration k+1's tiles while iteration k computes.  norm/layernorm.py's
 * backward walks its rows this way, each row's dY and X copied synchronously before the
 * arithmetic: one row's loads in flight per SM (measured on an H200: 2052 -> 2794 GB/s, 1.36x,
 * in the same run).  Four stages there measured the same as two (2789 against 2780 GB/s), so
 * the loop gets two.  gemm_splitk writes its K loop num_stages=0 around synchronous tile
 * copies: 1.16x at 1024^3 and 1.26x at 4096^3 pipelined (H200, same run).
 *
 * Taken where shared memory has room for a second copy of those tiles (the kernel's shared
 * allocations all of constant size, a margin left for the scratch later passes add), in
 * kernels that schedule no warpgroups of their own (T.ws) and are not warp-specialized, for
 * the outermost such loop of a nest.  Whether the loop can be pipelined at all stays
 * inject_pipeline's decision: it leaves a loop serial when its tiles are used outside it.
 *
 * A serial loop whose body may wait for other blocks or ranks (a while loop, distributed or
 * grid-wide operations, extern calls) is left alone: the wait may be for the flag that
 * publishes the next tile, which a prefetch would overtake.  (A body that writes a tensor its
 * copies read is inject_pipeline's to refuse: it pipelines only copies of unwritten memory.) */
#include "passes.h"

#define PIPELINE_SERIAL_SLACK 8192 /* bytes kept free for reduction scratch and barriers */

typedef struct Smem {
  int64_t bytes;
  bool known;
} Smem;

static void count_shared(IrStmt *s, void *ctx) {
  Smem *m = ctx;
  if (s->kind != IR_S_ALLOC || !pass_is_shared(s->u.alloc.buf) || s->u.alloc.buf->alias_of) return;
  int64_t n = ir_buffer_bytes(s->u.alloc.buf);
  if (n < 0) m->known = false;
  else m->bytes += n;
}

/* The bytes a second stage of the body's global-to-shared copies would add; 0 for none. */
static int64_t second_stage_bytes(const IrStmt *body) {
  IrStmt *const *items = body->kind == IR_S_SEQ ? body->u.seq.items : (IrStmt *const *)&body;
  int n = body->kind == IR_S_SEQ ? body->u.seq.n : 1;
  int64_t extra = 0;
  for (int i = 0; i < n; i++) {
    const IrStmt *s = items[i];
    if (s->kind != IR_S_COPY || s->u.copy.src.buf->scope != IR_SCOPE_GLOBAL || !pass_is_shared(s->u.copy.dst.buf))
      continue;
    int64_t b = ir_buffer_bytes(ir_buffer_root(s->u.copy.dst.buf));
    if (b < 0) return 0;
    extra += b;
  }
  return extra;
}

/* T.Pipelined(num_stages=0) without order/stage lists: a serial loop, as TileLang defines it. */
static bool unstaged(const IrStmt *s) {
  return s->u.loop.kind == IR_FOR_PIPELINED && s->u.loop.num_stages == 0 && !s->u.loop.norder;
}

typedef struct Conv {
  int64_t cap, used;
} Conv;

static void convert(Conv *cv, IrStmt *s) {
  if (!s) return;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) convert(cv, s->u.seq.items[i]);
      return;
    case IR_S_IF:
      convert(cv, s->u.if_.then_s), convert(cv, s->u.if_.else_s);
      return;
    case IR_S_FOR: {
      bool serial = s->u.loop.kind == IR_FOR_SERIAL || unstaged(s);
      if (s->u.loop.kind == IR_FOR_PIPELINED && !serial) return; /* scheduled as written */
      int64_t extra = serial ? second_stage_bytes(s->u.loop.body) : 0;
      if (extra > 0 && cv->used + extra + PIPELINE_SERIAL_SLACK <= cv->cap && !pass_may_wait(s->u.loop.body)) {
        s->u.loop.kind = IR_FOR_PIPELINED;
        s->u.loop.num_stages = 2;
        cv->used += extra;
        return;
      }
      convert(cv, s->u.loop.body);
      return;
    }
    default:
      return;
  }
}

static void walk(TsCompiler *c, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, s->u.seq.items[i]);
  if (s->kind != IR_S_KERNEL) return;
  IrKernel *k = &s->u.kernel;
  if (k->manual_ws || k->producer_threads) return;
  Smem m = {0, true};
  IrVisitor v = {count_shared, NULL, &m};
  ir_visit(k->body, &v);
  Conv cv = {pass_smem_cap(c), m.bytes};
  if (m.known && cv.cap > 0) convert(&cv, k->body);
}

void pass_pipeline_serial_loops(TsCompiler *c, IrFunc *f) {
  if (pass_config_state(f, "ts.pipeline_serial_loops") != 0) walk(c, f->body);
}
