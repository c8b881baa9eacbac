#!/bin/bash
# VM test: an RDMA device removed and added back under grants in use
# (issue 9 item 3). Three guests, litemgr on the host, liteagent in each.
# An LMR homed on node2 is mapped by one process on each node, node2 (the
# home) included, and each reads through its handle every 250 ms while
# node2's rxe0 is deleted and added back (`rdma link delete`, `rdma link
# add ... netdev eth0`, as tools/vm/guest.sh made it). Asserted:
#  - every read on an old handle ends, in ESTALE: EHOSTDOWN only while
#    node2 has no connection up (no QP to post on), never EIO, and none
#    waits longer than op_timeout_ms; the device removal itself returns;
#  - the peers reconnect to node2 on the new device;
#  - no QP reset storm: on each node qp_errors rises by at most its number
#    of old grants (1), and so does grants_key_refused (the first read with
#    the old key that reaches the new device revokes the grant);
#  - a new LMR on node2 works across nodes;
#  - the backstop, again with the new LMR: node3's agent stopped (so the
#    manager's revocation cannot reach it), node2's device re-added again:
#    node3's read with the old key is refused by the new device and ends
#    in ESTALE (EHOSTDOWN before node3 reconnects), grants_key_refused and
#    qp_errors rise by exactly 1 there (one QP reset for the grant);
#  - litevm's teardown fails the run on any BUG/WARNING/Oops line.
# What makes an old handle ESTALE is, first, lite.ko on the home revoking
# its local grants into the lost LMR and sending EVENT_LMR_LOST, whose
# agent tells the manager, which revokes the other nodes' grants; and, as a
# backstop, the new device refusing the old key (IB_WC_REM_ACCESS_ERR ->
# ESTALE, the grant revoked on the spot).
# Usage: tests/vm/device_readd.sh [--state DIR]   (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=device_readd
VM_GUESTS=3
VM_TIMEOUT=600
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:lite_probe)
VM_GUEST_SECS=150

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/cmd/liteop/liteop
PROBE=${LITE_BIN-}/tests/vm/lite_probe

# base_save: the counters this test bounds, before the change.
base_save() {
	local c
	for c in qp_errors grants_key_refused; do
		counter "$c"
		echo "$COUNTER" > "/tmp/readd.$c"
	done
}
# rose_at_most NAME MAX: debugfs NAME rose by at most MAX since base_save.
rose_at_most() {
	local base
	read -r base < "/tmp/readd.$1"
	counter "$1"
	echo "        $1: $base -> $COUNTER"
	((COUNTER - base <= $2))
}

# old_handle_loop NAME SECS READY: maps NAME (lite_probe map-loop), touches
# READY, and reads through that one handle every 250 ms until two reads in
# a row fail with ESTALE or SECS pass. Then the checks on the outcomes.
old_handle_loop() {
	local name=$1 secs=$2 ready=$3 fifo=/tmp/readd.fifo out=/tmp/readd.out
	local pid fd line n=0 ok=0 down=0 stale=0 other="" last="" prev=""
	local deadline t0 slowest=0 op_ms
	read -r op_ms < /sys/module/lite/parameters/op_timeout_ms
	rm -f "$fifo" "$out"
	mkfifo "$fifo"
	"$PROBE" map-loop "$name" < "$fifo" > "$out" 2>&1 &
	pid=$!
	exec {fd}> "$fifo"
	echo >&"$fd"
	vm_wait_until 20 grep -q '^read: ' "$out" || true
	check "the map and a first read work: $(head -n 2 "$out" | tr '\n' ' ')" \
		grep -qx 'read: OK' "$out"
	: > "$ready"
	deadline=$((SECONDS + secs))
	while ((SECONDS < deadline)); do
		now_ms
		t0=$NOW_MS
		echo >&"$fd"
		n=$((n + 1))
		# The reply to this line: the n-th "read:" line (the first was
		# the check above, so n + 1).
		until (($(grep -c '^read: ' "$out") > n)); do
			kill -0 "$pid" 2> /dev/null || break
			nap 0.02
		done
		now_ms
		((NOW_MS - t0 > slowest)) && slowest=$((NOW_MS - t0))
		line=$(grep '^read: ' "$out" | tail -n 1)
		prev=$last
		last=${line#read: }
		case $last in
		OK) ok=$((ok + 1)) ;;
		EHOSTDOWN) down=$((down + 1)) ;;
		ESTALE) stale=$((stale + 1)) ;;
		*) other+=" $last" ;;
		esac
		[[ $last == ESTALE && $prev == ESTALE ]] && break
		nap 0.25
	done
	exec {fd}>&-
	wait "$pid" 2> /dev/null || true
	echo "        $n reads on the old handle: $ok OK, $down EHOSTDOWN, $stale ESTALE, other:${other:- none}; slowest ${slowest} ms"
	check "no read on the old handle failed otherwise (no EIO)" test -z "$other"
	check "the old handle ends in ESTALE" test "$last" = ESTALE
	check "no read waited longer than op_timeout_ms ($op_ms ms)" \
		test "$slowest" -le "$op_ms"
}

