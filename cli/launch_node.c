/* launch_node.c — the control link between the launchers of a multi-node job (launch.h).
 *
 * One launcher per node; they form a star of control connections around node 0's (it
 * listens on --control-port, default MASTER_PORT+1; the others connect before they start
 * their ranks).  Lines of text:
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
 * for node 0's verdict, so it too reports a failure elsewhere. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One line to a peer launcher.  A peer that is gone is noticed by the read side. */
static void send_line(int fd, const char *fmt, ...) LAUNCH_PRINTF(2, 3);
static void send_line(int fd, const char *fmt, ...) {
  if (fd < 0) return;
  Text t = {0};
  va_list ap;
  va_start(ap, fmt);
  text_vprintf(&t, fmt, ap);
  va_end(ap);
  text_append(&t, "\n", 1);
  for (size_t off = 0; off < t.len;) {
    ssize_t w = send(fd, t.data + off, t.len - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  text_free(&t);
}

void node_link_tell_fail(Job *j) {
  for (int i = 0; i < j->nconns; i++)
    if (j->conns[i].node >= 0) send_line(j->conns[i].fd, "FAIL %d %s", j->exit_code, text_str(&j->why));
}

static void conn_close(Conn *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
}

static Conn *conn_add(Job *j, int fd, int node) {
  if (j->nconns == j->cap) {
    j->cap = j->cap ? 2 * j->cap : 8;
    j->conns = launch_realloc(j->conns, (size_t)j->cap * sizeof *j->conns);
  }
  Conn *c = &j->conns[j->nconns++];
  memset(c, 0, sizeof *c);
  c->fd = fd;
  c->node = node;
  return c;
}

/* ---- joining -------------------------------------------------------------------------------- */
/* Node 0: the control port every other node's launcher connects to. */
static int control_listen(const LaunchOpts *o, Text *why) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    text_printf(why, "socket: %s", strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons((uint16_t)o->control_port);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0) {
    text_printf(why, "cannot listen on control port %d: %s", o->control_port, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

/* One connection attempt to addr:port, waiting at most a second (an unreachable address can
 * take long to refuse).  Returns the connected socket, or -1 with errno set. */
static int try_connect(const LaunchOpts *o, double deadline, int sfd, Text *err) {
  char port[16];
  snprintf(port, sizeof port, "%d", o->control_port);
  struct addrinfo hints = {0}, *res = NULL;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  int gai = getaddrinfo(o->master_addr, port, &hints, &res);
  if (gai != 0) {
    text_printf(err, "cannot resolve %s: %s", o->master_addr, gai_strerror(gai));
    return -1;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int rc = fd < 0 ? -1 : connect(fd, res->ai_addr, res->ai_addrlen);
  if (fd >= 0 && rc != 0 && errno == EINPROGRESS) {
    double left = deadline - launch_now();
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
    return fd;
  }
  text_printf(err, "%s", strerror(errno));
  if (fd >= 0) close(fd);
  return -1;
}

/* Node r > 0: connects to node 0's launcher, retrying until the join deadline (node 0 may
 * start later), and says HELLO.  An interrupt (on the signalfd) gives up at once.  Returns
 * the connection, or -1 with the reason in `why`. */
static int control_connect(const LaunchOpts *o, int sfd, Text *why) {
  double deadline = launch_now() + o->join_timeout_s;
  Text err = {0};
  text_printf(&err, "no attempt");
  for (;;) {
    text_clear(&err);
    int fd = try_connect(o, deadline, sfd, &err);
    if (fd >= 0) {
      send_line(fd, "HELLO %d %d %d", o->node_rank, o->nnodes, o->nproc);
      text_free(&err);
      return fd;
    }
    double left = deadline - launch_now();
    if (left <= 0) break;
    struct pollfd p = {sfd, POLLIN, 0};
    if (poll(&p, 1, left < 0.2 ? (int)(left * 1000) + 1 : 200) > 0) {
      text_printf(why, "interrupted while connecting to node 0's launcher at %s:%d", o->master_addr, o->control_port);
      text_free(&err);
      return -1;
    }
  }
  text_printf(why,
              "cannot reach node 0's launcher at %s:%d within %g s (last error: %s); start `tilescale launch "
              "--nnodes %d --node-rank 0 ...` there with the same --master-addr/--master-port",
              o->master_addr, o->control_port, o->join_timeout_s, text_str(&err), o->nnodes);
  text_free(&err);
  return -1;
}

bool node_link_open(Job *j, int sfd, Text *why) {
  const LaunchOpts *o = j->o;
  int fd = o->node_rank == 0 ? control_listen(o, why) : control_connect(o, sfd, why);
  if (fd < 0) return false;
  if (o->node_rank == 0) j->listen_fd = fd;
  else conn_add(j, fd, 0);
  j->join_deadline = launch_now() + o->join_timeout_s;
  return true;
}

/* ---- messages ------------------------------------------------------------------------------- */
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

/* Node 0: a HELLO from connection c; a launcher of another shape fails the job. */
static void on_hello(Job *j, Conn *c, const char *args) {
  const LaunchOpts *o = j->o;
  int node = -1, nnodes = -1, nproc = -1;
  bool dup = false;
  if (sscanf(args, "%d %d %d", &node, &nnodes, &nproc) == 3)
    for (int i = 0; i < j->nconns; i++) dup |= j->conns[i].node == node;
  if (nnodes != o->nnodes || nproc != o->nproc || node < 1 || node >= o->nnodes || dup) {
    Text t = {0};
    if (dup)
      text_printf(&t, "two launchers say they are node %d", node);
    else
      text_printf(&t,
                  "the launcher of node %d runs -n %d --nnodes %d, but node 0's runs -n %d --nnodes %d (every "
                  "node needs the same -n and --nnodes, and --node-rank 1..%d)",
                  node, nproc, nnodes, o->nproc, o->nnodes, o->nnodes - 1);
    fprintf(stderr, "tilescale launch: %s\n", text_str(&t));
    send_line(c->fd, "FAIL 2 %s", text_str(&t));
    conn_close(c);
    job_fail(j, 2, true, "%s", text_str(&t));
    text_free(&t);
    return;
  }
  c->node = node;
  j->joined++;
  if (j->failed) send_line(c->fd, "FAIL %d %s", j->exit_code, text_str(&j->why));
}

/* One line from connection c. */
static void on_line(Job *j, Conn *c, const char *line) {
  if (j->o->node_rank != 0) { /* from node 0 */
    if (!strncmp(line, "FAIL ", 5)) on_remote_fail(j, line + 5, false);
    else if (!strcmp(line, "EXIT")) j->verdict = true;
    return;
  }
  if (!strncmp(line, "HELLO ", 6) && c->node < 0) on_hello(j, c, line + 6);
  else if (!strncmp(line, "FAIL ", 5) && c->node >= 1) on_remote_fail(j, line + 5, true);
  else if (!strcmp(line, "DONE") && c->node >= 1) c->done = true;
}

/* Reads what connection c has; complete lines go to on_line.  On EOF the connection closes
 * and, unless its work was over, that is a failure. */
static void conn_pump(Job *j, Conn *c) {
  char buf[4096];
  ssize_t r = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
  if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
  if (r > 0) {
    text_append(&c->in, buf, (size_t)r);
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

/* ---- the poll loop's side --------------------------------------------------------------------- */
int node_link_pollfds(const Job *j, struct pollfd *pfds, int np) {
  if (j->listen_fd >= 0) pfds[np++] = (struct pollfd){j->listen_fd, POLLIN, 0};
  for (int i = 0; i < j->nconns; i++)
    if (j->conns[i].fd >= 0) pfds[np++] = (struct pollfd){j->conns[i].fd, POLLIN, 0};
  return np;
}

void node_link_ready(Job *j, int fd) {
  if (fd == j->listen_fd) {
    int c = accept4(j->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (c >= 0) {
      int one = 1;
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      conn_add(j, c, -1);
    }
    return;
  }
  for (int i = 0; i < j->nconns; i++)
    if (j->conns[i].fd == fd) conn_pump(j, &j->conns[i]);
}

double node_link_wake(const Job *j) {
  if (j->multi && j->o->node_rank == 0 && !j->failed && j->joined < j->o->nnodes - 1) return j->join_deadline;
  return -1;
}

/* Node 0: gives up on the nodes that have not joined by the deadline. */
void node_link_check(Job *j, double now) {
  const LaunchOpts *o = j->o;
  if (!j->multi || o->node_rank != 0 || j->failed || j->joined == o->nnodes - 1 || now < j->join_deadline) return;
  Text missing = {0};
  int n = 0;
  for (int node = 1; node < o->nnodes; node++) {
    bool in = false;
    for (int i = 0; i < j->nconns; i++) in |= j->conns[i].node == node;
    if (!in) text_printf(&missing, "%s%d", n++ ? ", " : "", node);
  }
  fprintf(stderr, "tilescale launch: node%s %s did not join within %g s; stopping every rank\n", n == 1 ? "" : "s",
          text_str(&missing), o->join_timeout_s);
  job_fail(j, 1, true,
           "node%s %s did not join within %g s (start `tilescale launch -n %d --nnodes %d --node-rank R "
           "--master-addr ADDR --master-port %d PROG` on each node; its launcher connects to this one on port %d)",
           n == 1 ? "" : "s", text_str(&missing), o->join_timeout_s, o->nproc, o->nnodes, o->master_port,
           o->control_port);
  text_free(&missing);
}

/* Node r reports DONE and waits for node 0's EXIT; node 0 waits for every node's DONE. */
bool node_link_complete(Job *j) {
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

void node_link_close(Job *j) {
  for (int i = 0; i < j->nconns; i++) {
    if (j->conns[i].fd >= 0) shutdown(j->conns[i].fd, SHUT_WR);
    conn_close(&j->conns[i]);
    text_free(&j->conns[i].in);
  }
  if (j->listen_fd >= 0) close(j->listen_fd);
  j->listen_fd = -1;
  free(j->conns);
  j->conns = NULL;
  j->nconns = j->cap = 0;
}
