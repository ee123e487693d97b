/* launch.c — `tilescale launch`: one process per GPU (DESIGN.md §7).  A CLI command, not part
 * of libtilescale: a library must not fork, take over signals or exit for its caller.
 *
 *   tilescale launch -n N [--nnodes K --node-rank R --master-addr A --master-port P] prog args
 *     -> fork N ranks (launch_rank.c), each with RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE
 *        MASTER_ADDR MASTER_PORT (rank 0 of the job serves the TCP rendezvous that
 *        ts_dist_init joins, src/distributed/bootstrap.c)
 *     -> one poll loop: the ranks' stdout/stderr (each line prefixed with its rank), a
 *        signalfd for SIGCHLD / SIGINT / SIGTERM / SIGHUP, and with several nodes the control
 *        link between node launchers (launch_node.c)
 *     -> the first rank to fail (non-zero exit or a signal) stops the others: SIGTERM to
 *        their process groups (or the SIGINT/SIGHUP/SIGTERM the launcher received), SIGKILL
 *        after a grace period; the launcher exits non-zero and names the rank and why.
 *     -> the launcher waits until every rank's process group is empty, so nothing it
 *        started outlives it; if it is killed itself, the ranks' parent-death signal and the
 *        guard (launch_guard.c) see to that.
 *
 * Signals arrive through a signalfd rather than a handler, so there is no global flag and
 * no race between "a child exited" and "poll started waiting". */
#include "launch.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tilescale_dist.h" /* TS_DIST_MAX_RANKS */

#define DEFAULT_MASTER_PORT 29500
#define DEFAULT_JOIN_TIMEOUT_S 300
#define LAUNCH_MAX_PROCS 1024

/* ---- small helpers -------------------------------------------------------------------------- */
void *launch_realloc(void *p, size_t bytes) {
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q) {
    fprintf(stderr, "tilescale launch: out of memory\n");
    exit(1);
  }
  return q;
}

void text_append(Text *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    t->cap = t->cap ? t->cap : 64;
    while (t->len + n + 1 > t->cap) t->cap *= 2;
    t->data = launch_realloc(t->data, t->cap);
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = 0;
}

void text_vprintf(Text *t, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n <= 0) return;
  text_append(t, "", 0);
  if (t->len + (size_t)n + 1 > t->cap) {
    while (t->len + (size_t)n + 1 > t->cap) t->cap *= 2;
    t->data = launch_realloc(t->data, t->cap);
  }
  vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
  t->len += (size_t)n;
}

void text_printf(Text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  text_vprintf(t, fmt, ap);
  va_end(ap);
}

const char *text_str(const Text *t) { return t->data ? t->data : ""; }

void text_clear(Text *t) {
  t->len = 0;
  if (t->data) t->data[0] = 0;
}

void text_free(Text *t) {
  free(t->data);
  *t = (Text){0};
}

