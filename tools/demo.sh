#!/bin/bash
# LITE's main job, on one machine: a virtual RDMA cluster (QEMU guests with
# Soft-RoCE) with lite.ko loaded on every node, its RDMA devices, and raw RDMA
# latencies between the nodes measured with perftest, as a readable summary.
# Installs what it needs first (tools/setup.sh). Needs root, or sudo.
# Usage: tools/demo.sh [-n NODES]     (2..8, default 2)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

nodes=2
if [[ ${1-} == --inside ]]; then
	shift
	nodes=$LITE_VM_GUESTS
	litedev=$LITE_BIN/tools/litedev/litedev
	for ((g = 1; g <= nodes; g++)); do
		echo
		echo "── node $g ($(litevm ip "$g")) ─────────────────────────────────"
		litevm exec -g "$g" -- "rdma link show; grep '^lite ' /proc/modules | awk '{print \"module: \" \$1 \" (\" \$2 \" bytes, \" \$5 \")\"}'; $litedev"
	done
	echo
	echo "── raw RDMA latency, node 1 ↔ node 2, 8 B, rdma_cm (perftest) ──────"
	printf '%-14s %12s %12s %12s\n' test typical_us avg_us p99_us
	for t in ib_write_lat ib_read_lat ib_send_lat; do
		line=$(perftest-pair "$t" 1 2 8 1000)
		read -r name _ typical avg p99 <<< "$line"
		printf '%-14s %12s %12s %12s\n' "$name" "${typical#*=}" "${avg#*=}" "${p99#*=}"
	done
	echo
	echo "(software RDMA under CPU emulation: compare figures only within one run)"
	exit 0
fi

case ${1-} in
-n) nodes=${2-}; [[ $nodes =~ ^[2-8]$ ]] || { echo "demo: -n must be 2..8" >&2; exit 2; } ;;
-h|--help) sed -n '2,6s/^# \{0,1\}//p' "$0"; exit 0 ;;
"") ;;
*) echo "demo: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac

tools/setup.sh
echo "demo: building lite.ko and tools (bazel)" >&2
bazel build //kmod:lite_ko //tools/litedev 2> /tmp/lite-demo-build.log ||
	{ cat /tmp/lite-demo-build.log >&2; exit 1; }
# The real output directory, not the bazel-bin symlink another build may repoint.
LITE_BIN=$(bazel info bazel-bin 2> /dev/null)
export LITE_BIN
echo "demo: booting a $nodes-node RDMA cluster (about 10 s)" >&2
exec tools/vm/litevm run -n "$nodes" --module "$LITE_BIN/kmod/lite.ko" --timeout 600 \
	-- "$0" --inside
