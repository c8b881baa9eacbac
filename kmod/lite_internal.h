/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: state shared between the module's files.
 */
#ifndef LITE_INTERNAL_H
#define LITE_INTERNAL_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "uapi/lite.h"
#include "lite_wire.h"
#include "lite_prio.h"

struct crypto_shash;
struct lite_mr_ctx;
struct lite_ops_pool;
struct scatterlist;

/*
 * An RDMA device LITE serves: its protection domain with the global memory
 * key. Created by the ib_client's add callback and torn down by its remove
 * callback (device unplug, driver unload, or module unload). The reference
 * count only keeps the structure; pd and global_mr live until remove. Every
 * connection has its own completion queue (lite_conn.c).
 */
struct lite_device {
	struct kref ref;
	struct list_head entry;		/* in lite_devices, under lite_devices_lock */
	struct ib_device *ibdev;
	struct ib_pd *pd;		/* NULL when global_key_errno != 0 */
	/*
	 * The global memory key: a DMA MR on pd covering all memory with
	 * remote read, write and (if the device has them) atomic access.
	 * Remote nodes use global_rkey with DMA addresses of this device.
	 */
	struct ib_mr *global_mr;
	u32 global_rkey;
	bool atomics;			/* global_mr allows remote atomics */
	u32 port;
	int global_key_errno;
	/*
	 * Set under lite_lock when the device is being removed: from then on
	 * no queue pair may be created on pd (lite_peers_device_removed()).
	 */
	bool dying;
	/* The one-sided operations' contexts and buffers (lite_ops_pool.c). */
	struct lite_ops_pool *ops_pool;
	/*
	 * key_mode=lmr (lite_lmr_mr.c): the private QP that registers and
	 * invalidates every hosted LMR's memory region, and the most pages
	 * one region may have. NULL and 0 in global mode.
	 */
	struct lite_mr_ctx *mr_ctx;
	u32 max_fr_pages;
};

int lite_device_init(void);
void lite_device_exit(void);

/*
 * The lite_device for @ibdev with a reference, or NULL if LITE does not
 * serve it (unknown, being removed, or without the global key).
 */
struct lite_device *lite_device_get(struct ib_device *ibdev);
void lite_device_put(struct lite_device *ldev);

typedef int (*lite_device_fn)(struct lite_device *ldev, void *arg);

/*
 * Calls @fn for each device LITE serves, in order, under the device list
 * lock (so a device cannot be removed meanwhile); @fn may sleep. Stops at the
 * first non-zero return and returns it.
 */
int lite_visit_devices(lite_device_fn fn, void *arg);

int lite_chardev_init(void);
void lite_chardev_exit(void);

/* lite_main.c: module parameters and the shared lock and workqueue. */

/*
 * lite_lock protects the node identity and listener pointer (lite_node.c),
 * the peer table, every peer's and every connection's state (lite_peer.c,
 * lite_conn*.c), and lite_device.dying. rdma_cm handlers take it, so it is
 * never held across anything that waits for a handler: rdma_destroy_id(),
 * cancel_*_sync() or flush_workqueue().
 */
extern struct mutex lite_lock;
/* Connection setup retries and teardown; flushed on device removal. */
extern struct workqueue_struct *lite_wq;
extern unsigned short lite_cm_port;
extern unsigned int lite_qps_per_peer;
extern unsigned int lite_upcall_timeout_ms;
extern unsigned int lite_lmr_quota_mib;
/* Longest a one-sided operation waits; writable, so read with READ_ONCE(). */
extern unsigned int lite_op_timeout_ms;
/*
 * Peer connections authenticated with the pair secrets (wire version 2,
 * lite_wire.h); read-only, the same on every node.
 */
extern bool lite_peer_auth;
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

struct dentry;
/* A read-only debugfs file @name in @dir showing counter @c. */
void lite_debugfs_counter(const char *name, struct dentry *dir, atomic64_t *c);
void lite_debugfs_init(void);
void lite_debugfs_exit(void);

/* lite_node.c: this node's identity and its rdma_cm listener. */
struct lite_node_id {
	u32 id;
	u64 incarnation;
	__be32 addr;
	char name[LITE_NODE_NAME_BUF];	/* "" if the agent gave none */
};

/* True if @name is a node name (uapi lite.h), NUL-terminated in its buffer. */
bool lite_node_name_valid(const char name[LITE_NODE_NAME_BUF]);
/* Copies the identity to @out; false if it is not set. Under lite_lock. */
bool lite_node_get_locked(struct lite_node_id *out);
/*
 * The RDMA device under the node's address, with a reference: -ENXIO if
 * the identity is not set, -ENODEV if it has no listener now or the device
 * has no global key.
 */
