#!/bin/bash
# VM data-path test: the whole of LITE on three guests. litemgr runs on the
# host (in the cluster's network namespace, on the bridge address), a
# liteagent with the real lite.ko module in every guest, applications use
# /dev/lite through libLITE (liteop) and raw ioctls (lite_probe).
#  - an LMR allocated on node 2 from node 1, mapped read-only on node 3:
#    node 3 reads what node 1 wrote, across a chunk-independent odd offset;
#  - a write through a read-only map: EACCES and nothing written;
#  - offset + length past the end (and overflowing): EINVAL, nothing written;
#  - invented, unmapped and other files' handles: EBADF;
#  - another user denied by the LMR's mode bits: EACCES (map and free);
#  - fetch-and-add from 3 nodes x 4 threads x 10,000: the exact sum; CAS;
#  - a 64 MiB LMR in several chunks written on one node and read back on
#    another with matching checksums; memset and memcpy across nodes;
#  - 8 processes on one node share the node's QPs (counted before/during);
#  - lite-bench and perftest between the same guests: the ratio table;
#  - freeing an LMR makes other nodes' handles ESTALE; a node whose agent
#    dies is failed by the manager and handles into its LMRs get EHOSTDOWN
#    (or ESTALE, when the manager's revocation arrives first);
#  - no agent: control calls fail with ENOTCONN at once;
#  - rmmod lite with open files is refused, and clean once they close
#    (with live peers);
#  - litevm's teardown fails the run on any BUG/WARNING/Oops line.
# Usage: tests/vm/datapath.sh [--state DIR]    (needs root and tools/setup.sh)
# shellcheck disable=SC2317
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
repo=$(cd "$(dirname "$0")/../.." && pwd)
targets=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //tools/litectl
	//tools/litenl //tools/liteop //tools/bench:lite-bench //tests/vm:lite_probe)

if [[ ${1-} != --inside && ${1-} != --guest ]]; then
	cd "$repo"
	bazel build "${targets[@]}" > /dev/null 2>&1 || bazel build "${targets[@]}"
	LITE_BIN=$(bazel info bazel-bin 2> /dev/null)
	export LITE_BIN
	exec tools/vm/litevm run -n 3 --module "$LITE_BIN/kmod/lite.ko" \
		--timeout 900 "$@" -- "$self" --inside
fi

