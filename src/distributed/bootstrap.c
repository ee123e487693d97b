/* bootstrap.c — the TCP rendezvous that forms a group of ranks (DESIGN.md §7).
 *
 *   rank 0: listen(MASTER_PORT) <- hello(rank, world) from every other rank -> ack to all
 *   collectives: every rank > 0 sends its frame to rank 0, rank 0 answers every rank with
 *   the concatenation (a star: the groups are small and this only carries handles, ids and
 *   barriers, never bulk data)
 *
 * Robustness is the point of this file: every wait has a deadline, a rank that dies closes
 * its socket and its peers get an error naming it at once (never a hang), and every frame
 * carries the collective's sequence number and kind so ranks that call collectives in a
 * different order are caught instead of exchanging the wrong bytes. */
#include "dist.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BOOT_MAGIC 0x54535244u /* "TSRD" */
#define BOOT_VERSION 1u

enum { OP_HELLO = 1, OP_ACK = 2, OP_ALLGATHER = 3, OP_RESULT = 4 };

/* Every message starts with this header (host byte order: the group runs one binary, and
 * multi-node groups are the same architecture in practice). */
typedef struct BootFrame {
  uint32_t magic, op, seq, rank;
  uint64_t len;  /* payload bytes that follow */
  uint32_t world, version;
} BootFrame;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline for poll(); -1 (forever) when there is none. */
static int left_ms(int64_t deadline) {
  if (deadline < 0) return -1;
  int64_t l = deadline - now_ms();
  return l < 0 ? 0 : (int)(l > 1000000000 ? 1000000000 : l);
}

static int64_t deadline_after(int timeout_ms) { return timeout_ms > 0 ? now_ms() + timeout_ms : -1; }

/* Reads exactly n bytes.  Returns 1 on success, 0 on EOF (peer closed), -1 on timeout,
 * -2 on another error (errno set). */
static int read_full(int fd, void *buf, size_t n, int64_t deadline) {
  char *p = buf;
  while (n > 0) {
    struct pollfd pfd = {fd, POLLIN, 0};
    int pr = poll(&pfd, 1, left_ms(deadline));
    if (pr < 0) {
      if (errno == EINTR) continue;
      return -2;
    }
    if (pr == 0) return -1;
    ssize_t r = recv(fd, p, n, 0);
    if (r == 0) return 0;
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return 0;
      return -2;
    }
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

/* MSG_NOSIGNAL: a peer that died must give an error here, not a SIGPIPE that kills us. */
static bool write_full(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    p += r;
    n -= (size_t)r;
  }
  return true;
}

static void describe_read(StrBuf *err, int r, const char *who, int timeout_ms) {
  if (r == 0)
    sb_printf(err, "%s closed its rendezvous connection (it exited or crashed)", who);
  else if (r == -1)
    sb_printf(err, "timed out after %d ms waiting for %s", timeout_ms, who);
  else
    sb_printf(err, "reading from %s failed: %s", who, strerror(errno));
}

static bool send_frame(int fd, uint32_t op, uint32_t seq, uint32_t rank, uint32_t world, const void *data,
                       uint64_t len) {
  BootFrame f = {BOOT_MAGIC, op, seq, rank, len, world, BOOT_VERSION};
  return write_full(fd, &f, sizeof f) && (len == 0 || write_full(fd, data, (size_t)len));
}

static void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ---- group formation ------------------------------------------------------------------------ */
static bool root_listen(DistBoot *b, int port, StrBuf *err) {
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool v6 = fd >= 0;
  if (!v6) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    sb_printf(err, "rendezvous: rank 0 cannot create a socket: %s", strerror(errno));
    return false;
  }
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (v6) {
    /* Dual stack: ranks may reach rank 0 through an IPv4 or an IPv6 MASTER_ADDR. */
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    struct sockaddr_in6 a = {0};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons((uint16_t)port);
    rc = bind(fd, (struct sockaddr *)&a, sizeof a);
  } else {
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons((uint16_t)port);
    rc = bind(fd, (struct sockaddr *)&a, sizeof a);
  }
  if (rc != 0 || listen(fd, b->world + 16) != 0) {
    sb_printf(err, "rendezvous: rank 0 cannot listen on port %d: %s (set MASTER_PORT / --master-port to a free port)",
              port, strerror(errno));
    close(fd);
    return false;
  }
  b->listen_fd = fd;
  return true;
}

