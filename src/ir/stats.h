/* stats.h — the work a compiled function does, counted from its tile-level IR (stats.c):
 * tensor-core FLOPs of its T.gemm statements and the bytes it moves to and from global
 * memory, per kernel launch and in total, as a small JSON text (`--emit stats`,
 * ts_kernel_text(k, TS_EMIT_STATS); tilelang.tools.Analyzer reads it). */
#ifndef TS_IR_STATS_H
#define TS_IR_STATS_H

#include "ir.h"

/* Appends the JSON object for f (the front end's IR, before any pass) to out. */
void ir_func_stats(const IrFunc *f, StrBuf *out);

#endif
