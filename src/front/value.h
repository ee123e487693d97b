/* value.h — private to the evaluator: the value domain of the staging interpreter, the
 * evaluator's state, and the value interface every part of it is written against.
 *
 *   AST (parse.c) -> eval_stmt.c / eval_expr.c walk statements and expressions over Values -> Tile IR
 *
 * The evaluator by concept; each file calls only those below it:
 *
 *   eval_entry.c     front_compile: the function, -D parameters, decorators, tracing
 *   eval_stmt.c      statements
 *   eval_expr.c      expressions, assignment targets, calls
 *   eval_module.c    name lookup through modules' lazy globals, imports, module attributes
 *   host_call.c      calls of stub modules' functions handed to the embedding interpreter
 *   registry.c       the builtin registry: each namespace's rows (registry.h)
 *   builtins_*.c     the rows and their handlers, by topic (builtin.h)
 *   builtin.c        binding a call to a row's signature; helpers the handlers share
 *   value.c, operators.c, stage.c   values, Python operators, the IR being traced (here)
 *
 * Statements are reached from below only through ev->exec_stmt.
 *
 * A Value is either a Python value, folded at trace time (None, bool, int, float, str,
 * tuple, list, dict, functions, modules, dtypes, buffers, loop and kernel frames), or
 * an IR value (V_EXPR) that becomes part of the staged program (DESIGN.md §4).  Values
 * are immutable except lists and dicts, and live in the compilation's arena. */
#ifndef TS_FRONT_VALUE_H
#define TS_FRONT_VALUE_H

#include "front.h"

typedef enum ValKind {
  V_POISON,    /* result of an expression that already reported an error: silent */
  V_NONE,
  V_BOOL,
  V_INT,
  V_FLOAT,
  V_STR,
  V_TUPLE,
  V_LIST,
  V_DICT,
  V_FUNC,      /* def / lambda with its defining environment */
  V_BUILTIN,   /* a builtin function (maybe bound to self) */
  V_MODULE,    /* namespaces: tilelang, T, math, tilelang.PassConfigKey, ... */
  V_DTYPE,
  V_TENSORTYPE,/* T.Tensor(shape, dtype): a parameter annotation */
  V_BUFFER,
  V_REGION,    /* buffer slice A[i, a:b, :] */
  V_EXPR,      /* IR expression */
  V_FRAME,     /* loop frame: T.Parallel / T.serial / T.Pipelined / T.unroll / range */
  V_KERNEL,    /* T.Kernel(...) before `with` */
  V_WS,        /* T.ws(...) before `with`: the thread range [u.ws.lo, u.ws.hi) */
  V_NULLCTX,   /* contextlib.nullcontext(x): `with` runs its body, `as` binds x */
  V_LAYOUT,    /* T.Layout(shape, fn): a user index map (layout/index_map.h) */
  V_COMM_REDUCER, /* T.comm_reducer(combiner, [identity]) (builtins_allreduce.c) */
  V_REDUCE_SCOPE, /* T.attr(reducer, "reduce_scope", ...) before `with`: u.enter is the reducer */
  V_HOST_TENSOR, /* a torch tensor made while building a kernel: shape and dtype only (u.tt; host_tensor.c) */
  V_CLASS,     /* a class statement's class (u.cls; classes.c) */
  V_INSTANCE,  /* an instance of one (u.obj) */
  V_METHOD,    /* a def of a class bound to an instance (u.meth) */
  V_OPAQUE     /* unknown import or unsupported construct: using it is an error */
} ValKind;

typedef enum FuncFlavor { FN_PLAIN, FN_PRIM, FN_MACRO } FuncFlavor;

/* Namespaces known to the evaluator: the native modules (a V_MODULE's kind), the Python
 * builtins, and the methods of the value kinds that have some.  Each has its rows in the
 * builtin registry (registry.c). */
