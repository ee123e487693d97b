/* embedded.h — files compiled into libtilescale as strings by tools/embed.c at build time:
 *   ts_device_headers  device/tilescale/NAME.cuh, so NVRTC finds `#include <tilescale/...>`
 *                      without any file on disk (build/gen/device_headers.c);
 *   ts_prelude_files   src/front/prelude/ (*.py), the host modules kernel files import
 *                      (tilelang.math, tvm, torch.cuda ...), evaluated by the front end
 *                      (build/gen/prelude_files.c). */
#ifndef TS_BASE_EMBEDDED_H
#define TS_BASE_EMBEDDED_H

#include <stddef.h>

typedef struct TsEmbeddedFile {
  const char *name;     /* relative name: "tilescale/common.cuh", "tilelang/math.py" */
  const char *contents; /* NUL-terminated */
  size_t size;          /* bytes, without the NUL */
} TsEmbeddedFile;

extern const TsEmbeddedFile ts_device_headers[];
extern const int ts_device_headers_count;
extern const TsEmbeddedFile ts_prelude_files[];
extern const int ts_prelude_files_count;

#endif
