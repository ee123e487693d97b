/* test_rt.c — unit tests of the runtime (src/rt): disk cache (round trip, corrupt and
 * truncated entries, concurrent writers, TILESCALE_DISABLE_CACHE), NVRTC/nvcc
 * compilation of hand-written CUDA that includes the embedded device headers, launch
 * argument checking (which never touches the driver), and — when a GPU is present — a
 * real launch of a hand-written kernel through the same path compiled kernels take. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "../../src/rt/kernel.h"
#include "../../src/driver/driver.h"
#include "test.h"

/* ---- helpers --------------------------------------------------------------------------- */
static char *make_temp_dir(char *buf, size_t n) {
  const char *tmp = getenv("TMPDIR");
  snprintf(buf, n, "%s/ts-rt-test-XXXXXX", (tmp && *tmp) ? tmp : "/tmp");
  return mkdtemp(buf);
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

static void write_file_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

/* A payload that looks nothing like a constant: bytes depend on the seed. */
static RtJitOutput fake_binary(unsigned seed, size_t n) {
  RtJitOutput o = {0};
  o.cubin = ts_malloc(n);
  o.cubin_size = n;
  for (size_t i = 0; i < n; i++) ((unsigned char *)o.cubin)[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
  StrBuf sb = {0};
  sb_printf(&sb, "// ptx %u\n.version 9.0\n", seed);
  o.ptx = ts_strdup(sb_str(&sb));
  sb_free(&sb);
  return o;
}

static bool same_binary(const RtJitOutput *a, const RtJitOutput *b) {
  return a->cubin_size == b->cubin_size && !memcmp(a->cubin, b->cubin, a->cubin_size) &&
         ((!a->ptx && !b->ptx) || (a->ptx && b->ptx && !strcmp(a->ptx, b->ptx)));
}

static RtJitInput sample_input(const char *source, const char *arch) {
  RtJitInput in = {.source = source, .name = "t.cu", .compiler = TS_COMPILER_NVRTC,
                   .headers = ts_device_headers, .nheaders = ts_device_headers_count};
  drv_parse_arch(arch, &in.target);
  return in;
}

/* ---- targets ------------------------------------------------------------------------------ */
TEST(rt_parse_arch_forms) {
  TsTarget tg;
  char buf[16];
  CHECK(drv_parse_arch("sm_90a", &tg) && tg.sm == 90 && tg.arch_a);
  CHECK_STR(rt_target_arch(tg, buf, sizeof buf), "sm_90a");
  CHECK(drv_parse_arch("sm_80", &tg) && tg.sm == 80 && !tg.arch_a);
  CHECK(drv_parse_arch("100a", &tg) && tg.sm == 100 && tg.arch_a);
  CHECK(!drv_parse_arch("sm_9", &tg));
  CHECK(!drv_parse_arch("sm_90b", &tg));
  CHECK(!drv_parse_arch("compute_90", &tg));
  /* Numbers NVIDIA never defined are typos, refused whatever is emitted. */
  CHECK(!drv_parse_arch("sm_999", &tg));
  CHECK(!drv_parse_arch("sm_91", &tg));
  CHECK(!drv_parse_arch("sm_80a", &tg)); /* "a" variants start with Hopper */
  CHECK(drv_parse_arch("sm_120a", &tg) && tg.sm == 120 && tg.arch_a);
  StrBuf list = {0};
  drv_arch_list(&list);
  CHECK(strstr(sb_str(&list), "sm_80, sm_86") && strstr(sb_str(&list), "sm_90, sm_90a"));
  sb_free(&list);
}

/* ---- cache ------------------------------------------------------------------------------- */
TEST(rt_cache_key_depends_on_inputs) {
  char k1[65], k2[65], k3[65], k4[65];
  RtJitInput a = sample_input("extern \"C\" __global__ void f() {}", "sm_90a");
  rt_cache_key(&a, k1);
  rt_cache_key(&a, k2);
  CHECK_STR(k1, k2);
  RtJitInput b = sample_input("extern \"C\" __global__ void f() {}", "sm_80");
  rt_cache_key(&b, k3);
  CHECK(strcmp(k1, k3) != 0);
  a.fast_math = true;
  rt_cache_key(&a, k4);
  CHECK(strcmp(k1, k4) != 0);
  a.fast_math = false;
  a.compiler = TS_COMPILER_NVCC;
  rt_cache_key(&a, k4);
  CHECK(strcmp(k1, k4) != 0);
  CHECK(strlen(k1) == 64);
}

TEST(rt_cache_round_trip) {
  char dir[256];
  REQUIRE(make_temp_dir(dir, sizeof dir));
  char sub[512];
  snprintf(sub, sizeof sub, "%s/a/b", dir); /* missing levels are created */
  RtCache c;
  rt_cache_init(&c, sub, 0);
  REQUIRE(c.enabled);
  RtJitOutput in = fake_binary(7, 5000), out;
  const char *key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  CHECK(rt_cache_load(&c, key, &out, NULL) != RT_CACHE_HIT); /* miss */
  CHECK(rt_cache_store(&c, key, &in, NULL));
  CHECK(rt_cache_load(&c, key, &out, NULL) == RT_CACHE_HIT);
  CHECK(same_binary(&in, &out));
  rt_jit_output_free(&out);
  /* An entry without PTX (nvcc) round-trips too. */
  ts_free(in.ptx);
  in.ptx = NULL;
  CHECK(rt_cache_store(&c, key, &in, NULL));
  CHECK(rt_cache_load(&c, key, &out, NULL) == RT_CACHE_HIT);
  CHECK(same_binary(&in, &out) && out.ptx == NULL);
  rt_jit_output_free(&out);
  rt_jit_output_free(&in);
  rt_cache_fini(&c);
  char p[600];
  snprintf(p, sizeof p, "%s/a", dir);
  remove_dir(sub);
  rmdir(p);
  rmdir(dir);
}

TEST(rt_cache_corrupt_and_truncated_entries_rebuilt) {
  char dir[256];
  REQUIRE(make_temp_dir(dir, sizeof dir));
  RtCache c;
  rt_cache_init(&c, dir, 0);
  RtJitOutput in = fake_binary(3, 3000), out;
  const char *key = "feedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeed";
  char path[4096];
  REQUIRE(rt_cache_path(&c, key, path, sizeof path));
  REQUIRE(rt_cache_store(&c, key, &in, NULL));
  struct stat st;
  REQUIRE(stat(path, &st) == 0);

  /* Truncated (a writer killed half-way without rename safety, or a full disk). */
  REQUIRE(truncate(path, st.st_size - 100) == 0);
  StrBuf why = {0};
  CHECK(rt_cache_load(&c, key, &out, &why) != RT_CACHE_HIT);
  CHECK(strstr(sb_str(&why), "truncated") != NULL);
  CHECK(out.cubin == NULL);
  REQUIRE(truncate(path, 10) == 0); /* shorter than the header */
  CHECK(rt_cache_load(&c, key, &out, NULL) != RT_CACHE_HIT);

  /* Rebuilt: a store replaces it and the entry loads again. */
  REQUIRE(rt_cache_store(&c, key, &in, NULL));
  CHECK(rt_cache_load(&c, key, &out, NULL) == RT_CACHE_HIT && same_binary(&in, &out));
  rt_jit_output_free(&out);

  /* One flipped payload byte: same size, checksum catches it. */
  int fd = open(path, O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char b;
  REQUIRE(pread(fd, &b, 1, 200) == 1);
  b ^= 0x5a;
  REQUIRE(pwrite(fd, &b, 1, 200) == 1);
  close(fd);
  sb_clear(&why);
  CHECK(rt_cache_load(&c, key, &out, &why) != RT_CACHE_HIT);
  CHECK(strstr(sb_str(&why), "checksum") != NULL);

  /* Garbage of the right length: bad magic. */
  FILE *f = fopen(path, "wb");
  REQUIRE(f);
  for (int i = 0; i < 4000; i++) fputc(i & 0xff, f);
  fclose(f);
  CHECK(rt_cache_load(&c, key, &out, NULL) != RT_CACHE_HIT);
  REQUIRE(rt_cache_store(&c, key, &in, NULL));
  CHECK(rt_cache_load(&c, key, &out, NULL) == RT_CACHE_HIT && same_binary(&in, &out));
  rt_jit_output_free(&out);

  sb_free(&why);
  rt_jit_output_free(&in);
  rt_cache_fini(&c);
  remove_dir(dir);
}

TEST(rt_cache_concurrent_writers) {
  char dir[256];
  REQUIRE(make_temp_dir(dir, sizeof dir));
  const char *key = "c0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffee0000";
  enum { NPROC = 6, ROUNDS = 30 };
  RtJitOutput want = fake_binary(11, 200000);
  pid_t pids[NPROC];
  for (int p = 0; p < NPROC; p++) {
    pids[p] = fork();
    REQUIRE(pids[p] >= 0);
    if (pids[p] == 0) {
      /* Children write the same key over and over; every load they do must be whole. */
      RtCache c;
      rt_cache_init(&c, dir, 0);
      RtJitOutput mine = fake_binary(11, 200000), got;
      int bad = 0;
      for (int r = 0; r < ROUNDS; r++) {
        if (!rt_cache_store(&c, key, &mine, NULL)) bad++;
        if (rt_cache_load(&c, key, &got, NULL) == RT_CACHE_HIT) {
          if (!same_binary(&mine, &got)) bad++;
          rt_jit_output_free(&got);
        }
      }
      _exit(bad ? 1 : 0);
    }
  }
  /* The parent reads meanwhile: a load either misses or returns the complete entry. */
  RtCache c;
  rt_cache_init(&c, dir, 0);
  int torn = 0;
  for (int r = 0; r < 200; r++) {
    RtJitOutput got;
    if (rt_cache_load(&c, key, &got, NULL) == RT_CACHE_HIT) {
      torn += !same_binary(&want, &got);
      rt_jit_output_free(&got);
    }
  }
  for (int p = 0; p < NPROC; p++) {
    int st = 0;
    waitpid(pids[p], &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  CHECK(torn == 0);
  RtJitOutput got;
  CHECK(rt_cache_load(&c, key, &got, NULL) == RT_CACHE_HIT && same_binary(&want, &got));
  rt_jit_output_free(&got);
  CHECK(count_files(dir) == 1); /* no temp files left behind */
  rt_jit_output_free(&want);
  rt_cache_fini(&c);
  remove_dir(dir);
}

TEST(rt_cache_parse_size_forms) {
  uint64_t v = 0;
  CHECK(rt_cache_parse_size("0", &v) && v == 0);
  CHECK(rt_cache_parse_size("1000000", &v) && v == 1000000);
  CHECK(rt_cache_parse_size("4G", &v) && v == (uint64_t)4 << 30);
  CHECK(rt_cache_parse_size("512M", &v) && v == (uint64_t)512 << 20);
  CHECK(rt_cache_parse_size("64KiB", &v) && v == 64 << 10);
  CHECK(rt_cache_parse_size("2TB", &v) && v == (uint64_t)2 << 40);
  CHECK(!rt_cache_parse_size("", &v));
  CHECK(!rt_cache_parse_size("-1", &v));
  CHECK(!rt_cache_parse_size("lots", &v));
  CHECK(!rt_cache_parse_size("4 G", &v));
  CHECK(!rt_cache_parse_size("4X", &v));
  CHECK(!rt_cache_parse_size("99999999999999999999", &v));
  CHECK(!rt_cache_parse_size("20000000T", &v)); /* overflows 64 bits */
}

/* Entries are what the umask allows, not 0600: a team's shared cache must hit. */
TEST(rt_cache_modes_follow_umask) {
  char dir[256], sub[512];
  REQUIRE(make_temp_dir(dir, sizeof dir));
  snprintf(sub, sizeof sub, "%s/shared", dir);
  mode_t old = umask(002);
  RtCache c;
  rt_cache_init(&c, sub, 0);
  RtJitOutput in = fake_binary(5, 1000);
  const char *key = "5555555555555555555555555555555555555555555555555555555555555555";
  char path[4096];
  REQUIRE(rt_cache_path(&c, key, path, sizeof path));
  CHECK(rt_cache_store(&c, key, &in, NULL));
  umask(old);
  struct stat st;
  CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0775);
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0664);
  rt_jit_output_free(&in);
  rt_cache_fini(&c);
  remove_dir(sub);
  rmdir(dir);
}

/* Things under an entry's name that are not entries: refused at once, never read. */
TEST(rt_cache_hostile_entries) {
  char dir[256];
  REQUIRE(make_temp_dir(dir, sizeof dir));
  RtCache c;
  rt_cache_init(&c, dir, 0);
  const char *key = "abcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcd";
  char path[4096];
  REQUIRE(rt_cache_path(&c, key, path, sizeof path));
  RtJitOutput out;
  StrBuf why = {0};
  REQUIRE(symlink("/dev/zero", path) == 0);
  CHECK(rt_cache_load(&c, key, &out, &why) == RT_CACHE_UNREADABLE && strstr(sb_str(&why), "symbolic link"));
  unlink(path);
  REQUIRE(mkfifo(path, 0600) == 0);
  sb_clear(&why);
  CHECK(rt_cache_load(&c, key, &out, &why) == RT_CACHE_UNREADABLE && strstr(sb_str(&why), "FIFO"));
  unlink(path);
  int fd = open(path, O_WRONLY | O_CREAT, 0600); /* 2 GB, sparse */
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, (off_t)2 << 30) == 0);
  close(fd);
  sb_clear(&why);
  CHECK(rt_cache_load(&c, key, &out, &why) == RT_CACHE_REJECTED && strstr(sb_str(&why), "over the 64.0 MiB"));
  CHECK(out.cubin == NULL);
  /* A header claiming more than the file holds: rejected before any allocation. */
  RtJitOutput in = fake_binary(9, 4000);
  REQUIRE(rt_cache_store(&c, key, &in, NULL));
  fd = open(path, O_RDWR);
  REQUIRE(fd >= 0);
  uint64_t huge = (uint64_t)1 << 40;
  REQUIRE(pwrite(fd, &huge, sizeof huge, 24) == (ssize_t)sizeof huge); /* cubin_size */
  close(fd);
  sb_clear(&why);
  CHECK(rt_cache_load(&c, key, &out, &why) == RT_CACHE_REJECTED &&
        strstr(sb_str(&why), "truncated or oversized"));
  /* An entry over the cap is never written either. */
  c.max_bytes = 1000;
  sb_clear(&why);
  CHECK(!rt_cache_store(&c, key, &in, &why) && strstr(sb_str(&why), "larger than the cache allows"));
  sb_free(&why);
  rt_jit_output_free(&in);
  rt_cache_fini(&c);
  remove_dir(dir);
}

static void set_mtime(const char *path, time_t t) {
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  utimensat(AT_FDCWD, path, ts, 0);
}

/* Trimming removes the least recently used entries (oldest mtime; a hit refreshes it). */
TEST(rt_cache_trim_least_recently_used) {
  char dir[256];
  REQUIRE(make_temp_dir(dir, sizeof dir));
  RtCache c;
  rt_cache_init(&c, dir, 0);
  c.max_bytes = 0; /* fill first, trim below */
  char keys[5][65], path[4096];
  RtJitOutput in = fake_binary(2, 1000), out;
  time_t now = time(NULL);
  for (int i = 0; i < 5; i++) {
    snprintf(keys[i], sizeof keys[i], "%064d", i);
    REQUIRE(rt_cache_store(&c, keys[i], &in, NULL));
    rt_cache_path(&c, keys[i], path, sizeof path);
    set_mtime(path, now - 1000 + i * 100); /* key 0 oldest */
  }
  struct stat st;
  rt_cache_path(&c, keys[0], path, sizeof path);
  REQUIRE(stat(path, &st) == 0);
  uint64_t one = (uint64_t)st.st_size, entries, bytes;
  /* Key 0 is used now: it becomes the newest. */
  CHECK(rt_cache_load(&c, keys[0], &out, NULL) == RT_CACHE_HIT);
  rt_jit_output_free(&out);
  c.max_bytes = 3 * one;
  rt_cache_trim(&c, NULL);
  rt_cache_usage(&c, &entries, &bytes);
  CHECK(entries == 3 && bytes == 3 * one);
  bool left[5];
  for (int i = 0; i < 5; i++) {
    rt_cache_path(&c, keys[i], path, sizeof path);
    left[i] = access(path, F_OK) == 0;
  }
  CHECK(left[0] && !left[1] && !left[2] && left[3] && left[4]);
  /* `keep` (the entry just written) survives even when it is the oldest. */
  rt_cache_path(&c, keys[3], path, sizeof path);
  set_mtime(path, now - 5000);
  c.max_bytes = one;
  rt_cache_trim(&c, keys[3]);
  rt_cache_usage(&c, &entries, &bytes);
  CHECK(entries == 1 && access(path, F_OK) == 0);
  /* Stale temp files of dead writers are swept; fresh ones (a writer at work) are not. */
  char stale[4200], fresh[4200];
  snprintf(stale, sizeof stale, "%s/.%s.123.1.tmp", dir, keys[1]);
  snprintf(fresh, sizeof fresh, "%s/.%s.124.1.tmp", dir, keys[2]);
  write_file_text(stale, "x");
  write_file_text(fresh, "x");
  set_mtime(stale, now - 7200);
  rt_cache_trim(&c, NULL);
  CHECK(access(stale, F_OK) != 0 && access(fresh, F_OK) == 0);
  unlink(fresh);
  rt_jit_output_free(&in);
  rt_cache_fini(&c);
  remove_dir(dir);
}

/* clear removes entries and temp files only: a cache folder set to $HOME by mistake must
 * lose nothing else. */
TEST(rt_cache_clear_only_entries) {
  char dir[256], other[512], sub[4200];
  REQUIRE(make_temp_dir(dir, sizeof dir));
  RtCache c;
  rt_cache_init(&c, dir, 0);
  RtJitOutput in = fake_binary(4, 500);
  for (int i = 0; i < 3; i++) {
    char key[65];
    snprintf(key, sizeof key, "%064x", i + 10);
    REQUIRE(rt_cache_store(&c, key, &in, NULL));
  }
  snprintf(other, sizeof other, "%s/notes.cubin", dir); /* not a <sha256>.cubin name */
  write_file_text(other, "mine");
  snprintf(sub, sizeof sub, "%s/%064x.cubin", dir, 99); /* an entry name, but a folder */
  REQUIRE(mkdir(sub, 0700) == 0);
  uint64_t removed = 0;
  StrBuf why = {0};
  CHECK(!rt_cache_clear(&c, &removed, &why) && removed == 3); /* the folder cannot be unlinked */
  CHECK(strstr(sb_str(&why), "1 files could not be removed"));
  CHECK(access(other, F_OK) == 0 && count_files(dir) == 2);
  rmdir(sub);
  CHECK(rt_cache_clear(&c, &removed, NULL) && removed == 0);
  unlink(other);
  rt_cache_fini(&c);
  rmdir(dir);
  /* A folder that was never created is an empty cache. */
  rt_cache_init(&c, dir, 0);
  CHECK(rt_cache_clear(&c, &removed, NULL) && removed == 0);
  rt_cache_fini(&c);
  rt_jit_output_free(&in);
  sb_free(&why);
}

/* Many processes storing different keys under a small limit: the folder ends within the
 * limit, every load is whole, no temp file is left. */
TEST(rt_cache_concurrent_trim) {
  char dir[256];
  REQUIRE(make_temp_dir(dir, sizeof dir));
  enum { NPROC = 4, KEYS = 40 };
  RtJitOutput want = fake_binary(21, 3000);
  uint64_t limit = 0;
  pid_t pids[NPROC];
  for (int p = 0; p < NPROC; p++) {
    pids[p] = fork();
    REQUIRE(pids[p] >= 0);
    if (pids[p] == 0) {
      RtCache c;
      rt_cache_init(&c, dir, 0);
      c.max_bytes = 10 * (want.cubin_size + 200);
      RtJitOutput got;
      int bad = 0;
      for (int k = 0; k < KEYS; k++) {
        char key[65];
        snprintf(key, sizeof key, "%064x", (unsigned)(p * 1000 + k));
        if (!rt_cache_store(&c, key, &want, NULL)) bad++;
        if (rt_cache_load(&c, key, &got, NULL) == RT_CACHE_HIT) {
          bad += !same_binary(&want, &got);
          rt_jit_output_free(&got);
        }
      }
      _exit(bad ? 1 : 0);
    }
  }
  for (int p = 0; p < NPROC; p++) {
    int st = 0;
    waitpid(pids[p], &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  RtCache c;
  rt_cache_init(&c, dir, 0);
  limit = 10 * (want.cubin_size + 200);
  c.max_bytes = limit;
  rt_cache_trim(&c, NULL); /* a trim skipped under another's lock is done now */
  uint64_t entries, bytes;
  rt_cache_usage(&c, &entries, &bytes);
  CHECK(bytes <= limit && entries > 0 && count_files(dir) == (int)entries);
  rt_jit_output_free(&want);
  rt_cache_fini(&c);
  remove_dir(dir);
}

TEST(rt_cache_env_disable_and_dir) {
  char *old_dis = getenv("TILESCALE_DISABLE_CACHE") ? ts_strdup(getenv("TILESCALE_DISABLE_CACHE")) : NULL;
  char *old_dir = getenv("TILESCALE_CACHE_DIR") ? ts_strdup(getenv("TILESCALE_CACHE_DIR")) : NULL;
  RtCache c;
  setenv("TILESCALE_DISABLE_CACHE", "1", 1);
  rt_cache_init(&c, "/tmp/whatever", 0);
  CHECK(!c.enabled);
  char path[256];
  CHECK(!rt_cache_path(&c, "ab", path, sizeof path));
  RtJitOutput o = fake_binary(1, 64);
  CHECK(!rt_cache_store(&c, "ab", &o, NULL));
  rt_cache_fini(&c);
  ts_context *ctx = NULL;
  ts_context_options opt = {.size = sizeof opt};
  REQUIRE(ts_context_create(&opt, &ctx) == TS_OK);
  CHECK(!ctx->cache.enabled);
  ts_context_destroy(ctx);
  setenv("TILESCALE_DISABLE_CACHE", "0", 1);
  setenv("TILESCALE_CACHE_DIR", "/tmp/ts-env-dir", 1);
  rt_cache_init(&c, NULL, 0);
  CHECK(c.enabled && c.dir && !strcmp(c.dir, "/tmp/ts-env-dir"));
  rt_cache_fini(&c);
  rt_cache_init(&c, "/tmp/opt-dir", 0); /* the option wins over the environment */
  CHECK(c.enabled && !strcmp(c.dir, "/tmp/opt-dir"));
  rt_cache_fini(&c);
  rt_cache_init(&c, "/tmp/opt-dir", 1);
  CHECK(!c.enabled);
  CHECK(c.dir && !strcmp(c.dir, "/tmp/opt-dir")); /* known, for `tilescale cache clear` */
  rt_cache_fini(&c);
  /* A switch, not "set and not 0": false/no/off/empty keep the cache on. */
  static const char *const keep_on[] = {"false", "no", "off", "", "FALSE", "bogus"};
  for (int i = 0; i < TS_ARRAY_LEN(keep_on); i++) {
    setenv("TILESCALE_DISABLE_CACHE", keep_on[i], 1);
    rt_cache_init(&c, "/tmp/opt-dir", 0);
    CHECK(c.enabled);
    rt_cache_fini(&c);
  }
  static const char *const turn_off[] = {"1", "true", "yes", "on", "Yes"};
  for (int i = 0; i < TS_ARRAY_LEN(turn_off); i++) {
    setenv("TILESCALE_DISABLE_CACHE", turn_off[i], 1);
    rt_cache_init(&c, "/tmp/opt-dir", 0);
    CHECK(!c.enabled);
    rt_cache_fini(&c);
  }
  char *old_max = getenv("TILESCALE_CACHE_MAX_BYTES") ? ts_strdup(getenv("TILESCALE_CACHE_MAX_BYTES")) : NULL;
  setenv("TILESCALE_CACHE_MAX_BYTES", "512M", 1);
  rt_cache_init(&c, "/tmp/opt-dir", 0);
  CHECK(c.max_bytes == (uint64_t)512 << 20);
  rt_cache_fini(&c);
  setenv("TILESCALE_CACHE_MAX_BYTES", "lots", 1); /* warns, keeps the default */
  rt_cache_init(&c, "/tmp/opt-dir", 0);
  CHECK(c.max_bytes == RT_CACHE_DEFAULT_MAX_BYTES);
  rt_cache_fini(&c);
  if (old_max) setenv("TILESCALE_CACHE_MAX_BYTES", old_max, 1); else unsetenv("TILESCALE_CACHE_MAX_BYTES");
  ts_free(old_max);
  rt_jit_output_free(&o);
  if (old_dis) setenv("TILESCALE_DISABLE_CACHE", old_dis, 1); else unsetenv("TILESCALE_DISABLE_CACHE");
  if (old_dir) setenv("TILESCALE_CACHE_DIR", old_dir, 1); else unsetenv("TILESCALE_CACHE_DIR");
  ts_free(old_dis);
  ts_free(old_dir);
}

/* ---- JIT -------------------------------------------------------------------------------- */
static const char *const SCALE_SRC =
    "#include <tilescale/common.cuh>\n"
    "extern \"C\" __global__ void scale_k(float *__restrict__ x, float s, int64_t n) {\n"
    "  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = x[i] * s + (float)(i % 3);\n"
    "}\n";

static bool has_common_header(void) {
  for (int i = 0; i < ts_device_headers_count; i++)
    if (!strcmp(ts_device_headers[i].name, "tilescale/common.cuh")) return true;
  return false;
}

TEST(rt_jit_nvrtc_sm80_sm90a) {
  RtNvrtc nv = {0};
  StrBuf why = {0};
  if (!rt_nvrtc_open(&nv, &why)) {
    printf("  skip rt_jit_nvrtc_sm80_sm90a: %s\n", sb_str(&why));
    sb_free(&why);
    return;
  }
  if (!has_common_header()) {
    printf("  skip rt_jit_nvrtc_sm80_sm90a: tilescale/common.cuh is not embedded\n");
    rt_nvrtc_close(&nv);
    return;
  }
  const char *archs[] = {"sm_80", "sm_90a"};
  for (int a = 0; a < 2; a++) {
    RtJitInput in = sample_input(SCALE_SRC, archs[a]);
    RtJitOutput out;
    StrBuf err = {0};
    ts_status st = rt_jit_compile(&nv, &in, &out, &err);
    if (st != TS_OK) fprintf(stderr, "%s\n", sb_str(&err));
    CHECK(st == TS_OK);
    CHECK(out.cubin_size > 4 && !memcmp(out.cubin, "\177ELF", 4));
    CHECK(out.ptx && strstr(out.ptx, archs[a]) && strstr(out.ptx, "scale_k"));
    rt_jit_output_free(&out);
    sb_free(&err);
  }
  /* A compile error comes back as TS_ERR_JIT with NVRTC's log. */
  RtJitInput bad = sample_input("extern \"C\" __global__ void k() { undeclared_thing = 1; }\n", "sm_90a");
  RtJitOutput out;
  StrBuf err = {0};
  CHECK(rt_jit_compile(&nv, &bad, &out, &err) == TS_ERR_JIT);
  CHECK(strstr(sb_str(&err), "undeclared_thing") != NULL);
  CHECK(out.cubin == NULL);
  sb_free(&err);
  rt_nvrtc_close(&nv);
  sb_free(&why);
}

TEST(rt_jit_nvcc) {
  if (!has_common_header()) return;
  char nvcc[4096];
  const char *home = getenv("CUDA_HOME");
  snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
  if (access(nvcc, X_OK) != 0) {
    printf("  skip rt_jit_nvcc: %s not found\n", nvcc);
    return;
  }
  RtNvrtc nv = {0};
  RtJitInput in = sample_input(SCALE_SRC, "sm_90a");
  in.compiler = TS_COMPILER_NVCC;
  RtJitOutput out;
  StrBuf err = {0};
  ts_status st = rt_jit_compile(&nv, &in, &out, &err);
  if (st != TS_OK) fprintf(stderr, "%s\n", sb_str(&err));
  CHECK(st == TS_OK);
  CHECK(out.cubin_size > 4 && !memcmp(out.cubin, "\177ELF", 4));
  CHECK(out.ptx == NULL);
  rt_jit_output_free(&out);
  sb_free(&err);
}

/* ---- argument checking ------------------------------------------------------------------ */
/* kernel(A: f16[128, 64], B: f32[M, 64], C: f32[M], n: int32, s: float16), dyn M */
static ts_kernel *sample_kernel(ts_context *ctx) {
  RtParam p[5];
  memset(p, 0, sizeof p);
  for (int i = 0; i < 5; i++)
    for (int d = 0; d < RT_MAX_DIMS; d++) p[i].dyn[d] = -1;
  p[0] = (RtParam){.name = "A", .kind = TS_ARG_TENSOR, .dtype = TS_DTYPE_FLOAT16, .ndim = 2, .shape = {128, 64},
                   .dyn = {-1, -1}};
  p[1] = (RtParam){.name = "B", .kind = TS_ARG_TENSOR, .dtype = TS_DTYPE_FLOAT32, .ndim = 2, .shape = {-1, 64},
                   .dyn = {0, -1}};
  p[2] = (RtParam){.name = "C", .kind = TS_ARG_TENSOR, .dtype = TS_DTYPE_FLOAT32, .ndim = 1, .shape = {-1},
                   .dyn = {0}, .is_output = 1};
  p[3] = (RtParam){.name = "n", .kind = TS_ARG_SCALAR, .dtype = TS_DTYPE_INT32};
  p[4] = (RtParam){.name = "s", .kind = TS_ARG_SCALAR, .dtype = TS_DTYPE_FLOAT16};
  const char *dyn[] = {"M"};
  RtLaunch l = {.name = "sample_kernel", .grid_static = {4, 1, 1}, .block = {128, 1, 1}};
  return rt_kernel_new_for_test(ctx, p, 5, dyn, 1, &l, 1);
}

typedef struct SampleArgs {
  ts_arg a[5];
  int64_t sa[2], sb[2], sc[1];
} SampleArgs;

static void sample_args(SampleArgs *s, int64_t m) {
  memset(s, 0, sizeof *s);
  s->sa[0] = 128, s->sa[1] = 64;
  s->sb[0] = m, s->sb[1] = 64;
  s->sc[0] = m;
  /* Plausible (never dereferenced) 256-byte-aligned device addresses. */
  s->a[0] = (ts_arg){.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000000000, TS_DTYPE_FLOAT16, 2, s->sa, NULL, 0}};
  s->a[1] = (ts_arg){.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000100000, TS_DTYPE_FLOAT32, 2, s->sb, NULL, 0}};
  s->a[2] = (ts_arg){.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000200000, TS_DTYPE_FLOAT32, 1, s->sc, NULL, 0}};
  s->a[3] = (ts_arg){.kind = TS_ARG_SCALAR, .i = 1000};
  s->a[4] = (ts_arg){.kind = TS_ARG_SCALAR, .f = 1.0};
}

