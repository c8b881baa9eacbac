/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: what the control side (open files, handles, grants, hosted LMR
 * memory; lite_file.c, lite_grant.c, lite_lmr.c, lite_upcall.c) hands to the
 * data path (one-sided operations; lite_ops.c).
 *
 * A handle in an open file points at a grant. The data path looks the grant
 * up, checks access and bounds against it, and posts RDMA operations to the
 * grant's home node with the grant's memory key and chunk addresses. It
 * never takes a mutex or allocates for that.
 */
#ifndef LITE_GRANT_H
#define LITE_GRANT_H

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "uapi/lite.h"

struct lite_chunk {
	u64 addr;		/* RDMA address at the home node */
	u64 length;
	u64 offset;		/* where the chunk starts in the LMR */
};

struct lite_grant {
	/*
	 * Held by the handle that points at it, by the node's grant table
	 * (until unmapped) and by every operation running on it.
	 */
	struct kref ref;
	u64 grant_id;
	u64 lmr_id;
	u32 home_node_id;	/* may be this node's own id */
	u32 access;		/* enum lite_access */
	u64 epoch;		/* the home node's incarnation */
	u64 size;
	u32 memory_key;
	/*
	 * 0 while usable; -ESTALE once revoked (LITE_CMD_GRANT_REVOKE, the
	 * LMR freed). Written with WRITE_ONCE, read with READ_ONCE.
	 */
	int revoked;
	/* The control side's (lite_grant.c); the data path need not look. */
	struct rcu_head rcu;
	struct lite_lmr *hosted;	/* the LMR when hosted here, with a ref */
	u32 uid, gid, pid;		/* who mapped it */
	u64 incarnation;		/* the holder's (this node's) */
	s64 granted_at_ms;
	char name[LITE_NAME_BUF];
	u32 nr_chunks;
	struct lite_chunk chunks[];	/* in offset order, no gaps */
};

struct lite_lmr;

/* Open files of /dev/lite: file->private_data. */
struct lite_file;

/*
 * The grant behind @handle in @lf with a reference, or NULL if the handle
 * is unknown or unmapped (the caller returns -EBADF). Lock-free.
 */
struct lite_grant *lite_file_grant_get(struct lite_file *lf, u64 handle);
void lite_grant_put(struct lite_grant *grant);

/*
 * The index of the chunk that holds byte @offset of @grant (offset < size).
 * Chunks are found by binary search over chunks[].offset.
 */
u32 lite_grant_chunk_index(const struct lite_grant *grant, u64 offset);

/*
 * The data path's ioctls (LITE_IOC_READ .. LITE_IOC_CAS), in lite_ops.c.
 * lite_chardev.c forwards them with the open file's lite_file.
 */
long lite_ops_ioctl(struct lite_file *lf, unsigned int cmd, unsigned long arg);

#endif /* LITE_GRANT_H */
