/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * LITE RPC and messages: the /dev/lite ioctls (included by uapi/lite.h;
 * never include this header alone). docs/rpc.md tells the story.
 *
 * A server process registers a named SERVICE (LITE_IOC_RPC_REGISTER). Its
 * lite.ko reserves, for each client node that opens the service, one
 * request ring of `depth` slots of `slot_bytes`, and maps every ring into
 * the server with mmap() on the same open file (zero copy: a request is
 * read where the NIC wrote it). A client process opens the service by name
 * (LITE_IOC_RPC_OPEN) and calls it (LITE_IOC_RPC_CALL) or sends it one-way
 * messages (LITE_IOC_RPC_SEND): one RDMA WRITE_WITH_IMM of the request into
 * a free slot of its node's ring, the immediate naming the port and the
 * slot; the reply is one WRITE_WITH_IMM back into a reply slot lite.ko
 * reserved on the client's node for that request slot, copied from there
 * into the caller's buffer. Server threads take requests with
 * LITE_IOC_RPC_RECV and answer them with LITE_IOC_RPC_REPLY (or answer one
 * and take the next in one LITE_IOC_RPC_RECV).
 *
 * Names follow the LMR name rules (LITE_NAME_MAX) in a namespace of their
 * own: a service and an LMR may share a name. Access: the service's owner
 * uid/gid (the registering process's effective ids, taken by lite.ko) and
 * mode bits, a subset of 0777, checked by the cluster manager at OPEN with
 * the LMR rules (owner class, else group class with supplementary groups,
 * else other; no root override). Only the execute bit (x) is checked: it
 * lets a user call the service and send it messages. r and w are kept and
 * listed, and mean nothing yet.
 *
 * Flow control: the slots of a ring are the client node's credits. A call
 * or message takes a free slot of its node's ring before it sends anything;
 * a call's slot comes back when its reply arrives (also a late one, after
 * the caller gave up), a message's when the server released it
 * (LITE_RPC_REPLY_RELEASE). With no free slot a caller waits (bounded by
 * its timeout) or, with LITE_RPC_NONBLOCK, fails with EAGAIN.
 *
 * Errors common to every RPC call below: EFAULT the argument or a buffer it
 * points to is not valid memory; EINVAL flags (unknown bits) or reserved
 * not zero, priority no enum lite_priority (uapi/lite_qos.h), or a field
 * out of range (each call lists its own); EPERM priority LITE_PRIO_HIGH
 * not allowed. A LOW call or message waits its turn while QoS throttles
 * the server's node.
 */
#ifndef _UAPI_LITE_RPC_H
#define _UAPI_LITE_RPC_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Largest request or reply (1 MiB). */
#define LITE_RPC_MSG_MAX	(1U << 20)
/* Service names only lite.ko registers. */
#define LITE_RPC_RESERVED_PREFIX "lite."
/* Most slots one ring has: requests one client node may have queued. */
#define LITE_RPC_DEPTH_MAX	1024
/* Most bytes one ring takes (depth * slot_bytes): physically contiguous. */
#define LITE_RPC_RING_MAX	(4U << 20)
/* Most client nodes one service takes (this node and LITE_MAX_PEERS). */
#define LITE_RPC_CLIENTS_MAX	1025
/* Most requests one LITE_IOC_RPC_RECV returns. */
#define LITE_RPC_RECV_MAX	64
/* Most calls one LITE_IOC_RPC_WAIT waits for. */
#define LITE_RPC_WAIT_MAX	64
/* Slots are multiples of this many bytes, and at least this big. */
#define LITE_RPC_SLOT_ALIGN	64
/* Longest timeout a call takes (ms); 0 means the rpc_timeout_ms parameter. */
#define LITE_RPC_TIMEOUT_MAX_MS	3600000U

