/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE for kernel code: other modules use LMRs with one-sided operations,
 * and serve and call LITE RPC services, the way processes do through
 * /dev/lite (uapi/lite.h, uapi/lite_rpc.h, docs/datapath.md and
 * docs/rpc.md tell the semantics; the errors are the same, negative).
 * Process context for every call; a context, service or client may be used
 * by many threads at once.
 *
 * Build against lite.ko's Module.symvers (KBUILD_EXTRA_SYMBOLS), include
 * this header with -I<lite>/kmod/include; kmod/examples/lite_kecho.c is a
 * complete example of RPC (a server and a client), kmod/examples/lite_kmem.c
 * of LMRs. The caller's credentials are the current task's, as for a
 * process: a module's own kernel thread is root.
 */
#ifndef LITE_KERNEL_H
#define LITE_KERNEL_H

#include <linux/types.h>

struct lite_kservice;
struct lite_kclient;
struct lite_kctx;

/* ---- LMRs and one-sided operations (kmod/ctl/lite_kapi_mem.c) ---- */

/* lite_kmap()'s access: uapi/lite.h's LITE_ACCESS_READ and _WRITE. */
#define LITE_KACCESS_READ	1U
#define LITE_KACCESS_WRITE	2U
/* The manager's message on a refusal: buffers of this many bytes. */
#define LITE_KMESSAGE_BUF	256

/* A mapped LMR. */
struct lite_kmap_info {
	u64 handle;			/* for the operations, in its context */
	u64 lmr_id;
	u64 size;			/* bytes */
	u32 home_node_id;		/* the node that holds its memory */
};

/*
 * A context holds handles, like an open /dev/lite: lite_kctx_close() gives
 * every one back. @message arguments may be NULL.
 */
int lite_kctx_open(struct lite_kctx **out);
void lite_kctx_close(struct lite_kctx *ctx);
int lite_kalloc(const char *name, u64 size, u32 mode, u32 home_node_id,
		u64 *lmr_id, char *message);
int lite_kfree(const char *name, char *message);
int lite_kmap(struct lite_kctx *ctx, const char *name, u32 access,
	      struct lite_kmap_info *info, char *message);
int lite_kunmap(struct lite_kctx *ctx, u64 handle);
/* Kernel buffers of any kind; they pass through lite.ko's bounce buffers. */
int lite_kread(struct lite_kctx *ctx, u64 handle, u64 offset, void *buf,
	       u64 length);
int lite_kwrite(struct lite_kctx *ctx, u64 handle, u64 offset,
		const void *buf, u64 length);
int lite_kmemset(struct lite_kctx *ctx, u64 handle, u64 offset, u8 value,
		 u64 length);
int lite_kfaa(struct lite_kctx *ctx, u64 handle, u64 offset, u64 add,
	      u64 *old);
int lite_kcas(struct lite_kctx *ctx, u64 handle, u64 offset, u64 expect,
	      u64 swap, u64 *old);

/* ---- RPC (kmod/rpc/lite_rpc_kapi.c) ---- */

/* As struct lite_rpc_register's; zeros take the defaults (16, 16). */
struct lite_kservice_opts {
	u32 mode;			/* subset of 0777: the x bits count */
	u32 max_request;
	u32 max_reply;
	u32 depth;
	u32 max_clients;
};

/* One request taken by lite_kservice_recv(): its bytes, in place. */
struct lite_kreq {
	u64 id;
	const void *data;		/* in the service's ring, zero copy */
	u32 len;
	u32 client_node;
	bool oneway;			/* a message: release it, no reply */
};

/* Registers @name served by the caller (through the agent, like a process). */
int lite_kservice_register(const char *name,
			   const struct lite_kservice_opts *opts,
			   struct lite_kservice **out);
/* Unregisters: callers get -ECONNREFUSED. */
void lite_kservice_unregister(struct lite_kservice *svc);
/*
 * Takes up to @max requests, waiting up to @timeout_ms for the first (0:
 * not at all); how many, or a negative errno (-ECONNREFUSED once the
 * service is being unregistered, -EINTR on a fatal signal or
 * kthread_should_stop() when called from a kthread... see the example).
 */
int lite_kservice_recv(struct lite_kservice *svc, struct lite_kreq *reqs,
		       u32 max, u32 timeout_ms);
/* Answers a call: in place when @data is in its request's slot, else copied. */
int lite_kservice_reply(struct lite_kservice *svc, const struct lite_kreq *req,
			const void *data, u32 len);
/* Gives a message's slot back to its sender. */
int lite_kservice_release(struct lite_kservice *svc,
			  const struct lite_kreq *req);

int lite_kclient_open(const char *name, struct lite_kclient **out);
void lite_kclient_close(struct lite_kclient *c);
/* One call; @timeout_ms 0 means lite.ko's rpc_timeout_ms. */
int lite_kclient_call(struct lite_kclient *c, const void *req, u32 req_len,
		      void *reply, u32 reply_max, u32 *reply_len,
		      u32 timeout_ms);
int lite_kclient_send(struct lite_kclient *c, const void *msg, u32 len,
		      u32 timeout_ms);

#endif /* LITE_KERNEL_H */
