/* test_dist.c — CPU tests of the distributed runtime (src/distributed, device/tilescale/dist.cuh):
 * the symmetric allocator, the TCP rendezvous among forked processes (allgather, barrier,
 * broadcast, timeouts, a rank that dies), `tilescale launch` with CPU-only child programs
 * (rank environment, output prefixes, failure propagation, rendezvous timeout through
 * ts_dist_init), ranks started without it under Open MPI / MPICH / torchrun / srun
 * environments, NVSHMEM discovery ($NVSHMEM_HOME, $NVSHMEM_SRC), and NVRTC compiles of
 * dist.cuh for sm_90a.
 *
 * The launcher is the CLI next to this binary (build/tilescale, cli/launch.c), run as a
 * child.  Rank programs: the launcher re-runs this test binary with TS_DIST_TEST_CHILD
 * set; a constructor below then plays one rank and exits before the test registry runs. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/distributed/dist.h"
#include "../../src/driver/driver.h"
#include "test.h"

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

/* ---- rank programs run by the launcher ------------------------------------------------------ */
/* allgather: every rank contributes (rank+1)*10, checks the gathered vector, prints ok.
 * absent: rank 1 leaves at once; rank 0's ts_dist_init must time out with an error. */
static int dist_child_main(const char *mode) {
  ts_context *ctx = NULL;
  if (ts_context_create(NULL, &ctx) != TS_OK) return 90;
  int rc = 0;
  if (strcmp(mode, "absent") == 0 && atoi(getenv("RANK") ? getenv("RANK") : "0") == 1) {
    ts_context_destroy(ctx);
    return 0;
  }
  ts_dist_options o = ts_dist_default_options();
  o.host_only = 1;
  ts_dist *d = NULL;
  ts_status s = ts_dist_init(ctx, &o, &d);
  if (s != TS_OK) {
    fprintf(stderr, "init failed: %s\n", ts_last_error(ctx));
    ts_context_destroy(ctx);
    return 1;
  }
  int n = ts_dist_world_size(d), me = ts_dist_rank(d);
  int mine = (me + 1) * 10;
  int *all = calloc((size_t)n, sizeof *all);
  if (ts_dist_allgather(d, &mine, sizeof mine, all) != TS_OK) {
    fprintf(stderr, "allgather failed: %s\n", ts_last_error(ctx));
    rc = 2;
  }
  int sum = 0;
  for (int r = 0; r < n && rc == 0; r++) {
    if (all[r] != (r + 1) * 10) rc = 3;
    sum += all[r];
  }
  char word[16] = "";
  if (me == 0) snprintf(word, sizeof word, "hello");
  if (rc == 0 && (ts_dist_broadcast(d, word, sizeof word) != TS_OK || strcmp(word, "hello") != 0)) rc = 4;
  if (rc == 0 && ts_dist_barrier(d, NULL) != TS_OK) rc = 5;
  if (rc == 0) printf("ok rank %d of %d local %d sum %d\n", me, n, ts_dist_local_rank(d), sum);
  free(all);
  ts_dist_finalize(d);
  ts_context_destroy(ctx);
  return rc;
}

