/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * LITE: the ABI between lite.ko and userspace.
 *
 * This header is the one contract between the kernel module and everything
 * in userspace (libLITE, liteagent, tools). It is included from both sides and
 * never copied. Every struct has a fixed layout (explicit widths, explicit
 * padding) so 32- and 64-bit callers see the same ABI; every reserved field
 * and unknown flag must be zero and is rejected with EINVAL otherwise, so the
 * fields can be given meaning later without breaking old binaries.
 */
#ifndef _UAPI_LITE_H
#define _UAPI_LITE_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped whenever an ioctl or struct below changes incompatibly. */
#define LITE_ABI_VERSION 1

/* The character device applications open. */
#define LITE_DEVICE_PATH "/dev/lite"

#define LITE_IOC_MAGIC 0xB7

/* Same as the kernel's IB_DEVICE_NAME_MAX; names are NUL-terminated. */
#define LITE_DEVICE_NAME_MAX 64

/* lite_device_info.port_state: the RDMA port's state (IB spec values). */
enum lite_port_state {
	LITE_PORT_NOP = 0,
	LITE_PORT_DOWN = 1,
	LITE_PORT_INIT = 2,
	LITE_PORT_ARMED = 3,
	LITE_PORT_ACTIVE = 4,
	LITE_PORT_ACTIVE_DEFER = 5,
};

/* lite_device_info.link_layer */
enum lite_link_layer {
	LITE_LINK_LAYER_UNSPECIFIED = 0,
	LITE_LINK_LAYER_INFINIBAND = 1,
	LITE_LINK_LAYER_ETHERNET = 2,
};

/* lite_device_info.flags */
enum lite_device_flags {
	/*
	 * The device's protection domain has the global memory key: one rkey
	 * that covers all of the node's memory, so LMRs need no per-region
	 * registration. Without it LITE cannot serve remote memory on the
	 * device; global_key_errno says why.
	 */
	LITE_DEVICE_GLOBAL_KEY_READY = 1U << 0,
};

/*
 * One RDMA device LITE serves. LITE uses the device's first port.
 */
struct lite_device_info {
	char name[LITE_DEVICE_NAME_MAX];	/* e.g. "rxe0", "mlx5_0" */
	__u64 node_guid;			/* CPU byte order */
	__u32 port;				/* the port LITE uses */
	__u32 port_state;			/* enum lite_port_state */
	__u32 link_layer;			/* enum lite_link_layer */
	__u32 active_mtu_bytes;			/* 0 if the port is not up */
	__u32 flags;				/* enum lite_device_flags */
	__s32 global_key_errno;			/* 0, or why the key failed (negative errno) */
};

/*
 * LITE_IOC_QUERY: the ABI version and the RDMA devices LITE serves.
 *
 * In:  flags = 0; max_devices = how many entries `devices` holds (may be 0
 *      to ask only for the count); devices = user pointer to an array of
 *      struct lite_device_info (ignored when max_devices is 0).
 * Out: abi_version = LITE_ABI_VERSION; num_devices = how many devices LITE
 *      serves now; the first min(max_devices, num_devices) entries of
 *      `devices` are filled. A caller that got num_devices > max_devices
 *      retries with a bigger array.
 *
 * Errors: EFAULT  the argument or the devices array is not writable memory;
 *         EINVAL  flags or reserved is not zero, or max_devices > 0 with a
 *                 NULL devices pointer.
 */
struct lite_query {
	__u32 abi_version;	/* out */
	__u32 flags;		/* in: must be 0 */
	__u32 max_devices;	/* in */
	__u32 num_devices;	/* out */
	__u64 devices;		/* in: struct lite_device_info * */
	__u64 reserved;		/* in: must be 0 */
};

#define LITE_IOC_QUERY _IOWR(LITE_IOC_MAGIC, 0x00, struct lite_query)

/*
 * Generic netlink: the channel between lite.ko and the node agent.
 *
 * Family LITE_GENL_NAME, version LITE_GENL_VERSION, in the initial network
 * namespace only. The node agent (liteagent) programs the module through it:
 * who this node is, which peers to connect to. Operators and tests use the
 * same commands through `litenl`.
 *
 * Validation. Every command has its own strict attribute policy: an
 * attribute the command does not take, an unknown attribute type, a wrong
 * length or trailing data fail with EINVAL and an extended-ack message
 * naming the attribute. Every value is range-checked (below). Errors come
 * back as a negative errno in the netlink ACK, with a message in the
 * NLMSGERR_ATTR_MSG extended-ack attribute (ask for it with the
 * NETLINK_EXT_ACK socket option).
 *
 * Ownership. Commands that change state need CAP_NET_ADMIN (EPERM
 * otherwise). While an agent is attached (LITE_CMD_AGENT_ATTACH), only the
 * agent's own socket may change state: others get EBUSY. The agent stays
 * attached until it detaches or its netlink socket is closed (also when the
 * process dies). Peers and their connections outlive the agent: the data
 * path never waits on the control plane.
 *
 * Values:
 *   node id       u32, 1..UINT32_MAX; 0 means "no node"
 *   incarnation   u64, 1..UINT64_MAX; a node that restarts gets a larger one
 *   IPv4 address  __be32 (struct in_addr.s_addr); not 0.0.0.0/8, loopback,
 *                 multicast or 255.255.255.255
 */
