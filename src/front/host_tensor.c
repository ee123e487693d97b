/* host_tensor.c — torch tensors a kernel file makes on the host while building a kernel:
 *
 *   A = torch.rand(m, k, device="cuda", dtype=torch.float16) * 2 - 1
 *   M, K = A.shape                                  # the kernel is built from the sizes
 *
 * The compiler never runs torch, and a kernel factory only ever needs such a tensor's
 * metadata, so a tensor is a *shape-only* value (V_HOST_TENSOR, reusing Value.u.tt: a tuple
 * of Python ints and a dtype).  The prelude's torch.rand / randn / randint / zeros / ones /
 * empty / full / arange / randperm / *_like make one (through _tilescale.host_tensor, here);
 * its metadata answers (.shape, .size(), .dtype, .device, .ndim, .dim(), .numel(), ...);
 * arithmetic, comparisons, casts and moves (.cuda(), .to(), .half(), .float(), view,
 * reshape, transpose, permute, unsqueeze ...) give a tensor of the resulting shape and dtype
 * (torch's broadcasting and type promotion, for the cases shapes alone decide).  Whatever
 * would need the data — indexing, truth, iteration, conversion to a number or to IR — is a
 * diagnostic, since the data is known only when the program runs.  This keeps the design to
 * one value kind and one file; no tensor data is ever modelled.
 *
 *   value layer: ht_new, ht_binop, ht_unop, ht_attr (operators.c, eval_expr.c call them)
 *   rows: _tilescale.host_tensor and the methods (namespace MOD_TENSOR) */
#include <string.h>

#include "builtin.h"

/* A tensor of `shape` (a tuple of ints >= 0) and dtype t. */
Value *ht_new(Eval *ev, Value *shape, ts_dtype t) {
  Value *v = ev_new(ev, V_HOST_TENSOR);
  v->u.tt.shape = shape;
  v->u.tt.dtype = t;
  return v;
}

static int64_t ht_numel(const Value *v) {
  int64_t n = 1;
  for (int i = 0; i < v->u.tt.shape->u.seq.n; i++) n *= v->u.tt.shape->u.seq.items[i]->u.i;
  return n;
}

/* A size argument: ints, or one tuple / list of ints (torch.rand(2, 3) or torch.rand((2, 3))). */
static Value *size_tuple(Eval *ev, Value **items, int n, const char *what, SrcLoc loc) {
  if (n == 1 && (items[0]->kind == V_TUPLE || items[0]->kind == V_LIST || items[0]->kind == V_HOST_TENSOR)) {
    if (items[0]->kind == V_HOST_TENSOR) return items[0]->u.tt.shape;
    return size_tuple(ev, items[0]->u.seq.items, items[0]->u.seq.n, what, loc);
  }
  Value *t = ev_new(ev, V_TUPLE);
  for (int i = 0; i < n; i++) {
    int64_t k;
    if (items[i]->kind == V_POISON) return NULL;
    if (items[i]->kind != V_INT && items[i]->kind != V_BOOL) {
      ts_error(ev->c, loc, "%s: sizes must be Python ints while building a kernel, got %s", what, ev_type_name(items[i]));
      return NULL;
    }
    k = items[i]->u.i;
    if (k < 0) {
      ts_error(ev->c, loc, "%s: negative size %lld", what, (long long)k);
      return NULL;
    }
    vl_push(ev, &t->u.seq, ev_int(ev, k));
  }
  return t;
}

static ts_dtype number_dtype(const Value *v) {
  return v->kind == V_BOOL ? TS_DTYPE_BOOL : v->kind == V_INT ? TS_DTYPE_INT64 : TS_DTYPE_FLOAT32;
}

/* ---- operators --------------------------------------------------------------------------------- */
/* torch's promotion for the operands shapes alone decide: a float beats an int or bool, the
 * wider of two of a kind wins; a Python number does not widen a tensor of its kind. */
static ts_dtype promote(const Value *l, const Value *r) {
  bool lt = l->kind == V_HOST_TENSOR, rt = r->kind == V_HOST_TENSOR;
  ts_dtype a = lt ? l->u.tt.dtype : number_dtype(l), b = rt ? r->u.tt.dtype : number_dtype(r);
  bool af = dtype_is_float(a), bf = dtype_is_float(b);
  if (lt != rt) { /* tensor op number */
    ts_dtype t = lt ? a : b, n = lt ? b : a;
    if (dtype_is_float(n) && !dtype_is_float(t)) return TS_DTYPE_FLOAT32;
    if (n != TS_DTYPE_BOOL && t == TS_DTYPE_BOOL) return TS_DTYPE_INT64;
    return t;
  }
  if (af != bf) return af ? a : b;
  return dtype_bits(a) >= dtype_bits(b) ? a : b;
}

