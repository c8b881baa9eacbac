#!/bin/bash
# VM LMR test: three guests, lite.ko's hosted LMR memory and the control
# side of /dev/lite without an agent, driven with litenl and lite_probe.
#  - LMR alloc / list / update / free over netlink, with bad input refused
#    with the documented errno and the kernel's message (lmr id 0, bad
#    names, size 0 and > 64 GiB, mode not in 0666, uid -1, missing and
#    unsupported attributes, duplicate id, unknown id, no CAP_NET_ADMIN,
#    node identity not set);
#  - a 64 MiB LMR spanning several chunks (<= 4 MiB each, lengths adding up);
#  - the quota (lmr_quota_mib): ENOSPC past it, room again after a free;
#  - /dev/lite with no agent: ALLOC and MAP fail with ENOTCONN at once,
#    unknown handles with EBADF (lite_probe);
#  - debugfs gauges (lmrs, lmr_bytes) follow;
#  - rmmod with hosted LMRs is clean; bad upcall_timeout_ms / lmr_quota_mib
#    values refuse to load;
#  - litevm's teardown fails the run on any BUG/WARNING/Oops/refcount line.
# Usage: tests/vm/lmr.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=lmr
VM_GUESTS=3
VM_TIMEOUT=600
VM_TARGETS=(//kmod:lite_ko //tools/litenl //tests/vm:lite_probe)
VM_GUEST_ENV=(LITE_ATTR_NODE_ID LITE_ATTR_MODE LITE_ATTR_UID)

# ---------------------------------------------------------------------------
# Guest side (lmr.sh --guest FUNCTION ARGS...; see lib.sh).
# ---------------------------------------------------------------------------
PROBE=${LITE_BIN-}/tests/vm/lite_probe
ME=10.211.0.$((10 + ${GUEST:-0}))

has() {  # has PATTERN LITENL_ARGS...
	local pattern=$1 out
	shift
	out=$("$LITENL" "$@") || return 1
	[[ $out == *"$pattern"* ]] || { echo "        ${out:0:400}"; return 1; }
}
counter_is() {  # counter_is NAME VALUE: debugfs counter NAME is VALUE
	counter "$1"
	[[ $COUNTER == "$2" ]] || { echo "        $1=$COUNTER"; return 1; }
}
# chunks_ok ID BYTES: every chunk 1..4 MiB, lengths add up, > 1 chunk if BYTES > 4 MiB
chunks_ok() {
	local out
	out=$("$LITENL" lmr list --chunks | awk -v id="$1" '
		$1 ~ /^[0-9]+$/ {on = ($1 == id); next}
		on && $1 == "chunk" {len = $6; n++; sum += len; if (len < 1 || len > 4194304) bad = 1}
		END {print n + 0, sum + 0, bad + 0}') || return 1
	echo "        chunks, bytes, bad: $out"
	local n sum bad
	read -r n sum bad <<< "$out"
	((sum == $2 && bad == 0)) && { (($2 <= 4194304)) || ((n > 1)); }
}

lmr_netlink() {
	check "lmr alloc before node set: ENXIO" \
		expect_err ENXIO "node identity is not set" lmr alloc --id 1 --name a --size 4096
	check "node set" litenl_ok node set --id "$GUEST" --incarnation 1 --addr "$ME"
	# litenl refuses some values itself; raw attributes reach the kernel.
	check "lmr alloc --id 0: EINVAL" expect_err EINVAL "id 0" lmr alloc --id 0 --name a --size 4096
	check "lmr alloc bad name: EINVAL" expect_err EINVAL "LITE_ATTR_NAME" lmr alloc --id 1 --name '-bad' --size 4096
	check "lmr alloc name with a space: EINVAL" expect_err EINVAL "LITE_ATTR_NAME" lmr alloc --id 1 --name 'a b' --size 4096
	check "lmr alloc 129-char name: EINVAL" expect_err EINVAL "" lmr alloc --id 1 --name "$(printf 'a%.0s' {1..129})" --size 4096
	check "lmr alloc --size 0: EINVAL" expect_err EINVAL "size 0" lmr alloc --id 1 --name a --size 0
	check "lmr alloc --size 64G+1: EINVAL" expect_err EINVAL "68719476737" lmr alloc --id 1 --name a --size 68719476737
	check "lmr alloc with mode 0700 (raw): EINVAL from the kernel" \
		expect_err EINVAL "LITE_ATTR_MODE: not a subset of 0666" --attr-u32 "$LITE_ATTR_MODE=448" lmr alloc --id 1 --name a --size 4096
	check "lmr alloc with uid 4294967295 (raw): EINVAL from the kernel" \
		expect_err EINVAL "LITE_ATTR_UID: uid 4294967295" --attr-u32 "$LITE_ATTR_UID=4294967295" lmr alloc --id 1 --name a --size 4096
	check "lmr alloc with an unsupported attribute: EINVAL" \
		expect_err EINVAL "" --attr-u32 "$LITE_ATTR_NODE_ID=1" lmr alloc --id 1 --name a --size 4096
	check "lmr alloc as nobody: EPERM" as_nobody expect_err EPERM "" lmr alloc --id 1 --name a --size 4096
	check "lmr alloc 4096 bytes" has "1 chunk(s)" lmr alloc --id 1 --name small.one --size 4096 --mode 0640
	check "lmr alloc the same id: EEXIST" expect_err EEXIST "hosted here already" lmr alloc --id 1 --name x --size 4096
	check "lmr alloc 64 MiB" has "lmr 2: 67108864 bytes" lmr alloc --id 2 --name big/one:2 --size 64M
	check "64 MiB in several chunks of at most 4 MiB adding up" chunks_ok 2 67108864
	check "lmr alloc 100 bytes" has "1 chunk(s)" lmr alloc --id 3 --name c --size 100
	check "lmr list -o json" has '"lmr_id": 1, "name": "small.one", "size": 4096, "uid": 0, "gid": 0, "mode": 416, "epoch": 0' lmr list -o json
	check "lmr list as nobody: EPERM (keys and chunk addresses are admin-only)" \
		as_nobody expect_err EPERM "need CAP_NET_ADMIN" lmr list
	check "grant list as nobody: EPERM" as_nobody expect_err EPERM "need CAP_NET_ADMIN" grant list
	check "debugfs lmrs = 3" counter_is lmrs 3
	check "debugfs lmr_bytes" counter_is lmr_bytes $((4096 + 67108864 + 100))
	check "lmr update --new-id 10 --epoch 7" litenl_ok lmr update --id 1 --new-id 10 --epoch 7
	check "lmr list shows id 10, epoch 7" has '"lmr_id": 10, "name": "small.one", "size": 4096, "uid": 0, "gid": 0, "mode": 416, "epoch": 7' lmr list -o json
	check "lmr update unknown: ENOENT" expect_err ENOENT "no LMR" lmr update --id 1 --epoch 1
	check "lmr update onto another's id: EEXIST" expect_err EEXIST "another hosted LMR" lmr update --id 10 --new-id 2
	check "lmr free unknown: ENOENT" expect_err ENOENT "no LMR" lmr free --id 99
	check "lmr free --id 0: EINVAL" expect_err EINVAL "id 0" lmr free --id 0
	check "lmr free 10" litenl_ok lmr free --id 10
	check "lmr free 10 again: ENOENT" expect_err ENOENT "no LMR" lmr free --id 10
	check "grant list is empty" has '{"grants": []}' grant list -o json
	check "grant revoke unknown: ENOENT" expect_err ENOENT "no such grant" grant revoke --id 5
	# Quota: 512 MiB by default, 64 MiB + 100 B used.
	check "lmr alloc past the quota: ENOSPC" expect_err ENOSPC "quota" lmr alloc --id 4 --name q --size 449M
	check "lmr alloc up to the quota" litenl_ok lmr alloc --id 4 --name q --size 447M
	check "lmr free 4" litenl_ok lmr free --id 4
	check "debugfs lmrs = 2" counter_is lmrs 2
	# An agent owns the node: others get EBUSY.
	"$LITENL" agent --timeout 30 --ready-file /tmp/lmr-agent.ready > /dev/null &
	local agent=$!
	for _ in $(seq 50); do [[ -e /tmp/lmr-agent.ready ]] && break; sleep 0.1; done
	check "lmr alloc while another agent is attached: EBUSY" expect_err EBUSY "agent is attached" lmr alloc --id 5 --name a --size 4096
	kill "$agent"; wait "$agent"; rm -f /tmp/lmr-agent.ready
}

no_agent() {
	local t0 t1
	t0=${EPOCHREALTIME/./}
	check "lite_probe no-agent: ALLOC and MAP get ENOTCONN" "$PROBE" no-agent some.lmr
	t1=${EPOCHREALTIME/./}
	echo "        took $(((t1 - t0) / 1000)) ms"
	local out
	out=$("$PROBE" bogus-handle 2>&1)
	indent <<< "$out"
	check "UNMAP of an invented handle: EBADF" has_text "$out" "ok    UNMAP of an invented handle: EBADF"
	# READ is the data path's (lite_ops.c): checked once it is there.
	if grep -qw lite_ops_ioctl /proc/kallsyms; then
		check "READ with invented handles: EBADF" has_text "$out" "ok    READ with invented handles"
	fi
	counter upcalls_notconn
	check "debugfs upcalls_notconn counted ($COUNTER)" test "$COUNTER" -gt 0
	check "debugfs handles = 0" counter_is handles 0
}

module_params() {
	local ko=$LITE_BIN/kmod/lite.ko p
	for p in upcall_timeout_ms=99 upcall_timeout_ms=600001 lmr_quota_mib=0 lmr_quota_mib=1048577; do
		check "insmod $p is refused" insmod_refused "$ko" "$p"
	done
	check "insmod lmr_quota_mib=8 upcall_timeout_ms=100" insmod "$ko" lmr_quota_mib=8 upcall_timeout_ms=100
	check "node set" litenl_ok node set --id "$GUEST" --incarnation 2 --addr "$ME"
	check "lmr alloc 9 MiB with an 8 MiB quota: ENOSPC" expect_err ENOSPC "quota" lmr alloc --id 1 --name a --size 9M
	check "lmr alloc 8 MiB" litenl_ok lmr alloc --id 1 --name a --size 8M
	check "rmmod lite" rmmod lite
}

# ---------------------------------------------------------------------------
# Host side, inside the cluster's network namespace.
# ---------------------------------------------------------------------------
host_main() {
	LITE_ATTR_NODE_ID=$(attr_num LITE_ATTR_NODE_ID)
	LITE_ATTR_MODE=$(attr_num LITE_ATTR_MODE)
	LITE_ATTR_UID=$(attr_num LITE_ATTR_UID)

	echo "LMR memory over netlink (guest 1), no agent (guest 2):"
	guest 1 lmr_netlink
	guest 2 no_agent
	echo "rmmod with hosted LMRs, module parameters (guest 1):"
	guest 1 rmmod_lite "with hosted LMRs"
	guest 1 module_params
	guest 3 no_agent
}

vm_main "$@"
