#!/bin/bash
# tests/vm/lib.sh: what the VM suites (tests/vm/*.sh) share. Sourced, not run.
#
# A VM suite is one script that runs in three places:
#   SUITE.sh [litevm run options]  on the host: builds VM_TARGETS with Bazel,
#                                  boots VM_GUESTS guests (tools/vm/litevm
#                                  run, lite.ko loaded) and runs itself with
#                                  --inside there
#   SUITE.sh --inside              the host side, inside the cluster's network
#                                  namespace: the suite's host_main, then the
#                                  summary
#   SUITE.sh --guest FUNCTION ARGS in one guest (the host's filesystem is the
#                                  guest's root): one of the suite's guest
#                                  functions, so one round trip runs many
#                                  checks
# The suite sources this file, sets VM_SUITE, VM_GUESTS, VM_TIMEOUT and
# VM_TARGETS (and VM_GUEST_ENV, VM_GUEST_SECS if it needs them), defines
# host_main and its guest functions at top level, and ends with vm_main "$@".
#
# Exit status of a suite: 0 when every check passed, 1 otherwise (also when
# the build, the boot or litevm's kernel-log check fails). A guest function
# exits with its number of failures, at most 100; the host adds them up.
#
# LITE_BIN=DIR in the environment: test the binaries already in DIR (Bazel's
# bin layout: DIR/kmod/lite.ko, DIR/cmd/litenl/litenl, ...), no build.
#
# Suites that start the control plane (tools/vm/litecluster.sh's lc_start)
# run it with mutual TLS: certificates made per cluster in
# $LITE_VM_STATE/tls, litectl on the host as operator "ops" (LITE_TLS_* set
# by lc_start). LITE_INSECURE=1 in the environment runs it plaintext.
#
# In the guests every process costs about 0.3 s (TCG): the guest-side helpers
# use bash builtins wherever they can.

VM_SUITE=${VM_SUITE:-vm}
VM_GUESTS=2
VM_TIMEOUT=600
VM_TARGETS=(//kmod:lite_ko)
VM_GUEST_ENV=()   # names of variables the guest side needs (GUEST and LITE_BIN always)
VM_GUEST_SECS=150 # limit for one guest function (litevm exec -t)
VM_APPEND=""      # more kernel parameters for the guests (litevm run --append)
VM_FAILURES=0
VM_TAG=host       # [host] or [gN] in front of every ok/FAIL line

# --- checks (host and guest) ---------------------------------------------------

vm_ok() { echo "  ok    [$VM_TAG] $*"; }
vm_fail() {
	echo "  FAIL  [$VM_TAG] $*"
	VM_FAILURES=$((VM_FAILURES + 1))
}
# check DESCRIPTION COMMAND...: one ok or FAIL line; a failure is counted.
check() {
	local what=$1
	shift
	if "$@"; then vm_ok "$what"; else vm_fail "$what"; fi
}
# indent: stdin, indented under the ok/FAIL lines.
indent() { sed 's/^/        /'; }
# has_text TEXT PART: TEXT contains PART.
has_text() { [[ $1 == *"$2"* ]]; }
# out_has PART COMMAND...: the command succeeds and its output has PART.
out_has() {
	local want=$1 out
	shift
	out=$("$@" 2>&1) || { echo "        $out"; return 1; }
	[[ $out == *"$want"* ]] || { echo "        got: $out"; return 1; }
}
# fails_with ERRNO_NAME COMMAND...: exits non-zero naming the errno.
fails_with() {
	local errno=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	echo "        $out"
	((rc != 0)) && [[ $out == *"($errno)"* ]]
}

# vm_summary: the suite's last line; returns its exit status (0 or 1).
vm_summary() {
	if ((VM_FAILURES)); then
		echo "$VM_SUITE: $VM_FAILURES check(s) FAILED"
		return 1
	fi
	echo "$VM_SUITE: all checks passed"
}

# vm_wait_until SECS COMMAND...: runs COMMAND every VM_POLL seconds (default
# 0.2) until it succeeds (status 0) or SECS have passed (status 1).
vm_wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep "${VM_POLL:-0.2}"
	done
}

