/* thread_branch.h — an `if` on a warp-aligned range of the thread index as a T.ws body
 * (thread_branch.c); used by eval_stmt.c. */
#ifndef TS_FRONT_THREAD_BRANCH_H
#define TS_FRONT_THREAD_BRANCH_H
#include "../ir/analysis.h"
#include "../ir/ir.h"

/* The threads of [lo, hi) for which cond holds, when they form an interval [*rlo, *rhi)
 * (possibly empty); false when cond is not such a condition on the linear thread index. */
bool tb_cond_range(const IrKernel *k, const IrExpr *cond, int64_t lo, int64_t hi, int64_t *rlo, int64_t *rhi);
/* A range tile operations can be lowered over: non-empty, on warp boundaries. */
bool tb_range_ok(int64_t lo, int64_t hi);
/* Does staged code s hold tile operations (T.copy, T.fill, T.Parallel, T.reduce, T.gemm ...)? */
bool tb_has_tile_ops(IrStmt *s);
/* The IF of a T.ws body over threads [lo, hi): `tx < hi` or `tx >= lo and tx < hi`. */
IrStmt *tb_ws_if(TsCompiler *c, IrKernel *k, int64_t lo, int64_t hi, IrStmt *body, SrcLoc loc);

#endif
