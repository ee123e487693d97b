/* builtins_ldst.c — TileLang's explicit-width loads and stores of raw bits:
 *
 *   val = T.ldg128(X[i:i + 4], pred=i < n)     (also ldg32/64/256, lds32/64/128 from shared)
 *   T.stg128(Y[j:j + 4], val, pred=...)        (also stg32/64/256, sts32/64/128 to shared)
 *   Y[j:j + 4] = T.reinterpret(val, T.float32x4)
 *
 * A 32-bit load is a uint32 value; a wider one is a register array of 32-bit words (a local
 * buffer), which T.reinterpret views as another element type and count of the same bits (a
 * "vector dtype" T.float32x4 / "float16x8" names both) and a slice assignment or a store
 * writes out.  The bits move as the elements of the memory operand's own type, through
 * views of the words, so every access is an ordinary load or store the passes see (barriers
 * for shared memory, bounds); a false predicate loads zeros and skips a store.  T.__ldg(x[i])
 * is x[i]; T.Broadcast / T.Ramp build such register arrays from a value; indexing a 1-D buffer
 * with a T.Ramp (TIR's vector index) gathers or scatters its lanes (eval_expr.c), and TileLang's
 * packed x2 arithmetic (T.add2 ... T.fma2, T.abs2) works lane by lane on such arrays. */
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

/* The memory operand (`X[i]`, `X[i:j]` or a whole buffer) as buffer and first element. */
static bool mem_operand(Eval *ev, Value *v, const char *fname, IrBuffer **b, IrExpr ***min, SrcLoc loc) {
  if (v->kind == V_EXPR && v->u.expr->kind == IR_LOAD) {
    *b = v->u.expr->u.load.buf;
    *min = v->u.expr->u.load.idx;
    return true;
  }
  if (v->kind == V_REGION) {
    *b = v->u.region.buf;
    *min = v->u.region.min;
    return true;
  }
  if (v->kind == V_BUFFER) {
    *b = v->u.buf;
    *min = ARENA_ARRAY(ev->a, IrExpr *, (*b)->ndim ? (*b)->ndim : 1);
    for (int d = 0; d < (*b)->ndim; d++) (*min)[d] = ir_i32(ev->c, 0);
    return true;
  }
  ts_error(ev->c, loc, "%s expects a buffer element or slice (X[i] or X[i:j]), got %s", fname, ev_type_name(v));
  return false;
}

/* How many elements of b's type the bits are; 0 after a diagnostic. */
static int64_t elem_count(Eval *ev, const IrBuffer *b, int bits, const char *fname, SrcLoc loc) {
  int eb = dtype_bits(b->dtype);
  if (eb < 8 || bits % eb) {
    ts_error(ev->c, loc, "%s moves %d bits, which is no whole number of %s elements of '%s'", fname, bits,
             dtype_name(b->dtype), b->name);
    return 0;
  }
  return bits / eb;
}

/* dst[dmin ...] = src[smin ...] for n consecutive elements along the last dimensions: one
 * vector access (the bits move together, as the instruction the name promises). */
static IrStmt *vector_move(Eval *ev, IrBuffer *dst, IrExpr **dmin, IrBuffer *src, IrExpr **smin, int64_t n,
                           SrcLoc loc) {
  IrExpr *x = ir_load(ev->c, src, smin, src->ndim, loc);
  x->lanes = (int)n;
  IrStmt *st = ir_store(ev->c, dst, dmin, dst->ndim, x, loc);
  st->u.store.lanes = (int)n;
  return st;
}

/* A view of `words` (a register array) as `count` elements of type t. */
static IrBuffer *words_view(Eval *ev, IrBuffer *words, ts_dtype t, int64_t count, SrcLoc loc) {
  IrExpr *ext = ir_i32(ev->c, count);
  IrBuffer *v = ir_buffer(ev->c, arena_printf(ev->a, "%s_%s", words->name, dtype_name(t)), t, IR_SCOPE_LOCAL, 1,
                          &ext, loc);
  v->alias_of = words->alias_of ? words->alias_of : words;
  return bi_declare_buffer(ev, v, loc);
}

static IrBuffer *new_words(Eval *ev, int bits, SrcLoc loc) {
  IrExpr *n = ir_i32(ev->c, bits / 32);
  IrBuffer *w = ir_buffer(ev->c, bi_take_name(ev, "bits"), TS_DTYPE_UINT32, IR_SCOPE_LOCAL, 1, &n, loc);
  return bi_declare_buffer(ev, w, loc);
}

