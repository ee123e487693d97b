/* api.c — the public entry points of tilescale.h for contexts, programs, compilation and
 * the disk cache, and the small helpers (status strings, dtypes).
 *
 *   ts_program_load_*   file text (a regular file of at most TS_MAX_SOURCE_BYTES)
 *                       -> drv_parse (once per program)
 *   ts_compile_options_check   arch, compiler, dump_after: checked before any file is read
 *   ts_kernel_compile   drv_compile (front end -> IR text -> passes -> codegen) -> CUDA source
 *                       -> disk cache lookup, else NVRTC / nvcc -> cubin (+ PTX) -> cache store
 *   ts_cache_*          what the cache folder holds; emptying it (cache.c)
 *
 * Launching, device memory and timing are in launch.c.  Every failure leaves a message
 * in the context's last error; user mistakes in the kernel file come back as
 * TS_ERR_COMPILE with the full diagnostics text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../driver/driver.h"
#include "../ir/analysis.h"
#include "kernel.h"

/* ---- small helpers ------------------------------------------------------------------ */
const char *ts_status_string(ts_status s) {
  switch (s) {
  case TS_OK: return "ok";
  case TS_ERR_INVALID_ARGUMENT: return "invalid argument";
  case TS_ERR_IO: return "I/O error";
  case TS_ERR_COMPILE: return "compile error";
  case TS_ERR_NOT_FOUND: return "not found";
  case TS_ERR_JIT: return "JIT compilation failed";
  case TS_ERR_NO_DRIVER: return "no CUDA driver or device";
  case TS_ERR_CUDA: return "CUDA error";
  case TS_ERR_LAUNCH_ARGUMENT: return "launch argument mismatch";
  case TS_ERR_UNSUPPORTED: return "unsupported";
  case TS_ERR_OUT_OF_MEMORY: return "out of memory";
  case TS_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

/* ts_dtype_name / ts_dtype_size live with the dtype table in src/ir/dtype.c. */

void rt_set_error(ts_context *ctx, const char *fmt, ...) {
  ctx->out_of_memory = false;
  sb_clear(&ctx->last_error);
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&ctx->last_error, fmt, ap);
  va_end(ap);
  if (ctx->verbose) fprintf(stderr, "tilescale: %s\n", sb_str(&ctx->last_error));
}

void rt_alloc_enter(ts_context *ctx, TsAllocScope *scope, jmp_buf *oom) {
  ts_alloc_enter(scope, ctx->alloc_fn, ctx->alloc_user, oom);
}

void rt_alloc_leave(TsAllocScope *scope) { ts_alloc_leave(scope); }

/* After an allocation failure: the objects being built are freed (with the same hook),
 * the error is recorded without allocating. */
ts_status rt_out_of_memory(ts_context *ctx, TsAllocScope *scope) {
  if (ctx->loading) {
    ts_program_destroy(ctx->loading);
    ctx->loading = NULL;
  }
  ctx->out_of_memory = true;
  rt_alloc_leave(scope);
  return TS_ERR_OUT_OF_MEMORY;
}

ts_status rt_cuda_fail(ts_context *ctx, const char *call, CUresult r) {
  StrBuf what = {0};
  rt_driver_describe(&ctx->drv, r, &what);
  rt_set_error(ctx, "%s failed: %s", call, sb_str(&what));
  sb_free(&what);
  return r == CUDA_ERROR_OUT_OF_MEMORY ? TS_ERR_OUT_OF_MEMORY : TS_ERR_CUDA;
}

/* Options structs carry their size: copy what the caller's version has, zero the rest,
 * so old callers keep working when fields are appended. */
static bool copy_options(void *dst, size_t dst_size, const void *src) {
  memset(dst, 0, dst_size);
  if (!src) return true;
  size_t n = *(const size_t *)src;
  if (n < sizeof(size_t)) return false;
  memcpy(dst, src, n < dst_size ? n : dst_size);
  return true;
}

/* ---- context ---------------------------------------------------------------------------- */
/* Loads the driver and looks at the device once; a missing driver or device is a state
 * of the context (compile-only use), not an error of create. */
static void probe_device(ts_context *ctx) {
  StrBuf *why = &ctx->no_device_why;
  if (!rt_driver_open(&ctx->drv, why)) return;
  RtDriver *d = &ctx->drv;
  int count = 0;
  CUresult r = d->cuInit(0);
  if (r == CUDA_SUCCESS) r = d->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    sb_append(why, "no CUDA device");
    if (r != CUDA_SUCCESS) {
      sb_append(why, " (cuInit: ");
      rt_driver_describe(d, r, why);
      sb_append(why, ")");
    }
    return;
  }
  if (ctx->device < 0 || ctx->device >= count) {
    sb_printf(why, "no CUDA device %d (%d present)", ctx->device, count);
    return;
  }
  int major = 0, minor = 0;
  r = d->cuDeviceGet(&ctx->cu_device, ctx->device);
  if (r == CUDA_SUCCESS)
    r = d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ctx->cu_device);
  if (r == CUDA_SUCCESS)
    r = d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ctx->cu_device);
  if (r != CUDA_SUCCESS) {
    sb_printf(why, "no usable CUDA device %d (", ctx->device);
    rt_driver_describe(d, r, why);
    sb_append(why, ")");
    return;
  }
  ctx->sm = major * 10 + minor;
  ctx->device_ok = true;
}

