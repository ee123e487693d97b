/* kernel.h — private layout of a compiled kernel (ts_kernel): its launch metadata,
 * artifacts and loaded module.
 *
 *   ts_kernel_compile (api.c) fills it from the IrFunc and CgOutput;
 *   ts_kernel_launch (launch.c) checks arguments against RtParam and launches.
 *
 * The kernel owns everything it needs after compilation: the compilation's TsCompiler
 * (whose arena holds the IR expressions of shapes and grids) stays alive with it, and
 * names are copied, so a kernel may outlive its program. */
#ifndef TS_RT_KERNEL_H
#define TS_RT_KERNEL_H

#include "../codegen/cuda.h"
#include "rt.h"

#define RT_MAX_DIMS 8    /* ts_arg_info.shape */
#define RT_MAX_ARGS 128  /* parameters + dynamic dimensions of one kernel */
#define RT_MAX_TMA 8     /* TMA tensor maps of one kernel */

/* A TMA tensor map to encode at launch (IrTmaMap, codegen/cuda.h ABI: after the dynamic
 * dims): tensor parameter `param`, boxes of box[0] (innermost) x box[1] x ... elements. */
typedef struct RtTma {
  int param;
  int rank;
  uint32_t box[5];
  int swizzle;                       /* bytes: 0, 32, 64, 128 */
  /* The map encoded at the last launch, reused while the tensor's address and extents are
   * the same (encoding costs about a microsecond per map; one context per thread, so no lock). */
  bool cached;
  const void *cached_data;
  uint64_t cached_dims[5];
  uint64_t cached_map[16];           /* the CUtensorMap's 128 bytes */
} RtTma;

typedef struct RtParam {
  const char *name;
  ts_arg_kind kind;
  ts_dtype dtype;
  int ndim;                          /* tensors */
  int64_t shape[RT_MAX_DIMS];        /* static extent, or -1 */
  int dyn[RT_MAX_DIMS];              /* index into ts_kernel.dyn_vars when the extent is
                                        dyn_mul * that dynamic variable + dyn_add, else -1 */
  int64_t dyn_mul[RT_MAX_DIMS], dyn_add[RT_MAX_DIMS];
  int dyn_stride[RT_MAX_DIMS];       /* 1 + index into dyn_vars when the stride (T.StridedTensor) is
                                        exactly that dynamic variable, else 0 */
  const IrExpr *shape_expr[RT_MAX_DIMS]; /* other non-constant extents (checked after binding) */
  const IrExpr *stride_expr[RT_MAX_DIMS]; /* explicit strides (all set), or all NULL = row-major */
  IrVar *var;                        /* scalar parameter's variable (grid exprs may use it) */
  int is_output; /* ts_arg_info.is_output's */
  int untouched;                     /* a tensor the kernel never reads, writes, views or maps:
                                        it may be passed as no tensor (data and shape NULL) */
} RtParam;

/* A T.alloc_global workspace of one kernel (CgWorkspace): found in the module at load,
 * zeroed on the launch stream before every launch of its kernel when `zero`. */
typedef struct RtWorkspace {
  const char *symbol;
  int64_t bytes;
  bool zero;
  CUdeviceptr ptr;                   /* resolved at module load */
} RtWorkspace;

typedef struct RtLaunch {
  const char *name;                  /* extern "C" symbol */
  const IrExpr *grid[3];             /* NULL: grid_static[i] */
  int64_t grid_static[3];
  int block[3];
  int64_t smem_bytes;
  const IrExpr *smem_dyn;            /* + bytes sized at run time (evaluated like grid), or NULL */
  int64_t smem_attr;                 /* the dynamic shared memory fn is opted in to */
  int cluster_x;                     /* compiled cluster size along x (0/1: none) */
  bool persistent;                   /* grid[0] is clamped to max_resident at launch */
  int64_t max_resident;              /* blocks co-resident on the device (0: not computed yet) */
  RtWorkspace *workspaces;
  int nworkspaces;
  CUfunction fn;                     /* resolved on first launch */
} RtLaunch;

struct ts_kernel {
  ts_context *ctx;
  TsCompiler comp;                   /* owns the arena of IR and metadata; comp.arena NULL for test kernels */
  Arena *arena;                      /* = comp.arena, or a private one */
  const char *func_name;
  RtParam *params;
  int nparams;
  IrVar **dyn_vars;
  const char **dyn_names;
  int ndyn;
  RtLaunch *launches;
  int nlaunches;
  StrBuf ir_text, dump_text;
  StrBuf stats_text;                 /* JSON work counts (TS_EMIT_STATS), from the front end's IR */
  char *cuda_source;                 /* arena */
  char *ptx;                         /* heap */
  void *cubin;                       /* heap */
  size_t cubin_size;
  bool from_cache;
  CUmodule module;                   /* loaded on first launch */
  const char *autotune_configs;      /* @autotune(configs=...) as literal text, or NULL */
  int nautotune_configs;
  const IrKV *pass_configs;          /* from @tilelang.jit(pass_configs=...) */
  int npass_configs;
  bool uses_dist, uses_shmem;        /* CgOutput: the distributed device library / the NVSHMEM family */
  uint64_t dist_attached;            /* ts_dist.serial of the group whose heap table the module
                                      * holds (0: none): attaching again is then free */
  bool cooperative;                  /* calls T.sync_grid: every block must be resident (cooperative launch) */
  RtTma *tma;                        /* tensor maps, kernel arguments after the dynamic dims */
  int ntma;
};

/* A kernel with hand-written metadata and no binary, for tests of argument checking
 * (validation never needs the driver).  params/launches are copied (names too). */
ts_kernel *rt_kernel_new_for_test(ts_context *ctx, const RtParam *params, int nparams,
                                  const char *const *dyn_names, int ndyn,
                                  const RtLaunch *launches, int nlaunches);

/* Launch-ready form of one call: kernel parameter values and grid sizes. */
typedef struct RtPacked {
  uint64_t storage[RT_MAX_ARGS];     /* each value, 8-byte slots */
  void *ptrs[RT_MAX_ARGS + RT_MAX_TMA]; /* cuLaunchKernel's kernelParams */
  int nptrs;
  IrVar *env_vars[RT_MAX_ARGS];      /* dynamic dims and integer scalars, for grid exprs */
  int64_t env_vals[RT_MAX_ARGS];
  int nenv;
  CUtensorMap tma[RT_MAX_TMA];       /* encoded by rt_kernel_encode_tma (needs the driver) */
} RtPacked;

/* Checks args against the kernel's parameters and packs them.  Touches no driver. */
ts_status rt_kernel_check_args(ts_kernel *k, const ts_arg *args, int nargs, RtPacked *out);

/* Encodes the kernel's TMA tensor maps for checked args into out->tma and appends them to
 * the kernel parameters (cuTensorMapEncodeTiled). */
ts_status rt_kernel_encode_tma(ts_kernel *k, const ts_arg *args, RtPacked *out);

/* Loads the kernel's module once (functions, dynamic shared memory attribute) and runs the
 * context's module hook on it; a no-op when already loaded.  The device must be current. */
ts_status rt_kernel_load_module(ts_kernel *k);

#endif