static bool root_gather_hellos(DistBoot *b, int port, int timeout_ms, StrBuf *err) {
  int64_t deadline = deadline_after(timeout_ms);
  int joined = 1;
  while (joined < b->world) {
    struct pollfd pfd = {b->listen_fd, POLLIN, 0};
    int pr = poll(&pfd, 1, left_ms(deadline));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) {
      sb_printf(err, "rendezvous: rank 0 timed out after %d ms on port %d: %d of %d ranks joined; missing ranks:",
                timeout_ms, port, joined, b->world);
      int shown = 0;
      for (int r = 1; r < b->world && shown < 16; r++)
        if (b->peer_fd[r] < 0) sb_printf(err, " %d", r), shown++;
      if (b->world - joined > shown) sb_append(err, " ...");
      return false;
    }
    int fd = accept4(b->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) continue;
    set_nodelay(fd);
    BootFrame f;
    /* A stray connection (a port scanner, a stale rank of an earlier job) must not stall or
     * poison the group: it gets a short deadline and a check of magic, version and world. */
    int r = read_full(fd, &f, sizeof f, now_ms() + 2000);
    if (r != 1 || f.magic != BOOT_MAGIC || f.op != OP_HELLO) {
      close(fd);
      continue;
    }
    if (f.version != BOOT_VERSION || f.world != (uint32_t)b->world || f.rank == 0 || f.rank >= (uint32_t)b->world ||
        b->peer_fd[f.rank] >= 0) {
      if (f.version != BOOT_VERSION)
        sb_printf(err, "rendezvous: a rank joined with protocol version %u, expected %u (mixed tilescale builds?)",
                  f.version, BOOT_VERSION);
      else if (f.world != (uint32_t)b->world)
        sb_printf(err, "rendezvous: rank %u joined with WORLD_SIZE=%u but rank 0 has WORLD_SIZE=%d", f.rank, f.world,
                  b->world);
      else
        sb_printf(err, "rendezvous: rank %u joined twice, or is out of range for WORLD_SIZE=%d", f.rank, b->world);
      close(fd);
      return false;
    }
    b->peer_fd[f.rank] = fd;
    joined++;
  }
  for (int r = 1; r < b->world; r++)
    if (!send_frame(b->peer_fd[r], OP_ACK, 0, 0, (uint32_t)b->world, NULL, 0)) {
      sb_printf(err, "rendezvous: rank 0 could not answer rank %d: %s", r, strerror(errno));
      return false;
    }
  return true;
}

/* Non-blocking connect so that an unreachable host costs at most the deadline. */
static int connect_once(const struct addrinfo *ai, int64_t deadline, int *err_no) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) {
    *err_no = errno;
    return -1;
  }
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
  if (rc != 0 && errno == EINPROGRESS) {
    struct pollfd pfd = {fd, POLLOUT, 0};
    int wait = left_ms(deadline);
    if (wait < 0 || wait > 1000) wait = 1000;
    if (poll(&pfd, 1, wait) == 1) {
      int so = 0;
      socklen_t len = sizeof so;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len);
      rc = so == 0 ? 0 : -1;
      errno = so ? so : ETIMEDOUT;
    } else {
      rc = -1;
      errno = ETIMEDOUT;
    }
  }
  if (rc != 0) {
    *err_no = errno;
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fl);
  set_nodelay(fd);
  return fd;
}

