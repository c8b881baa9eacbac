#!/bin/sh
# Prints the kernel version LITE builds for and boots in the VM cluster:
# the one Debian's linux-headers-amd64 meta-package points at, so the module's
# headers and the guest kernel image always match exactly.
set -eu
dep=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null) || {
	echo "kver.sh: linux-headers-amd64 is not installed (run tools/setup.sh)" >&2
	exit 1
}
# "linux-headers-6.1.0-56-amd64 (= 6.1.192-2)" -> "6.1.0-56-amd64"
kver=$(printf '%s\n' "$dep" | sed -n 's/.*linux-headers-\([^ ,]*\).*/\1/p' | head -n 1)
[ -n "$kver" ] || { echo "kver.sh: cannot parse '$dep'" >&2; exit 1; }
echo "$kver"
