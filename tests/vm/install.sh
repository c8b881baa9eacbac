#!/bin/bash
# The install test (issue #14): LITE as an operator installs it, on a clean
# Debian 12 root, brought up by its own systemd units.
#  - a clean bookworm root (tools/vm/debroot: debootstrap's minbase, systemd,
#    udev, the guests' kernel headers) gets the seven packages from
#    tools/package.sh with `apt-get install ./*.deb`, which pulls their
#    dependencies (dkms, gcc, iproute2, python3-cffi, ...) from Debian's
#    archive; DKMS builds lite.ko for the guests' kernel while it installs;
#  - an application is built against the installed liblite-dev with
#    `pkg-config --cflags --libs lite` and nothing else (tests/pkg/app.c,
#    app.cc, compiled in that root);
#  - two guests boot that root with systemd as PID 1 (litevm run --root);
#    each is configured as docs/deploy.md says (certificates, the shipped
#    /etc/lite/*.conf with only the lines that name this cluster changed) and
#    started with `systemctl enable --now`: litemgr on node1, liteagent on
#    both, which loads the DKMS-built lite.ko itself; /dev/lite belongs to
#    group lite (the udev rule);
#  - as a user in group lite: an LMR allocated on node2 from node1, written
#    on node1 and read back on node2; the C and C++ programs run across the
#    nodes; a user outside the group cannot open /dev/lite;
#  - litemgr's and liteagent's Prometheus endpoints answer as the units run
#    them: members alive, RPC calls, lite.ko's counters (debugfs under the
#    agent's sandbox);
#  - the upgrade's module reload on node1: with an application holding
#    /dev/lite, `rmmod lite` (after `systemctl stop liteagent`) is refused;
#    once it is gone, clean, and `systemctl start liteagent` loads lite.ko
#    again and node1 rejoins;
#  - purge on a running node (node2, dpkg --purge): its agent stopped,
#    lite.ko gone from the disk, its files and the group gone;
#  - after the cluster, `apt-get purge` of every package and `autoremove
#    --purge` of what they pulled in leave the root exactly as it was: the
#    same paths with the same owners and modes (apt's and dpkg's own records
#    and logs aside).
# Usage: tests/vm/install.sh [--keep]   (needs root, tools/setup.sh and
# Debian's archive; --keep leaves the work folder)
#   LITE_BIN=DIR   package the binaries built in DIR instead of building them
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/vm/lib.sh
source "$here/lib.sh"
# shellcheck source=tools/vm/debroot
source "$repo/tools/vm/debroot"  # in_root
VM_SUITE=install
packages=(lite-dkms litemgr liteagent litectl liblite0 liblite-dev python3-lite)
apt_cache=${LITE_VM_CACHE:-/var/cache/lite-vm}/apt-archives
kv=$("$repo/tools/kver.sh")

# snapshot ROOT: every path with its owner, group and mode, sorted; what
# apt and dpkg keep for themselves (their state, caches, logs) and the
# mount points aside.
snapshot() {
	(cd "$1" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev \
		-o -path ./run -o -path ./tmp -o -path ./var/tmp -o -path ./var/log \
		-o -path ./var/cache/apt -o -path ./var/cache/debconf -o -path ./var/cache/ldconfig \
		-o -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./mnt \) -prune \
		-o -printf '%p %U:%G %m\n' | LC_ALL=C sort)
}

# installed ROOT: the names of the packages installed in ROOT, sorted.
installed() {
	# shellcheck disable=SC2016 # dpkg-query's fields, not the shell's
	in_root "$1" dpkg-query -W -f '${db:Status-Status} ${Package}\n' |
		sed -n 's/^installed //p' | LC_ALL=C sort
}

# apt_in_root ROOT ARGS...: apt-get in ROOT, the packages in /mnt, its
# downloads kept in $apt_cache for the next run.
apt_in_root() {
	local root=$1 rc=0
	shift
	mkdir -p "$apt_cache/partial"
	mount --bind "$apt_cache" "$root/var/cache/apt/archives"
	in_root "$root" apt-get -q -y -o Dpkg::Use-Pty=0 "$@" || rc=$?
	umount "$root/var/cache/apt/archives"
	return "$rc"
}

