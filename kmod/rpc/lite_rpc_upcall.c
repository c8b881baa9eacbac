// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC through the agent: RPC_REGISTER (the manager names a new
 * service), RPC_OPEN (it resolves a name and checks the x bit), RPC_BIND
 * (it asks the server's node for a ring) and RPC_UNREGISTER (nobody
 * waits). Every answer is checked against the uapi ranges before anyone
 * uses it: the agent is trusted to relay, not to be right.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>

#include "lite_rpc_internal.h"
#include "upcall/lite_upcall.h"

/* A u32 answer attribute within [lo, hi], or -EINVAL with a message. */
static int lite_rpc_ans_u32(struct genl_info *info, int type, const char *what,
			    u32 lo, u32 hi, u32 *out)
{
	struct nlattr *attr = info->attrs[type];

	if (!attr) {
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, type);
		NL_SET_ERR_MSG(info->extack, "missing an RPC answer attribute");
		return -EINVAL;
	}
	*out = nla_get_u32(attr);
	if (*out < lo || *out > hi) {
		/* @what names it in the kernel log; the message is fixed. */
		pr_debug("RPC answer: %s (%u)\n", what, *out);
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "an RPC answer attribute is out of range");
		return -EINVAL;
	}
	return 0;
}

static int lite_rpc_ans_u64(struct genl_info *info, int type, u64 *out)
{
	struct nlattr *attr = info->attrs[type];

	if (!attr) {
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, type);
		NL_SET_ERR_MSG(info->extack, "missing an RPC answer attribute");
		return -EINVAL;
	}
	*out = nla_get_u64(attr);
	return 0;
}

static int lite_rpc_parse_answer(struct genl_info *info, u32 kind,
				 struct lite_upcall_rpc_ans *a)
{
	int ret;

	switch (kind) {
	case LITE_UPCALL_RPC_REGISTER:
		ret = lite_rpc_ans_u64(info, LITE_ATTR_SERVICE_ID,
				       &a->service_id);
		break;
	case LITE_UPCALL_RPC_OPEN:
		ret = lite_rpc_ans_u64(info, LITE_ATTR_SERVICE_ID,
				       &a->service_id) ?:
		      lite_rpc_ans_u32(info, LITE_ATTR_NODE_ID,
				       "LITE_ATTR_NODE_ID: 0 is no node", 1,
				       U32_MAX, &a->node_id) ?:
		      lite_rpc_ans_u32(info, LITE_ATTR_RPC_PORT,
				       "LITE_ATTR_RPC_PORT: out of range", 1,
				       LITE_RPC_PORT_MAX, &a->port) ?:
		      lite_rpc_ans_u32(info, LITE_ATTR_RPC_MAX_REQUEST,
				       "LITE_ATTR_RPC_MAX_REQUEST: out of range",
				       0, LITE_RPC_MSG_MAX, &a->max_request) ?:
		      lite_rpc_ans_u32(info, LITE_ATTR_RPC_MAX_REPLY,
				       "LITE_ATTR_RPC_MAX_REPLY: out of range",
				       0, LITE_RPC_MSG_MAX, &a->max_reply) ?:
		      lite_rpc_ans_u32(info, LITE_ATTR_RPC_DEPTH,
				       "LITE_ATTR_RPC_DEPTH: out of range", 1,
				       LITE_RPC_DEPTH_MAX, &a->depth);
		break;
	default:	/* RPC_BIND */
		ret = lite_rpc_ans_u64(info, LITE_ATTR_RPC_ADDR, &a->ring_addr) ?:
		      lite_rpc_ans_u32(info, LITE_ATTR_MEMORY_KEY,
				       "LITE_ATTR_MEMORY_KEY", 0, U32_MAX,
				       &a->ring_key) ?:
		      lite_rpc_ans_u32(info, LITE_ATTR_RPC_DEPTH,
				       "LITE_ATTR_RPC_DEPTH: out of range", 1,
				       LITE_RPC_DEPTH_MAX, &a->depth) ?:
		      lite_rpc_ans_u32(info, LITE_ATTR_RPC_SLOT_BYTES,
				       "LITE_ATTR_RPC_SLOT_BYTES: out of range",
				       LITE_RPC_SLOT_ALIGN, LITE_RPC_MSG_MAX,
				       &a->slot_bytes);
		break;
	}
	if (!ret && (kind == LITE_UPCALL_RPC_REGISTER ||
		     kind == LITE_UPCALL_RPC_OPEN) && !a->service_id) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[LITE_ATTR_SERVICE_ID],
				    "LITE_ATTR_SERVICE_ID: 0 is no service");
		ret = -EINVAL;
	}
	return ret;
}

int lite_upcall_complete_rpc(struct genl_info *info, struct lite_upcall *up)
{
	struct lite_upcall_rpc_ans a = {};
	int ret;

	ret = lite_rpc_parse_answer(info, up->kind, &a);
	if (ret)
		return ret;
	if (!lite_upcall_claim(up)) {
		GENL_SET_ERR_MSG(info, "no such upcall is pending (answered or given up)");
		return -ENOENT;
	}
	lite_count(LITE_CNT_UPCALLS_COMPLETED);
	/* A registration nobody will serve: the agent unregisters it. */
	if (up->kind == LITE_UPCALL_RPC_REGISTER && !lite_upcall_heard(up)) {
		GENL_SET_ERR_MSG(info, "the caller left before the answer; unregister the service");
		lite_upcall_answer(up, -ECANCELED);
		return -ECANCELED;
	}
	up->rpc = a;
	lite_upcall_answer(up, 0);
	return 0;
}