typedef enum ModKind {
  MOD_TILELANG, MOD_T, MOD_MATH, MOD_PASSCONFIG, MOD_WARPPOLICY, MOD_AUTOTUNER, MOD_LAYOUT,
  MOD_TEAM, MOD_CMPTYPE, MOD_AMO, /* distributed enums T.Team, T.CmpType, T.Amo */
  MOD_ITERTOOLS,                  /* itertools.product for autotune config spaces */
  MOD_PY,                         /* a module read from a file (Value.u.mod.py; eval_module.c) */
  MOD_TILESCALE,                  /* _tilescale: the prelude's native queries */
  MOD_BUILTINS,                   /* Python builtins: min, len, range ... (never a V_MODULE) */
  MOD_STR, MOD_LIST, MOD_DICT, MOD_INT, MOD_EXPR, /* methods of those values (never a V_MODULE) */
  MOD_TENSOR,                     /* methods of a V_HOST_TENSOR (never a V_MODULE) */
  MOD_COUNT
} ModKind;

typedef struct Env Env;
typedef struct Value Value;
typedef struct PyClass PyClass; /* below; its behaviour: classes.c */
struct Builtin; /* a row of the builtin registry (builtin.h) */

typedef struct ValList {
  Value **items;
  int n, cap;
} ValList;

/* A Python class of the subset (classes.c): its body runs at first use. */
struct PyClass {
  const char *name;
  const AstNode *def; /* the CLASSDEF */
  Env *env;           /* the scope the class statement ran in */
  ValList bases;      /* V_CLASS values, after the body ran */
  Env *attrs;         /* the names the body bound (parent NULL: a namespace, not a scope) */
  bool ready, busy, failed;
};

enum { PERSISTENT_MAX_DIMS = 8 }; /* T.Persistent's domain */

typedef struct LoopFrame {
  IrForKind kind;
  int ndim;
  IrExpr **min, **extent;     /* per dimension */
  IrExpr *step;               /* serial/unroll with a step != 1, or NULL */
  bool py_ok;                 /* constant bounds: also iterable in Python (range) */
  int64_t py_start, py_stop, py_step;
  int num_stages, unroll_factor;
  int *order, *stage, norder;
  struct Fragment *loop_layout; /* T.Parallel(..., loop_layout=T.Fragment(...)), fitted */
  /* T.Persistent(domain, wave_size, index, group_size): the tiles of `extent` (min 0, at
   * most PERSISTENT_MAX_DIMS dimensions), tile = index + w * wave for w = 0, 1, ... while
   * tile < prod(extent), the last two dimensions visited in panels of `group` rows
   * (exec_persistent_for). */
  bool persistent;
  IrExpr *wave, *index;
  int64_t group;
} LoopFrame;

typedef struct KernelFrame {
  IrExpr *grid[3];
  int ngrid;
  int threads[3];
  const char *prelude;
  int cluster_x; /* T.ClusterKernel(cluster_dims=(n, 1, 1)): blocks a cluster; 0: none */
  const char *source, *entry; /* T.CUDASourceCodeKernel(source_code_or_path=, entry_name=) */
} KernelFrame;

struct Value {
  ValKind kind;
  union {
    bool b;
    int64_t i;
    double f;
    struct { const char *s; size_t n; } str;
    ValList seq;                                 /* TUPLE (fixed), LIST */
    struct { ValList keys, vals; } dict;
    struct { const AstNode *def; Env *env; FuncFlavor flavor; } fn;
    struct { const struct Builtin *row; Value *self; const char *name; } bi; /* self: a method's object */
    struct { ModKind mod; struct PyModule *py; } mod; /* py: MOD_PY only */
    ts_dtype dtype;
    struct { Value *shape; ts_dtype dtype; Value *strides; } tt;  /* shape, strides (or NULL): TUPLEs of ints/exprs */
    IrBuffer *buf;
    struct { IrBuffer *buf; IrExpr **min, **extent; } region;
    IrExpr *expr;
    LoopFrame *frame;
    KernelFrame *kernel;
    struct { int64_t lo, hi; } ws;
    Value *enter;                                /* NULLCTX: what `as` binds */
    struct IndexMap *imap;                       /* LAYOUT */
    struct { Value *combiner, *identity; } reducer; /* COMM_REDUCER */
    PyClass *cls;                                /* CLASS */
    struct { PyClass *cls; Env *attrs; } obj;    /* INSTANCE: its own attributes */
    struct { Value *fn, *self; } meth;           /* METHOD */
    struct { const char *what; const char *module; const char *qualname; bool at_name; } opaque;
                                                 /* message reported on use (at_name: on any reference);
                                                    module: the import it stands for; qualname: the
                                                    attribute path inside it (NULL: the module itself) */
  } u;
};

