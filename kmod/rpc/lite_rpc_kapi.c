// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC for kernel code (include/lite_kernel.h): the same services,
 * bindings and wire as /dev/lite's, with kernel buffers. A server reads
 * requests in place, in its service's rings; a client's request and reply
 * are copied through its binding's slot, as for a process.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "lite_kernel.h"
#include "lite_rpc_internal.h"
#include "upcall/lite_upcall.h"

struct lite_kservice {
	struct lite_rpc_service *svc;
};

struct lite_kclient {
	struct lite_rpc_binding *b;
};

static int lite_kname(struct lite_rpc_register *r, const char *name)
{
	if (!name || strscpy(r->name, name, sizeof(r->name)) < 0)
		return -EINVAL;
	return 0;
}

int lite_kservice_register(const char *name,
			   const struct lite_kservice_opts *opts,
			   struct lite_kservice **out)
{
	struct lite_rpc_service_args args;
	struct lite_rpc_register r = {};
	struct lite_kservice *ks;
	char *message;
	int ret;

	if (!opts || !out || lite_kname(&r, name))
		return -EINVAL;
	r.mode = opts->mode;
	r.max_request = opts->max_request;
	r.max_reply = opts->max_reply;
	r.depth = opts->depth;
	r.max_clients = opts->max_clients;
	ret = lite_rpc_service_args_check(&r, &args);
	if (ret)
		return ret;
	ks = kzalloc(sizeof(*ks), GFP_KERNEL);
	message = kzalloc(LITE_MESSAGE_BUF, GFP_KERNEL);
	if (!ks || !message) {
		ret = -ENOMEM;
		goto err;
	}
	ret = lite_rpc_start_service(&args, &ks->svc, message);
	if (ret) {
		pr_info("kernel service %s not registered (%d): %s\n", name, ret,
			message);
		goto err;
	}
	kfree(message);
	*out = ks;
	return 0;
err:
	kfree(message);
	kfree(ks);
	return ret;
}
EXPORT_SYMBOL_GPL(lite_kservice_register);

void lite_kservice_unregister(struct lite_kservice *ks)
{
	if (!ks)
		return;
	lite_rpc_stop_service(ks->svc);
	kfree(ks);
}
EXPORT_SYMBOL_GPL(lite_kservice_unregister);

wait_queue_head_t *lite_kservice_waitq(struct lite_kservice *ks)
{
	return &ks->svc->recv_wait;
}

bool lite_kservice_pending(struct lite_kservice *ks)
{
	return READ_ONCE(ks->svc->queued) || READ_ONCE(ks->svc->closing);
}

/* Where request @r's bytes are: its ring's memory (allocated once bound). */
static const void *lite_kreq_data(struct lite_rpc_service *svc,
				  const struct lite_rpc_request *r)
{
	u64 ring = div64_u64(r->offset, svc->ring_bytes);

	return svc->rings[ring].mem.vaddr + (r->offset - ring * svc->ring_bytes);
}

int lite_kservice_recv(struct lite_kservice *ks, struct lite_kreq *reqs,
		       u32 max, u32 timeout_ms)
{
	struct lite_rpc_request batch[8];
	struct lite_rpc_service *svc = ks->svc;
	long left;
	int n, i;

	if (!max || max > LITE_RPC_RECV_MAX)
		return -EINVAL;
	n = lite_rpc_service_take(svc, batch, min_t(u32, max, ARRAY_SIZE(batch)));
	if (!n && timeout_ms) {
		left = wait_event_killable_timeout(svc->recv_wait,
						   READ_ONCE(svc->queued) ||
						   READ_ONCE(svc->closing),
						   msecs_to_jiffies(timeout_ms));
		if (left < 0)
			return -EINTR;
		n = lite_rpc_service_take(svc, batch,
					  min_t(u32, max, ARRAY_SIZE(batch)));
	}
	for (i = 0; i < n; i++) {
		reqs[i].id = batch[i].id;
		reqs[i].data = lite_kreq_data(svc, &batch[i]);
		reqs[i].len = batch[i].length;
		reqs[i].client_node = batch[i].client_node;
		reqs[i].oneway = batch[i].flags & LITE_RPC_REQ_ONEWAY;
	}
	return n;
}
EXPORT_SYMBOL_GPL(lite_kservice_recv);

