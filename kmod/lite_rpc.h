/* SPDX-License-Identifier: GPL-2.0 */
/*
 * STATUS: the design of issue #11's kernel half, not built yet: no file
 * includes this header and Kbuild lists none of the files it names.
 *
 * LITE RPC inside lite.ko: what the RPC files share with each other and
 * with lite_file.c, lite_conn.c and lite_peer.c. The uapi RPC header is
 * the application's side, the immediate's header the wire, docs/rpc.md the
 * story.
 *
 * Two halves, one file set each:
 *
 * The data path (lite_rpc_service.c, lite_rpc_binding.c, lite_rpc_recv.c,
 * lite_rpc_ops.c): a SERVICE this node serves (its rings, mapped into the
 * server process, and the requests in them) and a BINDING this node holds
 * to a service on another node or on itself (its ring there, its reply
 * slots here, its credits), the receive completions of every connection,
 * the CALL/SEND/RECV/REPLY/WAIT ioctls and mmap, and failures (a peer
 * down, a service gone).
 *
 * The control path (lite_rpc_ctl.c): the REGISTER, OPEN and CLOSE ioctls
 * and their upcalls through the agent (RPC_REGISTER, RPC_UNREGISTER,
 * RPC_OPEN, RPC_BIND), the netlink commands LITE_CMD_RPC_BIND and
 * LITE_CMD_RPC_SERVICE_GET, and the handles in each open file.
 *
 * Lifetimes. A service's rings are written by peers' NICs: they are freed
 * only once no client node can write into them any more, i.e. every bound
 * client node answered GONE with RELEASED, or is no longer a peer and its
 * connections are torn down (lite_conns_wait_closed()), or the fence timed
 * out, in which case the pages are quarantined like an LMR's (kept until
 * unload, counted, warned about). A binding's reply slots are written by
 * the server's NIC: freed only after GONE (the server sends it once no
 * reply of the service is in flight) or once the server is no longer a
 * peer and its connections are torn down. Both are kref'd; handles hold
 * references.
 */
#ifndef LITE_RPC_H
#define LITE_RPC_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "lite_internal.h"
#include "lite_rpc_imm.h"

struct lite_conn;
struct lite_file;
struct lite_rpc_service;
struct lite_rpc_binding;
struct vm_area_struct;

/* rpc_timeout_ms: a call's timeout when it gives 0 (lite_rpc_ops.c). */
extern unsigned int lite_rpc_timeout_ms;

/* ---- Services (data path; lite_rpc_service.c) ---- */

/* What RPC_REGISTER asked for, checked by the control path. */
struct lite_rpc_service_args {
	char name[LITE_NAME_BUF];
	u32 uid, gid, pid, mode;
	u32 max_request, max_reply, depth, max_clients;
};

/* What the control path reports of a service (dump, ioctl answer). */
struct lite_rpc_service_info {
	u64 service_id;			/* 0 until published */
	char name[LITE_NAME_BUF];
	u32 uid, gid, pid, mode;
	u32 port;
	u32 max_request, max_reply, depth, max_clients;
	u32 slot_bytes;
	u64 ring_bytes;			/* page aligned */
	u32 clients;			/* rings bound */
	u64 queued, served;
	bool closing;
};

/*
 * A new service with a free port and max_clients zeroed rings, DMA-mapped
 * (and, key_mode=lmr, registered) on the node's device, charged to
 * lmr_quota_mib; not reachable by peers until published. One reference.
 * -EINVAL (depth * slot > LITE_RPC_RING_MAX), -ENOSPC (quota or ports),
 * -ENOMEM, -ENXIO/-ENODEV (no identity or device), -EIO/-ETIMEDOUT (MR).
 */
int lite_rpc_service_create(const struct lite_rpc_service_args *args,
			    struct lite_rpc_service **out);
/* The manager named it: peers' requests to its port are taken from now on. */
void lite_rpc_service_publish(struct lite_rpc_service *svc, u64 service_id);
/*
 * Unregisters (RPC_CLOSE or the file's close; idempotent): refuses every
 * request queued, taken or arriving (REPLY with REFUSED), waits (not
 * killably, bounded) until no reply of it is in flight, sends GONE to every
 * bound client, and hands the rings to the fence (freed in the background
 * as above). Wakes its RECV waiters with ECONNREFUSED. A service never
 * published is simply freed. Process context.
 */
void lite_rpc_service_close(struct lite_rpc_service *svc);
void lite_rpc_service_get(struct lite_rpc_service *svc);
void lite_rpc_service_put(struct lite_rpc_service *svc);
void lite_rpc_service_info(struct lite_rpc_service *svc,
			   struct lite_rpc_service_info *info);
/* A published, not closing service at @port with a reference, or NULL. */
struct lite_rpc_service *lite_rpc_service_find(u32 port);

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
 * Reserves a ring of the service at req->port for the client node
 * (LITE_CMD_RPC_BIND: its errors). Process context, no lock held.
 */
int lite_rpc_service_bind(const struct lite_rpc_bind_req *req,
			  struct lite_rpc_bind_ans *ans);

/*
 * Calls @fn for each service with port >= *@next in port order (dump);
 * like lite_peers_visit().
 */
typedef int (*lite_rpc_service_fn)(const struct lite_rpc_service_info *info,
				   void *arg);
