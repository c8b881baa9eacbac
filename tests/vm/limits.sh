#!/bin/bash
# VM per-user limits test (outside review kmod-2026-11-23 #8): one guest,
# lite.ko's per-uid limits on grants and pending upcalls, and the memcg
# charge of grants, driven with limits_map (raw ioctls, holding its files).
#  - max_grants_per_uid and max_upcalls_per_uid: the defaults (4096, 256),
#    values out of range refused;
#  - pending upcalls (an agent that never answers, `litenl agent`): uid
#    1000 with max_upcalls_per_uid=4 calls waiting gets EDQUOT at once for
#    a fifth (user_upcalls_refused moves) while uid 1001's call still goes
#    out; the agent leaving ends them all with ENOTCONN and gives the share
#    back (four fit again);
#  - grants (litemgr on the host, liteagent in the guest): uid 1000 maps a
#    128 MiB LMR max_grants_per_uid=64 times, the next map gets EDQUOT
#    (also in a second file: the limit is per uid) and user_grants_refused
#    moves; uid 1001 and root still map; unmapping one lets uid 1000 map
#    one more; closing a file gives back all its grants;
#  - the grants are charged to the mapper's memory cgroup (cgroup v2, a
#    transient group in the guest): its slab memory (memory.stat
#    slab_unreclaimable, byte-exact) grows by at least 384 B (a grant
#    record) per grant and falls back once the file is closed.
# Usage: tests/vm/limits.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=limits
VM_GUESTS=1
VM_TIMEOUT=300
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:limits_map)
VM_GUEST_SECS=120

# ---------------------------------------------------------------------------
# Guest side (limits.sh --guest FUNCTION ARGS...; see lib.sh).
# ---------------------------------------------------------------------------
MAPPER=${LITE_BIN-}/tests/vm/limits_map
LITEOP=${LITE_BIN-}/cmd/liteop/liteop
PARAMS=/sys/module/lite/parameters
CG=/sys/fs/cgroup/lite-limits

# mapper_start UID [CGROUP]: limits_map as UID (no capabilities) in coproc
# M, moved into CGROUP first if given.
mapper_start() {
	local uid=$1 cg=${2-}
	coproc M {
		if [[ -n $cg ]]; then echo "$BASHPID" > "$cg/cgroup.procs" || exit 1; fi
		exec setpriv --reuid="$uid" --regid="$uid" --clear-groups "$MAPPER"
	}
}
mapper_stop() {
	local pid=$M_PID
	eval "exec ${M[1]}>&-"
	wait "$pid" || true
}
# answer: REPLY is the mapper's next line (empty after 30 s).
answer() { REPLY=; read -r -t 30 REPLY <&"${M[0]}" || true; }
# ask_is COMMAND EXPECTED: the mapper answers COMMAND with EXPECTED.
ask_is() {
	echo "$1" >&"${M[1]}"
	answer
	[[ $REPLY == "$2" ]] || { echo "        '$1' answered '$REPLY'"; return 1; }
}
# one_shot UID NAME: a mapper as UID maps NAME once, outside the cgroup.
one_shot() {
	local out
	out=$(printf 'open\nmap 0 %s 1\n' "$2" |
		setpriv --reuid="$1" --regid="$1" --clear-groups "$MAPPER" 2>&1)
	[[ $out == *"mapped 1 0"* ]] || { echo "        uid $1: $out"; return 1; }
}
counter_is() {  # counter_is NAME VALUE
	counter "$1"
	[[ $COUNTER == "$2" ]] || { echo "        $1=$COUNTER (want $2)"; return 1; }
}
param_is() { local v; read -r v < "$PARAMS/$1"; [[ $v == "$2" ]] || { echo "        $1=$v"; return 1; }; }
# param_refused NAME VALUE: writing VALUE fails and leaves the parameter.
param_refused() {
	local before
	read -r before < "$PARAMS/$1"
	! { echo "$2" > "$PARAMS/$1"; } 2> /dev/null && param_is "$1" "$before"
}
# The group's kernel slab bytes. Not memory.current: that moves in the
# per-CPU charge batch (64 pages precharged at once, given back only when
# the stock is drained), so it showed +256 KiB for 64 grants and then no
# drop for 30 s in full test runs while the grants were long freed.
mem() { MEM=$(awk '$1 == "slab_unreclaimable" {print $2}' "$CG/memory.stat"); }
mem_at_most() { mem; ((MEM <= $1)); }
mem_at_least() { mem; ((MEM >= $1)); }

