/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: a control call through the agent, for the files that make one:
 * lite_upcall.c (ALLOC, MAP, FREE and the answers) and lite_rpc_upcall.c
 * (the RPC upcalls). lite_upcall.c explains who answers an upcall.
 */
#ifndef LITE_UPCALL_H
#define LITE_UPCALL_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <net/genetlink.h>

#include "mem/lite_mem.h"

/* What an RPC upcall's answer carries (lite_rpc_upcall.c checks it). */
struct lite_upcall_rpc_ans {
	u64 service_id;			/* RPC_REGISTER, RPC_OPEN */
	u32 node_id, port;		/* RPC_OPEN */
	u32 max_request, max_reply, depth;
	u64 ring_addr;			/* RPC_BIND */
	u32 ring_key, slot_bytes;
};

struct lite_upcall {
	struct kref ref;		/* the waiter's; the list's while pending */
	struct list_head entry;		/* under lite_upcall_lock */
	bool pending;			/* on the list; under lite_upcall_lock */
	u64 id;
	u32 kind;			/* enum lite_upcall_kind */
	u32 portid;			/* the agent it went to */
	u32 uid, gid, pid;
	struct group_info *groups;	/* the caller's supplementary groups */
	struct lite_user *user;		/* @uid's accounting, with a reference */
	/*
	 * MAP: the grant reserved for the answer (a charge of @user), until
	 * the installed grant takes it over; the requester's memcg, which the
	 * grant is allocated in (the answer runs in the agent's task).
	 */
	struct lite_user *grant_charge;
	struct mem_cgroup *memcg;
	u32 access;			/* MAP: what was asked for */
	struct lite_file *lf;		/* MAP: the caller's file */
	struct file *file;		/* MAP: pins @lf until the upcall goes */
	/*
	 * Whoever claims the upcall answers it; a waiter killed after the
	 * claim may leave, and the one who answers learns it here (enum
	 * lite_upcall_waiter, cmpxchg) and undoes what nobody will hear of.
	 */
	atomic_t waiter;
	struct completion done;
	/* The answer, written by whoever took the upcall off the list. */
	int err;
	u64 lmr_id;			/* ALLOC, MAP */
	u64 handle;			/* MAP */
	u64 size;			/* MAP */
	u32 home_node_id;		/* MAP */
	char message[LITE_MESSAGE_BUF];
	struct lite_upcall_rpc_ans rpc;
};

enum lite_upcall_waiter {
	LITE_WAITER_WAITING,
	LITE_WAITER_ANSWERED,		/* the answer is being completed */
	LITE_WAITER_GONE,		/* killed after the claim: left */
};

struct lite_upcall *lite_upcall_new(u32 kind);
void lite_upcall_put(struct lite_upcall *up);
/*
 * A new upcall message for @up, on the pending list with the common
 * attributes; the caller adds its own, then lite_upcall_send_wait() (or
 * lite_upcall_abort() if it cannot).
 */
struct sk_buff *lite_upcall_start(struct lite_upcall *up, void **hdr);
int lite_upcall_send_wait(struct lite_upcall *up, struct sk_buff *msg,
			  void *hdr);
int lite_upcall_abort(struct lite_upcall *up, struct sk_buff *msg, int err);
/*
 * The whole exchange of @up: its message started, its own attributes put
 * by @put(@msg, @arg) (nonzero: they did not fit, -EMSGSIZE), sent, and
 * its answer waited for; the agent's message copied to @message
 * (LITE_MESSAGE_BUF bytes; may be NULL). 0 or the answer's errno, with
 * @up's answer fields set.
 */
int lite_upcall_call(struct lite_upcall *up,
		     int (*put)(struct sk_buff *msg, const void *arg),
		     const void *arg, char *message);
/* Clears the caller's message buffer and returns @err. */
long lite_early_error(char __user *message, long err);
bool lite_upcall_claim(struct lite_upcall *up);
bool lite_upcall_heard(struct lite_upcall *up);
void lite_upcall_answer(struct lite_upcall *up, int err);
int lite_upcall_put_groups(struct sk_buff *msg, const struct group_info *gi);
bool lite_user_name_valid(const char *name);
/*
 * An upcall nobody waits for (UNMAP, RPC_UNREGISTER): NULL if no agent is
 * attached or no memory; else add attributes and send it.
 */
struct sk_buff *lite_upcall_notice_start(u32 kind, u32 uid, u32 gid, u32 pid,
					 const struct group_info *groups,
					 void **hdr, u32 *portid);
void lite_upcall_notice_send(struct sk_buff *msg, void *hdr, u32 portid);

/* lite_rpc_upcall.c */
static inline bool lite_upcall_is_rpc(u32 kind)
{
	return kind == LITE_UPCALL_RPC_REGISTER ||
	       kind == LITE_UPCALL_RPC_OPEN || kind == LITE_UPCALL_RPC_BIND;
}

/*
 * What the upcall channel hands to the layers above (set by the root
 * before the netlink family registers).
 */
struct lite_upcall_ops {
	/*
	 * The answer to a pending RPC upcall @up (no error): checked, then
	 * given (rpc). From UPCALL_COMPLETE's doit, under lite_owner_rwsem.
	 */
	int (*complete_rpc)(struct genl_info *info, struct lite_upcall *up);
};

extern const struct lite_upcall_ops *lite_upcall_ops;
void lite_upcall_set_ops(const struct lite_upcall_ops *ops);

/* Parameter (lite_upcall.c): how long ALLOC, MAP and FREE wait for the agent. */
extern unsigned int lite_upcall_timeout_ms;

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
long lite_ioc_alloc(struct lite_file *lf, void __user *uarg);
long lite_ioc_map(struct lite_file *lf, void __user *uarg);
long lite_ioc_free(struct lite_file *lf, void __user *uarg);

#endif /* LITE_UPCALL_H */
