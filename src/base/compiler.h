/* compiler.h — the state of one compilation, passed first to every front-end function,
 * pass and code generator.  It owns the arena all AST/IR nodes of the compilation come
 * from, and the diagnostics sink.  There are no mutable globals (DESIGN.md §2). */
#ifndef TS_COMPILER_H
#define TS_COMPILER_H

#include "base.h"

/* Which GPU the code is generated for: sm_80 -> 80, sm_90a -> 90 with arch_a set. */
typedef struct TsTarget {
  int sm;       /* 80, 86, 89, 90, 100 ... */
  bool arch_a;  /* the "a" (architecture-specific) variant: sm_90a, sm_100a */
} TsTarget;

typedef struct TsCompiler {
  Arena *arena;       /* every node of this compilation */
  Diag diag;          /* user-facing errors and warnings */
  TsTarget target;
  bool debug;         /* run ir_verify after each pass */
  const char *dump_after;  /* pass name whose output is printed (--dump-after), or NULL */
  StrBuf *dump_out;        /* where that dump goes */
  bool fast_math;     /* tl.enable_fast_math */
  int limit_steps;    /* evaluator: max loop iterations / calls before giving up (0 = default) */
  int limit_depth;    /* evaluator: max recursion depth (0 = default) */
  int64_t limit_bytes; /* evaluator: max bytes of the compilation's arena (0 = default) */
  /* Host calls the front end cannot evaluate, handed to the embedding interpreter
   * (ts_context_set_host_call; src/front/host_call.c), or NULL: such calls are errors. */
  int (*host_call)(void *user, const char *module, const char *qualname, const char *args, const char **result);
  void *host_call_user;
  /* pass_configs of the caller (ts_compile_options), merged over @tilelang.jit's */
  const char *const *call_pc_keys, *const *call_pc_values;
  int ncall_pc;
  /* ts_compile_options.module_path (or $PYTHONPATH): folders searched for imported modules
   * after the kernel file's, ':'-separated; NULL: none */
  const char *module_path;
} TsCompiler;

void ts_compiler_init(TsCompiler *c, TsTarget target);
void ts_compiler_fini(TsCompiler *c);

/* Shorthand used everywhere: report a user error at loc. */
#define ts_error(c, loc, ...) diag_error(&(c)->diag, (loc), __VA_ARGS__)

#endif
