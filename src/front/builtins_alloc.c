/* builtins_alloc.c — T.* that make buffers: parameter annotations (T.Tensor, T.Buffer,
 * T.StridedTensor), on-chip allocations (T.alloc_shared / _fragment / _local / _var), eager
 * outputs and names (T.empty, T.const, T.dynamic), views of a buffer's memory (T.view,
 * T.reshape) and device workspaces (T.alloc_global, T.alloc_barrier_gpu).
 *
 *   registry.c (T.alloc_shared ...)  ->  here  ->  IR ALLOC statements, V_BUFFER values
 *
 * An allocation is an ALLOC statement in the block being traced, scoped to that block
 * (stage.c); `x = T.alloc_*(...)` names the buffer x.  Sizes known at compile time are
 * checked here, at the user's line. */
#include <stdio.h>
#include <string.h>

#include "builtin.h"

static const Builtin *alloc_row(const char *name);

/* ---- T.Tensor / T.Buffer ----------------------------------------------------------------- */
/* The annotation value: shape dims are ints or integer IR (a negative one is reported once, at
 * its place in a shape literal); the dtype defaults to float32. */
static Value *make_tensortype(Eval *ev, Value *shape, Value *dtype, SrcLoc loc, const AstNode *shape_node) {
  ts_dtype t = TS_DTYPE_FLOAT32;
  if (dtype && !ev_to_dtype(ev, dtype, &t, loc)) return NULL;
  Value *tt = ev_new(ev, V_TENSORTYPE);
  Value *sh = ev_new(ev, V_TUPLE);
  if (shape->kind == V_TUPLE || shape->kind == V_LIST) {
    for (int i = 0; i < shape->u.seq.n; i++) vl_push(ev, &sh->u.seq, shape->u.seq.items[i]);
  } else {
    vl_push(ev, &sh->u.seq, shape);
  }
  for (int i = 0; i < sh->u.seq.n; i++) {
    Value *d = sh->u.seq.items[i];
    if (d->kind != V_INT && !(d->kind == V_EXPR && dtype_is_int(d->u.expr->dtype))) {
      ts_error(ev->c, loc, "tensor shape dimensions must be integers, got %s", ev_type_name(d));
      return NULL;
    }
    if (d->kind == V_INT && d->u.i < 0) {
      /* Reported once: a -D value used by several tensors is one mistake. */
      if (!ev->bad_tensor_dim)
        ts_error(ev->c, bi_dim_loc(shape_node, i, sh->u.seq.n, loc), "tensor dimension %d is %lld; it must be 0 or more",
                 i, (long long)d->u.i);
      ev->bad_tensor_dim = true;
      return NULL;
    }
  }
  tt->u.tt.shape = sh;
  tt->u.tt.dtype = t;
  return tt;
}

/* T.Tensor[(M, N), dtype] */
static Value *t_tensor_index(Eval *ev, Value *index, SrcLoc loc) {
  if (index->kind != V_TUPLE || index->u.seq.n < 1 || index->u.seq.n > 2) {
    ts_error(ev->c, loc, "T.Tensor[...] expects [shape, dtype]");
    return NULL;
  }
  return make_tensortype(ev, index->u.seq.items[0], index->u.seq.n > 1 ? index->u.seq.items[1] : NULL, loc, NULL);
}

/* T.Tensor(shape, dtype) / T.Buffer(...): a parameter annotation; T.Tensor(shape, dtype,
 * buf.data) in a kernel is a view of buf (T.view); T.Tensor[shape, dtype] (arg == NULL:
 * BI_INDEX) the annotation too. */
static Value *t_tensor(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  if (!arg) return t_tensor_index(ev, a->pos[0], call_loc(a));
  if (arg[2] && arg[2]->kind != V_NONE) {
    /* T.Tensor(shape, dtype, buf.data) in a kernel: a view of buf's memory (T.view) */
    for (int i = 3; i < 10; i++)
      if (arg[i] && arg[i]->kind != V_NONE) return bi_unsupported_stmt(ev, a, NULL, bi);
    if (arg[2]->kind != V_BUFFER) {
      ts_error(ev->c, call_loc(a), "T.Tensor(shape, dtype, data): data must be a buffer's memory (buf.data), got %s",
               ev_type_name(arg[2]));
      return NULL;
    }
    Value *pos[3] = {arg[2], arg[0], arg[1] ? arg[1] : ev_dtype(ev, arg[2]->u.buf->dtype)};
    CallArgs v = {.node = a->node, .pos = pos, .npos = 3};
    return builtin_call_row(ev, alloc_row("view"), "T.view", &v);
  }
  return make_tensortype(ev, arg[0], arg[1], call_loc(a), bi_arg_node(a, 0, "shape"));
}