# --- host side: driving the guests ----------------------------------------------

# vm_guest_cmd GUEST FUNCTION ARGS...: the command line that runs a guest
# function of this suite in guest GUEST (every word quoted).
vm_guest_cmd() {
	local g=$1 v
	shift
	printf 'GUEST=%d LITE_BIN=%q' "$g" "$LITE_BIN"
	for v in "${VM_GUEST_ENV[@]}"; do printf ' %s=%q' "$v" "${!v}"; done
	printf ' %q --guest' "$VM_SELF"
	printf ' %q' "$@"
}

# vm_count WHAT STATUS: adds a guest function's exit status (its failure
# count, already reported by its FAIL lines) to the failures. A status over
# 100 is no count (124: timed out; 127, 137: it died) and fails once, named.
vm_count() {
	if (($2 > 100)); then
		vm_fail "$1: ended with status $2"
	else
		VM_FAILURES=$((VM_FAILURES + $2))
	fi
}

# vm_took WHAT START: says how long WHAT took since START ($SECONDS) when
# that was 10 s or more: where a suite's time goes, for the CI budget.
vm_took() {
	local secs=$((SECONDS - $2))
	((secs < 10)) || echo "        ($1: $secs s)"
}

# guest GUEST FUNCTION ARGS...: runs a guest function, waits, counts.
guest() {
	local rc=0 start=$SECONDS
	litevm exec -g "$1" -t "$VM_GUEST_SECS" -- "$(vm_guest_cmd "$@")" || rc=$?
	vm_count "guest $1: $2" "$rc"
	vm_took "guest $1 $2" "$start"
}

# vm_spawn GUEST FUNCTION ARGS...: starts a guest function; prints the job id.
vm_spawn() { litevm spawn -g "$1" -t "$VM_GUEST_SECS" -- "$(vm_guest_cmd "$@")"; }

# vm_join GUEST JOB WHAT: waits for a job (of vm_spawn or litevm spawn),
# prints its output, counts its status like vm_count.
vm_join() {
	local rc=0
	litevm wait -g "$1" -t $((VM_GUEST_SECS + 30)) "$2" || rc=$?
	vm_count "guest $1: $3" "$rc"
}

# guests "GUEST FUNCTION ARGS"...: guest functions in parallel (each spec is
# split into words); output and counts in the order given.
guests() {
	local spec words jobs=() g job fn start=$SECONDS
	for spec in "$@"; do
		read -ra words <<< "$spec"
		jobs+=("${words[0]} $(vm_spawn "${words[@]}") ${words[1]}")
	done
	for spec in "${jobs[@]}"; do
		read -r g job fn <<< "$spec"
		vm_join "$g" "$job" "$fn"
	done
	vm_took "guests ${jobs[*]%% *} ${fn-}" "$start"
}

# attr_num NAME: the number of a LITE_ATTR_* netlink attribute, from the
# uapi header (for checks that send raw attributes).
attr_num() {
	awk -v name="$1" '/^enum lite_genl_attr/ {on = 1; n = -1}
		on && $1 ~ /^LITE_ATTR_/ {n++; sub(",", "", $1); if ($1 == name) {print n; exit}}' \
		"$VM_REPO/kmod/include/uapi/lite_genl.h"
}

# --- guest side ------------------------------------------------------------------

LITENL=${LITE_BIN-}/cmd/litenl/litenl