double launch_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- options -------------------------------------------------------------------------------- */
static const char launch_usage[] =
    "usage: tilescale launch -n N [options] PROGRAM [ARGS...]\n"
    "\n"
    "Starts N processes of PROGRAM on this node, one per GPU, and watches them.  Each gets\n"
    "  RANK              global rank (node_rank * N + local rank)\n"
    "  WORLD_SIZE        N * nnodes\n"
    "  LOCAL_RANK        rank on this node (use it as the CUDA device)\n"
    "  LOCAL_WORLD_SIZE  N\n"
    "  MASTER_ADDR, MASTER_PORT   where rank 0 serves the rendezvous (ts_dist_init)\n"
    "and NVSHMEM_DISABLE_NVLS=1, NCCL_NVLS_ENABLE=0 (NVLink multicast stays off).\n"
    "Every output line is prefixed with its rank.  When a rank exits non-zero or is killed\n"
    "by a signal, the others are stopped and the launcher exits non-zero naming that rank.\n"
    "\n"
    "Each rank runs in a process group of its own.  Stopping a rank stops its group (SIGTERM,\n"
    "SIGKILL after --grace), and what a rank leaves in its group when it exits is stopped too.\n"
    "SIGINT, SIGTERM or SIGHUP sent to the launcher (Ctrl-C) is passed on to every rank's group;\n"
    "a second one sends SIGKILL.  Ranks die with the launcher even if it is killed (SIGKILL).\n"
    "If the launcher's output pipe closes (`tilescale launch ... | head`), it stops the ranks\n"
    "and exits 141.  Rank 0 of node 0 reads the launcher's stdin unless that is a terminal;\n"
    "the other ranks read /dev/null.\n"
    "\n"
    "Several nodes: start one launcher per node with the same -n, --nnodes, --master-addr\n"
    "and --master-port.  The launchers of nodes 1..K-1 connect to node 0's launcher (at\n"
    "MASTER_ADDR, --control-port); a failure on any node stops the ranks of every node, and\n"
    "every launcher exits non-zero naming the failed rank.\n"
    "\n"
    "options:\n"
    "  -n, --nproc N           processes on this node (also --nproc-per-node)\n"
    "  --nnodes K              nodes in the job (default 1; start one launcher per node)\n"
    "  --node-rank R           this node's index, 0..K-1 (default 0)\n"
    "  --master-addr A         address of the node running rank 0 (default $MASTER_ADDR, else\n"
    "                          127.0.0.1)\n"
    "  --master-port P         rendezvous port (default $MASTER_PORT; on one node a free port is\n"
    "                          picked; otherwise 29500)\n"
    "  --control-port P        port of node 0's launcher for the other nodes' launchers\n"
    "                          (default MASTER_PORT + 1)\n"
    "  --join-timeout S        node 0: fail if the other nodes' launchers have not joined within\n"
    "                          S seconds; other nodes: fail if joining node 0's launcher (connect\n"
    "                          and handshake) takes longer (default 300)\n"
    "  --timeout S             stop every rank and fail if the job runs longer than S seconds\n"
    "  --grace S               seconds between SIGTERM and SIGKILL when stopping ranks (default 5)\n"
    "  --no-prefix             pass output through without rank prefixes\n"
    "  -h, --help              this text\n";

static bool parse_int(const char *s, int lo, int hi, int *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*end || errno || v < lo || v > hi) return false;
  *out = (int)v;
  return true;
}

static bool parse_seconds(const char *s, double *out) {
  if (!s || !*s) return false;
  char *end;
  double v = strtod(s, &end);
  if (*end || !(v >= 0)) return false;
  *out = v;
  return true;
}

/* Options up to the program name; "--" ends them explicitly.  Returns 0 when the launch
 * should go on, else the exit code (2: usage error, 0: --help). */
