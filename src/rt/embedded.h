/* embedded.h — the device-side library (device/tilescale/NAME.cuh) compiled into
 * libtilescale as strings, so NVRTC finds `#include <tilescale/...>` without any file
 * on disk.  The table is generated at build time by tools/embed.c into
 * build/gen/device_headers.c. */
#ifndef TS_RT_EMBEDDED_H
#define TS_RT_EMBEDDED_H

#include <stddef.h>

typedef struct TsEmbeddedFile {
  const char *name;     /* include name: "tilescale/common.cuh" */
  const char *contents; /* NUL-terminated */
  size_t size;          /* bytes, without the NUL */
} TsEmbeddedFile;

extern const TsEmbeddedFile ts_device_headers[];
extern const int ts_device_headers_count;

#endif