static bool peer_join(DistBoot *b, const char *addr, int port, int timeout_ms, StrBuf *err) {
  int64_t deadline = deadline_after(timeout_ms);
  char port_s[16];
  snprintf(port_s, sizeof port_s, "%d", port);
  int last_errno = 0;
  const char *last_what = "connect";
  for (;;) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gr = getaddrinfo(addr, port_s, &hints, &res);
    if (gr == 0) {
      for (struct addrinfo *ai = res; ai && b->root_fd < 0; ai = ai->ai_next)
        b->root_fd = connect_once(ai, deadline, &last_errno);
      freeaddrinfo(res);
    } else if (gr != EAI_AGAIN) {
      sb_printf(err, "rendezvous: rank %d cannot resolve MASTER_ADDR '%s': %s", b->rank, addr, gai_strerror(gr));
      return false;
    }
    if (b->root_fd >= 0) {
      if (!send_frame(b->root_fd, OP_HELLO, 0, (uint32_t)b->rank, (uint32_t)b->world, NULL, 0)) {
        last_errno = errno;
        last_what = "hello";
      } else {
        BootFrame f;
        int r = read_full(b->root_fd, &f, sizeof f, deadline);
        if (r == 1 && f.magic == BOOT_MAGIC && f.op == OP_ACK) return true;
        if (r == -1) break;
        /* Closed before the ack: rank 0 refused us (see its error) or a previous job's
         * listener was still there; retry until the deadline. */
        last_errno = r == 0 ? ECONNRESET : errno;
        last_what = "waiting for the group";
      }
      close(b->root_fd);
      b->root_fd = -1;
    }
    if (deadline >= 0 && now_ms() >= deadline) break;
    /* Rank 0 may simply not be listening yet: poll every 50 ms. */
    struct timespec ts = {0, 50 * 1000000};
    nanosleep(&ts, NULL);
    if (deadline >= 0 && now_ms() >= deadline) break;
  }
  sb_printf(err, "rendezvous: rank %d could not join rank 0 at %s:%d within %d ms (%s: %s); is rank 0 running?",
            b->rank, addr, port, timeout_ms, last_what, last_errno ? strerror(last_errno) : "timed out");
  return false;
}

bool dist_boot_open(DistBoot *b, const char *addr, int port, int rank, int world, int connect_timeout_ms,
                    StrBuf *err) {
  memset(b, 0, sizeof *b);
  b->listen_fd = b->root_fd = -1;
  b->rank = rank;
  b->world = world;
  if (world < 1 || rank < 0 || rank >= world) {
    sb_printf(err, "rendezvous: rank %d is out of range for world size %d", rank, world);
    return false;
  }
  if (world == 1) return true;
  if (port <= 0 || port > 65535) {
    sb_printf(err, "rendezvous: MASTER_PORT %d is not a valid TCP port", port);
    return false;
  }
  if (rank == 0) {
    b->peer_fd = ts_malloc(sizeof(int) * (size_t)world);
    for (int r = 0; r < world; r++) b->peer_fd[r] = -1;
    if (!root_listen(b, port, err) || !root_gather_hellos(b, port, connect_timeout_ms, err)) {
      dist_boot_close(b);
      return false;
    }
    /* The group is complete: no one else may join, so the port is released at once. */
    close(b->listen_fd);
    b->listen_fd = -1;
    return true;
  }
  if (!peer_join(b, addr && *addr ? addr : "127.0.0.1", port, connect_timeout_ms, err)) {
    dist_boot_close(b);
    return false;
  }
  return true;
}

void dist_boot_close(DistBoot *b) {
  if (b->listen_fd >= 0) close(b->listen_fd);
  if (b->root_fd >= 0) close(b->root_fd);
  if (b->peer_fd) {
    for (int r = 0; r < b->world; r++)
      if (b->peer_fd[r] >= 0) close(b->peer_fd[r]);
    ts_free(b->peer_fd);
  }
  b->peer_fd = NULL;
  b->listen_fd = b->root_fd = -1;
}