# conf_flags_listed ROOT DAEMON: each flag in DAEMON's shipped configuration
# file (a line `--flag=...` or a commented-out `#--flag=...`) is listed by
# the installed `DAEMON --help`; the missing ones are named.
conf_flags_listed() {
	local help flag missing=""
	help=$(in_root "$1" "/usr/sbin/$2" --help 2>&1) || true
	while read -r flag; do
		grep -qE "^ +$flag " <<< "$help" || missing+=" $flag"
	done < <(sed -n 's/^#\{0,1\}\(--[a-z_]*\)=.*/\1/p' "$1/etc/lite/$2.conf")
	[[ -z $missing ]] || { echo "        not in --help:$missing"; return 1; }
}

# postinst_refuses ROOT TEXT SETUP: after the shell command SETUP in ROOT
# (an account made the way a login account is), `litemgr.postinst
# configure` fails and says TEXT.
postinst_refuses() {
	local out rc=0
	in_root "$1" sh -c "$3" || { echo "        setup failed: $3"; return 1; }
	out=$(in_root "$1" /var/lib/dpkg/info/litemgr.postinst configure 2>&1) || rc=$?
	echo "        $out"
	((rc != 0)) && [[ $out == *"$2"* ]]
}

# --- before the cluster: the root, the packages, the programs, the files ----