static void context_init(ts_context *ctx, const ts_context_options *opt);

/* Allocates and initialises the context from its own allocator.  A failure here has no
 * context to describe it in: the status says it.  (All state used after setjmp returns
 * lives in *st, so no local can be clobbered.) */
typedef struct ContextCreate {
  TsAllocScope scope;
  jmp_buf oom;
  ts_context_options o;
  ts_context *ctx;
} ContextCreate;

static ts_status context_create(ContextCreate *st) {
  ts_alloc_enter(&st->scope, st->o.realloc_fn, st->o.alloc_user, &st->oom);
  if (setjmp(st->oom)) {
    if (st->ctx) ts_context_destroy(st->ctx);
    st->ctx = NULL;
    ts_alloc_leave(&st->scope);
    return TS_ERR_OUT_OF_MEMORY;
  }
  st->ctx = ts_calloc(1, sizeof *st->ctx);
  atomic_init(&st->ctx->refs, 1);
  st->ctx->alloc_fn = st->o.realloc_fn;
  st->ctx->alloc_user = st->o.alloc_user;
  context_init(st->ctx, &st->o);
  ts_alloc_leave(&st->scope);
  return TS_OK;
}

ts_status ts_context_create(const ts_context_options *opt, ts_context **out) {
  if (!out) return TS_ERR_INVALID_ARGUMENT;
  *out = NULL;
  ContextCreate st = {0};
  if (!copy_options(&st.o, sizeof st.o, opt)) return TS_ERR_INVALID_ARGUMENT;
  ts_status status = context_create(&st);
  *out = st.ctx;
  return status;
}

/* The distributed backend a context starts with: $TILESCALE_DIST_BACKEND; when unset,
 * TileScale's own switch TILELANG_USE_NVSHMEM=1 means "nvshmem"; else "ipc".  ts_dist_init
 * may replace it with its options' choice. */
static void context_dist_backend(ts_context *ctx) {
  const char *b = getenv("TILESCALE_DIST_BACKEND");
  if ((!b || !*b) && ts_env_flag("TILELANG_USE_NVSHMEM", 0)) b = "nvshmem";
  snprintf(ctx->dist_backend_env, sizeof ctx->dist_backend_env, "%s", b ? b : "");
  if (!b || !*b || strcmp(b, "ipc") == 0) ctx->dist_backend = TS_DIST_BACKEND_IPC;
  else if (strcmp(b, "nvshmem") == 0) ctx->dist_backend = TS_DIST_BACKEND_NVSHMEM;
  else ctx->dist_backend = TS_DIST_BACKEND_DEFAULT;
}

static void context_init(ts_context *ctx, const ts_context_options *opt) {
  ts_context_options o = *opt;
  ctx->device = o.device;
  ctx->verbose = o.verbose;
  if (ts_env_flag("TILESCALE_VERBOSE", 0)) ctx->verbose = 1;
  rt_cache_init(&ctx->cache, o.cache_dir, o.disable_cache);
  context_dist_backend(ctx);
  probe_device(ctx);
  if (ctx->verbose)
    fprintf(stderr, "tilescale: device %d: %s; cache %s\n", ctx->device,
            ctx->device_ok ? "ok" : sb_str(&ctx->no_device_why),
            ctx->cache.enabled ? ctx->cache.dir : "disabled");
}

void rt_context_ref(ts_context *ctx) { atomic_fetch_add(&ctx->refs, 1); }

static void context_free(ts_context *ctx);

void rt_context_unref(ts_context *ctx) {
  if (atomic_fetch_sub(&ctx->refs, 1) == 1) context_free(ctx);
}

/* Drops the caller's reference; the context is freed with its last program or kernel. */
void ts_context_destroy(ts_context *ctx) {
  if (!ctx || ctx->destroy_requested) return;
  ctx->destroy_requested = true;
  rt_context_unref(ctx);
}

static void context_free(ts_context *ctx) {
  TsAllocScope scope;
  rt_alloc_enter(ctx, &scope, NULL);
  if (ctx->cu_ctx) {
    if (ctx->l2_scratch && ctx->drv.cuCtxSetCurrent(ctx->cu_ctx) == CUDA_SUCCESS)
      ctx->drv.cuMemFree(ctx->l2_scratch);
    ctx->drv.cuDevicePrimaryCtxRelease(ctx->cu_device);
  }
  rt_driver_close(&ctx->drv);
  rt_nvrtc_close(&ctx->nvrtc);
  rt_cache_fini(&ctx->cache);
  sb_free(&ctx->no_device_why);
  sb_free(&ctx->last_error);
  ts_free(ctx);
  rt_alloc_leave(&scope);
}

const char *ts_last_error(const ts_context *ctx) {
  if (ctx && ctx->out_of_memory) return "out of memory (the context's allocator returned NULL)";
  if (!ctx || !ctx->last_error.data) return "";
  return ctx->last_error.data;
}

int ts_context_device_sm(const ts_context *ctx) { return (ctx && ctx->device_ok) ? ctx->sm : 0; }