/*
 * LITE_IOC_RPC_REGISTER: a new service `name` served by this file.
 *
 * In:  name; mode (subset of 0777); max_request and max_reply
 *      (0..LITE_RPC_MSG_MAX); depth (1..LITE_RPC_DEPTH_MAX, 0 = 16): the
 *      requests one client node may have queued; max_clients
 *      (1..LITE_RPC_CLIENTS_MAX, 0 = 16): client nodes that may open it
 *      (each one ring); flags 0.
 * Out: service: the handle (this file only, like an LMR handle); service_id
 *      (cluster-wide, as the manager lists it); port (this node's, in the
 *      immediates); slot_bytes = max(max_request, max_reply) rounded up to
 *      LITE_RPC_SLOT_ALIGN; ring_bytes = depth * slot_bytes rounded up to
 *      the page size; map_offset and map_bytes: mmap(NULL, map_bytes,
 *      PROT_READ | PROT_WRITE, MAP_SHARED, fd, map_offset) maps the rings,
 *      ring r at r * ring_bytes, its slot s at s * slot_bytes in it
 *      (lite_rpc_request.offset says where each request is); message.
 *      A ring's memory (ring_bytes, zeroed, charged to the registrar:
 *      its memory cgroup and the rpc_mib_per_uid module parameter, and to
 *      the node's rpc_quota_mib) is allocated when its client node first
 *      opens the service; its pages appear in the mapping then (reading a
 *      ring no client has yet raises SIGBUS). A client node over either
 *      is refused at open (ENOSPC).
 * Errors: EINVAL   bad name, mode, size, depth or max_clients, or
 *                  depth * slot_bytes > LITE_RPC_RING_MAX;
 *         EEXIST   a service with this name exists;
 *         ENOSPC   this node has no port left for users (65..16383);
 *         EDQUOT   the caller's uid serves rpc_services_per_uid services
 *                  on this node (module parameter, default 64);
 *         EPERM    the name begins with LITE_RPC_RESERVED_PREFIX, which
 *                  lite.ko keeps for its own services (locks and
 *                  barriers: "lite.sync.<node id>");
 *         ENOMEM, ENOTCONN, EAGAIN, EDQUOT, ETIMEDOUT, EINTR as for
 *         LITE_IOC_ALLOC.
 * The service lives until LITE_IOC_RPC_CLOSE of its handle or the file's
 * close. Then callers get ECONNREFUSED at once: calls queued or taken but
 * not answered, calls in flight to it and later ones.
 */
struct lite_rpc_register {
	char name[LITE_NAME_BUF];	/* in */
	__u32 mode;			/* in: subset of 0777 */
	__u32 max_request;		/* in */
	__u32 max_reply;		/* in */
	__u32 depth;			/* in: 0 = 16 */
	__u32 max_clients;		/* in: 0 = 16 */
	__u32 flags;			/* in: must be 0 */
	__u64 service;			/* out: handle */
	__u64 service_id;		/* out */
	__u32 port;			/* out */
	__u32 slot_bytes;		/* out */
	__u64 ring_bytes;		/* out */
	__u64 map_offset;		/* out */
	__u64 map_bytes;		/* out */
	char message[LITE_MESSAGE_BUF];	/* out */
};

/*
 * LITE_IOC_RPC_OPEN: a handle to call the service `name` (any node).
 * The manager checks the x bit for the caller. The first open of a service
 * on a node reserves that node's ring at the server (a second round trip
 * through the control plane); later opens on the node share the ring.
 * Out: service (handle); service_id; node_id (the server's); max_request,
 *      max_reply; depth (the node's credits); message.
 * Errors: EINVAL   bad name;
 *         EPERM    the name begins with LITE_RPC_RESERVED_PREFIX: lite.ko's
 *                  own services (the lock service) are not for processes;
 *         ENOENT   no such service;
 *         EACCES   the mode bits deny the caller;
 *         EHOSTDOWN the server's node is not connected to this one;
 *         EUSERS   the service has max_clients client nodes already;
 *         ENOSPC   the server's node has no quota left for this node's
 *                  ring (rpc_quota_mib, or its registrar's
 *                  rpc_mib_per_uid there);
 *         EDQUOT   this open would make the node's binding to the service
 *                  and the caller's uid has rpc_bindings_per_uid bindings
 *                  or no rpc_mib_per_uid left for its reply slots;
 *         EMFILE   the file holds LITE_HANDLES_MAX handles;
 *         ENOMEM, ENOTCONN, EAGAIN, EDQUOT, ETIMEDOUT, EINTR as for
 *         LITE_IOC_ALLOC.
 */
struct lite_rpc_open {
	char name[LITE_NAME_BUF];	/* in */
	__u32 flags;			/* in: must be 0 */
	__u32 node_id;			/* out */
	__u64 service;			/* out: handle */
	__u64 service_id;		/* out */
	__u32 max_request;		/* out */
	__u32 max_reply;		/* out */
	__u32 depth;			/* out */
	__u32 reserved;			/* in: must be 0 */
	char message[LITE_MESSAGE_BUF];	/* out */
};

/*
 * LITE_IOC_RPC_CLOSE: drop a handle of REGISTER (unregisters the service:
 * see above; returns once no reply of it is posted and unsent; a reply
 * still being copied is not sent) or of OPEN (calls
 * running on it go on; later ones on it get EBADF).
 * Errors: EBADF  unknown handle.
 */
struct lite_rpc_close {
	__u64 service;			/* in */
	__u32 flags;			/* in: must be 0 */
	__u32 reserved;			/* in: must be 0 */
};

