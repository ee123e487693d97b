/* cuda_gen.h — the CUDA printer's shared state, inside src/codegen only: the generator
 * state (Cg), the pointer map, names and output helpers (cuda_names.c) and the expression
 * printer (cuda_expr.c) that the statement and kernel printer (cuda.c) builds on. */
#ifndef TS_CODEGEN_CUDA_GEN_H
#define TS_CODEGEN_CUDA_GEN_H

#include "cuda.h"
#include "device_abi.h"
#include "../ir/analysis.h"

#include <stdint.h>

/* ---- pointer -> value map (IrVar / IrBuffer identity is by pointer) ------------------ */
typedef struct PtrMap {
  const void **keys;
  void **vals;
  int cap, len;
} PtrMap;

/* ---- generator state ---------------------------------------------------------------- */
typedef struct Cg {
  TsCompiler *c;
  const IrFunc *f;
  StrBuf *out;          /* body of the kernel being printed */
  int indent;
  PtrMap names;         /* IrVar* / IrBuffer* -> C name (per kernel) */
  StrMap used;          /* C names taken in the kernel */
  PtrMap nonneg;        /* vars known to be >= 0 (loop vars from a non-negative start, lets) */
  const char *lane;     /* lane variable while a vector expression is printed element-wise */
  int64_t smem_end;     /* highest byte used by shared.dyn buffers of the kernel */
  bool use_reduce, use_atomic;
  bool use_curand; /* a cuRAND generator (rng_curand.cuh: curand_kernel.h) */
  bool use_gemm;        /* tensor-core / async-copy helpers (tilescale/gemm.cuh) */
  bool use_gemm_sp;     /* T.gemm_sp's sparse tensor-core loop (tilescale/gemm_sp.cuh) */
  uint32_t wgmma_widths; /* bit w/8-1 for every wgmma width w issued (TS_WGMMA_N_LIST) */
  bool wgmma_any_width; /* a call the widths cannot be read from: gemm.cuh expands all */
  int device_flags;     /* union of the IRD_* flags of the device operations printed */
  const char *kernel_name;
  const IrStmt *kernel_body; /* of the kernel being printed (workspace_needs_zero) */
  StrBuf *decls;        /* module-scope declarations printed before the kernel (workspaces) */
  PtrVec workspaces;    /* CgWorkspace* of the kernel being printed */
  PtrMap wide16;        /* 16-bit register arrays held one element per 32-bit word (cuda_wide16.c) */
} Cg;

/* C operator precedence, higher binds tighter. */
enum {
  PREC_TERNARY = 3, PREC_LOR, PREC_LAND, PREC_BOR, PREC_BXOR, PREC_BAND, PREC_EQ, PREC_REL,
  PREC_SHIFT, PREC_ADD, PREC_MUL, PREC_UNARY, PREC_POSTFIX, PREC_PRIMARY
};

/* pointer map */
void *pmap_get(const PtrMap *m, const void *key);
void pmap_put(Arena *a, PtrMap *m, const void *key, void *val);

/* types */
int tbytes(ts_dtype t);
bool packed_mem(const IrBuffer *b);
const char *mem_ctype(const IrBuffer *b);
int64_t mem_bytes(const IrBuffer *b, int64_t n);
bool is_low_float(ts_dtype t);
bool is_floating(ts_dtype t);
bool is_unsigned(ts_dtype t);
bool is_integer(ts_dtype t);
const char *tname(ts_dtype t);

/* names */
const char *fresh_name(Cg *g, const char *base);
const char *bind_name(Cg *g, const void *node, const char *base);
const char *var_name(Cg *g, const IrVar *v);
const char *buf_name(Cg *g, const IrBuffer *b);

/* output */
void line_start(Cg *g);
TS_PRINTF(2, 3) void line(Cg *g, const char *fmt, ...);
void c_string(StrBuf *sb, const char *s);

/* expressions (cuda_expr.c) */
bool nonneg(Cg *g, const IrExpr *e);
void expr(Cg *g, StrBuf *sb, const IrExpr *e, int min_prec);
void expr_as(Cg *g, StrBuf *sb, const IrExpr *e, ts_dtype t, int min_prec);
void flat_index(Cg *g, StrBuf *sb, const IrBuffer *b, IrExpr *const *idx, int nidx);
/* buf[idx] as an lvalue (lanes > 1 only inside a vector store's element-wise printing) */
void mem_access(Cg *g, StrBuf *sb, const IrBuffer *b, IrExpr *const *idx, int nidx, int lanes, SrcLoc loc);
void address_of(Cg *g, StrBuf *sb, const IrExpr *ld);
void wgmma_width_list(StrBuf *src, uint32_t widths);
/* 16-bit register arrays indexed at run time, stored in 32-bit words (cuda_wide16.c) */
void cg_find_wide16(Cg *g, IrStmt *body);
bool cg_is_wide16(const Cg *g, const IrBuffer *b);


#endif