static IrExpr *opt_pred(Eval *ev, Value *v, SrcLoc loc) {
  if (!v || v->kind == V_NONE) return NULL;
  return ev_to_bool_ir(ev, ev_to_ir(ev, v, NULL, loc), loc);
}

/* The memory operand of T.<ld|st><g|s>N (arg), checked against the space its name promises,
 * and the number of its elements the N bits are; 0 after a diagnostic. */
static int64_t bits_operand(Eval *ev, CallArgs *a, Value *arg, const Builtin *bi, IrBuffer **b, IrExpr ***min) {
  SrcLoc loc = call_loc(a);
  const char *fname = arena_printf(ev->a, "T.%s", bi->name);
  if (!bi_need_kernel(ev, a, bi) || !mem_operand(ev, arg, fname, b, min, loc)) return 0;
  bool shared = bi->name[2] == 's', is_shared = (*b)->scope == IR_SCOPE_SHARED || (*b)->scope == IR_SCOPE_SHARED_DYN;
  if (shared ? !is_shared : (*b)->scope != IR_SCOPE_GLOBAL) {
    ts_error(ev->c, loc, "%s %s %s memory, but '%s' is %s", fname, bi->name[0] == 'l' ? "reads" : "writes",
             shared ? "shared" : "global", (*b)->name, ir_scope_names[(*b)->scope]);
    return 0;
  }
  return elem_count(ev, *b, bi->arg, fname, loc);
}