IrBuffer *ev_tensor_param(Eval *ev, const char *name, Value *tt, SrcLoc loc) {
  int nd = tt->u.tt.shape->u.seq.n;
  IrExpr **shape = ARENA_ARRAY(ev->a, IrExpr *, nd ? nd : 1);
  for (int d = 0; d < nd; d++)
    if (!(shape[d] = ev_to_ir(ev, tt->u.tt.shape->u.seq.items[d], NULL, loc))) return NULL;
  IrBuffer *b = ir_buffer(ev->c, name, tt->u.tt.dtype, IR_SCOPE_GLOBAL, nd, shape, loc);
  if (tt->u.tt.strides) { /* T.StridedTensor */
    b->strides = ARENA_ARRAY(ev->a, IrExpr *, nd ? nd : 1);
    for (int d = 0; d < nd; d++)
      if (!(b->strides[d] = ev_to_ir(ev, tt->u.tt.strides->u.seq.items[d], NULL, loc))) return NULL;
  }
  return b;
}

/* T.StridedTensor(shape, strides, dtype): a parameter annotation with explicit strides;
 * T.StridedTensor[shape, strides, dtype] (arg == NULL: BI_INDEX) the same. */
static Value *t_strided_tensor(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!arg) {
    Value *ix = a->pos[0];
    if (ix->kind != V_TUPLE || ix->u.seq.n < 2 || ix->u.seq.n > 3) {
      ts_error(ev->c, loc, "T.StridedTensor[...] expects [shape, strides, dtype]");
      return ev->poison;
    }
    Value *three[3] = {ix->u.seq.items[0], ix->u.seq.items[1], ix->u.seq.n > 2 ? ix->u.seq.items[2] : NULL};
    return t_strided_tensor(ev, a, three, bi);
  }
  Value *tt = builtin_call_row(ev, alloc_row("Tensor"), "T.Tensor",
                               &(CallArgs){.node = a->node, .pos = (Value *[]){arg[0], arg[2]}, .npos = arg[2] ? 2 : 1});
  if (!tt || tt->kind != V_TENSORTYPE) return ev->poison;
  Value *st = arg[1];
  ValList items = {0};
  if (st->kind == V_TUPLE || st->kind == V_LIST) items = st->u.seq;
  else vl_push(ev, &items, st);
  if (items.n != tt->u.tt.shape->u.seq.n) {
    ts_error(ev->c, loc, "T.StridedTensor: %d strides given for a tensor of rank %d", items.n, tt->u.tt.shape->u.seq.n);
    return ev->poison;
  }
  Value *sv = ev_new(ev, V_TUPLE);
  for (int i = 0; i < items.n; i++) {
    Value *d = items.items[i];
    if (d->kind != V_INT && !(d->kind == V_EXPR && dtype_is_int(d->u.expr->dtype))) {
      ts_error(ev->c, loc, "T.StridedTensor: strides must be integers, got %s", ev_type_name(d));
      return ev->poison;
    }
    vl_push(ev, &sv->u.seq, d);
  }
  tt->u.tt.strides = sv;
  return tt;
}

/* ---- on-chip allocations ------------------------------------------------------------------ */
/* An on-chip buffer of `scope`: an ALLOC in the current block, every constant dim at least 1
 * (0 or more for a local). */
IrBuffer *bi_alloc_buffer(Eval *ev, CallArgs *a, const char *what, Value *shape, Value *dtype, IrScope scope) {
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, what, loc)) return NULL;
  ts_dtype t;
  IrExpr **sh;
  if (!ev_to_dtype(ev, dtype, &t, loc)) return NULL;
  int nd = bi_shape_arg(ev, shape, &sh, loc);
  if (nd < 0) return NULL;
  const AstNode *shape_node = bi_arg_node(a, 0, "shape");
  char what_dim[64];
  snprintf(what_dim, sizeof what_dim, "%s: dimension", what);
  /* a register array may be empty (TVM's T.alloc_local(0, ...), kept for code that is only
   * traced on some configurations); codegen refuses any access to it */
  int64_t min = scope == IR_SCOPE_LOCAL ? 0 : 1;
  for (int d = 0; d < nd; d++)
    if (!bi_check_size(ev, sh[d], min, bi_dim_loc(shape_node, d, nd, loc), what_dim, d)) return NULL;
  IrBuffer *b = ir_buffer(ev->c, bi_take_name(ev, scope == IR_SCOPE_FRAGMENT ? "frag" : scope == IR_SCOPE_LOCAL ? "local" : "smem"),
                          t, scope, nd, sh, loc);
  bi_declare_buffer(ev, b, loc);
  return b;
}

