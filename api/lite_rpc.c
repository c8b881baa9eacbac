/*
 * libLITE RPC: the C API over LITE_IOC_RPC_*. See lite_rpc.h. Like the
 * operations, a call, receive or reply is exactly one ioctl with its
 * arguments on the stack; registering maps the rings once.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "api/lite_internal.h"

static int check_service_name(char *dst, const char *name) {
  if (name == NULL) return REJECT(EINVAL, "the service name is NULL");
  return lite_priv_put_name(dst, name);
}

int lite_rpc_register(struct lite_ctx *ctx, const char *name,
                      const struct lite_service_opts *opts,
                      lite_service_t *service, struct lite_service_info *info) {
  struct lite_rpc_register req;
  struct lite_rpc_close close_req;
  void *rings = NULL;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (opts == NULL || service == NULL || info == NULL)
    return REJECT(EINVAL,
                  "lite_rpc_register needs options, and places for the "
                  "service and its info");
  memset(&req, 0, sizeof(req));
  err = check_service_name(req.name, name);
  if (err) return err;
  if (opts->mode & ~0777u)
    return REJECT(EINVAL, "mode %#o is not a subset of 0777", opts->mode);
  if (opts->max_request > LITE_RPC_MSG_MAX ||
      opts->max_reply > LITE_RPC_MSG_MAX)
    return REJECT(EMSGSIZE, "requests and replies are at most %u bytes",
                  LITE_RPC_MSG_MAX);
  req.mode = opts->mode;
  req.max_request = opts->max_request;
  req.max_reply = opts->max_reply;
  req.depth = opts->depth;
  req.max_clients = opts->max_clients;
  err = lite_priv_ioctl(ctx, LITE_IOC_RPC_REGISTER, &req);
  lite_priv_kernel_message(req.message, sizeof(req.message));
  if (err) return err;
  if (ctx->fake == NULL) {
    rings = mmap(NULL, req.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                 ctx->fd, (off_t)req.map_offset);
    if (rings == MAP_FAILED) {
      err = -errno;
      memset(&close_req, 0, sizeof(close_req));
      close_req.service = req.service;
      lite_priv_ioctl(ctx, LITE_IOC_RPC_CLOSE, &close_req);
      return REJECT(-err, "cannot map the service's rings");
    }
  }
  *service = req.service;
  info->service_id = req.service_id;
  info->port = req.port;
  info->slot_bytes = req.slot_bytes;
  info->depth = req.depth;
  info->max_clients = req.max_clients;
  info->ring_bytes = req.ring_bytes;
  info->rings = rings;
  info->map_bytes = req.map_bytes;
  return 0;
}

int lite_rpc_unregister(struct lite_ctx *ctx, lite_service_t service,
                        struct lite_service_info *info) {
  struct lite_rpc_close req;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (info != NULL && info->rings != NULL) {
    munmap(info->rings, info->map_bytes);
    info->rings = NULL;
  }
  memset(&req, 0, sizeof(req));
  req.service = service;
  err = lite_priv_ioctl(ctx, LITE_IOC_RPC_CLOSE, &req);
  if (err) lite_priv_clear_message();
  return err;
}

int lite_rpc_open(struct lite_ctx *ctx, const char *name,
                  lite_service_t *service, struct lite_service_peer *peer) {
  struct lite_rpc_open req;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (service == NULL)
    return REJECT(EINVAL, "lite_rpc_open needs a place for the service");
  memset(&req, 0, sizeof(req));
  err = check_service_name(req.name, name);
  if (err) return err;
  err = lite_priv_ioctl(ctx, LITE_IOC_RPC_OPEN, &req);
  lite_priv_kernel_message(req.message, sizeof(req.message));
  if (err) return err;
  *service = req.service;
  if (peer != NULL) {
    peer->service_id = req.service_id;
    peer->node_id = req.node_id;
    peer->max_request = req.max_request;
    peer->max_reply = req.max_reply;
    peer->depth = req.depth;
  }
  return 0;
}

int lite_rpc_close(struct lite_ctx *ctx, lite_service_t service) {
  return lite_rpc_unregister(ctx, service, NULL);
}

/* The data path: no checks lite.ko makes anyway, one ioctl. */
static int rpc_op(struct lite_ctx *ctx, unsigned long request, void *data) {
  int err;

  if (__builtin_expect(ctx == NULL, 0)) return lite_priv_check_ctx(ctx);
  err = lite_priv_ioctl(ctx, request, data);
  if (__builtin_expect(err != 0, 0)) lite_priv_clear_message();
  return err;
}