/* Calls of host functions the front end cannot evaluate go to fn (src/front/host_call.c). */
ts_status ts_context_set_host_call(ts_context *ctx, ts_host_call_fn fn, void *user) {
  if (!ctx) return TS_ERR_INVALID_ARGUMENT;
  ctx->host_call = fn;
  ctx->host_call_user = fn ? user : NULL;
  return TS_OK;
}

ts_status rt_ensure_device(ts_context *ctx) {
  ts_status status = TS_OK;
  if (!ctx->device_ok) {
    rt_set_error(ctx, "%s", sb_str(&ctx->no_device_why));
    return TS_ERR_NO_DRIVER;
  }
  if (!ctx->cu_ctx) CU_CHECK(ctx, cuDevicePrimaryCtxRetain, (&ctx->cu_ctx, ctx->cu_device));
  /* Cheap, and needed on every thread that uses the context. */
  CU_CHECK(ctx, cuCtxSetCurrent, (ctx->cu_ctx));
cleanup:
  return status;
}

/* ---- programs ------------------------------------------------------------------------------ */
/* A new, empty program, owned by ctx->loading until it is complete (so a load that runs
 * out of memory frees it, see rt_out_of_memory); its name is copied first. */
static ts_program *program_new(ts_context *ctx, const char *name) {
  ts_program *p = ctx->loading = ts_calloc(1, sizeof *p);
  p->ctx = ctx;
  rt_context_ref(ctx);
  p->name = ts_strdup(name);
  return p;
}

/* Parses p->text (len bytes) and hands the program over. */
static ts_status program_parse(ts_context *ctx, ts_program *p, size_t len, ts_program **out) {
  p->file.name = p->name;
  p->file.text = p->text;
  p->file.len = len;
  /* The target does not matter for parsing. */
  ts_compiler_init(&p->comp, (TsTarget){90, true});
  p->module = drv_parse(&p->comp, &p->file);
  ctx->loading = NULL;
  if (p->comp.diag.errors > 0 || !p->module) {
    rt_set_error(ctx, "%s", p->comp.diag.errors ? sb_str(&p->comp.diag.out) : "the file could not be parsed");
    ts_program_destroy(p);
    return TS_ERR_COMPILE;
  }
  *out = p;
  return TS_OK;
}

static ts_status program_load_file(ts_context *ctx, const char *path, ts_program **out) {
  *out = NULL;
  size_t len = 0;
  ts_program *p = program_new(ctx, path);
  StrBuf why = {0};
  /* Regular files only, capped: see ts_open_regular (src/base/file.c). */
  p->text = ts_read_file_max(path, TS_MAX_SOURCE_BYTES, 0, &len, &why);
  if (!p->text) {
    int err = errno;
    rt_set_error(ctx, "cannot read %s: %s%s", path, sb_str(&why), err == EFBIG ? " of a kernel file" : "");
    sb_free(&why);
    ctx->loading = NULL;
    ts_program_destroy(p);
    return TS_ERR_IO;
  }
  if (strlen(p->text) != len) {
    rt_set_error(ctx, "%s: the file contains a NUL byte (not a text file?)", path);
    ctx->loading = NULL;
    ts_program_destroy(p);
    return TS_ERR_IO;
  }
  return program_parse(ctx, p, len, out);
}

ts_status ts_program_load_file(ts_context *ctx, const char *path, ts_program **out) {
  if (!ctx || !path || !out) return TS_ERR_INVALID_ARGUMENT;
  TsAllocScope scope;
  jmp_buf oom;
  rt_alloc_enter(ctx, &scope, &oom);
  if (setjmp(oom)) return rt_out_of_memory(ctx, &scope);
  ts_status status = program_load_file(ctx, path, out);
  rt_alloc_leave(&scope);
  return status;
}

ts_status ts_program_load_source(ts_context *ctx, const char *name, const char *source, ts_program **out) {
  if (!ctx || !source || !out) return TS_ERR_INVALID_ARGUMENT;
  *out = NULL;
  /* The same cap as for a file: text handed over by a binding is a kernel file too. */
  size_t len = strnlen(source, (size_t)TS_MAX_SOURCE_BYTES + 1);
  if (len > TS_MAX_SOURCE_BYTES) {
    char limit[32];
    rt_set_error(ctx, "%s: source text over the %s limit of a kernel file", name ? name : "<source>",
                 ts_format_bytes(TS_MAX_SOURCE_BYTES, limit, sizeof limit));
    return TS_ERR_INVALID_ARGUMENT;
  }
  TsAllocScope scope;
  jmp_buf oom;
  rt_alloc_enter(ctx, &scope, &oom);
  if (setjmp(oom)) return rt_out_of_memory(ctx, &scope);
  ts_program *p = program_new(ctx, name ? name : "<source>");
  p->text = ts_strdup(source);
  ts_status status = program_parse(ctx, p, len, out);
  rt_alloc_leave(&scope);
  return status;
}

void ts_program_destroy(ts_program *prog) {
  if (!prog) return;
  TsAllocScope scope;
  rt_alloc_enter(prog->ctx, &scope, NULL);
  if (prog->comp.arena) ts_compiler_fini(&prog->comp);
  ts_free(prog->text);
  ts_free(prog->name);
  ts_context *ctx = prog->ctx;
  ts_free(prog);
  rt_alloc_leave(&scope);
  rt_context_unref(ctx);
}

