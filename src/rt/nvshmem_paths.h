/* nvshmem_paths.h — where NVSHMEM is installed: its host library (loaded by the
 * distributed runtime, src/distributed/nvshmem.c) and its device library and headers (linked into
 * kernels by the JIT, jit.c).  Discovery lives here, in the runtime layer, because both the
 * JIT (rt) and the distributed runtime (dist, above rt) need it. */
#ifndef TS_RT_NVSHMEM_PATHS_H
#define TS_RT_NVSHMEM_PATHS_H

#include "../base/base.h"

typedef struct RtNvshmemPaths {
  StrBuf host_lib;    /* .../lib/libnvshmem_host.so.3 (or a bare soname found by the loader) */
  StrBuf include_dir; /* .../include, when found (for device compilation) */
  StrBuf device_bc;   /* .../lib/libnvshmem_device.{a,bc}, when found (for nvJitLink) */
} RtNvshmemPaths;

/* Looks for NVSHMEM: $NVSHMEM_HOME, $NVSHMEM_SRC (a built source tree), the pip package nvidia-nvshmem-cu13 (the site-packages
 * of python3 and of the usual prefixes), then the loader's own path.  Fills `why` with every
 * place it looked when nothing was found. */
bool rt_nvshmem_find(RtNvshmemPaths *p, StrBuf *why);
void rt_nvshmem_paths_free(RtNvshmemPaths *p);

#endif
