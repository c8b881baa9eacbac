#!/bin/bash
# VM test of the original LITE API (api/compat, docs/compat.md): programs
# written only against lite-lib.h (tests/vm/v0/), the way an original LITE
# user wrote them, on 3 guests with litemgr and 3 agents.
#  - a C and a C++ program built against the Debian packages
#    (tools/package.sh) with `pkg-config --cflags --libs lite` only
#    (tests/pkg/build_apps.sh), run on node1 and node3;
#  - a writer/reader pair: node1 allocates 64 KiB on node2
#    (alloc_remote_mem) and registers it (add_ask_mr_table); node2 and node3
#    are refused with a wrong password (MR_ASK_REFUSE) and for write
#    permission (MR_ASK_UNPERMITTED), read the writer's bytes, and 2 nodes x
#    4 threads x 1,000 fetch_add end at exactly 8,000;
#  - RPC: an application on node2's port 5 with 4 receiving threads (half
#    answering with reply_and_receive_message) called by 2 nodes x 3
#    threads x 200 send_reply_imm, every reply checked, plus 40 one-way
#    messages: the server counts exactly 1,200 calls and 40 messages;
#  - locks: a lock on node3 (create_lock, ask_lock), 3 nodes x 4 threads x
#    100 critical sections each a non-atomic read-modify-write of a counter:
#    exactly 1,200;
#  - dist_barrier(3) across the three nodes, 30 rounds: nobody passes early;
#  - squatting (review cp-2026-11-28 M5), as uid 1000 on node1: "node2,
#    port 9" registered there first, node2's identifier 4545 (a copy of
#    uid 1000's genuine record, pointing at its own 0666 LMR) and node3's
#    lock 77 made there with modes that let everyone use them; root's
#    compat calls on node3 and node2 refuse all three (EACCES), nothing is
#    sent to the squatter's service;
#  - the Python package (python/lite) with pytest in guest 1, LMRs on node2:
#    python/tests/test_cluster.py;
#  - cost (measured, not asserted): 8-byte read and fetch-and-add from node1
#    on node2 through libLITE (lite-bench), the compat layer and Python, in
#    3 interleaved rounds;
#  - litevm's teardown checks the guests' kernel logs.
# Usage: tests/vm/compat.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=compat
VM_GUESTS=3
VM_TIMEOUT=900
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tools/bench:lite-bench //tests/vm:v0_rw //tests/vm:v0_rpc
	//tests/vm:v0_lock //api:liblite.so.0)
VM_GUEST_SECS=300

V0=${LITE_BIN-}/tests/vm

# ---------------------------------------------------------------------------
# Guest side (compat.sh --guest FUNCTION ARGS...; see lib.sh).
# ---------------------------------------------------------------------------

# run_v0 PROGRAM ARGS...: one v0 program; its exit status is its number of
# failed checks, added to this guest function's (lib.sh's vm_guest_side
# returns VM_FAILURES, not the function's status); a program that died
# (status over 100) is one failure, named.
run_v0() {
	local rc=0
	${V0_AS-} "$V0/$1" "${@:2}" || rc=$?
	if ((rc > 100)); then
		vm_fail "$1 ${*:2}: ended with status $rc"
	else
		VM_FAILURES=$((VM_FAILURES + rc))
	fi
}

LITEOP=${LITE_BIN-}/cmd/liteop/liteop

# The squatter, uid 1000 (review cp-2026-11-28 M5).
# squatter_v0 PROGRAM ARGS...: a v0 program as uid 1000.
squatter_v0() { V0_AS=as_user run_v0 "$@"; }
# squatter_rpc NAME: uid 1000 serves NAME (echo, 0711) until it has
# served one request ("served=1 ...") or is killed.
squatter_rpc() { as_user "$LITEOP" rpc-serve "$1" --mode 0711 --count 1; }
# squat_lmrs HERE N2 N3 ID: on this node (HERE), as uid 1000, with mode 0666:
# node N2's identifier ID, a copy of uid 1000's genuine record of ID on
# HERE (squatter_v0 v0_rw serve) that names uid 1000's own LMR
# "v0/N2/lmr/1.2.3" instead; and node N3's lock 77.
squat_lmrs() {
	local rec=v0/$2/id/$4 mem=v0/$2/lmr/1.2.3
	as_user "$LITEOP" alloc "$mem" 4096 --home "$1" --mode 0666 &&
		as_user "$LITEOP" write "$mem" 8 --data squatter &&
		as_user "$LITEOP" alloc "$rec" 4096 --home "$1" --mode 0666 &&
		as_user "$LITEOP" memcpy "$rec" 0 "v0/$1/id/$4" 0 4096 &&
		as_user "$LITEOP" memset "$rec" 64 129 0 &&
		as_user "$LITEOP" write "$rec" 64 --data "$mem" &&
		as_user "$LITEOP" alloc "v0/$3/lock/77" 4096 --home "$1" --mode 0666
} > /dev/null
squat_ok() { check "uid 1000 on node$GUEST made node $2's identifier $4 and node $3's lock 77 here" squat_lmrs "$@"; }
# squat_free NAME...: uid 1000 frees its LMRs.
squat_free() {
	local name
	for name in "$@"; do
		check "uid 1000 frees $name" as_user "$LITEOP" free "$name"
	done
}

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------

