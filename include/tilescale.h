/* tilescale.h — public C API of libtilescale: compile TileLang kernel files to CUDA,
 * load and launch them.  Opaque handles, ts_status codes, options structs that carry
 * their own size.  Thread-safety: one ts_context per thread (or external locking). */
#ifndef TILESCALE_H
#define TILESCALE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TS_API marks the library's public functions: the shared library is built with
 * -fvisibility=hidden, so these are the only symbols it exports. */
#if defined(__GNUC__) || defined(__clang__)
#define TS_API __attribute__((visibility("default")))
#else
#define TS_API
#endif

#define TS_VERSION_MAJOR 0
#define TS_VERSION_MINOR 1
#define TS_VERSION_PATCH 0
#define TS_VERSION_STRING "0.1.0"

typedef enum ts_status {
  TS_OK = 0,
  TS_ERR_INVALID_ARGUMENT, /* a bad argument to an API call (NULL handle, bad option) */
  TS_ERR_IO,               /* file could not be read or written */
  TS_ERR_COMPILE,          /* the kernel file has errors: ts_last_error holds the diagnostics */
  TS_ERR_NOT_FOUND,        /* no function of that name in the file */
  TS_ERR_JIT,              /* NVRTC / nvcc / nvJitLink failed (log in ts_last_error) */
  TS_ERR_NO_DRIVER,        /* libcuda.so.1 could not be loaded, or no device */
  TS_ERR_CUDA,             /* a driver call failed (call and code in ts_last_error) */
  TS_ERR_LAUNCH_ARGUMENT,  /* launch arguments do not match the kernel's parameters */
  TS_ERR_UNSUPPORTED,      /* valid input that this version cannot compile yet */
  TS_ERR_OUT_OF_MEMORY,
  TS_ERR_INTERNAL
} ts_status;

TS_API const char *ts_status_string(ts_status s);

typedef enum ts_dtype {
  TS_DTYPE_VOID = 0,
  TS_DTYPE_BOOL,
  TS_DTYPE_INT8, TS_DTYPE_INT16, TS_DTYPE_INT32, TS_DTYPE_INT64,
  TS_DTYPE_UINT8, TS_DTYPE_UINT16, TS_DTYPE_UINT32, TS_DTYPE_UINT64,
  TS_DTYPE_FLOAT16, TS_DTYPE_BFLOAT16, TS_DTYPE_FLOAT32, TS_DTYPE_FLOAT64,
  TS_DTYPE_FLOAT8_E4M3, TS_DTYPE_FLOAT8_E5M2,
  TS_DTYPE_INT4, TS_DTYPE_UINT4, TS_DTYPE_FLOAT4_E2M1, /* packed two a byte, the even element in the
                                                          low nibble; ts_dtype_size says 1 */
  TS_DTYPE_HANDLE, /* pointers (internal) */
  TS_DTYPE_COUNT
} ts_dtype;

TS_API const char *ts_dtype_name(ts_dtype t); /* "float16" */
TS_API size_t ts_dtype_size(ts_dtype t);      /* bytes per element */

/* IEEE binary32 <-> binary16 / bfloat16 bits: round to nearest even, overflow to infinity,
 * NaN stays a (quiet) NaN, subnormals exact.  The same conversion the runtime uses for
 * half-precision scalar arguments. */
TS_API uint16_t ts_f32_to_f16(float f);
TS_API float ts_f16_to_f32(uint16_t h);
TS_API uint16_t ts_f32_to_bf16(float f);
TS_API float ts_bf16_to_f32(uint16_t b);

typedef struct ts_context ts_context; /* owns the CUDA driver table, cache settings, last error */
typedef struct ts_program ts_program; /* a parsed kernel file */
typedef struct ts_kernel ts_kernel;   /* one compiled function: CUDA source, binary, launch metadata */