int ts_program_functions(const ts_program *prog, const char **names, int max) {
  if (!prog || !prog->module) return 0;
  return drv_functions(prog->module, names, max);
}

/* ---- compilation ------------------------------------------------------------------------ */
static TsTarget default_target(const ts_context *ctx) {
  int sm = ctx->device_ok ? ctx->sm : 90;
  /* Hopper and later: the "a" variant unlocks wgmma, setmaxnreg and TMA multicast. */
  return (TsTarget){sm, sm >= 90};
}

static ts_kernel *kernel_alloc(ts_context *ctx) {
  ts_kernel *k = ts_calloc(1, sizeof *k);
  k->ctx = ctx;
  rt_context_ref(ctx);
  return k;
}

/* Index of v in the function's dynamic variables, or -1. */
static int dyn_index(const IrFunc *f, const IrVar *v) {
  for (int i = 0; i < f->ndyn; i++)
    if (f->dyn_vars[i] == v) return i;
  return -1;
}

/* An extent `mul * v + add` of one dynamic variable v (v, v * 4, 4 * v + 2, v - 1): *dyn its
 * index, the coefficients; false (dyn -1) for anything else. */
static bool affine_dim(const IrFunc *f, const IrExpr *e, int *dyn, int64_t *mul, int64_t *add) {
  int64_t k;
  *dyn = -1, *mul = 1, *add = 0;
  if (e->kind == IR_VAR) {
    *dyn = dyn_index(f, e->u.var);
    return *dyn >= 0;
  }
  if (e->kind != IR_ADD && e->kind != IR_SUB && e->kind != IR_MUL) return false;
  const IrExpr *x = e->u.ops[0], *c = e->u.ops[1];
  if (!ir_is_const_int(c, &k) && e->kind != IR_SUB) x = e->u.ops[1], c = e->u.ops[0];
  if (!ir_is_const_int(c, &k) || !affine_dim(f, x, dyn, mul, add)) return *dyn = -1, false;
  if (e->kind == IR_MUL) {
    if (k <= 0) return *dyn = -1, false;
    *mul *= k, *add *= k;
  } else {
    *add += e->kind == IR_ADD ? k : -k;
  }
  return true;
}

