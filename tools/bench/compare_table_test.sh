#!/bin/bash
# compare_table.py: medians over rounds, spreads, per-round ratios, figures
# lite-bench could not give (null) left out, sources in order (perftest
# first), JSON; and compare's own argument checks (before any VM boots).
set -euo pipefail
table=$1 compare=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$tmp/rec" << 'R'
1 read 8 lite_spin_0 p50 420
1 read 8 perftest p50 300
1 read 8 perftest p99 400
1 read 8 perftest cpu 310
1 read 8 perftest csw 0.01
1 read 8 lite_spin_0 p99 800
1 read 8 lite_spin_0 cpu 100
1 read 8 lite_spin_0 csw 1.1
1 read 8 lite_spin_50 p50 330
1 read 8 lite_spin_50 cpu null
2 read 8 perftest p50 400
2 read 8 lite_spin_0 p50 400
2 read 8 lite_spin_50 p50 360
3 read 8 perftest p50 200
3 read 8 lite_spin_0 p50 300
3 read 8 lite_spin_50 p50 250
1 write_bw 65536 perftest mib_per_s 100
1 write_bw 65536 lite_spin_0 mib_per_s 120
1 batch_read 8 perftest ops_per_s 5000
1 batch_read 8 lite_spin_0 ops_per_s 4500
1 batch_read 8 lite_spin_0 cpu 30
R
json=$(python3 "$table" "$tmp/rec" json 3)
check() {  # check PYTHON_EXPR: true of the JSON rows `r`
	python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if ($1) else 1)" "$json" ||
		fail "$1"
}
check '[x["source"] for x in r if x["op"] == "read"] == ["perftest", "lite_spin_0", "lite_spin_50"]'
check 'r[0]["p50_us"] == 300 and r[0]["p50_min_us"] == 200 and r[0]["p50_max_us"] == 400'
# Ratios per round: 420/300=1.4, 400/400=1.0, 300/200=1.5 -> median 1.4.
check 'abs(r[1]["ratio"] - 1.4) < 1e-9 and r[1]["ratio_min"] == 1.0 and r[1]["ratio_max"] == 1.5'
check 'r[2]["cpu_us_per_op"] is None and r[1]["cpu_us_per_op"] == 100'
check '[x for x in r if x["op"] == "write_bw" and x["source"] == "lite_spin_0"][0]["ratio"] == 1.2'
check '[x for x in r if x["op"] == "batch_read" and x["source"] == "lite_spin_0"][0]["ratio"] == 0.9'
check '[x for x in r if x["op"] == "batch_read"][1]["cpu_us_per_op"] == 30'
out=$(python3 "$table" "$tmp/rec" table 3)
grep -q '^batch_read .* 4500 ops/s .*0.90' <<< "$out" || fail "batch row: $out"
grep -q '^read .* LITE spin 0us .*1.40 (1.00-1.50)' <<< "$out" || fail "table row: $out"
grep -q 'medians over 3 round' <<< "$out" || fail "table footer: $out"
if python3 "$table" "$tmp/rec" yaml 3 2> /dev/null; then fail "bad format accepted"; fi

# compare checks its arguments before it builds or boots anything.
expect_usage() {  # expect_usage MESSAGE_PART ARGS...
	local part=$1 rc=0 err
	shift
	err=$("$compare" "$@" 2>&1 > /dev/null) || rc=$?
	((rc == 2)) || fail "compare $*: exit $rc, not 2"
	grep -q -- "$part" <<< "$err" || fail "compare $*: '$err' lacks '$part'"
}
expect_usage "at least 1" --rounds 0
expect_usage "more than lite.ko's 10000" --spin "0 20000"
expect_usage "is not a number" --spin "fast"
expect_usage "needs a value" --rounds
echo "compare_table_test: ok"
