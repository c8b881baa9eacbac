#!/bin/bash
# The attack of review cp-2026-11-28 M9 on `litevm prepare`'s kernel
# download, run on the host without a network: stand-ins for apt-get and
# apt-cache come first in PATH. The apt-get stand-in "downloads" a genuine
# kernel .deb into the folder litevm gave it, then, as the attacker (uid
# nobody) at the worst moment (after the download, before dpkg -x), puts its
# own .deb, which carries a setuid-root file, in its place. litevm must
# refuse: the attacker cannot write the folder, and a .deb whose SHA256 is
# not apt's index's is not unpacked either (the second case: the download
# itself is the wrong file).
# Usage: tools/vm/litevm_download_test.sh   (needs root; ~5 s)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ $(id -u) == 0 ]] || { echo "litevm_download_test: needs root (dpkg -x keeps owners)"; exit 1; }
kv=$("$repo/tools/kver.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
ok() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; failures=$((failures + 1)); }

# deb DIR NAME FILE MODE: a .deb of package NAME with one file, FILE
# (under the root), of MODE, owned by root.
deb() {
	local d=$work/build.$2
	mkdir -p "$d/DEBIAN" "$d/$(dirname "$3")"
	printf 'Package: %s\nVersion: 1\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n' \
		"$2" > "$d/DEBIAN/control"
	echo "$2" > "$d/$3"
	chmod "$4" "$d/$3"
	dpkg-deb --root-owner-group -b "$d" "$1/$2.deb" > /dev/null
}
deb "$work" genuine "boot/vmlinuz-$kv" 0644
deb "$work" evil boot/evil-setuid 4755
chmod 0644 "$work"/*.deb
chmod 0755 "$work"

mkdir "$work/bin"
# apt-get download linux-image-KV: the genuine .deb (or, with
# STUB_WRONG=1, the evil one), then the attacker's swap as nobody.
cat > "$work/bin/apt-get" << EOF
#!/bin/bash
set -u
f=\$PWD/linux-image-${kv}_1_amd64.deb
if [[ \${STUB_WRONG-} == 1 ]]; then cp "$work/evil.deb" "\$f"; else cp "$work/genuine.deb" "\$f"; fi
if setpriv --reuid=65534 --regid=65534 --clear-groups \\
	sh -c "cp '$work/evil.deb' '\$PWD/.x' && mv -f '\$PWD/.x' '\$f'" 2> /dev/null; then
	echo swapped > "$work/swapped"
fi
exit 0
EOF
# apt-cache show: the genuine .deb's SHA256, as apt's index has it.
cat > "$work/bin/apt-cache" << EOF
#!/bin/sh
echo "Package: linux-image-$kv"
echo "SHA256: $(sha256sum "$work/genuine.deb" | cut -d' ' -f1)"
EOF
chmod 0755 "$work/bin/apt-get" "$work/bin/apt-cache"

# run CASE: litevm prepare with the stand-ins and its own cache; its output.
run() {
	mkdir -p "$work/$1"
	rm -f "$work/swapped"
	PATH=$work/bin:$PATH LITE_VM_CACHE=$work/$1 "$repo/tools/vm/litevm" prepare > "$work/$1.out" 2>&1 || true
}

echo "== the attacker (nobody) swaps the downloaded .deb before dpkg -x"
run swap
root=$work/swap/$kv/root
if [[ -e $work/swapped ]]; then fail "nobody replaced the .deb in litevm's download folder"; else ok "nobody could not write litevm's download folder"; fi
if [[ -e $root/boot/evil-setuid ]]; then
	fail "the attacker's setuid-root file was unpacked: $(stat -c '%U %a' "$root/boot/evil-setuid")"
else
	ok "nothing of the attacker's .deb was unpacked"
fi
if [[ -f $root/boot/vmlinuz-$kv ]]; then ok "the genuine kernel .deb was unpacked"; else fail "the genuine .deb was not unpacked"; sed 's/^/        /' "$work/swap.out"; fi

echo "== the download is not the file apt's index names"
STUB_WRONG=1 run wrong
if grep -q "is not apt's index's" "$work/wrong.out" && [[ ! -e $work/wrong/$kv/root ]]; then
	ok "refused before dpkg -x: $(grep -o "SHA256 .*" "$work/wrong.out" | cut -c1-90)"
else
	fail "a .deb with the wrong SHA256 was not refused"
	sed 's/^/        /' "$work/wrong.out"
fi

if ((failures)); then echo "litevm_download_test: $failures FAILED"; exit 1; fi
echo "litevm_download_test: ok"
