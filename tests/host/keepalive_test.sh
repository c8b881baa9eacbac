#!/bin/bash
# A half-open connection is noticed in seconds (common/grpc/keepalive.h):
# litemgr with --max_watchers=1 serves one `litectl watch`, which is then
# frozen (SIGSTOP: its process answers nothing, its TCP connection stays
# up). A second watch is refused (RESOURCE_EXHAUSTED) while the first holds
# the slot; once the manager's keepalive ping goes unanswered it closes the
# connection and the second watch gets the slot: within 45 s (10 s between
# pings, 20 s to answer), not when TCP would give up hours later.
# Usage: keepalive_test.sh LITEMGR LITECTL   (bazel test //tests/host:keepalive_test)
set -uo pipefail
litemgr=${1:?usage: keepalive_test.sh LITEMGR LITECTL}
litectl=${2:?usage: keepalive_test.sh LITEMGR LITECTL}
work=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -CONT "$p" 2> /dev/null; kill "$p" 2> /dev/null; done
	wait 2> /dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$litemgr" --insecure --listen=127.0.0.1:0 --port_file="$work/port" --max_watchers=1 \
	--metrics_listen=127.0.0.1:0 \
	> "$work/litemgr.log" 2>&1 &
mgr_pid=$!
pids+=("$mgr_pid")
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || fail "litemgr did not start: $(cat "$work/litemgr.log")"
manager=127.0.0.1:$(cat "$work/port")

# watch_probe: a second watch for 3 s; sets PROBE to "held" (refused for
# want of a slot), "free" (it watched until timeout stopped it) or
# "error: ..." (anything else: the manager gone, a crash, a bad flag), so
# that a dead litemgr never reads as a slot set free.
watch_probe() {
	local out rc=0
	out=$(timeout 3 "$litectl" --manager "$manager" --insecure watch 2>&1) || rc=$?
	if [[ $out == *RESOURCE_EXHAUSTED* || $out == *"watch streams"* ]]; then
		PROBE=held
	elif ((rc == 124)) && [[ $out != *rror* ]]; then
		PROBE=free
	else
		PROBE="error: exit $rc: $out"
	fi
}
watch_refused() { watch_probe; [[ $PROBE == held ]]; }

# The first watch. A probe can take the slot before it does (on a busy
# host): it is then refused and exits, and is started again.
start_first() {
	"$litectl" --manager "$manager" --insecure watch > "$work/watch1.log" 2>&1 &
	first=$!
	pids+=("$first")
}
start_first
held=0
for _ in $(seq 30); do
	if ! kill -0 "$first" 2> /dev/null; then
		start_first
		sleep 1
		continue
	fi
	if watch_refused && kill -0 "$first" 2> /dev/null; then
		held=1
		break
	fi
	sleep 0.5
done
((held)) || fail "a second watch was not refused while the first held the only slot: $(cat "$work/watch1.log")"
echo "ok: the first watch holds the only slot"

kill -STOP "$first"
start=$SECONDS
while watch_probe; [[ $PROBE == held ]]; do
	((SECONDS - start < 60)) || fail "the frozen watch still held its slot after 60 s"
	sleep 1
done
[[ $PROBE == free ]] || fail "a watch after the freeze did not get the slot ($PROBE); litemgr: $(tail -n 5 "$work/litemgr.log")"
kill -0 "$mgr_pid" 2> /dev/null || fail "litemgr is gone: $(tail -n 5 "$work/litemgr.log")"
echo "ok: the frozen watch's connection was closed $((SECONDS - start)) s after it froze; a new watch got the slot"
