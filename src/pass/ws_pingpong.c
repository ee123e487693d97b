/* ws_pingpong.c — opt-in (pass_configs ts.ws_pingpong; not yet measured on a GPU): the two
 * consumer warpgroups of a warp-specialized attention-style loop (warp_specialize_loop.c) take
 * turns on the tensor cores, as FlashAttention-3's "ping-pong" schedule does, so that one's
 * softmax runs while the other's GEMMs do.
 *
 * Each iteration of the consumers' loop becomes
 *
 *     wait for my turn        bar.sync   14 + wg, 256     (wg = warpgroup 0 or 1)
 *     issue the first GEMM    wgmma ... commit            (QKᵀ)
 *     give the other its turn bar.arrive 15 - wg, 256
 *     wait for the GEMM       wgmma.wait_group 0
 *     ... the rest of the body (softmax, the second GEMM) ...
 *
 * with warpgroup 1 arriving once on warpgroup 0's barrier before the loop (warpgroup 0 goes
 * first) and warpgroup 0 taking that last arrival after it, so every barrier's arrivals are
 * consumed.  A named barrier completes when 256 threads have arrived: the 128 of one warpgroup
 * waiting and the 128 of the other arriving.  Warpgroup 1 arrives on barrier 14 for turn k+1
 * only after its own turn k, which needed warpgroup 0's arrival after warpgroup 0's turn k: so
 * a barrier never holds two arrivals of the same warpgroup (which would complete it without
 * the waiter), and the turns alternate 0, 1, 0, 1, ...  No deadlock with the mbarrier ring:
 * a warpgroup waiting for its turn has released every stage the other needs to reach its own.
 *
 * Under ts.ws_intra_overlap the first GEMM is already an issue followed by the previous
 * iteration's PV issue: the turn covers both issues, as in FlashAttention-3.
 *
 * Taken when: the loop runs on exactly 256 consumer threads, its body holds at least two
 * GEMM statements (something to overlap besides the turn), the first at its top level, every
 * GEMM in it a wgmma split along M over the two warpgroups (each owns its rows: wm = 8 warps,
 * wn = 1), the loop bounds do not depend on the thread, the body has no barrier of its own and
 * no break or continue, and the consumers' code has no T.thread_return (a warpgroup that missed
 * a turn would leave the other waiting forever; thread_return_barriers also refuses these
 * barriers after a possible return).
 * Barrier ids 14 and 15: thread_sync numbers its barriers from 1 (consumers) and 2.. (T.ws
 * ranges, which a warp-specialized loop kernel does not have). */
#include "../layout/layout.h"
#include "passes.h"

#define PP_BAR0 14
#define PP_THREADS 256

typedef struct PpScan {
  int gemms;    /* GEMM statements anywhere in the body */
  bool bad;     /* a GEMM that is not an M-split wgmma, a barrier, a return, break or continue */
} PpScan;

static void scan_stmt(IrStmt *s, void *ctx) {
  PpScan *p = ctx;
  /* a thread that leaves, or an iteration cut short, would miss its turns: the other waits */
  if (s->kind == IR_S_RETURN || s->kind == IR_S_BREAK || s->kind == IR_S_CONTINUE) p->bad = true;
  if (s->kind == IR_S_GEMM) {
    const GemmPlan *g = s->u.gemm.plan;
    p->gemms++;
    if (!g || g->path != GEMM_WGMMA || g->wm != 8 || g->wn != 1) p->bad = true;
  }
}
/* Barriers among threads (the stage waits on mbarriers and __syncwarp are fine). */
static void scan_expr(IrExpr *e, void *ctx) {
  if (e->kind != IR_CALL) return;
  if (ir_call_has_flag(e, IRI_BLOCK_SYNC) || ir_is_device(e, IRD_NAMED_BARRIER_SYNC) ||
      (e->u.call.op == IRI_DEVICE && (ir_device_info[e->u.call.dop].flags & IRD_GRID_SYNC)))
    ((PpScan *)ctx)->bad = true;
}

/* The first top-level GEMM of the loop's body; -1 when the loop does not qualify.  kbody: the
 * consumers' whole code (a return anywhere in it refuses). */
