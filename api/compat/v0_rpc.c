/*
 * The original API's RPC: an application registered on a port is the named
 * service "v0/NODE/port/PORT" (docs/rpc.md), callers reach it by (node,
 * port), and a received call is answered through a descriptor.
 *
 * Descriptors are slots of a per-process table, tagged with a generation so
 * that a descriptor answered once (or never given) is refused rather than
 * answering another caller's request. A message bigger than the receiver's
 * buffer is kept for its next receive on that port (nothing is lost): the
 * call fails with ENOBUFS and says the size.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/compat/lite-lib.h"
#include "api/compat/v0_internal.h"
#include "api/lite_rpc.h"

/* Requests too big for their receiver's buffer, kept in arrival order for
 * the port's next receives: as many as one receive_message per thread can
 * hold at once, in practice (a full stash answers the call, see deliver). */
#define STASH_MAX 64u

struct port {
  pthread_mutex_t lock; /* the stash */
  int registered;       /* set (release) once svc and info are */
  lite_service_t svc;
  struct lite_service_info info;
  unsigned stash_head, stashed;
  struct lite_rpc_request stash[STASH_MAX];
};

#define DESCRIPTORS 4096u
#define DESC_INDEX_BITS 16

struct descriptor {
  uint64_t id;
  uint32_t port;
  uint32_t gen;
  int used;
};

static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static struct port ports[IMM_MAX_PORT_V0];
static pthread_mutex_t desc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct descriptor descs[DESCRIPTORS];
static unsigned desc_next; /* where the search for a free slot starts */

static int check_size(int size, const char *what, const char *which) {
  if (size < 0 || size >= LIMITATION)
    return v0_fail(EMSGSIZE, "%s: %s %d is not 0 .. %d", what, which, size,
                   LIMITATION - 1);
  return 0;
}

