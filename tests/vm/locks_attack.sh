#!/bin/bash
# VM test of the lock service's hardening (docs/locks.md; review
# kmod-2026-11-28 H2 and M3), written as the attacks: litemgr on the host
# (lease 5 s), a liteagent with lite.ko on three guests, every lock an LMR
# homed on node1.
# H2, an unprivileged user (uid 1000) on node2 against root's locks:
#  - it opens the kernel's lock service lite.sync.<node1> as an application
#    and hand-makes lock requests (tests/vm/sync_probe forge): the open must
#    fail with EPERM; if a lite.ko without that refusal lets it through, its
#    UNLOCK/CANCEL/DIED/BARRIER frames with guessed ids 1..512 are sent and
#    must release nothing; either way root's counter run on node1 and node2
#    (a lock LMR the user cannot map, 0600) loses no increment;
#  - it leaves 48 LOCKs waiting at node1 (the node's whole wait budget
#    there, on a lock it holds itself): 16 wait (sync_waits_per_uid), 32 are
#    refused at once with EDQUOT, and root on the same node and on node3
#    still takes an unrelated lock at once (before: root's LOCK waited
#    for the budget and timed out);
# M3, a holder cut off from the home while another node waits:
#  - node3 holds a lock, node2 waits for it; node3's packets to node1 go
#    to a MAC nobody has (ip neigh) and node1 is made to notice (an RDMA
#    READ from node3 runs out of RC retries: lite.ko's own "unreachable"
#    verdict); for longer than the lease the manager hears node3's
#    heartbeats and does not fail it: node2's waiter must not get the lock;
#    the link is restored, node3 unlocks, and node2 gets the lock without
#    the owner-died mark;
#  - litevm's teardown checks the guests' kernel logs.
# Usage: tests/vm/locks_attack.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=locks_attack
VM_GUESTS=3
VM_TIMEOUT=900
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:sync_probe)
VM_GUEST_SECS=200
VM_GUEST_ENV=(N1_IP)
LEASE_MS=5000
N1_IP=${N1_IP-}

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/cmd/liteop/liteop
PROBE=${LITE_BIN-}/tests/vm/sync_probe

probe() {  # sync_probe ARGS as root: its ok/FAIL lines, its count
	local rc=0
	"$PROBE" "$@" | indent || rc=$?
	VM_FAILURES=$((VM_FAILURES + rc))
}

user_probe() {  # the same as uid 1000
	local rc=0
	as_user "$PROBE" "$@" | indent || rc=$?
	VM_FAILURES=$((VM_FAILURES + rc))
}

served() {
	check "lite.ko serves locks and barriers (lite.sync.<id> registered)" \
		vm_wait_until 30 sh -c 'dmesg | grep -q "serving locks and barriers as lite.sync."'
}

alloc() {  # NAME MODE HOME: a 4 KiB LMR of root's; prints its lmr_id
	local out rc=0
	out=$("$LITEOP" alloc "$1" 4096 --home "$3" --mode "$2" 2>&1) || rc=$?
	check "alloc $1 (4 KiB, $2) on $3" test "$rc" -eq 0
	echo "        $out"
}

# forge RPC_NAME LMR_ID: uid 1000's hand-made lock requests.
forge() { user_probe forge "$1" "$2"; }

# The wait budget: uid 1000 holds locks.quota, then 48 of its LOCKs wait.
user_hold() { as_user "$PROBE" hold locks.quota /tmp/quota.ready; }
user_waiters() { user_probe waiters locks.quota 48 10000 16 /tmp/waiters.ready; }
root_lock() {  # a free lock, taken at once while the user's waits are out
	local t0=$EPOCHREALTIME
	probe acquire locks.other 3000 clean
	echo "        took $(((${EPOCHREALTIME/./} - ${t0/./}) / 1000)) ms"
}

# M3: node3 holds locks.cut until /tmp/cut.release exists.
cut_hold() { probe hold-until locks.cut /tmp/cut.ready /tmp/cut.release; }
cut_wait() {
	probe acquire locks.cut 90000 clean
	: > /tmp/cut.acquired
}
# Everything node3 sends node1 goes to a MAC nobody has (the bridge drops
# it); the manager, on the host, is still reached. A route would not do:
# rxe keeps a connected QP's route.
cut_link() { ip neigh replace "$N1_IP" lladdr 02:00:00:00:00:99 dev eth0 nud permanent; }
restore_link() { ip neigh del "$N1_IP" dev eth0; }
not_acquired() { check "node2's waiter does not have the lock" test ! -e /tmp/cut.acquired; }
# node1 reads node3's LMR: with node3's answers lost, its RC retries
# run out and lite.ko finds node3 unreachable (its own verdict).
unreachable() {
	local try
	for try in 1 2 3; do
		echo "        node1 reads locks.n3 ($try): $("$LITEOP" read locks.n3 0 8 --hex 2>&1 | head -n 2)"
		dmesg | grep -q "got no answer within peer_timeout_ms" && break
	done
	check "node1's lite.ko found node3 unreachable (RC retries ran out)" \
		vm_wait_until 20 sh -c 'dmesg | grep -q "got no answer within peer_timeout_ms"'
}
no_removal() {  # node1 was never told node3 failed
	check "node3 was not removed from node1's peers (no manager verdict)" \
		sh -c '! dmesg | grep -q "peer node3 .* removed"'
}

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------

