#!/bin/bash
# VM trust test (issue #10): what lite.ko keeps from a local user and from a
# compromised manager, on two guests with the default key_mode (lmr).
#  - an unprivileged user (uid 65534) is refused every key-reading netlink
#    command with EPERM (litenl lmr list, grant list, a raw LMR_GET dump)
#    while root reads them; litenl's output carries no key or address;
#  - supplementary groups: the MAP upcall carries the caller's groups
#    (LITE_ATTR_GROUPS, and LITE_ATTR_GROUPS_TRUNCATED past 256); through
#    the manager, an LMR of mode 0060 owned by gid 3001 is mapped by another
#    uid whose supplementary groups include 3001 and refused to the same
#    process without it; a caller with more than 256 groups, none of them
#    3001, is refused an LMR whose "other" class would allow it;
#  - a forged grant (the manager is stopped and this suite answers the MAP
#    upcall itself, as a compromised manager could): the key of LMR A with
#    the chunk addresses of LMR B on the same home, or with a range just past
#    A, fails READ and WRITE (the home's NIC refuses: grants_key_refused),
#    and B's memory is unchanged; the same key with A's own chunk works; a
#    chunk that wraps around the address space, and chunks that are not
#    whole pages (33 of 64 bytes), are refused by the holder;
#  - a read-only key used for writing (review cp-2026-11-28 L13): LMR C is
#    mode 0444; root on the holder takes the key a read grant carries (C's
#    read-only key, LITE_ATTR_READ_KEY; an older lite.ko has one key for
#    both) and answers its own MAP with a read-write grant: READ works,
#    WRITE is refused by the home's NIC, and C's bytes stay zero.
# Usage: tests/vm/trust_kernel.sh [--state DIR]  (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=trust_kernel
VM_GUESTS=2
VM_TIMEOUT=600
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:grant_probe)
VM_GUEST_SECS=120

LITEOP=${LITE_BIN-}/cmd/liteop/liteop
GRANT_PROBE=${LITE_BIN-}/tests/vm/grant_probe
KM_PY=$(dirname "${BASH_SOURCE[0]}")/keymode.py
km_py() { python3 "$KM_PY" "$@"; }

# The users of the checks: the LMRs' owner, and another user who is or is
# not in the owner's group 3001 (by a supplementary group only).
OWNER=(setpriv --reuid=2001 --regid=3001 --clear-groups)
MEMBER=(setpriv --reuid=2002 --regid=2002 --groups=3001)
STRANGER=(setpriv --reuid=2002 --regid=2002 --clear-groups)
# groups_list FIRST COUNT: "FIRST,FIRST+1,..." (COUNT groups).
groups_list() {
	local i out=$1
	for ((i = 1; i < $2; i++)); do out+=,$(($1 + i)); done
	echo "$out"
}

# no_key_in COMMAND...: succeeds, and its output has no key or address.
no_key_in() {
	local out
	out=$("$@" 2>&1) || { echo "        $out"; return 1; }
	echo "        $out" | head -n 3
	[[ $out != *memory_key* && $out != *"memory key"* && $out != *KEY* &&
		$out != *'"addr"'* && $out != *0x* ]]
}
# nobody_dump_refused: keymode.py's raw LMR_GET dump as uid 65534: EPERM.
# nobody runs a copy (with the uapi header it reads) in a folder it can
# read: the checkout may be in one only root can enter (a clone in /root,
# or in mktemp -d's 0700 folder), and a script nobody cannot open fails
# with EACCES, not with the EPERM this checks.
nobody_dump_refused() {
	local out dir
	if ! dir=$(mktemp -d /tmp/tk-nobody.XXXXXX) ||
		! mkdir -p "$dir/tests/vm" "$dir/kmod/include/uapi" ||
		! cp "$KM_PY" "$dir/tests/vm/keymode.py" ||
		! cp "$(dirname "$KM_PY")/../../kmod/include/uapi/lite_genl.h" "$dir/kmod/include/uapi/" ||
		! chmod -R a+rX "$dir"; then
		echo "        cannot copy keymode.py to ${dir-a folder nobody reads}"
		return 1
	fi
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups python3 "$dir/tests/vm/keymode.py" lmr-keys 2>&1)
	echo "        $out"
	rm -rf "$dir"
	[[ $out == "errno 1 "* ]]
}
peer_connected() { peers_json && peer_field "$1" state && [[ $REPLY == connected ]]; }

# --- guest side ----------------------------------------------------------------

key_mode_is_lmr() {
	local mode
	read -r mode < /sys/module/lite/parameters/key_mode
	check "lite.ko's default key_mode is lmr ($mode)" test "$mode" = lmr
}

