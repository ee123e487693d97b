/* launch_guard.c — the guard of `tilescale launch` (launch.h): a small process forked before
 * any rank, which outlives a launcher killed by SIGKILL just long enough to kill its ranks'
 * process groups.
 *
 * Each rank dies with the launcher through PR_SET_PDEATHSIG (launch_rank.c), but that
 * signal reaches the rank alone: what the rank started (a shell's children, helpers, a
 * compiler) would be orphaned and run on.  Nothing runs in a SIGKILLed process, so the
 * cleanup has to live in another one.  The guard holds one end of a socket pair whose
 * other end only the launcher has; over it the launcher sends
 *     +pgid   a rank's process group, as the rank starts
 *     -pgid   that group is empty now (so a reused number is never signalled)
 *     0       "I stopped everything myself", just before it exits
 * End of file without the 0 means the launcher died: the guard SIGKILLs every group still
 * listed and exits.  A socket pair rather than a pipe so that the launcher's writes use
 * MSG_NOSIGNAL: a guard killed by hand must not take the launcher down with SIGPIPE. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* The guard's whole life.  It reads until end of file; only then does it act. */
__attribute__((noreturn)) static void guard_main(int fd, pid_t launcher) {
  prctl(PR_SET_NAME, "ts-launch-guard"); /* in ps/top, not a second "tilescale launch" */
  /* A Ctrl-C reaches the launcher's whole process group, the guard included: the launcher
   * then stops the ranks in order, and must not lose its guard while it does. */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  /* Hold no end of the launcher's output: a reader waiting for EOF must not wait for us. */
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO), dup2(devnull, STDOUT_FILENO), close(devnull);

  int *groups = NULL, n = 0, cap = 0;
  bool clear = false;
  int msg;
  for (;;) {
    ssize_t r = recv(fd, &msg, sizeof msg, MSG_WAITALL);
    if (r < 0 && errno == EINTR) continue;
    if (r != (ssize_t)sizeof msg) break;
    clear = msg == 0;
    if (msg > 0) {
      if (n == cap) groups = launch_realloc(groups, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *groups);
      groups[n++] = msg;
    }
    for (int i = 0; msg < 0 && i < n; i++)
      if (groups[i] == -msg) groups[i--] = groups[--n];
  }
  int killed = 0;
  for (int i = 0; !clear && i < n; i++) killed += kill(-groups[i], SIGKILL) == 0;
  if (killed)
    fprintf(stderr, "tilescale launch: the launcher (pid %d) died; killed what was left of %d rank%s\n", (int)launcher,
            killed, killed == 1 ? "" : "s");
  _exit(0);
}

bool guard_start(Job *j) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
  fflush(stdout);
  fflush(stderr);
  pid_t launcher = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    close(sv[0]);
    guard_main(sv[1], launcher);
  }
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return false;
  }
  j->guard_fd = sv[0];
  j->guard_pid = pid;
  return true;
}

void guard_tell(Job *j, int msg) {
  if (j->guard_fd < 0) return;
  /* 4 bytes on a local stream socket: sent whole or (guard gone) not at all. */
  if (send(j->guard_fd, &msg, sizeof msg, MSG_NOSIGNAL) != (ssize_t)sizeof msg) {
    close(j->guard_fd);
    j->guard_fd = -1;
  }
}

void guard_stop(Job *j) {
  if (j->guard_pid <= 0) return;
  guard_tell(j, 0);
  if (j->guard_fd >= 0) close(j->guard_fd);
  j->guard_fd = -1;
  /* Waited for, so that nothing of the launcher's is left running when it returns. */
  while (waitpid(j->guard_pid, NULL, 0) < 0 && errno == EINTR) {
  }
  j->guard_pid = -1;
}