# nap SECS: sleep without a fork, in read's timeout on a FIFO nobody writes.
nap() {
	if [[ -z ${VM_NAP_FD-} ]]; then
		[[ -p /tmp/vm-nap.fifo ]] || mkfifo /tmp/vm-nap.fifo
		exec {VM_NAP_FD}<> /tmp/vm-nap.fifo
	fi
	read -rt "$1" -u "$VM_NAP_FD" || true
}
# shellcheck disable=SC2034  # NOW_MS is the result, for the caller
now_ms() { NOW_MS=$((${EPOCHREALTIME/./} / 1000)); }
# counter NAME: COUNTER is lite.ko's debugfs counter NAME.
# shellcheck disable=SC2034  # COUNTER is the result, for the caller
counter() { COUNTER=; read -r COUNTER < "/sys/kernel/debug/lite/$1"; }

# expect_err ERRNO_NAME MESSAGE_PART LITENL_ARGS...: litenl exits 1 and
# prints the errno and the kernel's message. $AS: a command prefix.
expect_err() {
	local errno=$1 part=$2 out rc=0
	shift 2
	out=$(${AS-} "$LITENL" "$@" 2>&1) || rc=$?
	echo "        $out"
	((rc == 1)) && [[ $out == *"($errno)"* && $out == *"$part"* ]]
}
# as_nobody COMMAND...: its litenl runs as nobody, without capabilities.
as_nobody() {
	local AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	"$@"
}
litenl_ok() { "$LITENL" "$@" > /dev/null; }
# as_user COMMAND...: as uid/gid 1000, without capabilities.
as_user() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
# peers_json: PEERS is this node's `litenl peers -o json`.
peers_json() { PEERS=$("$LITENL" peers -o json); }
peer_field() {  # peer_field NODE_ID FIELD: REPLY from $PEERS
	REPLY=
	[[ $PEERS =~ \{\"node_id\":\ $1,\ [^}]*\} ]] || return 0
	local obj=${BASH_REMATCH[0]}
	[[ $obj =~ \"$2\":\ \"?([^,\"}]*) ]] && REPLY=${BASH_REMATCH[1]}
}
# insmod_refused KO PARAM...: lite.ko does not load with these parameters.
insmod_refused() { ! insmod "$@" 2> /dev/null; }

rmmod_lite() {  # rmmod_lite [CIRCUMSTANCES]: "rmmod lite CIRCUMSTANCES is clean"
	check "rmmod lite${1:+ $1} is clean" rmmod lite
	check "lite.ko, /dev/lite and debugfs entries are gone" \
		test ! -e /sys/module/lite -a ! -e /dev/lite -a ! -e /sys/kernel/debug/lite
}

# qp_census: this node's QPs, from one `rdma resource show qp`:
#   RC_QPS      RC QPs in RTS; RC_QPNS: their numbers (" 17 18 ...")
#   USER_QPS    QPs of any type that belong to a process (the line has a pid)
#   LOOPBACK    both ends of the node's connections to itself (debugfs
#               loopback_qps; 0 without lite.ko)
#   REG_QPS     key_mode=lmr's registration QP (connected to itself): 0 or 1
qp_census() {
	local out line cm_qpns=" "
	RC_QPS=0 RC_QPNS="" USER_QPS=0 LOOPBACK=0 REG_QPS=0
	# QPs on an rdma_cm id connect to a peer, even when the peer's QP has
	# the same number (QP numbers count up alike on every node).
	out=$(rdma resource show cm_id) || return 1
	while IFS= read -r line; do
		[[ $line =~ \ lqpn\ ([0-9]+) ]] && cm_qpns+="${BASH_REMATCH[1]} "
	done <<< "$out"
	out=$(rdma resource show qp) || return 1
	while IFS= read -r line; do
		if [[ $line == *" type RC state RTS "* ]]; then
			RC_QPS=$((RC_QPS + 1))
			[[ $line =~ \ lqpn\ ([0-9]+) ]] && RC_QPNS+=" ${BASH_REMATCH[1]}"
			# key_mode=lmr: the device's registration QP, a kernel QP
			# lite.ko connects to itself without rdma_cm (docs/datapath.md,
			# "Key modes").
			[[ $line != *" pid "* && $line =~ \ lqpn\ ([0-9]+)\ rqpn\ ([0-9]+)\  &&
				${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" &&
				$cm_qpns != *" ${BASH_REMATCH[1]} "* ]] && REG_QPS=$((REG_QPS + 1))
		fi
		[[ $line == *" pid "* ]] && USER_QPS=$((USER_QPS + 1))
	done <<< "$out"
	# shellcheck disable=SC2034  # LOOPBACK, REG_QPS are results, for the caller
	[[ -r /sys/kernel/debug/lite/loopback_qps ]] &&
		read -r LOOPBACK < /sys/kernel/debug/lite/loopback_qps
	return 0
}

# --- the three places a suite runs ---------------------------------------------------

# vm_main "$@": a suite's last line. Returns (not exits: shellcheck would
# take every function of the suite for unreachable) the suite's status.
vm_main() {
	case ${1-} in
	--guest)
		shift
		vm_guest_side "$@"
		;;
	--inside)
		VM_SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
		VM_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
		host_main
		echo "$VM_SUITE: $SECONDS s in the cluster"
		vm_summary
		;;
	*) vm_boot "$@" ;;
	esac
}

# vm_guest_side FUNCTION ARGS...: runs one guest function; exits (through
# vm_main) with its failures. A function that returns non-zero without a
# FAIL line of its own (a helper or a program it ended on failed, a count it
# kept itself) is one failure, named; one that printed its FAILs is not
# counted again.
vm_guest_side() {
	local rc=0 before
	set +e  # failures are counted by check, not fatal
	VM_TAG=g$GUEST
	[[ -d /sys/kernel/debug/lite ]] || mount -t debugfs none /sys/kernel/debug 2> /dev/null || true
	if declare -F "${1-}" > /dev/null; then
		before=$VM_FAILURES
		"$@" || rc=$?
		((rc == 0 || VM_FAILURES > before)) ||
			vm_fail "guest function $1 returned status $rc (no FAIL line of its own)"
	else
		vm_fail "$VM_SUITE has no guest function '${1-}'"
	fi
	return $((VM_FAILURES > 100 ? 100 : VM_FAILURES))
}

# vm_boot LITEVM_RUN_OPTIONS...: build (unless LITE_BIN is set), boot the
# cluster, run this script --inside it; returns 0 or 1.
vm_boot() {
	local repo pid rc=0
	VM_SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	cd "$repo" || return 1
	if [[ -n ${LITE_BIN-} ]]; then
		echo "$VM_SUITE: testing the binaries in LITE_BIN=$LITE_BIN (no build)"
	else
		if ! bazel build "${VM_TARGETS[@]}" > /dev/null 2>&1; then
			bazel build "${VM_TARGETS[@]}" || { echo "$VM_SUITE: build failed"; return 1; }
		fi
		# The real output directory, not the bazel-bin symlink another
		# build may repoint.
		LITE_BIN=$(bazel info bazel-bin 2> /dev/null)
	fi
	export LITE_BIN
	# Not exec: litevm's own statuses (124 timeout, 130 interrupted) become
	# 1 here. A signal to this script is passed on as SIGTERM (litevm then
	# tears down); a background job of a script ignores SIGINT.
	tools/vm/litevm run -n "$VM_GUESTS" --module "$LITE_BIN/kmod/lite.ko" \
		--timeout "$VM_TIMEOUT" --append "$VM_APPEND" "$@" -- "$VM_SELF" --inside &
	pid=$!
	trap 'kill -TERM "$pid" 2> /dev/null' INT TERM HUP
	# wait returns early (> 128) when a trap ran: wait again for the status.
	while :; do
		rc=0
		wait "$pid" || rc=$?
		kill -0 "$pid" 2> /dev/null || break
	done
	trap - INT TERM HUP
	((rc == 0)) || { echo "$VM_SUITE: FAILED (litevm run exited with status $rc)"; return 1; }
}