# unprivileged: uid 65534 is refused every command that reads keys, chunk
# addresses or grants; root reads them, and litenl prints none.
unprivileged() {
	check "as nobody: litenl lmr list: EPERM" \
		as_nobody expect_err EPERM "need CAP_NET_ADMIN" lmr list
	check "as nobody: litenl lmr list -o json: EPERM" \
		as_nobody expect_err EPERM "need CAP_NET_ADMIN" -o json lmr list
	check "as nobody: litenl grant list: EPERM" \
		as_nobody expect_err EPERM "need CAP_NET_ADMIN" grant list
	check "as nobody: a raw LMR_GET dump: EPERM" nobody_dump_refused
	check "as nobody: litenl lmr alloc: EPERM" \
		as_nobody expect_err EPERM "" lmr alloc --id 77 --name tk.nobody --size 4096
	check "as nobody: node get still works" \
		out_has incarnation setpriv --reuid=65534 --regid=65534 --clear-groups "$LITENL" -o json node show
	check "root: a raw LMR_GET dump lists tk.grp with its key" \
		out_has " tk.grp key=0x" km_py lmr-keys
	check "root: litenl lmr list names tk.grp, with no key or address" \
		out_has "tk.grp" "$LITENL" lmr list --chunks
	check "... none in the table" no_key_in "$LITENL" lmr list --chunks
	check "... none in JSON" no_key_in "$LITENL" -o json lmr list
	check "... none in grant list (JSON)" no_key_in "$LITENL" -o json grant list
}

owner_allocs() {  # (guest 1, through the manager)
	check "uid 2001 gid 3001 allocates tk.grp, mode 0060" \
		"${OWNER[@]}" "$LITEOP" alloc tk.grp 4096 --mode 0060
	check "uid 2001 gid 3001 allocates tk.other, mode 0006" \
		"${OWNER[@]}" "$LITEOP" alloc tk.other 4096 --mode 0006
}

groups_map() {  # (guest 2, through the manager)
	local many
	check "uid 2002 with supplementary group 3001 reads tk.grp (mode 0060)" \
		"${MEMBER[@]}" "$LITEOP" read tk.grp 0 8 --access r
	check "... and writes it" \
		"${MEMBER[@]}" "$LITEOP" write tk.grp 0 --data member --access rw
	check "the same uid without group 3001: EACCES" \
		fails_with EACCES "${STRANGER[@]}" "$LITEOP" read tk.grp 0 8 --access r
	many=$(groups_list 4000 256)
	check "256 groups, none 3001: tk.other (mode 0006) by the other class" \
		setpriv --reuid=2002 --regid=2002 --groups="$many" "$LITEOP" read tk.other 0 8 --access r
	many=$(groups_list 4000 300)
	check "300 groups (truncated), none 3001: refused although other allows it" \
		fails_with EACCES setpriv --reuid=2002 --regid=2002 --groups="$many" \
		"$LITEOP" read tk.other 0 8 --access r
	check "300 groups including 3001 among the first 256: tk.grp allowed" \
		setpriv --reuid=2002 --regid=2002 --groups="3001,$many" "$LITEOP" read tk.grp 0 8 --access r
}

owner_frees() {  # (guest 1)
	check "the owner frees tk.grp and tk.other" "${OWNER[@]}" "$LITEOP" free tk.grp
	"${OWNER[@]}" "$LITEOP" free tk.other > /dev/null
}

# fresh_lite INCARNATION (guests 1 and 2, once the agents are gone): lite.ko
# loaded afresh with its defaults but peer_auth=0 (no agent hands out pair
# secrets), node GUEST, the other guest added and connected: a stopped agent
# leaves its peers, so the forged grants need peers of their own.
fresh_lite() {
	local other=$((3 - GUEST)) i
	for ((i = 0; i < 50; i++)); do
		[[ -e /sys/module/lite ]] || break
		rmmod lite 2> /dev/null || nap 0.2
	done
	check "insmod lite.ko peer_auth=0 (key_mode left at its default)" \
		insmod "$LITE_BIN/kmod/lite.ko" peer_auth=0
	check "node set $GUEST" litenl_ok node set --id "$GUEST" --incarnation "$1" \
		--addr "10.211.0.$((10 + GUEST))"
	check "peer add $other" litenl_ok peer add --id "$other" --incarnation "$1" \
		--addr "10.211.0.$((10 + other))"
	check "peer $other connected" vm_wait_until 30 peer_connected "$other"
}

