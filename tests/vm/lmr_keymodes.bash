#!/bin/bash
# tests/vm/lmr_keymodes.bash: lmr.sh's key-mode section, sourced by it in
# all three places it runs (host, inside the cluster, guests); not a suite
# of its own (tests/run.sh runs tests/vm/*.sh). Uses lmr.sh's helpers and
# variables (ME, PROBE, LITENL, LITE_NUMS, check, counter_is, not_listed,
# has, listens, link_within, insmod_refused, rmmod_lite, guest, guests).
# shellcheck disable=SC2154  # ME, PROBE, LITE_NUMS come from lmr.sh

# --- key modes (docs/datapath.md, "Key modes") ---------------------------------
KM_PY=$(dirname "${BASH_SOURCE[0]}")/keymode.py
km_py() { LITE_NUMS=$LITE_NUMS python3 "$KM_PY" "$@"; }
peer_up() { peers_json && peer_field "$1" state && [[ $REPLY == connected ]]; }
stale_refused() { [[ $1 == *"stale read: "* && $1 != *"stale read: OK"* ]]; }
bad_flag_refused() {
	local out
	out=$(km_py free-bad-flag "$1")
	echo "        $out"
	[[ $out != "errno 0 "* ]]
}
km_bad_param() {
	[[ -e /sys/module/lite ]] && rmmod lite
	check "insmod key_mode=bogus is refused" insmod_refused "$LITE_BIN/kmod/lite.ko" key_mode=bogus
	check "... with a message naming the modes" has_text "$(dmesg | tail -n 20)" "key_mode=bogus: not a key mode (global or lmr)"
}
# km_reload MODE INCARNATION: lite.ko afresh with key_mode=MODE and
# peer_auth=0 (no agent gives pair secrets), node set, the other of guests
# 1 and 2 added and connected.
km_reload() {
	local other=$((3 - GUEST)) have='' i want=1
	[[ $1 == lmr ]] && want=2
	for ((i = 0; i < 50; i++)); do
		[[ -e /sys/module/lite ]] || break
		rmmod lite 2> /dev/null || nap 0.2
	done
	check "insmod key_mode=$1 peer_auth=0" insmod "$LITE_BIN/kmod/lite.ko" "key_mode=$1" peer_auth=0
	[[ -r /sys/module/lite/parameters/key_mode ]] && read -r have < /sys/module/lite/parameters/key_mode
	check "parameters/key_mode reads $1" test "$have" = "$1"
	check "NODE_GET's LITE_ATTR_KEY_MODE is $want" test "$(km_py node-key-mode)" = "$want"
	check "debugfs key_mode reads $1" test "$(< /sys/kernel/debug/lite/key_mode)" = "$1"
	check "node set" litenl_ok node set --id "$GUEST" --incarnation "$2" --addr "$ME"
	check "peer add $other" litenl_ok peer add --id "$other" --incarnation "$2" --addr "10.211.0.$((10 + other))"
	check "peer $other connected" vm_wait_until 30 peer_up "$other"
}
# km_one ID SIZE: LMR_ALLOC by litenl; KM_KEY, KM_ADDR, KM_LEN (first
# chunk), KM_CHUNKS, read as root with keymode.py (litenl prints no keys or
# chunk addresses).
km_one() {
	local out keys
	out=$("$LITENL" lmr alloc --id "$1" --name "km.$1" --size "$2") || return 1
	keys=$(km_py lmr-keys) || { echo "        $keys"; return 1; }
	[[ $out =~ \ ([0-9]+)\ chunk\(s\) && $keys =~ lmr\ $1\ km\.$1\ key=(0x[0-9a-f]+)\ chunks=([0-9]+) ]] ||
		{ echo "        $out"; return 1; }
	KM_KEY=${BASH_REMATCH[1]} KM_CHUNKS=${BASH_REMATCH[2]}
	[[ $keys =~ chunk\ $1\ (0x[0-9a-f]+)\ ([0-9]+) ]] || { echo "        $keys"; return 1; }
	KM_ADDR=${BASH_REMATCH[1]} KM_LEN=${BASH_REMATCH[2]}
	# The read-only region's key (key_mode=lmr); global mode has one key.
	KM_RKEY=$KM_KEY
	[[ $keys =~ readkey\ $1\ (0x[0-9a-f]+) ]] && KM_RKEY=${BASH_REMATCH[1]}
	return 0
}
# km_counts NAME...: KM[NAME] is debugfs counter NAME.
declare -A KM=()
km_counts() { local c; for c in "$@"; do counter "$c"; KM[$c]=$COUNTER; done; }
# The reader's key is the one a read grant carries: the read-only region's
# in lmr mode, so the stale READ checks that key's invalidation.
km_alloc() {  # km_alloc MODE (guest 1): lmr 60 (64 KiB); prints KM key=.. addr=.. len=..
	km_counts mr_registrations mr_invalidations
	check "lmr alloc 60, 64 KiB" km_one 60 64K
	echo "KM key=$KM_RKEY addr=$KM_ADDR len=$KM_LEN"
	[[ $1 == lmr ]] || return 0
	check "lmr mode: one chunk, the region's 65536 bytes ($KM_CHUNKS)" test "$KM_CHUNKS/$KM_LEN" = 1/65536
	check "... a read-only key besides the read-write one ($KM_RKEY, $KM_KEY)" \
		test "$KM_RKEY" != "$KM_KEY"
	check "... debugfs mr_registrations + 2 (read-write and read-only regions)" \
		counter_is mr_registrations $((KM[mr_registrations] + 2))
	# Chunks of two orders (4 MiB + a smaller tail) and 16 chunks: one region.
	check "lmr alloc 61, 4 MiB + 4 KiB: one chunk of 4198400 bytes" km_one 61 4198400
	check "... one chunk ($KM_CHUNKS, $KM_LEN bytes)" test "$KM_CHUNKS/$KM_LEN" = 1/4198400
	check "lmr alloc 62, 64 MiB: one chunk" km_one 62 64M
	check "... one chunk ($KM_CHUNKS, $KM_LEN bytes)" test "$KM_CHUNKS/$KM_LEN" = 1/67108864
	check "lmr free 61 and 62" litenl_ok lmr free --id 61
	litenl_ok lmr free --id 62
	check "... debugfs mr_invalidations + 4 (two regions each)" \
		counter_is mr_invalidations $((KM[mr_invalidations] + 4))
}
km_free() {  # km_free MODE (guest 1)
	km_counts mr_invalidations
	check "lmr free 60" litenl_ok lmr free --id 60
	[[ $1 == lmr ]] || return 0
	check "... its two regions invalidated first (mr_invalidations + 2)" \
		counter_is mr_invalidations $((KM[mr_invalidations] + 2))
}
# km_reader MODE INCARNATION KEY ADDR LEN (guest 2, spawned): a grant into
# guest 1's lmr 60 READs, then (once km.go exists) READs again after the
# home freed the LMR. No agent revokes this grant: only the NIC can refuse.
# The files are per mode: a file left by the other mode's round must not
# tell the host this round's reader is ready.
km_reader() {
	local out
	out=$(km_py reader "$PROBE" 1 "$2" 60 km.60 "$3" "$4" "$5" "/tmp/km.$1.ready" "/tmp/km.$1.go")
	indent <<< "$out"
	check "the grant READs before the free" has_text "$out" "first read: OK"
	if [[ $1 == lmr ]]; then
		check "lmr mode: a READ with the freed LMR's read key fails (the NIC refuses it)" \
			stale_refused "$out"
	else
		# What lmr mode exists for: the global key still reaches the pages.
		check "global mode: the same READ still reaches the freed pages" has_text "$out" "stale read: OK"
	fi
}
km_quarantine() {  # (guest 1, lmr mode)
	km_counts mr_invalidations lmr_bytes lmrs_quarantined quarantined_bytes
	check "lmr alloc 63, 1 MiB" km_one 63 1M
	check "LMR_FREE 63 with LITE_ATTR_QUARANTINE" test "$(km_py quarantine 63)" = "errno 0 "
	check "... not listed any more" not_listed 63
	check "... lmrs_quarantined + 1" counter_is lmrs_quarantined $((KM[lmrs_quarantined] + 1))
	check "... quarantined_bytes + 1 MiB" counter_is quarantined_bytes $((KM[quarantined_bytes] + 1048576))
	check "... still counted in lmr_bytes" counter_is lmr_bytes $((KM[lmr_bytes] + 1048576))
	check "... its two regions invalidated" counter_is mr_invalidations $((KM[mr_invalidations] + 2))
	check "... a warning names it" has_text "$(dmesg | tail -n 20)" "LMR 63 (km.63) quarantined"
	check "lmr alloc 64" km_one 64 4K
	check "LMR_FREE with a QUARANTINE flag carrying bytes is refused" bad_flag_refused 64
	check "... and lmr 64 is still hosted" has "km.64" lmr list
}
km_lost() {  # (guest 1, lmr mode): rxe0 removed under hosted lmr 64
	local out
	out=$(km_py lost 64 timeout -k 1 20 rdma link delete rxe0)
	indent <<< "$out"
	check "rxe0 removed: EVENT_LMR_LOST for lmr 64, reason ENODEV (19)" has_text "$out" "lost lmr=64 reason=19"
	check "... lmr 64 stays hosted, listed as unreachable" has "unreachable (device removed)" lmr list --chunks
	check "... with chunk address 0 (LMR_GET)" has_text "$(km_py lmr-keys)" "chunk 64 0x0 "
	check "... and LMR_FREE frees it" litenl_ok lmr free --id 64
	link_within add rxe0 type rxe netdev eth0
	check "rxe0 back: LMR_ALLOC finds the device within 20 s" vm_wait_until 20 listens
	check "lmr free 30" litenl_ok lmr free --id 30
}
# km_cost_prep MODE INCARNATION: lite.ko with key_mode=MODE; LMR_ALLOC +
# LMR_FREE timed over raw netlink (node set, no agent), then lite.ko loaded
# afresh for litecluster's agent. Prints RESULT lines (key_mode_cost).
km_cost_prep() {
	local out i j size
	for i in 1 2; do
		for ((j = 0; j < 50; j++)); do
			[[ -e /sys/module/lite ]] || break
			rmmod lite 2> /dev/null || nap 0.2
		done
		check "insmod key_mode=$1" insmod "$LITE_BIN/kmod/lite.ko" "key_mode=$1"
		((i == 2)) && break
		check "node set" litenl_ok node set --id "$GUEST" --incarnation "$2" --addr "$ME"
		vm_wait_until 20 listens && litenl_ok lmr free --id 30
		for size in 65536 4194304; do
			if out=$(km_py timing "$size" 30); then
				echo "RESULT size=$size $out"
			else
				vm_fail "LMR_ALLOC + LMR_FREE of $size bytes: $out"
			fi
		done
	done
}

