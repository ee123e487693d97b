/* analysis.h — analyses and walkers over the IR that every layer shares (passes, codegen):
 * walk.c (visit, rebuild, uses), range.c (intervals, divisibility, non-negativity) and
 * int_eval.c (compiled integer expressions). */
#ifndef TS_IR_ANALYSIS_H
#define TS_IR_ANALYSIS_H

#include "ir.h"

/* Rebuilds s with each child statement replaced by fn(child) (shallow copy of s). */
typedef IrStmt *(*IrStmtFn)(TsCompiler *c, IrStmt *s, void *ctx);
IrStmt *ir_map_children(TsCompiler *c, IrStmt *s, IrStmtFn fn, void *ctx);

/* Visits every statement (pre-order) and every expression subtree (pre-order) under s. */
typedef struct IrVisitor {
  void (*stmt)(IrStmt *s, void *ctx);
  void (*expr)(IrExpr *e, void *ctx);
  void *ctx;
} IrVisitor;
void ir_visit(IrStmt *s, const IrVisitor *v);
void ir_visit_expr(IrExpr *e, const IrVisitor *v);
bool ir_expr_uses_var(const IrExpr *e, const IrVar *v);
/* The buffer whose memory b is: b itself, or the root of a chain of views (IrBuffer.alias_of:
 * T.view, T.reshape, T.Tensor(..., data=)); NULL for NULL. */
const IrBuffer *ir_buffer_root(const IrBuffer *b);
/* The buffers a tile statement (T.copy, T.fill, a reduction, a tile or scalar atomic, T.gemm)
 * names in its regions, each with whether the statement writes it; returns how many (at most
 * IR_TILE_MAX_OPERANDS), 0 for any other statement.  Its loads and stores are expressions. */
#define IR_TILE_MAX_OPERANDS 4
typedef struct IrOperand { IrBuffer *buf; bool write; } IrOperand;
int ir_tile_operands(const IrStmt *s, IrOperand *out);
/* Does f read, write, view or map (TMA) buffer b anywhere (a tensor parameter it never
 * touches may be passed as no tensor: ts_tensor with data and shape NULL)? */
bool ir_func_touches_buffer(const IrFunc *f, const IrBuffer *b);

/* Interval analysis over integer expressions: ranges of vars are given in env. */
typedef struct IrRangeEnv {
  IrVar *var[32];
  int64_t lo[32], hi[32];
  int n;
} IrRangeEnv;
void ir_range_env_add(IrRangeEnv *env, IrVar *v, int64_t lo, int64_t hi);
bool ir_range(const IrExpr *e, const IrRangeEnv *env, int64_t *lo, int64_t *hi);
/* True when e is provably a multiple of m (for any values of its variables). */
bool ir_is_multiple(const IrExpr *e, int64_t m);
/* True when integer e is provably >= 0: thread/block indices and dynamic sizes are, other
 * variables when var_nonneg says so (may be NULL). */
bool ir_is_nonneg(const IrExpr *e, bool (*var_nonneg)(const IrVar *v, void *ctx), void *ctx);

/* An integer expression compiled for evaluation at many points (int_eval.c): its variables
 * read slots (slot_of >= 0) or are expanded through their values (value_of, for LETs); NULL
 * when it has anything ir_eval_int_with would not evaluate, or a variable neither places.
 * ir_int_prog_run gives what ir_eval_int_with would with those slot values. */
typedef struct IrIntProg IrIntProg;
typedef struct IrIntSlots {
  int (*slot_of)(const IrVar *v, void *ctx);
  const IrExpr *(*value_of)(const IrVar *v, void *ctx); /* may be NULL */
  void *ctx;
} IrIntSlots;
IrIntProg *ir_int_prog(const IrExpr *e, const IrIntSlots *slots);
bool ir_int_prog_run(const IrIntProg *p, const int64_t *slots, int64_t *out);
void ir_int_prog_free(IrIntProg *p);

#endif