/* ---- context ------------------------------------------------------------------------- */
typedef struct ts_context_options {
  size_t size;             /* sizeof(ts_context_options) */
  int device;              /* CUDA device ordinal (default 0) */
  const char *cache_dir;   /* NULL: $TILESCALE_CACHE_DIR, else ~/.cache/tilescale */
  int disable_cache;       /* 1: off; 0: on unless $TILESCALE_DISABLE_CACHE=1 (or true/yes/on);
                            * -1: on even then (a private cache_dir the caller owns, such as the
                            * folder tilelang's compile workers share for one autotuning run) */
  int verbose;             /* progress messages on stderr (also on when TILESCALE_VERBOSE is set, not 0) */
  /* The memory the library allocates for this context (the context, its programs,
   * compilations and kernels) comes from realloc_fn(alloc_user, ptr, size) (size 0 frees
   * ptr) when set, else from the C library.  A NULL answer for a non-zero size makes the
   * call fail with TS_ERR_OUT_OF_MEMORY (ts_last_error says so); nothing aborts. */
  void *(*realloc_fn)(void *user, void *ptr, size_t size);
  void *alloc_user;
} ts_context_options;

/* Creates a context.  Works without a GPU: compile-only use stays possible and launch
 * calls fail with TS_ERR_NO_DRIVER. */
TS_API ts_status ts_context_create(const ts_context_options *opt, ts_context **out);
TS_API void ts_context_destroy(ts_context *ctx);
TS_API const char *ts_last_error(const ts_context *ctx); /* never NULL */
/* Whether a usable GPU was found, and its arch (e.g. 90 for H100); 0 when none. */
TS_API int ts_context_device_sm(const ts_context *ctx);

/* Host calls.  A kernel file's host code (a factory's body, module-level assignments, the
 * helpers they call: never a kernel or @T.prim_func body) may call a function the compiler
 * cannot evaluate itself: one of a module that is neither beside the kernel file nor in
 * the embedded prelude (`from my_helpers import pick_block`), a name the prelude's partial
 * libraries (torch, tvm) lack, or a top-level function of a module beside the kernel file
 * on which the compiler's interpreter reported errors (those are then dropped when fn
 * succeeds).  Without a host-call function the first two are a diagnostic.  With one, such
 * a call whose arguments are all plain values is handed to it:
 *   module    the import name ("my_helpers")
 *   qualname  the attribute path inside it ("pick_block", "cuda.get_device_name")
 *   args      the arguments as Python literal text, positional then keyword:
 *             "((128, 'x', T.float16), {'k': None})"; dtypes are written T.NAME, floats
 *             that have no literal 1e999, -1e999, float('nan')
 * It returns 0 with *result the returned value in the same notation (None, bool, int within
 * 64 bits, float, str, T.NAME, tuples and lists of them), or non-zero with *result an error
 * message ("ValueError: 77 is not a power of two"), which becomes a diagnostic at the call's
 * line.  *result belongs to the callee and must stay valid until fn is next called on this
 * context (the library copies it at once).  fn runs on the thread compiling, inside
 * ts_kernel_compile; it must not use this context.  NULL fn removes it. */
typedef int (*ts_host_call_fn)(void *user, const char *module, const char *qualname, const char *args,
                               const char **result);
TS_API ts_status ts_context_set_host_call(ts_context *ctx, ts_host_call_fn fn, void *user);

/* ---- programs ---------------------------------------------------------------------------- */
/* A kernel file is at most this big; larger files and text are refused (TS_ERR_IO for a
 * file, TS_ERR_INVALID_ARGUMENT for text) before anything is parsed. */
#define TS_MAX_SOURCE_BYTES ((size_t)16 << 20)

/* Reads and parses a kernel file.  Only regular files are read: a directory, FIFO or
 * device is TS_ERR_IO with ts_last_error saying which ("cannot read X: is a directory"). */
TS_API ts_status ts_program_load_file(ts_context *ctx, const char *path, ts_program **out);
TS_API ts_status ts_program_load_source(ts_context *ctx, const char *name, const char *source, ts_program **out);
TS_API void ts_program_destroy(ts_program *prog);
/* Names of the compilable functions of the file (factories, @T.prim_func, @tilelang.jit). */
TS_API int ts_program_functions(const ts_program *prog, const char **names, int max);

/* ---- compilation --------------------------------------------------------------------- */
typedef struct ts_param { /* -D name=value; value in Python syntax: 1024, 0.5, True, "x", float16, (64, 64) */
  const char *name;
  const char *value;
} ts_param;

