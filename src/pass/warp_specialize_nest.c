/* warp_specialize_nest.c — the outer loops around a warp-specialized GEMM loop (part of
 * warp_specialize.c's pass): a user-written persistent kernel puts its pipelined K loop
 * inside a tile loop,
 *
 *   for w in T.serial(waves):                 # or T.Persistent(...), staged the same way
 *       tile = block_id + w * sm_num; bx = ...; by = ...
 *       if tile < ntiles:                     # or bx * block_M < M and ...
 *           T.clear(C_local); for k in T.Pipelined(...): copies; gemm;  epilogue
 *
 * warp_specialize then builds its schedule for the innermost sequence (the one holding the
 * pipelined loop) and both roles run this nest around their part: the producer thread
 * walks the same tiles and issues their loads, the consumers walk them with the K loop and
 * the epilogue.  That is only sound when both roles take the same path through the nest,
 * so every loop bound, condition and let on the way down must be uniform over the block
 * and computable by the producer: constants, parameters, block indices, the nest's own
 * loop variables and lets, pure operators — no loads (a value in memory may be written by
 * the consumers), no thread index.  The nest may hold only serial loops, ifs without
 * else, and lets beside the one statement that leads down; anything else keeps the
 * cp.async path (ws_nest_find returns false).  The stage counter runs on across the
 * nest's iterations (a local variable each role advances by the K loop's extent), so the
 * producer fills the next tile's first stages while the consumers run the epilogue. */
#include <string.h>

#include "passes.h"

#define WS_NEST_MAX_DEPTH 8

typedef struct Uniform {
  const WsNest *n;
  bool ok;
} Uniform;

static void uniform_expr(IrExpr *e, void *ctx) {
  Uniform *u = ctx;
  switch (e->kind) {
    case IR_VAR:
      switch (e->u.var->kind) {
        case IR_VAR_LET: if (!vec_has(&u->n->lets, e->u.var)) u->ok = false; break;
        case IR_VAR_LOOP: if (!vec_has(&u->n->loop_vars, e->u.var)) u->ok = false; break;
        case IR_VAR_PARAM: case IR_VAR_DYNAMIC: case IR_VAR_BLOCK_IDX: break;
        default: u->ok = false; break;
      }
      break;
    case IR_LOAD: u->ok = false; break;
    case IR_CALL:
      if (!ir_call_is_pure(e)) u->ok = false;
      break;
    default: break;
  }
}

/* Is e the same value in every thread of the block, and in the producer? */
static bool uniform(const WsNest *n, IrExpr *e) {
  Uniform u = {n, true};
  IrVisitor v = {NULL, uniform_expr, &u};
  ir_visit_expr(e, &v);
  return u.ok;
}

typedef struct HasLoop { bool found; } HasLoop;
static void pipelined_stmt(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PIPELINED) ((HasLoop *)ctx)->found = true;
}
static bool has_pipelined(IrStmt *s) {
  HasLoop h = {false};
  IrVisitor v = {pipelined_stmt, NULL, &h};
  ir_visit(s, &v);
  return h.found;
}

static bool descend(WsNest *n, IrStmt *s, int depth);

/* A sequence on the way down: the innermost one holds the pipelined loop itself; any other
 * holds uniform lets and the one statement that leads further down. */
static bool descend_seq(WsNest *n, IrStmt *s, int depth) {
  for (int i = 0; i < s->u.seq.n; i++) {
    IrStmt *x = s->u.seq.items[i];
    if (x->kind == IR_S_FOR && x->u.loop.kind == IR_FOR_PIPELINED) {
      n->inner = s;
      return true;
    }
  }
  IrStmt *down = NULL;
  for (int i = 0; i < s->u.seq.n; i++) {
    IrStmt *x = s->u.seq.items[i];
    if (x->kind == IR_S_LET && !down) { /* lets after the way down are not the producer's */
      if (!uniform(n, x->u.let.value)) return false;
      vec_push(n->arena, &n->lets, x->u.let.var);
      continue;
    }
    if (down || !has_pipelined(x)) return false;
    down = x;
  }
  return down && descend(n, down, depth + 1);
}

static bool descend(WsNest *n, IrStmt *s, int depth) {
  if (depth > WS_NEST_MAX_DEPTH) return false;
  vec_push(n->arena, &n->path, s);
  switch (s->kind) {
    case IR_S_SEQ: return descend_seq(n, s, depth);
    case IR_S_FOR:
      if (s->u.loop.kind != IR_FOR_SERIAL || !uniform(n, s->u.loop.min) || !uniform(n, s->u.loop.extent)) return false;
      vec_push(n->arena, &n->loop_vars, s->u.loop.var);
      return s->u.loop.body && s->u.loop.body->kind == IR_S_SEQ && descend(n, s->u.loop.body, depth + 1);
    case IR_S_IF:
      if (s->u.if_.else_s || !uniform(n, s->u.if_.cond)) return false;
      return s->u.if_.then_s && s->u.if_.then_s->kind == IR_S_SEQ && descend(n, s->u.if_.then_s, depth + 1);
    default: return false;
  }
}

/* The kernel body `body` (a SEQ): allocations and one statement, a nest around the
 * pipelined loop.  Fills n; false when the nest is not one both roles can run. */
bool ws_nest_find(TsCompiler *c, IrStmt *body, WsNest *n) {
  memset(n, 0, sizeof *n);
  n->arena = c->arena;
  if (!body || body->kind != IR_S_SEQ) return false;
  IrStmt *outer = NULL;
  for (int i = 0; i < body->u.seq.n; i++) {
    IrStmt *s = body->u.seq.items[i];
    if (s->kind == IR_S_ALLOC) continue;
    if (outer) return false;
    outer = s;
  }
  if (!outer || outer->kind == IR_S_SEQ || !has_pipelined(outer)) return false;
  if (!descend(n, outer, 0)) return false;
  /* the pipelined loop is the inner sequence's only one, and nothing else in it is a loop
   * with one inside */
  int loops = 0;
  for (int i = 0; i < n->inner->u.seq.n; i++) {
    IrStmt *x = n->inner->u.seq.items[i];
    if (x->kind == IR_S_ALLOC) return false;
    if (has_pipelined(x)) loops++;
  }
  return loops == 1;
}

static IrStmt *rebuild(TsCompiler *c, const WsNest *n, int depth, IrStmt *repl) {
  IrStmt *s = n->path.items[depth];
  if (s == n->inner) return repl;
  IrStmt *x = ir_stmt(c, s->kind, s->loc);
  *x = *s;
  switch (s->kind) {
    case IR_S_FOR: x->u.loop.body = rebuild(c, n, depth + 1, repl); break;
    case IR_S_IF: x->u.if_.then_s = rebuild(c, n, depth + 1, repl); break;
    case IR_S_SEQ: {
      IrStmt *next = n->path.items[depth + 1];
      x->u.seq.items = ARENA_ARRAY(c->arena, IrStmt *, s->u.seq.n);
      for (int i = 0; i < s->u.seq.n; i++)
        x->u.seq.items[i] = s->u.seq.items[i] == next ? rebuild(c, n, depth + 1, repl) : s->u.seq.items[i];
      break;
    }
    default: ts_unreachable();
  }
  return x;
}

/* The nest with its inner sequence replaced by `repl` (one role's part): a fresh copy of
 * every statement on the way down; lets beside it are shared with the other role's copy. */
IrStmt *ws_nest_wrap(TsCompiler *c, const WsNest *n, IrStmt *repl) { return rebuild(c, n, 0, repl); }