# rxe_readd: deletes rxe0 and adds it back on eth0, waiting for its RoCE
# GID as tools/vm/guest.sh does.
rxe_readd() {
	local ip a b c d gid rc=0
	now_ms
	local t0=$NOW_MS
	timeout 60 rdma link delete rxe0 || rc=$?
	now_ms
	check "rdma link delete rxe0 returns (status $rc, $((NOW_MS - t0)) ms)" test "$rc" -eq 0
	nap 2
	check "rdma link add rxe0 type rxe netdev eth0" rdma link add rxe0 type rxe netdev eth0
	ip=$(ip -4 -o addr show dev eth0 | awk '{print $4}')
	IFS=. read -r a b c d <<< "${ip%/*}"
	gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
	check "the new rxe0 has its RoCE GID $gid" \
		vm_wait_until 30 grep -qx "$gid" /sys/class/infiniband/rxe0/ports/1/gids/*
}

# agent_signal SIG: sends SIG to this guest's liteagent (the one this suite
# started through litecluster.sh; found by its executable, not by name).
agent_signal() {
	local d n=0
	# -ef compares the files, no fork per process: a readlink per /proc
	# entry took 10 s under emulation.
	for d in /proc/[0-9]*; do
		[[ $d/exe -ef $LITE_BIN/agent/liteagent ]] || continue
		kill "-$1" "${d#/proc/}" && n=$((n + 1))
	done
	check "SIG$1 sent to the agent ($n process)" test "$n" -eq 1
}
counter_rose_by() {  # NAME N
	local base
	read -r base < "/tmp/readd.$1"
	counter "$1"
	echo "        $1: $base -> $COUNTER"
	((COUNTER - base == $2))
}
backstop_counters() {
	check "grants_key_refused rose by exactly 1 (the new device refused the old key)" \
		counter_rose_by grants_key_refused 1
	check "qp_errors rose by exactly 1 (one QP reset for that grant)" \
		counter_rose_by qp_errors 1
}

new_lmr() {  # NAME HOME DATA
	check "alloc $1 on node $2 after the re-add" \
		"$LITEOP" alloc "$1" 64K --home "$2" --mode 0644
	check "write '$3' into it" "$LITEOP" write "$1" 100 --data "$3"
}
read_is() {  # NAME OFFSET DATA
	local out
	out=$("$LITEOP" read "$1" "$2" "${#3}" --access r 2>&1) || true
	echo "        read: $out"
	check "another node reads '$3' from it" test "$out" = "$3"
}
counters_bounded() {  # one old grant on this node
	check "qp_errors rose by at most 1 (one reset per old grant)" rose_at_most qp_errors 1
	check "grants_key_refused rose by at most 1" rose_at_most grants_key_refused 1
}

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------
host_main() {
	local n2 g jobs=() start job
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr on the host, liteagent on 3 guests"
	# A lease the stopped agent (the backstop below) outlives.
	lc_start 60000
	n2=$(lc_node_id 2)
	echo "== an LMR on node2 (id $n2), mapped on every node, node2 included"
	guest 1 new_lmr readd.old "$n2" "before"
	for g in 1 2 3; do
		guest "$g" base_save
		jobs[g]=$(vm_spawn "$g" old_handle_loop readd.old 90 /tmp/readd.ready)
	done
	for g in 1 2 3; do
		vm_wait_until 60 litevm exec -g "$g" -t 20 -- "test -e /tmp/readd.ready" \
			> /dev/null 2>&1 || echo "        (guest $g: the loop is not reading after 60 s)"
	done
	echo "== node2's rxe0 deleted and added back under the reads"
	start=$SECONDS
	guest 2 rxe_readd
	for g in 1 2 3; do
		vm_join "$g" "${jobs[g]}" "old_handle_loop on node$g"
	done
	echo "   every old handle ended $((SECONDS - start)) s after the removal began"
	echo "== the peers reconnect to node2's new device"
	check "every pair connected again within 60 s" lc_wait_ready 60
	echo "== no QP reset storm"
	for g in 1 2 3; do guest "$g" counters_bounded; done
	echo "== a new LMR on node2 works"
	guest 1 new_lmr readd.new "$n2" "after"
	guest 3 read_is readd.new 100 "after"

	echo "== the backstop: node3 hears of nothing (its agent stopped), node2's device re-added again"
	guest 3 base_save
	job=$(vm_spawn 3 old_handle_loop readd.new 90 /tmp/readd.ready2)
	vm_wait_until 60 litevm exec -g 3 -t 20 -- "test -e /tmp/readd.ready2" \
		> /dev/null 2>&1 || echo "        (guest 3: the loop is not reading after 60 s)"
	guest 3 agent_signal STOP
	guest 2 rxe_readd
	vm_join 3 "$job" "old_handle_loop on node3, its agent stopped"
	guest 3 agent_signal CONT
	guest 3 backstop_counters
	lc_stop
}

vm_main "$@"
