// fuzz_netlink: hostile messages for every command of lite.ko's generic
// netlink family (issue 9, item 5), run by tests/vm/fuzz.sh.
//
//   fuzz_netlink [--seed N] [--messages N] [--addr A.B.C.D] [--hang-secs N]
//
// As root (run it on a node of its own, with no agent: valid commands change
// the node): every command, from a valid template mutated at random —
// attributes dropped, duplicated, of unknown or other commands' types, with
// wrong lengths, boundary values, oversized strings, garbage nests, nest
// flags where none belong, a truncated last attribute, trailing bytes;
// dump flags where they do not belong and the reverse. Two sockets, one of
// them attaching and detaching as the node's agent; a child process makes
// ALLOC/MAP/FREE upcalls through /dev/lite that the fuzzer answers with
// real upcall ids and fuzzed answers. --addr is this node's RDMA address
// (for NODE_SET); peers get addresses in 10.211.1.0/24, where no node is.
// At the end it removes every peer and frees every LMR it left behind.
//
// As another user (the suite runs it with setpriv --reuid=1000): the same
// messages, and every admin command must fail with EPERM, always; the rest
// with what the uapi documents.
//
// A reply with an errno kmod/include/uapi/lite.h does not document for the
// command, a success where the uapi says the call must fail, an EPERM
// missing, or no answer within --hang-secs fails the run. Results are
// counted per command and errno. Exit status: 0 clean, 1 failures, 100
// set-up failed (no lite family).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

#define NCMD (LITE_CMD_MAX + 4)  // the family's commands and a few unknown
#define NERR 160
#define BUF (256 << 10)

static uint64_t seed = 1, state;
static long messages = 100000;
static int hang_secs = 20, privileged;
static uint32_t self_addr;  // network order
static int family;
static uint64_t counts[NCMD][NERR];
static long failures;
static char last_msg[256];    // the kernel's extended-ack message
static uint64_t upcalls[64];  // upcall ids seen on the agent socket
static unsigned nupcalls;

static uint64_t rnd(void) {  // splitmix64
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);

  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
static int pct(int p) { return (int)below(100) < p; }

// Failures of one kind (command and errno) print 3 lines, all of them 40;
// every one counts.
static unsigned char printed[NCMD][NERR];
static int kind_cmd = -1, kind_err;

