// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the generic netlink family the node agent programs lite.ko with.
 * The contract (commands, attributes, errors, events) is documented in
 * include/uapi/lite.h.
 *
 * Every command has its own policy: attributes it does not take are
 * NLA_UNSPEC there, which strict validation (the default for new genl
 * commands) rejects, as it rejects unknown types, bad lengths and trailing
 * bytes. Values are then checked here, each with its own message.
 *
 * The attached agent is remembered by its netlink port: that is where
 * upcalls will go, and a netlink notifier detaches it when that socket is
 * released, so a crashed agent never leaves a stale owner behind.
 *
 * Who reads what: commands that change state are GENL_ADMIN_PERM, and so
 * are the LMR and grant dumps (memory keys, chunk addresses, other users'
 * ids); NODE_GET and PEER_GET are open and leave out the agent's port for
 * callers without CAP_NET_ADMIN. The pair secret is never put in any
 * message.
 *
 * Commands run in parallel (.parallel_ops): nothing here waits for the
 * global genl_mutex, so a large LMR_ALLOC (seconds of zeroing and mapping)
 * stalls no other generic netlink family, nlctrl included. Every piece of
 * state has its own lock. The one thing genl_mutex used to give for free
 * is that no command ran between AGENT_ATTACH's check and a command's
 * effect: lite_owner_rwsem (below) keeps that.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/notifier.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "lite_internal.h"
#include "lite_peer_probe.h"
#include "lite_rpc.h"

static struct {
	bool attached;
	u32 portid;
} lite_agent;				/* under lite_agent_lock */
static DEFINE_SPINLOCK(lite_agent_lock);

/*
 * Held for reading by every command that checks who may send it (the owner
 * or the agent) from the check to its last effect, and for writing by
 * AGENT_ATTACH and AGENT_DETACH (lite_nl_owned_doit()). So a command another
 * socket sent is never checked against one agent and carried out after
 * another has attached, as genl_mutex guaranteed before commands ran in
 * parallel. Commands that only read (NODE_GET, the dumps) do not take it.
 * Nothing that holds lite_lock, lite_lmr_mutex or any other LITE lock takes
 * it, so it is the outermost lock.
 */
static DECLARE_RWSEM(lite_owner_rwsem);

/* Events may be sent: the family is registered. Under lite_lock. */
static bool lite_nl_ready;

enum lite_mcgrp {
	LITE_MCGRP_EVENTS_IDX,
};

static const struct genl_multicast_group lite_genl_mcgrps[] = {
	[LITE_MCGRP_EVENTS_IDX] = {
		.name = LITE_GENL_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

/* Commands that take no attributes: every type is NLA_UNSPEC, so rejected. */
static const struct nla_policy lite_nl_no_attrs[LITE_ATTR_MAX + 1] = {};

static const struct nla_policy lite_nl_node_set_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_NODE_ID] = { .type = NLA_U32 },
	[LITE_ATTR_INCARNATION] = { .type = NLA_U64 },
	[LITE_ATTR_IPV4_ADDR] = { .type = NLA_BE32 },
	[LITE_ATTR_NODE_NAME] = { .type = NLA_NUL_STRING, .len = LITE_NODE_NAME_MAX },
};

static const struct nla_policy lite_nl_peer_add_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_NODE_ID] = { .type = NLA_U32 },
	[LITE_ATTR_INCARNATION] = { .type = NLA_U64 },
	[LITE_ATTR_IPV4_ADDR] = { .type = NLA_BE32 },
	[LITE_ATTR_NODE_NAME] = { .type = NLA_NUL_STRING, .len = LITE_NODE_NAME_MAX },
	[LITE_ATTR_PEER_SECRET] = NLA_POLICY_EXACT_LEN(LITE_PEER_SECRET_LEN),
};

static const struct nla_policy lite_nl_peer_remove_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_NODE_ID] = { .type = NLA_U32 },
	[LITE_ATTR_INCARNATION] = { .type = NLA_U64 },
};

static const struct nla_policy lite_nl_peer_probe_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_NODE_ID] = { .type = NLA_U32 },
};

