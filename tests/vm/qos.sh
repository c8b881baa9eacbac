#!/bin/bash
# VM QoS test (issue 13): priorities and the throttle, litemgr on the host
# and a liteagent with lite.ko on two guests.
#  - lite.ko's QoS parameters refuse what the policy cannot run with
#    (window below 1 ms, floor 0, round-trip threshold <= 100 %, gid -2);
#  - priority rules (tests/vm/prio_probe, raw ioctls): a new file's default
#    is LOW; root (CAP_SYS_NICE) may use HIGH; an unprivileged user gets
#    EPERM for HIGH in LITE_IOC_PRIORITY and in every operation, and EINVAL
#    for a value that is no priority; the same user in qos_high_gid may;
#  - the QoS experiment (tools/bench/qos_experiment, one short round):
#    high-priority 64 B READs from node1 into an LMR on node2 beside two
#    low-priority clients writing 64 KiB blocks, with qos off and on; its
#    table is printed (figures are measured, not judged), and with qos on
#    the throttle engaged: low-priority operations waited (ops/qos_throttled)
#    and windows were decided by rule 1 or 3 (qos/windows_load, _rtt);
#  - the agent reports lite.ko's qos counters (litectl agent counters);
#  - litevm's teardown checks the guests' kernel logs.
# Usage: tests/vm/qos.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=qos
VM_GUESTS=2
VM_TIMEOUT=900
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //tools/litectl
	//tools/litenl //tools/liteop //tools/bench:lite-qos-bench //tests/vm:prio_probe)
VM_GUEST_SECS=150

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/tools/liteop/liteop
PARAMS=/sys/module/lite/parameters

refused() {  # PARAM VALUE...: writing each VALUE fails, the value stays
	local p=$PARAMS/$1 v before after
	shift
	read -r before < "$p"
	for v in "$@"; do
		(echo "$v" > "$p") 2> /dev/null && return 1
	done
	read -r after < "$p"
	[[ $before == "$after" ]]
}

params() {
	local v
	read -r v < "$PARAMS/qos"
	check "qos is on by default (Y, got $v)" test "$v" = Y
	check "qos_window_us refuses 999 and 1000001" refused qos_window_us 999 1000001
	check "qos_floor_kibps refuses 0 and 16777217" refused qos_floor_kibps 0 16777217
	check "qos_rtt_pct refuses 100 and 100001 (0 turns rule 3 off)" refused qos_rtt_pct 100 100001
	check "qos_idle_windows refuses 0" refused qos_idle_windows 0
	check "qos_high_gid refuses -2" refused qos_high_gid -2
	check "qos_high_ops takes 0 (rule 1 off)" sh -c "echo 0 > $PARAMS/qos_high_ops && echo 200000 > $PARAMS/qos_high_ops"
}

alloc() {  # NAME HOME
	check "alloc $1 (64 KiB, mode 0666) on $2" "$LITEOP" alloc "$1" 65536 --home "$2" --mode 0666
}

# rules WHO: prio_probe as root, as uid 1000, and as uid 1000 once
# qos_high_gid names its group.
rules() {
	local probe=$LITE_BIN/tests/vm/prio_probe rc
	echo "   as root (CAP_SYS_NICE):"
	rc=0
	"$probe" qos.rules 1 | indent || rc=$?
	check "root may use HIGH; every rule holds (prio_probe: $rc failed)" test "$rc" -eq 0
	echo "   as uid 1000 (no CAP_SYS_NICE, qos_high_gid -1):"
	rc=0
	as_user "$probe" qos.rules 0 | indent || rc=$?
	check "an unprivileged user gets EPERM for HIGH everywhere (prio_probe: $rc failed)" test "$rc" -eq 0
	echo 1000 > "$PARAMS/qos_high_gid"
	echo "   as uid 1000 with qos_high_gid=1000:"
	rc=0
	as_user "$probe" qos.rules 1 | indent || rc=$?
	check "... and may once qos_high_gid names its group (prio_probe: $rc failed)" test "$rc" -eq 0
	echo -1 > "$PARAMS/qos_high_gid"
}

counter() { cat "/sys/kernel/debug/lite/$1"; }

# engaged BEFORE_THROTTLED BEFORE_LOAD BEFORE_RTT: the experiment's QoS-on
# runs throttled low priority here, by rule 1 or 3.
engaged() {
	local throttled load rtt
	throttled=$(counter ops/qos_throttled)
	load=$(counter qos/windows_load)
	rtt=$(counter qos/windows_rtt)
	echo "        qos_throttled $1 -> $throttled, windows_load $2 -> $load, windows_rtt $3 -> $rtt, ops_high $(counter ops/ops_high), qos_wait_us $(counter ops/qos_wait_us)"
	check "with qos on, low-priority operations waited (ops/qos_throttled grew)" test "$throttled" -gt "$1"
	check "... and windows throttled by rule 1 or 3 (qos/windows_load or _rtt grew)" \
		test $((load + rtt)) -gt $(($2 + $3))
}

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------

host_main() {
	local before out
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== parameters"
	guest 1 params
	echo "== cluster: litemgr on the host, liteagent on 2 guests"
	lc_start 5000
	echo "== priority rules"
	guest 1 alloc qos.rules node2
	guest 1 rules

	echo "== the QoS experiment, one short round (tools/bench/qos_experiment)"
	before=$(litevm exec -g 1 -t 30 -- "cat /sys/kernel/debug/lite/ops/qos_throttled /sys/kernel/debug/lite/qos/windows_load /sys/kernel/debug/lite/qos/windows_rtt" | tr '\n' ' ')
	if out=$(LITE_MANAGER=$LITE_MANAGER "$VM_REPO/tools/bench/qos_experiment" --rounds 1 --low 2 --seconds 3 2>&1); then
		vm_ok "qos_experiment ran"
	else
		vm_fail "qos_experiment failed"
	fi
	indent <<< "$out"
	# shellcheck disable=SC2086  # three numbers
	guest 1 engaged $before

	echo "== the agent reports lite.ko's qos counters"
	out=$(LITE_AGENT_TLS_NAME=node1 "$LITE_BIN/tools/litectl/litectl" agent counters \
		--agent "$(lc_guest_ip 1):$LC_AGENT_PORT" 2>&1 || true)
	grep -E "qos|ops_high|ops_low" <<< "$out" | indent || true
	check "litectl agent counters shows module.qos.windows_rtt" has_text "$out" "module.qos.windows_rtt"
	check "... and module.ops.qos_throttled" has_text "$out" "module.ops.qos_throttled"
	lc_stop
}

vm_main "$@"
