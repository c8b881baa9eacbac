/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: what every layer of lite.ko may use (docs/architecture.md,
 * "lite.ko's layers"): the workqueue and the parameters no one layer owns,
 * the counters, and the netlink plumbing (the family, its events, the
 * node's agent and lite_owner_rwsem, chunk lists).
 */
#ifndef LITE_CORE_H
#define LITE_CORE_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>
#include <net/netlink.h>

#include "uapi/lite.h"

struct dentry;
struct genl_info;
struct genl_family;
struct netlink_callback;
struct sk_buff;

/* core/lite_core.c: the workqueue and the parameters no one layer owns. */
/* Connection setup retries and teardown; flushed on device removal. */
extern struct workqueue_struct *lite_wq;
/* Longest a one-sided operation waits; writable, so read with READ_ONCE(). */
extern unsigned int lite_op_timeout_ms;
/* enum lite_key_mode (uapi lite.h): how peers reach LMR memory; read-only. */
extern unsigned int lite_key_mode;
/* "global" or "lmr". */
const char *lite_key_mode_name(void);

/* lite_debugfs.c: counters under /sys/kernel/debug/lite/. */
enum lite_counter {
	LITE_CNT_PEERS,			/* gauge: peers known */
	LITE_CNT_QPS_CONNECTED,		/* gauge: RC QPs connected */
	LITE_CNT_CONNECT_ATTEMPTS,	/* QP connections this node initiated */
	LITE_CNT_ACCEPTS,		/* QP connections this node accepted */
	LITE_CNT_REJECTS_SENT,		/* connection requests this node rejected */
	LITE_CNT_REJECTS_RECEIVED,	/* this node's requests the peer rejected */
	LITE_CNT_CONNECT_ERRORS,	/* attempts that failed before connecting */
	LITE_CNT_DISCONNECTS,		/* connected QPs lost or torn down */
	LITE_CNT_REFUSED_AUTH,		/* requests refused: authentication failed */
	LITE_CNT_REFUSED_PORT,		/* requests refused: unprivileged source port */
	LITE_CNT_REFUSED_NO_KEY,	/* requests refused: no pair secret for the peer */
	LITE_CNT_CHALLENGES_ISSUED,	/* challenges sent to initiators */
	LITE_CNT_REP_AUTH_FAILED,	/* replies to this node that failed authentication */
	LITE_CNT_LOOPBACK_QPS,		/* gauge: this node's QPs to itself, both ends */
	LITE_CNT_LMRS,			/* gauge: LMRs hosted here */
	LITE_CNT_LMR_BYTES,		/* gauge: bytes of LMR memory not freed yet */
	LITE_CNT_GRANTS,		/* gauge: grants held by applications here */
	LITE_CNT_HANDLES,		/* gauge: handles in open files */
	LITE_CNT_UPCALLS_SENT,		/* upcalls sent to the agent */
	LITE_CNT_UPCALLS_COMPLETED,	/* upcalls the agent answered in time */
	LITE_CNT_UPCALLS_TIMED_OUT,	/* upcalls not answered in time */
	LITE_CNT_UPCALLS_NOTCONN,	/* upcalls failed: no agent or it went away */
	LITE_CNT_UPCALLS_INTERRUPTED,	/* upcalls given up on a fatal signal */
	LITE_CNT_LMR_ALLOCS_RUNNING,	/* gauge: LMR_ALLOCs filling memory now */
	LITE_CNT_OPS_ABANDONED,		/* gauge: contexts their callers left in flight */
	LITE_CNT_GRANT_DRAIN_WAITS,	/* revokes/unmaps that waited for operations */
	LITE_CNT_GRANT_DRAIN_TIMEOUTS,	/* ... and gave up with operations in flight */
	LITE_CNT_GRANTS_PARKED,		/* gauge: unmapped grants waiting to drain */
	LITE_CNT_MR_REGISTRATIONS,	/* key_mode=lmr: LMR memory regions registered */
	LITE_CNT_MR_INVALIDATIONS,	/* ... and invalidated (LOCAL_INV completed) */
	LITE_CNT_LMRS_QUARANTINED,	/* gauge: freed LMRs whose pages are kept */
	LITE_CNT_QUARANTINED_BYTES,	/* gauge: their bytes */
	LITE_CNT_GRANTS_KEY_REFUSED,	/* grants revoked: the home refused their key */
	LITE_CNT_QP_ERRORS,		/* QPs failed by a work request or QP event */
	LITE_CNT_USER_GRANTS_REFUSED,	/* MAPs refused: max_grants_per_uid reached */
	LITE_CNT_USER_UPCALLS_REFUSED,	/* calls refused: max_upcalls_per_uid reached */
	LITE_CNT_RPC_SERVICES,		/* gauge: RPC services served here */
	LITE_CNT_RPC_BINDINGS,		/* gauge: this node's bindings to services */
	LITE_CNT_RPC_QUARANTINED_BYTES,	/* gauge: ring bytes kept after a fence timed out */
	LITE_CNT_NR
};

extern atomic64_t lite_counters[LITE_CNT_NR];

static inline void lite_count(enum lite_counter c)
{
	atomic64_inc(&lite_counters[c]);
}

static inline void lite_uncount(enum lite_counter c)
{
	atomic64_dec(&lite_counters[c]);
}

static inline void lite_count_add(enum lite_counter c, s64 n)
{
	atomic64_add(n, &lite_counters[c]);
}

/*
 * The one-sided operations' counters (lite_ops.c), under .../lite/ops/:
 * per CPU on the data path, summed when read.
 */
enum lite_ops_stat {
	LITE_ST_READ,
	LITE_ST_WRITE,
	LITE_ST_MEMSET,
	LITE_ST_MEMCPY,
	LITE_ST_FAA,
	LITE_ST_CAS,
	LITE_ST_BYTES_READ,
	LITE_ST_BYTES_WRITTEN,
	LITE_ST_BOUNCE,
	LITE_ST_PINNED,
	LITE_ST_ERR_EBADF,
	LITE_ST_ERR_EACCES,
	LITE_ST_ERR_EINVAL,
	LITE_ST_ERR_EFAULT,
	LITE_ST_ERR_ESTALE,
	LITE_ST_ERR_EHOSTDOWN,
	LITE_ST_ERR_ETIMEDOUT,
	LITE_ST_ERR_EIO,
	LITE_ST_ERR_EINTR,
	LITE_ST_ERR_OTHER,
	LITE_ST_SPIN_HITS,
	LITE_ST_SPIN_MISSES,
	LITE_ST_BATCHES,
	LITE_ST_URING_CMDS,
	LITE_ST_OPS_HIGH,		/* with qos on: operations started at HIGH */
	LITE_ST_OPS_LOW,		/* ... at LOW (each admitted once) */
	LITE_ST_QOS_THROTTLED,		/* times a LOW one was told to wait */
	LITE_ST_QOS_WAIT_US,		/* ... and the time it waited */
	LITE_ST_NR
};

struct lite_ops_stats {
	u64 v[LITE_ST_NR];
};

DECLARE_PER_CPU(struct lite_ops_stats, lite_ops_stats);

static inline void lite_ops_stat_add(enum lite_ops_stat s, u64 n)
{
	this_cpu_add(lite_ops_stats.v[s], n);
}

/* lite_ops.c: an operation of kind @s counted, and its error's kind. */
void lite_ops_account(enum lite_ops_stat s, long ret);

/* A read-only debugfs file @name in @dir showing counter @c. */
void lite_debugfs_counter(const char *name, struct dentry *dir, atomic64_t *c);
/* RPC's counters (rpc/), under .../lite/rpc/. */
enum lite_rpc_stat {
	LITE_RPC_ST_CALLS,		/* calls sent */
	LITE_RPC_ST_MSGS,		/* messages sent */
	LITE_RPC_ST_REQUESTS_IN,	/* requests and messages arrived */
	LITE_RPC_ST_REPLIES_SENT,	/* replies sent */
	LITE_RPC_ST_REPLIES_IN,		/* replies delivered to their calls */
	LITE_RPC_ST_LATE_REPLIES,	/* replies after their caller left */
	LITE_RPC_ST_REFUSED,		/* calls answered ECONNREFUSED */
	LITE_RPC_ST_DROPPED,		/* arrivals nobody expected: dropped */
	LITE_RPC_ST_TIMEOUTS,		/* calls that timed out */
	LITE_RPC_ST_HOSTDOWN,		/* calls failed with EHOSTDOWN */
	LITE_RPC_ST_NO_CREDIT,		/* calls and sends that waited for a credit */
	LITE_RPC_ST_SEND_ERRORS,	/* sends that failed */
	LITE_RPC_ST_NR
};

/* In lite_debugfs.c, beside the node's other counters. */
extern atomic64_t lite_rpc_stats[LITE_RPC_ST_NR];

static inline void lite_rpc_stat(enum lite_rpc_stat s)
{
	atomic64_inc(&lite_rpc_stats[s]);
}

struct dentry *lite_debugfs_init(void);
void lite_debugfs_exit(void);

/* core/lite_nl.c: the family, its events, the agent and the owner lock. */
extern struct genl_family lite_genl_family;

enum lite_mcgrp {
	LITE_MCGRP_EVENTS_IDX,
};

/* Puts an event's attributes; non-zero drops the event. */
typedef int (*lite_nl_fill_fn)(struct sk_buff *msg, const void *arg);
/*
 * Multicasts the event @cmd that @fill fills to the events group, if the
 * family is registered and anyone listens; may sleep.
 */
void lite_nl_event(u8 cmd, lite_nl_fill_fn fill, const void *arg);
void lite_nl_events_enable(bool on);
/* AGENT_ATTACH: -EBUSY if another socket is attached. */
int lite_nl_agent_attach(u32 portid);
/* AGENT_DETACH: -ENOTCONN if none is attached, -EBUSY if another is. */
int lite_nl_agent_detach(u32 portid);
/* @portid's socket went away: true if it was the agent (now detached). */
bool lite_nl_agent_released(u32 portid);
/* The attached agent's netlink port; false if none is attached. */
bool lite_nl_agent_portid(u32 *portid);
/* While an agent is attached, only it may change the node: else -EBUSY. */
int lite_nl_check_owner(struct genl_info *info);
/*
 * lite_owner_rwsem, for writing (AGENT_ATTACH, AGENT_DETACH) or reading
 * (the owned commands; GRANT_REVOKE holds it only for its check and mark,
 * not the drain after them, so an AGENT_ATTACH queued behind a long drain
 * holds up no checked command).
 */
void lite_nl_owner_lock(bool write);
void lite_nl_owner_unlock(bool write);
/* The sender is the attached agent: else -EBUSY. */
int lite_nl_check_agent(struct genl_info *info);

/* Chunk @i of @obj: its RDMA address and length. */
typedef void (*lite_chunk_fn)(const void *obj, u32 i, u64 *addr, u64 *len);
/*
 * Puts LITE_ATTR_CHUNKS holding chunks *@next.. of @obj's @nr, as many as
 * fit in @skb, and advances *@next past them; -EMSGSIZE if not one fits.
 */
int lite_nl_put_chunks(struct sk_buff *skb, const void *obj, u32 nr,
		       u32 *next, lite_chunk_fn fn);
/*
 * What one chunk takes in a message: a LITE_ATTR_CHUNK nest of two u64
 * attributes, each with the pad attribute where the architecture needs one
 * (no CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS): 28 bytes on x86-64, 36 there.
 */
#define LITE_NL_CHUNK_SIZE \
	nla_total_size(2 * nla_total_size_64bit(sizeof(u64)))
/* Bytes a message needs for @nr chunks (and their nest) besides the rest. */
#define LITE_NL_CHUNK_BYTES(nr) \
	(nla_total_size(0) + (size_t)(nr) * LITE_NL_CHUNK_SIZE)
/* Chunks one LITE_ATTR_CHUNKS nest holds: nla_len is 16 bits. */
#define LITE_NL_CHUNKS_FIT ((U16_MAX - NLA_HDRLEN) / LITE_NL_CHUNK_SIZE)

/* A required attribute; @what is a string literal naming it. */
#define lite_nl_require(info, type, what) ({				\
	struct genl_info *__info = (info);				\
	int __type = (type);						\
	bool __present = !!__info->attrs[__type];			\
	if (!__present) {						\
		NL_SET_ERR_ATTR_MISS(__info->extack, NULL, __type);	\
		NL_SET_ERR_MSG(__info->extack, "missing " what);	\
	}								\
	__present;							\
})
#endif /* LITE_CORE_H */
