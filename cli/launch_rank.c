/* launch_rank.c — one rank of `tilescale launch` (launch.h): its environment, its start in a
 * process group of its own, its output forwarded line by line with a "[rank N] " prefix,
 * its exit status in words, and stopping it.
 *
 * A rank's process group is its pid: stopping a rank signals the group, so what the rank
 * started (helpers, a compiler) stops with it, and what is left in the group when the rank
 * exits is stopped then (SIGTERM, SIGKILL after --grace).  The launcher is a child subreaper
 * (launch.c), so the rank's orphans become its children: it reaps them, and a group it
 * watches empties rather than lingering as zombies of an init that may never reap. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- environment ---------------------------------------------------------------------------- */
/* The variables the launcher sets; the parent's values of them are dropped. */
static const char *const launch_env_keys[] = {
    "RANK",       "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",     "MASTER_ADDR",      "MASTER_PORT",
    "GROUP_RANK", "NODE_RANK",  "NNODES",     "NVSHMEM_DISABLE_NVLS", "NCCL_NVLS_ENABLE", "TILESCALE_LAUNCHED",
};

static char *format(const char *fmt, ...) LAUNCH_PRINTF(1, 2);
static char *format(const char *fmt, ...) {
  Text t = {0};
  va_list ap;
  va_start(ap, fmt);
  text_vprintf(&t, fmt, ap);
  va_end(ap);
  return t.data;
}

/* The child's environment: the parent's, minus the variables we set, plus ours.  The
 * strings from `own` on are the launcher's (free_env releases them). */
static char **build_env(const LaunchOpts *o, int local_rank, int *own) {
  int n = 0;
  while (environ && environ[n]) n++;
  char **env = launch_realloc(NULL, (size_t)(n + LAUNCH_LEN(launch_env_keys) + 1) * sizeof *env);
  int k = 0;
  for (int i = 0; i < n; i++) {
    bool ours = false;
    for (int j = 0; j < LAUNCH_LEN(launch_env_keys) && !ours; j++) {
      size_t l = strlen(launch_env_keys[j]);
      ours = strncmp(environ[i], launch_env_keys[j], l) == 0 && environ[i][l] == '=';
    }
    if (!ours) env[k++] = environ[i];
  }
  *own = k;
  env[k++] = format("RANK=%d", o->node_rank * o->nproc + local_rank);
  env[k++] = format("WORLD_SIZE=%d", o->nproc * o->nnodes);
  env[k++] = format("LOCAL_RANK=%d", local_rank);
  env[k++] = format("LOCAL_WORLD_SIZE=%d", o->nproc);
  env[k++] = format("MASTER_ADDR=%s", o->master_addr);
  env[k++] = format("MASTER_PORT=%d", o->master_port);
  env[k++] = format("GROUP_RANK=%d", o->node_rank);
  env[k++] = format("NODE_RANK=%d", o->node_rank);
  env[k++] = format("NNODES=%d", o->nnodes);
  /* Safety on our machines: NVLink multicast (NVLS) must never be used. */
  env[k++] = format("NVSHMEM_DISABLE_NVLS=1");
  env[k++] = format("NCCL_NVLS_ENABLE=0");
  env[k++] = format("TILESCALE_LAUNCHED=1");
  env[k] = NULL;
  return env;
}

static void free_env(char **env, int own) {
  for (int i = own; env[i]; i++) free(env[i]);
  free(env);
}

/* ---- starting ------------------------------------------------------------------------------- */
/* In the child, between fork and exec.  (The launcher is single-threaded, so libc is in a
 * consistent state here even for calls that are not async-signal-safe, like strerror.) */
__attribute__((noreturn)) static void exec_rank(const Job *j, int local_rank, int out_fd, int err_fd, char **env) {
  const LaunchOpts *o = j->o;
  /* Die with the launcher, even one killed by SIGKILL (which runs none of its cleanup).  If
   * it died before prctl took effect, our parent is already someone else: leave at once. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != j->launcher_pid) _exit(1);
  /* Own process group: stopping a rank also stops what it started (helpers, nvcc). */
  setpgid(0, 0);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  /* Only rank 0 may read stdin; the others would race for it.  Not a terminal, though: in a
   * process group of its own, rank 0 is in the background, and reading would stop it
   * (SIGTTIN) for good. */
  if (local_rank != 0 || o->node_rank != 0 || isatty(STDIN_FILENO)) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  }
  /* The blocked mask and an ignored SIGPIPE survive exec: give the program the mask and
   * the SIGPIPE disposition the launcher started with. */
  sigprocmask(SIG_SETMASK, &j->orig_mask, NULL);
  sigaction(SIGPIPE, &j->orig_sigpipe, NULL);
  execvpe(o->prog[0], o->prog, env);
  dprintf(STDERR_FILENO, "tilescale launch: cannot run '%s': %s\n", o->prog[0], strerror(errno));
  _exit(127);
}

bool rank_spawn(Job *j, RankProc *p, int local_rank) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return false;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]);
    return false;
  }
  int own;
  char **env = build_env(j->o, local_rank, &own);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) exec_rank(j, local_rank, out[1], err[1], env);
  int fork_errno = errno;
  free_env(env, own);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]), close(err[0]);
    errno = fork_errno;
    return false;
  }
  setpgid(pid, pid); /* also here: the child may not have run yet when we signal it */
  guard_tell(j, pid);
  p->pid = pid;
  p->fd[0] = out[0];
  p->fd[1] = err[0];
  p->running = true;
  p->group_live = true;
  p->kill_at = p->give_up_at = -1;
  return true;
}