static const struct nla_policy lite_nl_lmr_alloc_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_LMR_ID] = { .type = NLA_U64 },
	[LITE_ATTR_NAME] = { .type = NLA_NUL_STRING, .len = LITE_NAME_MAX },
	[LITE_ATTR_SIZE] = { .type = NLA_U64 },
	[LITE_ATTR_UID] = { .type = NLA_U32 },
	[LITE_ATTR_GID] = { .type = NLA_U32 },
	[LITE_ATTR_MODE] = { .type = NLA_U32 },
};

static const struct nla_policy lite_nl_lmr_id_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_LMR_ID] = { .type = NLA_U64 },
};

static const struct nla_policy lite_nl_lmr_free_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_LMR_ID] = { .type = NLA_U64 },
	[LITE_ATTR_QUARANTINE] = { .type = NLA_FLAG },
};

static const struct nla_policy lite_nl_lmr_update_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_LMR_ID] = { .type = NLA_U64 },
	[LITE_ATTR_NEW_LMR_ID] = { .type = NLA_U64 },
	[LITE_ATTR_EPOCH] = { .type = NLA_U64 },
	[LITE_ATTR_RELEASING] = { .type = NLA_FLAG },
};

static const struct nla_policy lite_nl_chunk_policy[LITE_CHUNK_ATTR_MAX + 1] = {
	[LITE_CHUNK_ATTR_ADDR] = { .type = NLA_U64 },
	[LITE_CHUNK_ATTR_LENGTH] = { .type = NLA_U64 },
};

static const struct nla_policy lite_nl_chunks_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_CHUNK] = NLA_POLICY_NESTED(lite_nl_chunk_policy),
};

static const struct nla_policy lite_nl_upcall_complete_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_UPCALL_ID] = { .type = NLA_U64 },
	[LITE_ATTR_ERRNO] = { .type = NLA_U32 },
	[LITE_ATTR_MESSAGE] = { .type = NLA_NUL_STRING, .len = LITE_MESSAGE_BUF - 1 },
	[LITE_ATTR_LMR_ID] = { .type = NLA_U64 },
	[LITE_ATTR_GRANT_ID] = { .type = NLA_U64 },
	[LITE_ATTR_NAME] = { .type = NLA_NUL_STRING, .len = LITE_NAME_MAX },
	[LITE_ATTR_NODE_ID] = { .type = NLA_U32 },
	[LITE_ATTR_ACCESS] = { .type = NLA_U32 },
	[LITE_ATTR_EPOCH] = { .type = NLA_U64 },
	[LITE_ATTR_SIZE] = { .type = NLA_U64 },
	[LITE_ATTR_MEMORY_KEY] = { .type = NLA_U32 },
	[LITE_ATTR_CHUNKS] = NLA_POLICY_NESTED(lite_nl_chunks_policy),
	[LITE_ATTR_INCARNATION] = { .type = NLA_U64 },
	[LITE_ATTR_GRANTED_AT_MS] = { .type = NLA_S64 },
	[LITE_ATTR_SERVICE_ID] = { .type = NLA_U64 },
	[LITE_ATTR_RPC_PORT] = { .type = NLA_U32 },
	[LITE_ATTR_RPC_MAX_REQUEST] = { .type = NLA_U32 },
	[LITE_ATTR_RPC_MAX_REPLY] = { .type = NLA_U32 },
	[LITE_ATTR_RPC_DEPTH] = { .type = NLA_U32 },
	[LITE_ATTR_RPC_ADDR] = { .type = NLA_U64 },
	[LITE_ATTR_RPC_SLOT_BYTES] = { .type = NLA_U32 },
};

static const struct nla_policy lite_nl_grant_id_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_GRANT_ID] = { .type = NLA_U64 },
};

/* While an agent is attached, only it may change the node's state. */
int lite_nl_check_owner(struct genl_info *info)
{
	int ret = 0;

	spin_lock(&lite_agent_lock);
	if (lite_agent.attached && lite_agent.portid != info->snd_portid)
		ret = -EBUSY;
	spin_unlock(&lite_agent_lock);
	if (ret)
		GENL_SET_ERR_MSG(info, "an agent is attached: only it may change the node");
	return ret;
}