/* TS_EMIT_STATS: the work the function does, counted from its tile-level IR (a JSON object:
 * per kernel launch and in total, the FLOPs of its T.gemm statements (2*M*N*K each) and the
 * bytes it reads and writes in global memory, times loop trip counts and blocks; each total
 * "exact", "upper_bound" or "unknown" (then null, with a note saying why).  No new function:
 * read it with ts_kernel_text. */
typedef enum ts_emit { TS_EMIT_IR, TS_EMIT_CUDA, TS_EMIT_PTX, TS_EMIT_CUBIN, TS_EMIT_STATS } ts_emit;
typedef enum ts_compiler_kind { TS_COMPILER_NVRTC = 0, TS_COMPILER_NVCC = 1 } ts_compiler_kind;

typedef struct ts_compile_options {
  size_t size;             /* sizeof(ts_compile_options) */
  const char *arch;        /* "sm_90a", "sm_80"; NULL = the context's device (sm_90a if none) */
  ts_compiler_kind compiler;
  int no_jit;              /* stop after CUDA source generation (no NVRTC) */
  const char *dump_after;  /* print IR after this pass ("all" for every pass) into the IR text */
  int debug;               /* verify IR after every pass */
  /* pass_configs given by the caller (tilelang.compile(..., pass_configs=...)): name/value
   * text as in @tilelang.jit(pass_configs={...}), e.g. {"tl.disable_warp_specialized",
   * "True"}; merged over the decorator's (a name given here wins).  NULL/0: none. */
  const ts_param *pass_configs;
  int npass_configs;
  /* Folders an `import` of the kernel file looks in after the file's own folder, separated
   * by ':' as $PYTHONPATH's are (the Python package passes its sys.path folders, leaving out
   * the standard library and site-packages).  NULL: $PYTHONPATH. */
  const char *module_path;
} ts_compile_options;

/* Checks the options alone, with no file: TS_OK, or TS_ERR_INVALID_ARGUMENT with
 * ts_last_error naming the bad option and the accepted values (an arch NVIDIA has not
 * defined, such as sm_999; a dump_after that names no pass).  ts_kernel_compile makes the
 * same checks; a tool calls this first to report a bad command line before any work. */
TS_API ts_status ts_compile_options_check(ts_context *ctx, const ts_compile_options *opt);
/* Compiles function `func` of the program with the given parameters.  On TS_ERR_COMPILE
 * ts_last_error holds every diagnostic (file:line:col: error: ...). */
TS_API ts_status ts_kernel_compile(ts_program *prog, const char *func, const ts_param *params, int nparams,
                            const ts_compile_options *opt, ts_kernel **out);
TS_API void ts_kernel_destroy(ts_kernel *k);

/* Artifacts (valid while the kernel lives).  ts_kernel_text: IR (the front end's, or the
 * dumps requested), CUDA source, PTX (NVRTC only), the stats JSON, or NULL when not produced. */
TS_API const char *ts_kernel_text(const ts_kernel *k, ts_emit what);
TS_API ts_status ts_kernel_binary(const ts_kernel *k, const void **data, size_t *size); /* cubin */
TS_API int ts_kernel_from_cache(const ts_kernel *k); /* 1 when the binary came from the disk cache */

/* Attributes recorded from the kernel file.  @autotune(configs=...): the evaluated config
 * list as Python literal text ("[{'block': 64}, ...]") and its length, or NULL and 0 when
 * the function has none.  pass_configs of @tilelang.jit: key/value text pairs. */
TS_API const char *ts_kernel_autotune_configs(const ts_kernel *k, int *count);
TS_API int ts_kernel_num_pass_configs(const ts_kernel *k);
TS_API ts_status ts_kernel_pass_config(const ts_kernel *k, int i, const char **key, const char **value);

/* ---- parameters of a compiled kernel --------------------------------------------------- */
typedef enum ts_arg_kind { TS_ARG_TENSOR = 0, TS_ARG_SCALAR = 1 } ts_arg_kind;

typedef struct ts_arg_info {
  const char *name;
  ts_arg_kind kind;
  ts_dtype dtype;
  int ndim;
  int64_t shape[8];     /* -1 = dynamic */
  int is_output;        /* 0: an input; 1: listed in out_idx; 2: created with T.empty and returned */
} ts_arg_info;

TS_API int ts_kernel_num_args(const ts_kernel *k);
TS_API ts_status ts_kernel_arg_info(const ts_kernel *k, int i, ts_arg_info *out);

