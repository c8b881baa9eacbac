#!/bin/bash
# litevm always tears down: no QEMU is left behind when the command inside
# fails, when litevm is sent SIGTERM, or when it is SIGKILLed (QEMU has
# PR_SET_PDEATHSIG), and a failing command's status is litevm's status.
# Usage: tests/vm/teardown.sh    (needs root and tools/setup.sh)
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
litevm=$repo/tools/vm/litevm
work=$(mktemp -d /tmp/litevm-teardown.XXXXXX)
failures=0

alive() { kill -0 "$1" 2> /dev/null; }

ok() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; failures=$((failures + 1)); }

# Waits up to $2 seconds for file $1, while process $3 lives.
wait_for_file() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[[ -f $1 ]] && return 0
		alive "$3" || return 1
		sleep 0.1
	done
	return 1
}

# Waits up to $2 seconds for process $1 to be gone.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		alive "$1" || return 0
		sleep 0.1
	done
	return 1
}

echo "a failing command: its status is litevm's, and QEMU is gone"
"$litevm" run -n 1 --state "$work/fail" -- bash -c 'litevm exec -g 1 -- "exit 7"' > "$work/fail.log" 2>&1
rc=$?
[[ $rc == 7 ]] && ok "exit status 7 passed through" || fail "exit status $rc, expected 7 (log: $work/fail.log)"
qemu=$(cat "$work/fail/g1/qemu.pid" 2> /dev/null)
[[ -n $qemu ]] && ! alive "$qemu" && ok "QEMU $qemu is gone" || fail "QEMU ${qemu:-?} still running"

for sig in TERM KILL; do
	echo "litevm sent SIG$sig while a command runs: QEMU is gone"
	"$litevm" run -n 1 --state "$work/$sig" -- bash -c 'echo $$ > "$LITE_VM_STATE/cmd.pid"; sleep 600' \
		> "$work/$sig.log" 2>&1 &
	runner=$!
	if ! wait_for_file "$work/$sig/cmd.pid" 180 "$runner"; then
		fail "guest never became ready (log: $work/$sig.log)"
		kill -KILL "$runner" 2> /dev/null
		continue
	fi
	qemu=$(cat "$work/$sig/g1/qemu.pid")
	alive "$qemu" && ok "QEMU $qemu running" || fail "QEMU not running before the signal"
	kill -"$sig" "$runner"
	wait "$runner" 2> /dev/null
	wait_gone "$qemu" 20 && ok "QEMU $qemu gone after SIG$sig" || {
		fail "QEMU $qemu survived SIG$sig"
		kill -KILL "$qemu" 2> /dev/null
	}
	cmd=$(cat "$work/$sig/cmd.pid" 2> /dev/null)
	[[ -n $cmd ]] && wait_gone "$cmd" 20 && ok "the command inside ($cmd) is gone too" || {
		fail "the command inside (${cmd:-?}) survived SIG$sig"
		[[ -n $cmd ]] && kill -KILL "$cmd" 2> /dev/null
	}
done

((failures == 0)) || { echo "teardown: $failures check(s) failed; logs in $work"; exit 1; }
rm -rf "$work"
echo "teardown: all checks passed"