static int parse_args(int argc, char **argv, LaunchOpts *o) {
  memset(o, 0, sizeof *o);
  o->nproc = -1;
  o->nnodes = 1;
  o->master_port = -1;
  o->control_port = -1;
  o->grace_s = 5;
  o->join_timeout_s = DEFAULT_JOIN_TIMEOUT_S;
  o->prefix = true;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[0] != '-' || a[1] == 0) break;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(launch_usage, stdout);
      return -1;
    }
    if (strcmp(a, "--no-prefix") == 0) {
      o->prefix = false;
      continue;
    }
    /* Every other option takes a value, as "--opt V" or "--opt=V" (and "-nV"). */
    const char *val = NULL;
    char name[64];
    const char *eq = strchr(a, '=');
    if (eq && (size_t)(eq - a) < sizeof name) {
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = 0;
      val = eq + 1;
    } else if (strncmp(a, "-n", 2) == 0 && a[2] >= '0' && a[2] <= '9') {
      snprintf(name, sizeof name, "-n");
      val = a + 2;
    } else {
      snprintf(name, sizeof name, "%s", a);
      if (i + 1 >= argc) {
        fprintf(stderr, "tilescale launch: option %s needs a value\n", a);
        return 2;
      }
      val = argv[++i];
    }
    bool ok;
    if (!strcmp(name, "-n") || !strcmp(name, "--nproc") || !strcmp(name, "--nproc-per-node") ||
        !strcmp(name, "--nproc_per_node"))
      ok = parse_int(val, 1, LAUNCH_MAX_PROCS, &o->nproc);
    else if (!strcmp(name, "--nnodes"))
      ok = parse_int(val, 1, 1 << 20, &o->nnodes);
    else if (!strcmp(name, "--node-rank") || !strcmp(name, "--node_rank"))
      ok = parse_int(val, 0, 1 << 20, &o->node_rank);
    else if (!strcmp(name, "--master-addr") || !strcmp(name, "--master_addr"))
      ok = *val != 0, o->master_addr = val;
    else if (!strcmp(name, "--master-port") || !strcmp(name, "--master_port"))
      ok = parse_int(val, 1, 65535, &o->master_port);
    else if (!strcmp(name, "--control-port"))
      ok = parse_int(val, 1, 65535, &o->control_port);
    else if (!strcmp(name, "--join-timeout"))
      ok = parse_seconds(val, &o->join_timeout_s) && o->join_timeout_s > 0;
    else if (!strcmp(name, "--timeout"))
      ok = parse_seconds(val, &o->timeout_s);
    else if (!strcmp(name, "--grace"))
      ok = parse_seconds(val, &o->grace_s);
    else {
      fprintf(stderr, "tilescale launch: unknown option '%s' (see tilescale launch --help)\n", name);
      return 2;
    }
    if (!ok) {
      fprintf(stderr, "tilescale launch: bad value '%s' for %s\n", val, name);
      return 2;
    }
  }
  if (o->nproc < 0) {
    fprintf(stderr, "tilescale launch: the number of processes is missing (-n N)\n%s", launch_usage);
    return 2;
  }
  if (o->node_rank >= o->nnodes) {
    fprintf(stderr, "tilescale launch: --node-rank %d is out of range for --nnodes %d\n", o->node_rank, o->nnodes);
    return 2;
  }
  if ((long)o->nproc * o->nnodes > TS_DIST_MAX_RANKS) {
    fprintf(stderr, "tilescale launch: %d ranks in all; at most %d are supported\n", o->nproc * o->nnodes,
            TS_DIST_MAX_RANKS);
    return 2;
  }
  if (i >= argc) {
    fprintf(stderr, "tilescale launch: no program to run\n%s", launch_usage);
    return 2;
  }
  o->prog = &argv[i];
  return 0;
}

/* The port a socket bound to `port` on this host got (0: the kernel's choice), released
 * again; -1 when it cannot be bound. */
static int bind_port(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons((uint16_t)port);
  socklen_t len = sizeof a;
  int got = bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0
                ? ntohs(a.sin_port)
                : -1;
  close(fd);
  return got;
}

/* Is `port` (and the one after it, the control port) free to bind on this host now? */
static bool port_pair_free(int port) { return bind_port(port) == port && bind_port(port + 1) == port + 1; }

/* The first port of the kernel's ephemeral range (the ports bind(0) and outgoing connections
 * get), from /proc; 32768 (Linux's default) when it cannot be read. */
static int ephemeral_low(void) {
  int lo = 32768, hi = 0;
  FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
  if (f) {
    if (fscanf(f, "%d %d", &lo, &hi) != 2) lo = 32768;
    fclose(f);
  }
  return lo;
}

/* A free TCP port on this host for the rendezvous, below the ephemeral range: a port the
 * kernel chose by bind(0) lies inside it, where the job's own NCCL or NVSHMEM sockets (bound
 * to port 0 meanwhile) can take it before rank 0 listens ("address already in use", seen on
 * 2 GPUs).  Random among [max(1024, low - 16384), low); bind(0) when none of 64 is free.
 * The port is still released before rank 0 binds it; a failure then says "cannot listen on
 * port P", never hangs. */
static int pick_free_port(void) {
  int lo = ephemeral_low(), base = lo - 16384 > 1024 ? lo - 16384 : 1024;
  unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL) * 2654435761u;
  for (int tries = 0; lo - 1 > base && tries < 64; tries++) {
    seed = seed * 1103515245u + 12345u;
    int port = base + (int)((seed >> 8) % (unsigned)(lo - 1 - base));
    if (port_pair_free(port)) return port;
  }
  int port = bind_port(0);
  return port > 0 ? port : DEFAULT_MASTER_PORT;
}

/* Fills in what the options left to the environment or to us. */
static void default_addresses(LaunchOpts *o) {
  if (!o->master_addr) o->master_addr = getenv("MASTER_ADDR");
  if (!o->master_addr || !*o->master_addr) o->master_addr = "127.0.0.1";
  if (o->master_port < 0) {
    const char *env_port = getenv("MASTER_PORT");
    if (!env_port || !parse_int(env_port, 1, 65535, &o->master_port))
      o->master_port = o->nnodes == 1 ? pick_free_port() : DEFAULT_MASTER_PORT;
  }
  if (o->control_port < 0) o->control_port = o->master_port < 65535 ? o->master_port + 1 : o->master_port - 1;
}

