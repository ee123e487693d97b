/* verify.c — structural checks of Tile IR run after every pass in debug builds
 * (STYLE.md: "ir_verify after each pass").  A failure is a compiler bug: it prints the
 * pass that broke the invariant and the offending node, then asserts. */
#include <stdio.h>
#include <stdlib.h>

#include "ir.h"

typedef struct Verifier {
  TsCompiler *c;
  const char *pass;
  PtrVec scope; /* IrVar* currently defined */
  bool thread_level; /* inside a kernel after lowering? (not enforced yet) */
} Verifier;

static void fail(Verifier *v, SrcLoc loc, const char *what, const char *name) {
  fprintf(stderr, "tilescale: IR verification failed after pass '%s': %s%s%s", v->pass, what,
          name ? " " : "", name ? name : "");
  if (loc.file) fprintf(stderr, " (from %s:%d:%d)", loc.file->name, loc.line, loc.col);
  fputc('\n', stderr);
  ts_assert_fail(__FILE__, __LINE__, "ir_verify");
}

static bool defined(Verifier *v, IrVar *x) {
  for (int i = v->scope.len - 1; i >= 0; i--)
    if (v->scope.items[i] == x) return true;
  return false;
}

static void expr(Verifier *v, const IrExpr *e) {
  if (!e) fail(v, SRCLOC_NONE, "null expression", NULL);
  switch (e->kind) {
    case IR_INT: case IR_FLOAT: case IR_STR: return;
    case IR_VAR:
      /* Block/thread/placeholder vars are implicitly defined. */
      if (e->u.var->kind == IR_VAR_LET || e->u.var->kind == IR_VAR_LOOP)
        if (!defined(v, e->u.var)) fail(v, e->loc, "variable used outside its definition:", e->u.var->name);
      return;
    case IR_CALL:
      if (ir_intrin_info[e->u.call.op].nargs >= 0 && ir_intrin_info[e->u.call.op].nargs != e->u.call.nargs)
        fail(v, e->loc, "wrong number of arguments to intrinsic", ir_intrin_info[e->u.call.op].name);
      if (e->u.call.op == IRI_DEVICE) {
        const IrDeviceInfo *d = (unsigned)e->u.call.dop < IRD_COUNT ? &ir_device_info[e->u.call.dop] : NULL;
        if (!d) fail(v, e->loc, "unknown device operation", NULL);
        else if ((d->nargs >= 0 && d->nargs != e->u.call.nargs) || d->nattrs != e->u.call.nattrs)
          fail(v, e->loc, "wrong number of operands or attributes to device operation", d->name);
      }
      for (int i = 0; i < e->u.call.nargs; i++) expr(v, e->u.call.args[i]);
      return;
    case IR_LOAD:
      if (!e->u.load.buf) fail(v, e->loc, "load of null buffer", NULL);
      for (int i = 0; i < e->u.load.nidx; i++) expr(v, e->u.load.idx[i]);
      return;
    default:
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) expr(v, e->u.ops[i]);
  }
}

static void region(Verifier *v, const IrRegion *r) {
  if (!r->buf) fail(v, r->loc, "region of null buffer", NULL);
  if (r->ndim != r->buf->ndim) fail(v, r->loc, "region rank differs from its buffer:", r->buf->name);
  for (int i = 0; i < r->ndim; i++) {
    expr(v, r->min[i]);
    expr(v, r->extent[i]);
  }
}

static void stmt(Verifier *v, const IrStmt *s) {
  if (!s) return;
  switch (s->kind) {
    case IR_S_SEQ: {
      int mark = v->scope.len;
      for (int i = 0; i < s->u.seq.n; i++) stmt(v, s->u.seq.items[i]);
      v->scope.len = mark;
      break;
    }
    case IR_S_FOR:
      expr(v, s->u.loop.min);
      expr(v, s->u.loop.extent);
      vec_push(v->c->arena, &v->scope, s->u.loop.var);
      stmt(v, s->u.loop.body);
      v->scope.len--;
      break;
    case IR_S_IF: {
      expr(v, s->u.if_.cond);
      int mark = v->scope.len;
      stmt(v, s->u.if_.then_s);
      v->scope.len = mark;
      stmt(v, s->u.if_.else_s);
      v->scope.len = mark;
      break;
    }
    case IR_S_WHILE: {
      expr(v, s->u.while_.cond);
      int mark = v->scope.len;
      stmt(v, s->u.while_.body);
      v->scope.len = mark;
      break;
    }
    case IR_S_LET:
      expr(v, s->u.let.value);
      vec_push(v->c->arena, &v->scope, s->u.let.var);
      break;
    case IR_S_STORE:
      if (!s->u.store.buf) fail(v, s->loc, "store to null buffer", NULL);
      for (int i = 0; i < s->u.store.nidx; i++) expr(v, s->u.store.idx[i]);
      expr(v, s->u.store.value);
      break;
    case IR_S_EVAL: expr(v, s->u.eval.value); break;
    case IR_S_KERNEL: {
      for (int i = 0; i < 3; i++)
        if (s->u.kernel.grid[i]) expr(v, s->u.kernel.grid[i]);
      int mark = v->scope.len;
      stmt(v, s->u.kernel.body);
      v->scope.len = mark;
      break;
    }
    case IR_S_ASSERT: expr(v, s->u.assert_.cond); break;
    case IR_S_COPY:
      region(v, &s->u.copy.src);
      region(v, &s->u.copy.dst);
      if (s->u.copy.barrier) expr(v, s->u.copy.barrier);
      if (s->u.copy.dst_block) expr(v, s->u.copy.dst_block);
      break;
    case IR_S_FILL: region(v, &s->u.fill.dst); expr(v, s->u.fill.value); break;
    case IR_S_ATOMIC:
      region(v, &s->u.atomic.dst);
      if (s->u.atomic.tile) region(v, &s->u.atomic.src);
      else expr(v, s->u.atomic.value);
      break;
    case IR_S_REDUCE:
      if (!s->u.reduce.src || !s->u.reduce.dst) fail(v, s->loc, "reduce with null buffer", NULL);
      break;
    default: break;
  }
}

void ir_verify(TsCompiler *c, const IrFunc *f, const char *after_pass) {
  Verifier v = {c, after_pass ? after_pass : "?", {0}, false};
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i].var) vec_push(c->arena, &v.scope, f->params[i].var);
  for (int i = 0; i < f->ndyn; i++) vec_push(c->arena, &v.scope, f->dyn_vars[i]);
  stmt(&v, f->body);
}