/* Launches with one argument changed and returns the error text (empty when OK). */
static ts_status try_launch(ts_kernel *k, SampleArgs *s, int nargs) {
  return ts_kernel_launch(k, s->a, nargs, NULL);
}

/* A 4-bit parameter takes its logical tensor or, as torch holds it, its bytes: an int8 / uint8
 * tensor with the last dimension halved (strides in bytes; the last one 1). */
TEST(rt_launch_packed4_arguments) {
  ts_context *ctx = NULL;
  ts_context_options opt = {.size = sizeof opt, .disable_cache = 1};
  REQUIRE(ts_context_create(&opt, &ctx) == TS_OK);
  RtParam p[1];
  memset(p, 0, sizeof p);
  p[0] = (RtParam){.name = "Q", .kind = TS_ARG_TENSOR, .dtype = TS_DTYPE_INT4, .ndim = 2, .shape = {-1, 64},
                   .dyn = {0, -1}};
  const char *dyn[] = {"M"};
  RtLaunch l = {.name = "q_kernel", .grid_static = {1, 1, 1}, .block = {128, 1, 1}};
  ts_kernel *k = rt_kernel_new_for_test(ctx, p, 1, dyn, 1, &l, 1);
  RtPacked *pk = ts_malloc(sizeof *pk);
  int64_t bytes[2] = {32, 32}, logical[2] = {32, 64}, wide[2] = {32, 64}, st_ok[2] = {48, 1}, st_bad[2] = {64, 2};
  ts_arg a = {.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000000000, TS_DTYPE_UINT8, 2, bytes, NULL, 0}};
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_OK);
  CHECK(pk->storage[1] == 32); /* M, bound from the byte tensor's rows */
  a.tensor.dtype = TS_DTYPE_INT8;
  a.tensor.strides = st_ok; /* rows 48 bytes apart: 96 elements */
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "expects strides") || strstr(ts_last_error(ctx), "stride"));
  a.tensor.strides = st_bad;
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "must be contiguous along the last dimension") != NULL);
  a.tensor.strides = NULL;
  a.tensor.shape = wide; /* the logical width given as bytes: 128 elements */
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "dimension 1 is 128 but the kernel was compiled for 64") != NULL);
  a.tensor.dtype = TS_DTYPE_INT4;
  a.tensor.shape = logical;
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_OK);
  a.tensor.dtype = TS_DTYPE_FLOAT16;
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "expected dtype int4 (or its bytes") != NULL);
  ts_free(pk);
  ts_kernel_destroy(k);
  ts_context_destroy(ctx);
}