int lite_nl_check_agent(struct genl_info *info)
{
	int ret = 0;

	spin_lock(&lite_agent_lock);
	if (!lite_agent.attached || lite_agent.portid != info->snd_portid)
		ret = -EBUSY;
	spin_unlock(&lite_agent_lock);
	if (ret)
		GENL_SET_ERR_MSG(info, "only the attached agent answers upcalls");
	return ret;
}

bool lite_nl_agent_portid(u32 *portid)
{
	bool attached;

	spin_lock(&lite_agent_lock);
	attached = lite_agent.attached;
	*portid = lite_agent.portid;
	spin_unlock(&lite_agent_lock);
	return attached;
}

int lite_nl_put_chunks(struct sk_buff *skb, const void *obj, u32 nr,
		       u32 *next, lite_chunk_fn fn)
{
	struct nlattr *chunks, *chunk;
	u64 addr, len;
	u32 i;

	chunks = nla_nest_start(skb, LITE_ATTR_CHUNKS);
	if (!chunks)
		return -EMSGSIZE;
	for (i = *next; i < nr; i++) {
		/* nla_len is 16 bits: the nest must stay below 64 KiB. */
		if (skb_tail_pointer(skb) - (unsigned char *)chunks +
		    nla_total_size(2 * nla_total_size_64bit(sizeof(u64))) > U16_MAX)
			break;
		fn(obj, i, &addr, &len);
		chunk = nla_nest_start(skb, LITE_ATTR_CHUNK);
		if (!chunk)
			break;
		if (nla_put_u64_64bit(skb, LITE_CHUNK_ATTR_ADDR, addr,
				      LITE_CHUNK_ATTR_PAD) ||
		    nla_put_u64_64bit(skb, LITE_CHUNK_ATTR_LENGTH, len,
				      LITE_CHUNK_ATTR_PAD)) {
			nla_nest_cancel(skb, chunk);
			break;
		}
		nla_nest_end(skb, chunk);
	}
	if (i == *next) {
		nla_nest_cancel(skb, chunks);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, chunks);
	*next = i;
	return 0;
}

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

static int lite_nl_attach(struct sk_buff *skb, struct genl_info *info)
{
	int ret = 0;

	spin_lock(&lite_agent_lock);
	if (lite_agent.attached && lite_agent.portid != info->snd_portid) {
		ret = -EBUSY;
	} else {
		lite_agent.attached = true;
		lite_agent.portid = info->snd_portid;
	}
	spin_unlock(&lite_agent_lock);
	if (ret) {
		GENL_SET_ERR_MSG(info, "another agent is attached");
		return ret;
	}
	pr_info("agent attached (netlink port %u)\n", info->snd_portid);
	return 0;
}

static int lite_nl_detach(struct sk_buff *skb, struct genl_info *info)
{
	int ret = 0;

	spin_lock(&lite_agent_lock);
	if (!lite_agent.attached)
		ret = -ENOTCONN;
	else if (lite_agent.portid != info->snd_portid)
		ret = -EBUSY;
	else
		lite_agent.attached = false;
	spin_unlock(&lite_agent_lock);
	if (!ret)
		lite_upcalls_agent_gone(info->snd_portid);
	if (ret == -ENOTCONN)
		GENL_SET_ERR_MSG(info, "no agent is attached");
	else if (ret)
		GENL_SET_ERR_MSG(info, "the attached agent is another socket");
	else
		pr_info("agent detached (netlink port %u)\n", info->snd_portid);
	return ret;
}

static int lite_nl_node_set(struct sk_buff *skb, struct genl_info *info)
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

static int lite_nl_node_get(struct sk_buff *skb, struct genl_info *info)
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
	spin_lock(&lite_agent_lock);
	attached = lite_agent.attached;
	portid = lite_agent.portid;
	spin_unlock(&lite_agent_lock);

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

static int lite_nl_peer_add(struct sk_buff *skb, struct genl_info *info)
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

static int lite_nl_peer_remove(struct sk_buff *skb, struct genl_info *info)
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
static int lite_nl_peer_dump(struct sk_buff *skb, struct netlink_callback *cb)
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

