/* driver.h — the compiler driver: the one layer that knows every compiler layer (front end,
 * passes, codegen) and strings them together for the API (src/rt/api.c), so that the
 * runtime includes no front-end or pass header.
 *
 *   drv_parse       kernel file text -> module AST (once per program)
 *   drv_functions   the kernel functions a module offers
 *   drv_compile     module + function + parameters -> Tile IR -> passes -> CUDA source and
 *                   launch metadata (CgOutput), the IR text for --emit ir and the work
 *                   counts for --emit stats (src/ir/stats.c) on the way
 *   drv_parse_arch  "sm_90a" -> TsTarget */
#ifndef TS_DRIVER_DRIVER_H
#define TS_DRIVER_DRIVER_H

#include "../../include/tilescale.h"
#include "../codegen/cuda.h"

typedef struct AstNode AstNode;

/* The largest kernel file the front end accepts (lex.h LEX_MAX_SOURCE_BYTES; driver.c checks
 * they agree): the API refuses a bigger file before reading it. */
#define DRV_MAX_SOURCE_BYTES ((size_t)16 << 20)

/* Parses the whole file; NULL (with diagnostics in c) when it does not parse. */
AstNode *drv_parse(TsCompiler *c, const SourceFile *file);
/* Names of the kernel functions of module (at most max; names may be NULL to count). */
int drv_functions(const AstNode *module, const char **names, int max);
/* Compiles `func`: false with diagnostics in c on a user error.  *ir_text gets the front
 * end's IR (before any pass), *stats_text the JSON counts of its work (FLOPs, global
 * bytes: ir_func_stats); *f_out the lowered function (metadata lives on it). */
bool drv_compile(TsCompiler *c, const AstNode *module, const char *func, const ts_param *params, int nparams,
                 StrBuf *ir_text, StrBuf *stats_text, IrFunc **f_out, CgOutput *cg);
/* "sm_90a", "90", "sm_80" -> target; false when malformed or not an architecture NVIDIA
 * has defined (sm_999, sm_80a). */
bool drv_parse_arch(const char *s, TsTarget *out);
/* The accepted architectures, comma-separated (for error messages). */
void drv_arch_list(StrBuf *out);
/* Whether `name` is a pass of the pipeline (--dump-after), and their names. */
bool drv_has_pass(const char *name);
void drv_pass_names(StrBuf *out);

#endif
