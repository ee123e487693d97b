/* stage.c — the program being staged: statements appended to the IR block being traced,
 * the check that every staged expression stays within what the passes can walk, and the
 * scopes of IR definitions (a block's lets, loop variables and buffers end with it).
 *
 *   eval_stmt.c (loops, ifs, kernels) / builtin handlers  ->  ev_emit, ev_push_block, ev_pop_block
 *
 * Below the interpreter proper: it sees values (value.h) and IR, never syntax. */
#include <string.h>

#include "value.h"
#include "../ir/analysis.h"

/* Python code can stage expressions no pass could handle: sum() over 10**5 loads nests
 * 10**5 deep (the recursive passes overflow the C stack), and a helper that doubles
 * `e + e` sixty times is a DAG whose tree has 2**60 nodes (the passes walk trees, so
 * they never finish).  Every expression reaching a statement is checked within a bounded
 * walk: deeper than IR_MAX_DEPTH or larger than IR_MAX_NODES as a tree is an error. */
enum { IR_MAX_DEPTH = 1000, IR_MAX_NODES = 1000000 };

/* True when e is deeper than IR_MAX_DEPTH or, as a tree, has more than *budget nodes. */
static bool ir_expr_too_big(const IrExpr *e, int depth, int64_t *budget) {
  if (!e) return false;
  if (depth > IR_MAX_DEPTH || --*budget < 0) return true;
  switch (e->kind) {
  case IR_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (ir_expr_too_big(e->u.call.args[i], depth + 1, budget)) return true;
    return false;
  case IR_LOAD:
    for (int i = 0; i < e->u.load.nidx; i++)
      if (ir_expr_too_big(e->u.load.idx[i], depth + 1, budget)) return true;
    return false;
  default:
    for (int i = 0; i < ir_expr_nops[e->kind] && i < 3; i++)
      if (ir_expr_too_big(e->u.ops[i], depth + 1, budget)) return true;
    return false;
  }
}

/* The expressions a statement holds are within the limits (reported at the statement). */
static bool stmt_exprs_ok(Eval *ev, const IrStmt *s) {
  const IrExpr *es[4] = {0};
  int n = 0;
  switch (s->kind) {
  case IR_S_STORE:
    es[n++] = s->u.store.value;
    for (int i = 0; i < s->u.store.nidx && n < 4; i++) es[n++] = s->u.store.idx[i];
    break;
  case IR_S_LET: es[n++] = s->u.let.value; break;
  case IR_S_EVAL: es[n++] = s->u.eval.value; break;
  case IR_S_IF: es[n++] = s->u.if_.cond; break;
  case IR_S_WHILE: es[n++] = s->u.while_.cond; break;
  case IR_S_ASSERT: es[n++] = s->u.assert_.cond; break;
  case IR_S_FILL: es[n++] = s->u.fill.value; break;
  case IR_S_FOR: es[n++] = s->u.loop.min; es[n++] = s->u.loop.extent; break;
  default: break;
  }
  for (int i = 0; i < n; i++) {
    int64_t budget = IR_MAX_NODES;
    if (ir_expr_too_big(es[i], 0, &budget)) {
      ts_error(ev->c, s->loc, "expression too large to compile (more than %d operations, or nested more than %d deep)",
               IR_MAX_NODES, IR_MAX_DEPTH);
      return false;
    }
  }
  return true;
}

/* `x = v` into a T.alloc_var b: one store of v, converted to b's dtype. */
bool ev_store_var(Eval *ev, IrBuffer *b, Value *v, SrcLoc loc) {
  if (!ev->block) {
    ts_error(ev->c, loc, "cannot assign to T.alloc_var '%s' outside a kernel", b->name);
    return false;
  }
  IrExpr *e = ev_to_ir(ev, v, NULL, loc);
  if (!e) return false;
  IrExpr **idx = ARENA_ARRAY(ev->a, IrExpr *, 1);
  idx[0] = ir_int(ev->c, 0, TS_DTYPE_INT32, loc);
  ev_emit(ev, ir_store(ev->c, b, idx, 1, ir_cast(ev->c, b->dtype, e, loc), loc));
  return true;
}

/* A read of a reducer's element between T.reducer_init and T.finalize_reducer (Eval.reducer_reads)
 * that s uses: each thread's partial value, not the reduction.  Reported once. */
typedef struct ReducerRead { const PtrVec *reads; const IrExpr *found; } ReducerRead;
static void find_reducer_read(IrExpr *e, void *ctx) {
  ReducerRead *r = ctx;
  if (!r->found && e->kind == IR_LOAD && vec_has(r->reads, e)) r->found = e;
}
static bool reducer_reads_ok(Eval *ev, IrStmt *s) {
  if (!ev->reducer_reads.len) return true;
  ReducerRead r = {&ev->reducer_reads, NULL};
  IrVisitor v = {NULL, find_reducer_read, &r};
  ir_visit(s, &v);
  if (!r.found) return true;
  const IrBuffer *b = r.found->u.load.buf;
  ts_error(ev->c, r.found->loc, "illegal read of reducer '%s' before T.finalize_reducer: between T.reducer_init and "
           "the finalize each thread holds only its partial value; read the finalized result", b->name);
  ev->reducer_reads.len = 0;
  return false;
}

