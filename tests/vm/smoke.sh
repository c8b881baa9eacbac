#!/bin/bash
# VM smoke test: two guests with Soft-RoCE and lite.ko.
#  - ib_write_lat and ib_read_lat over rdma_cm between the guests succeed
#    (their figures are printed);
#  - lite.ko is loaded in both and /dev/lite reports rxe0, port ACTIVE, with
#    the global memory key ready;
#  - `rmmod lite` is clean and removes /dev/lite;
#  - litevm's teardown fails the run if a guest kernel log has a BUG,
#    WARNING, Oops, general protection or refcount line.
# Usage: tests/vm/smoke.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)

if [[ ${1-} != --inside ]]; then
	cd "$repo"
	bazel build //kmod:lite_ko //tools/litedev > /dev/null 2>&1 || bazel build //kmod:lite_ko //tools/litedev
	# The real output directory, not the bazel-bin symlink another build may repoint.
	LITE_BIN=$(bazel info bazel-bin 2> /dev/null)
	export LITE_BIN
	exec tools/vm/litevm run -n 2 --module "$LITE_BIN/kmod/lite.ko" \
		--timeout 600 "$@" -- "$0" --inside
fi

failures=0
check() {  # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then
		echo "  ok    $what"
	else
		echo "  FAIL  $what"
		failures=$((failures + 1))
	fi
}

litedev=$LITE_BIN/tools/litedev/litedev

echo "perftest over rdma_cm, guest 1 (server) <-> guest 2 (client), 8 B:"
for t in ib_write_lat ib_read_lat; do
	if line=$(perftest-pair "$t" 1 2 8 1000); then
		echo "  ok    $line"
	else
		echo "  FAIL  $t"
		failures=$((failures + 1))
	fi
done

reports_rxe0_ready() {
	local json
	json=$(litevm exec -g "$1" -- "$litedev -o json") || return 1
	echo "        guest $1: $json"
	[[ $json == *'"abi_version": 2'* ]] &&
	[[ $json == *'"name": "rxe0"'* ]] &&
	[[ $json == *'"port_state": "ACTIVE"'* ]] &&
	[[ $json == *'"global_key_ready": true'* ]]
}
module_loaded() { litevm exec -g "$1" -- "grep -q '^lite ' /proc/modules"; }
rmmod_clean() {
	litevm exec -g "$1" -- "rmmod lite && ! grep -q '^lite ' /proc/modules && ! test -e /dev/lite"
}

litedev_explains_missing_module() {
	local out
	if out=$(litevm exec -g "$1" -- "$litedev" 2>&1); then
		return 1
	fi
	[[ $out == *"is lite.ko loaded?"* ]]
}

echo "lite.ko:"
for g in 1 2; do
	check "guest $g: lite.ko loaded" module_loaded "$g"
	check "guest $g: /dev/lite reports rxe0 ACTIVE with the global key ready" reports_rxe0_ready "$g"
	check "guest $g: rmmod lite is clean and removes /dev/lite" rmmod_clean "$g"
	check "guest $g: litedev fails with a reason once lite.ko is gone" litedev_explains_missing_module "$g"
done

((failures == 0)) || { echo "smoke: $failures check(s) failed"; exit 1; }
echo "smoke: all checks passed"