prepare() {
	local work=$1 root=$1/root debs=$1/debs
	echo "== the packages (tools/package.sh)"
	if ! tools/package.sh --no-lintian --out "$debs" > "$work/package.log" 2>&1; then
		vm_fail "tools/package.sh"
		tail -20 "$work/package.log" | indent
		return 1
	fi
	sed -n 's/^package: built /        /p' "$work/package.log"
	echo "== a clean Debian 12 root (tools/vm/debroot)"
	tools/vm/debroot "$root"
	snapshot "$root" > "$work/before.list"
	installed "$root" > "$work/before.pkgs"
	echo "        $(wc -l < "$work/before.list") paths before"

	echo "== apt-get install ./*.deb in it (dependencies from Debian, DKMS builds lite.ko)"
	mount --bind "$debs" "$root/mnt"
	local rc=0 f in_mnt=()
	for f in "$debs"/*.deb; do in_mnt+=("/mnt/${f##*/}"); done
	apt_in_root "$root" install --no-install-recommends "${in_mnt[@]}" > "$work/install.log" 2>&1 || rc=$?
	umount "$root/mnt"
	check "apt-get install of ${packages[*]}" test "$rc" = 0 ||
		{ tail -20 "$work/install.log" | indent; return 1; }
	local p
	for p in "${packages[@]}"; do
		check "$p is installed" in_root "$root" sh -c "dpkg-query -W -f '\${db:Status-Status}' $p | grep -qx installed"
	done
	check "DKMS built and installed lite.ko for $kv" \
		out_has "installed" in_root "$root" dkms status -m lite -k "$kv"
	check "lite.ko is in /lib/modules/$kv/updates/dkms" \
		test -f "$root/lib/modules/$kv/updates/dkms/lite.ko"
	check "lite.ko's vermagic is $kv" \
		out_has "$kv SMP" modinfo -F vermagic "$root/lib/modules/$kv/updates/dkms/lite.ko"

	local d
	for d in litemgr liteagent; do
		check "every flag in /etc/lite/$d.conf is one '$d --help' lists" \
			conf_flags_listed "$root" "$d"
	done

	echo "== the accounts: litemgr's own system user and group; login accounts of those names refused"
	# shellcheck disable=SC2016 # expanded in the root
	check "litemgr is a system user (uid < 1000) in its own group litemgr, not in group lite" \
		in_root "$root" sh -c '[ "$(id -u litemgr)" -lt 1000 ] && [ "$(id -gn litemgr)" = litemgr ] &&
			! id -Gn litemgr | grep -qw lite'
	check "litemgr.postinst refuses a non-system group litemgr" \
		postinst_refuses "$root" "not a system group" \
		'deluser --system --quiet litemgr 2> /dev/null && delgroup --system --quiet litemgr && groupadd litemgr'
	check "litemgr.postinst refuses a login user litemgr" \
		postinst_refuses "$root" "not a system user" \
		'groupdel litemgr && groupadd -r litemgr && useradd -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 -g litemgr litemgr'
	# shellcheck disable=SC2016 # expanded in the root
	check "with the login user gone, litemgr.postinst makes the system user again" \
		in_root "$root" sh -c 'userdel litemgr && { ! getent group litemgr > /dev/null || groupdel litemgr; } &&
			/var/lib/dpkg/info/litemgr.postinst configure && [ "$(id -u litemgr)" -lt 1000 ]'
	# The shadow tools' backups of files the clean root had none of go
	# (purge must leave the root as it was).
	for f in etc/subuid- etc/subgid-; do
		grep -q "^\./$f " "$work/before.list" || rm -f "${root:?}/$f"
	done

	echo "== programs built against the installed liblite-dev: pkg-config --cflags --libs lite"
	rc=0
	apt_in_root "$root" install --no-install-recommends pkg-config g++ >> "$work/install.log" 2>&1 || rc=$?
	# Pulled in for the test: autoremove takes them with the rest.
	in_root "$root" apt-mark auto pkg-config g++ > /dev/null || rc=$?
	check "pkg-config and g++ installed" test "$rc" = 0
	mkdir -p "$root/opt/lite-apps"
	cp tests/pkg/app.c tests/pkg/app.cc "$root/opt/lite-apps/"
	# shellcheck disable=SC2016 # expanded in the root
	check "the C and C++ programs compile and link with the installed files only" \
		in_root "$root" sh -c 'cd /opt/lite-apps && f=$(pkg-config --cflags --libs lite) &&
			echo "        pkg-config: $f" &&
			cc -std=c11 -Wall -Werror -o app app.c $f &&
			c++ -std=c++20 -Wall -Werror -o app_cc app.cc $f'

	echo "== configuration (docs/deploy.md): certificates and the shipped files, edited"
	local tls=$work/tls g name
	"$repo/cmd/litecerts" "$tls" ca > /dev/null
	"$repo/cmd/litecerts" "$tls" manager > /dev/null
	"$repo/cmd/litecerts" "$tls" operator ops > /dev/null
	for g in 1 2; do "$repo/cmd/litecerts" "$tls" node "node$g" > /dev/null; done
	(umask 077 && openssl rand -hex 32 > "$tls/pairkey")
	for g in 1 2; do
		name=node$g
		local etc=$work/g$g/etc/lite
		mkdir -p "$etc/tls"
		cp "$tls/ca.crt" "$tls/authz" "$etc/tls/"
		cp "$tls/$name.crt" "$etc/tls/node.crt"
		(umask 077 && cp "$tls/$name.key" "$etc/tls/node.key")
		# Only the lines that name this cluster change; a shipped file
		# whose lines moved fails here, not later in a daemon.
		sed -e "s|^--manager=.*|--manager=$(guest_ip 1):7420|" \
			-e "s|^#--node_name=.*|--node_name=$name|" \
			-e "s|^--rdma_address=.*|--rdma_address=$(guest_ip "$g"):18600|" \
			"$root/etc/lite/liteagent.conf" > "$etc/liteagent.conf"
		check "$name: liteagent.conf names the manager, the node and its RDMA address" \
			grep -qx -e "--node_name=$name" "$etc/liteagent.conf"
		grep -qx -e "--manager=$(guest_ip 1):7420" "$etc/liteagent.conf" ||
			vm_fail "$name: the shipped liteagent.conf has no --manager= line"
		grep -qx -e "--rdma_address=$(guest_ip "$g"):18600" "$etc/liteagent.conf" ||
			vm_fail "$name: the shipped liteagent.conf has no --rdma_address= line"
	done
	# node1 is also the manager's machine: the shipped litemgr.conf as it is.
	cp "$tls/litemgr.crt" "$tls/ops.crt" "$work/g1/etc/lite/tls/"
	(umask 077 && cp "$tls/litemgr.key" "$tls/pairkey" "$tls/ops.key" "$work/g1/etc/lite/tls/")
}

