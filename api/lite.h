/*
 * libLITE: the C API to LITE, a thin checked wrapper over /dev/lite.
 *
 * An application opens a context (one open file of /dev/lite), allocates or
 * maps named LITE memory regions (LMRs) by name and reads, writes and
 * atomically updates them by handle. Every call is one ioctl on lite.ko; the
 * structs and the errors are those of the ABI header
 * kmod/include/uapi/lite.h, which this header includes (it is never copied).
 *
 * Conventions:
 *  - Every function returns 0 on success or a negative errno (-EACCES, ...);
 *    errno itself is left alone. lite_errno_name() names a code ("EACCES").
 *  - After a failed call, lite_message() says why in words when something
 *    knows: the cluster manager's message for the control calls (ALLOC, MAP,
 *    FREE), or libLITE's own for an argument it rejected before the ioctl.
 *    It is per thread, like errno, and empty when nothing more is known.
 *  - Thread safety: one context may be used by any number of threads at
 *    once for every call except lite_close(). Operations allocate nothing and
 *    take no lock: each is exactly one ioctl.
 *  - A handle is valid only in the context that mapped it; lite_close()
 *    unmaps all of them.
 *
 * Errors every call can return (beyond those listed per function):
 *   -EINVAL  a NULL context or out pointer, or a field lite.ko rejects;
 *   -EFAULT  a buffer is not valid memory;
 *   -ENOTTY  the file is not a LITE device, or lite.ko is too old for the
 *            call (no such ioctl).
 * Control calls (lite_alloc, lite_map, lite_free) can also return:
 *   -ENOTCONN   no node agent (liteagent) is attached on this node;
 *   -EAGAIN     the agent cannot reach the cluster manager now, or the
 *               node has 1024 control calls waiting already;
 *   -EDQUOT     the calling user's own share is used up: more than
 *               lite.ko's max_upcalls_per_uid calls waiting, or (lite_map)
 *               max_grants_per_uid grants held across all its contexts;
 *   -ETIMEDOUT  no answer within lite.ko's upcall_timeout_ms;
 *   -EINTR      a fatal signal arrived while waiting.
 * Operations (lite_read .. lite_cas) can also return:
 *   -EBADF      unknown or unmapped handle;
 *   -EACCES     the handle's access does not allow the operation;
 *   -EINVAL     offset + length past the end of the LMR, length 0 or more
 *               than LITE_OP_LENGTH_MAX, an atomic's offset not a multiple
 *               of 8;
 *   -ESTALE     the grant was revoked (the LMR was freed, or its home node
 *               restarted): map it again;
 *   -EHOSTDOWN  the LMR's home node failed or is not connected;
 *   -ETIMEDOUT  no completion within lite.ko's op_timeout_ms;
 *   -EIO        the RDMA operation failed for another reason (see dmesg).
 *   An operation that fails with -EHOSTDOWN or -ETIMEDOUT after it was posted
 *   may have written part of its range; any other failure changed nothing.
 */
#ifndef LITE_API_LITE_H_
#define LITE_API_LITE_H_

#include <stddef.h>
#include <stdint.h>

#include "kmod/include/uapi/lite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One open file of /dev/lite. Opaque. */
struct lite_ctx;

/* A map of one LMR; valid only in the context that made it. */
typedef uint64_t lite_handle_t;

/* What LITE_IOC_MAP reports about the mapped LMR. */
struct lite_lmr_info {
  uint64_t lmr_id;
  uint64_t size_bytes;
  uint32_t home_node_id;
  uint32_t access; /* the LITE_ACCESS_* bits the handle has */
};

/*
 * Opens the LITE device at `path` (NULL: LITE_DEVICE_PATH, "/dev/lite") and
 * checks that lite.ko speaks this ABI (LITE_IOC_QUERY). *ctx is set on
 * success only.
 * Errors: -ENOENT   no such file (lite.ko is not loaded);
 *         -EACCES   no permission to open it;
 *         -ENOTTY   the file is not a LITE device;
 *         -EPROTO   lite.ko speaks another LITE_ABI_VERSION;
 *         -ENOMEM;  or another errno of open(2).
 */
int lite_open(const char *path, struct lite_ctx **ctx);

/* Closes the file: every handle of the context is unmapped by lite.ko. No
 * other thread may use the context during or after the call. NULL is a
 * no-op. */
void lite_close(struct lite_ctx *ctx);

/* The context's file descriptor (for poll(2) or diagnostics; do not close). */
int lite_fd(const struct lite_ctx *ctx);

