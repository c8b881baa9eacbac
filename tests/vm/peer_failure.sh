#!/bin/bash
# VM peer-failure test: a node crashes under traffic (issue 9, item 4).
# litemgr on the host (lease 5 s), a liteagent with lite.ko in three guests,
# lite.ko's peer_timeout_ms at its default (1000 ms):
#  - READ/FAA loops (tests/vm/peer_loop, each operation timed) from guests 1
#    and 2 into an LMR homed on guest 3 and into one homed on guest 2;
#  - guest 3's QEMU is killed (litevm crash: SIGKILL, a power cut);
#  - every operation into guest 3's LMR fails, none later than
#    peer_timeout_ms + 500 ms after it started, none hangs; they fail with
#    EHOSTDOWN (the data path's verdict, then no connection up) or ESTALE
#    (the manager's failure revoked the grant);
#  - the operations into guest 2's LMR see no error at all;
#  - lite.ko on guests 1 and 2 failed node 3's connections on its own (its
#    log says so) and the agents reported it; the manager failed node 3 with
#    FAILURE_CAUSE_PEER_REPORTED, before its lease could have run out, and
#    the suite prints how long after the crash;
#  - litevm's teardown checks the survivors' kernel logs.
# Usage: tests/vm/peer_failure.sh [--state DIR]  (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=peer_failure
VM_GUESTS=3
VM_TIMEOUT=400
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //tools/litectl
	//tools/litenl //tools/liteop //tests/vm:peer_loop)
VM_GUEST_SECS=120

LEASE_MS=5000         # two heartbeat intervals: 2.5 s of silence believes a report
PEER_TIMEOUT_MS=1000  # lite.ko's default
BOUND_MS=$((PEER_TIMEOUT_MS + 500))
LOOP_MAX_SECS=100     # a loop's upper bound; the host stops them (/tmp/pf.stop)
AFTER_ERROR_MS=3000   # the loops into the dead node's go on this long after their first error

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/tools/liteop/liteop

alloc() {  # NAME HOME
	check "alloc $1 (4 KiB, mode 0666) on $2" "$LITEOP" alloc "$1" 4096 --home "$2" --mode 0666
}

param_refused() {  # PARAM VALUE...: writing each VALUE fails
	local p=/sys/module/lite/parameters/$1 v
	shift
	for v in "$@"; do
		(echo "$v" > "$p") 2> /dev/null && return 1
	done
	return 0
}

peer_timeout_is() {  # MS
	local got
	read -r got < /sys/module/lite/parameters/peer_timeout_ms
	check "lite.ko's peer_timeout_ms is $1 (got $got)" test "$got" = "$1"
	check "peer_timeout_ms refuses 99 and 60001 (range 100..60000)" \
		param_refused peer_timeout_ms 99 60001
}

wait_files() {  # SECS FILE...: every FILE exists within SECS
	local secs=$1 f deadline
	shift
	now_ms
	deadline=$((NOW_MS + secs * 1000))
	for f in "$@"; do
		until [[ -e $f ]]; do
			now_ms
			((NOW_MS < deadline)) || { vm_fail "$f not created within $secs s"; return; }
			nap 0.2
		done
	done
	vm_ok "loops running: $*"
}

unreachable_logged() {  # NODE_NAME NODE_ID
	local log
	log=$(dmesg | grep "got no answer within peer_timeout_ms" || true)
	echo "$log" | indent
	check "lite.ko failed $1's connections itself (kernel log)" has_text "$log" "peer $1 ($2)"
}

# ---------------------------------------------------------------------------
# Host side (in the cluster's network namespace).
# ---------------------------------------------------------------------------

loop_cmd() {  # NAME: peer_loop on NAME (ready file /tmp/pf.ready.NAME)
	printf '%q %q %q %q %q %q' "$LITE_BIN/tests/vm/peer_loop" "$1" "$LOOP_MAX_SECS" \
		"$AFTER_ERROR_MS" "/tmp/pf.ready.$1" /tmp/pf.stop
}

field() {  # LINE KEY: the value of KEY=... in a peer_loop line
	local re="(^| )$2=([^ ]*)"
	[[ $1 =~ $re ]] && echo "${BASH_REMATCH[2]}"
}
# is_one_of WORD CHOICE...
is_one_of() {
	local w=$1 c
	shift
	for c in "$@"; do [[ $w == "$c" ]] && return 0; done
	return 1
}
# ms_le A B: A <= B, A a decimal like 12.3
ms_le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }

