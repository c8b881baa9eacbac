// cm_spoof: what an unprivileged user could try against lite.ko's rdma_cm
// listener, for tests/vm/peer_auth.sh (review 2026-11-23 finding 1, issue
// 16). It opens /dev/infiniband/rdma_cm like any librdmacm program (the
// kernel makes it 0666), creates an RC QP of its own and connects to
// lite.ko's port with forged private data, built here from the layout in
// docs/kernel-peers.md (not from lite.ko's headers: an attacker has only the
// documentation).
//
//   cm_spoof loopback --addr A --node ID:INC --k K [options]
//       connect to this node's own listener at A claiming to be this node's
//       loopback initiator (source = destination = ID:INC)
//   cm_spoof remote --addr B --node BID:BINC --as AID:AINC --k K [options]
//       run on node A (AID < BID), connect to node B claiming to be node A
//       from A's own address
//
// Each mode sends, per wire format (--wire 1, 2 or both, the default):
//   v1          a version 1 request (40 bytes), as lite.ko sent before
//               peer authentication
//   v2 first    a version 2 first request (challenge 0, no MAC); if it is
//               answered with a challenge:
//   v2 answer   the challenge with a made-up MAC (no pair secret)
//   v2 made-up  a challenge never issued, with a made-up MAC
// and prints one line per request:
//   cm_spoof: MODE v1: REJECTED reason 13 (unprivileged source port)
//   cm_spoof: MODE v2 first: REJECTED reason 11 (challenge)
//   cm_spoof: MODE v1: CONNECTED; RDMA READ ...: read 64 bytes: 41 42 ...
// A LITE reject names its reason; any other reject prints the IB CM status.
// If a request is ever accepted, the QP is used for one RDMA READ of --len
// bytes at --raddr with --rkey (when given), and the line says whether it
// read: that is the attack succeeding.
//
// Options: --port P (default 18600), --index I (QP index, default 0),
//   --src-port P: bind this source port first (below 1024 needs
//   CAP_NET_BIND_SERVICE: a root run shows what the MAC alone refuses),
//   --bind ADDR (source address; default: the route's), --rkey KEY
//   --raddr ADDR --len N (the READ), --timeout-ms MS (per event, 5000).
//
// No "replay" mode: replaying a valid request needs one first, and an
// unprivileged user cannot capture one (CM MADs go through the kernel's
// QP1); lite_wire_test.cc covers replays, with the challenge table.
//
// Exit status: 0 every request was refused; 1 a request was accepted (with
// or without a successful READ); 2 usage; 3 something else failed (no
// device, no route, a timeout): neither refused nor accepted.
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

// The wire format (docs/kernel-peers.md, "Peer authentication").
#define MAGIC 0x4c495445u  // "LITE"
#define REQ1_LEN 40
#define REQ2_LEN 56
#define REJ1_LEN 24
#define REJ2_LEN 32
#define IB_CM_REJ_CONSUMER_DEFINED 28
enum {
  REJ_CHALLENGE = 11,
  REJ_AUTH = 12,
  REJ_PORT = 13,
};

static const char *reason_name(int reason) {
  static const char *const names[] = {
      [1] = "malformed or another wire version",
      [2] = "node identity not set",
      [3] = "meant for another node",
      [4] = "unknown peer",
      [5] = "old incarnation",
      [6] = "newer incarnation",
      [7] = "qps_per_peer or index",
      [8] = "role: the initiator's id is not the smaller",
      [9] = "no resources",
      [10] = "from another address than the peer's",
      [11] = "challenge",
      [12] = "authentication failed",
      [13] = "unprivileged source port",
      [14] = "no pair secret",
  };
  if (reason > 0 && reason < (int)(sizeof(names) / sizeof(names[0])) &&
      names[reason])
    return names[reason];
  return "unknown reason";
}

struct node {
  uint32_t id;
  uint64_t incarnation;
};

struct opts {
  const char *mode;
  struct sockaddr_in dst;
  struct sockaddr_in bind;  // sin_family 0: none
  struct node target;       // the node whose listener is attacked
  struct node claim;        // who the requests claim to come from
  uint8_t k;
  uint8_t index;
  bool wire1, wire2;
  bool have_read;
  uint32_t rkey;
  uint64_t raddr;
  uint32_t len;
  int timeout_ms;
};

