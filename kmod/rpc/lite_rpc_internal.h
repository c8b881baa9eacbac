/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE RPC: what the RPC files share and nobody else sees. lite_rpc.h is
 * what the rest of lite.ko calls; the uapi RPC header the application's
 * side; lite_rpc_imm.h the wire; docs/rpc.md the story.
 *
 *   lite_rpc_mem.c      memory peers write into: rings and reply slots
 *   lite_rpc_wire.c     receives on every connection, sends, dispatch
 *   lite_rpc_service.c  services this node serves, their rings, the fence
 *   lite_rpc_binding.c  bindings to services (this node a client)
 *   lite_rpc_ops.c      CALL, SEND, RECV, REPLY and mmap
 *   lite_rpc_ctl.c      REGISTER, OPEN, CLOSE, handles, netlink
 *   lite_rpc_upcall.c   the RPC upcalls through the agent
 *
 * Locks: a service's lock and a binding's lock are spinlocks taken in
 * softirq context (receive completions) and with _bh elsewhere; neither is
 * held across a post, an allocation or a wait. lite_rpc_mutex orders
 * registration, bind and close (process context only).
 */
#ifndef LITE_RPC_INTERNAL_H
#define LITE_RPC_INTERNAL_H

#include <linux/completion.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "lite_rpc.h"

extern struct mutex lite_rpc_mutex;

/* ---- Memory peers write into (lite_rpc_mem.c) ---- */

/*
 * Physically contiguous, zeroed, DMA-mapped on @ldev, and reachable by
 * peers at @addr with @rkey: the global key and the DMA address, or
 * (key_mode=lmr) a region of its own.
 */
struct lite_rpc_mem {
	void *vaddr;
	size_t bytes;			/* page aligned */
	struct lite_device *ldev;	/* with a reference */
	u64 dma;
	struct ib_mr *mr;		/* key_mode=lmr */
	u64 addr;
	u32 rkey;
	u32 lkey;
	u32 uid;			/* charged to (rpc_mib_per_uid) */
	bool leak;			/* its region could not be ended */
};

/*
 * -EDQUOT over @uid's rpc_mib_per_uid, -ENOSPC over rpc_quota_mib,
 * -ENOMEM, MR errors. The pages are charged to the active memory cgroup.
 */
int lite_rpc_mem_alloc(struct lite_device *ldev, size_t bytes, u32 uid,
		       struct lite_rpc_mem *mem);
/*
 * Invalidates its region, unmaps and frees it. @reachable: a peer may
 * still write into it (a fence timed out); then, and if the region cannot
 * be invalidated, the pages are kept (rpc_quarantined_bytes) until unload
 * unless a region of its own stopped the peer. Process context.
 */
void lite_rpc_mem_free(struct lite_rpc_mem *mem, bool reachable);
/* Device removal: the region and DMA mapping go now, the pages later. */
void lite_rpc_mem_unmap(struct lite_rpc_mem *mem);
/* The pages no peer may reach but that could not be freed (unload). */
void lite_rpc_mem_exit(void);

/* ---- Limits (lite_rpc_limits.c) ---- */

/* The owner of lite.ko's own services and bindings: charged to nobody. */
#define LITE_RPC_UID_NONE	U32_MAX
/* Ports 1..LITE_RPC_KERNEL_PORTS are for lite.ko's own ("lite.") services. */
#define LITE_RPC_KERNEL_PORTS	64

enum lite_rpc_charge {
	LITE_RPC_CHARGE_SERVICE,	/* rpc_services_per_uid */
	LITE_RPC_CHARGE_BINDING,	/* rpc_bindings_per_uid */
	LITE_RPC_CHARGE_BYTES,		/* rpc_mib_per_uid */
};

/* -EDQUOT over the uid's limit, -ENOMEM. Process context. */
int lite_rpc_user_charge(u32 uid, enum lite_rpc_charge what, u64 n);
void lite_rpc_user_uncharge(u32 uid, enum lite_rpc_charge what, u64 n);
/* rpc_quota_mib, the node's: -ENOSPC beyond it. */
int lite_rpc_quota_charge(u64 bytes);
void lite_rpc_quota_uncharge(u64 bytes);

/* ---- Sends (lite_rpc_wire.c) ---- */

/*
 * One WRITE_WITH_IMM of @len bytes at @dma (lkey @mem's) to @raddr/@rkey
 * of @node (incarnation @inc), or with @len 0 a SEND_WITH_IMM of nothing,
 * on QP @pref of the peer if it is up, else any up. @cqe's handler must
 * call lite_rpc_send_end() first. -EHOSTDOWN: no connection up (or another
 * incarnation); -EAGAIN: its send queue is full. Any context.
 */
