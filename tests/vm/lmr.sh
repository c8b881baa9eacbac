#!/bin/bash
# VM LMR test: three guests, lite.ko's hosted LMR memory and the control
# side of /dev/lite without an agent, driven with litenl and lite_probe.
#  - LMR alloc / list / update / free over netlink, with bad input refused
#    with the documented errno and the kernel's message (lmr id 0, bad
#    names, size 0 and > 64 GiB, mode not in 0666, uid -1, missing and
#    unsupported attributes, duplicate id, unknown id, no CAP_NET_ADMIN,
#    node identity not set);
#  - a 64 MiB LMR whose chunks add up (one region under key_mode=lmr);
#  - the quota (lmr_quota_mib): ENOSPC past it, room again after a free;
#  - /dev/lite with no agent: ALLOC and MAP fail with ENOTCONN at once,
#    unknown handles with EBADF (lite_probe);
#  - debugfs gauges (lmrs, lmr_bytes) follow;
#  - rmmod with hosted LMRs is clean; bad upcall_timeout_ms / lmr_quota_mib
#    values refuse to load;
#  - commands run in parallel: NODE_GET and nlctrl's GETFAMILY answer while
#    a 447 MiB LMR_ALLOC is still filling (debugfs lmr_allocs_running = 1
#    before and after);
#  - an LMR_ALLOC whose reply cannot be queued (the sender's receive buffer
#    is full) leaves nothing hosted;
#  - a MAP answer for an LMR homed on the node is checked against it
#    (not hosted, freed, other key or chunks: ESTALE), and a freed LMR's
#    bytes count until a grant holding its pages is closed (map_answers);
#  - an RDMA device added and deleted after node set (rxe1), and rxe0
#    deleted and added back in quick succession: every delete returns, and
#    the node listens again (LMR_ALLOC finds the device);
#  - rmmod lite on a node whose LMR another node is writing (litemgr and
#    two agents): clean, and the writer fails with an error, not a hang;
#  - key modes (key_modes, guests 1 and 2): a READ through a grant no agent
#    revokes, after the home freed the LMR, is served with key_mode=global
#    and refused (ESTALE) with key_mode=lmr; one chunk per LMR in lmr mode;
#    quarantine; EVENT_LMR_LOST when the device goes under a hosted LMR;
#  - litevm's teardown fails the run on any BUG/WARNING/Oops/refcount line.
# Usage: tests/vm/lmr.sh [--state DIR]    (needs root and tools/setup.sh)
#        LMR_ONLY=key_modes tests/vm/lmr.sh  one host-side function only;
#        LMR_ONLY=key_mode_cost ...          the key-mode measurement
#                                            (docs/datapath.md "Key modes")
set -euo pipefail
# shellcheck source=tests/vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VM_SUITE=lmr
VM_GUESTS=3
VM_TIMEOUT=900
VM_APPEND=page_poison=1  # see rmmod_under_writes
VM_TARGETS=(//kmod:lite_ko //cmd/litenl //tests/vm:lite_probe //controlplane:litemgr
	//agent:liteagent //cmd/litectl //tools/bench:lite-bench)
VM_GUEST_ENV=(LITE_ATTR_NODE_ID LITE_ATTR_MODE LITE_ATTR_UID LITE_ATTR_GID LITE_ATTR_LMR_ID
	LITE_ATTR_NAME LITE_ATTR_SIZE LITE_CMD_NODE_GET LITE_CMD_LMR_ALLOC DUMMY_KO LITE_NUMS)

# ---------------------------------------------------------------------------
# Guest side (lmr.sh --guest FUNCTION ARGS...; see lib.sh).
# ---------------------------------------------------------------------------
PROBE=${LITE_BIN-}/tests/vm/lite_probe
ME=10.211.0.$((10 + ${GUEST:-0}))

has() {  # has PATTERN LITENL_ARGS...
	local pattern=$1 out
	shift
	out=$("$LITENL" "$@") || return 1
	[[ $out == *"$pattern"* ]] || { echo "        ${out:0:400}"; return 1; }
}
counter_is() {  # counter_is NAME VALUE: debugfs counter NAME is VALUE
	counter "$1"
	[[ $COUNTER == "$2" ]] || { echo "        $1=$COUNTER"; return 1; }
}
# chunks_ok ID BYTES: every chunk 1..4 MiB, lengths add up, > 1 chunk if BYTES > 4 MiB;
# with key_mode=lmr (the default) one chunk, the LMR's region, of BYTES.
chunks_ok() {
	local out mode
	read -r mode < /sys/module/lite/parameters/key_mode
	out=$("$LITENL" lmr list --chunks | awk -v id="$1" '
		$1 ~ /^[0-9]+$/ {on = ($1 == id); next}
		on && $1 == "chunk" {len = $6; n++; sum += len; if (len < 1 || len > 4194304) bad = 1}
		END {print n + 0, sum + 0, bad + 0}') || return 1
	echo "        chunks, bytes, bad: $out"
	local n sum bad
	read -r n sum bad <<< "$out"
	[[ $mode == lmr ]] && { ((sum == $2 && n == 1)); return; }
	((sum == $2 && bad == 0)) && { (($2 <= 4194304)) || ((n > 1)); }
}

lmr_netlink() {
	check "lmr alloc before node set: ENXIO" \
		expect_err ENXIO "node identity is not set" lmr alloc --id 1 --name a --size 4096
	check "node set" litenl_ok node set --id "$GUEST" --incarnation 1 --addr "$ME"
	# litenl refuses some values itself; raw attributes reach the kernel.
	check "lmr alloc --id 0: EINVAL" expect_err EINVAL "id 0" lmr alloc --id 0 --name a --size 4096
	check "lmr alloc bad name: EINVAL" expect_err EINVAL "LITE_ATTR_NAME" lmr alloc --id 1 --name '-bad' --size 4096
	check "lmr alloc name with a space: EINVAL" expect_err EINVAL "LITE_ATTR_NAME" lmr alloc --id 1 --name 'a b' --size 4096
	check "lmr alloc 129-char name: EINVAL" expect_err EINVAL "" lmr alloc --id 1 --name "$(printf 'a%.0s' {1..129})" --size 4096
	check "lmr alloc --size 0: EINVAL" expect_err EINVAL "size 0" lmr alloc --id 1 --name a --size 0
	check "lmr alloc --size 64G+1: EINVAL" expect_err EINVAL "68719476737" lmr alloc --id 1 --name a --size 68719476737
	check "lmr alloc with mode 0700 (raw): EINVAL from the kernel" \
		expect_err EINVAL "LITE_ATTR_MODE: not a subset of 0666" --attr-u32 "$LITE_ATTR_MODE=448" lmr alloc --id 1 --name a --size 4096
	check "lmr alloc with uid 4294967295 (raw): EINVAL from the kernel" \
		expect_err EINVAL "LITE_ATTR_UID: uid 4294967295" --attr-u32 "$LITE_ATTR_UID=4294967295" lmr alloc --id 1 --name a --size 4096
	check "lmr alloc with an unsupported attribute: EINVAL" \
		expect_err EINVAL "" --attr-u32 "$LITE_ATTR_NODE_ID=1" lmr alloc --id 1 --name a --size 4096
	check "lmr alloc as nobody: EPERM" as_nobody expect_err EPERM "" lmr alloc --id 1 --name a --size 4096
	check "lmr alloc 4096 bytes" has "1 chunk(s)" lmr alloc --id 1 --name small.one --size 4096 --mode 0640
	check "lmr alloc the same id: EEXIST" expect_err EEXIST "hosted here already" lmr alloc --id 1 --name x --size 4096
	check "lmr alloc 64 MiB" has "lmr 2: 67108864 bytes" lmr alloc --id 2 --name big/one:2 --size 64M
	check "64 MiB: its chunks (one region under key_mode=lmr) add up" chunks_ok 2 67108864
	check "lmr alloc 100 bytes" has "1 chunk(s)" lmr alloc --id 3 --name c --size 100
	check "lmr list -o json" has '"lmr_id": 1, "name": "small.one", "size": 4096, "uid": 0, "gid": 0, "mode": 416, "epoch": 0' lmr list -o json
	check "lmr list as nobody: EPERM (keys and chunk addresses are admin-only)" \
		as_nobody expect_err EPERM "need CAP_NET_ADMIN" lmr list
	check "grant list as nobody: EPERM" as_nobody expect_err EPERM "need CAP_NET_ADMIN" grant list
	check "debugfs lmrs = 3" counter_is lmrs 3
	check "debugfs lmr_bytes" counter_is lmr_bytes $((4096 + 67108864 + 100))
	check "lmr update --new-id 10 --epoch 7" litenl_ok lmr update --id 1 --new-id 10 --epoch 7
	check "lmr list shows id 10, epoch 7" has '"lmr_id": 10, "name": "small.one", "size": 4096, "uid": 0, "gid": 0, "mode": 416, "epoch": 7' lmr list -o json
	check "lmr list: live LMRs are not releasing" has '"releasing": false' lmr list -o json
	check "lmr update --releasing" litenl_ok lmr update --id 10 --releasing
	check "lmr update --epoch 8 without the flag" litenl_ok lmr update --id 10 --epoch 8
	check "lmr list: 10 still releasing (sticky: only 10 was marked)" has '"releasing": true' lmr list -o json
	check "lmr list table: STATE releasing" has ' releasing' lmr list
	check "lmr update unknown: ENOENT" expect_err ENOENT "no LMR" lmr update --id 1 --epoch 1
	check "lmr update onto another's id: EEXIST" expect_err EEXIST "another hosted LMR" lmr update --id 10 --new-id 2
	check "lmr free unknown: ENOENT" expect_err ENOENT "no LMR" lmr free --id 99
	check "lmr free --id 0: EINVAL" expect_err EINVAL "id 0" lmr free --id 0
	check "lmr free 10" litenl_ok lmr free --id 10
	check "lmr free 10 again: ENOENT" expect_err ENOENT "no LMR" lmr free --id 10
	check "grant list is empty" has '{"grants": []}' grant list -o json
	check "grant revoke unknown: ENOENT" expect_err ENOENT "no such grant" grant revoke --id 5
	# Quota: 512 MiB by default, 64 MiB + 100 B used.
	check "lmr alloc past the quota: ENOSPC" expect_err ENOSPC "quota" lmr alloc --id 4 --name q --size 449M
	check "lmr alloc up to the quota" litenl_ok lmr alloc --id 4 --name q --size 447M
	check "lmr free 4" litenl_ok lmr free --id 4
	check "debugfs lmrs = 2" counter_is lmrs 2
	# An agent owns the node: others get EBUSY.
	"$LITENL" agent --timeout 30 --ready-file /tmp/lmr-agent.ready > /dev/null &
	local agent=$!
	for _ in $(seq 50); do [[ -e /tmp/lmr-agent.ready ]] && break; sleep 0.1; done
	check "lmr alloc while another agent is attached: EBUSY" expect_err EBUSY "agent is attached" lmr alloc --id 5 --name a --size 4096
	kill "$agent"; wait "$agent"; rm -f /tmp/lmr-agent.ready
}

no_agent() {
	local t0 t1
	t0=${EPOCHREALTIME/./}
	check "lite_probe no-agent: ALLOC and MAP get ENOTCONN" "$PROBE" no-agent some.lmr
	t1=${EPOCHREALTIME/./}
	echo "        took $(((t1 - t0) / 1000)) ms"
	local out
	out=$("$PROBE" bogus-handle 2>&1)
	indent <<< "$out"
	check "UNMAP of an invented handle: EBADF" has_text "$out" "ok    UNMAP of an invented handle: EBADF"
	# READ is the data path's (lite_ops.c): checked once it is there.
	if grep -qw lite_ops_ioctl /proc/kallsyms; then
		check "READ with invented handles: EBADF" has_text "$out" "ok    READ with invented handles"
	fi
	counter upcalls_notconn
	check "debugfs upcalls_notconn counted ($COUNTER)" test "$COUNTER" -gt 0
	check "debugfs handles = 0" counter_is handles 0
}


# rdma link ... within 20 s (a hang would be a listener nobody destroys).
link_within() { timeout -k 1 20 rdma link "$@"; }
listens() { "$LITENL" lmr alloc --id 30 --name listens --size 4096 > /dev/null 2>&1; }

# A second netdev for rxe1 (rxe takes one device per netdev): dummy.ko from
# the guest kernel's modules that litevm unpacked (DUMMY_KO).
dummy_netdev() {
	{ [[ -e /sys/module/dummy ]] || insmod "$DUMMY_KO"; } &&
		ip link add lite-dummy0 type dummy && ip link set lite-dummy0 up &&
		ip addr add 10.99.0.1/24 dev lite-dummy0
}

device_churn() {
	local delay ok=1
	check "node set" litenl_ok node set --id "$GUEST" --incarnation 1 --addr "$ME"
	check "a dummy netdev for a second RDMA device" dummy_netdev
	check "rdma link add rxe1 (on the dummy netdev)" link_within add rxe1 type rxe netdev lite-dummy0
	check "rdma link delete rxe1 returns" link_within delete rxe1
	ip link delete lite-dummy0
	# A listener being installed when its device goes (lite_node.c).
	for delay in 0 0.05 0.1 0.2 0.4; do
		link_within delete rxe0 || { ok=0; echo "        delete rxe0 failed (delay $delay)"; break; }
		link_within add rxe0 type rxe netdev eth0 || { ok=0; echo "        add rxe0 failed"; break; }
		nap "$delay"
	done
	check "rxe0 deleted and added back 5 times, every delete returned" test "$ok" = 1
	# How often the window was hit (a listener lost while starting): 0 is
	# common, the work usually installs it before the next delete starts.
	echo "        listeners lost while starting: $(dmesg | grep -c 'lost its RDMA device while starting')"
	[[ -e /sys/class/infiniband/rxe0 ]] || link_within add rxe0 type rxe netdev eth0
	check "the node listens again (LMR_ALLOC finds the device within 20 s)" vm_wait_until 20 listens
	check "lmr free" litenl_ok lmr free --id 30
}

# lite_nl MODE ARGS...: raw generic netlink to lite.ko, for what litenl
# cannot do (one process, so no process start sits inside a measurement):
#   unreplied ID NAME SIZE  LMR_ALLOC from a socket whose receive buffer is
#                           full (SO_RCVBUF at its minimum, NODE_GET replies
#                           left unread), so its reply cannot be queued;
#                           prints "overrun" if the socket saw ENOBUFS
#   during ID NAME SIZE     LMR_ALLOC in a thread; once debugfs
#                           lmr_allocs_running reads 1, a NODE_GET and an
#                           nlctrl GETFAMILY on another socket; prints
#                           "before=G node_get=R ctrl=R after=G" (R: ok or
#                           blocked/error, G: the gauge around them)
lite_nl() {
	python3 - "$@" "LITE_CMD_NODE_GET=$LITE_CMD_NODE_GET" "LITE_CMD_LMR_ALLOC=$LITE_CMD_LMR_ALLOC" \
		"LITE_ATTR_LMR_ID=$LITE_ATTR_LMR_ID" "LITE_ATTR_NAME=$LITE_ATTR_NAME" \
		"LITE_ATTR_SIZE=$LITE_ATTR_SIZE" "LITE_ATTR_UID=$LITE_ATTR_UID" \
		"LITE_ATTR_GID=$LITE_ATTR_GID" "LITE_ATTR_MODE=$LITE_ATTR_MODE" << 'EOF'
import errno, socket, struct, sys, threading, time

mode, lmr_id, name, size = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), int(sys.argv[4])
env = {k: int(v) for k, v in (a.split("=") for a in sys.argv[5:])}
GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLMSG_ERROR = 0x10, 3, 2


def attr(kind, data):
    n = 4 + len(data)
    return struct.pack("HH", n, kind) + data + b"\0" * (-n % 4)


def msg(family, cmd, attrs, seq, flags=1):
    body = struct.pack("BBH", cmd, 1, 0) + attrs
    return struct.pack("IHHII", 16 + len(body), family, flags, seq, 0) + body


def sock():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
    s.bind((0, 0))
    return s


def getfamily(s, seq):
    s.send(msg(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, attr(2, b"lite\0"), seq))
    reply, off = s.recv(65536), 20
    if struct.unpack_from("H", reply, 4)[0] != GENL_ID_CTRL:
        return None
    while off + 4 <= len(reply):
        n, kind = struct.unpack_from("HH", reply, off)
        if kind == 1:
            return struct.unpack_from("H", reply, off + 4)[0]
        off += (n + 3) & ~3
    return None


def gauge():
    with open("/sys/kernel/debug/lite/lmr_allocs_running") as f:
        return int(f.read())


s = sock()
family = getfamily(s, 1)
alloc = (attr(env["LITE_ATTR_LMR_ID"], struct.pack("Q", lmr_id)) +
         attr(env["LITE_ATTR_NAME"], name + b"\0") +
         attr(env["LITE_ATTR_SIZE"], struct.pack("Q", size)) +
         attr(env["LITE_ATTR_UID"], struct.pack("I", 0)) +
         attr(env["LITE_ATTR_GID"], struct.pack("I", 0)) +
         attr(env["LITE_ATTR_MODE"], struct.pack("I", 0o600)))
if mode == "unreplied":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    for seq in range(8):
        s.send(msg(family, env["LITE_CMD_NODE_GET"], b"", 10 + seq))
    s.send(msg(family, env["LITE_CMD_LMR_ALLOC"], alloc, 99, 1 | 4))
    s.setblocking(False)
    overrun = False
    while True:
        try:
            s.recv(65536)
        except BlockingIOError:
            break
        except OSError as e:
            if e.errno != errno.ENOBUFS:
                raise
            overrun = True
    print("overrun" if overrun else "no overrun")
else:
    def allocate():  # the doit runs in this thread's sendmsg
        s.send(msg(family, env["LITE_CMD_LMR_ALLOC"], alloc, 2))
        s.recv(65536)
    worker = threading.Thread(target=allocate)
    worker.start()
    deadline = time.monotonic() + 30
    while gauge() != 1 and worker.is_alive() and time.monotonic() < deadline:
        time.sleep(0.001)
    before, b = gauge(), sock()
    b.send(msg(family, env["LITE_CMD_NODE_GET"], b"", 3))
    reply = b.recv(65536)
    node_get = "ok" if struct.unpack_from("H", reply, 4)[0] == family else "error"
    ctrl = "ok" if getfamily(b, 4) == family else "error"
    after = gauge()
    worker.join()
    print(f"before={before} node_get={node_get} ctrl={ctrl} after={after}")
EOF
}

# Commands go on while an LMR_ALLOC fills 447 MiB (about a second in a TCG
# guest): NODE_GET and nlctrl answer while the debugfs gauge
# lmr_allocs_running reads 1 before and after them. Without parallel_ops
# they wait for genl_mutex until the allocation is done, so the gauge
# reads 0 after. (Tried again, 3 times at most, if the allocation ended
# first.)
parallel_ops() {
	local try out
	for try in 1 2 3; do
		out=$(lite_nl during 20 par 468713472 2>&1)
		echo "        try $try: $out"
		litenl_ok lmr free --id 20
		[[ $out == *after=1 ]] && break
	done
	check "NODE_GET and nlctrl answered while an LMR_ALLOC was running" \
		test "$out" = "before=1 node_get=ok ctrl=ok after=1"
	check "debugfs lmr_allocs_running back to 0" counter_is lmr_allocs_running 0
}

not_listed() { ! "$LITENL" lmr list -o json | grep -q "\"lmr_id\": $1,"; }

# LMR_ALLOC whose reply cannot be delivered: nothing stays hosted.
alloc_reply_lost() {
	local out before
	counter lmrs
	before=$COUNTER
	out=$(lite_nl unreplied 41 lost 8388608 2>&1)
	echo "        $out"
	check "LMR_ALLOC from a socket whose receive buffer is full: overrun" test "$out" = overrun
	check "... and nothing hosted (debugfs lmrs still $before)" counter_is lmrs "$before"
	check "... lmr 41 is not listed" not_listed 41
	check "the same LMR_ALLOC from litenl succeeds" has "lmr 41:" lmr alloc --id 41 --name lost --size 8M
	check "lmr free 41" litenl_ok lmr free --id 41
}

# map_answers: the home checks a MAP answer against the LMR it hosts
# (lifetimes review #1) and counts a freed LMR's bytes until its pages go
# (#4). A python client is the node's agent: it allocates lmr 50 and answers
# lite_probe's MAPs with an id not hosted here, another key, another chunk
# address (ESTALE for agent and application, no grant installed) and the
# LMR as it is (installed). Then LMR_FREE while that grant holds the pages:
# lmrs falls, lmr_bytes does not; a MAP answer with the freed LMR's old
# chunks is ESTALE; the held grant READs ESTALE; its close sends the UNMAP
# upcall and lmr_bytes falls.
map_answers() {
	local rc=0
	LITE_NUMS=$LITE_NUMS python3 - "$PROBE" "$GUEST" << 'EOF' || rc=$?
import os, select, socket, struct, subprocess, sys, time

probe, me = sys.argv[1], int(sys.argv[2])
N = {k: int(v) for k, v in (a.split("=") for a in os.environ["LITE_NUMS"].split())}
A = lambda n: N["LITE_ATTR_" + n]
C = lambda n: N["LITE_CMD_" + n]
GENL_ID_CTRL, NLMSG_ERROR, NESTED = 0x10, 2, 0x8000
LMR, NAME, SIZE = 50, b"nl.map", 8192
failures, seq, upcalls = 0, 100, []


def check(ok, what):
    global failures
    print(("  ok    " if ok else "  FAIL  ") + what, flush=True)
    failures += 0 if ok else 1


def attr(kind, data):
    n = 4 + len(data)
    return struct.pack("HH", n, kind) + data + b"\0" * (-n % 4)


def attrs(buf, off=0):
    out = {}
    while off + 4 <= len(buf):
        n, kind = struct.unpack_from("HH", buf, off)
        if n < 4:
            break
        out.setdefault(kind & 0x3fff, []).append(buf[off + 4:off + n])
        off += (n + 3) & ~3
    return out


def u32(k, v): return attr(A(k), struct.pack("I", v))
def u64(k, v): return attr(A(k), struct.pack("Q", v))


def counter(name):
    with open("/sys/kernel/debug/lite/" + name) as f:
        return int(f.read())


s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
s.bind((0, 0))
s.setsockopt(270, 11, 1)  # SOL_NETLINK, NETLINK_EXT_ACK
s.setsockopt(270, 10, 1)  # NETLINK_CAP_ACK


def recv_one(timeout):
    """One netlink message: (type, seq, payload); upcalls are queued."""
    r, _, _ = select.select([s], [], [], timeout)
    if not r:
        return None
    data, off, msgs = s.recv(1 << 20), 0, []
    while off + 16 <= len(data):
        n, typ, flags, sq, pid = struct.unpack_from("IHHII", data, off)
        msgs.append((typ, sq, data[off + 16:off + n]))
        off += (n + 3) & ~3
    return msgs


def request(family, cmd, body):
    """Sends a request with an ACK: (errno, extack message, replies)."""
    global seq
    seq += 1
    payload = struct.pack("BBH", cmd, 1, 0) + body
    s.send(struct.pack("IHHII", 16 + len(payload), family, 1 | 4, seq, 0) + payload)
    replies, deadline = [], time.monotonic() + 30
    while time.monotonic() < deadline:
        for typ, sq, p in recv_one(1) or []:
            if typ == NLMSG_ERROR and sq == seq:
                err = -struct.unpack_from("i", p)[0]
                ext = attrs(p, 20)
                return err, (ext.get(1, [b""])[0].rstrip(b"\0").decode()), replies
            if typ == family and sq == seq:
                replies.append(attrs(p, 4))
            elif typ == family and p[0] == C("UPCALL"):
                upcalls.append(attrs(p, 4))
    raise SystemExit("no answer to command %d" % cmd)


def wait_upcall(family, kind, secs=10):
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        for i, u in enumerate(upcalls):
            if struct.unpack("I", u[A("UPCALL_KIND")][0])[0] == kind:
                return upcalls.pop(i)
        for typ, sq, p in recv_one(0.2) or []:
            if typ == family and p[0] == C("UPCALL"):
                upcalls.append(attrs(p, 4))
    return None


s.send(struct.pack("IHHII", 24 + 8, GENL_ID_CTRL, 1, 1, 0) + struct.pack("BBH", 3, 1, 0) + attr(2, b"lite\0"))
family = struct.unpack("H", attrs(recv_one(5)[0][2], 4)[1][0][:2])[0]
err, msg, _ = request(family, C("AGENT_ATTACH"), b"")
check(err == 0, "AGENT_ATTACH (errno %d)" % err)
err, msg, rep = request(family, C("LMR_ALLOC"), u64("LMR_ID", LMR) + attr(A("NAME"), NAME + b"\0") +
                        u64("SIZE", SIZE) + u32("UID", 0) + u32("GID", 0) + u32("MODE", 0o600))
check(err == 0 and rep, "LMR_ALLOC %d (errno %d %s)" % (LMR, err, msg))
key = struct.unpack("I", rep[0][A("MEMORY_KEY")][0])[0]
chunks = []
for c in attrs(rep[0][A("CHUNKS")][0]).get(A("CHUNK"), []):
    ca = attrs(c)
    chunks.append((struct.unpack("Q", ca[N["LITE_CHUNK_ATTR_ADDR"]][0])[0],
                   struct.unpack("Q", ca[N["LITE_CHUNK_ATTR_LENGTH"]][0])[0]))
bytes0 = counter("lmr_bytes")
grant_id = 1000


def map_case(what, lmr, key, chunks, want_err, want_map, keep=False):
    """A MAP from lite_probe, answered with this grant; checks both ends."""
    global grant_id
    grant_id += 1
    grants = counter("grants")
    p = subprocess.Popen([probe, "map-hold", NAME.decode()], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    up = wait_upcall(family, N["LITE_UPCALL_MAP"])
    if not up:
        check(False, what + ": no MAP upcall")
        p.kill()
        return None
    nest = b"".join(attr(A("CHUNK") | NESTED, attr(N["LITE_CHUNK_ATTR_ADDR"], struct.pack("Q", a)) +
                         attr(N["LITE_CHUNK_ATTR_LENGTH"], struct.pack("Q", n))) for a, n in chunks)
    body = (attr(A("UPCALL_ID"), up[A("UPCALL_ID")][0]) + u32("ERRNO", 0) +
            u64("GRANT_ID", grant_id) + u64("LMR_ID", lmr) + attr(A("NAME"), NAME + b"\0") +
            u32("NODE_ID", me) + u32("ACCESS", 1) + u64("EPOCH", 0) +
            u64("SIZE", sum(n for _, n in chunks)) + u32("MEMORY_KEY", key) +
            attr(A("CHUNKS") | NESTED, nest) + u64("INCARNATION", 1) + u64("GRANTED_AT_MS", 1))
    err, msg, _ = request(family, C("UPCALL_COMPLETE"), body)
    line = p.stdout.readline().strip()
    print("        %s: UPCALL_COMPLETE errno %d (%s); probe %s" % (what, err, msg, line), flush=True)
    check(err == want_err and line == "map: " + want_map and
          counter("grants") == grants + (0 if want_err else 1),
          "%s: the agent gets errno %d, the application %s, grants %+d" %
          (what, want_err, want_map, 0 if want_err else 1))
    if keep and not want_err:
        return p
    p.stdin.close()
    p.wait()
    return None


ESTALE = 116
bad = [(a + 4096, n) for a, n in chunks]
map_case("an LMR id not hosted here (51)", 51, key, chunks, ESTALE, "ESTALE")
map_case("lmr 50 with another key", LMR, key ^ 1, chunks, ESTALE, "ESTALE")
map_case("lmr 50 with another chunk address", LMR, key, bad, ESTALE, "ESTALE")
held = map_case("lmr 50 as it is", LMR, key, chunks, 0, "OK", keep=True)
held_id = grant_id
if held:
    lmrs = counter("lmrs")
    err, msg, _ = request(family, C("LMR_FREE"), u64("LMR_ID", LMR))
    check(err == 0, "LMR_FREE 50 while a grant on this node holds it (errno %d)" % err)
    check(counter("lmrs") == lmrs - 1, "... debugfs lmrs goes down by 1")
    check(counter("lmr_bytes") == bytes0,
          "... lmr_bytes stays (%d): the pages are held, and count against the quota" % counter("lmr_bytes"))
    map_case("lmr 50 after its free, old chunks", LMR, key, chunks, ESTALE, "ESTALE")
    held.stdin.write("go\n")
    held.stdin.flush()
    line = held.stdout.readline().strip()
    check(line == "read: ESTALE", "the held grant READs: ESTALE (%s)" % line)
    held.stdin.close()
    held.wait()
    up = wait_upcall(family, N["LITE_UPCALL_UNMAP"])
    check(up is not None and struct.unpack("Q", up[A("GRANT_ID")][0])[0] == held_id,
          "closing it sends the UNMAP upcall for its grant")
    deadline = time.monotonic() + 5  # the last grant put runs just after the upcall
    while counter("lmr_bytes") != bytes0 - SIZE and time.monotonic() < deadline:
        time.sleep(0.05)
    check(counter("lmr_bytes") == bytes0 - SIZE,
          "... and lmr_bytes falls by %d once the pages go (%d)" % (SIZE, counter("lmr_bytes")))
request(family, C("AGENT_DETACH"), b"")
sys.exit(failures)
EOF
	check "MAP answers for LMRs homed here are checked; a freed LMR counts until its pages go" test "$rc" -eq 0
}

# The key-mode section (guest functions, key_modes, key_mode_cost).
# shellcheck source=tests/vm/lmr_keymodes.bash
source "$(dirname "${BASH_SOURCE[0]}")/lmr_keymodes.bash"

insmod_lite() { check "insmod lite.ko" insmod "$LITE_BIN/kmod/lite.ko"; }
lmr_hosted() { check "debugfs lmrs = $1" counter_is lmrs "$1"; }

module_params() {
	local ko=$LITE_BIN/kmod/lite.ko p
	for p in upcall_timeout_ms=99 upcall_timeout_ms=600001 lmr_quota_mib=0 lmr_quota_mib=1048577; do
		check "insmod $p is refused" insmod_refused "$ko" "$p"
	done
	check "insmod lmr_quota_mib=8 upcall_timeout_ms=100" insmod "$ko" lmr_quota_mib=8 upcall_timeout_ms=100
	check "node set" litenl_ok node set --id "$GUEST" --incarnation 2 --addr "$ME"
	check "lmr alloc 9 MiB with an 8 MiB quota: ENOSPC" expect_err ENOSPC "quota" lmr alloc --id 1 --name a --size 9M
	check "lmr alloc 8 MiB" litenl_ok lmr alloc --id 1 --name a --size 8M
	check "rmmod lite" rmmod lite
}

node_set_again() {
	check "node set" litenl_ok node set --id "$GUEST" --incarnation 3 --addr "$ME"
}

# ---------------------------------------------------------------------------
# Host side, inside the cluster's network namespace.
# ---------------------------------------------------------------------------
# cmd_num NAME: the number of a LITE_CMD_* command, from the uapi header.
cmd_num() {
	awk -v name="$1" '/^enum lite_genl_cmd/ {on = 1; n = -1}
		on && $1 ~ /^LITE_CMD_/ {n++; sub(",", "", $1); if ($1 == name) {print n; exit}}' \
		"$VM_REPO/kmod/include/uapi/lite_genl.h"
}

# lite_nums: NAME=NUMBER for every command, attribute, chunk attribute and
# upcall kind of the uapi header (for the python agent in map_answers).
lite_nums() {
	awk '/^enum (lite_genl_cmd|lite_genl_attr|lite_chunk_attr|lite_upcall_kind) / {on = 1; n = -1; next}
		on && /^};/ {on = 0}
		on && $1 ~ /^LITE_/ {
			name = $1; sub(",", "", name)
			if ($2 == "=") { if ($3 !~ /^[0-9]+,?$/) next; v = $3; sub(",", "", v); n = v + 0 } else n++
			printf "%s=%d ", name, n
		}' "$VM_REPO/kmod/include/uapi/lite_genl.h"
}

host_env() {  # VM_GUEST_ENV's values
	LITE_ATTR_NODE_ID=$(attr_num LITE_ATTR_NODE_ID)
	LITE_ATTR_MODE=$(attr_num LITE_ATTR_MODE)
	LITE_ATTR_UID=$(attr_num LITE_ATTR_UID)
	LITE_ATTR_GID=$(attr_num LITE_ATTR_GID)
	LITE_ATTR_LMR_ID=$(attr_num LITE_ATTR_LMR_ID)
	LITE_ATTR_NAME=$(attr_num LITE_ATTR_NAME)
	LITE_ATTR_SIZE=$(attr_num LITE_ATTR_SIZE)
	LITE_CMD_NODE_GET=$(cmd_num LITE_CMD_NODE_GET)
	LITE_CMD_LMR_ALLOC=$(cmd_num LITE_CMD_LMR_ALLOC)
	LITE_NUMS=$(lite_nums)
	local kv
	kv=$("$VM_REPO/tools/kver.sh")
	DUMMY_KO=${LITE_VM_CACHE:-/var/cache/lite-vm}/$kv/root/lib/modules/$kv/kernel/drivers/net/dummy.ko
}

host_main() {
	host_env

	echo "LMR memory over netlink (guest 1), no agent (guest 2):"
	guest 1 lmr_netlink
	guest 2 no_agent
	echo "rmmod with hosted LMRs, module parameters (guest 1):"
	guest 1 rmmod_lite "with hosted LMRs"
	guest 1 module_params
	guest 3 no_agent
	echo "netlink commands in parallel (guest 1), RDMA device churn (guest 3):"
	guest 1 insmod_lite
	guest 1 node_set_again
	guest 1 parallel_ops
	guest 1 alloc_reply_lost
	guest 1 map_answers
	guest 3 device_churn
	rmmod_under_writes
	key_modes
}

# Guest 2 writes into an LMR homed on guest 1 (litemgr, agents on guests 1
# and 2); guest 1 runs rmmod lite (no file open there). Its RC QPs go before
# its LMR pages, so the writer's operations fail; none lands in freed pages.
# The guests run with page_poison=1 (VM_APPEND): a write that landed in a
# freed page is logged as "pagealloc: memory corruption" when the page is
# handed out again, and litevm fails the run on that line. (Debian's kernel
# has no debug_pagealloc, which would catch it at the write itself.)
rmmod_under_writes() {
	local job rc=0 out
	echo "rmmod lite on guest 1 while guest 2 writes into an LMR homed there:"
	# shellcheck source=tools/vm/litecluster.sh
	source "$VM_REPO/tools/vm/litecluster.sh"
	LITE_VM_GUESTS=2 lc_start 10000 || { vm_fail "cluster did not come up"; return; }
	job=$(litevm spawn -g 2 -t 90 -- "$LITE_BIN/tools/bench/lite-bench --create lmr.rmmod" \
		"--home $(lc_node_name 1) --size 1M --ops write_bw --bw_threads 1 --bw_size 64K --bw_seconds 60")
	check "guest 2 is writing (its debugfs ops/bytes_written grows)" \
		vm_wait_until 60 litevm exec -g 2 -t 20 -- \
		"test \$(cat /sys/kernel/debug/lite/ops/bytes_written) -gt 1048576"
	guest 1 lmr_hosted 1
	# The agent first: no netlink user left; the manager keeps the grant.
	litevm kill -g 1 "${LC_AGENT_JOBS[1]}" > /dev/null 2>&1 || true
	unset 'LC_AGENT_JOBS[1]'
	guest 1 rmmod_lite "on the home of an LMR another node is writing"
	out=$(litevm wait -g 2 -t 60 "$job" 2>&1) || rc=$?
	indent <<< "$out"
	check "the writer failed with an error within 60 s (status $rc, not 0 or 124)" test "$rc" -eq 1
	check "... naming the write" has_text "$out" "lite-bench: write (bandwidth)"
	lc_stop
}

# LMR_ONLY=FUNCTION tests/vm/lmr.sh: only that host-side function (e.g.
# key_modes, or key_mode_cost, the measurement docs/datapath.md quotes).
if [[ -n ${LMR_ONLY-} && ${1-} == --inside ]]; then
	host_main() {
		host_env
		"$LMR_ONLY"
	}
fi
vm_main "$@"