/* An empty tensor (a dimension of 0: torch gives it no memory, data_ptr() 0) is a valid
 * argument (TileLang's issue 1697: a GEMM with K = 0 gives zeros); a NULL pointer to elements
 * is still refused, naming the parameter. */
TEST(rt_launch_empty_tensor_null_data) {
  ts_context *ctx = NULL;
  ts_context_options opt = {.size = sizeof opt, .disable_cache = 1};
  REQUIRE(ts_context_create(&opt, &ctx) == TS_OK);
  RtParam p[1];
  memset(p, 0, sizeof p);
  p[0] = (RtParam){.name = "A", .kind = TS_ARG_TENSOR, .dtype = TS_DTYPE_FLOAT16, .ndim = 2, .shape = {512, -1},
                   .dyn = {-1, 0}};
  const char *dyn[] = {"K"};
  RtLaunch l = {.name = "k_kernel", .grid_static = {1, 1, 1}, .block = {128, 1, 1}};
  ts_kernel *k = rt_kernel_new_for_test(ctx, p, 1, dyn, 1, &l, 1);
  RtPacked *pk = ts_malloc(sizeof *pk);
  int64_t empty[2] = {512, 0}, full[2] = {512, 64};
  ts_arg a = {.kind = TS_ARG_TENSOR, .tensor = {NULL, TS_DTYPE_FLOAT16, 2, empty, NULL, 0}};
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_OK);
  CHECK(pk->storage[1] == 0); /* K, bound from the empty dimension */
  a.tensor.shape = full;
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 0 ('A'): data pointer is NULL") != NULL);
  ts_free(pk);
  ts_kernel_destroy(k);
  ts_context_destroy(ctx);
}

