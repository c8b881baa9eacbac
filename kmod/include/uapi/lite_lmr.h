/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * LITE memory regions and one-sided operations: the node, LMR and
 * operation ioctls (0x01..0x06, 0x10..0x15; included by uapi/lite.h; never
 * include this header alone). docs/datapath.md tells the story.
 */
#ifndef _UAPI_LITE_LMR_H
#define _UAPI_LITE_LMR_H

/*
 * LMRs and one-sided operations.
 *
 * An application opens LITE_DEVICE_PATH and works with handles. A handle is
 * one map of one LMR (LITE_IOC_MAP): it is valid only in the open file that
 * made it (another process, or another open of /dev/lite, gets EBADF for
 * it) and carries the access the map granted. Handles are numbered
 * cyclically within the file: a value is reused only after
 * LITE_HANDLES_MAX (65,536) later maps (or RPC registers and opens, which
 * have their own numbering), so a program that keeps a handle after
 * unmapping it must not use it again. Closing the file unmaps every
 * handle it holds.
 *
 * Control calls (ALLOC, MAP, UNMAP, FREE) go to the node agent (liteagent)
 * and through it to the cluster manager, with the caller's effective uid and
 * gid and its pid, which lite.ko takes from the calling task. They wait at
 * most the upcall_timeout_ms module parameter and can be interrupted by a
 * fatal signal. When they fail for a reason the manager gave, `message`
 * (where the struct has one) says why in words; it is always
 * NUL-terminated, and empty on success and when the call failed before the
 * manager answered (EINVAL, ENOMEM, ENOTCONN, EAGAIN, ...).
 *
 * Operations (READ .. CAS) never involve the control plane: lite.ko checks
 * the handle, the access and the bounds and does the RDMA operation itself on
 * a queue pair it shares between every process on the node. A failed
 * operation changes nothing that the caller can observe in the LMR, with one
 * exception: an operation that fails with EHOSTDOWN or ETIMEDOUT after it was
 * posted (the home node failed mid-way) may have written part of its range.
 *
 * No ioctl returns a memory key or a chunk address: those stay inside
 * lite.ko (LITE_IOC_MAP's answer is the handle, the LMR's id, size and home
 * node).
 *
 * Errors common to every call below:
 *   EFAULT     the argument (or a buffer it points to) is not valid memory;
 *   EINVAL     flags or reserved is not zero, priority is no enum
 *              lite_priority, or a field is out of range (each call lists
 *              its own);
 *   EPERM      priority is LITE_PRIO_HIGH and the file may not use it;
 *   EINTR      a fatal signal arrived (control calls only).
 */

/*
 * LMR names: 1..LITE_NAME_MAX characters from [A-Za-z0-9._:/-], the first a
 * letter or digit, NUL-terminated in a LITE_NAME_BUF buffer.
 */
#define LITE_NAME_MAX		128
#define LITE_NAME_BUF		136
/* Size of the `message` field of control calls. */
#define LITE_MESSAGE_BUF	256
/* The largest LMR one call may allocate (64 GiB); the quota is usually lower. */
#define LITE_LMR_SIZE_MAX	(1ULL << 36)
/* Most members LITE_IOC_NODE reports (the peer table's size plus this node). */
#define LITE_MEMBERS_MAX	(1024 + 1)
/*
 * Node names: 1..LITE_NODE_NAME_MAX characters from [A-Za-z0-9._-], the
 * first a letter or digit (the cluster manager's rule for node names),
 * NUL-terminated in a LITE_NODE_NAME_BUF buffer.
 */
#define LITE_NODE_NAME_MAX	64
#define LITE_NODE_NAME_BUF	72

/* Access bits of a map (lite_map.access). */
enum lite_access {
	LITE_ACCESS_READ = 1U << 0,	/* READ, the source of MEMCPY, FAA, CAS (all read) */
	LITE_ACCESS_WRITE = 1U << 1,	/* WRITE, MEMSET, the target of MEMCPY, FAA, CAS */
};

