#!/bin/bash
# VM fuzz test (issue 9, item 5): hostile input to lite.ko on two guests.
#  - guest 1, a one-node cluster (litemgr on the host, liteagent in the
#    guest): fuzz_ioctl calls every /dev/lite ioctl, and sends io_uring
#    commands (LITE_URING_CMD_OP), with random and
#    semi-valid arguments from 2 processes x 4 threads, on real handles of
#    real LMRs, while handles are unmapped, LMRs freed, files closed and
#    callers SIGKILLed (FUZZ_CALLS, default 100,000 calls); then a fifth of
#    that as uid 1000, who may map root's LMRs only as their mode bits say;
#  - guest 2, no agent (valid commands change the node): fuzz_netlink sends
#    every genl command with random attributes as root, answering real
#    upcalls with fuzzed answers, then as uid 1000, who must get EPERM for
#    every admin command (FUZZ_MESSAGES each, default 100,000);
#  - both fail on a success the uapi forbids, an errno it does not document,
#    a call that hangs, or a crash;
#  - guest 1, then: fuzz_sync opens and registers every variant of the
#    reserved lock service names (lite.sync.<id>: case, bytes after a NUL,
#    128/129 characters, prefix tricks), as root and as uid 1000, each
#    refused exactly (EPERM/EINVAL; ENOENT for names that are not
#    reserved), and fuzzes LOCK/TRYLOCK/UNLOCK/BARRIER with unmaps, closes
#    and SIGKILLed holders across threads and processes (FUZZ_SYNC_SECS,
#    default 6, per uid) on root's 0666 LMRs, as root then as uid 1000;
#    after each run no lock is stuck, a barrier of 1 passes and the uid's
#    whole wait budget can wait (one more EDQUOT);
#  - afterwards: a write/read round trip through liteop is correct (guest 1),
#    a fresh anonymous read-only mapping reads as zeros (the zero page was
#    never written), the node still takes netlink commands (guest 2), the
#    guest kernel logs have no BUG/WARNING/Oops, rmmod lite is clean; and
#    litevm's teardown checks the logs again.
# FUZZ_SEED (default 1) seeds both fuzzers; every FAIL line names it, and
# the fuzzers print their command line for a rerun. FUZZ_CALLS and
# FUZZ_MESSAGES set the lengths, FUZZ_THREADS and FUZZ_PROCS (4, 2) the
# ioctl fuzzer's threads per process and processes.
# Usage: [FUZZ_SEED=N] tests/vm/fuzz.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=fuzz
VM_GUESTS=2
VM_TIMEOUT=420
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:fuzz_ioctl //tests/vm:fuzz_netlink
	//tests/vm:fuzz_sync)
VM_GUEST_SECS=200
FUZZ_SEED=${FUZZ_SEED:-1}
FUZZ_CALLS=${FUZZ_CALLS:-100000}
FUZZ_MESSAGES=${FUZZ_MESSAGES:-100000}
FUZZ_THREADS=${FUZZ_THREADS:-4}
FUZZ_PROCS=${FUZZ_PROCS:-2}
FUZZ_SYNC_SECS=${FUZZ_SYNC_SECS:-6}
VM_GUEST_ENV=(FUZZ_SEED FUZZ_CALLS FUZZ_MESSAGES FUZZ_THREADS FUZZ_PROCS FUZZ_SYNC_SECS)

# ---------------------------------------------------------------------------
# Guest side (fuzz.sh --guest FUNCTION ARGS...; see lib.sh).
# ---------------------------------------------------------------------------
FUZZ_IOCTL=${LITE_BIN-}/tests/vm/fuzz_ioctl
FUZZ_NETLINK=${LITE_BIN-}/tests/vm/fuzz_netlink
FUZZ_SYNC=${LITE_BIN-}/tests/vm/fuzz_sync
LITEOP=${LITE_BIN-}/cmd/liteop/liteop
ME=10.211.0.$((10 + ${GUEST:-0}))

# fuzzer WHAT COMMAND...: runs a fuzzer, its report indented; ok if it exits 0.
fuzzer() {
	local what=$1 rc=0
	shift
	"$@" 2>&1 | indent || rc=${PIPESTATUS[0]}
	check "$what (exit status $rc)" test "$rc" -eq 0
}

ioctl_fuzz() {
	# Root's LMRs the fuzzer maps by name: uid 1000 may map only the
	# shared one, and only for reading (the manager's mode check).
	check "alloc fz.root.private (0600)" "$LITEOP" alloc fz.root.private 4096 --mode 0600
	check "alloc fz.root.shared (0644)" "$LITEOP" alloc fz.root.shared 4096 --mode 0644
	fuzzer "fuzz_ioctl --seed $FUZZ_SEED --calls $FUZZ_CALLS --threads $FUZZ_THREADS --procs $FUZZ_PROCS" \
		"$FUZZ_IOCTL" --seed "$FUZZ_SEED" --calls "$FUZZ_CALLS" \
		--threads "$FUZZ_THREADS" --procs "$FUZZ_PROCS"
	fuzzer "fuzz_ioctl as uid 1000 --seed $FUZZ_SEED --calls $((FUZZ_CALLS / 5))" \
		setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$FUZZ_IOCTL" --seed "$FUZZ_SEED" --calls $((FUZZ_CALLS / 5)) --threads 4 --procs 1
	check "free fz.root.private" "$LITEOP" free fz.root.private
	check "free fz.root.shared" "$LITEOP" free fz.root.shared
	sync_fuzz
}

