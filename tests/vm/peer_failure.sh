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
#  - before the crash, node2's agent is stopped (SIGSTOP) for 3 leases and
#    then its guest's CPU hogged for 3 leases (4 busy loops at nice 0:
#    at nice -20 they starve ksoftirqd, which runs at nice 0, so lite.ko
#    itself stops answering in time and failing node2 is right, see below),
#    while the loops read and add into pf.on2 (homed on node2) through the
#    maps they took before: no operation fails, the manager makes node2
#    SUSPECT (litectl nodes says so) and never fails it, a new map of pf.on2
#    during the pause is refused at once (EAGAIN: UNAVAILABLE, "SUSPECT"),
#    and after the pause node2 recovers and a new map works (issue 36,
#    docs/controlplane.md "When a node is failed");
#  - litevm's teardown checks the survivors' kernel logs.
# Usage: tests/vm/peer_failure.sh [--state DIR]  (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=peer_failure
VM_GUESTS=3
VM_TIMEOUT=400
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:peer_loop)
VM_GUEST_SECS=120

LEASE_MS=5000         # two heartbeat intervals: 2.5 s of silence believes a report
PEER_TIMEOUT_MS=1000  # lite.ko's default
BOUND_MS=$((PEER_TIMEOUT_MS + 500))
LOOP_MAX_SECS=100     # a loop's upper bound; the host stops them (/tmp/pf.stop)
AFTER_ERROR_MS=3000   # the loops into the dead node's go on this long after their first error

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/cmd/liteop/liteop

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

map_refused_suspect() {  # NAME: a new map while its home is SUSPECT
	local out rc=0 t0
	now_ms
	t0=$NOW_MS
	out=$("$LITEOP" map "$1" 2>&1) || rc=$?
	now_ms
	echo "        $out ($((NOW_MS - t0)) ms)"
	check "a new map of $1 while its home is SUSPECT: refused, EAGAIN (UNAVAILABLE) naming SUSPECT" \
		test "$rc" != 0 -a "${out/(EAGAIN)/}" != "$out" -a "${out/SUSPECT/}" != "$out"
	# Within the 5 s a call that waited for the home's agent would take at
	# least (--request_timeout_ms); a map here takes about 2 s in this
	# guest, its CPU busy with the loops.
	check "... at once ($((NOW_MS - t0)) ms < 5000)" test $((NOW_MS - t0)) -lt 5000
}

# signal_agent TIMEOUT_PID SIG: the liteagent is the only child of its
# litevm job's `timeout` (which exec'd it through bash -c).
agent_pid() {
	local child
	# "169 ": space-separated, no newline.
	child=$(cat "/proc/$1/task/$1/children") || return 1
	child=${child%% *}
	[[ $(cat "/proc/$child/comm") == liteagent ]] || return 1
	echo "$child"
}
# pause_agent TIMEOUT_PID SECS: stops the liteagent for SECS, then lets it
# go on. One guest job, so the pause is SECS however slow the guests'
# command channel is (a litevm exec into a guest busy with the loops takes
# seconds).
pause_agent() {
	local pid
	pid=$(agent_pid "$1") || { vm_fail "no liteagent under pid $1"; return 1; }
	kill -STOP "$pid"
	echo "        liteagent (pid $pid) stopped"
	sleep "$2"
	kill -CONT "$pid"
	echo "        liteagent (pid $pid) continued after $2 s"
}

