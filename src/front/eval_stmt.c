/* eval_stmt.c — statements of the staging interpreter: expression statements and
 * assignments, loops, ifs, `with T.Kernel`, returns, asserts, defs and imports.
 *
 *   ev_exec_block  ->  ev_exec_stmt  ->  ev_eval / ev_assign (eval_expr.c)
 *
 * Control flow on a Python value is decided now (a Python `for` runs its body once per
 * item); on an IR value it becomes IR: a FOR per loop frame dimension, an IF, a WHILE, each
 * body traced into its own block (stage.c), `break`/`continue` as IR statements. */
#include <string.h>

#include "thread_branch.h"
#include "value.h"

/* @T.prim_func or @T.macro among a def's decorators (by name: T.prim_func, prim_func). */
FuncFlavor ev_decorator_flavor(const AstNode *def) {
  FuncFlavor fl = FN_PLAIN;
  for (int i = 0; i < def->decorators.n; i++) {
    const AstNode *d = def->decorators.items[i];
    if (d->kind == AST_CALL) d = d->func;
    const char *name = d->kind == AST_NAME || d->kind == AST_ATTRIBUTE ? d->id : NULL;
    if (!name) continue;
    if (!strcmp(name, "prim_func")) fl = FN_PRIM;
    else if (!strcmp(name, "macro")) fl = FN_MACRO;
  }
  return fl;
}

/* One loop frame as IR: nested FORs, target names bound to the loop variables. */
/* for i, j in T.Persistent([D0, D1], wave, index, group):
 *   for w in serial(0, ceildiv(D0*D1, wave)):
 *     let tile = index + w*wave
 *     let i = first + (tile % (group*D1)) % rows;  j = (tile % (group*D1)) / rows
 *         (first = tile / (group*D1) * group, rows = min(D0 - first, group): panels of
 *          `group` rows walked column by column, so blocks running together share tiles)
 *     if tile < D0*D1: body
 * A 1-D domain has i = tile; a domain of more dimensions walks its last two so, inside the
 * outer ones taken row-major (tile / (Dn-2*Dn-1)). */
static void persistent_coords(TsCompiler *c, const LoopFrame *f, IrExpr *tile, IrExpr **coord, SrcLoc loc) {
  int nd = f->ndim;
  if (nd == 1) {
    coord[0] = tile;
    return;
  }
  IrExpr *r = f->extent[nd - 2], *cols = f->extent[nd - 1];
  IrExpr *inner = tile, *outer = NULL;
  if (nd > 2) {
    IrExpr *plane = ir_binary(c, IR_MUL, r, cols, loc);
    inner = ir_binary(c, IR_FLOORMOD, tile, plane, loc);
    outer = ir_binary(c, IR_FLOORDIV, tile, plane, loc);
    for (int d = nd - 3; d >= 0; d--) {
      coord[d] = d ? ir_binary(c, IR_FLOORMOD, outer, f->extent[d], loc) : outer;
      if (d) outer = ir_binary(c, IR_FLOORDIV, outer, f->extent[d], loc);
    }
  }
  IrExpr *g = ir_i32(c, f->group), *gsize = ir_binary(c, IR_MUL, g, cols, loc);
  IrExpr *first = ir_binary(c, IR_MUL, ir_binary(c, IR_FLOORDIV, inner, gsize, loc), g, loc);
  IrExpr *rows = ir_binary(c, IR_MIN, ir_binary(c, IR_SUB, r, first, loc), g, loc);
  IrExpr *local = ir_binary(c, IR_FLOORMOD, inner, gsize, loc);
  coord[nd - 2] = ir_binary(c, IR_ADD, first, ir_binary(c, IR_FLOORMOD, local, rows, loc), loc);
  coord[nd - 1] = ir_binary(c, IR_FLOORDIV, local, rows, loc);
}

