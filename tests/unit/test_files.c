/* test_files.c — unit tests of the host inputs in src/base/file.c: ts_open_regular and
 * ts_read_file_max refuse what is not a regular file (directory, FIFO, device, link when
 * asked) and what is over the cap, at once and with a message saying what the path is;
 * ts_env_flag reads switches the way users write them and warns on anything else. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../src/base/base.h"
#include "test.h"

static char *temp_dir(char *buf, size_t n) {
  const char *tmp = getenv("TMPDIR");
  snprintf(buf, n, "%s/ts-files-test-XXXXXX", (tmp && *tmp) ? tmp : "/tmp");
  return mkdtemp(buf);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

/* The reason for refusing `path`, and errno, from ts_read_file_max. */
static const char *refusal(const char *path, uint64_t max, int flags, int *err, StrBuf *why) {
  sb_clear(why);
  char *data = ts_read_file_max(path, max, flags, NULL, why);
  *err = errno;
  ts_free(data);
  return data ? NULL : sb_str(why);
}

TEST(files_regular_read_whole) {
  char dir[256], p[512];
  REQUIRE(temp_dir(dir, sizeof dir));
  snprintf(p, sizeof p, "%s/a.py", dir);
  write_text(p, "x = 1\n");
  size_t len = 0;
  StrBuf why = {0};
  char *text = ts_read_file_max(p, 1 << 20, 0, &len, &why);
  CHECK(text && len == 6 && !strcmp(text, "x = 1\n"));
  ts_free(text);
  /* Exactly at the cap is fine; one byte over is not. */
  text = ts_read_file_max(p, 6, 0, &len, &why);
  CHECK(text && len == 6);
  ts_free(text);
  int err = 0;
  const char *r = refusal(p, 5, 0, &err, &why);
  CHECK(r && strstr(r, "is 6 bytes, over the 5 bytes limit") && err == EFBIG);
  /* /proc files report st_size 0: read to EOF all the same. */
  text = ts_read_file_max("/proc/self/status", 1 << 20, 0, &len, &why);
  CHECK(text && len > 0 && strstr(text, "Name:"));
  ts_free(text);
  sb_free(&why);
  unlink(p);
  rmdir(dir);
}

TEST(files_not_regular_refused_at_once) {
  char dir[256], fifo[512], link[512], big[512];
  REQUIRE(temp_dir(dir, sizeof dir));
  StrBuf why = {0};
  int err = 0;
  const char *r = refusal(dir, 1 << 20, 0, &err, &why);
  CHECK(r && !strcmp(r, "is a directory") && err == EISDIR);
  r = refusal("/dev/zero", 1 << 20, 0, &err, &why);
  CHECK(r && !strcmp(r, "is a character device") && err == EINVAL);
  /* A FIFO with no writer: a blocking open would wait forever. */
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  REQUIRE(mkfifo(fifo, 0600) == 0);
  time_t t0 = time(NULL);
  r = refusal(fifo, 1 << 20, 0, &err, &why);
  CHECK(r && !strcmp(r, "is a FIFO (named pipe)") && time(NULL) - t0 < 2);
  /* Links are followed unless the caller says not to (cache entries). */
  snprintf(link, sizeof link, "%s/link", dir);
  REQUIRE(symlink("/dev/zero", link) == 0);
  r = refusal(link, 1 << 20, 0, &err, &why);
  CHECK(r && !strcmp(r, "is a character device"));
  r = refusal(link, 1 << 20, TS_FILE_NOFOLLOW, &err, &why);
  CHECK(r && !strcmp(r, "is a symbolic link") && err == ELOOP);
  /* 3 GB (sparse): refused from fstat alone, nothing read. */
  snprintf(big, sizeof big, "%s/big", dir);
  int fd = open(big, O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, (off_t)3 << 30) == 0);
  close(fd);
  r = refusal(big, (uint64_t)16 << 20, 0, &err, &why);
  CHECK(r && !strcmp(r, "is 3.0 GiB, over the 16.0 MiB limit") && err == EFBIG);
  r = refusal("/nonexistent/x", 1 << 20, 0, &err, &why);
  CHECK(r && err == ENOENT && !strcmp(r, strerror(ENOENT)));
  sb_free(&why);
  unlink(fifo);
  unlink(link);
  unlink(big);
  rmdir(dir);
}

TEST(files_format_bytes) {
  char b[32];
  CHECK_STR(ts_format_bytes(0, b, sizeof b), "0 bytes");
  CHECK_STR(ts_format_bytes(1023, b, sizeof b), "1023 bytes");
  CHECK_STR(ts_format_bytes(1536, b, sizeof b), "1.5 KiB");
  CHECK_STR(ts_format_bytes((uint64_t)2 << 30, b, sizeof b), "2.0 GiB");
}

TEST(files_env_flag_values) {
  const char *name = "TS_TEST_ENV_FLAG";
  unsetenv(name);
  CHECK(ts_env_flag(name, 0) == 0 && ts_env_flag(name, 1) == 1);
  static const char *const on[] = {"1", "true", "TRUE", "yes", "On", " on "};
  static const char *const off[] = {"0", "false", "False", "no", "OFF", ""};
  for (int i = 0; i < TS_ARRAY_LEN(on); i++) {
    setenv(name, on[i], 1);
    CHECK(ts_env_flag(name, 0) == 1);
  }
  for (int i = 0; i < TS_ARRAY_LEN(off); i++) {
    setenv(name, off[i], 1);
    CHECK(ts_env_flag(name, 1) == (off[i][0] ? 0 : 1)); /* "" is unset: the default */
  }
  /* Anything else: the default (with a warning on stderr), never the opposite. */
  setenv(name, "maybe", 1);
  CHECK(ts_env_flag(name, 0) == 0 && ts_env_flag(name, 1) == 1);
  setenv(name, "truefalsetruefalse", 1);
  CHECK(ts_env_flag(name, 0) == 0);
  unsetenv(name);
}