/* The broadcast of two shapes (right-aligned, each dimension equal or 1), or NULL. */
static Value *broadcast(Eval *ev, const Value *a, const Value *b) {
  int na = a->u.seq.n, nb = b->u.seq.n, n = na > nb ? na : nb;
  Value *t = ev_new(ev, V_TUPLE);
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t x = ia >= 0 ? a->u.seq.items[ia]->u.i : 1, y = ib >= 0 ? b->u.seq.items[ib]->u.i : 1;
    if (x != y && x != 1 && y != 1) return NULL;
    vl_push(ev, &t->u.seq, ev_int(ev, x == 1 ? y : x));
  }
  return t;
}

Value *ht_binop(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc) {
  bool lt = l->kind == V_HOST_TENSOR, rt = r->kind == V_HOST_TENSOR;
  if ((!lt && !ev_is_num(l)) || (!rt && !ev_is_num(r)) || op == AOP_IN || op == AOP_NOTIN || op == AOP_MATMUL ||
      op == AOP_AND || op == AOP_OR) {
    ts_error(ev->c, loc, "operator '%s' between %s and %s: a torch tensor made while building a kernel has only a shape "
             "and dtype (its data exists when the program runs)", ast_op_names[op], ev_type_name(l), ev_type_name(r));
    return NULL;
  }
  Value *shape = lt && rt ? broadcast(ev, l->u.tt.shape, r->u.tt.shape) : (lt ? l : r)->u.tt.shape;
  if (!shape) {
    ts_error(ev->c, loc, "operator '%s': the shapes %s and %s do not broadcast", ast_op_names[op],
             ev_repr(ev, l->u.tt.shape), ev_repr(ev, r->u.tt.shape));
    return NULL;
  }
  ts_dtype t = promote(l, r);
  if (op >= AOP_EQ && op <= AOP_GTE) t = TS_DTYPE_BOOL;
  else if (op == AOP_DIV && !dtype_is_float(t)) t = TS_DTYPE_FLOAT32;
  return ht_new(ev, shape, t);
}

Value *ht_unop(Eval *ev, AstOp op, Value *v, SrcLoc loc) {
  if (op == AOP_NOT) { /* `not t` is a truth test: value.c's ev_truth reports it */
    ev_truth(ev, v, loc);
    return NULL;
  }
  return ht_new(ev, v->u.tt.shape, v->u.tt.dtype);
}

/* Dimension d of an ndim-tensor, negative counting from the end; -1 after a diagnostic. */
static int dim_index(Eval *ev, Value *d, int ndim, SrcLoc loc) {
  int64_t k;
  if (!ev_to_int(ev, d, &k, loc)) return -1;
  if (k < 0) k += ndim;
  if (k < 0 || k >= ndim) {
    ts_error(ev->c, loc, "dimension out of range (expected to be in range of [%d, %d], but got %lld)", -ndim,
             ndim ? ndim - 1 : 0, (long long)(k < 0 ? k - ndim : k));
    return -1;
  }
  return (int)k;
}

/* tensor.name for the metadata attributes; NULL when name is not one (a method, or an error). */
Value *ht_attr(Eval *ev, Value *v, const char *name) {
  Value *shape = v->u.tt.shape;
  if (!strcmp(name, "shape")) return shape;
  if (!strcmp(name, "dtype")) return ev_dtype(ev, v->u.tt.dtype);
  if (!strcmp(name, "ndim")) return ev_int(ev, shape->u.seq.n);
  if (!strcmp(name, "device")) return ev_str(ev, "cuda");
  if (!strcmp(name, "is_cuda")) return ev->vtrue;
  if (!strcmp(name, "requires_grad")) return ev->vfalse;
  if (!strcmp(name, "grad")) return ev->none;
  if (!strcmp(name, "data")) return v;
  if (!strcmp(name, "T") || !strcmp(name, "mT")) { /* all dimensions reversed / the last two swapped */
    Value *t = ev_new(ev, V_TUPLE);
    int n = shape->u.seq.n;
    for (int i = 0; i < n; i++) {
      int j = name[0] == 'T' ? n - 1 - i : (n >= 2 && i >= n - 2 ? (i == n - 1 ? n - 2 : n - 1) : i);
      vl_push(ev, &t->u.seq, shape->u.seq.items[j]);
    }
    return ht_new(ev, t, v->u.tt.dtype);
  }
  return NULL;
}