/* Lexical environments: a function call gets one, chained to the closure's. */
struct Env {
  StrMap vars;
  Env *parent;
  struct PyModule *module; /* set on a module's globals: its lazy top-level names */
};

/* A Python module read from a file: the kernel file itself, a sibling helper module, or
 * a prelude module (eval_module.c). */
typedef struct PyModule {
  const char *name;   /* import name ("tilelang.math", "quantize"); "__main__" for the kernel file */
  const char *dir;    /* folder its sibling imports are looked for in (NULL: prelude) */
  Env *globals;
  StrMap lazy;        /* top-level name -> ASSIGN stmt not yet evaluated */
  StrMap lazy_busy;   /* names being evaluated (cycle guard) */
  StrMap main_only;   /* lazy names assigned only under `if __name__ == "__main__":` */
  bool stub_missing;  /* stands for a library it covers in part (torch, tvm): a name it lacks
                         is a stub (an error only when used), not an AttributeError */
  bool from_path;     /* found through the compile's module path (not beside the kernel file):
                         host code calls its functions in the host first (ev_host_first) */
} PyModule;

/* Innermost loop being executed, to route break/continue (IR loop -> IR stmt). */
typedef struct LoopCtx {
  bool is_ir;
  struct LoopCtx *outer;
  int kind; /* an IR loop's IrForKind (a while loop: IR_FOR_SERIAL) */
  int id;   /* an IR loop's number, unique in the evaluation (0: a Python loop) */
} LoopCtx;

/* What one IR block defines (IrVar* in vars, IrBuffer* in bufs). */
typedef struct DefScope {
  PtrVec vars, bufs;
  PtrVec *outer_block;          /* the statements of the enclosing block so far (NULL at the top) */
  struct DefScope *outer_scope; /* its scope: T.wait_wgmma looks for issues in enclosing blocks */
} DefScope;

typedef enum ExecStatus { EX_NORMAL, EX_RETURN, EX_BREAK, EX_CONTINUE } ExecStatus;

/* Call arguments after evaluation (starred/double-starred expanded). */
typedef struct CallArgs {
  const AstNode *node;  /* the CALL (for locations) */
  Value *self;          /* the object of a method call ("a".split: "a"), else NULL */
  Value **pos;
  int npos;
  const char **kw;
  Value **kwv;
  int nkw;
} CallArgs;

/* The staging state host code runs without (ev_host_enter / ev_host_leave): top-level code
 * and class bodies are plain Python, with no statement block, kernel or loop around them. */
typedef struct HostFrame {
  PtrVec *block;
  DefScope *scope;
  IrStmt *kernel;
  bool staged;
  LoopCtx *loop;
} HostFrame;

