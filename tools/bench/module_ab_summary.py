#!/usr/bin/env python3
"""module_ab's table: two lite.ko builds, per operation and size.

Usage: module_ab_summary.py DIR ROUNDS

DIR holds compare-{a,b}-R.json (tools/bench/compare -o json) and
rpc-{a,b}-R.txt (tools/bench/rpc_compare's table) for R = 1..ROUNDS. For
each operation and size: A's and B's median p50 in microseconds (min-max
over the rounds), or operations (MiB) per second for batches (bandwidth),
the median CPU microseconds and context switches per operation, and B / A
of the medians. For RPC, also each round's 2 x ib_write_lat and gRPC p50
medians: the anchors measured in the same cluster.
"""

import json
import os
import statistics
import sys


def med(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None, None
    return statistics.median(values), min(values), max(values)


def fmt(v, places=1):
    return "n/a" if v is None else f"{v:.{places}f}"


def load_compare(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def load_rpc(path):
    rows = {}
    try:
        with open(path) as f:
            for line in f:
                t = line.split()
                if len(t) >= 16 and t[1] == "B" and t[0].isdigit():
                    num = lambda s: None if s == "n/a" else float(s)
                    rows[int(t[0])] = {"p50": num(t[2]), "p99": num(t[4]),
                                       "write2": num(t[5]), "grpc": num(t[7]),
                                       "cpu": num(t[-2]), "csw": num(t[-1])}
    except OSError:
        pass
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    d, rounds = sys.argv[1], int(sys.argv[2])
    figs = {}  # (kind, op, size) -> variant -> key -> [per round]
    for v in "ab":
        for r in range(1, rounds + 1):
            for row in load_compare(os.path.join(d, f"compare-{v}-{r}.json")):
                if row.get("source") != "lite":
                    continue
                key = ("ops", row["op"], row["size"])
                fig = figs.setdefault(key, {}).setdefault(v, {})
                value = row.get("p50_us", row.get("ops_per_s", row.get("mib_per_s")))
                fig.setdefault("value", []).append(value)
                fig.setdefault("cpu", []).append(row.get("cpu_us_per_op"))
                fig.setdefault("csw", []).append(row.get("switches_per_op"))
            for size, row in load_rpc(os.path.join(d, f"rpc-{v}-{r}.txt")).items():
                fig = figs.setdefault(("rpc", "round_trip", size), {}).setdefault(v, {})
                fig.setdefault("value", []).append(row["p50"])
                fig.setdefault("cpu", []).append(row["cpu"])
                fig.setdefault("csw", []).append(row["csw"])
                fig.setdefault("write2", []).append(row["write2"])
                fig.setdefault("grpc", []).append(row["grpc"])
    print(f"{'op':<13} {'size':>6} {'unit':<7} {'A median (min-max)':<24} "
          f"{'B median (min-max)':<24} {'B/A':>5}  {'cpu A/B us':<13} {'csw A/B':<11} anchors A/B")
    for key in sorted(figs, key=lambda k: (k[0] != "ops", k[1], k[2])):
        kind, op, size = key
        unit = "us p50" if kind == "rpc" or not (op.startswith("batch_") or op == "write_bw") \
            else ("ops/s" if op.startswith("batch_") else "MiB/s")
        cols = []
        meds = {}
        for v in "ab":
            fig = figs[key].get(v, {})
            m, lo, hi = med(fig.get("value", []))
            meds[v] = m
            cols.append(f"{fmt(m)} ({fmt(lo)}-{fmt(hi)})")
        ratio = meds["b"] / meds["a"] if meds["a"] and meds["b"] else None
        cpu = "/".join(fmt(med(figs[key].get(v, {}).get("cpu", []))[0]) for v in "ab")
        csw = "/".join(fmt(med(figs[key].get(v, {}).get("csw", []))[0], 2) for v in "ab")
        anchors = ""
        if kind == "rpc":
            anchors = " ".join(
                f"{v.upper()}: 2xwrite {fmt(med(figs[key].get(v, {}).get('write2', []))[0])}"
                f" grpc {fmt(med(figs[key].get(v, {}).get('grpc', []))[0])}" for v in "ab")
        print(f"{op:<13} {size:>6} {unit:<7} {cols[0]:<24} {cols[1]:<24} "
              f"{fmt(ratio, 2):>5}  {cpu:<13} {csw:<11} {anchors}")


if __name__ == "__main__":
    main()
