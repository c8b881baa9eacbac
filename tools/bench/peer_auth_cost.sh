#!/bin/bash
# peer_auth_cost.sh: what lite.ko's peer authentication costs (issue 16, item
# 5), peer_auth=0 against peer_auth=1 in ONE cluster boot (two guests), the
# two interleaved over several rounds, so both are measured in the same run
# (emulated time is comparable only within one run).
#
# Each round measures each mode once, the order alternating (odd rounds
# peer_auth=0 first, even rounds peer_auth=1 first). One trial (a round's
# mode):
#  1. Connection set-up. Both guests rmmod lite.ko and insmod it with the
#     trial's peer_auth, set their identity (node id = guest number, a fresh
#     incarnation) and wait for their loopback QPs. Guest 2 (the acceptor:
#     the larger id) adds node 1 with a fresh pair secret; then guest 1 (the
#     initiator) adds node 2 with the same secret: that second `peer add`
#     starts the clock, and it stops when K/K QPs are connected on both
#     nodes. The times come from lite.ko's own kernel log lines ("peer N
#     (...) added", "peer N (...): K QPs connected") in each node's printk
#     clock (microseconds), so they do not depend on how often anything
#     polls. Guest 2's clock is mapped onto guest 1's by one NTP-style TCP
#     ping-pong just before the add (bash /dev/tcp to `busybox nc -l`, both
#     ends stamping /dev/kmsg): its error is at most half the round trip,
#     printed as sync_rtt_ms, and alike in both modes. The ping-pong also
#     leaves both ARP entries fresh, so no trial's address resolution (nor
#     the second rdma_cm id of an authenticated connection) waits for ARP.
#     Meanwhile each guest polls debugfs `qps_connected` (the count `litenl
#     peers` shows) every 10 ms with bash builtins only — `litenl peers`
#     itself costs ~0.3 s a call under TCG — and afterwards `litenl peers
#     -o json` must show the peer connected, K/K, on both nodes, or the
#     trial fails.
#     setup_ms     = max(initiator_ms, acceptor_ms): second add -> both K/K
#     initiator_ms = guest 1's "added" line -> its "K QPs connected" line
#     acceptor_ms  = guest 1's "added" line -> guest 2's "K QPs connected"
#     Not included: keying hmac(sha256) with the secret inside PEER_ADD,
#     before the "added" line (microseconds; the loopback peer's key at
#     `node set` has loaded the algorithm by then).
#  2. Small operations, the demo's table (tools/bench/compare's LITE p50):
#     lite-bench needs an LMR and a map grant, which come only through
#     litemgr and the liteagents, and an agent must own lite.ko from its
#     load (it sets the identity and adds the peers with the manager's pair
#     secrets). litevm loads lite.ko once at boot without parameters and
#     tools/vm/litecluster.sh takes none, so: both guests rmmod/insmod
#     lite.ko again with the trial's peer_auth, lc_start starts litemgr on
#     the bridge and an agent per guest (until every pair is connected),
#     lite-bench in guest 1 creates a 4 KiB LMR on node2 and measures READ,
#     WRITE, FAA and CAS of 8 B (--iters timed ops after 100 untimed), and
#     lc_stop stops them all. The manager restarts with the agents: it
#     keeps no state, and a fresh one gives every trial the same start.
#
# Output: every trial, then per mode the median and min-max over rounds and
# the ratio peer_auth=1 / peer_auth=0 of the medians; -o json for scripts
# (one JSON object). Both name the command line, the commit and lite.ko.
# The run's log (ok/FAIL lines, litevm's notes) goes to stderr. Exit
# status 0 when every trial measured, 1 otherwise (what was measured is
# still printed), 2 on bad usage. Benchmarks measure; nothing here judges
# the figures.
#
# Usage: tools/bench/peer_auth_cost.sh [options]   (needs root, tools/setup.sh)
#   --rounds N    rounds, at least 3 (default 5); each measures both modes
#   --iters N     lite-bench timed operations per op and trial (default 1000)
#   -o table|json output (default table)
#   --state DIR   keep litevm's logs (consoles, kernel logs) in DIR
#   -h, --help    this text
#   LITE_BIN=DIR  measure the binaries already built in DIR (Bazel's bin
#                 layout), no build
# Boots its own 2-guest cluster: never run it while another litevm cluster
# runs (the VM suites, the demo). Expect roughly 30-60 s per trial under
# TCG on the 2-core machine (two module reloads, litemgr + agents started
# and stopped, lite-bench), so about 5-10 minutes for the default 5 rounds
# (10 trials), plus the build and a ~10 s boot. litevm's limit for the
# whole run is 600 + 300 s per round.
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/vm/lib.sh"
VM_SUITE=peer_auth_cost
VM_GUESTS=2
VM_TARGETS=(//kmod:lite_ko //cmd/litenl //tools/bench:lite-bench
	//controlplane:litemgr //agent:liteagent //cmd/litectl)
VM_GUEST_SECS=300
OPS=(read write faa cas)

# ---------------------------------------------------------------------------
# Guest side: `peer_auth_cost.sh --guest FUNCTION ARGS...` (see lib.sh).
# Node id = guest number; guest 1 (the smaller id) is the initiator.
# ---------------------------------------------------------------------------
ip_of() { IP=10.211.0.$((10 + $1)); }
ip_of "${GUEST:-0}"
ME=$IP
K=

k_param() { read -r K < /sys/module/lite/parameters/qps_per_peer; }
# kmsg TEXT: a line in the kernel log, stamped by the same clock as
# lite.ko's lines (a builtin: no process started).
kmsg() { { printf '<6>lite-auth-cost %s\n' "$1" > /dev/kmsg; } 2> /dev/null || true; }

# wait_counter NAME VALUE SECS: debugfs counter NAME is VALUE, polled every
# 10 ms without starting a process, within SECS.
wait_counter() {
	local deadline
	now_ms
	deadline=$((NOW_MS + $3 * 1000))
	while :; do
		counter "$1" 2> /dev/null
		[[ $COUNTER == "$2" ]] && return 0
		now_ms
		((NOW_MS < deadline)) || { echo "        $1=$COUNTER, want $2"; return 1; }
		nap 0.01
	done
}

# reload MODE: lite.ko loaded afresh with peer_auth=MODE; sets K.
reload() {
	local want=N have='' i
	(($1)) && want=Y
	# Our /dev/kmsg stamps must not be rate-limited away.
	{ echo on > /proc/sys/kernel/printk_devkmsg; } 2> /dev/null || true
	for ((i = 0; i < 50; i++)); do
		[[ -e /sys/module/lite ]] || break
		rmmod lite 2> /dev/null || nap 0.2
	done
	check "lite.ko unloaded" test ! -e /sys/module/lite
	check "insmod lite.ko peer_auth=$1" insmod "$LITE_BIN/kmod/lite.ko" "peer_auth=$1"
	[[ -r /sys/module/lite/parameters/peer_auth ]] &&
		read -r have < /sys/module/lite/parameters/peer_auth
	check "peer_auth is $want" test "$have" = "$want"
	k_param
}

# prep MODE INCARNATION: reloaded, identity set, loopback QPs up (so they
# are not connecting during the measurement).
prep() {
	reload "$1"
	check "node set --id $GUEST --incarnation $2 --addr $ME" \
		litenl_ok node set --id "$GUEST" --incarnation "$2" --addr "$ME"
	check "$K loopback QPs connected, both ends" wait_counter loopback_qps $((2 * K)) 30
}

# unload: the last rmmod, clean.
unload() { rmmod_lite "after the last trial"; }

# peers_confirm NODE_ID: litenl peers -o json shows NODE_ID connected, K/K.
peer_field() {  # peer_field NODE_ID FIELD: REPLY from $PEERS
	REPLY=
	[[ $PEERS =~ \{\"node_id\":\ $1,\ [^}]*\} ]] || return 0
	local obj=${BASH_REMATCH[0]}
	[[ $obj =~ \"$2\":\ \"?([^,\"}]*) ]] && REPLY=${BASH_REMATCH[1]}
}
peer_connected() {
	local s q
	PEERS=$("$LITENL" peers -o json) || return 1
	peer_field "$1" state
	s=$REPLY
	peer_field "$1" qps_connected
	q=$REPLY
	[[ $PEERS == *"\"qps_per_peer\": $K,"* && $s/$q == "connected/$K" ]] ||
		{ echo "        $PEERS"; return 1; }
}
peers_confirm() {
	check "litenl peers -o json: node $1 connected, $K/$K QPs" peer_connected "$1"
}

# kernel_times NAME=TEXT...: KT[NAME] = the printk time (microseconds) of
# the first kernel log line containing TEXT ("" if none; each TEXT names one
# trial, by its incarnations or its tag).
declare -A KT=()
kernel_times() {
	local log line spec us msg
	for spec in "$@"; do KT[${spec%%=*}]=""; done
	log=$(dmesg) || return 1
	while IFS= read -r line; do
		[[ $line =~ ^\[\ *([0-9]+)\.([0-9]{6})\]\ (.*)$ ]] || continue
		us=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
		msg=${BASH_REMATCH[3]}
		for spec in "$@"; do
			[[ -z ${KT[${spec%%=*}]} && $msg == *"${spec#*=}"* ]] && KT[${spec%%=*}]=$us
		done
	done <<< "$log"
}

# The clock exchange (NTP's four stamps): guest 2 stamps T1 and sends
# "ping"; guest 1 stamps T2 on receipt, answers "pong", stamps T3; guest 2
# stamps T4 on receipt. Guest 1's clock = guest 2's + ((T2-T1) + (T3-T4)) / 2,
# within half the round trip (T4-T1) - (T3-T2).
sync_listen() {  # sync_listen PORT TAG (guest 1)
	local rfd wfd pid line='' i ok=0
	coproc SYNC_NC { exec busybox nc -l -p "$1"; }
	pid=$SYNC_NC_PID
	[[ -n ${SYNC_NC[0]-} && -n ${SYNC_NC[1]-} ]] || { echo "        busybox nc did not start"; return 1; }
	# Our own copies: bash closes the coprocess's when it ends.
	exec {rfd}<&"${SYNC_NC[0]}" {wfd}>&"${SYNC_NC[1]}"
	if read -r -t 60 -u "$rfd" line && [[ $line == ping ]]; then
		kmsg "$2: T2"
		printf 'pong\n' >&"$wfd"
		kmsg "$2: T3"
		ok=1
	else
		echo "        no ping from guest 2 on port $1 within 60 s"
	fi
	exec {wfd}>&- {rfd}<&-
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2> /dev/null || break
		nap 0.05
	done
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	((ok))
}
sync_ping() {  # sync_ping IP PORT TAG (guest 2)
	local fd='' i line=''
	# Until guest 1's listener is up (refused at once before that).
	for ((i = 0; i < 600; i++)); do
		{ exec {fd}<> "/dev/tcp/$1/$2"; } 2> /dev/null && break
		fd=
		nap 0.05
	done
	[[ -n $fd ]] || { echo "        no listener at $1:$2 within 30 s"; return 1; }
	kmsg "$3: T1"
	printf 'ping\n' >&"$fd"
	read -r -t 10 -u "$fd" line
	kmsg "$3: T4"
	exec {fd}>&-
	[[ $line == pong ]] || { echo "        no answer from $1:$2"; return 1; }
}

# acc_add INC1 SECRET (guest 2): the first peer add, the acceptor's.
acc_add() {
	ip_of 1
	check "peer add 1 (incarnation $1) with the pair secret (first add: the acceptor's)" \
		litenl_ok peer add --id 1 --incarnation "$1" --addr "$IP" --secret "$2"
}

# acc_watch INC1 TAG PORT (guest 2): clock exchange, then wait for K/K.
acc_watch() {
	local inc=$1 tag=$2 port=$3
	k_param
	ip_of 1
	check "clock exchange with guest 1 ($IP:$port)" sync_ping "$IP" "$port" "$tag"
	check "$K/$K QPs to node 1 connected (debugfs qps_connected, every 10 ms)" \
		wait_counter qps_connected "$K" 60
	peers_confirm 1
	kernel_times "conn=peer 1 (incarnation $inc, $IP): $K QPs connected" \
		"t1=lite-auth-cost $tag: T1" "t4=lite-auth-cost $tag: T4"
	check "kernel log: node 1's $K QPs connected" test -n "${KT[conn]}"
	echo "RESULT acc_conn=${KT[conn]} T1=${KT[t1]} T4=${KT[t4]}"
}

# init_run INC2 SECRET TAG PORT (guest 1): clock exchange, the second peer
# add, wait for K/K.
init_run() {
	local inc=$1 secret=$2 tag=$3 port=$4
	k_param
	ip_of 2
	check "clock exchange with guest 2 (listening on port $port)" sync_listen "$port" "$tag"
	check "peer add 2 (incarnation $inc) with the pair secret (second add: the initiator's)" \
		litenl_ok peer add --id 2 --incarnation "$inc" --addr "$IP" --secret "$secret"
	check "$K/$K QPs to node 2 connected (debugfs qps_connected, every 10 ms)" \
		wait_counter qps_connected "$K" 60
	peers_confirm 2
	kernel_times "add=peer 2 (incarnation $inc, $IP) added" \
		"conn=peer 2 (incarnation $inc, $IP): $K QPs connected" \
		"t2=lite-auth-cost $tag: T2" "t3=lite-auth-cost $tag: T3"
	check "kernel log: node 2 added, then its $K QPs connected" test -n "${KT[add]}" -a -n "${KT[conn]}"
	echo "RESULT k=$K init_add=${KT[add]} init_conn=${KT[conn]} T2=${KT[t2]} T3=${KT[t3]}"
}

# ---------------------------------------------------------------------------
# Host side, inside the cluster's network namespace.
# ---------------------------------------------------------------------------
secret() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
rec() { echo "$*" >> "$PAC_RESULTS"; }
# shown OUTPUT: a guest's output without its RESULT lines.
shown() { grep -v '^RESULT ' <<< "$1" || true; }
result() { sed -n 's/^RESULT //p' <<< "$1" | tr '\n' ' '; }

# exec_guest GUEST FUNCTION ARGS...: runs a guest function, its output in
# OUT (and shown), its status counted.
exec_guest() {
	local rc=0
	OUT=$(litevm exec -g "$1" -t "$VM_GUEST_SECS" -- "$(vm_guest_cmd "$@")") || rc=$?
	shown "$OUT"
	vm_count "guest $1: $2" "$rc"
}

# setup_trial ROUND MODE T: part 1; a "setup" record.
setup_trial() {
	local r=$1 m=$2 inc1=$(($3 * 1000 + 1)) inc2=$(($3 * 1000 + 2))
	local s tag=pac$3 port=$((17300 + $3)) job="" rc=0 out2="" before=$VM_FAILURES
	s=$(secret)
	guests "1 prep $m $inc1" "2 prep $m $inc2"
	if ((VM_FAILURES > before)); then
		rec "fail $r $m set-up: loading lite.ko or setting the identities failed"
		return
	fi
	guest 2 acc_add "$inc1" "$s"
	job=$(vm_spawn 2 acc_watch "$inc1" "$tag" "$port") || job=""
	exec_guest 1 init_run "$inc2" "$s" "$tag" "$port"
	if [[ -n $job ]]; then
		out2=$(litevm wait -g 2 -t $((VM_GUEST_SECS + 30)) "$job") || rc=$?
		shown "$out2"
		vm_count "guest 2: acc_watch" "$rc"
	else
		vm_fail "guest 2: acc_watch did not start"
	fi
	if ((VM_FAILURES > before)); then
		rec "fail $r $m set-up: see the FAIL lines of round $r, peer_auth=$m"
	fi
	rec "setup round=$r mode=$m $(result "$OUT") $(result "$out2")"
}

# ops_trial ROUND MODE T: part 2; an "ops" record.
ops_trial() {
	local r=$1 m=$2 t=$3 json rc=0 ops before=$VM_FAILURES
	guests "1 reload $m" "2 reload $m"
	if ((VM_FAILURES > before)); then
		rec "fail $r $m ops: reloading lite.ko failed"
		return
	fi
	if ! lc_start 3000; then
		vm_fail "litemgr + liteagents ready (peer_auth=$m)"
		rec "fail $r $m ops: litemgr + liteagents not ready"
		lc_stop
		return
	fi
	json=$(litevm exec -g 1 -t 600 -- "$LITE_BIN/tools/bench/lite-bench --create pac-bench-$t" \
		"--home $(lc_node_name 2) --size 4K --ops read,write,faa,cas --sizes 8" \
		"--iters $PAC_ITERS -o json") || rc=$?
	lc_stop
	if ((rc == 0)) && ops=$(jq -r '.latency[] | select(.size == 8) |
			"\(.op)=\(.p50_us) \(.op)_p99=\(.p99_us)"' <<< "$json" | tr '\n' ' '); then
		vm_ok "lite-bench, peer_auth=$m: $ops"
		rec "ops round=$r mode=$m $ops"
	else
		vm_fail "lite-bench, peer_auth=$m (status $rc): $json"
		rec "fail $r $m ops: lite-bench failed (status $rc)"
	fi
}

host_main() {
	local r m t=0 order
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	for ((r = 1; r <= PAC_ROUNDS; r++)); do
		order=(0 1)
		((r % 2)) || order=(1 0)
		for m in "${order[@]}"; do
			t=$((t + 1))
			echo "== round $r of $PAC_ROUNDS, peer_auth=$m: connection set-up"
			setup_trial "$r" "$m" "$t"
			echo "== round $r of $PAC_ROUNDS, peer_auth=$m: small operations (litemgr + liteagents, lite-bench)"
			ops_trial "$r" "$m" "$t"
		done
	done
	echo "== rmmod"
	guests "1 unload" "2 unload"
}

# ---------------------------------------------------------------------------
# The command itself: options, the cluster, the report.
# ---------------------------------------------------------------------------
usage() { awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; }
# uint_in VALUE MIN MAX: VALUE is a whole number in MIN..MAX.
uint_in() { [[ $1 =~ ^[0-9]{1,9}$ ]] && ((10#$1 >= $2 && 10#$1 <= $3)); }
usage_error() {
	echo "peer_auth_cost: $*" >&2
	exit 2
}

run() {
	local rounds=5 iters=1000 format=table litevm_opts=() command repo commit rc=0 results
	command=$(printf '%q ' "$0" "$@")
	command=${command% }
	[[ -n ${LITE_BIN-} ]] && command="LITE_BIN=$(printf '%q' "$LITE_BIN") $command"
	while (($#)); do
		case $1 in
		--rounds | --iters | -o | --state)
			(($# >= 2)) || usage_error "$1 needs a value (see --help)" ;;
		esac
		case $1 in
		-h | --help) usage; return 0 ;;
		--rounds) rounds=$2; shift ;;
		--iters) iters=$2; shift ;;
		-o) format=$2; shift ;;
		--state) litevm_opts+=(--state "$2"); shift ;;
		*) usage_error "unknown argument '$1' (see --help)" ;;
		esac
		shift
	done
	uint_in "$rounds" 3 50 || usage_error "--rounds must be 3..50, not '$rounds'"
	uint_in "$iters" 10 1000000 || usage_error "--iters must be 10..1000000, not '$iters'"
	[[ $format == table || $format == json ]] || usage_error "-o table or json"
	for tool in jq python3 busybox; do
		command -v "$tool" > /dev/null || usage_error "$tool not found (run tools/setup.sh)"
	done

	repo=$(cd "$(dirname "$0")/../.." && pwd)
	commit=$(git -C "$repo" rev-parse --short HEAD 2> /dev/null || echo unknown)
	[[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2> /dev/null) ]] &&
		commit+=" + uncommitted changes"
	results=$(mktemp /tmp/peer_auth_cost.XXXXXX)
	# shellcheck disable=SC2064  # expanded now: $results is a local
	trap "rm -f '$results'" EXIT
	export PAC_ROUNDS=$((10#$rounds)) PAC_ITERS=$((10#$iters)) PAC_RESULTS=$results
	echo "peer_auth_cost: $command" >&2
	# About a minute a trial; twice that before litevm gives up.
	VM_TIMEOUT=$((600 + PAC_ROUNDS * 2 * 150))
	# Everything but the report to stderr: -o json prints only JSON.
	vm_boot "${litevm_opts[@]}" >&2 || rc=$?
	report "$results" "$format" "$command" "$commit" "${LITE_BIN:-?}/kmod/lite.ko" || rc=1
	return "$rc"
}

# report RESULTS FORMAT COMMAND COMMIT MODULE: the table or the JSON; fails
# when a trial failed or measured nothing.
report() {
	python3 - "$@" "$PAC_ROUNDS" "$PAC_ITERS" "${OPS[*]}" <<'EOF'
import json, statistics, sys

path, fmt, command, commit, module, rounds, iters, ops = sys.argv[1:9]
ops = ops.split()
trials, order, fails = {}, [], []

def num(d, k):
    try:
        return int(d.get(k, ""))
    except ValueError:
        try:
            return float(d.get(k, ""))
        except ValueError:
            return None

for line in open(path):
    w = line.split()
    if not w:
        continue
    if w[0] == "fail":
        fails.append({"round": int(w[1]), "peer_auth": int(w[2]), "what": " ".join(w[3:])})
        continue
    d = dict(x.split("=", 1) for x in w[1:] if "=" in x)
    key = (int(d["round"]), int(d["mode"]))
    if key not in trials:
        trials[key] = {"round": key[0], "peer_auth": key[1]}
        order.append(key)
    t = trials[key]
    if w[0] == "setup":
        add, conn = num(d, "init_add"), num(d, "init_conn")
        if add is None or conn is None:
            continue
        t["k"] = num(d, "k")
        t["initiator_ms"] = (conn - add) / 1000
        t["setup_ms"] = t["initiator_ms"]
        t["acceptor_mapped"] = False
        t1, t2, t3, t4, acc = (num(d, x) for x in ("T1", "T2", "T3", "T4", "acc_conn"))
        if None not in (t1, t2, t3, t4, acc):
            theta = ((t2 - t1) + (t3 - t4)) / 2  # guest 1's clock - guest 2's
            t["acceptor_ms"] = (acc + theta - add) / 1000
            t["sync_rtt_ms"] = ((t4 - t1) - (t3 - t2)) / 1000
            t["setup_ms"] = max(t["initiator_ms"], t["acceptor_ms"])
            t["acceptor_mapped"] = True
    elif w[0] == "ops":
        for op in ops:
            t[op + "_p50_us"] = num(d, op)
            t[op + "_p99_us"] = num(d, op + "_p99")

metrics = ["setup_ms", "initiator_ms", "acceptor_ms"] + [op + "_p50_us" for op in ops]
summary = {}
for m in metrics:
    s = {}
    for mode, name in ((0, "peer_auth_0"), (1, "peer_auth_1")):
        v = [trials[k][m] for k in order if k[1] == mode and trials[k].get(m) is not None]
        s[name] = ({"n": len(v), "median": statistics.median(v), "min": min(v), "max": max(v)}
                   if v else {"n": 0, "median": None, "min": None, "max": None})
    a, b = s["peer_auth_0"]["median"], s["peer_auth_1"]["median"]
    s["ratio_1_over_0"] = b / a if a and b is not None else None
    summary[m] = s
ks = sorted({trials[k]["k"] for k in order if trials[k].get("k")})
out = {"command": command, "commit": commit, "module": module, "rounds": int(rounds),
       "order": "odd rounds peer_auth=0 first, even rounds peer_auth=1 first",
       "qps_per_peer": ks[0] if len(ks) == 1 else ks, "lite_bench_iters": int(iters),
       "trials": [trials[k] for k in order], "summary": summary, "failures": fails}
complete = (not fails and len(order) == 2 * int(rounds) and
            all(trials[k].get("setup_ms") is not None and
                all(trials[k].get(op + "_p50_us") is not None for op in ops) for k in order))

if fmt == "json":
    print(json.dumps(out))
    sys.exit(0 if complete else 1)

def f(v, p=2):
    return "-" if v is None else f"{v:.{p}f}"

def spread(x):
    if x["median"] is None:
        return "-"
    return f"{x['median']:.3f} ({x['min']:.3f}-{x['max']:.3f})"

print("lite.ko peer authentication: what it costs (peer_auth=0 vs 1, one cluster, one run)")
print(f"command: {command}")
print(f"commit:  {commit}; module {module}")
print(f"{rounds} rounds, {out['order']}; K = {out['qps_per_peer']} QPs per peer; "
      f"lite-bench {iters} timed ops per op, 8 B, guest 1 -> LMR on node2")
print()
hdr = (f"{'ROUND':<6}{'PEER_AUTH':>9} {'SETUP_MS':>9} {'INIT_MS':>8} {'ACC_MS':>8} {'SYNC_RTT':>8}"
       + "".join(f" {op.upper() + '_P50':>9}" for op in ops))
print(hdr)
for k in order:
    t = trials[k]
    mark = "" if t.get("acceptor_mapped", True) else "*"
    print(f"{t['round']:<6}{t['peer_auth']:>9} {f(t.get('setup_ms'), 3) + mark:>9} "
          f"{f(t.get('initiator_ms'), 3):>8} {f(t.get('acceptor_ms'), 3):>8} "
          f"{f(t.get('sync_rtt_ms'), 3):>8}"
          + "".join(f" {f(t.get(op + '_p50_us')):>9}" for op in ops))
print()
print(f"{'':<14}{'PEER_AUTH=0: MEDIAN (MIN-MAX)':>32}{'PEER_AUTH=1: MEDIAN (MIN-MAX)':>32}  1/0")
for m in metrics:
    s = summary[m]
    print(f"{m:<14}{spread(s['peer_auth_0']):>32}{spread(s['peer_auth_1']):>32}  "
          f"{f(s['ratio_1_over_0'], 3)}")
print()
print("SETUP_MS: from the second `peer add` (the initiator's, guest 1) until K/K QPs are connected")
print("  on both nodes = max(INIT_MS, ACC_MS), from lite.ko's kernel log lines; guest 2's clock is")
print("  mapped onto guest 1's by a TCP ping-pong before the add (SYNC_RTT: its round trip, ms).")
print("  * = the acceptor's time could not be mapped: SETUP_MS is the initiator's alone.")
print("*_P50: lite-bench p50 of single 8 B operations, microseconds. 1/0: ratio of the medians.")
print("Emulated (TCG) time: compare figures only within one run.")
for x in fails:
    print(f"FAILED: round {x['round']}, peer_auth={x['peer_auth']}: {x['what']}")
if not complete:
    print("incomplete: not every trial was measured (see the log on stderr)")
sys.exit(0 if complete else 1)
EOF
}

main() {
	case ${1-} in
	--guest | --inside) vm_main "$@" ;;
	*) run "$@" ;;
	esac
}
main "$@"