int lite_node_device_get(struct lite_device **out);
int lite_node_set(const struct lite_node_id *nid, struct netlink_ext_ack *extack);
void lite_node_device_added(void);
void lite_node_exit(void);

/* lite_peer.c: the peer table and each peer's connection state. */
struct lite_conn;

/* A name, " (", a u32 in decimal, ")" and the NUL. */
#define LITE_PEER_LABEL_BUF (LITE_NODE_NAME_MAX + 14)

struct lite_peer {
	/*
	 * Held by the table, by each connection and by a queued connect_work.
	 * Freed after an RCU grace period: the data path finds peers in the
	 * table and their connections in conns[] under rcu_read_lock().
	 */
	struct kref ref;
	struct rcu_head rcu;
	u32 node_id;
	u64 incarnation;
	__be32 addr;
	char name[LITE_NODE_NAME_BUF];	/* "" if the agent gave none */
	/* How log lines name it: "node2 (3)", or "3" without a name. */
	char label[LITE_PEER_LABEL_BUF];
	bool initiator;			/* this node's id is the smaller one */
	/* This node itself: the loopback connections (lite_node.c). */
	bool loopback;
	/* The rest is under lite_lock. */
	bool removed;			/* no longer in the table */
	bool failure_reported;		/* PEER_FAILED sent since last connected */
	bool no_key_reported;		/* "no pair secret" said once */
	enum lite_peer_state state;
	unsigned int connected;		/* connections in conns[] that are up */
	unsigned int backoff_ms;	/* next retry delay (initiator) */
	struct delayed_work connect_work;
	/*
	 * The pair secret as a keyed hmac(sha256) transform, NULL if none
	 * was given. Set before the peer is used or swapped whole under
	 * lite_lock, never re-keyed, so no MAC sees a key change; freed with
	 * the peer.
	 */
	struct crypto_shash *mac_tfm;
	/* Acceptor (peer_auth): the challenge outstanding per QP index. */
	struct lite_cm_challenge challenges[LITE_QPS_PER_PEER_MAX];
	/* Initiator (peer_auth): the challenge each index's next request answers. */
	u64 answers[LITE_QPS_PER_PEER_MAX];
	/* The last refusal since the peer was connected (enum lite_refusal, 0: none). */
	u16 last_refusal;
	u8 refused_by;			/* enum lite_refused_by */
	u32 refusals;			/* since the peer was added */
	/*
	 * Published with rcu_assign_pointer() under lite_lock, cleared before
	 * the connection's teardown is queued; the data path reads them under
	 * RCU. Read under lite_lock with lite_slot_locked() (lite_conn.h).
	 */
	struct lite_conn __rcu *conns[LITE_QPS_PER_PEER_MAX];
	/* Loopback only: the accepting ends of conns[]. */
	struct lite_conn __rcu *accepted[LITE_QPS_PER_PEER_MAX];
	/* The throttle on low-priority operations to it (lite_prio.c). */
	struct lite_peer_qos qos;
};

/* A snapshot of one peer, for dumps and events. */
struct lite_peer_info {
	u32 node_id;
	u64 incarnation;
	__be32 addr;
	char name[LITE_NODE_NAME_BUF];
	enum lite_peer_state state;
	enum lite_peer_role role;
	u32 qps_connected;
	u16 last_refusal;		/* enum lite_refusal, 0: none */
	u8 refused_by;			/* enum lite_refused_by */
	u32 refusals;
	/* Its QoS throttle (lite_prio.c): rate 0 is none. */
	u64 qos_rate_bps;
	u64 qos_rtt_base_ns;
	u64 qos_rtt_last_ns;
	u8 qos_rule;			/* enum lite_qos_rule */
};

typedef int (*lite_peer_fn)(const struct lite_peer_info *info, void *arg);

/*
 * Adds the peer @pid with the pair secret @secret (LITE_PEER_SECRET_LEN
 * bytes, or NULL for none), or gives a known peer a new secret. Process
 * context; takes lite_lock.
 */
int lite_peer_add(const struct lite_node_id *pid, const u8 *secret,
		  struct netlink_ext_ack *extack);
int lite_peer_remove(u32 node_id, u64 incarnation, struct netlink_ext_ack *extack);
/*
 * Calls @fn for each peer whose node id is >= *@next, in node id order,
 * under lite_lock. If @fn fails, *@next is that peer's id (to resume there)
 * and its error is returned; otherwise *@next is past the last peer.
 */
