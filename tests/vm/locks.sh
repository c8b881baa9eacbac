#!/bin/bash
# VM test of distributed locks and barriers (issue 13): litemgr on the host,
# a liteagent with lite.ko on three guests, applications on libLITE
# (tests/vm/sync_probe). Every lock and barrier is an LMR homed on node1.
#  - every node's lite.ko serves its locks as the kernel RPC service
#    lite.sync.<node id>, registered through its agent;
#  - mutual exclusion: 3 nodes x 4 threads x 2,000 critical sections, each
#    a non-atomic read-modify-write of the lock LMR's first word: the exact
#    total, and the contended rate;
#  - the rules: ioctl fields, a read-only map (EACCES), unlock by a context
#    that does not hold the lock (EPERM), try-lock busy (EBUSY), a second
#    lock through the same context waits, a barrier's count mismatch
#    (EINVAL), a process may not register an RPC service named lite.*
#    (EPERM); the same as an unprivileged user;
#  - a holder process killed (SIGKILL): the next waiter has the lock within
#    1 s, with the owner-died indication (EOWNERDEAD);
#  - a barrier of 3 nodes x 4 threads over 100 rounds: nobody passes a round
#    before all 12 arrived;
#  - a barrier participant's process killed: the others fail with
#    ECONNABORTED instead of waiting;
#  - a freed lock LMR: its waiter gets ESTALE;
#  - uncontended lock+unlock against one fetch-and-add, node2 -> node1;
#  - node3's QEMU killed while it holds a lock and takes part in a barrier:
#    node2's waiter gets the lock with EOWNERDEAD and the barrier's other
#    participants fail with EHOSTDOWN, within the failure bound;
#  - litevm's teardown checks the guests' kernel logs.
# Usage: tests/vm/locks.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=locks
VM_GUESTS=3
VM_TIMEOUT=900
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //tools/litectl
	//tools/litenl //tools/liteop //tests/vm:sync_probe)
VM_GUEST_SECS=300
LEASE_MS=5000
# The failure bound of a crashed node: its lease, and a second for the
# grant to reach the waiter and the host to see it.
CRASH_BOUND_MS=$((LEASE_MS + 2000))

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/tools/liteop/liteop
PROBE=${LITE_BIN-}/tests/vm/sync_probe

# probe ARGS...: sync_probe prints its ok/FAIL lines; its status is the count.
probe() {
	local rc=0
	"$PROBE" "$@" | indent || rc=$?
	VM_FAILURES=$((VM_FAILURES + rc))
}

alloc() {  # NAME...: 4 KiB, mode 0666, on node1
	local name
	for name in "$@"; do
		check "alloc $name (4 KiB, 0666) on node1" "$LITEOP" alloc "$name" 4096 --home node1 --mode 0666
	done
}

served() {  # the lite.sync service of this node is registered
	check "lite.ko serves locks and barriers (lite.sync.<id> registered)" \
		vm_wait_until 30 sh -c 'dmesg | grep -q "serving locks and barriers as lite.sync."'
}

rules() {
	probe errors locks.rules lite.sync.99
	echo "   as uid 1000:"
	local rc=0
	as_user "$PROBE" errors locks.rules lite.sync.98 | indent || rc=$?
	check "the same rules for an unprivileged user ($rc failed)" test "$rc" -eq 0
}

ready_file() { vm_wait_until "$2" test -e "$1"; }

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------

# The sections and their time from the counter runs' output.
rate() {
	awk '/^sections/ { n += $2; if ($4 > ms) ms = $4 }
	     END { if (ms) printf "%d critical sections in %.1f s: %.0f per second\n", n, ms / 1000, n * 1000 / ms }'
}

host_main() {
	local n1 out job1 job2 job3 t_crash t_end start
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr (lease $LEASE_MS ms) on the host, liteagent on 3 guests"
	lc_start "$LEASE_MS"
	n1=$(lc_node_id 1)
	echo "   locks and barriers are LMRs on node1 (id $n1)"
	guests "1 served" "2 served" "3 served"
	guest 1 alloc locks.counter locks.rules locks.dead locks.node locks.bar locks.bar2 \
		locks.bar3 locks.stale locks.bench

	echo "== mutual exclusion: 3 nodes x 4 threads x 2,000 critical sections"
	start=$SECONDS
	guests "1 probe counter locks.counter 4 2000" "2 probe counter locks.counter 4 2000" \
		"3 probe counter locks.counter 4 2000" > "$LITE_VM_STATE/locks.counter"
	out=$(< "$LITE_VM_STATE/locks.counter")
	echo "$out"
	echo "   contended: $(grep -o 'sections [0-9]* in [0-9]* ms' <<< "$out" | rate) ($((SECONDS - start)) s with the exec)"
	guest 1 probe value locks.counter 24000

	echo "== the rules"
	guest 2 rules

	echo "== a holder process killed while another waits"
	guest 2 probe killed-holder locks.dead

	echo "== a barrier: 3 nodes x 4 threads x 100 rounds"
	guests "1 probe barrier locks.bar 12 4 100" "2 probe barrier locks.bar 12 4 100" \
		"3 probe barrier locks.bar 12 4 100"

	echo "== a barrier participant's process killed"
	job3=$(vm_spawn 3 probe barrier-then locks.bar2 3 hang /tmp/locks.bar2)
	job1=$(vm_spawn 1 probe barrier-then locks.bar2 3 ECONNABORTED)
	job2=$(vm_spawn 2 probe barrier-then locks.bar2 3 ECONNABORTED)
	guest 3 ready_file /tmp/locks.bar2 60
	sleep 1		# the other two wait in round 2 by then
	litevm kill -g 3 "$job3" > /dev/null 2>&1 || true
	vm_join 1 "$job1" "barrier-then ECONNABORTED"
	vm_join 2 "$job2" "barrier-then ECONNABORTED"

	echo "== a freed lock's waiter"
	guest 1 probe stale locks.stale

	echo "== uncontended lock+unlock against one fetch-and-add (node2 -> node1)"
	guest 2 probe bench locks.bench 300 3

	echo "== node3's QEMU killed while it holds a lock and takes part in a barrier"
	job3=$(vm_spawn 3 probe hold locks.node /tmp/locks.node)
	guest 3 ready_file /tmp/locks.node 60
	job2=$(vm_spawn 2 probe acquire locks.node 60000 died)
	vm_spawn 3 probe barrier-then locks.bar3 3 hang /tmp/locks.bar3 > /dev/null
	job1=$(vm_spawn 1 probe barrier-then locks.bar3 3 EHOSTDOWN)
	local jobb
	jobb=$(vm_spawn 2 probe barrier-then locks.bar3 3 EHOSTDOWN)
	guest 3 ready_file /tmp/locks.bar3 60
	sleep 1
	t_crash=$(litevm crash -g 3)
	vm_join 2 "$job2" "acquire after node3's crash"
	t_end=$(date +%s.%N)
	out=$(awk -v a="$t_crash" -v b="$t_end" 'BEGIN { printf "%d", (b - a) * 1000 }')
	echo "   node2's waiter had the lock at most $out ms after the crash (bound $CRASH_BOUND_MS ms)"
	check "... within the failure bound" test "$out" -le "$CRASH_BOUND_MS"
	vm_join 1 "$job1" "barrier-then EHOSTDOWN"
	vm_join 2 "$jobb" "barrier-then EHOSTDOWN"
	: "$job3"
	lc_stop
}

vm_main "$@"