node_alive() {  # GUEST: the manager has the node ALIVE
	local obj
	obj=$("$LITE_BIN/cmd/litectl/litectl" nodes -o json | tr -d '\n ' |
		grep -o "{[^{}]*\"node_name\":\"$(lc_node_name "$1")\"[^{}]*}") || return 1
	echo "        $obj"
	[[ $obj == *ALIVE* ]]
}

host_main() {
	local n1 out lmr jobs jobw job1 job2 job3 t0
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	N1_IP=$(lc_guest_ip 1)
	echo "== cluster: litemgr (lease $LEASE_MS ms) on the host, liteagent on 3 guests"
	lc_start "$LEASE_MS"
	n1=$(lc_node_id 1)
	guests "1 served" "2 served" "3 served"
	out=$(litevm exec -g 1 -t 60 -- "$(vm_guest_cmd 1 alloc locks.attack 0600 node1)")
	echo "$out"
	lmr=$(grep -o 'lmr_id[^0-9]*[0-9]*' <<< "$out" | grep -o '[0-9]*$' || true)
	check "root's lock locks.attack (0600) has an LMR id ($lmr)" test -n "$lmr"
	guest 1 alloc locks.other 0666 node1
	guest 1 alloc locks.cut 0666 node1
	guest 1 alloc locks.quota 0666 node1
	guest 3 alloc locks.n3 0666 node3

	echo "== H2: uid 1000 on node2 speaks the lock protocol while root counts on node1 and node2"
	jobs=$(vm_spawn 1 probe counter locks.attack 2 300)
	job2=$(vm_spawn 2 probe counter locks.attack 2 300)
	guest 2 forge "lite.sync.$n1" "$lmr"
	vm_join 1 "$jobs" "root's counter run on node1"
	vm_join 2 "$job2" "root's counter run on node2"
	guest 1 probe value locks.attack 1200

	echo "== H2: uid 1000 leaves 48 LOCKs waiting at node1; root still locks"
	job1=$(vm_spawn 2 user_hold)
	vm_wait_until 60 litevm exec -g 2 -t 10 -- "test -e /tmp/quota.ready" ||
		vm_fail "uid 1000's holder did not take locks.quota"
	jobw=$(vm_spawn 2 user_waiters)
	vm_wait_until 90 litevm exec -g 2 -t 10 -- "test -e /tmp/waiters.ready" ||
		vm_fail "uid 1000's waiters did not start"
	echo "   root on node2 (the same node) and on node3:"
	guest 2 root_lock
	guest 3 root_lock
	vm_join 2 "$jobw" "uid 1000's 48 waiters: 16 waited, 32 EDQUOT"
	litevm kill -g 2 "$job1" > /dev/null 2>&1 || true

	echo "== M3: node3 holds a lock, node2 waits, node3 is cut off from node1"
	job3=$(vm_spawn 3 cut_hold)
	vm_wait_until 60 litevm exec -g 3 -t 10 -- "test -e /tmp/cut.ready" ||
		vm_fail "node3 did not take locks.cut"
	job2=$(vm_spawn 2 cut_wait)
	sleep 2
	guest 3 cut_link
	t0=$SECONDS
	guest 1 unreachable
	# Longer than the lease: the manager would have failed node3 by now if
	# it had stopped heartbeating; it has not, so the lock must stay.
	sleep $((LEASE_MS / 1000 + 3))
	check "the manager still has node3 alive ($((SECONDS - t0)) s after the cut)" node_alive 3
	guest 2 not_acquired
	guest 1 no_removal
	guest 3 restore_link
	litevm exec -g 3 -t 10 -- ": > /tmp/cut.release"
	vm_join 3 "$job3" "node3's holder unlocked after the link came back"
	vm_join 2 "$job2" "node2's waiter got the lock from node3's unlock, no owner-died"
	lc_stop
}

vm_main "$@"
