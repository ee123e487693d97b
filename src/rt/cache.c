/* cache.c — disk cache of cubins (see cache.h for the format and the guarantees).
 *
 * Hostile folders are expected: the directory may be shared by a team, filled by a
 * crashed writer, or hold things that are not entries (a symlink to /dev/zero, a 2 GB
 * file under an entry's name).  Entries are therefore opened without following links,
 * only as regular files, and the header is checked against the file's size before the
 * payload is read, so nothing bigger than RT_CACHE_ENTRY_MAX is ever read. */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_MAGIC "TSCUBIN1"
#define ENTRY_SUFFIX ".cubin"
/* A temp file older than this belongs to a writer that died before its rename. */
#define STALE_TEMP_SECONDS 3600

/* Fixed-size little header in front of the payload. */
typedef struct EntryHeader {
  char magic[8];
  char version[16];   /* TS_VERSION_STRING, NUL-padded */
  uint64_t cubin_size;
  uint64_t ptx_size;  /* without NUL; 0 = none */
  uint8_t sha[32];    /* sha256 of cubin || ptx */
} EntryHeader;

bool rt_cache_parse_size(const char *s, uint64_t *out) {
  if (!s || *s < '0' || *s > '9') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno) return false;
  int shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10, end++; break;
  case 'm': case 'M': shift = 20, end++; break;
  case 'g': case 'G': shift = 30, end++; break;
  case 't': case 'T': shift = 40, end++; break;
  default: break;
  }
  if (shift && *end == 'i') end++;
  if (*end == 'B' || *end == 'b') end++;
  if (*end || (shift && v > (UINT64_MAX >> shift))) return false;
  *out = (uint64_t)v << shift;
  return true;
}

void rt_cache_init(RtCache *c, const char *opt_dir, int opt_disable) {
  memset(c, 0, sizeof *c);
  /* The folder is resolved even when the cache is off, so `tilescale cache clear` can
   * still empty it. */
  const char *env_dir = getenv("TILESCALE_CACHE_DIR");
  if (opt_dir && *opt_dir) {
    c->dir = ts_strdup(opt_dir);
  } else if (env_dir && *env_dir) {
    c->dir = ts_strdup(env_dir);
  } else {
    const char *home = getenv("HOME");
    if (home && *home) { /* else nowhere sensible to write: run without a cache */
      /* one allocation: an out-of-memory exit between two would lose the first */
      size_t n = strlen(home) + sizeof "/.cache/tilescale";
      char *dir = ts_malloc(n);
      snprintf(dir, n, "%s/.cache/tilescale", home);
      c->dir = dir;
    }
  }
  c->max_bytes = RT_CACHE_DEFAULT_MAX_BYTES;
  const char *max = getenv("TILESCALE_CACHE_MAX_BYTES");
  if (max && *max && !rt_cache_parse_size(max, &c->max_bytes)) {
    c->max_bytes = RT_CACHE_DEFAULT_MAX_BYTES;
    fprintf(stderr,
            "tilescale: warning: TILESCALE_CACHE_MAX_BYTES='%s' is not a size (e.g. 4G, 512M, 1000000; "
            "0 = no limit); using 4G\n",
            max);
  }
  bool off = opt_disable > 0 || (opt_disable == 0 && ts_env_flag("TILESCALE_DISABLE_CACHE", 0));
  c->enabled = c->dir && !off;
}

void rt_cache_fini(RtCache *c) {
  ts_free(c->dir);
  memset(c, 0, sizeof *c);
}

/* Each field is prefixed by its length so that no two different inputs concatenate
 * to the same byte string. */
static void key_field(StrBuf *sb, const char *tag, const void *data, size_t n) {
  sb_printf(sb, "%s:%zu:", tag, n);
  sb_appendn(sb, data, n);
  sb_putc(sb, '\n');
}

void rt_cache_key(const RtJitInput *in, char key[65]) {
  StrBuf sb = {0};
  key_field(&sb, "version", TS_VERSION_STRING, strlen(TS_VERSION_STRING));
  StrBuf opts = {0};
  rt_jit_options_text(in, &opts);
  key_field(&sb, "options", sb_str(&opts), opts.len);
  sb_free(&opts);
  key_field(&sb, "source", in->source, strlen(in->source));
  for (int i = 0; i < in->nheaders; i++) {
    key_field(&sb, "header", in->headers[i].name, strlen(in->headers[i].name));
    key_field(&sb, "contents", in->headers[i].contents, in->headers[i].size);
  }
  ts_sha256_hex(sb.data, sb.len, key);
  sb_free(&sb);
}

