#!/bin/bash
# VM blast-radius test (issue #31, deliverable 4): what one unprivileged
# user with an account on every node, and then one compromised node, can
# take from everybody else. Three guests, litemgr on the host (mutual TLS),
# a liteagent in each.
#  - victims first, as root and as uid 1001: LMRs on node2 and node3 (0600
#    root-only, 0644, 0444, 0600 of uid 1001) with known bytes, maps held
#    (grants) by root on node2 and uid 1001 on node3, a lock homed on node2
#    held by root on node3, an echo service of root's on node2 (0700) with
#    a bound client on node3, barrier rounds between node2 and node3;
#  - a snapshot: the membership (ids, incarnations, states, open
#    sessions), the victims' LMRs (owner, mode, size, epoch), services,
#    grants, the bytes' checksums, the manager's failure counter;
#  - phase A, uid 1000 on every node runs the attacks of the reviews
#    kmod-2026-11-28 and cp-2026-11-28 (the existing attacker probes), each
#    checked for its own refusal:
#      LMR access and squatting: reads/writes/frees of the victims' LMRs,
#        a victim's name taken again, a compat name (v0/<node>/lock/77)
#        squatted and refused to root's compat call (cp M5); 300 MiB on
#        one home past --max_lmr_bytes_per_owner_per_home (cp M6);
#      the lock service opened directly with forged frames (kmod H2:
#        sync_probe forge), and its wait budget (48 waiters: 16 wait,
#        32 EDQUOT) while root on another node takes a lock of the same
#        home at once;
#      the RPC fence (kmod H4): uid 1000's own service closed while its
#        reply is held by userfaultfd (rpc_stall serve), called from node1:
#        ECONNREFUSED, nothing posted late (rpc/send_errors), root's calls
#        to the victims' service meanwhile answered;
#      io_uring READs never reaped on every node (kmod H1: ring_probe hold,
#        EBUSY past 16 per file, EDQUOT per uid), held through the rest;
#      RPC: the victims' service (EACCES), lite.sync.* (EPERM), the
#        victims' service name (EEXIST);
#      a grant storm (cp H2): uid 1000 maps its own LMR from all three nodes
#        past --max_grants_per_lmr (4,096; ENOSPC beyond), then frees it
#        with every grant held;
#  - the comparison: the snapshot again (nothing changed, nobody failed),
#    the bytes unchanged, the victim's lock still its (another node's
#    acquire times out), the service answers its client, the barrier
#    passes, and root on node1 takes a second lock of the same home;
#  - phase B, root on node1 with node1's own node certificate
#    (tests/vm/attack/node_attack, gRPC to litemgr): Join as node2, also
#    restoring node2's id (PERMISSION_DENIED); a Session stream that
#    heartbeats as node2 (PERMISSION_DENIED) or opens with a forged agent
#    answer (INVALID_ARGUMENT); AllocLmr, MapLmr, FreeLmr,
#    RegisterService, BindService acting as node2 (PERMISSION_DENIED);
#    RegisterLmr of an id never issued (FAILED_PRECONDITION) or of node2's
#    (PERMISSION_DENIED); a victim's LMR or service name (ALREADY_EXISTS);
#    a bind without an open (FAILED_PRECONDITION, cp M3); 300 binds at once
#    after an open (OK or RESOURCE_EXHAUSTED, nothing else); litectl's
#    operator calls (nodes, evict, drain, watch) and node2's agent with
#    node1's certificate (PERMISSION_DENIED); then the same comparison, and
#    the victim unlocks its lock, which root on node1 then takes;
#  - litevm's teardown checks the guests' kernel logs.
# Usage: tests/vm/blast_radius.sh [--state DIR]   (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=blast_radius
VM_GUESTS=3
VM_TIMEOUT=600
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:sync_probe //tests/vm:ring_probe
	//tests/vm:limits_map //tests/vm:v0_lock //tests/vm:rpc_stall //tests/vm/attack:node_attack)