/* Copies what launching needs out of the IR and the codegen output into the kernel. */
static ts_status fill_metadata(ts_kernel *k, const IrFunc *f, const CgOutput *cg) {
  ts_context *ctx = k->ctx;
  Arena *a = k->arena;
  if (f->nparams + f->ndyn > RT_MAX_ARGS) {
    rt_set_error(ctx, "%s: %d parameters and dynamic dimensions; at most %d are supported", f->name,
                 f->nparams + f->ndyn, RT_MAX_ARGS);
    return TS_ERR_UNSUPPORTED;
  }
  k->func_name = arena_strdup(a, f->name ? f->name : "kernel");
  /* The IR lives in the kernel's own arena, so its strings can be kept by pointer. */
  k->autotune_configs = f->autotune_configs;
  k->nautotune_configs = f->nautotune_configs;
  k->pass_configs = f->pass_configs;
  k->npass_configs = f->npass_configs;
  k->ndyn = f->ndyn;
  k->dyn_vars = ARENA_ARRAY(a, IrVar *, f->ndyn);
  k->dyn_names = ARENA_ARRAY(a, const char *, f->ndyn);
  for (int i = 0; i < f->ndyn; i++) {
    k->dyn_vars[i] = f->dyn_vars[i];
    k->dyn_names[i] = arena_strdup(a, f->dyn_vars[i]->name);
  }
  k->nparams = f->nparams;
  k->params = ARENA_ARRAY(a, RtParam, f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    const IrParam *ip = &f->params[i];
    RtParam *p = &k->params[i];
    p->name = arena_strdup(a, ip->name);
    for (int j = 0; j < f->nout_idx; j++)
      if (f->out_idx[j] == i) p->is_output = f->returns_outputs ? 2 : 1;
    for (int d = 0; d < RT_MAX_DIMS; d++) p->dyn[d] = -1;
    if (ip->var) {
      p->kind = TS_ARG_SCALAR;
      p->dtype = ip->var->dtype;
      p->var = ip->var;
      continue;
    }
    const IrBuffer *b = ip->buf;
    TS_ASSERT(b != NULL);
    p->kind = TS_ARG_TENSOR;
    p->dtype = b->dtype;
    p->ndim = b->ndim;
    p->untouched = !ir_func_touches_buffer(f, b);
    if (b->ndim > RT_MAX_DIMS) {
      rt_set_error(ctx, "parameter '%s' has %d dimensions; at most %d are supported", p->name, b->ndim,
                   RT_MAX_DIMS);
      return TS_ERR_UNSUPPORTED;
    }
    for (int d = 0; d < b->ndim; d++) {
      int64_t v;
      p->shape[d] = -1;
      if (ir_is_const_int(b->shape[d], &v))
        p->shape[d] = v;
      else if (affine_dim(f, b->shape[d], &p->dyn[d], &p->dyn_mul[d], &p->dyn_add[d]) &&
               (p->dyn_mul[d] != 1 || p->dyn_add[d] != 0))
        p->shape_expr[d] = b->shape[d]; /* n * 4 binds n; checked again once all are bound */
      else if (p->dyn[d] < 0)
        p->shape_expr[d] = b->shape[d];
      if (b->strides) p->stride_expr[d] = b->strides[d];
      if (b->strides && b->strides[d]->kind == IR_VAR) p->dyn_stride[d] = 1 + dyn_index(f, b->strides[d]->u.var);
    }
  }
  if (f->ntma > RT_MAX_TMA) {
    rt_set_error(ctx, "%s: %d TMA tensor maps; at most %d are supported", f->name, f->ntma, RT_MAX_TMA);
    return TS_ERR_UNSUPPORTED;
  }
  k->ntma = f->ntma;
  k->tma = ARENA_ARRAY(a, RtTma, f->ntma > 0 ? f->ntma : 1);
  for (int i = 0; i < f->ntma; i++) {
    const IrTmaMap *m = &f->tma_maps[i];
    RtTma *t = &k->tma[i];
    t->param = m->param_index;
    t->rank = m->rank;
    t->swizzle = m->swizzle;
    for (int d = 0; d < 5; d++) t->box[d] = (uint32_t)m->box[d];
  }
  k->nlaunches = cg->nkernels;
  k->launches = ARENA_ARRAY(a, RtLaunch, cg->nkernels);
  for (int i = 0; i < cg->nkernels; i++) {
    const CgKernelInfo *ki = &cg->kernels[i];
    RtLaunch *l = &k->launches[i];
    l->name = arena_strdup(a, ki->name);
    for (int d = 0; d < 3; d++) {
      l->block[d] = ki->block[d] > 0 ? ki->block[d] : 1;
      int64_t v = 1;
      if (!ki->grid[d] || ir_is_const_int(ki->grid[d], &v))
        l->grid_static[d] = v;
      else
        l->grid[d] = ki->grid[d];
    }
    l->smem_bytes = ki->smem_bytes;
    l->smem_dyn = ki->smem_dyn;
    l->cluster_x = ki->cluster_x > 1 ? ki->cluster_x : 1;
    l->persistent = ki->persistent;
    l->nworkspaces = ki->nworkspaces;
    l->workspaces = ARENA_ARRAY(a, RtWorkspace, ki->nworkspaces > 0 ? ki->nworkspaces : 1);
    for (int w = 0; w < ki->nworkspaces; w++) {
      l->workspaces[w].symbol = arena_strdup(a, ki->workspaces[w].symbol);
      l->workspaces[w].bytes = ki->workspaces[w].bytes;
      l->workspaces[w].zero = ki->workspaces[w].zero;
    }
  }
  return TS_OK;
}

/* Cache lookup, else JIT and store.  Cache trouble is reported in verbose mode only. */
static ts_status build_binary(ts_kernel *k, const ts_compile_options *o) {
  ts_context *ctx = k->ctx;
  char name[256];
  snprintf(name, sizeof name, "%s.cu", k->func_name);
  RtJitInput in = {
      .source = k->cuda_source,
      .name = name,
      .target = k->comp.target,
      .compiler = o->compiler,
      .fast_math = k->comp.fast_math,
      .uses_dist = k->uses_dist,
      .uses_shmem = k->uses_shmem,
      .link_nvshmem = ctx->dist_backend == TS_DIST_BACKEND_NVSHMEM,
      .headers = ts_device_headers,
      .nheaders = ts_device_headers_count,
  };
  char key[65];
  RtJitOutput bin;
  StrBuf why = {0};
  if (ctx->cache.enabled) {
    rt_cache_key(&in, key);
    RtCacheLookup found = rt_cache_load(&ctx->cache, key, &bin, &why);
    if (found == RT_CACHE_HIT) {
      if (ctx->verbose) fprintf(stderr, "tilescale: %s: cache hit %s\n", k->func_name, key);
      k->from_cache = true;
      goto have_binary;
    }
    /* An entry that exists but cannot be read is a cache that never hits, typically one
     * shared by a team and written under a umask of 077: say so, not just "miss". */
    if (ctx->verbose && found == RT_CACHE_UNREADABLE)
      fprintf(stderr,
              "tilescale: warning: cannot read cache entry %s; compiling instead (a shared cache "
              "needs entries readable by all its users: check the writers' umask)\n",
              sb_str(&why));
    else if (ctx->verbose)
      fprintf(stderr, "tilescale: %s: cache miss (%s)\n", k->func_name, sb_str(&why));
  }
  sb_clear(&ctx->last_error);
  ts_status status = rt_jit_compile(&ctx->nvrtc, &in, &bin, &ctx->last_error);
  if (status != TS_OK) {
    sb_free(&why);
    if (ctx->verbose) fprintf(stderr, "tilescale: %s\n", sb_str(&ctx->last_error));
    return status;
  }
  if (ctx->cache.enabled) {
    sb_clear(&why);
    if (!rt_cache_store(&ctx->cache, key, &bin, &why) && ctx->verbose)
      fprintf(stderr, "tilescale: cache store failed: %s\n", sb_str(&why));
  }
have_binary:
  sb_free(&why);
  k->cubin = bin.cubin;
  k->cubin_size = bin.cubin_size;
  k->ptx = bin.ptx;
  return TS_OK;
}