/*
 * This node's id and incarnation (both 0 until the node agent set them).
 * Either out pointer may be NULL.
 */
int lite_node_id(struct lite_ctx *ctx, uint32_t *node_id,
                 uint64_t *incarnation);

/*
 * The cluster members this node knows: this node first, then its peers in
 * node id order (struct lite_member: node_id, state, incarnation). Fills at
 * most max_members entries and sets *num_members to how many there are; if
 * that is more than max_members, call again with a bigger array.
 * max_members may be 0 (members may then be NULL).
 * Errors: -EINVAL  max_members > LITE_MEMBERS_MAX, or members NULL with
 *                  max_members > 0.
 */
int lite_members(struct lite_ctx *ctx, struct lite_member *members,
                 uint32_t max_members, uint32_t *num_members);

/*
 * The id of the node named `name` (LITE_IOC_NODE_LOOKUP): this node or one
 * of its peers, by the name the node agent gave it (the cluster manager's
 * node name). Any user may ask. *node_id is set on success only.
 * Errors: -EINVAL    name NULL or not a node name (1..LITE_NODE_NAME_MAX
 *                    characters of [A-Za-z0-9._-], the first a letter or
 *                    digit), node_id NULL;
 *         -ENOTCONN  this node's identity is not set (no agent yet);
 *         -ENOENT    neither this node nor a peer has that name;
 *         -ENOTTY    lite.ko predates node names.
 */
int lite_node_lookup(struct lite_ctx *ctx, const char *name, uint32_t *node_id);

/*
 * The name of node `node_id` (this node or a peer) in buf, len bytes,
 * NUL-terminated: "" if the node has no name (its agent gave none).
 * LITE_NODE_NAME_BUF bytes always suffice.
 * Errors: -EINVAL    buf NULL or len 0;
 *         -ERANGE    the name and its NUL need more than len bytes (buf
 *                    holds "");
 *         -ENOTCONN  this node's identity is not set (no agent yet);
 *         -ENOENT    no such node (node id 0 included);
 *         -ENOTTY    lite.ko predates node names.
 */
int lite_node_name(struct lite_ctx *ctx, uint32_t node_id, char *buf,
                   size_t len);

/*
 * Creates the LMR `name` of size_bytes (zeroed) on node home_node_id (0: this
 * node), owned by the caller's effective uid/gid, with Unix mode bits `mode`
 * (a subset of 0666). It is not mapped: lite_map() it. *lmr_id (may be NULL)
 * is its id.
 * Errors: -EINVAL  bad name (1..LITE_NAME_MAX chars of [A-Za-z0-9._:/-], the
 *                  first a letter or digit), size 0 or > LITE_LMR_SIZE_MAX,
 *                  mode not a subset of 0666;
 *         -EEXIST  an LMR with this name exists;
 *         -ENOENT  home_node_id is not a live member;
 *         -ENOSPC  the home node's LMR quota is used up;
 *         -ENOMEM  the home node has no memory for it;
 *         -EPERM   the home node takes no new LMRs (draining);
 *         and the control-call errors above.
 */
int lite_alloc(struct lite_ctx *ctx, const char *name, uint64_t size_bytes,
               uint32_t mode, uint32_t home_node_id, uint64_t *lmr_id);

/*
 * Maps the LMR `name` with `access` (LITE_ACCESS_READ and/or
 * LITE_ACCESS_WRITE): a new handle in *handle, and what the LMR is in *info
 * (may be NULL). The manager checks the caller's uid/gid against the LMR's
 * owner and mode bits.
 * Errors: -EINVAL     bad name, access 0 or unknown bits;
 *         -ENOENT     no LMR with this name;
 *         -EACCES     the mode bits deny the access asked for;
 *         -EHOSTDOWN  the LMR's home node is not connected to this node;
 *         -EMFILE     the context holds LITE_HANDLES_MAX handles already;
 *         and the control-call errors above.
 */
int lite_map(struct lite_ctx *ctx, const char *name, uint32_t access,
             lite_handle_t *handle, struct lite_lmr_info *info);

/*
 * Drops a handle; it is invalid (-EBADF) from the moment the call starts.
 * Operations already running on it finish. Never waits for the agent.
 * Errors: -EBADF  unknown or already unmapped handle.
 */
int lite_unmap(struct lite_ctx *ctx, lite_handle_t handle);