/* ---- the job -------------------------------------------------------------------------------- */
int running_ranks(const Job *j) {
  int n = 0;
  for (int i = 0; i < j->o->nproc; i++) n += j->procs[i].running;
  return n;
}

void job_fail(Job *j, int code, bool tell, const char *fmt, ...) {
  if (j->failed) return;
  j->failed = true;
  j->exit_code = code ? code : 1;
  va_list ap;
  va_start(ap, fmt);
  text_vprintf(&j->why, fmt, ap);
  va_end(ap);
  if (j->multi && tell) node_link_tell_fail(j);
  ranks_signal(j, j->stop_sig ? j->stop_sig : SIGTERM);
}

static int open_pipes(const Job *j) {
  int n = 0;
  for (int i = 0; i < j->o->nproc; i++) n += (j->procs[i].fd[0] >= 0) + (j->procs[i].fd[1] >= 0);
  return n;
}

/* Rank p exited: unless it succeeded or we stopped it, the job failed.  Whatever it left
 * in its process group is stopped now either way. */
static void on_rank_exit(Job *j, RankProc *p) {
  int st = p->status;
  bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  if (!ok && !p->stopped_by_us && !j->failed) {
    Text t = {0};
    describe_status(&t, st);
    fprintf(stderr, "tilescale launch: rank %d (pid %d)%s %s", p->rank, (int)p->pid, j->on_node, text_str(&t));
    int others = running_ranks(j);
    if (others) fprintf(stderr, "; stopping the other %d rank%s", others, others == 1 ? "" : "s");
    if (j->multi) fprintf(stderr, "%s the ranks of the other nodes", others ? " and" : "; stopping");
    fputc('\n', stderr);
    job_fail(j, status_exit_code(st), true, "rank %d %s%s", p->rank, text_str(&t), j->on_node);
    text_free(&t);
  }
  if (p->kill_at >= 0 || p->give_up_at >= 0 || kill(-p->pid, 0) != 0) return; /* stopping, or empty */
  if (!j->failed)
    fprintf(stderr, "tilescale launch: rank %d%s left processes behind (its process group %d); stopping them\n",
            p->rank, j->on_node, (int)p->pid);
  group_stop(j, p, j->stop_sig ? j->stop_sig : SIGTERM);
}

/* Reaps every child that exited: ranks, the guard, and the orphans of ranks (ours as their
 * subreaper).  Every zombie goes before a rank's group is looked at, so that an orphan
 * already dead does not count as left behind. */
static void reap_children(Job *j) {
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    if (pid == j->guard_pid) {
      j->guard_pid = -1; /* killed by hand; nothing to do but stop telling it */
      if (j->guard_fd >= 0) close(j->guard_fd);
      j->guard_fd = -1;
    }
    for (int i = 0; i < j->o->nproc; i++) {
      RankProc *p = &j->procs[i];
      if (p->running && p->pid == pid) {
        p->running = false;
        p->exit_seen = true;
        p->status = st;
      }
    }
  }
  for (int i = 0; i < j->o->nproc; i++)
    if (j->procs[i].exit_seen) {
      j->procs[i].exit_seen = false;
      on_rank_exit(j, &j->procs[i]);
    }
}

/* What the signalfd has: an interrupt stops every rank; a second one kills them. */
static void on_signals(Job *j, int sfd) {
  struct signalfd_siginfo si;
  while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
    if (si.ssi_signo == SIGCHLD) continue; /* reaped by reap_children */
    if (j->failed) {
      ranks_signal(j, SIGKILL); /* a second interrupt: no more grace */
      continue;
    }
    const char *abbr = sigabbrev_np((int)si.ssi_signo);
    fprintf(stderr, "tilescale launch: received signal %u (%s); stopping every rank\n", si.ssi_signo, abbr ? abbr : "?");
    char where[64] = "";
    if (j->multi) snprintf(where, sizeof where, " (the launcher of node %d)", j->o->node_rank);
    /* The ranks sit in process groups of their own, out of the terminal's reach: give them
     * the signal the terminal (or whoever) gave us. */
    j->stop_sig = (int)si.ssi_signo;
    job_fail(j, 128 + (int)si.ssi_signo, true, "interrupted%s", where);
  }
}