typedef struct Eval {
  /* Runs one statement: eval_stmt.c's ev_exec_stmt, set by front_compile.  Expressions reach
   * statements only through it (a call runs a def's body, a module-level name runs its
   * assignment, an import runs a module's defs), so the files below the statement layer
   * never call up into it. */
  ExecStatus (*exec_stmt)(struct Eval *ev, Env *env, const AstNode *s);
  /* Calls a function value (eval_expr.c's ev_call, set by front_compile): how a builtin
   * handler runs a function the user passed (T.Layout's forward_fn), like exec_stmt. */
  struct Value *(*call)(struct Eval *ev, struct Value *fn, struct CallArgs *a);
  /* Evaluates an expression (eval_expr.c's ev_eval, set by front_compile): how classes.c,
   * which the evaluator calls for class values, evaluates a class's base list. */
  struct Value *(*eval)(struct Eval *ev, Env *env, const AstNode *n);
  /* base.name (eval_expr.c's ev_attr, set by front_compile): getattr / hasattr's lookup. */
  struct Value *(*attr)(struct Eval *ev, struct Value *base, const char *name, SrcLoc loc);
  const char *pending_name; /* target of `name = T.alloc_*(...)`: names the buffer */
  TsCompiler *c;
  Arena *a;
  Env *builtins;       /* Python builtins */
  Env *globals;        /* the kernel file's top level (main_module->globals) */
  PyModule *main_module;
  const char *main_dir; /* the kernel file's folder: sibling modules are looked for there */
  StrMap modules;      /* import name -> module Value (or stub), loaded once */
  Value *none, *vtrue, *vfalse, *poison;
  /* Tracing state (block == NULL outside a prim_func). */
  PtrVec *block;       /* statements being appended */
  DefScope *scope;     /* definitions of that block */
  IrStmt *kernel;      /* innermost KERNEL statement */
  bool in_ws;          /* inside `with T.ws(...)` */
  IrFunc *func;
  bool staged;         /* the current function body is staged (prim_func/macro/eager body) */
  LoopCtx *loop;
  int loop_ids;        /* IR loops entered so far (LoopCtx.id) */
  Value *ret;          /* value of the last `return` */
  int depth;
  int64_t steps;
  int limit_depth;
  int64_t limit_steps;
  int64_t limit_bytes;  /* arena bytes (TsCompiler.limit_bytes or the default) */
  bool out_of_memory;   /* limit_bytes was exceeded and reported */
  SrcLoc stmt_loc;      /* statement being run: where a limit error without a better place points */
  bool bad_tensor_dim;  /* a negative tensor dimension was reported: sizes computed from it
                           (grids, tiles) are not reported again */
  /* -D parameters, parsed */
  const char **dnames;
  Value **dvals;
  bool *dused;
  int nd;
  /* eager mode */
  bool eager;
  PtrVec eager_pending;  /* const char* names of tensor params declared by annotation */
  PtrVec eager_params;   /* IrParam* declared (in declaration order) */
  PtrVec outputs;        /* IrBuffer* created by T.empty */
  PtrVec dyn_vars;       /* IrVar* from T.dynamic */
  int ir_if_depth;     /* IR 'if' statements being traced around this point (their branches may diverge) */
  const Value *reduce_scope; /* the T.comm_reducer of the innermost `with T.attr(..., "reduce_scope", ...)` */
  PtrVec reducer_reads;  /* IrExpr* loads of a reducer between T.reducer_init and T.finalize_reducer
                            that the kernel's code made: a statement using one is an error (a
                            thread's partial value), except T.reducer_update's own target */
  PtrVec outer_views;    /* IrStmt* ALLOCs of T.make_tensor over a `p: T.ptr` parameter made before
                            T.Kernel: eval_stmt.c puts them at the start of every kernel body */
  IrBuffer *rng_state;   /* T.rng_init's per-thread generator state in the current kernel (NULL before
                            one): eval_stmt.c puts its ALLOC at the start of the kernel body */
  int rng_generator;     /* ... and its generator (builtins_scalar.c: 0 Philox, 1 XORWOW, 2 MRG32k3a) */
  int path_toplevel;     /* > 0 while a module-path module's top-level assignment runs: the host,
                            which imported that module itself, is not called again (host_call.c) */
} Eval;