/* T.alloc_shared / T.alloc_fragment / T.alloc_local(shape, dtype): bi->arg is the scope. */
static Value *t_alloc(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  IrBuffer *b;
  if (bi->arg == IR_SCOPE_SHARED_DYN) {
    IrScope sc = IR_SCOPE_SHARED_DYN;
    if (arg[2]) {
      if (arg[2]->kind != V_STR || (strcmp(arg[2]->u.str.s, "shared.dyn") && strcmp(arg[2]->u.str.s, "shared"))) {
        ts_error(ev->c, call_loc(a), "T.alloc_shared: scope must be \"shared.dyn\" or \"shared\"");
        return NULL;
      }
      sc = !strcmp(arg[2]->u.str.s, "shared") ? IR_SCOPE_SHARED : IR_SCOPE_SHARED_DYN;
    }
    b = bi_alloc_buffer(ev, a, "T.alloc_shared", arg[0], arg[1], sc);
  } else {
    b = bi_alloc_buffer(ev, a, bi->arg == IR_SCOPE_FRAGMENT ? "T.alloc_fragment" : "T.alloc_local", arg[0], arg[1],
                     (IrScope)bi->arg);
  }
  return b ? bi_buffer_value(ev, b) : NULL;
}

/* T.alloc_var(dtype, init=None): a mutable scalar (a 1-element local.var buffer); reading
 * its name loads it, assigning to it stores. */
static Value *t_alloc_var(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (!ev_need_kernel(ev, "T.alloc_var", loc)) return NULL;
  ts_dtype t;
  if (!ev_to_dtype(ev, arg[0], &t, loc)) return NULL;
  IrExpr *init = NULL;
  if (arg[1] && arg[1]->kind != V_NONE) {
    init = bi_to_dtype(ev, arg[1], t, loc);
    if (!init) return NULL;
  }
  return bi_declare_var(ev, t, init, loc);
}

/* T.let(var, value): gives a variable declared by a dtype call without arguments
 * (`off = T.int32()`) its value, a store like `off = value`. */
static Value *t_let(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[0]->kind == V_POISON || arg[1]->kind == V_POISON) return ev->poison;
  /* the name of a variable reads it: its load names the variable */
  const IrExpr *e = arg[0]->kind == V_EXPR ? arg[0]->u.expr : NULL;
  IrBuffer *var = arg[0]->kind == V_BUFFER ? arg[0]->u.buf : e && e->kind == IR_LOAD ? e->u.load.buf : NULL;
  if (!var || var->scope != IR_SCOPE_VAR) {
    ts_error(ev->c, loc, "T.let(var, value): var must be a scalar variable (`x = T.int32()` or T.alloc_var), got %s",
             ev_type_name(arg[0]));
    return ev->poison;
  }
  return ev_store_var(ev, var, arg[1], loc) ? ev->none : ev->poison;
}

/* T.alloc_barrier(arrive_count): mbarriers (shared.barrier), one per count of an int or a list
 * (TileLang: `T.alloc_barrier([128] * n)` is n barriers).  Each count is the arrivals that
 * complete a phase; lower_tile_ops initialises them once at the kernel's start (thread 0,
 * fence, __syncthreads: tma_copy.c).  A kernel with explicit mbarriers schedules its threads
 * itself, so it gets no automatic warp specialization or pipelining (as with T.ws).
 * T.alloc_cluster_barrier (bi->arg 1): the same, for arrivals from other blocks of the cluster
 * (T.mbarrier_arrive(b, cta_id=r), T.copy_cluster's remote_barrier). */
static Value *t_alloc_barrier(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (ev->c->target.sm < 90) {
    ts_error(ev->c, loc, "T.%s needs sm_90 or newer (mbarrier waits), the target is sm_%d", bi->name, ev->c->target.sm);
    return ev->poison;
  }
  bool list = arg[0]->kind == V_LIST || arg[0]->kind == V_TUPLE;
  int n = list ? arg[0]->u.seq.n : 1;
  if (n < 1) {
    ts_error(ev->c, loc, "T.%s: the list of arrive counts is empty", bi->name);
    return ev->poison;
  }
  int64_t *counts = ARENA_ARRAY(ev->a, int64_t, n);
  for (int i = 0; i < n; i++) {
    Value *c = list ? arg[0]->u.seq.items[i] : arg[0];
    if (!ev_to_int(ev, c, &counts[i], loc)) return ev->poison;
    /* the mbarrier's pending count is 20 bits wide */
    if (counts[i] <= 0 || counts[i] >= (1 << 20)) {
      ts_error(ev->c, loc, "T.%s: arrive counts must be in [1, 2^20), got %lld", bi->name, (long long)counts[i]);
      return ev->poison;
    }
  }
  IrExpr *ext = ir_int(ev->c, n, TS_DTYPE_INT32, loc);
  IrBuffer *b = ir_buffer(ev->c, bi_take_name(ev, "barrier"), TS_DTYPE_UINT64, IR_SCOPE_BARRIER, 1, &ext, loc);
  b->arrive_counts = counts;
  b->cluster_barrier = bi->arg == 1;
  ev->kernel->u.kernel.manual_ws = true;
  return bi_buffer_value(ev, bi_declare_buffer(ev, b, loc));
}