/* A tensor parameter the kernel never touches (Bias of tests/front/optional_bias.py without
 * with_bias) may be passed as no tensor (data and shape NULL: Python's None); one it reads may
 * not, and the error names it. */
TEST(rt_launch_untouched_tensor_as_none) {
  ts_context *ctx = NULL;
  ts_context_options opt = {.size = sizeof opt, .disable_cache = 1};
  REQUIRE(ts_context_create(&opt, &ctx) == TS_OK);
  ts_program *prog = NULL;
  REQUIRE(ts_program_load_file(ctx, "tests/front/optional_bias.py", &prog) == TS_OK);
  for (int with = 0; with < 2; with++) {
    ts_param p[] = {{"with_bias", with ? "True" : "False"}};
    ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, NULL, 0, NULL};
    ts_kernel *k = NULL;
    CHECK(ts_kernel_compile(prog, "gemm_bias", p, 1, &o, &k) == TS_OK);
    if (!k) continue;
    CHECK(k->params[3].untouched == !with && !k->params[0].untouched && !k->params[2].untouched);
    int64_t sa[2] = {256, 128}, sb[2] = {256, 128}, sc[2] = {256, 256};
    ts_arg a[4] = {{.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000000000, TS_DTYPE_FLOAT16, 2, sa, NULL, 0}},
                   {.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000100000, TS_DTYPE_FLOAT16, 2, sb, NULL, 0}},
                   {.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000200000, TS_DTYPE_FLOAT32, 2, sc, NULL, 0}},
                   {.kind = TS_ARG_TENSOR, .tensor = {NULL, TS_DTYPE_FLOAT32, 1, NULL, NULL, 0}}};
    RtPacked *pk = ts_malloc(sizeof *pk);
    CHECK(rt_kernel_check_args(k, a, 4, pk) == (with ? TS_ERR_LAUNCH_ARGUMENT : TS_OK));
    if (with) CHECK(strstr(ts_last_error(ctx), "argument 3 ('Bias'): no tensor was given (None)") != NULL);
    ts_free(pk);
    ts_kernel_destroy(k);
  }
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
}