/*
 * LITE_IOC_NODE: this node and the members it knows.
 *
 * In:  flags = 0; max_members = entries `members` holds (may be 0);
 *      members = user pointer to struct lite_member[max_members].
 * Out: node_id and incarnation (0 until the agent set them); num_members =
 *      how many members there are, this node first, then its peers in node
 *      id order; the first min(max_members, num_members) entries are filled.
 * Errors: EINVAL  flags/reserved not zero, or max_members > 0 with a NULL
 *                 members pointer, or max_members > LITE_MEMBERS_MAX.
 */
struct lite_member {
	__u32 node_id;
	__u32 state;		/* enum lite_peer_state; LITE_PEER_CONNECTED for this node */
	__u64 incarnation;
};

struct lite_node_info {
	__u32 node_id;		/* out */
	__u32 flags;		/* in: must be 0 */
	__u64 incarnation;	/* out */
	__u32 max_members;	/* in */
	__u32 num_members;	/* out */
	__u64 members;		/* in: struct lite_member * */
	__u64 reserved;		/* in: must be 0 */
};

/*
 * LITE_IOC_NODE_LOOKUP: a node's id from its name, or its name from its id.
 * This node and its peers are known by the names the node agent gave them
 * (LITE_ATTR_NODE_NAME); an agent that gives none leaves them unnamed.
 * lite.ko keeps names unique among this node and its peers (NODE_SET and
 * PEER_ADD refuse a name in use), so a name finds at most one node.
 *
 * In:  flags = 0; either name = a node name (name[0] != 0; node_id is
 *      ignored), or name[0] = 0 and node_id = the node to name.
 * Out: by name: node_id. By id: name, NUL-padded to LITE_NODE_NAME_BUF, an
 *      empty string if the node has no name.
 * Errors: EFAULT    the argument is not valid memory;
 *         EINVAL    flags not zero; name not NUL-terminated within
 *                   LITE_NODE_NAME_BUF, or not a valid node name;
 *         ENOTCONN  the node identity is not set (no agent has set it up);
 *         ENOENT    neither this node nor any peer has that name or id
 *                   (node id 0 included).
 */
struct lite_node_lookup {
	char name[LITE_NODE_NAME_BUF];	/* in or out */
	__u32 node_id;			/* in or out */
	__u32 flags;			/* in: must be 0 */
};

/*
 * LITE_IOC_ALLOC: create a new LMR of size_bytes on node home_node_id (0 =
 * this node), owned by the caller, with Unix mode bits `mode` (a subset of
 * 0666). The LMR's memory is zeroed. It gives no handle: LITE_IOC_MAP it.
 *
 * Out: lmr_id; message.
 * Errors: EINVAL     bad name, size 0 or > LITE_LMR_SIZE_MAX, mode not a
 *                    subset of 0666;
 *         EEXIST     an LMR with this name exists;
 *         ENOENT     home_node_id is not a live member;
 *         ENOSPC     the home node's LMR quota (lmr_quota_mib) is used up;
 *         ENOMEM     the home node has no memory for it;
 *         ENOTCONN   no agent is attached on this node;
 *         EAGAIN     the agent cannot reach the cluster manager now, or
 *                    this node has 1024 calls (every user's ALLOC, MAP
 *                    and FREE) waiting for its agent already;
 *         EDQUOT     the caller's euid has max_upcalls_per_uid (lite.ko
 *                    parameter, default 256) calls waiting for the agent
 *                    already: its own share, refused before the node-wide
 *                    EAGAIN, counted in debugfs user_upcalls_refused;
 *         ETIMEDOUT  no answer within upcall_timeout_ms;
 *         EPERM      the home node does not take new LMRs (draining).
 */
struct lite_alloc {
	char name[LITE_NAME_BUF];	/* in */
	__u64 size_bytes;		/* in: 1..LITE_LMR_SIZE_MAX */
	__u32 mode;			/* in: subset of 0666 */
	__u32 home_node_id;		/* in: 0 = this node */
	__u32 flags;			/* in: must be 0 */
	__u32 reserved;			/* in: must be 0 */
	__u64 lmr_id;			/* out */
	char message[LITE_MESSAGE_BUF];	/* out */
};