# ---------------------------------------------------------------------------
# Guest side: `datapath.sh --guest FUNCTION ARGS...`, one round trip for many
# checks. Prints ok/FAIL lines; the exit status is the failure count.
# ---------------------------------------------------------------------------
if [[ $1 == --guest ]]; then
	shift
	set +e
	LITEOP=$LITE_BIN/tools/liteop/liteop
	PROBE=$LITE_BIN/tests/vm/lite_probe
	failures=0
	check() {  # check DESCRIPTION COMMAND...
		local what=$1
		shift
		if "$@"; then
			echo "  ok    [g$GUEST] $what"
		else
			echo "  FAIL  [g$GUEST] $what"
			failures=$((failures + 1))
		fi
	}
	# out_is EXPECTED COMMAND...: the command succeeds and prints EXPECTED.
	out_is() {
		local want=$1 out
		shift
		out=$("$@" 2>&1) || { echo "        $out"; return 1; }
		[[ $out == "$want" ]] || { echo "        got: $out"; return 1; }
	}
	# out_has PART COMMAND...: the command succeeds and its output has PART.
	out_has() {
		local want=$1 out
		shift
		out=$("$@" 2>&1) || { echo "        $out"; return 1; }
		[[ $out == *"$want"* ]] || { echo "        got: $out"; return 1; }
	}
	# fails_with ERRNO_NAME COMMAND...: exits non-zero naming the errno.
	fails_with() {
		local errno=$1 out rc=0
		shift
		out=$("$@" 2>&1) || rc=$?
		echo "        $out"
		((rc != 0)) && [[ $out == *"($errno)"* ]]
	}
	count_qps() {  # QPS: RC QPs in RTS on this node
		local line
		QPS=0
		while IFS= read -r line; do
			[[ $line == *" type RC state RTS "* ]] && QPS=$((QPS + 1))
		done <<< "$(rdma resource show qp)"
	}
	as_user() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
	fails_with_rmmod() { ! rmmod lite 2> /dev/null; }

	case $1 in
	alloc_and_write)  # NAME SIZE HOME MODE OFFSET DATA
		check "alloc $2 ($3 bytes) on node $4, mode $5" \
			"$LITEOP" alloc "$2" "$3" --home "$4" --mode "$5"
		check "alloc of the same name again: EEXIST" \
			fails_with EEXIST "$LITEOP" alloc "$2" 4096 --home "$4"
		check "write '$7' at offset $6" "$LITEOP" write "$2" "$6" --data "$7"
		check "read back the same bytes" out_is "$7" "$LITEOP" read "$2" "$6" "${#7}"
		;;
	read_only_checks)  # NAME OFFSET EXPECTED
		check "read through a read-only map sees node 1's write" \
			out_is "$4" "$LITEOP" read "$2" "$3" "${#4}" --access r
		check "write through a read-only map: EACCES" \
			fails_with EACCES "$LITEOP" write "$2" "$3" --data XXXXX --access r
		check "... and nothing was written" \
			out_is "$4" "$LITEOP" read "$2" "$3" "${#4}" --access r
		check "faa through a read-only map: EACCES" \
			fails_with EACCES "$LITEOP" faa "$2" 0 1 --access r
		;;
	probes)  # NAME: raw-ioctl handle and argument rules
		"$PROBE" bogus-handle; failures=$((failures + $?))
		"$PROBE" closed-handle "$2"; failures=$((failures + $?))
		"$PROBE" foreign-handle "$2"; failures=$((failures + $?))
		"$PROBE" past-end "$2"; failures=$((failures + $?))
		"$PROBE" bad-args "$2"; failures=$((failures + $?))
		;;
	other_user)  # PRIVATE_NAME SHARED_NAME: owned by root, 0600 and 0644
		check "uid 1000 maps a 0600 root LMR: EACCES" \
			fails_with EACCES as_user "$LITEOP" read "$2" 0 8 --access r
		check "uid 1000 maps a 0644 root LMR read-only: allowed" \
			as_user "$LITEOP" read "$3" 0 8 --access r
		check "uid 1000 maps a 0644 root LMR read-write: EACCES" \
			fails_with EACCES as_user "$LITEOP" write "$3" 0 --data x --access rw
		check "uid 1000 frees root's LMR: EACCES" \
			fails_with EACCES as_user "$LITEOP" free "$3"
		check "uid 1000 allocates its own LMR" \
			as_user "$LITEOP" alloc user1000.lmr 4096 --mode 0600
		check "root may not map uid 1000's 0600 LMR (no root override): EACCES" \
			fails_with EACCES "$LITEOP" read user1000.lmr 0 8
		check "uid 1000 frees its own LMR" as_user "$LITEOP" free user1000.lmr
		;;
	faa)  # NAME THREADS COUNT
		check "faa: $3 threads x $4 increments" \
			"$LITEOP" faa "$2" 0 1 --threads "$3" --count "$4"
		;;
	counter_is)  # NAME VALUE
		check "the counter is exactly $3" out_is "old=$3 new=$3" "$LITEOP" faa "$2" 0 0
		check "cas $3 -> 7 swaps" out_is "old=$3 swapped=yes" "$LITEOP" cas "$2" 0 "$3" 7
		check "cas $3 -> 9 does not swap now (the word is 7)" \
			out_is "old=7 swapped=no" "$LITEOP" cas "$2" 0 "$3" 9
		;;
	write_pattern)  # NAME LENGTH SEED -> prints the checksum
		# 4 MiB per operation: one 64 MiB operation can outlast
		# op_timeout_ms (5 s) on a loaded emulated guest.
		"$LITEOP" write "$2" 0 --pattern "$4" --length "$3" --chunk 4M
		;;
	read_checksum)  # NAME LENGTH SEED -> prints the checksum
		"$LITEOP" read "$2" 0 "$3" --checksum --chunk 4M
		check "every byte matches the pattern (liteop verify)" \
			"$LITEOP" verify "$2" 0 --pattern "$4" --length "$3" --chunk 4M > /dev/null
		;;
	memset_memcpy)  # BIG SHARED
		check "memset 1 MiB of $2 to 0xA5 at an odd offset" \
			"$LITEOP" memset "$2" 12345 1M 165
		check "memcpy 4 KiB from $2 (node 3) into $3 (node 2)" \
			"$LITEOP" memcpy "$3" 8192 "$2" 12345 4096
		check "the copy reads back as 0xa5 bytes" \
			out_has " a5 a5 a5 a5 a5 a5 a5 a5 " "$LITEOP" read "$3" 8192 8 --hex
		;;
	qps_shared)  # NAME: 8 processes with maps, the node's QPs unchanged
		pids=()
		count_qps; before=$QPS
		for _ in 1 2 3 4 5 6 7 8; do
			"$LITEOP" map "$2" --hold 30 > /dev/null 2>&1 &
			pids+=($!)
		done
		sleep 6
		count_qps; during=$QPS
		read -r handles < /sys/kernel/debug/lite/handles 2> /dev/null
		echo "        RC QPs in RTS: $before before, $during with 8 processes mapping; handles: ${handles:-?}"
		check "8 processes with maps use the node's $before QPs, none of their own" \
			test "$during" -eq "$before" -a "$before" -gt 0
		check "the 8 processes hold 8 handles" test "${handles:-0}" -ge 8
		rdma resource show qp | grep -c liteop > /tmp/liteop-qps || true
		check "no QP belongs to a liteop process" test "$(cat /tmp/liteop-qps)" -eq 0
		kill "${pids[@]}" 2> /dev/null
		wait
		;;
	rmmod_busy)  # NAME
		"$LITEOP" map "$2" --hold 30 > /dev/null 2>&1 &
		pid=$!
		sleep 4
		check "a process holds a map of $2" kill -0 "$pid"
		check "rmmod lite with an open file is refused" fails_with_rmmod
		check "lite.ko is still loaded" test -e /dev/lite
		kill "$pid"
		wait "$pid"
		;;
	free_lmr)  # NAME
		check "free $2" "$LITEOP" free "$2"
		;;
	rmmod_clean)
		check "rmmod lite with live peers and no open file is clean" rmmod lite
		check "/dev/lite is gone" test ! -e /dev/lite
		;;
	*) echo "unknown guest function $1"; exit 1 ;;
	esac
	exit "$failures"
