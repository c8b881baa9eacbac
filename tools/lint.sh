#!/bin/bash
# LITE's lint, run first by tests/run.sh (one test per check):
#   format     clang-format (the repo's .clang-format, Google style) on every
#              userspace C/C++ file; kmod/ is kernel C and checked by checkpatch
#   shell      shellcheck on every shell script (found by its #! line)
#   checkpatch checkpatch.pl --strict on kmod/ (tools/checkpatch.sh; skipped
#              with a printed reason when the script cannot be had)
#   arch       the architecture's forbidden arrows (docs/architecture.md): a
#              probe package that adds each forbidden dependency must fail
#              Bazel's visibility check
#   layers     lite.ko's layers (docs/architecture.md, "lite.ko's layers"):
#              no object of a layer uses a symbol of a layer above it
#              (tools/kmod_layers.py over the objects' `nm`; builds
#              //kmod:lite_ko)
# Usage: tools/lint.sh [--fix] [CHECK...]   (default: all checks)
#   --fix  rewrite files with clang-format instead of reporting them
# Exit 0 when every check passed; prints "lint: CHECK: ok|FAILED|skipped".
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1

fix=0
checks=()
for arg in "$@"; do
	case $arg in
	--fix) fix=1 ;;
	-h | --help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
	format | shell | checkpatch | arch | layers) checks+=("$arg") ;;
	*) echo "lint: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
	esac
