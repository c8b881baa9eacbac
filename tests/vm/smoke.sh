#!/bin/bash
# VM smoke test: two guests with Soft-RoCE and lite.ko.
#  - ib_write_lat and ib_read_lat over rdma_cm between the guests succeed
#    (their figures are printed);
#  - lite.ko is loaded in both and /dev/lite reports rxe0, port ACTIVE, with
#    its memory keys ready (LITE_IOC_QUERY, which copies to user memory
#    after the device list lock);
#  - the default key_mode is lmr (a memory key per LMR, docs/datapath.md
#    "Key modes"): the kernel log says so, and has no "unsafe global rkey"
#    line (the RDMA core's words for IB_PD_UNSAFE_GLOBAL_RKEY), which only
#    key_mode=global causes;
#  - `rmmod lite` is clean and removes /dev/lite;
#  - litevm's teardown fails the run if a guest kernel log has a BUG,
#    WARNING, Oops, general protection or refcount line.
# Usage: tests/vm/smoke.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=smoke
VM_GUESTS=2
VM_TIMEOUT=600
VM_TARGETS=(//kmod:lite_ko //cmd/litedev)

litedev() { echo "$LITE_BIN/cmd/litedev/litedev"; }

# perftest_pair TEST: one perftest pair, guest 1 serving guest 2; its line.
perftest_pair() {
	local line
	line=$(perftest-pair "$1" 1 2 8 1000) || return 1
	echo "        $line"
}
reports_rxe0_ready() {
	local json
	json=$(litevm exec -g "$1" -- "$(litedev) -o json") || return 1
	echo "        guest $1: $json"
	[[ $json == *'"abi_version": 2'* ]] &&
		[[ $json == *'"name": "rxe0"'* ]] &&
		[[ $json == *'"port_state": "ACTIVE"'* ]] &&
		[[ $json == *'"global_key_ready": true'* ]]
}
serves_per_lmr_keys() {
	local out
	out=$(litevm exec -g "$1" -- "cat /sys/module/lite/parameters/key_mode; dmesg | grep -E 'lite: rxe0: serving|unsafe global rkey'") ||
		return 1
	echo "$out" | sed 's/^\[[^]]*\] //; s/^/        guest '"$1"': /'
	[[ $out == lmr$'\n'* && $out == *"rxe0: serving port 1 with a memory key per LMR"* &&
		$out != *"unsafe global rkey"* ]]
}
module_loaded() { litevm exec -g "$1" -- "grep -q '^lite ' /proc/modules"; }
rmmod_clean() {
	litevm exec -g "$1" -- "rmmod lite && ! grep -q '^lite ' /proc/modules && ! test -e /dev/lite"
}
litedev_explains_missing_module() {
	local out
	if out=$(litevm exec -g "$1" -- "$(litedev)" 2>&1); then
		return 1
	fi
	[[ $out == *"is lite.ko loaded?"* ]]
}

host_main() {
	local t g
	echo "perftest over rdma_cm, guest 1 (server) <-> guest 2 (client), 8 B:"
	for t in ib_write_lat ib_read_lat; do
		check "$t" perftest_pair "$t"
	done
	echo "lite.ko:"
	for g in 1 2; do
		check "guest $g: lite.ko loaded" module_loaded "$g"
		check "guest $g: /dev/lite reports rxe0 ACTIVE with its memory keys ready" reports_rxe0_ready "$g"
		check "guest $g: key_mode=lmr by default: a key per LMR, no unsafe global rkey" serves_per_lmr_keys "$g"
		check "guest $g: rmmod lite is clean and removes /dev/lite" rmmod_clean "$g"
		check "guest $g: litedev fails with a reason once lite.ko is gone" litedev_explains_missing_module "$g"
	done
}

vm_main "$@"