static ts_status kernel_compile(ts_program *prog, const char *func, const ts_param *params, int nparams,
                                const ts_compile_options *opt, ts_kernel **out);

/* The checks of the options alone (no file needed), shared by ts_compile_options_check and
 * ts_kernel_compile; *target becomes the arch asked for. */
static ts_status check_options(ts_context *ctx, const ts_compile_options *o, TsTarget *target) {
  if (o->arch && !drv_parse_arch(o->arch, target)) {
    StrBuf list = {0};
    drv_arch_list(&list);
    rt_set_error(ctx, "unknown GPU architecture '%s' (known: %s)", o->arch, sb_str(&list));
    sb_free(&list);
    return TS_ERR_INVALID_ARGUMENT;
  }
  if (o->compiler != TS_COMPILER_NVRTC && o->compiler != TS_COMPILER_NVCC) {
    rt_set_error(ctx, "unknown compiler kind %d", (int)o->compiler);
    return TS_ERR_INVALID_ARGUMENT;
  }
  if (o->dump_after && !drv_has_pass(o->dump_after)) {
    StrBuf list = {0};
    drv_pass_names(&list);
    rt_set_error(ctx, "no pass named '%s' to dump after (passes: %s; or 'all')", o->dump_after,
                 sb_str(&list));
    sb_free(&list);
    return TS_ERR_INVALID_ARGUMENT;
  }
  return TS_OK;
}

ts_status ts_compile_options_check(ts_context *ctx, const ts_compile_options *opt) {
  if (!ctx) return TS_ERR_INVALID_ARGUMENT;
  ts_compile_options o;
  if (!copy_options(&o, sizeof o, opt)) {
    rt_set_error(ctx, "ts_compile_options.size must be set to sizeof(ts_compile_options)");
    return TS_ERR_INVALID_ARGUMENT;
  }
  TsTarget target = default_target(ctx);
  return check_options(ctx, &o, &target);
}

ts_status ts_kernel_compile(ts_program *prog, const char *func, const ts_param *params, int nparams,
                            const ts_compile_options *opt, ts_kernel **out) {
  if (!prog || !func || !out || nparams < 0 || (nparams > 0 && !params)) return TS_ERR_INVALID_ARGUMENT;
  *out = NULL;
  TsAllocScope scope;
  jmp_buf oom;
  rt_alloc_enter(prog->ctx, &scope, &oom);
  if (setjmp(oom)) {
    if (prog->compiling) ts_kernel_destroy(prog->compiling);
    prog->compiling = NULL;
    return rt_out_of_memory(prog->ctx, &scope);
  }
  ts_status status = kernel_compile(prog, func, params, nparams, opt, out);
  prog->compiling = NULL;
  rt_alloc_leave(&scope);
  return status;
}

/* Entries of $TILESCALE_PASS_CONFIGS ("KEY=VALUE,KEY=VALUE", values in Python syntax as
 * --pass-config takes them), appended to keys/values from *n on: they come last, so they win
 * over the call's and the decorator's (a switch tried on a script without editing it). */
static ts_status env_pass_configs(ts_context *ctx, TsCompiler *c, const char *env, const char **keys,
                                  const char **values, int *n) {
  char *text = arena_strdup(c->arena, env);
  for (char *save = NULL, *item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    while (*item == ' ') item++;
    if (!*item) continue;
    char *eq = strchr(item, '=');
    if (!eq || eq == item || !eq[1]) {
      rt_set_error(ctx, "TILESCALE_PASS_CONFIGS: '%s' is not KEY=VALUE (e.g. tl.disable_warp_specialized=True)", item);
      return TS_ERR_INVALID_ARGUMENT;
    }
    *eq = '\0';
    keys[*n] = item, values[(*n)++] = eq + 1;
  }
  return TS_OK;
}

/* The caller's pass_configs, copied into the compilation's arena for the front end, then
 * $TILESCALE_PASS_CONFIGS's. */
static ts_status call_pass_configs(ts_context *ctx, TsCompiler *c, const ts_compile_options *o) {
  if (o->npass_configs < 0 || (o->npass_configs > 0 && !o->pass_configs)) {
    rt_set_error(ctx, "ts_compile_options: npass_configs is %d but pass_configs is %s", o->npass_configs,
                 o->pass_configs ? "set" : "NULL");
    return TS_ERR_INVALID_ARGUMENT;
  }
  const char *env = getenv("TILESCALE_PASS_CONFIGS");
  int n = o->npass_configs, nenv = 0;
  for (const char *q = env; q && *q; q++) nenv += *q == ',';
  int cap = n + (env ? nenv + 1 : 0);
  const char **keys = ARENA_ARRAY(c->arena, const char *, cap > 0 ? cap : 1);
  const char **values = ARENA_ARRAY(c->arena, const char *, cap > 0 ? cap : 1);
  for (int i = 0; i < n; i++) {
    if (!o->pass_configs[i].name || !o->pass_configs[i].value) {
      rt_set_error(ctx, "ts_compile_options: pass_configs[%d] has a NULL %s", i, o->pass_configs[i].name ? "value" : "name");
      return TS_ERR_INVALID_ARGUMENT;
    }
    keys[i] = arena_strdup(c->arena, o->pass_configs[i].name);
    values[i] = arena_strdup(c->arena, o->pass_configs[i].value);
  }
  if (env && *env) {
    ts_status st = env_pass_configs(ctx, c, env, keys, values, &n);
    if (st != TS_OK) return st;
  }
  c->call_pc_keys = keys, c->call_pc_values = values, c->ncall_pc = n;
  return TS_OK;
}