params() {
	check "max_grants_per_uid defaults to 4096" param_is max_grants_per_uid 4096
	check "max_upcalls_per_uid defaults to 256" param_is max_upcalls_per_uid 256
	check "max_grants_per_uid 0 refused" param_refused max_grants_per_uid 0
	check "max_grants_per_uid 1048577 refused" param_refused max_grants_per_uid 1048577
	check "max_upcalls_per_uid 0 refused" param_refused max_upcalls_per_uid 0
	check "max_upcalls_per_uid 1025 refused" param_refused max_upcalls_per_uid 1025
}

# The agent: attached, never answers, so every call waits for it.
agent_start() {
	rm -f /tmp/limits-agent.ready
	"$LITENL" agent --ready-file /tmp/limits-agent.ready > /dev/null &
	AGENT=$!
	vm_wait_until 10 test -e /tmp/limits-agent.ready
}
agent_stop() {
	kill "$AGENT" 2> /dev/null || true
	wait "$AGENT" || true
}
# threads_end N ERR: the mapper prints N "thread ERR" lines.
threads_end() {
	local i
	for ((i = 0; i < $1; i++)); do
		answer
		[[ $REPLY == "thread $2" ]] || { echo "        thread $i: '$REPLY'"; return 1; }
	done
}

upcall_limits() {
	local r0 t0 other
	params
	echo 4 > "$PARAMS/max_upcalls_per_uid"
	check "a silent agent attached" agent_start
	mapper_start 1000
	check "uid 1000 opens /dev/lite" ask_is open "file 0"
	check "4 maps of uid 1000 wait for the agent" ask_is "pending 0 lim.none 4" "pending 4"
	nap 1
	counter user_upcalls_refused
	r0=$COUNTER
	now_ms
	t0=$NOW_MS
	check "uid 1000's fifth: EDQUOT" ask_is "map 0 lim.none 1" "mapped 0 EDQUOT"
	now_ms
	check "... at once ($((NOW_MS - t0)) ms, not upcall_timeout_ms)" test $((NOW_MS - t0)) -lt 3000
	check "user_upcalls_refused moved" counter_is user_upcalls_refused $((r0 + 1))
	printf 'open\nmap 0 lim.none 1\n' |
		setpriv --reuid=1001 --regid=1001 --clear-groups "$MAPPER" > /tmp/limits-1001.out 2>&1 &
	other=$!
	nap 1
	agent_stop
	check "the agent gone: uid 1000's 4 calls end with ENOTCONN" threads_end 4 ENOTCONN
	wait "$other" || true
	check "uid 1001's call went out meanwhile (ENOTCONN, not EDQUOT)" \
		grep -qx "mapped 0 ENOTCONN" /tmp/limits-1001.out
	check "the agent again" agent_start
	check "uid 1000's share is back: 4 wait again" ask_is "pending 0 lim.none 4" "pending 4"
	nap 1
	check "and a fifth gets EDQUOT" ask_is "map 0 lim.none 1" "mapped 0 EDQUOT"
	agent_stop
	check "all 4 had gone out (ENOTCONN)" threads_end 4 ENOTCONN
	mapper_stop
	echo 256 > "$PARAMS/max_upcalls_per_uid"
}

cgroup_setup() {
	[[ -e /sys/fs/cgroup/cgroup.controllers ]] || mount -t cgroup2 none /sys/fs/cgroup || return 1
	[[ $(< /sys/fs/cgroup/cgroup.controllers) == *memory* ]] || return 1
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control || return 1
	mkdir -p "$CG" && [[ -e $CG/memory.current ]]
}

