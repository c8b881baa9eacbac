/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * LITE's generic netlink family: the second ABI, between lite.ko and the
 * node agent (liteagent, litenl). Included by uapi/lite.h; never include
 * this header alone.
 */
#ifndef _UAPI_LITE_GENL_H
#define _UAPI_LITE_GENL_H

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
 * naming the attribute -- or with ERANGE where the kernel's netlink policy
 * check measures the attribute itself and says so: an exact-length binary
 * attribute of another length (LITE_ATTR_PEER_SECRET: "binary attribute
 * size out of range"), a nest too short to hold an attribute header
 * (LITE_ATTR_CHUNKS: "Attribute failed policy validation"), and the other
 * length checks the netlink core makes before lite.ko sees the message
 * (lib/nlattr.c). Treat EINVAL and ERANGE alike: the message was malformed
 * and changed nothing. Every value is range-checked (below). Errors come
 * back as a negative errno in the netlink ACK, with a message in the
 * NLMSGERR_ATTR_MSG extended-ack attribute (ask for it with the
 * NETLINK_EXT_ACK socket option).
 *
 * Ownership. Commands that change state need CAP_NET_ADMIN (EPERM
 * otherwise), and so do the dumps of LMRs and grants (LMR_GET, GRANT_GET:
 * memory keys, chunk addresses, other users' ids), whatever peer_auth
 * says. NODE_GET and PEER_GET are open to any user and leave out
 * what is not theirs to see (the agent's netlink port); neither carries a
 * memory key, a chunk address or a grant, and nothing returns a pair
 * secret. Upcalls and events go only to the attached agent and to members
 * of the events group, both CAP_NET_ADMIN. While an agent is attached
 * (LITE_CMD_AGENT_ATTACH), only the agent's own socket may change state:
 * others get EBUSY. The agent stays
 * attached until it detaches or its netlink socket is closed (also when the
 * process dies). Peers and their connections outlive the agent: the data
 * path never waits on the control plane.
 *
 * Values:
 *   node id       u32, 1..UINT32_MAX; 0 means "no node"
 *   incarnation   u64, 1..UINT64_MAX; a node that restarts gets a larger one
 *   IPv4 address  __be32 (struct in_addr.s_addr); not 0.0.0.0/8, loopback,
 *                 multicast or 255.255.255.255
 *   pair secret   LITE_PEER_SECRET_LEN bytes, not all zero
 */
#define LITE_GENL_NAME		"lite"
#define LITE_GENL_VERSION	1
/* Multicast group for module events (LITE_CMD_EVENT_*). Joining needs CAP_NET_ADMIN. */
#define LITE_GENL_MCGRP_EVENTS	"events"

/* Queue pairs per peer: the qps_per_peer module parameter's range. */
#define LITE_QPS_PER_PEER_MAX	16
/* How many peers one node keeps at most (LITE_CMD_PEER_ADD: ENOSPC). */
#define LITE_MAX_PEERS		1024
/* The pair secret's size (LITE_ATTR_PEER_SECRET). */
#define LITE_PEER_SECRET_LEN	32

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
	 * LITE_ATTR_IPV4_ADDR (an address of this node's RDMA netdev);
	 * optional: LITE_ATTR_NODE_NAME (without it the node has no name).
	 * lite.ko starts listening with rdma_cm on that address and the
	 * cm_port module parameter. Setting the identity it already has
	 * succeeds and changes nothing but the name (it listens again if its
	 * RDMA device had gone away); another identity needs every peer
	 * removed first, and if setting it fails the node has no identity.
	 * Errors: EPERM          no CAP_NET_ADMIN;
	 *         EINVAL         an attribute is missing, unknown or out of range;
	 *         EEXIST         a peer has this name;
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
	 * the identity is set, and LITE_ATTR_NODE_NAME if it has a name;
	 * LITE_ATTR_AGENT_PORTID while an agent is attached, to callers with
	 * CAP_NET_ADMIN only; LITE_ATTR_KEY_MODE (enum lite_key_mode, the
	 * key_mode module parameter).
	 * Errors: EINVAL  an attribute was given; ENOMEM.
	 */
	LITE_CMD_NODE_GET,

	/*
	 * LITE_CMD_PEER_ADD (CAP_NET_ADMIN): connect to another node.
	 * Attributes (all required): LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION,
	 * LITE_ATTR_IPV4_ADDR; optional: LITE_ATTR_NODE_NAME, the peer's name
	 * (for LITE_IOC_NODE_LOOKUP and log lines), and LITE_ATTR_PEER_SECRET,
	 * the secret the cluster manager made for this pair of incarnations.
	 * The node with the smaller id initiates qps_per_peer RC connections;
	 * the other accepts them. A larger incarnation than the known one
	 * replaces the peer: its old connections are torn down
	 * (LITE_CMD_EVENT_PEER_REMOVED) and new ones made.
	 *
	 * The secret is write-only: no command returns it. With the peer_auth
	 * module parameter on, every connection to and from the peer proves
	 * both ends hold it (docs/kernel-peers.md, "Peer authentication"); a
	 * peer added without one is never connected to and its requests are
	 * refused (LITE_REFUSAL_NO_KEY) until a PEER_ADD gives one. Adding
	 * the same peer again (same id, incarnation, address and name) with a
	 * secret replaces the secret and changes nothing else: connected QPs
	 * stay. With peer_auth off the secret is checked and ignored.
	 * Errors: EPERM    no CAP_NET_ADMIN;
	 *         EINVAL   an attribute is missing, unknown or out of range, or
	 *                  names this node itself (its id, address or name);
	 *         ENXIO    the node identity is not set (LITE_CMD_NODE_SET first);
	 *         EEXIST   the peer is known with this incarnation already (and
	 *                  no secret is given to replace), or another peer has
	 *                  this address or this name;
	 *         ESTALE   the peer is known with a larger incarnation;
	 *         ENOSPC   LITE_MAX_PEERS peers exist;
	 *         EBUSY    an agent is attached and the caller is not it;
	 *         EOPNOTSUPP  (peer_auth on) the kernel has no hmac(sha256);
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
	 * LITE_ATTR_QPS_CONNECTED, LITE_ATTR_PEER_REFUSALS, LITE_ATTR_NODE_NAME
	 * if the peer has a name, and, when a connection with the peer was
	 * refused since it was last connected, LITE_ATTR_PEER_LAST_REFUSAL
	 * and LITE_ATTR_PEER_REFUSED_BY (who refused). No request attributes.
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
	 *   mismatch, EPROTO protocol mismatch, EKEYREJECTED authentication
	 *   failed either way, ENOKEY no pair secret on one side,
	 *   EHOSTUNREACH or ETIMEDOUT unreachable, ENODEV RDMA device removed,
	 *   EHOSTDOWN the peer stopped answering on the data path: a QP's
	 *   retries ran out within peer_timeout_ms and every connection to
	 *   it was failed, its operations with EHOSTDOWN; sent for each such
	 *   verdict even when an earlier loss was reported,
	 *   or a local errno) and
	 *   LITE_ATTR_QPS_CONNECTED (how many are still up).
	 * PEER_REMOVED: the peer was removed here (LITE_CMD_PEER_REMOVE or a
	 *   new incarnation); its connections are being torn down. State and
	 *   LITE_ATTR_QPS_CONNECTED are what it had until then.
	 */
	LITE_CMD_EVENT_PEER_CONNECTED,
	LITE_CMD_EVENT_PEER_FAILED,
	LITE_CMD_EVENT_PEER_REMOVED,

	/*
	 * LMR memory this node hosts. The agent allocates it when the cluster
	 * manager asks (AllocateLmrMemory) and frees it when the LMR is gone.
	 * Memory comes from the kernel in physically contiguous chunks of at
	 * most 4 MiB, zeroed, DMA-mapped on the node's RDMA device; all LMRs
	 * together are bounded by the lmr_quota_mib module parameter.
	 *
	 * LITE_CMD_LMR_ALLOC (CAP_NET_ADMIN): LITE_ATTR_LMR_ID, LITE_ATTR_NAME,
	 * LITE_ATTR_SIZE, LITE_ATTR_UID, LITE_ATTR_GID, LITE_ATTR_MODE (all
	 * required). Reply: LITE_ATTR_MEMORY_KEY, LITE_ATTR_READ_KEY
	 * (key_mode=lmr only) and LITE_ATTR_CHUNKS. With
	 * key_mode=global the key is the device's global rkey and the chunks
	 * are the DMA addresses of the memory's chunks. With key_mode=lmr the
	 * LMR is its own memory region: the key is its rkey, the read key the
	 * rkey of a second, read-only region over the same pages, and
	 * LITE_ATTR_CHUNKS holds one chunk, the region's start address and
	 * LITE_ATTR_SIZE bytes (the region's addresses are contiguous whatever
	 * the pages); the same in LITE_CMD_LMR_GET. A peer posts with that key
	 * at those addresses in both modes.
	 * Errors: EPERM, EBUSY as above; EINVAL bad or missing attribute;
	 *         ENXIO node identity not set; ENODEV no RDMA device with its
	 *         memory keys ready (lite_device_info.flags) under the node's
	 *         address; EEXIST lmr_id is hosted already; ENOSPC over the
	 *         quota; ENOMEM (also, key_mode=lmr: more pages than one memory
	 *         region of the device takes, max_fast_reg_page_list_len pages
	 *         of at most 4 MiB); EIO, ETIMEDOUT (key_mode=lmr) the region's
	 *         registration work request failed or did not complete;
	 *         EAGAIN (or another netlink error) the reply could not be
	 *         queued to the sender: the allocation was undone, nothing is
	 *         hosted under lmr_id.
	 * An LMR is hosted (listed, counted against the quota, mappable) only
	 * once its reply is queued, so an error never leaves memory behind.
	 */
	LITE_CMD_LMR_ALLOC,

	/*
	 * LITE_CMD_LMR_FREE (CAP_NET_ADMIN): LITE_ATTR_LMR_ID. Grants on this
	 * node into the LMR are revoked (ESTALE) and the memory is freed once
	 * none of them holds it (each does until its handle is unmapped or
	 * its file closed, and its operations have ended). Until then it
	 * still counts against lmr_quota_mib: the free makes room only when
	 * the pages go. A later LMR_ALLOC or MAP answer for the id sees it
	 * gone at once. Before anything changes, the command waits until
	 * every connection closed so far (a removed peer's, say) has had its
	 * QP destroyed, so a holder the manager counts as acknowledged because
	 * it failed has no QP left into this node when the pages go. With
	 * key_mode=lmr the LMR's memory region is invalidated and deregistered
	 * before its pages are freed: a work request with its old key fails
	 * at the poster (remote access error) instead of reaching them.
	 * With LITE_ATTR_QUARANTINE (flag) the pages are never given back to
	 * the kernel while lite.ko is loaded: the cluster manager could not
	 * prove that no node can still reach them (a holder neither
	 * acknowledged its revocation nor failed within the fence timeout).
	 * The LMR leaves the table as above; its memory stays counted against
	 * lmr_quota_mib and in debugfs (lmrs_quarantined, quarantined_bytes),
	 * a warning names it, and it is freed at module unload, after every
	 * queue pair is gone. It does not wait for closed connections; with
	 * key_mode=lmr its region is invalidated at once.
	 * Errors: EPERM, EBUSY, EINVAL; ERANGE a QUARANTINE flag with a payload;
	 *         ENOENT not hosted here; EINTR a fatal signal while waiting
	 *         for closed connections (nothing freed).
	 */
	LITE_CMD_LMR_FREE,

	/*
	 * LITE_CMD_LMR_UPDATE (CAP_NET_ADMIN): the manager's view of a hosted
	 * LMR changed (after a manager restart it may get a new id and epoch).
	 * LITE_ATTR_LMR_ID (required, the id it is hosted under now),
	 * LITE_ATTR_NEW_LMR_ID and LITE_ATTR_EPOCH (optional).
	 * LITE_ATTR_RELEASING (flag, optional): the manager has freed the LMR
	 * and its home waits for LITE_CMD_LMR_FREE; sticky, nothing clears
	 * it. lite.ko keeps hosting the memory as before (grants, MAP answers
	 * and LMR_FREE unchanged); it only remembers, so an agent that
	 * restarts before the free re-registers the LMR as releasing, never
	 * as live. Without the flag the mark is left as it is.
	 * Errors: EPERM, EBUSY, EINVAL; ENOENT not hosted; EEXIST the new id
	 *         is another hosted LMR's.
	 */
	LITE_CMD_LMR_UPDATE,

	/*
	 * LITE_CMD_LMR_GET (CAP_NET_ADMIN: EPERM for any other caller, since
	 * it returns memory keys and chunk addresses),
	 * dump only: one message per hosted LMR
	 * in lmr id order: LITE_ATTR_LMR_ID, LITE_ATTR_NAME, LITE_ATTR_SIZE,
	 * LITE_ATTR_UID, LITE_ATTR_GID, LITE_ATTR_MODE, LITE_ATTR_EPOCH (0
	 * until set), LITE_ATTR_MEMORY_KEY, LITE_ATTR_READ_KEY (key_mode=lmr),
	 * LITE_ATTR_CHUNKS, and
	 * LITE_ATTR_RELEASING (flag) once LMR_UPDATE set it. An LMR whose
	 * chunks do not fit in one dump message goes on in the next ones:
	 * the same attributes, LITE_ATTR_CHUNKS holding the following chunks
	 * in order (GRANT_GET likewise, per grant). A chunk whose RDMA device
	 * was removed has address 0.
	 */
	LITE_CMD_LMR_GET,

	/*
	 * LITE_CMD_UPCALL: lite.ko -> the attached agent (unicast), never a
	 * request. An application's control call: LITE_ATTR_UPCALL_ID (u64,
	 * never 0, unique among pending upcalls), LITE_ATTR_UPCALL_KIND,
	 * LITE_ATTR_UID, LITE_ATTR_GID, LITE_ATTR_PID (taken from the calling
	 * task: effective ids in the initial user namespace, pid in the initial
	 * pid namespace), LITE_ATTR_GROUPS (its supplementary groups, mapped
	 * like the gid; empty when it has none) and LITE_ATTR_GROUPS_TRUNCATED
	 * when it had more than LITE_GROUPS_MAX (UNMAP: the requester's, as
	 * they were at its MAP), and per kind:
	 *   ALLOC  LITE_ATTR_NAME, LITE_ATTR_SIZE, LITE_ATTR_MODE,
	 *          LITE_ATTR_NODE_ID (the home node; 0 = this node)
	 *   MAP    LITE_ATTR_NAME, LITE_ATTR_ACCESS
	 *   UNMAP  LITE_ATTR_GRANT_ID (nobody waits for the answer)
	 *   FREE   LITE_ATTR_NAME
	 *   RPC_REGISTER  LITE_ATTR_NAME, LITE_ATTR_MODE, LITE_ATTR_RPC_PORT,
	 *          LITE_ATTR_RPC_MAX_REQUEST, LITE_ATTR_RPC_MAX_REPLY,
	 *          LITE_ATTR_RPC_DEPTH, LITE_ATTR_RPC_MAX_CLIENTS (the caller
	 *          is the owner)
	 *   RPC_UNREGISTER  LITE_ATTR_SERVICE_ID (nobody waits for the answer;
	 *          the caller's ids are the owner's)
	 *   RPC_OPEN  LITE_ATTR_NAME (the manager checks the x bit)
	 *   RPC_BIND  LITE_ATTR_SERVICE_ID, LITE_ATTR_RPC_ADDR,
	 *          LITE_ATTR_MEMORY_KEY, LITE_ATTR_RPC_SLOT_BYTES: this node's
	 *          reply slots for the service, asked after a successful
	 *          RPC_OPEN when this node has no ring at the server yet (the
	 *          manager forwards it as LITE_CMD_RPC_BIND to the server's
	 *          node)
	 * Each upcall is answered with LITE_CMD_UPCALL_COMPLETE.
	 */
	LITE_CMD_UPCALL,

	/*
	 * LITE_CMD_UPCALL_COMPLETE (the attached agent only): the answer.
	 * LITE_ATTR_UPCALL_ID and LITE_ATTR_ERRNO (0 = success, else a
	 * positive errno the application gets) are required;
	 * LITE_ATTR_MESSAGE (optional) says why in words. On success:
	 *   ALLOC  LITE_ATTR_LMR_ID
	 *   MAP    the grant: LITE_ATTR_GRANT_ID, LITE_ATTR_LMR_ID,
	 *          LITE_ATTR_NAME, LITE_ATTR_NODE_ID (home), LITE_ATTR_ACCESS,
	 *          LITE_ATTR_EPOCH, LITE_ATTR_SIZE, LITE_ATTR_MEMORY_KEY,
	 *          LITE_ATTR_CHUNKS (lengths adding up to the size, no
	 *          address + length wrapping around),
	 *          LITE_ATTR_INCARNATION (the holder's, this node's) and
	 *          LITE_ATTR_GRANTED_AT_MS; lite.ko puts it behind a new handle.
	 *   RPC_REGISTER  LITE_ATTR_SERVICE_ID
	 *   RPC_OPEN  LITE_ATTR_SERVICE_ID, LITE_ATTR_NODE_ID (the server's),
	 *          LITE_ATTR_RPC_PORT, LITE_ATTR_RPC_MAX_REQUEST,
	 *          LITE_ATTR_RPC_MAX_REPLY, LITE_ATTR_RPC_DEPTH
	 *   RPC_BIND  LITE_CMD_RPC_BIND's reply: LITE_ATTR_RPC_ADDR,
	 *          LITE_ATTR_MEMORY_KEY, LITE_ATTR_RPC_DEPTH,
	 *          LITE_ATTR_RPC_SLOT_BYTES
	 * Errors: EPERM, EINVAL; EBUSY not the attached agent; ENOENT no such
	 *         upcall is pending (answered already, or the application gave
	 *         up: the agent should give a map's grant back); EEXIST the
	 *         grant id is installed already; EMFILE the application's file
	 *         is full of handles (the application gets EMFILE); ESTALE
	 *         (MAP whose home is this node) no LMR with that id is hosted
	 *         here (freed, being freed, or its ALLOC not committed yet), or
	 *         the answer's size, key or chunks are not the hosted LMR's:
	 *         nothing is installed, the application gets ESTALE, and the
	 *         agent should give the grant back; ECANCELED (ALLOC) the
	 *         application was killed while the answer was being given, so
	 *         nobody knows the LMR: it stays allocated, and the agent
	 *         should free it (a MAP's grant in the same case is given back
	 *         by lite.ko itself, with an UNMAP upcall).
	 */
	LITE_CMD_UPCALL_COMPLETE,

	/*
	 * LITE_CMD_GRANT_REVOKE (CAP_NET_ADMIN): LITE_ATTR_GRANT_ID. Handles
	 * behind the grant fail with ESTALE from now on; the handle stays
	 * until unmapped. The answer waits (up to the larger of op_timeout_ms
	 * and peer_timeout_ms + 1 s: how long a counted operation or a posted
	 * work request can last) until no operation on the grant is in
	 * flight, also none whose caller was killed: 0 means drained, no work
	 * request of the grant is outstanding on this node and none will be
	 * posted.
	 * Errors: EPERM, EBUSY, EINVAL; ENOENT no such grant here (unmapped:
	 *         its UNMAP upcall was sent once it had drained);
	 *         ETIMEDOUT revoked, but operations are still in flight (ask
	 *         again to wait again). A grant unmapped (or its file closed)
	 *         while operations were in flight stays here, revoked, until
	 *         they end, and answers this too: only its UNMAP upcall, sent
	 *         once it has drained, gives it back. The manager must not
	 *         free or reuse the memory before 0 or that UNMAP;
	 *         EINTR the caller was killed.
	 */
	LITE_CMD_GRANT_REVOKE,

	/*
	 * LITE_CMD_GRANT_GET (CAP_NET_ADMIN: EPERM for any other caller, since
	 * a grant holds its home's memory key and chunk addresses),
	 * dump only: every grant on this node, in grant id order: those an
	 * application holds (revoked or not) and those unmapped while
	 * operations were in flight (parked: revoked, still draining; gone
	 * once their UNMAP upcall is sent, GRANT_REVOKE above). Each: the
	 * attributes of a MAP answer plus LITE_ATTR_UID, LITE_ATTR_GID,
	 * LITE_ATTR_PID (the requester) and LITE_ATTR_REVOKED (flag, when
	 * revoked).
	 */
	LITE_CMD_GRANT_GET,

	/*
	 * LITE_CMD_EVENT_LMR_LOST, multicast to LITE_GENL_MCGRP_EVENTS (never
	 * a request): a hosted LMR can no longer be reached over RDMA, so
	 * every grant into it anywhere is stale. LITE_ATTR_LMR_ID and
	 * LITE_ATTR_REASON (ENODEV: the RDMA device its memory was mapped on
	 * was removed). Grants on this node into it are revoked (ESTALE) when
	 * this is sent; the agent tells the cluster manager, which revokes
	 * the others and removes the LMR. The memory stays hosted (listed
	 * with chunk address 0, counted) until LITE_CMD_LMR_FREE.
	 */
	LITE_CMD_EVENT_LMR_LOST,

	/*
	 * RPC services (uapi/lite_rpc.h, docs/rpc.md).
	 *
	 * LITE_CMD_RPC_BIND (CAP_NET_ADMIN): the cluster manager asks the
	 * server's node to reserve a ring of the service at LITE_ATTR_RPC_PORT
	 * with LITE_ATTR_SERVICE_ID for the client node LITE_ATTR_NODE_ID
	 * (LITE_ATTR_INCARNATION), whose replies go to LITE_ATTR_RPC_ADDR with
	 * LITE_ATTR_MEMORY_KEY, LITE_ATTR_RPC_SLOT_BYTES apart (its reply
	 * slot i answers request slot i). All required. The client may be
	 * this node itself (loopback). A client node that has a ring already
	 * gets a fresh one: its old ring's requests are dropped once every
	 * connection closed so far is torn down (its old binding is dead).
	 * Reply: LITE_ATTR_RPC_ADDR and LITE_ATTR_MEMORY_KEY of the ring (its
	 * slot s at addr + s * slot bytes), LITE_ATTR_RPC_DEPTH,
	 * LITE_ATTR_RPC_SLOT_BYTES.
	 * Errors: EPERM, EBUSY, EINVAL as above; ENOENT no such service here
	 *         (or it is being unregistered); ESTALE the service id is not
	 *         the port's; EUSERS every ring is taken; EHOSTDOWN the client
	 *         is not a connected peer; EINTR.
	 */
	LITE_CMD_RPC_BIND,

	/*
	 * LITE_CMD_RPC_SERVICE_GET (CAP_NET_ADMIN), dump only: one message
	 * per service this node serves, in port order: LITE_ATTR_SERVICE_ID,
	 * LITE_ATTR_NAME, LITE_ATTR_RPC_PORT, LITE_ATTR_UID, LITE_ATTR_GID,
	 * LITE_ATTR_PID, LITE_ATTR_MODE, LITE_ATTR_RPC_MAX_REQUEST,
	 * LITE_ATTR_RPC_MAX_REPLY, LITE_ATTR_RPC_DEPTH,
	 * LITE_ATTR_RPC_MAX_CLIENTS, LITE_ATTR_RPC_CLIENTS (rings bound),
	 * LITE_ATTR_RPC_QUEUED (requests arrived, not taken yet),
	 * LITE_ATTR_RPC_SERVED (requests answered or released, total),
	 * and LITE_ATTR_RPC_CLOSING (flag) while it is being unregistered.
	 * No memory key and no address.
	 */
	LITE_CMD_RPC_SERVICE_GET,

	/*
	 * LITE_CMD_PEER_PROBE (CAP_NET_ADMIN): is the peer's kernel alive?
	 * LITE_ATTR_NODE_ID (required). A zero-byte RDMA WRITE is posted on
	 * one of the peer's connected QPs and acknowledged by its RDMA device
	 * (its kernel, for a software provider), whatever its user space does:
	 * the cluster manager asks a node's peers this before it fails the
	 * node by its lease alone (docs/controlplane.md). Takes at most
	 * 2 * peer_timeout_ms + 1 s.
	 * Reply: LITE_ATTR_NODE_ID, LITE_ATTR_INCARNATION (of the peer that
	 * acknowledged), LITE_ATTR_PROBE_NS (from the post to the completion).
	 * Errors: EPERM    no CAP_NET_ADMIN;
	 *         EINVAL   LITE_ATTR_NODE_ID missing or 0, or another attribute;
	 *         ENOENT   no such peer;
	 *         EHOSTDOWN no connected QP to the peer, or it did not
	 *                  acknowledge within its RC retries (peer_timeout_ms):
	 *                  that connection is failed, as for any operation;
	 *         ETIMEDOUT no verdict in time; EINTR a fatal signal; ENOMEM;
	 *         EIO the probe could not be posted.
	 */
	LITE_CMD_PEER_PROBE,

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
	LITE_ATTR_LMR_ID,		/* u64, not 0 */
	LITE_ATTR_NEW_LMR_ID,		/* u64, not 0 */
	LITE_ATTR_NAME,			/* string, an LMR name (LITE_NAME_MAX) */
	LITE_ATTR_SIZE,			/* u64, 1..LITE_LMR_SIZE_MAX */
	LITE_ATTR_UID,			/* u32, not (uid_t)-1 */
	LITE_ATTR_GID,			/* u32, not (gid_t)-1 */
	LITE_ATTR_PID,			/* u32 */
	LITE_ATTR_MODE,			/* u32, subset of 0666 (RPC_REGISTER: 0777) */
	LITE_ATTR_EPOCH,		/* u64 */
	LITE_ATTR_MEMORY_KEY,		/* u32: the rkey (enum lite_key_mode) */
	LITE_ATTR_CHUNKS,		/* nested: LITE_ATTR_CHUNK, 1..LITE_CHUNKS_MAX */
	LITE_ATTR_CHUNK,		/* nested: LITE_CHUNK_ATTR_* */
	LITE_ATTR_UPCALL_ID,		/* u64, not 0 */
	LITE_ATTR_UPCALL_KIND,		/* u32: enum lite_upcall_kind */
	LITE_ATTR_ACCESS,		/* u32: enum lite_access, not 0 */
	LITE_ATTR_GRANT_ID,		/* u64, not 0 */
	LITE_ATTR_ERRNO,		/* u32: 0 or a positive errno < 512 */
	LITE_ATTR_MESSAGE,		/* string, < LITE_MESSAGE_BUF bytes */
	LITE_ATTR_GRANTED_AT_MS,	/* s64: Unix time in ms */
	LITE_ATTR_REVOKED,		/* flag */
	LITE_ATTR_NODE_NAME,		/* string, a node name (LITE_NODE_NAME_MAX) */
	/* binary, LITE_PEER_SECRET_LEN bytes, not all zero (PEER_ADD only; never in a reply) */
	LITE_ATTR_PEER_SECRET,
	LITE_ATTR_PEER_LAST_REFUSAL,	/* u32: enum lite_refusal (reply only) */
	LITE_ATTR_PEER_REFUSED_BY,	/* u32: enum lite_refused_by (reply only) */
	LITE_ATTR_PEER_REFUSALS,	/* u32: refusals since the peer was added (reply only) */
	LITE_ATTR_QUARANTINE,		/* flag (LMR_FREE only) */
	LITE_ATTR_KEY_MODE,		/* u32: enum lite_key_mode (NODE_GET reply only) */
	LITE_ATTR_RELEASING,		/* flag (LMR_UPDATE, LMR_GET dump) */
	/*
	 * binary: the caller's supplementary groups as u32s in host order,
	 * at most LITE_GROUPS_MAX (upcalls that carry LITE_ATTR_UID/GID)
	 */
	LITE_ATTR_GROUPS,
	LITE_ATTR_GROUPS_TRUNCATED,	/* flag: the caller had more groups */
	/* RPC services (LITE_CMD_RPC_*, RPC upcalls) */
	LITE_ATTR_SERVICE_ID,		/* u64, not 0 */
	LITE_ATTR_RPC_PORT,		/* u32, 1..LITE_RPC_PORT_MAX */
	LITE_ATTR_RPC_MAX_REQUEST,	/* u32, 0..LITE_RPC_MSG_MAX */
	LITE_ATTR_RPC_MAX_REPLY,	/* u32, 0..LITE_RPC_MSG_MAX */
	LITE_ATTR_RPC_DEPTH,		/* u32, 1..LITE_RPC_DEPTH_MAX */
	LITE_ATTR_RPC_MAX_CLIENTS,	/* u32, 1..LITE_RPC_CLIENTS_MAX */
	LITE_ATTR_RPC_ADDR,		/* u64: an RDMA address */
	LITE_ATTR_RPC_SLOT_BYTES,	/* u32, LITE_RPC_SLOT_ALIGN..LITE_RPC_MSG_MAX */
	LITE_ATTR_RPC_CLIENTS,		/* u32 (dump only) */
	LITE_ATTR_RPC_QUEUED,		/* u64 (dump only) */
	LITE_ATTR_RPC_SERVED,		/* u64 (dump only) */
	LITE_ATTR_RPC_CLOSING,		/* flag (dump only) */
	/*
	 * u32: key_mode=lmr only, the rkey of the LMR's read-only region
	 * over the same pages (LMR_ALLOC reply, LMR_GET dump); absent in
	 * key_mode=global. Read-only grants carry it as their
	 * LITE_ATTR_MEMORY_KEY, so the home's NIC refuses writes with it.
	 */
	LITE_ATTR_READ_KEY,
	LITE_ATTR_PROBE_NS,		/* u64: PEER_PROBE's round trip (reply only) */

	__LITE_ATTR_MAX,
	LITE_ATTR_MAX = __LITE_ATTR_MAX - 1
};

/* One chunk of LMR memory: an RDMA address valid with the memory key. */
enum lite_chunk_attr {
	LITE_CHUNK_ATTR_UNSPEC,
	LITE_CHUNK_ATTR_PAD,
	LITE_CHUNK_ATTR_ADDR,		/* u64 */
	LITE_CHUNK_ATTR_LENGTH,		/* u64, not 0 */

	__LITE_CHUNK_ATTR_MAX,
	LITE_CHUNK_ATTR_MAX = __LITE_CHUNK_ATTR_MAX - 1
};

/*
 * Most chunks one LMR or grant has (16 GiB in 4 MiB chunks). A netlink
 * attribute holds at most 64 KiB, so one LITE_ATTR_CHUNKS nest carries at
 * most LITE_CHUNKS_PER_NEST chunks: replies and dumps from lite.ko continue
 * a longer list in the next message, but LITE_CMD_UPCALL_COMPLETE reads a
 * single nest today, so a grant with more chunks than that (an LMR over
 * 8 GiB, or a smaller one from fragmented memory) cannot be mapped yet.
 */
#define LITE_CHUNKS_MAX		4096
#define LITE_CHUNKS_PER_NEST	2048

/*
 * Most supplementary groups an upcall carries for its caller. A caller with
 * more sends the first LITE_GROUPS_MAX and LITE_ATTR_GROUPS_TRUNCATED; the
 * manager then never grants by the "other" class to a caller it cannot place
 * in the LMR's group (the group class might have allowed less).
 */
#define LITE_GROUPS_MAX		256

/*
 * How peers reach hosted LMR memory (the key_mode module parameter).
 * GLOBAL: one DMA memory region per RDMA device covers all of the node's
 * memory; every LMR's LITE_ATTR_MEMORY_KEY is its rkey, and it allows
 * remote writes: a read-only grant's key is write-capable (only the
 * holder's lite.ko refuses its writes). LMR: every hosted LMR is its own
 * fast-registered memory region with its own rkey, which is invalidated
 * before its pages are freed, so the NIC refuses a stale grant, and which
 * reaches only that LMR's pages, so the NIC also refuses a grant whose key
 * and addresses do not belong together; a second, read-only region over the
 * same pages (LITE_ATTR_READ_KEY, invalidated with it) is what read-only
 * grants carry, so the NIC refuses writes with it. LMR is the default.
 */
enum lite_key_mode {
	LITE_KEY_MODE_GLOBAL = 1,
	LITE_KEY_MODE_LMR = 2,
};

enum lite_upcall_kind {
	LITE_UPCALL_ALLOC = 1,
	LITE_UPCALL_MAP = 2,
	LITE_UPCALL_UNMAP = 3,
	LITE_UPCALL_FREE = 4,
	LITE_UPCALL_RPC_REGISTER = 5,
	LITE_UPCALL_RPC_UNREGISTER = 6,
	LITE_UPCALL_RPC_OPEN = 7,
	LITE_UPCALL_RPC_BIND = 8,
};

/* Ports of RPC services on one node (14 bits of the immediate). */
#define LITE_RPC_PORT_MAX	16383

enum lite_peer_state {
	LITE_PEER_CONNECTING = 1,	/* fewer than qps_per_peer connections up */
	LITE_PEER_CONNECTED = 2,	/* all qps_per_peer connections up */
};

enum lite_peer_role {
	LITE_PEER_ROLE_INITIATOR = 1,	/* this node connects (its id is smaller) */
	LITE_PEER_ROLE_ACCEPTOR = 2,	/* the peer connects to this node */
};

/*
 * Why a connection with a peer was refused (LITE_ATTR_PEER_LAST_REFUSAL).
 * Only refusals that need a person count: not the ones that resolve
 * themselves while two nodes catch up (the acceptor does not know the
 * initiator yet, no identity yet, no resources) nor the challenge of an
 * authenticated exchange. The values are those of lite.ko's rdma_cm
 * reject reasons, so both ends name a refusal alike.
 */
enum lite_refusal {
	LITE_REFUSAL_BAD_REQUEST = 1,	/* malformed, or another wire version (peer_auth?) */
	LITE_REFUSAL_WRONG_NODE = 3,	/* meant for another node */
	LITE_REFUSAL_STALE = 5,		/* an old incarnation */
	LITE_REFUSAL_PARAMS = 7,	/* qps_per_peer differs */
	LITE_REFUSAL_ROLE = 8,		/* the initiator's id is not the smaller */
	LITE_REFUSAL_ADDRESS = 10,	/* from another address than the peer's */
	LITE_REFUSAL_AUTH = 12,		/* authentication failed (pair secret mismatch?) */
	LITE_REFUSAL_PORT = 13,		/* from an unprivileged source port: not lite.ko */
	LITE_REFUSAL_NO_KEY = 14,	/* no pair secret for the peer */
	LITE_REFUSAL_REPLY_AUTH = 15,	/* the acceptor's reply failed authentication */
};

/* Who refused (LITE_ATTR_PEER_REFUSED_BY). */
enum lite_refused_by {
	LITE_REFUSED_BY_PEER = 1,	/* the peer refused this node */
	LITE_REFUSED_BY_NODE = 2,	/* this node refused the peer (or a request naming it) */
};

#endif /* _UAPI_LITE_GENL_H */
