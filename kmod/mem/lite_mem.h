/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: the memory layer's interface: LMRs this node hosts, their keys,
 * grants and the fenced free (more in lite_grant.h and lite_lmr.h), the
 * handles of an open file and what one uid holds, and what mem tells the
 * layers above it (struct lite_mem_ops).
 */
#ifndef LITE_MEM_H
#define LITE_MEM_H

#include "transport/lite_transport.h"

struct lite_grant;
struct lite_file;
struct lite_user;

/* Parameter (lite_lmr.c): memory for the LMRs this node hosts, in MiB. */
extern unsigned int lite_lmr_quota_mib;

/* mem/lite_lmr_mr.c: multicasts LITE_CMD_EVENT_LMR_LOST for @lmr_id (@reason positive). */
void lite_nl_lmr_lost_event(u64 lmr_id, int reason);

/* Names of LMRs (uapi lite.h, lite_lmr_args.c): true if @name is one. */
bool lite_name_valid(const char *name);

/* lite_lmr.c: LMR memory this node hosts. */
struct lite_lmr;

/*
 * What LMRs and grants tell the layers above them (lite_transport_ops'
 * pattern; set by the root before the first LMR or grant).
 */
struct lite_mem_ops {
	/*
	 * The LMR @lmr_id hosted here is gone from the table (freed or lost):
	 * its lock waiters hear (sync). Under lite_lmr_mutex: may take
	 * spinlocks, not sleep.
	 */
	void (*lmr_gone)(u64 lmr_id);
	/*
	 * A grant drained and out of every file: the agent hears, so the
	 * manager drops it (upcall). May sleep; no LITE lock held.
	 */
	void (*grant_given_back)(const struct lite_grant *grant);
};

extern const struct lite_mem_ops *lite_mem_ops;
void lite_mem_set_ops(const struct lite_mem_ops *ops);
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

/*
 * An open /dev/lite file. Its handles are mem's (lite_handle.c); the
 * other fields are the state of the layers above that keep some per file,
 * each named for its layer and touched only by it.
 */
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
	/*
	 * Priorities (lite_qos_throttle.c): the default, and whether HIGH is
	 * allowed.
	 */
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

int lite_file_handle_add(struct lite_file *lf, struct lite_grant *grant,
			 u64 *handle);
/* Removes @handle from @lf and returns its grant (the handle's ref). */
struct lite_grant *lite_file_handle_remove(struct lite_file *lf, u64 handle);
/* Unmaps a handle this file just made (the caller could not be told). */
void lite_file_handle_drop(struct lite_file *lf, u64 handle);
/* LITE_IOC_UNMAP: -EBADF if @handle is not one of @lf's. */
int lite_file_unmap(struct lite_file *lf, u64 handle);
/* @lf is closing: every handle unmapped, with one drain deadline for all. */
void lite_file_handles_release(struct lite_file *lf);
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

#endif /* LITE_MEM_H */
