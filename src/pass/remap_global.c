/* remap_global.c — applies T.Layout index maps of global tensors (IrBuffer.remap, set by
 * T.annotate_layout; layout/index_map.h) to every access, after lower_tile_ops.
 *
 *   lower_tile_ops (element accesses, bounds guards on logical indices)  ->  here  ->  simplify
 *
 * By now every load, store and atomic of the kernel is one element with its logical index
 * (b, l, h, d); it becomes a one-index access at the physical offset, the row-major position
 * of the map's output tuple in its box.  Codegen prints a one-index access of a global
 * tensor as that offset.  The guards lower_tile_ops put around edge elements test the
 * logical index, which is what bounds the access: the map is a bijection of the shape onto
 * a box of the same size (checked when the layout was annotated).
 *
 * The passes before this one keep accesses of such a tensor scalar: no TMA box or tensor
 * map, no cp.async and no vector load, store or atomic (neighbouring logical elements are
 * not neighbours in memory).  An access that still is one is refused here rather than
 * printed wrong. */
#include "../layout/index_map.h"
#include "passes.h"

typedef struct Remap {
  TsCompiler *c;
  SrcLoc kernel;   /* the T.Kernel statement being rewritten */
  PtrVec reported; /* buffers refused in this kernel (one diagnostic each) */
} Remap;

static IrExpr *remap_expr(Remap *rm, IrExpr *e);

static IrExpr **remap_list(Remap *rm, IrExpr **xs, int n) {
  IrExpr **out = ARENA_ARRAY(rm->c->arena, IrExpr *, n);
  for (int i = 0; i < n; i++) out[i] = remap_expr(rm, xs[i]);
  return out;
}

/* False (one diagnostic per buffer and kernel) when buffer b may not be accessed here: a
 * view of a remapped tensor, or a remapped tensor this kernel did not annotate. */
static bool access_allowed(Remap *rm, const IrBuffer *b, SrcLoc loc) {
  const IrBuffer *base = b->alias_of && b->alias_of->remap ? b->alias_of : b;
  bool ok = base == b ? index_map_has_kernel(b->remap, rm->kernel) : false;
  if (ok) return true;
  for (int i = 0; i < rm->reported.len; i++)
    if (rm->reported.items[i] == b) return false;
  vec_push(rm->c->arena, &rm->reported, (void *)b);
  if (base != b)
    ts_error(rm->c, loc, "'%s' is a view of tensor '%s', which has a T.Layout: access '%s' itself", b->name,
             base->name, base->name);
  else
    ts_error(rm->c, loc,
             "tensor '%s' has a T.Layout (T.annotate_layout, line %d) in another kernel of this function but "
             "not in this one: annotate it in every kernel that accesses it",
             b->name, b->remap->loc.line);
  return false;
}

static bool remapped(const IrBuffer *b) {
  return b->remap || (b->alias_of && b->alias_of->remap);
}

/* The physical index of a remapped buffer's access: one offset.  NULL after a diagnostic. */
static IrExpr **physical_index(Remap *rm, IrBuffer *b, IrExpr **idx, int nidx, int lanes, SrcLoc loc) {
  TsCompiler *c = rm->c;
  if (!access_allowed(rm, b, loc)) return NULL;
  if (lanes != 1 || nidx != b->ndim) {
    ts_error(c, loc,
             "tensor '%s' has a T.Layout (T.annotate_layout) but is accessed here %s; this access cannot be "
             "remapped",
             b->name, lanes != 1 ? "as a vector" : "with a flattened index");
    return NULL;
  }
  int64_t numel = ir_buffer_numel(b);
  IrExpr **out = ARENA_ARRAY(c->arena, IrExpr *, 1);
  out[0] = index_map_offset(c, b->remap, remap_list(rm, idx, nidx), numel < 0 || numel > INT32_MAX, loc);
  return out;
}

static bool is_remapped_address(const IrExpr *e) {
  return e->kind == IR_CALL && e->u.call.op == IRI_ADDRESS_OF && e->u.call.nargs == 1 &&
         e->u.call.args[0]->kind == IR_LOAD && e->u.call.args[0]->u.load.buf->remap;
}

/* The address of one element of a remapped tensor is right only where one element is read
 * or written through it: the scalar atomics.  Anything else taking it (T.atomic_addx2/x4,
 * device operations, extern calls) may touch the elements after it, which are elsewhere. */
static bool element_address_ok(const IrExpr *call, int arg) {
  IrIntrin op = call->u.call.op;
  return arg == 0 && (op == IRI_ATOMIC_ADD || op == IRI_ATOMIC_MAX || op == IRI_ATOMIC_MIN);
}

