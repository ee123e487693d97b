/* rt.h — private state of the runtime behind the opaque handles of tilescale.h:
 * the context (driver table, device, cache settings, last error) and the program
 * (a parsed kernel file), plus the error helpers and the checking macro every driver
 * call goes through.
 *
 *   api.c (context, programs, compile)   launch.c (argument checks, launch, timing)
 *        \__________________ rt.h __________________/
 *                              |
 *          cuda_driver.h   jit.h   cache.h   (base/embedded.h) */
#ifndef TS_RT_RT_H
#define TS_RT_RT_H

#include <stdatomic.h>
#include "cache.h"
#include "cuda_driver.h"
#include "jit.h"
#include "tilescale_dist.h"

struct ts_context {
  /* The context lives until ts_context_destroy has been called AND its last program and
   * kernel are destroyed (they hold references): destroying them in any order is safe (a
   * Python interpreter's shutdown, for one, frees objects in no particular order). */
  _Atomic int refs;
  bool destroy_requested;
  int device;            /* CUDA ordinal asked for */
  int verbose;
  RtCache cache;
  /* What distributed kernels are built for: the backend of ts_dist_init on this context,
   * before that the one $TILESCALE_DIST_BACKEND names (read once, at create; DEFAULT when
   * it names none, which ts_dist_init reports with the text in dist_backend_env). */
  ts_dist_backend dist_backend;
  char dist_backend_env[32];
  RtNvrtc nvrtc;         /* loaded on first NVRTC compile */
  RtDriver drv;          /* loaded at create; empty without a driver */
  bool device_ok;        /* driver loaded, initialised, and the device exists */
  StrBuf no_device_why;  /* why device_ok is false ("no CUDA driver: ...", "no CUDA device") */
  CUdevice cu_device;
  int sm;                /* major*10 + minor; 0 without a device */
  CUcontext cu_ctx;      /* the device's primary context, retained on first device use */
  CUdeviceptr l2_scratch;/* flush buffer of the benchmarks, allocated on first use */
  size_t l2_scratch_size;
  StrBuf last_error;
  bool out_of_memory;    /* the last call ran out of memory (last_error could not be written) */
  TsReallocFn alloc_fn;  /* ts_context_options.realloc_fn: every allocation for this context */
  void *alloc_user;
  ts_program *loading;   /* a program being built (freed if its load runs out of memory) */
  /* Called after a kernel's module is loaded (before its first launch): the distributed
   * runtime uploads its heap-base table here, so kernels need no manual attach. */
  ts_status (*module_hook)(void *user, CUmodule mod);
  void *module_hook_user;
  ts_host_call_fn host_call; /* ts_context_set_host_call: calls the front end hands out */
  void *host_call_user;
};

typedef struct AstNode AstNode; /* the parsed module (src/driver: drv_parse) */

struct ts_program {
  ts_context *ctx;
  char *text;            /* heap: the file contents */
  char *name;            /* heap: path or name given by the caller */
  SourceFile file;
  TsCompiler comp;       /* owns the AST arena (parsed once per program) */
  AstNode *module;
  ts_kernel *compiling;  /* a kernel being built (freed if its compile runs out of memory) */
};

/* Public calls run in the context's allocation scope (base.h): its hook serves every
 * allocation and a failure returns to RT_OOM_POINT as TS_ERR_OUT_OF_MEMORY.  Use as
 *   TsAllocScope scope; jmp_buf oom;
 *   rt_alloc_enter(ctx, &scope, &oom);
 *   if (setjmp(oom)) return rt_out_of_memory(ctx, &scope);
 *   ... work ...; rt_alloc_leave(&scope); */
void rt_alloc_enter(ts_context *ctx, TsAllocScope *scope, jmp_buf *oom);
void rt_alloc_leave(TsAllocScope *scope);
ts_status rt_out_of_memory(ts_context *ctx, TsAllocScope *scope); /* leaves the scope */

/* References held by programs and kernels (see ts_context.refs). */
void rt_context_ref(ts_context *ctx);
void rt_context_unref(ts_context *ctx);

/* Replaces the context's last error. */
void rt_set_error(ts_context *ctx, const char *fmt, ...) TS_PRINTF(2, 3);
/* Records a failed driver call ("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of
 * memory)") and returns the status to give back. */
ts_status rt_cuda_fail(ts_context *ctx, const char *call, CUresult r);

/* Every driver call: on failure record call, code and string, set `status` and jump to
 * the enclosing function's `cleanup` label (NCCL checks.h style). */
#define CU_CHECK(ctx, fn, args)                                \
  do {                                                         \
    CUresult cu_r_ = (ctx)->drv.fn args;                       \
    if (cu_r_ != CUDA_SUCCESS) {                               \
      status = rt_cuda_fail((ctx), #fn, cu_r_);                \
      goto cleanup;                                            \
    }                                                          \
  } while (0)

/* Same for calls returning ts_status (our own helpers). */
#define TS_CHECK(expr)                                         \
  do {                                                         \
    status = (expr);                                           \
    if (status != TS_OK) goto cleanup;                         \
  } while (0)

/* Makes the device usable from the calling thread: retains the primary context on
 * first use and makes it current.  TS_ERR_NO_DRIVER when there is no driver/device. */
ts_status rt_ensure_device(ts_context *ctx);

#endif