TEST(rt_launch_argument_errors) {
  ts_context *ctx = NULL;
  ts_context_options opt = {.size = sizeof opt, .disable_cache = 1};
  REQUIRE(ts_context_create(&opt, &ctx) == TS_OK);
  ts_kernel *k = sample_kernel(ctx);
  SampleArgs s;

  sample_args(&s, 300);
  CHECK(try_launch(k, &s, 4) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "expected 5 arguments (A, B, C, n, s), got 4") != NULL);

  sample_args(&s, 300);
  s.a[1].tensor.dtype = TS_DTYPE_FLOAT16;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 1 ('B'): expected dtype float32, got float16") != NULL);

  sample_args(&s, 300);
  s.a[2].tensor.ndim = 2;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 2 ('C'): expected 1 dimensions, got 2") != NULL);

  sample_args(&s, 300);
  s.sa[1] = 100;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 0 ('A'): dimension 1 is 100 but the kernel was compiled for 64") != NULL);

  sample_args(&s, 300);
  s.sc[0] = 299; /* M bound to 300 by B */
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 2 ('C'): dimension 0 is 299 but 'M' is 300 from argument 1 ('B')") != NULL);

  sample_args(&s, 300);
  s.a[0].tensor.data = NULL;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 0 ('A'): data pointer is NULL") != NULL);

  sample_args(&s, 300);
  s.a[2].tensor.data = (char *)s.a[2].tensor.data + 4;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 2 ('C'): data pointer") != NULL);
  CHECK(strstr(ts_last_error(ctx), "not 16-byte aligned") != NULL);

  sample_args(&s, 300);
  s.a[1].tensor.device = -1;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 1 ('B'): tensor is in host memory") != NULL);

  sample_args(&s, 300);
  s.a[1].tensor.device = 3;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 1 ('B'): tensor is on device 3 but the context uses device 0") != NULL);

  sample_args(&s, 300);
  int64_t transposed[2] = {1, 300};
  s.a[1].tensor.strides = transposed;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 1 ('B'): strides (1, 300) are not compact row-major (64, 1)") != NULL);

  sample_args(&s, 300);
  s.a[3] = s.a[0];
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 3 ('n'): expected a scalar, got a tensor") != NULL);

  sample_args(&s, 300);
  s.a[3].i = INT64_C(1) << 40;
  CHECK(try_launch(k, &s, 5) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 3 ('n'): value 1099511627776 does not fit in int32") != NULL);

  sample_args(&s, 300);
  CHECK(ts_kernel_launch(k, NULL, 5, NULL) == TS_ERR_LAUNCH_ARGUMENT);

  /* Explicit compact strides, and any stride on an extent-1 dimension, are accepted. */
  sample_args(&s, 1);
  int64_t compact_b[2] = {64, 1}, any_c[1] = {12345};
  s.a[1].tensor.strides = compact_b;
  RtPacked pk;
  CHECK(rt_kernel_check_args(k, s.a, 5, &pk) == TS_OK);
  s.a[2].tensor.strides = any_c;
  CHECK(rt_kernel_check_args(k, s.a, 5, &pk) == TS_OK);

  ts_kernel_destroy(k);
  ts_context_destroy(ctx);
}

