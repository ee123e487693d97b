/* launch_node.c — the control link between the launchers of a multi-node job (launch.h).
 *
 * One launcher per node; they form a star of control connections around node 0's (it
 * listens on --control-port, default MASTER_PORT+1; the others join it before they start
 * their ranks).  Lines of printable text, at most LINK_MAX_LINE bytes each:
 *
 *   node r -> node 0   TSLAUNCH 1 HELLO <node> <nnodes> <nproc>   on joining
 *   node 0 -> node r   TSLAUNCH 1 WELCOME <nnodes> <nproc>        the join is accepted
 *                      FAIL <code> <why>         refused (another shape), or the job failed
 *   node r -> node 0   FAIL <code> <why>         a failure on node r (its ranks are stopping)
 *                      DONE                      every rank of node r succeeded
 *   node 0 -> node r   EXIT                      every rank of every node succeeded
 *
 * So the first failure anywhere (a rank, a timeout, an interrupt, a node that never joins or
 * whose launcher disappears) stops the ranks of every node, and every launcher exits with
 * the same code naming the same rank.  A launcher whose ranks all succeeded still waits
 * for node 0's verdict, so it too reports a failure elsewhere.
 *
 * The other end may not be a launcher at all (a port in use by another service, a scanner),
 * or a launcher of another version.  So joining is a two-way handshake bounded as a whole
 * by --join-timeout (connect, HELLO, and the WELCOME), the first line names the protocol
 * and its version, and every line is checked: its length, its bytes, its verb and fields,
 * and that this side may receive it now.  A node launcher gives up on a peer that fails
 * any of this and says which address and what went wrong; node 0 drops such a connection
 * with a warning (a stray client must not fail the job) unless it is a node that joined. */
#include "launch.h"

#include <arpa/inet.h>
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

#define LINK_MAGIC "TSLAUNCH"
#define LINK_VERSION 1
#define LINK_MAX_LINE 4096
/* A peer that stops reading must not block the launcher forever in send. */
#define LINK_SEND_TIMEOUT_S 5

/* ---- messages ------------------------------------------------------------------------------- */
typedef enum MsgKind { MSG_BAD, MSG_HELLO, MSG_WELCOME, MSG_FAIL, MSG_DONE, MSG_EXIT } MsgKind;

typedef struct Msg {
  MsgKind kind;
  int node, nnodes, nproc; /* HELLO (node, nnodes, nproc), WELCOME (nnodes, nproc) */
  int code;                /* FAIL */
  const char *text;        /* FAIL: the reason */
  int version;             /* a TSLAUNCH line of another version: its version (kind MSG_BAD) */
} Msg;

/* Up to 40 bytes of what a peer sent, readable in a message: other bytes as \xNN. */
static void excerpt(Text *t, const char *s, size_t n) {
  text_append(t, "'", 1);
  for (size_t i = 0; i < n && i < 40; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') text_append(t, s + i, 1);
    else text_printf(t, "\\x%02x", c);
  }
  text_printf(t, "'%s", n > 40 ? "..." : "");
}

/* "%d" fields: whole tokens only, in range. */
static bool int_field(const char **s, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(*s, &end, 10);
  if (end == *s || errno || v < lo || v > hi || (*end != ' ' && *end != 0) || **s == ' ' || **s == '+') return false;
  *out = (int)v;
  *s = *end ? end + 1 : end;
  return true;
}

/* Parses the n bytes of one line (without its '\n').  On MSG_BAD, `why` says what is wrong
 * with it.  m.text points into `buf`, the line made a string. */