/* Appends s to the block being traced. */
void ev_emit(Eval *ev, IrStmt *s) {
  if (!s) return;
  TS_ASSERT(ev->block);
  if (!stmt_exprs_ok(ev, s) || !reducer_reads_ok(ev, s)) return;
  vec_push(ev->a, ev->block, s);
}

/* `what` is only legal inside a T.Kernel of a prim_func: false (reported) otherwise. */
bool ev_need_kernel(Eval *ev, const char *what, SrcLoc loc) {
  if (ev->block && ev->kernel) return true;
  if (!ev->block)
    ts_error(ev->c, loc, "%s can only be used inside a @T.prim_func kernel", what);
  else
    ts_error(ev->c, loc, "%s must be inside a 'with T.Kernel(...)' block", what);
  return false;
}

/* IR definitions (lets, loop and block variables, allocations) are visible only inside
 * the block that defines them, while Python names outlive it.  Each block records what
 * it defines; when it closes, names still bound to those definitions are replaced by an
 * opaque value, so a later use is a diagnostic instead of malformed IR. */
void ev_define_var(Eval *ev, IrVar *v) {
  if (ev->scope) vec_push(ev->a, &ev->scope->vars, v);
}
void ev_define_buffer(Eval *ev, IrBuffer *b) {
  if (ev->scope) vec_push(ev->a, &ev->scope->bufs, b);
}

/* Opens a fresh IR block (a loop body, a branch, a kernel): statements go there until
 * ev_pop_block. */
BlockSave ev_push_block(Eval *ev) {
  BlockSave saved = {ev->block, ev->scope};
  ev->block = ARENA_NEW(ev->a, PtrVec);
  ev->scope = ARENA_NEW(ev->a, DefScope);
  ev->scope->outer_block = saved.block;
  ev->scope->outer_scope = saved.scope;
  return saved;
}

/* e refers to a variable or buffer that scope sc defines. */
static bool expr_uses(const IrExpr *e, const DefScope *sc) {
  if (!e) return false;
  switch (e->kind) {
  case IR_VAR:
    for (int i = 0; i < sc->vars.len; i++)
      if (sc->vars.items[i] == e->u.var) return true;
    return false;
  case IR_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (expr_uses(e->u.call.args[i], sc)) return true;
    return false;
  case IR_LOAD:
    for (int i = 0; i < sc->bufs.len; i++)
      if (sc->bufs.items[i] == e->u.load.buf) return true;
    for (int i = 0; i < e->u.load.nidx; i++)
      if (expr_uses(e->u.load.idx[i], sc)) return true;
    return false;
  default:
    for (int i = 0; i < ir_expr_nops[e->kind] && i < 3; i++)
      if (expr_uses(e->u.ops[i], sc)) return true;
    return false;
  }
}

static bool value_uses(const Value *v, const DefScope *sc) {
  if (!v) return false;
  switch (v->kind) {
  case V_EXPR: return expr_uses(v->u.expr, sc);
  case V_BUFFER:
    for (int i = 0; i < sc->bufs.len; i++)
      if (sc->bufs.items[i] == v->u.buf) return true;
    return false;
  case V_TUPLE:
    for (int i = 0; i < v->u.seq.n; i++)
      if (value_uses(v->u.seq.items[i], sc)) return true;
    return false;
  default: return false;
  }
}

/* Closes the block: its statements as one SEQ, and names in `env` (up to the globals) that
 * still refer to its definitions made opaque ("'x' is defined inside a loop ..."). */
IrStmt *ev_pop_block(Eval *ev, BlockSave saved, Env *env, const char *what, SrcLoc loc) {
  IrStmt *s = ir_seq_vec(ev->c, ev->block, loc);
  DefScope *sc = ev->scope;
  if (sc->vars.len || sc->bufs.len)
    for (Env *e = env; e && e != ev->globals; e = e->parent)
      for (int i = 0; i < e->vars.cap; i++) {
        StrMapEntry *slot = &e->vars.slots[i];
        if (slot->key && value_uses(slot->value, sc)) {
          Value *o = ev_opaque(ev, arena_printf(ev->a, "'%s' is defined inside a %s and cannot be used after it",
                                                slot->key, what));
          o->u.opaque.at_name = true;
          slot->value = o;
        }
      }
  ev->block = saved.block;
  ev->scope = saved.scope;
  return s;
}

/* ---- running statements ------------------------------------------------------------------ */
/* Runs statements in order (through ev->exec_stmt, eval_stmt.c) until one returns, breaks or
 * continues; past 50 errors it stops (a runaway loop must not bury the first diagnostic). */
ExecStatus ev_exec_block(Eval *ev, Env *env, const AstList *body) {
  for (int i = 0; i < body->n; i++) {
    ExecStatus st = ev->exec_stmt(ev, env, body->items[i]);
    if (st != EX_NORMAL) return st;
    if (ev->c->diag.errors >= 50) return EX_RETURN; /* runaway: stop producing noise */
  }
  return EX_NORMAL;
}