/* The deadlines that are due: the node link's, the job's --timeout.  (The process groups'
 * are groups_check's.) */
static void check_deadlines(Job *j, double now) {
  const LaunchOpts *o = j->o;
  node_link_check(j, now);
  if (o->timeout_s > 0 && !j->failed && now - j->started >= o->timeout_s) {
    Text t = {0};
    for (int i = 0; i < o->nproc; i++)
      if (j->procs[i].running) text_printf(&t, " %d", j->procs[i].rank);
    fprintf(stderr, "tilescale launch: timed out after %g s; ranks still running:%s; stopping them\n", o->timeout_s,
            text_str(&t));
    text_free(&t);
    char where[64] = "";
    if (j->multi) snprintf(where, sizeof where, " (node %d, after %g s)", o->node_rank, o->timeout_s);
    job_fail(j, 124, true, "timed out%s", where);
  }
}

/* How long poll may wait: until the earliest deadline (`wake`: the process groups') and,
 * once every rank has exited, at most 500 ms: a leftover that is not our child sends no
 * SIGCHLD, and one that left its rank's group may hold the pipes open. */
static int poll_timeout_ms(const Job *j, int alive, double wake) {
  if (j->o->timeout_s > 0 && !j->failed) {
    double t = j->started + j->o->timeout_s;
    if (wake < 0 || t < wake) wake = t;
  }
  double link = node_link_wake(j);
  if (link >= 0 && (wake < 0 || link < wake)) wake = link;
  int ms = wake < 0 ? -1 : (int)((wake - launch_now()) * 1000 + 1);
  if (wake >= 0 && ms < 0) ms = 0;
  if (alive == 0 && (ms < 0 || ms > 500)) ms = 500;
  return ms;
}

/* One turn of the loop: waits for output, a signal, a peer or a deadline, and handles it.
 * pfds/cap: the poll set, kept across turns. */
static void job_step(Job *j, int sfd, struct pollfd **pfds, int *cap) {
  const LaunchOpts *o = j->o;
  int alive = running_ranks(j);
  double group_wake;
  int live = groups_check(j, launch_now(), &group_wake);
  int need = 2 * o->nproc + j->nconns + 2;
  if (need > *cap) {
    *cap = 2 * need;
    *pfds = launch_realloc(*pfds, (size_t)*cap * sizeof **pfds);
  }
  struct pollfd *pf = *pfds;
  int np = 0;
  pf[np++] = (struct pollfd){sfd, POLLIN, 0};
  for (int i = 0; i < o->nproc; i++)
    for (int s = 0; s < 2; s++)
      if (j->procs[i].fd[s] >= 0) pf[np++] = (struct pollfd){j->procs[i].fd[s], POLLIN, 0};
  int first_link = np;
  np = node_link_pollfds(j, pf, np);

  int pr = poll(pf, (nfds_t)np, poll_timeout_ms(j, alive, group_wake));
  if (pr < 0 && errno != EINTR) {
    fprintf(stderr, "tilescale launch: poll failed: %s\n", strerror(errno));
    job_fail(j, 1, true, "the launcher%s failed (poll: %s)", j->on_node, strerror(errno));
    ranks_signal(j, SIGKILL);
  }
  if (pr <= 0 && live == 0) {
    /* Every rank and its group is gone but something that left the group still holds the
     * output open: stop listening. */
    for (int i = 0; i < o->nproc; i++)
      for (int s = 0; s < 2; s++)
        if (j->procs[i].fd[s] >= 0) {
          close(j->procs[i].fd[s]);
          j->procs[i].fd[s] = -1;
        }
  }
  for (int k = 1; pr > 0 && k < np; k++) {
    if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (k >= first_link) {
      node_link_ready(j, pf[k].fd);
      continue;
    }
    for (int i = 0; i < o->nproc; i++)
      for (int s = 0; s < 2; s++)
        if (j->procs[i].fd[s] == pf[k].fd) rank_pump(j, &j->procs[i], s);
  }
  if (pr > 0 && (pf[0].revents & POLLIN)) on_signals(j, sfd);
  reap_children(j);
  check_deadlines(j, launch_now());
}

