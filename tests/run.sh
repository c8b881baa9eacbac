#!/bin/bash
# LITE's whole test suite, as CI runs it:
#   1. tools/setup.sh (installs what is missing; idempotent)
#   2. tools/lint.sh — formatting, shellcheck, checkpatch, the architecture's
#      forbidden arrows, lite.ko's layers (one test each)
#   3. bazel build //... (what the VM suites run), then the unit and host
#      integration tests under AddressSanitizer + UBSan (--config=asan)
#   4. the Python package's host tests (python/tests/test_host.py)
#   5. the Debian packages (tools/package.sh) and lintian; litevm's
#      download guard (tools/vm/litevm_download_test.sh)
#   6. the VM cluster tests in tests/vm/ — real RDMA in QEMU guests
# Ends with one line "N passed, N failed"; exit status 0 only if all passed.
# The summary gives each phase's seconds against its budget (docs/testing.md)
# and says OVER BUDGET for a phase that ran over (it does not fail for it).
#
# Usage: tests/run.sh [--no-vm] [--only WHAT] [--repeat N]
#                                      (needs root, or sudo, for setup and VMs)
#   (no option)   everything above, in that order: what CI runs (.ci/run)
#   --no-vm       everything but the VM suites
#   --only WHAT   one phase or one test, without setup (run tools/setup.sh
#                 once first); the build first when WHAT needs it (VM suites,
#                 python, packages) and LITE_BIN is not set. WHAT is one of:
#                   lint, lint:format, lint:shell, lint:checkpatch, lint:arch, lint:layers
#                   build                    bazel build //...
#                   asan                     every host test, under ASan
#                   //PKG:TARGET, //PKG/...  those Bazel tests, under ASan
#                   python, packages, download
#                   vm                       every VM suite
#                   SUITE                    one VM suite: compat, tests/vm/rpc,
#                                            tests/vm/rpc.sh ...
#                   setup                    tools/setup.sh
#   --repeat N    runs the selection N times (1-1000; with no --only: all but
#                 setup, which runs once); a line per round (passes, failures,
#                 seconds) and a summary: rounds green, failures per test.
#                 Bazel's cached test results are not used (each round runs
#                 the tests again).
# Examples: tests/run.sh --only datapath --repeat 5
#           tests/run.sh --only //tests/host:membership_test --repeat 20
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1

# Bazel refuses a workspace whose path has a space ("bazel does not
# currently work properly from paths containing spaces"): as root, the run
# goes on from a bind mount of the checkout at a path without one, in a
# mount namespace of its own (nothing to clean up). The path is named after
# the checkout's, the same each run: Bazel's output base, and the build it
# keeps, follow the workspace's path.
if [[ $repo == *[[:space:]]* ]]; then
	ws=/tmp/lite-ws-$(printf '%s' "$repo" | md5sum | cut -c1-12)
	if ((EUID != 0)) || ! command -v unshare > /dev/null; then
		echo "tests/run.sh: Bazel cannot build in '$repo' (a space in its path): run this as root (it then works from a bind mount without one), or clone LITE to a path without spaces" >&2
		exit 1
	fi
	echo "tests/run.sh: '$repo' has a space in its path, which Bazel refuses: running from a bind mount of it at $ws"
	mkdir -p "$ws" || exit 1
	# shellcheck disable=SC2016  # expanded by the inner bash
	exec unshare -m --propagation private -- bash -c \
		'mount --bind "$1" "$2" && cd "$2" && shift 2 && exec tests/run.sh "$@"' run.sh "$repo" "$ws" "$@"
fi

usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; }
bad_usage() {
	echo "tests/run.sh: $* (see --help)" >&2
	exit 2
}