as_user() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
# The lock service opened directly (review 2026-11-28 H2) and the lock and
# barrier ioctls fuzzed; each run ends with fuzz_sync --check (no lock
# stuck, no wait slot leaked) for its uid, and root checks every lock last.
sync_fuzz() {
	local args=(--seed "$FUZZ_SEED" --secs "$FUZZ_SYNC_SECS" --threads 4 --procs 2)
	fuzzer "fuzz_sync --names as root" "$FUZZ_SYNC" --names
	fuzzer "fuzz_sync --names as uid 1000" as_user "$FUZZ_SYNC" --names
	check "alloc fz.sync.0..3 (0666)" "$FUZZ_SYNC" --alloc
	fuzzer "fuzz_sync --fuzz as root ${args[*]}" "$FUZZ_SYNC" --fuzz "${args[@]}"
	fuzzer "fuzz_sync --check as root" "$FUZZ_SYNC" --check
	fuzzer "fuzz_sync --fuzz as uid 1000 ${args[*]}" as_user "$FUZZ_SYNC" --fuzz "${args[@]}"
	fuzzer "fuzz_sync --check as uid 1000" as_user "$FUZZ_SYNC" --check
	fuzzer "fuzz_sync --check as root, then free" "$FUZZ_SYNC" --check --free
	check "guest kernel log is clean after fuzz_sync" log_clean
}

reload_lite() {
	rmmod lite && insmod "$LITE_BIN/kmod/lite.ko" lmr_quota_mib=64 upcall_timeout_ms=500
}
netlink_fuzz() {
	# A small quota and upcall timeout: valid LMR_ALLOCs stay small, and
	# upcalls nobody answers end quickly.
	check "reload lite.ko with lmr_quota_mib=64 upcall_timeout_ms=500" reload_lite
	fuzzer "fuzz_netlink as root --seed $FUZZ_SEED --messages $FUZZ_MESSAGES" \
		"$FUZZ_NETLINK" --seed "$FUZZ_SEED" --messages "$FUZZ_MESSAGES" --addr "$ME"
	fuzzer "fuzz_netlink as uid 1000 --seed $FUZZ_SEED --messages $FUZZ_MESSAGES" \
		setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$FUZZ_NETLINK" --seed "$FUZZ_SEED" --messages "$FUZZ_MESSAGES" --addr "$ME"
}

out_is() {  # out_is EXPECTED COMMAND...
	local want=$1 out
	shift
	out=$("$@" 2>&1) || { echo "        $out"; return 1; }
	[[ $out == "$want" ]] || { echo "        got: $out"; return 1; }
}
# The guest's kernel log has no BUG, WARNING, Oops or refcount report.
log_clean() {
	local bad
	bad=$(dmesg | grep -E 'BUG|WARNING|Oops|refcount_t|general protection|KASAN' || true)
	[[ -z $bad ]] || { head -n 40 <<< "$bad" | indent; return 1; }
}

after_ioctl() {
	check "guest kernel log is clean after fuzz_ioctl" log_clean
	check "alloc fz.check after fuzzing" "$LITEOP" alloc fz.check 8192 --mode 0600
	check "write at offset 4093 after fuzzing" "$LITEOP" write fz.check 4093 --data "round trip after the fuzzer"
	check "read back the same bytes" out_is "round trip after the fuzzer" \
		"$LITEOP" read fz.check 4093 27
	check "free fz.check" "$LITEOP" free fz.check
	check "a fresh anonymous read-only mapping reads as zeros" "$FUZZ_IOCTL" --zero-check
}

after_netlink() {
	check "guest kernel log is clean after fuzz_netlink" log_clean
	check "node set after fuzzing" litenl_ok node set --id 7 --incarnation 9 --addr "$ME"
	check "lmr alloc after fuzzing" litenl_ok lmr alloc --id 77 --name fz.after --size 4096
	check "lmr free after fuzzing" litenl_ok lmr free --id 77
	check "a fresh anonymous read-only mapping reads as zeros" "$FUZZ_IOCTL" --zero-check
	rmmod_lite "after netlink fuzzing"
}

finish_ioctl() {
	rmmod_lite "after ioctl fuzzing"
	check "guest kernel log is clean after rmmod" log_clean
}

# ---------------------------------------------------------------------------
# Host side, inside the cluster's network namespace.
# ---------------------------------------------------------------------------
host_main() {
	local start
	# The cluster is guest 1 alone: guest 2 has no agent, so that the
	# netlink fuzzer as root owns its node.
	LITE_VM_GUESTS=1
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr on the host, liteagent on guest 1; guest 2 on its own"
	lc_start 10000

	echo "== fuzz_ioctl on guest 1, fuzz_netlink on guest 2 (seed $FUZZ_SEED)"
	start=$SECONDS
	guests "1 ioctl_fuzz" "2 netlink_fuzz"
	echo "   fuzzers done in $((SECONDS - start)) s"

	echo "== afterwards"
	guests "1 after_ioctl" "2 after_netlink"
	lc_stop
	guest 1 finish_ioctl
}

vm_main "$@"