# guest_ip N: guest N's address, as litevm gives it.
guest_ip() { "$repo/tools/vm/litevm" ip "$1"; }

# --- in the cluster ---------------------------------------------------------

g_exec() {  # g_exec GUEST SECS CMD: CMD in the guest, its output
	local g=$1 secs=$2
	shift 2
	litevm exec -g "$g" -t "$secs" -- "$*"
}
as_alice() { echo "setpriv --reuid=alice --regid=alice --init-groups $*"; }
litectl_ops() {
	echo "litectl --manager=127.0.0.1:7420 --tls_cert=/etc/lite/tls/ops.crt" \
		"--tls_key=/etc/lite/tls/ops.key --tls_ca=/etc/lite/tls/ca.crt $*"
}

# quiet COMMAND...: COMMAND's output only if it fails.
quiet() {
	local out
	out=$("$@" 2>&1) || { indent <<< "$out"; return 1; }
}

# unit_up GUEST UNIT: UNIT is active; its journal's last lines if not.
unit_up() {
	g_exec "$1" 30 "systemctl is-active --quiet $2" && return 0
	g_exec "$1" 30 "systemctl status --no-pager -n 0 $2; journalctl --no-pager -n 25 -u $2" 2>&1 | indent
	return 1
}

inside() {
	local work=$1 g job1 job2
	echo "== two guests booted the root with systemd: configure and start (docs/deploy.md)"
	for g in 1 2; do
		cp -a "$work/g$g" "$LITE_VM_STATE/g$g/ctl/provision"
		check "node$g: systemd is PID 1 and the system is up" \
			out_has "systemd" g_exec "$g" 120 'systemctl is-system-running --wait >/dev/null; cat /proc/1/comm'
		check "node$g: the configuration copied into /etc/lite" \
			g_exec "$g" 30 'cp -a /run/litevm/provision/etc/lite/. /etc/lite/ && useradd -m -G lite alice && useradd -m bob'
	done
	check "node1: litemgr's key and the pair key belong to user litemgr" \
		g_exec 1 30 'chown litemgr:litemgr /etc/lite/tls/litemgr.key /etc/lite/tls/pairkey'
	check "node1: systemctl enable --now litemgr" quiet g_exec 1 120 'systemctl enable --now litemgr 2>&1'
	check "node1: litemgr is active" unit_up 1 litemgr
	check "node1: litemgr's status line (sd_notify)" \
		out_has "serving" g_exec 1 30 'systemctl show -p StatusText --value litemgr'
	job1=$(litevm spawn -g 1 -t 180 -- 'systemctl enable --now liteagent 2>&1')
	job2=$(litevm spawn -g 2 -t 180 -- 'systemctl enable --now liteagent 2>&1')
	check "node1: systemctl enable --now liteagent" quiet litevm wait -g 1 -t 200 "$job1"
	check "node2: systemctl enable --now liteagent" quiet litevm wait -g 2 -t 200 "$job2"
	for g in 1 2; do
		check "node$g: liteagent is active" unit_up "$g" liteagent
		check "node$g: liteagent's status line (sd_notify)" \
			out_has "" g_exec "$g" 30 'systemctl show -p StatusText --value liteagent | grep .'
		check "node$g: the unit loaded the DKMS-built lite.ko" \
			out_has "/lib/modules/$kv/updates/dkms/lite.ko" g_exec "$g" 30 'grep -q "^lite " /proc/modules && modinfo -n lite'
		check "node$g: /dev/lite belongs to group lite, mode 0660 (the udev rule)" \
			out_has "lite 660" g_exec "$g" 30 'stat -c "%G %a" /dev/lite'
	done
	check "litectl nodes on node1: node1 and node2 ALIVE" vm_wait_until 60 nodes_alive
	sandboxes
	echo "== a user in group lite: memory across nodes"
	check "node1 (alice): an LMR on node2, written" \
		g_exec 1 60 "$(as_alice liteop alloc install.lmr 1M --home node2) && $(as_alice liteop write install.lmr 0 --pattern 7 --length 1M)"
	check "node2 (alice): the bytes read back" \
		g_exec 2 60 "$(as_alice liteop verify install.lmr 0 --pattern 7 --length 1M)"
	check "node1 (bob, not in group lite): /dev/lite refused" \
		fails_with EACCES g_exec 1 30 'setpriv --reuid=bob --regid=bob --init-groups liteop node'
	check "node1 (alice): the C program, its LMR on node2" \
		out_has "C app: read back" g_exec 1 60 "$(as_alice /opt/lite-apps/app pkg.c node2)"
	check "node2 (alice): the C++ program, its lock on node1" \
		out_has "C++ app: locked" g_exec 2 60 "$(as_alice /opt/lite-apps/app_cc pkg.cc node1)"
	check "node1 (alice): the LMR freed" g_exec 1 60 "$(as_alice liteop free install.lmr)"

	echo "== what to watch: the daemons' Prometheus endpoints, as the units run them"
	local mgr agent
	mgr=$(scrape 1 9742) || true
	check "node1: litemgr's /metrics: two members alive" \
		has_line "$mgr" 'lite_manager_members{state="alive"} 2'
	check "node1: litemgr's /metrics: AllocLmr calls answered OK" \
		has_match "$mgr" '^lite_manager_rpc_calls_total\{service="lite.v1.ClusterManager",method="AllocLmr",code="OK"\} [1-9]'
	agent=$(scrape 2 9743) || true
	check "node2: liteagent's /metrics: connected to the manager" \
		has_line "$agent" 'lite_agent_manager_connection_state{state="connected"} 1'
	check "node2: liteagent's /metrics: lite.ko's counters readable under the unit's sandbox" \
		has_line "$agent" 'lite_kernel_counters_up 1'
	check "node2: liteagent's /metrics: lite.ko counted the reads of 1 MiB" \
		has_match "$agent" '^lite_kernel_bytes_total\{direction="read"\} [1-9][0-9]{6}'

	echo "== the upgrade's module reload (docs/deploy.md, \"Upgrade\"), on node1"
	local holder
	holder=$(litevm spawn -g 1 -t 300 -- "$(as_alice sh -c "'exec sleep 300 3</dev/lite'")")
	check "node1: an application holds /dev/lite" \
		vm_wait_until 30 g_exec 1 10 "ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q ' -> /dev/lite'"
	check "node1: systemctl stop liteagent" quiet g_exec 1 60 'systemctl stop liteagent'
	check "node1: rmmod lite refused while the application holds /dev/lite" \
		g_exec 1 30 '! rmmod lite 2>/dev/null && grep -q "^lite " /proc/modules'
	litevm kill -g 1 "$holder" > /dev/null 2>&1 || true
	check "node1: the application gone, rmmod lite is clean" \
		g_exec 1 30 'rmmod lite && ! grep -q "^lite " /proc/modules'
	check "node1: systemctl start liteagent loads lite.ko again" \
		quiet g_exec 1 120 'systemctl start liteagent && grep -q "^lite " /proc/modules'
	check "litectl nodes on node1: node1 ALIVE again, beside node2" vm_wait_until 60 nodes_alive

	echo "== purge on a running node (node2)"
	local t0=$SECONDS
	# dpkg, not apt: apt would first parse Debian's package lists, minutes
	# under emulation; the maintainer scripts are the same.
	check "node2: dpkg --purge ${packages[*]}" \
		g_exec 2 400 "dpkg --purge ${packages[*]} > /tmp/purge.log 2>&1 || { tail -20 /tmp/purge.log; exit 1; }"
	vm_took "the purge" "$t0"
	check "node2: liteagent stopped (prerm), its unit file gone" \
		g_exec 2 30 '! systemctl is-active --quiet liteagent && test ! -e /lib/systemd/system/liteagent.service'
	check "node2: the link 'systemctl enable' made is gone (purge)" \
		g_exec 2 30 'test ! -L /etc/systemd/system/multi-user.target.wants/liteagent.service'
	check "node2: no lite.ko on the disk (DKMS), the module still loaded" \
		g_exec 2 30 "test -z \"\$(find /lib/modules -name 'lite.ko*')\" && grep -q '^lite ' /proc/modules"
	check "node2: the packages' files in /etc/lite gone, the operator's certificates kept" \
		g_exec 2 30 'test ! -e /etc/lite/liteagent.conf && test ! -e /etc/lite/litemgr.conf && test -f /etc/lite/tls/node.crt'
	check "node2: no user or group lite or litemgr" \
		g_exec 2 30 '! getent passwd lite litemgr && ! getent group lite litemgr'
	check "litectl nodes on node1: node2 gone (LEFT or FAILED)" vm_wait_until 30 node2_gone
}