/* ---- eager outputs and names --------------------------------------------------------------- */
/* T.empty(shape, dtype): an output tensor of an eager @tilelang.jit body (or of a @T.prim_func
 * written that way), appended to the parameters after the declared ones. */
static Value *t_empty(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (!ev->eager) {
    ts_error(ev->c, loc, "T.empty is only allowed in an eager @tilelang.jit function or a @T.prim_func that returns "
                         "it (`B = T.empty(...)` ... `return B`)");
    return NULL;
  }
  ts_dtype t = TS_DTYPE_FLOAT32;
  IrExpr **sh;
  Value *shape = arg[0], *dtype = arg[1];
  int npos = a->npos;
  /* T.empty((M, N), dtype) and T.empty(M, N, dtype=...): the dims one by one, a last
   * positional dtype when the keyword is not given */
  if (npos >= 2 && !dtype && (a->pos[npos - 1]->kind == V_DTYPE || a->pos[npos - 1]->kind == V_STR))
    dtype = a->pos[--npos];
  if (npos >= 2) shape = ev_tuple(ev, a->pos, npos);
  if (dtype && !ev_to_dtype(ev, dtype, &t, loc)) return NULL;
  int nd = bi_shape_arg(ev, shape, &sh, loc);
  if (nd < 0) return NULL;
  IrBuffer *b = ir_buffer(ev->c, bi_take_name(ev, arena_printf(ev->a, "out%d", ev->outputs.len)), t, IR_SCOPE_GLOBAL, nd, sh, loc);
  vec_push(ev->a, &ev->outputs, b);
  return bi_buffer_value(ev, b);
}

/* The next name of a "M, N" / "M N" list at *s (advanced past it), or NULL at its end. */
static const char *next_name(Eval *ev, const char **s) {
  const char *p = *s;
  while (*p == ' ' || *p == ',') p++;
  const char *b = p;
  while (*p && *p != ' ' && *p != ',') p++;
  *s = p;
  return p == b ? NULL : arena_strndup(ev->a, b, (size_t)(p - b));
}

/* T.const("M, N"): the named -D values (ints), one value or a tuple. */
static Value *t_const(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  if (arg[0]->kind != V_STR) {
    ts_error(ev->c, loc, "T.const expects a string of names, e.g. T.const(\"M, N\")");
    return NULL;
  }
  Value *out = ev_new(ev, V_TUPLE);
  const char *s = arg[0]->u.str.s, *name;
  while ((name = next_name(ev, &s))) {
    Value *v = NULL;
    for (int i = 0; i < ev->nd; i++)
      if (!strcmp(ev->dnames[i], name)) {
        v = ev->dvals[i];
        ev->dused[i] = true;
      }
    if (!v) {
      ts_error(ev->c, loc, "T.const '%s' has no value: pass -D %s=<int>", name, name);
      v = ev->poison;
    } else if (v->kind != V_INT && v->kind != V_POISON) {
      ts_error(ev->c, loc, "T.const '%s' must be an integer, got %s", name, ev_type_name(v));
      v = ev->poison;
    }
    vl_push(ev, &out->u.seq, v);
  }
  if (out->u.seq.n == 1) return out->u.seq.items[0];
  return out;
}

/* T.dynamic("M, N") / T.symbolic: dynamic dimensions, bound from the tensors at launch. */
static Value *t_dynamic(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  ts_dtype t = TS_DTYPE_INT32;
  if (arg[1] && !ev_to_dtype(ev, arg[1], &t, loc)) return NULL;
  if (arg[0]->kind != V_STR) {
    ts_error(ev->c, loc, "T.dynamic expects a string of names");
    return NULL;
  }
  Value *out = ev_new(ev, V_TUPLE);
  const char *s = arg[0]->u.str.s, *name;
  while ((name = next_name(ev, &s))) {
    IrVar *v = ir_var(ev->c, name, t, IR_VAR_DYNAMIC, loc);
    vec_push(ev->a, &ev->dyn_vars, v);
    vl_push(ev, &out->u.seq, ev_expr(ev, ir_varref(ev->c, v, loc)));
  }
  if (out->u.seq.n == 1) return out->u.seq.items[0];
  return out;
}

