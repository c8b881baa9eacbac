#!/bin/bash
# tools/package.sh: LITE's Debian packages, built from this repository
# offline (docs/deploy.md):
#   lite-dkms     lite.ko's source with dkms.conf (rebuilt for each installed
#                 kernel), /etc/modprobe.d/lite.conf, the udev rule that gives
#                 /dev/lite to group lite, and that group
#   litemgr       the cluster manager, its systemd unit, /etc/lite/litemgr.conf
#   liteagent     the node agent, its systemd unit, /etc/lite/liteagent.conf
#   litectl       litectl and liteop, the operators' and shell users' tools
#   liblite0      libLITE's C API, liblite.so.0
#   liblite-dev   its headers under /usr/include/lite/, liblite.so, lite.pc
#   python3-lite  the Python package (python/lite)
# Each is checked with lintian (warnings explained in packaging/README.md).
#
# Usage: tools/package.sh [--out DIR] [--no-lintian]
#   --out DIR      where the .deb files go (default: dist/)
#   --no-lintian   skip lintian
#   LITE_BIN=DIR   package the binaries already built in DIR (Bazel's bin
#                  layout) instead of building them
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

out=$repo/dist
run_lintian=1
while (($#)); do
	case $1 in
	--out) out=${2:?--out needs a folder}; shift 2 ;;
	--no-lintian) run_lintian=0; shift ;;
	-h | --help) sed -n '2,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "package.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

say() { echo "package: $*" >&2; }

# The version: the last commit's date and hash (the repository has no
# releases yet); ~ sorts it before any 0.1 release.
version="0.1~git$(git log -1 --format=%cd --date=format:%Y%m%d).$(git log -1 --format=%h)"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# The packages' maintainer: LITE_MAINTAINER, else the last commit's author.
maintainer=${LITE_MAINTAINER:-$(git log -1 --format='%an <%ae>')}