/*
 * LITE_IOC_MAP: a new handle to the LMR `name` with `access` (LITE_ACCESS_*,
 * at least one bit). The manager checks the caller's uid/gid against the
 * LMR's owner and mode bits (owner class, else group class, else other; no
 * root override).
 *
 * Out: handle; lmr_id, home_node_id, size_bytes of the LMR; message.
 * Errors: EINVAL     bad name, access 0 or unknown bits;
 *         ENOENT     no LMR with this name;
 *         EACCES     the mode bits deny the access asked for;
 *         EHOSTDOWN  the LMR's home node is not connected to this node;
 *         EMFILE     the file holds LITE_HANDLES_MAX handles already;
 *         EDQUOT     the caller's euid holds max_grants_per_uid (lite.ko
 *                    parameter, default 4096) grants on this node across
 *                    all its files: handles, MAPs in flight and unmapped
 *                    grants whose operations have not drained yet (debugfs
 *                    user_grants_refused; refused at once, the manager is
 *                    not asked); or as for LITE_IOC_ALLOC;
 *         ENOTCONN, EAGAIN, ETIMEDOUT as for LITE_IOC_ALLOC.
 */
#define LITE_HANDLES_MAX	65536

struct lite_map {
	char name[LITE_NAME_BUF];	/* in */
	__u32 access;			/* in: enum lite_access */
	__u32 flags;			/* in: must be 0 */
	__u64 handle;			/* out */
	__u64 lmr_id;			/* out */
	__u64 size_bytes;		/* out */
	__u32 home_node_id;		/* out */
	__u32 reserved;			/* in: must be 0 */
	char message[LITE_MESSAGE_BUF];	/* out */
};

/*
 * LITE_IOC_UNMAP: drop a handle. From the moment the call starts the handle
 * is invalid (EBADF) for every other call. Operations already running on it
 * end before their next round trip with ESTALE, and UNMAP (like closing the
 * file) returns once none is in flight, also none whose caller was killed
 * or timed out (at most op_timeout_ms; the kernel log says when it gave
 * up). Only then is the grant given back to the manager, in the
 * background: UNMAP succeeds even when no agent is attached.
 * Errors: EBADF  unknown or already unmapped handle.
 */
struct lite_unmap {
	__u64 handle;			/* in */
	__u32 flags;			/* in: must be 0 */
	__u32 reserved;			/* in: must be 0 */
};

/*
 * LITE_IOC_FREE: delete the LMR `name` (only its owner uid may). Every map of
 * it, on every node, is revoked: operations on those handles fail with
 * ESTALE. Its memory is freed on its home node.
 * Errors: EINVAL bad name; ENOENT no such LMR; EACCES not the owner;
 *         ENOTCONN, EAGAIN, EDQUOT, ETIMEDOUT as for LITE_IOC_ALLOC.
 */
struct lite_free {
	char name[LITE_NAME_BUF];	/* in */
	__u32 flags;			/* in: must be 0 */
	__u32 reserved;			/* in: must be 0 */
	char message[LITE_MESSAGE_BUF];	/* out */
};

/*
 * Errors common to the operations (READ, WRITE, MEMSET, MEMCPY, FAA, CAS):
 *   EBADF      unknown or unmapped handle;
 *   EACCES     the handle's access does not allow the operation;
 *   EINVAL     offset + length is past the end of the LMR (or overflows),
 *              length is 0, length > LITE_OP_LENGTH_MAX, an atomic's offset
 *              is not a multiple of 8 or its length is not 8;
 *   ESTALE     the grant behind the handle was revoked (the LMR was freed,
 *              or its home node restarted), or the home refused its key
 *              (its RDMA device was removed and added back, or the LMR's
 *              own key was invalidated): the operation that meets the
 *              refusal fails with ESTALE, the grant is revoked, and later
 *              operations on the handle fail with ESTALE without sending;
 *   EHOSTDOWN  the LMR's home node failed or is not connected;
 *   ETIMEDOUT  the operation did not complete within op_timeout_ms;
 *   EIO        the RDMA operation failed for another reason (see dmesg);
 *   EFAULT     the user buffer is not all readable (WRITE: nothing is
 *              written, but for a racing munmap()) or writable (READ).
 * `priority`: LITE_PRIO_HIGH, LITE_PRIO_LOW or 0 (the file's default), see
 * uapi/lite_qos.h; EPERM for HIGH without the right to it.
 */