bool rt_cache_path(const RtCache *c, const char *key, char *buf, size_t n) {
  if (!c->enabled || !c->dir) return false;
  return (size_t)snprintf(buf, n, "%s/%s" ENTRY_SUFFIX, c->dir, key) < n;
}

static void payload_sha(const RtJitOutput *o, uint8_t out[32]) {
  size_t ptx_len = o->ptx ? strlen(o->ptx) : 0;
  size_t n = o->cubin_size + ptx_len;
  uint8_t *buf = ts_malloc(n ? n : 1);
  memcpy(buf, o->cubin, o->cubin_size);
  if (ptx_len) memcpy(buf + o->cubin_size, o->ptx, ptx_len);
  ts_sha256(buf, n, out);
  ts_free(buf);
}

static void why_set(StrBuf *why, const char *msg, const char *path) {
  if (why) sb_printf(why, "%s: %s", path, msg);
}

/* Reads and checks the payload of an open entry of `size` bytes.  The header's sizes
 * must add up to the file's size before anything is allocated, so a corrupt header can
 * never make us allocate or read more than the file holds. */
static RtCacheLookup read_entry(int fd, uint64_t size, const char *path, RtJitOutput *out, StrBuf *why) {
  EntryHeader h;
  if (size < sizeof h || !ts_read_exact(fd, &h, sizeof h)) {
    why_set(why, "truncated entry (ignored, will be rebuilt)", path);
    return RT_CACHE_REJECTED;
  }
  char version[16] = {0};
  strncpy(version, TS_VERSION_STRING, sizeof version - 1);
  if (memcmp(h.magic, ENTRY_MAGIC, 8) != 0 || memcmp(h.version, version, sizeof version) != 0) {
    why_set(why, "not an entry of this library version (ignored, will be rebuilt)", path);
    return RT_CACHE_REJECTED;
  }
  if (h.cubin_size == 0 || h.cubin_size > size || h.ptx_size > size ||
      sizeof h + h.cubin_size + h.ptx_size != size) {
    why_set(why, "truncated or oversized entry (ignored, will be rebuilt)", path);
    return RT_CACHE_REJECTED;
  }
  out->cubin_size = (size_t)h.cubin_size;
  out->cubin = ts_malloc(out->cubin_size);
  if (h.ptx_size) out->ptx = ts_malloc((size_t)h.ptx_size + 1);
  if (!ts_read_exact(fd, out->cubin, out->cubin_size) ||
      (h.ptx_size && !ts_read_exact(fd, out->ptx, (size_t)h.ptx_size))) {
    why_set(why, "entry changed while being read (ignored, will be rebuilt)", path);
    return RT_CACHE_REJECTED;
  }
  if (h.ptx_size) {
    out->ptx[h.ptx_size] = 0;
    if (strlen(out->ptx) != h.ptx_size) {
      why_set(why, "corrupt PTX text (ignored, will be rebuilt)", path);
      return RT_CACHE_REJECTED;
    }
  }
  uint8_t sha[32];
  payload_sha(out, sha);
  if (memcmp(sha, h.sha, 32) != 0) {
    why_set(why, "checksum mismatch (ignored, will be rebuilt)", path);
    return RT_CACHE_REJECTED;
  }
  return RT_CACHE_HIT;
}

RtCacheLookup rt_cache_load(const RtCache *c, const char *key, RtJitOutput *out, StrBuf *why) {
  memset(out, 0, sizeof *out);
  char path[4096];
  if (!rt_cache_path(c, key, path, sizeof path)) return RT_CACHE_MISS;
  uint64_t size = 0;
  StrBuf reason = {0};
  int fd = ts_open_regular(path, RT_CACHE_ENTRY_MAX, TS_FILE_NOFOLLOW, &size, &reason);
  if (fd < 0) {
    int err = errno;
    RtCacheLookup r = err == ENOENT ? RT_CACHE_MISS : err == EFBIG ? RT_CACHE_REJECTED : RT_CACHE_UNREADABLE;
    why_set(why, err == ENOENT ? "not cached" : sb_str(&reason), path);
    sb_free(&reason);
    return r;
  }
  RtCacheLookup r = read_entry(fd, size, path, out, why);
  /* Using an entry makes it recently used: the mtime is what trimming sorts by (atime is
   * unreliable under noatime/relatime).  Fails harmlessly on another user's entry. */
  if (r == RT_CACHE_HIT) futimens(fd, NULL);
  close(fd);
  if (r != RT_CACHE_HIT) rt_jit_output_free(out);
  return r;
}

