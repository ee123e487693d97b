/* file.c — what the library reads from the host system: files and environment switches.
 *
 * Every read goes through ts_open_regular, which opens first and then asks the descriptor
 * (fstat) what it is, so the answer is about the file actually read, not about a path that
 * may change in between.  Only regular files are read, and only up to a cap the caller
 * chooses: reading /dev/zero, a FIFO with no writer or a 2 GB cache entry would otherwise
 * grow memory without bound or block forever.  O_NONBLOCK makes open itself return at
 * once for a FIFO (a blocking open waits for a writer); the fstat check then refuses it. */
#include "base.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

const char *ts_format_bytes(uint64_t n, char *buf, size_t cap) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  if (n < 1024) {
    snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
    return buf;
  }
  double v = (double)n;
  int u = 0;
  while (v >= 1024 && u < TS_ARRAY_LEN(units) - 1) v /= 1024, u++;
  snprintf(buf, cap, "%.1f %s", v, units[u]);
  return buf;
}

/* What a non-regular file is, in the words of the error message. */
static const char *file_kind(mode_t m) {
  if (S_ISDIR(m)) return "is a directory";
  if (S_ISFIFO(m)) return "is a FIFO (named pipe)";
  if (S_ISCHR(m)) return "is a character device";
  if (S_ISBLK(m)) return "is a block device";
  if (S_ISSOCK(m)) return "is a socket";
  return "is not a regular file";
}

int ts_open_regular(const char *path, uint64_t max_bytes, int flags, uint64_t *size_out, StrBuf *why) {
  int oflags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | ((flags & TS_FILE_NOFOLLOW) ? O_NOFOLLOW : 0);
  int fd = open(path, oflags);
  if (fd < 0) {
    int err = errno;
    if (why)
      sb_append(why, err == ELOOP && (flags & TS_FILE_NOFOLLOW) ? "is a symbolic link" : strerror(err));
    errno = err;
    return -1;
  }
  struct stat st;
  int err = 0;
  char have[32], limit[32];
  if (fstat(fd, &st) != 0) {
    err = errno;
    if (why) sb_append(why, strerror(err));
  } else if (!S_ISREG(st.st_mode)) {
    err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    if (why) sb_append(why, file_kind(st.st_mode));
  } else if ((uint64_t)st.st_size > max_bytes) {
    err = EFBIG;
    if (why)
      sb_printf(why, "is %s, over the %s limit", ts_format_bytes((uint64_t)st.st_size, have, sizeof have),
                ts_format_bytes(max_bytes, limit, sizeof limit));
  }
  if (err) {
    close(fd);
    errno = err;
    return -1;
  }
  /* Back to blocking reads: O_NONBLOCK was only for open (it means nothing for a regular
   * file, but a later reader of this descriptor should not have to know that). */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (size_out) *size_out = (uint64_t)st.st_size;
  return fd;
}

bool ts_read_exact(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO; /* the file shrank under us */
      return false;
    }
    p += r;
    n -= (size_t)r;
  }
  return true;
}

char *ts_read_file_max(const char *path, uint64_t max_bytes, int flags, size_t *len_out, StrBuf *why) {
  uint64_t size = 0;
  int fd = ts_open_regular(path, max_bytes, flags, &size, why);
  if (fd < 0) return NULL;
  /* st_size is a hint, not a promise: /proc files say 0 and a file may grow while we read.
   * Read until EOF, but never past max_bytes. */
  size_t cap = (size_t)size + 1, len = 0;
  char *buf = ts_malloc(cap + 1);
  int err = 0;
  for (;;) {
    if (len == cap) {
      if (cap > max_bytes) {
        err = EFBIG;
        char limit[32];
        if (why)
          sb_printf(why, "grew past the %s limit while being read",
                    ts_format_bytes(max_bytes, limit, sizeof limit));
        break;
      }
      cap = cap * 2 < max_bytes + 1 ? cap * 2 : (size_t)max_bytes + 1;
      buf = ts_realloc(buf, cap + 1);
    }
    ssize_t r = read(fd, buf + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      err = errno;
      if (why) sb_append(why, strerror(err));
      break;
    }
    if (r == 0) break;
    len += (size_t)r;
  }
  close(fd);
  if (err) {
    ts_free(buf);
    errno = err;
    return NULL;
  }
  buf[len] = 0;
  if (len_out) *len_out = len;
  return buf;
}

char *ts_read_file(const char *path, size_t *len_out) {
  return ts_read_file_max(path, TS_READ_DEFAULT_MAX, 0, len_out, NULL);
}

/* ---- environment switches ------------------------------------------------------------ */
int ts_env_flag(const char *name, int dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  static const char *const on[] = {"1", "true", "yes", "on"};
  static const char *const off[] = {"0", "false", "no", "off"};
  /* Surrounding blanks are a common accident of shell quoting, not a different value. */
  char word[16];
  size_t n = 0;
  while (isspace((unsigned char)*v)) v++;
  while (*v && n + 1 < sizeof word) word[n++] = *v++;
  while (n > 0 && isspace((unsigned char)word[n - 1])) n--;
  word[n] = 0;
  if (n == 0 && !*v) return dflt;
  if (!*v) {
    for (int i = 0; i < TS_ARRAY_LEN(on); i++)
      if (!strcasecmp(word, on[i])) return 1;
    for (int i = 0; i < TS_ARRAY_LEN(off); i++)
      if (!strcasecmp(word, off[i])) return 0;
  }
  fprintf(stderr,
          "tilescale: warning: %s='%s' is not a switch value (1/true/yes/on or 0/false/no/off); "
          "treating it as %s\n",
          name, getenv(name), dflt ? "on" : "off");
  return dflt;
}
