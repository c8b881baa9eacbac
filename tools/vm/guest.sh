#!/bin/bash
# Runs inside each LITE guest, chrooted into the host's filesystem (read-only),
# started by the initramfs. Brings up the network and Soft-RoCE, loads lite.ko
# if asked, reports readiness, then serves commands the host drops into the
# control folder (see `litevm exec`). Parameters come from the kernel command
# line: litevm.id, litevm.ip (address/prefix), litevm.module (path or empty).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8
ctl=/run/litevm

arg() { sed -n "s/.*\blitevm\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
fail() {
	echo "$*" > "$ctl/failed"
	echo "litevm-guest: FATAL: $*" > /dev/console
	exec sleep infinity
}

id=$(arg id)
ip=$(arg ip)
module=$(arg module)
own_root=$(arg root)  # 1: the guest booted a root of its own with systemd and udev

hostname "litevm$id"
# Userspace processes killed by a signal are not logged by the kernel: with
# -R, perftest's client can lose a race against its own server (data QPs
# are connected after the handshake, on a second listen), retry, and crash
# in librdmacm's cleanup; that line would read as a kernel "general
# protection" fault. Kernel faults, BUGs and Oopses are logged regardless.
echo 0 > /proc/sys/debug/exception-trace
ip link set lo up || fail "cannot bring up lo"
ip link set eth0 up || fail "no eth0 (virtio-net missing?)"
ip addr add "$ip" dev eth0 || fail "cannot set $ip on eth0"
rdma link add rxe0 type rxe netdev eth0 || fail "cannot create Soft-RoCE device rxe0"

# rdma_cm addresses peers by the IPv4-mapped RoCE GID (::ffff:a.b.c.d),
# which rxe adds from a work item some time after the address: a connection
# request that arrives before it exists is rejected. Wait for that exact GID.
IFS=. read -r a b c d <<< "${ip%/*}"
gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
for _ in $(seq 300); do
	grep -qx "$gid" /sys/class/infiniband/rxe0/ports/1/gids/* 2> /dev/null && break
	sleep 0.1
done
grep -qx "$gid" /sys/class/infiniband/rxe0/ports/1/gids/* ||
	fail "rxe0 has no RoCE GID $gid for ${ip%/*} after 30 s"
# The port is ACTIVE once the NIC has its link (at once on virtio-net; an
# emulated e1000e negotiates for a few seconds).
for _ in $(seq 300); do
	[ "$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)" = "4: ACTIVE" ] && break
	sleep 0.1
done
[ "$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)" = "4: ACTIVE" ] ||
	fail "rxe0 port is not ACTIVE: $(cat /sys/class/infiniband/rxe0/ports/1/state)"

if [ -n "$module" ]; then
	insmod "$module" 2> "$ctl/insmod.err" || fail "insmod $module: $(cat "$ctl/insmod.err")"
fi

mkdir -p "$ctl/req" "$ctl/jobs"
cut -d' ' -f1 /proc/uptime > "$ctl/ready"
echo "litevm-guest: ready" > /dev/console

# Serve commands: the host renames a script into req/; it is moved to jobs/
# and run in the background, so long-running servers and their clients can
# run side by side. Output and status land next to it. `read -t` on a FIFO
# is the idle wait: no process is forked while nothing happens.
idle=/tmp/litevm-idle
mkfifo "$idle"
while :; do
	for req in "$ctl"/req/*.sh; do
		[ -e "$req" ] || continue
		job=${req##*/}
		job=${job%.sh}
		mv "$req" "$ctl/jobs/$job.sh" || continue
		(
			cd / || exit
			# Sourced in a subshell, not run by a new bash: the job
			# execs timeout, so no bash is started just to read it
			# (each exec costs about 70 ms under emulation).
			# shellcheck source=/dev/null  # written by litevm's submit
			(. "$ctl/jobs/$job.sh") > "$ctl/jobs/$job.out" 2> "$ctl/jobs/$job.err" < /dev/null &
			echo $! > "$ctl/jobs/$job.pid"  # for `litevm kill`
			wait $!
			# One write of a few bytes, no mv (another exec): the
			# host waits for the file to be non-empty.
			echo $? > "$ctl/jobs/$job.rc"
		) &
	done
	# lite.ko makes /dev/lite 0660 root:root (no udev here): each new one is
	# opened to the suites' users. A guest booting its own root (--root) runs
	# udev, whose rule gives the device its group: that is left alone.
	[[ -z $own_root && /dev/lite -nt /run/lite-vm.mode ]] && chmod 0666 /dev/lite && : > /run/lite-vm.mode
	read -rt 0.05 <> "$idle"
done