# unit_props GUEST UNIT WANT: `systemctl show` of UNIT has every line of
# WANT (PROPERTY=VALUE, one per line); the ones it does not are shown.
unit_props() {
	local have line missing=0
	have=$(g_exec "$1" 30 "systemctl show $2") || return 1
	while IFS= read -r line; do
		grep -qxF -- "$line" <<< "$have" && continue
		echo "        want $line, have $(grep -E "^${line%%=*}=" <<< "$have" | cut -c1-60)"
		missing=1
	done <<< "$3"
	return "$missing"
}

# sandboxes: the units' sandbox as systemd runs it (review cp-2026-11-28 M7,
# L3, L14), while both daemons work (the checks around this one).
sandboxes() {
	echo "== the daemons' sandboxes, as systemd runs them"
	local both='ProtectProc=invisible
RestrictSUIDSGID=yes
UMask=0077
LimitCORE=0
SystemCallErrorNumber=1'
	check "node1: liteagent's unit: DevicePolicy=closed, ProtectKernelModules, ProtectProc, RestrictSUIDSGID, UMask, LimitCORE" \
		unit_props 1 liteagent "DevicePolicy=closed
ProtectKernelModules=yes
$both"
	check "node1: litemgr's unit: user and group litemgr, ProtectProc, RestrictSUIDSGID, UMask, LimitCORE" \
		unit_props 1 litemgr "User=litemgr
Group=litemgr
PrivateDevices=yes
$both"
	# shellcheck disable=SC2016 # expanded in the guest
	check "node1: litemgr's process runs as user litemgr" \
		out_has "litemgr" g_exec 1 30 'stat -c %U /proc/$(systemctl show -p MainPID --value litemgr)'
	# The agent's attack (M7): uid 0 opens a block device (root:disk 0660).
	# A root shell with every capability, moved into the agent's cgroup,
	# gets the unit's device policy: the same open fails there.
	# shellcheck disable=SC2016 # expanded in the guest
	check "node1: a block device root reads outside is refused inside liteagent's cgroup (EPERM)" \
		out_has "Operation not permitted" g_exec 1 60 'f=/root/blk.img && truncate -s 1M $f &&
			d=$(losetup -f --show $f) && head -c 512 $d > /dev/null &&
			cg=/sys/fs/cgroup$(systemctl show -p ControlGroup --value liteagent) &&
			{ sh -c "echo \$\$ > $cg/cgroup.procs && head -c 512 $d > /dev/null" 2>&1; rc=$?; } ;
			losetup -d $d; rm -f $f; [ "${rc:-0}" != 0 ]'
}