run_vm=1
only=""
repeat=1
while (($#)); do
	case $1 in
	--no-vm) run_vm=0 ;;
	--only) (($# > 1)) || bad_usage "--only needs a phase or test"; only=$2; shift ;;
	--only=*) only=${1#--only=} ;;
	--repeat) (($# > 1)) || bad_usage "--repeat needs a number"; repeat=$2; shift ;;
	--repeat=*) repeat=${1#--repeat=} ;;
	-h | --help) usage; exit 0 ;;
	*) bad_usage "unknown option '$1'" ;;
	esac
	shift
done
if [[ ! $repeat =~ ^[1-9][0-9]{0,3}$ ]] || ((repeat > 1000)); then
	bad_usage "--repeat takes a number of rounds from 1 to 1000, not '$repeat'"
fi
[[ -z $only ]] || ((run_vm)) || bad_usage "--no-vm goes with the whole run, not with --only"

# The VM suites: every tests/vm/*.sh but lib.sh (sourced by the suites).
vm_suites=()
for t in tests/vm/*.sh; do
	[[ $t == tests/vm/lib.sh ]] || vm_suites+=("$t")
done

# --- the selection: a list of steps ----------------------------------------------
# A step is "KIND ARG": setup, lint CHECK, build, asan TARGET, python,
# packages, download, vm tests/vm/NAME.sh.
steps=()
needs_build=0
select_only() {
	local what=$1 c t
	case $what in
	setup) steps=("setup") ;;
	lint) for c in format shell checkpatch arch layers; do steps+=("lint $c"); done ;;
	lint:format | lint:shell | lint:checkpatch | lint:arch | lint:layers) steps=("lint ${what#lint:}") ;;
	build) steps=("build") ;;
	asan | host) steps=("asan //...") ;;
	//*) steps=("asan $what") ;;
	python | packages | download) steps=("$what"); needs_build=1 ;;
	vm)
		for t in "${vm_suites[@]}"; do steps+=("vm $t"); done
		needs_build=1
		;;
	*)
		t=${what%.sh}
		t=tests/vm/${t#tests/vm/}.sh
		[[ $t != tests/vm/lib.sh && -f $t ]] ||
			bad_usage "--only: no phase, Bazel label or VM suite '$what' (VM suites:$(printf ' %s' "${vm_suites[@]##*/}" | sed 's/\.sh//g'))"
		steps=("vm $t")
		needs_build=1
		;;
	esac
	# The download guard runs no binary of the build.
	[[ $what == download ]] && needs_build=0
	return 0
}
if [[ -n $only ]]; then
	select_only "$only"
	[[ -n ${LITE_BIN-} ]] && needs_build=0
else
	steps=("lint format" "lint shell" "lint checkpatch" "lint arch" "lint layers" build "asan //..."
		python packages download)
	if ((run_vm)); then
		for t in "${vm_suites[@]}"; do steps+=("vm $t"); done
	fi
fi

# --- results ---------------------------------------------------------------------
passed=0           # over every round
failed=0
failed_names=()    # in the order they failed, once each
declare -A fail_count=()
round_passed=0
round_failed=0
round_failed_names=()
record() {  # record NAME STATUS(0=pass)
	if (($2 == 0)); then
		passed=$((passed + 1))
		round_passed=$((round_passed + 1))
	else
		failed=$((failed + 1))
		round_failed=$((round_failed + 1))
		round_failed_names+=("$1")
		[[ -n ${fail_count[$1]-} ]] || failed_names+=("$1")
		fail_count[$1]=$((${fail_count[$1]-0} + 1))
	fi
}
stamp() { date +%s; }
t0=$(stamp)

# --- budgets (docs/testing.md): seconds per phase ------------------------------------
# CI's whole run must fit 25 minutes warm (a machine that built LITE before:
# Bazel's disk cache full) and 45 minutes cold (a machine that never did), on
# 2 cores. The phases before the VM suites are given what they take today
# with a margin; the VM suites as a whole get what is left, which is less
# than they take today (#36). Each suite has its own line besides, about
# 1.5 times what it takes today (2026-11-28, its boot and its seconds in the
# cluster, docs/testing.md): a suite that suddenly takes twice as long shows.
declare -A budget_warm=(
	[setup]=30 [lint]=60 ["bazel build"]=120 ["bazel test --config=asan"]=360
	[python]=15 [packages]=30 ["litevm download"]=10
)
declare -A budget_cold=(
	[setup]=420 [lint]=60 ["bazel build"]=900 ["bazel test --config=asan"]=780
	[python]=15 [packages]=30 ["litevm download"]=10
)
# Per VM suite, warm or cold alike (their binaries are built by then); a
# suite not named here has budget_vm_default.
budget_vm_default=180
declare -A budget_vm=(
	[blast_radius]=220 [compat]=115 [datapath]=175 [device_readd]=130
	[free_in_use]=135 [fuzz]=115
	[install]=300 [limits]=40 [lmr]=120 [locks_attack]=110 [peer_auth]=75
	[peer_failure]=190 [peers]=65 [qos_locks]=140 [rpc]=230 [smoke]=40
	[teardown]=120 [trust_kernel]=65 [uring_hold]=45
)
budget_total_warm=1500
budget_total_cold=2700
# Cold: Bazel's disk cache held nothing when this run began.
disk_cache=${LITE_BAZEL_DISK_CACHE:-/var/cache/lite-bazel}
cold=0
[[ -n $(find "$disk_cache" -type f -print -quit 2> /dev/null) ]] || cold=1