TEST(rt_launch_packs_arguments) {
  ts_context *ctx = NULL;
  REQUIRE(ts_context_create(NULL, &ctx) == TS_OK);
  ts_kernel *k = sample_kernel(ctx);
  SampleArgs s;
  sample_args(&s, 777);
  s.a[3].i = -5;
  s.a[4].f = 65504.0; /* largest finite half */
  RtPacked pk;
  REQUIRE(rt_kernel_check_args(k, s.a, 5, &pk) == TS_OK);
  CHECK(pk.nptrs == 6);
  CHECK(*(void **)pk.ptrs[0] == s.a[0].tensor.data);
  CHECK(*(void **)pk.ptrs[2] == s.a[2].tensor.data);
  CHECK(*(int32_t *)pk.ptrs[3] == -5);
  CHECK(*(uint16_t *)pk.ptrs[4] == 0x7bff);
  CHECK(*(int64_t *)pk.ptrs[5] == 777); /* the dynamic dimension M, appended */
  s.a[4].f = 1.0;
  REQUIRE(rt_kernel_check_args(k, s.a, 5, &pk) == TS_OK);
  CHECK(*(uint16_t *)pk.ptrs[4] == 0x3c00);
  s.a[4].f = -2.5;
  REQUIRE(rt_kernel_check_args(k, s.a, 5, &pk) == TS_OK);
  CHECK(*(uint16_t *)pk.ptrs[4] == 0xc100);
  s.a[4].f = 1e-7; /* subnormal in half: 1e-7 / 2^-24 = 1.68 -> 2 */
  REQUIRE(rt_kernel_check_args(k, s.a, 5, &pk) == TS_OK);
  CHECK(*(uint16_t *)pk.ptrs[4] == 0x0002);
  s.a[4].f = 1e6; /* overflow -> inf */
  REQUIRE(rt_kernel_check_args(k, s.a, 5, &pk) == TS_OK);
  CHECK(*(uint16_t *)pk.ptrs[4] == 0x7c00);
  ts_kernel_destroy(k);
  ts_context_destroy(ctx);
}