/* mkdir -p: every missing level is created; a concurrent creator is fine (EEXIST).
 * Mode 0777 so that the umask alone decides who may share the folder. */
static bool make_dirs(const char *dir) {
  char buf[4096];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char saved = buf[i];
    buf[i] = 0;
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return false;
    buf[i] = saved;
  }
  struct stat st;
  return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Creates a unique temp file ".<key>.<pid>.<n>.tmp" next to the entry.  mkstemp would
 * force mode 0600, and an entry that only its writer can read is a silent miss for
 * everyone else sharing the folder; open(O_EXCL, 0666) lets the umask decide. */
static int create_temp(const char *dir, const char *key, char *tmp, size_t n) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  unsigned long salt = (unsigned long)ts.tv_nsec ^ ((unsigned long)ts.tv_sec << 20);
  for (int attempt = 0; attempt < 64; attempt++) {
    snprintf(tmp, n, "%s/.%s.%ld.%lx.tmp", dir, key, (long)getpid(), salt + (unsigned long)attempt * 7919u);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

static bool write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

bool rt_cache_store(const RtCache *c, const char *key, const RtJitOutput *out, StrBuf *why) {
  char path[4096], tmp[4096 + 64];
  if (!rt_cache_path(c, key, path, sizeof path) || !out->cubin || !out->cubin_size) return false;
  EntryHeader h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, ENTRY_MAGIC, 8);
  strncpy(h.version, TS_VERSION_STRING, sizeof h.version - 1);
  h.cubin_size = out->cubin_size;
  h.ptx_size = out->ptx ? strlen(out->ptx) : 0;
  uint64_t total = sizeof h + h.cubin_size + h.ptx_size;
  /* What the reader would refuse, or what the limit would evict at once, is not written. */
  if (total > RT_CACHE_ENTRY_MAX || (c->max_bytes && total > c->max_bytes)) {
    why_set(why, "entry larger than the cache allows (not cached)", path);
    return false;
  }
  if (!make_dirs(c->dir)) {
    why_set(why, "cannot create the cache directory", c->dir);
    return false;
  }
  payload_sha(out, h.sha);

  /* A unique temp name per writer; rename() then replaces the entry in one step, so a
   * reader sees either the old complete file or the new complete file. */
  int fd = create_temp(c->dir, key, tmp, sizeof tmp);
  if (fd < 0) {
    why_set(why, "cannot create a temporary file", c->dir);
    return false;
  }
  bool ok = write_all(fd, &h, sizeof h) && write_all(fd, out->cubin, out->cubin_size) &&
            (!h.ptx_size || write_all(fd, out->ptx, (size_t)h.ptx_size));
  ok = (close(fd) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    why_set(why, "cannot write the entry", path);
    unlink(tmp);
    return false;
  }
  rt_cache_trim(c, key);
  return true;
}