fi

# ---------------------------------------------------------------------------
# Host side, inside the cluster's namespace.
# ---------------------------------------------------------------------------
# shellcheck source=tools/vm/litecluster.sh
source "$repo/tools/vm/litecluster.sh"
failures=0
guest_fn() {  # guest_fn GUEST FUNCTION ARGS...: the guest-side command line
	local g=$1
	shift
	echo "GUEST=$g LITE_BIN=$LITE_BIN $self --guest $*"
}
on() {  # on GUEST FUNCTION ARGS...
	local g=$1 rc=0
	litevm exec -g "$g" -t 300 -- "$(guest_fn "$@")" || rc=$?
	failures=$((failures + rc))
}
host_check() {
	local what=$1
	shift
	if "$@"; then echo "  ok    [host] $what"; else echo "  FAIL  [host] $what"; failures=$((failures + 1)); fi
}

echo "== cluster: litemgr on the host, liteagent --module=netlink on 3 guests"
lc_start 3000
N1=$(lc_node_id 1) N2=$(lc_node_id 2) N3=$(lc_node_id 3)
echo "   node ids: guest1=$N1 guest2=$N2 guest3=$N3"

echo "== alloc on node 2 from node 1, map read-only on node 3"
on 1 alloc_and_write dp.shared 1M "$N2" 0644 4093 "hello from node 1"
on 3 read_only_checks dp.shared 4093 "hello from node 1"
on 1 alloc_and_write dp.private 4096 "$N2" 0600 0 "secret"

echo "== handles, bounds and arguments (raw ioctls)"
on 1 probes dp.shared
on 3 probes dp.shared

echo "== another user"
on 3 other_user dp.private dp.shared