/* Valid arguments get past the checks; without a binary nothing is launched, and
 * without a GPU the driver is never reached (TS_ERR_NO_DRIVER with the reason). */
TEST(rt_launch_without_binary_or_driver) {
  ts_context *ctx = NULL;
  REQUIRE(ts_context_create(NULL, &ctx) == TS_OK);
  ts_kernel *k = sample_kernel(ctx);
  SampleArgs s;
  sample_args(&s, 64);
  CHECK(ts_kernel_launch(k, s.a, 5, NULL) == TS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "no binary") != NULL);
  if (ts_context_device_sm(ctx) == 0) {
    k->cubin = ts_strdup("not a cubin");
    k->cubin_size = 12;
    CHECK(ts_kernel_launch(k, s.a, 5, NULL) == TS_ERR_NO_DRIVER);
    CHECK(strstr(ts_last_error(ctx), "no CUDA") != NULL);
    void *p = NULL;
    CHECK(ts_device_malloc(ctx, 16, &p) == TS_ERR_NO_DRIVER && p == NULL);
    CHECK(ts_synchronize(ctx) == TS_ERR_NO_DRIVER);
  }
  ts_kernel_destroy(k);
  ts_context_destroy(ctx);
}

TEST(rt_api_small_helpers) {
  CHECK_STR(ts_status_string(TS_ERR_LAUNCH_ARGUMENT), "launch argument mismatch");
  CHECK_STR(ts_dtype_name(TS_DTYPE_BFLOAT16), "bfloat16");
  CHECK(ts_dtype_size(TS_DTYPE_FLOAT16) == 2 && ts_dtype_size(TS_DTYPE_INT64) == 8);
  CHECK(ts_dtype_size(TS_DTYPE_FLOAT8_E4M3) == 1);
  ts_context *ctx = NULL;
  ts_context_options bad = {0}; /* size not set */
  CHECK(ts_context_create(&bad, &ctx) == TS_ERR_INVALID_ARGUMENT && ctx == NULL);
  REQUIRE(ts_context_create(NULL, &ctx) == TS_OK);
  CHECK(ts_last_error(ctx) != NULL);
  ts_context_destroy(ctx);
}

/* ---- GPU: a hand-written kernel through the launch path ---------------------------------- */
TEST(rt_gpu_launch_handwritten) {
  ts_context *ctx = NULL;
  ts_context_options opt = {.size = sizeof opt, .disable_cache = 1};
  REQUIRE(ts_context_create(&opt, &ctx) == TS_OK);
  if (ts_context_device_sm(ctx) == 0 || !has_common_header()) {
    printf("  skip rt_gpu_launch_handwritten: no GPU\n");
    ts_context_destroy(ctx);
    return;
  }
  /* scale_k(x: f32[N], s: f32), dyn N, grid = ceildiv(N, 256). */
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  IrVar *n = ir_var(&c, "N", TS_DTYPE_INT64, IR_VAR_DYNAMIC, SRCLOC_NONE);
  IrExpr *grid = ir_binary(&c, IR_FLOORDIV, ir_binary(&c, IR_ADD, ir_varref(&c, n, SRCLOC_NONE),
                                                        ir_int(&c, 255, TS_DTYPE_INT64, SRCLOC_NONE), SRCLOC_NONE),
                           ir_int(&c, 256, TS_DTYPE_INT64, SRCLOC_NONE), SRCLOC_NONE);
  RtParam p[2];
  memset(p, 0, sizeof p);
  p[0] = (RtParam){.name = "x", .kind = TS_ARG_TENSOR, .dtype = TS_DTYPE_FLOAT32, .ndim = 1, .shape = {-1}, .dyn = {0}};
  p[1] = (RtParam){.name = "s", .kind = TS_ARG_SCALAR, .dtype = TS_DTYPE_FLOAT32};
  const char *dyn[] = {"N"};
  RtLaunch l = {.name = "scale_k", .grid = {grid, NULL, NULL}, .grid_static = {0, 1, 1}, .block = {256, 1, 1}};
  ts_kernel *k = rt_kernel_new_for_test(ctx, p, 2, dyn, 1, &l, 1);
  k->dyn_vars[0] = n;
  RtJitInput in = sample_input(SCALE_SRC, ctx->sm >= 90 ? "sm_90a" : "sm_80");
  in.target.sm = ctx->sm;
  RtJitOutput bin;
  StrBuf err = {0};
  REQUIRE(rt_jit_compile(&ctx->nvrtc, &in, &bin, &err) == TS_OK);
  k->cubin = bin.cubin;
  k->cubin_size = bin.cubin_size;
  k->ptx = bin.ptx;

  enum { N = 100003 };
  float *h = ts_malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) h[i] = (float)((i * 37) % 101) - 50.0f;
  void *d = NULL;
  REQUIRE(ts_device_malloc(ctx, N * sizeof(float), &d) == TS_OK);
  REQUIRE(ts_memcpy_h2d(ctx, d, h, N * sizeof(float)) == TS_OK);
  int64_t shape[1] = {N};
  ts_arg args[2] = {{.kind = TS_ARG_TENSOR, .tensor = {d, TS_DTYPE_FLOAT32, 1, shape, NULL, 0}},
                    {.kind = TS_ARG_SCALAR, .f = 0.5}};
  ts_status st = ts_kernel_launch(k, args, 2, NULL);
  if (st != TS_OK) fprintf(stderr, "%s\n", ts_last_error(ctx));
  CHECK(st == TS_OK);
  CHECK(ts_synchronize(ctx) == TS_OK);
  float *r = ts_malloc(N * sizeof(float));
  REQUIRE(ts_memcpy_d2h(ctx, r, d, N * sizeof(float)) == TS_OK);
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += r[i] != h[i] * 0.5f + (float)(i % 3);
  CHECK(wrong == 0);
  double ms = 0;
  CHECK(ts_kernel_benchmark(k, args, 2, 2, 5, 1, &ms) == TS_OK && ms > 0);
  void *d2 = NULL;
  REQUIRE(ts_device_malloc(ctx, N * sizeof(float), &d2) == TS_OK);
  printf("  gpu: sm_%d, scale kernel %.4f ms (L2 flushed)\n", ctx->sm, ms);
  CHECK(ts_memcpy_benchmark(ctx, d2, d, N * sizeof(float), 2, 5, 0, &ms) == TS_OK && ms > 0);
  CHECK(ts_memset_d8(ctx, d2, 0, N * sizeof(float)) == TS_OK);
  printf("  gpu: device-to-device copy %.4f ms\n", ms);
  ts_device_free(ctx, d);
  ts_device_free(ctx, d2);
  ts_free(h);
  ts_free(r);
  sb_free(&err);
  ts_kernel_destroy(k);
  ts_compiler_fini(&c);
  ts_context_destroy(ctx);
}