/* lite_rpc_call.flags and lite_rpc_send.flags */
enum lite_rpc_call_flags {
	/* No free slot (credit): EAGAIN at once instead of waiting. */
	LITE_RPC_NONBLOCK = 1U << 0,
	/*
	 * CALL only: return once the request is posted, with `call` set (a
	 * token); the reply is collected with LITE_IOC_RPC_WAIT into `reply`
	 * (which must stay valid until then) or dropped when the file closes.
	 * What fails before the post (EMSGSIZE, EAGAIN, ECONNREFUSED, ...)
	 * fails the CALL; what comes later is the WAIT's result. timeout_ms
	 * fixes the call's deadline at submit. A call holds its credit until
	 * it is collected.
	 */
	LITE_RPC_ASYNC = 1U << 1,
};

/*
 * LITE_IOC_RPC_CALL: send `request` (req_len bytes) to the service behind
 * an OPEN handle and wait for its reply, copied to `reply` (at most
 * reply_max bytes); reply_len is its length.
 * timeout_ms bounds the whole call (credit, send and reply); 0 means the
 * rpc_timeout_ms module parameter.
 * Errors: EBADF        not an OPEN handle of this file;
 *         EMSGSIZE     req_len > the service's max_request (nothing sent);
 *         EAGAIN       LITE_RPC_NONBLOCK and no free slot;
 *         ETIMEDOUT    no reply in time: the slot stays taken until the
 *                      reply comes, which is then dropped (counted);
 *         ECONNREFUSED the service is gone (unregistered, its process
 *                      exited): the handle stays so, open it again;
 *         EHOSTDOWN    the server's node failed or is not connected;
 *         EOVERFLOW    the reply is longer than reply_max: reply_len is
 *                      its length, reply holds its first reply_max bytes;
 *         EINTR        a fatal signal (the slot is reclaimed when the
 *                      reply comes).
 */
struct lite_rpc_call {
	__u64 service;			/* in: OPEN handle */
	__u64 request;			/* in: user pointer */
	__u64 reply;			/* in: user pointer */
	__u32 req_len;			/* in */
	__u32 reply_max;		/* in */
	__u32 reply_len;		/* out */
	__u32 timeout_ms;		/* in */
	__u32 flags;			/* in: enum lite_rpc_call_flags */
	__u32 priority;			/* in: enum lite_priority */
	__u64 call;			/* out (LITE_RPC_ASYNC): the call's token */
};

/*
 * LITE_IOC_RPC_SEND: a one-way message (no reply) to the service; returns
 * once the server's node has it. Errors as for LITE_IOC_RPC_CALL, with
 * max_request bounding len.
 */
struct lite_rpc_send {
	__u64 service;			/* in: OPEN handle */
	__u64 msg;			/* in: user pointer */
	__u32 len;			/* in */
	__u32 timeout_ms;		/* in: for a credit; 0 = rpc_timeout_ms */
	__u32 flags;			/* in: LITE_RPC_NONBLOCK only */
	__u32 priority;			/* in: enum lite_priority */
};

/* lite_rpc_request.flags */
enum lite_rpc_request_flags {
	LITE_RPC_REQ_ONEWAY = 1U << 0,	/* a message: release it, no reply */
};

/* One request taken by LITE_IOC_RPC_RECV. */
struct lite_rpc_request {
	__u64 id;			/* names it to LITE_IOC_RPC_REPLY */
	__u64 offset;			/* of its bytes in the mapping */
	__u32 length;			/* its bytes */
	__u32 client_node;		/* the caller's node id */
	__u32 flags;			/* enum lite_rpc_request_flags */
	__u32 reserved;
};

/* lite_rpc_reply.flags */
enum lite_rpc_reply_flags {
	/*
	 * The reply's bytes are in the mapping already, at `data` = the
	 * offset of the request's slot + k (any k with k + len <= slot_bytes):
	 * sent from there without a copy. Else `data` is a user pointer and
	 * lite.ko copies it into the request's slot first.
	 */
	LITE_RPC_REPLY_IN_PLACE = 1U << 0,
	/* A message (LITE_RPC_REQ_ONEWAY): release its slot; len must be 0. */
	LITE_RPC_REPLY_RELEASE = 1U << 1,
};

/*
 * LITE_IOC_RPC_REPLY: answer request `id` of the service behind a
 * REGISTER handle with len bytes (at most the service's max_reply).
 * Each request is answered once, by any thread, in any order; a request's
 * slot in the mapping may be reused by its client as soon as the call
 * returns.
 * Errors: EBADF     not a REGISTER handle of this file;
 *         EINVAL    no such request taken and unanswered (answered
 *                   already, never taken, or a message answered without
 *                   RELEASE or a call with it): nothing is sent;
 *         EMSGSIZE  len > max_reply (nothing sent; the request stays
 *                   unanswered);
 *         EHOSTDOWN the caller's node failed (the request is gone);
 *         ECONNREFUSED the service was unregistered while the reply was
 *                   being copied: nothing is sent (its caller got
 *                   ECONNREFUSED).
 */