static Msg msg_parse(const char *line, size_t n, char buf[LINK_MAX_LINE], Text *why) {
  Msg m = {MSG_BAD, 0, 0, 0, 0, NULL, 0};
  if (n >= LINK_MAX_LINE) {
    text_printf(why, "malformed message (a line longer than %d bytes): ", LINK_MAX_LINE);
    excerpt(why, line, n);
    return m;
  }
  memcpy(buf, line, n);
  buf[n] = 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f) {
      text_printf(why, "malformed message (control bytes): ");
      excerpt(why, line, n);
      return m;
    }
  const char *s = buf;
  if (!strncmp(s, LINK_MAGIC " ", sizeof LINK_MAGIC)) {
    s += sizeof LINK_MAGIC;
    int version;
    if (!int_field(&s, 0, 1 << 30, &version)) {
      text_printf(why, "malformed message (no protocol version): ");
    } else if (version != LINK_VERSION) {
      m.version = version;
      text_printf(why, "it speaks launcher protocol version %d, this launcher version %d (run the same tilescale "
                       "on every node)", version, LINK_VERSION);
      return m;
    } else if (!strncmp(s, "HELLO ", 6) && (s += 6, int_field(&s, 1, 1 << 20, &m.node)) &&
               int_field(&s, 1, 1 << 20, &m.nnodes) && int_field(&s, 1, 1 << 20, &m.nproc) && !*s) {
      m.kind = MSG_HELLO;
    } else if (!strncmp(s, "WELCOME ", 8) && (s += 8, int_field(&s, 1, 1 << 20, &m.nnodes)) &&
               int_field(&s, 1, 1 << 20, &m.nproc) && !*s) {
      m.kind = MSG_WELCOME;
    } else {
      text_printf(why, "malformed message ");
    }
  } else if (!strncmp(s, "FAIL ", 5) && (s += 5, int_field(&s, 1, 255, &m.code))) {
    m.kind = MSG_FAIL;
    m.text = *s ? s : "another node failed";
  } else if (!strcmp(s, "DONE") || !strcmp(s, "EXIT")) {
    m.kind = s[0] == 'D' ? MSG_DONE : MSG_EXIT;
  } else {
    text_printf(why, "malformed message ");
  }
  if (m.kind == MSG_BAD) excerpt(why, line, n);
  return m;
}

/* Bytes that do not end a line yet: can they still become a message?  Lets a peer that
 * sends garbage without a newline be refused at once rather than at the deadline. */
static bool could_be_message(const char *s, size_t n) {
  static const char *const starts[] = {LINK_MAGIC " ", "FAIL ", "DONE", "EXIT"};
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return false;
  if (n >= LINK_MAX_LINE) return false;
  for (int k = 0; k < LAUNCH_LEN(starts); k++) {
    size_t l = strlen(starts[k]);
    if (!strncmp(s, starts[k], n < l ? n : l)) return true;
  }
  return false;
}

