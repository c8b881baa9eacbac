/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE RPC for kernel code: other modules serve and call LITE RPC services
 * the way processes do through /dev/lite (uapi/lite_rpc.h and docs/rpc.md
 * tell the semantics; the errors are the same, negative). Process context
 * for every call; a service or client may be used by many threads at once.
 *
 * Build against lite.ko's Module.symvers (KBUILD_EXTRA_SYMBOLS), include
 * this header with -I<lite>/kmod/include; kmod/examples/lite_kecho.c is a
 * complete example (a server and a client). The caller's credentials are
 * the current task's, as for a process: a module's own kernel thread is
 * root.
 */
#ifndef LITE_KERNEL_H
#define LITE_KERNEL_H

#include <linux/types.h>

struct lite_kservice;
struct lite_kclient;

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
