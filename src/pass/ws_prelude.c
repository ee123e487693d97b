/* ws_prelude.c — the scalar code before a warp-specialized loop that its producer repeats.
 *
 * Kernels often compute the scalars a pipelined loop's loads depend on before the loop, in
 * T.alloc_var variables: the batch a grouped GEMM's block belongs to (a serial loop over the
 * batch offsets), the key range of an indexer's queries (min / max over sequence starts).  The
 * producer warpgroup runs none of the consumers' code, so it repeats those statements on its
 * own registers: every top-level statement before the loop whose stores all go to variables,
 * made only of serial loops, ifs and lets, and whose reads are of tensors nothing writes, of
 * such variables, block indices, parameters and dynamic sizes.  A variable is the producer's
 * to read when every statement that writes it is such a statement (worked out to a fixpoint:
 * a statement reading a variable that is not drops the variables it writes). */
#include "passes.h"

/* the index of the kernel body's pipelined loop (top level), or the body's length */
static int loop_index(IrStmt *kbody) {
  for (int i = 0; i < kbody->u.seq.n; i++) {
    IrStmt *s = kbody->u.seq.items[i];
    if (s->kind == IR_S_FOR && s->u.loop.kind == IR_FOR_PIPELINED) return i;
  }
  return kbody->u.seq.n;
}

/* ---- statements of the right shape: loops, ifs, lets, stores to variables ---- */
typedef struct Shape { PtrVec *vars; TsCompiler *c; bool ok; } Shape;
static void shape_stmt(IrStmt *s, void *ctx) {
  Shape *sh = ctx;
  switch (s->kind) {
    case IR_S_SEQ: case IR_S_LET: return;
    case IR_S_FOR:
      if (s->u.loop.kind != IR_FOR_SERIAL && s->u.loop.kind != IR_FOR_UNROLLED) sh->ok = false;
      return;
    case IR_S_IF:
      if (s->u.if_.ws_hi) sh->ok = false;
      return;
    case IR_S_STORE:
      if (s->u.store.buf->scope != IR_SCOPE_VAR || s->u.store.buf->alias_of) sh->ok = false;
      else if (sh->vars && !vec_has(sh->vars, s->u.store.buf))
        vec_push(sh->c->arena, sh->vars, s->u.store.buf);
      return;
    default: sh->ok = false; return;
  }
}
/* Is s of the prelude's shape?  Its variables stored to are added to `vars` (when given). */
static bool scalar_shape(TsCompiler *c, IrStmt *s, PtrVec *vars) {
  Shape sh = {vars, c, true};
  IrVisitor v = {shape_stmt, NULL, &sh};
  ir_visit(s, &v);
  return sh.ok;
}

/* ---- what the producer can evaluate (ws_scalar_ok) ---- */
/* kv: the one loop variable allowed (NULL and any_loop: every loop variable, those of the
 * prelude's own loops) */
typedef struct Reads { IrStmt *kbody; const PtrVec *vars; const IrVar *kv; bool any_loop; int depth; bool ok; } Reads;
static void read_expr(IrExpr *e, void *ctx) {
  Reads *r = ctx;
  switch (e->kind) {
    case IR_LOAD:
      if (!pass_constant_buffer(r->kbody, e->u.load.buf) && !(r->vars && vec_has(r->vars, e->u.load.buf))) r->ok = false;
      return;
    case IR_CALL:
      if (!ir_call_is_pure(e)) r->ok = false;
      return;
    case IR_VAR: {
      const IrVar *v = e->u.var;
      if (v->kind == IR_VAR_BLOCK_IDX || v->kind == IR_VAR_PARAM || v->kind == IR_VAR_DYNAMIC || (r->kv && v == r->kv) ||
          (r->any_loop && v->kind == IR_VAR_LOOP))
        return;
      if (v->kind == IR_VAR_LET && v->let_value && r->depth < 16 &&
          ws_scalar_ok((IrExpr *)v->let_value, r->kbody, r->vars, r->kv, r->any_loop, r->depth + 1))
        return;
      r->ok = false;
      return;
    }
    default: return;
  }
}
bool ws_scalar_ok(IrExpr *e, IrStmt *kbody, const PtrVec *vars, const IrVar *kv, bool any_loop, int depth) {
  Reads r = {kbody, vars, kv, any_loop, depth, true};
  IrVisitor v = {NULL, read_expr, &r};
  ir_visit_expr(e, &v);
  return r.ok;
}
static bool reads_ok(IrExpr *e, IrStmt *kbody, const PtrVec *vars, int depth) {
  return ws_scalar_ok(e, kbody, vars, NULL, true, depth);
}
static bool stmt_reads_ok(IrStmt *s, IrStmt *kbody, const PtrVec *vars) {
  Reads r = {kbody, vars, NULL, true, 0, true};
  IrVisitor v = {NULL, read_expr, &r};
  ir_visit(s, &v);
  return r.ok;
}