/* ---- rows -------------------------------------------------------------------------------------- */
/* _tilescale.host_tensor(size, dtype=None, like=None): a shape-only tensor; without a dtype,
 * the dtype torch gives a fill value `like` (bool, int64 or float32). */
static Value *ts_host_tensor(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  SrcLoc loc = call_loc(a);
  Value *shape = size_tuple(ev, &arg[0], 1, "torch tensor", loc);
  if (!shape) return ev->poison;
  ts_dtype t = arg[2] && arg[2]->kind != V_NONE ? number_dtype(arg[2]) : TS_DTYPE_FLOAT32;
  if (arg[1] && arg[1]->kind != V_NONE && !ev_to_dtype(ev, arg[1], &t, loc)) return ev->poison;
  return ht_new(ev, shape, t);
}

/* t.size(dim=None): the shape, or one size. */
static Value *m_size(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  Value *shape = a->self->u.tt.shape;
  if (!arg[0] || arg[0]->kind == V_NONE) return shape;
  int d = dim_index(ev, arg[0], shape->u.seq.n, call_loc(a));
  return d < 0 ? ev->poison : shape->u.seq.items[d];
}

/* t.dim() / ndimension() / numel() / nelement() / element_size(): bi->arg 0, 1, 2. */
static Value *m_count(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  Value *t = a->self;
  if (bi->arg == 0) return ev_int(ev, t->u.tt.shape->u.seq.n);
  if (bi->arg == 1) return ev_int(ev, ht_numel(t));
  return ev_int(ev, dtype_bytes(t->u.tt.dtype));
}

/* Methods that return the tensor as it is: moves, copies, in-place fills (cuda, contiguous,
 * clone, detach, requires_grad_, zero_, uniform_ ...). */
static Value *m_same(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)ev, (void)arg, (void)bi;
  return a->self;
}

/* t.half() / float() / ...: bi->arg is the dtype. */
static Value *m_cast(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  return ht_new(ev, a->self->u.tt.shape, (ts_dtype)bi->arg);
}

/* t.to(...): the dtype among its arguments (a device, a tensor, copy flags are ignored). */
static Value *m_to(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  ts_dtype t = a->self->u.tt.dtype;
  for (int i = 0; i < a->npos; i++) {
    if (a->pos[i]->kind == V_DTYPE) t = a->pos[i]->u.dtype;
    if (a->pos[i]->kind == V_HOST_TENSOR) t = a->pos[i]->u.tt.dtype;
  }
  for (int i = 0; i < a->nkw; i++)
    if (!strcmp(a->kw[i], "dtype") && !ev_to_dtype(ev, a->kwv[i], &t, call_loc(a))) return ev->poison;
  return ht_new(ev, a->self->u.tt.shape, t);
}

/* t.view(*shape) / reshape(*shape): one -1 is inferred; the element count must match. */
static Value *m_view(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  SrcLoc loc = call_loc(a);
  Value **items = a->pos;
  int n = a->npos;
  if (n == 1 && (items[0]->kind == V_TUPLE || items[0]->kind == V_LIST)) {
    n = items[0]->u.seq.n;
    items = items[0]->u.seq.items;
  }
  int64_t total = ht_numel(a->self), known = 1;
  int infer = -1;
  Value *t = ev_new(ev, V_TUPLE);
  for (int i = 0; i < n; i++) {
    int64_t k;
    if (!ev_to_int(ev, items[i], &k, loc)) return ev->poison;
    if (k == -1 && infer < 0) infer = i;
    else if (k < 0) {
      ts_error(ev->c, loc, "view/reshape: invalid size %lld", (long long)k);
      return ev->poison;
    } else known *= k;
    vl_push(ev, &t->u.seq, ev_int(ev, k));
  }
  if (infer >= 0 && known > 0 && total % known == 0) t->u.seq.items[infer] = ev_int(ev, total / known);
  else if (infer >= 0) known = -1;
  if ((infer < 0 && known != total) || known < 0) {
    ts_error(ev->c, loc, "shape %s is invalid for a tensor of %lld elements", ev_repr(ev, t), (long long)total);
    return ev->poison;
  }
  return ht_new(ev, t, a->self->u.tt.dtype);
}