/* ---- output --------------------------------------------------------------------------------- */
/* Returns false with errno set when fd refuses the bytes. */
static bool write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    s += w;
    n -= (size_t)w;
  }
  return true;
}

/* Our stdout (or stderr) lost its reader: `tilescale launch ... | head -1`.  A program in a
 * shell pipeline dies of SIGPIPE there; the launcher ignores SIGPIPE so that it can do what
 * dying would not: stop its ranks (nobody reads them either) and exit 141, the status a
 * pipeline reports for a writer killed by SIGPIPE. */
static void output_closed(Job *j, int stream) {
  const char *name = stream == 0 ? "standard output" : "standard error";
  j->out_closed[stream] = true;
  if (j->failed) return;
  fprintf(stderr, "tilescale launch: %s closed by its reader (EPIPE); stopping every rank\n", name);
  job_fail(j, 128 + SIGPIPE, true, "the launcher's %s closed by its reader (EPIPE)%s", name, j->on_node);
}

/* Emits one complete line with the rank's prefix in a single write, so lines of different
 * ranks never interleave mid-line. */
static void emit_line(Job *j, int rank, int stream, const char *line, size_t n) {
  if (j->out_closed[stream]) return;
  Text t = {0};
  if (j->o->prefix) text_printf(&t, "[rank %d] ", rank);
  text_append(&t, line, n);
  text_append(&t, "\n", 1);
  /* Other write errors (a full disk) lose output but not the job. */
  if (!write_all(stream == 0 ? STDOUT_FILENO : STDERR_FILENO, t.data, t.len) && errno == EPIPE)
    output_closed(j, stream);
  text_free(&t);
}

void rank_pump(Job *j, RankProc *p, int s) {
  char buf[65536];
  ssize_t r = read(p->fd[s], buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
  Text *partial = &p->partial[s];
  if (r <= 0) {
    if (partial->len) emit_line(j, p->rank, s, partial->data, partial->len);
    text_clear(partial);
    close(p->fd[s]);
    p->fd[s] = -1;
    return;
  }
  size_t start = 0;
  for (size_t i = 0; i < (size_t)r; i++) {
    if (buf[i] != '\n') continue;
    if (partial->len) {
      text_append(partial, buf + start, i - start);
      emit_line(j, p->rank, s, partial->data, partial->len);
      text_clear(partial);
    } else {
      emit_line(j, p->rank, s, buf + start, i - start);
    }
    start = i + 1;
  }
  if (start < (size_t)r) text_append(partial, buf + start, (size_t)r - start);
}

/* ---- status and stopping ---------------------------------------------------------------------- */
void describe_status(Text *t, int status) {
  if (WIFEXITED(status)) {
    text_printf(t, "exited with code %d", WEXITSTATUS(status));
    if (WEXITSTATUS(status) == 127) text_printf(t, " (program not found or not executable?)");
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char *abbr = sigabbrev_np(sig), *descr = sigdescr_np(sig);
    text_printf(t, "was killed by signal %d", sig);
    if (abbr) text_printf(t, " (SIG%s%s%s)", abbr, descr ? ": " : "", descr ? descr : "");
  } else {
    text_printf(t, "ended with status 0x%x", status);
  }
}

int status_exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

/* A group SIGKILL has not emptied after this long is stuck (a process in uninterruptible
 * sleep in a driver): the launcher stops waiting for it. */
#define KILL_WAIT_S 3.0

void group_stop(Job *j, RankProc *p, int sig) {
  if (!p->group_live) return;
  if (p->running) {
    p->stopped_by_us = true;
    kill(p->pid, sig); /* in case setpgid lost the race with exec */
  }
  kill(-p->pid, sig);
  double now = launch_now();
  if (sig == SIGKILL) {
    p->kill_at = -1;
    if (p->give_up_at < 0) p->give_up_at = now + KILL_WAIT_S;
  } else if (p->kill_at < 0 && p->give_up_at < 0) {
    p->kill_at = now + j->o->grace_s;
  }
}

void ranks_signal(Job *j, int sig) {
  for (int i = 0; i < j->o->nproc; i++) group_stop(j, &j->procs[i], sig);
}

static void earliest(double *wake, double t) {
  if (t >= 0 && (*wake < 0 || t < *wake)) *wake = t;
}

int groups_check(Job *j, double now, double *wake) {
  int live = 0;
  *wake = -1;
  for (int i = 0; i < j->o->nproc; i++) {
    RankProc *p = &j->procs[i];
    if (!p->group_live) continue;
    if (!p->running && kill(-p->pid, 0) != 0 && errno == ESRCH) {
      p->group_live = false;
      guard_tell(j, -p->pid); /* the number may be reused now: never signal it again */
      continue;
    }
    if (p->kill_at >= 0 && now >= p->kill_at) group_stop(j, p, SIGKILL);
    if (!p->running && p->give_up_at >= 0 && now >= p->give_up_at) {
      fprintf(stderr, "tilescale launch: warning: process group %d (rank %d) is still there %g s after SIGKILL; "
                      "not waiting for it\n", (int)p->pid, p->rank, KILL_WAIT_S);
      p->group_live = false;
      continue;
    }
    live++;
    earliest(wake, p->kill_at);
    earliest(wake, p->give_up_at);
  }
  return live;
}
