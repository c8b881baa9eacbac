#!/bin/bash
# VM RPC test (#11): three guests with litemgr on the host and a liteagent
# with the real lite.ko in each; applications use libLITE's RPC (liteop).
#  - an echo service on node2, served by 2 threads, called from node1,
#    node3 and node2 itself (loopback) at once: every reply is the request;
#  - one-way messages from node1, released by the server (credits back);
#  - every size from 0 to max_request echoed, max_request + 1 EMSGSIZE;
#  - load: 3 nodes x 4 threads x 2,000 calls, each with a payload unique to
#    its node, thread and call, every reply matched to its call, into a
#    service served by 4 threads, which counts exactly 24,000;
#  - litectl services lists it on node2, litenl services in lite.ko;
#  - the x bit: a user the mode denies gets EACCES at open; an unknown name
#    ENOENT; an oversize request EMSGSIZE before anything is sent;
#  - the kernel API: lite_kecho.ko serves from a kernel thread on node2,
#    called by liteop from node1 and by lite_kecho.ko on node1 (kernel to
#    kernel); lite_kecho.ko on node3 calls the user-space echo service;
#    rmmod unregisters the kernel service; lite_kmem.ko on node1 maps an
#    LMR on node3 and checks WRITE/READ of 64 KiB, MEMSET, FAA and CAS with
#    kernel buffers, and node2 reads what it left there; on node2 it
#    creates, checks and deletes an LMR of its own;
#  - a slow server: a call with a short timeout gets ETIMEDOUT and its late
#    reply is dropped and counted (debugfs rpc/late_replies), never given
#    to the next call, which gets its own reply;
#  - credits: with a ring of 2 slots held by 2 calls, a third call with
#    LITE_RPC_NONBLOCK gets EAGAIN and one without waits for a credit;
#  - a caller killed mid-call: its reply is dropped when it comes and its
#    slot is reclaimed;
#  - asynchronous calls: 2 nodes x 2 threads x 1,000 calls, 16 in flight
#    per thread, every reply its own; past their deadline ETIMEDOUT, late
#    replies dropped; a caller killed with calls in flight: slots reclaimed;
#  - rpc-serve --exec answers with a command's output (rpc-call --data);
#  - the server process killed mid-load: the calls of 2 nodes x 2 threads on
#    their open handles get ECONNREFUSED, the call in flight within 1 s (not
#    its 20 s timeout); the service is gone from the manager and opening it
#    again gets ENOENT;
#  - the server's node dies (its QEMU killed): EHOSTDOWN;
#  - lite.ko's lock service (lite.sync.<node>): uid 1000 opening it gets
#    EPERM (so does any "lite." name);
#  - the fence (tests/vm/rpc_stall.c, userfaultfd holding a page 8 s, as
#    uid 1000): a CALL whose request is still faulting in when its server
#    is killed ends ECONNREFUSED and nothing is posted after RELEASED (no
#    send error, no QP reset on the client); a REPLY still being copied
#    when the server closes its service is not sent (ECONNREFUSED, no send
#    error), RPC_CLOSE does not wait for it and its caller is refused at
#    the close;
#  - limits, each set low and put back: uid 1000's third service with
#    rpc_services_per_uid 2 is EDQUOT (root's is served); its second
#    binding with rpc_bindings_per_uid 1 is EDQUOT, one root made is
#    shared free; 2 MiB of reply slots with rpc_mib_per_uid 1 is EDQUOT;
#    a 2 MiB ring on a server node with rpc_quota_mib 1, or of a uid 1000
#    service with rpc_mib_per_uid 1 there, is ENOSPC; lite.sync.1 has a
#    port of lite.ko's own (1..64), user services ports above;
#  - rmmod lite after all of it is clean; litevm's teardown fails the run
#    on any BUG/WARNING/Oops line.
# Usage: tests/vm/rpc.sh [--state DIR]    (needs root and tools/setup.sh)
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=rpc
VM_GUESTS=3
VM_TIMEOUT=900
VM_TARGETS=(//kmod:lite_ko //controlplane:litemgr //agent:liteagent //cmd/litectl
	//cmd/litenl //cmd/liteop //tests/vm:rpc_stall)
VM_GUEST_SECS=300

# ---------------------------------------------------------------------------
# Guest side: `rpc.sh --guest FUNCTION ARGS...` (see lib.sh).
# ---------------------------------------------------------------------------
LITEOP=${LITE_BIN-}/cmd/liteop/liteop

# serve NAME READY ARGS...: runs an echo server; READY appears once it
# serves (the "serving=" line).
serve() {
	local name=$1 ready=$2
	shift 2
	"$LITEOP" rpc-serve "$name" "$@" | while IFS= read -r line; do
		echo "$line"
		[[ $line == serving=* ]] && touch "$ready"
	done
}

serve_as_user() {  # NAME READY ARGS...: serve, as uid 1000
	local name=$1 ready=$2
	shift 2
	as_user "$LITEOP" rpc-serve "$name" "$@" | while IFS= read -r line; do
		echo "$line"
		[[ $line == serving=* ]] && touch "$ready"
	done
}
async_calls() {  # NAME WINDOW COUNT: asynchronous calls, every reply checked
	local out
	out=$("$LITEOP" rpc-call "$1" --async "$2" --count "$3" --threads 2 \
		--size 256 --pattern $((GUEST << 40)) 2>&1) || { echo "        $out"; return 1; }
	echo "        node$GUEST: $out"
	[[ $out == *"replies_checked=$(($3 * 2))"* ]]
}
async_ok() { check "node$GUEST: 2 threads x $3 asynchronous calls, up to $2 in flight each, every reply its own" async_calls "$@"; }
exec_reply() {  # NAME TEXT WANT: one call with TEXT; its reply is WANT
	local out
	out=$("$LITEOP" rpc-call "$1" --data "$2" 2>&1) || { echo "        $out"; return 1; }
	echo "        node$GUEST: $out"
	[[ $out == *"reply=$3"* ]]
}
exec_ok() { check "node$GUEST: '$2' to $1 (tr a-z A-Z) comes back as '$3'" exec_reply "$@"; }
calls() {  # NAME COUNT SIZE: COUNT echo calls, every reply checked
	local out
	out=$("$LITEOP" rpc-call "$1" --count "$2" --size "$3" 2>&1) || {
		echo "        $out"
		return 1
	}
	echo "        node$GUEST: $out"
	[[ $out == *"replies_checked=$2"* ]]
}
call_ok() { check "node$GUEST: $2 calls of $3 bytes to $1, every reply its request" calls "$@"; }
send_ok() {
	check "node$GUEST: $2 messages to $1" "$LITEOP" rpc-send "$1" --count "$2" --size 100
}
every_size() {  # NAME (max_request 4 KiB): echo at each edge size, then over
	local n
	for n in 0 1 63 64 65 1000 4095 4096; do
		check "$n-byte requests echoed" calls "$1" 3 "$n"
	done
	check "4097 bytes, one over max_request: EMSGSIZE" \
		fails_with EMSGSIZE "$LITEOP" rpc-call "$1" --size 4097
}
load() {  # NAME THREADS COUNT: payloads unique to this node and thread
	local out
	out=$("$LITEOP" rpc-call "$1" --threads "$2" --count "$3" --size 64 \
		--pattern $((GUEST << 40)) 2>&1) || { echo "        $out"; return 1; }
	echo "        node$GUEST: $out"
	[[ $out == *"replies_checked=$(($2 * $3))"* ]]
}
load_ok() { check "node$GUEST: $2 threads x $3 calls, every reply its own request" load "$@"; }
refusals() {  # NAME: what is refused, and how
	check "an unknown service: ENOENT" fails_with ENOENT "$LITEOP" rpc-call rpc.none
	check "a request over max_request (4 KiB): EMSGSIZE" \
		fails_with EMSGSIZE "$LITEOP" rpc-call "$1" --size 5000
	check "another user, whom the mode 0700 denies the x bit: EACCES" \
		fails_with EACCES as_user "$LITEOP" rpc-call "$1"
}
late_reply() {  # NAME (a server that holds each request 1.5 s)
	local before after
	counter rpc/late_replies
	before=$COUNTER
	check "a call with a 300 ms timeout to a slow server: ETIMEDOUT" \
		fails_with ETIMEDOUT "$LITEOP" rpc-call "$1" --timeout-ms 300
	check "the next call gets its own reply, not the late one" \
		calls "$1" 1 64
	counter rpc/late_replies
	after=$COUNTER
	check "the late reply was dropped and counted (late_replies $before -> $after)" \
		test "$after" -gt "$before"
	check "asynchronous calls past their 300 ms deadline: collected with ETIMEDOUT" \
		fails_with ETIMEDOUT "$LITEOP" rpc-call "$1" --async 4 --count 4 --timeout-ms 300
	check "the next asynchronous calls get their own replies, not the late ones" \
		"$LITEOP" rpc-call "$1" --async 4 --count 4 --size 100
}
# rpc_calls GUEST: lite.ko's count of RPC calls made on guest GUEST.
rpc_calls() { litevm exec -g "$1" -t 20 -- "cat /sys/kernel/debug/lite/rpc/calls"; }
# calling BEFORE1 BEFORE3: guests 1 and 3 have each made 10 calls since.
calling() {
	local c1 c3
	c1=$(rpc_calls 1) && c3=$(rpc_calls 3) || return 1
	((c1 > $1 + 10 && c3 > $2 + 10))
}
calls_until_refused() {  # NAME: calls on one open handle until it fails
	local out ms
	out=$("$LITEOP" rpc-call "$1" --threads 2 --count 10000000 --timeout-ms 20000 2>&1)
	echo "        node$GUEST: ${out:0:300}"
	check "node$GUEST: calls on an open handle fail with ECONNREFUSED once the server is killed" \
		has_text "$out" ECONNREFUSED
	ms=$(grep -o 'after [0-9]* ms' <<< "$out" | head -n 1 | tr -dc 0-9)
	check "node$GUEST: ... within 1 s: the call in flight at the kill ended after ${ms:-?} ms" \
		test "${ms:-99999}" -lt 1000
}
credits() {  # NAME (depth 2, each request held 3 s): the ring is never overrun
	local jobs=() j rc pid start
	for j in 1 2; do
		"$LITEOP" rpc-call "$1" --timeout-ms 20000 > /dev/null 2>&1 &
		jobs+=($!)
	done
	sleep 1  # both calls hold the node's 2 credits (the server holds them)
	check "a third call with --nonblock: EAGAIN at once (no credit)" \
		fails_with EAGAIN "$LITEOP" rpc-call "$1" --nonblock
	now_ms
	start=$NOW_MS
	check "a third call that waits gets a credit once one comes back, and its reply" \
		calls "$1" 1 64
	now_ms
	echo "        it waited $((NOW_MS - start)) ms for its credit and reply"
	j=0
	for pid in "${jobs[@]}"; do
		j=$((j + 1))
		rc=0
		wait "$pid" || rc=$?
		check "first call $j got its reply (status $rc)" test "$rc" -eq 0
	done
}
killed_caller() {  # NAME (each request held 2 s): a caller killed mid-call
	local pid calls before a b rc_a=0 rc_b=0
	counter rpc/calls
	calls=$COUNTER
	counter rpc/late_replies
	before=$COUNTER
	"$LITEOP" rpc-call "$1" --timeout-ms 20000 > /dev/null 2>&1 &
	pid=$!
	# Killed once its request is out (the open and bind come first).
	for _ in $(seq 100); do
		counter rpc/calls
		((COUNTER > calls)) && break
		sleep 0.1
	done
	kill -KILL "$pid"
	wait "$pid" 2> /dev/null || true
	for _ in $(seq 100); do  # the server answers the dead caller's request
		counter rpc/late_replies
		((COUNTER > before)) && break
		sleep 0.1
	done
	check "the killed caller's reply came and was dropped (late_replies $before -> $COUNTER)" \
		test "$COUNTER" -gt "$before"
	"$LITEOP" rpc-call "$1" --nonblock > /dev/null 2>&1 &
	a=$!
	"$LITEOP" rpc-call "$1" --nonblock > /dev/null 2>&1 &
	b=$!
	wait "$a" || rc_a=$?
	wait "$b" || rc_b=$?
	check "its slot was reclaimed: 2 calls at once on the 2-credit ring, neither EAGAIN ($rc_a, $rc_b)" \
		test "$rc_a" -eq 0 -a "$rc_b" -eq 0
	# The same with asynchronous calls: both credits held, then the
	# caller exits without collecting them.
	counter rpc/late_replies
	before=$COUNTER
	counter rpc/calls
	calls=$COUNTER
	"$LITEOP" rpc-call "$1" --async 2 --count 2 --timeout-ms 20000 > /dev/null 2>&1 &
	pid=$!
	# Killed once both calls are out (not after a guessed second: on a
	# loaded host the open and bind alone can take longer).
	for _ in $(seq 300); do
		counter rpc/calls
		((COUNTER >= calls + 2)) && break
		sleep 0.1
	done
	kill -KILL "$pid"
	wait "$pid" 2> /dev/null || true
	for _ in $(seq 100); do
		counter rpc/late_replies
		((COUNTER >= before + 2)) && break
		sleep 0.1
	done
	check "a killed caller's 2 asynchronous calls: both replies dropped (late_replies $before -> $COUNTER)" \
		test "$COUNTER" -ge $((before + 2))
	rc_a=0
	rc_b=0
	"$LITEOP" rpc-call "$1" --nonblock > /dev/null 2>&1 &
	a=$!
	"$LITEOP" rpc-call "$1" --nonblock > /dev/null 2>&1 &
	b=$!
	wait "$a" || rc_a=$?
	wait "$b" || rc_b=$?
	check "... and both slots reclaimed: 2 calls at once, neither EAGAIN ($rc_a, $rc_b)" \
		test "$rc_a" -eq 0 -a "$rc_b" -eq 0
}
KECHO=${LITE_BIN-}/kmod/lite_kecho.ko
kernel_server() {  # NAME: lite_kecho serves NAME from a kernel thread
	check "insmod lite_kecho serve=$1 (a kernel module serving RPC)" \
		insmod "$KECHO" serve="$1"
}
kernel_client() {  # NAME COUNT: lite_kecho calls NAME from its init
	local out
	check "insmod lite_kecho call=$1 count=$2 (a kernel module calling RPC)" \
		insmod "$KECHO" call="$1" count="$2"
	out=$(dmesg | grep "lite_kecho: $2 calls to $1" | tail -n 1)
	echo "        ${out#*] }"
	check "... every reply checked (its kernel log)" test -n "$out"
	check "rmmod lite_kecho" rmmod lite_kecho
}
KMEM=${LITE_BIN-}/kmod/lite_kmem.ko
kernel_mem() {  # NAME ARGS...: lite_kmem maps the LMR NAME and checks it
	local name=$1 out
	shift
	check "insmod lite_kmem lmr=$name $* (a kernel module on an LMR)" \
		insmod "$KMEM" lmr="$name" "$@"
	out=$(dmesg | grep "lite_kmem: $name " | tail -n 1)
	echo "        ${out#*] }"
	check "... write, read back, memset, FAA and CAS checked (its kernel log)" \
		has_text "$out" "checked"
	check "rmmod lite_kmem" rmmod lite_kmem
}
lmr_alloc() {  # NAME SIZE
	check "an LMR $1 of $2 on node$GUEST" "$LITEOP" alloc "$1" "$2"
}
text_at() {  # NAME OFFSET TEXT: the LMR holds TEXT at OFFSET
	local out
	out=$("$LITEOP" read "$1" "$2" "${#3}" 2>&1)
	echo "        node$GUEST: '$out'"
	[[ $out == "$3" ]]
}
text_ok() { check "node$GUEST: $1 holds '$3' at $2" text_at "$@"; }
kernel_server_gone() {  # NAME
	check "rmmod lite_kecho (the kernel service unregisters)" rmmod lite_kecho
}
hostdown() {  # NAME
	check "a call to a service on a failed node: EHOSTDOWN" \
		fails_with EHOSTDOWN "$LITEOP" rpc-call "$1" --timeout-ms 20000
}
file_exists() { test -e "$1"; }
reserved_open() {  # NAME: lite.ko's own lock service, opened by a user
	check "uid 1000 opening $1 (lite.ko's lock service): EPERM before any upcall" \
		fails_with EPERM as_user "$LITEOP" rpc-call "$1"
	check "uid 1000 opening lite.anything: EPERM" \
		fails_with EPERM as_user "$LITEOP" rpc-call lite.anything
}
RPC_STALL=${LITE_BIN-}/tests/vm/rpc_stall
# The fence against a buffer slow to fault in (H4 of the 2026-11-28
# review): userfaultfd holds the page 8 s as a FUSE daemon could; root lets
# users have it for the test (vm.unprivileged_userfaultfd), the attacker
# is uid 1000. Send errors would be a late WRITE hitting a ring or reply
# slots already let go (key_mode=lmr: a remote access error that resets
# the QP; key_mode=global: freed pages).
stall_call() {  # NAME READY: a CALL whose request page is held 8 s
	local out e0 d0
	counter rpc/send_errors
	e0=$COUNTER
	counter disconnects
	d0=$COUNTER
	sysctl -qw vm.unprivileged_userfaultfd=1
	out=$(as_user "$RPC_STALL" call "$1" 8 "$2" 2>&1)
	echo "$out" | indent
	check "node$GUEST: the stalled call ends ECONNREFUSED (its service closed during the stall)" \
		has_text "$out" "result=ECONNREFUSED"
	sleep 1
	counter rpc/send_errors
	check "node$GUEST: nothing was posted after RELEASED (rpc/send_errors $e0 -> $COUNTER)" \
		test "$COUNTER" -eq "$e0"
	counter disconnects
	check "node$GUEST: no QP was reset (disconnects $d0 -> $COUNTER)" test "$COUNTER" -eq "$d0"
}
stall_serve() {  # NAME READY: serves NAME; its reply's page is held 8 s
	local out e0
	counter rpc/send_errors
	e0=$COUNTER
	sysctl -qw vm.unprivileged_userfaultfd=1
	out=$(as_user "$RPC_STALL" serve "$1" 8 "$2" 2>&1)
	echo "$out" | indent
	check "node$GUEST: the reply copied during RPC_CLOSE is not sent (ECONNREFUSED)" \
		has_text "$out" "result=ECONNREFUSED"
	local ms
	ms=$(grep -o 'close_ms=[0-9]*' <<< "$out" | tr -dc 0-9)
	check "node$GUEST: RPC_CLOSE did not wait for the stalled copy (${ms:-?} ms)" \
		test "${ms:-99999}" -lt 2000
	sleep 1
	counter rpc/send_errors
	check "node$GUEST: nothing was posted after GONE (rpc/send_errors $e0 -> $COUNTER)" \
		test "$COUNTER" -eq "$e0"
}
# Limits (docs/rpc.md "Limits"), each set low for its check and put back.
PARAMS=/sys/module/lite/parameters
set_param() { echo "$2" > "$PARAMS/$1"; }
services_limit() {  # uid 1000 serves 2 services here; a third is refused
	local pids=() n out
	check "rpc_services_per_uid set to 2" set_param rpc_services_per_uid 2
	for n in 1 2; do
		rm -f "/tmp/rpc-lim$n.out"
		# setpriv execs liteop: $! is the server itself, for the kill.
		setpriv --reuid=1000 --regid=1000 --clear-groups \
			"$LITEOP" rpc-serve "rpc.lim$n" --mode 0777 > "/tmp/rpc-lim$n.out" 2>&1 &
		pids+=($!)
	done
	for _ in $(seq 200); do
		grep -q serving= /tmp/rpc-lim1.out && grep -q serving= /tmp/rpc-lim2.out && break
		sleep 0.1
	done
	check "uid 1000 serves 2 services on node$GUEST" eval 'grep -q serving= /tmp/rpc-lim1.out && grep -q serving= /tmp/rpc-lim2.out'
	check "uid 1000's third service (rpc_services_per_uid 2): EDQUOT before any upcall" \
		fails_with EDQUOT as_user "$LITEOP" rpc-serve rpc.lim3 --mode 0777
	out=$(timeout 5 "$LITEOP" rpc-serve rpc.lim4 2>&1 || true)
	check "root's service meanwhile: its own share, served" has_text "$out" serving=
	kill "${pids[@]}"
	wait "${pids[@]}" 2> /dev/null || true
	out=$(timeout 5 setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$LITEOP" rpc-serve rpc.lim3 --mode 0777 2>&1 || true)
	echo "        ${out:0:200}"
	check "once uid 1000's services are closed, its next one is served" has_text "$out" serving=
	set_param rpc_services_per_uid 64
}
bindings_limit() {  # A B: services no node$GUEST process opened yet
	check "rpc_bindings_per_uid set to 1" set_param rpc_bindings_per_uid 1
	check "uid 1000 opens $1 (its first binding on this node) and calls it" \
		as_user "$LITEOP" rpc-call "$1"
	check "uid 1000 opening $2 (a second binding, rpc_bindings_per_uid 1): EDQUOT" \
		fails_with EDQUOT as_user "$LITEOP" rpc-call "$2"
	# Root has bindings of its own here already: its limit goes up.
	set_param rpc_bindings_per_uid 64
	check "root opens $2: the node's binding to it is made, charged to root" \
		"$LITEOP" rpc-call "$2"
	set_param rpc_bindings_per_uid 1
	check "uid 1000 calls $2 now (rpc_bindings_per_uid 1 again): the binding exists, nothing charged" \
		as_user "$LITEOP" rpc-call "$2"
	set_param rpc_bindings_per_uid 64
}
bytes_limit() {  # NAME: a service with 2 MiB of reply slots per client node
	check "rpc_mib_per_uid set to 1" set_param rpc_mib_per_uid 1
	check "uid 1000 opening $1, whose reply slots are 2 MiB (rpc_mib_per_uid 1): EDQUOT" \
		fails_with EDQUOT as_user "$LITEOP" rpc-call "$1"
	set_param rpc_mib_per_uid 256
	check "... with rpc_mib_per_uid 256: opened and called" as_user "$LITEOP" rpc-call "$1"
}
ring_refused() {  # NAME: its ring (2 MiB) has no room on the server's node
	# The server's lite.ko refuses the bind with ENOSPC; the manager gives
	# the opener EUSERS ("gave no ring") with that errno in its message.
	check "opening $1 whose server's node has no room for a 2 MiB ring: refused, ENOSPC at the server" \
		fails_with ENOSPC "$LITEOP" rpc-call "$1"
}
ports_apart() {  # USER: lite.ko's lock service here has a port of its own
	local out k u
	out=$("$LITENL" services)
	k=$(awk '$2 ~ /^lite\.sync\./ { print $3 }' <<< "$out")
	u=$(awk -v n="$1" '$2 == n { print $3 }' <<< "$out")
	check "node$GUEST: the lock service has port ${k:-?} (1..64, lite.ko's own), $1 port ${u:-?} (above 64)" \
		test "${k:-0}" -ge 1 -a "${k:-0}" -le 64 -a "${u:-0}" -gt 64
}
refused_soon() {  # NAME: one call, refused well before the 8 s stall ends
	local out ms
	out=$("$LITEOP" rpc-call "$1" --timeout-ms 30000 2>&1)
	echo "        node$GUEST: ${out:0:300}"
	check "node$GUEST: a call whose service closes while its reply is copied: ECONNREFUSED" \
		has_text "$out" ECONNREFUSED
	ms=$(grep -o 'after [0-9]* ms' <<< "$out" | head -n 1 | tr -dc 0-9)
	check "node$GUEST: ... at the close, not after a drain timeout (${ms:-?} ms)" \
		test "${ms:-99999}" -lt 4000
}

# ---------------------------------------------------------------------------
# Host side.
# ---------------------------------------------------------------------------
# start_server GUEST NAME ARGS...: a spawned echo server; its job id.
start_server() {
	local g=$1 name=$2 ready job
	shift 2
	ready=/tmp/rpc-$name.ready
	# Bounded by the suite, not by one guest function (VM_GUEST_SECS):
	# rpc.echo serves until the test kills it, minutes later on a loaded
	# host (litevm ended it at 300 s once, failing the kill-mid-load step).
	job=$(litevm spawn -g "$g" -t "$VM_TIMEOUT" -- "$(vm_guest_cmd "$g" serve "$name" "$ready" "$@")")
	vm_wait_until 60 litevm exec -g "$g" -t 20 -- "test -e $ready" > /dev/null 2>&1 ||
		echo "        (guest $g: $name not serving after 60 s)" >&2
	echo "$job"
}
litectl() { "$LITE_BIN/cmd/litectl/litectl" "$@"; }
lists_service() { litectl services -o json | tr -d '\n ' | grep -q "\"name\":\"$1\""; }
no_service() { ! lists_service "$1"; }
kernel_lists() { litevm exec -g "$1" -- "$LITE_BIN/cmd/litenl/litenl services" | grep -q "$2"; }

host_main() {
	local echo_job slow_job g job job3 start out calls1 calls3
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	echo "== cluster: litemgr on the host, liteagent --module=netlink on 3 guests"
	# shellcheck disable=SC2119
	lc_start

	echo "== an echo service on node2 (2 threads), called from 3 nodes at once"
	echo_job=$(start_server 2 rpc.echo --threads 2 --mode 0700)
	check "litectl services lists rpc.echo" lists_service rpc.echo
	check "lite.ko on node2 lists rpc.echo (litenl services)" kernel_lists 2 rpc.echo
	guests "1 call_ok rpc.echo 300 64" "3 call_ok rpc.echo 300 4000" "2 call_ok rpc.echo 300 1"
	guest 1 send_ok rpc.echo 100
	guest 1 call_ok rpc.echo 20 0
	guest 3 refusals rpc.echo
	echo "== asynchronous calls from 2 nodes at once"
	guests "1 async_ok rpc.echo 16 1000" "3 async_ok rpc.echo 16 1000"

	echo "== a service that answers with a command's output (rpc-serve --exec)"
	job=$(start_server 3 rpc.upper --exec "tr a-z A-Z")
	guest 1 exec_ok rpc.upper "hello lite" "HELLO LITE"
	litevm kill -g 3 "$job" > /dev/null 2>&1 || true

	echo "== every size from 0 to max_request, and one over"
	guest 1 every_size rpc.echo

	echo "== load: 3 nodes x 4 threads x 2,000 calls into a service with 4 threads"
	job=$(vm_spawn 2 serve rpc.load /tmp/rpc-load.ready --threads 4 --count 24000)
	vm_wait_until 60 litevm exec -g 2 -t 20 -- "test -e /tmp/rpc-load.ready" > /dev/null 2>&1 || true
	start=$SECONDS
	VM_GUEST_SECS=600 guests "1 load_ok rpc.load 4 2000" "2 load_ok rpc.load 4 2000" \
		"3 load_ok rpc.load 4 2000"
	echo "        24,000 calls in $((SECONDS - start)) s"
	out=$(litevm wait -g 2 -t 120 "$job" 2>&1) || true
	echo "        server: $(grep -o 'served=[0-9]* messages=[0-9]*' <<< "$out")"
	check "the server answered exactly 24,000 calls" has_text "$out" "served=24000 messages=0"

	echo "== the kernel API (lite_kernel.h): kernel modules serve and call"
	guest 2 kernel_server rpc.kecho
	guest 1 call_ok rpc.kecho 50 64
	guest 1 kernel_client rpc.kecho 20
	guest 3 kernel_client rpc.echo 20
	guest 2 kernel_server_gone rpc.kecho
	guest 3 lmr_alloc rpc.kmem 64K
	guest 1 kernel_mem rpc.kmem
	guest 2 text_ok rpc.kmem 8192 "lite_kmem was here"
	guest 2 kernel_mem rpc.kmem2 create=1 size=16384
	vm_wait_until 10 no_service rpc.kecho > /dev/null 2>&1 || true
	check "the manager no longer lists rpc.kecho" no_service rpc.kecho

	echo "== a slow server: timeouts and late replies"
	slow_job=$(start_server 3 rpc.slow --hold-ms 1500)
	guest 1 late_reply rpc.slow
	litevm kill -g 3 "$slow_job" > /dev/null 2>&1 || true

	echo "== credits: a ring of 2 slots, each request held 3 s by the server"
	slow_job=$(start_server 3 rpc.narrow --depth 2 --threads 2 --hold-ms 3000)
	guest 1 credits rpc.narrow
	litevm kill -g 3 "$slow_job" > /dev/null 2>&1 || true
	echo "== a caller killed mid-call: its reply slot is reclaimed"
	slow_job=$(start_server 3 rpc.kill --depth 2 --hold-ms 2000)
	guest 1 killed_caller rpc.kill
	litevm kill -g 3 "$slow_job" > /dev/null 2>&1 || true

	echo "== lite.ko's own services: a user cannot open them"
	out=$(litectl services -o json | tr -d '\n ' | grep -o '"name":"lite\.sync\.[0-9]*"' | head -n 1 | cut -d'"' -f4)
	check "the manager lists a lock service (${out:-none})" test -n "$out"
	guest 1 reserved_open "${out:-lite.sync.1}"

	echo "== the fence: a request slow to fault in while its service closes"
	job=$(start_server 3 rpc.stall)
	job3=$(vm_spawn 1 stall_call rpc.stall /tmp/rpc-stall.ready)
	vm_wait_until 90 litevm exec -g 1 -t 20 -- "test -e /tmp/rpc-stall.ready" > /dev/null 2>&1 ||
		echo "        (the call did not stall within 90 s)"
	litevm kill -g 3 "$job" > /dev/null 2>&1 || true
	vm_join 1 "$job3" stall_call
	echo "== the fence: a reply slow to fault in while its service closes"
	job=$(vm_spawn 3 stall_serve rpc.stall2 /tmp/rpc-stall2.ready)
	vm_wait_until 60 lists_service rpc.stall2 > /dev/null 2>&1 || true
	guest 1 refused_soon rpc.stall2
	vm_join 3 "$job" stall_serve

	echo "== limits: services, bindings and memory per uid, RPC's own quota, ports"
	guest 2 services_limit
	start_server 3 rpc.b1 --mode 0777 > /dev/null
	start_server 3 rpc.b2 --mode 0777 > /dev/null
	guest 1 bindings_limit rpc.b1 rpc.b2
	start_server 3 rpc.big --mode 0777 --max-request 65536 --max-reply 65536 --depth 32 > /dev/null
	guest 1 bytes_limit rpc.big
	start_server 3 rpc.big2 --mode 0777 --max-request 65536 --max-reply 65536 --depth 32 > /dev/null
	litevm exec -g 3 -- "echo 1 > /sys/module/lite/parameters/rpc_quota_mib"
	guest 2 ring_refused rpc.big2
	litevm exec -g 3 -- "echo 1024 > /sys/module/lite/parameters/rpc_quota_mib"
	job=$(vm_spawn 3 serve_as_user rpc.big3 /tmp/rpc-big3.ready --mode 0777 --max-request 65536 --max-reply 65536 --depth 32)
	vm_wait_until 60 lists_service rpc.big3 > /dev/null 2>&1 || true
	litevm exec -g 3 -- "echo 1 > /sys/module/lite/parameters/rpc_mib_per_uid"
	echo "        (uid 1000 serves rpc.big3 on node3, rpc_mib_per_uid 1 there: its rings are its own)"
	guest 2 ring_refused rpc.big3
	litevm exec -g 3 -- "echo 256 > /sys/module/lite/parameters/rpc_mib_per_uid"
	guest 2 call_ok rpc.big3 2 64
	litevm kill -g 3 "$job" > /dev/null 2>&1 || true
	guest 3 ports_apart rpc.b1

	echo "== the server process killed mid-load: ECONNREFUSED at once"
	calls1=$(rpc_calls 1)
	calls3=$(rpc_calls 3)
	job=$(vm_spawn 1 calls_until_refused rpc.echo)
	job3=$(vm_spawn 3 calls_until_refused rpc.echo)
	# Killed only once both callers are calling (each opens the service
	# through its agent and the manager first: a fixed 2 s was once too
	# short for node3 on a loaded host).
	vm_wait_until 60 calling "$calls1" "$calls3" ||
		echo "        the callers did not both start calling within 60 s"
	litevm kill -g 2 "$echo_job" > /dev/null 2>&1 || true
	vm_join 1 "$job" calls_until_refused
	vm_join 3 "$job3" calls_until_refused
	vm_wait_until 10 no_service rpc.echo > /dev/null 2>&1 || true
	check "the manager no longer lists rpc.echo" no_service rpc.echo
	check "opening it again: ENOENT" fails_with ENOENT litevm exec -g 1 -- "$LITE_BIN/cmd/liteop/liteop rpc-call rpc.echo"

	echo "== the server's node dies (power cut): EHOSTDOWN"
	start_server 3 rpc.far > /dev/null
	guest 1 call_ok rpc.far 5 64
	litevm crash -g 3 > /dev/null
	guest 1 hostdown rpc.far

	lc_stop
	for g in 1 2; do
		check "guest $g: rmmod lite is clean after RPC" litevm exec -g "$g" -- "rmmod lite"
	done
}

vm_main "$@"