int lite_rpc_post(u32 node, u64 inc, unsigned int pref, struct ib_cqe *cqe,
		  const struct lite_rpc_mem *mem, u64 dma, u32 len, u64 raddr,
		  u32 rkey, u32 imm);
/* Gives the send queue entry and the connection back; 0 or an errno. */
int lite_rpc_send_end(struct ib_cq *cq, struct ib_wc *wc);
/* A control immediate with no bytes and no completion of interest. */
int lite_rpc_post_ctrl(u32 node, u64 inc, unsigned int pref, u32 imm);

static inline u32 lite_rpc_imm(u8 kind, u32 port, u8 code, u32 slot)
{
	struct lite_rpc_imm m = {
		.kind = kind, .port = port, .code = code, .slot = slot,
	};

	return lite_rpc_imm_encode(&m);
}

/* ---- Services (lite_rpc_service.c) ---- */

enum lite_rpc_rslot_state {
	LITE_RSLOT_EMPTY,		/* the client's: it may write into it */
	LITE_RSLOT_QUEUED,		/* a request arrived, not taken */
	LITE_RSLOT_TAKEN,		/* a server thread has it */
	LITE_RSLOT_ANSWERING,		/* its answer is being staged */
	LITE_RSLOT_REPLYING,		/* its reply or credit is posted */
};

/* One request slot of a ring. */
struct lite_rpc_rslot {
	struct list_head queue;		/* on the service's queue while QUEUED */
	struct ib_cqe cqe;		/* its reply's or credit's send */
	struct lite_rpc_ring *ring;
	u8 state;			/* enum lite_rpc_rslot_state */
	bool oneway;
	u16 index;
	u32 len;
	u32 gen;			/* in the request id: a reused slot differs */
};

/* The ring of one client node at a service. */
struct lite_rpc_ring {
	struct lite_rpc_service *svc;
	u32 index;
	/* Under the service's lock; 0: free for a client node. */
	u32 node_id;
	u64 incarnation;
	u64 reply_addr;
	u32 reply_key;
	u32 reply_slot_bytes;
	bool gone_sent;			/* GONE posted; waiting for RELEASED */
	bool released;			/* RELEASED came, or the client went */
	bool keep;			/* the fence timed out: pages kept */
	struct ib_cqe gone_cqe;
	struct lite_rpc_mem mem;
	struct lite_rpc_rslot *slots;	/* depth, from its first bind on */
};

struct lite_rpc_service {
	struct kref ref;
	struct rcu_head rcu;
	struct lite_rpc_service_args args;
	u64 service_id;			/* 0 until published */
	u32 port;
	u32 slot_bytes;
	u64 ring_bytes;
	struct lite_device *ldev;	/* with a reference */
	u32 owner;			/* charged to: args.uid or UID_NONE */
	struct mem_cgroup *memcg;	/* its registrar's: its rings' pages */

	spinlock_t lock;		/* the rest, and the rings' slots */
	struct list_head queue;		/* QUEUED slots, oldest first */
	wait_queue_head_t recv_wait;	/* RECV waiters */
	wait_queue_head_t fence_wait;	/* replies in flight, RELEASED */
	struct xarray by_node;		/* client node id -> ring (RCU reads) */
	u32 clients;
	u32 queued;
	u64 served;
	bool published;
	bool closing;
	bool finished;			/* its fence is over (service_end.c) */
	atomic_t replies_inflight;
	struct delayed_work fence_work;
	struct work_struct free_work;
	unsigned long fence_deadline;
	u32 nr_rings;
	struct lite_rpc_ring rings[];
};

/* What the control path reports of a service (dump). */
struct lite_rpc_service_info {
	u64 service_id;
	char name[LITE_NAME_BUF];
	u32 uid, gid, pid, mode;
	u32 port;
	u32 max_request, max_reply, depth, max_clients;
	u32 slot_bytes;
	u64 ring_bytes;
	u32 clients;			/* rings bound */
	u64 queued, served;
	bool published;
	bool closing;
};

/* LITE_CMD_RPC_BIND's question and answer. */
struct lite_rpc_bind_req {
	u32 port;
	u64 service_id;
	u32 node_id;			/* the client's */
	u64 incarnation;
	u64 reply_addr;
	u32 reply_key;
	u32 reply_slot_bytes;
};

struct lite_rpc_bind_ans {
	u64 ring_addr;
	u32 ring_key;
	u32 depth;
	u32 slot_bytes;
};