static ts_status kernel_compile(ts_program *prog, const char *func, const ts_param *params, int nparams,
                                const ts_compile_options *opt, ts_kernel **out) {
  ts_context *ctx = prog->ctx;
  ts_compile_options o;
  if (!copy_options(&o, sizeof o, opt)) {
    rt_set_error(ctx, "ts_compile_options.size must be set to sizeof(ts_compile_options)");
    return TS_ERR_INVALID_ARGUMENT;
  }
  TsTarget target = default_target(ctx);
  ts_status checked = check_options(ctx, &o, &target);
  if (checked != TS_OK) return checked;

  /* An unknown name is answered with the list of what the file offers. */
  const char *names[256];
  int nnames = drv_functions(prog->module, names, TS_ARRAY_LEN(names));
  bool found = false;
  for (int i = 0; i < nnames && i < TS_ARRAY_LEN(names); i++) found |= strcmp(names[i], func) == 0;
  if (!found) {
    StrBuf sb = {0};
    for (int i = 0; i < nnames && i < TS_ARRAY_LEN(names); i++) sb_printf(&sb, "%s%s", i ? ", " : "", names[i]);
    rt_set_error(ctx, "%s: no function '%s'; the file defines: %s", prog->name, func,
                 nnames ? sb_str(&sb) : "(no kernel functions)");
    sb_free(&sb);
    return TS_ERR_NOT_FOUND;
  }

  ts_status status = TS_OK;
  ts_kernel *k = prog->compiling = kernel_alloc(ctx);
  TsCompiler *c = &k->comp;
  ts_compiler_init(c, target);
  k->arena = c->arena;
  /* TILESCALE_VERIFY=1 runs ir_verify after every pass without --debug (the test suite sets it). */
  c->debug = o.debug != 0 || ts_env_flag("TILESCALE_VERIFY", 0);
  c->dump_after = o.dump_after ? arena_strdup(c->arena, o.dump_after) : NULL;
  c->dump_out = &k->dump_text;
  const char *mp = o.module_path ? o.module_path : getenv("PYTHONPATH");
  c->module_path = mp && *mp ? arena_strdup(c->arena, mp) : NULL;
  c->host_call = ctx->host_call;
  c->host_call_user = ctx->host_call_user;
  TS_CHECK(call_pass_configs(ctx, c, &o));

  IrFunc *f = NULL;
  CgOutput cg;
  if (!drv_compile(c, prog->module, func, params, nparams, &k->ir_text, &k->stats_text, &f, &cg)) goto compile_error;
  if (!cg.source || cg.nkernels <= 0) {
    rt_set_error(ctx, "%s: code generation produced no kernel", func);
    TS_CHECK(TS_ERR_INTERNAL);
  }
  k->cuda_source = arena_strdup(k->arena, cg.source);
  /* Warnings of a compile that succeeded (a fragment sized to its loops, a value taken from
   * the __main__ block) are the user's to see: on stderr, once per compile (a cached kernel
   * does not repeat them). */
  if (c->diag.warnings && !c->diag.echo) fputs(sb_str(&c->diag.out), stderr);
  /* A grid-wide barrier deadlocks unless every block is resident: launch cooperatively. */
  k->cooperative = cg.cooperative;
  k->uses_dist = cg.uses_dist;
  k->uses_shmem = cg.uses_shmem;
  TS_CHECK(fill_metadata(k, f, &cg));
  if (!o.no_jit) TS_CHECK(build_binary(k, &o));
  *out = k;
  return TS_OK;

compile_error:
  /* --dump-after: the passes that ran before the error are printed after it (that is when
   * they are needed most) */
  rt_set_error(ctx, "%s%s", c->diag.errors ? sb_str(&c->diag.out) : "compilation failed without a diagnostic",
               sb_str(&k->dump_text));
  status = TS_ERR_COMPILE;
cleanup:
  ts_kernel_destroy(k);
  return status;
}

/* ---- disk cache ------------------------------------------------------------------------ */
ts_status ts_cache_get_info(ts_context *ctx, ts_cache_info *out) {
  if (!ctx || !out) return TS_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->dir = ctx->cache.dir;
  out->enabled = ctx->cache.enabled;
  out->max_bytes = ctx->cache.max_bytes;
  rt_cache_usage(&ctx->cache, &out->entries, &out->bytes);
  return TS_OK;
}