echo "== fetch-and-add from 3 nodes x 4 threads x 10,000"
on 1 alloc_and_write dp.counter 4096 "$N2" 0666 64 "x"
jobs=()
start=$SECONDS
for g in 1 2 3; do
	jobs[g]=$(litevm spawn -g "$g" -t 600 -- "$(guest_fn "$g" faa dp.counter 4 10000)")
done
for g in 1 2 3; do
	rc=0
	litevm wait -g "$g" -t 620 "${jobs[g]}" || rc=$?
	failures=$((failures + rc))
done
echo "   120,000 increments in $((SECONDS - start)) s"
on 3 counter_is dp.counter 120000

echo "== a 64 MiB LMR on node 3 spanning chunks, written on node 1, read on node 2"
on 1 alloc_and_write dp.big 64M "$N3" 0644 0 "start"
chunks=$("$LITE_BIN/tools/litectl/litectl" lmrs -o json | tr -d '\n ' |
	grep -o '{[^{}]*"name":"dp.big"[^]]*' | grep -o '"length_bytes"' | wc -l)
host_check "dp.big has several chunks ($chunks)" test "$chunks" -gt 1
start=$SECONDS
out1=$(litevm exec -g 1 -t 300 -- "$(guest_fn 1 write_pattern dp.big 64M 42)")
out2=$(litevm exec -g 2 -t 300 -- "$(guest_fn 2 read_checksum dp.big 64M 42)") || failures=$((failures + $?))
echo "$out2" | grep -v fnv1a64 || true
sum1=$(grep -o 'fnv1a64=[0-9a-f]*' <<< "$out1" || true)
sum2=$(grep -o 'fnv1a64=[0-9a-f]*' <<< "$out2" || true)
echo "   64 MiB written and read back in $((SECONDS - start)) s"
echo "   written on node 1: $sum1"
echo "   read on node 2:    $sum2"
host_check "checksums match" test -n "$sum1" -a "$sum1" == "$sum2"
on 1 memset_memcpy dp.big dp.shared

echo "== 8 processes on one node share the node's QPs"
on 1 qps_shared dp.shared

echo "== lite-bench next to perftest: the same guests, the same run"
on 1 alloc_and_write dp.bench 1M "$N2" 0600 0 "b"
"$repo/tools/bench/compare" --lmr dp.bench --server 2 --client 1 --iters 300 ||
	{ echo "  FAIL  [host] compare"; failures=$((failures + 1)); }

echo "== free: other nodes' handles go stale"
ready=/tmp/dp-stale.ready
job=$(litevm spawn -g 3 -t 120 -- "$LITE_BIN/tests/vm/lite_probe expect-after dp.private ESTALE 30 $ready")
until litevm exec -g 3 -- "test -e $ready" > /dev/null 2>&1; do sleep 0.5; done
on 1 free_lmr dp.private
rc=0
litevm wait -g 3 -t 60 "$job" || rc=$?
failures=$((failures + rc))

# Which comes first is a race, and both end the handle: lite.ko removing the
# failed peer (EHOSTDOWN) or the manager revoking grants into its LMRs (ESTALE).
echo "== node 2's agent dies: the manager fails node 2, handles into its LMRs get EHOSTDOWN or ESTALE"
ready=/tmp/dp-down.ready
job=$(litevm spawn -g 1 -t 120 -- "$LITE_BIN/tests/vm/lite_probe expect-after dp.counter EHOSTDOWN,ESTALE 30 $ready")
until litevm exec -g 1 -- "test -e $ready" > /dev/null 2>&1; do sleep 0.5; done
litevm kill -g 2 "${LC_AGENT_JOBS[2]}" > /dev/null 2>&1 || true
unset 'LC_AGENT_JOBS[2]'
rc=0
litevm wait -g 1 -t 60 "$job" || rc=$?
failures=$((failures + rc))

echo "== no agent on node 2: control calls fail with ENOTCONN at once"
litevm exec -g 2 -t 60 -- "$LITE_BIN/tests/vm/lite_probe no-agent dp.shared" || failures=$((failures + $?))

echo "== rmmod"
on 3 rmmod_busy dp.big
on 2 rmmod_clean

lc_stop
if ((failures)); then
	echo "datapath: $failures check(s) FAILED"
	exit 1
fi
echo "datapath: all checks passed"