targets=(//controlplane:litemgr //agent:liteagent //cmd/litectl //cmd/liteop
	//api:liblite.so.0)
work=$(mktemp -d /tmp/lite-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [[ -z ${LITE_BIN-} ]]; then
	say "building ${targets[*]}"
	# The log in the private work folder: a fixed /tmp name could be
	# another user's symlink.
	bazel build "${targets[@]}" > "$work/build.log" 2>&1 ||
		{ tail -30 "$work/build.log" >&2; exit 1; }
	LITE_BIN=$(bazel info bazel-bin 2> /dev/null)
fi
mkdir -p "$out"

# stage PACKAGE: prints the folder that becomes PACKAGE's root.
stage() { mkdir -p "$work/$1/DEBIAN"; echo "$work/$1"; }

# put SRC DEST MODE: installs a file into a staged tree.
put() { install -D -m "$3" "$1" "$2"; }
# put_binary SRC DEST MODE: the same for a program or shared library,
# stripped of debug information and symbols not needed to run or link it.
put_binary() {
	put "$@"
	strip --strip-unneeded --remove-section=.comment --remove-section=.note "$2"
}

# docs ROOT PACKAGE: the copyright file and changelog every package has.
docs() {
	local d=$1/usr/share/doc/$2
	put packaging/debian/copyright "$d/copyright" 0644
	# A native package (no Debian revision): its changelog is changelog.gz.
	sed -e "s/@PACKAGE@/$2/; s/@VERSION@/$version/" \
		-e "s/@DATE@/$(date -R -d "@$(git log -1 --format=%ct)")/" \
		-e "s/@MAINTAINER@/$maintainer/" packaging/debian/changelog.in | gzip -9n > "$d/changelog.gz"
	chmod 0644 "$d/changelog.gz"
}

# shlibs_depends FILE...: the Depends: entries of the shared libraries the
# files link (dpkg-shlibdeps, from the installed packages' shlibs).
shlibs_depends() {
	local d=$work/.shlibdeps
	mkdir -p "$d/debian"
	printf 'Source: lite\n\nPackage: lite\nArchitecture: any\n' > "$d/debian/control"
	(cd "$d" && dpkg-shlibdeps -O --ignore-missing-info "$@" 2> /dev/null) |
		sed -n 's/^shlibs:Depends=//p'
}

# control ROOT PACKAGE ARCH DEPENDS SECTION DESCRIPTION...: DEBIAN/control.
control() {
	local root=$1 pkg=$2 a=$3 deps=$4 section=$5 size
	shift 5
	size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
	{
		echo "Package: $pkg"
		echo "Version: $version"
		echo "Architecture: $a"
		echo "Maintainer: $maintainer"
		echo "Installed-Size: $size"
		[[ -n $deps ]] && echo "Depends: $deps"
		echo "Section: $section"
		echo "Priority: optional"
		echo "Description: $1"
		shift
		local line
		for line in "$@"; do echo " $line"; done
	} > "$root/DEBIAN/control"
}

# scripts ROOT PACKAGE: maintainer scripts from packaging/debian/PACKAGE.*.
scripts() {
	local s
	for s in postinst prerm postrm; do
		[[ -f packaging/debian/$2.$s ]] || continue
		sed "s/@VERSION@/$version/g" "packaging/debian/$2.$s" > "$1/DEBIAN/$s"
		chmod 0755 "$1/DEBIAN/$s"
	done
}

# build ROOT: the .deb, owned by root whatever the files' owner here.
build() {
	local root=$1 pkg deb
	pkg=$(basename "$root")
	deb=$out/${pkg}_${version}_$(sed -n 's/^Architecture: //p' "$root/DEBIAN/control").deb
	find "$root" -type d -exec chmod 0755 {} +
	dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" > /dev/null
	say "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
	debs+=("$deb")
}

debs=()

# --- lite-dkms ----------------------------------------------------------------
r=$(stage lite-dkms)
src=$r/usr/src/lite-$version
mkdir -p "$src"
# lite.ko's sources: the top folder and its layer folders (include/ and
# examples/ below); no test, no Kbuild output.
(cd kmod && find . \( -path ./include -o -path ./examples \) -prune -o \
	\( -name '*.c' -o -name '*.h' -o -name Kbuild \) ! -name '*.mod.c' -print0 |
	xargs -0 -I{} install -D -m 0644 {} "$src/{}")
for f in kmod/include/*.h kmod/include/uapi/*.h kmod/examples/*.c kmod/examples/Kbuild; do
	put "$f" "$src/${f#kmod/}" 0644
done
sed "s/@VERSION@/$version/" packaging/dkms/dkms.conf.in > "$src/dkms.conf"
chmod 0644 "$src/dkms.conf"
put packaging/etc/lite-modprobe.conf "$r/etc/modprobe.d/lite.conf" 0644
put packaging/etc/60-lite.rules "$r/usr/lib/udev/rules.d/60-lite.rules" 0644
echo /etc/modprobe.d/lite.conf > "$r/DEBIAN/conffiles"
docs "$r" lite-dkms
scripts "$r" lite-dkms
control "$r" lite-dkms all "dkms (>= 3), linux-headers-amd64 | linux-headers-generic | linux-headers, kmod, adduser" kernel \
	"LITE kernel module (DKMS source)" \
	"lite.ko virtualizes RDMA for every process and kernel subsystem on a" \
	"node: one global memory key, shared queue pairs, named LITE memory" \
	"regions, RPC, locks and QoS. This package builds it with DKMS for each" \
	"installed kernel, and gives /dev/lite to the group lite."
build "$r"

# --- litemgr, liteagent, litectl -------------------------------------------------
# daemon NAME BINARY: stages the daemon NAME: /usr/sbin/NAME, its systemd
# unit, /etc/lite/NAME.conf (a conffile), docs and maintainer scripts; R is
# its root.
daemon() {
	r=$(stage "$1")
	put_binary "$LITE_BIN/$2" "$r/usr/sbin/$1" 0755
	put "packaging/systemd/$1.service" "$r/lib/systemd/system/$1.service" 0644
	put "packaging/etc/$1.conf" "$r/etc/lite/$1.conf" 0644
	put docs/deploy.md "$r/usr/share/doc/$1/deploy.md" 0644
	echo "/etc/lite/$1.conf" > "$r/DEBIAN/conffiles"
	docs "$r" "$1"
	scripts "$r" "$1"
}

daemon litemgr controlplane/litemgr
control "$r" litemgr "$arch" "$(shlibs_depends "$r/usr/sbin/litemgr"), adduser" net \
	"LITE cluster manager" \
	"litemgr keeps a LITE cluster's membership, leases, LMR names, grants" \
	"and RPC services, over gRPC with mutual TLS. One per cluster."
build "$r"

daemon liteagent agent/liteagent
put packaging/lite-rdma-wait "$r/usr/libexec/lite/lite-rdma-wait" 0755
control "$r" liteagent "$arch" "$(shlibs_depends "$r/usr/sbin/liteagent"), lite-dkms (= $version), iproute2" net \
	"LITE node agent" \
	"liteagent joins a node's lite.ko to the LITE cluster (litemgr): it" \
	"answers lite.ko's control calls, installs grants and peer secrets," \
	"and reports failures. One per node."
build "$r"

r=$(stage litectl)
put_binary "$LITE_BIN/cmd/litectl/litectl" "$r/usr/bin/litectl" 0755
put_binary "$LITE_BIN/cmd/liteop/liteop" "$r/usr/bin/liteop" 0755
docs "$r" litectl
control "$r" litectl "$arch" "$(shlibs_depends "$r/usr/bin/litectl" "$r/usr/bin/liteop")" net \
	"LITE command-line tools" \
	"litectl asks the LITE cluster manager and agents (nodes, LMRs, grants," \
	"services, events); liteop allocates, maps, reads, writes and calls" \
	"from a shell."
build "$r"

# --- liblite0, liblite-dev ---------------------------------------------------------
r=$(stage liblite0)
put_binary "$LITE_BIN/api/liblite.so.0" "$r/usr/lib/$multiarch/liblite.so.0" 0644
echo "liblite 0 liblite0 (>= $version)" > "$r/DEBIAN/shlibs"
echo "activate-noawait ldconfig" > "$r/DEBIAN/triggers"
docs "$r" liblite0
control "$r" liblite0 "$arch" "$(shlibs_depends "$r/usr/lib/$multiarch/liblite.so.0")" libs \
	"LITE application library (C API)" \
	"libLITE: remote memory by name (allocate, map, read, write, atomics)," \
	"RPC, locks and barriers over lite.ko, each call one system call."
build "$r"

r=$(stage liblite-dev)
inc=$r/usr/include/lite
for h in lite.h lite_rpc.h lite_sync.h lite_batch.h lite_ring.h; do
	# The source tree's include paths become the installed ones.
	sed -e 's|#include "kmod/include/uapi/\([a-z_]*\.h\)"|#include <lite/uapi/\1>|' \
		-e 's|#include "api/\([a-z_]*\.h\)"|#include <lite/\1>|' "api/$h" > "$work/$h"
	put "$work/$h" "$inc/$h" 0644
done
for h in kmod/include/uapi/*.h; do put "$h" "$inc/uapi/$(basename "$h")" 0644; done
mkdir -p "$r/usr/lib/$multiarch/pkgconfig"
ln -s liblite.so.0 "$r/usr/lib/$multiarch/liblite.so"
sed -e "s|@VERSION@|$version|" -e "s|@MULTIARCH@|$multiarch|" packaging/pkgconfig/lite.pc.in \
	> "$r/usr/lib/$multiarch/pkgconfig/lite.pc"
docs "$r" liblite-dev
control "$r" liblite-dev "$arch" "liblite0 (= $version), liburing-dev" libdevel \
	"LITE application library (development files)" \
	"Headers (/usr/include/lite/), the liblite.so link and the pkg-config" \
	"file 'lite' for building programs against libLITE's C API:" \
	"cc app.c \$(pkg-config --cflags --libs lite)."
build "$r"

# --- python3-lite ------------------------------------------------------------------
r=$(stage python3-lite)
for f in python/lite/*.py; do put "$f" "$r/usr/lib/python3/dist-packages/lite/$(basename "$f")" 0644; done
docs "$r" python3-lite
control "$r" python3-lite all "python3, python3-cffi, liblite0 (= $version)" python \
	"LITE from Python" \
	"The Python package 'lite': remote memory into and from any buffer," \
	"atomics, RPC services with Python handlers, locks and barriers, over" \
	"liblite.so.0 through cffi."
build "$r"

status=0
if ((run_lintian)); then
	# Clean, or the run fails: the tags suppressed are in
	# packaging/lintian-overrides.txt, each explained in packaging/README.md.
	say "lintian"
	report=$(lintian --fail-on error,warning --suppress-tags-from-file \
		packaging/lintian-overrides.txt "${debs[@]}" 2>&1) || status=1
	grep -v 'running with root privileges' <<< "$report" >&2 || true
	if ((status)); then say "lintian: FAILED (above)"; else say "lintian: clean"; fi
fi
say "done: ${#debs[@]} packages in $out"
exit "$status"
