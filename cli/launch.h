/* launch.h — `tilescale launch` (DESIGN.md §7): what its files share.
 *
 *   launch.c       options and help, the ranks' environment, the poll loop that watches this
 *                  node's ranks until the job's outcome is known, and the final report
 *   launch_rank.c  one rank's life: started in its own process group, its output forwarded
 *                  line by line with a prefix, its status described, its group stopped
 *   launch_node.c  jobs of several nodes: the control link between the node launchers
 *   launch_guard.c the guard: a process that kills the ranks' process groups if the launcher
 *                  itself is killed (SIGKILL leaves the launcher no chance to)
 *
 * The launcher is a CLI command, not part of libtilescale: a library must not fork, take
 * over signals or exit on its caller's behalf.  It needs nothing of the library but the
 * public TS_DIST_MAX_RANKS, so it is written against libc alone. */
#ifndef TS_CLI_LAUNCH_H
#define TS_CLI_LAUNCH_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pollfd;

/* The whole subcommand: argv[0] is "launch" (or anything), options and the program follow.
 * Returns the process exit code. */
int cmd_launch(int argc, char **argv);

#define LAUNCH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define LAUNCH_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- small helpers (launch.c) ---------------------------------------------------------------- */
/* A growable NUL-terminated string. */
typedef struct Text {
  char *data;
  size_t len, cap;
} Text;

void text_append(Text *t, const char *s, size_t n);
void text_printf(Text *t, const char *fmt, ...) LAUNCH_PRINTF(2, 3);
void text_vprintf(Text *t, const char *fmt, va_list ap);
const char *text_str(const Text *t); /* "" while empty */
void text_clear(Text *t);
void text_free(Text *t);
/* realloc that ends the launcher on exhaustion (its ranks then die with it: see spawn). */
void *launch_realloc(void *p, size_t bytes);
double launch_now(void); /* monotonic seconds */

/* ---- the job ---------------------------------------------------------------------------------- */
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
  pid_t pid;         /* also its process group's id */
  int fd[2];         /* stdout, stderr pipes (read ends); -1 once closed */
  Text partial[2];   /* a line not yet ended by '\n' */
  bool running;
  bool exit_seen;    /* reaped, on_rank_exit not yet run */
  bool group_live;   /* its process group may still have members: the rank, or what it
                        started, which outlives it unless stopped */
  bool stopped_by_us;
  double kill_at;    /* SIGKILL the group at this time (a gentler signal went first); -1: none */
  double give_up_at; /* stop waiting for a group that SIGKILL did not empty; -1: none */
  int status;        /* waitpid status once exited */
} RankProc;

/* A control connection to another node's launcher (launch_node.c). */
typedef struct Conn {
  int fd;        /* -1 once closed */
  int node;      /* the node at the other end; on node 0 -1 until its HELLO */
  char peer[64]; /* its address:port, for messages */
  double since;  /* when it connected: node 0 drops one silent past --join-timeout */
  Text in;       /* received bytes not yet ending a line */
  bool done;     /* node 0: that node's ranks all succeeded */
} Conn;

typedef struct Job {
  const LaunchOpts *o;
  RankProc *procs;
  sigset_t orig_mask;   /* the mask the launcher started with: the ranks get it back */
  struct sigaction orig_sigpipe; /* SIGPIPE as the launcher found it: the ranks get it back */
  pid_t launcher_pid;   /* getpid(): a rank checks it still has this parent */
  int guard_fd;         /* the guard's socket (launch_guard.c); -1 without a guard */
  pid_t guard_pid;      /* -1 without a guard */
  bool failed;          /* the first failure decides the outcome */
  int stop_sig;         /* what stops the ranks first: the interrupt the launcher got, passed
                           on as a terminal would have; else SIGTERM */
  int exit_code;
  Text why;             /* what failed: "rank 3 exited with code 3", for the last line */
  bool out_closed[2];   /* our stdout / stderr got EPIPE: output for it is dropped */
  char on_node[32];     /* " on node R" in multi-node jobs, where a rank number alone does
                           not say where to look; "" otherwise */
  bool multi;           /* nnodes > 1 */
  int listen_fd;        /* node 0: the control port; -1 otherwise */
  Conn *conns;          /* node 0: accepted connections; node r > 0: [0] is node 0 */
  int nconns, cap;
  int joined;           /* node 0: nodes that said HELLO */
  bool done_sent;       /* node r > 0: DONE sent */
  bool verdict;         /* node r > 0: EXIT received; node 0: EXIT sent */
  double join_deadline; /* node 0: when the missing nodes are given up on */
  double started;       /* for --timeout */
} Job;

/* launch.c: records the job's failure (only the first counts), stops this node's ranks and,
 * when `tell`, passes it on to the other nodes. */
void job_fail(Job *j, int code, bool tell, const char *fmt, ...) LAUNCH_PRINTF(4, 5);
int running_ranks(const Job *j);

/* ---- ranks (launch_rank.c) -------------------------------------------------------------------- */
bool rank_spawn(Job *j, RankProc *p, int local_rank);
/* Reads what is available on a rank's stream s (0 stdout, 1 stderr) and prints its complete
 * lines; closes the pipe at EOF. */
void rank_pump(Job *j, RankProc *p, int s);
/* Signals rank p's whole process group (SIGKILL follows a gentler signal after --grace). */
void group_stop(Job *j, RankProc *p, int sig);
void ranks_signal(Job *j, int sig);
/* After a rank exits: forgets its group once empty, SIGKILLs it when its grace is over.
 * Returns the number of groups still live; *wake gets the earliest deadline (or -1). */
int groups_check(Job *j, double now, double *wake);
void describe_status(Text *t, int status);
int status_exit_code(int status);

/* ---- the guard (launch_guard.c) --------------------------------------------------------------- */
/* Forks the guard; false (errno set) if it could not be started. */
bool guard_start(Job *j);
/* +pgid: a rank's group to kill if the launcher dies; -pgid: that group is empty now. */
void guard_tell(Job *j, int msg);
/* Tells the guard that everything is stopped, and waits for it to exit. */
void guard_stop(Job *j);

/* ---- nodes (launch_node.c) -------------------------------------------------------------------- */
/* Node 0 listens on the control port; another node joins node 0's launcher (a handshake
 * bounded by --join-timeout).  Returns false after recording the failure in the job (the
 * launch cannot go on).  sfd: the signalfd, so that an interrupt ends the wait to join. */
bool node_link_open(Job *j, int sfd);
/* Adds the link's descriptors to a poll set (returns the new count) and handles one that
 * is ready. */
int node_link_pollfds(const Job *j, struct pollfd *pfds, int np);
void node_link_ready(Job *j, int fd);
/* Sends FAIL <code> <why> to every node that joined (node 0) or to node 0. */
void node_link_tell_fail(Job *j);
/* The earliest time the link needs the loop awake (-1: none), and the checks then due. */
double node_link_wake(const Job *j);
void node_link_check(Job *j, double now);
/* Every rank of this node has exited and nothing failed: true when the launcher may exit. */
bool node_link_complete(Job *j);
void node_link_close(Job *j);

#endif
