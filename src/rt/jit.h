/* jit.h — CUDA source -> cubin, in-process with NVRTC (default) or with nvcc in a
 * subprocess (DESIGN.md §6).
 *
 *   cg_cuda (source)  ->  rt_jit_compile  ->  cubin (+ PTX with NVRTC)  ->  cache / module load
 *
 * NVRTC is loaded with dlopen (libnvrtc.so.13, libnvrtc.so, $CUDA_HOME/lib64/libnvrtc.so)
 * into a table like the driver's, so libtilescale has no link-time CUDA dependency.
 * The embedded device headers (embedded.h) are handed to NVRTC as in-memory headers
 * and written next to the source for nvcc. */
#ifndef TS_RT_JIT_H
#define TS_RT_JIT_H

#include <nvrtc.h>

#include "../base/compiler.h"
#include "../../include/tilescale.h"
#include "../base/embedded.h"

#define RT_NVRTC_FUNCS(X)    \
  X(nvrtcGetErrorString)     \
  X(nvrtcVersion)            \
  X(nvrtcCreateProgram)      \
  X(nvrtcCompileProgram)     \
  X(nvrtcGetProgramLogSize)  \
  X(nvrtcGetProgramLog)      \
  X(nvrtcGetCUBINSize)       \
  X(nvrtcGetCUBIN)           \
  X(nvrtcGetPTXSize)         \
  X(nvrtcGetPTX)             \
  X(nvrtcGetLTOIRSize)       \
  X(nvrtcGetLTOIR)           \
  X(nvrtcDestroyProgram)

typedef struct RtNvrtc {
  void *handle;
#define RT_NVRTC_MEMBER(fn) __typeof__(&fn) fn;
  RT_NVRTC_FUNCS(RT_NVRTC_MEMBER)
#undef RT_NVRTC_MEMBER
} RtNvrtc;

/* Loads NVRTC; on failure writes why into `why` (every path tried) and returns false. */
bool rt_nvrtc_open(RtNvrtc *n, StrBuf *why);
void rt_nvrtc_close(RtNvrtc *n);

typedef struct RtJitInput {
  const char *source;          /* complete CUDA translation unit */
  const char *name;            /* program name shown in compiler messages ("kernel.cu") */
  TsTarget target;
  ts_compiler_kind compiler;
  bool fast_math;
  bool uses_dist;              /* calls the distributed device library (codegen's CgOutput) */
  bool uses_shmem;             /* ... its NVSHMEM family */
  bool link_nvshmem;           /* the context's distributed backend is NVSHMEM: the family links
                                  NVSHMEM's device library (when found) */
  const TsEmbeddedFile *headers; /* include files offered to the compiler */
  int nheaders;
} RtJitInput;

typedef struct RtJitOutput { /* heap buffers, released with rt_jit_output_free */
  void *cubin;
  size_t cubin_size;
  char *ptx;                   /* NULL when not produced (nvcc) */
} RtJitOutput;

/* "sm_90a" / "sm_80" for a target; buf holds at least 16 bytes. */
const char *rt_target_arch(TsTarget t, char *buf, size_t n);
/* Parses "sm_90a", "sm_80", "90a", "80"; false when malformed. */

/* The compiler options used for a target, one per line: part of the cache key, so a
 * change of flags never reuses an old binary. */
void rt_jit_options_text(const RtJitInput *in, StrBuf *out);

/* Compiles.  `nvrtc` is loaded on demand when the compiler is NVRTC (may stay
 * unloaded for nvcc).  On failure returns TS_ERR_JIT (compiler log in err) or
 * TS_ERR_NO_DRIVER-like TS_ERR_JIT when the compiler cannot be found. */
ts_status rt_jit_compile(RtNvrtc *nvrtc, const RtJitInput *in, RtJitOutput *out, StrBuf *err);
void rt_jit_output_free(RtJitOutput *out);

/* How a symbol appears in an ELF cubin's symbol table (exact name, defined in the image).
 * The distributed runtime finds its table and NVSHMEM's device state by name with
 * cuModuleGetGlobal: a link that renamed or dropped one would make the upload silently
 * skip, so the JIT checks the image of every distributed kernel. */
typedef enum RtCubinSym {
  RT_CUBIN_SYM_ABSENT = 0,
  RT_CUBIN_SYM_LOCAL,   /* local binding (whole-program images bind their variables so) */
  RT_CUBIN_SYM_GLOBAL,  /* global or weak binding */
  RT_CUBIN_SYM_BAD_ELF  /* the image is not a well-formed 64-bit ELF */
} RtCubinSym;
RtCubinSym rt_cubin_symbol(const void *cubin, size_t size, const char *name);

#endif