# judge GUEST LMR OUTPUT DEAD: checks one loop's line.
judge() {
	local g=$1 lmr=$2 line=$3 dead=$4 errors kind
	echo "   guest $g -> $lmr: $line"
	if [[ $line != ops=* ]]; then
		vm_fail "guest $g -> $lmr: peer_loop printed no result"
		return
	fi
	if ((dead)); then
		check "guest $g -> $lmr: operations ran before the crash ($(field "$line" ok) ok)" \
			test "$(field "$line" ok)" -gt 0
		check "guest $g -> $lmr: operations failed after it ($(field "$line" failed))" \
			test "$(field "$line" failed)" -gt 0
		check "guest $g -> $lmr: the first failure is EHOSTDOWN ($(field "$line" first_error))" \
			test "$(field "$line" first_error)" = EHOSTDOWN
		check "guest $g -> $lmr: every operation ended within $BOUND_MS ms (max $(field "$line" max_ms) ms)" \
			ms_le "$(field "$line" max_ms)" "$BOUND_MS"
		errors=$(field "$line" errors)
		for kind in ${errors//,/ }; do
			check "guest $g -> $lmr: failure ${kind%%:*} is EHOSTDOWN or ESTALE" \
				is_one_of "${kind%%:*}" EHOSTDOWN ESTALE
		done
	else
		check "guest $g -> $lmr: no operation failed ($(field "$line" ok) ok, errors $(field "$line" errors))" \
			test "$(field "$line" failed)" = 0 -a "$(field "$line" ok)" -gt 0
	fi
}

# manager_failed NODE_ID: prints "CAUSE SECONDS_SINCE_EPOCH" of the manager's
# log line that failed the node, once there is one.
manager_failed() {
	local line stamp cause
	line=$(grep -E "^[^ ]+ INFO node $1 \('[^']*'\) incarnation [0-9]+ failed: " \
		"$LITE_VM_STATE/litemgr.log" | head -n 1) || return 1
	stamp=${line%% *}
	cause=$(grep -o 'failed: FAILURE_CAUSE_[A-Z_]*' <<< "$line") || return 1
	echo "${cause#failed: } $(date -d "$stamp" +%s.%N)"
}

host_main() {
	local n2 n3 g lmr job t_crash failed_at cause secs out
	local -A jobs=()
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr (lease $LEASE_MS ms) on the host, liteagent on 3 guests"
	lc_start "$LEASE_MS"
	n2=$(lc_node_id 2) n3=$(lc_node_id 3)
	echo "   node2 is id $n2, node3 is id $n3"
	guests "1 peer_timeout_is $PEER_TIMEOUT_MS" "2 peer_timeout_is $PEER_TIMEOUT_MS" \
		"3 peer_timeout_is $PEER_TIMEOUT_MS"
	guest 1 alloc pf.on3 node3
	guest 1 alloc pf.on2 node2

	echo "== READ/FAA loops from guests 1 and 2 into pf.on3 (home node3) and pf.on2 (home node2)"
	for g in 1 2; do
		for lmr in pf.on3 pf.on2; do
			jobs[$g.$lmr]=$(litevm spawn -g "$g" -t 120 -- "$(loop_cmd "$lmr")")
		done
	done
	guests "1 wait_files 60 /tmp/pf.ready.pf.on3 /tmp/pf.ready.pf.on2" \
		"2 wait_files 60 /tmp/pf.ready.pf.on3 /tmp/pf.ready.pf.on2"
	sleep 2

	echo "== guest 3's QEMU killed under that traffic"
	t_crash=$(litevm crash -g 3)
	out=
	for _ in $(seq 300); do
		out=$(manager_failed "$n3") && break
		sleep 0.1
	done
	if [[ -n $out ]]; then
		read -r cause failed_at <<< "$out"
		secs=$(awk -v a="$t_crash" -v b="$failed_at" 'BEGIN { printf "%.2f", b - a }')
		echo "   the manager failed node3 $secs s after the crash: $cause (lease $LEASE_MS ms)"
		check "the manager failed node3 on the peers' report ($cause)" \
			test "$cause" = FAILURE_CAUSE_PEER_REPORTED
		check "... before the lease could have run out ($secs s < $((LEASE_MS / 1000)) s)" \
			ms_le "$secs" $((LEASE_MS / 1000))
	else
		vm_fail "the manager did not fail node3 within 30 s of the crash"
		lc_logs
	fi

	# The loops into node3's LMR end AFTER_ERROR_MS after their first error;
	# give them that, then stop the ones into node2's.
	sleep $((AFTER_ERROR_MS / 1000 + 1))
	for g in 1 2; do
		litevm exec -g "$g" -t 30 -- "touch /tmp/pf.stop" || vm_fail "guest $g: could not stop its loops"
	done

	echo "== every loop's operations"
	for g in 1 2; do
		for lmr in pf.on3 pf.on2; do
			out=$(litevm wait -g "$g" -t 90 "${jobs[$g.$lmr]}" 2>&1) || true
			judge "$g" "$lmr" "$(grep '^ops=' <<< "$out" || echo "$out")" \
				"$([[ $lmr == pf.on3 ]] && echo 1 || echo 0)"
		done
	done

	echo "== what lite.ko, the agents and the manager said"
	guests "1 unreachable_logged node3 $n3" "2 unreachable_logged node3 $n3"
	out=$(grep -E "found it unreachable|report" "$LITE_VM_STATE/litemgr.log" | head -n 5 || true)
	echo "$out" | indent
	check "the manager logged the agents' reports" has_text "$out" "found it unreachable on the data path"
	for g in 1 2; do
		out=$(litevm exec -g "$g" -t 20 -- "grep -E 'reported node|EHOSTDOWN' /tmp/liteagent.log | head -n 3" 2>&1 || true)
		echo "$out" | indent
		check "guest $g's agent reported node3 (id $n3) to the manager" has_text "$out" "reported node $n3 "
		check "... on lite.ko's event saying none of its QPs is up" has_text "$out" "; 0 QPs still connected"
	done
	lc_stop
}

vm_main "$@"