ts_status ts_cache_clear(ts_context *ctx, uint64_t *removed) {
  if (!ctx) return TS_ERR_INVALID_ARGUMENT;
  uint64_t n = 0;
  StrBuf why = {0};
  bool ok = rt_cache_clear(&ctx->cache, &n, &why);
  if (removed) *removed = n;
  if (!ok) rt_set_error(ctx, "cannot clear the cache: %s", sb_str(&why));
  sb_free(&why);
  return ok ? TS_OK : TS_ERR_IO;
}

ts_kernel *rt_kernel_new_for_test(ts_context *ctx, const RtParam *params, int nparams,
                                  const char *const *dyn_names, int ndyn, const RtLaunch *launches,
                                  int nlaunches) {
  ts_kernel *k = kernel_alloc(ctx);
  k->arena = arena_new();
  Arena *a = k->arena;
  k->func_name = "test_kernel";
  k->nparams = nparams;
  k->params = ARENA_ARRAY(a, RtParam, nparams);
  for (int i = 0; i < nparams; i++) {
    k->params[i] = params[i];
    k->params[i].name = arena_strdup(a, params[i].name);
  }
  k->ndyn = ndyn;
  k->dyn_vars = ARENA_ARRAY(a, IrVar *, ndyn);
  k->dyn_names = ARENA_ARRAY(a, const char *, ndyn);
  for (int i = 0; i < ndyn; i++) k->dyn_names[i] = arena_strdup(a, dyn_names[i]);
  k->nlaunches = nlaunches;
  k->launches = ARENA_ARRAY(a, RtLaunch, nlaunches);
  for (int i = 0; i < nlaunches; i++) {
    k->launches[i] = launches[i];
    k->launches[i].name = arena_strdup(a, launches[i].name);
  }
  return k;
}

void ts_kernel_destroy(ts_kernel *k) {
  if (!k) return;
  TsAllocScope scope;
  rt_alloc_enter(k->ctx, &scope, NULL);
  if (k->module && k->ctx->cu_ctx && k->ctx->drv.cuCtxSetCurrent(k->ctx->cu_ctx) == CUDA_SUCCESS)
    k->ctx->drv.cuModuleUnload(k->module);
  if (k->comp.arena)
    ts_compiler_fini(&k->comp);
  else if (k->arena)
    arena_destroy(k->arena);
  sb_free(&k->ir_text);
  sb_free(&k->stats_text);
  sb_free(&k->dump_text);
  ts_free(k->cubin);
  ts_free(k->ptx);
  ts_context *ctx = k->ctx;
  ts_free(k);
  rt_alloc_leave(&scope);
  rt_context_unref(ctx);
}

/* ---- artifacts and parameters ------------------------------------------------------- */
const char *ts_kernel_text(const ts_kernel *k, ts_emit what) {
  if (!k) return NULL;
  switch (what) {
  case TS_EMIT_IR:
    /* With --dump-after the requested dumps are the text; otherwise the front end's IR. */
    if (k->dump_text.len) return k->dump_text.data;
    return k->ir_text.len ? k->ir_text.data : NULL;
  case TS_EMIT_CUDA: return k->cuda_source;
  case TS_EMIT_PTX: return k->ptx;
  case TS_EMIT_CUBIN: return NULL; /* binary: ts_kernel_binary */
  case TS_EMIT_STATS: return k->stats_text.len ? k->stats_text.data : NULL;
  }
  return NULL;
}

ts_status ts_kernel_binary(const ts_kernel *k, const void **data, size_t *size) {
  if (!k || !data || !size) return TS_ERR_INVALID_ARGUMENT;
  *data = k->cubin;
  *size = k->cubin_size;
  if (!k->cubin) {
    rt_set_error(k->ctx, "kernel '%s' has no binary (compiled with no_jit)", k->func_name);
    return TS_ERR_NOT_FOUND;
  }
  return TS_OK;
}

int ts_kernel_from_cache(const ts_kernel *k) { return k && k->from_cache; }

int ts_kernel_num_args(const ts_kernel *k) { return k ? k->nparams : 0; }

ts_status ts_kernel_arg_info(const ts_kernel *k, int i, ts_arg_info *out) {
  if (!k || !out || i < 0 || i >= k->nparams) return TS_ERR_INVALID_ARGUMENT;
  const RtParam *p = &k->params[i];
  memset(out, 0, sizeof *out);
  out->name = p->name;
  out->kind = p->kind;
  out->dtype = p->dtype;
  out->ndim = p->ndim;
  for (int d = 0; d < p->ndim && d < RT_MAX_DIMS; d++) out->shape[d] = p->shape[d];
  out->is_output = p->is_output;
  return TS_OK;
}

/* ---- recorded attributes ------------------------------------------------------------------ */
const char *ts_kernel_autotune_configs(const ts_kernel *k, int *count) {
  if (count) *count = k ? k->nautotune_configs : 0;
  return k ? k->autotune_configs : NULL;
}

int ts_kernel_num_pass_configs(const ts_kernel *k) { return k ? k->npass_configs : 0; }

ts_status ts_kernel_pass_config(const ts_kernel *k, int i, const char **key, const char **value) {
  if (!k || i < 0 || i >= k->npass_configs || !key || !value) return TS_ERR_INVALID_ARGUMENT;
  *key = k->pass_configs[i].key;
  *value = k->pass_configs[i].value;
  return TS_OK;
}