/* ---- views and workspaces ----------------------------------------------------------------- */
/* T.view(buf, shape=None, dtype=None) / T.reshape(buf, shape): a buffer aliasing the
 * memory of `buf` with a new shape and/or element type; the total size in bits must match. */
static Value *t_view(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (arg[0]->kind != V_BUFFER) {
    ts_error(ev->c, loc, "T.%s: expected a buffer, got %s", bi->name, ev_type_name(arg[0]));
    return ev->poison;
  }
  IrBuffer *src = arg[0]->u.buf;
  if (!ev->block) {
    ts_error(ev->c, loc, "T.%s can only be used inside a @T.prim_func kernel", bi->name);
    return ev->poison;
  }
  if (src->scope == IR_SCOPE_VAR || src->scope == IR_SCOPE_BARRIER) {
    ts_error(ev->c, loc, "T.%s: buffer '%s' of scope %s cannot be viewed", bi->name, src->name,
             ir_scope_names[src->scope]);
    return ev->poison;
  }
  ts_dtype t = src->dtype;
  Value *dt = bi->arg == 0 ? arg[2] : NULL;
  if (dt && dt->kind != V_NONE && !ev_to_dtype(ev, dt, &t, loc)) return ev->poison;
  IrExpr **shape = src->shape;
  int nd = src->ndim;
  if (arg[1] && arg[1]->kind != V_NONE) {
    ValList items = {0};
    if (arg[1]->kind == V_TUPLE || arg[1]->kind == V_LIST) items = arg[1]->u.seq;
    else vl_push(ev, &items, arg[1]);
    nd = items.n;
    shape = ARENA_ARRAY(ev->a, IrExpr *, nd ? nd : 1);
    for (int i = 0; i < nd; i++) {
      shape[i] = ev_to_ir(ev, items.items[i], NULL, loc);
      if (!shape[i]) return ev->poison;
      if (!dtype_is_int(shape[i]->dtype)) {
        ts_error(ev->c, loc, "T.%s: shape dimensions must be integers", bi->name);
        return ev->poison;
      }
    }
  } else if (t != src->dtype) {
    /* same rank, last dimension rescaled by the element-size ratio */
    shape = ARENA_ARRAY(ev->a, IrExpr *, nd);
    for (int i = 0; i < nd; i++) shape[i] = src->shape[i];
    int64_t last;
    if (!nd || !ir_is_const_int(src->shape[nd - 1], &last) ||
        (last * dtype_bits(src->dtype)) % dtype_bits(t) != 0) {
      ts_error(ev->c, loc, "T.view: cannot view '%s' (%s) as %s without an explicit shape", src->name,
               dtype_name(src->dtype), dtype_name(t));
      return ev->poison;
    }
    shape[nd - 1] = ir_int(ev->c, last * dtype_bits(src->dtype) / dtype_bits(t), TS_DTYPE_INT32, loc);
  }
  IrBuffer *probe = ir_buffer(ev->c, src->name, t, src->scope, nd, shape, loc);
  int64_t n_old = ir_buffer_numel(src), n_new = ir_buffer_numel(probe);
  if (n_old >= 0 && n_new >= 0 && n_old * dtype_bits(src->dtype) != n_new * dtype_bits(t)) {
    ts_error(ev->c, loc, "T.%s: '%s' has %lld bits but the view has %lld", bi->name, src->name,
             (long long)(n_old * dtype_bits(src->dtype)), (long long)(n_new * dtype_bits(t)));
    return ev->poison;
  }
  const char *name = ev->pending_name ? ev->pending_name : arena_printf(ev->a, "%s_view", src->name);
  ev->pending_name = NULL;
  IrBuffer *b = ir_buffer(ev->c, name, t, src->scope, nd, shape, loc);
  b->alias_of = src->alias_of ? src->alias_of : src;
  if (src->scope == IR_SCOPE_GLOBAL) b->param_index = -1;
  return bi_buffer_value(ev, bi_declare_buffer(ev, b, loc));
}

/* T.alloc_global(shape, dtype) / T.alloc_barrier_gpu(): a device workspace that is not a
 * kernel parameter (T.alloc_global may also sit in the prim_func before its kernels, which
 * then share it).  Codegen gives it static storage in the module (one array per kernel
 * and buffer) and the runtime zeroes it on the launch stream before every launch of a kernel
 * that reads it or hands it to an atomic or a barrier, so the one-shot GPU barriers start
 * from 0 each time (one the kernel only stores to starts undefined, as in TileLang).  Its
 * size is therefore part of the module: every extent must be a positive compile-time
 * integer. */