int lite_kservice_reply(struct lite_kservice *ks, const struct lite_kreq *req,
			const void *data, u32 len)
{
	const u8 *slot = req->data, *at = data;
	struct lite_rpc_service *svc = ks->svc;

	/* In its own slot: sent from there, no copy (the offset from the slot). */
	if (at >= slot && at - slot <= svc->slot_bytes &&
	    len <= svc->slot_bytes - (at - slot)) {
		u64 r = (req->id >> 12) & 0xfffff, s = req->id & 0xfff;
		u64 off = r * svc->ring_bytes + s * svc->slot_bytes +
			  (at - slot);

		return lite_rpc_service_answer(svc, req->id,
					       (const void __user *)(uintptr_t)off,
					       NULL, len,
					       LITE_RPC_REPLY_IN_PLACE,
					       lite_rpc_deadline(0));
	}
	return lite_rpc_service_answer(svc, req->id, NULL, data ?: slot, len, 0,
				       lite_rpc_deadline(0));
}
EXPORT_SYMBOL_GPL(lite_kservice_reply);

int lite_kservice_release(struct lite_kservice *ks,
			  const struct lite_kreq *req)
{
	return lite_rpc_service_answer(ks->svc, req->id, NULL, NULL, 0,
				       LITE_RPC_REPLY_RELEASE,
				       lite_rpc_deadline(0));
}
EXPORT_SYMBOL_GPL(lite_kservice_release);

int lite_kclient_open(const char *name, struct lite_kclient **out)
{
	struct lite_rpc_open_ans ans = {};
	struct lite_rpc_register r = {};
	struct lite_kclient *kc;
	char *message;
	int ret;

	if (!out || lite_kname(&r, name) || !lite_user_name_valid(r.name))
		return -EINVAL;
	kc = kzalloc(sizeof(*kc), GFP_KERNEL);
	message = kzalloc(LITE_MESSAGE_BUF, GFP_KERNEL);
	if (!kc || !message) {
		ret = -ENOMEM;
		goto err;
	}
	ret = lite_rpc_open_service(r.name, &ans, &kc->b, message);
	if (ret) {
		pr_info("kernel client of %s not opened (%d): %s\n", name, ret,
			message);
		goto err;
	}
	kfree(message);
	*out = kc;
	return 0;
err:
	kfree(message);
	kfree(kc);
	return ret;
}
EXPORT_SYMBOL_GPL(lite_kclient_open);

void lite_kclient_close(struct lite_kclient *kc)
{
	if (!kc)
		return;
	lite_rpc_binding_put(kc->b);
	kfree(kc);
}
EXPORT_SYMBOL_GPL(lite_kclient_close);

u32 lite_kclient_node(const struct lite_kclient *kc)
{
	return kc->b->node_id;
}

/* Takes a slot of @b and stages @len bytes of @src in it. */
static int lite_kstage(struct lite_rpc_binding *b, const void *src, u32 len,
		       u8 state, unsigned long deadline,
		       struct lite_rpc_cslot **out)
{
	int ret;

	if (len > b->max_request)
		return -EMSGSIZE;
	ret = lite_rpc_slot_take(b, false, deadline, state, out);
	if (ret)
		return ret;
	memcpy(b->mem.vaddr + (u64)(*out)->index * b->slot_bytes, src, len);
	return 0;
}

int lite_kclient_call(struct lite_kclient *kc, const void *req, u32 req_len,
		      void *reply, u32 reply_max, u32 *reply_len,
		      u32 timeout_ms)
{
	unsigned long deadline = lite_rpc_deadline(timeout_ms);
	struct lite_rpc_binding *b = kc->b;
	struct lite_rpc_cslot *s;
	int ret;

	ret = lite_kstage(b, req, req_len, LITE_CSLOT_CALL, deadline, &s);
	if (ret)
		return ret;
	ret = lite_rpc_slot_post(s, req_len, false, deadline);
	if (ret) {
		lite_rpc_slot_finish(s);
		return ret;
	}
	ret = lite_rpc_slot_wait(s, deadline);
	if (ret) {
		if (ret != -ETIMEDOUT && ret != -EINTR)
			lite_rpc_slot_finish(s);
		return ret;
	}
	if (reply_len)
		*reply_len = s->len;
	memcpy(reply, b->mem.vaddr + (u64)s->index * b->slot_bytes,
	       min(s->len, reply_max));
	ret = s->len > reply_max ? -EOVERFLOW : 0;
	lite_rpc_slot_finish(s);
	return ret;
}
EXPORT_SYMBOL_GPL(lite_kclient_call);

int lite_kclient_send(struct lite_kclient *kc, const void *msg, u32 len,
		      u32 timeout_ms)
{
	unsigned long deadline = lite_rpc_deadline(timeout_ms);
	struct lite_rpc_cslot *s;
	int ret;

	ret = lite_kstage(kc->b, msg, len, LITE_CSLOT_MSG, deadline, &s);
	if (ret)
		return ret;
	ret = lite_rpc_slot_post(s, len, true, deadline);
	if (ret) {
		lite_rpc_slot_finish(s);
		return ret;
	}
	return lite_rpc_msg_wait(s);
}
EXPORT_SYMBOL_GPL(lite_kclient_send);