# home_lmrs (guest 1, no agent any more): hosts LMRs A (901) and B (902)
# with litenl and prints "LMR id key addr len" for each (keymode.py, root).
home_lmrs() {
	local out
	check "lmr alloc A (901, 64 KiB)" litenl_ok lmr alloc --id 901 --name tk.a --size 64K
	check "lmr alloc B (902, 64 KiB)" litenl_ok lmr alloc --id 902 --name tk.b --size 64K
	check "lmr alloc C (903, 64 KiB, mode 0444)" litenl_ok lmr alloc --id 903 --name tk.c \
		--size 64K --mode 0444
	out=$(km_py lmr-keys)
	check "A and B have a key and one chunk each (key_mode=lmr)" \
		has_text "$out" "tk.a key=0x"
	sed -nE 's/^lmr (90[123]) tk\.[abc] key=(0x[0-9a-f]+) chunks=1$/\1 \2/p' <<< "$out" |
		while read -r id key; do
			[[ $out =~ chunk\ $id\ (0x[0-9a-f]+)\ ([0-9]+) ]] &&
				echo "LMR $id $key ${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
		done
	check "C has a read-only key besides its read-write one (LITE_ATTR_READ_KEY)" \
		has_text "$out" "readkey 903 0x"
	# What the manager puts in a read grant: the read key, else the only key.
	if [[ $out =~ readkey\ 903\ (0x[0-9a-f]+) ]]; then
		echo "READKEY 903 ${BASH_REMATCH[1]}"
	else
		sed -nE 's/^lmr 903 tk\.c key=(0x[0-9a-f]+) chunks=1$/READKEY 903 \1/p' <<< "$out"
	fi
}

