#!/bin/bash
# lite-bench on any host without lite.ko: bad usage exits 2 before the
# device is opened; a missing device exits 1 naming the errno.
set -uo pipefail
bench=${1:?usage: lite_bench_test.sh PATH_TO_LITE_BENCH}
failures=0
expect() {  # expect STATUS STDERR_SUBSTRING ARGS...
	local want=$1 text=$2 out rc
	shift 2
	out=$("$bench" "$@" 2>&1 >/dev/null)
	rc=$?
	if [[ $rc -ne $want || $out != *"$text"* ]]; then
		echo "FAIL: lite-bench $* -> exit $rc, stderr: $out (want exit $want and '$text')"
		failures=$((failures + 1))
	fi
}
nodev=--device=/nonexistent/lite-bench-test/lite
expect 2 "give --lmr NAME or --create NAME" $nodev
expect 2 "give --lmr NAME or --create NAME" $nodev --lmr a --create b
expect 2 "--ops: unknown 'send'" $nodev --lmr a --ops read,send
expect 2 "--sizes: bad '0'" $nodev --lmr a --sizes 8,0
expect 2 "--offset: a multiple of 8" $nodev --lmr a --offset 12
expect 2 "-o: table or json" $nodev --lmr a -o yaml
expect 2 "--bw_threads: 1..256" $nodev --lmr a --bw_threads 0
expect 1 "(ENOENT)" $nodev --lmr a
expect 1 "is lite.ko loaded?" $nodev --create a --size 1M
help=$("$bench" --help 2>&1)
[[ $help == *"lite-bench (--lmr NAME"* && $help == *"--bw_threads"* ]] || { echo "FAIL: --help"; failures=$((failures + 1)); }
((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
echo "all lite-bench checks passed"
