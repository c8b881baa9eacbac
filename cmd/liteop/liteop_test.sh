#!/bin/bash
# liteop's command line on any host, without lite.ko: usage errors exit 2
# before the device is opened, LITE errors exit 1 with "(ERRNO)" on stderr,
# and the pattern and checksum match an independent implementation
# (Python's, computed once; the values below).
set -uo pipefail
liteop=${1:?usage: liteop_test.sh PATH_TO_LITEOP}
failures=0

# expect STATUS STDERR_SUBSTRING ARGS...: run liteop, check exit status and stderr.
expect() {
	local want=$1 text=$2 out rc
	shift 2
	out=$("$liteop" "$@" 2>&1 >/dev/null)
	rc=$?
	if [[ $rc -ne $want || $out != *"$text"* ]]; then
		echo "FAIL: liteop $* -> exit $rc, stderr: $out (want exit $want and '$text')"
		failures=$((failures + 1))
	fi
}

# expect_out STDOUT ARGS...: exit 0 and exactly this stdout.
expect_out() {
	local want=$1 out
	shift
	if ! out=$("$liteop" "$@" 2>&1) || [[ $out != "$want" ]]; then
		echo "FAIL: liteop $* -> '$out' (want '$want')"
		failures=$((failures + 1))
	fi
}

"$liteop" --help | grep -q '^usage: liteop' || { echo "FAIL: --help"; failures=$((failures + 1)); }

nodev=/nonexistent/liteop-test/lite
expect 2 "no command" --device $nodev
expect 2 "unknown command 'frob'" --device $nodev frob
expect 2 "unknown option '--bogus'" --device $nodev node --bogus
expect 2 "'alloc' takes 2 argument(s), got 1" --device $nodev alloc kv
expect 2 "SIZE: '12Q' is not a size" --device $nodev alloc kv 12Q
expect 2 "not an octal mode" --device $nodev alloc kv 4K --mode 0800
expect 2 "--access must be r, w or rw" --device $nodev read kv 0 8 --access x
expect 2 "--threads: 1..256" --device $nodev faa kv 0 1 --threads 0
expect 2 "VALUE must be 0..255" --device $nodev memset kv 0 8 256
expect 2 "--hex does not apply to 'write'" --device $nodev write kv 0 --data x --hex
expect 2 "give --data STRING or --pattern" --device $nodev write kv 0
expect 2 "--pattern needs --length" --device $nodev write kv 0 --pattern 1
expect 2 "--device given twice" --device $nodev --device $nodev node

# LITE errors: exit 1, the errno's name in the line.
expect 1 "(ENOENT): $nodev does not exist: is lite.ko loaded?" --device $nodev node
expect 1 "(ENOENT)" --device $nodev read kv 0 64K --checksum
expect 1 "Inappropriate ioctl for device (ENOTTY)" --device /dev/null faa kv 0 1
# A bad name is bad input, said before the device is opened (a device that
# does not exist would say ENOENT instead).
expect 2 "NAME \"bad name\" has character 0x20 at offset 3" --device $nodev alloc "bad name" 4K

# The pattern and checksum, against values from an independent implementation.
expect_out "length=5 fnv1a64=a430d84680aabd0b" checksum --data hello
expect_out "length=1001 fnv1a64=dade9137f0933add" checksum --pattern 1 --length 1001
expect_out "length=4096 fnv1a64=20da5b5de45838b2" checksum --pattern 42 --length 4K

((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
echo "all liteop checks passed"
