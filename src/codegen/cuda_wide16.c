/* cuda_wide16.c — register arrays of 16-bit elements that a thread indexes by a run-time
 * value (`l[o * 16 + threadIdx.x / 16] = max(l[...], x)`: a reducer or a T.alloc_local array
 * indexed by the thread's row) are held one element per 32-bit word.
 *
 * ptxas of CUDA 13.0 (sm_90a, NVRTC and nvcc alike) miscompiles repeated read-modify-writes
 * of such elements: it splits each 16-bit local-memory store into two byte stores and the
 * low byte comes out wrong (measured on an H200: a row maximum of float16 values kept its
 * high byte, 0x410B came back as 0x4102; the same code over 32-bit words is exact).  Arrays
 * that vector copies or device calls address stay 16-bit (they are indexed statically). */
#include "cuda_gen.h"

typedef struct Wide16Scan {
  Cg *g;
  PtrMap dynamic, blocked; /* IrBuffer* -> 1 */
} Wide16Scan;

static bool is_16bit_register_array(const IrBuffer *b) {
  return (b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_FRAGMENT) && tbytes(b->dtype) == 2 && !packed_mem(b);
}

/* An index the compiler cannot fold to a constant by unrolling: it reads the thread or block
 * index, a let-bound value or memory. */
static void find_runtime(IrExpr *e, void *ctx) {
  if (e->kind == IR_LOAD) *(bool *)ctx = true;
  if (e->kind == IR_VAR && e->u.var->kind != IR_VAR_LOOP) *(bool *)ctx = true;
}
static bool runtime_index(IrExpr *const *idx, int n) {
  bool found = false;
  IrVisitor v = {NULL, find_runtime, &found};
  for (int i = 0; i < n && !found; i++) ir_visit_expr(idx[i], &v);
  return found;
}

static void note(Wide16Scan *w, const IrBuffer *b, IrExpr *const *idx, int n, int lanes) {
  if (!is_16bit_register_array(b)) return;
  if (lanes > 1) pmap_put(w->g->c->arena, &w->blocked, b, (void *)1);
  else if (runtime_index(idx, n)) pmap_put(w->g->c->arena, &w->dynamic, b, (void *)1);
}

static void scan_expr(IrExpr *e, void *ctx) {
  Wide16Scan *w = ctx;
  if (e->kind == IR_LOAD) note(w, e->u.load.buf, e->u.load.idx, e->u.load.nidx, e->lanes);
  if (e->kind == IR_CALL && e->u.call.op == IRI_ADDRESS_OF && e->u.call.args[0]->kind == IR_LOAD)
    pmap_put(w->g->c->arena, &w->blocked, e->u.call.args[0]->u.load.buf, (void *)1); /* a pointer escapes */
}
static void scan_stmt(IrStmt *s, void *ctx) {
  Wide16Scan *w = ctx;
  if (s->kind != IR_S_STORE) return;
  note(w, s->u.store.buf, s->u.store.idx, s->u.store.nidx, s->u.store.lanes > 1 || s->u.store.async_ ? 2 : 1);
}

static void keep_unblocked(IrStmt *s, void *ctx) {
  Wide16Scan *w = ctx;
  if (s->kind != IR_S_ALLOC) return;
  IrBuffer *b = s->u.alloc.buf;
  if (pmap_get(&w->dynamic, b) && !pmap_get(&w->blocked, b)) pmap_put(w->g->c->arena, &w->g->wide16, b, (void *)1);
}

void cg_find_wide16(Cg *g, IrStmt *body) {
  g->wide16 = (PtrMap){0};
  if (!body) return;
  Wide16Scan w = {g, {0}, {0}};
  IrVisitor v = {scan_stmt, scan_expr, &w};
  ir_visit(body, &v);
  IrVisitor k = {keep_unblocked, NULL, &w};
  ir_visit(body, &k);
}

bool cg_is_wide16(const Cg *g, const IrBuffer *b) { return pmap_get(&g->wide16, b) != NULL; }