/* Starts this node's ranks and watches them until the job's outcome is known. */
static void job_run(Job *j, int sfd) {
  const LaunchOpts *o = j->o;
  for (int i = 0; i < o->nproc; i++) {
    if (!rank_spawn(j, &j->procs[i], i)) {
      fprintf(stderr, "tilescale launch: cannot start rank %d: %s\n", j->procs[i].rank, strerror(errno));
      job_fail(j, 1, true, "a rank could not be started%s", j->on_node);
      break;
    }
  }
  struct pollfd *pfds = NULL;
  int cap = 0;
  double wake;
  while (groups_check(j, launch_now(), &wake) > 0 || open_pipes(j) > 0 || !node_link_complete(j))
    job_step(j, sfd, &pfds, &cap);
  free(pfds);
}

static void job_free(Job *j) {
  for (int i = 0; i < j->o->nproc; i++) {
    RankProc *p = &j->procs[i];
    text_free(&p->partial[0]);
    text_free(&p->partial[1]);
    for (int s = 0; s < 2; s++)
      if (p->fd[s] >= 0) close(p->fd[s]);
  }
  node_link_close(j);
  text_free(&j->why);
  free(j->procs);
}

int cmd_launch(int argc, char **argv) {
  LaunchOpts o;
  int rc = parse_args(argc, argv, &o);
  if (rc == -1) return 0;
  if (rc) return rc;
  default_addresses(&o);

  /* SIGCHLD, SIGINT, SIGTERM, SIGHUP are read from a signalfd in the loop. */
  Job j = {0};
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, &j.orig_mask);
  /* EPIPE instead of death by SIGPIPE when our output's reader goes (launch_rank.c). */
  struct sigaction ignore = {.sa_handler = SIG_IGN};
  sigaction(SIGPIPE, &ignore, &j.orig_sigpipe);
  j.launcher_pid = getpid();
  /* Orphans of the ranks become our children, so we can reap them and see their groups
   * empty (launch_rank.c). */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  j.guard_fd = j.guard_pid = -1;
  /* Before any rank and any socket: the guard needs none of them. */
  if (!guard_start(&j))
    fprintf(stderr, "tilescale launch: warning: cannot start the guard process (%s); if the launcher is killed, "
                    "what its ranks started may outlive it\n", strerror(errno));
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    fprintf(stderr, "tilescale launch: signalfd failed: %s\n", strerror(errno));
    guard_stop(&j);
    sigaction(SIGPIPE, &j.orig_sigpipe, NULL);
    sigprocmask(SIG_SETMASK, &j.orig_mask, NULL);
    return 1;
  }
  j.o = &o;
  j.listen_fd = -1;
  j.multi = o.nnodes > 1;
  if (j.multi) snprintf(j.on_node, sizeof j.on_node, " on node %d", o.node_rank);
  j.procs = launch_realloc(NULL, (size_t)o.nproc * sizeof *j.procs);
  memset(j.procs, 0, (size_t)o.nproc * sizeof *j.procs);
  for (int i = 0; i < o.nproc; i++) { /* also those never started: no pipes to watch or close */
    j.procs[i].rank = o.node_rank * o.nproc + i;
    j.procs[i].fd[0] = j.procs[i].fd[1] = -1;
  }
  j.started = launch_now();

  /* Nodes: node 0 listens before starting its ranks; the others join it first (their ranks
   * could not get past the rendezvous without node 0 anyway). */
  if (!j.multi || node_link_open(&j, sfd)) job_run(&j, sfd);
  int exit_code = 0;
  if (j.failed) {
    exit_code = j.exit_code;
    fprintf(stderr, "tilescale launch: failed: %s\n", text_str(&j.why));
  }
  job_free(&j);
  guard_stop(&j);
  close(sfd);
  /* Drop signals that arrived for the ranks before unblocking, then restore the mask. */
  struct timespec zero = {0, 0};
  while (sigtimedwait(&mask, NULL, &zero) > 0) {
  }
  sigaction(SIGPIPE, &j.orig_sigpipe, NULL);
  sigprocmask(SIG_SETMASK, &j.orig_mask, NULL);
  return exit_code;
}
