#!/usr/bin/env python3
"""compare's table: perftest and LITE per operation and size, over rounds.

Usage: compare_table.py RECORDS table|json ROUNDS

RECORDS holds one figure per line, "ROUND OP SIZE SOURCE KEY VALUE", where
SOURCE is perftest or a LITE setting (lite, lite_spin_US, lite_ring: the
io_uring commands on batch_* rows) and KEY one of
p50, p99 (microseconds), cpu (CPU microseconds per operation), csw (context
switches per operation), mib_per_s (write_bw rows) or ops_per_s (batch_*
rows: LITE's batches from one thread, perftest's ib_*_bw message rate). Every figure printed
is the median over the rounds; p50, the ratio and bandwidth also give the
spread (min-max). A ratio is LITE p50 / perftest p50 (or LITE / perftest
bandwidth) taken within each round, then the median of those.
"""

import json
import statistics
import sys

OP_ORDER = {"read": 0, "write": 1, "faa": 2, "cas": 3, "write_bw": 4,
            "batch_write": 5, "batch_read": 6, "batch_faa": 7}


def load(path):
    # figures[(op, size)][source][key][round] = value
    figures = {}
    sources = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 6:
                continue
            rnd, op, size, src, key, val = parts
            try:
                value = float(val)
            except ValueError:
                continue  # lite-bench's JSON had no such figure ("null")
            by_src = figures.setdefault((op, int(size)), {})
            by_src.setdefault(src, {}).setdefault(key, {})[int(rnd)] = value
            if src not in sources:
                sources.append(src)
    sources = sorted(sources, key=lambda s: (s != "perftest", sources.index(s)))
    return figures, sources


def summary(values):
    """(median, min, max) of a list, or (None, None, None)."""
    if not values:
        return None, None, None
    return statistics.median(values), min(values), max(values)


def ratios(lite, native):
    """Per-round LITE / native for the rounds that have both."""
    return [lite[r] / native[r] for r in lite if native.get(r)]


def rows(figures, sources):
    out = []
    for op, size in sorted(figures, key=lambda k: (OP_ORDER.get(k[0], 9), k[1])):
        by_src = figures[(op, size)]
        native = by_src.get("perftest", {})
        for src in sources:
            if src not in by_src:
                continue
            fig = by_src[src]
            key = {"write_bw": "mib_per_s"}.get(op, "ops_per_s" if op.startswith("batch_") else "p50")
            med, lo, hi = summary(list(fig.get(key, {}).values()))
            row = {"op": op, "size": size, "source": src, "rounds": len(fig.get(key, {}))}
            if op == "write_bw":
                row.update(mib_per_s=med, mib_per_s_min=lo, mib_per_s_max=hi)
            elif op.startswith("batch_"):
                row.update(ops_per_s=med, ops_per_s_min=lo, ops_per_s_max=hi,
                           cpu_us_per_op=summary(list(fig.get("cpu", {}).values()))[0],
                           switches_per_op=summary(list(fig.get("csw", {}).values()))[0])
            else:
                row.update(p50_us=med, p50_min_us=lo, p50_max_us=hi,
                           p99_us=summary(list(fig.get("p99", {}).values()))[0],
                           cpu_us_per_op=summary(list(fig.get("cpu", {}).values()))[0],
                           switches_per_op=summary(list(fig.get("csw", {}).values()))[0])
            if src != "perftest":
                r_med, r_lo, r_hi = summary(ratios(fig.get(key, {}), native.get(key, {})))
                row.update(ratio=r_med, ratio_min=r_lo, ratio_max=r_hi)
            out.append(row)
    return out


def fmt(v, places=2):
    return "n/a" if v is None else f"{v:.{places}f}"


def spread(row, key, places=2):
    lo, hi = row.get(key + "_min"), row.get(key + "_max")
    if lo is None or hi is None or row.get("rounds", 1) < 2:
        return fmt(row.get(key), places)
    return f"{fmt(row.get(key), places)} ({fmt(lo, places)}-{fmt(hi, places)})"


def source_label(src):
    if src.startswith("lite_spin_"):
        return "LITE spin " + src[len("lite_spin_"):] + "us"
    return {"perftest": "perftest", "lite": "LITE",
            "lite_ring": "LITE io_uring"}.get(src, src)


def print_table(out, rounds):
    print(f"{'OP':<12}{'SIZE':>6}  {'SOURCE':<18}{'P50_US':>24}{'P99_US':>10}"
          f"{'CPU_US/OP':>11}{'CSW/OP':>8}  {'LITE/PERFTEST':<20}")
    for r in out:
        if r["op"].startswith("batch_"):
            rate = spread(r, "ops_per_s", 0) + " ops/s"
            print(f"{r['op']:<12}{r['size']:>6}  {source_label(r['source']):<18}{rate:>24}"
                  f"{'':>10}{fmt(r['cpu_us_per_op']):>11}{fmt(r['switches_per_op'], 3):>8}  "
                  f"{'' if r['source'] == 'perftest' else spread(r, 'ratio')}")
            continue
        if r["op"] == "write_bw":
            bw = spread(r, "mib_per_s") + " MiB/s"
            print(f"{'write_bw':<12}{r['size']:>6}  {source_label(r['source']):<18}{bw:>24}"
                  f"{'':>10}{'':>11}{'':>8}  "
                  f"{'' if r['source'] == 'perftest' else spread(r, 'ratio')}")
            continue
        print(f"{r['op']:<12}{r['size']:>6}  {source_label(r['source']):<18}"
              f"{spread_p50(r):>24}"
              f"{fmt(r['p99_us']):>10}{fmt(r['cpu_us_per_op']):>11}"
              f"{fmt(r['switches_per_op'], 3):>8}  "
              f"{'' if r['source'] == 'perftest' else spread(r, 'ratio')}")
    print(f"medians over {rounds} round(s), spread (min-max) in brackets; latencies in "
          "microseconds (perftest: t_typical and 99%; LITE: p50 and p99); ratio = LITE p50 / "
          "perftest p50 per round (bandwidth and batched ops/s: LITE / perftest); CPU "
          "and switches per operation: lite-bench's thread over its timed operations "
          "(getrusage); perftest's CPU per operation is its average latency (it "
          "busy-polls its CQ: one CPU for the whole of each operation)")


def spread_p50(row):
    return spread({**row, "p50": row["p50_us"], "p50_min": row["p50_min_us"],
                   "p50_max": row["p50_max_us"]}, "p50")


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("table", "json"):
        sys.exit(__doc__)
    figures, sources = load(sys.argv[1])
    out = rows(figures, sources)
    if sys.argv[2] == "json":
        print(json.dumps(out))
    else:
        print_table(out, int(sys.argv[3]))


if __name__ == "__main__":
    main()