km_unload() {  # (guest 1): the quarantined LMR is freed at unload
	rmmod_lite "with a quarantined LMR"
	check "... which frees it" has_text "$(dmesg | tail -n 30)" "freeing quarantined LMR 63 (km.63)"
}

# key_modes: guest 2 holds a grant into guest 1's LMR that no agent revokes,
# READs, guest 1 frees the LMR, guest 2 READs again: key_mode=global serves
# the freed pages, key_mode=lmr refuses (the region was invalidated). Then,
# in lmr mode, quarantine, device removal (EVENT_LMR_LOST) and unload.
key_modes() {
	local mode inc=20 job
	echo "key modes (guests 1 and 2): a READ with a freed LMR's key, quarantine, device removal:"
	guest 1 km_bad_param
	for mode in global lmr; do
		inc=$((inc + 1))
		guests "1 km_reload $mode $inc" "2 km_reload $mode $inc"
		OUT=$(litevm exec -g 1 -t "$VM_GUEST_SECS" -- "$(vm_guest_cmd 1 km_alloc "$mode")") ||
			vm_count "guest 1: km_alloc $mode" $?
		grep -v '^KM ' <<< "$OUT" || true
		if ! [[ $OUT =~ KM\ key=(0x[0-9a-f]+)\ addr=(0x[0-9a-f]+)\ len=([0-9]+) ]]; then
			vm_fail "key_mode=$mode: no LMR to read"
			continue
		fi
		job=$(vm_spawn 2 km_reader "$mode" "$inc" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
		check "key_mode=$mode: guest 2 READs through its grant" \
			vm_wait_until 60 litevm exec -g 2 -t 20 -- "test -e /tmp/km.$mode.ready"
		guest 1 km_free "$mode"
		litevm exec -g 2 -t 20 -- "touch /tmp/km.$mode.go" || true
		vm_join 2 "$job" "km_reader $mode"
	done
	guest 1 km_quarantine
	guest 1 km_lost
	guest 1 km_unload
}

# key_mode_cost: what key_mode=lmr costs against key_mode=global, in one
# cluster run, KM_ROUNDS (default 3) rounds, the mode order alternating.
# A trial: guest 2 (the home) times 30 LMR_ALLOC + LMR_FREE pairs of 64 KiB
# and of 4 MiB over raw netlink (km_cost_prep), then litemgr and the agents
# start and lite-bench on guest 1 times READ and WRITE of 8 B, 4 KiB and
# 64 KiB (p50 of KM_ITERS, default 300) into a 64 KiB LMR homed on guest 2.
# Prints every trial, then per mode the median and min-max over rounds.
# Not part of the suite: LMR_ONLY=key_mode_cost tests/vm/lmr.sh.
key_mode_cost() {
	local r m t=0 order inc json res rc results
	results=$(mktemp)
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	for ((r = 1; r <= ${KM_ROUNDS:-3}; r++)); do
		order=(global lmr)
		((r % 2)) || order=(lmr global)
		for m in "${order[@]}"; do
			t=$((t + 1)) inc=$((100 + t))
			echo "== round $r, key_mode=$m"
			guest 1 km_cost_prep "$m" "$inc"
			res=$(litevm exec -g 2 -t "$VM_GUEST_SECS" -- "$(vm_guest_cmd 2 km_cost_prep "$m" "$inc")") ||
				vm_count "guest 2: km_cost_prep" $?
			grep -v '^RESULT' <<< "$res" || true
			sed -n "s/^RESULT /round=$r mode=$m /p" <<< "$res" | tee -a "$results"
			lc_start 10000 || { vm_fail "litemgr + agents (key_mode=$m)"; lc_stop; continue; }
			rc=0
			json=$(litevm exec -g 1 -t 600 -- "$LITE_BIN/tools/bench/lite-bench --create km-bench-$t" \
				"--home $(lc_node_name 2) --size 64K --ops read,write --sizes 8,4K,64K" \
				"--iters ${KM_ITERS:-300} -o json") || rc=$?
			lc_stop
			if ((rc)); then
				vm_fail "lite-bench, key_mode=$m (status $rc): $json"
				continue
			fi
			jq -r --arg h "round=$r mode=$m" \
				'$h + " " + ([.latency[] | "\(.op)\(.size)=\(.p50_us)"] | join(" "))' <<< "$json" |
				tee -a "$results"
		done
	done
	km_py summarize "$results"
	rm -f "$results"
}
