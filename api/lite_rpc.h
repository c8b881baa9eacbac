/*
 * libLITE RPC and messages (included by api/lite.h; include that one).
 *
 * A server registers a named service, gets its request rings mapped into
 * its memory, takes requests where the NIC put them (zero copy) and answers
 * each once, from any thread, in any order. A client opens the service by
 * name, anywhere in the cluster, and calls it (one RDMA write of the
 * request, one of the reply) or sends it one-way messages. docs/rpc.md has
 * the flow, the access rule (the mode's x bit) and the failure semantics.
 *
 * Errors beyond those of every call (lite.h):
 *   -ECONNREFUSED  the service is gone (unregistered, its process exited);
 *                  open it again once it is back;
 *   -EHOSTDOWN     the server's node failed or is not connected;
 *   -ETIMEDOUT     no reply (or credit) within the timeout; a late reply is
 *                  dropped, never delivered to another call;
 *   -EAGAIN        LITE_RPC_NONBLOCK and the node's ring at the server is
 *                  full (every credit in use);
 *   -EMSGSIZE      the request is longer than the service's max_request, or
 *                  a reply longer than its max_reply (nothing sent);
 *   -EOVERFLOW     the reply did not fit reply_max (its first reply_max
 *                  bytes were copied, *reply_len is its length).
 * Control calls (register, open) can fail like lite_alloc and lite_map,
 * and: -EEXIST a service with the name exists; -ENOENT no such service;
 * -EACCES the mode denies the caller the x bit; -EUSERS the service has
 * max_clients client nodes already; -ENOSPC the node's memory quota.
 */
#ifndef LITE_API_LITE_RPC_H_
#define LITE_API_LITE_RPC_H_

#include <stddef.h>
#include <stdint.h>

#include "kmod/include/uapi/lite.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lite_ctx;

/* A registered or opened service; valid only in the context that made it. */
typedef uint64_t lite_service_t;

/* What a server asks for (zero fields take the defaults). */
struct lite_service_opts {
  uint32_t mode;        /* who may call it: the x bits count (0711 typical) */
  uint32_t max_request; /* bytes, 0..LITE_RPC_MSG_MAX */
  uint32_t max_reply;   /* bytes, 0..LITE_RPC_MSG_MAX */
  uint32_t depth;       /* requests one client node may have queued; 0: 16 */
  uint32_t max_clients; /* client nodes; 0: 16 */
};

/* A registered service, its rings mapped into this process. */
struct lite_service_info {
  uint64_t service_id; /* as litectl services lists it */
  uint32_t port;
  uint32_t slot_bytes;
  uint32_t depth;
  uint32_t max_clients;
  uint64_t ring_bytes;
  void *rings;      /* the mapping: requests are read here, in place */
  size_t map_bytes; /* its length */
};

/* An opened service, as the caller's node sees it. */
struct lite_service_peer {
  uint64_t service_id;
  uint32_t node_id; /* the server's */
  uint32_t max_request;
  uint32_t max_reply;
  uint32_t depth; /* this node's credits */
};

/*
 * Registers the service `name` served by this context and maps its rings
 * (info->rings). It lives until lite_rpc_unregister() or lite_close(); its
 * callers then get -ECONNREFUSED at once.
 */
int lite_rpc_register(struct lite_ctx *ctx, const char *name,
                      const struct lite_service_opts *opts,
                      lite_service_t *service, struct lite_service_info *info);
/* Unmaps the rings and ends the service (info as lite_rpc_register gave). */
int lite_rpc_unregister(struct lite_ctx *ctx, lite_service_t service,
                        struct lite_service_info *info);

/* Opens the service `name` to call it; peer may be NULL. */
int lite_rpc_open(struct lite_ctx *ctx, const char *name,
                  lite_service_t *service, struct lite_service_peer *peer);
/* Drops an opened service's handle. */
int lite_rpc_close(struct lite_ctx *ctx, lite_service_t service);

/*
 * Calls the service: sends req_len bytes and waits for the reply, copied to
 * reply (at most reply_max bytes; *reply_len its length, may be NULL).
 * timeout_ms bounds it all (waiting for a credit too); 0 means lite.ko's
 * rpc_timeout_ms. flags: 0 or LITE_RPC_NONBLOCK.
 */
int lite_rpc_call(struct lite_ctx *ctx, lite_service_t service, const void *req,
                  size_t req_len, void *reply, size_t reply_max,
                  size_t *reply_len, uint32_t timeout_ms);