static ExecStatus exec_persistent_for(Eval *ev, Env *env, const AstNode *s, LoopFrame *f) {
  TsCompiler *c = ev->c;
  SrcLoc loc = s->loc;
  const AstNode *t = s->target;
  int nt = t->kind == AST_TUPLE || t->kind == AST_LIST ? t->items.n : 1;
  if (nt != f->ndim) {
    ts_error(c, t->loc, "T.Persistent: the domain has %d dimension%s but the loop has %d target%s", f->ndim,
             f->ndim == 1 ? "" : "s", nt, nt == 1 ? "" : "s");
    return EX_NORMAL;
  }
  for (int d = 0; d < nt; d++) {
    const AstNode *x = nt == 1 && t->kind != AST_TUPLE && t->kind != AST_LIST ? t : t->items.items[d];
    if (x->kind != AST_NAME) {
      ts_error(c, x->loc, "loop targets must be names");
      return EX_NORMAL;
    }
  }
  IrExpr *total = f->extent[0];
  for (int d = 1; d < f->ndim; d++) total = ir_binary(c, IR_MUL, total, f->extent[d], loc);
  IrVar *w = ir_var(c, "wave", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *nw = ir_binary(c, IR_FLOORDIV, ir_binary(c, IR_ADD, total, ir_binary(c, IR_SUB, f->wave, ir_i32(c, 1), loc), loc),
                         f->wave, loc);
  BlockSave outer = ev_push_block(ev);
  ev_define_var(ev, w);
  IrVar *tv = ir_var(c, "tile", TS_DTYPE_INT32, IR_VAR_LET, loc);
  ev_define_var(ev, tv);
  ev_emit(ev, ir_let(c, tv, ir_binary(c, IR_ADD, f->index, ir_binary(c, IR_MUL, ir_varref(c, w, loc), f->wave, loc), loc), loc));
  IrExpr *tile = ir_varref(c, tv, loc), *coord[PERSISTENT_MAX_DIMS];
  persistent_coords(c, f, tile, coord, loc);
  for (int d = 0; d < f->ndim; d++) {
    const AstNode *x = nt == 1 && t->kind != AST_TUPLE && t->kind != AST_LIST ? t : t->items.items[d];
    IrVar *v = ir_var(c, x->id, TS_DTYPE_INT32, IR_VAR_LET, x->loc);
    ev_define_var(ev, v);
    ev_emit(ev, ir_let(c, v, coord[d], x->loc));
    ev_env_set(ev, env, x->id, ev_expr(ev, ir_varref(c, v, x->loc)));
  }
  BlockSave inner = ev_push_block(ev);
  LoopCtx lc = {true, ev->loop, IR_FOR_SERIAL, ++ev->loop_ids};
  ev->loop = &lc;
  ExecStatus st = ev_exec_block(ev, env, &s->body);
  ev->loop = lc.outer;
  IrStmt *body = ev_pop_block(ev, inner, env, "loop", loc);
  if (st == EX_RETURN) ts_error(c, loc, "'return' inside a kernel loop is not supported");
  ev_emit(ev, ir_if(c, ir_binary(c, IR_LT, tile, total, loc), body, NULL, loc));
  IrStmt *wb = ev_pop_block(ev, outer, env, "loop", loc);
  ev_emit(ev, ir_for(c, w, ir_i32(c, 0), nw, IR_FOR_SERIAL, wb, loc));
  return EX_NORMAL;
}

/* for targets in <loop frame>: in a kernel, a FOR per dimension around the traced body. */
static ExecStatus exec_ir_for(Eval *ev, Env *env, const AstNode *s, LoopFrame *f) {
  if (f->persistent) return exec_persistent_for(ev, env, s, f);
  const AstNode *t = s->target;
  int nt = t->kind == AST_TUPLE || t->kind == AST_LIST ? t->items.n : 1;
  if (nt != f->ndim) {
    ts_error(ev->c, t->loc, "loop has %d dimension%s but %d target%s", f->ndim, f->ndim == 1 ? "" : "s", nt,
             nt == 1 ? "" : "s");
    return EX_NORMAL;
  }
  BlockSave saved = ev_push_block(ev);
  IrVar **vars = ARENA_ARRAY(ev->a, IrVar *, f->ndim);
  for (int d = 0; d < f->ndim; d++) {
    const AstNode *x = nt == 1 && t->kind != AST_TUPLE && t->kind != AST_LIST ? t : t->items.items[d];
    if (x->kind != AST_NAME) {
      ts_error(ev->c, x->loc, "loop targets must be names");
      ev_pop_block(ev, saved, env, "loop", s->loc);
      return EX_NORMAL;
    }
    ts_dtype it = f->extent[d]->dtype == TS_DTYPE_INT64 || f->min[d]->dtype == TS_DTYPE_INT64 ? TS_DTYPE_INT64 : TS_DTYPE_INT32;
    vars[d] = ir_var(ev->c, x->id, it, IR_VAR_LOOP, x->loc);
    ev_define_var(ev, vars[d]);
    IrExpr *ref = ir_varref(ev->c, vars[d], x->loc);
    if (f->step) /* for i in range(a, b, s): loop over 0..n, i = a + k*s */
      ref = ir_binary(ev->c, IR_ADD, f->min[d], ir_binary(ev->c, IR_MUL, ref, f->step, x->loc), x->loc);
    ev_env_set(ev, env, x->id, ev_expr(ev, ref));
  }
  LoopCtx lc = {true, ev->loop, f->kind, ++ev->loop_ids};
  ev->loop = &lc;
  ExecStatus st = ev_exec_block(ev, env, &s->body);
  ev->loop = lc.outer;
  IrStmt *body = ev_pop_block(ev, saved, env, "loop", s->loc);
  if (st == EX_RETURN) ts_error(ev->c, s->loc, "'return' inside a kernel loop is not supported");
  for (int d = f->ndim - 1; d >= 0; d--) {
    IrExpr *mn = f->step ? ir_int(ev->c, 0, vars[d]->dtype, s->loc) : f->min[d];
    body = ir_for(ev->c, vars[d], mn, f->extent[d], f->kind, body, s->loc);
    body->u.loop.num_stages = f->num_stages;
    body->u.loop.unroll_factor = f->unroll_factor;
    body->u.loop.order = f->order;
    body->u.loop.stage = f->stage;
    body->u.loop.norder = f->norder;
  }
  body->u.loop.pinned_layout = f->loop_layout; /* the nest's outermost loop */
  ev_emit(ev, body);
  return EX_NORMAL;
}

/* How a kernel's Python names get its indices: `with T.Kernel(...) as target` binds the block
 * indices (a name or a tuple); a TVM thread-bound loop nest binds each loop's name. */
typedef struct KernelNames {
  const AstNode *target;            /* the `as` target, or NULL */
  const AstNode *axis_name[2][3];   /* [0]: blockIdx loop names, [1]: threadIdx loop names */
} KernelNames;

static ExecStatus run_kernel(Eval *ev, Env *env, const AstList *body_ast, const KernelNames *kn, KernelFrame *kf,
                             SrcLoc loc);

/* A call of `name` or `x.name` (T.Kernel, T.thread_binding), recognised by syntax. */
static bool is_call_named(const AstNode *e, const char *name) {
  if (!e || e->kind != AST_CALL || !e->func) return false;
  const AstNode *f = e->func;
  return (f->kind == AST_ATTRIBUTE || f->kind == AST_NAME) && f->id && !strcmp(f->id, name);
}

/* `for tx in T.thread_binding(n, thread="threadIdx.x"):` inside a T.Kernel, by syntax (TVM's
 * thread-bound loop): every thread runs the body once with tx its index along that axis, which
 * the call checks covers the axis; the loop is the kernel's threads, not IR. */
static bool is_thread_binding_call(const AstNode *e) { return is_call_named(e, "thread_binding"); }

/* One loop `for x in T.thread_binding(extent | start, stop, thread="blockIdx.x")` of a bound
 * nest: *kind 0 for blockIdx, 1 for threadIdx, its axis and its extent (start must be 0). */
static bool bound_loop(Eval *ev, Env *env, const AstNode *s, int *kind, int *axis, IrExpr **ext) {
  const AstNode *call = s->iter;
  const char *tag = NULL;
  for (int i = 0; i < call->nkwargs; i++)
    if (call->kwargs[i].name && !strcmp(call->kwargs[i].name, "thread") && call->kwargs[i].value->kind == AST_CONST_STR)
      tag = call->kwargs[i].value->sval;
  static const char *const tags[2][3] = {{"blockIdx.x", "blockIdx.y", "blockIdx.z"},
                                         {"threadIdx.x", "threadIdx.y", "threadIdx.z"}};
  *kind = *axis = -1;
  for (int k = 0; k < 2 && tag; k++)
    for (int a = 0; a < 3; a++)
      if (!strcmp(tag, tags[k][a])) *kind = k, *axis = a;
  int n = call->items.n;
  if (*kind < 0 || n < 1 || n > 2) {
    ts_error(ev->c, call->loc, "T.thread_binding outside a T.Kernel takes (extent) or (0, extent) and a literal "
                               "thread=\"blockIdx.x\" ... \"threadIdx.z\": the loops are the kernel's launch");
    return false;
  }
  Value *lo = n == 2 ? ev_eval(ev, env, call->items.items[0]) : NULL;
  Value *hi = ev_eval(ev, env, call->items.items[n - 1]);
  int64_t l = 0;
  if (!hi || (lo && !ev_to_int(ev, lo, &l, call->loc))) return false;
  if (l != 0) {
    ts_error(ev->c, call->loc, "T.thread_binding: the %s loop must start at 0", tag);
    return false;
  }
  *ext = ev_to_ir(ev, hi, NULL, call->loc);
  return *ext != NULL;
}

/* A TVM thread-bound loop nest outside a T.Kernel,
 *   for bx in T.thread_binding(G, thread="blockIdx.x"):
 *       for tx in T.thread_binding(T, thread="threadIdx.x"):
 *           body
 * (each loop the only statement of the one around it) is the kernel of that grid and those
 * threads, its names bound to the block and thread indices. */
static ExecStatus exec_bound_kernel(Eval *ev, Env *env, const AstNode *s) {
  KernelFrame *kf = ARENA_NEW(ev->a, KernelFrame);
  KernelNames kn = {NULL, {{NULL}}};
  kf->threads[0] = kf->threads[1] = kf->threads[2] = 1;
  const AstList *body = NULL;
  for (const AstNode *n = s;;) {
    int kind, axis;
    IrExpr *ext;
    if (!bound_loop(ev, env, n, &kind, &axis, &ext)) return EX_NORMAL;
    if (kn.axis_name[kind][axis]) {
      ts_error(ev->c, n->iter->loc, "T.thread_binding: this axis is already bound by an enclosing loop");
      return EX_NORMAL;
    }
    kn.axis_name[kind][axis] = n->target;
    int64_t t = 0;
    if (kind == 0) {
      kf->grid[axis] = ext;
    } else if (!ir_is_const_int(ext, &t) || t < 1 || t > 1024) {
      ts_error(ev->c, n->iter->loc, "T.thread_binding: a threadIdx extent must be a constant in 1..1024");
      return EX_NORMAL;
    } else {
      kf->threads[axis] = (int)t;
    }
    body = &n->body;
    if (body->n != 1 || body->items[0]->kind != AST_FOR || !is_thread_binding_call(body->items[0]->iter)) break;
    n = body->items[0];
  }
  for (int a = 0; a < 3; a++)
    if (kn.axis_name[0][a]) kf->ngrid = a + 1;
  if (!kf->ngrid) {
    ts_error(ev->c, s->iter->loc, "T.thread_binding over threadIdx outside a T.Kernel needs an enclosing blockIdx "
                                  "loop (or use it inside `with T.Kernel(...)`)");
    return EX_NORMAL;
  }
  for (int a = 0; a < kf->ngrid; a++)
    if (!kf->grid[a]) kf->grid[a] = ir_i32(ev->c, 1);
  return run_kernel(ev, env, body, &kn, kf, s->loc);
}

/* for: a loop frame in a kernel becomes IR; anything else runs as Python, once per item. */
static ExecStatus exec_for(Eval *ev, Env *env, const AstNode *s) {
  if (is_thread_binding_call(s->iter) && !ev->kernel && ev->block) return exec_bound_kernel(ev, env, s);
  Value *it = ev_eval(ev, env, s->iter);
  if (!it) return EX_NORMAL;
  if (is_thread_binding_call(s->iter) && it->kind == V_EXPR && ev->kernel) {
    if (!ev_assign(ev, env, s->target, it, s->loc)) return EX_NORMAL;
    ExecStatus st = ev_exec_block(ev, env, &s->body);
    if (st == EX_BREAK || st == EX_CONTINUE)
      ts_error(ev->c, s->loc, "'break' and 'continue' are not supported in a T.thread_binding loop (every thread runs "
                              "its body once)");
    return st == EX_RETURN ? EX_RETURN : EX_NORMAL;
  }
  if (it->kind == V_FRAME && ev->block) return exec_ir_for(ev, env, s, it->u.frame);
  if (ev->staged && (it->kind == V_TUPLE || it->kind == V_LIST || it->kind == V_DICT || it->kind == V_STR)) {
    ts_error(ev->c, s->iter->loc,
             "cannot iterate over a Python %s inside a kernel: use T.serial(...), T.unroll(...) or range(...)",
             ev_type_name(it));
    return EX_NORMAL;
  }
  if (it->kind == V_FRAME && it->u.frame->kind != IR_FOR_SERIAL && !ev->block) {
    ts_error(ev->c, s->iter->loc, "this loop can only be used inside a @T.prim_func kernel");
    return EX_NORMAL;
  }
  ValList items = {0};
  if (!ev_iter_items(ev, it, &items, s->iter->loc)) return EX_NORMAL;
  LoopCtx lc = {false, ev->loop, 0, 0};
  ev->loop = &lc;
  ExecStatus res = EX_NORMAL;
  bool broke = false;
  for (int i = 0; i < items.n; i++) {
    if (!ev_step(ev, s->loc)) break;
    ev_assign(ev, env, s->target, items.items[i], s->loc);
    ExecStatus st = ev_exec_block(ev, env, &s->body);
    if (st == EX_BREAK) { broke = true; break; }
    if (st == EX_RETURN) { res = st; break; }
    if (ev->c->diag.errors > 50) break;
  }
  ev->loop = lc.outer;
  if (res == EX_NORMAL && !broke && s->orelse.n) res = ev_exec_block(ev, env, &s->orelse);
  return res;
}

/* The WHILE statement of a loop on an IR condition.  When evaluating the test emitted
 * statements (`pre`: the let a T.warp_any in the test is bound to), they are the loop's first
 * statements, so they run before every test:
 *   while true: pre; if not cond: break; body
 * (a `continue` in the body then runs them again, as Python re-tests the condition).  The
 * caller has pushed the block that collected `pre`; the body runs in that block. */
static ExecStatus emit_while(Eval *ev, Env *env, const AstNode *s, IrExpr *cond, BlockSave saved, bool pre) {
  if (pre) {
    IrStmt *brk = ir_stmt(ev->c, IR_S_BREAK, s->test->loc);
    ev_emit(ev, ir_if(ev->c, ir_unary(ev->c, IR_NOT, cond, s->test->loc), brk, NULL, s->test->loc));
    cond = ir_int(ev->c, 1, TS_DTYPE_BOOL, s->test->loc);
  }
  LoopCtx lc = {true, ev->loop, IR_FOR_SERIAL, ++ev->loop_ids};
  ev->loop = &lc;
  ev_exec_block(ev, env, &s->body);
  ev->loop = lc.outer;
  IrStmt *body = ev_pop_block(ev, saved, env, "loop", s->loc);
  IrStmt *w = ir_stmt(ev->c, IR_S_WHILE, s->loc);
  w->u.while_.cond = cond;
  w->u.while_.body = body;
  ev_emit(ev, w);
  return EX_NORMAL;
}

/* while: Python condition -> runs now; IR condition (in a kernel) -> a WHILE statement.  The
 * test is evaluated in a block of its own: statements it emits belong inside the loop. */
static ExecStatus exec_while(Eval *ev, Env *env, const AstNode *s) {
  for (;;) {
    bool in_kernel = ev->block != NULL;
    BlockSave saved = {0};
    if (in_kernel) saved = ev_push_block(ev);
    Value *t = ev_eval(ev, env, s->test);
    int tv = ev_truth(ev, t, s->test->loc);
    bool pre = in_kernel && ev->block->len > 0;
    if (tv == -1) {
      if (!in_kernel) {
        ts_error(ev->c, s->test->loc, "a while loop on an IR condition is only allowed inside a kernel");
        return EX_NORMAL;
      }
      IrExpr *cond = ev_to_bool_ir(ev, ev_to_ir(ev, t, NULL, s->loc), s->loc);
      if (cond) return emit_while(ev, env, s, cond, saved, pre);
      ev_pop_block(ev, saved, env, "loop condition", s->loc);
      return EX_NORMAL;
    }
    if (in_kernel) {
      IrStmt *stmts = ev_pop_block(ev, saved, env, "loop condition", s->loc);
      if (pre) ev_emit(ev, stmts);
    }
    if (tv == -2) return EX_NORMAL;
    if (!tv) return s->orelse.n ? ev_exec_block(ev, env, &s->orelse) : EX_NORMAL;
    if (!ev_step(ev, s->loc)) return EX_NORMAL;
    LoopCtx lc = {false, ev->loop, 0, 0};
    ev->loop = &lc;
    ExecStatus st = ev_exec_block(ev, env, &s->body);
    ev->loop = lc.outer;
    if (st == EX_BREAK) return EX_NORMAL;
    if (st == EX_RETURN) return st;
  }
}

/* if: a Python condition picks a branch now; an IR one (in a kernel) becomes an IF (a chain
 * of T.ws bodies when it branches on ranges of the thread index, see exec_thread_branch).
 * t is the test's value, already evaluated. */
static ExecStatus exec_thread_branch(Eval *ev, Env *env, const AstNode *s, IrExpr *cond);
static bool starts_thread_branch(Eval *ev, IrExpr *cond);
static ExecStatus exec_if_value(Eval *ev, Env *env, const AstNode *s, Value *t) {
  int tv = ev_truth(ev, t, s->test->loc);
  if (tv == -2) return EX_NORMAL;
  if (tv >= 0) return ev_exec_block(ev, env, tv ? &s->body : &s->orelse);
  if (!ev->block) {
    ts_error(ev->c, s->test->loc, "an 'if' on an IR value is only allowed inside a kernel");
    return EX_NORMAL;
  }
  IrExpr *cond = ev_to_bool_ir(ev, ev_to_ir(ev, t, NULL, s->loc), s->loc);
  if (!cond) return EX_NORMAL;
  if (starts_thread_branch(ev, cond)) return exec_thread_branch(ev, env, s, cond);
  ev->ir_if_depth++;
  BlockSave saved = ev_push_block(ev);
  ExecStatus a = ev_exec_block(ev, env, &s->body);
  IrStmt *then_s = ev_pop_block(ev, saved, env, "branch of an IR 'if'", s->loc);
  IrStmt *else_s = NULL;
  ExecStatus b = EX_NORMAL;
  if (s->orelse.n) {
    saved = ev_push_block(ev);
    b = ev_exec_block(ev, env, &s->orelse);
    else_s = ev_pop_block(ev, saved, env, "branch of an IR 'if'", s->loc);
  }
  ev->ir_if_depth--;
  if (a == EX_RETURN || b == EX_RETURN) ts_error(ev->c, s->loc, "'return' inside an IR 'if' is not supported");
  ev_emit(ev, ir_if(ev->c, cond, then_s, else_s, s->loc));
  return EX_NORMAL;
}
static ExecStatus exec_if(Eval *ev, Env *env, const AstNode *s) { return exec_if_value(ev, env, s, ev_eval(ev, env, s->test)); }

/* ---- hand-written warp specialization: `if tx < 128: ... elif tx >= 256: ... else: ...` ----
 * Each branch of such a chain runs on a contiguous range of the (one-dimensional) thread index:
 * the test's range inside the threads that reach it.  When the chain holds tile operations, each
 * branch becomes a T.ws body over its range (thread_branch.c), the next branch its else; a final
 * `else` whose threads are not one range stays a plain else, where lower_tile_ops refuses tile
 * operations.  Without tile operations the chain is the plain IF it was. */
typedef struct Arm {
  int64_t lo, hi; /* the threads running body; lo == hi: not one range (the chain's last else) */
  IrExpr *cond;   /* the user's test; NULL for an `else` */
  IrStmt *body;
  SrcLoc loc;     /* the `if` or `elif` */
} Arm;

static bool starts_thread_branch(Eval *ev, IrExpr *cond) {
  if (ev->in_ws || !ev->kernel) return false;
  IrKernel *k = &ev->kernel->u.kernel;
  int64_t lo, hi;
  /* a range of the whole block says nothing: the plain IF keeps the automatic pipelining */
  return tb_cond_range(k, cond, 0, k->threads[0], &lo, &hi) && tb_range_ok(lo, hi) &&
         (lo > 0 || hi < k->threads[0]);
}

static IrStmt *stage_arm(Eval *ev, Env *env, const AstList *body, SrcLoc loc, ExecStatus *st) {
  BlockSave saved = ev_push_block(ev);
  ExecStatus r = ev_exec_block(ev, env, body);
  if (r == EX_RETURN) *st = r;
  return ev_pop_block(ev, saved, env, "branch of an IR 'if'", loc);
}

/* Emits the staged arms, each the else of the one before: T.ws bodies when they hold tile
 * operations, else the user's plain chain. */
static void emit_arms(Eval *ev, Arm *arms, int n) {
  TsCompiler *c = ev->c;
  IrKernel *k = &ev->kernel->u.kernel;
  bool tiles = false;
  for (int i = 0; i < n; i++) tiles |= tb_has_tile_ops(arms[i].body);
  if (tiles) k->manual_ws = true;
  IrStmt *acc = NULL;
  for (int i = n - 1; i >= 0; i--) {
    Arm *a = &arms[i];
    if (!tiles) {
      acc = a->cond ? ir_if(c, a->cond, a->body, acc, a->loc) : a->body;
    } else if (a->lo < a->hi) {
      IrStmt *next = acc;
      acc = tb_ws_if(c, k, a->lo, a->hi, a->body, a->loc);
      acc->u.if_.else_s = next;
    } else {
      acc = a->body;
    }
  }
  ev_emit(ev, acc);
}

static ExecStatus exec_thread_branch(Eval *ev, Env *env, const AstNode *s, IrExpr *cond) {
  IrKernel *k = &ev->kernel->u.kernel;
  Arm arms[16];
  int n = 0;
  int64_t cur_lo = 0, cur_hi = k->threads[0];
  ExecStatus st = EX_NORMAL;
  ev->in_ws = true; /* no T.ws, and no nested thread branch, inside a branch */
  for (const AstNode *node = s;;) {
    int64_t lo, hi, rlo = 0, rhi = 0;
    tb_cond_range(k, cond, cur_lo, cur_hi, &lo, &hi);
    arms[n++] = (Arm){lo, hi, cond, stage_arm(ev, env, &node->body, node->loc, &st), node->loc};
    if (!node->orelse.n) break;
    /* the threads reaching the else: cur minus [lo, hi), one range when it touches an end */
    if (lo == cur_lo) rlo = hi, rhi = cur_hi;
    else if (hi == cur_hi) rlo = cur_lo, rhi = lo;
    if (!tb_range_ok(rlo, rhi)) {
      arms[n++] = (Arm){0, 0, NULL, stage_arm(ev, env, &node->orelse, node->loc, &st), node->loc};
      break;
    }
    const AstNode *e = node->orelse.n == 1 && node->orelse.items[0]->kind == AST_IF ? node->orelse.items[0] : NULL;
    if (!e) {
      arms[n++] = (Arm){rlo, rhi, NULL, stage_arm(ev, env, &node->orelse, node->loc, &st), node->loc};
      break;
    }
    /* elif: its test, evaluated once, continues the chain when it is a range of [rlo, rhi) */
    Value *t = ev_eval(ev, env, e->test);
    IrExpr *econd = t && t->kind == V_EXPR && n < 15 ? ev_to_bool_ir(ev, t->u.expr, e->loc) : NULL;
    int64_t elo, ehi;
    if (econd && tb_cond_range(k, econd, rlo, rhi, &elo, &ehi) && tb_range_ok(elo, ehi)) {
      cur_lo = rlo, cur_hi = rhi, cond = econd, node = e;
      continue;
    }
    BlockSave saved = ev_push_block(ev); /* the else runs on [rlo, rhi) and holds a plain `if` */
    if (exec_if_value(ev, env, e, t) == EX_RETURN) st = EX_RETURN;
    arms[n++] = (Arm){rlo, rhi, NULL, ev_pop_block(ev, saved, env, "branch of an IR 'if'", e->loc), e->loc};
    break;
  }
  ev->in_ws = false;
  if (st == EX_RETURN) ts_error(ev->c, s->loc, "'return' inside an IR 'if' is not supported");
  emit_arms(ev, arms, n);
  return EX_NORMAL;
}


/* A block index is 64-bit, as in TileLang, when its grid extent is (an int64 T.symbolic size)
 * or when a tensor parameter may hold more than 2^31 - 1 elements (a constant size past it, or
 * an int64 dimension): bx * block + i then indexes it without wrapping. */
static bool wide_block_index(Eval *ev, const IrExpr *extent) {
  if (extent->dtype == TS_DTYPE_INT64) return true;
  const IrFunc *f = ev->func;
  for (int i = 0; f && i < f->nparams; i++) {
    const IrBuffer *b = f->params[i].buf;
    if (!b || b->scope != IR_SCOPE_GLOBAL) continue;
    int64_t n = ir_buffer_numel(b);
    if (n > INT32_MAX) return true;
    for (int k = 0; k < b->ndim; k++)
      if (b->shape[k]->dtype == TS_DTYPE_INT64) return true;
  }
  return false;
}

/* with T.Kernel(...) as (bx, by): the KERNEL statement with its block variables and body. */
/* A reducer whose epoch T.reducer_init opened and no T.finalize_reducer(acc, dst) closed by the
 * end of its kernel: its partial results would be lost. */
static void reducer_left_open(IrStmt *s, void *ctx) {
  Eval *ev = ctx;
  if (s->kind == IR_S_ALLOC && s->u.alloc.buf->reducer && s->u.alloc.buf->reducer_epoch == 1)
    ts_error(ev->c, s->loc, "reducer '%s' is never finalized (T.reducer_init opened its epoch; close it with "
             "T.finalize_reducer(%s, dst))", s->u.alloc.buf->name, s->u.alloc.buf->name);
}

static void bind_kernel_names(Eval *ev, Env *env, IrStmt *k, const KernelNames *kn, Value *vars, int ngrid, SrcLoc loc) {
  const AstNode *target = kn->target;
  bool tuple_target = target && (target->kind == AST_TUPLE || target->kind == AST_LIST);
  if (target) {
    if (!tuple_target && ngrid == 1) ev_assign(ev, env, target, vars->u.seq.items[0], loc);
    else ev_assign(ev, env, target, vars, loc);
  }
  for (int i = 0; i < 3; i++) {
    if (kn->axis_name[0][i] && k->u.kernel.block_var[i])
      ev_assign(ev, env, kn->axis_name[0][i], ev_expr(ev, ir_varref(ev->c, k->u.kernel.block_var[i], loc)), loc);
    if (kn->axis_name[1][i])
      ev_assign(ev, env, kn->axis_name[1][i],
                ev_expr(ev, ir_varref(ev->c, ir_kernel_thread_var(ev->c, &k->u.kernel, i, loc), loc)), loc);
  }
}

/* The KERNEL statement of frame kf: block variables named by kn, then the body. */
static ExecStatus run_kernel(Eval *ev, Env *env, const AstList *body_ast, const KernelNames *kn, KernelFrame *kf,
                             SrcLoc loc) {
  if (!ev->block) {
    ts_error(ev->c, loc, "T.Kernel can only be used inside a @T.prim_func");
    return EX_NORMAL;
  }
  if (ev->kernel) {
    ts_error(ev->c, loc, "T.Kernel blocks cannot be nested");
    return EX_NORMAL;
  }
  IrStmt *k = ir_stmt(ev->c, IR_S_KERNEL, loc);
  static const char *const dflt[3] = {"bx", "by", "bz"};
  const AstNode *target = kn->target;
  int nt = !target ? 0 : (target->kind == AST_TUPLE || target->kind == AST_LIST) ? target->items.n : 1;
  bool tuple_target = target && (target->kind == AST_TUPLE || target->kind == AST_LIST);
  if (tuple_target && nt != kf->ngrid) {
    ts_error(ev->c, target->loc, "T.Kernel has %d grid dimension%s but %d names are bound", kf->ngrid,
             kf->ngrid == 1 ? "" : "s", nt);
    return EX_NORMAL;
  }
  Value *vars = ev_new(ev, V_TUPLE);
  for (int i = 0; i < 3; i++) {
    k->u.kernel.grid[i] = i < kf->ngrid ? kf->grid[i] : ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
    k->u.kernel.threads[i] = kf->threads[i];
    if (i >= kf->ngrid) continue;
    const char *name = dflt[i];
    SrcLoc vloc = loc;
    if (tuple_target && target->items.items[i]->kind == AST_NAME) {
      name = target->items.items[i]->id;
      vloc = target->items.items[i]->loc;
    } else if (target && !tuple_target && target->kind == AST_NAME && kf->ngrid == 1) {
      name = target->id;
      vloc = target->loc;
    } else if (kn->axis_name[0][i] && kn->axis_name[0][i]->kind == AST_NAME) {
      name = kn->axis_name[0][i]->id;
      vloc = kn->axis_name[0][i]->loc;
    }
    IrVar *v = ir_var(ev->c, name, wide_block_index(ev, kf->grid[i]) ? TS_DTYPE_INT64 : TS_DTYPE_INT32,
                      IR_VAR_BLOCK_IDX, vloc);
    v->axis = i;
    k->u.kernel.block_var[i] = v;
    vl_push(ev, &vars->u.seq, ev_expr(ev, ir_varref(ev->c, v, vloc)));
  }
  k->u.kernel.prelude = kf->prelude;
  k->u.kernel.cluster_x = kf->cluster_x;
  bind_kernel_names(ev, env, k, kn, vars, kf->ngrid, loc);
  ev->kernel = k;
  ev->rng_state = NULL;
  BlockSave saved = ev_push_block(ev);
  for (int i = 0; i < 3; i++)
    if (k->u.kernel.block_var[i]) ev_define_var(ev, k->u.kernel.block_var[i]);
  ExecStatus st = ev_exec_block(ev, env, body_ast);
  for (int i = 0; i < 3; i++)
    if (k->u.kernel.thread_var[i]) ev_define_var(ev, k->u.kernel.thread_var[i]);
  k->u.kernel.body = ev_pop_block(ev, saved, env, "T.Kernel block", loc);
  IrVisitor open_reducers = {reducer_left_open, NULL, ev};
  ir_visit(k->u.kernel.body, &open_reducers);
  if (ev->outer_views.len) { /* T.make_tensor over T.ptr parameters before T.Kernel */
    PtrVec items = {0};
    for (int i = 0; i < ev->outer_views.len; i++) vec_push(ev->a, &items, ev->outer_views.items[i]);
    vec_push(ev->a, &items, k->u.kernel.body);
    k->u.kernel.body = ir_seq_vec(ev->c, &items, loc);
  }
  if (ev->rng_state) { /* declared first: T.rng_rand may run in any block after T.rng_init */
    IrStmt *al = ir_stmt(ev->c, IR_S_ALLOC, loc);
    al->u.alloc.buf = ev->rng_state;
    k->u.kernel.body = ir_seq(ev->c, (IrStmt *[]){al, k->u.kernel.body}, 2, loc);
    ev->rng_state = NULL;
  }
  ev->kernel = NULL;
  ev_emit(ev, k);
  if (st == EX_RETURN) ts_error(ev->c, loc, "'return' inside T.Kernel is not supported");
  return EX_NORMAL;
}

static ExecStatus exec_kernel(Eval *ev, Env *env, const AstNode *s, const AstNode *target, KernelFrame *kf) {
  KernelNames kn = {target, {{NULL}}};
  return run_kernel(ev, env, &s->body, &kn, kf, s->loc);
}

/* `with T.Kernel(...)` (or `with Kernel(...)` imported from tilelang.language), by syntax:
 * its value is unknown when its arguments were wrong. */
static bool is_kernel_call(const AstNode *e) { return is_call_named(e, "Kernel"); }

/* A T.Kernel whose arguments were wrong (reported): its body still runs, inside a stand-in
 * kernel whose IR is dropped, so that the body's own errors are found but nothing in it is
 * reported again for not being inside a kernel (one mistake, one diagnostic).  The
 * `as` names are poison, which every use passes on silently. */
static ExecStatus exec_failed_kernel(Eval *ev, Env *env, const AstNode *s) {
  if (s->withitems[0].vars) ev_assign(ev, env, s->withitems[0].vars, NULL, s->loc);
  IrStmt *k = ir_stmt(ev->c, IR_S_KERNEL, s->loc);
  for (int i = 0; i < 3; i++) {
    k->u.kernel.grid[i] = ir_int(ev->c, 1, TS_DTYPE_INT32, s->loc);
    k->u.kernel.threads[i] = i ? 1 : 128;
  }
  ev->kernel = k;
  BlockSave saved = ev_push_block(ev);
  ev_exec_block(ev, env, &s->body);
  (void)ev_pop_block(ev, saved, env, "T.Kernel block", s->loc);
  ev->kernel = NULL;
  return EX_NORMAL;
}

/* with T.ws(...): an IF on the thread index whose body runs on the range only (IrStmt if_.ws_*);
 * the kernel is marked as scheduling its warpgroups itself.  A T.ws inside another would
 * need the inner range inside the outer: refused. */
static ExecStatus exec_ws(Eval *ev, Env *env, const AstNode *s, const Value *ws) {
  TsCompiler *c = ev->c;
  SrcLoc loc = s->loc;
  if (s->withitems[0].vars) {
    ts_error(c, loc, "T.ws(...) has no value to bind with 'as'");
    return EX_NORMAL;
  }
  if (ev->in_ws) {
    ts_error(c, loc, "T.ws inside another T.ws is not supported");
    return EX_NORMAL;
  }
  IrKernel *k = &ev->kernel->u.kernel;
  k->manual_ws = true;
  BlockSave saved = ev_push_block(ev);
  ev->in_ws = true;
  ExecStatus st = ev_exec_block(ev, env, &s->body);
  ev->in_ws = false;
  IrStmt *body = ev_pop_block(ev, saved, env, "T.ws block", loc);
  if (st == EX_RETURN) ts_error(c, loc, "'return' inside T.ws is not supported");
  ev_emit(ev, tb_ws_if(c, k, ws->u.ws.lo, ws->u.ws.hi, body, loc));
  return EX_NORMAL;
}

/* `with A as a, B as b: body` is `with A as a: (with B as b: body)` (Python's definition):
 * the first item with, as its body, a WITH of the remaining items. */
static ExecStatus exec_with(Eval *ev, Env *env, const AstNode *s);
static ExecStatus exec_with_items(Eval *ev, Env *env, const AstNode *s) {
  size_t size = ast_node_size[AST_WITH];
  AstNode *rest = arena_alloc8(ev->a, size), *first = arena_alloc8(ev->a, size);
  memcpy(rest, s, size);
  rest->withitems = s->withitems + 1;
  rest->nwithitems = s->nwithitems - 1;
  memcpy(first, s, size);
  first->nwithitems = 1;
  first->body.items = ARENA_ARRAY(ev->a, AstNode *, 1);
  first->body.items[0] = rest;
  first->body.n = 1;
  return exec_with(ev, env, first);
}

/* with: T.Kernel; an unsupported frame (T.ws ...) runs its body so that it is checked. */
static ExecStatus exec_with(Eval *ev, Env *env, const AstNode *s) {
  if (s->nwithitems > 1) return exec_with_items(ev, env, s);
  Value *ctx = ev_eval(ev, env, s->withitems[0].context);
  if ((!ctx || ctx->kind == V_POISON) && ev->block && !ev->kernel && is_kernel_call(s->withitems[0].context))
    return exec_failed_kernel(ev, env, s);
  if (!ctx || ctx->kind == V_POISON) { /* keep reporting errors inside; `as` names stay silent */
    if (s->withitems[0].vars) ev_assign(ev, env, s->withitems[0].vars, NULL, s->loc);
    return ev_exec_block(ev, env, &s->body);
  }
  if (ctx->kind == V_KERNEL) return exec_kernel(ev, env, s, s->withitems[0].vars, ctx->u.kernel);
  if (ctx->kind == V_WS) return exec_ws(ev, env, s, ctx);
  if (ctx->kind == V_NULLCTX) { /* no effect on entry or exit */
    if (s->withitems[0].vars) ev_assign(ev, env, s->withitems[0].vars, ctx->u.enter, s->loc);
    return ev_exec_block(ev, env, &s->body);
  }
  if (ctx->kind == V_REDUCE_SCOPE) { /* the body's T.tvm_thread_allreduce uses this reducer */
    if (s->withitems[0].vars) ev_assign(ev, env, s->withitems[0].vars, ev->none, s->loc);
    const Value *outer = ev->reduce_scope;
    ev->reduce_scope = ctx->u.enter;
    ExecStatus st = ev_exec_block(ev, env, &s->body);
    ev->reduce_scope = outer;
    return st;
  }
  if (ctx->kind == V_OPAQUE && ev->block) {
    /* An unsupported frame (T.ws, T.attr...): its UNSUPPORTED statement is already emitted. */
    if (s->withitems[0].vars) ev_assign(ev, env, s->withitems[0].vars, ctx, s->loc);
    return ev_exec_block(ev, env, &s->body);
  }
  if (ctx->kind == V_OPAQUE) {
    ev_use_opaque(ev, ctx, s->loc);
    return EX_NORMAL;
  }
  ts_error(ev->c, s->loc, "'%s' object cannot be used in a 'with' statement", ev_type_name(ctx));
  return EX_NORMAL;
}

/* Runs one statement (the hook ev->exec_stmt points here). */
ExecStatus ev_exec_stmt(Eval *ev, Env *env, const AstNode *s) {
  ev->stmt_loc = s->loc;
  switch (s->kind) {
  case AST_EXPR: {
    Value *v = ev_eval(ev, env, s->value);
    /* A call evaluated for its effect in a kernel (`T.call_extern("decode", ...)`): kept as
     * an EVAL statement; a pure value is dropped, as Python drops it. */
    if (v && v->kind == V_EXPR && ev->block && v->u.expr->kind == IR_CALL && !ir_call_is_pure(v->u.expr))
      ev_emit(ev, ir_eval(ev->c, v->u.expr, s->loc));
    return EX_NORMAL;
  }
  case AST_ASSIGN: {
    const char *pending = NULL;
    if (s->items.n == 1 && s->items.items[0]->kind == AST_NAME) pending = s->items.items[0]->id;
    ev->pending_name = pending;
    Value *v = ev_eval(ev, env, s->value);
    ev->pending_name = NULL;
    for (int i = 0; i < s->items.n; i++) ev_assign(ev, env, s->items.items[i], v, s->loc);
    return EX_NORMAL;
  }
  case AST_AUGASSIGN: ev_exec_augassign(ev, env, s); return EX_NORMAL;
  case AST_ANNASSIGN: {
    const AstNode *t = s->target;
    if (s->value) {
      if (t->kind == AST_NAME) ev->pending_name = t->id;
      Value *v = ev_eval(ev, env, s->value);
      ev->pending_name = NULL;
      ev_assign(ev, env, t, v, s->loc);
      return EX_NORMAL;
    }
    /* Eager style: `A: T.Tensor((M, K), dtype)` declares a tensor parameter. */
    if (ev->eager && t->kind == AST_NAME) {
      for (int i = 0; i < ev->eager_pending.len; i++)
        if (!strcmp(ev->eager_pending.items[i], t->id)) {
          Value *ann = ev_eval(ev, env, s->annotation);
          if (!ann || ann->kind != V_TENSORTYPE) {
            if (ann && ann->kind != V_POISON)
              ts_error(ev->c, s->annotation->loc, "parameter '%s' must be declared with T.Tensor(shape, dtype), got %s",
                       t->id, ev_type_name(ann));
            /* declared, but unusable: later uses and the missing-value check stay silent */
            ev->eager_pending.items[i] = (void *)"";
            ev_env_set(ev, env, t->id, ev->poison);
            return EX_NORMAL;
          }
          IrBuffer *b = ev_tensor_param(ev, t->id, ann, t->loc);
          if (!b) return EX_NORMAL;
          IrParam *p = ARENA_NEW(ev->a, IrParam);
          p->name = t->id;
          p->buf = b;
          vec_push(ev->a, &ev->eager_params, p);
          ev->eager_pending.items[i] = (void *)""; /* declared */
          Value *bv = ev_new(ev, V_BUFFER);
          bv->u.buf = b;
          ev_env_set(ev, env, t->id, bv);
          return EX_NORMAL;
        }
    }
    return EX_NORMAL; /* `x: T.int32` without a value declares nothing */
  }
  case AST_FOR: return exec_for(ev, env, s);
  case AST_WHILE: return exec_while(ev, env, s);
  case AST_IF: return exec_if(ev, env, s);
  case AST_WITH: return exec_with(ev, env, s);
  case AST_RETURN:
    ev->ret = s->value ? ev_eval(ev, env, s->value) : ev->none;
    if (!ev->ret) ev->ret = ev->poison;
    return EX_RETURN;
  case AST_PASS: return EX_NORMAL;
  case AST_BREAK:
  case AST_CONTINUE:
    if (!ev->loop) {
      ts_error(ev->c, s->loc, "'%s' outside loop", s->kind == AST_BREAK ? "break" : "continue");
      return EX_NORMAL;
    }
    if (ev->loop->is_ir) {
      ev_emit(ev, ir_stmt(ev->c, s->kind == AST_BREAK ? IR_S_BREAK : IR_S_CONTINUE, s->loc));
      return EX_NORMAL;
    }
    return s->kind == AST_BREAK ? EX_BREAK : EX_CONTINUE;
  case AST_FUNCTIONDEF: {
    Value *f = ev_new(ev, V_FUNC);
    f->u.fn.def = s;
    f->u.fn.env = env;
    f->u.fn.flavor = ev_decorator_flavor(s);
    ev_env_set(ev, env, s->id, f);
    return EX_NORMAL;
  }
  case AST_CLASSDEF:
    ev_env_set(ev, env, s->id, ev_class_new(ev, env, s));
    return EX_NORMAL;
  case AST_ASSERT: {
    Value *t = ev_eval(ev, env, s->test);
    int tv = ev_truth(ev, t, s->test->loc);
    if (tv == -2) return EX_NORMAL;
    const char *msg = NULL;
    if (s->msg) {
      Value *m = ev_eval(ev, env, s->msg);
      if (m) msg = ev_strval(ev, m);
    }
    if (tv == 0) {
      ts_error(ev->c, s->loc, "assertion failed%s%s", msg ? ": " : "", msg ? msg : "");
      return EX_NORMAL;
    }
    if (tv == -1 && ev->block) {
      IrStmt *a = ir_stmt(ev->c, IR_S_ASSERT, s->loc);
      a->u.assert_.cond = ev_to_bool_ir(ev, ev_to_ir(ev, t, NULL, s->loc), s->loc);
      a->u.assert_.msg = msg ? msg : "assertion failed";
      ev_emit(ev, a);
    }
    return EX_NORMAL;
  }
  case AST_RAISE: {
    Value *v = s->value ? ev_eval(ev, env, s->value) : NULL;
    ts_error(ev->c, s->loc, "exception raised%s%s", v ? ": " : "", v ? ev_strval(ev, v) : "");
    return EX_RETURN;
  }
  case AST_IMPORT:
  case AST_IMPORTFROM: ev_exec_import(ev, env, s); return EX_NORMAL;
  case AST_TRY: return ev_exec_block(ev, env, &s->body);
  case AST_DELETE:
  case AST_GLOBAL:
  case AST_NONLOCAL: return EX_NORMAL;
  default: break;
  }
  ts_error(ev->c, s->loc, "%s statements are not supported", ast_kind_names[s->kind]);
  return EX_NORMAL;
}
