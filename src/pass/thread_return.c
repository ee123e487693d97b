/* thread_return.c — what may follow T.thread_return() (IR_S_RETURN: the thread leaves the
 * kernel, CUDA's `return;`), checked twice in the pipeline:
 *
 *   thread_return_tiles     (first pass, on tile IR)  tile operations — T.copy, T.fill, the
 *                           reductions, T.gemm, tile atomics, T.Parallel nests — spread their
 *                           work over every thread of the block: after a possible return the
 *                           part of the threads that left would silently stay undone.  A return
 *                           inside T.Parallel is refused too (the thread would skip the other
 *                           iterations mapped to it).
 *   thread_return_barriers  (last pass, on thread IR)  a block-wide barrier — __syncthreads
 *                           (the user's or one thread_sync / merge_shared_memory placed), a
 *                           named barrier, a cluster or grid barrier, a block-collective device
 *                           call — after a possible return waits for threads that never arrive
 *                           (bar.sync counts the whole CTA: a hang or undefined behaviour).
 *
 * Both are refused with a diagnostic naming the return's line: the user moves the return after
 * the collective work, or guards the remaining work with an `if` instead.  "After" is program
 * order: a walk carries whether a return may have run; an `if` joins its branches; a loop whose
 * body may return is walked with it set from its start (the next iteration follows the return).
 * A function without a return is not walked. */
#include <string.h>

#include "passes.h"

typedef struct RetWalk {
  TsCompiler *c;
  bool tiles;      /* which check: tile operations (true) or barriers */
  SrcLoc ret;      /* the first return of the kernel, for the message */
  bool reported;   /* one diagnostic per kernel */
} RetWalk;


/* A call every thread of the block (or of a named-barrier group) must reach. */
static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}
static void find_block_barrier(IrExpr *e, void *ctx) {
  if (e->kind != IR_CALL) return;
  if (ir_call_has_flag(e, IRI_BLOCK_SYNC)) *(bool *)ctx = true;
  if (e->u.call.op != IRI_DEVICE) return;
  IrDeviceOp op = e->u.call.dop;
  const char *name = ir_device_info[op].name;
  /* the device library's *_block / *_blocks / *_barrier_gpu / sync_grid calls run
   * __syncthreads inside (device/tilescale/dist*.cuh) */
  if (op == IRD_NAMED_BARRIER_SYNC || op == IRD_NAMED_BARRIER_SYNC_DYN || op == IRD_NAMED_BARRIER_ARRIVE_DYN ||
      op == IRD_BAR_SYNC || op == IRD_CLUSTER_SYNC ||
      (ir_device_info[op].flags & IRD_GRID_SYNC) || ends_with(name, "_block") || ends_with(name, "_blocks") ||
      ends_with(name, "_barrier_gpu"))
    *(bool *)ctx = true;
}

static const char *tile_op_name(const IrStmt *s) {
  switch (s->kind) {
    case IR_S_COPY: return "T.copy";
    case IR_S_FILL: return "T.fill";
    case IR_S_REDUCE: return "a reduction";
    case IR_S_GEMM: return "T.gemm";
    case IR_S_ATOMIC: return s->u.atomic.tile ? "a tile atomic" : NULL;
    case IR_S_FOR: return s->u.loop.kind == IR_FOR_PARALLEL ? "a T.Parallel loop" : NULL;
    default: return NULL;
  }
}

static void report(RetWalk *w, SrcLoc loc, const char *what) {
  if (w->reported) return;
  w->reported = true;
  if (w->tiles)
    ts_error(w->c, loc,
             "%s after T.thread_return() (line %d): its work is spread over every thread of the block, and the "
             "threads that returned would leave their part undone (return after the tile operations, or guard the "
             "remaining work with an if)",
             what, w->ret.line);
  else
    ts_error(w->c, loc,
             "a block-wide barrier is needed here, after T.thread_return() (line %d): the threads that returned "
             "would never reach it (return after the last shared-memory exchange, or guard the remaining work with "
             "an if instead of returning)",
             w->ret.line);
}

/* Walks s with `after` = a return may have run before it; returns the same after s. */
static bool walk(RetWalk *w, IrStmt *s, bool after) {
  if (!s) return after;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) after = walk(w, s->u.seq.items[i], after);
      return after;
    case IR_S_KERNEL: {
      bool reported = w->reported;
      w->reported = false;
      w->ret = SRCLOC_NONE;
      walk(w, s->u.kernel.body, false); /* each launch starts with every thread */
      w->reported |= reported;
      return after;
    }
    case IR_S_RETURN:
      if (!after) w->ret = s->loc;
      return true;
    case IR_S_IF: {
      bool a = walk(w, s->u.if_.then_s, after), b = walk(w, s->u.if_.else_s, after);
      return a || b;
    }
    case IR_S_WHILE: {
      SrcLoc first = SRCLOC_NONE;
      bool loops = pass_has_return(s->u.while_.body, &first);
      if (loops && !after) w->ret = first;
      walk(w, s->u.while_.body, after || loops);
      return after || loops;
    }
    case IR_S_FOR: {
      SrcLoc first = SRCLOC_NONE;
      bool inner = pass_has_return(s->u.loop.body, &first);
      if (inner && !after) w->ret = first;
      if (w->tiles && s->u.loop.kind == IR_FOR_PARALLEL) {
        if (inner && !w->reported) {
          ts_error(w->c, first, "T.thread_return() inside T.Parallel is not supported: the loop's iterations are "
                                "spread over the threads, and a return would skip the others mapped to the same thread");
          w->reported = true;
        } else if (after) {
          report(w, s->loc, "a T.Parallel loop");
        }
        return after || inner;
      }
      walk(w, s->u.loop.body, after || inner);
      return after || inner;
    }
    default: break;
  }
  if (!after) return false;
  if (w->tiles) {
    const char *what = tile_op_name(s);
    if (what) report(w, s->loc, what);
  } else {
    bool barrier = false;
    IrVisitor v = {NULL, find_block_barrier, &barrier};
    ir_visit(s, &v);
    if (barrier) report(w, s->loc, NULL);
  }
  return true;
}

static void check(TsCompiler *c, IrFunc *f, bool tiles) {
  if (!pass_has_return(f->body, NULL)) return;
  RetWalk w = {c, tiles, SRCLOC_NONE, false};
  walk(&w, f->body, false);
}

void pass_thread_return_tiles(TsCompiler *c, IrFunc *f) { check(c, f, true); }
void pass_thread_return_barriers(TsCompiler *c, IrFunc *f) { check(c, f, false); }