// What one request got.
enum outcome { REFUSED, ACCEPTED, ERROR };

struct result {
  enum outcome outcome;
  int reason;          // a LITE reject's reason, else 0
  int cm_status;       // the IB CM reject status, or the event status
  uint64_t challenge;  // a LITE_REJ_CHALLENGE's challenge
};

static void put16(uint8_t *p, uint16_t v) {
  v = htobe16(v);
  memcpy(p, &v, 2);
}
static void put32(uint8_t *p, uint32_t v) {
  v = htobe32(v);
  memcpy(p, &v, 4);
}
static void put64(uint8_t *p, uint64_t v) {
  v = htobe64(v);
  memcpy(p, &v, 8);
}
static uint16_t get16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return be16toh(v);
}
static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return be32toh(v);
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return be64toh(v);
}

static uint64_t random64(void) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof(v), 0) != sizeof(v)) v = (uint64_t)time(NULL);
  return v ? v : 1;
}

// Version 1: magic, be16 version 1, qp_index, K, reserved, be32 source id,
// be64 source incarnation, be32 destination id, be32 reserved, be64
// destination incarnation.
static size_t build_req1(const struct opts *o, uint8_t *b) {
  memset(b, 0, REQ1_LEN);
  put32(b, MAGIC);
  put16(b + 4, 1);
  put16(b + 6, o->index);
  put16(b + 8, o->k);
  put32(b + 12, o->claim.id);
  put64(b + 16, o->claim.incarnation);
  put32(b + 24, o->target.id);
  put64(b + 32, o->target.incarnation);
  return REQ1_LEN;
}

// Version 2: magic, version 2, qp_index, K, flags, be32 source id, be32
// destination id, be64 source incarnation, be64 nonce, be64 challenge, a
// 16-byte MAC (made up here: without the pair secret there is no other).
static size_t build_req2(const struct opts *o, uint8_t *b, uint64_t challenge) {
  memset(b, 0, REQ2_LEN);
  put32(b, MAGIC);
  b[4] = 2;
  b[5] = o->index;
  b[6] = o->k;
  put32(b + 8, o->claim.id);
  put32(b + 12, o->target.id);
  put64(b + 16, o->claim.incarnation);
  put64(b + 24, random64());
  put64(b + 32, challenge);
  if (challenge) {
    put64(b + 40, random64());
    put64(b + 48, random64());
  }
  return REQ2_LEN;
}

// Waits for the next event on @ch, at most timeout_ms. NULL on timeout or
// error (errno set).
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch,
                                        int timeout_ms) {
  struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
  struct rdma_cm_event *ev = NULL;
  int n = poll(&pfd, 1, timeout_ms);

  if (n <= 0) {
    errno = n == 0 ? ETIMEDOUT : errno;
    return NULL;
  }
  if (rdma_get_cm_event(ch, &ev)) return NULL;
  return ev;
}

// Expects event @want; returns its status through @status. 0 or -1.
static int expect_event(struct rdma_event_channel *ch, int timeout_ms,
                        enum rdma_cm_event_type want, const char *what) {
  struct rdma_cm_event *ev = next_event(ch, timeout_ms);

  if (!ev) {
    fprintf(stderr, "cm_spoof: waiting for %s: %s\n", what, strerror(errno));
    return -1;
  }
  if (ev->event != want) {
    fprintf(stderr, "cm_spoof: waiting for %s: got %s (status %d)\n", what,
            rdma_event_str(ev->event), ev->status);
    rdma_ack_cm_event(ev);
    return -1;
  }
  rdma_ack_cm_event(ev);
  return 0;
}

