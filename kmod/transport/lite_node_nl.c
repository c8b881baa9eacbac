// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the netlink commands about this node and its peers (NODE_SET,
 * NODE_GET, PEER_ADD, PEER_REMOVE, PEER_GET) and the peer events. Their
 * policies and flags are in ctl/lite_netlink.c's table.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "lite_transport.h"

static int lite_nl_get_node_id(struct genl_info *info, u32 *id)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_NODE_ID];

	*id = nla_get_u32(attr);
	if (!*id) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "node id 0 is reserved (valid: 1..4294967295)");
		return -EINVAL;
	}
	return 0;
}

static int lite_nl_get_incarnation(struct genl_info *info, u64 *incarnation)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_INCARNATION];

	*incarnation = nla_get_u64(attr);
	if (!*incarnation) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "incarnation 0 is reserved (valid: 1..2^64-1)");
		return -EINVAL;
	}
	return 0;
}

static int lite_nl_get_addr(struct genl_info *info, __be32 *addr)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_IPV4_ADDR];

	*addr = nla_get_in_addr(attr);
	if (ipv4_is_zeronet(*addr) || ipv4_is_loopback(*addr) ||
	    ipv4_is_multicast(*addr) || ipv4_is_lbcast(*addr)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "not a unicast IPv4 address (0.0.0.0/8, loopback, multicast and broadcast are not)");
		return -EINVAL;
	}
	return 0;
}

/* LITE_ATTR_NODE_NAME, optional: "" when absent (old agents send none). */
static int lite_nl_get_node_name(struct genl_info *info, char *buf)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_NODE_NAME];

	buf[0] = '\0';
	if (!attr)
		return 0;
	/* The policy made it NUL-terminated and at most LITE_NODE_NAME_MAX. */
	strscpy(buf, nla_data(attr), LITE_NODE_NAME_BUF);
	if (!lite_node_name_valid(buf)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_NODE_NAME: 1..64 characters of [A-Za-z0-9._-], the first a letter or digit");
		return -EINVAL;
	}
	return 0;
}

/*
 * Node id, incarnation and address, all required, and the optional name:
 * NODE_SET and PEER_ADD.
 */
static int lite_nl_get_identity(struct genl_info *info, struct lite_node_id *nid)
{
	int ret;

	if (!lite_nl_require(info, LITE_ATTR_NODE_ID, "LITE_ATTR_NODE_ID") ||
	    !lite_nl_require(info, LITE_ATTR_INCARNATION, "LITE_ATTR_INCARNATION") ||
	    !lite_nl_require(info, LITE_ATTR_IPV4_ADDR, "LITE_ATTR_IPV4_ADDR"))
		return -EINVAL;
	ret = lite_nl_get_node_id(info, &nid->id);
	if (!ret)
		ret = lite_nl_get_incarnation(info, &nid->incarnation);
	if (!ret)
		ret = lite_nl_get_addr(info, &nid->addr);
	if (!ret)
		ret = lite_nl_get_node_name(info, nid->name);
	return ret;
}

int lite_nl_node_set(struct sk_buff *skb, struct genl_info *info)
{
	struct lite_node_id nid;
	int ret;

	ret = lite_nl_check_owner(info);
	if (!ret)
		ret = lite_nl_get_identity(info, &nid);
	if (!ret)
		ret = lite_node_set(&nid, info->extack);
	return ret;
}

int lite_nl_node_get(struct sk_buff *skb, struct genl_info *info)
{
	struct lite_node_id nid;
	struct sk_buff *msg;
	unsigned int peers;
	bool attached, set;
	u32 portid;
	void *hdr;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &lite_genl_family, 0,
				LITE_CMD_NODE_GET);
	if (!hdr)
		goto too_big;

	mutex_lock(&lite_lock);
	set = lite_node_get_locked(&nid);
	peers = lite_peers_count_locked();
	mutex_unlock(&lite_lock);
	attached = lite_nl_agent_portid(&portid);

	if (nla_put_u16(msg, LITE_ATTR_CM_PORT, lite_cm_port) ||
	    nla_put_u32(msg, LITE_ATTR_QPS_PER_PEER, lite_qps_per_peer) ||
	    nla_put_u32(msg, LITE_ATTR_NUM_PEERS, peers) ||
	    nla_put_u32(msg, LITE_ATTR_KEY_MODE, lite_key_mode))
		goto too_big;
	if (set &&
	    (nla_put_u32(msg, LITE_ATTR_NODE_ID, nid.id) ||
	     nla_put_u64_64bit(msg, LITE_ATTR_INCARNATION, nid.incarnation,
			       LITE_ATTR_PAD) ||
	     nla_put_in_addr(msg, LITE_ATTR_IPV4_ADDR, nid.addr)))
		goto too_big;
	if (set && nid.name[0] &&
	    nla_put_string(msg, LITE_ATTR_NODE_NAME, nid.name))
		goto too_big;
	/* Where upcalls go is the administrator's business only. */
	if (attached && netlink_capable(skb, CAP_NET_ADMIN) &&
	    nla_put_u32(msg, LITE_ATTR_AGENT_PORTID, portid))
		goto too_big;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