__attribute__((constructor)) static void dist_child_entry(void) {
  const char *mode = getenv("TS_DIST_TEST_CHILD");
  if (mode && *mode) {
    fflush(stdout);
    int rc = dist_child_main(mode);
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
}

/* ---- helpers --------------------------------------------------------------------------------- */
typedef struct LaunchResult {
  int code;     /* exit code of the launcher (-1: crashed) */
  char *out;    /* its stdout / stderr, heap */
  char *err;
  double secs;
} LaunchResult;

/* `tilescale launch` (the CLI built next to this binary) running in a child, its
 * stdout/stderr captured in files. */
typedef struct LaunchProc {
  pid_t pid;
  char out_path[32], err_path[32];
  double t0;
} LaunchProc;

/* This test binary's own path, for rank programs ("/proc/self/exe" would name the CLI once
 * the launcher has exec'd it). */
static const char *self_exe(void) {
  static char path[4096];
  if (!path[0]) {
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
  }
  return path;
}

/* Runs `tilescale launch argv[1..]` in a child; extra_env entries ("K=V") are set for it first.
 * A "/proc/self/exe" argument stands for this test binary. */
static LaunchProc start_launch(char **argv, const char *const *extra_env) {
  LaunchProc lp;
  snprintf(lp.out_path, sizeof lp.out_path, "/tmp/ts_launch_out_XXXXXX");
  snprintf(lp.err_path, sizeof lp.err_path, "/tmp/ts_launch_err_XXXXXX");
  int ofd = mkstemp(lp.out_path), efd = mkstemp(lp.err_path);
  int argc = 0;
  while (argv[argc]) argc++;
  char cli[4200];
  snprintf(cli, sizeof cli, "%s", self_exe());
  char *slash = strrchr(cli, '/');
  snprintf(slash ? slash + 1 : cli, sizeof cli - (size_t)(slash ? slash + 1 - cli : 0), "tilescale");
  /* tilescale launch ARGS: argv[0] is "launch" already */
  char **args = ts_calloc((size_t)argc + 2, sizeof *args);
  args[0] = cli;
  for (int i = 0; i < argc; i++) args[i + 1] = strcmp(argv[i], "/proc/self/exe") ? argv[i] : (char *)self_exe();
  lp.t0 = wall_s();
  fflush(stdout);
  fflush(stderr);
  lp.pid = fork();
  if (lp.pid == 0) {
    dup2(ofd, STDOUT_FILENO);
    dup2(efd, STDERR_FILENO);
    for (int i = 0; extra_env && extra_env[i]; i++) putenv((char *)extra_env[i]);
    execv(cli, args);
    fprintf(stderr, "cannot run %s: %s\n", cli, strerror(errno));
    _exit(99);
  }
  ts_free(args);
  close(ofd);
  close(efd);
  return lp;
}

static LaunchResult finish_launch(LaunchProc *lp) {
  LaunchResult r = {-1, NULL, NULL, 0};
  int st = 0;
  waitpid(lp->pid, &st, 0);
  r.secs = wall_s() - lp->t0;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = ts_read_file(lp->out_path, NULL);
  r.err = ts_read_file(lp->err_path, NULL);
  if (!r.out) r.out = ts_strdup("");
  if (!r.err) r.err = ts_strdup("");
  unlink(lp->out_path);
  unlink(lp->err_path);
  return r;
}

static LaunchResult run_launch(char **argv, const char *const *extra_env) {
  LaunchProc lp = start_launch(argv, extra_env);
  return finish_launch(&lp);
}

static void free_result(LaunchResult *r) {
  ts_free(r->out);
  ts_free(r->err);
}

/* ---- symmetric allocator ------------------------------------------------------------------------ */
/* $NVSHMEM_BOOTSTRAP: NVSHMEM's own bootstrap (PMI, MPI, ...) when set to anything but UID */
TEST(dist_nvshmem_bootstrap_choice) {
  CHECK(!dist_nvshmem_native_bootstrap(NULL) && !dist_nvshmem_native_bootstrap(""));
  CHECK(!dist_nvshmem_native_bootstrap("UID") && !dist_nvshmem_native_bootstrap("uid"));
  CHECK(dist_nvshmem_native_bootstrap("PMI") && dist_nvshmem_native_bootstrap("PMI-2"));
  CHECK(dist_nvshmem_native_bootstrap("PMIx") && dist_nvshmem_native_bootstrap("MPI"));
}

/* the barriers' GPU release round: only with every rank's heap mapped here, and not off */
TEST(dist_release_round_possible) {
  uint64_t mapped[3] = {0x1000, 0x2000, 0x3000}, off_node[3] = {0x1000, 0, 0x3000};
  CHECK(dist_release_possible(3, false, mapped, NULL));
  CHECK(dist_release_possible(3, false, mapped, "1"));
  CHECK(!dist_release_possible(3, false, mapped, "0"));     /* TILESCALE_DIST_RELEASE_ROUND=0 */
  CHECK(!dist_release_possible(3, false, off_node, NULL));  /* rank 1's heap is not mapped */
  CHECK(!dist_release_possible(3, true, mapped, NULL));     /* host_only: no heap */
  CHECK(!dist_release_possible(1, false, mapped, NULL));    /* nobody to wait for */
  CHECK(!dist_release_possible(3, false, NULL, NULL));
}

TEST(dist_symheap_alloc_free_coalesce) {
  DistSymHeap h;
  dist_symheap_init(&h, 4096);
  uint64_t a, b, c, d;
  CHECK(dist_symheap_alloc(&h, 100, 256, &a) && a == 0);
  CHECK(dist_symheap_alloc(&h, 300, 256, &b) && b == 256);
  CHECK(dist_symheap_alloc(&h, 1, 1024, &c) && c == 1024);
  CHECK(dist_symheap_used_bytes(&h) == 401);
  CHECK(!dist_symheap_alloc(&h, 4096, 256, &d)); /* exhausted */
  CHECK(!dist_symheap_free(&h, 8));              /* not the start of a block */
  CHECK(dist_symheap_free(&h, b));
  CHECK(!dist_symheap_free(&h, b));              /* double free */
  /* First fit reuses the hole left by b. */
  CHECK(dist_symheap_alloc(&h, 200, 256, &d) && d == 256);
  CHECK(dist_symheap_free(&h, a) && dist_symheap_free(&h, d) && dist_symheap_free(&h, c));
  /* Everything coalesced back into one free block covering the heap. */
  CHECK(h.nblocks == 1 && !h.blocks[0].used && h.blocks[0].size == 4096);
  CHECK(dist_symheap_alloc(&h, 4096, 256, &a) && a == 0);
  dist_symheap_destroy(&h);
}

TEST(dist_symheap_deterministic) {
  /* Two "ranks" running the same request sequence get the same offsets. */
  DistSymHeap h[2];
  uint64_t offs[2][64];
  for (int k = 0; k < 2; k++) {
    dist_symheap_init(&h[k], 1 << 20);
    unsigned seed = 12345;
    for (int i = 0; i < 64; i++) {
      seed = seed * 1103515245u + 12345u;
      uint64_t size = 1 + (seed >> 16) % 5000;
      CHECK(dist_symheap_alloc(&h[k], size, 256, &offs[k][i]));
      CHECK(offs[k][i] % 256 == 0);
      if (i % 3 == 2) CHECK(dist_symheap_free(&h[k], offs[k][i - 1]));
    }
  }
  CHECK(memcmp(offs[0], offs[1], sizeof offs[0]) == 0);
  /* No two live allocations overlap. */
  for (int i = 0; i < h[0].nblocks - 1; i++) CHECK(h[0].blocks[i].off + h[0].blocks[i].size == h[0].blocks[i + 1].off);
  dist_symheap_destroy(&h[0]);
  dist_symheap_destroy(&h[1]);
}

/* ---- rendezvous among forked processes --------------------------------------------------------- */
/* Each rank gathers blobs of 37 bytes whose content depends on the sender, checks them,
 * runs a barrier and a broadcast, and exits 0 when everything matched. */
static int boot_rank(int port, int rank, int world) {
  DistBoot b;
  StrBuf err = {0};
  if (!dist_boot_open(&b, "127.0.0.1", port, rank, world, 5000, &err)) {
    fprintf(stderr, "rank %d: %s\n", rank, sb_str(&err));
    return 10;
  }
  b.op_timeout_ms = 5000;
  int rc = 0;
  for (int round = 0; round < 3 && rc == 0; round++) {
    unsigned char mine[37], all[37 * 8];
    for (int i = 0; i < 37; i++) mine[i] = (unsigned char)(rank * 31 + i + round);
    if (!dist_boot_allgather(&b, mine, sizeof mine, all, &err)) rc = 11;
    for (int r = 0; r < world && rc == 0; r++)
      for (int i = 0; i < 37; i++)
        if (all[r * 37 + i] != (unsigned char)(r * 31 + i + round)) rc = 12;
    if (rc == 0 && !dist_boot_barrier(&b, &err)) rc = 13;
  }
  uint64_t id = rank == 0 ? 0x1234567890abcdefull : 0;
  if (rc == 0 && (!dist_boot_broadcast(&b, &id, sizeof id, &err) || id != 0x1234567890abcdefull)) rc = 14;
  if (rc) fprintf(stderr, "rank %d: rc %d %s\n", rank, rc, sb_str(&err));
  dist_boot_close(&b);
  sb_free(&err);
  return rc;
}

TEST(dist_rendezvous_allgather_forked) {
  const int world = 5;
  int port = free_port();
  REQUIRE(port > 0);
  pid_t pids[5];
  fflush(stdout);
  fflush(stderr);
  /* Rank 0 starts last: the others must retry until it listens. */
  for (int r = world - 1; r >= 0; r--) {
    pids[r] = fork();
    if (pids[r] == 0) _exit(boot_rank(port, r, world));
    if (r == 1) usleep(100 * 1000);
  }
  for (int r = 0; r < world; r++) {
    int st;
    waitpid(pids[r], &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
}

TEST(dist_rendezvous_world_of_one) {
  DistBoot b;
  StrBuf err = {0};
  REQUIRE(dist_boot_open(&b, NULL, 0, 0, 1, 100, &err));
  int x = 42, all = 0;
  CHECK(dist_boot_allgather(&b, &x, sizeof x, &all, &err) && all == 42);
  CHECK(dist_boot_barrier(&b, &err));
  dist_boot_close(&b);
  sb_free(&err);
}

TEST(dist_rendezvous_timeouts) {
  int port = free_port();
  DistBoot b;
  StrBuf err = {0};
  /* Rank 0 alone in a group of 3: an error naming the missing ranks, not a hang. */
  double t0 = wall_s();
  CHECK(!dist_boot_open(&b, "127.0.0.1", port, 0, 3, 300, &err));
  CHECK(wall_s() - t0 < 3.0);
  CHECK(strstr(sb_str(&err), "timed out") && strstr(sb_str(&err), "missing ranks: 1 2"));
  sb_clear(&err);
  /* Rank 1 with no rank 0: gives up at the deadline and says where it looked. */
  t0 = wall_s();
  CHECK(!dist_boot_open(&b, "127.0.0.1", port, 1, 2, 300, &err));
  CHECK(wall_s() - t0 < 3.0);
  CHECK(strstr(sb_str(&err), "rank 1 could not join rank 0 at 127.0.0.1:") != NULL);
  sb_clear(&err);
  CHECK(!dist_boot_open(&b, "127.0.0.1", 70000, 1, 2, 300, &err));
  CHECK(strstr(sb_str(&err), "not a valid TCP port") != NULL);
  sb_free(&err);
}

TEST(dist_rendezvous_dead_rank_and_mismatch) {
  int port = free_port();
  fflush(stdout);
  fflush(stderr);
  /* Rank 1 joins, then exits without taking part in the allgather. */
  pid_t p1 = fork();
  if (p1 == 0) {
    DistBoot b;
    StrBuf err = {0};
    _exit(dist_boot_open(&b, "127.0.0.1", port, 1, 2, 5000, &err) ? 0 : 1);
  }
  DistBoot b;
  StrBuf err = {0};
  REQUIRE(dist_boot_open(&b, "127.0.0.1", port, 0, 2, 5000, &err));
  int x = 1, all[2];
  double t0 = wall_s();
  CHECK(!dist_boot_allgather(&b, &x, sizeof x, all, &err));
  CHECK(wall_s() - t0 < 3.0);
  CHECK(strstr(sb_str(&err), "rank 1 closed its rendezvous connection") != NULL);
  dist_boot_close(&b);
  int st;
  waitpid(p1, &st, 0);
  sb_clear(&err);

  /* Ranks that contribute different sizes get an error naming both sizes. */
  port = free_port();
  pid_t p2 = fork();
  if (p2 == 0) {
    DistBoot c;
    StrBuf e2 = {0};
    if (!dist_boot_open(&c, "127.0.0.1", port, 1, 2, 5000, &e2)) _exit(1);
    long y = 2, ys[2];
    bool ok = dist_boot_allgather(&c, &y, sizeof y, ys, &e2);
    _exit(ok ? 2 : 0);
  }
  REQUIRE(dist_boot_open(&b, "127.0.0.1", port, 0, 2, 5000, &err));
  CHECK(!dist_boot_allgather(&b, &x, sizeof x, all, &err));
  CHECK(strstr(sb_str(&err), "rank 1 contributed 8 bytes but rank 0 contributed 4") != NULL);
  dist_boot_close(&b);
  waitpid(p2, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0); /* rank 1 saw an error too, not a hang */
  sb_free(&err);
}

/* ---- launcher ----------------------------------------------------------------------------------- */
TEST(dist_launch_env_and_prefix) {
  char *argv[] = {"launch", "-n", "3", "sh", "-c",
                  "echo \"r=$RANK w=$WORLD_SIZE l=$LOCAL_RANK lw=$LOCAL_WORLD_SIZE a=$MASTER_ADDR "
                  "nvls=$NVSHMEM_DISABLE_NVLS nccl=$NCCL_NVLS_ENABLE p=$MASTER_PORT\"; echo err$RANK >&2",
                  NULL};
  const char *env[] = {"NCCL_NVLS_ENABLE=1", NULL}; /* must be overridden */
  LaunchResult r = run_launch(argv, env);
  CHECK(r.code == 0);
  for (int k = 0; k < 3; k++) {
    char want[128];
    snprintf(want, sizeof want, "[rank %d] r=%d w=3 l=%d lw=3 a=127.0.0.1 nvls=1 nccl=0 p=", k, k, k);
    CHECK(strstr(r.out, want) != NULL);
    snprintf(want, sizeof want, "[rank %d] err%d\n", k, k);
    CHECK(strstr(r.err, want) != NULL);
  }
  /* Every rank saw the same, valid port, chosen below the ephemeral range (where the job's
   * own bind(0) sockets could take it first). */
  const char *p = strstr(r.out, " p=");
  CHECK(p && atoi(p + 3) > 0);
  FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
  int lo = 0, hi = 0;
  if (f && fscanf(f, "%d %d", &lo, &hi) == 2 && !getenv("MASTER_PORT") && lo > 2048)
    CHECK(p && atoi(p + 3) >= 1024 && atoi(p + 3) < lo);
  if (f) fclose(f);
  free_result(&r);
}

/* Multi-node jobs on one machine: one launcher per "node", all on 127.0.0.1, with a
 * rendezvous port and a control port (node 0's launcher) picked free. */
#define NODE_ARGS(node, nn, ports)                                                                                 \
  "--nnodes", nn, "--node-rank", node, "--master-addr", "127.0.0.1", "--master-port", (ports)[0], "--control-port", \
      (ports)[1]

static void pick_ports(char ports[2][8]) {
  int a = free_port(), b = free_port();
  while (b == a) b = free_port();
  snprintf(ports[0], 8, "%d", a);
  snprintf(ports[1], 8, "%d", b);
}

static void dump_on_failure(TestCtx *t, int before, const LaunchResult *r, int n) {
  if (t->failures == before) return;
  for (int i = 0; i < n; i++)
    fprintf(stderr, "  node %d: exit %d after %.1f s\n--- stdout\n%s--- stderr\n%s", i, r[i].code, r[i].secs, r[i].out,
            r[i].err);
}

TEST(dist_launch_multinode_ranks_and_partial_lines) {
  char ports[2][8];
  pick_ports(ports);
  int before = t->failures;
  const char *prog = "printf a; printf b >&2; printf \"c$RANK/$WORLD_SIZE/$LOCAL_RANK/$MASTER_ADDR:$MASTER_PORT\"";
  LaunchProc lp[3];
  for (int n = 0; n < 3; n++) {
    char node[4];
    snprintf(node, sizeof node, "%d", n);
    char *argv[] = {"launch", "--nproc=2", NODE_ARGS(node, "3", ports), "sh", "-c", (char *)prog, NULL};
    lp[n] = start_launch(argv, NULL);
  }
  LaunchResult r[3];
  for (int n = 0; n < 3; n++) r[n] = finish_launch(&lp[n]);
  for (int n = 0; n < 3; n++) CHECK(r[n].code == 0);
  /* Node 2 of 3 with 2 ranks each: global ranks 4 and 5; a last line without '\n' is kept. */
  char want[128];
  snprintf(want, sizeof want, "[rank 4] ac4/6/0/127.0.0.1:%s\n", ports[0]);
  CHECK(strstr(r[2].out, want) != NULL);
  snprintf(want, sizeof want, "[rank 5] ac5/6/1/127.0.0.1:%s\n", ports[0]);
  CHECK(strstr(r[2].out, want) != NULL);
  CHECK(strstr(r[2].err, "[rank 4] b\n") != NULL);
  CHECK(strstr(r[0].out, "[rank 1] ac1/6/1/") != NULL && strstr(r[1].out, "[rank 2] ac2/6/0/") != NULL);
  dump_on_failure(t, before, r, 3);
  for (int n = 0; n < 3; n++) free_result(&r[n]);

  /* MASTER_ADDR / MASTER_PORT from the environment, no prefixes; node 1 finishes later and
   * node 0's launcher waits for it (it must report a failure there too). */
  pick_ports(ports);
  char ma[64], mp[64];
  snprintf(ma, sizeof ma, "MASTER_ADDR=127.0.0.1");
  snprintf(mp, sizeof mp, "MASTER_PORT=%s", ports[0]);
  const char *env[] = {ma, mp, NULL};
  for (int n = 0; n < 2; n++) {
    char *argv[] = {"launch", "-n", "2", "--nnodes", "2", "--node-rank", n ? "1" : "0", "--control-port", ports[1],
                    "--no-prefix", "sh", "-c",
                    n ? "sleep 0.6; echo $RANK/$WORLD_SIZE/$LOCAL_RANK/$MASTER_ADDR:$MASTER_PORT"
                      : "echo $RANK/$WORLD_SIZE/$LOCAL_RANK/$MASTER_ADDR:$MASTER_PORT",
                    NULL};
    lp[n] = start_launch(argv, env);
  }
  for (int n = 0; n < 2; n++) r[n] = finish_launch(&lp[n]);
  snprintf(want, sizeof want, "2/4/0/127.0.0.1:%s\n", ports[0]);
  CHECK(r[1].code == 0 && strstr(r[1].out, want));
  snprintf(want, sizeof want, "1/4/1/127.0.0.1:%s\n", ports[0]);
  CHECK(r[0].code == 0 && strstr(r[0].out, want));
  CHECK(strstr(r[0].out, "[rank") == NULL && strstr(r[1].out, "[rank") == NULL);
  CHECK(r[0].secs >= 0.5); /* waited for node 1's verdict */
  dump_on_failure(t, before, r, 2);
  for (int n = 0; n < 2; n++) free_result(&r[n]);
}

/* A rank failing on one node stops the ranks of every node; every launcher exits with the
 * rank's code and names it, within seconds (the others' ranks sleep 30 s). */
TEST(dist_launch_multinode_failure_stops_every_node) {
  static const struct {
    const char *prog;
    int code, rank, node;
  } cases[] = {
      /* rank 3 is on node 1 (2 ranks per node); everyone else sleeps */
      {"if [ $RANK = 3 ]; then sleep 0.3; echo bye; exit 3; fi; sleep 30", 3, 3, 1},
      /* a crash on node 0 reaches node 1 */
      {"if [ $RANK = 0 ]; then sleep 0.3; kill -SEGV $$; fi; sleep 30", 128 + SIGSEGV, 0, 0},
  };
  for (int c = 0; c < TS_ARRAY_LEN(cases); c++) {
    char ports[2][8];
    pick_ports(ports);
    int before = t->failures;
    LaunchProc lp[2];
    for (int n = 0; n < 2; n++) {
      char *argv[] = {"launch", "-n", "2", NODE_ARGS(n ? "1" : "0", "2", ports), "--grace", "1", "sh", "-c",
                      (char *)cases[c].prog, NULL};
      lp[n] = start_launch(argv, NULL);
    }
    LaunchResult r[2];
    for (int n = 0; n < 2; n++) r[n] = finish_launch(&lp[n]);
    char want[96];
    snprintf(want, sizeof want, "failed: rank %d ", cases[c].rank);
    for (int n = 0; n < 2; n++) {
      CHECK(r[n].code == cases[c].code);
      CHECK(r[n].secs < 8.0);
      CHECK(strstr(r[n].err, want) != NULL);
    }
    snprintf(want, sizeof want, " on node %d\n", cases[c].node);
    CHECK(strstr(r[0].err, want) && strstr(r[1].err, want));
    /* the other node says whose failure stops its ranks */
    snprintf(want, sizeof want, "; stopping the 2 ranks of node %d", 1 - cases[c].node);
    CHECK(strstr(r[1 - cases[c].node].err, want) != NULL);
    if (c == 0) CHECK(strstr(r[1].out, "[rank 3] bye") != NULL);
    dump_on_failure(t, before, r, 2);
    for (int n = 0; n < 2; n++) free_result(&r[n]);
  }
}

/* A node that never shows up: node 0's launcher gives up after --join-timeout and stops
 * its ranks; a node whose node 0 never shows up cannot connect and says where it tried.
 * Launchers of different shapes refuse each other. */
TEST(dist_launch_multinode_missing_node_and_mismatch) {
  char ports[2][8];
  pick_ports(ports);
  int before = t->failures;
  char *a0[] = {"launch", "-n", "2", NODE_ARGS("0", "3", ports), "--join-timeout", "1", "--grace", "1",
                "sleep", "30", NULL};
  LaunchResult r[2];
  r[0] = run_launch(a0, NULL);
  CHECK(r[0].code == 1 && r[0].secs < 6.0);
  CHECK(strstr(r[0].err, "failed: nodes 1, 2 did not join within 1 s") != NULL);
  dump_on_failure(t, before, r, 1);
  free_result(&r[0]);

  char *a1[] = {"launch", "-n", "2", NODE_ARGS("1", "2", ports), "--join-timeout", "1", "sleep", "30", NULL};
  r[0] = run_launch(a1, NULL);
  char want[160];
  snprintf(want, sizeof want, "failed: node 1: cannot reach node 0's launcher at 127.0.0.1:%s within 1 s", ports[1]);
  CHECK(r[0].code == 1 && r[0].secs < 6.0 && strstr(r[0].err, want));
  CHECK(strstr(r[0].out, "[rank") == NULL); /* no rank was started */
  dump_on_failure(t, before, r, 1);
  free_result(&r[0]);

  pick_ports(ports);
  LaunchProc lp[2];
  for (int n = 0; n < 2; n++) {
    char *argv[] = {"launch", "-n", n ? "3" : "2", NODE_ARGS(n ? "1" : "0", "2", ports), "--grace", "1",
                    "sleep", "30", NULL};
    lp[n] = start_launch(argv, NULL);
  }
  for (int n = 0; n < 2; n++) r[n] = finish_launch(&lp[n]);
  for (int n = 0; n < 2; n++) {
    CHECK(r[n].code == 2 && r[n].secs < 8.0);
    CHECK(strstr(r[n].err, "failed: the launcher of node 1 runs -n 3 --nnodes 2, but node 0's runs -n 2") != NULL);
  }
  dump_on_failure(t, before, r, 2);
  for (int n = 0; n < 2; n++) free_result(&r[n]);
}

TEST(dist_launch_failure_stops_others) {
  char *argv[] = {"launch", "-n", "3", "--grace", "1", "sh", "-c",
                  "if [ $RANK = 1 ]; then sleep 0.2; echo bye; exit 3; fi; sleep 30", NULL};
  LaunchResult r = run_launch(argv, NULL);
  CHECK(r.code == 3);
  CHECK(r.secs < 10.0); /* the sleeping ranks were stopped, not waited for */
  CHECK(strstr(r.out, "[rank 1] bye") != NULL);
  CHECK(strstr(r.err, "rank 1 (pid ") && strstr(r.err, "exited with code 3; stopping the other 2 ranks"));
  CHECK(strstr(r.err, "failed: rank 1 exited with code 3") != NULL);
  free_result(&r);
}

TEST(dist_launch_crash_by_signal) {
  /* A rank that ignores SIGTERM still goes: SIGKILL after the grace period. */
  char *argv[] = {"launch", "-n", "3", "--grace", "0.5", "sh", "-c",
                  "if [ $RANK = 2 ]; then kill -SEGV $$; fi; trap '' TERM; sleep 30 & wait; sleep 30", NULL};
  LaunchResult r = run_launch(argv, NULL);
  CHECK(r.code == 128 + SIGSEGV);
  CHECK(r.secs < 10.0);
  CHECK(strstr(r.err, "rank 2 (pid ") && strstr(r.err, "killed by signal 11 (SIGSEGV"));
  free_result(&r);
}

TEST(dist_launch_usage_errors) {
  char *a1[] = {"launch", "sh", "-c", "true", NULL};
  LaunchResult r = run_launch(a1, NULL);
  CHECK(r.code == 2 && strstr(r.err, "number of processes is missing"));
  free_result(&r);
  char *a2[] = {"launch", "-n", "2", NULL};
  r = run_launch(a2, NULL);
  CHECK(r.code == 2 && strstr(r.err, "no program to run"));
  free_result(&r);
  char *a3[] = {"launch", "--help", NULL};
  r = run_launch(a3, NULL);
  CHECK(r.code == 0 && strstr(r.out, "usage: tilescale launch -n N") && strstr(r.out, "LOCAL_WORLD_SIZE"));
  free_result(&r);
  char *a4[] = {"launch", "-n", "2", "--node-rank", "1", "true", NULL};
  r = run_launch(a4, NULL);
  CHECK(r.code == 2 && strstr(r.err, "out of range"));
  free_result(&r);
  char *a5[] = {"launch", "-n", "0", "true", NULL};
  r = run_launch(a5, NULL);
  CHECK(r.code == 2 && strstr(r.err, "bad value '0' for -n"));
  free_result(&r);
  char *a6[] = {"launch", "-n", "2", "/nonexistent/prog", NULL};
  r = run_launch(a6, NULL);
  CHECK(r.code == 127 && strstr(r.err, "cannot run '/nonexistent/prog'") && strstr(r.err, "code 127"));
  free_result(&r);
}

TEST(dist_launch_timeout) {
  char *argv[] = {"launch", "-n", "2", "--timeout", "0.5", "--grace", "0.5", "sleep", "30", NULL};
  LaunchResult r = run_launch(argv, NULL);
  CHECK(r.code == 124);
  CHECK(r.secs < 5.0);
  CHECK(strstr(r.err, "timed out after 0.5 s; ranks still running: 0 1") != NULL);
  free_result(&r);
}

/* The launcher + ts_dist_init (host_only) + the rendezvous, end to end with real ranks. */
TEST(dist_launch_rendezvous_end_to_end) {
  char *argv[] = {"launch", "-n", "4", "/proc/self/exe", NULL};
  const char *env[] = {"TS_DIST_TEST_CHILD=allgather", NULL};
  LaunchResult r = run_launch(argv, env);
  CHECK(r.code == 0);
  for (int k = 0; k < 4; k++) {
    char want[96];
    snprintf(want, sizeof want, "[rank %d] ok rank %d of 4 local %d sum 100", k, k, k);
    CHECK(strstr(r.out, want) != NULL);
  }
  if (r.code != 0) fprintf(stderr, "%s%s", r.out, r.err);
  free_result(&r);
}

TEST(dist_launch_rendezvous_timeout_is_an_error) {
  char *argv[] = {"launch", "-n", "2", "/proc/self/exe", NULL};
  const char *env[] = {"TS_DIST_TEST_CHILD=absent", "TILESCALE_RDZV_TIMEOUT_MS=400", NULL};
  LaunchResult r = run_launch(argv, env);
  CHECK(r.code == 1);
  CHECK(r.secs < 10.0);
  CHECK(strstr(r.err, "[rank 0] init failed: ts_dist_init: rendezvous: rank 0 timed out after 400 ms") != NULL);
  CHECK(strstr(r.err, "missing ranks: 1") != NULL);
  CHECK(strstr(r.err, "failed: rank 0 exited with code 1") != NULL);
  free_result(&r);
}

/* ---- public API without the launcher ------------------------------------------------------------ */
TEST(dist_init_host_only_single_and_bad_env) {
  ts_context *ctx = NULL;
  REQUIRE(ts_context_create(NULL, &ctx) == TS_OK);
  ts_dist_options o = ts_dist_default_options();
  o.host_only = 1;
  o.rank = 0;
  o.world_size = 1;
  ts_dist *d = NULL;
  REQUIRE(ts_dist_init(ctx, &o, &d) == TS_OK);
  CHECK(ts_dist_rank(d) == 0 && ts_dist_world_size(d) == 1 && ts_dist_local_world_size(d) == 1);
  CHECK(ts_dist_backend_of(d) == TS_DIST_BACKEND_IPC);
  int v = 7, all = 0;
  CHECK(ts_dist_allgather(d, &v, sizeof v, &all) == TS_OK && all == 7);
  void *p = NULL;
  CHECK(ts_dist_malloc(d, 64, &p) == TS_ERR_INVALID_ARGUMENT && strstr(ts_last_error(ctx), "host_only"));
  ts_dist_finalize(d);

  o.rank = 3;
  o.world_size = 2;
  CHECK(ts_dist_init(ctx, &o, &d) == TS_ERR_INVALID_ARGUMENT && strstr(ts_last_error(ctx), "out of range"));
  o.size = 8;
  CHECK(ts_dist_init(ctx, &o, &d) == TS_ERR_INVALID_ARGUMENT && strstr(ts_last_error(ctx), "options.size"));
  ts_context_destroy(ctx);
}

/* ---- NVSHMEM discovery ------------------------------------------------------------------------- */
TEST(rt_nvshmem_find_home_and_report) {
  char dir[] = "/tmp/ts_nvshmem_XXXXXX";
  REQUIRE(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/lib", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/include", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/lib/libnvshmem_host.so.3", dir);
  FILE *f = fopen(path, "w");
  REQUIRE(f);
  fclose(f);
  snprintf(path, sizeof path, "%s/lib/libnvshmem_device.bc", dir);
  f = fopen(path, "w");
  REQUIRE(f);
  fclose(f);

  char *old = getenv("NVSHMEM_HOME") ? ts_strdup(getenv("NVSHMEM_HOME")) : NULL;
  setenv("NVSHMEM_HOME", dir, 1);
  RtNvshmemPaths p = {0};
  StrBuf why = {0};
  CHECK(rt_nvshmem_find(&p, &why));
  snprintf(path, sizeof path, "%s/lib/libnvshmem_host.so.3", dir);
  CHECK_STR(sb_str(&p.host_lib), path);
  snprintf(path, sizeof path, "%s/include", dir);
  CHECK_STR(sb_str(&p.include_dir), path);
  CHECK(strstr(sb_str(&p.device_bc), "libnvshmem_device.bc") != NULL);
  rt_nvshmem_paths_free(&p);

  /* An empty NVSHMEM_HOME: found elsewhere (a GPU machine with the pip package), or an error
   * that lists every place, NVSHMEM_HOME first. */
  snprintf(path, sizeof path, "%s/lib/libnvshmem_host.so.3", dir);
  unlink(path);
  memset(&p, 0, sizeof p);
  if (!rt_nvshmem_find(&p, &why)) {
    CHECK(strstr(sb_str(&why), "NVSHMEM not found") != NULL);
    CHECK(strstr(sb_str(&why), path) != NULL);
    CHECK(strstr(sb_str(&why), "nvidia/nvshmem") != NULL);
    CHECK(strstr(sb_str(&why), "nvidia-nvshmem-cu13") != NULL);
  } else {
    CHECK(strstr(sb_str(&p.host_lib), dir) == NULL);
  }
  rt_nvshmem_paths_free(&p);
  sb_free(&why);
  if (old) setenv("NVSHMEM_HOME", old, 1);
  else unsetenv("NVSHMEM_HOME");
  ts_free(old);
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  CHECK(system(path) == 0);
}

/* $NVSHMEM_SRC: a source tree built in place (build/src/lib) is found when NVSHMEM_HOME is
 * unset, and an installed one (build/install) is preferred to it. */
static void touch_file(TestCtx *t, const char *dir, const char *rel) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && : > '%s'", path, path);
  CHECK(system(cmd) == 0);
}

TEST(rt_nvshmem_find_source_tree) {
  char dir[] = "/tmp/ts_nvshmem_src_XXXXXX";
  REQUIRE(mkdtemp(dir));
  touch_file(t, dir, "build/src/lib/libnvshmem_host.so.3");
  touch_file(t, dir, "build/src/lib/libnvshmem_device.bc");
  touch_file(t, dir, "build/src/include/nvshmem.h");
  char *old_home = getenv("NVSHMEM_HOME") ? ts_strdup(getenv("NVSHMEM_HOME")) : NULL;
  char *old_src = getenv("NVSHMEM_SRC") ? ts_strdup(getenv("NVSHMEM_SRC")) : NULL;
  unsetenv("NVSHMEM_HOME");
  setenv("NVSHMEM_SRC", dir, 1);
  RtNvshmemPaths p = {0};
  StrBuf why = {0};
  char want[512];
  CHECK(rt_nvshmem_find(&p, &why));
  snprintf(want, sizeof want, "%s/build/src/lib/libnvshmem_host.so.3", dir);
  CHECK_STR(sb_str(&p.host_lib), want);
  snprintf(want, sizeof want, "%s/build/src/include", dir);
  CHECK_STR(sb_str(&p.include_dir), want);
  CHECK(strstr(sb_str(&p.device_bc), "build/src/lib/libnvshmem_device.bc") != NULL);
  rt_nvshmem_paths_free(&p);

  touch_file(t, dir, "build/install/lib/libnvshmem_host.so.3");
  memset(&p, 0, sizeof p);
  CHECK(rt_nvshmem_find(&p, &why));
  snprintf(want, sizeof want, "%s/build/install/lib/libnvshmem_host.so.3", dir);
  CHECK_STR(sb_str(&p.host_lib), want);
  rt_nvshmem_paths_free(&p);

  /* NVSHMEM_HOME still comes first. */
  char home[] = "/tmp/ts_nvshmem_home_XXXXXX";
  REQUIRE(mkdtemp(home));
  touch_file(t, home, "lib64/libnvshmem_host.so.3");
  setenv("NVSHMEM_HOME", home, 1);
  memset(&p, 0, sizeof p);
  CHECK(rt_nvshmem_find(&p, &why));
  snprintf(want, sizeof want, "%s/lib64/libnvshmem_host.so.3", home);
  CHECK_STR(sb_str(&p.host_lib), want);
  rt_nvshmem_paths_free(&p);
  sb_free(&why);

  if (old_home) setenv("NVSHMEM_HOME", old_home, 1);
  else unsetenv("NVSHMEM_HOME");
  if (old_src) setenv("NVSHMEM_SRC", old_src, 1);
  else unsetenv("NVSHMEM_SRC");
  ts_free(old_home);
  ts_free(old_src);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, home);
  CHECK(system(cmd) == 0);
}

/* ---- dist.cuh through NVRTC ------------------------------------------------------------------------- */
/* Every primitive, every valid ld/st combination, both with and without the debug timeout. */
static const char dist_probe_src[] =
    "#include <tilescale/dist.cuh>\n"
    "using namespace ts::dist;\n"
    "extern \"C\" __global__ void probe(int *p, long *out, unsigned *bar, int *bb, float *f, uint64_t *f64,\n"
    "                                   __half *h, uint4 *v, __nv_bfloat16 *bf) {\n"
    "  long x = 0;\n"
    "#define LD3(S, NC, NA) x += (long)ld<Sem::S, Scope::CTA, NC, NA>(p) + (long)ld<Sem::S, Scope::GPU, NC, NA>(p, 1) "
    "+ (long)ld<Sem::S, Scope::SYS, NC, NA>(p);\n"
    "#define ST3(S, NA) st<Sem::S, Scope::CTA, NA>(p, 1); st<Sem::S, Scope::GPU, NA>(p, 2, 1); "
    "st<Sem::S, Scope::SYS, NA>(p, 3);\n"
    "  LD3(WEAK, false, false) LD3(WEAK, false, true) LD3(WEAK, true, false) LD3(WEAK, true, true)\n"
    "  LD3(VOLATILE, false, false) LD3(RELAXED, false, false) LD3(RELAXED, false, true)\n"
    "  LD3(ACQUIRE, false, false) LD3(ACQUIRE, false, true)\n"
    "  ST3(WEAK, false) ST3(WEAK, true) ST3(VOLATILE, false) ST3(RELAXED, false) ST3(RELAXED, true)\n"
    "  ST3(RELEASE, false) ST3(RELEASE, true)\n"
    "  st<Sem::RELEASE, Scope::SYS>(f, 1.5f); st<Sem::RELAXED, Scope::GPU>(h, __float2half(1.0f));\n"
    "  st<Sem::RELEASE, Scope::SYS>(f64, 7); st(v, make_uint4(1, 2, 3, 4)); st(bf, bf[1]);\n"
    "  uint4 w; ld<Sem::ACQUIRE, Scope::SYS>(v, w); x += w.x + (long)(float)ld<Sem::RELAXED>(h);\n"
    "  x += wait_eq(p, 1) + wait_ne(p, 1, 1) + wait_ge(f64, 3) + wait_le(f64, 3ull) + wait_gt(p, 0) + wait_lt(p, 9);\n"
    "  fence_cta(); fence_gpu(); fence_sys();\n"
    "  x += atom_add(p, 1) + atom_add<Sem::RELEASE, Scope::SYS>(p, 1, 0) + atom_add<Sem::ACQUIRE, Scope::CTA>(f64, 1);\n"
    "  x += atom_add_acq_rel<Scope::GPU>(p, 2);\n"
    "  x += warp_any(x > 0) + warp_all(x > 1) + shuffle_elect<0>() + shuffle_elect<128>();\n"
    "  put_warp(f, f + 100, 64, 1); get_warp<2>(f, f + 200, 33, 0); put_block(h, h + 10, 77, 1);\n"
    "  get_block(v, v + 4, 4, 1);\n"
    "  barrier_blocks(bb); sync_blocks(bb); sync_grid(bar); init_barrier_gpu(bar); sync_barrier_gpu(bar + 1, 4);\n"
    "  x += rank() + num_ranks();\n"
    "  out[0] = x;\n"
    "}\n";

static bool compile_probe(TestCtx *t, const char *src, const char *arch, StrBuf *err, bool *skipped) {
  RtNvrtc nv = {0};
  StrBuf why = {0};
  *skipped = false;
  if (!rt_nvrtc_open(&nv, &why)) {
    printf("  (skipped %s: NVRTC not available: %s)\n", t->name, sb_str(&why));
    sb_free(&why);
    *skipped = true;
    return false;
  }
  RtJitInput in = {0};
  in.source = src;
  in.name = "dist_probe.cu";
  if (!drv_parse_arch(arch, &in.target)) {
    rt_nvrtc_close(&nv);
    sb_free(&why);
    return false;
  }
  in.compiler = TS_COMPILER_NVRTC;
  in.headers = ts_device_headers;
  in.nheaders = ts_device_headers_count;
  RtJitOutput out = {0};
  ts_status s = rt_jit_compile(&nv, &in, &out, err);
  bool ok = s == TS_OK && out.cubin_size > 0;
  /* The table must survive in the binary under its C name, for cuModuleGetGlobal. */
  if (ok) {
    const char *needle = "ts_dist_meta";
    bool found = false;
    for (size_t i = 0; !found && i + strlen(needle) <= out.cubin_size; i++)
      found = memcmp((const char *)out.cubin + i, needle, strlen(needle)) == 0;
    CHECK(found);
  }
  rt_jit_output_free(&out);
  rt_nvrtc_close(&nv);
  sb_free(&why);
  return ok;
}

TEST(dist_cuh_nvrtc_sm90a) {
  StrBuf err = {0}, src = {0};
  bool skipped;
  bool ok = compile_probe(t, dist_probe_src, "sm_90a", &err, &skipped);
  if (skipped) return;
  if (!ok) fprintf(stderr, "%s\n", sb_str(&err));
  CHECK(ok);
  /* With the debug timeout baked in (what the runtime does for TILESCALE_WAIT_TIMEOUT_MS). */
  sb_clear(&err);
  sb_append(&src, "#define TILESCALE_WAIT_TIMEOUT_MS 1500\n");
  sb_append(&src, dist_probe_src);
  ok = compile_probe(t, sb_str(&src), "sm_90a", &err, &skipped);
  if (!ok) fprintf(stderr, "%s\n", sb_str(&err));
  CHECK(ok);
  /* And for sm_80 (no elect.sync there). */
  sb_clear(&err);
  ok = compile_probe(t, dist_probe_src, "sm_80", &err, &skipped);
  if (!ok) fprintf(stderr, "%s\n", sb_str(&err));
  CHECK(ok);
  sb_free(&err);
  sb_free(&src);
}

/* The NVSHMEM family on the ipc backend (dist_shmem.cuh). */
TEST(dist_shmem_cuh_nvrtc_sm90a) {
  static const char src[] =
      "#include <tilescale/dist_shmem.cuh>\n"
      "using namespace ts::shmem;\n"
      "extern \"C\" __global__ void shm(char *a, char *b, uint64_t *sig, int *x, uint64_t *out) {\n"
      "  int pe = (my_pe() + 1) % n_pes();\n"
      "  putmem(a, b, 10, pe); getmem(a, b, 10, pe); putmem_warp(a, b, 100, pe); getmem_nbi_warp(a, b, 7, pe);\n"
      "  putmem_nbi_block(a, b, 4096, pe); getmem_block(a, b, 33, pe); int_p(x, 5, pe); fence(); quiet();\n"
      "  putmem_signal_nbi_block(a, b, 256, sig, 1, SIGNAL_ADD, pe); putmem_signal_warp(a, b, 64, sig, 2, SIGNAL_SET, pe);\n"
      "  putmem_signal(a, b, 8, sig, 3, 9, pe); signal_op(sig, 4, SIGNAL_SET, pe);\n"
      "  out[0] = signal_wait_until(sig, CMP_GE, 1) + signal_wait_until(sig + 1, 0, 99);\n"
      "}\n";
  StrBuf err = {0};
  bool skipped;
  bool ok = compile_probe(t, src, "sm_90a", &err, &skipped);
  if (skipped) return;
  if (!ok) fprintf(stderr, "%s\n", sb_str(&err));
  CHECK(ok);
  sb_free(&err);
}

TEST(dist_cuh_invalid_combinations_are_compile_errors) {
  static const struct {
    const char *call, *message;
  } cases[] = {
      {"st<Sem::ACQUIRE, Scope::GPU>(p, 1);", "a store cannot have acquire semantics"},
      {"x = ld<Sem::RELEASE, Scope::SYS>(p);", "a load cannot have release semantics"},
      {"x = ld<Sem::ACQUIRE, Scope::GPU, true>(p);", "non-coherent loads (nc=True) are weak"},
      {"x = ld<Sem::VOLATILE, Scope::GPU, false, true>(p);", "volatile loads take no L1::no_allocate"},
      {"st<Sem::VOLATILE, Scope::GPU, true>(p, 1);", "volatile stores take no L1::no_allocate"},
      {"x = wait_eq((short *)p, 1);", "flags are 32- or 64-bit integers"},
  };
  for (int i = 0; i < TS_ARRAY_LEN(cases); i++) {
    StrBuf src = {0}, err = {0};
    sb_printf(&src,
              "#include <tilescale/dist.cuh>\nusing namespace ts::dist;\n"
              "extern \"C\" __global__ void bad(int *p, int *o) { int x = 0; %s o[0] = x; }\n",
              cases[i].call);
    bool skipped;
    bool ok = compile_probe(t, sb_str(&src), "sm_90a", &err, &skipped);
    if (skipped) return;
    CHECK(!ok);
    if (!strstr(sb_str(&err), cases[i].message)) {
      fprintf(stderr, "  case %s: expected '%s' in:\n%s\n", cases[i].call, cases[i].message, sb_str(&err));
      t->failures++;
    }
    sb_free(&src);
    sb_free(&err);
  }
}

/* ---- launcher environments (env.c) ------------------------------------------------------------ */
/* Every variable ts_dist_env_read looks at: cleared around each case, restored after. */
static const char *const ENV_NAMES[] = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
    "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "SLURM_PROCID", "SLURM_NTASKS",
    "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_TASKS_PER_NODE", "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST", "SLURM_JOB_ID"};
#define ENV_COUNT (sizeof ENV_NAMES / sizeof ENV_NAMES[0])

typedef struct SavedEnv {
  char *value[ENV_COUNT];
} SavedEnv;

static void env_save_clear(SavedEnv *s) {
  for (size_t i = 0; i < ENV_COUNT; i++) {
    const char *v = getenv(ENV_NAMES[i]);
    s->value[i] = v ? strdup(v) : NULL;
    unsetenv(ENV_NAMES[i]);
  }
}

static void env_restore(SavedEnv *s) {
  for (size_t i = 0; i < ENV_COUNT; i++) {
    if (s->value[i]) setenv(ENV_NAMES[i], s->value[i], 1);
    else unsetenv(ENV_NAMES[i]);
    free(s->value[i]);
  }
}

/* Sets "NAME=value" pairs (NULL-terminated) on a cleared environment and reads it. */
static ts_status env_case(ts_context *ctx, ts_dist_env *e, const char *const *pairs) {
  for (size_t i = 0; i < ENV_COUNT; i++) unsetenv(ENV_NAMES[i]);
  for (; *pairs; pairs++) {
    char name[64];
    const char *eq = strchr(*pairs, '=');
    snprintf(name, sizeof name, "%.*s", (int)(eq - *pairs), *pairs);
    setenv(name, eq + 1, 1);
  }
  return ts_dist_env_read(ctx, e);
}

TEST(dist_env_launchers) {
  SavedEnv saved;
  env_save_clear(&saved);
  ts_context *ctx = NULL;
  CHECK(ts_context_create(NULL, &ctx) == TS_OK);
  ts_dist_env e;

  /* No launcher: a group of one on localhost. */
  CHECK(env_case(ctx, &e, (const char *[]){NULL}) == TS_OK);
  CHECK(e.rank == 0 && e.world_size == 1 && e.local_rank == 0 && e.local_world_size == 1);
  CHECK(strcmp(e.launcher, "none") == 0 && strcmp(e.master_addr, "127.0.0.1") == 0 && e.master_port == 29500);

  /* torchrun / tilescale launch. */
  CHECK(env_case(ctx, &e, (const char *[]){"RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4",
                                           "MASTER_ADDR=node0", "MASTER_PORT=1234", NULL}) == TS_OK);
  CHECK(e.rank == 5 && e.world_size == 8 && e.local_rank == 1 && e.local_world_size == 4);
  CHECK(strcmp(e.launcher, "torchrun") == 0 && strcmp(e.master_addr, "node0") == 0 && e.master_port == 1234);
  CHECK(ts_dist_env_local_rank() == 1);

  /* Open MPI, also when an enclosing SLURM allocation is visible: the first family wins. */
  CHECK(env_case(ctx, &e, (const char *[]){"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4",
                                           "OMPI_COMM_WORLD_LOCAL_RANK=3", "OMPI_COMM_WORLD_LOCAL_SIZE=4",
                                           "SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=1", "SLURM_LOCALID=0", NULL}) == TS_OK);
  CHECK(strcmp(e.launcher, "openmpi") == 0 && e.rank == 3 && e.world_size == 4 && e.local_rank == 3 &&
        e.local_world_size == 4);

  /* MPICH / Hydra. */
  CHECK(env_case(ctx, &e, (const char *[]){"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2",
                                           NULL}) == TS_OK);
  CHECK(strcmp(e.launcher, "mpich") == 0 && e.rank == 1 && e.world_size == 2 && e.local_rank == 1);

  /* A SLURM step: local size from the tasks-per-node text, rendezvous from the node list and job. */
  CHECK(env_case(ctx, &e, (const char *[]){"SLURM_PROCID=6", "SLURM_STEP_NUM_TASKS=7", "SLURM_LOCALID=0",
                                           "SLURM_NODEID=3", "SLURM_STEP_TASKS_PER_NODE=2(x3),1",
                                           "SLURM_STEP_NODELIST=gpu[007-010],cpu1", "SLURM_JOB_ID=123456", NULL}) ==
        TS_OK);
  CHECK(strcmp(e.launcher, "slurm") == 0 && e.rank == 6 && e.world_size == 7 && e.local_rank == 0 &&
        e.local_world_size == 1);
  CHECK(strcmp(e.master_addr, "gpu007") == 0 && e.master_port == 20000 + 123456 % 20000);

  /* A SLURM batch script (no step): not a group, whatever SLURM_NTASKS says. */
  CHECK(env_case(ctx, &e, (const char *[]){"SLURM_PROCID=0", "SLURM_NTASKS=8", "SLURM_LOCALID=0", NULL}) == TS_OK);
  CHECK(strcmp(e.launcher, "none") == 0 && e.world_size == 1);

  /* Malformed and inconsistent environments are errors naming the variable. */
  CHECK(env_case(ctx, &e, (const char *[]){"RANK=x", "WORLD_SIZE=2", NULL}) == TS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "RANK='x'") != NULL);
  CHECK(env_case(ctx, &e, (const char *[]){"RANK=2", "WORLD_SIZE=2", NULL}) == TS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "rank 2 of 2") != NULL);
  CHECK(env_case(ctx, &e, (const char *[]){"RANK=0", "WORLD_SIZE=2", "MASTER_PORT=70000", NULL}) ==
        TS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ts_last_error(ctx), "MASTER_PORT") != NULL);
  CHECK(env_case(NULL, &e, (const char *[]){"RANK=-1", NULL}) == TS_ERR_INVALID_ARGUMENT); /* no context: no message */
  CHECK(ts_dist_env_read(ctx, NULL) == TS_ERR_INVALID_ARGUMENT);

  ts_context_destroy(ctx);
  env_restore(&saved);
}

