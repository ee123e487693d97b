/* pipeline_serial.c — ts.pipeline_serial_loops (on unless pass_configs set it False): a
 * T.serial loop whose body copies tiles from global to shared memory becomes
 * T.Pipelined(num_stages=2), so that inject_pipeline loads iteration k+1's tiles while
 * iteration k computes.  norm/layernorm.py's backward walks its rows this way, each row's
 * dY and X copied synchronously before the arithmetic: one row's loads in flight per SM
 * (measured on an H200: 2052 -> 2794 GB/s, 1.36x, in the same run, with two stages).
 *
 * Two stages, or more (up to ts.pipeline_serial_max_stages, default 4) where the extra stages
 * cost no occupancy the grid needs: the blocks an SM holds stay those of two stages, or every
 * block of a constant grid is still resident at once on the target's SMs (layernorm bwd: 128
 * blocks, one per SM with any stage count, so a third stage is free).
 *
 * Taken where shared memory has room for a second copy of those tiles (the kernel's shared
 * allocations all of constant size, a margin left for the scratch later passes add), in
 * kernels that schedule no warpgroups of their own (T.ws) and are not warp-specialized, for
 * the outermost such loop of a nest.  Whether the loop can be pipelined at all stays
 * inject_pipeline's decision: it leaves a loop serial when its tiles are used outside it. */
#include "passes.h"

#define PIPELINE_SERIAL_SLACK 8192 /* bytes kept free for reduction scratch and barriers */

typedef struct Smem {
  int64_t bytes;
  bool known;
} Smem;

/* A buffer's bytes; -1 when its shape is not constant. */
static int64_t buffer_bytes(const IrBuffer *b) {
  int64_t n = ir_buffer_numel(b);
  return n < 0 ? -1 : dtype_storage_bytes(b->dtype, n);
}

static void count_shared(IrStmt *s, void *ctx) {
  Smem *m = ctx;
  if (s->kind != IR_S_ALLOC || !pass_is_shared(s->u.alloc.buf) || s->u.alloc.buf->alias_of) return;
  int64_t n = buffer_bytes(s->u.alloc.buf);
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
    if (s->kind != IR_S_COPY || s->u.copy.src.buf->scope != IR_SCOPE_GLOBAL || !pass_is_shared(s->u.copy.dst.buf)) continue;
    int64_t b = buffer_bytes(ir_buffer_root(s->u.copy.dst.buf));
    if (b < 0) return 0;
    extra += b;
  }
  return extra;
}

typedef struct Conv {
  TsCompiler *c;
  int64_t cap, used, threads, blocks; /* blocks: the constant grid's, or -1 */
  int max_stages;
} Conv;

/* Whether shared memory of `used` bytes (the slack added) fits a block, and keeps the blocks
 * an SM holds at two stages' `two`, or keeps the whole grid resident. */
static bool stages_fit(const Conv *cv, int64_t used, int64_t two) {
  if (used + PIPELINE_SERIAL_SLACK > cv->cap) return false;
  int64_t per_sm = pass_blocks_per_sm(cv->c, used + PIPELINE_SERIAL_SLACK, cv->threads);
  return per_sm >= two || (cv->blocks > 0 && per_sm * pass_sm_count(cv->c) >= cv->blocks);
}

/* The stages a loop whose tiles take `extra` bytes a stage gets: 0 when two do not fit. */
static int choose_stages(const Conv *cv, int64_t extra) {
  if (cv->used + extra + PIPELINE_SERIAL_SLACK > cv->cap) return 0;
  int64_t two = pass_blocks_per_sm(cv->c, cv->used + extra + PIPELINE_SERIAL_SLACK, cv->threads);
  int s = 2;
  while (s < cv->max_stages && stages_fit(cv, cv->used + (int64_t)s * extra, two)) s++;
  return s;
}

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
      if (s->u.loop.kind == IR_FOR_PIPELINED) return; /* scheduled as written */
      int64_t extra = s->u.loop.kind == IR_FOR_SERIAL ? second_stage_bytes(s->u.loop.body) : 0;
      int stages = extra > 0 ? choose_stages(cv, extra) : 0;
      if (stages) {
        s->u.loop.kind = IR_FOR_PIPELINED;
        s->u.loop.num_stages = stages;
        cv->used += (stages - 1) * extra;
        return;
      }
      convert(cv, s->u.loop.body);
      return;
    }
    default:
      return;
  }
}

/* The constant number of blocks of kernel k's grid, or -1. */
static int64_t grid_blocks(const IrKernel *k) {
  int64_t n = 1, d;
  for (int i = 0; i < 3; i++) {
    if (!k->grid[i]) continue;
    if (!ir_is_const_int(k->grid[i], &d) || d <= 0 || d > (INT64_C(1) << 31)) return -1;
    n *= d;
  }
  return n;
}

static void walk(TsCompiler *c, const IrFunc *f, IrStmt *s) {
  if (!s) return;
  if (s->kind == IR_S_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) walk(c, f, s->u.seq.items[i]);
  if (s->kind != IR_S_KERNEL) return;
  IrKernel *k = &s->u.kernel;
  if (k->manual_ws || k->producer_threads) return;
  Smem m = {0, true};
  IrVisitor v = {count_shared, NULL, &m};
  ir_visit(k->body, &v);
  int64_t max_stages = pass_config_int(f, "ts.pipeline_serial_max_stages", 4);
  Conv cv = {c, pass_smem_cap(c), m.bytes, pass_kernel_threads(k), grid_blocks(k),
             (int)(max_stages < 2 ? 2 : max_stages > 8 ? 8 : max_stages)};
  if (m.known && cv.cap > 0) convert(&cv, k->body);
}

void pass_pipeline_serial_loops(TsCompiler *c, IrFunc *f) {
  if (pass_config_state(f, "ts.pipeline_serial_loops") != 0) walk(c, f, f->body);
}