/* T.ldgN / T.ldsN(src, pred=None): bi->arg is N. */
static Value *t_load_bits(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  IrBuffer *b;
  IrExpr **min;
  int64_t n = bits_operand(ev, a, arg[0], bi, &b, &min);
  IrExpr *pred = n ? opt_pred(ev, arg[1], loc) : NULL;
  if (!n) return ev->poison;
  IrBuffer *w = new_words(ev, bi->arg, loc);
  IrBuffer *view = b->dtype == TS_DTYPE_UINT32 ? w : words_view(ev, w, b->dtype, n, loc);
  IrExpr *zero = ir_i32(ev->c, 0);
  IrStmt *ld = vector_move(ev, view, &zero, b, min, n, loc);
  if (pred) {
    IrStmt *clear = ir_store(ev->c, w, &zero, 1, ir_int(ev->c, 0, TS_DTYPE_UINT32, loc), loc);
    if (bi->arg > 32) {
      IrVar *i = ir_var(ev->c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
      IrExpr *ir = ir_varref(ev->c, i, loc);
      clear = ir_for(ev->c, i, zero, ir_i32(ev->c, bi->arg / 32), IR_FOR_UNROLLED,
                     ir_store(ev->c, w, &ir, 1, ir_int(ev->c, 0, TS_DTYPE_UINT32, loc), loc), loc);
    }
    ld = ir_if(ev->c, pred, ld, clear, loc);
  }
  ev_emit(ev, ld);
  if (bi->arg > 32) return bi_buffer_value(ev, w);
  return ev_expr(ev, ir_load(ev->c, w, &zero, 1, loc));
}

/* The value of a store as a register array of exactly `bits` bits. */
static IrBuffer *value_words(Eval *ev, Value *v, int bits, const char *fname, SrcLoc loc) {
  if (v->kind == V_BUFFER && v->u.buf->scope == IR_SCOPE_LOCAL) {
    int64_t n = ir_buffer_numel(v->u.buf);
    if (n * dtype_bits(v->u.buf->dtype) == bits) return v->u.buf;
    ts_error(ev->c, loc, "%s stores %d bits, but '%s' holds %lld", fname, bits, v->u.buf->name,
             (long long)(n * dtype_bits(v->u.buf->dtype)));
    return NULL;
  }
  if (bits == 32 && v->kind != V_BUFFER && v->kind != V_REGION) {
    IrExpr *e = ev_to_ir(ev, v, NULL, loc);
    if (!e) return NULL;
    if (dtype_bits(e->dtype) != 32) {
      ts_error(ev->c, loc, "%s stores 32 bits, but the value is %s", fname, dtype_name(e->dtype));
      return NULL;
    }
    IrBuffer *w = new_words(ev, 32, loc);
    IrExpr *zero = ir_i32(ev->c, 0);
    if (e->dtype != TS_DTYPE_UINT32) {
      e = ir_unary(ev->c, IR_REINTERPRET, e, loc);
      e->dtype = TS_DTYPE_UINT32;
    }
    ev_emit(ev, ir_store(ev->c, w, &zero, 1, e, loc));
    return w;
  }
  ts_error(ev->c, loc, "%s expects the registers a T.ldg/T.lds returned (or a T.reinterpret of them), got %s", fname,
           ev_type_name(v));
  return NULL;
}

/* T.stgN / T.stsN(dst, value, pred=None). */
static Value *t_store_bits(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  const char *fname = arena_printf(ev->a, "T.%s", bi->name);
  IrBuffer *b;
  IrExpr **min;
  int64_t n = bits_operand(ev, a, arg[0], bi, &b, &min);
  IrBuffer *w = n ? value_words(ev, arg[1], bi->arg, fname, loc) : NULL;
  if (!w) return ev->poison;
  IrExpr *pred = opt_pred(ev, arg[2], loc);
  IrBuffer *view = w->dtype == b->dtype && ir_buffer_numel(w) == n ? w : words_view(ev, w, b->dtype, n, loc);
  IrExpr *zero = ir_i32(ev->c, 0);
  IrStmt *st = vector_move(ev, b, min, view, &zero, n, loc);
  ev_emit(ev, pred ? ir_if(ev->c, pred, st, NULL, loc) : st);
  return ev->none;
}

/* T.__ldg(x[i]) / T.__ldg(buf, i): the element, read as any load (nvcc picks the read-only
 * path for a __restrict__ const parameter itself). */
static Value *t_ldg_elem(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  if (arg[0]->kind == V_EXPR && arg[0]->u.expr->kind == IR_LOAD && (!arg[1] || arg[1]->kind == V_NONE)) return arg[0];
  if (arg[0]->kind == V_BUFFER && arg[0]->u.buf->ndim == 1 && arg[1] && arg[1]->kind != V_NONE) {
    IrExpr *i = ev_to_ir(ev, arg[1], NULL, loc);
    return i ? ev_expr(ev, ir_load(ev->c, arg[0]->u.buf, &i, 1, loc)) : ev->poison;
  }
  ts_error(ev->c, loc, "T.__ldg expects a buffer element (x[i]) or a 1-D buffer and an index, got %s",
           ev_type_name(arg[0]));
  return ev->poison;
}

/* T.Broadcast(value, lanes) (bi->arg 0) / T.Ramp(base, stride, lanes) (1): TIR's vector
 * constructors, as a register array of `lanes` elements of the value's type (lanes copies of
 * value; base + i * stride), which a slice assignment stores (`buf[0:8] = T.Broadcast(x, 8)`). */
static Value *t_vector_make(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  bool ramp = bi->arg == 1;
  int64_t lanes;
  if (!ev_to_int(ev, arg[ramp ? 2 : 1], &lanes, loc)) return ev->poison;
  if (lanes < 1 || lanes > 1024) {
    ts_error(ev->c, loc, "T.%s: lanes must be 1 to 1024, got %lld", bi->name, (long long)lanes);
    return ev->poison;
  }
  IrExpr *base = ev_to_ir(ev, arg[0], NULL, loc), *stride = ramp ? ev_to_ir(ev, arg[1], NULL, loc) : NULL;
  if (!base || (ramp && !stride)) return ev->poison;
  IrVar *i = ir_var(ev->c, "i", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *iv = ir_varref(ev->c, i, loc);
  IrExpr *x = ramp ? ir_binary(ev->c, IR_ADD, base, ir_binary(ev->c, IR_MUL, ir_cast(ev->c, stride->dtype, iv, loc),
                                                                stride, loc), loc)
                   : base;
  return bi_lane_array(ev, bi_take_name(ev, ramp ? "ramp" : "bcast"), base->dtype, lanes, i,
                       ir_cast(ev->c, base->dtype, x, loc), loc);
}

bool bi_register_array(const Value *v, int64_t *lanes) {
  return v->kind == V_BUFFER && v->u.buf->scope == IR_SCOPE_LOCAL && v->u.buf->ndim == 1 &&
         ir_is_const_int(v->u.buf->shape[0], lanes);
}

Value *bi_lane_array(Eval *ev, const char *name, ts_dtype t, int64_t lanes, IrVar *l, IrExpr *value, SrcLoc loc) {
  IrExpr *n = ir_i32(ev->c, lanes), *lr = ir_varref(ev->c, l, loc);
  IrBuffer *r = bi_declare_buffer(ev, ir_buffer(ev->c, name, t, IR_SCOPE_LOCAL, 1, &n, loc), loc);
  ev_emit(ev, ir_for(ev->c, l, ir_i32(ev->c, 0), n, IR_FOR_UNROLLED, ir_store(ev->c, r, &lr, 1, value, loc), loc));
  return bi_buffer_value(ev, r);
}

/* ---- TileLang's packed x2 arithmetic -------------------------------------------------------- */
enum { PK_ADD, PK_SUB, PK_MUL, PK_MAX, PK_MIN, PK_FMA, PK_ABS };

/* Operand x of a packed op: its dtype and, for a register array, its lane count (else 0). */
static bool packed_operand(Eval *ev, Value *x, ts_dtype *t, int64_t *lanes, SrcLoc loc) {
  if (bi_register_array(x, lanes)) {
    *t = x->u.buf->dtype;
    return true;
  }
  *lanes = 0;
  IrExpr *e = ev_to_ir(ev, x, NULL, loc);
  if (!e) return false;
  *t = e->dtype;
  return true;
}

/* One lane of the op on scalar operands o[0..n). */
static IrExpr *packed_lane(Eval *ev, int op, IrExpr **o, SrcLoc loc) {
  static const IrExprKind bin[] = {IR_ADD, IR_SUB, IR_MUL, IR_MAX, IR_MIN};
  if (op == PK_ABS) return ir_call(ev->c, IRI_ABS, o[0]->dtype, o, 1, loc);
  if (op == PK_FMA) return ir_binary(ev->c, IR_ADD, ir_binary(ev->c, IR_MUL, o[0], o[1], loc), o[2], loc);
  return ir_binary(ev->c, bin[op], o[0], o[1], loc);
}

/* T.add2 / sub2 / mul2 / max2 / min2 (a, b), T.fma2(a, b, c) (a * b + c), T.abs2(a)
 * (bi->arg: the op): TileLang's packed arithmetic on two lanes (float32x2, bfloat16x2,
 * float16x2), lane by lane: on register arrays (`A[T.Ramp(2 * tid, 1, 2)]`, or another packed
 * result) it makes a register array of the same lanes, on scalars a scalar.  The operands must
 * share one dtype, as TileLang requires. */
static Value *t_packed(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  SrcLoc loc = call_loc(a);
  if (!bi_need_kernel(ev, a, bi)) return ev->poison;
  int n = bi->arg == PK_ABS ? 1 : bi->arg == PK_FMA ? 3 : 2;
  ts_dtype t[3];
  int64_t lanes[3], L = 0;
  for (int i = 0; i < n; i++) {
    if (!packed_operand(ev, arg[i], &t[i], &lanes[i], loc)) return ev->poison;
    if (t[i] != t[0]) {
      ts_error(ev->c, loc, "T.%s: the operands must have the same dtype, got %s and %s", bi->name, dtype_name(t[0]),
               dtype_name(t[i]));
      return ev->poison;
    }
    if (lanes[i] && L && lanes[i] != L) {
      ts_error(ev->c, loc, "T.%s: operands of %lld and %lld lanes", bi->name, (long long)L, (long long)lanes[i]);
      return ev->poison;
    }
    if (lanes[i]) L = lanes[i];
  }
  IrVar *l = ir_var(ev->c, "l", TS_DTYPE_INT32, IR_VAR_LOOP, loc);
  IrExpr *lr = ir_varref(ev->c, l, loc), *o[3];
  for (int i = 0; i < n; i++)
    o[i] = lanes[i] ? ir_load(ev->c, arg[i]->u.buf, &lr, 1, loc) : ev_to_ir(ev, arg[i], NULL, loc);
  IrExpr *x = packed_lane(ev, bi->arg, o, loc);
  return L ? bi_lane_array(ev, bi_take_name(ev, bi->name), t[0], L, l, x, loc) : ev_expr(ev, x);
}

/* "float32x4": a vector dtype's element type and lane count; false when s names none. */
static bool vector_dtype(const char *s, ts_dtype *t, int64_t *lanes) {
  const char *x = strrchr(s, 'x');
  if (!x || x == s || x[1] < '1' || x[1] > '9') return false;
  char base[32];
  size_t n = (size_t)(x - s);
  if (n >= sizeof base) return false;
  memcpy(base, s, n);
  base[n] = 0;
  char *end;
  long long l = strtoll(x + 1, &end, 10);
  if (*end || l < 2 || l > 64 || !dtype_parse(base, t)) return false;
  *lanes = l;
  return true;
}

Value *bi_reinterpret_tile(Eval *ev, Value *x, Value *dt, SrcLoc loc) {
  IrBuffer *w = x->u.buf;
  ts_dtype t;
  int64_t lanes = 0, bits = ir_buffer_numel(w) * dtype_bits(w->dtype);
  if (w->scope != IR_SCOPE_LOCAL || bits <= 0) {
    ts_error(ev->c, loc, "T.reinterpret of a buffer: only registers (T.alloc_local, a T.ldg result) can be "
             "reinterpreted, not '%s' (%s)", w->name, ir_scope_names[w->scope]);
    return ev->poison;
  }
  if (dt && dt->kind == V_STR && vector_dtype(dt->u.str.s, &t, &lanes)) {
    if (lanes * dtype_bits(t) != bits) {
      ts_error(ev->c, loc, "T.reinterpret: '%s' holds %lld bits, %s has %lld", w->name, (long long)bits, dt->u.str.s,
               (long long)(lanes * dtype_bits(t)));
      return ev->poison;
    }
  } else {
    if (!ev_to_dtype(ev, dt, &t, loc)) return ev->poison;
    if (bits % dtype_bits(t)) {
      ts_error(ev->c, loc, "T.reinterpret: '%s' holds %lld bits, no whole number of %s", w->name, (long long)bits,
               dtype_name(t));
      return ev->poison;
    }
    lanes = bits / dtype_bits(t);
  }
  return bi_buffer_value(ev, words_view(ev, w, t, lanes, loc));
}

/* T.float32x4, T.uint32x2 ...: vector dtypes, by name (T.reinterpret reads them). */
static Value *vector_dtype_name(Eval *ev, const char *name) {
  ts_dtype t;
  int64_t lanes;
  return vector_dtype(name, &t, &lanes) ? ev_str(ev, name) : NULL;
}

static const Builtin ldst_rows[] = {
    {"__ldg", "src, index=None", t_ldg_elem, 0, 0},
    {"Broadcast", "value, lanes", t_vector_make, 0, 0},
    {"Ramp", "base, stride, lanes", t_vector_make, 1, 0},
    {"add2", "a, b", t_packed, PK_ADD, 0},
    {"sub2", "a, b", t_packed, PK_SUB, 0},
    {"mul2", "a, b", t_packed, PK_MUL, 0},
    {"max2", "a, b", t_packed, PK_MAX, 0},
    {"min2", "a, b", t_packed, PK_MIN, 0},
    {"fma2", "a, b, c", t_packed, PK_FMA, 0},
    {"abs2", "a", t_packed, PK_ABS, 0},
    {"ldg32", "src, pred=None", t_load_bits, 32, 0},   {"ldg64", "src, pred=None", t_load_bits, 64, 0},
    {"ldg128", "src, pred=None", t_load_bits, 128, 0}, {"ldg256", "src, pred=None", t_load_bits, 256, 0},
    {"lds32", "src, pred=None", t_load_bits, 32, 0},   {"lds64", "src, pred=None", t_load_bits, 64, 0},
    {"lds128", "src, pred=None", t_load_bits, 128, 0},
    {"stg32", "dst, value, pred=None", t_store_bits, 32, 0},   {"stg64", "dst, value, pred=None", t_store_bits, 64, 0},
    {"stg128", "dst, value, pred=None", t_store_bits, 128, 0}, {"stg256", "dst, value, pred=None", t_store_bits, 256, 0},
    {"sts32", "dst, value, pred=None", t_store_bits, 32, 0},   {"sts64", "dst, value, pred=None", t_store_bits, 64, 0},
    {"sts128", "dst, value, pred=None", t_store_bits, 128, 0},
};

const BuiltinTable builtins_ldst[] = {
    {MOD_T, ldst_rows, TS_ARRAY_LEN(ldst_rows), vector_dtype_name},
    BUILTIN_TABLE_END,
};