// One RDMA READ on the QP of a connection that should never have been made.
static void try_read(const struct opts *o, struct rdma_cm_id *id,
                     struct ibv_pd *pd, struct ibv_cq *cq, char *line,
                     size_t cap) {
  struct ibv_sge sge;
  struct ibv_send_wr wr = {0}, *bad = NULL;
  struct ibv_wc wc;
  struct ibv_mr *mr;
  uint8_t *buf;
  int n = 0, i;
  size_t used;

  if (!o->have_read) {
    snprintf(line, cap, "no READ asked for (--rkey, --raddr)");
    return;
  }
  buf = calloc(1, o->len);
  mr = buf ? ibv_reg_mr(pd, buf, o->len, IBV_ACCESS_LOCAL_WRITE) : NULL;
  if (!mr) {
    snprintf(line, cap, "RDMA READ not tried: no memory region");
    free(buf);
    return;
  }
  sge.addr = (uintptr_t)buf;
  sge.length = o->len;
  sge.lkey = mr->lkey;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = o->raddr;
  wr.wr.rdma.rkey = o->rkey;
  if (ibv_post_send(id->qp, &wr, &bad)) {
    snprintf(line, cap, "RDMA READ not posted: %s", strerror(errno));
  } else {
    for (i = 0; i < o->timeout_ms && n == 0; i++) {
      n = ibv_poll_cq(cq, 1, &wc);
      if (n == 0) usleep(1000);
    }
    if (n <= 0) {
      snprintf(line, cap, "RDMA READ at 0x%" PRIx64 " key 0x%x: no completion",
               o->raddr, o->rkey);
    } else if (wc.status != IBV_WC_SUCCESS) {
      snprintf(line, cap, "RDMA READ at 0x%" PRIx64 " key 0x%x: failed (%s)",
               o->raddr, o->rkey, ibv_wc_status_str(wc.status));
    } else {
      used = (size_t)snprintf(line, cap,
                              "RDMA READ at 0x%" PRIx64
                              " key 0x%x: READ %u "
                              "bytes:",
                              o->raddr, o->rkey, o->len);
      for (i = 0; i < (int)o->len && i < 16 && used + 4 < cap; i++)
        used += (size_t)snprintf(line + used, cap - used, " %02x", buf[i]);
    }
  }
  ibv_dereg_mr(mr);
  free(buf);
}

// Sends one connection request carrying @data and says what came of it.
static struct result attempt(const struct opts *o, const uint8_t *data,
                             size_t len, char *line, size_t cap) {
  struct result r = {.outcome = ERROR};
  struct rdma_event_channel *ch = rdma_create_event_channel();
  struct rdma_conn_param param = {0};
  struct ibv_qp_init_attr qpa = {0};
  struct rdma_cm_id *id = NULL;
  struct rdma_cm_event *ev;
  struct ibv_pd *pd = NULL;
  struct ibv_cq *cq = NULL;
  const uint8_t *rej;

  snprintf(line, cap, "error");
  if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
    snprintf(line, cap, "ERROR rdma_cm: %s", strerror(errno));
    goto out;
  }
  if (o->bind.sin_family && rdma_bind_addr(id, (struct sockaddr *)&o->bind)) {
    snprintf(line, cap, "ERROR bind %s:%u: %s", inet_ntoa(o->bind.sin_addr),
             ntohs(o->bind.sin_port), strerror(errno));
    goto out;
  }
  if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&o->dst, 2000) ||
      expect_event(ch, o->timeout_ms, RDMA_CM_EVENT_ADDR_RESOLVED,
                   "address resolution") ||
      rdma_resolve_route(id, 2000) ||
      expect_event(ch, o->timeout_ms, RDMA_CM_EVENT_ROUTE_RESOLVED,
                   "route resolution")) {
    snprintf(line, cap, "ERROR cannot resolve %s", inet_ntoa(o->dst.sin_addr));
    goto out;
  }
  pd = ibv_alloc_pd(id->verbs);
  cq = pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
  if (!cq) {
    snprintf(line, cap, "ERROR no PD or CQ: %s", strerror(errno));
    goto out;
  }
  qpa.send_cq = cq;
  qpa.recv_cq = cq;
  qpa.qp_type = IBV_QPT_RC;
  qpa.cap.max_send_wr = 4;
  qpa.cap.max_recv_wr = 4;
  qpa.cap.max_send_sge = 1;
  qpa.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, pd, &qpa)) {
    snprintf(line, cap, "ERROR no QP: %s", strerror(errno));
    goto out;
  }
  param.private_data = data;
  param.private_data_len = (uint8_t)len;
  param.initiator_depth = 1;
  param.responder_resources = 1;
  param.retry_count = 3;
  param.rnr_retry_count = 3;
  if (rdma_connect(id, &param)) {
    snprintf(line, cap, "ERROR rdma_connect: %s", strerror(errno));
    goto out;
  }
  ev = next_event(ch, o->timeout_ms);
  if (!ev) {
    snprintf(line, cap, "ERROR no answer: %s", strerror(errno));
    goto out;
  }
  r.cm_status = ev->status;
  if (ev->event == RDMA_CM_EVENT_REJECTED) {
    r.outcome = REFUSED;
    rej = ev->param.conn.private_data;
    if (ev->status == IB_CM_REJ_CONSUMER_DEFINED && rej &&
        ev->param.conn.private_data_len >= REJ1_LEN && get32(rej) == MAGIC) {
      r.reason = get16(rej + 6);
      if (r.reason == REJ_CHALLENGE && rej[4] == 2 &&
          ev->param.conn.private_data_len >= REJ2_LEN)
        r.challenge = get64(rej + 24);
      snprintf(line, cap, "REJECTED reason %d (%s)", r.reason,
               reason_name(r.reason));
    } else {
      snprintf(line, cap, "REJECTED by rdma_cm, status %d (not lite.ko's)",
               ev->status);
    }
    rdma_ack_cm_event(ev);
  } else if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
    char read_line[256];

    rdma_ack_cm_event(ev);
    r.outcome = ACCEPTED;
    try_read(o, id, pd, cq, read_line, sizeof(read_line));
    snprintf(line, cap, "CONNECTED to a lite.ko QP; %s", read_line);
    rdma_disconnect(id);
  } else {
    snprintf(line, cap, "ERROR %s (status %d)", rdma_event_str(ev->event),
             ev->status);
    rdma_ack_cm_event(ev);
  }
