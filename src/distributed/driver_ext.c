/* driver_ext.c — driver entry points the distributed runtime needs beyond the runtime's
 * table (rt/cuda_driver.h): CUDA IPC, stream memory operations, mapped host memory,
 * module globals, streams.
 *
 *   dist.c / ipc.c  ->  DistDriver  ->  dlsym on RtDriver.handle (the same libcuda.so.1)
 *
 * Resolved on the runtime's own handle so there is one driver in the process; the names
 * go through <cuda.h>'s versioning macros exactly as cuda_driver.c does (cuIpcOpenMemHandle
 * is cuIpcOpenMemHandle_v2, cuStreamWriteValue32 is cuStreamWriteValue32_v2, ...). */
#include "dist.h"

#include <dlfcn.h>
#include <string.h>

#define DIST_STR2(x) #x
#define DIST_STR(x) DIST_STR2(x)

bool dist_driver_load(DistDriver *x, const RtDriver *drv, StrBuf *why) {
  memset(x, 0, sizeof *x);
  if (!drv->handle) {
    sb_append(why, "no CUDA driver loaded");
    return false;
  }
  DistDriver t;
  memset(&t, 0, sizeof t);
#define DIST_DRIVER_LOAD(fn)                                                        \
  *(void **)&t.fn = dlsym(drv->handle, DIST_STR(fn));                                \
  if (!t.fn) {                                                                       \
    sb_printf(why, "libcuda.so.1 lacks %s (driver too old?)", DIST_STR(fn));         \
    return false;                                                                    \
  }
  DIST_DRIVER_FUNCS(DIST_DRIVER_LOAD)
#undef DIST_DRIVER_LOAD
  t.loaded = true;
  *x = t;
  return true;
}
