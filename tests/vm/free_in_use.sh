#!/bin/bash
# VM free-while-in-use test (issue 9, item 6): an LMR is freed while three
# nodes write into it, and its home reuses the memory at once.
# litemgr on the host, a liteagent with lite.ko in three guests; once with
# lite.ko's key_mode=global, once with key_mode=lmr (lite.ko reloaded):
#  - guests 1, 2 and 3 WRITE 8 B / 4 KiB / 64 KiB / 1 MiB blocks without
#    pause into a 4 MiB LMR homed on guest 3 (tests/vm/free_hammer write;
#    guest 3's writer unmaps at its first error, so that its handle does not
#    keep the pages on the home);
#  - its owner on guest 3 frees it under that traffic and, as soon as the
#    fenced free gave the memory back (lite.ko's "lmrs" gauge; the holders'
#    acknowledgements can take seconds on a loaded machine, and new LMRs
#    allocated before that cannot reuse it: CI with a CPU hog, #36),
#    allocates eight new 4 MiB LMRs on guest 3, fills each with its own pattern, waits
#    while the writers go on failing, and reads every one back
#    (free_hammer churn): no byte of a new LMR may differ from its pattern;
#  - every writer's handle ends in ESTALE (revoked) or EHOSTDOWN, never
#    another error, no write hangs;
#  - the free was fenced, not quarantined, and the new LMRs really reused
#    the freed LMR's memory (chunk addresses), which is what makes the
#    check of their contents mean something;
#  - litevm's teardown checks every guest's kernel log.
# Usage: tests/vm/free_in_use.sh [--state DIR]  (needs root and tools/setup.sh)
# FIU_KEY_MODES="global" (say) runs fewer modes, when working on one.
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=free_in_use
VM_GUESTS=3
VM_TIMEOUT=600
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:free_hammer)
VM_GUEST_SECS=120

LMR_SIZE=$((4 << 20))
NEW_LMRS=8
WRITE_SECS=60        # the writers' limit; they stop AFTER_ERROR_MS after their first error
AFTER_ERROR_MS=3000
SETTLE_MS=4000       # the owner reads its new LMRs back this long after filling them
WRITE_BOUND_MS=15000 # no write may take longer (the drain bound is max(op_timeout, peer_timeout + 1 s))

# ---------------------------------------------------------------------------
# Guest side (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/cmd/liteop/liteop
LITENL=${LITE_BIN-}/cmd/litenl/litenl
HAMMER=${LITE_BIN-}/tests/vm/free_hammer

reload_lite() {  # MODE: lite.ko again, with key_mode=MODE
	check "rmmod lite" rmmod lite
	check "insmod lite.ko key_mode=$1" insmod "$LITE_BIN/kmod/lite.ko" "key_mode=$1"
}

key_mode_is() {  # MODE
	local got=
	read -r got < /sys/module/lite/parameters/key_mode || true
	check "lite.ko's key_mode is $1 (got '$got')" test "$got" = "$1"
}

alloc_victim() {  # NAME
	check "alloc $1 (4 MiB, mode 0666) on node3" \
		"$LITEOP" alloc "$1" "$LMR_SIZE" --home node3 --mode 0666
}

# chunks NAME FILE: the chunk addresses of hosted LMRs whose name starts with
# NAME, one per line, into FILE (keymode.py, as root: litenl prints none).
chunks() {
	python3 "$(dirname "${BASH_SOURCE[0]}")/keymode.py" lmr-keys | awk -v p="$1" '
		$1 == "lmr" { on[$2] = index($3, p) == 1 }
		$1 == "chunk" && on[$2] { print $3 }' > "$2"
	check "chunk addresses of $1* listed ($(wc -l < "$2"))" test -s "$2"
}

wait_file() {  # SECS FILE
	local deadline
	now_ms
	deadline=$((NOW_MS + $1 * 1000))
	until [[ -e $2 ]]; do
		now_ms
		((NOW_MS < deadline)) || { vm_fail "$2 not created within $1 s"; return; }
		nap 0.2
	done
	vm_ok "writer running ($2)"
}

released_in_time() { [[ $1 =~ released_ms=[0-9] ]]; }

# churn VICTIM PREFIX: frees VICTIM under the writers, then reuses the memory.
churn() {
	local out
	out=$("$HAMMER" churn "$1" "$2" "$NEW_LMRS" "$LMR_SIZE" "$SETTLE_MS" 2>&1) || true
	echo "   owner: $out"
	check "the owner freed $1 (freed=0)" has_text "$out" "freed=0 "
	check "... and lite.ko gave its memory back within 30 s" released_in_time "$out"
	check "... and allocated and filled $NEW_LMRS new LMRs on the same home" \
		has_text "$out" "allocated=$NEW_LMRS "
	check "no byte of a new LMR changed after its owner wrote it (verified=$NEW_LMRS corrupted=0)" \
		has_text "$out" "verified=$NEW_LMRS corrupted=0 "
}

# reused VICTIM_FILE NEW_FILE: some of the victim's chunks went to a new LMR.
reused() {
	local n
	n=$(grep -cxFf "$1" "$2" || true)
	check "the new LMRs reuse freed memory: $n of the freed LMR's $(wc -l < "$1") chunk(s)" \
		test "$n" -gt 0
}