/*
 * A new service with a free port and max_clients ring headers (each ring's
 * slots and pages come with its client's bind, charged to the registrar),
 * charged to the registrar's rpc_services_per_uid (-EDQUOT); peers reach
 * it once published. One reference, the creator's.
 */
int lite_rpc_service_create(const struct lite_rpc_service_args *args,
			    struct lite_rpc_service **out);
void lite_rpc_service_publish(struct lite_rpc_service *svc, u64 service_id);
/*
 * Unregisters (idempotent): refuses what is queued, taken or being
 * answered, wakes RECV waiters with ECONNREFUSED, waits (bounded) for its
 * replies posted, sends GONE and starts the fence (which holds its own
 * reference).
 */
void lite_rpc_service_close(struct lite_rpc_service *svc);
void lite_rpc_service_get(struct lite_rpc_service *svc);
void lite_rpc_service_put(struct lite_rpc_service *svc);
void lite_rpc_service_info(struct lite_rpc_service *svc,
			   struct lite_rpc_service_info *info);
/* LITE_CMD_RPC_BIND: a ring for the client (ENOENT, ESTALE, EUSERS, ...). */
int lite_rpc_service_bind(const struct lite_rpc_bind_req *req,
			  struct lite_rpc_bind_ans *ans);
typedef int (*lite_rpc_service_fn)(const struct lite_rpc_service_info *info,
				   void *arg);
/* @fn for each published service from port *@next on; like lite_peers_visit(). */
int lite_rpc_services_visit(unsigned long *next, lite_rpc_service_fn fn,
			    void *arg);
/* Every service on @ldev ends now, its rings freed (device removal). */
void lite_rpc_services_device_removed(struct lite_device *ldev);
/* Unload: every fence ends, no QP being left. */
void lite_rpc_services_exit(void);

/* A request's id for RECV and REPLY: never 0, different for each use. */
static inline u64 lite_rpc_req_id(const struct lite_rpc_rslot *s)
{
	return ((u64)s->gen << 32) | ((u64)s->ring->index << 12) | s->index;
}

/* lite_rpc_service.c for lite_rpc_service_end.c. */
/* REPLY REFUSED to @node's call in @slot of its ring at @port: ECONNREFUSED. */
void lite_rpc_refuse(u32 node, u32 port, u32 slot);
/*
 * The service's port is free again (its fence is over), or with
 * @quarantine reserved until unload (a client may still send to it).
 */
void lite_rpc_port_release(struct lite_rpc_service *svc, bool quarantine);
/* Unload, every service ended: the reserved ports go. */
void lite_rpc_ports_exit(void);
/* The first service at port *@port or after it, referenced; *@port is its. */
struct lite_rpc_service *lite_rpc_service_find_any(unsigned long *port);
/* The fence of a closing service (lite_rpc_service_end.c). */
void lite_rpc_fence_work(struct work_struct *work);

/* A CALL or MSG arrived in slot @slot of @node's ring at @port. Softirq. */
void lite_rpc_service_arrival(u32 node, u32 port, bool oneway, u32 slot,
			      u32 len);
/* RELEASED from @node for its ring at @port. Softirq. */
void lite_rpc_service_released(u32 node, u32 port);
/* Peer @node is down: its rings are dropped. Under lite_lock. */
void lite_rpc_services_peer_down(u32 node);
/* RECV's take and REPLY's answer (lite_rpc_ops.c). */
int lite_rpc_service_take(struct lite_rpc_service *svc,
			  struct lite_rpc_request *out, u32 max);
/*
 * REPLY: @data a user pointer, or with LITE_RPC_REPLY_IN_PLACE an offset in
 * the mapping; @kdata, if not NULL, a kernel buffer instead (lite_kernel.h).
 */
int lite_rpc_service_answer(struct lite_rpc_service *svc, u64 id,
			    const void __user *data, const void *kdata,
			    u32 len, u32 flags, unsigned long deadline);

/* ---- Bindings (lite_rpc_binding.c) ---- */

enum lite_rpc_cslot_state {
	LITE_CSLOT_FREE,		/* a credit */
	LITE_CSLOT_CALL,		/* a call waits for its reply */
	LITE_CSLOT_ABANDONED,		/* its caller left: the reply is dropped */
	LITE_CSLOT_MSG,			/* a message waits for its credit */
	LITE_CSLOT_DONE,		/* the reply came; its caller copies it */
};