/* A free TCP port in [lo, hi), or 0: SLURM derives its rendezvous port from the job id
 * (20000 + id % 20000), so the test picks a job id whose port is free. */
static int free_port_in(int lo, int hi) {
  for (int tries = 0; tries < 200; tries++) {
    int port = lo + (int)((unsigned)rand() % (unsigned)(hi - lo));
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0) close(fd);
    if (ok) return port;
  }
  return 0;
}

/* Two ranks of this test binary (TS_DIST_TEST_CHILD=allgather: ts_dist_init, allgather,
 * broadcast, barrier), started directly, not by `tilescale launch`, each with only a launcher
 * family's variables: what mpirun or srun would give them.  `vars` holds printf formats for
 * "NAME=value" with one %d, the rank. */
static void run_family_ranks(TestCtx *t, const char *const *vars, const char *what) {
  enum { NRANKS = 2 };
  pid_t pids[NRANKS];
  char out_path[NRANKS][32];
  for (int r = 0; r < NRANKS; r++) {
    snprintf(out_path[r], sizeof out_path[r], "/tmp/ts_family_XXXXXX");
    int fd = mkstemp(out_path[r]);
    REQUIRE(fd >= 0);
    fflush(stdout);
    fflush(stderr);
    pids[r] = fork();
    if (pids[r] == 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      for (size_t i = 0; i < ENV_COUNT; i++) unsetenv(ENV_NAMES[i]);
      for (int i = 0; vars[i]; i++) {
        char kv[256];
        snprintf(kv, sizeof kv, vars[i], r);
        char *eq = strchr(kv, '=');
        *eq = '\0';
        setenv(kv, eq + 1, 1);
      }
      setenv("TS_DIST_TEST_CHILD", "allgather", 1);
      setenv("TILESCALE_RDZV_TIMEOUT_MS", "20000", 1);
      execl(self_exe(), self_exe(), (char *)NULL);
      _exit(99);
    }
    close(fd);
  }
  for (int r = 0; r < NRANKS; r++) {
    int st = 0;
    waitpid(pids[r], &st, 0);
    char *out = ts_read_file(out_path[r], NULL);
    char want[96];
    snprintf(want, sizeof want, "ok rank %d of %d local %d sum 30", r, NRANKS, r);
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && out && strstr(out, want);
    if (!ok) fprintf(stderr, "%s rank %d: %s\n", what, r, out ? out : "(no output)");
    CHECK(ok);
    ts_free(out);
    unlink(out_path[r]);
  }
}