#define LITE_OP_LENGTH_MAX	(1ULL << 32)

/*
 * LITE_IOC_READ / LITE_IOC_WRITE: length bytes between the LMR at offset
 * and the user buffer buf (any alignment).
 */
struct lite_rw {
	__u64 handle;
	__u64 offset;
	__u64 buf;			/* user pointer */
	__u64 length;
	__u32 flags;			/* must be 0 */
	__u32 priority;			/* enum lite_priority */
};

/*
 * LITE_IOC_MEMSET: length bytes at offset set to value (0..255; EINVAL
 * otherwise). Needs LITE_ACCESS_WRITE.
 */
struct lite_memset {
	__u64 handle;
	__u64 offset;
	__u64 length;
	__u32 value;
	__u32 flags;			/* must be 0 */
	__u32 priority;			/* enum lite_priority */
	__u32 reserved;			/* must be 0 */
};

/*
 * LITE_IOC_MEMCPY: length bytes from (src_handle, src_offset) to
 * (dst_handle, dst_offset); the LMRs may be the same one or live on
 * different nodes. Overlapping ranges of one LMR: EINVAL. Needs READ on the
 * source and WRITE on the destination.
 */
struct lite_memcpy {
	__u64 dst_handle;
	__u64 dst_offset;
	__u64 src_handle;
	__u64 src_offset;
	__u64 length;
	__u32 flags;			/* must be 0 */
	__u32 priority;			/* enum lite_priority */
};

/*
 * LITE_IOC_FAA: atomically add `operand` to the 8-byte word at offset and
 * return its old value in `result`. LITE_IOC_CAS: if the word equals
 * `operand`, replace it with `swap`; `result` is the old value either way
 * (the swap happened iff result == operand). The word is in the home node's
 * byte order. offset must be a multiple of 8. Both need READ and WRITE.
 * Atomics on one LMR are atomic with respect to each other from every node,
 * including its home node, but not with respect to READ/WRITE.
 * Errors: also EOPNOTSUPP  the home node's RDMA device (or this node's)
 *         takes no remote atomics (nothing is sent).
 */
struct lite_atomic {
	__u64 handle;
	__u64 offset;
	__u64 operand;			/* FAA: addend; CAS: expected value */
	__u64 swap;			/* CAS: new value; FAA: must be 0 */
	__u64 result;			/* out: the old value */
	__u32 flags;			/* must be 0 */
	__u32 priority;			/* enum lite_priority */
};

#define LITE_IOC_NODE	_IOWR(LITE_IOC_MAGIC, 0x01, struct lite_node_info)
#define LITE_IOC_ALLOC	_IOWR(LITE_IOC_MAGIC, 0x02, struct lite_alloc)
#define LITE_IOC_MAP	_IOWR(LITE_IOC_MAGIC, 0x03, struct lite_map)
#define LITE_IOC_UNMAP	_IOW(LITE_IOC_MAGIC, 0x04, struct lite_unmap)
#define LITE_IOC_FREE	_IOWR(LITE_IOC_MAGIC, 0x05, struct lite_free)
#define LITE_IOC_NODE_LOOKUP \
	_IOWR(LITE_IOC_MAGIC, 0x06, struct lite_node_lookup)
#define LITE_IOC_READ	_IOW(LITE_IOC_MAGIC, 0x10, struct lite_rw)
#define LITE_IOC_WRITE	_IOW(LITE_IOC_MAGIC, 0x11, struct lite_rw)
#define LITE_IOC_MEMSET	_IOW(LITE_IOC_MAGIC, 0x12, struct lite_memset)
#define LITE_IOC_MEMCPY	_IOW(LITE_IOC_MAGIC, 0x13, struct lite_memcpy)
#define LITE_IOC_FAA	_IOWR(LITE_IOC_MAGIC, 0x14, struct lite_atomic)
#define LITE_IOC_CAS	_IOWR(LITE_IOC_MAGIC, 0x15, struct lite_atomic)

#endif /* _UAPI_LITE_LMR_H */