/* ---- folder scans: usage, trimming, clearing ------------------------------------------ */
static bool is_hex64(const char *s) {
  for (int i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return true;
}

/* "<64 hex>.cubin": only names we create are ever counted or removed, so a cache folder
 * pointed at $HOME by mistake loses nothing else. */
static bool is_entry_name(const char *name) {
  return strlen(name) == 64 + strlen(ENTRY_SUFFIX) && is_hex64(name) && !strcmp(name + 64, ENTRY_SUFFIX);
}

/* ".<64 hex>.<anything>.tmp": a writer's temp file (this version's and the mkstemp
 * ".<key>.XXXXXX" names of earlier versions). */
static bool is_temp_name(const char *name) {
  return name[0] == '.' && strlen(name) > 66 && is_hex64(name + 1) && name[65] == '.';
}

typedef struct EntryStat {
  char name[72];
  uint64_t bytes;
  struct timespec mtime;
} EntryStat;

/* Lists the entries of the folder (regular files with entry names) into a heap array;
 * temp files older than STALE_TEMP_SECONDS are removed on the way when `sweep`.
 * Returns false when the folder cannot be opened (errno set). */
static bool list_entries(const char *dir, bool sweep, EntryStat **out, size_t *count, uint64_t *bytes) {
  *out = NULL;
  *count = 0;
  *bytes = 0;
  DIR *d = opendir(dir);
  if (!d) return false;
  size_t cap = 0;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    bool entry = is_entry_name(e->d_name);
    if (!entry && !(sweep && is_temp_name(e->d_name))) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* just removed */
    if (!entry) {
      if (S_ISREG(st.st_mode) && now - st.st_mtime > STALE_TEMP_SECONDS) unlinkat(dirfd(d), e->d_name, 0);
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    if (*count == cap) {
      cap = cap ? cap * 2 : 64;
      *out = ts_realloc(*out, cap * sizeof **out);
    }
    EntryStat *s = &(*out)[(*count)++];
    memcpy(s->name, e->d_name, 64 + sizeof ENTRY_SUFFIX); /* an entry name: 70 chars + NUL */
    s->bytes = (uint64_t)st.st_size;
    s->mtime = st.st_mtim;
    *bytes += s->bytes;
  }
  closedir(d);
  return true;
}

static int by_mtime(const void *a, const void *b) {
  const struct timespec *x = &((const EntryStat *)a)->mtime, *y = &((const EntryStat *)b)->mtime;
  if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
  return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

void rt_cache_trim(const RtCache *c, const char *keep) {
  if (!c->dir || !c->max_bytes) return;
  /* One trimmer at a time, by a flock on the folder itself (no lock file to leave
   * behind): another process holding it is doing the same work, so this one goes on at
   * once (LOCK_NB) instead of waiting.  Without the lock (a file system without flock)
   * trimming still works: two trimmers at worst both unlink the same old entry, and a
   * reader that has it open keeps reading its data. */
  int lock = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    close(lock);
    return;
  }
  EntryStat *entries;
  size_t n;
  uint64_t total;
  if (list_entries(c->dir, true, &entries, &n, &total) && total > c->max_bytes) {
    qsort(entries, n, sizeof *entries, by_mtime);
    char keep_name[72] = "";
    if (keep) snprintf(keep_name, sizeof keep_name, "%s" ENTRY_SUFFIX, keep);
    char path[4096 + 80];
    for (size_t i = 0; i < n && total > c->max_bytes; i++) {
      if (!strcmp(entries[i].name, keep_name)) continue;
      snprintf(path, sizeof path, "%s/%s", c->dir, entries[i].name);
      if (unlink(path) == 0 || errno == ENOENT) total -= entries[i].bytes;
    }
  }
  ts_free(entries);
  if (lock >= 0) close(lock); /* releases the flock */
}

void rt_cache_usage(const RtCache *c, uint64_t *entries, uint64_t *bytes) {
  EntryStat *list = NULL;
  size_t n = 0;
  *bytes = 0;
  if (c->dir) list_entries(c->dir, false, &list, &n, bytes);
  *entries = n;
  ts_free(list);
}

bool rt_cache_clear(const RtCache *c, uint64_t *removed, StrBuf *why) {
  *removed = 0;
  if (!c->dir) {
    if (why) sb_append(why, "no cache folder ($TILESCALE_CACHE_DIR and $HOME are unset)");
    return false;
  }
  DIR *d = opendir(c->dir);
  if (!d) {
    if (errno == ENOENT) return true; /* never created: already empty */
    if (why) sb_printf(why, "%s: %s", c->dir, strerror(errno));
    return false;
  }
  uint64_t failed = 0;
  int first_err = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    bool entry = is_entry_name(e->d_name);
    if (!entry && !is_temp_name(e->d_name)) continue;
    /* Names are ours, but a directory under one is not: unlinkat refuses it (EISDIR). */
    if (unlinkat(dirfd(d), e->d_name, 0) == 0) {
      *removed += entry;
    } else if (errno != ENOENT) {
      if (!failed++) first_err = errno;
    }
  }
  closedir(d);
  if (failed && why)
    sb_printf(why, "%s: %llu files could not be removed (%s)", c->dir, (unsigned long long)failed,
              strerror(first_err));
  return failed == 0;
}