void lite_nl_peer_event(u8 cmd, const struct lite_peer_info *info,
			int qp_index, int reason)
{
	struct sk_buff *msg;
	void *hdr;

	lockdep_assert_held(&lite_lock);
	if (!lite_nl_ready ||
	    !genl_has_listeners(&lite_genl_family, &init_net,
				LITE_MCGRP_EVENTS_IDX))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &lite_genl_family, 0, cmd);
	if (!hdr)
		goto drop;
	if (lite_nl_put_peer(msg, info))
		goto drop;
	if (qp_index >= 0 && nla_put_u32(msg, LITE_ATTR_QP_INDEX, qp_index))
		goto drop;
	if (reason > 0 && nla_put_u32(msg, LITE_ATTR_REASON, reason))
		goto drop;
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&lite_genl_family, msg, 0, LITE_MCGRP_EVENTS_IDX,
			  GFP_KERNEL);
	return;
drop:
	nlmsg_free(msg);
}

void lite_nl_lmr_lost_event(u64 lmr_id, int reason)
{
	struct sk_buff *msg;
	void *hdr;

	/* lite_nl_ready is under lite_lock; the caller holds no LITE lock. */
	mutex_lock(&lite_lock);
	if (!lite_nl_ready ||
	    !genl_has_listeners(&lite_genl_family, &init_net,
				LITE_MCGRP_EVENTS_IDX))
		goto out;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put(msg, 0, 0, &lite_genl_family, 0,
			  LITE_CMD_EVENT_LMR_LOST);
	if (!hdr ||
	    nla_put_u64_64bit(msg, LITE_ATTR_LMR_ID, lmr_id, LITE_ATTR_PAD) ||
	    nla_put_u32(msg, LITE_ATTR_REASON, reason)) {
		nlmsg_free(msg);
		goto out;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&lite_genl_family, msg, 0, LITE_MCGRP_EVENTS_IDX,
			  GFP_KERNEL);
out:
	mutex_unlock(&lite_lock);
}

/* Which way a doit holds lite_owner_rwsem: 1 write, 0 read. */
static int lite_nl_owner_mode(u8 cmd)
{
	switch (cmd) {
	case LITE_CMD_AGENT_ATTACH:
	case LITE_CMD_AGENT_DETACH:
		return 1;
	default:
		return 0;
	}
}

/* The doits that run under lite_owner_rwsem, by command. */
static int (* const lite_nl_owned_doits[LITE_CMD_MAX + 1])(struct sk_buff *skb,
							  struct genl_info *info) = {
	[LITE_CMD_AGENT_ATTACH] = lite_nl_attach,
	[LITE_CMD_AGENT_DETACH] = lite_nl_detach,
	[LITE_CMD_NODE_SET] = lite_nl_node_set,
	[LITE_CMD_PEER_ADD] = lite_nl_peer_add,
	[LITE_CMD_PEER_REMOVE] = lite_nl_peer_remove,
	[LITE_CMD_LMR_ALLOC] = lite_nl_lmr_alloc,
	[LITE_CMD_LMR_FREE] = lite_nl_lmr_free,
	[LITE_CMD_LMR_UPDATE] = lite_nl_lmr_update,
	[LITE_CMD_UPCALL_COMPLETE] = lite_nl_upcall_complete,
	[LITE_CMD_RPC_BIND] = lite_nl_rpc_bind,
};

/*
 * GRANT_REVOKE holds the read side only for its check and its mark, not
 * for the drain after them (lite_nl_grant_revoke()): an AGENT_ATTACH queued
 * behind a long drain would otherwise hold up every checked command.
 */
void lite_nl_owner_read_lock(void)
{
	down_read(&lite_owner_rwsem);
}

void lite_nl_owner_read_unlock(void)
{
	up_read(&lite_owner_rwsem);
}

/*
 * The .doit of every command that checks its sender: the command's own
 * doit under lite_owner_rwsem. (Not the family's pre_doit and post_doit:
 * their type changed in 6.2, and this needs no version test.)
 */
static int lite_nl_owned_doit(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	int ret;

	if (cmd > LITE_CMD_MAX || !lite_nl_owned_doits[cmd])
		return -EOPNOTSUPP;
	if (lite_nl_owner_mode(cmd)) {
		down_write(&lite_owner_rwsem);
		ret = lite_nl_owned_doits[cmd](skb, info);
		up_write(&lite_owner_rwsem);
	} else {
		down_read(&lite_owner_rwsem);
		ret = lite_nl_owned_doits[cmd](skb, info);
		up_read(&lite_owner_rwsem);
	}
	return ret;
}