/* A CALL's arguments; -EMSGSIZE (said why) for a request over the limit. */
static int fill_call(struct lite_rpc_call *c, lite_service_t service,
                     const void *req, size_t req_len, void *reply,
                     size_t reply_max, uint32_t timeout_ms, uint32_t flags) {
  if (__builtin_expect(req_len > LITE_RPC_MSG_MAX, 0))
    return REJECT(EMSGSIZE, "a request is at most %u bytes", LITE_RPC_MSG_MAX);
  memset(c, 0, sizeof(*c));
  c->service = service;
  c->request = (uintptr_t)req;
  c->reply = (uintptr_t)reply;
  c->req_len = (uint32_t)req_len;
  c->reply_max = reply_max > UINT32_MAX ? UINT32_MAX : (uint32_t)reply_max;
  c->timeout_ms = timeout_ms;
  c->flags = flags;
  return 0;
}

int lite_rpc_call_prio(struct lite_ctx *ctx, lite_service_t service,
                       const void *req, size_t req_len, void *reply,
                       size_t reply_max, size_t *reply_len, uint32_t timeout_ms,
                       uint32_t flags, uint32_t priority) {
  struct lite_rpc_call c;
  int err =
      fill_call(&c, service, req, req_len, reply, reply_max, timeout_ms, flags);

  if (__builtin_expect(err != 0, 0)) return err;
  c.priority = priority;
  err = rpc_op(ctx, LITE_IOC_RPC_CALL, &c);
  if (reply_len != NULL) *reply_len = c.reply_len;
  return err;
}

int lite_rpc_call_flags(struct lite_ctx *ctx, lite_service_t service,
                        const void *req, size_t req_len, void *reply,
                        size_t reply_max, size_t *reply_len,
                        uint32_t timeout_ms, uint32_t flags) {
  return lite_rpc_call_prio(ctx, service, req, req_len, reply, reply_max,
                            reply_len, timeout_ms, flags, 0);
}

int lite_rpc_call(struct lite_ctx *ctx, lite_service_t service, const void *req,
                  size_t req_len, void *reply, size_t reply_max,
                  size_t *reply_len, uint32_t timeout_ms) {
  return lite_rpc_call_flags(ctx, service, req, req_len, reply, reply_max,
                             reply_len, timeout_ms, 0);
}

int lite_rpc_call_async(struct lite_ctx *ctx, lite_service_t service,
                        const void *req, size_t req_len, void *reply,
                        size_t reply_max, uint32_t timeout_ms, uint32_t flags,
                        uint64_t *call) {
  struct lite_rpc_call c;
  int err;

  if (__builtin_expect(call == NULL, 0))
    return REJECT(EINVAL, "lite_rpc_call_async needs a place for the token");
  if (__builtin_expect(flags & ~LITE_RPC_NONBLOCK, 0))
    return REJECT(EINVAL, "flags %#x: only LITE_RPC_NONBLOCK", flags);
  err = fill_call(&c, service, req, req_len, reply, reply_max, timeout_ms,
                  flags | LITE_RPC_ASYNC);
  if (__builtin_expect(err != 0, 0)) return err;
  err = rpc_op(ctx, LITE_IOC_RPC_CALL, &c);
  if (!err) *call = c.call;
  return err;
}

int lite_rpc_wait(struct lite_ctx *ctx, struct lite_rpc_result *results,
                  uint32_t count, uint32_t timeout_ms, uint32_t flags,
                  uint32_t *done) {
  struct lite_rpc_wait w;
  int err;

  if (results == NULL || count == 0 || count > LITE_RPC_WAIT_MAX)
    return REJECT(EINVAL, "lite_rpc_wait needs 1..%u results",
                  LITE_RPC_WAIT_MAX);
  if (flags & ~LITE_RPC_WAIT_ALL)
    return REJECT(EINVAL, "flags %#x: only LITE_RPC_WAIT_ALL", flags);
  memset(&w, 0, sizeof(w));
  w.results = (uintptr_t)results;
  w.count = count;
  w.timeout_ms = timeout_ms;
  w.flags = flags;
  err = rpc_op(ctx, LITE_IOC_RPC_WAIT, &w);
  if (done != NULL) *done = err ? 0 : w.done;
  return err;
}