enum { WORKSPACE_MAX_BYTES = 1 << 30 };

static Value *alloc_workspace(Eval *ev, CallArgs *a, const Builtin *bi, Value *shape, ts_dtype t,
                              const char *dflt) {
  SrcLoc loc = call_loc(a);
  if (t == TS_DTYPE_VOID || t == TS_DTYPE_HANDLE || t == TS_DTYPE_BOOL) {
    ts_error(ev->c, loc, "T.%s: dtype %s cannot be a workspace element; use an integer or floating-point type",
             bi->name, dtype_name(t));
    return ev->poison;
  }
  int nd = 1;
  bool seq = shape->kind == V_TUPLE || shape->kind == V_LIST;
  if (seq) nd = shape->u.seq.n;
  if (nd < 1 || nd > 8) {
    ts_error(ev->c, loc, "T.%s: the shape needs 1 to 8 dimensions, got %d", bi->name, nd);
    return ev->poison;
  }
  IrExpr **sh = ARENA_ARRAY(ev->a, IrExpr *, nd);
  int64_t bytes = dtype_bytes(t);
  for (int i = 0; i < nd; i++) {
    Value *d = seq ? shape->u.seq.items[i] : shape;
    if (d->kind != V_INT) {
      ts_error(ev->c, loc, "T.%s: dimension %d of the shape must be a compile-time integer (the workspace is "
                           "static storage of the module), got %s", bi->name, i, ev_type_name(d));
      return ev->poison;
    }
    if (d->u.i <= 0) {
      ts_error(ev->c, loc, "T.%s: dimension %d of the shape must be positive, got %lld", bi->name, i,
               (long long)d->u.i);
      return ev->poison;
    }
    if (d->u.i > WORKSPACE_MAX_BYTES || (bytes *= d->u.i) > WORKSPACE_MAX_BYTES) {
      ts_error(ev->c, loc, "T.%s: the workspace is larger than %d bytes; pass a tensor instead", bi->name,
               WORKSPACE_MAX_BYTES);
      return ev->poison;
    }
    sh[i] = ir_int(ev->c, d->u.i, TS_DTYPE_INT32, loc);
  }
  const char *name = ev->pending_name ? ev->pending_name : dflt;
  ev->pending_name = NULL;
  IrBuffer *b = ir_buffer(ev->c, name, t, IR_SCOPE_GLOBAL, nd, sh, loc);
  return bi_buffer_value(ev, bi_declare_buffer(ev, b, loc));
}

/* T.alloc_global(shape, dtype); T.alloc_barrier_gpu() (bi->arg 1) is alloc_global([1], "uint32"). */
static Value *t_alloc_global(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  /* In the prim_func before its kernels (split-KV partial results): one workspace that all
   * the function's kernels share, in launch order (codegen declares it once). */
  bool function_level = !bi->arg && ev->block && !ev->kernel && ev->staged;
  if (!function_level && !bi_need_kernel(ev, a, bi)) return ev->poison;
  if (bi->arg)
    return alloc_workspace(ev, a, bi, ev_int(ev, 1), TS_DTYPE_UINT32, "barrier");
  ts_dtype t;
  if (!ev_to_dtype(ev, arg[1], &t, call_loc(a))) return ev->poison;
  return alloc_workspace(ev, a, bi, arg[0], t, "workspace");
}

/* T.make_tensor(ptr, shape, dtype): a global tensor over the device address `ptr`, in TileLang an
 * element of a `T.Tensor([n], T.ptr)` parameter (torch passes data_ptr()s in an int64 tensor),
 * or a `p: T.ptr` parameter, which may be made a tensor before T.Kernel.
 * The address is read once, at this line: the ALLOC declares a typed pointer cast from it, and
 * every access of the view then prints like one of a tensor parameter (row-major, bounds from
 * `shape`).  Nothing at launch can check such an address: like TileLang, the kernel trusts it
 * to hold `shape` elements and to be 16-byte aligned (vector and cp.async copies assume it);
 * TMA, which needs a descriptor encoded on the host, never reads it (param_index -1). */