/* One reply slot (and the request's staging) of a binding. */
struct lite_rpc_cslot {
	struct ib_cqe cqe;		/* the request's send */
	struct completion done;		/* the reply (or the failure) */
	struct lite_rpc_binding *b;
	u16 index;
	u8 state;			/* enum lite_rpc_cslot_state */
	u8 holds;			/* who still holds it (lite_rpc_binding.c) */
	int err;			/* the call's result, with DONE */
	u32 len;
	/* LITE_RPC_ASYNC: woken with done; its reply's buffer and deadline. */
	wait_queue_head_t *async_wait;
	u64 async_reply;		/* user pointer */
	u32 async_reply_max;
	unsigned long async_deadline;
};

struct lite_rpc_binding {
	struct kref ref;
	struct rcu_head rcu;
	u64 service_id;
	u32 node_id;			/* the server's */
	u64 incarnation;
	u32 port;
	u32 max_request, max_reply, depth, slot_bytes;
	u64 ring_addr;
	u32 ring_key;
	u32 owner;			/* its maker's uid, or UID_NONE */
	bool live;			/* installed (in lite_rpc_bindings) */
	bool kernel;			/* opened by lite.ko's kernel API */
	/* Killed while its server was still the same peer: pages kept. */
	bool local_verdict;
	struct lite_rpc_mem mem;	/* depth reply slots */
	struct work_struct released_work;	/* GONE's answer */
	struct work_struct free_work;		/* the last reference */
	unsigned long *free_map;		/* free slots (credits) */

	spinlock_t lock;		/* the slots' states, the credits, dead */
	wait_queue_head_t credit_wait;
	/* 0 while usable, else what every call gets: ECONNREFUSED, EHOSTDOWN. */
	int dead;
	u32 free_slots;
	/* Requests posted (under lock, alive), their sends not completed. */
	atomic_t posts_inflight;
	struct lite_rpc_cslot slots[];
};

/* What RPC_OPEN's answer says of the service. */
struct lite_rpc_open_ans {
	u64 service_id;
	u32 node_id;			/* the server's */
	u32 port;
	u32 max_request, max_reply, depth;
};

/* This node's live binding to @service_id at (@node, @port), referenced. */
struct lite_rpc_binding *lite_rpc_binding_find(u64 service_id, u32 node,
					       u32 port);
/*
 * A new binding for @ans, not installed: its reply slots allocated and
 * reachable. -EHOSTDOWN if the server node is not a peer (nor this node).
 */
int lite_rpc_binding_create(const struct lite_rpc_open_ans *ans, bool kernel,
			    struct lite_rpc_binding **out);
/* Drops a binding never installed. */
void lite_rpc_binding_discard(struct lite_rpc_binding *b);
/*
 * Makes @b live with the server's @ring (-ESTALE if it does not fit). 1 if
 * another open installed one first: *@out is that one, referenced, and @b
 * is the caller's to discard; 0 and *@out = @b otherwise.
 */
int lite_rpc_binding_install(struct lite_rpc_binding *b,
			     const struct lite_rpc_bind_ans *ring,
			     struct lite_rpc_binding **out);
void lite_rpc_binding_get(struct lite_rpc_binding *b);
void lite_rpc_binding_put(struct lite_rpc_binding *b);
void lite_rpc_binding_limits(const struct lite_rpc_binding *b,
			     u32 *max_request, u32 *max_reply, u32 *depth);
void lite_rpc_bindings_device_removed(struct lite_device *ldev);
void lite_rpc_bindings_exit(void);

/* A REPLY (status @code) for slot @slot of @node's service at @port. */
void lite_rpc_binding_reply(u32 node, u32 port, u8 code, u32 slot, u32 len);
/* CREDIT (@slot) or GONE from @node's service at @port. Softirq. */
void lite_rpc_binding_credit(u32 node, u32 port, u32 slot);
void lite_rpc_binding_gone(u32 node, u32 port);
/*
 * Whether @node is still the peer @inc (not removed nor replaced): down in
 * this node's view only, so it may still hold our keys. Under lite_lock.
 */
bool lite_rpc_peer_still(u32 node, u64 inc);
/* Peer @node is down: its bindings fail with EHOSTDOWN. Under lite_lock. */
void lite_rpc_bindings_peer_down(u32 node);
/*
 * CALL and SEND (lite_rpc_ops.c): a free slot of @b (waiting until
 * @deadline unless @nonblock), -EAGAIN, -ETIMEDOUT, -EINTR, or the
 * binding's death.
 */
int lite_rpc_slot_take(struct lite_rpc_binding *b, bool nonblock,
		       unsigned long deadline, u8 state,
		       struct lite_rpc_cslot **out);