# The victims' holders (lock, maps, service) live through both phases: a
# job is killed after VM_GUEST_SECS.
VM_GUEST_SECS=400
# Grants uid 1000 asks for on each node (3 nodes: past the manager's 4,096
# per LMR).
BR_GRANTS=${BR_GRANTS:-1400}
BR_MANAGER=${BR_MANAGER-}
VM_GUEST_ENV=(BR_GRANTS BR_MANAGER)

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/cmd/liteop/liteop
SYNC=${LITE_BIN-}/tests/vm/sync_probe
RING=${LITE_BIN-}/tests/vm/ring_probe
MAPPER=${LITE_BIN-}/tests/vm/limits_map
V0_LOCK=${LITE_BIN-}/tests/vm/v0_lock
quiet() { "$@" > /dev/null; }
as_1001() { setpriv --reuid=1001 --regid=1001 --clear-groups "$@"; }

# probe_run PREFIX... PROBE ARGS: a probe's ok/FAIL lines, its count.
probe_run() {
	local rc=0
	"$@" | indent || rc=$?
	((rc > 100)) && { vm_fail "$*: ended with status $rc"; return; }
	VM_FAILURES=$((VM_FAILURES + rc))
}

# The victims. v_alloc AS NAME SIZE HOME MODE SEED: an LMR with the pattern
# SEED written (SEED 0: left zero; its mode need not let the owner write).
v_alloc() {
	local as=$1 name=$2 size=$3 home=$4 mode=$5 seed=$6 pre=()
	[[ $as == root ]] || pre=(setpriv --reuid="$as" --regid="$as" --clear-groups)
	check "uid $as allocs $name ($size, $mode) on $home" \
		quiet "${pre[@]}" "$LITEOP" alloc "$name" "$size" --home "$home" --mode "$mode"
	((seed == 0)) || check "... and writes pattern $seed into it" \
		quiet "${pre[@]}" "$LITEOP" write "$name" 0 --pattern "$seed" --length "$size"
}
victims_n2() {  # root's LMRs on node2
	v_alloc root br.v.r2 64K node2 0600 21
	v_alloc root br.v.pub 64K node2 0644 22
	v_alloc root br.v.lock 4096 node2 0600 0
	v_alloc root br.v.lock2 4096 node2 0600 0
	v_alloc root br.v.bar 4096 node2 0600 0
}
victims_n3() {  # root's and uid 1001's on node3
	v_alloc root br.v.ro 64K node3 0444 0
	v_alloc 1001 br.v.u1001 64K node3 0600 31
}
# sums: "SUM NAME fnv" for each victim LMR, read by its owner (the line
# the snapshot compares).
sums() {
	local name out
	for name in br.v.r2 br.v.pub br.v.ro; do
		out=$("$LITEOP" read "$name" 0 64K --checksum 2>&1) || out="error: $out"
		echo "SUM $name $out"
	done
	out=$(as_1001 "$LITEOP" read br.v.u1001 0 64K --checksum 2>&1) || out="error: $out"
	echo "SUM br.v.u1001 $out"
}
verify_bytes() {
	check "br.v.r2 still holds pattern 21" "$LITEOP" verify br.v.r2 0 --pattern 21 --length 64K
	check "br.v.pub still holds pattern 22" "$LITEOP" verify br.v.pub 0 --pattern 22 --length 64K
	check "br.v.u1001 still holds pattern 31 (read by uid 1001)" \
		as_1001 "$LITEOP" verify br.v.u1001 0 --pattern 31 --length 64K
}
# hold_map AS NAME: a map of NAME held until killed (a grant).
hold_map() {
	if [[ $1 == root ]]; then
		"$LITEOP" read "$2" 0 8 --hold 0 > /dev/null
	else
		setpriv --reuid="$1" --regid="$1" --clear-groups "$LITEOP" read "$2" 0 8 --hold 0 > /dev/null
	fi
}
serve() {  # NAME READY: root's echo service, READY once it serves
	"$LITEOP" rpc-serve "$1" --mode 0700 | while IFS= read -r line; do
		echo "$line"
		[[ $line == serving=* ]] && : > "$2"
	done
}
calls_ok() {  # NAME COUNT
	local out
	out=$("$LITEOP" rpc-call "$1" --count "$2" --size 64 2>&1)
	echo "        node$GUEST: $out"
	[[ $out == *"replies_checked=$2"* ]]
}
call_ok() { check "root on node$GUEST: $2 calls to $1, every reply its request" calls_ok "$@"; }
lock_hold() { probe_run "$SYNC" hold-until br.v.lock /tmp/br.lock.ready /tmp/br.lock.release; }
barrier_ok() { probe_run "$SYNC" barrier br.v.bar 2 1 "$1"; }
lock_busy() {  # NAME: root here waits 2 s for NAME and times out
	local out
	out=$("$SYNC" acquire "$1" 2000 clean 2>&1)
	echo "        node$GUEST: $out" | head -n 1
	has_text "$out" "(ETIMEDOUT)"
}
lock_busy_ok() { check "root on node$GUEST waits 2 s for $1, held by another: ETIMEDOUT" lock_busy "$1"; }
lock_free() {  # NAME MS: root here takes NAME within MS and unlocks it
	local t0
	now_ms
	t0=$NOW_MS
	probe_run "$SYNC" acquire "$1" "$2" clean
	now_ms
	echo "        node$GUEST: $1 taken and given back in $((NOW_MS - t0)) ms"
}