# grant_case WHAT PROBE_PREFIX KEY CHUNKS OPS: one grant answered by hand
# (keymode.py grant: as the agent) into node HOME_ID's LMR; OUT its output.
grant_case() {
	local inc
	check "peer $HOME_ID connected" vm_wait_until 30 peer_connected "$HOME_ID"
	inc=$("$LITENL" -o json node show) && [[ $inc =~ \"incarnation\":\ ([0-9]+) ]] && inc=${BASH_REMATCH[1]}
	OUT=$(km_py grant "$2 $GRANT_PROBE tk.forged" "$HOME_ID" "$inc" 901 tk.forged "$3" 65536 "$4" "$5" 2>&1)
	echo "      $1:"
	indent <<< "$OUT"
}
refused() { [[ $OUT =~ $1:\ (read|write):\ E ]]; }

# forged HOME_ID AKEY AADDR BKEY BADDR (guest 2, its agent stopped): the
# grants a compromised manager could hand out, and a control.
forged() {
	local akey=$2 aaddr=$3 bkey=$4 baddr=$5 past refused0 g256 tiny i
	HOME_ID=$1
	counter grants_key_refused
	refused0=$COUNTER
	g256=$(groups_list 5000 300)
	grant_case "control: A's key and A's chunk, as uid 2002 with groups 3001,3002" \
		"setpriv --reuid=2002 --regid=2002 --groups=3001,3002" "$akey" "$aaddr:65536" "w 0;r 0"
	check "the MAP upcall carries the caller's supplementary groups" \
		has_text "$OUT" "upcall uid=2002 gid=2002 groups=3001,3002 truncated=0"
	check "... the grant installs" has_text "$OUT" "map answer: errno 0 ; probe map: OK"
	check "... and WRITE then READ through it work" has_text "$OUT" "r 0: read: OK 5a5a5a5a5a5a5a5a"
	grant_case "300 groups: the first 256 and the truncated flag" \
		"setpriv --reuid=2002 --regid=2002 --groups=$g256" "$akey" "$aaddr:65536" ""
	check "the MAP upcall carries 256 groups and LITE_ATTR_GROUPS_TRUNCATED" \
		has_text "$OUT" "groups=$(groups_list 5000 256) truncated=1"

	grant_case "forged: A's key with B's chunk, WRITE first" "" "$akey" "$baddr:65536" "w 0;r 0"
	check "the forged grant installs (the holder cannot know the home's chunks)" \
		has_text "$OUT" "map answer: errno 0 ; probe map: OK"
	check "... WRITE with A's key at B's address fails" refused "w 0"
	grant_case "forged: A's key with B's chunk, READ first" "" "$akey" "$baddr:65536" "r 0;w 8"
	check "... READ with A's key at B's address fails" refused "r 0"
	past=$(printf '0x%x' $((aaddr + 65536)))
	grant_case "forged: A's key, the 64 KiB just past A" "" "$akey" "$past:65536" "r 0;w 0"
	check "... READ past A's region fails" refused "r 0"
	counter grants_key_refused
	check "the home's NIC refused each forged grant (grants_key_refused +3: $refused0 -> $COUNTER)" \
		test "$COUNTER" -eq $((refused0 + 3))
	grant_case "B read with B's own key and chunk" "" "$bkey" "$baddr:65536" "r 0;r 8"
	check "B's memory is unchanged (zero where the forged WRITEs aimed)" \
		has_text "$OUT" "r 0: read: OK 0000000000000000"
	check "... at offset 8 too" has_text "$OUT" "r 8: read: OK 0000000000000000"
	grant_case "a chunk wrapping around the address space" "" "$akey" "0xfffffffffffff000:65536" ""
	check "the holder refuses a chunk whose address + length wraps (EINVAL)" \
		has_text "$OUT" "map answer: errno 22 LITE_ATTR_CHUNK: address + length wraps around"
	# Review 2026-11-28 M2: 33 chunks inside 16 KiB overflowed one batch
	# of work requests (a WARN, and an io_uring command completed twice).
	tiny=
	for ((i = 0; i < 33; i++)); do tiny+=$(printf '0x%x:64,' $((aaddr + 64 * i))); done
	tiny+=$(printf '0x%x:%d' $((aaddr + 2112)) $((65536 - 2112)))
	grant_case "A's key with 33 chunks of 64 bytes, then the rest" "" "$akey" "$tiny" "r 0"
	check "the holder refuses chunks no home makes (EINVAL): all but the last whole pages" \
		has_text "$OUT" "map answer: errno 22 LITE_ATTR_CHUNK: every chunk but the last must be a multiple of 4 KiB"
}

# read_key_write HOME_ID CKEY CADDR (guest 2, its agent stopped): root takes
# the key a read grant into C (mode 0444) carries and writes with it.
read_key_write() {
	local refused0
	HOME_ID=$1
	counter grants_key_refused
	refused0=$COUNTER
	grant_case "C's read-grant key in a grant root made read-write: READ, WRITE, READ" \
		"" "$2" "$3:65536" "r 0;w 0;r 8"
	check "the grant installs (only the home can tell the key is read-only)" \
		has_text "$OUT" "map answer: errno 0 ; probe map: OK"
	check "... READ with C's read key works" has_text "$OUT" "r 0: read: OK 0000000000000000"
	check "... WRITE with C's read key is refused by the home's NIC" refused "w 0"
	counter grants_key_refused
	check "... counted as a refused key (grants_key_refused $refused0 -> $COUNTER)" \
		test "$COUNTER" -eq $((refused0 + 1))
	grant_case "C read again with its read key, through a new grant" "" "$2" "$3:65536" "r 0;r 8"
	check "C's bytes are unchanged (zero where the WRITE aimed)" \
		has_text "$OUT" "r 0: read: OK 0000000000000000"
}

home_free() {  # (guest 1)
	check "lmr free A, B and C" litenl_ok lmr free --id 901
	litenl_ok lmr free --id 902
	litenl_ok lmr free --id 903
}

# --- host side -----------------------------------------------------------------

host_main() {
	local out a b c ckey caddr akey aaddr bkey baddr
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	guests "1 key_mode_is_lmr" "2 key_mode_is_lmr"
	echo "== supplementary groups, through the manager"
	lc_start 10000 || { vm_fail "litemgr + agents"; return; }
	guest 1 owner_allocs
	guest 2 groups_map
	echo "== an unprivileged user and the key-reading netlink commands"
	guest 1 unprivileged
	guest 1 owner_frees
	echo "== forged grants (manager and agents stopped; lite.ko reloaded with peers of its own)"
	lc_stop
	guests "1 fresh_lite 41" "2 fresh_lite 41"
	out=$(litevm exec -g 1 -t "$VM_GUEST_SECS" -- "$(vm_guest_cmd 1 home_lmrs)") ||
		vm_count "guest 1: home_lmrs" $?
	grep -v '^LMR \|^READKEY ' <<< "$out" || true
	a=$(grep '^LMR 901 ' <<< "$out" || true)
	b=$(grep '^LMR 902 ' <<< "$out" || true)
	if [[ -z $a || -z $b ]]; then
		vm_fail "no keys and chunks for A and B"
		return
	fi
	read -r _ _ akey aaddr _ <<< "$a"
	read -r _ _ bkey baddr _ <<< "$b"
	guest 2 forged 1 "$akey" "$aaddr" "$bkey" "$baddr"
	echo "== a read grant's key used for writing (review cp L13)"
	c=$(grep '^LMR 903 ' <<< "$out" || true)
	ckey=$(sed -n 's/^READKEY 903 //p' <<< "$out")
	if [[ -n $c && -n $ckey ]]; then
		read -r _ _ _ caddr _ <<< "$c"
		guest 2 read_key_write 1 "$ckey" "$caddr"
	else
		vm_fail "no key and chunk for C"
	fi
	guest 1 home_free
}

vm_main "$@"