map_ok() {  # NAME
	local t0
	now_ms
	t0=$NOW_MS
	check "a new map of $1" "$LITEOP" map "$1"
	now_ms
	echo "        ($((NOW_MS - t0)) ms)"
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

# suspected_now NODE_ID: the manager logged it SUSPECT (since the last
# time it recovered or joined).
suspected_now() {
	grep -E "node $1 \('[^']*'\) (is SUSPECT|heartbeated again|joined)" \
		"$LITE_VM_STATE/litemgr.log" | tail -n 1 | grep -q "is SUSPECT"
}
listed_suspect() {  # NODE_NAME
	local out
	out=$("$LITE_BIN/cmd/litectl/litectl" nodes 2>&1) || true
	grep -E "^ *[0-9]+ +$1 " <<< "$out" | indent
	grep -qE "^ *[0-9]+ +$1 +SUSPECT" <<< "$out"
}

# recovered NODE_ID: the manager logged its recovery.
recovered() {
	grep -qE "INFO node $1 \('[^']*'\) heartbeated again after [0-9]+ ms SUSPECT" \
		"$LITE_VM_STATE/litemgr.log"
}
# failures NODE_ID: how many times the manager has failed it so far.
failures() {
	grep -cE "^[^ ]+ INFO node $1 \('[^']*'\) incarnation [0-9]+ failed: " \
		"$LITE_VM_STATE/litemgr.log" || true
}

host_main() {
	local n2 n3 g lmr job t_crash failed_at cause secs out before suspected
	local pause=$((3 * LEASE_MS / 1000))
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

	echo "== node2's agent stopped (SIGSTOP) for 3 leases ($pause s) under that traffic"
	before=$(failures "$n2")
	job=$(vm_spawn 2 pause_agent "$(cat "$LITE_VM_STATE/g2/ctl/jobs/${LC_AGENT_JOBS[2]}.pid")" "$pause")
	# From the manager's word: the job starts when the busy guest gets to it.
	vm_wait_until $((pause + 30)) suspected_now "$n2" > /dev/null 2>&1 || true
	check "node2 became SUSPECT when its lease ran out (manager log)" suspected_now "$n2"
	check "litectl nodes lists node2 SUSPECT" listed_suspect node2
	guest 1 map_refused_suspect pf.on2
	vm_join 2 "$job" pause_agent
	vm_wait_until 15 recovered "$n2" > /dev/null 2>&1 || true
	check "node2 recovered when its agent heartbeated again (MemberRecovered)" recovered "$n2"
	check "node2 was not failed (failures $before -> $(failures "$n2"))" test "$(failures "$n2")" = "$before"
	{ grep -E "node $n2 .*(SUSPECT|probe|recovered)" "$LITE_VM_STATE/litemgr.log" || true; } | head -n 5 | indent
	guest 1 map_ok pf.on2

	# Busy loops at nice 0, not -20: the kernel's deferred softirq work (rxe's
	# tasks, the NIC's receive) runs in ksoftirqd at nice 0, and beside four
	# nice -20 loops it waits on the run queue. With one more busy loop on
	# the host (#36's CI with a CPU hog), node2's own operations then took
	# up to 1.6 s, its peers' RC retries (peer_timeout_ms, 1 s) ran out, and
	# the manager failed node2 on their report: LITE's rule for a node whose
	# lite.ko does not answer, not a false failure. What this step is about
	# is an agent without CPU while lite.ko answers (docs/testing.md).
	echo "== guest 2's CPU hogged for 3 leases ($pause s): 4 busy loops"
	before=$(failures "$n2")
	suspected=$(grep -cE "WARN node $n2 .* is SUSPECT" "$LITE_VM_STATE/litemgr.log" || true)
	job=$(litevm spawn -g 2 -t 60 -- "for i in 1 2 3 4; do timeout $pause sh -c 'while :; do :; done' & done; wait")
	litevm wait -g 2 -t $((pause + 60)) "$job" > /dev/null 2>&1 || true
	sleep $((LEASE_MS / 1000))
	check "node2 was not failed under the hog (failures $before -> $(failures "$n2"))" \
		test "$(failures "$n2")" = "$before"
	echo "   node2 SUSPECT during the hog: $(($(grep -cE "WARN node $n2 .* is SUSPECT" "$LITE_VM_STATE/litemgr.log" || true) - suspected)) time(s)"

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