done
((${#checks[@]})) || checks=(format shell checkpatch arch layers)

# Userspace C and C++ under version control, kmod/ excluded.
cxx_files() {
	git ls-files -- '*.cc' '*.h' '*.hpp' '*.c' | grep -v '^kmod/'
}

shell_files() {
	local f
	while IFS= read -r f; do
		[[ -f $f ]] || continue
		head -n1 "$f" | grep -qE '^#!.*\b(ba|da)?sh\b' && echo "$f"
	done < <(git ls-files)
}

# on_every_core COMMAND... -- FILE...: COMMAND on the FILEs dealt round-robin
# to one process per core (the checkers are single-threaded: a quarter of
# the test command's lint time on 2 cores). Their outputs are printed one
# after the other, never interleaved; fails if any process failed.
on_every_core() {
	local cmd=() jobs i j tmp rc=0 pids=() part
	while (($#)) && [[ $1 != -- ]]; do cmd+=("$1"); shift; done
	shift
	jobs=$(nproc)
	tmp=$(mktemp -d)
	for ((j = 0; j < jobs && j < $#; j++)); do
		part=()
		for ((i = j + 1; i <= $#; i += jobs)); do part+=("${!i}"); done
		"${cmd[@]}" "${part[@]}" > "$tmp/$j" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	cat "$tmp"/*
	rm -rf "$tmp"
	return "$rc"
}

check_format() {
	command -v clang-format > /dev/null || { echo "lint: format: clang-format not installed"; return 1; }
	local files
	mapfile -t files < <(cxx_files)
	if ((fix)); then
		clang-format -i --style=file "${files[@]}"
		return 0
	fi
	local bad=()
	# Each differing file is named in a "FILE:LINE:COL: error: code should
	# be clang-formatted" line.
	mapfile -t bad < <(on_every_core clang-format --style=file --dry-run --Werror -- "${files[@]}" 2>&1 |
		sed -nE 's/^([^:]+):[0-9]+:[0-9]+: error: code should be clang-formatted.*/\1/p' | sort -u)
	if ((${#bad[@]})); then
		echo "lint: format: ${#bad[@]} file(s) differ from clang-format (fix: tools/lint.sh --fix format):"
		printf '    %s\n' "${bad[@]}"
		return 1
	fi
	echo "lint: format: ${#files[@]} files clean"
}

check_shell() {
	command -v shellcheck > /dev/null || { echo "lint: shell: shellcheck not installed"; return 1; }
	local files
	mapfile -t files < <(shell_files)
	on_every_core shellcheck --external-sources -- "${files[@]}" || return 1
	echo "lint: shell: ${#files[@]} scripts clean"
}

check_checkpatch() {
	[[ -x tools/checkpatch.sh ]] || { echo "lint: checkpatch: tools/checkpatch.sh missing"; return 1; }
	tools/checkpatch.sh
}

# One probe per forbidden arrow: PACKAGE (who depends) and TARGET (on what).
# Each must fail analysis with "is not visible"; anything else is a failure
# (a probe that builds means the arrow is open).
forbidden_arrows=(
	"controlplane/arch_probe //kmod:uapi"          # manager -> kernel ABI
	"controlplane/arch_probe //agent:module"       # manager -> agent
	"controlplane/arch_probe //api:fake_device"    # manager -> libLITE internals
	"agent/arch_probe //controlplane:manager_state" # agent -> manager
	"api/arch_probe //proto:lite_grpc"             # libLITE -> gRPC contract
	"api/arch_probe //tools/bazel:grpc"            # libLITE -> gRPC runtime
	"api/arch_probe //tools/bazel:protobuf"        # libLITE -> protobuf
	"api/arch_probe //common/grpc:status"          # libLITE -> gRPC helpers
	"controlplane/arch_probe //genl:client"        # manager -> lite.ko's netlink
	"genl/arch_probe //proto:lite_grpc"            # netlink client -> gRPC
	"agent/arch_probe //cmd/litectl:litectl_lib" # anything -> a tool
	"tools/bench/arch_probe //cmd/liteop:liteop_lib" # a tool -> a tool
)

check_arch() {
	command -v bazel > /dev/null || { echo "lint: arch: bazel not installed"; return 1; }
	local entry pkg target out rc failed=0 made=()
	# shellcheck disable=SC2317  # called by trap
	cleanup() { local d; for d in "${made[@]}"; do rm -rf "$d"; done; }
	trap cleanup RETURN
	for entry in "${forbidden_arrows[@]}"; do
		read -r pkg target <<< "$entry"
		if [[ ! -d ${pkg%/arch_probe} ]]; then
			echo "lint: arch: ${pkg%/arch_probe}/ does not exist"
			failed=1
			continue
		fi
		rm -rf "$pkg"
		mkdir -p "$pkg"
		made+=("$pkg")
		cat > "$pkg/BUILD.bazel" <<-EOF
			# Written and removed by tools/lint.sh: must NOT build.
			cc_library(name = "probe", deps = ["$target"])
		EOF
		out=$(bazel build --nobuild "//$pkg:probe" 2>&1)
		rc=$?
		rm -rf "$pkg"
		if ((rc != 0)) && grep -q "is not visible from target" <<< "$out"; then
			echo "lint: arch: //${pkg%/arch_probe} -> $target refused (as it must be)"
		elif ((rc == 0)); then
			echo "lint: arch: //${pkg%/arch_probe} -> $target is ALLOWED: visibility is too wide"
			failed=1
		else
			echo "lint: arch: //${pkg%/arch_probe} -> $target failed for another reason:"
			grep -E 'ERROR' <<< "$out" | head -5 | sed 's/^/    /'
			failed=1
		fi
	done
	((failed == 0))
}

check_layers() {
	command -v bazel > /dev/null || { echo "lint: layers: bazel not installed"; return 1; }
	local out bin
	if ! out=$(bazel build //kmod:lite_ko 2>&1); then
		echo "lint: layers: cannot build //kmod:lite_ko:"
		tail -n 20 <<< "$out"
		return 1
	fi
	bin=$(bazel info bazel-bin 2> /dev/null) || return 1
	python3 tools/kmod_layers.py --self-test &&
		python3 tools/kmod_layers.py kmod/Kbuild "$bin/kmod/lite_ko_symbols.txt" kmod
}

status=0
for c in "${checks[@]}"; do
	echo "== lint: $c"
	rc=0
	case $c in
	format) check_format || rc=$? ;;
	shell) check_shell || rc=$? ;;
	checkpatch) check_checkpatch || rc=$? ;;
	arch) check_arch || rc=$? ;;
	layers) check_layers || rc=$? ;;
	esac
	if ((rc == 0)); then
		echo "lint: $c: ok"
	else
		echo "lint: $c: FAILED"
		status=1
	fi
done
exit "$status"