#define LITE_GENL_NAME		"lite"
#define LITE_GENL_VERSION	1
/* Multicast group for module events (LITE_CMD_EVENT_*). Joining needs CAP_NET_ADMIN. */
#define LITE_GENL_MCGRP_EVENTS	"events"

/* Queue pairs per peer: the qps_per_peer module parameter's range. */
#define LITE_QPS_PER_PEER_MAX	16
/* How many peers one node keeps at most (LITE_CMD_PEER_ADD: ENOSPC). */
#define LITE_MAX_PEERS		1024

enum lite_genl_cmd {
	LITE_CMD_UNSPEC,

	/*
	 * LITE_CMD_AGENT_ATTACH (CAP_NET_ADMIN): the sending socket becomes
	 * the node's agent. No attributes. Attaching the socket that is
	 * already attached succeeds again.
	 * Errors: EPERM   no CAP_NET_ADMIN;
	 *         EBUSY   another socket is attached.
	 */
	LITE_CMD_AGENT_ATTACH,

	/*
	 * LITE_CMD_AGENT_DETACH (CAP_NET_ADMIN): the attached agent lets go.
	 * No attributes. Closing the agent's socket has the same effect.
	 * Errors: EPERM     no CAP_NET_ADMIN;
	 *         ENOTCONN  no agent is attached;
	 *         EBUSY     the agent is another socket.
	 */
	LITE_CMD_AGENT_DETACH,

	/*
	 * LITE_CMD_NODE_SET (CAP_NET_ADMIN): this node's identity.
	 * Attributes (all required): LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION,
	 * LITE_ATTR_IPV4_ADDR (an address of this node's RDMA netdev).
	 * lite.ko starts listening with rdma_cm on that address and the
	 * cm_port module parameter. Setting the identity it already has
	 * succeeds and changes nothing (it listens again if its RDMA device
	 * had gone away); another identity needs every peer removed first,
	 * and if setting it fails the node has no identity.
	 * Errors: EPERM          no CAP_NET_ADMIN;
	 *         EINVAL         an attribute is missing, unknown or out of range;
	 *         EBUSY          peers exist and the identity differs, or an
	 *                        agent is attached and the caller is not it;
	 *         EADDRNOTAVAIL  the address is not on an RDMA device here;
	 *         EADDRINUSE     the address and port are already listened on;
	 *         ENOMEM.
	 */
	LITE_CMD_NODE_SET,

	/*
	 * LITE_CMD_NODE_GET (any user): the node's state. No attributes.
	 * Reply: LITE_ATTR_CM_PORT, LITE_ATTR_QPS_PER_PEER, LITE_ATTR_NUM_PEERS;
	 * LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION and LITE_ATTR_IPV4_ADDR once
	 * the identity is set; LITE_ATTR_AGENT_PORTID while an agent is attached.
	 * Errors: EINVAL  an attribute was given; ENOMEM.
	 */
	LITE_CMD_NODE_GET,

	/*
	 * LITE_CMD_PEER_ADD (CAP_NET_ADMIN): connect to another node.
	 * Attributes (all required): LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION,
	 * LITE_ATTR_IPV4_ADDR. The node with the smaller id initiates
	 * qps_per_peer RC connections; the other accepts them. A larger
	 * incarnation than the known one replaces the peer: its old
	 * connections are torn down (LITE_CMD_EVENT_PEER_REMOVED) and new
	 * ones made.
	 * Errors: EPERM    no CAP_NET_ADMIN;
	 *         EINVAL   an attribute is missing, unknown or out of range, or
	 *                  names this node itself (its id or its address);
	 *         ENXIO    the node identity is not set (LITE_CMD_NODE_SET first);
	 *         EEXIST   the peer is known with this incarnation already, or
	 *                  another peer has this address;
	 *         ESTALE   the peer is known with a larger incarnation;
	 *         ENOSPC   LITE_MAX_PEERS peers exist;
	 *         EBUSY    an agent is attached and the caller is not it;
	 *         ENOMEM.
	 */
	LITE_CMD_PEER_ADD,