static void fail(const char *fmt, ...) {
  va_list ap;
  unsigned char *n = kind_cmd >= 0 ? &printed[kind_cmd][kind_err] : NULL;

  static int lines;

  failures++;
  if (lines >= 40 || (n && *n >= 3)) return;
  lines++;
  if (n) (*n)++;
  va_start(ap, fmt);
  printf("  FAIL  [seed %llu, %s] ", (unsigned long long)seed,
         privileged ? "root" : "unprivileged");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

// --- what the uapi says
// ---------------------------------------------------------------

static int is_admin(int cmd) {
  switch (cmd) {
    case LITE_CMD_AGENT_ATTACH:
    case LITE_CMD_AGENT_DETACH:
    case LITE_CMD_NODE_SET:
    case LITE_CMD_PEER_ADD:
    case LITE_CMD_PEER_REMOVE:
    case LITE_CMD_LMR_ALLOC:
    case LITE_CMD_LMR_FREE:
    case LITE_CMD_LMR_UPDATE:
    case LITE_CMD_LMR_GET:
    case LITE_CMD_UPCALL_COMPLETE:
    case LITE_CMD_GRANT_REVOKE:
    case LITE_CMD_GRANT_GET:
    case LITE_CMD_RPC_BIND:
    case LITE_CMD_RPC_SERVICE_GET:
    case LITE_CMD_PEER_PROBE:
      return 1;
  }
  return 0;
}
static int is_dump(int cmd) {
  return cmd == LITE_CMD_PEER_GET || cmd == LITE_CMD_LMR_GET ||
         cmd == LITE_CMD_GRANT_GET || cmd == LITE_CMD_RPC_SERVICE_GET;
}
static int is_request(int cmd) {
  return cmd > LITE_CMD_UNSPEC && cmd <= LITE_CMD_MAX &&
         cmd != LITE_CMD_EVENT_PEER_CONNECTED &&
         cmd != LITE_CMD_EVENT_PEER_FAILED &&
         cmd != LITE_CMD_EVENT_PEER_REMOVED && cmd != LITE_CMD_UPCALL;
}

// The errnos the uapi lists per command; EINVAL (policy) and EOPNOTSUPP (a
// dump asked of a command that has none, or the reverse) hold for all.
static const int kDoc[NCMD][12] = {
    [LITE_CMD_AGENT_ATTACH] = {EPERM, EBUSY},
    [LITE_CMD_AGENT_DETACH] = {EPERM, ENOTCONN, EBUSY},
    [LITE_CMD_NODE_SET] = {EPERM, EEXIST, EBUSY, EADDRNOTAVAIL, EADDRINUSE,
                           ENOMEM},
    [LITE_CMD_NODE_GET] = {ENOMEM},
    [LITE_CMD_PEER_ADD] = {EPERM, ENXIO, EEXIST, ESTALE, ENOSPC, EBUSY, ENOMEM},
    [LITE_CMD_PEER_REMOVE] = {EPERM, ENOENT, ESTALE, EBUSY},
    [LITE_CMD_PEER_GET] = {0},
    [LITE_CMD_LMR_ALLOC] = {EPERM, EBUSY, ENXIO, ENODEV, EEXIST, ENOSPC,
                            ENOMEM},
    [LITE_CMD_LMR_FREE] = {EPERM, EBUSY, ENOENT},
    [LITE_CMD_LMR_UPDATE] = {EPERM, EBUSY, ENOENT, EEXIST},
    [LITE_CMD_LMR_GET] = {EPERM},
    [LITE_CMD_UPCALL_COMPLETE] = {EPERM, EBUSY, ENOENT, EEXIST, EMFILE,
                                  ECANCELED},
    [LITE_CMD_GRANT_REVOKE] = {EPERM, EBUSY, ENOENT},
    [LITE_CMD_GRANT_GET] = {EPERM},
    [LITE_CMD_RPC_BIND] = {EPERM, EBUSY, ENOENT, ESTALE, EUSERS, EHOSTDOWN,
                           ENOMEM, EINTR},
    [LITE_CMD_RPC_SERVICE_GET] = {EPERM},
    [LITE_CMD_PEER_PROBE] = {EPERM, ENOENT, EHOSTDOWN, ETIMEDOUT, EINTR, ENOMEM,
                             EIO},
};

static int documented(int cmd, int err) {
  if (!is_request(cmd)) return err == EOPNOTSUPP;
  // A malformed message: EINVAL, or ERANGE where the kernel's own policy
  // check measured the attribute (lite.h, "Validation").
  if (err == EINVAL || err == ERANGE || err == EOPNOTSUPP) return 1;
  for (const int *e = kDoc[cmd]; *e; e++)
    if (*e == err) return 1;
  return 0;
}

// --- messages
// ---------------------------------------------------------------------------

struct msg {
  char b[BUF];
  size_t len;
};

static struct nlattr *put(struct msg *m, uint16_t type, const void *data,
                          size_t n) {
  struct nlattr *a = (struct nlattr *)(m->b + m->len);

  if (m->len + NLA_HDRLEN + NLA_ALIGN(n) > BUF - 64) return a;
  a->nla_type = type;
  a->nla_len = (uint16_t)(NLA_HDRLEN + n);
  if (n) memcpy((char *)a + NLA_HDRLEN, data, n);
  memset((char *)a + NLA_HDRLEN + n, 0, NLA_ALIGN(n) - n);
  m->len += NLA_HDRLEN + NLA_ALIGN(n);
  return a;
}
static void put32(struct msg *m, uint16_t t, uint32_t v) { put(m, t, &v, 4); }
static void put64(struct msg *m, uint16_t t, uint64_t v) { put(m, t, &v, 8); }
static void putstr(struct msg *m, uint16_t t, const char *s) {
  put(m, t, s, strlen(s) + 1);
}
static size_t nest_start(struct msg *m, uint16_t t) {
  size_t at = m->len;

  put(m, t | NLA_F_NESTED, NULL, 0);
  return at;
}
static void nest_end(struct msg *m, size_t at) {
  ((struct nlattr *)(m->b + at))->nla_len = (uint16_t)(m->len - at);
}

// A value for attribute type t: valid most of the time, else an edge.
static void put_value(struct msg *m, uint16_t t) {
  static const uint64_t kEdge[] = {
      0, 1, 0xffffffffULL, 0x100000000ULL, UINT64_MAX, LITE_LMR_SIZE_MAX + 1};
  char s[LITE_MESSAGE_BUF + 64];

  switch (t) {
    case LITE_ATTR_NAME:
    case LITE_ATTR_NODE_NAME:
    case LITE_ATTR_MESSAGE:
      if (pct(80)) {
        snprintf(s, sizeof(s), "fzn%llu", (unsigned long long)below(64));
      } else {
        memset(s, "a-/ .\x01"[below(6)], sizeof(s));
        s[below(sizeof(s))] = 0;
        s[sizeof(s) - 1] = 0;
      }
      putstr(m, t, s);
      return;
    case LITE_ATTR_IPV4_ADDR:
      put32(
          m, t,
          pct(50) ? htonl(0x0ad30100 | (uint32_t)below(256)) : (uint32_t)rnd());
      return;
    case LITE_ATTR_PEER_SECRET:
      for (size_t i = 0; i < LITE_PEER_SECRET_LEN; i++) s[i] = (char)rnd();
      put(m, t, s, pct(80) ? LITE_PEER_SECRET_LEN : below(64));
      return;
    case LITE_ATTR_REVOKED:
      put(m, t, NULL, 0);
      return;
    case LITE_ATTR_CHUNKS:
    case LITE_ATTR_CHUNK: {
      size_t outer = nest_start(m, LITE_ATTR_CHUNKS);
      for (unsigned i = below(4); i > 0; i--) {
        size_t in =
            nest_start(m, pct(90) ? LITE_ATTR_CHUNK : (uint16_t)below(8));
        put64(m, LITE_CHUNK_ATTR_ADDR, rnd());
        put64(m, LITE_CHUNK_ATTR_LENGTH, pct(80) ? 4096 : kEdge[below(6)]);
        if (pct(10)) put32(m, (uint16_t)below(6), (uint32_t)rnd());
        nest_end(m, in);
      }
      nest_end(m, outer);
      return;
    }
    case LITE_ATTR_CM_PORT:
      put(m, t, &(uint16_t){18600}, 2);
      return;
    case LITE_ATTR_INCARNATION:
    case LITE_ATTR_LMR_ID:
    case LITE_ATTR_NEW_LMR_ID:
    case LITE_ATTR_SIZE:
    case LITE_ATTR_EPOCH:
    case LITE_ATTR_UPCALL_ID:
    case LITE_ATTR_GRANT_ID:
    case LITE_ATTR_GRANTED_AT_MS:
    case LITE_ATTR_PAD:
      put64(m, t, pct(80) ? below(64) + 1 : kEdge[below(6)]);
      return;
    case LITE_ATTR_MODE:
      put32(m, t, pct(80) ? 0600 : (uint32_t)rnd());
      return;
    case LITE_ATTR_ERRNO:
      put32(m, t,
            pct(60)   ? 0
            : pct(80) ? (uint32_t)below(140)
                      : (uint32_t)rnd());
      return;
    default:  // u32
      put32(m, t, pct(80) ? (uint32_t)below(8) + 1 : (uint32_t)kEdge[below(3)]);
  }
}

// The attributes a valid request of cmd has.
static void template(struct msg *m, int cmd) {
  switch (cmd) {
    case LITE_CMD_NODE_SET:
      put32(m, LITE_ATTR_NODE_ID, (uint32_t)below(3) + 1);
      put64(m, LITE_ATTR_INCARNATION, below(3) + 1);
      put32(m, LITE_ATTR_IPV4_ADDR, self_addr);
      if (pct(50)) put_value(m, LITE_ATTR_NODE_NAME);
      return;
    case LITE_CMD_PEER_ADD:
      put32(m, LITE_ATTR_NODE_ID, (uint32_t)below(2000) + 1);
      put64(m, LITE_ATTR_INCARNATION, below(3) + 1);
      put32(m, LITE_ATTR_IPV4_ADDR,
            htonl(0x0ad30100 | ((uint32_t)below(254) + 1)));
      if (pct(30)) put_value(m, LITE_ATTR_NODE_NAME);
      if (pct(50)) put_value(m, LITE_ATTR_PEER_SECRET);
      return;
    case LITE_CMD_PEER_REMOVE:
      put32(m, LITE_ATTR_NODE_ID, (uint32_t)below(2000) + 1);
      if (pct(50)) put64(m, LITE_ATTR_INCARNATION, below(3) + 1);
      return;
    case LITE_CMD_PEER_PROBE:  // mostly the cluster's own nodes: real probes
      put32(m, LITE_ATTR_NODE_ID,
            pct(80) ? (uint32_t)below(4) : (uint32_t)below(2000) + 1);
      return;
    case LITE_CMD_LMR_ALLOC:
      put64(m, LITE_ATTR_LMR_ID, below(64) + 1);
      put_value(m, LITE_ATTR_NAME);
      put64(m, LITE_ATTR_SIZE, pct(90) ? below(65536) + 1 : below(8 << 20) + 1);
      put32(m, LITE_ATTR_UID, (uint32_t)below(2000));
      put32(m, LITE_ATTR_GID, (uint32_t)below(2000));
      put32(m, LITE_ATTR_MODE, 0640);
      return;
    case LITE_CMD_LMR_FREE:
      put64(m, LITE_ATTR_LMR_ID, below(64) + 1);
      return;
    case LITE_CMD_LMR_UPDATE:
      put64(m, LITE_ATTR_LMR_ID, below(64) + 1);
      if (pct(50)) put64(m, LITE_ATTR_NEW_LMR_ID, below(64) + 1);
      if (pct(50)) put64(m, LITE_ATTR_EPOCH, rnd());
      return;
    case LITE_CMD_UPCALL_COMPLETE: {  // as many draws whatever came in: a seed
                                      // gives the same messages
      uint64_t invented = rnd(), k = below(64);
      int real = pct(80) && nupcalls;

      put64(m, LITE_ATTR_UPCALL_ID,
            real ? upcalls[k % (nupcalls < 64 ? nupcalls : 64)] : invented);
    }
      put_value(m, LITE_ATTR_ERRNO);
      if (pct(30)) put_value(m, LITE_ATTR_MESSAGE);
      if (pct(50)) put64(m, LITE_ATTR_LMR_ID, below(64) + 1);
      if (pct(50)) {  // a MAP answer
        static const uint16_t kGrant[] = {
            LITE_ATTR_GRANT_ID,     LITE_ATTR_NAME,   LITE_ATTR_NODE_ID,
            LITE_ATTR_ACCESS,       LITE_ATTR_EPOCH,  LITE_ATTR_SIZE,
            LITE_ATTR_MEMORY_KEY,   LITE_ATTR_CHUNKS, LITE_ATTR_INCARNATION,
            LITE_ATTR_GRANTED_AT_MS};
        for (size_t i = 0; i < sizeof(kGrant) / sizeof(kGrant[0]); i++)
          if (pct(95)) put_value(m, kGrant[i]);
      }
      return;
    case LITE_CMD_GRANT_REVOKE:
      put64(m, LITE_ATTR_GRANT_ID, rnd());
      return;
    default:
      return;  // no attributes
  }
}

// Random damage to the attributes after `from`.
static void mutate(struct msg *m, size_t from) {
  for (unsigned k = below(4); k > 0; k--) {
    struct nlattr *a;

    switch (below(9)) {
      case 0:  // an attribute of any type, known or not
        put_value(m, (uint16_t)below(LITE_ATTR_MAX + 4));
        break;
      case 1:  // a duplicate of the first attribute
        if (m->len > from) {
          a = (struct nlattr *)(m->b + from);
          put(m, a->nla_type, (char *)a + NLA_HDRLEN,
              a->nla_len > NLA_HDRLEN ? a->nla_len - NLA_HDRLEN : 0);
        }
        break;
      case 2:  // a wrong length
        put(m, (uint16_t)below(LITE_ATTR_MAX + 1), m->b, below(13));
        break;
      case 3: {  // oversized
        static char big[70000];
        memset(big, 'x', sizeof(big));
        put(m, (uint16_t)below(LITE_ATTR_MAX + 1), big,
            pct(50) ? 4096 : 65000 + below(500));
        break;
      }
      case 4:  // garbage nest
        a = put(m, (uint16_t)below(LITE_ATTR_MAX + 1) | NLA_F_NESTED,
                (char[8]){1, 2, 3, 4, 5, 6, 7, 8}, below(9));
        break;
      case 5:  // the nest or byte-order flag on the first attribute
        if (m->len > from)
          ((struct nlattr *)(m->b + from))->nla_type |=
              pct(50) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
        break;
      case 6:  // drop the first attribute
        if (m->len > from) {
          a = (struct nlattr *)(m->b + from);
          size_t n = NLA_ALIGN(a->nla_len ? a->nla_len : 4);
          if (n > m->len - from) n = m->len - from;
          memmove(a, (char *)a + n, m->len - from - n);
          m->len -= n;
        }
        break;
      case 7:  // a last attribute claiming more than there is
        a = put(m, (uint16_t)below(LITE_ATTR_MAX + 1), "abcd", 4);
        a->nla_len += (uint16_t)(4 + below(64));
        return;
      default:  // trailing bytes
        memset(m->b + m->len, 0xA5, 3);
        m->len += below(3) + 1;
        return;
    }
  }
}

// --- the socket
// --------------------------------------------------------------------

static int nl_open(void) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
  int one = 1, rcv = 4 << 20;

  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
    perror("fuzz_netlink: netlink socket");
    exit(100);
  }
  setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
  return fd;
}