static Value *t_make_tensor(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  /* a `p: T.ptr` parameter may be made a tensor before T.Kernel, as T.match_buffer makes one */
  const IrExpr *pe = arg[0]->kind == V_EXPR ? arg[0]->u.expr : NULL;
  bool param_ptr = pe && pe->kind == IR_VAR && pe->u.var->kind == IR_VAR_PARAM && pe->dtype == TS_DTYPE_HANDLE;
  if (!param_ptr && !bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[3] && arg[3]->kind != V_NONE) {
    ts_error(ev->c, loc, "T.make_tensor: strides are not supported yet (the view is row-major)");
    return ev->poison;
  }
  if (arg[0]->kind == V_POISON) return ev->poison;
  IrExpr *ptr = arg[0]->kind == V_EXPR ? arg[0]->u.expr : NULL;
  if (!ptr || !(ptr->dtype == TS_DTYPE_INT64 || ptr->dtype == TS_DTYPE_UINT64 || ptr->dtype == TS_DTYPE_HANDLE)) {
    ts_error(ev->c, loc, "T.make_tensor: ptr must be a 64-bit device address (an element of a T.ptr tensor), got %s",
             ptr ? dtype_name(ptr->dtype) : ev_type_name(arg[0]));
    return ev->poison;
  }
  ts_dtype t = TS_DTYPE_FLOAT32;
  if (arg[2] && !ev_to_dtype(ev, arg[2], &t, loc)) return ev->poison;
  if (t == TS_DTYPE_VOID || t == TS_DTYPE_HANDLE) {
    ts_error(ev->c, loc, "T.make_tensor: dtype %s cannot be a tensor element", dtype_name(t));
    return ev->poison;
  }
  ValList items = {0};
  if (arg[1]->kind == V_TUPLE || arg[1]->kind == V_LIST) items = arg[1]->u.seq;
  else vl_push(ev, &items, arg[1]);
  if (items.n < 1 || items.n > 8) {
    ts_error(ev->c, loc, "T.make_tensor: the shape needs 1 to 8 dimensions, got %d", items.n);
    return ev->poison;
  }
  IrExpr **shape = ARENA_ARRAY(ev->a, IrExpr *, items.n);
  for (int i = 0; i < items.n; i++) {
    Value *d = items.items[i];
    if (d->kind == V_INT && d->u.i < 0) {
      ts_error(ev->c, loc, "T.make_tensor: dimension %d is %lld; it must be 0 or more", i, (long long)d->u.i);
      return ev->poison;
    }
    shape[i] = ev_to_ir(ev, d, NULL, loc);
    if (!shape[i]) return ev->poison;
    if (!dtype_is_int(shape[i]->dtype)) {
      ts_error(ev->c, loc, "T.make_tensor: shape dimensions must be integers, got %s", dtype_name(shape[i]->dtype));
      return ev->poison;
    }
  }
  const char *name = ev->pending_name ? ev->pending_name : "tensor";
  ev->pending_name = NULL;
  IrBuffer *b = ir_buffer(ev->c, name, t, IR_SCOPE_GLOBAL, items.n, shape, loc);
  b->data = ptr;
  if (ev->kernel) return bi_buffer_value(ev, bi_declare_buffer(ev, b, loc));
  IrStmt *s = ir_stmt(ev->c, IR_S_ALLOC, loc); /* before T.Kernel: declared in each kernel */
  s->u.alloc.buf = b;
  vec_push(ev->a, &ev->outer_views, s);
  ev_define_buffer(ev, b);
  return bi_buffer_value(ev, b);
}

/* ---- TIR-style parameters: `A_ptr: T.handle` and A = T.match_buffer(A_ptr, shape, dtype) ---- */
/* T.handle is an annotation only: a parameter so annotated (eval_entry.c) is a handle variable
 * until T.match_buffer makes it the tensor parameter at its position. */
static Value *t_handle(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  ts_error(ev->c, call_loc(a), "T.handle is a parameter annotation (A_ptr: T.handle, then A = T.match_buffer(A_ptr, "
                               "shape, dtype)), not a call");
  return ev->poison;
}

bool bi_is_handle_annotation(const Value *v) {
  return v && v->kind == V_BUILTIN && v->u.bi.row->fn == t_handle;
}

/* T.match_buffer(handle, shape, dtype="float32", ...): the tensor parameter at the handle
 * parameter's position, with that shape and dtype (strides and offsets are not supported). */
static Value *t_match_buffer(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  IrFunc *f = ev->func;
  int at = -1;
  const IrExpr *h = arg[0]->kind == V_EXPR ? arg[0]->u.expr : NULL;
  for (int i = 0; f && h && h->kind == IR_VAR && i < f->nparams; i++)
    if (f->params[i].var && f->params[i].var == h->u.var && h->u.var->dtype == TS_DTYPE_HANDLE) at = i;
  if (at < 0 || ev->kernel) {
    ts_error(ev->c, loc, "T.match_buffer takes a T.handle parameter of the prim_func, outside T.Kernel%s",
             at >= 0 ? "" : arg[0]->kind == V_BUFFER ? " (this one is already a buffer)" : "");
    return ev->poison;
  }
  if ((arg[3] && arg[3]->kind != V_NONE) || (arg[4] && arg[4]->kind != V_NONE)) {
    ts_error(ev->c, loc, "T.match_buffer with data= or strides= is not supported (a compact tensor is)");
    return ev->poison;
  }
  Value *tt = builtin_call_row(ev, alloc_row("Tensor"), "T.Tensor",
                               &(CallArgs){.node = a->node, .pos = (Value *[]){arg[1], arg[2]}, .npos = arg[2] ? 2 : 1});
  if (!tt || tt->kind != V_TENSORTYPE) return ev->poison;
  IrParam *p = &f->params[at];
  IrBuffer *b = ev_tensor_param(ev, p->name, tt, loc);
  if (!b) return ev->poison;
  b->param_index = at;
  p->buf = b;
  p->var = NULL;
  return bi_buffer_value(ev, b);
}