int userspace_liteapi_register_application(unsigned int destined_port,
                                           unsigned int max_size_per_message,
                                           unsigned int max_user_per_node,
                                           char *name, uint64_t name_len) {
  struct lite_ctx *ctx = v0_ctx();
  struct lite_service_opts opts = {.mode = 0711};
  char svc_name[LITE_NAME_MAX + 1];
  struct port *p;
  uint32_t node;
  int rc;

  if (ctx == NULL) return -1;
  if (destined_port >= IMM_MAX_PORT_V0)
    return v0_fail(EINVAL, "register_application: port %u is not 0 .. %d",
                   destined_port, IMM_MAX_PORT_V0 - 1);
  if (max_size_per_message == 0 || max_size_per_message > LITE_RPC_MSG_MAX)
    return v0_fail(EINVAL,
                   "register_application: max_size_per_message %u is not "
                   "1 .. %u",
                   max_size_per_message, LITE_RPC_MSG_MAX);
  if (name_len > 0 && (name == NULL || strnlen(name, name_len) == 0))
    return v0_fail(EINVAL, "register_application: name_len %llu without a name",
                   (unsigned long long)name_len);
  node = v0_node_id();
  if (node == 0) return -1;
  opts.max_request = max_size_per_message;
  opts.max_reply = max_size_per_message;
  opts.max_clients = max_user_per_node;
  snprintf(svc_name, sizeof(svc_name), V0_NAME_FMT_PORT, node, destined_port);

  pthread_mutex_lock(&ports_lock);
  p = &ports[destined_port];
  if (p->registered) {
    pthread_mutex_unlock(&ports_lock);
    return v0_fail(EEXIST,
                   "register_application: port %u is registered "
                   "already",
                   destined_port);
  }
  rc = lite_rpc_register(ctx, svc_name, &opts, &p->svc, &p->info);
  if (rc == 0) {
    pthread_mutex_init(&p->lock, NULL);
    p->stash_head = 0;
    p->stashed = 0;
    __atomic_store_n(&p->registered, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&ports_lock);
  return rc < 0 ? v0_from_lite(rc, "register_application") : 0;
}

int userspace_liteapi_query_port(int target_node, int designed_port) {
  lite_service_t s;

  if (target_node <= 0 || designed_port < 0)
    return v0_fail(EINVAL, "query_port: node %d, port %d", target_node,
                   designed_port);
  return v0_service_of((uint32_t)target_node, (unsigned)designed_port, &s);
}

static int call(int node, unsigned port, void *addr, int size, void *ret_addr,
                int max_ret_size, int priority, const char *what) {
  struct lite_ctx *ctx = v0_ctx();
  lite_service_t s;
  size_t len = 0;
  int rc;

  if (ctx == NULL) return -1;
  if (check_size(size, what, "size") < 0 ||
      check_size(max_ret_size, what, "max_ret_size") < 0)
    return -1;
  if (node <= 0) return v0_fail(EINVAL, "%s: node %d", what, node);
  if (v0_service_of((uint32_t)node, port, &s) < 0) return -1;
  rc = lite_rpc_call_prio(ctx, s, addr, (size_t)size, ret_addr,
                          (size_t)max_ret_size, &len, 0, 0,
                          v0_priority(priority));
  if (rc < 0) return v0_from_lite(rc, what);
  return (int)len;
}

int userspace_liteapi_send_reply_imm(int target_node, unsigned int port,
                                     void *addr, int size, void *ret_addr,
                                     int max_ret_size) {
  return call(target_node, port, addr, size, ret_addr, max_ret_size,
              NULL_PRIORITY, "send_reply_imm");
}
int userspace_liteapi_send_reply_imm_high(int target_node, unsigned int port,
                                          void *addr, int size, void *ret_addr,
                                          int max_ret_size) {
  return call(target_node, port, addr, size, ret_addr, max_ret_size,
              USERSPACE_HIGH_PRIORITY, "send_reply_imm_high");
}
int userspace_liteapi_send_reply_imm_low(int target_node, unsigned int port,
                                         void *addr, int size, void *ret_addr,
                                         int max_ret_size) {
  return call(target_node, port, addr, size, ret_addr, max_ret_size,
              USERSPACE_LOW_PRIORITY, "send_reply_imm_low");
}
int userspace_liteapi_send_reply_imm_fast(int target_node, unsigned int port,
                                          void *addr, int size, void *ret_addr,
                                          int *ret_length, int max_ret_size) {
  int len = call(target_node, port, addr, size, ret_addr, max_ret_size,
                 NULL_PRIORITY, "send_reply_imm_fast");

  if (ret_length != NULL) *ret_length = len;
  return len;
}

int userspace_liteapi_send(int target_node, unsigned int port, void *addr,
                           int size) {
  struct lite_ctx *ctx = v0_ctx();
  lite_service_t s;

  if (ctx == NULL) return -1;
  if (check_size(size, "send", "size") < 0) return -1;
  if (target_node <= 0) return v0_fail(EINVAL, "send: node %d", target_node);
  if (v0_service_of((uint32_t)target_node, port, &s) < 0) return -1;
  return v0_from_lite(lite_send(ctx, s, addr, (size_t)size, 0), "send");
}

static struct port *port_of(unsigned port, const char *what) {
  struct port *p = port < IMM_MAX_PORT_V0 ? &ports[port] : NULL;

  if (p == NULL || !__atomic_load_n(&p->registered, __ATOMIC_ACQUIRE)) {
    v0_fail(EINVAL, "%s: port %u is not registered by this process", what,
            port);
    return NULL;
  }
  return p;
}

static uintptr_t descriptor_new(unsigned port, uint64_t id) {
  unsigned i, n;
  uintptr_t d = 0;

  pthread_mutex_lock(&desc_lock);
  for (n = 0; n < DESCRIPTORS; n++) {
    i = (desc_next + n) % DESCRIPTORS;
    if (!descs[i].used) {
      descs[i].used = 1;
      descs[i].id = id;
      descs[i].port = port;
      descs[i].gen++;
      desc_next = i + 1;
      d = ((uintptr_t)descs[i].gen << DESC_INDEX_BITS) | (i + 1);
      break;
    }
  }
  pthread_mutex_unlock(&desc_lock);
  return d;
}

/* Takes a descriptor back: 0 and its port and id, or -1 (EINVAL). */
static int descriptor_take(uintptr_t d, unsigned *port, uint64_t *id,
                           const char *what) {
  unsigned i = (unsigned)(d & ((1u << DESC_INDEX_BITS) - 1));
  int ok = 0;

  pthread_mutex_lock(&desc_lock);
  if (i >= 1 && i <= DESCRIPTORS && descs[i - 1].used &&
      descs[i - 1].gen == (uint32_t)(d >> DESC_INDEX_BITS)) {
    descs[i - 1].used = 0;
    *port = descs[i - 1].port;
    *id = descs[i - 1].id;
    ok = 1;
  }
  pthread_mutex_unlock(&desc_lock);
  if (!ok)
    return v0_fail(EINVAL,
                   "%s: descriptor %#lx is not a call waiting for a reply "
                   "(answered already, or never received)",
                   what, (unsigned long)d);
  return 0;
}

/*
 * Delivers a request taken from port p: copies it to ret_addr, gives a
 * descriptor for a call (*descriptor) or `oneway` for a message (whose slot
 * is released). A request longer than receive_size is stashed.
 */
static int deliver(struct lite_ctx *ctx, unsigned port, struct port *p,
                   const struct lite_rpc_request *req, void *ret_addr,
                   int receive_size, uintptr_t *descriptor, uintptr_t oneway,
                   const char *what) {
  if (req->length > (uint32_t)receive_size) {
    int kept;

    pthread_mutex_lock(&p->lock);
    kept = p->stashed < STASH_MAX;
    if (kept) {
      p->stash[(p->stash_head + p->stashed) % STASH_MAX] = *req;
      p->stashed++;
    }
    pthread_mutex_unlock(&p->lock);
    if (!kept) {
      /* Nowhere to keep it: the caller gets an empty reply, not silence. */
      if (req->flags & LITE_RPC_REQ_ONEWAY)
        lite_rpc_release(ctx, p->svc, req->id);
      else
        lite_rpc_reply(ctx, p->svc, req->id, NULL, 0);
      return v0_fail(ENOBUFS,
                     "%s: the message has %u bytes, the buffer %d, and %u "
                     "such messages wait already: it was answered empty",
                     what, req->length, receive_size, STASH_MAX);
    }
    return v0_fail(ENOBUFS,
                   "%s: the message has %u bytes, the buffer %d; it is kept "
                   "for the next receive on port %u",
                   what, req->length, receive_size, port);
  }
  memcpy(ret_addr, lite_rpc_data(&p->info, req), req->length);
  if (req->flags & LITE_RPC_REQ_ONEWAY) {
    lite_rpc_release(ctx, p->svc, req->id);
    *descriptor = oneway;
  } else {
    *descriptor = descriptor_new(port, req->id);
    if (*descriptor == 0) {
      lite_rpc_reply(ctx, p->svc, req->id, NULL, 0);
      return v0_fail(ENFILE, "%s: %u calls wait for replies already", what,
                     DESCRIPTORS);
    }
  }
  return (int)req->length;
}

/* Takes the oldest stashed request of p, if any. */
static int unstash(struct port *p, struct lite_rpc_request *req) {
  int had;

  pthread_mutex_lock(&p->lock);
  had = p->stashed > 0;
  if (had) {
    *req = p->stash[p->stash_head];
    p->stash_head = (p->stash_head + 1) % STASH_MAX;
    p->stashed--;
  }
  pthread_mutex_unlock(&p->lock);
  return had;
}

static int receive(unsigned port, void *ret_addr, int receive_size,
                   uintptr_t *descriptor, int block_call, uintptr_t oneway,
                   const char *what) {
  struct lite_ctx *ctx = v0_ctx();
  struct lite_rpc_request req;
  uint32_t count = 0;
  struct port *p;
  int rc;

  if (ctx == NULL) return -1;
  if ((p = port_of(port, what)) == NULL) return -1;
  if (ret_addr == NULL || descriptor == NULL || receive_size < 0)
    return v0_fail(EINVAL, "%s: needs a buffer and a descriptor", what);
  if (!unstash(p, &req)) {
    rc = lite_rpc_recv(ctx, p->svc, &req, 1, block_call ? UINT32_MAX : 0,
                       &count);
    if (rc < 0) return v0_from_lite(rc, what);
    if (count == 0) return v0_fail(EAGAIN, "%s: no message waiting", what);
  }
  return deliver(ctx, port, p, &req, ret_addr, receive_size, descriptor, oneway,
                 what);
}

int userspace_liteapi_receive_message(unsigned int port, void *ret_addr,
                                      int receive_size, uintptr_t *descriptor,
                                      int block_call) {
  return receive(port, ret_addr, receive_size, descriptor, block_call,
                 (uintptr_t)IMM_SEND_ONLY_FLAG, "receive_message");
}
int userspace_liteapi_receive_message_high(unsigned int port, void *ret_addr,
                                           int receive_size,
                                           uintptr_t *descriptor,
                                           int block_call) {
  return receive(port, ret_addr, receive_size, descriptor, block_call,
                 (uintptr_t)IMM_SEND_ONLY_FLAG, "receive_message_high");
}
int userspace_liteapi_receive_message_low(unsigned int port, void *ret_addr,
                                          int receive_size,
                                          uintptr_t *descriptor,
                                          int block_call) {
  return receive(port, ret_addr, receive_size, descriptor, block_call,
                 (uintptr_t)IMM_SEND_ONLY_FLAG, "receive_message_low");
}
int userspace_liteapi_receive_message_fast(unsigned int port, void *ret_addr,
                                           int receive_size,
                                           uintptr_t *descriptor,
                                           int *ret_length, int block_call) {
  int len = receive(port, ret_addr, receive_size, descriptor, block_call, 0,
                    "receive_message_fast");

  if (ret_length != NULL) *ret_length = len;
  return len;
}
double userspace_liteapi_receive_message_fast_record(
    unsigned int port, void *ret_addr, int receive_size, uintptr_t *descriptor,
    int *ret_length, int block_call) {
  return userspace_liteapi_receive_message_fast(
      port, ret_addr, receive_size, descriptor, ret_length, block_call);
}

static int reply(void *addr, int size, uintptr_t descriptor, const char *what) {
  struct lite_ctx *ctx = v0_ctx();
  unsigned port;
  uint64_t id;
  int rc;

  if (ctx == NULL) return -1;
  if (check_size(size, what, "size") < 0) return -1;
  if (descriptor_take(descriptor, &port, &id, what) < 0) return -1;
  rc = lite_rpc_reply(ctx, ports[port].svc, id, addr, (size_t)size);
  return v0_from_lite(rc, what);
}

int userspace_liteapi_reply_message(void *addr, int size,
                                    uintptr_t descriptor) {
  return reply(addr, size, descriptor, "reply_message");
}
int userspace_liteapi_reply_message_high(void *addr, int size,
                                         uintptr_t descriptor) {
  return reply(addr, size, descriptor, "reply_message_high");
}
int userspace_liteapi_reply_message_low(void *addr, int size,
                                        uintptr_t descriptor) {
  return reply(addr, size, descriptor, "reply_message_low");
}

int userspace_liteapi_reply_and_receive_message(
    void *addr, int size, uintptr_t descriptor, unsigned int port,
    void *ret_addr, int receive_size, uintptr_t *receive_descriptor) {
  static const char what[] = "reply_and_receive_message";
  struct lite_ctx *ctx = v0_ctx();
  struct lite_rpc_request req;
  unsigned reply_port;
  uint32_t count = 0;
  struct port *p;
  uint64_t id;
  int rc;

  if (ctx == NULL) return -1;
  if ((p = port_of(port, what)) == NULL) return -1;
  if (check_size(size, what, "size") < 0) return -1;
  if (ret_addr == NULL || receive_descriptor == NULL || receive_size < 0)
    return v0_fail(EINVAL, "%s: needs a buffer and a descriptor", what);
  if (descriptor_take(descriptor, &reply_port, &id, what) < 0) return -1;
  if (reply_port != port || unstash(p, &req)) {
    /* Two calls: the reply goes to another port, or a stashed message is
     * the next one to deliver. */
    rc = lite_rpc_reply(ctx, ports[reply_port].svc, id, addr, (size_t)size);
    if (rc < 0) return v0_from_lite(rc, what);
    if (reply_port != port)
      return receive(port, ret_addr, receive_size, receive_descriptor, 1,
                     (uintptr_t)IMM_SEND_ONLY_FLAG, what);
  } else {
    /* One system call answers and takes the next request. */
    rc = lite_rpc_reply_recv(ctx, p->svc, id, addr, (size_t)size, &req, 1,
                             UINT32_MAX, &count);
    if (rc < 0) return v0_from_lite(rc, what);
    if (count == 0) return v0_fail(EAGAIN, "%s: no message waiting", what);
  }
  return deliver(ctx, port, p, &req, ret_addr, receive_size, receive_descriptor,
                 (uintptr_t)IMM_SEND_ONLY_FLAG, what);
}

void v0_rpc_reset(void) {
  pthread_mutex_lock(&ports_lock);
  memset(ports, 0, sizeof(ports));
  pthread_mutex_unlock(&ports_lock);
  pthread_mutex_lock(&desc_lock);
  memset(descs, 0, sizeof(descs));
  desc_next = 0;
  pthread_mutex_unlock(&desc_lock);
}