counter_is() {  # NAME VALUE
	counter "$1"
	check "debugfs $1 is $2 (got '${COUNTER}')" test "$COUNTER" = "$2"
}

# ---------------------------------------------------------------------------
# Host side (in the cluster's network namespace).
# ---------------------------------------------------------------------------

field() {  # LINE KEY: the value of KEY=... in a free_hammer line
	local re="(^| )$2=([^ ]*)"
	[[ $1 =~ $re ]] && echo "${BASH_REMATCH[2]}"
}
ms_le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }

judge_writer() {  # GUEST LINE
	local g=$1 line=$2 kind
	echo "   writer on guest $g: $line"
	if [[ $line != ops=* ]]; then
		vm_fail "guest $g: free_hammer printed no result"
		return
	fi
	check "guest $g: writes went through before the free ($(field "$line" ok) ok)" \
		test "$(field "$line" ok)" -gt 0
	check "guest $g: writes failed after it ($(field "$line" failed) failed)" \
		test "$(field "$line" failed)" -gt 0
	check "guest $g: the handle ends failing (last=$(field "$line" last))" \
		test "$(field "$line" last)" != ok
	for kind in $(field "$line" errors | tr , ' '); do
		[[ $kind == - ]] && continue
		case ${kind%%:*} in
		ESTALE | EHOSTDOWN) vm_ok "guest $g: failure ${kind%%:*} (${kind#*:}x) is ESTALE or EHOSTDOWN" ;;
		*) vm_fail "guest $g: failure ${kind%%:*} (${kind#*:}x) is not ESTALE or EHOSTDOWN" ;;
		esac
	done
	check "guest $g: no write took longer than $WRITE_BOUND_MS ms (max $(field "$line" max_ms) ms)" \
		ms_le "$(field "$line" max_ms)" "$WRITE_BOUND_MS"
}

# fence_logged NAME: litemgr revoked NAME's three grants (one per writer)
# and waited for their acknowledgements, then the home freed the memory.
fence_logged() {
	local log=$LITE_VM_STATE/litemgr.log releasing id freed
	releasing=$(grep -m 1 "'$1' is releasing" "$log" || true)
	echo "$releasing" | indent
	check "$1 went RELEASING with 3 revoked grants to be acknowledged" \
		has_text "$releasing" "is releasing: 3 revoked grants"
	id=$(grep -o "LMR 0x[0-9a-f]*" <<< "$releasing" || true)
	freed=
	vm_wait_until 20 grep -q "freed the memory of $id\$" "$log" &&
		freed=$(grep -m 1 "freed the memory of $id\$" "$log")
	echo "$freed" | indent
	check "... and its home freed the memory afterwards (not quarantined)" \
		test -n "$id" -a -n "$freed"
}

one_mode() {  # MODE
	local mode=$1 victim=fiu.$1.victim g out unmap
	local -A jobs=()
	echo "== key_mode=$mode: cluster up"
	# shellcheck disable=SC2119
	lc_start
	guests "1 key_mode_is $mode" "2 key_mode_is $mode" "3 key_mode_is $mode"
	guest 1 alloc_victim "$victim"
	guest 3 chunks "$victim" /tmp/fiu.victim.chunks

	echo "== writers on guests 1, 2 and 3 into $victim (home node3)"
	for g in 1 2 3; do
		unmap=()
		((g == 3)) && unmap=(--unmap)
		jobs[$g]=$(litevm spawn -g "$g" -t 120 -- \
			"$(printf '%q ' "$LITE_BIN/tests/vm/free_hammer" write "$victim" "$WRITE_SECS" \
				"$AFTER_ERROR_MS" "/tmp/fiu.ready.$mode" "${unmap[@]}")")
	done
	guests "1 wait_file 60 /tmp/fiu.ready.$mode" "2 wait_file 60 /tmp/fiu.ready.$mode" \
		"3 wait_file 60 /tmp/fiu.ready.$mode"
	sleep 1

	echo "== guest 3: the owner frees $victim under them and reuses the memory"
	guest 3 churn "$victim" "fiu.$mode.new"

	echo "== the writers"
	for g in 1 2 3; do
		out=$(litevm wait -g "$g" -t 90 "${jobs[$g]}" 2>&1) || true
		judge_writer "$g" "$(grep '^ops=' <<< "$out" || echo "$out")"
	done

	echo "== the manager: the home freed the pages only after the holders' acknowledgements"
	fence_logged "$victim"
	echo "== the home: the old memory was given back, not quarantined"
	guest 3 chunks "fiu.$mode.new" /tmp/fiu.new.chunks
	guest 3 reused /tmp/fiu.victim.chunks /tmp/fiu.new.chunks
	guest 3 counter_is lmrs_quarantined 0
	lc_stop
}

host_main() {
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	local mode current=lmr  # lite.ko's default key_mode
	for mode in ${FIU_KEY_MODES:-global lmr}; do
		if [[ $mode != "$current" ]]; then
			guests "1 reload_lite $mode" "2 reload_lite $mode" "3 reload_lite $mode"
			current=$mode
		fi
		one_mode "$mode"
	done
}

vm_main "$@"