/* t.transpose(d0, d1) / t.t() / t.permute(*dims) / t.unsqueeze(d): bi->arg 0, 1, 2, 3. */
static Value *m_dims(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg;
  SrcLoc loc = call_loc(a);
  Value *shape = a->self->u.tt.shape;
  int n = shape->u.seq.n;
  Value *t = ev_new(ev, V_TUPLE);
  for (int i = 0; i < n; i++) vl_push(ev, &t->u.seq, shape->u.seq.items[i]);
  if (bi->arg == 3) { /* unsqueeze: a new size-1 dimension at d of the result */
    int d = a->npos == 1 ? dim_index(ev, a->pos[0], n + 1, loc) : -1;
    if (d < 0) return ev->poison;
    vl_push(ev, &t->u.seq, ev->none);
    memmove(&t->u.seq.items[d + 1], &t->u.seq.items[d], sizeof(Value *) * (size_t)(n - d));
    t->u.seq.items[d] = ev_int(ev, 1);
  } else if (bi->arg == 2) { /* permute */
    Value **dims = a->pos;
    int nd = a->npos;
    if (nd == 1 && (dims[0]->kind == V_TUPLE || dims[0]->kind == V_LIST)) nd = dims[0]->u.seq.n, dims = dims[0]->u.seq.items;
    if (nd != n) {
      ts_error(ev->c, loc, "permute: %d dimensions given for a tensor of %d", nd, n);
      return ev->poison;
    }
    for (int i = 0; i < n; i++) {
      int d = dim_index(ev, dims[i], n, loc);
      if (d < 0) return ev->poison;
      t->u.seq.items[i] = shape->u.seq.items[d];
    }
  } else { /* transpose(d0, d1); t(): the two dimensions of a matrix */
    int d0 = 0, d1 = n > 1 ? 1 : 0;
    if (bi->arg == 0 && (a->npos != 2 || (d0 = dim_index(ev, a->pos[0], n, loc)) < 0 ||
                         (d1 = dim_index(ev, a->pos[1], n, loc)) < 0)) {
      if (a->npos != 2) ts_error(ev->c, loc, "transpose(dim0, dim1) takes two dimensions");
      return ev->poison;
    }
    t->u.seq.items[d0] = shape->u.seq.items[d1];
    t->u.seq.items[d1] = shape->u.seq.items[d0];
  }
  return ht_new(ev, t, a->self->u.tt.dtype);
}

static const Builtin host_rows[] = {
    {"host_tensor", "size, dtype=None, like=None", ts_host_tensor, 0, 0},
};

/* Methods check their own arguments where they have any. */
static const Builtin tensor_methods[] = {
    {"size", "dim=None", m_size, 0, 0},
    {"dim", "", m_count, 0, 0},
    {"ndimension", "", m_count, 0, 0},
    {"numel", "", m_count, 1, 0},
    {"nelement", "", m_count, 1, 0},
    {"element_size", "", m_count, 2, 0},
    {"cuda", "*args, **kwargs", m_same, 0, 0},
    {"cpu", "*args, **kwargs", m_same, 0, 0},
    {"contiguous", "*args, **kwargs", m_same, 0, 0},
    {"clone", "*args, **kwargs", m_same, 0, 0},
    {"detach", "*args, **kwargs", m_same, 0, 0},
    {"requires_grad_", "*args, **kwargs", m_same, 0, 0},
    {"zero_", "*args, **kwargs", m_same, 0, 0},
    {"fill_", "*args, **kwargs", m_same, 0, 0},
    {"uniform_", "*args, **kwargs", m_same, 0, 0},
    {"normal_", "*args, **kwargs", m_same, 0, 0},
    {"random_", "*args, **kwargs", m_same, 0, 0},
    {"to", "*args, **kwargs", m_to, 0, 0},
    {"half", "", m_cast, TS_DTYPE_FLOAT16, 0},
    {"float", "", m_cast, TS_DTYPE_FLOAT32, 0},
    {"double", "", m_cast, TS_DTYPE_FLOAT64, 0},
    {"bfloat16", "", m_cast, TS_DTYPE_BFLOAT16, 0},
    {"int", "", m_cast, TS_DTYPE_INT32, 0},
    {"long", "", m_cast, TS_DTYPE_INT64, 0},
    {"bool", "", m_cast, TS_DTYPE_BOOL, 0},
    {"view", "*args", m_view, 0, 0},
    {"reshape", "*args", m_view, 0, 0},
    {"transpose", "*args", m_dims, 0, 0},
    {"t", "", m_dims, 1, 0},
    {"permute", "*args", m_dims, 2, 0},
    {"unsqueeze", "*args", m_dims, 3, 0},
};

const BuiltinTable builtins_tensor[] = {
    {MOD_TILESCALE, host_rows, TS_ARRAY_LEN(host_rows), NULL},
    {MOD_TENSOR, tensor_methods, TS_ARRAY_LEN(tensor_methods), NULL},
    BUILTIN_TABLE_END,
};
