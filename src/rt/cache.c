/* cache.c — disk cache of cubins (see cache.h for the format and the guarantees). */
#include "cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENTRY_MAGIC "TSCUBIN1"

/* Fixed-size little header in front of the payload. */
typedef struct EntryHeader {
  char magic[8];
  char version[16];   /* TS_VERSION_STRING, NUL-padded */
  uint64_t cubin_size;
  uint64_t ptx_size;  /* without NUL; 0 = none */
  uint8_t sha[32];    /* sha256 of cubin || ptx */
} EntryHeader;

void rt_cache_init(RtCache *c, const char *opt_dir, int opt_disable) {
  memset(c, 0, sizeof *c);
  const char *env_off = getenv("TILESCALE_DISABLE_CACHE");
  if (opt_disable || (env_off && *env_off && strcmp(env_off, "0") != 0)) return;
  const char *env_dir = getenv("TILESCALE_CACHE_DIR");
  if (opt_dir && *opt_dir) {
    c->dir = ts_strdup(opt_dir);
  } else if (env_dir && *env_dir) {
    c->dir = ts_strdup(env_dir);
  } else {
    const char *home = getenv("HOME");
    if (!home || !*home) return; /* nowhere sensible to write: run without a cache */
    StrBuf sb = {0};
    sb_printf(&sb, "%s/.cache/tilescale", home);
    c->dir = ts_strdup(sb_str(&sb));
    sb_free(&sb);
  }
  c->enabled = true;
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
  return (size_t)snprintf(buf, n, "%s/%s.cubin", c->dir, key) < n;
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

bool rt_cache_load(const RtCache *c, const char *key, RtJitOutput *out, StrBuf *why) {
  memset(out, 0, sizeof *out);
  char path[4096];
  if (!rt_cache_path(c, key, path, sizeof path)) return false;
  size_t n = 0;
  char *data = ts_read_file(path, &n);
  if (!data) {
    why_set(why, errno == ENOENT ? "not cached" : strerror(errno), path);
    return false;
  }
  EntryHeader h;
  bool ok = false;
  if (n < sizeof h) {
    why_set(why, "truncated entry (ignored, will be rebuilt)", path);
    goto done;
  }
  memcpy(&h, data, sizeof h);
  char version[16] = {0};
  strncpy(version, TS_VERSION_STRING, sizeof version - 1);
  if (memcmp(h.magic, ENTRY_MAGIC, 8) != 0 || memcmp(h.version, version, sizeof version) != 0) {
    why_set(why, "not an entry of this library version (ignored, will be rebuilt)", path);
    goto done;
  }
  /* Sizes are checked against the file length before any copy, so a corrupt header
   * can never make us read past the buffer. */
  if (h.cubin_size == 0 || h.cubin_size > n || h.ptx_size > n ||
      sizeof h + h.cubin_size + h.ptx_size != n) {
    why_set(why, "truncated or oversized entry (ignored, will be rebuilt)", path);
    goto done;
  }
  out->cubin_size = (size_t)h.cubin_size;
  out->cubin = ts_malloc(out->cubin_size);
  memcpy(out->cubin, data + sizeof h, out->cubin_size);
  if (h.ptx_size) {
    out->ptx = ts_malloc((size_t)h.ptx_size + 1);
    memcpy(out->ptx, data + sizeof h + h.cubin_size, (size_t)h.ptx_size);
    out->ptx[h.ptx_size] = 0;
    if (strlen(out->ptx) != h.ptx_size) {
      why_set(why, "corrupt PTX text (ignored, will be rebuilt)", path);
      goto done;
    }
  }
  uint8_t sha[32];
  payload_sha(out, sha);
  if (memcmp(sha, h.sha, 32) != 0) {
    why_set(why, "checksum mismatch (ignored, will be rebuilt)", path);
    goto done;
  }
  ok = true;
done:
  if (!ok) rt_jit_output_free(out);
  ts_free(data);
  return ok;
}

/* mkdir -p: every missing level is created; a concurrent creator is fine (EEXIST). */
static bool make_dirs(const char *dir) {
  char buf[4096];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char saved = buf[i];
    buf[i] = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
    buf[i] = saved;
  }
  struct stat st;
  return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

bool rt_cache_store(const RtCache *c, const char *key, const RtJitOutput *out, StrBuf *why) {
  char path[4096], tmp[4096 + 32];
  if (!rt_cache_path(c, key, path, sizeof path) || !out->cubin || !out->cubin_size) return false;
  if (!make_dirs(c->dir)) {
    why_set(why, "cannot create the cache directory", c->dir);
    return false;
  }
  EntryHeader h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, ENTRY_MAGIC, 8);
  strncpy(h.version, TS_VERSION_STRING, sizeof h.version - 1);
  h.cubin_size = out->cubin_size;
  h.ptx_size = out->ptx ? strlen(out->ptx) : 0;
  payload_sha(out, h.sha);

  /* A unique temp name per writer; rename() then replaces the entry in one step, so a
   * reader sees either the old complete file or the new complete file. */
  snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", c->dir, key);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    why_set(why, "cannot create a temporary file", c->dir);
    return false;
  }
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    close(fd);
    unlink(tmp);
    return false;
  }
  bool ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(out->cubin, 1, out->cubin_size, f) == out->cubin_size &&
            (!h.ptx_size || fwrite(out->ptx, 1, (size_t)h.ptx_size, f) == h.ptx_size);
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    why_set(why, "cannot write the entry", path);
    unlink(tmp);
    return false;
  }
  return true;
}