# Seconds per phase, printed with the summary: CI shows the end of the
# output, and the budget is spent phase by phase. With --repeat, the
# slowest round counts against the budget.
phase_names=()      # in the order first seen
declare -A phase_max=() phase_sum=() phase_runs=() phase_boot=()
phase_start=$t0
# phase_end NAME [BOOT+CONTROL_PLANE+WAITED]: the phase that began at
# $phase_start ends now; a VM suite gives the seconds of its guests' boots,
# its control plane's starts and its wait for another run's cluster (not
# counted as its time).
phase_end() {
	local now secs
	now=$(stamp)
	secs=$((now - phase_start))
	[[ -z ${2-} ]] || secs=$((secs - ${2##*+}))
	[[ -n ${phase_runs[$1]-} ]] || phase_names+=("$1")
	phase_runs[$1]=$((${phase_runs[$1]-0} + 1))
	phase_sum[$1]=$((${phase_sum[$1]-0} + secs))
	((secs > ${phase_max[$1]-0})) && phase_max[$1]=$secs
	phase_max[$1]=${phase_max[$1]-0}
	[[ -z ${2-} ]] || phase_boot[$1]=$2
	phase_start=$now
}
phase_budget() {  # phase_budget NAME: BUDGET is its budget in seconds, or empty
	BUDGET=
	case $1 in
	vm/*) BUDGET=${budget_vm[${1#vm/}]-$budget_vm_default} ;;
	*)
		if ((cold)); then BUDGET=${budget_cold[$1]-}; else BUDGET=${budget_warm[$1]-}; fi
		;;
	esac
}

# --- the steps ---------------------------------------------------------------------

step_setup() {
	echo "== setup"
	tools/setup.sh
	local rc=$?
	# counted as a test only when it is what was asked for (--only setup)
	[[ $only != setup ]] || record "setup" "$rc"
	phase_end setup
	return "$rc"
}

lint_header=0
step_lint() {  # step_lint CHECK
	((lint_header++)) || echo "== lint  (tools/lint.sh: format, shell, checkpatch, arch, layers)"
	tools/lint.sh "$1"
	record "lint: $1" $?
}

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
cache_flags=()
bazel_cache_ready=0
bazel_cache() {
	((bazel_cache_ready++)) && return 0
	if mkdir -p "$disk_cache" 2> /dev/null && [[ -w $disk_cache ]]; then
		if (($(du -sm "$disk_cache" | cut -f1) > 8192)); then
			echo "the Bazel disk cache $disk_cache is over 8 GiB: emptied"
			rm -rf "${disk_cache:?}"/*
		fi
		cache_flags=(--disk_cache="$disk_cache")
	fi
}

# Everything is built once as shipped (the VM suites run these binaries);
# the unit and host integration tests run once, under AddressSanitizer +
# UBSan, which checks more than a plain run would. Running them plainly as
# well took minutes of CI's budget and found nothing the sanitized run
# did not.
step_build() {
	local build_log rc
	bazel_cache
	echo "== bazel build //...  (what the VM suites and the demo run)"
	build_log=$(mktemp)
	bazel build "${cache_flags[@]}" //... > "$build_log" 2>&1
	rc=$?
	((rc == 0)) || tail -n 40 "$build_log"
	record "bazel build //..." "$rc"
	rm -f "$build_log"
	# The suites test these binaries (Bazel's real output directory, not
	# the bazel-bin symlink) instead of each building its own targets again.
	LITE_BIN=$(bazel info bazel-bin 2> /dev/null)
	export LITE_BIN
	phase_end "bazel build"
	return "$rc"
}

step_asan() {  # step_asan TARGET
	local more=()
	bazel_cache
	# A repeated round runs the tests again instead of showing the first
	# round's cached result; so does --only (the point is to run them).
	[[ -n $only ]] || ((repeat > 1)) && more=(--nocache_test_results)
	echo "== bazel test --config=asan $1  (unit and host integration tests under AddressSanitizer + UBSan)"
	# (the suppressions: libcrypto's own allocations, see the file)
	bazel_tests "asan: " "${cache_flags[@]}" --config=asan --build_tests_only "${more[@]}" \
		--test_env=LSAN_OPTIONS="suppressions=$repo/tools/bazel/lsan.supp:print_suppressions=0" "$1"
	if [[ $1 == //... ]]; then phase_end "bazel test --config=asan"; else phase_end "asan: $1"; fi
}

# The Python package's host tests (its cluster tests run in tests/vm/compat.sh):
# Debian's python3, which has the cffi and pytest that tools/setup.sh installs.
step_python() {
	echo "== python/tests/test_host.py  (the Python package, against liblite.so.0)"
	(cd python && LITE_LIBRARY=$LITE_BIN/api/liblite.so.0 PYTHONDONTWRITEBYTECODE=1 \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/test_host.py)
	record "python: host tests" $?
	phase_end "python"
}

# The Debian packages, from the binaries just built, and lintian on them
# (their contents and an application built against them: tests/vm/compat.sh).
step_packages() {
	local pkg_out
	echo "== tools/package.sh  (the Debian packages, lintian)"
	pkg_out=$(mktemp -d /tmp/lite-dist.XXXXXX)
	tools/package.sh --out "$pkg_out"
	record "packages: build and lintian" $?
	rm -rf "$pkg_out"
	phase_end "packages"
}

# litevm's own download guard (review cp-2026-11-28 M9): the attack on the
# kernel .deb between download and unpack, with stand-ins for apt (no
# network, under a second).
step_download() {
	echo "== tools/vm/litevm_download_test.sh  (litevm's kernel download, attacked)"
	tools/vm/litevm_download_test.sh
	record "litevm: download guard" $?
	phase_end "litevm download"
}

# One VM suite. Its output is kept to add up where its time went: the
# guests' boots (litevm's "N guest(s) ready in S s"), the control plane's
# starts (litecluster's "cluster ready: ... (S s)") and the wait for
# another run's cluster to end (litevm's "waited S s for the other
# cluster"), which is not the suite's: it is not held to its budget.
#
# Where a suite's time went: every "== " and "-- " line of its output
# begins a section; the slowest sections are printed after the suite's
# result line ("slowest sections: ..."), so a suite over its budget shows
# what to cut.
stamp_sections() {  # stamp_sections FILE: copies its input; "MS LINE" of each section to FILE
	local line
	printf '%s %s\n' "${EPOCHREALTIME/./}" "(build, boot)" > "$1"
	while IFS= read -r line || [[ -n $line ]]; do
		printf '%s\n' "$line"
		[[ $line == "== "* || $line == "-- "* || $line == "litevm: "*" ready in "* ]] &&
			printf '%s %s\n' "${EPOCHREALTIME/./}" "$line" >> "$1"
	done
	printf '%s %s\n' "${EPOCHREALTIME/./}" "(end)" >> "$1"
}
slowest_sections() {  # slowest_sections FILE: the 5 longest sections of 5 s or more
	awk '{ t = substr($1, 1, length($1) - 6); $1 = ""; sub(/^ /, "")
	       if (NR > 1) printf "%d\t%s\n", t - prev, name
	       prev = t; name = substr($0, 1, 70) }' "$1" |
		sort -t "$(printf '\t')" -k1,1nr | awk -F '\t' '$1 >= 5 && n++ < 5 { printf "     %4d s  %s\n", $1, $2 }'
}

step_vm() {  # step_vm tests/vm/NAME.sh
	local t=$1 name rc start log boot cp waited sections
	name=${t%.sh}
	echo "== $name  (VM cluster)"
	start=$(stamp)
	log=$(mktemp)
	sections=$(mktemp)
	"$t" 2>&1 | stamp_sections "$sections" | tee "$log"
	rc=${PIPESTATUS[0]}
	read -r boot cp waited < <(awk '
		/^litevm: [0-9]+ guest\(s\) ready in [0-9.]+ s$/ { b += $(NF - 1) }
		/ cluster ready: / && match($0, /\([0-9]+ s\)$/) { c += substr($0, RSTART + 1, RLENGTH - 4) }
		/^litevm: waited [0-9]+ s for the other cluster$/ { w += $3 }
		END { printf "%.0f %d %d\n", b, c, w }' "$log")
	rm -f "$log"
	echo "-- $name: $( ((rc == 0)) && echo PASSED || echo "FAILED (exit $rc)") in $(($(stamp) - start)) s (guest boots $boot s, control plane starts $cp s$( ((waited)) && echo ", waited $waited s for another cluster"))"
	echo "   slowest sections:"
	slowest_sections "$sections"
	rm -f "$sections"
	record "$name" "$rc"
	phase_end "${name#tests/}" "$boot+$cp+$waited"
}

run_step() {  # run_step KIND [ARG]
	case $1 in
	setup) step_setup ;;
	lint) step_lint "$2" ;;
	build) step_build ;;
	asan) step_asan "$2" ;;
	python) step_python ;;
	packages) step_packages ;;
	download) step_download ;;
	vm) step_vm "$2" ;;
	esac
}

# --- the run -------------------------------------------------------------------------

if [[ -z $only ]]; then
	step_setup || { echo "0 passed, 1 failed"; exit 1; }
elif [[ $only == setup ]]; then
	steps=()
	step_setup
fi
# --only: the binaries its tests run, built once before the rounds.
if ((needs_build)); then
	step_build || { echo "tests/run.sh: the build failed: nothing to test"; echo "$passed passed, $failed failed"; exit 1; }
fi

rounds_green=0
for ((round = 1; round <= repeat; round++)); do
	((repeat == 1)) || echo "=== round $round of $repeat"
	round_passed=0 round_failed=0 round_failed_names=() lint_header=0
	round_t0=$(stamp)
	phase_start=$round_t0
	for i in "${!steps[@]}"; do
		read -r kind arg <<< "${steps[i]}"
		run_step "$kind" "$arg"
		# the lint checks are one phase
		[[ $kind == lint && ${steps[i + 1]-} != "lint "* ]] && phase_end lint
	done
	((round_failed == 0)) && rounds_green=$((rounds_green + 1))
	if ((repeat > 1)); then
		echo "=== round $round of $repeat: $round_passed passed, $round_failed failed in $(($(stamp) - round_t0)) s${round_failed_names[*]:+: ${round_failed_names[*]}}"
	fi
done

# --- summary -------------------------------------------------------------------------

echo
echo "== summary: $(($(stamp) - t0)) s$( ((repeat > 1)) && echo ", $repeat rounds (a phase's slowest round is shown and held to its budget)")"
over=()
vm_secs=0
for name in "${phase_names[@]}"; do
	secs=${phase_max[$name]}
	b=0 c=0 w=0
	[[ -z ${phase_boot[$name]-} ]] || IFS=+ read -r b c w <<< "${phase_boot[$name]}"
	own=$secs  # without the wait for another run's cluster (phase_end)
	[[ $name == vm/* ]] && vm_secs=$((vm_secs + own))
	phase_budget "$name"
	parts=()
	if [[ -n $BUDGET ]]; then
		parts+=("budget $BUDGET s")
		((own > BUDGET)) && over+=("$name took $own s, its budget is $BUDGET s")
	fi
	((repeat > 1)) && parts+=("mean $((phase_sum[$name] / phase_runs[$name])) s")
	[[ -z ${phase_boot[$name]-} ]] || parts+=("guest boots $b s, control plane starts $c s")
	((w)) && parts+=("and $w s waiting for another cluster")
	extra=$(IFS=';'; echo "${parts[*]}")
	printf '  %6d s  %-28s%s\n' "$own" "$name" "${extra:+  (${extra//;/, })}"
	if [[ -n $BUDGET ]] && ((own > BUDGET)); then
		printf '  %6s    ^^^ OVER BUDGET by %d s\n' "" $((own - BUDGET))
	fi
done
# The whole run against CI's limit (only when it was the whole run).
if [[ -z $only ]] && ((repeat == 1)); then
	total=$(($(stamp) - t0))
	if ((cold)); then limit=$budget_total_cold kind=cold; else limit=$budget_total_warm kind=warm; fi
	# The VM suites share what the other phases leave of the total.
	if ((run_vm)); then
		rest=$limit
		for name in "${!budget_warm[@]}"; do
			if ((cold)); then rest=$((rest - budget_cold[$name])); else rest=$((rest - budget_warm[$name])); fi
		done
		printf '  %6d s  %-28s  (budget %d s: what the other phases leave)\n' "$vm_secs" "VM suites, all" "$rest"
		((vm_secs > rest)) && over+=("the VM suites took $vm_secs s, their share of the $kind budget is $rest s")
	fi
	printf '  %6d s  %-28s  (budget %d s, %s: Bazel'"'"'s disk cache %s)\n' "$total" "the whole run" "$limit" \
		"$kind" "$( ((cold)) && echo "was empty" || echo "was warm")"
	((total > limit)) && over+=("the whole run took $total s, the $kind budget is $limit s")
fi
for line in "${over[@]}"; do echo "!!! OVER BUDGET: $line"; done
if ((repeat > 1)); then
	echo "repeat: $rounds_green of $repeat rounds green"
	for name in "${failed_names[@]}"; do echo "FAILED: $name (in ${fail_count[$name]} of $repeat rounds)"; done
else
	for name in "${failed_names[@]}"; do echo "FAILED: $name"; done
fi
echo "$passed passed, $failed failed"
((failed == 0))