/* ---- rows -------------------------------------------------------------------------------------- */
#define T_COMMON_TENSOR \
  "elem_offset=None, scope=\"global\", align=0, offset_factor=0, buffer_type=\"\", axis_separators=None"
static const Builtin alloc_rows[] = {
    /* parameters and their annotations */
    {"Tensor", "shape, dtype=\"float32\", data=None, strides=None, " T_COMMON_TENSOR, t_tensor, 0,
     BI_TERSE | BI_INDEX},
    {"Buffer", "shape, dtype=\"float32\", data=None, strides=None, " T_COMMON_TENSOR, t_tensor, 1,
     BI_TERSE | BI_INDEX},
    {"StridedTensor", "shape, strides, dtype=\"float32\"", t_strided_tensor, 0, BI_INDEX},
    {"handle", "*args, **kwargs", t_handle, 0, BI_TERSE},
    {"match_buffer", "param, shape, dtype=\"float32\", data=None, strides=None, " T_COMMON_TENSOR, t_match_buffer, 0,
     BI_TERSE},
    {"FragmentBuffer", "shape, dtype=\"float32\", **kwargs", bi_unsupported, 0, 0},
    {"SharedBuffer", "shape, dtype=\"float32\", **kwargs", bi_unsupported, 0, 0},
    {"LocalBuffer", "shape, dtype=\"float32\", **kwargs", bi_unsupported, 0, 0},
    {"ptr", "dtype=None, storage_scope=\"global\"", bi_unsupported, 0, 0},
    {"make_tensor", "ptr, shape, dtype=\"float32\", strides=None", t_make_tensor, 0, 0},
    /* on-chip buffers */
    {"alloc_shared", "shape, dtype, scope=\"shared.dyn\"", t_alloc, IR_SCOPE_SHARED_DYN, BI_TERSE},
    {"alloc_fragment", "shape, dtype, scope=\"local.fragment\"", t_alloc, IR_SCOPE_FRAGMENT, BI_TERSE},
    {"alloc_local", "shape, dtype, scope=\"local\"", t_alloc, IR_SCOPE_LOCAL, BI_TERSE},
    {"alloc_var", "dtype, init=None, scope=\"local.var\"", t_alloc_var, 0, BI_TERSE},
    {"let", "var, value", t_let, 0, 0},
    {"alloc_barrier", "arrive_count", t_alloc_barrier, 0, 0},
    {"alloc_tmem", "shape, dtype", bi_kernel_unsupported, 0, 0},
    {"alloc_cluster_barrier", "arrive_count", t_alloc_barrier, 1, 0},
    {"alloc_descriptor", "dtype=\"uint64\"", bi_kernel_unsupported, 0, 0},
    /* eager outputs and names */
    {"empty", "shape, *dims, dtype=\"float32\"", t_empty, 0, BI_TERSE},
    {"const", "names, dtype=\"int32\"", t_const, 0, BI_TERSE},
    {"dynamic", "names, dtype=\"int32\"", t_dynamic, 0, BI_TERSE},
    {"symbolic", "names, dtype=\"int32\"", t_dynamic, 0, BI_TERSE},
    /* views and workspaces */
    {"view", "buffer, shape=None, dtype=None", t_view, 0, 0},
    {"reshape", "buffer, shape", t_view, 1, 0},
    {"alloc_global", "shape, dtype", t_alloc_global, 0, 0},
    {"alloc_barrier_gpu", "", t_alloc_global, 1, 0},
};
#undef T_COMMON_TENSOR

static const Builtin *alloc_row(const char *name) {
  const Builtin *row = builtin_find(alloc_rows, TS_ARRAY_LEN(alloc_rows), name);
  TS_ASSERT(row);
  return row;
}

const BuiltinTable builtins_alloc[] = {
    {MOD_T, alloc_rows, TS_ARRAY_LEN(alloc_rows), NULL},
    BUILTIN_TABLE_END,
};
