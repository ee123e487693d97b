/* launch.c — `tilescale launch`: one process per GPU (DESIGN.md §7, issue 5).  A CLI command,
 * not part of libtilescale: a library must not fork, take over signals or exit for its caller.
 *
 *   tilescale launch -n N [--nnodes K --node-rank R --master-addr A --master-port P] prog args
 *     -> fork N ranks, each with RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR
 *        MASTER_PORT (rank 0 of the job serves the TCP rendezvous, bootstrap.c)
 *     -> one poll loop: the ranks' stdout/stderr (each line prefixed with its rank) and a
 *        signalfd for SIGCHLD / SIGINT / SIGTERM
 *     -> the first rank to fail (non-zero exit or a signal) stops the others: SIGTERM to
 *        their process groups, SIGKILL after a grace period; the launcher exits non-zero
 *        and names the rank and why.
 *
 * Several nodes (--nnodes K): one launcher per node, and the launchers form a star of
 * control connections around node 0's (it listens on --control-port, default MASTER_PORT+1;
 * the others connect before they start their ranks).  Lines of text:
 *
 *   node r -> node 0   HELLO <node> <nnodes> <nproc>    once, on joining
 *                      FAIL <code> <why>                a failure on node r (its ranks are stopping)
 *                      DONE                             every rank of node r succeeded
 *   node 0 -> node r   FAIL <code> <why>                the job failed: stop your ranks
 *                      EXIT                             every rank of every node succeeded
 *
 * So the first failure anywhere (a rank, a timeout, an interrupt, a node that never joins or
 * whose launcher disappears) stops the ranks of every node, and every launcher exits with
 * the same code naming the same rank.  A launcher whose ranks all succeeded still waits
 * for node 0's verdict, so it too reports a failure elsewhere.
 *
 * Signals arrive through a signalfd rather than a handler, so there is no global flag and
 * no race between "a child exited" and "poll started waiting". */
#include "launch.h"

#include "../src/dist/dist.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_MASTER_PORT 29500
#define DEFAULT_JOIN_TIMEOUT_S 300
#define LAUNCH_MAX_PROCS 1024

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
    "  --join-timeout S        fail if the other nodes' launchers have not joined node 0's within\n"
    "                          S seconds (default 300)\n"
    "  --timeout S             stop every rank and fail if the job runs longer than S seconds\n"
    "  --grace S               seconds between SIGTERM and SIGKILL when stopping ranks (default 5)\n"
    "  --no-prefix             pass output through without rank prefixes\n"
    "  -h, --help              this text\n";

typedef struct LaunchOpts {
  int nproc, nnodes, node_rank;
  const char *master_addr;
  int master_port, control_port;
  double timeout_s, grace_s, join_timeout_s;
  bool prefix;
  char **prog; /* NULL-terminated argv of the program */
} LaunchOpts;

typedef struct RankProc {
  int rank;
  pid_t pid;
  int fd[2];         /* stdout, stderr pipes (read ends); -1 once closed */
  StrBuf partial[2]; /* a line not yet ended by '\n' */
  bool running;
  bool stopped_by_us;
  int status;        /* waitpid status once exited */
} RankProc;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

/* A free TCP port on this host: bind port 0 and let the kernel choose.  The port is
 * released again before rank 0 binds it, a small window another process could use; the
 * rendezvous then fails with "cannot listen on port P", never hangs. */
static int pick_free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return DEFAULT_MASTER_PORT;
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  int port = DEFAULT_MASTER_PORT;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

/* The child's environment: the parent's, minus the variables we set, plus ours. */
static const char *const launch_env_keys[] = {
    "RANK",      "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",     "MASTER_ADDR",      "MASTER_PORT",
    "GROUP_RANK", "NODE_RANK", "NNODES",     "NVSHMEM_DISABLE_NVLS", "NCCL_NVLS_ENABLE", "TILESCALE_LAUNCHED",
};