static const struct genl_ops lite_genl_ops[] = {
	{
		.cmd = LITE_CMD_AGENT_ATTACH,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_no_attrs,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_AGENT_DETACH,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_no_attrs,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_NODE_SET,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_node_set_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_NODE_GET,
		.doit = lite_nl_node_get,
		.policy = lite_nl_no_attrs,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_PEER_ADD,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_peer_add_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_PEER_REMOVE,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_peer_remove_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_PEER_GET,
		.dumpit = lite_nl_peer_dump,
		.policy = lite_nl_no_attrs,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_LMR_ALLOC,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_lmr_alloc_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_LMR_FREE,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_lmr_free_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_LMR_UPDATE,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_lmr_update_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_LMR_GET,
		.flags = GENL_ADMIN_PERM,
		.dumpit = lite_nl_lmr_dump,
		.policy = lite_nl_no_attrs,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_UPCALL_COMPLETE,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_upcall_complete_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_GRANT_REVOKE,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_grant_revoke,	/* takes lite_owner_rwsem itself */
		.policy = lite_nl_grant_id_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_GRANT_GET,
		.flags = GENL_ADMIN_PERM,
		.dumpit = lite_nl_grant_dump,
		.policy = lite_nl_no_attrs,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_RPC_BIND,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_owned_doit,
		.policy = lite_nl_rpc_bind_policy,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		.cmd = LITE_CMD_RPC_SERVICE_GET,
		.flags = GENL_ADMIN_PERM,
		.dumpit = lite_nl_rpc_service_dump,
		.policy = lite_nl_no_attrs,
		.maxattr = LITE_ATTR_MAX,
	},
	{
		/* Not owned: it changes nothing an agent keeps. */
		.cmd = LITE_CMD_PEER_PROBE,
		.flags = GENL_ADMIN_PERM,
		.doit = lite_nl_peer_probe,
		.policy = lite_nl_peer_probe_policy,
		.maxattr = LITE_ATTR_MAX,
	},
};

struct genl_family lite_genl_family = {
	.name = LITE_GENL_NAME,
	.version = LITE_GENL_VERSION,
	.maxattr = LITE_ATTR_MAX,
	.module = THIS_MODULE,
	/* See the top of this file and lite_owner_rwsem. */
	.parallel_ops = true,
	.ops = lite_genl_ops,
	.n_ops = ARRAY_SIZE(lite_genl_ops),
	/* Every command is new: strict validation, no legacy leniency. */
	.resv_start_op = LITE_CMD_MAX + 1,
	.mcgrps = lite_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(lite_genl_mcgrps),
};

/* Detach the agent when its socket goes away (close, exit, crash). */
static int lite_nl_notify(struct notifier_block *nb, unsigned long event,
			  void *ptr)
{
	struct netlink_notify *n = ptr;
	bool detached = false;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	spin_lock(&lite_agent_lock);
	if (lite_agent.attached && lite_agent.portid == n->portid) {
		lite_agent.attached = false;
		detached = true;
	}
	spin_unlock(&lite_agent_lock);
	if (detached)
		lite_upcalls_agent_gone(n->portid);
	if (detached)
		pr_info("agent's socket (netlink port %u) closed; agent detached\n",
			n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block lite_nl_notifier = {
	.notifier_call = lite_nl_notify,
};

int lite_netlink_init(void)
{
	int ret;

	ret = netlink_register_notifier(&lite_nl_notifier);
	if (ret)
		return ret;
	ret = genl_register_family(&lite_genl_family);
	if (ret) {
		netlink_unregister_notifier(&lite_nl_notifier);
		return ret;
	}
	mutex_lock(&lite_lock);
	lite_nl_ready = true;
	mutex_unlock(&lite_lock);
	return 0;
}

void lite_netlink_exit(void)
{
	mutex_lock(&lite_lock);
	lite_nl_ready = false;
	mutex_unlock(&lite_lock);
	/* Waits for commands in progress; dumps hold a module reference. */
	genl_unregister_family(&lite_genl_family);
	netlink_unregister_notifier(&lite_nl_notifier);
}