/* Does e, its lets written out, load buffer b? */
typedef struct LoadsOf { const IrBuffer *b; bool found; } LoadsOf;
static void loads_of(IrExpr *e, void *ctx) {
  LoadsOf *l = ctx;
  l->found |= e->kind == IR_LOAD && e->u.load.buf == l->b;
}
static bool lets_read(TsCompiler *c, IrExpr *e, const IrBuffer *b) {
  LoadsOf l = {b, false};
  IrVisitor v = {NULL, loads_of, &l};
  ir_visit_expr(pass_inline_lets(c, e), &v);
  return l.found;
}

/* The variables the prelude computes for the producer (the fixpoint above) into *vars, and
 * the prelude's statements into *stmts (either may be NULL). */
static void prelude(TsCompiler *c, IrStmt *kbody, PtrVec *vars, PtrVec *stmts) {
  PtrVec cand = {0}, own = {0};
  if (!kbody || kbody->kind != IR_S_SEQ) return;
  int li = loop_index(kbody);
  for (int j = 0; j < li; j++) {
    IrStmt *s = kbody->u.seq.items[j];
    if (s->kind != IR_S_ALLOC && s->kind != IR_S_LET) scalar_shape(c, s, &cand);
  }
  /* written anywhere else, or initialised from what the producer cannot read: not the prelude's */
  for (int i = 0; i < cand.len; i++) {
    IrBuffer *b = cand.items[i];
    bool keep = !b->init || reads_ok(b->init, kbody, &cand, 0);
    for (int j = 0; j < kbody->u.seq.n && keep; j++) {
      IrStmt *s = kbody->u.seq.items[j];
      if (s->kind != IR_S_ALLOC && pass_may_write(s, b) && (j >= li || !scalar_shape(c, s, NULL))) keep = false;
    }
    if (keep) vec_push(c->arena, &own, b);
  }
  /* a top-level let reading a variable that a later statement of the prelude writes: its value
   * is the variable's at the let, which the producer, inlining the let, would not see */
  for (int p = 0; p < li; p++) {
    IrStmt *l = kbody->u.seq.items[p];
    if (l->kind != IR_S_LET) continue;
    for (int i = 0; i < own.len; i++) {
      bool later = false;
      for (int j = p + 1; j < li; j++) later |= pass_may_write(kbody->u.seq.items[j], own.items[i]);
      if (later && lets_read(c, l->u.let.value, own.items[i])) own.items[i--] = own.items[--own.len];
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int j = 0; j < li; j++) {
      IrStmt *s = kbody->u.seq.items[j];
      PtrVec w = {0};
      if (s->kind == IR_S_ALLOC || s->kind == IR_S_LET || !scalar_shape(c, s, &w) || stmt_reads_ok(s, kbody, &own)) continue;
      for (int i = 0; i < own.len; i++)
        if (vec_has(&w, own.items[i])) own.items[i--] = own.items[--own.len], changed = true;
    }
  }
  for (int j = 0; stmts && j < li; j++) {
    IrStmt *s = kbody->u.seq.items[j];
    PtrVec w = {0};
    if (s->kind == IR_S_ALLOC || s->kind == IR_S_LET || !scalar_shape(c, s, &w)) continue;
    bool mine = false;
    for (int i = 0; i < w.len; i++) mine |= vec_has(&own, w.items[i]);
    if (mine) vec_push(c->arena, stmts, s);
  }
  if (vars) *vars = own;
}

void ws_prelude_vars(TsCompiler *c, IrStmt *kbody, PtrVec *out) { prelude(c, kbody, out, NULL); }

/* The prelude's statements with the kernel's top-level lets written out: the producer's
 * branch does not see the consumers' lets. */
void ws_prelude_stmts(TsCompiler *c, IrStmt *kbody, PtrVec *out) {
  PtrVec stmts = {0}, vars = {0}, vals = {0};
  prelude(c, kbody, NULL, &stmts);
  int li = loop_index(kbody);
  for (int j = 0; j < li; j++) {
    IrStmt *s = kbody->u.seq.items[j];
    if (s->kind != IR_S_LET) continue;
    vec_push(c->arena, &vars, s->u.let.var);
    vec_push(c->arena, &vals, s->u.let.value);
  }
  for (int i = 0; i < stmts.len; i++) {
    IrStmt *s = stmts.items[i];
    for (int round = 0; round < 16 && vars.len; round++) /* lets of lets */
      s = ir_subst_stmt(c, s, (IrVar *const *)vars.items, (IrExpr *const *)vals.items, vars.len);
    vec_push(c->arena, out, s);
  }
}