/* ---- value.c: values, conversions, environments ------------------------------------- */
Value *ev_new(Eval *ev, ValKind k);
Value *ev_int(Eval *ev, int64_t v);
Value *ev_float(Eval *ev, double v);
Value *ev_bool(Eval *ev, bool b);
Value *ev_str(Eval *ev, const char *s);
Value *ev_expr(Eval *ev, IrExpr *e);
Value *ev_tuple(Eval *ev, Value **items, int n);
Value *ev_opaque(Eval *ev, const char *what);
void vl_push(Eval *ev, ValList *l, Value *v);
/* Memory limit: true when `more` bytes still fit; reports the first overrun at loc. */
bool ev_memory_ok(Eval *ev, int64_t more, SrcLoc loc);
bool ev_step(Eval *ev, SrcLoc loc);    /* one evaluation step: false past the step or memory limit */
const char *ev_type_name(const Value *v);
char *ev_repr(Eval *ev, const Value *v);   /* repr(v) */
char *ev_strval(Eval *ev, const Value *v); /* str(v) */
void ev_repr_into(StrBuf *sb, const Value *v, bool quote);
bool ev_is_num(const Value *v);        /* bool, int or float (Python) */
double ev_num_f(const Value *v);       /* a Python number as double / int64 (bool, int: no float) */
int64_t ev_num_i(const Value *v);
int64_t ev_f2i(double x);              /* C cast without UB (saturating, NaN -> 0) */
Value *ev_use_opaque(Eval *ev, Value *v, SrcLoc loc); /* reports the opaque value's message; NULL */
IrExpr *ev_load_var(Eval *ev, IrBuffer *b, SrcLoc loc); /* the value of a T.alloc_var */
bool ev_store_var(Eval *ev, IrBuffer *b, Value *v, SrcLoc loc); /* `x = v` into a T.alloc_var */
bool ev_is_ptr_dtype(const Value *v); /* T.ptr */
/* Converts to IR; `like` (may be NULL) gives the dtype for Python literals. */
IrExpr *ev_to_ir(Eval *ev, Value *v, const IrExpr *like, SrcLoc loc);
/* The global buffer a T.Tensor / T.StridedTensor annotation `tt` declares for parameter `name`
 * (shape and strides converted to IR); NULL after an error. */
IrBuffer *ev_tensor_param(Eval *ev, const char *name, Value *tt, SrcLoc loc);
IrExpr *ev_to_bool_ir(Eval *ev, IrExpr *e, SrcLoc loc);
bool ev_to_dtype(Eval *ev, Value *v, ts_dtype *out, SrcLoc loc);  /* dtype or string */
bool ev_to_int(Eval *ev, Value *v, int64_t *out, SrcLoc loc);     /* Python int or constant IR */
int ev_truth(Eval *ev, Value *v, SrcLoc loc);  /* 1, 0, -1 = not a Python value, -2 = error */
bool ev_values_equal(const Value *a, const Value *b); /* Python == on Python values */
bool ev_iter_items(Eval *ev, Value *it, ValList *out, SrcLoc loc);
Env *ev_env_new(Eval *ev, Env *parent);
void ev_env_set(Eval *ev, Env *env, const char *name, Value *v);
Value *ev_dtype(Eval *ev, ts_dtype t);
Value *ev_namespace(Eval *ev, ModKind mod);  /* T, tilelang, math ... */
PyModule *ev_module_new(Eval *ev, const char *name, bool stub_missing);
Value *ev_module_value(Eval *ev, PyModule *m);

/* ---- operators.c ------------------------------------------------------------------------ */
Value *ev_binop(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc);
Value *ev_unop(Eval *ev, AstOp op, Value *v, SrcLoc loc);
Value *ev_select(Eval *ev, IrExprKind k, IrExpr *cond, Value *a, Value *b, SrcLoc loc);
Value *ev_minmax(Eval *ev, IrExprKind k, Value *x, Value *y, SrcLoc loc); /* k: IR_MIN / IR_MAX */
IrExpr *ev_linear_diff(Eval *ev, IrExpr *hi, IrExpr *lo, SrcLoc loc); /* hi - lo, simplified */

/* ---- host_tensor.c: shape-only torch tensors ------------------------------------------- */
Value *ht_new(Eval *ev, Value *shape, ts_dtype t);
Value *ht_binop(Eval *ev, AstOp op, Value *l, Value *r, SrcLoc loc);
Value *ht_unop(Eval *ev, AstOp op, Value *v, SrcLoc loc);
Value *ht_attr(Eval *ev, Value *v, const char *name); /* a metadata attribute, or NULL */

/* ---- stage.c: the IR being traced ------------------------------------------------------- */
typedef struct BlockSave {
  PtrVec *block;
  DefScope *scope;
} BlockSave;
void ev_emit(Eval *ev, IrStmt *s);
bool ev_need_kernel(Eval *ev, const char *what, SrcLoc loc);
/* T.CUDASourceCodeKernel(*grid, threads=, source_code_or_path=, entry_name=): a KERNEL statement
 * launching the user's CUDA function (source_kernel.c); none after a diagnostic. */
