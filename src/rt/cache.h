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
 * caller just compiles.
 *
 * Files and folders are created with the process's umask (0666 / 0777 before it), so a
 * team sharing a cache with umask 002 shares its entries.  A hit refreshes the entry's
 * mtime; after every store the folder is trimmed to max_bytes by removing the entries
 * with the oldest mtime, i.e. the least recently used. */
#ifndef TS_RT_CACHE_H
#define TS_RT_CACHE_H

#include "jit.h"

/* The largest entry read or written.  Our biggest kernels (sm_90a GEMMs) make entries of
 * well under 1 MiB (cubin + PTX); 64 MiB leaves a wide margin and still bounds what a
 * corrupt or hostile entry can make us read. */
#define RT_CACHE_ENTRY_MAX ((uint64_t)64 << 20)
#define RT_CACHE_DEFAULT_MAX_BYTES ((uint64_t)4 << 30)

typedef struct RtCache {
  char *dir;          /* heap; NULL when no folder could be chosen ($HOME unset) */
  bool enabled;       /* reads and writes happen (dir set, not turned off) */
  uint64_t max_bytes; /* trim limit, 0 = none */
} RtCache;

typedef enum RtCacheLookup {
  RT_CACHE_MISS,       /* no entry (or the cache is off) */
  RT_CACHE_HIT,        /* `out` holds the binary */
  RT_CACHE_REJECTED,   /* an entry that failed its checks: rebuilt and replaced */
  RT_CACHE_UNREADABLE, /* an entry exists but cannot be read (permissions, not a file) */
} RtCacheLookup;

/* Resolves the directory: opt_dir, else $TILESCALE_CACHE_DIR, else ~/.cache/tilescale;
 * disabled by opt_disable or $TILESCALE_DISABLE_CACHE (a switch: 1/true/yes/on).  The
 * limit comes from $TILESCALE_CACHE_MAX_BYTES.  Bad values warn on stderr. */
void rt_cache_init(RtCache *c, const char *opt_dir, int opt_disable);
void rt_cache_fini(RtCache *c);

/* Parses a size such as "4G", "512M", "100000" (K/M/G/T are powers of 1024, an optional
 * trailing "B" or "iB"); false when malformed. */
bool rt_cache_parse_size(const char *s, uint64_t *out);

/* The key of a compilation: 64 hex digits + NUL. */
void rt_cache_key(const RtJitInput *in, char key[65]);

/* The entry's path for a key (buffer of n bytes); false when the cache is disabled. */
bool rt_cache_path(const RtCache *c, const char *key, char *buf, size_t n);

/* Looks an entry up into `out` (heap buffers, only on a hit); anything but a hit puts
 * the reason in `why` (may be NULL) for verbose logs and warnings. */
RtCacheLookup rt_cache_load(const RtCache *c, const char *key, RtJitOutput *out, StrBuf *why);

/* Stores an entry (creating the directory), then trims the folder to max_bytes; false
 * with a reason when it could not store. */
bool rt_cache_store(const RtCache *c, const char *key, const RtJitOutput *out, StrBuf *why);

/* Removes the least recently used entries until the total is at most max_bytes (never
 * `keep`, the entry just written; may be NULL).  Skipped while another process trims. */
void rt_cache_trim(const RtCache *c, const char *keep);

/* Counts the entries and their bytes (works when disabled, if a folder is known). */
void rt_cache_usage(const RtCache *c, uint64_t *entries, uint64_t *bytes);

/* Removes every entry and leftover temp file; other files are left alone.  *removed
 * counts the entries removed.  false with the reason in `why` when the folder cannot be
 * read or some file could not be removed (a folder that does not exist is empty). */
bool rt_cache_clear(const RtCache *c, uint64_t *removed, StrBuf *why);

#endif
