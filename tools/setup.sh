#!/bin/bash
# Installs everything LITE needs on Debian 12, idempotently: Debian packages
# (only those missing; apt-get update only then), and the VM cluster's guest
# kernel and initramfs (cached). Needs root, or sudo.
# Usage: tools/setup.sh [--quiet]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
quiet=0
[[ ${1-} == --quiet ]] && quiet=1
[[ ${1-} == -h || ${1-} == --help ]] && { sed -n '2,5s/^# \{0,1\}//p' "$0"; exit 0; }

say() { ((quiet)) || echo "setup: $*" >&2; }

packages=(
	# build: offline Bazel and the C++ libraries it links from Debian
	bazel-bootstrap bazel-rules-java g++ make pkg-config
	libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
	libabsl-dev libgtest-dev libgmock-dev
	# the CLIs' argument parser and JSON writer (header-only); OpenSSL's HMAC
	# for the manager's pair secrets and the wire test
	libcli11-dev nlohmann-json3-dev libssl-dev
	# the cluster's certificates (cmd/litecerts: the CLI, not the library)
	openssl
	# lint (tools/lint.sh): formatting, shell scripts; checkpatch.pl comes
	# from linux-source-6.1 (tools/checkpatch.sh) and perl
	clang-format shellcheck perl
	# lite.ko: Kbuild against the distribution's kernel headers
	linux-headers-amd64 kmod
	# userspace RDMA: verbs, rdma_cm, netlink
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
	# TCP latency beside LITE RPC's (tools/bench/rpc_compare); GNU time for
	# perftest's CPU time per operation (tools/vm/perftest-pair)
	qperf time
	libibverbs-dev librdmacm-dev libnl-3-dev libnl-genl-3-dev
	# io_uring for lite-bench's and libLITE's asynchronous operations
	liburing-dev
	# the QoS experiment's plot (tools/bench/qos_plot)
	gnuplot-nox
	# the VM cluster
	qemu-system-x86 busybox-static cpio iproute2 util-linux
	# the Python package (python/lite): cffi over liblite.so.0, its tests
	python3 python3-cffi python3-pytest python3-numpy
	# packages (tools/package.sh): sd_notify for the daemons' systemd units,
	# the Debian packaging tools and lintian
	libsystemd-dev dpkg-dev lintian
	# the install test's clean Debian root (tools/vm/debroot)
	debootstrap
	# the daemons' Prometheus endpoints (--metrics_listen, docs/metrics.md)
	prometheus-cpp-dev
)

as_root() {
	if [[ $(id -u) == 0 ]]; then
		"$@"
	elif command -v sudo > /dev/null; then
		sudo "$@"
	else
		echo "setup: needs root to run: $*" >&2
		exit 1
	fi
}

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2> /dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
	say "installing ${#missing[@]} Debian package(s): ${missing[*]}"
	# A new file of our own (mktemp), not a fixed /tmp name another user
	# could have made a symlink.
	log=$(mktemp /tmp/lite-setup-apt.XXXXXX)
	say "apt-get update (about a minute on a fresh machine)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q > "$log" 2>&1 ||
		{ cat "$log" >&2; echo "setup: apt-get update failed" >&2; exit 1; }
	say "apt-get install (a few minutes on a fresh machine; log: $log)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >> "$log" 2>&1 ||
		{ tail -30 "$log" >&2; echo "setup: apt-get install failed" >&2; exit 1; }
	say "packages installed"
else
	say "all ${#packages[@]} Debian packages already installed"
fi

say "preparing the VM cluster's guest kernel ($("$repo/tools/kver.sh"))"
as_root "$repo/tools/vm/litevm" prepare