# Phase A: uid 1000.
# user_lmrs HOME_NEXT: its own LMRs for the ring and lock attacks.
user_lmrs() {
	check "uid 1000 allocs br.a.ring$GUEST (0644) on node$1" \
		as_user "$LITEOP" alloc "br.a.ring$GUEST" 64K --home "node$1" --mode 0644
	check "... writes it" as_user "$LITEOP" write "br.a.ring$GUEST" 0 --data "held-ok!"
}
# lmr_attacks N2 N3: what uid 1000 tries on the victims' LMRs and names.
lmr_attacks() {
	local n2=$1 n3=$2
	check "uid 1000 reads br.v.r2 (root, 0600): EACCES" \
		fails_with EACCES as_user "$LITEOP" read br.v.r2 0 8
	check "uid 1000 reads br.v.u1001 (uid 1001, 0600): EACCES" \
		fails_with EACCES as_user "$LITEOP" read br.v.u1001 0 8
	check "uid 1000 writes br.v.pub (0644): EACCES" \
		fails_with EACCES as_user "$LITEOP" write br.v.pub 0 --data attacker
	check "uid 1000 writes br.v.ro (0444): EACCES" \
		fails_with EACCES as_user "$LITEOP" write br.v.ro 0 --data attacker
	check "uid 1000 frees br.v.r2: EACCES" \
		fails_with EACCES as_user "$LITEOP" free br.v.r2
	check "uid 1000 frees br.v.pub (which it may read): EACCES" \
		fails_with EACCES as_user "$LITEOP" free br.v.pub
	check "uid 1000 allocs the name br.v.r2 again: EEXIST" \
		fails_with EEXIST as_user "$LITEOP" alloc br.v.r2 4096 --home "node$GUEST" --mode 0666
	check "uid 1000 allocs 300 MiB on node$GUEST (past 256 MiB per owner per home): ENOSPC" \
		fails_with ENOSPC as_user "$LITEOP" alloc "br.a.big$GUEST" 300M --home "node$GUEST"
	check "uid 1000 calls root's br.v.echo (0700): EACCES" \
		fails_with EACCES as_user "$LITEOP" rpc-call br.v.echo
	check "uid 1000 opens lite.sync.$n2: EPERM" \
		fails_with EPERM as_user "$LITEOP" rpc-call "lite.sync.$n2"
	check "uid 1000 opens lite.sync.$n3: EPERM" \
		fails_with EPERM as_user "$LITEOP" rpc-call "lite.sync.$n3"
	# timeout runs as root: a uid 1000 process cannot exec a binary under
	# Bazel's output base in /root (0700); setpriv can, as it drops root
	# only at its own exec.
	check "uid 1000 serves the name br.v.echo: EEXIST" \
		fails_with EEXIST timeout 30 setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$LITEOP" rpc-serve br.v.echo --count 1
}
# forge HOME_ID LMR_ID: kmod H2, the lock protocol spoken by hand.
forge() { probe_run as_user "$SYNC" forge "lite.sync.$1" "$2"; }
# The fence (kmod H4): uid 1000 serves br.a.stall (rpc_stall serve) and
# closes it while its reply's page is held by userfaultfd for 8 s; uid 1000
# on another node calls it. Nothing may be posted late (into freed memory
# under key_mode=global, a remote access error under lmr).
RPC_STALL=${LITE_BIN-}/tests/vm/rpc_stall
stall_serve() {  # READY
	local out e0 was
	counter rpc/send_errors
	e0=$COUNTER
	read -r was < /proc/sys/vm/unprivileged_userfaultfd
	sysctl -qw vm.unprivileged_userfaultfd=1
	out=$(as_user "$RPC_STALL" serve br.a.stall 8 "$1" 2>&1)
	sysctl -qw vm.unprivileged_userfaultfd="$was"
	echo "$out" | indent
	check "uid 1000's reply copied during its RPC_CLOSE is not sent (ECONNREFUSED)" \
		has_text "$out" "result=ECONNREFUSED"
	nap 1
	counter rpc/send_errors
	check "nothing was posted after GONE (rpc/send_errors $e0 -> $COUNTER)" test "$COUNTER" -eq "$e0"
}
stall_call() {
	local out
	out=$(as_user "$LITEOP" rpc-call br.a.stall --timeout-ms 30000 2>&1)
	echo "        node$GUEST: ${out:0:300}"
	check "uid 1000's call to its closing br.a.stall: ECONNREFUSED" has_text "$out" ECONNREFUSED
}
# ring_hold READY: kmod H1 on this node, until SIGUSR1.
ring_hold() { probe_run as_user "$RING" hold "br.a.ring$GUEST" "$1"; }
ring_release() {  # READY
	local pid=
	read -r pid < "$1" || true
	check "uid 1000's ring_probe (${pid:-none}) still holds its completions" kill -0 "${pid:-none}"
	kill -USR1 "${pid:-none}" 2> /dev/null || true
}
# The wait budget at node2: uid 1000 holds br.a.q and 48 of its LOCKs wait.
quota_lmr() {
	check "uid 1000 allocs br.a.q (0600) on node2" \
		as_user "$LITEOP" alloc br.a.q 4096 --home node2 --mode 0600
}
quota_hold() { as_user "$SYNC" hold br.a.q /tmp/br.q.ready; }
quota_waiters() { probe_run as_user "$SYNC" waiters br.a.q 48 8000 16 /tmp/br.w.ready; }
# compat squatting (cp M5): uid 1000 here makes node N3's lock 77.
squat() {
	check "uid 1000 on node$GUEST makes v0/$1/lock/77 (0666)" \
		as_user "$LITEOP" alloc "v0/$1/lock/77" 4096 --home "node$GUEST" --mode 0666
}
squatted() { probe_run "$V0_LOCK" squatted "$1" 77; }
# The grant storm (cp H2). storm_lmr: uid 1000's LMR for it.
storm_lmr() {
	check "uid 1000 allocs br.a.storm (0644) on node3" \
		as_user "$LITEOP" alloc br.a.storm 4096 --home node3 --mode 0644
}
# storm_map N READY RELEASE: uid 1000 maps br.a.storm N times in one file,
# writes "mapped K ERR" to READY, holds until RELEASE exists, closes.
storm_map() {
	local t0
	coproc M { exec setpriv --reuid=1000 --regid=1000 --clear-groups "$MAPPER"; }
	echo open >&"${M[1]}"
	read -r -t 30 REPLY <&"${M[0]}" || REPLY=
	check "uid 1000 opens /dev/lite ($REPLY)" test "$REPLY" = "file 0"
	now_ms
	t0=$NOW_MS
	echo "map 0 br.a.storm $1" >&"${M[1]}"
	read -r -t 140 REPLY <&"${M[0]}" || REPLY=
	now_ms
	echo "        node$GUEST: $REPLY ($((NOW_MS - t0)) ms)"
	echo "$REPLY" > "$2"
	until [[ -e $3 ]]; do nap 0.5; done
	echo "close 0" >&"${M[1]}"
	read -r -t 30 REPLY <&"${M[0]}" || REPLY=
	check "uid 1000 closes its file with the revoked grants ($REPLY)" test "$REPLY" = "closed 0"
	eval "exec ${M[1]}>&-"
	wait "$M_PID" || true
}
storm_free() {
	check "uid 1000 frees br.a.storm with every grant held" as_user "$LITEOP" free br.a.storm
}
user_free() {  # its own LMRs, at the end
	local name
	for name in "$@"; do
		check "uid 1000 frees $name" as_user "$LITEOP" free "$name"
	done
}