grant_limits() {  # NAME LIMIT
	local name=$1 limit=$2 g0 r0 m0 m1 grown t0
	echo "$limit" > "$PARAMS/max_grants_per_uid"
	check "cgroup v2 with the memory controller, group $CG" cgroup_setup
	check "alloc $name, 128 MiB, mode 0644 (root)" "$LITEOP" alloc "$name" 128M --mode 0644
	mapper_start 1000 "$CG"
	check "uid 1000 opens /dev/lite (in $CG)" ask_is open "file 0"
	counter grants
	g0=$COUNTER
	counter user_grants_refused
	r0=$COUNTER
	mem
	m0=$MEM
	check "uid 1000 maps $name $limit times" ask_is "map 0 $name $limit" "mapped $limit 0"
	# memory.stat is flushed from per-CPU counters every 2 s at the latest.
	# At least the grant's own record (kmalloc-512) per grant: its chunk list
	# adds 16 B per chunk, one chunk under key_mode=lmr (the default), 32 of
	# 4 MiB under global. Unaccounted, the group's slab would not move.
	vm_wait_until 5 mem_at_least $((m0 + limit * 384)) || true
	m1=$MEM
	grown=$((m1 - m0))
	check "slab_unreclaimable grew $grown bytes ($((grown / limit)) per grant, >= 384)" \
		test "$grown" -ge $((limit * 384))
	check "grants gauge +$limit" counter_is grants $((g0 + limit))
	check "map $((limit + 1)): EDQUOT" ask_is "map 0 $name 1" "mapped 0 EDQUOT"
	check "user_grants_refused moved" counter_is user_grants_refused $((r0 + 1))
	check "a second file of uid 1000" ask_is open "file 1"
	check "... EDQUOT too (the limit is per uid)" ask_is "map 1 $name 1" "mapped 0 EDQUOT"
	check "uid 1001 still maps" one_shot 1001 "$name"
	check "root still maps" one_shot 0 "$name"
	check "uid 1000 unmaps one" ask_is "unmap 0" "unmapped 0"
	check "... and maps one more" ask_is "map 1 $name 1" "mapped 1 0"
	check "... and no more" ask_is "map 1 $name 1" "mapped 0 EDQUOT"
	check "uid 1000 closes the file with $((limit - 1)) handles" ask_is "close 0" "closed 0"
	check "grants gauge back to +1" counter_is grants $((g0 + 1))
	# Grants go with kvfree_rcu(), which 6.1 batches for up to 5 s
	# (KFREE_DRAIN_JIFFIES) before a grace period: a full test run saw the
	# charge unchanged 10 s after the close under TCG.
	t0=$SECONDS
	check "slab_unreclaimable falls back (within 30 s)" \
		vm_wait_until 30 mem_at_most $((m0 + grown / 4))
	echo "        slab_unreclaimable: $m0 -> $m1 -> $MEM ($((SECONDS - t0)) s after the close)"
	check "uid 1000 maps $((limit - 1)) again" \
		ask_is "map 1 $name $((limit - 1))" "mapped $((limit - 1)) 0"
	check "... and no more" ask_is "map 1 $name 1" "mapped 0 EDQUOT"
	mapper_stop
	check "the mapper gone, its grants are too" vm_wait_until 5 counter_is grants "$g0"
	echo 4096 > "$PARAMS/max_grants_per_uid"
	check "free $name" "$LITEOP" free "$name"
}

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------
host_main() {
	echo "== parameters, and pending upcalls per uid (an agent that never answers)"
	guest 1 upcall_limits
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr on the host, liteagent in the guest"
	# shellcheck disable=SC2119  # litecluster.sh's default lease is meant
	lc_start
	echo "== grants per uid, and their memcg charge"
	guest 1 grant_limits lim.big 64
}

vm_main "$@"
