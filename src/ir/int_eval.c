/* int_eval.c — integer expressions evaluated on the host: ir_eval_int / ir_eval_int_with (one
 * evaluation, a variable's value asked of the caller) and IrIntProg (an expression compiled
 * once into postfix operations over numbered slots, for analyses that evaluate it at many
 * points: thread_owners.c).  Both give the same value, or both fail: a float, a call, a load,
 * a division by zero or a shift past 63 bits. */
#include <stdlib.h>

#include "analysis.h"

/* A node the evaluators take as an integer operation of two operands. */
static bool int_binary(const IrExpr *e) { return ir_expr_nops[e->kind] == 2 && !dtype_is_float(e->dtype); }

bool ir_eval_int_with(const IrExpr *e, IrVarValue value, void *ctx, int64_t *out) {
  int64_t a, b, cnd;
  switch (e->kind) {
    case IR_INT: *out = e->u.ival; return true;
    case IR_VAR: return value(e->u.var, ctx, out);
    case IR_CAST: return dtype_is_float(e->dtype) ? false : ir_eval_int_with(e->u.ops[0], value, ctx, out);
    case IR_NEG:
      if (!ir_eval_int_with(e->u.ops[0], value, ctx, &a)) return false;
      *out = -a;
      return true;
    case IR_NOT:
      if (!ir_eval_int_with(e->u.ops[0], value, ctx, &a)) return false;
      *out = !a;
      return true;
    case IR_SELECT:
    case IR_IF_THEN_ELSE:
      if (!ir_eval_int_with(e->u.ops[0], value, ctx, &cnd)) return false;
      return ir_eval_int_with(e->u.ops[cnd ? 1 : 2], value, ctx, out);
    default: break;
  }
  if (!int_binary(e)) return false;
  return ir_eval_int_with(e->u.ops[0], value, ctx, &a) && ir_eval_int_with(e->u.ops[1], value, ctx, &b) &&
         ir_int_binop(e->kind, a, b, out);
}

typedef struct VarTable { IrVar *const *vars; const int64_t *vals; int n; } VarTable;
static bool table_value(const IrVar *v, void *ctx, int64_t *out) {
  const VarTable *t = ctx;
  for (int i = 0; i < t->n; i++)
    if (t->vars[i] == v) {
      *out = t->vals[i];
      return true;
    }
  return false;
}
bool ir_eval_int(const IrExpr *e, IrVar *const *vars, const int64_t *vals, int nvars, int64_t *out) {
  VarTable t = {vars, vals, nvars};
  return ir_eval_int_with(e, table_value, &t, out);
}

/* ---- compiled programs ------------------------------------------------------------------------ */
/* OP_BINK: the operation with a constant right operand (v); OP_SHRK / OP_ANDK: floor division
 * and floor modulo by a power of two v, as a shift and a mask (exact for negatives too). */
enum { OP_CONST, OP_SLOT, OP_NEG, OP_NOT, OP_BIN, OP_BINK, OP_SHRK, OP_ANDK, OP_ADDK, OP_MULK,
       PROG_MAX_OPS = 512, PROG_MAX_DEPTH = 64, PROG_MAX_INLINE = 8 };
typedef struct IrIntOp { unsigned char code, kind; int64_t v; } IrIntOp;
struct IrIntProg {
  IrIntOp ops[PROG_MAX_OPS];
  int n;
};

typedef struct Compile {
  IrIntProg *p;
  const IrIntSlots *slots;
  int depth, max_depth; /* the stack while it runs */
} Compile;

static bool emit(Compile *cc, int code, int kind, int64_t v, int push) {
  if (cc->p->n == PROG_MAX_OPS) return false;
  cc->p->ops[cc->p->n++] = (IrIntOp){(unsigned char)code, (unsigned char)kind, v};
  cc->depth += push;
  if (cc->depth > cc->max_depth) cc->max_depth = cc->depth;
  return cc->max_depth <= PROG_MAX_DEPTH;
}