/* A dynamic dimension given only through an affine extent (A: [n * 4], B: [n + 1], TileLang's
 * T.symbolic annotations) is bound from it when whole, and every extent is then checked. */
TEST(rt_binds_dynamic_dims_from_affine_extents) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "n = T.symbolic('n')\n"
                    "@T.prim_func\n"
                    "def k(A: T.Tensor((n * 4,), 'int32'), B: T.Tensor((n + 1,), 'int32')):\n"
                    "    with T.Kernel(1) as bx:\n"
                    "        for i in T.serial(n * 4):\n"
                    "            A[i] = B[0]\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a", .no_jit = 1};
  ts_kernel *k = NULL;
  REQUIRE(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  int64_t sa[1] = {16}, sb[1] = {5};
  ts_arg a[2] = {{.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000000000, TS_DTYPE_INT32, 1, sa, NULL, 0}},
                 {.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000100000, TS_DTYPE_INT32, 1, sb, NULL, 0}}};
  RtPacked *pk = ts_malloc(sizeof *pk);
  CHECK(rt_kernel_check_args(k, a, 2, pk) == TS_OK);
  CHECK(pk->nptrs == 3 && pk->storage[2] == 4); /* n */
  sb[0] = 6;
  CHECK(rt_kernel_check_args(k, a, 2, pk) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 1 ('B'): dimension 0 is 6 but the other arguments require 5") != NULL);
  sa[0] = 15, sb[0] = 5; /* n = 4 from B; A then needs 16 */
  CHECK(rt_kernel_check_args(k, a, 2, pk) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "argument 0 ('A'): dimension 0 is 15 but the other arguments require 16") != NULL);
  ts_free(pk);
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* A T.StridedTensor whose row stride is a dynamic symbol (`(M, N), (NN, 1)`) binds it from the
 * tensor's strides (TileLang's copy-with-stride test: a column slice of a wider tensor). */
TEST(rt_binds_dynamic_stride) {
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  const char *src = "import tilelang.language as T\n"
                    "NN = T.dynamic('NN')\n"
                    "@T.prim_func\n"
                    "def k(A: T.StridedTensor((64, 32), (NN, 1), 'float16'), B: T.Tensor((64, 32), 'float16')):\n"
                    "    with T.Kernel(1, threads=128) as bx:\n"
                    "        for i, j in T.Parallel(64, 32):\n"
                    "            B[i, j] = A[i, j]\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "k.py", src, &p) == TS_OK);
  ts_compile_options o = {.size = sizeof o, .arch = "sm_90a", .no_jit = 1};
  ts_kernel *k = NULL;
  REQUIRE(ts_kernel_compile(p, "k", NULL, 0, &o, &k) == TS_OK);
  int64_t shape[2] = {64, 32}, strides[2] = {64, 1};
  ts_arg a[2] = {{.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000000000, TS_DTYPE_FLOAT16, 2, shape, strides, 0}},
                 {.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000100000, TS_DTYPE_FLOAT16, 2, shape, NULL, 0}}};
  RtPacked *pk = ts_malloc(sizeof *pk);
  ts_status st = rt_kernel_check_args(k, a, 2, pk);
  if (st != TS_OK) fprintf(stderr, "%s\n", ts_last_error(ctx));
  CHECK(st == TS_OK);
  CHECK(pk->nptrs == 3 && pk->storage[2] == 64); /* NN */
  ts_free(pk);
  ts_kernel_destroy(k);
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

/* A `p: T.ptr` parameter (a scalar of dtype handle) takes the device address it is given,
 * all 64 bits of it, into its 8-byte slot; a tensor there is a clear error. */
TEST(rt_launch_pointer_parameter) {
  ts_context *ctx = NULL;
  ts_context_options opt = {.size = sizeof opt, .disable_cache = 1};
  REQUIRE(ts_context_create(&opt, &ctx) == TS_OK);
  RtParam p[1];
  memset(p, 0, sizeof p);
  p[0] = (RtParam){.name = "a_ptr", .kind = TS_ARG_SCALAR, .dtype = TS_DTYPE_HANDLE};
  RtLaunch l = {.name = "ptr_kernel", .grid_static = {1, 1, 1}, .block = {32, 1, 1}};
  ts_kernel *k = rt_kernel_new_for_test(ctx, p, 1, NULL, 0, &l, 1);
  RtPacked *pk = ts_malloc(sizeof *pk);
  ts_arg a = {.kind = TS_ARG_SCALAR, .i = INT64_C(0x7f12345678a0)};
  CHECK(rt_kernel_check_args(k, &a, 1, pk) == TS_OK);
  CHECK(pk->storage[0] == UINT64_C(0x7f12345678a0));
  int64_t shape[1] = {4};
  ts_arg tens = {.kind = TS_ARG_TENSOR, .tensor = {(void *)(uintptr_t)0x7f0000000000, TS_DTYPE_FLOAT32, 1, shape, NULL, 0}};
  CHECK(rt_kernel_check_args(k, &tens, 1, pk) == TS_ERR_LAUNCH_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "a_ptr") != NULL);
  ts_free(pk);
  ts_kernel_destroy(k);
  ts_context_destroy(ctx);
}