/* Gives a slot back unused (nothing was posted from it). */
void lite_rpc_slot_untake(struct lite_rpc_cslot *s);
/* Posts the request staged in @s (@len bytes); on failure @s is the caller's. */
int lite_rpc_slot_post(struct lite_rpc_cslot *s, u32 len, bool oneway,
		       unsigned long deadline);
/*
 * Waits for the reply of @s until @deadline; 0 with s->len, or an errno.
 * On return the slot is the caller's to give back with
 * lite_rpc_slot_finish() (a reply came) or already abandoned.
 */
int lite_rpc_slot_wait(struct lite_rpc_cslot *s, unsigned long deadline);
/*
 * What the call in @s came to: its result if its answer came (the slot is
 * the caller's to finish), else @give_up (-ETIMEDOUT, -EINTR, ...) and the
 * slot is abandoned to its reply. Either way nobody is woken for it any
 * more. An answer is 0, EIO, ECONNREFUSED or EHOSTDOWN, never @give_up.
 */
int lite_rpc_slot_resolve(struct lite_rpc_cslot *s, int give_up);
void lite_rpc_slot_finish(struct lite_rpc_cslot *s);
/* A message's send completed: 0 or its errno; the slot goes to the credit. */
int lite_rpc_msg_wait(struct lite_rpc_cslot *s);

/* ---- Upcalls (lite_rpc_upcall.c); @message: LITE_MESSAGE_BUF bytes ---- */
int lite_upcall_rpc_register(const struct lite_rpc_service_args *args,
			     u32 port, u64 *service_id, char *message);
int lite_upcall_rpc_open(const char *name, struct lite_rpc_open_ans *ans,
			 char *message);
int lite_upcall_rpc_bind(u64 service_id, const struct lite_rpc_mem *reply,
			 u32 slot_bytes, struct lite_rpc_bind_ans *ring,
			 char *message);
void lite_upcall_rpc_unregister(const struct lite_rpc_service_args *args,
				u64 service_id);

/* ---- Handles (lite_rpc_ctl.c) ---- */

/* RPC handles are numbered after the file's LMR handles. */
#define LITE_RPC_HANDLE_BASE	LITE_HANDLES_MAX

/*
 * An RPC handle of an open file: a service it serves (REGISTER) or a
 * binding it calls through (OPEN). Freed after RCU: the data path finds
 * it without a lock and takes a reference on what it holds.
 */
struct lite_rpc_handle {
	struct rcu_head rcu;
	bool serve;
	struct lite_rpc_service *svc;
	struct lite_rpc_binding *b;
	u32 index;
};

/*
 * What REGISTER and OPEN do, for files and for kernel callers
 * (lite_rpc_kapi.c): the args of a lite_rpc_register checked (-EINVAL) with
 * the current task's ids; a service created, named by the manager and
 * published (one reference); one stopped (closed, the manager told, the
 * reference dropped); a service opened by name and bound (a reference on
 * the binding). @message: LITE_MESSAGE_BUF bytes for the manager's words.
 */
int lite_rpc_service_args_check(const struct lite_rpc_register *r,
				struct lite_rpc_service_args *a);
int lite_rpc_start_service(const struct lite_rpc_service_args *args,
			   struct lite_rpc_service **out, char *message);
void lite_rpc_stop_service(struct lite_rpc_service *svc);
int lite_rpc_open_service(const char *name, struct lite_rpc_open_ans *ans,
			  struct lite_rpc_binding **out, char *message);

/* The service or binding behind @handle of @lf, referenced, or NULL. */
struct lite_rpc_service *lite_rpc_handle_service(struct lite_file *lf,
						 u64 handle);
struct lite_rpc_binding *lite_rpc_handle_binding(struct lite_file *lf,
						 u64 handle);
/* lite_rpc_ops.c: CALL, SEND, RECV, REPLY; a call's deadline (0: the default). */
unsigned long lite_rpc_deadline(u32 timeout_ms);

/*
 * lite_rpc_async.c. Submits the call staged in @s (its reply to c->reply):
 * its token to @token_out, and on success the call owns @s and the
 * binding's reference until LITE_IOC_RPC_WAIT collects it or the file
 * closes; on failure @s is given back (nothing of it is left in flight)
 * and the binding's reference is the caller's.
 */
int lite_rpc_async_submit(struct lite_file *lf, struct lite_rpc_cslot *s,
			  const struct lite_rpc_call *c, unsigned long deadline,
			  u64 __user *token_out);

#endif /* LITE_RPC_INTERNAL_H */