too_big:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* LITE_ATTR_PEER_SECRET, optional: its bytes (the policy checked the size), or NULL. */
static int lite_nl_get_secret(struct genl_info *info, const u8 **secret)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_PEER_SECRET];

	*secret = NULL;
	if (!attr)
		return 0;
	if (!memchr_inv(nla_data(attr), 0, LITE_PEER_SECRET_LEN)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_PEER_SECRET: all zero is not a secret");
		return -EINVAL;
	}
	*secret = nla_data(attr);
	return 0;
}

int lite_nl_peer_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_PEER_SECRET];
	const u8 *secret;
	struct lite_node_id pid;
	int ret;

	ret = lite_nl_check_owner(info);
	if (!ret)
		ret = lite_nl_get_identity(info, &pid);
	if (!ret)
		ret = lite_nl_get_secret(info, &secret);
	if (!ret)
		ret = lite_peer_add(&pid, secret, info->extack);
	/*
	 * The key schedule has what it needs: no copy of the secret stays
	 * in the request (an error ACK echoes the request to its sender).
	 */
	if (attr)
		memzero_explicit(nla_data(attr), nla_len(attr));
	return ret;
}

int lite_nl_peer_remove(struct sk_buff *skb, struct genl_info *info)
{
	u64 incarnation = 0;
	u32 id;
	int ret;

	ret = lite_nl_check_owner(info);
	if (ret)
		return ret;
	if (!lite_nl_require(info, LITE_ATTR_NODE_ID, "LITE_ATTR_NODE_ID"))
		return -EINVAL;
	ret = lite_nl_get_node_id(info, &id);
	if (!ret && info->attrs[LITE_ATTR_INCARNATION])
		ret = lite_nl_get_incarnation(info, &incarnation);
	if (!ret)
		ret = lite_peer_remove(id, incarnation, info->extack);
	return ret;
}

static int lite_nl_put_peer(struct sk_buff *msg, const struct lite_peer_info *p)
{
	if (nla_put_u32(msg, LITE_ATTR_NODE_ID, p->node_id) ||
	    nla_put_u64_64bit(msg, LITE_ATTR_INCARNATION, p->incarnation,
			      LITE_ATTR_PAD) ||
	    nla_put_in_addr(msg, LITE_ATTR_IPV4_ADDR, p->addr) ||
	    nla_put_u32(msg, LITE_ATTR_PEER_STATE, p->state) ||
	    nla_put_u32(msg, LITE_ATTR_QPS_CONNECTED, p->qps_connected))
		return -EMSGSIZE;
	return 0;
}

struct lite_nl_dump_ctx {
	struct sk_buff *skb;
	struct netlink_callback *cb;
};

static int lite_nl_dump_one(const struct lite_peer_info *p, void *arg)
{
	struct lite_nl_dump_ctx *ctx = arg;
	void *hdr;

	hdr = genlmsg_put(ctx->skb, NETLINK_CB(ctx->cb->skb).portid,
			  ctx->cb->nlh->nlmsg_seq, &lite_genl_family,
			  NLM_F_MULTI, LITE_CMD_PEER_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (lite_nl_put_peer(ctx->skb, p) ||
	    nla_put_u32(ctx->skb, LITE_ATTR_PEER_ROLE, p->role) ||
	    nla_put_u32(ctx->skb, LITE_ATTR_PEER_REFUSALS, p->refusals) ||
	    (p->name[0] &&
	     nla_put_string(ctx->skb, LITE_ATTR_NODE_NAME, p->name)) ||
	    (p->last_refusal &&
	     (nla_put_u32(ctx->skb, LITE_ATTR_PEER_LAST_REFUSAL, p->last_refusal) ||
	      nla_put_u32(ctx->skb, LITE_ATTR_PEER_REFUSED_BY, p->refused_by)))) {
		genlmsg_cancel(ctx->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(ctx->skb, hdr);
	return 0;
}

/* cb->args[0]: the node id to resume from. */
int lite_nl_peer_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct lite_nl_dump_ctx ctx = { .skb = skb, .cb = cb };
	unsigned long next = cb->args[0];
	int ret;

	ret = lite_peers_visit(&next, lite_nl_dump_one, &ctx);
	cb->args[0] = next;
	/* A peer that did not fit goes into the next message. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

struct lite_nl_peer_ev {
	const struct lite_peer_info *info;
	int qp_index;
	int reason;
};

static int lite_nl_fill_peer_event(struct sk_buff *msg, const void *arg)
{
	const struct lite_nl_peer_ev *ev = arg;

	if (lite_nl_put_peer(msg, ev->info))
		return -EMSGSIZE;
	if (ev->qp_index >= 0 &&
	    nla_put_u32(msg, LITE_ATTR_QP_INDEX, ev->qp_index))
		return -EMSGSIZE;
	if (ev->reason > 0 && nla_put_u32(msg, LITE_ATTR_REASON, ev->reason))
		return -EMSGSIZE;
	return 0;
}

void lite_nl_peer_event(u8 cmd, const struct lite_peer_info *info,
			int qp_index, int reason)
{
	struct lite_nl_peer_ev ev = {
		.info = info, .qp_index = qp_index, .reason = reason,
	};

	lockdep_assert_held(&lite_lock);
	lite_nl_event(cmd, lite_nl_fill_peer_event, &ev);
}
