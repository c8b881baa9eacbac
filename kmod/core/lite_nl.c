// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the netlink plumbing every layer shares: the generic netlink
 * family object (its commands are ctl/lite_netlink.c's table), its events
 * group, which socket is the node's agent and the lock that orders
 * commands against its attaching, chunk lists, and sending an event.
 *
 * The attached agent is remembered by its netlink port: that is where
 * upcalls go, and ctl's netlink notifier detaches it when that socket is
 * released, so a crashed agent never leaves a stale owner behind.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "lite_core.h"

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

static const struct genl_multicast_group lite_genl_mcgrps[] = {
	[LITE_MCGRP_EVENTS_IDX] = {
		.name = LITE_GENL_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

struct genl_family lite_genl_family = {
	.name = LITE_GENL_NAME,
	.version = LITE_GENL_VERSION,
	.maxattr = LITE_ATTR_MAX,
	.module = THIS_MODULE,
	/* See ctl/lite_netlink.c and lite_owner_rwsem. */
	.parallel_ops = true,
	/* .ops and .n_ops: ctl/lite_netlink.c's table, set before registering. */
	/* Every command is new: strict validation, no legacy leniency. */
	.resv_start_op = LITE_CMD_MAX + 1,
	.mcgrps = lite_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(lite_genl_mcgrps),
};

/*
 * Events may be sent: the family is registered. Events are sent under
 * lite_nl_events_lock, so none is sent once lite_nl_events_enable(false)
 * has returned; it nests inside lite_lock (peer events are sent under it).
 */
static bool lite_nl_events_on;
static DEFINE_MUTEX(lite_nl_events_lock);

void lite_nl_events_enable(bool on)
{
	mutex_lock(&lite_nl_events_lock);
	lite_nl_events_on = on;
	mutex_unlock(&lite_nl_events_lock);
}

void lite_nl_event(u8 cmd, lite_nl_fill_fn fill, const void *arg)
{
	struct sk_buff *msg;
	void *hdr;

	mutex_lock(&lite_nl_events_lock);
	if (!lite_nl_events_on ||
	    !genl_has_listeners(&lite_genl_family, &init_net,
				LITE_MCGRP_EVENTS_IDX))
		goto out;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put(msg, 0, 0, &lite_genl_family, 0, cmd);
	if (!hdr || fill(msg, arg)) {
		nlmsg_free(msg);
		goto out;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&lite_genl_family, msg, 0, LITE_MCGRP_EVENTS_IDX,
			  GFP_KERNEL);
out:
	mutex_unlock(&lite_nl_events_lock);
}

int lite_nl_agent_attach(u32 portid)
{
	int ret = 0;

	spin_lock(&lite_agent_lock);
	if (lite_agent.attached && lite_agent.portid != portid) {
		ret = -EBUSY;
	} else {
		lite_agent.attached = true;
		lite_agent.portid = portid;
	}
	spin_unlock(&lite_agent_lock);
	return ret;
}

int lite_nl_agent_detach(u32 portid)
{
	int ret = 0;

	spin_lock(&lite_agent_lock);
	if (!lite_agent.attached)
		ret = -ENOTCONN;
	else if (lite_agent.portid != portid)
		ret = -EBUSY;
	else
		lite_agent.attached = false;
	spin_unlock(&lite_agent_lock);
	return ret;
}

bool lite_nl_agent_released(u32 portid)
{
	bool detached = false;

	spin_lock(&lite_agent_lock);
	if (lite_agent.attached && lite_agent.portid == portid) {
		lite_agent.attached = false;
		detached = true;
	}
	spin_unlock(&lite_agent_lock);
	return detached;
}

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

void lite_nl_owner_lock(bool write)
{
	if (write)
		down_write(&lite_owner_rwsem);
	else
		down_read(&lite_owner_rwsem);
}

void lite_nl_owner_unlock(bool write)
{
	if (write)
		up_write(&lite_owner_rwsem);
	else
		up_read(&lite_owner_rwsem);
}
