/* cuda_driver.h — the CUDA driver API as a table of function pointers loaded with
 * dlopen("libcuda.so.1") (DESIGN.md §6).
 *
 *   api.c / launch.c  ->  RtDriver table  ->  libcuda.so.1 (when present)
 *
 * <cuda.h> is used for its types only: nothing here links against libcuda, so the
 * library loads and compiles kernels on a machine without a GPU or driver.  The table
 * members are spelled like the API functions; <cuda.h> maps some of them to their
 * versioned ABI names (cuMemAlloc -> cuMemAlloc_v2) and the loader looks up exactly
 * those names, so a call `drv->cuMemAlloc(...)` reaches the symbol the header means. */
#ifndef TS_RT_CUDA_DRIVER_H
#define TS_RT_CUDA_DRIVER_H

#include <cuda.h>
#include <stdbool.h>

#include "../base/base.h"

/* X(function): every driver entry point the runtime uses. */
#define RT_DRIVER_FUNCS(X)          \
  X(cuInit)                         \
  X(cuGetErrorName)                 \
  X(cuGetErrorString)               \
  X(cuDriverGetVersion)             \
  X(cuDeviceGetCount)               \
  X(cuDeviceGet)                    \
  X(cuDeviceGetAttribute)           \
  X(cuDevicePrimaryCtxRetain)       \
  X(cuDevicePrimaryCtxRelease)      \
  X(cuCtxSetCurrent)                \
  X(cuCtxSynchronize)               \
  X(cuModuleLoadData)               \
  X(cuModuleUnload)                 \
  X(cuModuleGetFunction)            \
  X(cuModuleGetGlobal)              \
  X(cuFuncSetAttribute)             \
  X(cuLaunchKernel)                 \
  X(cuLaunchCooperativeKernel)      \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuOccupancyMaxActiveClusters)   \
  X(cuMemAlloc)                     \
  X(cuMemFree)                      \
  X(cuMemcpyHtoD)                   \
  X(cuMemcpyDtoH)                   \
  X(cuMemcpyDtoDAsync)              \
  X(cuMemsetD8)                     \
  X(cuMemsetD8Async)                \
  X(cuStreamSynchronize)            \
  X(cuEventCreate)                  \
  X(cuEventRecord)                  \
  X(cuEventSynchronize)             \
  X(cuEventElapsedTime)             \
  X(cuEventDestroy)                 \
  X(cuTensorMapEncodeTiled)

typedef struct RtDriver {
  void *handle; /* dlopen handle, NULL when the driver is absent */
#define RT_DRIVER_MEMBER(fn) __typeof__(&fn) fn;
  RT_DRIVER_FUNCS(RT_DRIVER_MEMBER)
#undef RT_DRIVER_MEMBER
} RtDriver;

/* Loads libcuda.so.1 and resolves every entry point.  On failure leaves the table
 * empty, writes the reason into `why` and returns false. */
bool rt_driver_open(RtDriver *d, StrBuf *why);
void rt_driver_close(RtDriver *d);

/* "CUDA_ERROR_INVALID_VALUE (invalid argument)" — uses the driver's own strings when
 * the table is loaded, the bare code otherwise. */
void rt_driver_describe(const RtDriver *d, CUresult r, StrBuf *out);

#endif
