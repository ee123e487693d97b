/* builtin.h — the row format of the builtin registry, and what every handler shares.
 *
 *   registry.c (namespaces: which rows)  ->  builtins_*.c (rows + handlers)  ->  builtin.c  ->  value.h
 *
 * Every name a kernel file can call or read that is not Python code — T.*, tilelang.*, math,
 * itertools, _tilescale, the Python builtins and the methods of str/list/dict/int/IR values —
 * is one row: its name, its signature in Python syntax and one handler.  A call binds its
 * arguments to the signature first (builtin.c), so a wrong count or keyword is reported the
 * same way for every construct, then runs the handler with the bound arguments.  A new
 * construct is one row in the table of its topic file and one handler beside it:
 *
 *   {"put_block", "src, dst, size, dst_pe=-1", t_put_get, 0, 0},
 *   static Value *t_put_get(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) { ... }
 *
 * Handlers see the value interface (value.h) and this header only: they never call the
 * interpreter or the registry (a handler that is another construct with other defaults runs
 * that row with builtin_call_row; a function the user passed, such as T.Layout's forward_fn,
 * runs through the ev->call hook).  A handler returns the call's value, or NULL / ev->poison
 * after reporting an error.  A row whose handler words its own argument errors (T.Kernel,
 * min, the str methods) takes "*args, **kwargs" and reads a->pos / a->kw itself. */
#ifndef TS_FRONT_BUILTIN_H
#define TS_FRONT_BUILTIN_H

#include "value.h"

typedef struct Builtin Builtin;

/* arg[i]: the argument bound to the signature's i-th parameter, NULL when an optional one is
 * not given.  Extra positional arguments of a `*args` signature stay in a->pos after the
 * named ones; `**kwargs` accepts (and drops) other keywords.  a->self is a method's object,
 * a->node the call (for carets).  bi is the row: bi->arg its small table argument. */
typedef Value *(*BuiltinFn)(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);

enum {
  /* A name that is a value, not a function (a dtype, an enum member, a namespace): the
   * handler runs when the name is looked up, with a == NULL and arg == NULL. */
  BI_VALUE = 1,
  /* Argument errors do not quote the signature, as Python's own builtins do not.  The first
   * T.* constructs keep that form too: their messages are pinned by tests/diag. */
  BI_TERSE = 2,
  /* builtin[index] means something (T.Tensor[shape, dtype]): the handler runs with
   * arg == NULL and the index in a->pos[0]. */
  BI_INDEX = 4,
};

struct Builtin {
  const char *name;     /* its name in its namespace: "copy" is T.copy */
  const char *params;   /* "src, dst, size=1, *args, **kwargs"; a '=' makes it optional */
  BuiltinFn fn;
  int arg;              /* a small table argument: scope, reduce kind, intrinsic ... */
  unsigned flags;       /* BI_* */
};

/* The rows of one namespace in one topic file.  `missing` answers names no row has (names
 * computed from a table, such as tilelang.PassConfigKey.TL_*), or is NULL. */
typedef struct BuiltinTable {
  ModKind ns;
  const Builtin *rows;
  int n;
  Value *(*missing)(Eval *ev, const char *name);
} BuiltinTable;

#define BUILTIN_TABLE_END {MOD_COUNT, NULL, 0, NULL}

/* Each topic file's tables, ended by BUILTIN_TABLE_END (registry.c lists them). */
extern const BuiltinTable builtins_alloc[];   /* buffers, tensors, views, workspaces */
extern const BuiltinTable builtins_loops[];   /* T.Kernel, loop frames, thread queries, synchronisation */
extern const BuiltinTable builtins_tileops[]; /* copy, fill, reduce, atomics, gemm, im2col */
extern const BuiltinTable builtins_layout[];  /* tilelang.layout helpers, annotations, hints */
extern const BuiltinTable builtins_scalar[];  /* dtypes, math, casts, min/max, device print/assert */
extern const BuiltinTable builtins_ieee[];    /* T.ieee_*: arithmetic with a rounding mode */
extern const BuiltinTable builtins_reducer[]; /* T.alloc_reducer, reducer_init / update, finalize_reducer */
extern const BuiltinTable builtins_ldst[];    /* T.ldg / lds / stg / sts of raw bits, vector reinterprets */
extern const BuiltinTable builtins_logical[]; /* T.any_of / T.all_of */
extern const BuiltinTable builtins_warp[];    /* shuffles, votes, predicate barriers, lane and warp numbers */
extern const BuiltinTable builtins_dist[];    /* distributed primitives and their enums */
extern const BuiltinTable builtins_python[];  /* Python builtins, methods, math, itertools */
extern const BuiltinTable builtins_allreduce[]; /* T.comm_reducer, T.attr reduce_scope, T.tvm_thread_allreduce */
extern const BuiltinTable builtins_host[];
extern const BuiltinTable builtins_mma[];       /* T.ptx_ldmatrix, T.ptx_mma: hand-written warp MMA */
extern const BuiltinTable builtins_tensor[];    /* shape-only torch tensors: _tilescale.host_tensor, methods */    /* tilelang namespace, decorators, _tilescale */

/* ---- builtin.c: values and calls ------------------------------------------------------------- */
/* A builtin value for `row`, shown as `name` ("T.copy"); self: a method's object. */
Value *builtin_value(Eval *ev, const Builtin *row, const char *name, Value *self);
/* Calls a builtin value: binds a's arguments to the row's signature (errors name the value),
 * then runs the handler. */