static int first_gemm(const IrStmt *loop, IrStmt *kbody, const IrVar *tx, int64_t T) {
  IrStmt *body = loop->u.loop.body;
  if (T != PP_THREADS || body->kind != IR_S_SEQ || ir_expr_uses_var(loop->u.loop.min, tx) ||
      ir_expr_uses_var(loop->u.loop.extent, tx))
    return -1;
  PpScan p = {0}, k = {0};
  IrVisitor v = {scan_stmt, scan_expr, &p}, kv = {scan_stmt, NULL, &k};
  ir_visit(body, &v);
  ir_visit(kbody, &kv);
  if (k.bad) return -1;
  int first = -1, top = 0;
  for (int j = 0; j < body->u.seq.n; j++)
    if (body->u.seq.items[j]->kind == IR_S_GEMM && top++ == 0) first = j;
  if (p.bad || p.gemms < 2 || first < 0) return -1;
  int w = body->u.seq.items[first]->u.gemm.wg_wait;
  return w == 0 || w == -1 ? first : -1;
}

/* The end of the turn that starts with the issue at `g`: the last GEMM issue that follows it
 * with only stage waits between (ws_intra_overlap's `wait V(k-1); issue G2(k-1)`). */
static int turn_end(IrStmt *body, int g) {
  int end = g;
  for (int j = g + 1; j < body->u.seq.n; j++) {
    IrStmt *s = body->u.seq.items[j];
    if (s->kind == IR_S_GEMM && s->u.gemm.wg_wait == -1) end = j;
    else if (!(s->kind == IR_S_EVAL && ir_is_device(s->u.eval.value, IRD_MBAR_WAIT))) break;
  }
  return end;
}

/* 14 + (tx / 128): this warpgroup's barrier (mine = true) or the other's. */
static IrExpr *turn_id(TsCompiler *c, const IrVar *tx, bool mine, SrcLoc loc) {
  IrExpr *wg = ir_binary(c, IR_FLOORDIV, ir_varref(c, (IrVar *)tx, loc), ir_i32(c, 128), loc);
  if (!mine) wg = ir_binary(c, IR_SUB, ir_i32(c, 1), wg, loc);
  return ir_binary(c, IR_ADD, ir_i32(c, PP_BAR0), wg, loc);
}

static IrStmt *bar_op(TsCompiler *c, IrDeviceOp op, IrExpr *id, SrcLoc loc) {
  return pass_dev(c, op, PP_THREADS, 0, &id, 1, loc);
}

IrStmt *ws_pingpong(TsCompiler *c, const IrFunc *f, IrStmt *kbody, IrStmt *loop, const IrVar *tx, int64_t T) {
  if (!pass_config_on(f, "ts.ws_pingpong")) return loop;
  int g = first_gemm(loop, kbody, tx, T);
  if (g < 0) return loop;
  SrcLoc loc = loop->loc;
  IrStmt *body = loop->u.loop.body, *gemm = body->u.seq.items[g];
  PtrVec items = {0};
  /* the turn: the first GEMM's issue, and ws_intra_overlap's issue of the previous PV */
  bool issued = gemm->u.gemm.wg_wait == -1;
  int end = issued ? turn_end(body, g) : g;
  for (int j = 0; j < body->u.seq.n; j++) {
    IrStmt *s = body->u.seq.items[j];
    if (j == g) vec_push(c->arena, &items, bar_op(c, IRD_NAMED_BARRIER_SYNC_DYN, turn_id(c, tx, true, loc), loc));
    vec_push(c->arena, &items, j == g && !issued ? pass_gemm_half(c, gemm, -1) : s);
    if (j == end) vec_push(c->arena, &items, bar_op(c, IRD_NAMED_BARRIER_ARRIVE_DYN, turn_id(c, tx, false, loc), loc));
    if (j == g && !issued) vec_push(c->arena, &items, pass_gemm_half(c, gemm, -2));
  }
  IrStmt *r = ir_stmt(c, IR_S_FOR, loop->loc);
  *r = *loop;
  r->u.loop.body = ir_seq_vec(c, &items, loc);
  IrExpr *txr = ir_varref(c, (IrVar *)tx, loc);
  IrExpr *wg1 = ir_binary(c, IR_GE, txr, ir_i32(c, 128), loc), *wg0 = ir_binary(c, IR_LT, txr, ir_i32(c, 128), loc);
  IrStmt *before = ir_if(c, wg1, bar_op(c, IRD_NAMED_BARRIER_ARRIVE_DYN, ir_i32(c, PP_BAR0), loc), NULL, loc);
  IrStmt *after = ir_if(c, wg0, bar_op(c, IRD_NAMED_BARRIER_SYNC_DYN, ir_i32(c, PP_BAR0), loc), NULL, loc);
  return ir_seq(c, (IrStmt *[]){before, r, after}, 3, loc);
}