# scrape GUEST PORT: the guest's http://127.0.0.1:PORT/metrics (bash's
# /dev/tcp: the node has no HTTP client), without the HTTP header.
scrape() {
	g_exec "$1" 30 "exec 3<>/dev/tcp/127.0.0.1/$2 && printf 'GET /metrics HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3" |
		tr -d '\r' | sed '1,/^$/d'
}
# has_line TEXT LINE, has_match TEXT ERE: TEXT has that line, or a line
# matching ERE; the family's lines if not.
has_line() {
	grep -qxF -- "$2" <<< "$1" && return 0
	grep -F -- "${2%%[{ ]*}" <<< "$1" | head -5 | indent
	return 1
}
has_match() {
	grep -qE -- "$2" <<< "$1" && return 0
	local family=${2#^}
	grep -F -- "${family%%[\\{ ]*}" <<< "$1" | head -5 | indent
	return 1
}

nodes_alive() {
	local out
	out=$(g_exec 1 30 "$(litectl_ops nodes)") || return 1
	grep -q 'node1.*ALIVE' <<< "$out" && grep -q 'node2.*ALIVE' <<< "$out"
}
node2_gone() {
	g_exec 1 30 "$(litectl_ops nodes)" | grep -Eq 'node2.*(LEFT|FAILED)'
}

# --- after the cluster: purge leaves the root as it was ---------------------

purge_all() {
	local work=$1 root=$1/root rc=0
	echo "== apt-get purge of every package and autoremove --purge, in the root"
	rm -rf "$root/opt/lite-apps"
	apt_in_root "$root" purge "${packages[@]}" > "$work/purge.log" 2>&1 || rc=$?
	apt_in_root "$root" autoremove --purge >> "$work/purge.log" 2>&1 || rc=$?
	# What autoremove keeps because a package of the base recommends it
	# (xz-utils, ...) came in with LITE's packages too: it goes as well, so
	# the comparison below is with the clean root's own package set.
	local extra
	extra=$(installed "$root" | LC_ALL=C comm -13 "$work/before.pkgs" -)
	if [[ -n $extra ]]; then
		echo "        also purged (pulled in, kept by autoremove as recommended): ${extra//$'\n'/ }"
		# shellcheck disable=SC2086 # package names are words
		apt_in_root "$root" purge $extra >> "$work/purge.log" 2>&1 || rc=$?
	fi
	check "apt-get purge and autoremove --purge" test "$rc" = 0 ||
		tail -20 "$work/purge.log" | indent
	snapshot "$root" > "$work/after.list"
	if diff "$work/before.list" "$work/after.list" > "$work/diff.txt"; then
		vm_ok "nothing left behind: the same $(wc -l < "$work/after.list") paths, owners and modes as before"
	else
		vm_fail "the root differs from before the install:"
		head -40 "$work/diff.txt" | indent
	fi
	check "no user or group lite or litemgr" \
		sh -c "! grep -qE '^(lite|litemgr):' '$root/etc/passwd' '$root/etc/group'"
}

# cleanup: the work folder goes, after every mount left under it (an
# interrupted chroot's /proc, /dev, the apt cache) is unmounted; rm stays
# on the folder's own filesystem whatever is left.
cleanup() {
	local m
	[[ -n ${work-} && -d $work ]] || return 0
	while read -r m; do umount -l "$m" 2> /dev/null; done < <(
		awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r)
	rm -rf --one-file-system "$work"
}

main() {
	local keep=0 rc=0
	case ${1-} in
	--inside) shift; inside "$1"; vm_summary; return ;;
	--keep) keep=1 ;;
	-h | --help) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//p}' "$0"; return 0 ;;
	"") ;;
	*) echo "install.sh: unknown option '$1'" >&2; return 2 ;;
	esac
	cd "$repo"
	[[ $(id -u) == 0 ]] || { echo "install.sh: needs root (chroot, the VM cluster)"; return 1; }
	work=$(mktemp -d /tmp/lite-install.XXXXXX)  # global: the EXIT trap needs it
	((keep)) || trap cleanup EXIT
	prepare "$work" || { vm_summary; return 1; }
	((VM_FAILURES == 0)) || { vm_summary; return 1; }
	tools/vm/litevm run -n 2 --root "$work/root" --boot-timeout 400 --timeout 1500 \
		-- "$here/install.sh" --inside "$work" || rc=$?
	((rc == 0)) || vm_fail "the cluster part (litevm run exited with status $rc)"
	purge_all "$work"
	echo "install: $SECONDS s"
	vm_summary
}

main "$@"