out:
  if (id && id->qp) rdma_destroy_qp(id);
  if (cq) ibv_destroy_cq(cq);
  if (pd) ibv_dealloc_pd(pd);
  if (id) rdma_destroy_id(id);
  if (ch) rdma_destroy_event_channel(ch);
  return r;
}

static int worst = 0;  // 0 refused, 1 accepted, 3 error

static struct result report(const struct opts *o, const char *what,
                            const uint8_t *data, size_t len) {
  char line[512];
  struct result r = attempt(o, data, len, line, sizeof(line));

  printf("cm_spoof: %s %s: %s\n", o->mode, what, line);
  fflush(stdout);
  if (r.outcome == ACCEPTED)
    worst = 1;
  else if (r.outcome == ERROR && worst == 0)
    worst = 3;
  return r;
}

static void run(const struct opts *o) {
  uint8_t req[REQ2_LEN];
  struct result r;
  size_t len;

  if (o->wire1) {
    len = build_req1(o, req);
    report(o, "v1", req, len);
  }
  if (o->wire2) {
    len = build_req2(o, req, 0);
    r = report(o, "v2 first", req, len);
    if (r.outcome == REFUSED && r.reason == REJ_CHALLENGE && r.challenge) {
      len = build_req2(o, req, r.challenge);
      report(o, "v2 answer", req, len);
    }
    len = build_req2(o, req, random64());
    report(o, "v2 made-up", req, len);
  }
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: cm_spoof loopback --addr A --node ID:INC --k K [options]\n"
          "       cm_spoof remote --addr B --node BID:BINC --as AID:AINC "
          "--k K [options]\n"
          "options: --port P --index I --wire 1|2 --src-port P --bind ADDR\n"
          "         --rkey KEY --raddr ADDR --len N --timeout-ms MS\n"
          "exit: 0 all refused, 1 one accepted, 2 usage, 3 error\n");
}

static bool parse_u64(const char *s, uint64_t *out) {
  char *end;

  errno = 0;
  *out = strtoull(s, &end, 0);
  return !errno && end != s && !*end && s[0] != '-';
}

static bool parse_node(const char *s, struct node *n) {
  uint64_t id, inc;
  char buf[64], *colon;

  if (strlen(s) >= sizeof(buf)) return false;
  strcpy(buf, s);
  colon = strchr(buf, ':');
  if (!colon) return false;
  *colon = 0;
  if (!parse_u64(buf, &id) || !parse_u64(colon + 1, &inc) || !id ||
      id > UINT32_MAX || !inc)
    return false;
  n->id = (uint32_t)id;
  n->incarnation = inc;
  return true;
}

