/* SPDX-License-Identifier: GPL-2.0 */
/* LITE: is a peer's kernel alive? (lite_peer_probe.c) */
#ifndef LITE_PEER_PROBE_H
#define LITE_PEER_PROBE_H

#include <linux/types.h>

/*
 * Posts a zero-byte RDMA WRITE to @node_id on one of its connections and
 * waits for the acknowledgment, at most 2 * peer_timeout_ms + 1 s. 0 when
 * acknowledged: *@incarnation is the peer's and *@round_trip_ns the time
 * from the post to the completion. -ENOENT no such peer; -EHOSTDOWN no
 * connected QP to it, or it did not acknowledge (its connection is failed,
 * as for any operation); -ETIMEDOUT no verdict in time; -EINTR a fatal
 * signal; -ENOMEM, -EIO. Sleeps.
 */
int lite_peer_probe(u32 node_id, u64 *incarnation, u64 *round_trip_ns);

struct genl_info;
struct sk_buff;
/* LITE_CMD_PEER_PROBE's doit (uapi/lite.h). */
int lite_nl_peer_probe(struct sk_buff *skb, struct genl_info *info);

#endif /* LITE_PEER_PROBE_H */