static uint32_t seq;

// Notes an upcall the agent socket got (lite.ko sends those with seq 0).
static void note_upcall(struct nlmsghdr *h) {
  struct genlmsghdr *g = NLMSG_DATA(h);
  struct nlattr *a = (struct nlattr *)((char *)g + GENL_HDRLEN);
  int left = (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

  if (h->nlmsg_type != family || g->cmd != LITE_CMD_UPCALL) return;
  for (; left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left;
       left -= NLA_ALIGN(a->nla_len),
       a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
    if ((a->nla_type & NLA_TYPE_MASK) == LITE_ATTR_UPCALL_ID &&
        a->nla_len == NLA_HDRLEN + 8)
      memcpy(&upcalls[nupcalls++ % 64], (char *)a + NLA_HDRLEN, 8);
}

// Sends m (header filled here) and waits for the ACK or the end of the
// dump; each reply is handed to visit. Returns 0, the errno, or -1 (no
// answer: a hang).
static int transact(int fd, struct msg *m, uint16_t type, uint16_t flags,
                    void (*visit)(struct nlmsghdr *)) {
  struct nlmsghdr *h = (struct nlmsghdr *)m->b;
  static char rb[BUF];
  struct timespec t0, t;

  h->nlmsg_len = (uint32_t)m->len;
  h->nlmsg_type = type;
  h->nlmsg_flags = flags | NLM_F_REQUEST | NLM_F_ACK;
  h->nlmsg_seq = ++seq;
  h->nlmsg_pid = 0;
  if (send(fd, m->b, m->len, 0) < 0) return errno;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};

    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec >= hang_secs) return -1;
    if (poll(&p, 1, 1000) <= 0) continue;
    ssize_t n = recv(fd, rb, sizeof(rb), 0);
    if (n < 0) {
      if (errno == ENOBUFS || errno == EINTR) continue;
      return errno;
    }
    for (h = (struct nlmsghdr *)rb; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != seq) {
        note_upcall(h);
        continue;
      }
      if (h->nlmsg_type == NLMSG_ERROR) {
        struct nlmsgerr *e = NLMSG_DATA(h);
        struct nlattr *a = (struct nlattr *)(e + 1);
        int left = (int)h->nlmsg_len - NLMSG_HDRLEN - (int)sizeof(*e);

        last_msg[0] = 0;
        for (; (h->nlmsg_flags & NLM_F_ACK_TLVS) && left >= NLA_HDRLEN &&
               a->nla_len >= NLA_HDRLEN && a->nla_len <= left;
             left -= NLA_ALIGN(a->nla_len),
             a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
          if (a->nla_type == NLMSGERR_ATTR_MSG)
            snprintf(last_msg, sizeof(last_msg), "%.*s",
                     a->nla_len - NLA_HDRLEN, (char *)a + NLA_HDRLEN);
        return -e->error;
      }
      if (h->nlmsg_type == NLMSG_DONE) return 0;
      if (visit) visit(h);
    }
  }
}