/* Postfix code of e; inline: LETs being expanded (their values compiled in place). */
static bool compile(Compile *cc, const IrExpr *e, int inline_depth) {
  switch (e->kind) {
    case IR_INT: return emit(cc, OP_CONST, 0, e->u.ival, 1);
    case IR_VAR: {
      int slot = cc->slots->slot_of(e->u.var, cc->slots->ctx);
      if (slot >= 0) return emit(cc, OP_SLOT, 0, slot, 1);
      const IrExpr *val = cc->slots->value_of ? cc->slots->value_of(e->u.var, cc->slots->ctx) : NULL;
      return val && inline_depth < PROG_MAX_INLINE && compile(cc, val, inline_depth + 1);
    }
    case IR_CAST: return !dtype_is_float(e->dtype) && compile(cc, e->u.ops[0], inline_depth);
    case IR_NEG: case IR_NOT:
      return compile(cc, e->u.ops[0], inline_depth) && emit(cc, e->kind == IR_NEG ? OP_NEG : OP_NOT, 0, 0, 0);
    default: break;
  }
  if (!int_binary(e)) return false; /* SELECT / IF_THEN_ELSE too: only one side is evaluated there */
  if (!compile(cc, e->u.ops[0], inline_depth)) return false;
  const IrExpr *r = e->u.ops[1];
  if (r->kind != IR_INT) return compile(cc, r, inline_depth) && emit(cc, OP_BIN, e->kind, 0, -1);
  int64_t k = r->u.ival;
  bool pow2 = k > 0 && !(k & (k - 1));
  if (pow2 && e->kind == IR_FLOORDIV) return emit(cc, OP_SHRK, 0, __builtin_ctzll((unsigned long long)k), 0);
  if (pow2 && e->kind == IR_FLOORMOD) return emit(cc, OP_ANDK, 0, k - 1, 0);
  if (e->kind == IR_ADD || e->kind == IR_SUB)
    return emit(cc, OP_ADDK, 0, (int64_t)(e->kind == IR_ADD ? (uint64_t)k : -(uint64_t)k), 0);
  if (e->kind == IR_MUL) return emit(cc, OP_MULK, 0, k, 0);
  return emit(cc, OP_BINK, e->kind, k, 0);
}

IrIntProg *ir_int_prog(const IrExpr *e, const IrIntSlots *slots) {
  IrIntProg *p = malloc(sizeof *p);
  if (!p) return NULL;
  p->n = 0;
  Compile cc = {p, slots, 0, 0};
  if (compile(&cc, e, 0)) return p;
  free(p);
  return NULL;
}

void ir_int_prog_free(IrIntProg *p) { free(p); }

bool ir_int_prog_run(const IrIntProg *p, const int64_t *slots, int64_t *out) {
  int64_t st[PROG_MAX_DEPTH + 1];
  int sp = 0;
  for (int i = 0; i < p->n; i++) {
    const IrIntOp *op = &p->ops[i];
    switch (op->code) {
      case OP_CONST: st[sp++] = op->v; break;
      case OP_SLOT: st[sp++] = slots[op->v]; break;
      case OP_NEG: st[sp - 1] = -st[sp - 1]; break;
      case OP_NOT: st[sp - 1] = !st[sp - 1]; break;
      case OP_SHRK: st[sp - 1] >>= op->v; break;
      case OP_ANDK: st[sp - 1] &= op->v; break;
      case OP_ADDK: st[sp - 1] = (int64_t)((uint64_t)st[sp - 1] + (uint64_t)op->v); break;
      case OP_MULK: st[sp - 1] = (int64_t)((uint64_t)st[sp - 1] * (uint64_t)op->v); break;
      case OP_BINK:
        if (!ir_int_binop((IrExprKind)op->kind, st[sp - 1], op->v, &st[sp - 1])) return false;
        break;
      default:
        if (!ir_int_binop((IrExprKind)op->kind, st[sp - 2], st[sp - 1], &st[sp - 2])) return false;
        sp--;
        break;
    }
  }
  *out = st[0];
  return sp == 1;
}
