#!/bin/bash
# litevm always tears down: no QEMU is left behind when the command inside
# fails, when litevm is sent SIGTERM, or when it is SIGKILLed (QEMU has
# PR_SET_PDEATHSIG), and a failing command's status is litevm's status.
# Usage: tests/vm/teardown.sh    (needs root and tools/setup.sh)
set -uo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=teardown
repo=$(cd "$(dirname "$0")/../.." && pwd)
litevm=$repo/tools/vm/litevm
work=$(mktemp -d /tmp/litevm-teardown.XXXXXX)
VM_POLL=0.1

# alive PID, gone PID: an empty PID is neither.
alive() { [[ -n $1 ]] && kill -0 "$1" 2> /dev/null; }
gone() { [[ -n $1 ]] && ! kill -0 "$1" 2> /dev/null; }
# file_or_gone FILE PID: FILE is there, or PID has ended (then no waiting).
file_or_gone() { [[ -f $1 ]] || gone "$2"; }
pid_in() { [[ -f $1 ]] && PID=$(< "$1") && [[ -n $PID ]]; }

echo "a failing command: its status is litevm's, and QEMU is gone"
"$litevm" run -n 1 --state "$work/fail" -- bash -c 'litevm exec -g 1 -- "exit 7"' > "$work/fail.log" 2>&1
rc=$?
check "exit status 7 passed through (got $rc; log: $work/fail.log)" test "$rc" -eq 7
PID=
pid_in "$work/fail/g1/qemu.pid"
check "QEMU ${PID:-?} is gone" gone "$PID"

for sig in TERM KILL; do
	echo "litevm sent SIG$sig while a command runs: QEMU is gone"
	# shellcheck disable=SC2016  # $$ and $LITE_VM_STATE are the inner shell's
	"$litevm" run -n 1 --state "$work/$sig" -- bash -c 'echo $$ > "$LITE_VM_STATE/cmd.pid"; sleep 600' \
		> "$work/$sig.log" 2>&1 &
	runner=$!
	vm_wait_until 180 file_or_gone "$work/$sig/cmd.pid" "$runner"
	if ! pid_in "$work/$sig/cmd.pid"; then
		vm_fail "guest never became ready (log: $work/$sig.log)"
		kill -KILL "$runner" 2> /dev/null
		wait "$runner" 2> /dev/null
		continue
	fi
	cmd=$PID
	pid_in "$work/$sig/g1/qemu.pid" || PID=
	qemu=$PID
	check "QEMU ${qemu:-?} running before the signal" alive "$qemu"
	kill -"$sig" "$runner"
	wait "$runner" 2> /dev/null
	if vm_wait_until 20 gone "$qemu"; then
		vm_ok "QEMU $qemu gone after SIG$sig"
	else
		vm_fail "QEMU ${qemu:-?} survived SIG$sig"
		alive "$qemu" && kill -KILL "$qemu"
	fi
	if vm_wait_until 20 gone "$cmd"; then
		vm_ok "the command inside ($cmd) is gone too"
	else
		vm_fail "the command inside ($cmd) survived SIG$sig"
		kill -KILL "$cmd" 2> /dev/null
	fi
done

if vm_summary; then
	rm -rf "$work"
else
	echo "teardown: logs in $work"
	exit 1
fi