# Phase B: root on node1 with node1's own certificate (its agent's files).
NODE_ATTACK=${LITE_BIN-}/tests/vm/attack/node_attack
TLS=/run/litevm/tls
as_node1() {  # litectl with node1's node certificate
	"$LITE_BIN/cmd/litectl/litectl" --manager "$BR_MANAGER" --tls_cert "$TLS/node1.crt" \
		--tls_key "$TLS/node1.key" --tls_ca "$TLS/ca.crt" "$@"
}
denied() {  # LITECTL_ARGS...: litectl as node1 fails PERMISSION_DENIED
	local out rc=0
	out=$(as_node1 "$@" 2>&1) || rc=$?
	echo "        ${out:0:300}"
	((rc == 1)) && has_text "$out" PERMISSION_DENIED
}
# compromised SELF_ID SELF_INC OTHER_NAME OTHER_ID OTHER_INC SERVICE_ID OTHER_IP
compromised() {
	local other=$3 ip=$7
	probe_run "$NODE_ATTACK" "$BR_MANAGER" "$TLS/node1.crt" "$TLS/node1.key" "$TLS/ca.crt" \
		"${@:1:5}" br.v.r2 br.v.echo "$6"
	check "litectl nodes (operator) with node1's certificate: PERMISSION_DENIED" denied nodes
	check "litectl evict $other with node1's certificate: PERMISSION_DENIED" denied evict "$other"
	check "litectl drain $other with node1's certificate: PERMISSION_DENIED" denied drain "$other"
	check "litectl watch with node1's certificate: PERMISSION_DENIED" denied watch --count 1
	check "$other's agent (status) with node1's certificate: PERMISSION_DENIED" \
		denied --agent_tls_name "$other" agent status --agent "$ip:7421"
}

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------
LITECTL() { "$LITE_BIN/cmd/litectl/litectl" "$@"; }