Value *ev_source_kernel(Eval *ev, KernelFrame *kf, SrcLoc loc);
void ev_define_var(Eval *ev, IrVar *v);        /* scoped to the current IR block */
void ev_define_buffer(Eval *ev, IrBuffer *b);
BlockSave ev_push_block(Eval *ev);
IrStmt *ev_pop_block(Eval *ev, BlockSave saved, Env *env, const char *what, SrcLoc loc);
ExecStatus ev_exec_block(Eval *ev, Env *env, const AstList *body); /* statements, via ev->exec_stmt */

/* ---- eval_expr.c ------------------------------------------------------------------------ */
Value *ev_eval(Eval *ev, Env *env, const AstNode *n);
bool ev_assign(Eval *ev, Env *env, const AstNode *target, Value *v, SrcLoc loc);
bool ev_exec_augassign(Eval *ev, Env *env, const AstNode *s);
Value *ev_call(Eval *ev, Value *fn, CallArgs *args);
Value *ev_call_function(Eval *ev, Value *fn, CallArgs *args);
Value *ev_attr(Eval *ev, Value *base, const char *name, SrcLoc loc); /* base.name; errors when missing */

/* ---- classes.c: Python classes (lazy bodies, instances, bound methods) ----------------- */
Value *ev_class_new(Eval *ev, Env *env, const AstNode *def);
Value *ev_class_call(Eval *ev, Value *cls, CallArgs *a);
Value *ev_method_call(Eval *ev, Value *m, CallArgs *a);
Value *ev_object_attr(Eval *ev, Value *base, const char *name, SrcLoc loc); /* NULL: none */
bool ev_object_setattr(Eval *ev, Value *base, const char *name, Value *v, SrcLoc loc);
const char *ev_class_name(const Value *v);
HostFrame ev_host_enter(struct Eval *ev);             /* saves and clears the staging state */
void ev_host_leave(struct Eval *ev, HostFrame saved); /* restores it */

/* ---- eval_stmt.c ------------------------------------------------------------------------ */
ExecStatus ev_exec_stmt(Eval *ev, Env *env, const AstNode *s);
FuncFlavor ev_decorator_flavor(const AstNode *def);

/* ---- host_call.c: calls handed to the embedding interpreter (TsCompiler.host_call) ------- */
Value *ev_host_call(Eval *ev, Value *fn, CallArgs *a); /* fn: an opaque value; else its diagnostic */
/* A module-path module's def called from host code with plain arguments: run in the host
 * (*handled true: its value, or NULL after the host's error); else *handled false. */
Value *ev_host_first(Eval *ev, const Value *fn, CallArgs *a, bool *handled);
/* A sibling module's function that the interpreter fails on is retried in the host:
 * mark = ev_host_retry_arm(ev, fn); r = interpret; r = ev_host_retry(ev, fn, a, &mark, r). */
typedef struct HostRetry {
  bool armed;
  DiagMark diag; /* where the diagnostics stood before the interpreter ran it */
} HostRetry;
HostRetry ev_host_retry_arm(Eval *ev, const Value *fn);
Value *ev_host_retry(Eval *ev, const Value *fn, CallArgs *a, const HostRetry *mark, Value *interpreted);
bool ev_literal_text(StrBuf *sb, const Value *v, const char **why); /* v as Python literal text */
/* The value of literal text (ev_literal_text's notation); NULL with *why when it is none. */
Value *ev_literal_value(Eval *ev, const AstNode *n, const char **why);

/* ---- eval_module.c: imports and modules ------------------------------------------------ */
void ev_scan_module(Eval *ev, PyModule *m, const AstNode *module);
void ev_force_global(Eval *ev, PyModule *m, const char *name);
void ev_exec_import(Eval *ev, Env *env, const AstNode *s);
Value *ev_import_module(Eval *ev, const char *name, const char *from_dir, SrcLoc loc);
Value *ev_module_attr(Eval *ev, Value *module, const char *name, SrcLoc loc); /* errors when missing */
Value *ev_env_lookup(Eval *ev, Env *env, const char *name); /* runs a lazy module-level name first */

#endif