static bool parse_addr(const char *s, struct sockaddr_in *sin) {
  sin->sin_family = AF_INET;
  return inet_pton(AF_INET, s, &sin->sin_addr) == 1;
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"addr", required_argument, NULL, 'a'},
      {"node", required_argument, NULL, 'n'},
      {"as", required_argument, NULL, 's'},
      {"k", required_argument, NULL, 'k'},
      {"port", required_argument, NULL, 'p'},
      {"index", required_argument, NULL, 'i'},
      {"wire", required_argument, NULL, 'w'},
      {"src-port", required_argument, NULL, 'P'},
      {"bind", required_argument, NULL, 'b'},
      {"rkey", required_argument, NULL, 'r'},
      {"raddr", required_argument, NULL, 'R'},
      {"len", required_argument, NULL, 'l'},
      {"timeout-ms", required_argument, NULL, 't'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct opts o = {
      .k = 0, .wire1 = true, .wire2 = true, .len = 64, .timeout_ms = 5000};
  bool have_addr = false, have_node = false, have_as = false, ok = true;
  bool have_rkey = false, have_raddr = false;
  uint64_t v, src_port = 0;
  int c;

  o.dst.sin_port = htons(18600);
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  o.mode = argv[1];
  optind = 2;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'a':
        ok = ok && parse_addr(optarg, &o.dst);
        have_addr = true;
        break;
      case 'n':
        ok = ok && parse_node(optarg, &o.target);
        have_node = true;
        break;
      case 's':
        ok = ok && parse_node(optarg, &o.claim);
        have_as = true;
        break;
      case 'k':
        ok = ok && parse_u64(optarg, &v) && v >= 1 && v <= 255;
        o.k = (uint8_t)v;
        break;
      case 'p':
        ok = ok && parse_u64(optarg, &v) && v >= 1 && v <= 65535;
        o.dst.sin_port = htons((uint16_t)v);
        break;
      case 'i':
        ok = ok && parse_u64(optarg, &v) && v <= 255;
        o.index = (uint8_t)v;
        break;
      case 'w':
        o.wire1 = !strcmp(optarg, "1");
        o.wire2 = !strcmp(optarg, "2");
        ok = ok && (o.wire1 || o.wire2);
        break;
      case 'P':
        ok = ok && parse_u64(optarg, &src_port) && src_port >= 1 &&
             src_port <= 65535;
        break;
      case 'b':
        ok = ok && parse_addr(optarg, &o.bind);
        break;
      case 'r':
        ok = ok && parse_u64(optarg, &v) && v <= UINT32_MAX;
        o.rkey = (uint32_t)v;
        have_rkey = true;
        break;
      case 'R':
        ok = ok && parse_u64(optarg, &o.raddr);
        have_raddr = true;
        break;
      case 'l':
        ok = ok && parse_u64(optarg, &v) && v >= 1 && v <= (1u << 20);
        o.len = (uint32_t)v;
        break;
      case 't':
        ok = ok && parse_u64(optarg, &v) && v >= 100 && v <= 600000;
        o.timeout_ms = (int)v;
        break;
      case 'h':
        usage(stdout);
        return 0;
      default:
        ok = false;
    }
  }
  if (!strcmp(o.mode, "loopback")) {
    o.claim = o.target;
    ok = ok && !have_as;
  } else if (!strcmp(o.mode, "remote")) {
    ok = ok && have_as;
  } else {
    ok = false;
  }
  if (!ok || optind != argc || !have_addr || !have_node || !o.k ||
      have_rkey != have_raddr) {
    usage(stderr);
    return 2;
  }
  o.have_read = have_rkey;
  if (src_port) {
    // An address of this node is needed to bind a port: the one given, or
    // for loopback the target's.
    if (!o.bind.sin_family) {
      if (strcmp(o.mode, "loopback")) {
        fprintf(stderr, "cm_spoof: --src-port needs --bind in remote mode\n");
        return 2;
      }
      o.bind = o.dst;
    }
    o.bind.sin_port = htons((uint16_t)src_port);
  } else if (o.bind.sin_family) {
    o.bind.sin_port = 0;
  }
  run(&o);
  return worst;
}