int lite_rpc_services_visit(unsigned long *next, lite_rpc_service_fn fn,
			    void *arg);

/* ---- Bindings (data path; lite_rpc_binding.c) ---- */

/* What RPC_OPEN's answer says of the service. */
struct lite_rpc_open_ans {
	u64 service_id;
	u32 node_id;			/* the server's */
	u32 port;
	u32 max_request, max_reply, depth;
};

/* This node's live binding to @service_id with a reference, or NULL. */
struct lite_rpc_binding *lite_rpc_binding_find(u64 service_id);
/*
 * A new, unbound binding for @ans: its reply slots allocated, mapped (and
 * registered) on the device that reaches ans->node_id; *@reply_addr,
 * *@reply_key and *@reply_slot_bytes for the RPC_BIND upcall. -EHOSTDOWN
 * if the server node is not a connected peer (or this node, loopback).
 */
int lite_rpc_binding_create(const struct lite_rpc_open_ans *ans,
			    struct lite_rpc_binding **out, u64 *reply_addr,
			    u32 *reply_key, u32 *reply_slot_bytes);
/*
 * Makes @b live with the server's ring @ring. If another binding to the
 * same service went live meanwhile, @b is dropped and *@out is that one
 * (with a reference); else *@out is @b. -ESTALE if ring's depth or slot
 * bytes do not fit what @b was made for.
 */
int lite_rpc_binding_install(struct lite_rpc_binding *b,
			     const struct lite_rpc_bind_ans *ring,
			     struct lite_rpc_binding **out);
void lite_rpc_binding_get(struct lite_rpc_binding *b);
void lite_rpc_binding_put(struct lite_rpc_binding *b);
/* The binding's limits, for RPC_OPEN's answer. */
void lite_rpc_binding_limits(const struct lite_rpc_binding *b,
			     u32 *max_request, u32 *max_reply, u32 *depth);

/* ---- Handles (control path; lite_rpc_ctl.c) ---- */

/*
 * An RPC handle of an open file: a service it serves (REGISTER) or one
 * it calls (OPEN). Handles live in lite_file.handles beside LMR handles;
 * an RPC handle's grant slot holds this instead (lite_file.c tells them
 * apart by the low bit of the stored pointer, xa_tag_pointer()).
 */
struct lite_rpc_handle {
	bool serve;			/* REGISTER: @svc; OPEN: @binding */
	struct lite_rpc_service *svc;
	struct lite_rpc_binding *binding;
	/* REGISTER: where this file's mapping of the rings starts. */
	u64 map_offset;
};

/*
 * The RPC handle @handle of @lf with the service or binding referenced,
 * or NULL (EBADF). @serve: which kind is wanted.
 */
struct lite_rpc_service *lite_rpc_handle_service(struct lite_file *lf,
						 u64 handle);
struct lite_rpc_binding *lite_rpc_handle_binding(struct lite_file *lf,
						 u64 handle);
/* The service whose mapping starts at @pgoff pages in @lf, referenced. */
struct lite_rpc_service *lite_rpc_map_service(struct lite_file *lf,
					      unsigned long pgoff);
/* The file is closing: close every RPC handle it holds. */
void lite_rpc_file_release(struct lite_file *lf);

long lite_ioctl_rpc_register(struct lite_file *lf, void __user *uarg);
long lite_ioctl_rpc_open(struct lite_file *lf, void __user *uarg);
long lite_ioctl_rpc_close(struct lite_file *lf, void __user *uarg);
int lite_nl_rpc_bind(struct sk_buff *skb, struct genl_info *info);
int lite_nl_rpc_service_dump(struct sk_buff *skb, struct netlink_callback *cb);

/* ---- Data path entry points (lite_rpc_ops.c, lite_rpc_recv.c) ---- */

/* LITE_IOC_RPC_CALL, _SEND, _RECV, _REPLY, _WAIT. */
long lite_rpc_ops_ioctl(struct lite_file *lf, unsigned int cmd,
			void __user *uarg);
/* mmap() of a service's rings on @lf. */
int lite_rpc_mmap(struct lite_file *lf, struct vm_area_struct *vma);
/* The file is closing: its asynchronous calls are abandoned. */
void lite_rpc_file_calls_release(struct lite_file *lf);

/*
 * Every connection posts receives for incoming WRITE_WITH_IMMs from the
 * moment its QP exists (lite_conn.c calls lite_rpc_conn_post_recvs() once
 * the QP is created, before it is connected) and reposts one per
 * completion; lite_rpc_recv_done() is the receive CQE's handler.
 */
int lite_rpc_conn_post_recvs(struct lite_conn *conn);
void lite_rpc_recv_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * Peer @node_id is down (its connections failed with EHOSTDOWN, or it was
 * removed or replaced by a new incarnation): every binding to it fails its
 * calls with EHOSTDOWN and dies; every ring it holds at this node's
 * services is dropped (its requests too) and freed for another client.
 * Called by lite_peer.c under lite_lock; must not sleep.
 */
void lite_rpc_peer_down_locked(u32 node_id);

int lite_rpc_init(void);
/* Module unload: every service closed, every binding dead, nothing left. */
void lite_rpc_exit(void);

#endif /* LITE_RPC_H */
