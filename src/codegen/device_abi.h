/* device_abi.h — the one place that spells device-library calls: how each typed device
 * operation of the IR (IR_DEVICE_OPS in ir.h) is written as a call of a template in
 * the headers in device/tilescale/.  tests/unit/test_device_abi.c checks every row against the
 * headers (the function exists, takes that many template and call arguments). */
#ifndef TS_CODEGEN_DEVICE_ABI_H
#define TS_CODEGEN_DEVICE_ABI_H

#include "../ir/ir.h"

/* A row: the C++ name (a `%d` in it takes the first attribute, e.g. the TMA rank), then one
 * character per remaining attribute, each a template argument in order:
 *   'i' integer, 'b' bool (true/false), 't' dtype (its C++ element type),
 *   'S' / 'C' memory semantics / scope (IrMemSem / IrMemScope as ts::dist::Sem / Scope). */
typedef struct CgDeviceAbi {
  const char *spelling;
  const char *template_args;
  const char *header;        /* the device header that defines it */
} CgDeviceAbi;

extern const CgDeviceAbi cg_device_abi[IRD_COUNT];

/* The callee of a device call `e` (IRI_DEVICE): name and template arguments. */
void cg_device_callee(StrBuf *sb, const IrExpr *e);
/* The wgmma width N/WGN (m64nNk*) a wgmma GEMM call `e` issues, 0 for any other device
 * call, -1 when it cannot tell (gemm.cuh's TS_WGMMA_N_LIST must then list every width). */
int cg_wgmma_width(const IrExpr *e);
/* C++ spelling of an element type as the device headers use it (common.cuh). */
const char *cg_ctype(ts_dtype t);

#endif