static char **build_env(const LaunchOpts *o, int local_rank, Arena *a) {
  int n = 0;
  while (environ && environ[n]) n++;
  char **env = ARENA_ARRAY(a, char *, n + TS_ARRAY_LEN(launch_env_keys) + 1);
  int k = 0;
  for (int i = 0; i < n; i++) {
    bool ours = false;
    for (int j = 0; j < TS_ARRAY_LEN(launch_env_keys) && !ours; j++) {
      size_t l = strlen(launch_env_keys[j]);
      ours = strncmp(environ[i], launch_env_keys[j], l) == 0 && environ[i][l] == '=';
    }
    if (!ours) env[k++] = environ[i];
  }
  int world = o->nproc * o->nnodes;
  env[k++] = arena_printf(a, "RANK=%d", o->node_rank * o->nproc + local_rank);
  env[k++] = arena_printf(a, "WORLD_SIZE=%d", world);
  env[k++] = arena_printf(a, "LOCAL_RANK=%d", local_rank);
  env[k++] = arena_printf(a, "LOCAL_WORLD_SIZE=%d", o->nproc);
  env[k++] = arena_printf(a, "MASTER_ADDR=%s", o->master_addr);
  env[k++] = arena_printf(a, "MASTER_PORT=%d", o->master_port);
  env[k++] = arena_printf(a, "GROUP_RANK=%d", o->node_rank);
  env[k++] = arena_printf(a, "NODE_RANK=%d", o->node_rank);
  env[k++] = arena_printf(a, "NNODES=%d", o->nnodes);
  /* Safety on our machines: NVLink multicast (NVLS) must never be used. */
  env[k++] = arena_strdup(a, "NVSHMEM_DISABLE_NVLS=1");
  env[k++] = arena_strdup(a, "NCCL_NVLS_ENABLE=0");
  env[k++] = arena_strdup(a, "TILESCALE_LAUNCHED=1");
  env[k] = NULL;
  return env;
}

/* ---- output ------------------------------------------------------------------------------ */
static void write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return; /* our own stdout is gone; the ranks still run to completion */
    }
    s += w;
    n -= (size_t)w;
  }
}

/* Emits one complete line with the rank's prefix in a single write, so lines of different
 * ranks never interleave mid-line. */
static void emit_line(const LaunchOpts *o, int rank, int stream, const char *line, size_t n) {
  StrBuf sb = {0};
  if (o->prefix) sb_printf(&sb, "[rank %d] ", rank);
  sb_appendn(&sb, line, n);
  sb_putc(&sb, '\n');
  write_all(stream == 0 ? STDOUT_FILENO : STDERR_FILENO, sb.data, sb.len);
  sb_free(&sb);
}

/* Reads what is available on a rank's pipe and prints its complete lines.  Returns false
 * when the pipe reached EOF (then the partial line is flushed and the fd closed). */
