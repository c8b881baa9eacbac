#!/bin/bash
# VM peers test: three guests, lite.ko's generic netlink family and its RC
# connections between nodes, driven with litenl.
#  - bad input is refused with the documented errno and the kernel's
#    message: peer before node, node id 0, incarnation 0, bad address,
#    address not on this node, unknown and misplaced attributes, no
#    CAP_NET_ADMIN, duplicate / stale / self / same-address peers, removing
#    an unknown peer, changing the identity with peers, bad module params;
#  - peers added in different orders on different nodes (an initiator
#    before its acceptor, acceptors before their initiator): every pair ends
#    up with exactly K connected RC QPs (rdma resource show: type RC, state
#    RTS; litenl peers; debugfs), K x (N-1) per node; prints how long that
#    took;
#  - LITE_CMD_PEER_PROBE: connected peers acknowledge (litenl peer probe),
#    an unknown one is ENOENT, nobody gets EPERM; a peer cut off (its
#    neighbour entry pointed nowhere) is EHOSTDOWN within 3 s, and the mesh
#    is whole again once the route is back;
#  - an attached agent owns the node (others get EBUSY) and is detached
#    when it detaches or when its socket closes;
#  - removing a peer: its QPs are gone on both sides, an event on each;
#  - a node coming back with a new incarnation: the old one is replaced
#    (event) and the new one connected (event);
#  - the RDMA device removed under live connections (rdma link delete) and
#    added back: QPs and listener go, and come back by themselves;
#  - rmmod with live peers (and with a connect retry pending) is clean and
#    the other nodes get a "failed" event;
#  - litevm's teardown fails the run on any BUG/WARNING/Oops/refcount line.
# Usage: tests/vm/peers.sh [--state DIR]    (needs root and tools/setup.sh)
#
# In the TCG guests every process costs ~0.3 s, so the guest side uses bash
# builtins wherever it can.
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=peers
VM_GUESTS=3
VM_TIMEOUT=600
VM_TARGETS=(//kmod:lite_ko //cmd/litenl)
VM_GUEST_ENV=(K LITE_ATTR_NODE_ID LITE_ATTR_PEER_STATE)
K=${K:-2}  # the qps_per_peer default, which litevm loads lite.ko with

# ---------------------------------------------------------------------------
# Guest side: `peers.sh --guest FUNCTION ARGS...` (see lib.sh). Each function
# prints ok/FAIL lines; the exit status is the failure count.
# ---------------------------------------------------------------------------
ip_of() { IP=10.211.0.$((10 + $1)); }
ip_of "${GUEST:-0}"
ME=$IP

# json_has PATTERN LITENL_ARGS...: litenl's output contains PATTERN.
json_has() {
	local pattern=$1 out
	shift
	out=$("$LITENL" "$@") || return 1
	[[ $out == *"$pattern"* ]] || { echo "        $out"; return 1; }
}
count_qps() {  # QPS: RC QPs in RTS on this node, less its loopback QPs
	qp_census    # and the registration QP of key_mode=lmr
	QPS=$((RC_QPS - LOOPBACK - REG_QPS))
}
peer_is() {  # peer_is NODE_ID STATE INCARNATION QPS (from $PEERS)
	local s i q
	peer_field "$1" state; s=$REPLY
	peer_field "$1" incarnation; i=$REPLY
	peer_field "$1" qps_connected; q=$REPLY
	[[ $s/$i/$q == "$2/$3/$4" ]]
}

node_set() {  # node_set INCARNATION
	check "node set --id $GUEST --incarnation $1 --addr $ME" \
		litenl_ok node set --id "$GUEST" --incarnation "$1" --addr "$ME"
	check "node set again with the same identity succeeds" \
		litenl_ok node set --id "$GUEST" --incarnation "$1" --addr "$ME"
	check "node show: the identity, port 18600, K=$K" json_has \
		"\"node_id\": $GUEST, \"incarnation\": $1, \"addr\": \"$ME\"}, \"cm_port\": 18600, \"qps_per_peer\": $K," \
		node show -o json
}

node_refusals() {  # before the identity is set
	local inc=$1
	check "peer add before node set: ENXIO" \
		expect_err ENXIO "node identity is not set" peer add --id 9 --incarnation 1 --addr 10.211.0.99
	check "node set --id 0: EINVAL" \
		expect_err EINVAL "node id 0 is reserved" node set --id 0 --incarnation "$inc" --addr "$ME"
	check "node set --incarnation 0: EINVAL" \
		expect_err EINVAL "incarnation 0 is reserved" node set --id "$GUEST" --incarnation 0 --addr "$ME"
	check "node set multicast address: EINVAL" \
		expect_err EINVAL "not a unicast IPv4 address" node set --id "$GUEST" --incarnation "$inc" --addr 224.0.0.1
	check "node set address of no local RDMA device: EADDRNOTAVAIL" \
		expect_err EADDRNOTAVAIL "not on an RDMA device" node set --id "$GUEST" --incarnation "$inc" --addr 10.211.0.99
	check "unknown attribute type: EINVAL" \
		expect_err EINVAL "Unknown attribute type" --attr-u32 200=1 node set --id "$GUEST" --incarnation "$inc" --addr "$ME"
	check "attribute the command does not take: EINVAL" \
		expect_err EINVAL "Unsupported attribute" --attr-u32 "$LITE_ATTR_PEER_STATE=1" node set --id "$GUEST" --incarnation "$inc" --addr "$ME"
	check "attribute on a command that takes none: EINVAL" \
		expect_err EINVAL "Unsupported attribute" --attr-u32 "$LITE_ATTR_NODE_ID=1" node show
	check "node set without CAP_NET_ADMIN: EPERM" \
		as_nobody expect_err EPERM "" node set --id "$GUEST" --incarnation "$inc" --addr "$ME"
	check "events without CAP_NET_ADMIN: EPERM" \
		as_nobody expect_err EPERM "cannot join the events group" events --timeout 1
}

# The pair secret both ends of a pair install (lite.ko's peer_auth is on by
# default; here no manager makes them): the same 32 bytes on both sides,
# different for every pair.
pair_secret() {  # pair_secret ID ID: REPLY
	local lo=$1 hi=$2
	((lo < hi)) || { lo=$2; hi=$1; }
	printf -v REPLY '%064x' $((lo * 1000 + hi))
}

add_peers() {  # add_peers ID:INCARNATION...
	local p
	for p in "$@"; do
		ip_of "${p%:*}"
		pair_secret "$GUEST" "${p%:*}"
		check "peer add ${p%:*} (incarnation ${p#*:})" \
			litenl_ok peer add --id "${p%:*}" --incarnation "${p#*:}" --addr "$IP" --secret "$REPLY"
	done
}

remove_peers() {  # remove_peers ID...
	local p
	for p in "$@"; do
		check "peer remove $p" litenl_ok peer remove --id "$p"
	done
}

# wait_connected SECS ID:INCARNATION...: exactly these peers, each with
# K RC QPs in RTS; K x peers in total; the same in debugfs.
wait_connected() {
	local secs=$1 p ok want start
	shift
	want=$((K * $#))
	now_ms
	start=$NOW_MS
	while :; do
		ok=1
		peers_json || ok=0
		for p in "$@"; do
			peer_is "${p%:*}" connected "${p#*:}" "$K" || ok=0
		done
		count_qps
		((ok && QPS == want)) && break
		now_ms
		((NOW_MS - start < secs * 1000)) || break
		nap 0.2
	done
	now_ms
	echo "        connected after $((NOW_MS - start)) ms: $PEERS"
	for p in "$@"; do
		check "peer ${p%:*}: connected, incarnation ${p#*:}, $K QPs" \
			peer_is "${p%:*}" connected "${p#*:}" "$K"
	done
	local listed=${PEERS//[^\{]/}
	check "litenl peers lists exactly $# peer(s)" test $((${#listed} - 1)) -eq $#
	check "rdma resource show: $want RC QPs in RTS (K x $#)" test "$QPS" -eq "$want"
	local peers qps
	counter peers; peers=$COUNTER
	counter qps_connected; qps=$COUNTER
	check "debugfs: peers $#, qps_connected $want" test "$peers/$qps" = "$#/$want"
}

# Guest 1 first refuses bad node input, then sets the identity and
# adds its peers last: both its acceptors know it by then.
bringup1() {
	node_refusals 101
	node_set 101
	add_peers 2:102 3:103
	wait_connected 60 2:102 3:103
}
# Guest 2 initiates to 3 before 3 knows it, and accepts 1 before 1 adds it.
bringup2() {
	node_set 102
	add_peers 3:103 1:101
	wait_connected 60 1:101 3:103
	counter rejects_received
	check "initiator refused while its acceptor did not know it yet, then retried (rejects_received $COUNTER)" \
		test "$COUNTER" -gt 0
}
bringup3() {
	node_set 103
	nap 3
	add_peers 2:102 1:101
	wait_connected 60 1:101 2:102
}

# LITE_CMD_PEER_PROBE (guest 1): connected peers acknowledge; bad input
# and callers without CAP_NET_ADMIN are refused.
probes() {
	check "peer probe --id 2: acknowledged by incarnation 102" \
		out_has "peer 2 (incarnation 102) acknowledged in" "$LITENL" peer probe --id 2
	check "peer probe 3: acknowledged by incarnation 103" \
		out_has "peer 3 (incarnation 103) acknowledged in" "$LITENL" peer probe 3
	check "peer probe of a node that is no peer: ENOENT" \
		expect_err ENOENT "" peer probe --id 99
	check "peer probe without CAP_NET_ADMIN: EPERM" \
		as_nobody expect_err EPERM "" peer probe --id 2
}
# Guest 3's packets to node 1 go nowhere: node 1 does not acknowledge, and
# the verdict comes within 2 x peer_timeout_ms + 1 s; then the route back.
probe_cut() {
	local t0
	ip_of 1
	ip neigh replace "$IP" lladdr 02:00:00:00:00:99 dev eth0 nud permanent
	now_ms
	t0=$NOW_MS
	check "peer probe 1 while cut off from it: EHOSTDOWN" \
		expect_err EHOSTDOWN "" peer probe --id 1
	now_ms
	check "... within 3 s ($((NOW_MS - t0)) ms)" test $((NOW_MS - t0)) -le 3000
	ip neigh del "$IP" dev eth0
}
# Node 1 learns of the cut when it sends (its QPs' peers are gone): a
# probe from it, then both sides wait for the mesh to be whole again.
probe_after_cut() {
	"$LITENL" peer probe --id 3 > /dev/null 2>&1 || true
	wait_connected 60 2:102 3:103
	check "peer probe 3 after the cut: acknowledged" \
		out_has "acknowledged in" "$LITENL" peer probe --id 3
}
reconnected3() { wait_connected 60 1:101 2:102; }

wait_qps() {  # wait_qps SECS N: teardown is asynchronous
	local start
	now_ms
	start=$NOW_MS
	while count_qps && ((QPS != $2)); do
		now_ms
		((NOW_MS - start < $1 * 1000)) || break
		nap 0.2
	done
	check "rdma resource show: $2 RC QPs in RTS" test "$QPS" -eq "$2"
}

peer_state() {  # peer_state ID STATE INCARNATION QPS
	peers_json
	echo "        $PEERS"
	peer_is "$@"
}

# Once connected: what must be refused now, and agent ownership.
refusals() {
	ip_of 2
	check "duplicate peer: EEXIST" \
		expect_err EEXIST "already known with this incarnation" peer add --id 2 --incarnation 102 --addr "$IP"
	check "older incarnation: ESTALE" \
		expect_err ESTALE "newer incarnation" peer add --id 2 --incarnation 50 --addr "$IP"
	check "another peer's address: EEXIST" \
		expect_err EEXIST "another peer has this address" peer add --id 7 --incarnation 1 --addr "$IP"
	check "this node's own id: EINVAL" \
		expect_err EINVAL "this node's own" peer add --id "$GUEST" --incarnation 1 --addr 10.211.0.77
	check "peer add --id 0: EINVAL" \
		expect_err EINVAL "node id 0 is reserved" peer add --id 0 --incarnation 1 --addr 10.211.0.77
	check "peer add broadcast address: EINVAL" \
		expect_err EINVAL "not a unicast IPv4 address" peer add --id 7 --incarnation 1 --addr 255.255.255.255
	check "peer remove unknown: ENOENT" \
		expect_err ENOENT "no such peer" peer remove --id 7
	check "peer remove with another incarnation: ESTALE" \
		expect_err ESTALE "another incarnation" peer remove --id 2 --incarnation 5
	check "node set to another identity with peers: EBUSY" \
		expect_err EBUSY "remove every peer" node set --id 9 --incarnation 1 --addr "$ME"

	# An attached agent owns the node until it detaches or its socket closes.
	local ready=/tmp/agent.ready pid portid=
	"$LITENL" agent --timeout 60 --ready-file "$ready" > /tmp/agent.out &
	pid=$!
	# Whatever happens below, the agent must not outlive this check.
	# shellcheck disable=SC2064  # expanded now: $pid is a local
	trap "kill -TERM $pid 2> /dev/null" EXIT
	for _ in {1..100}; do [[ -e $ready ]] && break; nap 0.1; done
	[[ $(< /tmp/agent.out) =~ netlink\ port\ ([0-9]+) ]] && portid=${BASH_REMATCH[1]}
	check "agent attached (netlink port ${portid:-?})" test -n "$portid"
	check "node show names the agent's port" json_has "\"agent_portid\": $portid}" node show -o json
	check "peer add by another process while attached: EBUSY" \
		expect_err EBUSY "an agent is attached" peer add --id 7 --incarnation 1 --addr 10.211.0.77
	check "a second agent: EBUSY" expect_err EBUSY "another agent is attached" agent
	kill -TERM "$pid"
	check "the agent detaches on SIGTERM" wait "$pid"
	check "node show: no agent after DETACH" json_has '"agent_portid": null}' node show -o json
	check "an agent that exits without detaching" litenl_ok agent --timeout 1 --exit-without-detach
	check "node show: no agent once its socket closed (NETLINK_URELEASE)" \
		json_has '"agent_portid": null}' node show -o json
}

# listen NAME LITENL_EVENTS_ARGS...: follow events in the background
# into /tmp/NAME.out (status in /tmp/NAME.rc) once subscribed.
listen() {
	local name=$1
	shift
	("$LITENL" events --timeout 60 -o json --ready-file "/tmp/$name.ready" "$@" \
		> "/tmp/$name.out" 2>&1; echo $? > "/tmp/$name.rc") &
	for _ in {1..200}; do [[ -e /tmp/$name.ready ]] && break; nap 0.1; done
	check "listening for events ($*)" test -e "/tmp/$name.ready"
}
heard_event() {  # heard_event NAME PATTERN...
	local name=$1 out p
	shift
	# -s: the status file exists before the status is written into it.
	for _ in {1..600}; do [[ -s /tmp/$name.rc ]] && break; nap 0.1; done
	out=$(< "/tmp/$name.out")
	echo "        $out"
	[[ -s /tmp/$name.rc && $(< "/tmp/$name.rc") == 0 ]] || return 1
	for p in "$@"; do [[ $out == *"$p"* ]] || return 1; done
}
heard() {  # heard DESCRIPTION NAME PATTERN...
	local what=$1
	shift
	check "$what" heard_event "$@"
}

# Guest 1 forgets node 3.
remove3() {
	listen removed --count 1 --type removed --peer 3
	remove_peers 3
	heard "event: peer 3 removed" removed '"event": "removed", "node_id": 3, "incarnation": 103'
	wait_qps 20 "$K"
}
# ...and node 3 sees it: QPs gone, an event, still waiting for node 1.
removed_by1() {
	heard "event: peer 1 failed (ECONNRESET)" lost1 '"event": "failed", "node_id": 1, "incarnation": 101' '"reason": "ECONNRESET"'
	wait_qps 20 "$K"
	check "peer 1 is still wanted: connecting, 0 QPs" peer_state 1 connecting 101 0
}
# Node 3 comes back as incarnation 203 (without reloading lite.ko).
rejoin3() {
	remove_peers 1 2
	node_set 203
	add_peers 1:101 2:102
	wait_connected 60 1:101 2:102
}
rejoin3_seen_by2() {
	listen replaced --count 1 --type removed --peer 3
	listen rejoined --count 1 --type connected --peer 3
	add_peers 3:203
	wait_connected 60 1:101 3:203
	heard "event: node 3's old incarnation removed" replaced '"event": "removed", "node_id": 3, "incarnation": 103'
	heard "event: node 3's new incarnation connected" rejoined '"event": "connected", "node_id": 3, "incarnation": 203'
}
rejoin3_seen_by1() {
	add_peers 3:203
	wait_connected 60 2:102 3:203
}
# The RDMA device goes away under live connections and comes back: the
# QPs and the listener go with it, and come back without any command.
device_cycle() {
	local gid a b c d
	check "rdma link delete rxe0 under live connections" rdma link delete rxe0
	peers_json
	echo "        $PEERS"
	check "peer 1: connecting, 0 QPs" peer_is 1 connecting 101 0
	check "peer 2: connecting, 0 QPs" peer_is 2 connecting 102 0
	check "the node keeps its identity" json_has "\"node_id\": $GUEST, \"incarnation\": 203," node show -o json
	check "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
	IFS=. read -r a b c d <<< "$ME"
	printf -v gid '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
	for _ in {1..100}; do
		grep -qx "$gid" /sys/class/infiniband/rxe0/ports/1/gids/* 2> /dev/null && break
		nap 0.1
	done
	wait_connected 60 1:101 2:102
}
peer_lost() {  # peer_lost NAME ID QPS_LEFT: after the peer's lite.ko went away
	heard "event: peer $2 failed" "$1" "\"event\": \"failed\", \"node_id\": $2,"
	wait_qps 20 "$3"
}
peer2_lost_then_listen() {  # guest 3 next listens for node 1 going away
	peer_lost lost2 2 "$K"
	listen lost1b --count 1 --type failed --peer 1
}

last_one() {
	peer_lost lost1b 1 0
	rmmod_lite "with both peers gone"
}

module_params() {
	local ko=$LITE_BIN/kmod/lite.ko p
	for p in qps_per_peer=0 qps_per_peer=17 cm_port=0; do
		check "insmod $p is refused" insmod_refused "$ko" "$p"
	done
	check "lite.ko stays unloaded" test ! -e /sys/module/lite
}

# ---------------------------------------------------------------------------
# Host side, inside the cluster's network namespace.
# ---------------------------------------------------------------------------
host_main() {
	local t0
	# Attribute numbers from kmod/include/uapi/lite_genl.h, for the validation checks.
	LITE_ATTR_NODE_ID=$(attr_num LITE_ATTR_NODE_ID)
	LITE_ATTR_PEER_STATE=$(attr_num LITE_ATTR_PEER_STATE)

	echo "bring-up: node identities, then peers in different orders:"
	t0=$(date +%s%N)
	guests "1 bringup1" "2 bringup2" "3 bringup3"
	echo "  bring-up: all 3 nodes fully connected, $K QPs per pair, $((($(date +%s%N) - t0) / 1000000)) ms after it started"

	echo "probes: connected peers acknowledge, a cut-off one does not:"
	guest 1 probes
	guest 3 probe_cut
	guests "1 probe_after_cut" "3 reconnected3"

	echo "refusals once connected, and agent ownership (guest 1):"
	guests "1 refusals" "3 listen lost1 --count 1 --type failed --peer 1"

	echo "guest 1 removes peer 3:"
	guest 1 remove3
	guest 3 removed_by1

	echo "node 3 comes back with incarnation 203:"
	t0=$(date +%s%N)
	guests "3 rejoin3" "2 rejoin3_seen_by2" "1 rejoin3_seen_by1"
	echo "  rejoin: mesh complete again $((($(date +%s%N) - t0) / 1000000)) ms after it started"

	echo "guest 3's RDMA device goes away and comes back:"
	guest 3 device_cycle

	echo "rmmod with live peers (guest 2), then with a retry pending (guest 1):"
	guests "1 listen lost2 --count 1 --type failed --peer 2" "3 listen lost2 --count 1 --type failed --peer 2"
	guest 2 rmmod_lite "with live peers"
	guests "1 peer_lost lost2 2 $K" "3 peer2_lost_then_listen" "2 module_params"
	guest 1 rmmod_lite "with a connect retry pending"
	guest 3 last_one
}

vm_main "$@"