int lite_send(struct lite_ctx *ctx, lite_service_t service, const void *msg,
              size_t len, uint32_t timeout_ms) {
  struct lite_rpc_send m;

  if (__builtin_expect(len > LITE_RPC_MSG_MAX, 0))
    return REJECT(EMSGSIZE, "a message is at most %u bytes", LITE_RPC_MSG_MAX);
  memset(&m, 0, sizeof(m));
  m.service = service;
  m.msg = (uintptr_t)msg;
  m.len = (uint32_t)len;
  m.timeout_ms = timeout_ms;
  return rpc_op(ctx, LITE_IOC_RPC_SEND, &m);
}

static int recv_common(struct lite_ctx *ctx, struct lite_rpc_recv *r,
                       struct lite_rpc_request *reqs, uint32_t max,
                       uint32_t timeout_ms, uint32_t *count) {
  int err;

  if (reqs == NULL || count == NULL || max == 0 || max > LITE_RPC_RECV_MAX)
    return REJECT(EINVAL, "lite_rpc_recv needs 1..%u request slots and a count",
                  LITE_RPC_RECV_MAX);
  r->requests = (uintptr_t)reqs;
  r->max = max;
  r->timeout_ms = timeout_ms;
  err = rpc_op(ctx, LITE_IOC_RPC_RECV, r);
  *count = err ? 0 : r->count;
  return err;
}

int lite_rpc_recv(struct lite_ctx *ctx, lite_service_t service,
                  struct lite_rpc_request *reqs, uint32_t max,
                  uint32_t timeout_ms, uint32_t *count) {
  struct lite_rpc_recv r;

  memset(&r, 0, sizeof(r));
  r.service = service;
  return recv_common(ctx, &r, reqs, max, timeout_ms, count);
}

int lite_rpc_reply_recv(struct lite_ctx *ctx, lite_service_t service,
                        uint64_t id, const void *data, size_t len,
                        struct lite_rpc_request *reqs, uint32_t max,
                        uint32_t timeout_ms, uint32_t *count) {
  struct lite_rpc_recv r;

  if (len > LITE_RPC_MSG_MAX)
    return REJECT(EMSGSIZE, "a reply is at most %u bytes", LITE_RPC_MSG_MAX);
  memset(&r, 0, sizeof(r));
  r.service = service;
  r.reply_id = id;
  r.reply_data = (uintptr_t)data;
  r.reply_len = (uint32_t)len;
  return recv_common(ctx, &r, reqs, max, timeout_ms, count);
}

static int reply(struct lite_ctx *ctx, lite_service_t service, uint64_t id,
                 uint64_t data, size_t len, uint32_t flags) {
  struct lite_rpc_reply r;

  if (len > LITE_RPC_MSG_MAX)
    return REJECT(EMSGSIZE, "a reply is at most %u bytes", LITE_RPC_MSG_MAX);
  memset(&r, 0, sizeof(r));
  r.service = service;
  r.id = id;
  r.data = data;
  r.len = (uint32_t)len;
  r.flags = flags;
  return rpc_op(ctx, LITE_IOC_RPC_REPLY, &r);
}

int lite_rpc_reply(struct lite_ctx *ctx, lite_service_t service, uint64_t id,
                   const void *data, size_t len) {
  return reply(ctx, service, id, (uintptr_t)data, len, 0);
}

int lite_rpc_reply_in_place(struct lite_ctx *ctx, lite_service_t service,
                            const struct lite_service_info *info, uint64_t id,
                            const void *data, size_t len) {
  const char *at = data, *base;

  if (info == NULL || info->rings == NULL)
    return REJECT(EINVAL, "an in-place reply needs the service's mapping");
  base = info->rings;
  if (at < base || at >= base + info->map_bytes)
    return REJECT(EINVAL, "the reply is not in the service's mapping");
  return reply(ctx, service, id, (uint64_t)(at - base), len,
               LITE_RPC_REPLY_IN_PLACE);
}

int lite_rpc_release(struct lite_ctx *ctx, lite_service_t service,
                     uint64_t id) {
  return reply(ctx, service, id, 0, 0, LITE_RPC_REPLY_RELEASE);
}