struct lite_rpc_register_msg {
	const struct lite_rpc_service_args *args;
	u32 port;
};

static int lite_rpc_register_put(struct sk_buff *msg, const void *arg)
{
	const struct lite_rpc_register_msg *r = arg;
	const struct lite_rpc_service_args *args = r->args;

	return nla_put_string(msg, LITE_ATTR_NAME, args->name) ||
	       nla_put_u32(msg, LITE_ATTR_MODE, args->mode) ||
	       nla_put_u32(msg, LITE_ATTR_RPC_PORT, r->port) ||
	       nla_put_u32(msg, LITE_ATTR_RPC_MAX_REQUEST, args->max_request) ||
	       nla_put_u32(msg, LITE_ATTR_RPC_MAX_REPLY, args->max_reply) ||
	       nla_put_u32(msg, LITE_ATTR_RPC_DEPTH, args->depth) ||
	       nla_put_u32(msg, LITE_ATTR_RPC_MAX_CLIENTS, args->max_clients);
}

int lite_upcall_rpc_register(const struct lite_rpc_service_args *args,
			     u32 port, u64 *service_id, char *message)
{
	struct lite_rpc_register_msg r = { .args = args, .port = port };
	struct lite_upcall *up;
	int ret;

	up = lite_upcall_new(LITE_UPCALL_RPC_REGISTER);
	if (!up)
		return -ENOMEM;
	ret = lite_upcall_call(up, lite_rpc_register_put, &r, message);
	*service_id = up->rpc.service_id;
	lite_upcall_put(up);
	return ret;
}

static int lite_rpc_open_put(struct sk_buff *msg, const void *arg)
{
	return nla_put_string(msg, LITE_ATTR_NAME, arg);
}

int lite_upcall_rpc_open(const char *name, struct lite_rpc_open_ans *ans,
			 char *message)
{
	struct lite_upcall *up;
	int ret;

	up = lite_upcall_new(LITE_UPCALL_RPC_OPEN);
	if (!up)
		return -ENOMEM;
	ret = lite_upcall_call(up, lite_rpc_open_put, name, message);
	if (!ret) {
		ans->service_id = up->rpc.service_id;
		ans->node_id = up->rpc.node_id;
		ans->port = up->rpc.port;
		ans->max_request = up->rpc.max_request;
		ans->max_reply = up->rpc.max_reply;
		ans->depth = up->rpc.depth;
	}
	lite_upcall_put(up);
	return ret;
}

struct lite_rpc_bind_msg {
	u64 service_id;
	const struct lite_rpc_mem *reply;
	u32 slot_bytes;
};

static int lite_rpc_bind_put(struct sk_buff *msg, const void *arg)
{
	const struct lite_rpc_bind_msg *b = arg;

	return nla_put_u64_64bit(msg, LITE_ATTR_SERVICE_ID, b->service_id,
				 LITE_ATTR_PAD) ||
	       nla_put_u64_64bit(msg, LITE_ATTR_RPC_ADDR, b->reply->addr,
				 LITE_ATTR_PAD) ||
	       nla_put_u32(msg, LITE_ATTR_MEMORY_KEY, b->reply->rkey) ||
	       nla_put_u32(msg, LITE_ATTR_RPC_SLOT_BYTES, b->slot_bytes);
}

int lite_upcall_rpc_bind(u64 service_id, const struct lite_rpc_mem *reply,
			 u32 slot_bytes, struct lite_rpc_bind_ans *ring,
			 char *message)
{
	struct lite_rpc_bind_msg b = {
		.service_id = service_id, .reply = reply,
		.slot_bytes = slot_bytes,
	};
	struct lite_upcall *up;
	int ret;

	up = lite_upcall_new(LITE_UPCALL_RPC_BIND);
	if (!up)
		return -ENOMEM;
	ret = lite_upcall_call(up, lite_rpc_bind_put, &b, message);
	if (!ret) {
		ring->ring_addr = up->rpc.ring_addr;
		ring->ring_key = up->rpc.ring_key;
		ring->depth = up->rpc.depth;
		ring->slot_bytes = up->rpc.slot_bytes;
	}
	lite_upcall_put(up);
	return ret;
}

void lite_upcall_rpc_unregister(const struct lite_rpc_service_args *args,
				u64 service_id)
{
	struct group_info *groups = get_current_groups();
	struct sk_buff *msg;
	void *hdr;
	u32 portid;

	/* The registrant's ids: a close may run in another task. */
	msg = lite_upcall_notice_start(LITE_UPCALL_RPC_UNREGISTER, args->uid,
				       args->gid, args->pid, groups, &hdr,
				       &portid);
	put_group_info(groups);
	if (!msg)
		return;
	if (nla_put_u64_64bit(msg, LITE_ATTR_SERVICE_ID, service_id,
			      LITE_ATTR_PAD)) {
		nlmsg_free(msg);
		return;
	}
	lite_upcall_notice_send(msg, hdr, portid);
}
