/* cuda_driver.c — loads the CUDA driver API table (see cuda_driver.h).
 *
 * The versioned ABI names come from <cuda.h>'s own macros: RT_STR expands its argument
 * before stringifying, so RT_STR(cuMemAlloc) is "cuMemAlloc_v2" exactly when the header
 * says so, and the pointer type (__typeof__ of the prototype) always matches it. */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <string.h>

#define RT_STR2(x) #x
#define RT_STR(x) RT_STR2(x)

bool rt_driver_open(RtDriver *d, StrBuf *why) {
  memset(d, 0, sizeof *d);
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    sb_append(why, "no CUDA driver: libcuda.so.1 not found");
    const char *e = dlerror();
    if (e) sb_printf(why, " (%s)", e);
    return false;
  }
  /* Resolve into a scratch table so a failed load never leaves half the pointers set. */
  RtDriver t;
  memset(&t, 0, sizeof t);
  t.handle = h;
#define RT_DRIVER_LOAD(fn)                                                         \
  *(void **)&t.fn = dlsym(h, RT_STR(fn));                                         \
  if (!t.fn) {                                                                     \
    sb_printf(why, "no CUDA driver: libcuda.so.1 lacks %s (driver too old?)", RT_STR(fn)); \
    dlclose(h);                                                                    \
    return false;                                                                  \
  }
  RT_DRIVER_FUNCS(RT_DRIVER_LOAD)
#undef RT_DRIVER_LOAD
  *d = t;
  return true;
}

void rt_driver_close(RtDriver *d) {
  if (d->handle) dlclose(d->handle);
  memset(d, 0, sizeof *d);
}

void rt_driver_describe(const RtDriver *d, CUresult r, StrBuf *out) {
  const char *name = NULL, *str = NULL;
  if (d->handle) {
    if (d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
    if (d->cuGetErrorString(r, &str) != CUDA_SUCCESS) str = NULL;
  }
  if (name)
    sb_append(out, name);
  else
    sb_printf(out, "CUresult %d", (int)r);
  if (str) sb_printf(out, " (%s)", str);
}