int lite_peers_visit(unsigned long *next, lite_peer_fn fn, void *arg);
unsigned int lite_peers_count_locked(void);
struct lite_peer *lite_peer_find_locked(u32 node_id);
/* The peer named @name (not ""), or NULL. */
struct lite_peer *lite_peer_find_name_locked(const char *name);
/* The peer with @node_id, or this node's loopback peer; under RCU. */
struct lite_peer *lite_peer_lookup_rcu(u32 node_id);
/*
 * The loopback peer for this node's identity @self; NULL to remove it. A
 * new loopback peer takes *@key (its secret, made by lite_node.c) and sets
 * it to NULL; the caller frees what is left.
 */
int lite_loopback_set_locked(const struct lite_node_id *self,
			     struct crypto_shash **key);
/* This node's loopback peer, or NULL. Under lite_lock. */
struct lite_peer *lite_loopback_peer_locked(void);
/*
 * An hmac(sha256) transform keyed with the LITE_PEER_SECRET_LEN bytes at
 * @secret, or an ERR_PTR. Process context (it may load the algorithm).
 */
struct crypto_shash *lite_peer_key_alloc(const u8 *secret);
/* lite_cm_mac_fn over a transform of lite_peer_key_alloc(); any context. */
int lite_peer_mac(void *key, const void *data, size_t len, u8 *mac);
/*
 * A connection with @peer was refused with @reason (enum lite_refusal) by
 * @by (enum lite_refused_by): remembered for PEER_GET. Under lite_lock.
 */
void lite_peer_refused_locked(struct lite_peer *peer, u16 reason, u8 by);
/*
 * @conn's first request was answered with @challenge: @conn goes, and its
 * slot reconnects at once with the answer. Under lite_lock.
 */
void lite_peer_conn_challenged_locked(struct lite_conn *conn, u64 challenge);
void lite_peer_put(struct lite_peer *peer);
void lite_peer_conn_up_locked(struct lite_conn *conn);
void lite_peer_conn_lost_locked(struct lite_conn *conn, bool was_up, int reason,
				bool report);
void lite_peers_device_removed(struct lite_device *ldev);
void lite_peers_exit(void);

/*
 * lite_conn.c, lite_conn_accept.c: the rdma_cm handlers of a connection and
 * of the node's listener (lite_node.c). The connection is in lite_conn.h.
 */