/*
 * Deletes the LMR `name` (only its owner may). Every map of it on every node
 * is revoked: operations on those handles fail with -ESTALE.
 * Errors: -EINVAL bad name; -ENOENT no such LMR; -EACCES not the owner;
 *         and the control-call errors above.
 */
int lite_free(struct lite_ctx *ctx, const char *name);

/* Reads length bytes of the LMR at offset into buf (any alignment). Needs
 * LITE_ACCESS_READ. Errors: the operation errors above. */
int lite_read(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
              void *buf, uint64_t length);

/* Writes length bytes of buf to the LMR at offset. Needs LITE_ACCESS_WRITE.
 * Errors: the operation errors above. */
int lite_write(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
               const void *buf, uint64_t length);

/* lite_read() and lite_write() at one priority (LITE_PRIO_HIGH, LITE_PRIO_LOW,
 * or 0 for the context's, see lite_set_priority()), for callers that mix
 * priorities on one context from several threads. Errors: as theirs, and
 * -EPERM for LITE_PRIO_HIGH where the file may not use it. */
int lite_read_prio(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
                   void *buf, uint64_t length, uint32_t priority);
int lite_write_prio(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
                    const void *buf, uint64_t length, uint32_t priority);

/* Sets length bytes of the LMR at offset to value. Needs LITE_ACCESS_WRITE.
 * Errors: the operation errors above. */
int lite_memset(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
                uint8_t value, uint64_t length);

/*
 * Copies length bytes from (src, src_offset) to (dst, dst_offset); the LMRs
 * may be one and the same or live on different nodes. Needs READ on src and
 * WRITE on dst. Errors: the operation errors above; -EINVAL also for
 * overlapping ranges of one LMR.
 */
int lite_memcpy(struct lite_ctx *ctx, lite_handle_t dst, uint64_t dst_offset,
                lite_handle_t src, uint64_t src_offset, uint64_t length);

/*
 * Atomically adds `add` to the 8-byte word at offset (a multiple of 8, in the
 * home node's byte order); *old (may be NULL) is its value before. Needs
 * READ and WRITE. Atomic against every other atomic on the LMR from every
 * node, not against READ/WRITE. Errors: the operation errors above.
 */
int lite_faa(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
             uint64_t add, uint64_t *old);

/*
 * Atomically: if the 8-byte word at offset equals `expected`, replace it with
 * `desired`. *old (may be NULL) is the value before either way; the swap
 * happened iff *old == expected. Returns 0 whether or not it swapped. Needs
 * READ and WRITE. Errors: the operation errors above.
 */
int lite_cas(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
             uint64_t expected, uint64_t desired, uint64_t *old);

/*
 * Priorities for QoS (docs/qos.md). Every operation of a context runs at its
 * default priority, LITE_PRIO_LOW until it is changed here; with lite.ko's
 * `qos` on, low-priority operations to a node are throttled while
 * high-priority ones to it are busy or slow. Batch entries, io_uring entries
 * and RPC calls may name their own (their `priority` field; 0 = this
 * default). LITE_PRIO_HIGH is for the administrator to grant: it needs
 * CAP_SYS_NICE or membership in lite.ko's qos_high_gid.
 * Errors: -EINVAL not LITE_PRIO_HIGH or LITE_PRIO_LOW; -EPERM HIGH not
 *         allowed (nothing changes).
 */
int lite_set_priority(struct lite_ctx *ctx, uint32_t priority);

/* The context's default priority now, and whether it may use HIGH (1/0);
 * either pointer may be NULL. */
int lite_get_priority(struct lite_ctx *ctx, uint32_t *priority,
                      int *high_allowed);

/*
 * Why this thread's last failed libLITE call failed, in words, or "" when
 * nothing more than its errno is known. Set by every control call (empty on
 * success) and by any call libLITE rejects itself; operations that fail in
 * lite.ko set it to "". Never NULL; valid until this thread's next call.
 */
const char *lite_message(void);

/* The symbolic name of an errno, positive or negative ("EACCES"), or "E?" for
 * one libLITE does not know. */
const char *lite_errno_name(int err);

/* Checks an LMR name the way lite.ko does: 0 or -EINVAL (with lite_message()
 * saying why). */
int lite_check_name(const char *name);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Batched operations: many small operations in one system call. */
#include "api/lite_batch.h"

/* Asynchronous operations on io_uring: many in flight from one thread. */
#include "api/lite_ring.h"

/* RPC and messages: services by name, calls, replies, one-way messages. */
#include "api/lite_rpc.h"

#endif /* LITE_API_LITE_H_ */
