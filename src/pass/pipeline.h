/* pipeline.h — the ordered list of passes from tile-level IR to thread-level IR
 * (see pipeline.c for the diagram).  Returns false when a pass reported errors. */
#ifndef TS_PIPELINE_H
#define TS_PIPELINE_H

#include "../ir/ir.h"

bool pass_pipeline(TsCompiler *c, IrFunc *f);

#endif