struct lite_rpc_reply {
	__u64 service;			/* in: REGISTER handle */
	__u64 id;			/* in */
	__u64 data;			/* in: user pointer, or offset (IN_PLACE) */
	__u32 len;			/* in */
	__u32 flags;			/* in: enum lite_rpc_reply_flags */
};

/*
 * LITE_IOC_RPC_RECV: take up to max requests of the service behind a
 * REGISTER handle, waiting up to timeout_ms (0: return at once; U32_MAX:
 * no limit other than a fatal signal) for the first. Each request is taken
 * by one caller only. With reply_id != 0 it first answers that request as
 * LITE_IOC_RPC_REPLY would (reply_data, reply_len, reply_flags), and the
 * call fails with the reply's error before taking anything.
 * Out: count (0 on a timeout: no error), requests[0..count).
 * Errors: EBADF as above; ECONNREFUSED the service is being unregistered
 *         (LITE_IOC_RPC_CLOSE from another thread); EINTR.
 */
struct lite_rpc_recv {
	__u64 service;			/* in: REGISTER handle */
	__u64 requests;			/* in: struct lite_rpc_request[max] */
	__u32 max;			/* in: 1..LITE_RPC_RECV_MAX */
	__u32 count;			/* out */
	__u32 timeout_ms;		/* in */
	__u32 flags;			/* in: must be 0 */
	__u64 reply_id;			/* in: 0, or a request to answer first */
	__u64 reply_data;		/* in */
	__u32 reply_len;		/* in */
	__u32 reply_flags;		/* in */
};

/* One call LITE_IOC_RPC_WAIT collects. */
struct lite_rpc_result {
	__u64 call;			/* in: a token of LITE_RPC_ASYNC */
	__s32 error;			/* out: 0 or a negative errno, as CALL's */
	__u32 reply_len;		/* out */
};

/* lite_rpc_wait.flags */
enum lite_rpc_wait_flags {
	LITE_RPC_WAIT_ALL = 1U << 0,	/* wait for all, not the first */
};

/*
 * LITE_IOC_RPC_WAIT: wait up to timeout_ms (0: not at all; U32_MAX: no
 * limit of its own) for the first (or, with LITE_RPC_WAIT_ALL, every) of
 * `count` asynchronous calls of this file. Then every call that ended is
 * collected: its reply copied to the buffer given at submit,
 * results[i].error (0 or CALL's errno, negative) and reply_len set, its
 * token forgotten. A call past the deadline its submit fixed is collected
 * with -ETIMEDOUT (its late reply is dropped), so no wait outlasts the
 * calls' deadlines. The others have error -EINPROGRESS (still running) or
 * -EALREADY (another thread's wait collected it meanwhile).
 * done = how many were collected; a timeout is not an error (done may be 0).
 * A file's calls that are not collected when it closes are abandoned.
 * Errors: EINVAL count 0 or > LITE_RPC_WAIT_MAX, unknown flags, a token
 *         twice or not this file's (nothing collected); EINTR a fatal
 *         signal (nothing collected).
 */
struct lite_rpc_wait {
	__u64 results;			/* in/out: struct lite_rpc_result[count] */
	__u32 count;			/* in */
	__u32 done;			/* out */
	__u32 timeout_ms;		/* in */
	__u32 flags;			/* in: enum lite_rpc_wait_flags */
};

#define LITE_IOC_RPC_REGISTER \
	_IOWR(LITE_IOC_MAGIC, 0x20, struct lite_rpc_register)
#define LITE_IOC_RPC_OPEN	_IOWR(LITE_IOC_MAGIC, 0x21, struct lite_rpc_open)
#define LITE_IOC_RPC_CLOSE	_IOW(LITE_IOC_MAGIC, 0x22, struct lite_rpc_close)
#define LITE_IOC_RPC_CALL	_IOWR(LITE_IOC_MAGIC, 0x23, struct lite_rpc_call)
#define LITE_IOC_RPC_SEND	_IOW(LITE_IOC_MAGIC, 0x24, struct lite_rpc_send)
#define LITE_IOC_RPC_RECV	_IOWR(LITE_IOC_MAGIC, 0x25, struct lite_rpc_recv)
#define LITE_IOC_RPC_REPLY	_IOW(LITE_IOC_MAGIC, 0x26, struct lite_rpc_reply)
#define LITE_IOC_RPC_WAIT	_IOWR(LITE_IOC_MAGIC, 0x27, struct lite_rpc_wait)

#endif /* _UAPI_LITE_RPC_H */