// Walks the attributes of a generic netlink message.
#define FOR_ATTRS(a, h)                                              \
  for (int left_ = (int)(h)->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN; \
       left_ >= NLA_HDRLEN && (a)->nla_len >= NLA_HDRLEN &&          \
       (a)->nla_len <= left_;                                        \
       left_ -= NLA_ALIGN((a)->nla_len),                             \
           (a) = (struct nlattr *)((char *)(a) + NLA_ALIGN((a)->nla_len)))
#define FIRST_ATTR(h) ((struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN))
#define ATTR_U64(a) (*(uint64_t *)((char *)(a) + NLA_HDRLEN))
#define ATTR_U32(a) (*(uint32_t *)((char *)(a) + NLA_HDRLEN))

static void family_visit(struct nlmsghdr *h) {
  struct nlattr *a = FIRST_ATTR(h);

  FOR_ATTRS(a, h) {
    if (a->nla_type == CTRL_ATTR_FAMILY_ID)
      family = *(uint16_t *)((char *)a + NLA_HDRLEN);
  }
}

static void start(struct msg *m, int cmd, int version) {
  struct genlmsghdr *g = (struct genlmsghdr *)(m->b + NLMSG_HDRLEN);

  memset(m->b, 0, NLMSG_HDRLEN + GENL_HDRLEN);
  g->cmd = (uint8_t)cmd;
  g->version = (uint8_t)version;
  m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

static void resolve_family(int fd) {
  struct msg *m = calloc(1, sizeof(*m));

  start(m, CTRL_CMD_GETFAMILY, 1);
  putstr(m, CTRL_ATTR_FAMILY_NAME, LITE_GENL_NAME);
  if (transact(fd, m, GENL_ID_CTRL, 0, family_visit) || !family) {
    fprintf(stderr,
            "fuzz_netlink: no '%s' generic netlink family (lite.ko loaded?)\n",
            LITE_GENL_NAME);
    exit(100);
  }
  free(m);
}

// --- what a valid request carries
// ---------------------------------------------------

struct rule {
  uint16_t takes[24];  // the attributes the command takes, 0-terminated
  uint8_t required;    // the first `required` of them must be there
};
static const struct rule kRules[NCMD] = {
    [LITE_CMD_NODE_SET] = {{LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION,
                            LITE_ATTR_IPV4_ADDR, LITE_ATTR_NODE_NAME},
                           3},
    [LITE_CMD_PEER_ADD] = {{LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION,
                            LITE_ATTR_IPV4_ADDR, LITE_ATTR_NODE_NAME,
                            LITE_ATTR_PEER_SECRET},
                           3},
    [LITE_CMD_PEER_REMOVE] = {{LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION}, 1},
    [LITE_CMD_PEER_PROBE] = {{LITE_ATTR_NODE_ID}, 1},
    [LITE_CMD_LMR_ALLOC] = {{LITE_ATTR_LMR_ID, LITE_ATTR_NAME, LITE_ATTR_SIZE,
                             LITE_ATTR_UID, LITE_ATTR_GID, LITE_ATTR_MODE},
                            6},
    [LITE_CMD_LMR_FREE] = {{LITE_ATTR_LMR_ID}, 1},
    [LITE_CMD_LMR_UPDATE] = {{LITE_ATTR_LMR_ID, LITE_ATTR_NEW_LMR_ID,
                              LITE_ATTR_EPOCH},
                             1},
    [LITE_CMD_UPCALL_COMPLETE] =
        {{LITE_ATTR_UPCALL_ID, LITE_ATTR_ERRNO, LITE_ATTR_MESSAGE,
          LITE_ATTR_LMR_ID, LITE_ATTR_GRANT_ID, LITE_ATTR_NAME,
          LITE_ATTR_NODE_ID, LITE_ATTR_ACCESS, LITE_ATTR_EPOCH, LITE_ATTR_SIZE,
          LITE_ATTR_MEMORY_KEY, LITE_ATTR_CHUNKS, LITE_ATTR_INCARNATION,
          LITE_ATTR_GRANTED_AT_MS,
          // an RPC upcall's answer (register, open, bind)
          LITE_ATTR_SERVICE_ID, LITE_ATTR_RPC_PORT, LITE_ATTR_RPC_MAX_REQUEST,
          LITE_ATTR_RPC_MAX_REPLY, LITE_ATTR_RPC_DEPTH, LITE_ATTR_RPC_ADDR,
          LITE_ATTR_RPC_SLOT_BYTES},
         2},
    [LITE_CMD_GRANT_REVOKE] = {{LITE_ATTR_GRANT_ID}, 1},
};

// The fixed length of an attribute type, 0 if it has none.
static int fixed_len(int t) {
  switch (t) {
    case LITE_ATTR_INCARNATION:
    case LITE_ATTR_LMR_ID:
    case LITE_ATTR_NEW_LMR_ID:
    case LITE_ATTR_SIZE:
    case LITE_ATTR_EPOCH:
    case LITE_ATTR_UPCALL_ID:
    case LITE_ATTR_GRANT_ID:
    case LITE_ATTR_GRANTED_AT_MS:
    case LITE_ATTR_SERVICE_ID:
    case LITE_ATTR_RPC_ADDR:
      return 8;
    case LITE_ATTR_NAME:
    case LITE_ATTR_NODE_NAME:
    case LITE_ATTR_MESSAGE:
    case LITE_ATTR_CHUNKS:
    case LITE_ATTR_CHUNK:
    case LITE_ATTR_PAD:
      return 0;
    case LITE_ATTR_PEER_SECRET:
      return LITE_PEER_SECRET_LEN;
    case LITE_ATTR_CM_PORT:
      return 2;
    case LITE_ATTR_REVOKED:
      return -1;  // a flag: no payload
    default:
      return 4;
  }
}

// Why the uapi says this request must fail (its validation rules), or NULL.
static const char *must_fail(const struct msg *m, int cmd, int dump) {
  const struct nlmsghdr *h = (const struct nlmsghdr *)m->b;
  struct nlattr *a = FIRST_ATTR(h);
  const struct rule *r = &kRules[cmd];
  unsigned seen = 0;
  int left = (int)m->len - NLMSG_HDRLEN - GENL_HDRLEN;

  if (!is_request(cmd)) return "not a request";
  if (dump != is_dump(cmd))
    return dump ? "a dump of a command without one"
                : "a dump-only command without NLM_F_DUMP";
  for (; left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left;
       left -= NLA_ALIGN(a->nla_len),
       a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
    int t = a->nla_type & NLA_TYPE_MASK, i, n = a->nla_len - NLA_HDRLEN;

    if (t == LITE_ATTR_PAD) continue;
    for (i = 0; r->takes[i] && r->takes[i] != t; i++) {
    }
    if (!r->takes[i]) return "an attribute the command does not take";
    seen |= 1U << i;
    if (fixed_len(t) && n != (fixed_len(t) < 0 ? 0 : fixed_len(t)))
      return "an attribute of the wrong length";
    if ((t == LITE_ATTR_NAME && n > LITE_NAME_MAX + 1) ||
        (t == LITE_ATTR_NODE_NAME && n > LITE_NODE_NAME_MAX + 1) ||
        (t == LITE_ATTR_MESSAGE && n > LITE_MESSAGE_BUF))
      return "a string too long";
    if ((a->nla_type & NLA_F_NESTED) && t != LITE_ATTR_CHUNKS)
      return "NLA_F_NESTED on a plain attribute";
  }
  if (left > 0) return "trailing or truncated attribute data";
  if ((seen & ((1U << r->required) - 1)) != (1U << r->required) - 1)
    return "a required attribute missing";
  return NULL;
}

// The top-level attributes as " type/length ...", for FAIL lines.
static const char *attr_summary(const struct msg *m) {
  static char out[512];
  const struct nlmsghdr *h = (const struct nlmsghdr *)m->b;
  struct nlattr *a = FIRST_ATTR(h);
  int n = 0, left = (int)m->len - NLMSG_HDRLEN - GENL_HDRLEN;

  out[0] = 0;
  for (; left >= NLA_HDRLEN && n < (int)sizeof(out) - 32;
       left -= NLA_ALIGN(a->nla_len),
       a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
    n += snprintf(out + n, sizeof(out) - n, " %s%d/%d",
                  a->nla_type & NLA_F_NESTED ? "nested:" : "",
                  a->nla_type & NLA_TYPE_MASK, a->nla_len - NLA_HDRLEN);
    if (a->nla_len < NLA_HDRLEN || a->nla_len > left) break;
  }
  return out;
}

// --- the child that makes upcalls
// ----------------------------------------------------

static pid_t upcall_child(void) {
  pid_t pid = fork();

  if (pid) return pid;
  int fd = open(LITE_DEVICE_PATH, O_RDWR);
  for (unsigned n = 0; fd >= 0; n++) {
    union {
      struct lite_alloc a;
      struct lite_map m;
      struct lite_free f;
    } u;

    memset(&u, 0, sizeof(u));
    snprintf(u.a.name, sizeof(u.a.name), "fzn%u", n % 64);
    if (n % 3 == 0) {
      u.a.size_bytes = 4096;
      u.a.mode = 0600;
      ioctl(fd, LITE_IOC_ALLOC, &u.a);
    } else if (n % 3 == 1) {
      u.m.access = LITE_ACCESS_READ;
      if (ioctl(fd, LITE_IOC_MAP, &u.m) == 0) {
        // Never an operation: the grant's chunks are the fuzzer's inventions.
        struct lite_unmap un = {.handle = u.m.handle};
        ioctl(fd, LITE_IOC_UNMAP, &un);
      }
    } else {
      ioctl(fd, LITE_IOC_FREE, &u.f);
    }
    usleep(2000);  // without an agent these fail at once: leave the CPU
  }
  _exit(0);
}

// --- the run
// -------------------------------------------------------------------------

static uint64_t ids[4096];
static unsigned nids;
static int id_attr;
static void id_visit(struct nlmsghdr *h) {
  struct nlattr *a = FIRST_ATTR(h);

  FOR_ATTRS(a, h) {
    if ((a->nla_type & NLA_TYPE_MASK) != id_attr || nids >= 4096) continue;
    uint64_t v = a->nla_len == NLA_HDRLEN + 8 ? ATTR_U64(a) : ATTR_U32(a);
    if (!nids || ids[nids - 1] != v) ids[nids++] = v;
  }
}

// Leaves the node as it was: no peers, no LMRs. Returns what is left.
static unsigned clean_up(int fd, struct msg *m) {
  static const struct {
    int dump, remove, attr, width;
  } kWhat[] = {{LITE_CMD_PEER_GET, LITE_CMD_PEER_REMOVE, LITE_ATTR_NODE_ID, 4},
               {LITE_CMD_LMR_GET, LITE_CMD_LMR_FREE, LITE_ATTR_LMR_ID, 8}};
  unsigned left = 0;

  for (int pass = 0; pass < 2; pass++)
    for (size_t k = 0; k < 2; k++) {
      nids = 0, id_attr = kWhat[k].attr;
      start(m, kWhat[k].dump, 1);
      if (transact(fd, m, family, NLM_F_DUMP, id_visit))
        fail("clean-up: dump of command %d failed", kWhat[k].dump);
      if (pass) {
        left += nids;
        continue;
      }
      for (unsigned i = 0; i < nids; i++) {
        start(m, kWhat[k].remove, 1);
        if (kWhat[k].width == 4)
          put32(m, (uint16_t)kWhat[k].attr, (uint32_t)ids[i]);
        else
          put64(m, (uint16_t)kWhat[k].attr, ids[i]);
        int err = transact(fd, m, family, 0, NULL);
        if (err)
          fail("clean-up: command %d of id %llu: %s", kWhat[k].remove,
               (unsigned long long)ids[i], strerror(err < 0 ? ETIMEDOUT : err));
      }
    }
  return left;
}

static const char *const kCmdNames[] = {
    "UNSPEC",          "AGENT_ATTACH",    "AGENT_DETACH",  "NODE_SET",
    "NODE_GET",        "PEER_ADD",        "PEER_REMOVE",   "PEER_GET",
    "EVENT_CONNECTED", "EVENT_FAILED",    "EVENT_REMOVED", "LMR_ALLOC",
    "LMR_FREE",        "LMR_UPDATE",      "LMR_GET",       "UPCALL",
    "UPCALL_COMPLETE", "GRANT_REVOKE",    "GRANT_GET",     "EVENT_LMR_LOST",
    "RPC_BIND",        "RPC_SERVICE_GET", "PEER_PROBE"};
static const char *cmd_name(int c) {
  return c < (int)(sizeof(kCmdNames) / sizeof(kCmdNames[0])) ? kCmdNames[c]
                                                             : "unknown";
}

static void report(double secs) {
  uint64_t total = 0;

  printf("fuzz_netlink (%s): results by command and errno (0 = success):\n",
         privileged ? "root" : "unprivileged");
  for (int c = 0; c < NCMD; c++) {
    uint64_t n = 0;

    printf("  %-16s", cmd_name(c));
    for (int e = 0; e < NERR; e++)
      if (counts[c][e]) {
        n += counts[c][e];
        printf(" %s=%llu", e ? strerrorname_np(e) : "ok",
               (unsigned long long)counts[c][e]);
      }
    total += n;
    printf("\n");
  }
  printf("fuzz_netlink: %llu messages in %.1f s, %ld failure(s), seed %llu\n",
         (unsigned long long)total, secs, failures, (unsigned long long)seed);
}

int main(int argc, char **argv) {
  struct msg *m = calloc(1, sizeof(*m));
  struct timespec t0, t1;
  pid_t child = 0;

  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    char *end = NULL;
    struct in_addr in;

    if (!strcmp(argv[i], "--seed"))
      seed = strtoull(v, &end, 0);
    else if (!strcmp(argv[i], "--messages"))
      messages = strtol(v, &end, 0);
    else if (!strcmp(argv[i], "--hang-secs"))
      hang_secs = (int)strtol(v, &end, 0);
    else if (!strcmp(argv[i], "--addr") && inet_pton(AF_INET, v, &in) == 1)
      self_addr = in.s_addr, end = "";
    if (!end || *end || !*v) {
      fprintf(stderr,
              "fuzz_netlink: bad argument '%s' (see the top of "
              "fuzz_netlink.c)\n",
              argv[i]);
      return 2;
    }
    i++;
  }
  privileged = geteuid() == 0;
  state = seed;
  printf(
      "fuzz_netlink: seed %llu, %ld messages as %s (reproduce: --seed %llu)\n",
      (unsigned long long)seed, messages,
      privileged ? "root" : "an unprivileged user", (unsigned long long)seed);
  int sock[2] = {nl_open(), nl_open()};  // sock[0] attaches as the agent
  resolve_family(sock[1]);
  if (privileged) child = upcall_child();
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < messages; i++) {
    kind_cmd = -1;
    int cmd = pct(92) ? (int)below(LITE_CMD_MAX) + 1 : (int)below(NCMD);
    int fd = sock[cmd == LITE_CMD_AGENT_ATTACH || pct(50) ? 0 : 1];
    int dump = pct(90) ? is_dump(cmd) : !is_dump(cmd);

    if (pct(10)) cmd = LITE_CMD_UPCALL_COMPLETE, fd = sock[0];
    start(m, cmd, pct(97) ? LITE_GENL_VERSION : (int)below(256));
    template(m, cmd);
    if (pct(50)) mutate(m, NLMSG_HDRLEN + GENL_HDRLEN);
    const char *why = must_fail(m, cmd, dump);
    int err = transact(fd, m, family, dump ? NLM_F_DUMP : 0, NULL);
    if (err < 0) {
      fail("hang: command %d (%zu bytes, message %ld) has no answer after %d s",
           cmd, m->len, i, hang_secs);
      break;
    }
    counts[cmd][err < NERR ? err : NERR - 1]++;
    kind_cmd = cmd, kind_err = err < NERR ? err : NERR - 1;
    if (!privileged && is_admin(cmd)) {
      if (err != EPERM)
        fail(
            "admin command %s as an unprivileged user: %s, not EPERM "
            "(message %ld)",
            cmd_name(cmd), err ? strerrorname_np(err) : "success", i);
    } else if (err == 0 && why) {
      fail("%s succeeded with %s (message %ld)", cmd_name(cmd), why, i);
    } else if (err && !documented(cmd, err)) {
      fail(
          "%s: %s, not documented for it (message %ld%s%s; kernel: \"%s\"; "
          "attributes type/length:%s)",
          cmd_name(cmd), strerrorname_np(err), i, why ? ", " : "",
          why ? why : "", last_msg, attr_summary(m));
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  kind_cmd = -1;
  if (child) {
    kill(child, SIGKILL);
    for (int waited = 0; waitpid(child, NULL, WNOHANG) != child; waited++) {
      if (waited > hang_secs * 10) {
        fail("the upcall child did not die of SIGKILL in %d s", hang_secs);
        break;
      }
      usleep(100000);
    }
  }
  close(sock[0]);  // detaches the agent, if it was attached
  if (privileged) {
    unsigned left = clean_up(sock[1], m);
    if (left) fail("clean-up: %u peer(s) or LMR(s) left", left);
  }
  report((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  return failures ? 1 : 0;
}
