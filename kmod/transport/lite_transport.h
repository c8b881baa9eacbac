/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: the transport layer's interface: RDMA devices, this node's
 * identity, peers and their RC connections, and what the transport tells
 * the layers above it (struct lite_transport_ops). The connections' own
 * API is lite_conn.h.
 */
#ifndef LITE_TRANSPORT_H
#define LITE_TRANSPORT_H

#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "core/lite_core.h"
#include "lite_wire.h"
/*
 * The one type the transport takes from a layer above it: a peer embeds
 * its QoS state (struct lite_peer_qos), which the data path reads without
 * a pointer chase. Types only: the transport calls nothing of qos.
 */
#include "qos/lite_qos_throttle.h"

struct crypto_shash;
struct lite_conn;
struct lite_grant;
struct lite_mr_ctx;
struct lite_peer;
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

/*
 * What the transport tells the layers above it, rtrs's and nvme-rdma's
 * way: the layer below calls up only through a table. The root
 * (lite_main.c) sets it before the RDMA client registers, and composes
 * each member from the layers' own functions in the order they must hear
 * of things. Every member is set.
 */
struct lite_transport_ops {
	/*
	 * key_mode=lmr: a new device's per-LMR key machinery (mem). An error
	 * makes the device unusable (its global_key_errno). Process context.
	 */
	int (*device_keys_init)(struct lite_device *ldev);
	/* The device's resources go (also after a failed keys_init). */
	void (*device_keys_exit)(struct lite_device *ldev);
	/* A usable device was added: an error is logged, the device kept. */
	int (*device_added)(struct lite_device *ldev);
	/*
	 * The device is going and its connections are gone: everything on
	 * it above the transport goes now.
	 */
	void (*device_removed)(struct lite_device *ldev);
	/*
	 * A connection's QP exists, before the peer can send: its receives
	 * (rpc). Under lite_lock; an error fails the QP.
	 */
	int (*conn_qp_ready)(struct lite_conn *conn);
	/* A connection on @ldev is torn down: wake who waits for its slots. */
	void (*conn_dying)(struct lite_device *ldev);
	/* A new peer: the per-peer state above it (qos). No lock taken. */
	void (*peer_init)(struct lite_peer *peer);
	/*
	 * Calls to the node fail from now on (its RC retries ran out, or
	 * it was removed). Under lite_lock: may take spinlocks, not sleep.
	 */
	void (*peer_down_locked)(u32 node_id);
	/* The manager's verdict: the node is gone (removed). Under lite_lock. */
	void (*peer_failed_locked)(u32 node_id);
	/* This node's identity was set to @node_id. Under lite_lock. */
	void (*node_set_locked)(u32 node_id);
};

/* transport/lite_transport.c: the table, set once before lite_device_init(). */
extern const struct lite_transport_ops *lite_transport_ops;
void lite_transport_set_ops(const struct lite_transport_ops *ops);

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

/*
 * lite_lock protects the node identity and listener pointer (lite_node.c),
 * the peer table, every peer's and every connection's state (lite_peer.c,
 * lite_conn*.c), and lite_device.dying. rdma_cm handlers take it, so it is
 * never held across anything that waits for a handler: rdma_destroy_id(),
 * cancel_*_sync() or flush_workqueue().
 */
extern struct mutex lite_lock;
/* Parameters (lite_transport.c). */
extern unsigned short lite_cm_port;
extern unsigned int lite_qps_per_peer;
/*
 * Peer connections authenticated with the pair secrets (wire version 2,
 * lite_wire.h); read-only, the same on every node.
 */
extern bool lite_peer_auth;

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
	/* The throttle on low-priority operations to it (lite_qos_throttle.c). */
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
	/* Its QoS throttle (lite_qos_throttle.c): rate 0 is none. */
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

struct netlink_callback;
/* transport/lite_node_nl.c: the node and peer commands, and peer events. */
int lite_nl_node_set(struct sk_buff *skb, struct genl_info *info);
int lite_nl_node_get(struct sk_buff *skb, struct genl_info *info);
int lite_nl_peer_add(struct sk_buff *skb, struct genl_info *info);
int lite_nl_peer_remove(struct sk_buff *skb, struct genl_info *info);
int lite_nl_peer_dump(struct sk_buff *skb, struct netlink_callback *cb);
/* Multicasts a LITE_CMD_EVENT_* for @info; @reason 0 omits the reason. */
void lite_nl_peer_event(u8 cmd, const struct lite_peer_info *info,
			int qp_index, int reason);
#endif /* LITE_TRANSPORT_H */
