/* launcher.c — `tilescale launch`: one process per GPU (DESIGN.md §7, issue 5).
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
 * Signals arrive through a signalfd rather than a handler, so there is no global flag and
 * no race between "a child exited" and "poll started waiting". */
#include "dist.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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
    "options:\n"
    "  -n, --nproc N           processes on this node (also --nproc-per-node)\n"
    "  --nnodes K              nodes in the job (default 1; start one launcher per node)\n"
    "  --node-rank R           this node's index, 0..K-1 (default 0)\n"
    "  --master-addr A         address of the node running rank 0 (default $MASTER_ADDR, else\n"
    "                          127.0.0.1)\n"
    "  --master-port P         rendezvous port (default $MASTER_PORT; on one node a free port is\n"
    "                          picked; otherwise 29500)\n"
    "  --timeout S             stop every rank and fail if the job runs longer than S seconds\n"
    "  --grace S               seconds between SIGTERM and SIGKILL when stopping ranks (default 5)\n"
    "  --no-prefix             pass output through without rank prefixes\n"
    "  -h, --help              this text\n";

typedef struct LaunchOpts {
  int nproc, nnodes, node_rank;
  const char *master_addr;
  int master_port;
  double timeout_s, grace_s;
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
  o->grace_s = 5;
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

int dist_launch_main(int argc, char **argv) {
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
  RankProc *procs = ts_calloc((size_t)o.nproc, sizeof *procs);
  int nrun = 0;
  int failed = -1;           /* index of the first rank that failed */
  const char *stop_why = NULL; /* why the launcher itself stopped the job */
  int stop_code = 0;
  double t0 = now_s(), kill_at = -1;
  for (int i = 0; i < o.nproc; i++) {
    procs[i].rank = o.node_rank * o.nproc + i;
    procs[i].fd[0] = procs[i].fd[1] = -1;
    if (!spawn(&o, &procs[i], i, &orig_mask, arena)) {
      fprintf(stderr, "tilescale launch: cannot start rank %d: %s\n", procs[i].rank, strerror(errno));
      stop_why = "a rank could not be started";
      stop_code = 1;
      signal_ranks(procs, o.nproc, SIGTERM);
      kill_at = now_s() + o.grace_s;
      break;
    }
    nrun++;
  }

  struct pollfd *pfds = ts_calloc((size_t)(2 * o.nproc + 1), sizeof *pfds);
  for (;;) {
    int alive = 0, open_fds = 0;
    for (int i = 0; i < o.nproc; i++) {
      alive += procs[i].running;
      open_fds += (procs[i].fd[0] >= 0) + (procs[i].fd[1] >= 0);
    }
    if (alive == 0 && open_fds == 0) break;

    int np = 0;
    pfds[np++] = (struct pollfd){sfd, POLLIN, 0};
    for (int i = 0; i < o.nproc; i++)
      for (int s = 0; s < 2; s++)
        if (procs[i].fd[s] >= 0) pfds[np++] = (struct pollfd){procs[i].fd[s], POLLIN, 0};

    /* Wake for the kill deadline, the job timeout, and — once every rank has exited — to
     * stop waiting for pipes that a leftover grandchild keeps open. */
    double now = now_s();
    double wake = -1;
    if (kill_at >= 0) wake = kill_at;
    if (o.timeout_s > 0 && !stop_why && failed < 0) {
      double t = t0 + o.timeout_s;
      if (wake < 0 || t < wake) wake = t;
    }
    int timeout_ms = wake < 0 ? -1 : (int)((wake - now) * 1000 + 1);
    if (timeout_ms < -1) timeout_ms = 0;
    if (alive == 0 && (timeout_ms < 0 || timeout_ms > 500)) timeout_ms = 500;
    int pr = poll(pfds, (nfds_t)np, timeout_ms);
    if (pr < 0 && errno != EINTR) {
      fprintf(stderr, "tilescale launch: poll failed: %s\n", strerror(errno));
      break;
    }
    if (pr == 0 && alive == 0) {
      /* Every rank is gone but something still holds its output open: stop listening. */
      for (int i = 0; i < o.nproc; i++)
        for (int s = 0; s < 2; s++)
          if (procs[i].fd[s] >= 0) {
            close(procs[i].fd[s]);
            procs[i].fd[s] = -1;
          }
      continue;
    }
    if (pr > 0) {
      for (int k = 1; k < np; k++) {
        if (!(pfds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        for (int i = 0; i < o.nproc; i++)
          for (int s = 0; s < 2; s++)
            if (procs[i].fd[s] == pfds[k].fd) pump(&o, &procs[i], s);
      }
      if (pfds[0].revents & POLLIN) {
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
          if (si.ssi_signo == SIGCHLD) continue; /* reaped below */
          if (!stop_why && failed < 0) {
            fprintf(stderr, "tilescale launch: received signal %u (%s); stopping every rank\n", si.ssi_signo,
                    sigabbrev_np((int)si.ssi_signo) ? sigabbrev_np((int)si.ssi_signo) : "?");
            stop_why = "interrupted";
            stop_code = 128 + (int)si.ssi_signo;
            signal_ranks(procs, o.nproc, SIGTERM);
            kill_at = now_s() + o.grace_s;
          } else {
            signal_ranks(procs, o.nproc, SIGKILL); /* a second interrupt: no more grace */
          }
        }
      }
    }
    /* Reap every rank that exited (SIGCHLD may coalesce, so check them all). */
    for (int i = 0; i < o.nproc; i++) {
      if (!procs[i].running) continue;
      int st;
      pid_t w = waitpid(procs[i].pid, &st, WNOHANG);
      if (w != procs[i].pid) continue;
      procs[i].running = false;
      procs[i].status = st;
      bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
      if (!ok && failed < 0 && !procs[i].stopped_by_us && !stop_why) {
        failed = i;
        StrBuf sb = {0};
        describe_status(&sb, st);
        fprintf(stderr, "tilescale launch: rank %d (pid %d) %s", procs[i].rank, (int)procs[i].pid, sb_str(&sb));
        sb_free(&sb);
        int others = 0;
        for (int j = 0; j < o.nproc; j++) others += procs[j].running;
        if (others) fprintf(stderr, "; stopping the other %d rank%s", others, others == 1 ? "" : "s");
        fputc('\n', stderr);
        signal_ranks(procs, o.nproc, SIGTERM);
        kill_at = now_s() + o.grace_s;
      }
    }
    now = now_s();
    if (kill_at >= 0 && now >= kill_at) {
      signal_ranks(procs, o.nproc, SIGKILL);
      kill_at = -1;
    }
    if (o.timeout_s > 0 && !stop_why && failed < 0 && now - t0 >= o.timeout_s) {
      StrBuf sb = {0};
      for (int i = 0; i < o.nproc; i++)
        if (procs[i].running) sb_printf(&sb, " %d", procs[i].rank);
      fprintf(stderr, "tilescale launch: timed out after %g s; ranks still running:%s; stopping them\n", o.timeout_s,
              sb_str(&sb));
      sb_free(&sb);
      stop_why = "timed out";
      stop_code = 124;
      signal_ranks(procs, o.nproc, SIGTERM);
      kill_at = now + o.grace_s;
    }
  }

  int exit_code = 0;
  if (failed >= 0) {
    exit_code = status_exit_code(procs[failed].status);
    StrBuf sb = {0};
    describe_status(&sb, procs[failed].status);
    fprintf(stderr, "tilescale launch: failed: rank %d %s\n", procs[failed].rank, sb_str(&sb));
    sb_free(&sb);
  } else if (stop_why) {
    exit_code = stop_code ? stop_code : 1;
    fprintf(stderr, "tilescale launch: failed: %s\n", stop_why);
  }
  (void)nrun;
  for (int i = 0; i < o.nproc; i++) {
    sb_free(&procs[i].partial[0]);
    sb_free(&procs[i].partial[1]);
    for (int s = 0; s < 2; s++)
      if (procs[i].fd[s] >= 0) close(procs[i].fd[s]);
  }
  ts_free(pfds);
  ts_free(procs);
  arena_destroy(arena);
  close(sfd);
  /* Drop signals that arrived for the ranks before unblocking, then restore the mask. */
  struct timespec zero = {0, 0};
  while (sigtimedwait(&mask, NULL, &zero) > 0) {
  }
  sigprocmask(SIG_SETMASK, &orig_mask, NULL);
  return exit_code;
}

int ts_launch_main(int argc, char **argv) { return dist_launch_main(argc, argv); }