Value *builtin_call(Eval *ev, Value *fn, CallArgs *a);
/* The row called `name` among rows[0..n), or NULL (a handler finding a sibling row). */
const Builtin *builtin_find(const Builtin *rows, int n, const char *name);
/* Runs another row on the same call, as if it had been called (T.wgmma_gemm is T.gemm). */
Value *builtin_call_row(Eval *ev, const Builtin *row, const char *name, CallArgs *a);

/* ---- builtin.c: helpers handlers share ------------------------------------------------------- */
static inline SrcLoc call_loc(const CallArgs *a) { return a->node ? a->node->loc : SRCLOC_NONE; }
const AstNode *bi_arg_node(const CallArgs *a, int i, const char *name); /* the argument's syntax */
SrcLoc bi_dim_loc(const AstNode *shape, int d, int ndim, SrcLoc dflt);  /* a shape literal's dim d */
bool bi_check_size(Eval *ev, IrExpr *e, int64_t min, SrcLoc loc, const char *what, int d);
bool bi_opt_bool(Eval *ev, Value *v, bool dflt, SrcLoc loc);
bool bi_opt_int(Eval *ev, Value *v, int64_t dflt, int64_t *out, SrcLoc loc);
int bi_shape_arg(Eval *ev, Value *v, IrExpr ***out, SrcLoc loc);       /* ndim, or -1 */
IrExpr *bi_to_dtype(Eval *ev, Value *v, ts_dtype t, SrcLoc loc);        /* a number or IR as type t */
const char *bi_take_name(Eval *ev, const char *dflt);  /* `x = T.alloc_*(...)` names the buffer x */
/* Element `flat` (row-major) of b as an index list. */
IrExpr **bi_flat_index(Eval *ev, const IrBuffer *b, IrExpr *flat, SrcLoc loc);
/* The same over the region (min, extent) of b (NULL: the whole buffer). */
IrExpr **bi_region_flat_index(Eval *ev, const IrBuffer *b, IrExpr *const *min, IrExpr *const *extent, IrExpr *flat,
                               SrcLoc loc);
/* `value` bound to a fresh LET named `name` where the evaluation is, so that it runs once,
 * there (an atomic, a shuffle step); returns the LET's reference. */
IrExpr *bi_let_once(Eval *ev, const char *name, IrExpr *value, SrcLoc loc);
/* Declares b where the evaluation is (an ALLOC statement) and binds its name; returns b. */
IrBuffer *bi_declare_buffer(Eval *ev, IrBuffer *b, SrcLoc loc);
/* An on-chip buffer of `scope` from T.alloc_*'s shape and dtype arguments, declared in the
 * current block; NULL after a diagnostic naming `what`. */
IrBuffer *bi_alloc_buffer(Eval *ev, CallArgs *a, const char *what, Value *shape, Value *dtype, IrScope scope);
Value *bi_buffer_value(Eval *ev, IrBuffer *b);
/* A T.alloc_var of dtype t (init may be NULL), named like `x = ...` names buffers. */
Value *bi_declare_var(Eval *ev, ts_dtype t, IrExpr *init, SrcLoc loc);
/* &mbarrier for a barrier operand: a T.alloc_barrier buffer (its first barrier, as TileLang's
 * _mbar_to_buffer_load) or one element of it (`bars[i]`); NULL after a diagnostic naming fname. */
IrExpr *bi_barrier_addr(Eval *ev, Value *v, const char *fname, SrcLoc loc);
/* T.gemm without tensor-core instructions for its types (gemm_fma.c): whether GEMM statement
 * g takes that path, and its FMA loop nest emitted (clear_if: a run-time clear_accum). */
bool bi_gemm_needs_fma(TsCompiler *c, const IrStmt *g);
/* Whether annotation value v is T.handle (a TIR-style parameter bound later by T.match_buffer). */
bool bi_is_handle_annotation(const Value *v);
bool bi_gemm_fma(Eval *ev, const IrStmt *g, IrExpr *clear_if);
bool bi_need_kernel(Eval *ev, CallArgs *a, const Builtin *bi);
/* T.Parallel / T.copy(..., loop_layout=v): the T.Fragment v fitted to the nest's constant
 * extents and the kernel's threads (builtins_layout.c), or NULL after an error naming `what`. */
struct Fragment *bi_loop_layout(Eval *ev, Value *v, int ndim, IrExpr *const *extent, const char *what, SrcLoc loc);
/* A register array: a 1-D local buffer of constant length (*lanes), as T.Ramp / T.Broadcast,
 * T.ldg* and the packed x2 ops make (builtins_ldst.c). */
bool bi_register_array(const Value *v, int64_t *lanes);
/* A fresh register array `name` of `lanes` elements of t, lane l (the loop variable `l`) set to
 * `value` by an unrolled loop emitted here. */
Value *bi_lane_array(Eval *ev, const char *name, ts_dtype t, int64_t lanes, IrVar *l, IrExpr *value, SrcLoc loc);
/* T.reinterpret(registers, dtype): a view of a local buffer as dtype, or as the element type
 * and count of a vector dtype name ("float32x4"), of the same bits (builtins_ldst.c). */
Value *bi_reinterpret_tile(Eval *ev, Value *x, Value *dt, SrcLoc loc);          /* "T.<name>" inside T.Kernel */

/* Handlers several tables use: known but not lowered (bi_unsupported_stmt: an UNSUPPORTED
 * statement and an opaque result; bi_unsupported: an error at the call; bi_kernel_unsupported:
 * the same, checked to be in a kernel first), performance hints with no effect (bi_hint), and
 * BI_VALUE rows whose value is namespace bi->arg or the int bi->arg. */
Value *bi_unsupported_stmt(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);
Value *bi_unsupported(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);
Value *bi_kernel_unsupported(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);
Value *bi_hint(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);
Value *bi_value_namespace(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);
Value *bi_value_int(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);

#endif
