#!/bin/bash
# LITE's main job, on one machine: a virtual RDMA cluster (QEMU guests with
# Soft-RoCE), litemgr on the host and a liteagent + lite.ko on every node;
# applications allocate, map, read, write and atomically update LMRs across
# nodes, a permission error, an RPC service called from two nodes, LITE's
# latencies (one-sided operations and RPC round trips) next to native RDMA
# (perftest) from the same run, a node's agent stopped for 15 s (SUSPECT,
# not failed: its memory still served), and a node crashing under traffic (its
# operations fail within peer_timeout_ms), programs of the original LITE API
# and Python, the Debian packages and a program built against them, the
# daemons' Prometheus metrics, as a readable summary.
# Installs what it needs first (tools/setup.sh). Needs root, or sudo.
# Usage: tools/demo.sh [-n NODES]     (3..8, default 3)
#   LITE_BIN=DIR tools/demo.sh uses the binaries already built in DIR
#   (Bazel's bin layout) instead of building them.
#   The control plane runs with mutual TLS (certificates made for the run);
#   LITE_INSECURE=1 tools/demo.sh runs it plaintext instead.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

nodes=3
if [[ ${1-} == --inside ]]; then
	shift
	# shellcheck source=tools/vm/litecluster.sh
	source "$repo/tools/vm/litecluster.sh"
	nodes=$LITE_VM_GUESTS
	litectl=$LITE_BIN/cmd/litectl/litectl
	liteop=$LITE_BIN/cmd/liteop/liteop
	sync_probe=$LITE_BIN/tests/vm/sync_probe
	section() { printf '\n── %s %s\n' "$1" "$(printf '─%.0s' $(seq 1 $((66 - ${#1}))))"; }
	indent() { sed 's/^/    /'; }
	# Nodes go by their names (node1, node2, ...: guest N runs node N's
	# agent, which joins with --node_name nodeN); ids show as "node2 (id 3)".
	name() { lc_node_name "$1"; }
	# run N COMMAND...: show it as typed on node N, run it there (in guest
	# N), show its output.
	run() {
		local g=$1
		shift
		local shown=$*
		shown=${shown//"$LITE_BIN/cmd/liteop/"/}
		shown=${shown//"$LITE_BIN/cmd/litenl/"/}
		shown=${shown//"$LITE_BIN/tests/vm/"/}
		printf '[%s]$ %s\n' "$(name "$g")" "$shown"
		litevm exec -g "$g" -t 300 -- "$*" 2>&1 | indent || true
	}
	# hold N COMMAND...: like run, in the background; prints the job id.
	hold() {
		local g=$1
		shift
		local shown=$*
		shown=${shown//"$LITE_BIN/cmd/liteop/"/}
		printf '[%s]$ %s &\n' "$(name "$g")" "$shown" >&2
		litevm spawn -g "$g" -t 300 -- "$* > /dev/null"
	}
	grants_held() {
		"$litectl" grants -o json 2> /dev/null | { grep -o '"grant_id"' || true; } | wc -l
	}

	section "cluster: litemgr on the host, a liteagent + lite.ko on each of $nodes guests"
	# The guests' /tmp shows the host's /tmp beneath their own writes, so
	# the demo's go-ahead files live in a folder each guest makes new (mkdir
	# fails on anything a host user made there first).
	gtmp=/tmp/lite-demo.$$.$SRANDOM
	for ((g = 1; g <= nodes; g++)); do
		litevm exec -g "$g" -t 20 -- "mkdir -m 0700 $gtmp" ||
			{ echo "demo: cannot make $gtmp in guest $g" >&2; exit 1; }
	done
	# shellcheck disable=SC2119  # litecluster.sh's default lease is meant
	lc_start  # prints how the control plane runs (lc_tls_summary)
	"$litectl" nodes | indent
	labels=""
	for ((g = 1; g <= nodes; g++)); do
		labels+="${labels:+, }$(lc_node_label "$g")"
	done
	echo "    Guest N runs nodeN's agent; the manager numbers the nodes in the"
	echo "    order they joined: $labels."
	for ((g = 1; g <= nodes; g++)); do
		printf '    %s peers: %s\n' "$(name "$g")" "$(litevm exec -g "$g" -- "$LITE_BIN/cmd/litenl/litenl peers -o json" |
			{ grep -o '"state": "[a-z]*"' || true; } | cut -d'"' -f4 | sort | uniq -c |
			awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2}')"
	done

	msg="hello from node1"
	section "node1 allocates an LMR on node2 and writes it; node3 reads it"
	run 1 "$liteop" alloc demo.kv 1M --home node2 --mode 0644
	run 1 "$liteop" write demo.kv 4093 --data "'$msg'"
	run 3 "$liteop" read demo.kv 4093 "${#msg}" "&& echo"
	section "node3 writes read-only, then as another user: refused, nothing changes"
	run 3 "$liteop" write demo.kv 4093 --data XXXXX --access r
	run 3 setpriv --reuid=1000 --regid=1000 --clear-groups "$liteop" write demo.kv 0 --data x
	run 3 "$liteop" read demo.kv 4093 "${#msg}" "&& echo"

	section "atomics: $nodes nodes x 2 threads x 2,000 fetch-and-adds on one word on node2"
	run 1 "$liteop" alloc demo.counter 4096 --home node2 --mode 0666
	jobs=()
	for ((g = 1; g <= nodes; g++)); do
		jobs[g]=$(litevm spawn -g "$g" -t 300 -- "$liteop faa demo.counter 0 1 --threads 2 --count 2000")
	done
	for ((g = 1; g <= nodes; g++)); do
		printf '    %s: ' "$(name "$g")"
		litevm wait -g "$g" -t 320 "${jobs[g]}" || true
	done
	run 2 "$liteop" cas demo.counter 0 $((nodes * 4000)) 0

	section "RPC: an echo service on node2 (2 threads) called from node1 and node3"
	echo_job=$(hold 2 "$liteop" rpc-serve demo.echo --threads 2 --mode 0711)
	for _ in $(seq 150); do
		"$litectl" services 2> /dev/null | grep -q demo.echo && break
		sleep 0.2
	done
	"$litectl" services | indent
	run 1 "$liteop" rpc-call demo.echo --count 200 --size 64
	run 3 "$liteop" rpc-call demo.echo --count 200 --size 4096
	run 1 "$liteop" rpc-call demo.echo --count 400 --size 64 --async 16
	echo "    (--async 16: up to 16 calls in flight, their replies collected in"
	echo "    batches: one system call per submit, one per batch)"
	run 3 "$liteop" rpc-send demo.echo --count 50
	run 1 "$liteop" rpc-call demo.echo --size 5000
	echo "    (each call: one RDMA write-with-immediate of the request into node1's"
	echo "    ring at node2, one of the reply back; the server reads requests in"
	echo "    place, in its mapping of the rings, and answers from there)"
	litevm kill -g 2 "$echo_job" > /dev/null 2>&1 || true
	echo "    node2's server stopped (its file closed): the service is gone"
	run 1 "$liteop" rpc-call demo.echo
	upper_job=$(hold 3 "$liteop" rpc-serve demo.upper --exec "'tr a-z A-Z'")
	for _ in $(seq 150); do
		"$litectl" services 2> /dev/null | grep -q demo.upper && break
		sleep 0.2
	done
	echo "    node3 serves demo.upper with a command (rpc-serve --exec 'tr a-z A-Z'):"
	run 1 "$liteop" rpc-call demo.upper --data "'hello from node1'"
	litevm kill -g 3 "$upper_job" > /dev/null 2>&1 || true

	section "what the control plane knows, while node3 and node1 hold maps"
	holders=("3 $(hold 3 "$liteop" map demo.kv --access r --hold 120)")
	holders+=("1 $(hold 1 "$liteop" map demo.counter --hold 120)")
	for _ in $(seq 150); do
		(($(grants_held) >= 2)) && break
		sleep 0.2
	done
	"$litectl" lmrs | indent
	"$litectl" grants | indent
	for h in "${holders[@]}"; do
		litevm kill -g "${h%% *}" "${h#* }" > /dev/null 2>&1 || true
	done
	for ((g = 1; g <= nodes; g++)); do
		printf '    %s RC QPs (shared by every process): %s\n' "$(name "$g")" \
			"$(litevm exec -g "$g" -- "rdma resource show qp" | grep -c ' type RC state RTS ')"
	done

	section "what to watch: Prometheus metrics, litemgr :9742 and every liteagent :9743"
	echo "$ curl 127.0.0.1:9742/metrics    # litemgr (docs/metrics.md), some of its lines"
	curl -s --noproxy '*' 127.0.0.1:9742/metrics 2>&1 |
		grep -E '^lite_manager_(members|lmrs|grants|sessions_open) |^lite_manager_(members|lmrs)\{|^lite_manager_rpc_calls_total\{.*method="(AllocLmr|MapLmr)",code="OK"' |
		indent || echo "    (no answer from litemgr's metrics endpoint)"
	printf '[%s]$ curl 127.0.0.1:9743/metrics    # its liteagent, lite.ko'"'"'s counters\n' "$(name 1)"
	litevm exec -g 1 -- "curl -s --noproxy '*' 127.0.0.1:9743/metrics" 2>&1 |
		grep -E '^lite_kernel_(operations_total\{op="(read|write|faa)"|bytes_total|peers |qps_connected |lmrs )|^lite_agent_upcalls_answered_total\{kind="(alloc|map)",code="OK"' |
		indent || echo "    (no answer from node1's agent metrics endpoint)"

	section "trust: every caller shows a certificate; keys stay in the kernels"
	if ! lc_insecure; then
		n1=$(name 1)
		echo "$ litectl nodes    # with ${n1}'s node certificate, not an operator's"
		"$litectl" --tls_cert="$LC_TLS_DIR/$n1.crt" --tls_key="$LC_TLS_DIR/$n1.key" \
			nodes 2>&1 | indent || true
		echo "$ litectl --insecure nodes    # plaintext to the manager's TLS port"
		"$litectl" --insecure nodes 2>&1 | cut -c1-100 | indent || true
	fi
	printf '    memory keys in litectl lmrs/grants -o json: %s (sizes, homes, counts only)\n' \
		"$({ "$litectl" lmrs -o json; "$litectl" grants -o json; } 2>&1 |
			{ grep -cE '"memory_key": *"?[1-9]' || true; })"
	run 2 "setpriv --reuid=65534 --regid=65534 --clear-groups $LITE_BIN/cmd/litenl/litenl lmr list"

	section "node1 frees an LMR while node1 and node3 write into it: a fenced free"
	run 1 "$liteop" alloc demo.fence 4M --home node2 --mode 0666 > /dev/null
	ready=$gtmp/fence.ready
	# free_hammer write: 8 B .. 1 MiB WRITEs without pause; it stops 1.5 s
	# after its first failure and prints what it saw.
	writers=()
	for g in 1 3; do
		writers[g]=$(litevm spawn -g "$g" -t 120 -- \
			"$LITE_BIN/tests/vm/free_hammer write demo.fence 60 1500 $ready")
	done
	for g in 1 3; do
		for _ in $(seq 300); do
			litevm exec -g "$g" -t 20 -- "test -e $ready" > /dev/null 2>&1 && break
			sleep 0.2
		done
	done
	run 1 "$liteop" free demo.fence
	for g in 1 3; do
		printf '    %s writer: %s\n' "$(name "$g")" \
			"$(litevm wait -g "$g" -t 90 "${writers[g]}" 2>&1 | grep '^ops=' | cut -d' ' -f2,3,5 || true)"
	done
	echo "    litemgr: the pages went back only after every holder said its writes had ended:"
	grep -E "'demo.fence' is releasing|the memory of LMR $(grep -o "LMR 0x[0-9a-f]* 'demo.fence'" \
		"$LITE_VM_STATE/litemgr.log" | head -n 1 | cut -d' ' -f2)" "$LITE_VM_STATE/litemgr.log" |
		cut -d' ' -f1,3- | indent
	printf '    node2 key_mode=%s, quarantined LMRs: %s\n' \
		"$(litevm exec -g 2 -- "cat /sys/module/lite/parameters/key_mode")" \
		"$(litevm exec -g 2 -- "cat /sys/kernel/debug/lite/lmrs_quarantined")"

	section "LITE vs native RDMA (perftest), node1 -> node2 (guests 1, 2), same run"
	run 1 "$liteop" alloc demo.bench 1M --home node2 --mode 0600 > /dev/null
	# LITE with the caller sleeping (spin_us 0, the default) and spinning
	# for up to 500 us; and 8-byte operations from one thread beside
	# perftest's message rates: in batches of 16 per system call, and as
	# io_uring commands with 16 in flight.
	"$repo/tools/bench/compare" --lmr demo.bench --server 2 --client 1 --iters 500 \
		--sizes "8 64 512 4096" --spin "0 500" --batch 16 --depth 16 --batch-sizes 8 | indent
	echo
	echo "    RPC round trips next to two one-way native verbs, 3 interleaved rounds:"
	"$repo/tools/bench/rpc_compare" --server 2 --client 1 --sizes "8 4096" --iters 300 \
		--rounds 3 2> /dev/null | indent
	echo
	echo "(software RDMA under CPU emulation: compare figures only within one run)"

	section "QoS: node1's 64 B READs at high priority beside 64 KiB WRITEs at low"
	# lite-qos-bench on node1 into an LMR on node2: the high-priority
	# client alone, then beside 2 low-priority writers with lite.ko's qos
	# off and on, one round (docs/qos.md has three, and the plot).
	"$repo/tools/bench/qos_experiment" --rounds 1 --low 2 --seconds 3 2> /dev/null | indent
	echo "    with qos on: $(litevm exec -g 1 -- "cat /sys/kernel/debug/lite/ops/qos_throttled") low-priority waits, throttle now: $(litevm exec -g 1 -- "cat /sys/kernel/debug/lite/qos/peers" | grep -o 'node2 rate_bps=[0-9]*.*rule=[a-z]*' || echo '?')"

	section "Locks and barriers: one lock on node2, critical sections from every node"
	# sync_probe (tests/vm): each thread its own context; a critical
	# section is lock, READ the lock LMR's first word, WRITE it + 1, unlock.
	run 1 "$liteop" alloc demo.lock 4096 --home node2 --mode 0666 > /dev/null
	run 1 "$liteop" alloc demo.barrier 4096 --home node2 --mode 0666 > /dev/null
	specs=()
	for ((g = 1; g <= nodes; g++)); do
		specs[g]=$(litevm spawn -g "$g" -t 300 -- "$sync_probe counter demo.lock 2 250")
	done
	for ((g = 1; g <= nodes; g++)); do
		printf '    %s: %s\n' "$(name "$g")" "$(litevm wait -g "$g" -t 320 "${specs[g]}" 2>&1 |
			grep -E '^sections' || echo 'no result')"
	done
	run 2 "$sync_probe value demo.lock $((nodes * 500))"
	echo "    a barrier of $((nodes * 2)) ($nodes nodes x 2 threads), 20 rounds:"
	for ((g = 1; g <= nodes; g++)); do
		specs[g]=$(litevm spawn -g "$g" -t 300 -- "$sync_probe barrier demo.barrier $((nodes * 2)) 2 20")
	done
	for ((g = 1; g <= nodes; g++)); do
		litevm wait -g "$g" -t 320 "${specs[g]}" 2>&1 | grep -E 'rounds|FAIL' |
			sed "s/^ */    $(name "$g"): /" || true
	done
	echo "    a process on node3 holds the lock and is killed (SIGKILL) while another waits:"
	litevm exec -g 3 -t 120 -- "$sync_probe killed-holder demo.lock" 2>&1 | indent || true
	echo "    uncontended lock+unlock against one fetch-and-add, node1 -> node2:"
	litevm exec -g 1 -t 120 -- "$sync_probe bench demo.lock 200 3" 2>&1 | grep -E '^round' | indent || true

	section "Programs of the original LITE API, and Python"
	# tests/vm/v0: written only against api/compat/lite-lib.h, the way the
	# first LITE's users wrote theirs (docs/compat.md).
	v0=$LITE_BIN/tests/vm
	stop=$gtmp/v0.stop
	job=$(litevm spawn -g 1 -t 300 -- "$v0/v0_rw serve $(lc_node_id 2) 4242 31337 65536 $stop")
	for _ in $(seq 300); do
		grep -q '^ready' "$LITE_VM_STATE/g1/ctl/jobs/$job.out" 2> /dev/null && break
		sleep 0.2
	done
	echo "    node1: alloc_remote_mem(node2, 64 KiB), add_ask_mr_table(4242, password)"
	run 3 "$v0/v0_rw read $(lc_node_id 1) 4242 31337 65536 2"
	run 3 "$v0/v0_rw value $(lc_node_id 1) 4242 31337 2000"
	litevm exec -g 1 -t 20 -- "touch $stop"
	litevm wait -g 1 -t 60 "$job" > /dev/null 2>&1 || true
	echo "    and Python (python/lite, cffi over liblite.so.0), from two nodes at once:"
	for g in 2 3; do
		specs[g]=$(litevm spawn -g "$g" -t 300 -- "cd $repo/python && PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 \
			LITE_LIBRARY=$LITE_BIN/api/liblite.so.0 /usr/bin/python3 examples/counter.py \
			--home node1 --count 200 demo.pycounter")
	done
	for g in 2 3; do
		litevm wait -g "$g" -t 320 "${specs[g]}" 2>&1 | sed "s/^/    $(name "$g"): /" || true
	done

	section "Debian packages, and a program built against them with pkg-config"
	# tools/package.sh: the packages an operator installs (docs/deploy.md);
	# tests/pkg/build_apps.sh unpacks liblite0 and liblite-dev and builds
	# tests/pkg/app.c with `pkg-config --cflags --libs lite` only.
	"$repo/tools/package.sh" --out "$LITE_VM_STATE/dist" 2>&1 | sed -n 's/^package: //p' | indent || true
	apps=$LITE_VM_STATE/apps
	"$repo/tests/pkg/build_apps.sh" "$LITE_VM_STATE/dist" "$apps" 2>&1 | grep pkg-config | indent || true
	printf '[%s]$ %s\n' "$(name 1)" "./app demo.pkg node2    (linked with the packaged liblite.so.0)"
	litevm exec -g 1 -t 60 -- "LD_LIBRARY_PATH=$apps/root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH) \
		$apps/app demo.pkg node2" 2>&1 | indent || true

	section "node2's agent stopped (SIGSTOP) for 15 s while node1 reads and adds on node2's memory"
	# A lease (10 s here) measures the agent, not the node: lite.ko on node2
	# keeps serving the maps taken before. The manager makes node2 SUSPECT,
	# asks its peers' lite.ko whether node2's still acknowledges, and keeps
	# it until its agent heartbeats again (docs/controlplane.md).
	run 1 "$liteop" alloc demo.pause 4096 --home node2 --mode 0600 > /dev/null
	ready=$gtmp/pause.ready
	job=$(litevm spawn -g 1 -t 120 -- "$LITE_BIN/tests/vm/peer_loop demo.pause 60 1500 $ready $gtmp/pause.stop")
	for _ in $(seq 300); do
		litevm exec -g 1 -t 20 -- "test -e $ready" > /dev/null 2>&1 && break
		sleep 0.2
	done
	# The agent is the only child of its litevm job's `timeout`.
	timeout_pid=$(cat "$LITE_VM_STATE/g2/ctl/jobs/${LC_AGENT_JOBS[2]}.pid")
	pause=$(litevm spawn -g 2 -t 60 -- "agent=\$(ps -o pid= --ppid $timeout_pid) &&
		kill -STOP \$agent && sleep 15 && kill -CONT \$agent")
	for _ in $(seq 100); do
		"$litectl" nodes 2> /dev/null | grep -q " node2  *SUSPECT" && break
		sleep 0.2
	done
	echo "    while node2's agent is stopped:"
	"$litectl" nodes | indent
	printf '[%s]$ %s\n' "$(name 1)" "liteop map demo.pause    (a new map needs node2's agent)"
	litevm exec -g 1 -t 30 -- "$liteop map demo.pause" 2>&1 | cut -c1-230 | indent || true
	litevm wait -g 2 -t 60 "$pause" > /dev/null 2>&1 || true
	for _ in $(seq 100); do
		grep -q "heartbeated again after" "$LITE_VM_STATE/litemgr.log" && break
		sleep 0.2
	done
	litevm exec -g 1 -t 20 -- "touch $gtmp/pause.stop"
	loop=$(litevm wait -g 1 -t 90 "$job" 2>&1 | grep '^ops=' || true)
	printf '    node1 meanwhile: %s operations on node2'"'"'s memory, %s failed (slowest %s ms)\n' \
		"$(grep -o 'ok=[0-9]*' <<< "$loop" | cut -d= -f2)" \
		"$(grep -o 'failed=[0-9]*' <<< "$loop" | cut -d= -f2)" \
		"$(grep -o 'max_ms=[0-9.]*' <<< "$loop" | cut -d= -f2)"
	grep -oE "node [0-9]+ \('node2'\) (is SUSPECT|heartbeated again).*" "$LITE_VM_STATE/litemgr.log" |
		cut -c1-140 | sed 's/^/    manager: /' || true

	last=$(name "$nodes")
	section "$last crashes (its QEMU killed) while node1 reads and adds on its memory"
	run 1 "$liteop" alloc demo.crash 4096 --home "$last" --mode 0600 > /dev/null
	ready=$gtmp/crash.ready
	# peer_loop: READ + FAA in a loop, every operation timed; it stops 1.5 s
	# after the first failure (or at 60 s, or once $gtmp/crash.stop
	# exists, which nobody creates here).
	job=$(litevm spawn -g 1 -t 120 -- "$LITE_BIN/tests/vm/peer_loop demo.crash 60 1500 $ready $gtmp/crash.stop")
	for _ in $(seq 300); do
		litevm exec -g 1 -t 20 -- "test -e $ready" > /dev/null 2>&1 && break
		sleep 0.2
	done
	sleep 1
	crashed_at=$(litevm crash -g "$nodes")
	echo "    $last: QEMU killed (a power cut: no goodbye to anyone)"
	loop=$(litevm wait -g 1 -t 90 "$job" 2>&1 | grep '^ops=' || true)
	field() { grep -o "$1=[^ ]*" <<< "$loop" | cut -d= -f2; }
	if [[ -n $loop ]]; then
		printf '    node1: %s operations before the crash, then %s within %s ms of it
' \
			"$(field ok)" "$(field first_error)" "$(field max_failed_ms)"
		printf '    (lite.ko gives up on a peer after peer_timeout_ms = %s ms; later calls fail at once)\n' \
			"$(litevm exec -g 1 -- "cat /sys/module/lite/parameters/peer_timeout_ms")"
	else
		echo "    node1: the loop printed no result"
	fi
	for _ in $(seq 150); do
		"$litectl" nodes 2> /dev/null | grep -q " $last  *FAILED" && break
		sleep 0.2
	done
	printf '    the manager had failed %s %.1f s after the crash (its lease is 10 s: the\n' \
		"$last" "$(awk -v a="$crashed_at" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
	echo "    peers reported it):"
	"$litectl" nodes | indent
	unset 'LC_AGENT_JOBS[nodes]'
	lc_stop
	exit 0
fi

case ${1-} in
-n) nodes=${2-}; [[ $nodes =~ ^[3-8]$ ]] || { echo "demo: -n must be 3..8" >&2; exit 2; } ;;
-h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
"") ;;
*) echo "demo: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac

tools/setup.sh
if [[ -n ${LITE_BIN-} ]]; then
	echo "demo: using the binaries in LITE_BIN=$LITE_BIN (no build)" >&2
else
	echo "demo: building lite.ko and tools (bazel)" >&2
	build_log=$(mktemp /tmp/lite-demo-build.XXXXXX)
	bazel build //kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl \
		//cmd/litenl //cmd/liteop //tools/bench:lite-bench //tools/bench/grpc_echo \
		//tools/bench:lite-qos-bench \
		//tests/vm:peer_loop //tests/vm:free_hammer //tests/vm:sync_probe \
		//tests/vm:v0_rw //api:liblite.so.0 \
		2> "$build_log" ||
		{ cat "$build_log" >&2; exit 1; }
	rm -f "$build_log"
	# The real output directory, not the bazel-bin symlink another build may repoint.
	LITE_BIN=$(bazel info bazel-bin 2> /dev/null)
fi
export LITE_BIN
echo "demo: booting a $nodes-node RDMA cluster (about 10 s)" >&2
exec tools/vm/litevm run -n "$nodes" --module "$LITE_BIN/kmod/lite.ko" --timeout 1800 \
	-- "$0" --inside