/* One line to a peer launcher.  A peer that is gone is noticed by the read side. */
static void send_line(int fd, const char *fmt, ...) LAUNCH_PRINTF(2, 3);
static void send_line(int fd, const char *fmt, ...) {
  if (fd < 0) return;
  Text t = {0};
  va_list ap;
  va_start(ap, fmt);
  text_vprintf(&t, fmt, ap);
  va_end(ap);
  if (t.len > LINK_MAX_LINE - 1) t.len = LINK_MAX_LINE - 1; /* the peer would refuse more */
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

static void socket_setup(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct timeval tv = {LINK_SEND_TIMEOUT_S, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static Conn *conn_add(Job *j, int fd, int node, const char *peer) {
  if (j->nconns == j->cap) {
    j->cap = j->cap ? 2 * j->cap : 8;
    j->conns = launch_realloc(j->conns, (size_t)j->cap * sizeof *j->conns);
  }
  Conn *c = &j->conns[j->nconns++];
  memset(c, 0, sizeof *c);
  c->fd = fd;
  c->node = node;
  c->since = launch_now();
  snprintf(c->peer, sizeof c->peer, "%s", peer);
  return c;
}

/* ---- joining (node r > 0) ---------------------------------------------------------------------- */
/* One connection attempt to node 0's control port, waiting at most a second (an unreachable
 * address can take long to refuse).  Returns the connected socket, or -1 with the reason
 * in `err`. */
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
    socket_setup(fd);
    return fd;
  }
  text_printf(err, "%s", strerror(errno));
  if (fd >= 0) close(fd);
  return -1;
}

/* Connects to node 0's launcher, retrying until `deadline` (node 0 may start later).  An
 * interrupt (on the signalfd) gives up at once.  Returns the socket, or -1 after recording
 * the failure in the job. */
static int control_connect(Job *j, int sfd, double deadline) {
  const LaunchOpts *o = j->o;
  Text err = {0};
  for (;;) {
    text_clear(&err);
    int fd = try_connect(o, deadline, sfd, &err);
    if (fd >= 0) {
      text_free(&err);
      return fd;
    }
    double left = deadline - launch_now();
    if (left <= 0) break;
    struct pollfd p = {sfd, POLLIN, 0};
    if (poll(&p, 1, left < 0.2 ? (int)(left * 1000) + 1 : 200) > 0) {
      job_fail(j, 1, false, "node %d: interrupted while connecting to node 0's launcher at %s:%d", o->node_rank,
               o->master_addr, o->control_port);
      text_free(&err);
      return -1;
    }
  }
  job_fail(j, 1, false,
           "node %d: cannot reach node 0's launcher at %s:%d within %g s (last error: %s); start `tilescale launch "
           "--nnodes %d --node-rank 0 ...` there with the same --master-addr/--master-port",
           o->node_rank, o->master_addr, o->control_port, o->join_timeout_s, text_str(&err), o->nnodes);
  text_free(&err);
  return -1;
}

/* Waits, until `deadline`, for node 0's answer to our HELLO: its first complete line, left
 * in `in` with the bytes after it.  Returns the line's length, or -1 with what went wrong
 * (timeout, hang-up, interrupt, garbage) in `why`. */
static long await_reply(const LaunchOpts *o, int fd, int sfd, double deadline, Text *in, Text *why) {
  for (;;) {
    char *nl = in->len ? memchr(in->data, '\n', in->len) : NULL;
    if (nl) return nl - in->data;
    if (!could_be_message(text_str(in), in->len)) {
      text_printf(why, "malformed reply ");
      excerpt(why, in->data, in->len);
      text_printf(why, " (is another service listening on port %d?)", o->control_port);
      return -1;
    }
    double left = deadline - launch_now();
    if (left <= 0) {
      text_printf(why, "timed out after %g s (--join-timeout) waiting for its reply: it accepted the connection but "
                       "sent %s (is another service listening on port %d?)",
                  o->join_timeout_s, in->len ? "only part of a line" : "nothing", o->control_port);
      return -1;
    }
    struct pollfd p[2] = {{fd, POLLIN, 0}, {sfd, POLLIN, 0}};
    int pr = poll(p, 2, (int)(left * 1000) + 1);
    if (pr > 0 && (p[1].revents & POLLIN)) {
      text_printf(why, "interrupted");
      return -1;
    }
    if (pr <= 0) continue;
    char buf[1024];
    ssize_t r = recv(fd, buf, sizeof buf, 0);
    if (r > 0) {
      text_append(in, buf, (size_t)r);
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
      text_printf(why, "it closed the connection during the handshake%s", r == 0 ? "" : " (");
      if (r < 0) text_printf(why, "%s)", strerror(errno));
      return -1;
    }
  }
}

/* Node r > 0: the whole join, bounded by --join-timeout: connect, HELLO, and node 0's
 * WELCOME (or its FAIL: a launcher of another shape).  Returns the socket, or -1 after
 * recording the failure in the job. */
static int join_node0(Job *j, int sfd, Text *in) {
  const LaunchOpts *o = j->o;
  double deadline = launch_now() + o->join_timeout_s;
  int fd = control_connect(j, sfd, deadline);
  if (fd < 0) return -1;
  send_line(fd, LINK_MAGIC " %d HELLO %d %d %d", LINK_VERSION, o->node_rank, o->nnodes, o->nproc);
  Text why = {0};
  long n = await_reply(o, fd, sfd, deadline, in, &why);
  Msg m = {MSG_BAD, 0, 0, 0, 0, NULL, 0};
  char line[LINK_MAX_LINE];
  if (n >= 0) m = msg_parse(in->data, (size_t)n, line, &why);
  if (m.kind == MSG_WELCOME && m.nnodes == o->nnodes && m.nproc == o->nproc) {
    memmove(in->data, in->data + n + 1, in->len - (size_t)n - 1);
    in->len -= (size_t)n + 1;
    in->data[in->len] = 0;
    text_free(&why);
    return fd;
  }
  if (m.kind == MSG_FAIL) { /* refused: node 0's reason is the job's */
    fprintf(stderr, "tilescale launch: %s\n", m.text);
    job_fail(j, m.code, false, "%s", m.text);
  } else {
    if (m.kind == MSG_WELCOME)
      text_printf(&why, "it runs -n %d --nnodes %d, this one -n %d --nnodes %d", m.nproc, m.nnodes, o->nproc,
                  o->nnodes);
    else if (m.kind != MSG_BAD)
      text_printf(&why, "unexpected reply (not WELCOME or FAIL)");
    if (n >= 0 && m.kind != MSG_WELCOME && !m.version)
      text_printf(&why, " (is another service listening on port %d?)", o->control_port);
    job_fail(j, m.kind == MSG_WELCOME ? 2 : 1, false, "node %d: joining node 0's launcher at %s:%d: %s", o->node_rank,
             o->master_addr, o->control_port, text_str(&why));
  }
  text_free(&why);
  close(fd);
  return -1;
}

/* Node 0: the control port every other node's launcher connects to. */
static int control_listen(Job *j) {
  const LaunchOpts *o = j->o;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    job_fail(j, 1, false, "node 0: socket: %s", strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons((uint16_t)o->control_port);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0) {
    job_fail(j, 1, false, "node 0: cannot listen on control port %d: %s", o->control_port, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

static void conn_lines(Job *j, Conn *c);

bool node_link_open(Job *j, int sfd) {
  const LaunchOpts *o = j->o;
  j->join_deadline = launch_now() + o->join_timeout_s;
  if (o->node_rank == 0) return (j->listen_fd = control_listen(j)) >= 0;
  Text in = {0};
  int fd = join_node0(j, sfd, &in);
  if (fd >= 0) {
    char peer[64];
    snprintf(peer, sizeof peer, "%s:%d", o->master_addr, o->control_port);
    Conn *c = conn_add(j, fd, 0, peer);
    text_append(&c->in, text_str(&in), in.len); /* node 0 may have said more already */
    conn_lines(j, c);
  }
  text_free(&in);
  return fd >= 0 && !j->failed;
}

/* ---- the running job ------------------------------------------------------------------------- */
/* A FAIL from another launcher. */
static void on_remote_fail(Job *j, const Msg *m, bool relay) {
  if (j->failed) return;
  int n = running_ranks(j);
  fprintf(stderr, "tilescale launch: %s", m->text);
  if (n) fprintf(stderr, "; stopping the %d rank%s of node %d", n, n == 1 ? "" : "s", j->o->node_rank);
  fputc('\n', stderr);
  job_fail(j, m->code, relay, "%s", m->text);
}

/* Node 0: a HELLO on connection c; a launcher of another shape fails the job. */
static void on_hello(Job *j, Conn *c, const Msg *m) {
  const LaunchOpts *o = j->o;
  bool dup = false;
  for (int i = 0; i < j->nconns; i++) dup |= j->conns[i].node == m->node;
  if (m->nnodes != o->nnodes || m->nproc != o->nproc || m->node >= o->nnodes || dup) {
    Text t = {0};
    if (dup)
      text_printf(&t, "two launchers say they are node %d", m->node);
    else
      text_printf(&t,
                  "the launcher of node %d runs -n %d --nnodes %d, but node 0's runs -n %d --nnodes %d (every "
                  "node needs the same -n and --nnodes, and --node-rank 1..%d)",
                  m->node, m->nproc, m->nnodes, o->nproc, o->nnodes, o->nnodes - 1);
    fprintf(stderr, "tilescale launch: %s\n", text_str(&t));
    send_line(c->fd, "FAIL 2 %s", text_str(&t));
    conn_close(c);
    job_fail(j, 2, true, "%s", text_str(&t));
    text_free(&t);
    return;
  }
  c->node = m->node;
  j->joined++;
  send_line(c->fd, LINK_MAGIC " %d WELCOME %d %d", LINK_VERSION, o->nnodes, o->nproc);
  if (j->failed) send_line(c->fd, "FAIL %d %s", j->exit_code, text_str(&j->why));
}

/* A message this side cannot take from connection c (`why` says what is wrong).  From a
 * stranger that is its problem; from a node of the job, the job's. */
static void on_bad(Job *j, Conn *c, const char *why) {
  if (j->o->node_rank == 0 && c->node < 0) {
    fprintf(stderr, "tilescale launch: warning: ignoring a connection from %s to the control port: %s\n", c->peer,
            why);
    conn_close(c);
    return;
  }
  Text who = {0};
  if (c->node == 0) text_printf(&who, "node 0's launcher at %s", c->peer);
  else text_printf(&who, "the launcher of node %d (%s)", c->node, c->peer);
  fprintf(stderr, "tilescale launch: %s: %s; stopping every rank\n", text_str(&who), why);
  conn_close(c);
  if (!j->failed) job_fail(j, 1, true, "%s: %s", text_str(&who), why);
  text_free(&who);
}

/* One line from connection c: is it a message, and one this side may receive from c now? */
static void on_line(Job *j, Conn *c, const char *line, size_t n) {
  Text why = {0};
  char buf[LINK_MAX_LINE];
  Msg m = msg_parse(line, n, buf, &why);
  bool node0 = j->o->node_rank == 0;
  if (m.kind == MSG_BAD && m.version && node0 && c->node < 0) {
    /* A launcher of another version: surely a node of this job, which cannot work; fail now
     * rather than at the join deadline. */
    Text t = {0};
    text_printf(&t, "the launcher at %s speaks launcher protocol version %d, node 0's version %d (run the same "
                    "tilescale on every node)", c->peer, m.version, LINK_VERSION);
    fprintf(stderr, "tilescale launch: %s\n", text_str(&t));
    send_line(c->fd, "FAIL 2 %s", text_str(&t));
    conn_close(c);
    job_fail(j, 2, true, "%s", text_str(&t));
    text_free(&t);
  } else if (m.kind == MSG_BAD) on_bad(j, c, text_str(&why));
  else if (node0 && c->node < 0 && m.kind == MSG_HELLO) on_hello(j, c, &m);
  else if (node0 && c->node > 0 && m.kind == MSG_FAIL) on_remote_fail(j, &m, true);
  else if (node0 && c->node > 0 && m.kind == MSG_DONE) c->done = true;
  else if (!node0 && m.kind == MSG_FAIL) on_remote_fail(j, &m, false);
  else if (!node0 && m.kind == MSG_EXIT) j->verdict = true;
  else {
    text_clear(&why);
    text_printf(&why, "unexpected message ");
    excerpt(&why, line, n);
    on_bad(j, c, text_str(&why));
  }
  text_free(&why);
}

/* Handles the complete lines in c->in; what is left must still be able to become one. */
static void conn_lines(Job *j, Conn *c) {
  size_t start = 0;
  char *nl;
  while (c->fd >= 0 && (nl = memchr(c->in.data + start, '\n', c->in.len - start))) {
    size_t n = (size_t)(nl - (c->in.data + start));
    if (n >= LINK_MAX_LINE) break;
    on_line(j, c, c->in.data + start, n);
    start += n + 1;
  }
  if (c->fd < 0) return;
  memmove(c->in.data, c->in.data + start, c->in.len - start);
  c->in.len -= start;
  c->in.data[c->in.len] = 0;
  if (!could_be_message(c->in.data, c->in.len)) {
    Text why = {0};
    text_printf(&why, "%s", c->in.len >= LINK_MAX_LINE ? "a line longer than 4096 bytes: " : "malformed message ");
    excerpt(&why, c->in.data, c->in.len);
    on_bad(j, c, text_str(&why));
    text_free(&why);
  }
}

/* Reads what connection c has.  On EOF the connection closes and, unless its work was over,
 * that is a failure. */
static void conn_pump(Job *j, Conn *c) {
  char buf[4096];
  ssize_t r = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
  if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
  if (r > 0) {
    text_append(&c->in, buf, (size_t)r);
    conn_lines(j, c);
    return;
  }
  int node = c->node;
  bool over = c->done;
  conn_close(c);
  if (j->failed || node < 0) return;
  if (j->o->node_rank != 0 && !j->verdict) {
    fprintf(stderr, "tilescale launch: lost the connection to node 0's launcher at %s; stopping this node's ranks\n",
            c->peer);
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
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int c = accept4(j->listen_fd, (struct sockaddr *)&a, &len, SOCK_CLOEXEC);
    if (c < 0) return;
    socket_setup(c);
    char peer[64], ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
    snprintf(peer, sizeof peer, "%s:%d", ip, ntohs(a.sin_port));
    conn_add(j, c, -1, peer);
    return;
  }
  for (int i = 0; i < j->nconns; i++)
    if (j->conns[i].fd == fd) conn_pump(j, &j->conns[i]);
}

double node_link_wake(const Job *j) {
  double wake = -1;
  if (j->multi && j->o->node_rank == 0 && !j->failed && j->joined < j->o->nnodes - 1) wake = j->join_deadline;
  for (int i = 0; i < j->nconns; i++) {
    const Conn *c = &j->conns[i];
    double t = c->since + j->o->join_timeout_s;
    if (c->fd >= 0 && c->node < 0 && (wake < 0 || t < wake)) wake = t;
  }
  return wake;
}

/* Node 0: gives up on the nodes that have not joined by the deadline, and on connections
 * that have not said who they are within --join-timeout of connecting. */
void node_link_check(Job *j, double now) {
  const LaunchOpts *o = j->o;
  for (int i = 0; i < j->nconns; i++) {
    Conn *c = &j->conns[i];
    if (c->fd >= 0 && c->node < 0 && now >= c->since + o->join_timeout_s)
      on_bad(j, c, "no HELLO within --join-timeout");
  }
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