/* ---- collectives ------------------------------------------------------------------------- */
static bool check_frame(const DistBoot *b, const BootFrame *f, uint32_t op, uint64_t len, const char *who,
                        StrBuf *err) {
  if (f->magic != BOOT_MAGIC || f->op != op) {
    sb_printf(err, "rendezvous: garbled message from %s", who);
    return false;
  }
  if (f->seq != b->seq) {
    sb_printf(err, "rendezvous: %s is at collective #%u but rank %d is at #%u: the ranks called collective "
                   "operations (malloc, free, barrier, ...) in a different order",
              who, f->seq, b->rank, b->seq);
    return false;
  }
  if (f->len != len) {
    sb_printf(err, "rendezvous: collective #%u: %s contributed %llu bytes but rank %d contributed %llu", b->seq, who,
              (unsigned long long)f->len, b->rank, (unsigned long long)len);
    return false;
  }
  return true;
}

bool dist_boot_allgather(DistBoot *b, const void *send, size_t bytes, void *recv, StrBuf *err) {
  char *out = recv;
  if (bytes) memcpy(out + (size_t)b->rank * bytes, send, bytes);
  b->seq++;
  if (b->world == 1) return true;
  int64_t deadline = deadline_after(b->op_timeout_ms);
  char who[32];
  if (b->rank == 0) {
    for (int r = 1; r < b->world; r++) {
      BootFrame f;
      snprintf(who, sizeof who, "rank %d", r);
      int rr = read_full(b->peer_fd[r], &f, sizeof f, deadline);
      if (rr != 1) {
        sb_append(err, "rendezvous (rank 0): ");
        describe_read(err, rr, who, b->op_timeout_ms);
        return false;
      }
      if (!check_frame(b, &f, OP_ALLGATHER, bytes, who, err)) return false;
      if (bytes && (rr = read_full(b->peer_fd[r], out + (size_t)r * bytes, bytes, deadline)) != 1) {
        sb_append(err, "rendezvous (rank 0): ");
        describe_read(err, rr, who, b->op_timeout_ms);
        return false;
      }
    }
    size_t total = bytes * (size_t)b->world;
    for (int r = 1; r < b->world; r++)
      if (!send_frame(b->peer_fd[r], OP_RESULT, b->seq, 0, (uint32_t)b->world, out, total)) {
        sb_printf(err, "rendezvous (rank 0): sending to rank %d failed (it exited or crashed): %s", r, strerror(errno));
        return false;
      }
    return true;
  }
  if (!send_frame(b->root_fd, OP_ALLGATHER, b->seq, (uint32_t)b->rank, (uint32_t)b->world, send, bytes)) {
    sb_printf(err, "rendezvous (rank %d): sending to rank 0 failed (it exited or crashed): %s", b->rank,
              strerror(errno));
    return false;
  }
  BootFrame f;
  int rr = read_full(b->root_fd, &f, sizeof f, deadline);
  if (rr != 1) {
    sb_printf(err, "rendezvous (rank %d): ", b->rank);
    describe_read(err, rr, "rank 0", b->op_timeout_ms);
    return false;
  }
  if (!check_frame(b, &f, OP_RESULT, bytes * (size_t)b->world, "rank 0", err)) return false;
  if (bytes && (rr = read_full(b->root_fd, out, bytes * (size_t)b->world, deadline)) != 1) {
    sb_printf(err, "rendezvous (rank %d): ", b->rank);
    describe_read(err, rr, "rank 0", b->op_timeout_ms);
    return false;
  }
  return true;
}

bool dist_boot_barrier(DistBoot *b, StrBuf *err) {
  char dummy = 0;
  return dist_boot_allgather(b, &dummy, 0, &dummy, err);
}

bool dist_boot_broadcast(DistBoot *b, void *buf, size_t bytes, StrBuf *err) {
  /* Small payloads only (ids, handles): an allgather where everyone but rank 0 is ignored. */
  char *all = ts_malloc(bytes * (size_t)b->world + 1);
  bool ok = dist_boot_allgather(b, buf, bytes, all, err);
  if (ok && b->rank != 0) memcpy(buf, all, bytes);
  ts_free(all);
  return ok;
}