static IrExpr *remap_expr(Remap *rm, IrExpr *e) {
  TsCompiler *c = rm->c;
  if (!e) return NULL;
  switch (e->kind) {
    case IR_INT:
    case IR_FLOAT:
    case IR_STR:
    case IR_VAR:
      return e;
    case IR_LOAD: {
      IrBuffer *b = e->u.load.buf;
      if (!remapped(b)) return ir_with_operands(c, e, remap_list(rm, e->u.load.idx, e->u.load.nidx));
      IrExpr **idx = physical_index(rm, b, e->u.load.idx, e->u.load.nidx, e->lanes, e->loc);
      if (!idx) return e;
      IrExpr *r = ir_load(c, b, idx, 1, e->loc);
      r->dtype = e->dtype;
      r->lanes = e->lanes;
      return r;
    }
    case IR_CALL:
      for (int i = 0; i < e->u.call.nargs; i++) {
        const IrExpr *a = e->u.call.args[i];
        if (e->u.call.op != IRI_ADDRESS_OF && is_remapped_address(a) && !element_address_ok(e, i)) {
          const char *what = e->u.call.op == IRI_ATOMIC_ADD_X ? "T.atomic_addx2/x4"
                             : e->u.call.op == IRI_DEVICE     ? ir_device_info[e->u.call.dop].name
                                                              : ir_intrin_info[e->u.call.op].name;
          ts_error(c, e->loc,
                   "%s takes the address of an element of tensor '%s', which has a T.Layout: the elements "
                   "after it are not its neighbours in memory (access it element by element)",
                   what, a->u.call.args[0]->u.load.buf->name);
          return e;
        }
      }
      return ir_with_operands(c, e, remap_list(rm, e->u.call.args, e->u.call.nargs));
    default: {
      IrExpr *r = ARENA_NEW(c->arena, IrExpr);
      *r = *e;
      for (int i = 0; i < ir_expr_nops[e->kind]; i++) r->u.ops[i] = remap_expr(rm, e->u.ops[i]);
      return r;
    }
  }
}

static IrStmt *remap_stmt(TsCompiler *c, IrStmt *s, void *ctx) {
  Remap *rm = ctx;
  if (!s) return NULL;
  IrStmt *r;
  if (s->kind == IR_S_KERNEL) {
    rm->kernel = s->loc;
    rm->reported = (PtrVec){0};
  }
  r = ir_map_children(c, s, remap_stmt, ctx);
  switch (r->kind) {
    case IR_S_FOR:
      r->u.loop.min = remap_expr(rm, r->u.loop.min);
      r->u.loop.extent = remap_expr(rm, r->u.loop.extent);
      break;
    case IR_S_IF:
      r->u.if_.cond = remap_expr(rm, r->u.if_.cond);
      break;
    case IR_S_WHILE:
      r->u.while_.cond = remap_expr(rm, r->u.while_.cond);
      break;
    case IR_S_LET:
      r->u.let.value = remap_expr(rm, r->u.let.value);
      break;
    case IR_S_EVAL:
      r->u.eval.value = remap_expr(rm, r->u.eval.value);
      break;
    case IR_S_ASSERT:
      r->u.assert_.cond = remap_expr(rm, r->u.assert_.cond);
      break;
    case IR_S_STORE: {
      IrBuffer *b = r->u.store.buf;
      r->u.store.value = remap_expr(rm, r->u.store.value);
      if (!remapped(b)) {
        r->u.store.idx = remap_list(rm, r->u.store.idx, r->u.store.nidx);
        break;
      }
      IrExpr **idx = physical_index(rm, b, r->u.store.idx, r->u.store.nidx, r->u.store.lanes, r->loc);
      if (idx) {
        r->u.store.idx = idx;
        r->u.store.nidx = 1;
      }
      break;
    }
    default:
      break;
  }
  return r;
}

/* Is any tensor of the function remapped? (most kernels: no, and the pass does nothing) */
static bool any_remapped(const IrFunc *f) {
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i].buf && f->params[i].buf->remap) return true;
  return false;
}

void pass_remap_global(TsCompiler *c, IrFunc *f) {
  if (!any_remapped(f)) return;
  for (int i = 0; i < f->ntma; i++) {
    const IrBuffer *b = f->params[f->tma_maps[i].param_index].buf;
    if (b && b->remap) /* the passes that make tensor maps skip remapped tensors */
      ts_error(c, b->remap->loc, "tensor '%s' has a T.Layout but a TMA tensor map was made for it", b->name);
  }
  Remap rm = {.c = c};
  f->body = remap_stmt(c, f->body, &rm);
}
