/* cache.h — the on-disk cache of compiled kernels (DESIGN.md §6).
 *
 *   generated source + target + compiler options + version + device headers
 *     -> sha256 key -> <dir>/<key>.cubin
 *
 * An entry is a small header (magic, library version, payload sizes, payload sha256)
 * followed by the cubin and the PTX text (if any).  A truncated or corrupt entry fails
 * the check and is treated as a miss, so it is rebuilt and never loaded.  Writers go
 * through a unique temp file in the same directory and rename(), which is atomic, so
 * many processes may fill the same key at once.  No cache error is ever fatal: the
 * caller just compiles. */
#ifndef TS_RT_CACHE_H
#define TS_RT_CACHE_H

#include "jit.h"

typedef struct RtCache {
  char *dir;    /* heap; NULL when disabled */
  bool enabled;
} RtCache;

/* Resolves the directory: opt_dir, else $TILESCALE_CACHE_DIR, else ~/.cache/tilescale;
 * disabled by opt_disable or TILESCALE_DISABLE_CACHE=1. */
void rt_cache_init(RtCache *c, const char *opt_dir, int opt_disable);
void rt_cache_fini(RtCache *c);

/* The key of a compilation: 64 hex digits + NUL. */
void rt_cache_key(const RtJitInput *in, char key[65]);

/* The entry's path for a key (buffer of n bytes); false when the cache is disabled. */
bool rt_cache_path(const RtCache *c, const char *key, char *buf, size_t n);

/* Loads an entry into `out` (heap buffers).  false on a miss or an invalid entry; the
 * reason goes to `why` (may be NULL) for verbose logs. */
bool rt_cache_load(const RtCache *c, const char *key, RtJitOutput *out, StrBuf *why);

/* Stores an entry (creating the directory); false with a reason when it could not. */
bool rt_cache_store(const RtCache *c, const char *key, const RtJitOutput *out, StrBuf *why);

#endif
