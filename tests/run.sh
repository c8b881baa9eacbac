#!/bin/bash
# LITE's whole test suite, as CI runs it:
#   1. tools/setup.sh (installs what is missing; idempotent)
#   2. tools/lint.sh — formatting, shellcheck, checkpatch, the architecture's
#      forbidden arrows (one test each)
#   3. bazel build //... (what the VM suites run), then the unit and host
#      integration tests under AddressSanitizer + UBSan (--config=asan)
#   4. the Python package's host tests (python/tests/test_host.py)
#   5. the Debian packages (tools/package.sh) and lintian; litevm's
#      download guard (tools/vm/litevm_download_test.sh)
#   6. the VM cluster tests in tests/vm/ — real RDMA in QEMU guests
# Ends with one line "N passed, N failed"; exit status 0 only if all passed.
# Usage: tests/run.sh [--no-vm]        (needs root, or sudo, for setup and VMs)
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1

run_vm=1
case ${1-} in
--no-vm) run_vm=0 ;;
-h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
"") ;;
*) echo "tests/run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac

passed=0
failed=0
failed_names=()
record() {  # record NAME STATUS(0=pass)
	if (($2 == 0)); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names+=("$1")
	fi
}
stamp() { date +%s; }
t0=$(stamp)
# Seconds per phase, printed with the summary: CI shows the end of the
# output, and the budget (40 minutes) is spent phase by phase.
phase_names=()
phase_secs=()
phase_start=$t0
phase_end() {  # phase_end NAME: the phase that began at $phase_start ends now
	local now
	now=$(stamp)
	phase_names+=("$1")
	phase_secs+=($((now - phase_start)))
	phase_start=$now
}

echo "== setup"
tools/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
phase_end setup

echo "== lint  (tools/lint.sh: format, shell, checkpatch, arch)"
for check in format shell checkpatch arch; do
	tools/lint.sh "$check"
	record "lint: $check" $?
done
phase_end lint

# bazel_tests LABEL ARGS...: one recorded test per Bazel test target.
bazel_tests() {
	local label=$1 log targets=0 target status
	shift
	log=$(mktemp)
	bazel test "$@" --test_summary=short 2>&1 | tee "$log" | grep -E '^(//|ERROR|FAIL|Executed)' || true
	while read -r target status; do
		targets=$((targets + 1))
		[[ $status == PASSED ]]
		record "$label$target" $?
	done < <(sed -nE 's#^(//[^ ]+) +(\(cached\) )?(PASSED|FAILED|TIMEOUT|FLAKY|NO STATUS|FAILED TO BUILD|INCOMPLETE).*#\1 \3#p' "$log")
	if ((targets == 0)); then
		echo "bazel reported no test results:"
		tail -20 "$log"
		record "${label}bazel test $*" 1
	fi
	rm -f "$log"
}

# Bazel's disk cache, kept between runs on one machine (CI's too): an action
# whose inputs did not change is not run again. It is content-addressed (a
# changed source, flag or toolchain is a new key), so it is never stale;
# without it everything is built, only slower. Emptied past 8 GiB.
disk_cache=${LITE_BAZEL_DISK_CACHE:-/var/cache/lite-bazel}
if mkdir -p "$disk_cache" 2> /dev/null && [[ -w $disk_cache ]]; then
	if (($(du -sm "$disk_cache" | cut -f1) > 8192)); then
		echo "the Bazel disk cache $disk_cache is over 8 GiB: emptied"
		rm -rf "${disk_cache:?}"/*
	fi
	cache_flags=(--disk_cache="$disk_cache")
else
	cache_flags=()
fi

# Everything is built once as shipped (the VM suites run these binaries);
# the unit and host integration tests run once, under AddressSanitizer +
# UBSan, which checks more than a plain run would. Running them plainly as
# well took minutes of CI's budget and found nothing the sanitized run
# did not.
echo "== bazel build //...  (what the VM suites and the demo run)"
build_log=$(mktemp)
bazel build "${cache_flags[@]}" //... > "$build_log" 2>&1
rc=$?
((rc == 0)) || tail -n 40 "$build_log"
record "bazel build //..." "$rc"
rm -f "$build_log"
# The suites test these binaries (Bazel's real output directory, not the
# bazel-bin symlink) instead of each building its own targets again.
LITE_BIN=$(bazel info bazel-bin 2> /dev/null)
export LITE_BIN
phase_end "bazel build"

echo "== bazel test --config=asan  (unit and host integration tests under AddressSanitizer + UBSan)"
# (the suppressions: libcrypto's own allocations, see the file)
bazel_tests "asan: " "${cache_flags[@]}" --config=asan --build_tests_only \
	--test_env=LSAN_OPTIONS="suppressions=$repo/tools/bazel/lsan.supp:print_suppressions=0" //...
phase_end "bazel test --config=asan"

# The Python package's host tests (its cluster tests run in tests/vm/compat.sh):
# Debian's python3, which has the cffi and pytest that tools/setup.sh installs.
echo "== python/tests/test_host.py  (the Python package, against liblite.so.0)"
(cd python && LITE_LIBRARY=$LITE_BIN/api/liblite.so.0 PYTHONDONTWRITEBYTECODE=1 \
	/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/test_host.py)
record "python: host tests" $?
phase_end "python"

# The Debian packages, from the binaries just built, and lintian on them
# (their contents and an application built against them: tests/vm/compat.sh).
echo "== tools/package.sh  (the Debian packages, lintian)"
pkg_out=$(mktemp -d /tmp/lite-dist.XXXXXX)
tools/package.sh --out "$pkg_out"
record "packages: build and lintian" $?
rm -rf "$pkg_out"
phase_end "packages"

# litevm's own download guard (review cp-2026-11-28 M9): the attack on the
# kernel .deb between download and unpack, with stand-ins for apt (no
# network, under a second).
echo "== tools/vm/litevm_download_test.sh  (litevm's kernel download, attacked)"
tools/vm/litevm_download_test.sh
record "litevm: download guard" $?
phase_end "litevm download"

if ((run_vm)); then
	for t in tests/vm/*.sh; do
		[[ $t == tests/vm/lib.sh ]] && continue  # sourced by the suites, not one
		name=${t%.sh}
		echo "== $name  (VM cluster)"
		start=$(stamp)
		"$t"
		rc=$?
		echo "-- $name: $( ((rc == 0)) && echo PASSED || echo "FAILED (exit $rc)") in $(($(stamp) - start)) s"
		record "$name" "$rc"
		phase_end "${name#tests/}"
	done
fi

echo
echo "== summary: $(($(stamp) - t0)) s"
for i in "${!phase_names[@]}"; do
	printf '  %6d s  %s\n' "${phase_secs[i]}" "${phase_names[i]}"
done
for name in "${failed_names[@]}"; do echo "FAILED: $name"; done
echo "$passed passed, $failed failed"
((failed == 0))
