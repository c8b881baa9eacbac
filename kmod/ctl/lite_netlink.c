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
 * The attached agent is remembered by its netlink port (core/lite_nl.c):
 * the netlink notifier here detaches it when that socket is released, so
 * a crashed agent never leaves a stale owner behind.
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
 * effect: lite_owner_rwsem (core/lite_nl.c) keeps that.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/notifier.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "lite_ctl.h"
#include "transport/lite_peer_probe.h"
#include "rpc/lite_rpc.h"

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

static int lite_nl_attach(struct sk_buff *skb, struct genl_info *info)
{
	int ret = lite_nl_agent_attach(info->snd_portid);

	if (ret) {
		GENL_SET_ERR_MSG(info, "another agent is attached");
		return ret;
	}
	pr_info("agent attached (netlink port %u)\n", info->snd_portid);
	return 0;
}

static int lite_nl_detach(struct sk_buff *skb, struct genl_info *info)
{
	int ret = lite_nl_agent_detach(info->snd_portid);

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

/*
 * How a command is let in. ADMIN: CAP_NET_ADMIN (GENL_ADMIN_PERM).
 * OWNED: its doit runs under lite_owner_rwsem, for reading, from the
 * check of its sender (the doit's own lite_nl_check_owner() or
 * lite_nl_check_agent()) to its last effect; OWNER_WRITE: for writing
 * (AGENT_ATTACH and AGENT_DETACH, which change who the owner is).
 */
enum {
	LITE_NL_ADMIN = BIT(0),
	LITE_NL_OWNED = BIT(1),
	LITE_NL_OWNER_WRITE = BIT(2),
};

struct lite_nl_cmd {
	int (*doit)(struct sk_buff *skb, struct genl_info *info);
	int (*dumpit)(struct sk_buff *skb, struct netlink_callback *cb);
	const struct nla_policy *policy;
	u8 flags;
};

#define LITE_NL_DOIT(c, fn, pol, fl) \
	[c] = { .doit = (fn), .policy = (pol), .flags = (fl) }
#define LITE_NL_DUMPIT(c, fn, fl) \
	[c] = { .dumpit = (fn), .policy = lite_nl_no_attrs, .flags = (fl) }

/*
 * Every command, once: the genl ops and the owner lock's dispatch are
 * made from this table. Adding a command is a uapi number, a policy, a
 * handler in its layer and a line here.
 */
static const struct lite_nl_cmd lite_nl_cmds[LITE_CMD_MAX + 1] = {
	LITE_NL_DOIT(LITE_CMD_AGENT_ATTACH, lite_nl_attach, lite_nl_no_attrs,
		     LITE_NL_ADMIN | LITE_NL_OWNED | LITE_NL_OWNER_WRITE),
	LITE_NL_DOIT(LITE_CMD_AGENT_DETACH, lite_nl_detach, lite_nl_no_attrs,
		     LITE_NL_ADMIN | LITE_NL_OWNED | LITE_NL_OWNER_WRITE),
	/* transport/lite_node_nl.c */
	LITE_NL_DOIT(LITE_CMD_NODE_SET, lite_nl_node_set, lite_nl_node_set_policy,
		     LITE_NL_ADMIN | LITE_NL_OWNED),
	LITE_NL_DOIT(LITE_CMD_NODE_GET, lite_nl_node_get, lite_nl_no_attrs, 0),
	LITE_NL_DOIT(LITE_CMD_PEER_ADD, lite_nl_peer_add, lite_nl_peer_add_policy,
		     LITE_NL_ADMIN | LITE_NL_OWNED),
	LITE_NL_DOIT(LITE_CMD_PEER_REMOVE, lite_nl_peer_remove,
		     lite_nl_peer_remove_policy, LITE_NL_ADMIN | LITE_NL_OWNED),
	LITE_NL_DUMPIT(LITE_CMD_PEER_GET, lite_nl_peer_dump, 0),
	/* Not owned: it changes nothing an agent keeps (transport). */
	LITE_NL_DOIT(LITE_CMD_PEER_PROBE, lite_nl_peer_probe,
		     lite_nl_peer_probe_policy, LITE_NL_ADMIN),
	/* mem/lite_lmr.c, mem/lite_grant.c */
	LITE_NL_DOIT(LITE_CMD_LMR_ALLOC, lite_nl_lmr_alloc, lite_nl_lmr_alloc_policy,
		     LITE_NL_ADMIN | LITE_NL_OWNED),
	LITE_NL_DOIT(LITE_CMD_LMR_FREE, lite_nl_lmr_free, lite_nl_lmr_free_policy,
		     LITE_NL_ADMIN | LITE_NL_OWNED),
	LITE_NL_DOIT(LITE_CMD_LMR_UPDATE, lite_nl_lmr_update,
		     lite_nl_lmr_update_policy, LITE_NL_ADMIN | LITE_NL_OWNED),
	LITE_NL_DUMPIT(LITE_CMD_LMR_GET, lite_nl_lmr_dump, LITE_NL_ADMIN),
	/* Takes lite_owner_rwsem itself, for its check and mark only. */
	LITE_NL_DOIT(LITE_CMD_GRANT_REVOKE, lite_nl_grant_revoke,
		     lite_nl_grant_id_policy, LITE_NL_ADMIN),
	LITE_NL_DUMPIT(LITE_CMD_GRANT_GET, lite_nl_grant_dump, LITE_NL_ADMIN),
	/* upcall/lite_upcall.c: only the attached agent answers. */
	LITE_NL_DOIT(LITE_CMD_UPCALL_COMPLETE, lite_nl_upcall_complete,
		     lite_nl_upcall_complete_policy, LITE_NL_ADMIN | LITE_NL_OWNED),
	/*
	 * rpc/lite_rpc_ctl.c. Owned, but its doit checks no sender: any
	 * CAP_NET_ADMIN socket may bind while an agent is attached.
	 */
	LITE_NL_DOIT(LITE_CMD_RPC_BIND, lite_nl_rpc_bind, lite_nl_rpc_bind_policy,
		     LITE_NL_ADMIN | LITE_NL_OWNED),
	LITE_NL_DUMPIT(LITE_CMD_RPC_SERVICE_GET, lite_nl_rpc_service_dump,
		       LITE_NL_ADMIN),
};

/*
 * The .doit of every OWNED command: its own doit under lite_owner_rwsem.
 * (Not the family's pre_doit and post_doit: their type changed in 6.2,
 * and this needs no version test.)
 */
static int lite_nl_owned_doit(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	const struct lite_nl_cmd *c;
	bool write;
	int ret;

	if (cmd > LITE_CMD_MAX)
		return -EOPNOTSUPP;
	c = &lite_nl_cmds[cmd];
	if (!(c->flags & LITE_NL_OWNED) || !c->doit)
		return -EOPNOTSUPP;
	write = c->flags & LITE_NL_OWNER_WRITE;
	lite_nl_owner_lock(write);
	ret = c->doit(skb, info);
	lite_nl_owner_unlock(write);
	return ret;
}

/* Made from lite_nl_cmds[] at init; genl keeps pointing at it while registered. */
static struct genl_ops lite_genl_ops[LITE_CMD_MAX + 1];

static unsigned int lite_nl_make_ops(void)
{
	unsigned int cmd, n = 0;

	for (cmd = 0; cmd <= LITE_CMD_MAX; cmd++) {
		const struct lite_nl_cmd *c = &lite_nl_cmds[cmd];
		struct genl_ops *op;

		if (!c->doit && !c->dumpit)
			continue;
		op = &lite_genl_ops[n++];
		op->cmd = cmd;
		op->flags = c->flags & LITE_NL_ADMIN ? GENL_ADMIN_PERM : 0;
		op->doit = c->flags & LITE_NL_OWNED ? lite_nl_owned_doit : c->doit;
		op->dumpit = c->dumpit;
		op->policy = c->policy;
		op->maxattr = LITE_ATTR_MAX;
	}
	return n;
}

/* Detach the agent when its socket goes away (close, exit, crash). */
static int lite_nl_notify(struct notifier_block *nb, unsigned long event,
			  void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	if (!lite_nl_agent_released(n->portid))
		return NOTIFY_DONE;
	lite_upcalls_agent_gone(n->portid);
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
	lite_genl_family.ops = lite_genl_ops;
	lite_genl_family.n_ops = lite_nl_make_ops();
	ret = genl_register_family(&lite_genl_family);
	if (ret) {
		netlink_unregister_notifier(&lite_nl_notifier);
		return ret;
	}
	lite_nl_events_enable(true);
	return 0;
}

void lite_netlink_exit(void)
{
	lite_nl_events_enable(false);
	/* Waits for commands in progress; dumps hold a module reference. */
	genl_unregister_family(&lite_genl_family);
	netlink_unregister_notifier(&lite_nl_notifier);
}
