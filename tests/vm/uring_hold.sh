#!/bin/bash
# VM attack test (review 2026-11-28 H1): io_uring commands whose
# completions their submitter never runs. Two guests, litemgr on the host,
# liteagent in each. On node1, uid 1000 maps an LMR homed on node2 and
# submits 8-byte READs as io_uring commands on rings with SQE128 | CQE32 |
# SINGLE_ISSUER | DEFER_TASKRUN, whose task work runs only when it waits
# for completions, and then waits for a signal instead (ring_probe hold).
#  - its commands are bounded: 16 per file (the 17th EBUSY,
#    uring_cmds_per_file), and a second file of the same uid gets EDQUOT
#    (uring_cmds_per_uid);
#  - what it holds takes nothing from anyone else: another process's 10
#    READs succeed in time (before the fix: all 32 contexts of the device
#    were held and they failed ETIMEDOUT);
#  - node1's device removed under it (`rdma link delete rxe0`) returns
#    within peer_timeout_ms plus 10 s (before: the teardown of its
#    connections waited for the held contexts, uninterruptibly, forever);
#  - rxe0 added back, the peers reconnect; the attacker, signalled, reaps
#    its 16 READs, each with its bytes (copied out of the device's context
#    when it completed), and the data path works;
#  - litevm's teardown fails the run on any BUG/WARNING/Oops line (a
#    hung-task report among them).
# Usage: tests/vm/uring_hold.sh [--state DIR]   (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=uring_hold
VM_GUESTS=2
VM_TIMEOUT=420
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:ring_probe)
VM_GUEST_SECS=120

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/cmd/liteop/liteop
RING_PROBE=${LITE_BIN-}/tests/vm/ring_probe
READY=/tmp/uring_hold.$$.ready

new_lmr() {  # NAME HOME
	check "alloc $1 on node $2, mode 0644" "$LITEOP" alloc "$1" 64K --home "$2" --mode 0644
	check "write 'held-ok!' at 0" "$LITEOP" write "$1" 0 --data "held-ok!"
}

# attacker NAME READY: uid 1000's ring_probe hold, until signalled.
attacker() {
	local rc=0
	as_user "$RING_PROBE" hold "$1" "$2" || rc=$?
	VM_FAILURES=$((VM_FAILURES + rc))
}
# others NAME: another process's READs, as root and as the attacker's uid.
others() {
	local rc=0
	"$RING_PROBE" sync "$1" || rc=$?
	as_user "$RING_PROBE" sync "$1" || rc=$((rc + $?))
	VM_FAILURES=$((VM_FAILURES + rc))
}

# link_readd: rxe0 deleted, within peer_timeout_ms + 10 s, and added back on
# eth0 (as tools/vm/guest.sh made it), with its RoCE GID.
link_readd() {
	local pt limit t0 pid ip a b c d gid rc=0
	read -r pt < /sys/module/lite/parameters/peer_timeout_ms
	limit=$((pt + 10000))
	now_ms
	t0=$NOW_MS
	rdma link delete rxe0 &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		now_ms
		((NOW_MS - t0 > limit)) && break
		nap 0.1
	done
	now_ms
	if kill -0 "$pid" 2> /dev/null; then
		vm_fail "rdma link delete rxe0 returns within $limit ms (still running after $((NOW_MS - t0)) ms)"
		return
	fi
	wait "$pid" || rc=$?
	check "rdma link delete rxe0 returns within $limit ms (status $rc, $((NOW_MS - t0)) ms)" \
		test "$rc" -eq 0
	nap 2
	check "rdma link add rxe0 type rxe netdev eth0" rdma link add rxe0 type rxe netdev eth0
	ip=$(ip -4 -o addr show dev eth0 | awk '{print $4}')
	IFS=. read -r a b c d <<< "${ip%/*}"
	gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
	check "the new rxe0 has its RoCE GID $gid" \
		vm_wait_until 30 grep -qx "$gid" /sys/class/infiniband/rxe0/ports/1/gids/*
}

release() {  # READY: SIGUSR1 to the attacker whose pid READY holds
	local pid=
	read -r pid < "$1" || true
	check "the attacker (${pid:-none}) is still there, holding its completions" \
		kill -0 "${pid:-none}"
	kill -USR1 "${pid:-none}" 2> /dev/null || true
}

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------
host_main() {
	local n2 job
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr on the host, liteagent on 2 guests"
	# shellcheck disable=SC2119  # litecluster.sh's default lease is meant
	lc_start
	n2=$(lc_node_id 2)
	guest 1 new_lmr uh.lmr "$n2"
	echo "== uid 1000 on node1: READs on DEFER_TASKRUN rings, never reaped"
	job=$(vm_spawn 1 attacker uh.lmr "$READY")
	vm_wait_until 60 litevm exec -g 1 -t 20 -- "test -s $READY" > /dev/null 2>&1 ||
		echo "        (guest 1: the attacker is not holding after 60 s)"
	echo "== another process's READs meanwhile"
	guest 1 others uh.lmr
	echo "== node1's rxe0 removed under the held completions, and added back"
	guest 1 link_readd
	check "every pair connected again within 60 s" lc_wait_ready 60
	echo "== the attacker reaps at last"
	guest 1 release "$READY"
	vm_join 1 "$job" "attacker (ring_probe hold)"
	guest 1 others uh.lmr
	lc_stop
}

vm_main "$@"