int lite_conn_request(struct rdma_cm_id *id, struct rdma_cm_event *ev);
int lite_conn_event(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/* lite_netlink.c: the generic netlink family. */
struct genl_info;
struct genl_family;
int lite_netlink_init(void);
void lite_netlink_exit(void);
/* The attached agent's netlink port; false if none is attached. */
bool lite_nl_agent_portid(u32 *portid);
extern struct genl_family lite_genl_family;
/* While an agent is attached, only it may change the node: else -EBUSY. */
int lite_nl_check_owner(struct genl_info *info);
/* lite_owner_rwsem's read side, for a doit that holds it only in part. */
void lite_nl_owner_read_lock(void);
void lite_nl_owner_read_unlock(void);
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
/* Multicasts a LITE_CMD_EVENT_* for @info; @reason 0 omits the reason. */
void lite_nl_peer_event(u8 cmd, const struct lite_peer_info *info,
			int qp_index, int reason);
/* Multicasts LITE_CMD_EVENT_LMR_LOST for @lmr_id (@reason positive). */
void lite_nl_lmr_lost_event(u64 lmr_id, int reason);

/* Names of LMRs (uapi lite.h, lite_lmr_args.c): true if @name is one. */
bool lite_name_valid(const char *name);

/* lite_lmr.c: LMR memory this node hosts. */
struct lite_lmr;
struct lite_grant;
struct netlink_callback;

/* lite_lmr_args.c: netlink value checks with their messages (-EINVAL). */
int lite_nl_get_lmr_id(struct genl_info *info, int type, u64 *id);
int lite_nl_get_name(struct genl_info *info, char *buf);
int lite_nl_get_size(struct genl_info *info, u64 *size);

/* LMR_ALLOC's attributes, every one required and checked. */
struct lite_lmr_args {
	u64 lmr_id;
	u64 size;
	u32 uid, gid, mode;
	char name[LITE_NAME_BUF];
};

int lite_nl_lmr_alloc_args(struct genl_info *info, struct lite_lmr_args *a);

int lite_nl_lmr_alloc(struct sk_buff *skb, struct genl_info *info);
int lite_nl_lmr_free(struct sk_buff *skb, struct genl_info *info);
int lite_nl_lmr_update(struct sk_buff *skb, struct genl_info *info);
int lite_nl_lmr_dump(struct sk_buff *skb, struct netlink_callback *cb);
/* Bytes more (-ENOSPC over lmr_quota_mib) or less of the node's quota. */
int lite_lmr_quota_charge(u64 bytes);
void lite_lmr_quota_uncharge(u64 bytes);
/* The hosted LMR @lmr_id with a reference, or NULL. */
struct lite_lmr *lite_lmr_get(u64 lmr_id);
void lite_lmr_put(struct lite_lmr *lmr);
/*
 * LMR_FREE's mark, set and read under lite_grants_mutex (lite_grant.c):
 * true once the grant revoke pass of the free has run.
 */
void lite_lmr_set_unhosted(struct lite_lmr *lmr);
bool lite_lmr_unhosted(const struct lite_lmr *lmr);
/*
 * 0 if the MAP answer @g describes @lmr (size, key, every chunk's DMA
 * address and length, all mapped); else -ESTALE, with a message in @info.
 */
int lite_lmr_check_grant(struct lite_lmr *lmr, const struct lite_grant *g,
			 struct genl_info *info);
/*
 * ib_client remove: every hosted LMR on @ldev is lost (its local grants
 * revoked, LITE_CMD_EVENT_LMR_LOST sent); every chunk mapped on @ldev is
 * unmapped and every memory region on it deregistered.
 */
void lite_lmrs_device_removed(struct lite_device *ldev);
void lite_lmr_exit(void);

/*
 * lite_lmr_mr.c: per-LMR memory regions (key_mode=lmr). Process context.
 * lite_mr_device_init() makes @ldev's private QP (-EOPNOTSUPP: the device
 * cannot fast-register); lite_mr_device_exit() destroys it once no region
 * is left. lite_mr_register() registers @nents DMA-mapped entries of @sgl
 * as one region of @npages pages of @page_size bytes with @access (enum
 * ib_access_flags), valid on return.
 * lite_mr_unregister() invalidates and deregisters it; 0 once no work
 * request can reach its memory, else the pages must never be freed.
 */
int lite_mr_device_init(struct lite_device *ldev);
void lite_mr_device_exit(struct lite_device *ldev);
struct ib_mr *lite_mr_register(struct lite_device *ldev,
			       struct scatterlist *sgl, int nents,
			       unsigned int page_size, u32 npages, int access);
int lite_mr_unregister(struct lite_device *ldev, struct ib_mr *mr);

/* lite_grant.c: the node's grants (see lite_grant.h). */
struct lite_grant;
struct lite_file;

int lite_nl_grant_revoke(struct sk_buff *skb, struct genl_info *info);
int lite_nl_grant_dump(struct sk_buff *skb, struct netlink_callback *cb);
/*
 * Revokes (ESTALE) every grant into @lmr_id or into @lmr, and marks @lmr
 * unhosted in the same critical section (LMR_FREE).
 */
void lite_grants_revoke_lmr(u64 lmr_id, struct lite_lmr *lmr);
/*
 * Puts @grant (a new grant holding one reference) into the node's table and
 * behind a new handle of @lf; on success both hold a reference and *@handle
 * is set. -EEXIST: the grant id is known; -EMFILE: @lf is full; -ESTALE:
 * the grant's hosted LMR was freed (its revoke pass has run).
 */
int lite_grant_install(struct lite_file *lf, struct lite_grant *grant,
		       u64 *handle);
/* Takes the grant out of the node's table (unmap or close). */
void lite_grant_forget(struct lite_grant *grant);
/* The work item of a parked grant (lite_grant.h); set up with the grant. */
void lite_grant_unmap_work(struct work_struct *work);
bool lite_grant_id_known(u64 grant_id);
void lite_grants_exit(void);

/*
 * lite_grant_answer.c: the grant of a MAP upcall's answer, every attribute
 * checked (access no more than @asked); one reference on success.
 */
int lite_nl_grant_parse(struct genl_info *info, u32 asked,
			struct lite_grant **out);

/* lite_file.c: open files of /dev/lite and their handles. */
struct lite_file {
	struct xarray handles;		/* index -> struct lite_grant */
	struct file *file;		/* its open file (lite_file_pin()) */
	u32 tag;
	u32 next;			/* xa_alloc_cyclic's cursor */
	/* index -> struct lite_rpc_handle (lite_rpc_ctl.c) */
	struct xarray rpc_handles;
	u32 rpc_next;
	/* token index -> struct lite_rpc_cslot of an async call (lite_rpc_async.c) */
	struct xarray rpc_calls;
	u32 rpc_call_next;
	wait_queue_head_t rpc_call_wait;	/* woken as its calls end */
	/* Priorities (lite_prio.c): the default, and whether HIGH is allowed. */
	u8 prio;
	bool prio_high_ok;
	/* Locks and barriers (lite_sync_client.c): the file's id, 0 until used. */
	u64 sync_id;
	struct xarray sync_homes;	/* home node ids it used */
	struct xarray sync_held;	/* LMR ids of the locks it holds */
	/*
	 * io_uring commands issued and not completed (lite_ops_uring.c), and
	 * the opener's per-uid entry they are also counted in (set once).
	 */
	atomic_t uring_cmds;
	struct lite_user *uring_user;
};

/* A file's state, not yet tied to its struct file (lf->file). */
struct lite_file *lite_file_new(void);
int lite_file_open(struct inode *inode, struct file *file);
int lite_file_release(struct inode *inode, struct file *file);
long lite_file_ioctl(struct lite_file *lf, unsigned int cmd, void __user *uarg);
int lite_file_handle_add(struct lite_file *lf, struct lite_grant *grant,
			 u64 *handle);
/* Removes @handle from @lf and returns its grant (the handle's ref). */
struct lite_grant *lite_file_handle_remove(struct lite_file *lf, u64 handle);
/* Unmaps a handle this file just made (the caller could not be told). */
void lite_file_handle_drop(struct lite_file *lf, u64 handle);
/* LITE_IOC_UNMAP: -EBADF if @handle is not one of @lf's. */
int lite_file_unmap(struct lite_file *lf, u64 handle);
/*
 * lite_chardev.c: an open /dev/lite for kernel code (lite_kapi_mem.c): an
 * anonymous file with the device's file operations, so that its handles
 * live and end exactly like a process's. It holds lite.ko until fput().
 */
struct file *lite_kernel_file_open(void);

/*
 * lite_file.c: what one user (euid, in the initial user namespace) holds
 * across all of its files, against max_grants_per_uid and
 * max_upcalls_per_uid (docs/datapath.md, "Per-user limits").
 */
struct lite_user {
	struct hlist_node node;		/* lite_users; under lite_users_lock */
	u32 uid;
	unsigned int refs;		/* under lite_users_lock */
	unsigned int grants;		/* reserved or installed; lite_users_lock */
	unsigned int upcalls;		/* pending; under lite_upcall_lock */
	atomic_t uring_cmds;		/* io_uring commands not completed */
};

extern unsigned int lite_max_grants_per_uid;
/* @uid's entry with a reference, or NULL (no memory). Process context. */
struct lite_user *lite_user_get(u32 uid);
/* Any context. */
void lite_user_put(struct lite_user *user);
/*
 * One grant more for @user, with a reference of its own: -EDQUOT (counted
 * in user_grants_refused) at max_grants_per_uid.
 */
int lite_user_charge_grant(struct lite_user *user);
/* Gives a grant's charge and its reference back. Any context. */
void lite_user_uncharge_grant(struct lite_user *user);

/* lite_upcall.c: control calls through the agent. */
int lite_nl_upcall_complete(struct sk_buff *skb, struct genl_info *info);
/* The agent at @portid is gone: fail its pending upcalls with ENOTCONN. */
void lite_upcalls_agent_gone(u32 portid);
/* Tells the agent a grant is given back; nobody waits. */
void lite_upcall_unmap(const struct lite_grant *grant);
void lite_upcall_exit(void);

/*
 * lite_upcall_lmr.c: ALLOC, MAP (a handle of @lf) and FREE of a kernel
 * copy of their uapi struct, checked here; its answer fields and message
 * filled (the message also on failure). Process context.
 */
int lite_lmr_alloc_run(struct lite_alloc *a);
int lite_lmr_map_run(struct lite_file *lf, struct lite_map *m);
int lite_lmr_free_run(struct lite_free *f);
long lite_ioctl_alloc(struct lite_alloc __user *uarg);
long lite_ioctl_map(struct lite_file *lf, struct lite_map __user *uarg);
long lite_ioctl_free(struct lite_free __user *uarg);

#endif /* LITE_INTERNAL_H */