	/*
	 * LITE_CMD_PEER_REMOVE (CAP_NET_ADMIN): forget a peer and tear its
	 * connections down (LITE_CMD_EVENT_PEER_REMOVED follows).
	 * Attributes: LITE_ATTR_NODE_ID (required); LITE_ATTR_INCARNATION
	 * (optional: remove only that incarnation).
	 * Errors: EPERM   no CAP_NET_ADMIN;
	 *         EINVAL  an attribute is missing, unknown or out of range;
	 *         ENOENT  no such peer;
	 *         ESTALE  the peer has another incarnation than the one given;
	 *         EBUSY   an agent is attached and the caller is not it.
	 */
	LITE_CMD_PEER_REMOVE,

	/*
	 * LITE_CMD_PEER_GET (any user), dump only (NLM_F_DUMP): one message
	 * per peer, in node id order: LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION,
	 * LITE_ATTR_IPV4_ADDR, LITE_ATTR_PEER_STATE, LITE_ATTR_PEER_ROLE,
	 * LITE_ATTR_QPS_CONNECTED. No request attributes.
	 * Errors: EINVAL  an attribute was given; EOPNOTSUPP  not a dump.
	 */
	LITE_CMD_PEER_GET,

	/*
	 * Events, multicast to LITE_GENL_MCGRP_EVENTS; never requests (a
	 * request with one of these commands fails with EOPNOTSUPP).
	 * Every event has LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION and
	 * LITE_ATTR_IPV4_ADDR of the peer.
	 *
	 * PEER_CONNECTED: all qps_per_peer connections to the peer are up;
	 *   also LITE_ATTR_QPS_CONNECTED.
	 * PEER_FAILED: a connection to the peer was lost (the peer goes back
	 *   to connecting), or connecting failed for a reason other than the
	 *   peer not knowing this node yet; at most once until the peer is
	 *   connected again. Also LITE_ATTR_QP_INDEX, LITE_ATTR_REASON
	 *   (ECONNRESET disconnected, ECONNREFUSED rejected, ESTALE incarnation
	 *   mismatch, EPROTO protocol mismatch, EHOSTUNREACH or ETIMEDOUT
	 *   unreachable, ENODEV RDMA device removed, or a local errno) and
	 *   LITE_ATTR_QPS_CONNECTED (how many are still up).
	 * PEER_REMOVED: the peer was removed here (LITE_CMD_PEER_REMOVE or a
	 *   new incarnation); its connections are being torn down. State and
	 *   LITE_ATTR_QPS_CONNECTED are what it had until then.
	 */
	LITE_CMD_EVENT_PEER_CONNECTED,
	LITE_CMD_EVENT_PEER_FAILED,
	LITE_CMD_EVENT_PEER_REMOVED,

	__LITE_CMD_MAX,
	LITE_CMD_MAX = __LITE_CMD_MAX - 1
};

enum lite_genl_attr {
	LITE_ATTR_UNSPEC,
	LITE_ATTR_PAD,			/* alignment padding for 64-bit values */
	LITE_ATTR_NODE_ID,		/* u32, 1..UINT32_MAX */
	LITE_ATTR_INCARNATION,		/* u64, 1..UINT64_MAX */
	LITE_ATTR_IPV4_ADDR,		/* __be32 */
	LITE_ATTR_CM_PORT,		/* u16: the rdma_cm port (reply only) */
	LITE_ATTR_QPS_PER_PEER,		/* u32 (reply only) */
	LITE_ATTR_NUM_PEERS,		/* u32 (reply only) */
	LITE_ATTR_AGENT_PORTID,		/* u32: the agent's netlink port (reply only) */
	LITE_ATTR_PEER_STATE,		/* u32: enum lite_peer_state (reply, event) */
	LITE_ATTR_PEER_ROLE,		/* u32: enum lite_peer_role (reply only) */
	LITE_ATTR_QPS_CONNECTED,	/* u32 (reply, event) */
	LITE_ATTR_QP_INDEX,		/* u32: which connection, 0-based (event) */
	LITE_ATTR_REASON,		/* u32: a positive errno (event) */

	__LITE_ATTR_MAX,
	LITE_ATTR_MAX = __LITE_ATTR_MAX - 1
};

enum lite_peer_state {
	LITE_PEER_CONNECTING = 1,	/* fewer than qps_per_peer connections up */
	LITE_PEER_CONNECTED = 2,	/* all qps_per_peer connections up */
};

enum lite_peer_role {
	LITE_PEER_ROLE_INITIATOR = 1,	/* this node connects (its id is smaller) */
	LITE_PEER_ROLE_ACCEPTOR = 2,	/* the peer connects to this node */
};

#endif /* _UAPI_LITE_H */