# job_said GUEST JOB TEXT: the job's output so far has TEXT.
job_said() { grep -q "$3" "$LITE_VM_STATE/g$1/ctl/jobs/$2.out" 2> /dev/null; }

# v0_ready GUEST JOB WHAT: waits for a spawned program's "ready" line.
v0_ready() {
	vm_wait_until 120 job_said "$1" "$2" '^ready$' ||
		{ vm_fail "$3: no 'ready' in 120 s"; litevm wait -g "$1" -t 5 "$2" | indent || true; }
}

host_main() {
	local n1 n2 n3 rw lk bar out lock_at
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr on the host, liteagent on 3 guests"
	# shellcheck disable=SC2119  # litecluster.sh's default lease is meant
	lc_start
	n1=$(lc_node_id 1) n2=$(lc_node_id 2) n3=$(lc_node_id 3)
	echo "   node ids: node1 $n1, node2 $n2, node3 $n3"

	echo "== programs built as users build them: pkg-config --cflags --libs lite, the packages' files only"
	local dist=$LITE_VM_STATE/dist apps=$LITE_VM_STATE/apps libdir
	if "$VM_REPO/tools/package.sh" --out "$dist" --no-lintian > "$LITE_VM_STATE/package.log" 2>&1 &&
		"$VM_REPO/tests/pkg/build_apps.sh" "$dist" "$apps" | indent; then
		# The unpacked liblite0, where dpkg would have put it under $apps/root.
		libdir=$apps/root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
		check "the C program (tests/pkg/app.c) on node1, its LMR on node2" \
			out_has "C app: read back" litevm exec -g 1 -t 60 -- "LD_LIBRARY_PATH=$libdir $apps/app pkg.c node2"
		check "the C++ program (tests/pkg/app.cc) on node3, its lock on node1" \
			out_has "C++ app: locked" litevm exec -g 3 -t 60 -- "LD_LIBRARY_PATH=$libdir $apps/app_cc pkg.cc node1"
	else
		vm_fail "the packages or the programs did not build"
		tail -n 20 "$LITE_VM_STATE/package.log" | indent
	fi

	echo "== a writer and two readers (alloc_remote_mem, add_ask_mr_table, ask_lmr)"
	rw=$(vm_spawn 1 run_v0 v0_rw serve "$n2" 4242 31337 65536 /tmp/v0.stop.rw)
	v0_ready 1 "$rw" "v0_rw serve"
	guests "2 run_v0 v0_rw read $n1 4242 31337 65536 4" "3 run_v0 v0_rw read $n1 4242 31337 65536 4"
	guest 3 run_v0 v0_rw value "$n1" 4242 31337 8000

	echo "== RPC: node2 serves port 5 with 4 threads, node1 and node3 call it"
	out=$(vm_spawn 2 run_v0 v0_rpc serve 5 4 1200 40)
	v0_ready 2 "$out" "v0_rpc serve"
	guests "1 run_v0 v0_rpc call $n2 5 3 200 20" "3 run_v0 v0_rpc call $n2 5 3 200 20"
	check "the server counted exactly 1,200 calls and 40 messages" \
		vm_wait_until 60 job_said 2 "$out" '^served=1200 messages=40$'
	vm_join 2 "$out" "v0_rpc serve"

	echo "== a lock on node3 under contention: 3 nodes x 4 threads x 100"
	lk=$(vm_spawn 1 run_v0 v0_lock create "$n3" 99 777 /tmp/v0.stop.lock)
	v0_ready 1 "$lk" "v0_lock create"
	lock_at=$(grep -o '^lock=[0-9]*:[0-9]*' "$LITE_VM_STATE/g1/ctl/jobs/$lk.out" | cut -d= -f2)
	echo "   the lock is ${lock_at:-?} (node:index)"
	guests "1 run_v0 v0_lock contend ${lock_at%:*} ${lock_at#*:} $n1 99 777 4 100" \
		"2 run_v0 v0_lock contend ${lock_at%:*} ${lock_at#*:} $n1 99 777 4 100" \
		"3 run_v0 v0_lock contend ${lock_at%:*} ${lock_at#*:} $n1 99 777 4 100"
	guest 2 run_v0 v0_rw value "$n1" 99 777 1200

	echo "== dist_barrier(3) on 3 nodes, 30 rounds"
	bar=$(vm_spawn 1 run_v0 v0_rw serve "$n1" 4343 5 4096 /tmp/v0.stop.bar)
	v0_ready 1 "$bar" "v0_rw serve (the barrier's counter)"
	guests "1 run_v0 v0_lock barrier 3 30 $n1 4343 5" "2 run_v0 v0_lock barrier 3 30 $n1 4343 5" \
		"3 run_v0 v0_lock barrier 3 30 $n1 4343 5"

	echo "== the Python package (python/tests/test_cluster.py, pytest in guest 1)"
	out=$(litevm exec -g 1 -t "$VM_GUEST_SECS" -- "cd $VM_REPO/python &&
		PYTHONDONTWRITEBYTECODE=1 LITE_PY_CLUSTER=1 LITE_PY_HOME=$n2 \
		LITE_LIBRARY=$LITE_BIN/api/liblite.so.0 \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/test_cluster.py 2>&1") || true
	printf '%s\n' "$out" | tail -n 30 | indent
	check "pytest: every cluster test passed, none skipped" \
		grep -qE '^[0-9]+ passed in ' <<< "$out"

	echo "== cost per operation, node1 -> node2: libLITE (lite-bench), compat, Python; 3 rounds"
	litevm exec -g 1 -t 60 -- "$LITE_BIN/cmd/liteop/liteop alloc cost.lmr 4096 --home node2" > /dev/null ||
		vm_fail "liteop alloc cost.lmr"
	local round
	for round in 1 2 3; do
		echo "   round $round"
		litevm exec -g 1 -t 120 -- "$LITE_BIN/tools/bench/lite-bench --lmr cost.lmr --ops read,faa \
			--sizes 8 --iters 300" 2>&1 | grep -E '^(read|faa) ' |
			awk '{ printf "libLITE %-5s 8 B  p50 %.1f us  p99 %.1f us  cpu %.1f us/op\n", $1, $3, $4, $7 }' |
			indent || vm_fail "lite-bench"
		guest 1 run_v0 v0_rw bench "$n1" 4242 31337 300
		litevm exec -g 1 -t 120 -- "cd $VM_REPO/python && PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 \
			LITE_LIBRARY=$LITE_BIN/api/liblite.so.0 /usr/bin/python3 examples/bench.py \
			--iters 300 cost.lmr" 2>&1 | indent || vm_fail "python bench"
	done
	litevm exec -g 1 -t 60 -- "$LITE_BIN/cmd/liteop/liteop free cost.lmr" > /dev/null ||
		vm_fail "liteop free cost.lmr"

	echo "== squatting (review cp-2026-11-28 M5): uid 1000 on node1 takes node2's port, identifier, node3's lock"
	local sq sqrec
	sq=$(vm_spawn 1 squatter_rpc "v0/$n2/port/9")
	vm_wait_until 60 job_said 1 "$sq" '^serving=' || vm_fail "uid 1000's rpc-serve v0/$n2/port/9 did not start"
	sqrec=$(vm_spawn 1 squatter_v0 v0_rw serve "$n1" 4545 99 4096 /tmp/v0.stop.squat)
	v0_ready 1 "$sqrec" "uid 1000's v0_rw serve (its genuine record)"
	guest 1 squat_ok "$n1" "$n2" "$n3" 4545
	guest 3 run_v0 v0_rpc squatted "$n2" 9
	guest 3 run_v0 v0_rw squatted "$n2" 4545 99
	guest 2 run_v0 v0_lock squatted "$n3" 77
	check "the squatter's service got no request (no 'served=' from rpc-serve --count 1)" \
		bash -c "! grep -q '^served=' '$LITE_VM_STATE/g1/ctl/jobs/$sq.out'"
	litevm kill -g 1 "$sq" || vm_fail "litevm kill (uid 1000's rpc-serve)"
	litevm wait -g 1 -t 30 "$sq" > /dev/null 2>&1 || true
	litevm exec -g 1 -t 20 -- "touch /tmp/v0.stop.squat"
	vm_join 1 "$sqrec" "uid 1000's v0_rw serve"
	guest 1 squat_free "v0/$n2/id/4545" "v0/$n2/lmr/1.2.3" "v0/$n3/lock/77"

	echo "== the owners exit: their LMRs go with them"
	litevm exec -g 1 -t 20 -- "touch /tmp/v0.stop.rw /tmp/v0.stop.lock /tmp/v0.stop.bar"
	vm_join 1 "$rw" "v0_rw serve"
	vm_join 1 "$lk" "v0_lock create"
	vm_join 1 "$bar" "v0_rw serve (barrier)"
	check "no LMR of the writers is left (litectl lmrs)" \
		bash -c "! '$LITE_BIN/cmd/litectl/litectl' lmrs | grep -E 'v0/[0-9]+/(lmr|id)/'"

	lc_stop
}

vm_main "$@"