# snapshot FILE: what the attacks must not change, one line per fact.
snapshot() {
	local raw=$LITE_VM_STATE/br.raw
	{
		LITECTL -o json nodes && echo @@ && LITECTL -o json lmrs && echo @@ &&
			LITECTL -o json services && echo @@ && LITECTL -o json grants
	} > "$raw" || { echo "litectl failed" > "$1"; return; }
	/usr/bin/python3 - "$raw" > "$1" << 'EOF'
import json, sys
parts = open(sys.argv[1]).read().split("@@\n")
nodes, lmrs, services, grants = (json.loads(p) for p in parts)
g = lambda o, k: o.get(k, 0)
for n in nodes.get("nodes", []):
    print("node", g(n, "node_id"), n.get("node_name"), g(n, "incarnation"),
          n.get("state"), n.get("rdma_address"), "draining" if n.get("draining") else "",
          "session_open" if n.get("session_open") else "session_closed")
for l in lmrs.get("lmrs", []):
    if l.get("name", "").startswith("br.v."):
        print("lmr", l["name"], g(l, "lmr_id"), g(l, "home_node_id"), g(l, "size_bytes"),
              "uid", g(l, "owner_uid"), "gid", g(l, "owner_gid"), "mode", oct(g(l, "mode")),
              "epoch", g(l, "epoch"))
for s in services.get("services", []):
    if s.get("name", "").startswith("br.v.") or s.get("name", "").startswith("lite.sync."):
        print("service", s["name"], g(s, "service_id"), g(s, "node_id"), g(s, "node_incarnation"),
              g(s, "port"), "uid", g(s, "owner_uid"), "mode", oct(g(s, "mode")))
for x in grants.get("grants", []):
    # The held maps only: a lock's or barrier's map comes and goes.
    if x.get("lmr_name", "") in ("br.v.pub", "br.v.u1001"):
        print("grant", x["lmr_name"], g(x, "grant_id"), "holder", g(x, "holder_node_id"),
              g(x, "holder_incarnation"), "epoch", g(x, "epoch"))
EOF
	echo "failures $(failures)" >> "$1"
}
# failures: the manager's lite_manager_member_failures_total (every cause)
# plus its failed records (lite_manager_members{state="failed"}); "unread"
# when the metrics do not have both.
failures() {
	curl -s --max-time 5 http://127.0.0.1:9742/metrics | awk '
		/^lite_manager_member_failures_total[{ ]/ {s += $NF; n++}
		/^lite_manager_members[{].*state="failed"/ {f += $NF; m++}
		END {if (n && m) print s + f; else print "unread"}'
}
# sums_of GUEST: the victims' checksums, read on GUEST.
sums_of() { litevm exec -g "$1" -t 60 -- "$(vm_guest_cmd "$1" sums)" | grep '^SUM ' || true; }

# compare WHEN: the snapshot and the bytes against the first ones.
compare() {
	local now=$LITE_VM_STATE/br.snap.$1
	snapshot "$now"
	sums_of 1 > "$now.sums"
	if diff -u "$LITE_VM_STATE/br.snap.0" "$now" > "$now.diff"; then
		vm_ok "$1: membership (ids, incarnations, states), the victims' LMRs, services and grants as before"
	else
		vm_fail "$1: the cluster differs from the snapshot"
		indent < "$now.diff"
	fi
	check "$1: nobody was declared failed (member_failures_total + failed members: $(failures))" \
		grep -qx "failures 0" "$now"
	if diff -u "$LITE_VM_STATE/br.snap.0.sums" "$now.sums" > "$now.sums.diff"; then
		vm_ok "$1: the victims' bytes are unchanged ($(wc -l < "$now.sums") checksums)"
	else
		vm_fail "$1: the victims' bytes changed"
		indent < "$now.sums.diff"
	fi
}

# victims_intact WHEN: the snapshot, the bytes, the lock (still held: root
# elsewhere waits in vain), the service (its client on node3; node1 never
# opens it: phase B's bind without an open must stay one) and the barrier.
victims_intact() {
	compare "$1"
	guest 1 verify_bytes
	guest 1 lock_busy_ok br.v.lock
	guest 3 call_ok br.v.echo 5
	guests "2 barrier_ok 2" "3 barrier_ok 2"
}
node_inc() {  # NAME: its incarnation at the manager
	LITECTL -o json nodes | tr -d '\n ' | grep -o "{[^{}]*\"node_name\":\"$1\"[^{}]*}" |
		grep -o '"incarnation":"[0-9]*' | grep -o '[0-9]*$'
}
# job_ready GUEST FILE [-s]: FILE exists in the guest (-s: and is not empty).
job_ready() { litevm exec -g "$1" -t 20 -- "test ${3:--e} $2" > /dev/null 2>&1; }

host_main() {
	local n1 n2 n3 lock_id svc_id out g job job1 hold2 hold3 echo_job lock_job jobs=() rings=() q w t0
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr on the host, liteagent on 3 guests"
	# shellcheck disable=SC2119  # litecluster.sh's default lease is meant
	lc_start
	n1=$(lc_node_id 1) n2=$(lc_node_id 2) n3=$(lc_node_id 3)
	echo "   node ids: node1 $n1, node2 $n2, node3 $n3"

	echo "== victims: root and uid 1001 on node2 and node3"
	guests "2 victims_n2" "3 victims_n3"
	hold2=$(vm_spawn 2 hold_map root br.v.pub)
	hold3=$(vm_spawn 3 hold_map 1001 br.v.u1001)
	echo_job=$(vm_spawn 2 serve br.v.echo /tmp/br.echo.ready)
	lock_job=$(vm_spawn 3 lock_hold)
	vm_wait_until 60 job_ready 2 /tmp/br.echo.ready || vm_fail "root's br.v.echo is not served"
	vm_wait_until 60 job_ready 3 /tmp/br.lock.ready || vm_fail "root on node3 did not take br.v.lock"
	guest 3 call_ok br.v.echo 5
	guests "2 barrier_ok 3" "3 barrier_ok 3"
	lock_id=$(LITECTL -o json lmrs | tr -d '\n ' |
		grep -o '{[^{}]*"name":"br.v.lock"[^{}]*}' | grep -o '"lmr_id":"[0-9]*' | grep -o '[0-9]*$' || true)
	check "br.v.lock has an LMR id (${lock_id:-none})" test -n "$lock_id"
	# The held maps are grants at the manager before the snapshot.
	vm_wait_until 30 bash -c "'$LITE_BIN/cmd/litectl/litectl' grants | grep -q br.v.u1001" || true

	echo "== snapshot"
	snapshot "$LITE_VM_STATE/br.snap.0"
	sums_of 1 > "$LITE_VM_STATE/br.snap.0.sums"
	indent < "$LITE_VM_STATE/br.snap.0"
	indent < "$LITE_VM_STATE/br.snap.0.sums"
	check "the snapshot has 3 ALIVE nodes" test "$(grep -c NODE_STATE_ALIVE "$LITE_VM_STATE/br.snap.0")" -eq 3
	check "... the victims' 7 LMRs" test "$(grep -c '^lmr ' "$LITE_VM_STATE/br.snap.0")" -eq 7
	check "... root's service br.v.echo" grep -q '^service br.v.echo ' "$LITE_VM_STATE/br.snap.0"
	check "... the victims' held grants" test "$(grep -c '^grant ' "$LITE_VM_STATE/br.snap.0")" -ge 2
	check "... 4 checksums, none an error" test "$(grep -c 'fnv1a64=' "$LITE_VM_STATE/br.snap.0.sums")" -eq 4
	check "... no failure so far" grep -qx "failures 0" "$LITE_VM_STATE/br.snap.0"

	echo "== phase A: uid 1000 on every node"
	t0=$SECONDS
	guests "1 user_lmrs 2" "2 user_lmrs 3" "3 user_lmrs 1"
	guest 1 quota_lmr
	guest 1 storm_lmr
	echo "-- io_uring READs never reaped (kmod H1), held on every node through phase A"
	for g in 1 2 3; do
		rings[g]=$(vm_spawn "$g" ring_hold /tmp/br.ring.ready)
	done
	for g in 1 2 3; do
		vm_wait_until 60 job_ready "$g" /tmp/br.ring.ready -s ||
			vm_fail "node$g: uid 1000's ring_probe is not holding after 60 s"
	done
	echo "-- the victims' LMRs, names and service (cp M5, M6, kmod M1)"
	guests "1 lmr_attacks $n2 $n3" "2 lmr_attacks $n2 $n3" "3 lmr_attacks $n2 $n3"
	echo "-- the lock service spoken directly (kmod H2), from every node"
	guests "1 forge $n2 $lock_id" "2 forge $n2 $lock_id" "3 forge $n2 $lock_id"
	echo "-- the RPC fence (kmod H4): uid 1000's service on node3 closes while its reply faults in"
	job=$(vm_spawn 3 stall_serve /tmp/br.stall.ready)
	vm_wait_until 60 bash -c "'$LITE_BIN/cmd/litectl/litectl' services | grep -q br.a.stall" ||
		vm_fail "uid 1000's br.a.stall is not served"
	job1=$(vm_spawn 1 stall_call)
	vm_wait_until 60 job_ready 3 /tmp/br.stall.ready || vm_fail "uid 1000's reply did not stall"
	echo "   meanwhile root on node3 calls br.v.echo:"
	guest 3 call_ok br.v.echo 5
	vm_join 1 "$job1" "uid 1000's call to br.a.stall"
	vm_join 3 "$job" "uid 1000's rpc_stall serve"
	echo "-- the wait budget at node2 (kmod H2): root on node3 takes br.v.lock2 meanwhile"
	q=$(vm_spawn 1 quota_hold)
	vm_wait_until 60 job_ready 1 /tmp/br.q.ready || vm_fail "uid 1000 did not take br.a.q"
	w=$(vm_spawn 1 quota_waiters)
	vm_wait_until 60 litevm exec -g 1 -t 10 -- "test -e /tmp/br.w.ready" > /dev/null 2>&1 ||
		vm_fail "uid 1000's waiters did not start"
	guest 3 lock_free br.v.lock2 3000
	vm_join 1 "$w" "uid 1000's 48 waiters: 16 waited, 32 EDQUOT"
	litevm kill -g 1 "$q" > /dev/null 2>&1 || true
	echo "-- compat squatting (cp M5): node3's lock 77 made on node1 by uid 1000"
	guest 1 squat "$n3"
	guest 2 squatted "$n3"
	echo "-- the grant storm (cp H2): br.a.storm mapped $BR_GRANTS times from each node, then freed"
	jobs=()
	for g in 1 2 3; do
		jobs[g]=$(vm_spawn "$g" storm_map "$BR_GRANTS" /tmp/br.storm.ready /tmp/br.storm.release)
	done
	for g in 1 2 3; do
		vm_wait_until 150 job_ready "$g" /tmp/br.storm.ready -s || vm_fail "node$g: the storm's maps did not end"
	done
	out=$(litevm exec -g 1 -t 10 -- "cat /tmp/br.storm.ready" 2> /dev/null)
	out+=" $(litevm exec -g 2 -t 10 -- "cat /tmp/br.storm.ready" 2> /dev/null)"
	out+=" $(litevm exec -g 3 -t 10 -- "cat /tmp/br.storm.ready" 2> /dev/null)"
	echo "        $out"
	storm_counts "$out"
	guest 1 storm_free
	for g in 1 2 3; do litevm exec -g "$g" -t 10 -- ": > /tmp/br.storm.release" > /dev/null; done
	for g in 1 2 3; do vm_join "$g" "${jobs[g]}" "storm_map"; done
	check "br.a.storm's grants are all gone at the manager" \
		vm_wait_until 30 bash -c "! '$LITE_BIN/cmd/litectl/litectl' grants | grep -q br.a.storm"
	echo "-- uid 1000 reaps its io_uring READs"
	for g in 1 2 3; do guest "$g" ring_release /tmp/br.ring.ready; done
	for g in 1 2 3; do vm_join "$g" "${rings[g]}" "ring_probe hold"; done
	guests "1 user_free br.a.ring1 br.a.q v0/$n3/lock/77" "2 user_free br.a.ring2" "3 user_free br.a.ring3"
	vm_took "phase A" "$t0"

	echo "== after phase A: the victims"
	# The storm's free was at least 5 s ago, half the lease: a session it
	# overflowed would have ended at once and its node failed by now.
	sleep 5
	victims_intact "after phase A"
	guest 1 lock_free br.v.lock2 3000

	echo "== phase B: root on node1 with node1's node certificate"
	BR_MANAGER=$LITE_MANAGER
	svc_id=$(LITECTL -o json services | tr -d '\n ' |
		grep -o '{[^{}]*"name":"br.v.echo"[^{}]*}' | grep -o '"service_id":"[0-9]*' | grep -o '[0-9]*$' || true)
	check "br.v.echo has a service id (${svc_id:-none})" test -n "$svc_id"
	guest 1 compromised "$n1" "$(node_inc node1)" node2 "$n2" "$(node_inc node2)" "${svc_id:-1}" \
		"$(lc_guest_ip 2)"
	victims_intact "after phase B"
	litevm exec -g 3 -t 10 -- ": > /tmp/br.lock.release" > /dev/null
	vm_join 3 "$lock_job" "the victim's lock holder unlocked br.v.lock (still its)"
	guest 1 lock_free br.v.lock 5000

	litevm kill -g 2 "$echo_job" > /dev/null 2>&1 || true
	litevm kill -g 2 "$hold2" > /dev/null 2>&1 || true
	litevm kill -g 3 "$hold3" > /dev/null 2>&1 || true
	lc_stop
}

# storm_counts "mapped K ERR ..." (one per node): at most 4,096 grants in
# all, and the ones past it refused ENOSPC (limits_map names it errno28).
storm_counts() {
	local words k total=0 errs="" refused=0 other=0
	read -ra words <<< "$1"
	for ((k = 0; k + 2 < ${#words[@]}; k += 3)); do
		[[ ${words[k]} == mapped ]] || continue
		total=$((total + words[k + 1]))
		errs+=" ${words[k + 2]}"
		case ${words[k + 2]} in
		0) ;;
		ENOSPC | errno28) refused=$((refused + 1)) ;;
		*) other=$((other + 1)) ;;
		esac
	done
	echo "        grants made: $total; first errors:$errs"
	if ((BR_GRANTS * 3 > 4096)); then
		check "the manager granted exactly 4,096 (--max_grants_per_lmr)" test "$total" -eq 4096
		check "... and refused the rest with ENOSPC ($refused nodes), no other error" \
			test "$refused" -ge 1 -a "$other" -eq 0
	else
		check "every one of the $((BR_GRANTS * 3)) maps was granted" test "$total" -eq $((BR_GRANTS * 3))
	fi
}

vm_main "$@"
