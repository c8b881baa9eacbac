/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE RPC inside lite.ko: what the rest of the module calls. The RPC
 * files themselves share lite_rpc_internal.h; the uapi RPC header is the
 * application's side, lite_rpc_imm.h the wire, docs/rpc.md the story.
 *
 * A SERVICE this node serves has one ring per client node (depth slots of
 * slot_bytes), mapped into the server process; a BINDING this node holds
 * to a service (here or on a peer) has depth reply slots, which also stage
 * its requests. A request is one WRITE_WITH_IMM from reply slot s into
 * ring slot s; its reply one WRITE_WITH_IMM back into reply slot s. The
 * slots of a ring are the client node's credits.
 *
 * Lifetimes. A ring is written by its client's NIC: its memory is freed
 * only once no client can write into it any more: the client answered
 * GONE with RELEASED (it has no request in flight and sends none), or the
 * client node is down and its connections are torn down
 * (lite_conns_wait_closed()), or the module is unloading and no QP is
 * left. If the fence times out, the pages are kept until unload
 * (rpc_quarantined_bytes) and the port stays reserved. Posts check the
 * binding or the service slot under the lock that GONE, RELEASED and peer
 * down change, so nothing is posted after them. Memory a peer that is
 * down only in this node's view may still reach is never handed back to
 * the allocator while its key could (lite_rpc_peer_still()). Reply slots
 * are written by the server's NIC: a
 * binding stays in the node's table, its memory allocated, until the
 * server sent GONE (after its last reply completed) or the server node is
 * down and its connections are torn down, even when no handle of it is
 * left: it is this node's cached way to the service.
 */
#ifndef LITE_RPC_H
#define LITE_RPC_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "upcall/lite_upcall.h"
#include "lite_rpc_imm.h"

struct lite_conn;
struct lite_file;
struct vm_area_struct;
struct genl_info;
struct netlink_callback;

/* rpc_timeout_ms: a call's timeout when it gives 0 (lite_rpc_ops.c). */
extern unsigned int lite_rpc_timeout_ms;

/* What RPC_REGISTER asked for. */
struct lite_rpc_service_args {
	char name[LITE_NAME_BUF];
	u32 uid, gid, pid, mode;
	u32 max_request, max_reply, depth, max_clients;
};

/*
 * Every connection takes incoming RPC immediates: the transport calls this
 * (its conn_qp_ready) once the QP is in INIT, and each completion reposts
 * its receive.
 */
int lite_rpc_conn_post_recvs(struct lite_conn *conn);

/*
 * Peer @node_id is down (its connections failed with EHOSTDOWN, or it was
 * removed or replaced by a new incarnation): calls to it fail with
 * EHOSTDOWN, its rings here are dropped. The transport's peer_down_locked,
 * under lite_lock, after it closed the peer's connections.
 */
void lite_rpc_peer_down_locked(u32 node_id);

struct genl_info;
struct lite_upcall;
/*
 * The answer to a pending RPC upcall @up (no error): checked, then given
 * (the upcall channel's complete_rpc).
 */
int lite_upcall_complete_rpc(struct genl_info *info, struct lite_upcall *up);

/*
 * /dev/lite: the RPC ioctls (ctl/lite_ioctl.c's table), mmap of a service's
 * rings, a file's close.
 */
long lite_ioc_rpc_register(struct lite_file *lf, void __user *uarg);
long lite_ioc_rpc_open(struct lite_file *lf, void __user *uarg);
long lite_ioc_rpc_close(struct lite_file *lf, void __user *uarg);
long lite_ioc_rpc_call(struct lite_file *lf, void __user *uarg);
long lite_ioc_rpc_send(struct lite_file *lf, void __user *uarg);
long lite_ioc_rpc_recv(struct lite_file *lf, void __user *uarg);
long lite_ioc_rpc_reply(struct lite_file *lf, void __user *uarg);
long lite_ioc_rpc_wait(struct lite_file *lf, void __user *uarg);
int lite_rpc_mmap(struct lite_file *lf, struct vm_area_struct *vma);
void lite_rpc_file_release(struct lite_file *lf);
/* Abandons the file's asynchronous calls; before the file is freed. */
void lite_rpc_async_release(struct lite_file *lf);

/* Netlink: LITE_CMD_RPC_BIND and LITE_CMD_RPC_SERVICE_GET. */
extern const struct nla_policy lite_nl_rpc_bind_policy[LITE_ATTR_MAX + 1];
int lite_nl_rpc_bind(struct sk_buff *skb, struct genl_info *info);
int lite_nl_rpc_service_dump(struct sk_buff *skb, struct netlink_callback *cb);

/* Device removal: every service and binding on @ldev ends. */
void lite_rpc_device_removed(struct lite_device *ldev);

/* Module unload, after every connection is destroyed: nothing is left. */
void lite_rpc_exit(void);

/*
 * lite_rpc_kapi.c, for lite.ko's own kernel services and clients
 * (lite_sync_*.c): the queue a service's receivers sleep on (woken with
 * requests, or by whoever has other news for them), whether requests wait
 * or the service is closing, and the node a client is bound to.
 */
struct lite_kservice;
struct lite_kclient;
wait_queue_head_t *lite_kservice_waitq(struct lite_kservice *ks);
bool lite_kservice_pending(struct lite_kservice *ks);
u32 lite_kclient_node(const struct lite_kclient *kc);

#endif /* LITE_RPC_H */