/* ---- disk cache ------------------------------------------------------------------------ */
/* Compiled binaries are cached in a folder: the context's cache_dir, else
 * $TILESCALE_CACHE_DIR, else ~/.cache/tilescale; one file per kernel (<sha256>.cubin),
 * created with the process's umask (a cache shared by a team needs a umask such as 002).
 * $TILESCALE_DISABLE_CACHE=1 (or true/yes/on) turns it off.  After each write the cache is
 * trimmed to $TILESCALE_CACHE_MAX_BYTES (default 4 GiB; suffixes K, M, G; 0 = no limit) by
 * removing the least recently used entries. */
typedef struct ts_cache_info {
  const char *dir;    /* the folder (valid while the context lives); NULL when none ($HOME unset) */
  int enabled;        /* 0 when turned off */
  uint64_t max_bytes; /* the size limit, 0 = none */
  uint64_t entries;   /* entries now in the folder */
  uint64_t bytes;     /* their total size */
} ts_cache_info;
TS_API ts_status ts_cache_get_info(ts_context *ctx, ts_cache_info *out);
/* Removes every entry (and temporary files left by interrupted writers), also when the
 * cache is turned off; other files in the folder are never touched.  *removed (may be
 * NULL) counts the entries removed. */
TS_API ts_status ts_cache_clear(ts_context *ctx, uint64_t *removed);

/* ---- launch ---------------------------------------------------------------------------- */
/* A DLPack-like view of device memory.  data NULL is accepted for a tensor with a 0
 * dimension (no elements), and data and shape both NULL stand for no tensor (Python's None),
 * accepted for a parameter the kernel never touches. */
typedef struct ts_tensor {
  void *data;              /* device pointer */
  ts_dtype dtype;
  int ndim;
  const int64_t *shape;
  const int64_t *strides;  /* in elements; NULL = compact row-major */
  int device;              /* CUDA ordinal; -1 = host memory (always rejected) */
} ts_tensor;

typedef struct ts_arg {
  ts_arg_kind kind;
  ts_tensor tensor;       /* kind == TS_ARG_TENSOR */
  int64_t i;              /* integer scalar */
  double f;               /* float scalar */
} ts_arg;

/* Checks every argument against the kernel's parameters (dtype, rank, shape, strides,
 * device, null pointers, alignment); on a mismatch nothing is launched and the error
 * names the parameter.  stream is a CUstream (NULL = default stream).  Loads the module
 * into the context's device on first use.  T.alloc_global workspaces (and
 * T.alloc_barrier_gpu words) are zeroed on `stream` before every launch; they are static
 * storage of the loaded module, so launches of the same ts_kernel that overlap on other
 * streams share them (serialise such launches or compile separate kernels). */
TS_API ts_status ts_kernel_launch(ts_kernel *k, const ts_arg *args, int nargs, void *stream);

/* ---- device memory and timing helpers (for tools, tests and benchmarks) ------------- */
TS_API ts_status ts_device_malloc(ts_context *ctx, size_t bytes, void **dptr);
TS_API ts_status ts_device_free(ts_context *ctx, void *dptr);
TS_API ts_status ts_memcpy_h2d(ts_context *ctx, void *dst, const void *src, size_t bytes);
TS_API ts_status ts_memcpy_d2h(ts_context *ctx, void *dst, const void *src, size_t bytes);
TS_API ts_status ts_memset_d8(ts_context *ctx, void *dst, unsigned char value, size_t bytes);
TS_API ts_status ts_synchronize(ts_context *ctx);
/* Median time in milliseconds of `reps` launches after `warmup` launches, each timed
 * with CUDA events; flush_l2 overwrites a buffer larger than L2 before every timed run. */
TS_API ts_status ts_kernel_benchmark(ts_kernel *k, const ts_arg *args, int nargs, int warmup, int reps,
                              int flush_l2, double *median_ms);
/* The same for a device-to-device cuMemcpy of `bytes` (the bandwidth peer). */
TS_API ts_status ts_memcpy_benchmark(ts_context *ctx, void *dst, const void *src, size_t bytes, int warmup,
                              int reps, int flush_l2, double *median_ms);

#ifdef __cplusplus
}
#endif
#endif