static bool pump(const LaunchOpts *o, RankProc *p, int s) {
  char buf[65536];
  ssize_t r = read(p->fd[s], buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (r <= 0) {
    if (p->partial[s].len) emit_line(o, p->rank, s, p->partial[s].data, p->partial[s].len);
    sb_clear(&p->partial[s]);
    close(p->fd[s]);
    p->fd[s] = -1;
    return false;
  }
  size_t start = 0;
  for (size_t i = 0; i < (size_t)r; i++) {
    if (buf[i] != '\n') continue;
    if (p->partial[s].len) {
      sb_appendn(&p->partial[s], buf + start, i - start);
      emit_line(o, p->rank, s, p->partial[s].data, p->partial[s].len);
      sb_clear(&p->partial[s]);
    } else {
      emit_line(o, p->rank, s, buf + start, i - start);
    }
    start = i + 1;
  }
  if (start < (size_t)r) sb_appendn(&p->partial[s], buf + start, (size_t)r - start);
  return true;
}

/* ---- processes ------------------------------------------------------------------------------ */
static bool spawn(const LaunchOpts *o, RankProc *p, int local_rank, const sigset_t *orig_mask, Arena *a) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return false;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]);
    return false;
  }
  char **env = build_env(o, local_rank, a);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]), close(out[1]), close(err[0]), close(err[1]);
    return false;
  }
  if (pid == 0) {
    /* Own process group: stopping a rank also stops what it started (helpers, nvcc). */
    setpgid(0, 0);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    /* Only rank 0 may read the terminal; the others would race for it. */
    if (local_rank != 0 || o->node_rank != 0) {
      int devnull = open("/dev/null", O_RDONLY);
      if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    }
    /* The blocked mask survives exec: give the program the mask the launcher started with. */
    sigprocmask(SIG_SETMASK, orig_mask, NULL);
    execvpe(o->prog[0], o->prog, env);
    dprintf(STDERR_FILENO, "tilescale launch: cannot run '%s': %s\n", o->prog[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid); /* also here: the child may not have run yet when we signal it */
  close(out[1]);
  close(err[1]);
  p->pid = pid;
  p->fd[0] = out[0];
  p->fd[1] = err[0];
  p->running = true;
  return true;
}

static void describe_status(StrBuf *sb, int status) {
  if (WIFEXITED(status)) {
    sb_printf(sb, "exited with code %d", WEXITSTATUS(status));
    if (WEXITSTATUS(status) == 127) sb_append(sb, " (program not found or not executable?)");
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char *abbr = sigabbrev_np(sig), *descr = sigdescr_np(sig);
    sb_printf(sb, "was killed by signal %d", sig);
    if (abbr) sb_printf(sb, " (SIG%s%s%s)", abbr, descr ? ": " : "", descr ? descr : "");
  } else {
    sb_printf(sb, "ended with status 0x%x", status);
  }
}

static int status_exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

static void signal_ranks(RankProc *procs, int n, int sig) {
  for (int i = 0; i < n; i++)
    if (procs[i].running) {
      procs[i].stopped_by_us = true;
      kill(-procs[i].pid, sig);
      kill(procs[i].pid, sig); /* in case setpgid lost the race with exec */
    }
}

/* ---- the job: this node's ranks, the outcome, the control connections between nodes ------- */
typedef struct Conn {
  int fd;     /* -1 once closed */
  int node;   /* the node at the other end; on node 0 -1 until its HELLO */
  StrBuf in;  /* received bytes not yet ending a line */
  bool done;  /* node 0: that node's ranks all succeeded */
} Conn;

typedef struct Job {
  const LaunchOpts *o;
  RankProc *procs;
  double kill_at;       /* SIGKILL what still runs at this time; -1: nothing pending */
  bool failed;          /* the first failure decides the outcome */
  int exit_code;
  StrBuf why;           /* what failed: "rank 3 exited with code 3", for the last line */
  bool multi;           /* nnodes > 1 */
  int listen_fd;        /* node 0: the control port; -1 otherwise */
  Conn *conns;          /* node 0: accepted connections; node r > 0: [0] is node 0 */
  int nconns, cap;
  int joined;           /* node 0: nodes that said HELLO */
  bool done_sent;       /* node r > 0: DONE sent */
  bool verdict;         /* node r > 0: EXIT received; node 0: EXIT sent */
  double join_deadline; /* node 0: when the missing nodes are given up on */
} Job;

/* One line to a peer launcher.  A peer that is gone is noticed by the read side. */
TS_PRINTF(2, 3) static void send_line(int fd, const char *fmt, ...) {
  if (fd < 0) return;
  StrBuf sb = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  sb_putc(&sb, '\n');
  for (size_t off = 0; off < sb.len;) {
    ssize_t w = send(fd, sb.data + off, sb.len - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  sb_free(&sb);
}

static int running_ranks(const Job *j) {
  int n = 0;
  for (int i = 0; i < j->o->nproc; i++) n += j->procs[i].running;
  return n;
}

/* Records the job's failure (only the first counts), stops this node's ranks and, when
 * `tell`, passes it on: node 0 to every node, another node to node 0 (which relays it). */
TS_PRINTF(4, 5) static void job_fail(Job *j, int code, bool tell, const char *fmt, ...) {
  if (j->failed) return;
  j->failed = true;
  j->exit_code = code ? code : 1;
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&j->why, fmt, ap);
  va_end(ap);
  if (j->multi && tell)
    for (int i = 0; i < j->nconns; i++)
      if (j->conns[i].node >= 0) send_line(j->conns[i].fd, "FAIL %d %s", j->exit_code, sb_str(&j->why));
  signal_ranks(j->procs, j->o->nproc, SIGTERM);
  j->kill_at = now_s() + j->o->grace_s;
}

/* " on node R" in multi-node jobs, where a rank number alone does not say where to look. */
static const char *on_node(const Job *j, Arena *a) {
  return j->multi ? arena_printf(a, " on node %d", j->o->node_rank) : "";
}

static void conn_close(Conn *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
}

static Conn *conn_add(Job *j, int fd, int node) {
  if (j->nconns == j->cap) {
    j->cap = j->cap ? 2 * j->cap : 8;
    j->conns = ts_realloc(j->conns, (size_t)j->cap * sizeof *j->conns);
  }
  Conn *c = &j->conns[j->nconns++];
  memset(c, 0, sizeof *c);
  c->fd = fd;
  c->node = node;
  return c;
}

/* Node 0: the control port every other node's launcher connects to. */
static int control_listen(const LaunchOpts *o, StrBuf *why) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    sb_printf(why, "socket: %s", strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons((uint16_t)o->control_port);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0) {
    sb_printf(why, "cannot listen on control port %d: %s", o->control_port, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

/* Node r > 0: connects to node 0's launcher, retrying until the join deadline (node 0 may
 * start later), and says HELLO.  An interrupt (on the signalfd) gives up at once.  Returns
 * the connection, or -1 with the reason in `why`. */
static int control_connect(const LaunchOpts *o, int sfd, StrBuf *why) {
  double deadline = now_s() + o->join_timeout_s;
  char port[16];
  snprintf(port, sizeof port, "%d", o->control_port);
  const char *last = "no attempt";
  StrBuf err = {0};
  for (;;) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(o->master_addr, port, &hints, &res);
    if (gai != 0) {
      sb_clear(&err);
      sb_printf(&err, "cannot resolve %s: %s", o->master_addr, gai_strerror(gai));
      last = sb_str(&err);
    } else {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      int rc = fd < 0 ? -1 : connect(fd, res->ai_addr, res->ai_addrlen);
      if (fd >= 0 && rc != 0 && errno == EINPROGRESS) {
        /* An unreachable address can take long to refuse: wait at most a second. */
        double left = deadline - now_s();
        struct pollfd p[2] = {{fd, POLLOUT, 0}, {sfd, POLLIN, 0}};
        int ms = left < 1 ? (int)(left * 1000) + 1 : 1000;
        if (poll(p, 2, ms) > 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
          int soerr = 0;
          socklen_t l = sizeof soerr;
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l);
          rc = soerr ? -1 : 0;
          errno = soerr;
        } else {
          errno = ETIMEDOUT;
        }
      }
      freeaddrinfo(res);
      if (rc == 0) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        send_line(fd, "HELLO %d %d %d", o->node_rank, o->nnodes, o->nproc);
        sb_free(&err);
        return fd;
      }
      sb_clear(&err);
      sb_append(&err, strerror(errno));
      last = sb_str(&err);
      if (fd >= 0) close(fd);
    }
    double left = deadline - now_s();
    if (left <= 0) break;
    struct pollfd p = {sfd, POLLIN, 0};
    if (poll(&p, 1, left < 0.2 ? (int)(left * 1000) + 1 : 200) > 0) {
      sb_printf(why, "interrupted while connecting to node 0's launcher at %s:%d", o->master_addr, o->control_port);
      sb_free(&err);
      return -1;
    }
  }
  sb_printf(why,
            "cannot reach node 0's launcher at %s:%d within %g s (last error: %s); start `tilescale launch "
            "--nnodes %d --node-rank 0 ...` there with the same --master-addr/--master-port",
            o->master_addr, o->control_port, o->join_timeout_s, last, o->nnodes);
  sb_free(&err);
  return -1;
}

/* A FAIL line from another launcher: "<code> <why>". */
static void on_remote_fail(Job *j, const char *rest, bool relay) {
  char *end;
  long code = strtol(rest, &end, 10);
  if (end == rest || code <= 0 || code > 255) code = 1;
  while (*end == ' ') end++;
  if (j->failed) return;
  int n = running_ranks(j);
  fprintf(stderr, "tilescale launch: %s", *end ? end : "another node failed");
  if (n) fprintf(stderr, "; stopping the %d rank%s of node %d", n, n == 1 ? "" : "s", j->o->node_rank);
  fputc('\n', stderr);
  job_fail(j, (int)code, relay, "%s", *end ? end : "another node failed");
}

/* One line from connection c. */
static void on_line(Job *j, Conn *c, const char *line) {
  const LaunchOpts *o = j->o;
  if (o->node_rank != 0) { /* from node 0 */
    if (!strncmp(line, "FAIL ", 5)) on_remote_fail(j, line + 5, false);
    else if (!strcmp(line, "EXIT")) j->verdict = true;
    return;
  }
  if (!strncmp(line, "HELLO ", 6) && c->node < 0) {
    int node = -1, nnodes = -1, nproc = -1;
    bool dup = false;
    if (sscanf(line + 6, "%d %d %d", &node, &nnodes, &nproc) == 3)
      for (int i = 0; i < j->nconns; i++) dup |= j->conns[i].node == node;
    if (nnodes != o->nnodes || nproc != o->nproc || node < 1 || node >= o->nnodes || dup) {
      StrBuf sb = {0};
      if (dup)
        sb_printf(&sb, "two launchers say they are node %d", node);
      else
        sb_printf(&sb, "the launcher of node %d runs -n %d --nnodes %d, but node 0's runs -n %d --nnodes %d (every "
                       "node needs the same -n and --nnodes, and --node-rank 1..%d)",
                  node, nproc, nnodes, o->nproc, o->nnodes, o->nnodes - 1);
      fprintf(stderr, "tilescale launch: %s\n", sb_str(&sb));
      send_line(c->fd, "FAIL 2 %s", sb_str(&sb));
      conn_close(c);
      job_fail(j, 2, true, "%s", sb_str(&sb));
      sb_free(&sb);
      return;
    }
    c->node = node;
    j->joined++;
    if (j->failed) send_line(c->fd, "FAIL %d %s", j->exit_code, sb_str(&j->why));
  } else if (!strncmp(line, "FAIL ", 5) && c->node >= 1) {
    on_remote_fail(j, line + 5, true);
  } else if (!strcmp(line, "DONE") && c->node >= 1) {
    c->done = true;
  }
}

/* Reads what connection c has; complete lines go to on_line.  On EOF the connection closes
 * and, unless its work was over, that is a failure. */
static void conn_pump(Job *j, Conn *c) {
  char buf[4096];
  ssize_t r = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
  if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
  if (r > 0) {
    sb_appendn(&c->in, buf, (size_t)r);
    char *start = c->in.data, *nl;
    while (c->fd >= 0 && (nl = memchr(start, '\n', c->in.len - (size_t)(start - c->in.data)))) {
      *nl = 0;
      on_line(j, c, start);
      start = nl + 1;
    }
    size_t rest = c->in.len - (size_t)(start - c->in.data);
    memmove(c->in.data, start, rest);
    c->in.len = rest;
    c->in.data[rest] = 0;
    return;
  }
  int node = c->node;
  bool over = c->done;
  conn_close(c);
  if (j->failed || node < 0) return;
  if (j->o->node_rank != 0 && !j->verdict) {
    fprintf(stderr, "tilescale launch: lost the connection to node 0's launcher; stopping this node's ranks\n");
    job_fail(j, 1, false, "lost the connection to node 0's launcher before the job ended");
  } else if (j->o->node_rank == 0 && !over) {
    fprintf(stderr, "tilescale launch: the launcher of node %d disconnected; stopping every rank\n", node);
    job_fail(j, 1, true, "the launcher of node %d disconnected before its ranks finished", node);
  }
}

/* Node 0: gives up on the nodes that have not joined by the deadline. */
static void check_join_deadline(Job *j, double now) {
  const LaunchOpts *o = j->o;
  if (!j->multi || o->node_rank != 0 || j->failed || j->joined == o->nnodes - 1 || now < j->join_deadline) return;
  StrBuf missing = {0};
  int n = 0;
  for (int node = 1; node < o->nnodes; node++) {
    bool in = false;
    for (int i = 0; i < j->nconns; i++) in |= j->conns[i].node == node;
    if (!in) sb_printf(&missing, "%s%d", n++ ? ", " : "", node);
  }
  fprintf(stderr, "tilescale launch: node%s %s did not join within %g s; stopping every rank\n", n == 1 ? "" : "s",
          sb_str(&missing), o->join_timeout_s);
  job_fail(j, 1, true,
           "node%s %s did not join within %g s (start `tilescale launch -n %d --nnodes %d --node-rank R "
           "--master-addr ADDR --master-port %d PROG` on each node; its launcher connects to this one on port %d)",
           n == 1 ? "" : "s", sb_str(&missing), o->join_timeout_s, o->nproc, o->nnodes, o->master_port,
           o->control_port);
  sb_free(&missing);
}

/* Every rank of this node has exited and nothing failed: true when the launcher may exit.
 * Node r reports DONE and waits for node 0's EXIT; node 0 waits for every node's DONE. */
static bool job_complete(Job *j) {
  if (!j->multi || j->failed) return true;
  if (j->o->node_rank != 0) {
    if (!j->done_sent) send_line(j->conns[0].fd, "DONE");
    j->done_sent = true;
    return j->verdict;
  }
  int done = 0;
  for (int i = 0; i < j->nconns; i++) done += j->conns[i].node >= 1 && j->conns[i].done;
  if (done < j->o->nnodes - 1) return false;
  for (int i = 0; i < j->nconns; i++)
    if (j->conns[i].node >= 1) send_line(j->conns[i].fd, "EXIT");
  j->verdict = true;
  return true;
}

int cmd_launch(int argc, char **argv) {
  LaunchOpts o;
  int rc = parse_args(argc, argv, &o);
  if (rc == -1) return 0;
  if (rc) return rc;
  if (!o.master_addr) o.master_addr = getenv("MASTER_ADDR");
  if (!o.master_addr || !*o.master_addr) o.master_addr = "127.0.0.1";
  if (o.master_port < 0) {
    const char *env_port = getenv("MASTER_PORT");
    if (!env_port || !parse_int(env_port, 1, 65535, &o.master_port))
      o.master_port = o.nnodes == 1 ? pick_free_port() : DEFAULT_MASTER_PORT;
  }
  if (o.control_port < 0) o.control_port = o.master_port < 65535 ? o.master_port + 1 : o.master_port - 1;

  /* SIGCHLD, SIGINT, SIGTERM, SIGHUP are read from a signalfd in the loop below. */
  sigset_t mask, orig_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, &orig_mask);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    fprintf(stderr, "tilescale launch: signalfd failed: %s\n", strerror(errno));
    sigprocmask(SIG_SETMASK, &orig_mask, NULL);
    return 1;
  }

  Arena *arena = arena_new();
  Job j = {0};
  j.o = &o;
  j.kill_at = -1;
  j.listen_fd = -1;
  j.multi = o.nnodes > 1;
  j.procs = ts_calloc((size_t)o.nproc, sizeof *j.procs);
  int exit_code = 0;
  double t0 = now_s();

  /* Nodes: node 0 listens before starting its ranks; the others join it first (their ranks
   * could not get past the rendezvous without node 0 anyway). */
  if (j.multi) {
    StrBuf why = {0};
    int fd = o.node_rank == 0 ? control_listen(&o, &why) : control_connect(&o, sfd, &why);
    if (fd < 0) {
      fprintf(stderr, "tilescale launch: failed: node %d: %s\n", o.node_rank, sb_str(&why));
      sb_free(&why);
      exit_code = 1;
      goto done;
    }
    if (o.node_rank == 0) j.listen_fd = fd;
    else conn_add(&j, fd, 0);
    j.join_deadline = now_s() + o.join_timeout_s;
  }

  for (int i = 0; i < o.nproc; i++) {
    j.procs[i].rank = o.node_rank * o.nproc + i;
    j.procs[i].fd[0] = j.procs[i].fd[1] = -1;
    if (!spawn(&o, &j.procs[i], i, &orig_mask, arena)) {
      fprintf(stderr, "tilescale launch: cannot start rank %d: %s\n", j.procs[i].rank, strerror(errno));
      job_fail(&j, 1, true, "a rank could not be started%s", on_node(&j, arena));
      break;
    }
  }

  struct pollfd *pfds = NULL;
  int pfd_cap = 0;
  for (;;) {
    int alive = running_ranks(&j), open_fds = 0;
    for (int i = 0; i < o.nproc; i++) open_fds += (j.procs[i].fd[0] >= 0) + (j.procs[i].fd[1] >= 0);
    if (alive == 0 && open_fds == 0 && job_complete(&j)) break;

    int need = 2 * o.nproc + j.nconns + 2;
    if (need > pfd_cap) {
      pfd_cap = 2 * need;
      pfds = ts_realloc(pfds, (size_t)pfd_cap * sizeof *pfds);
    }
    int np = 0;
    pfds[np++] = (struct pollfd){sfd, POLLIN, 0};
    for (int i = 0; i < o.nproc; i++)
      for (int s = 0; s < 2; s++)
        if (j.procs[i].fd[s] >= 0) pfds[np++] = (struct pollfd){j.procs[i].fd[s], POLLIN, 0};
    int first_conn = np;
    if (j.listen_fd >= 0) pfds[np++] = (struct pollfd){j.listen_fd, POLLIN, 0};
    for (int i = 0; i < j.nconns; i++)
      if (j.conns[i].fd >= 0) pfds[np++] = (struct pollfd){j.conns[i].fd, POLLIN, 0};

    /* Wake for the kill deadline, the job timeout, the join deadline, and — once every rank
     * has exited — to stop waiting for pipes that a leftover grandchild keeps open. */
    double now = now_s();
    double wake = -1;
    if (j.kill_at >= 0) wake = j.kill_at;
    if (o.timeout_s > 0 && !j.failed) {
      double t = t0 + o.timeout_s;
      if (wake < 0 || t < wake) wake = t;
    }
    if (j.multi && o.node_rank == 0 && !j.failed && j.joined < o.nnodes - 1 && (wake < 0 || j.join_deadline < wake))
      wake = j.join_deadline;
    int timeout_ms = wake < 0 ? -1 : (int)((wake - now) * 1000 + 1);
    if (timeout_ms < -1) timeout_ms = 0;
    if (alive == 0 && (timeout_ms < 0 || timeout_ms > 500)) timeout_ms = 500;
    int pr = poll(pfds, (nfds_t)np, timeout_ms);
    if (pr < 0 && errno != EINTR) {
      fprintf(stderr, "tilescale launch: poll failed: %s\n", strerror(errno));
      job_fail(&j, 1, true, "the launcher%s failed (poll: %s)", on_node(&j, arena), strerror(errno));
      break;
    }
    if (pr == 0 && alive == 0) {
      /* Every rank is gone but something still holds its output open: stop listening. */
      for (int i = 0; i < o.nproc; i++)
        for (int s = 0; s < 2; s++)
          if (j.procs[i].fd[s] >= 0) {
            close(j.procs[i].fd[s]);
            j.procs[i].fd[s] = -1;
          }
    }
    if (pr > 0) {
      for (int k = 1; k < first_conn; k++) {
        if (!(pfds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        for (int i = 0; i < o.nproc; i++)
          for (int s = 0; s < 2; s++)
            if (j.procs[i].fd[s] == pfds[k].fd) pump(&o, &j.procs[i], s);
      }
      for (int k = first_conn; k < np; k++) {
        if (!(pfds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (pfds[k].fd == j.listen_fd) {
          int fd = accept4(j.listen_fd, NULL, NULL, SOCK_CLOEXEC);
          if (fd >= 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            conn_add(&j, fd, -1);
          }
          continue;
        }
        for (int i = 0; i < j.nconns; i++)
          if (j.conns[i].fd == pfds[k].fd) conn_pump(&j, &j.conns[i]);
      }
      if (pfds[0].revents & POLLIN) {
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
          if (si.ssi_signo == SIGCHLD) continue; /* reaped below */
          if (!j.failed) {
            const char *abbr = sigabbrev_np((int)si.ssi_signo);
            fprintf(stderr, "tilescale launch: received signal %u (%s); stopping every rank\n", si.ssi_signo,
                    abbr ? abbr : "?");
            job_fail(&j, 128 + (int)si.ssi_signo, true, "interrupted%s",
                     j.multi ? arena_printf(arena, " (the launcher of node %d)", o.node_rank) : "");
          } else {
            signal_ranks(j.procs, o.nproc, SIGKILL); /* a second interrupt: no more grace */
          }
        }
      }
    }
    /* Reap every rank that exited (SIGCHLD may coalesce, so check them all). */
    for (int i = 0; i < o.nproc; i++) {
      RankProc *p = &j.procs[i];
      if (!p->running) continue;
      int st;
      pid_t w = waitpid(p->pid, &st, WNOHANG);
      if (w != p->pid) continue;
      p->running = false;
      p->status = st;
      bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
      if (!ok && !p->stopped_by_us && !j.failed) {
        StrBuf sb = {0};
        describe_status(&sb, st);
        fprintf(stderr, "tilescale launch: rank %d (pid %d)%s %s", p->rank, (int)p->pid, on_node(&j, arena),
                sb_str(&sb));
        int others = running_ranks(&j);
        if (others) fprintf(stderr, "; stopping the other %d rank%s", others, others == 1 ? "" : "s");
        if (j.multi) fprintf(stderr, "%s the ranks of the other nodes", others ? " and" : "; stopping");
        fputc('\n', stderr);
        job_fail(&j, status_exit_code(st), true, "rank %d %s%s", p->rank, sb_str(&sb), on_node(&j, arena));
        sb_free(&sb);
      }
    }
    now = now_s();
    if (j.kill_at >= 0 && now >= j.kill_at) {
      signal_ranks(j.procs, o.nproc, SIGKILL);
      j.kill_at = -1;
    }
    check_join_deadline(&j, now);
    if (o.timeout_s > 0 && !j.failed && now - t0 >= o.timeout_s) {
      StrBuf sb = {0};
      for (int i = 0; i < o.nproc; i++)
        if (j.procs[i].running) sb_printf(&sb, " %d", j.procs[i].rank);
      fprintf(stderr, "tilescale launch: timed out after %g s; ranks still running:%s; stopping them\n", o.timeout_s,
              sb_str(&sb));
      sb_free(&sb);
      job_fail(&j, 124, true, "timed out%s",
               j.multi ? arena_printf(arena, " (node %d, after %g s)", o.node_rank, o.timeout_s) : "");
    }
  }
  ts_free(pfds);

  if (j.failed) {
    exit_code = j.exit_code;
    fprintf(stderr, "tilescale launch: failed: %s\n", sb_str(&j.why));
  }
done:
  for (int i = 0; i < o.nproc; i++) {
    sb_free(&j.procs[i].partial[0]);
    sb_free(&j.procs[i].partial[1]);
    for (int s = 0; s < 2; s++)
      if (j.procs[i].fd[s] >= 0) close(j.procs[i].fd[s]);
  }
  for (int i = 0; i < j.nconns; i++) {
    if (j.conns[i].fd >= 0) shutdown(j.conns[i].fd, SHUT_WR);
    conn_close(&j.conns[i]);
    sb_free(&j.conns[i].in);
  }
  if (j.listen_fd >= 0) close(j.listen_fd);
  ts_free(j.conns);
  sb_free(&j.why);
  ts_free(j.procs);
  arena_destroy(arena);
  close(sfd);
  /* Drop signals that arrived for the ranks before unblocking, then restore the mask. */
  struct timespec zero = {0, 0};
  while (sigtimedwait(&mask, NULL, &zero) > 0) {
  }
  sigprocmask(SIG_SETMASK, &orig_mask, NULL);
  return exit_code;
}