TEST(dist_env_launcher_families_end_to_end) {
  char port[32], job[48];
  snprintf(port, sizeof port, "MASTER_PORT=%d", free_port());
  const char *ompi[] = {"OMPI_COMM_WORLD_RANK=%d", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_RANK=%d",
                        "OMPI_COMM_WORLD_LOCAL_SIZE=2", "MASTER_ADDR=127.0.0.1", port, NULL};
  run_family_ranks(t, ompi, "Open MPI");
  snprintf(port, sizeof port, "MASTER_PORT=%d", free_port());
  const char *mpich[] = {"PMI_RANK=%d", "PMI_SIZE=2", "MPI_LOCALRANKID=%d", "MPI_LOCALNRANKS=2",
                         "MASTER_ADDR=127.0.0.1", port, NULL};
  run_family_ranks(t, mpich, "MPICH");
  snprintf(port, sizeof port, "MASTER_PORT=%d", free_port());
  const char *torchrun[] = {"RANK=%d", "WORLD_SIZE=2", "LOCAL_RANK=%d", "LOCAL_WORLD_SIZE=2",
                            "MASTER_ADDR=127.0.0.1", port, NULL};
  run_family_ranks(t, torchrun, "torchrun");
  /* srun: no MASTER_*: the address is the first host of the step's node list and the port
   * comes from the job id; SLURM_NTASKS as srun sets it too. */
  int p = free_port_in(20000, 40000);
  REQUIRE(p > 0);
  snprintf(job, sizeof job, "SLURM_JOB_ID=%d", 20000 * 7 + (p - 20000));
  const char *slurm[] = {"SLURM_PROCID=%d", "SLURM_NTASKS=2", "SLURM_STEP_NUM_TASKS=2", "SLURM_LOCALID=%d",
                         "SLURM_NODEID=0", "SLURM_STEP_TASKS_PER_NODE=2", "SLURM_STEP_NODELIST=localhost",
                         job, NULL};
  run_family_ranks(t, slurm, "SLURM");
}

TEST(dist_env_slurm_lists) {
  CHECK(dist_env_slurm_tasks_on_node("4", 0) == 4);
  CHECK(dist_env_slurm_tasks_on_node("2(x3),1", 2) == 2);
  CHECK(dist_env_slurm_tasks_on_node("2(x3),1", 3) == 1);
  CHECK(dist_env_slurm_tasks_on_node("2(x3),1", 4) == -1);
  CHECK(dist_env_slurm_tasks_on_node("2(x", 0) == -1);
  char host[32];
  CHECK(dist_env_slurm_first_host("node7", host, sizeof host) && strcmp(host, "node7") == 0);
  CHECK(dist_env_slurm_first_host("a1,b2", host, sizeof host) && strcmp(host, "a1") == 0);
  CHECK(dist_env_slurm_first_host("gpu[003-004,007]", host, sizeof host) && strcmp(host, "gpu003") == 0);
  CHECK(dist_env_slurm_first_host("n[1-2]-ib,x", host, sizeof host) && strcmp(host, "n1-ib") == 0);
  CHECK(!dist_env_slurm_first_host("gpu[", host, sizeof host));
  CHECK(!dist_env_slurm_first_host("averyveryveryverylonghostname-0123456789", host, sizeof host));
}