int lite_rpc_call_flags(struct lite_ctx *ctx, lite_service_t service,
                        const void *req, size_t req_len, void *reply,
                        size_t reply_max, size_t *reply_len,
                        uint32_t timeout_ms, uint32_t flags);
/* lite_rpc_call_flags() at one priority (LITE_PRIO_HIGH, LITE_PRIO_LOW, or 0
 * for the context's); -EPERM for LITE_PRIO_HIGH where it is not allowed. */
int lite_rpc_call_prio(struct lite_ctx *ctx, lite_service_t service,
                       const void *req, size_t req_len, void *reply,
                       size_t reply_max, size_t *reply_len, uint32_t timeout_ms,
                       uint32_t flags, uint32_t priority);

/*
 * Asynchronous calls: lite_rpc_call_async() posts the request and returns
 * at once with *call, a token; lite_rpc_wait() collects the replies of up
 * to LITE_RPC_WAIT_MAX tokens in one system call. reply must stay valid
 * (and untouched) until its call is collected. Each call holds one of the
 * node's credits until then (lite_rpc_call's -EAGAIN, with
 * LITE_RPC_NONBLOCK, says all of them are in use). What fails before the
 * request is posted fails lite_rpc_call_async; the rest is the call's
 * result in lite_rpc_wait. Calls not collected when the context closes
 * are abandoned.
 */
int lite_rpc_call_async(struct lite_ctx *ctx, lite_service_t service,
                        const void *req, size_t req_len, void *reply,
                        size_t reply_max, uint32_t timeout_ms, uint32_t flags,
                        uint64_t *call);
/*
 * Waits up to timeout_ms (0: not at all; UINT32_MAX: until the calls'
 * own deadlines) for the first of results[0..count) (every one with
 * LITE_RPC_WAIT_ALL in flags), then collects every call that ended:
 * results[i].error is 0 or its negative errno (as lite_rpc_call's), and
 * reply_len its reply's length. A call still running has -EINPROGRESS;
 * one past its deadline is collected with -ETIMEDOUT. *done (may be NULL)
 * is how many were collected. Set results[i].call before the call.
 */
int lite_rpc_wait(struct lite_ctx *ctx, struct lite_rpc_result *results,
                  uint32_t count, uint32_t timeout_ms, uint32_t flags,
                  uint32_t *done);

/* Sends a one-way message; returns once the server's node has it. */
int lite_send(struct lite_ctx *ctx, lite_service_t service, const void *msg,
              size_t len, uint32_t timeout_ms);

/*
 * Takes up to max (1..LITE_RPC_RECV_MAX) requests, waiting up to
 * timeout_ms for the first (0: not at all; UINT32_MAX: until one comes or
 * a fatal signal). *count is how many (0 on a timeout, not an error). A
 * request's bytes are at lite_rpc_data(info, &reqs[i]); answer a call with
 * lite_rpc_reply(), release a message (LITE_RPC_REQ_ONEWAY) with
 * lite_rpc_release().
 */
int lite_rpc_recv(struct lite_ctx *ctx, lite_service_t service,
                  struct lite_rpc_request *reqs, uint32_t max,
                  uint32_t timeout_ms, uint32_t *count);

/* Answers request `id` with len bytes copied from data. */
int lite_rpc_reply(struct lite_ctx *ctx, lite_service_t service, uint64_t id,
                   const void *data, size_t len);
/*
 * Answers request `id` with len bytes already in the request's own slot of
 * the mapping, at data (zero copy): data must lie in that slot.
 */
int lite_rpc_reply_in_place(struct lite_ctx *ctx, lite_service_t service,
                            const struct lite_service_info *info, uint64_t id,
                            const void *data, size_t len);
/* Releases message `id` (its slot goes back to its sender). */
int lite_rpc_release(struct lite_ctx *ctx, lite_service_t service, uint64_t id);
/*
 * lite_rpc_reply(id, data, len) then lite_rpc_recv() in one system call;
 * if the reply fails nothing is taken and its error is returned.
 */
int lite_rpc_reply_recv(struct lite_ctx *ctx, lite_service_t service,
                        uint64_t id, const void *data, size_t len,
                        struct lite_rpc_request *reqs, uint32_t max,
                        uint32_t timeout_ms, uint32_t *count);

/* Where a request's bytes are in the server's mapping. */
static inline const void *lite_rpc_data(const struct lite_service_info *info,
                                        const struct lite_rpc_request *req) {
  return (const char *)info->rings + req->offset;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LITE_API_LITE_RPC_H_ */
