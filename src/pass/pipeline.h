/* pipeline.h — the ordered list of passes from tile-level IR to thread-level IR
 * (see pipeline.c for the diagram).  Returns false when a pass reported errors. */
#ifndef TS_PIPELINE_H
#define TS_PIPELINE_H

#include "../ir/ir.h"

bool pass_pipeline(TsCompiler *c, IrFunc *f);

/* Whether --dump-after NAME names a pass (or is "all"): a misspelt pass name would
 * otherwise dump nothing and look like a pass that changed nothing. */
bool pass_pipeline_has(const char *name);
/* The pass names in pipeline order, comma-separated. */
void pass_pipeline_names(StrBuf *out);

#endif
